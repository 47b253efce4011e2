/*
 * Split-set file names: which names are shards of a set, and the names of
 * the other shards made from one of them.
 */
#include <stdlib.h>

#include "check.h"
#include "model/split_name.h"

static int parses_as(const char *name, size_t prefix_len, unsigned k, unsigned n)
{
    size_t p;
    unsigned got_k, got_n;
    EXPECT(ggfs_split_name_parse(name, &p, &got_k, &got_n));
    EXPECT_EQ(p, prefix_len);
    EXPECT_EQ(got_k, k);
    EXPECT_EQ(got_n, n);
    return 1;
}

static int refused(const char *name)
{
    size_t p;
    unsigned k, n;
    EXPECT(!ggfs_split_name_parse(name, &p, &k, &n));
    return 1;
}

static int test_shard_names_parse(void)
{
    return parses_as("m-00001-of-00005.gguf", 1, 1, 5) &&
           parses_as("/models/Llama-3-70B-Q4_K_M-00003-of-00012.gguf", 26, 3, 12) &&
           parses_as("a-b-00002-of-00002.gguf", 3, 2, 2) &&
           parses_as("x-000001-of-100000.gguf", 1, 1, 100000);
}

static int test_other_names_do_not(void)
{
    return refused("model.gguf") && refused("m-0001-of-0005.gguf") &&
           refused("m-00000-of-00005.gguf") && refused("m-00006-of-00005.gguf") &&
           refused("m-00001-of-00005.bin") && refused("00001-of-00005.gguf") &&
           refused("m_00001-of-00005.gguf") && refused("m-00001-of-00005.gguf.part") &&
           refused("m-00001-of-9999999.gguf") && refused("-of-.gguf") && refused("");
}

static int test_names_are_made_from_a_shard(void)
{
    const char *given = "/m/Q4-00002-of-00003.gguf";
    size_t p;
    unsigned k, n;
    EXPECT(ggfs_split_name_parse(given, &p, &k, &n));
    char *first = ggfs_split_name_make(given, p, 1, n);
    EXPECT(first != NULL);
    EXPECT_STR(first, "/m/Q4-00001-of-00003.gguf");
    free(first);
    char *wide = ggfs_split_name_make("m", 1, 7, 123456);
    EXPECT_STR(wide, "m-00007-of-123456.gguf");
    free(wide);
    return 1;
}

int main(void)
{
    const int ok = test_shard_names_parse() & test_other_names_do_not() &
                   test_names_are_made_from_a_shard();
    return ok ? 0 : 1;
}
