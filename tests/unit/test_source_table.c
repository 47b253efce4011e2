/*
 * The source table's reading of names (source/source_table.h): which names are
 * remote, and where the file part of each ends, which split-set names are
 * matched on; and the URL an hf:// name resolves to, each part
 * percent-encoded as curl_easy_escape would (source/hf_name.h).
 */
#define _DEFAULT_SOURCE // setenv
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "source/hf_name.h"
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

/* name resolves to want (HF_ENDPOINT http://hub/, HF_TOKEN t). */
static int resolves_to(const char *name, const char *want)
{
    char *url, *token, why[128];
    EXPECT(ggfs_hf_resolve(name, &url, &token, why, sizeof why));
    const int same = strcmp(url, want) == 0 && token && strcmp(token, "t") == 0;
    if (!same)
        fprintf(stderr, "%s: got %s\n", name, url);
    free(url);
    free(token);
    return same;
}

static int test_hf_names_percent_encoded(void)
{
    EXPECT(setenv("HF_ENDPOINT", "http://hub/", 1) == 0);
    EXPECT(setenv("HF_TOKEN", "t", 1) == 0);
    return resolves_to("hf://org/repo/m.gguf", "http://hub/org/repo/resolve/main/m.gguf") &&
           resolves_to("hf://org/repo/m.gguf@refs/pr/1", "http://hub/org/repo/resolve/refs%2Fpr%2F1/m.gguf") &&
           resolves_to("hf://o-1/r_2.x/dir/a b+c~\xc3\xa9%.gguf@v1.0",
                       "http://hub/o-1/r_2.x/resolve/v1.0/dir/a%20b%2Bc~%C3%A9%25.gguf");
}

int main(void)
{
    const int ok = test_remote_schemes() & test_file_part_ends() & test_hf_names_percent_encoded();
    return ok ? 0 : 1;
}
