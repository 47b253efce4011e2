/*
 * The ollama/ view of an Ollama store: names as `ollama list` gives them,
 * each naming its model layer's blob; hostile manifests (not JSON, no
 * model layer, a digest that is a path, a blob outside the folder) listed
 * with an error, never followed.
 */
#include "tmptree.h"

#include <errno.h>
#include <limits.h>

#include "catalog/beneath.h"
#include "check.h"
#include "scan_names.h"
#include "catalog/ollama.h"

#define HEX_A "0a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f9"
#define HEX_B "ffeeddccbbaa99887766554433221100ffeeddccbbaa99887766554433221100"
#define HEX_C "1111111111111111111111111111111111111111111111111111111111111111"
#define HEX_D "2222222222222222222222222222222222222222222222222222222222222222"

static char *folder_path, *outside;
static ggfs_folder folder;

/* A manifest as Ollama writes it, with the model layer's digest. */
static char *manifest(const char *digest)
{
    static char m[2048];
    snprintf(m, sizeof m,
             "{\"schemaVersion\":2,\"mediaType\":\"application/vnd.docker.distribution.manifest.v2+json\","
             "\"config\":{\"mediaType\":\"application/vnd.docker.container.image.v1+json\","
             "\"digest\":\"sha256:" HEX_C "\",\"size\":485},"
             "\"layers\":[{\"mediaType\":\"application/vnd.ollama.image.template\","
             "\"digest\":\"sha256:" HEX_D "\",\"size\":1429},"
             "{\"mediaType\":\"application/vnd.ollama.image.model\",\"digest\":\"%s\",\"size\":8}]}\n",
             digest);
    return m;
}

#define LIB "models/manifests/registry.ollama.ai/library/"

static int build(void)
{
    folder_path = tmptree_new();
    outside = tmptree_new();
    EXPECT(folder_path && outside);
    const char *F = folder_path;
    EXPECT(tmptree_gguf(F, "models/blobs/sha256-" HEX_A));
    EXPECT(tmptree_gguf(F, "models/blobs/sha256-" HEX_B));
    EXPECT(tmptree_text(F, "models/blobs/sha256-" HEX_D, "{{ .Prompt }}"));
    EXPECT(tmptree_text(F, LIB "llama3.2/latest", manifest("sha256:" HEX_A)));
    EXPECT(tmptree_text(F, LIB "llama3.2/1b", manifest("sha256:" HEX_A)));
    EXPECT(tmptree_text(F, LIB "qwen/0.5b", manifest("sha256:" HEX_B)));
    EXPECT(tmptree_text(F, "models/manifests/registry.ollama.ai/someone/tiny/q4", manifest("sha256:" HEX_B)));
    EXPECT(tmptree_text(F, "models/manifests/hf.co/bartowski/Llama-3.2-1B-Instruct-GGUF/Q4_K_M",
                        manifest("sha256:" HEX_A)));
    // Hostile or broken manifests.
    EXPECT(tmptree_text(F, LIB "bad/notjson", "this is not { json"));
    EXPECT(tmptree_text(F, LIB "bad/truncated", "{\"layers\": [{\"mediaType\": "));
    EXPECT(tmptree_text(F, LIB "bad/trailing", "{\"layers\": []} {}"));
    EXPECT(tmptree_text(F, LIB "bad/nolayers", "{\"schemaVersion\": 2}"));
    EXPECT(tmptree_text(F, LIB "bad/array", "[1, 2, 3]"));
    EXPECT(tmptree_text(F, LIB "bad/nomodel",
                        "{\"layers\":[{\"mediaType\":\"application/vnd.ollama.image.license\","
                        "\"digest\":\"sha256:" HEX_D "\"}]}"));
    EXPECT(tmptree_text(F, LIB "bad/traversal", manifest("sha256:../../../../etc/passwd")));
    EXPECT(tmptree_text(F, LIB "bad/upper", manifest("sha256:" "0A1B2C3D4E5F60718293A4B5C6D7E8F90A1B2C3D4E5F60718293A4B5C6D7E8F9")));
    EXPECT(tmptree_text(F, LIB "bad/md5", manifest("md5:0123456789abcdef0123456789abcdef")));
    EXPECT(tmptree_text(F, LIB "bad/missing", manifest("sha256:" HEX_C)));
    EXPECT(tmptree_text(F, LIB "bad/numeric", "{\"layers\":[{\"mediaType\":\"application/vnd.ollama.image.model\",\"digest\":7}]}"));
    EXPECT(tmptree_file(F, LIB "bad/nul", "{\"layers\":\0[]}", 14));
    EXPECT(tmptree_file(F, LIB "bad/empty", "", 0));
    EXPECT(tmptree_fifo(F, LIB "bad/fifo"));
    char big[GGFS_OLLAMA_MAX_MANIFEST + 16];
    memset(big, ' ', sizeof big);
    memcpy(big, "{\"layers\":[]}", 13);
    EXPECT(tmptree_file(F, LIB "bad/huge", big, sizeof big));
    // A blob that is a link out of the folder; a manifest that is one.
    EXPECT(tmptree_gguf(outside, "blob"));
    EXPECT(tmptree_text(outside, "manifest", manifest("sha256:" HEX_A)));
    char target[PATH_MAX];
    EXPECT(tmptree_text(F, LIB "bad/linkedblob", manifest("sha256:" HEX_C "0")));
    snprintf(target, sizeof target, "%s/manifest", outside);
    EXPECT(tmptree_link(F, LIB "bad/linkedmanifest", target));
    EXPECT(tmptree_dir(F, LIB "escape"));
    EXPECT(tmptree_text(F, LIB "escape/blob", manifest("sha256:" HEX_D)));
    snprintf(target, sizeof target, "%s/blob", outside);
    unlink(strcat(strcpy((char[PATH_MAX]){0}, F), "/models/blobs/sha256-" HEX_D));
    EXPECT(tmptree_link(F, "models/blobs/sha256-" HEX_D, target));
    // Partial downloads start with a dot.
    EXPECT(tmptree_text(F, LIB ".partial/latest", manifest("sha256:" HEX_A)));
    EXPECT_EQ(ggfs_folder_open(&folder, F, NULL), 0);
    return 1;
}

static int test_names_follow_ollama_list(void)
{
    ggfs_scan s;
    EXPECT_EQ(ggfs_ollama_list(&folder, "models", "", &s), 0);
    EXPECT_STR(names_of(&s), "bad:array bad:empty bad:huge bad:linkedblob bad:md5 bad:missing "
                             "bad:nolayers bad:nomodel bad:notjson bad:nul bad:numeric bad:trailing "
                             "bad:traversal bad:truncated bad:upper escape:blob hf.co llama3.2:1b "
                             "llama3.2:latest qwen:0.5b someone");
    const ggfs_scan_entry *e = ggfs_scan_find(&s, "llama3.2:latest");
    EXPECT(e && e->kind == GGFS_SCAN_MODEL && !e->error);
    EXPECT_STR(e->path, "models/blobs/sha256-" HEX_A);
    EXPECT_STR(e->real, "models/blobs/sha256-" HEX_A);
    EXPECT_EQ(e->a.size, 8);
    e = ggfs_scan_find(&s, "someone");
    EXPECT(e && e->kind == GGFS_SCAN_OLLAMA);
    EXPECT_STR(e->path, "models");
    EXPECT_STR(e->real, "someone");
    ggfs_scan_free(&s);

    EXPECT_EQ(ggfs_ollama_list(&folder, "models", "someone", &s), 0);
    EXPECT_STR(names_of(&s), "tiny:q4");
    EXPECT_STR(s.entries[0].path, "models/blobs/sha256-" HEX_B);
    ggfs_scan_free(&s);
    EXPECT_EQ(ggfs_ollama_list(&folder, "models", "hf.co", &s), 0);
    EXPECT_STR(names_of(&s), "bartowski");
    EXPECT_STR(s.entries[0].real, "hf.co/bartowski");
    ggfs_scan_free(&s);
    EXPECT_EQ(ggfs_ollama_list(&folder, "models", "hf.co/bartowski", &s), 0);
    EXPECT_STR(names_of(&s), "Llama-3.2-1B-Instruct-GGUF:Q4_K_M");
    ggfs_scan_free(&s);
    // Places nothing is under.
    EXPECT_EQ(ggfs_ollama_list(&folder, "models", "library", &s), ENOENT);
    EXPECT_EQ(ggfs_ollama_list(&folder, "models", "registry.ollama.ai", &s), ENOENT);
    EXPECT_EQ(ggfs_ollama_list(&folder, "models", "nobody", &s), ENOENT);
    EXPECT_EQ(ggfs_ollama_list(&folder, "models", "hf.co/bartowski/x", &s), ENOENT);
    EXPECT_EQ(ggfs_ollama_list(&folder, "models", "hf.co/", &s), ENOENT);
    return 1;
}

/* The listing's error for NAME:TAG contains want. */
static int error_says(const ggfs_scan *s, const char *name, const char *want)
{
    const ggfs_scan_entry *e = ggfs_scan_find(s, name);
    EXPECT(e != NULL);
    EXPECT(e->error != NULL);
    if (!strstr(e->error, want))
        fprintf(stderr, "%s: error \"%s\" lacks \"%s\"\n", name, e->error, want);
    EXPECT(strstr(e->error, want) != NULL);
    EXPECT(strchr(e->error, '\n') == NULL);
    EXPECT(strstr(e->error, "models/manifests/registry.ollama.ai/library/") == e->error);
    return 1;
}

static int test_hostile_manifests_are_errors_never_paths(void)
{
    ggfs_scan s;
    EXPECT_EQ(ggfs_ollama_list(&folder, "models", "", &s), 0);
    EXPECT(error_says(&s, "bad:notjson", "bad/notjson: offset 0x"));
    EXPECT(error_says(&s, "bad:notjson", "not JSON"));
    EXPECT(error_says(&s, "bad:truncated", "not JSON: ends inside a value"));
    EXPECT(error_says(&s, "bad:trailing", "offset 0xf: not JSON"));
    EXPECT(error_says(&s, "bad:nolayers", "no \"layers\" array"));
    EXPECT(error_says(&s, "bad:array", "no \"layers\" array"));
    EXPECT(error_says(&s, "bad:nomodel", "no layer of mediaType application/vnd.ollama.image.model"));
    EXPECT(error_says(&s, "bad:traversal", "digest \"sha256:../../../../etc/passwd\" is not sha256:<64 lower-case hex digits>"));
    EXPECT(error_says(&s, "bad:upper", "is not sha256:<64 lower-case hex digits>"));
    EXPECT(error_says(&s, "bad:md5", "digest \"md5:"));
    EXPECT(error_says(&s, "bad:numeric", "layers[0]: digest \"\" is not sha256:"));
    EXPECT(error_says(&s, "bad:missing", "model layer models/blobs/sha256-" HEX_C ": No such file or directory"));
    EXPECT(error_says(&s, "bad:nul", "not JSON"));
    EXPECT(error_says(&s, "bad:empty", "not JSON"));
    EXPECT(error_says(&s, "bad:huge", "larger than 1 MiB"));
    EXPECT(error_says(&s, "bad:linkedblob", "is not sha256:<64 lower-case hex digits>"));
    EXPECT(error_says(&s, "escape:blob", "leads out of the folder"));
    // A manifest that is a link out of the folder, or a FIFO, is no entry.
    EXPECT(ggfs_scan_find(&s, "bad:linkedmanifest") == NULL);
    EXPECT(ggfs_scan_find(&s, "bad:fifo") == NULL);
    EXPECT(ggfs_scan_find(&s, ".partial:latest") == NULL);
    // An error entry names the manifest, so its attributes are the manifest's.
    const ggfs_scan_entry *e = ggfs_scan_find(&s, "bad:md5");
    EXPECT_STR(e->path, LIB "bad/md5");
    ggfs_scan_free(&s);
    return 1;
}

static int test_manifest_blob_directly(void)
{
    char blob[PATH_MAX], msg[512];
    EXPECT(ggfs_ollama_manifest_blob(&folder, "models", LIB "qwen/0.5b", blob, sizeof blob, msg, sizeof msg));
    EXPECT_STR(blob, "models/blobs/sha256-" HEX_B);
    EXPECT(!ggfs_ollama_manifest_blob(&folder, "models", LIB "bad/fifo", blob, sizeof blob, msg, sizeof msg));
    EXPECT(strstr(msg, "not a regular file") != NULL);
    EXPECT(!ggfs_ollama_manifest_blob(&folder, "models", LIB "bad/linkedmanifest", blob, sizeof blob, msg,
                                      sizeof msg));
    EXPECT(strstr(msg, "leads out of the folder") != NULL);
    EXPECT(!ggfs_ollama_manifest_blob(&folder, "models", LIB "qwen/0.5b", blob, 20, msg, sizeof msg));
    EXPECT(strstr(msg, "too long") != NULL);
    return 1;
}

static int test_store_at_the_folder_itself(void)
{
    char sub[PATH_MAX];
    snprintf(sub, sizeof sub, "%s/models", folder_path);
    ggfs_folder f;
    EXPECT_EQ(ggfs_folder_open(&f, sub, NULL), 0);
    ggfs_scan s;
    EXPECT_EQ(ggfs_ollama_list(&f, "", "", &s), 0);
    const ggfs_scan_entry *e = ggfs_scan_find(&s, "qwen:0.5b");
    EXPECT(e && !e->error);
    EXPECT_STR(e->path, "blobs/sha256-" HEX_B);
    ggfs_scan_free(&s);
    ggfs_folder_close(&f);
    return 1;
}

int main(void)
{
    alarm(60); // a FIFO waited on would hang here
    int ok = build();
    if (ok) {
        ok &= test_names_follow_ollama_list();
        ok &= test_hostile_manifests_are_errors_never_paths();
        ok &= test_manifest_blob_directly();
        ok &= test_store_at_the_folder_itself();
    }
    ggfs_folder_close(&folder);
    tmptree_free(folder_path);
    tmptree_free(outside);
    return ok ? 0 : 1;
}
