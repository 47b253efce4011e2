/*
 * The source table's reading of names (source/source_table.h): which names are
 * remote, and where the file part of each ends, which split-set names are
 * matched on.
 */
#include <string.h>

#include "check.h"
#include "source/source_table.h"

static int name_ends_at(const char *name, const char *file_part)
{
    EXPECT_EQ(ggfs_source_name_end(name), strlen(file_part));
    EXPECT(strncmp(name, file_part, strlen(file_part)) == 0);
    return 1;
}

static int test_remote_schemes(void)
{
    EXPECT(ggfs_source_is_remote("http://127.0.0.1:8080/m.gguf"));
    EXPECT(ggfs_source_is_remote("https://example.org/m.gguf"));
    EXPECT(ggfs_source_is_remote("hf://org/repo/m.gguf"));
    EXPECT(!ggfs_source_is_remote("/models/m.gguf"));
    EXPECT(!ggfs_source_is_remote("m.gguf"));
    EXPECT(!ggfs_source_is_remote("ftp://host/m.gguf"));
    EXPECT(!ggfs_source_is_remote("HTTP:/m.gguf"));
    return 1;
}

static int test_file_part_ends(void)
{
    return name_ends_at("/models/m-00001-of-00002.gguf?x#y", "/models/m-00001-of-00002.gguf?x#y") &&
           name_ends_at("http://h/m-00001-of-00002.gguf?token=a@b", "http://h/m-00001-of-00002.gguf") &&
           name_ends_at("https://h/m.gguf#part", "https://h/m.gguf") &&
           name_ends_at("hf://org/repo/m-00001-of-00002.gguf@v1.0", "hf://org/repo/m-00001-of-00002.gguf") &&
           name_ends_at("hf://org/repo/m.gguf?x", "hf://org/repo/m.gguf?x") &&
           name_ends_at("", "");
}

int main(void)
{
    const int ok = test_remote_schemes() & test_file_part_ends();
    return ok ? 0 : 1;
}
