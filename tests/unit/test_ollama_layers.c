/*
 * ollama:// names (source/ollama_name.h) and Ollama manifests and
 * Modelfiles (model/ollama_layers.h): defaults and hosts as Ollama reads
 * names, every refused part; every digest checked and the offset of JSON
 * cut short; Ollama's quoting of values, one PARAMETER per value, the
 * layers' files numbered, a layer over the cap left out, a failing read
 * refusing with the layer's index.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "model/ollama_layers.h"
#include "source/ollama_name.h"

#define HEX_A "0a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f9"
#define HEX_B "ffeeddccbbaa99887766554433221100ffeeddccbbaa99887766554433221100"
#define HEX_C "1111111111111111111111111111111111111111111111111111111111111111"
#define HEX_D "2222222222222222222222222222222222222222222222222222222222222222"
#define HEX_E "3333333333333333333333333333333333333333333333333333333333333333"
#define HEX_F "4444444444444444444444444444444444444444444444444444444444444444"

/* ==== Names ==== */

static int parsed(const char *s, const char *host, const char *space, const char *name, const char *tag, bool http)
{
    ggfs_ollama_name n;
    char why[200];
    EXPECT(ggfs_ollama_name_parse(s, &n, why, sizeof why));
    EXPECT_STR(n.host, host);
    EXPECT_STR(n.space, space);
    EXPECT_STR(n.name, name);
    EXPECT_STR(n.tag, tag);
    EXPECT_EQ(n.plain_http, http);
    return 1;
}

static int test_names_take_ollamas_defaults_and_hosts(void)
{
    EXPECT(parsed("ollama://llama3", "registry.ollama.ai", "library", "llama3", "latest", false));
    EXPECT(parsed("ollama://llama3:8b", "registry.ollama.ai", "library", "llama3", "8b", false));
    EXPECT(parsed("ollama://someone/custom:v1", "registry.ollama.ai", "someone", "custom", "v1", false));
    EXPECT(parsed("ollama://hf.co/bartowski/Llama-3.2-1B-GGUF:Q4_K_M", "hf.co", "bartowski", "Llama-3.2-1B-GGUF",
                  "Q4_K_M", false));
    EXPECT(parsed("ollama://example.org/tiny", "example.org", "library", "tiny", "latest", false));
    EXPECT(parsed("ollama+http://127.0.0.1:5000/tiny:q4", "127.0.0.1:5000", "library", "tiny", "q4", true));
    EXPECT(parsed("ollama+http://localhost/ns/tiny", "localhost", "ns", "tiny", "latest", true));
    return 1;
}

static int test_names_make_the_registrys_urls(void)
{
    ggfs_ollama_name n;
    char why[200], url[512];
    EXPECT(ggfs_ollama_name_parse("ollama://hf.co/org/repo:Q8_0", &n, why, sizeof why));
    EXPECT(ggfs_ollama_manifest_url(&n, url, sizeof url));
    EXPECT_STR(url, "https://hf.co/v2/org/repo/manifests/Q8_0");
    EXPECT(ggfs_ollama_blob_url(&n, HEX_A, url, sizeof url));
    EXPECT_STR(url, "https://hf.co/v2/org/repo/blobs/sha256:" HEX_A);
    EXPECT(ggfs_ollama_full_name(&n, url, sizeof url));
    EXPECT_STR(url, "hf.co/org/repo:Q8_0");
    EXPECT(!ggfs_ollama_manifest_url(&n, url, 20));
    EXPECT(ggfs_ollama_name_parse("ollama+http://127.0.0.1:8/a", &n, why, sizeof why));
    EXPECT(ggfs_ollama_manifest_url(&n, url, sizeof url));
    EXPECT_STR(url, "http://127.0.0.1:8/v2/library/a/manifests/latest");
    return 1;
}

static int refused(const char *s, const char *why_has)
{
    ggfs_ollama_name n;
    char why[200] = "";
    EXPECT(!ggfs_ollama_name_parse(s, &n, why, sizeof why));
    if (!strstr(why, why_has)) {
        fprintf(stderr, "%s: \"%s\" does not say \"%s\"\n", s, why, why_has);
        return 0;
    }
    return 1;
}

static int test_names_refuse_every_part_that_is_not_a_name(void)
{
    static const struct {
        const char *name, *why_has;
    } cases[] = {
        {"https://x/y", "not an ollama:// name"},
        {"ollama://", "name is empty"},
        {"ollama://a/", "name is empty"},
        {"ollama://tiny:", "tag is empty"},
        {"ollama://a/b/c/d", "more than HOST/NAMESPACE/NAME"},
        {"ollama://../tiny", "host is \"..\""},
        {"ollama://host.org/./tiny", "namespace is \".\""},
        {"ollama://library/ti%2fny", "name has the byte 0x25 at 2"},
        {"ollama://ns/tiny:v?1", "tag has the byte 0x3f at 1"},
        {"ollama://a b/c", "namespace has the byte 0x20 at 1"},
        {"ollama://h\xc3\xa9.org/a/b", "host has the byte 0xc3 at 1"},
        {"ollama+http://tiny", "ollama+http:// names a HOST first"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        EXPECT(refused(cases[i].name, cases[i].why_has));
    char long_name[200];
    memset(long_name, 'a', sizeof long_name);
    memcpy(long_name, "ollama://", 9);
    long_name[sizeof long_name - 1] = '\0';
    EXPECT(refused(long_name, "longer than 128 bytes"));
    return 1;
}

/* ==== Manifests ==== */

static int manifest_refused(const char *json, const char *msg_is)
{
    ggfs_ollama_manifest m;
    char msg[400];
    EXPECT(!ggfs_ollama_manifest_parse(json, strlen(json), "M", &m, msg, sizeof msg));
    EXPECT_STR(msg, msg_is);
    EXPECT(m.layers == NULL && m.n == 0);
    return 1;
}

static int test_manifests_check_every_known_layers_digest(void)
{
    EXPECT(manifest_refused("{\"layers\":[{\"mediaType\":\"application/vnd.ollama.image.model\","
                            "\"digest\":\"sha256:../../../etc/passwd\"}]}",
                            "M: layers[0]: digest \"sha256:../../../etc/passwd\" is not sha256:<64 lower-case hex digits>"));
    EXPECT(manifest_refused("{\"layers\":[{\"mediaType\":\"application/vnd.ollama.image.model\",\"digest\":\"sha256:" HEX_A
                            "\"},{\"mediaType\":\"application/vnd.ollama.image.license\",\"digest\":\"sha256:"
                            "FFEEDDCCBBAA99887766554433221100FFEEDDCCBBAA99887766554433221100\"}]}",
                            "M: layers[1]: digest \"sha256:FFEEDDCCBBAA99887766554433221100FFEEDDCCBBAA99887766554433221100\""
                            " is not sha256:<64 lower-case hex digits>"));
    EXPECT(manifest_refused("{\"layers\":[{\"mediaType\":\"application/vnd.ollama.image.projector\"}]}",
                            "M: layers[0]: digest \"\" is not sha256:<64 lower-case hex digits>"));
    // A layer of another media type is never looked at.
    ggfs_ollama_manifest m;
    char msg[400];
    const char *json = "{\"layers\":[{\"mediaType\":\"application/x-other\",\"digest\":\"../x\"},"
                       "{\"mediaType\":\"application/vnd.ollama.image.model\",\"digest\":\"sha256:" HEX_A "\","
                       "\"size\":8}]}";
    EXPECT(ggfs_ollama_manifest_parse(json, strlen(json), "M", &m, msg, sizeof msg));
    EXPECT_EQ(m.n, 1);
    EXPECT_EQ(m.model, 0);
    EXPECT_EQ(m.layers[0].index, 1);
    EXPECT_EQ(m.layers[0].size, 8);
    EXPECT_STR(m.layers[0].hex, HEX_A);
    ggfs_ollama_manifest_free(&m);
    return 1;
}

static int test_manifests_refuse_json_that_is_not_a_manifest(void)
{
    EXPECT(manifest_refused("{\"layers\": [", "M: offset 0xc: not JSON: ends inside a value"));
    EXPECT(manifest_refused("{\"layers\": x}", "M: offset 0xb: not JSON: unexpected character"));
    EXPECT(manifest_refused("{\"layers\": []} x", "M: offset 0xf: not JSON: unexpected character"));
    EXPECT(manifest_refused("[]", "M: no \"layers\" array"));
    EXPECT(manifest_refused("{\"layers\": {}}", "M: no \"layers\" array"));
    EXPECT(manifest_refused("{\"layers\": []}", "M: no layer of mediaType application/vnd.ollama.image.model"));
    return 1;
}

/* ==== Modelfiles ==== */

typedef struct blob {
    const char *hex;
    const char *text; // NULL: the read fails
    size_t len;       // 0: strlen(text)
} blob;

static int read_blob(void *ctx, const ggfs_ollama_layer *layer, size_t cap, char **data, size_t *len, char *why,
                     size_t why_size)
{
    *data = NULL;
    for (const blob *b = ctx; b->hex; b++) {
        if (strcmp(b->hex, layer->hex) != 0)
            continue;
        if (!b->text) {
            snprintf(why, why_size, "HTTP 500");
            return EIO;
        }
        *len = b->len ? b->len : strlen(b->text);
        if (*len > cap)
            return EFBIG;
        *data = malloc(*len + 1);
        memcpy(*data, b->text, *len);
        (*data)[*len] = '\0';
        return 0;
    }
    snprintf(why, why_size, "no such blob");
    return ENOENT;
}

static bool path_of(void *ctx, const char *hex, char *out, size_t cap)
{
    (void)ctx;
    snprintf(out, cap, "/store/blobs/sha256-%.4s", hex);
    return true;
}

static ggfs_ollama_layers *layers_of(const char *json, const blob *blobs, bool paths, char *msg, size_t cap)
{
    ggfs_ollama_manifest m;
    if (!ggfs_ollama_manifest_parse(json, strlen(json), "M", &m, msg, cap))
        return NULL;
    const ggfs_ollama_store store = {.read = read_blob, .path = paths ? path_of : NULL, .ctx = (void *)blobs};
    ggfs_ollama_layers *l = ggfs_ollama_layers_new(&m, "M", "host/ns/tiny:latest", "tiny:latest", &store, msg, cap);
    ggfs_ollama_manifest_free(&m);
    return l;
}

#define LAYER(type, hex) "{\"mediaType\":\"application/vnd.ollama.image." type "\",\"digest\":\"sha256:" hex "\"}"

static int test_modelfile_is_written_as_ollama_writes_it(void)
{
    const char *json = "{\"layers\":[" LAYER("model", HEX_A) "," LAYER("template", HEX_B) "," LAYER("system", HEX_C)
                       "," LAYER("params", HEX_D) "," LAYER("license", HEX_E) "," LAYER("messages", HEX_F) "]}";
    const blob blobs[] = {
        {HEX_B, "{{ .Prompt }}\n{{ if eq .Role \"user\" }}x{{ end }}", 0},
        {HEX_C, " starts with a space", 0},
        {HEX_D, "{\"stop\":[\"<|end|>\",\"a b\",\" c\"],\"temperature\":0.7,\"num_ctx\":4096,\"flag\":true}", 0},
        {HEX_E, "line one\nline two", 0},
        {HEX_F, "[{\"role\":\"user\",\"content\":\"Hi\"},{\"role\":\"assistant\",\"content\":\"two\\nlines\"},{\"x\":1}]",
         0},
        {NULL, NULL, 0},
    };
    char msg[400];
    ggfs_ollama_layers *l = layers_of(json, blobs, false, msg, sizeof msg);
    EXPECT(l != NULL);
    const char *want = "# Modelfile generated by \"ollama show\"\n"
                       "# To build a new Modelfile based on this, replace FROM with:\n"
                       "# FROM tiny:latest\n"
                       "\n"
                       "FROM host/ns/tiny:latest\n"
                       "TEMPLATE \"\"\"{{ .Prompt }}\n{{ if eq .Role \"user\" }}x{{ end }}\"\"\"\n"
                       "SYSTEM \" starts with a space\"\n"
                       "PARAMETER stop <|end|>\n"
                       "PARAMETER stop a b\n"
                       "PARAMETER stop \" c\"\n"
                       "PARAMETER temperature 0.7\n"
                       "PARAMETER num_ctx 4096\n"
                       "PARAMETER flag true\n"
                       "LICENSE \"line one\nline two\"\n"
                       "MESSAGE user Hi\n"
                       "MESSAGE assistant \"two\nlines\"\n";
    EXPECT_EQ(l->modelfile_len, strlen(want));
    EXPECT(memcmp(l->modelfile, want, l->modelfile_len) == 0);
    // layers/: the files of the small layers but messages, in order.
    EXPECT_EQ(l->n_files, 4);
    EXPECT_STR(l->files[0].name, "template");
    EXPECT_STR(l->files[1].name, "system");
    EXPECT_STR(l->files[2].name, "params");
    EXPECT_STR(l->files[3].name, "license");
    EXPECT_EQ(l->files[3].len, strlen("line one\nline two"));
    EXPECT_STR(l->tree_hex[GGFS_OLLAMA_PROJECTOR_TREE], "");
    ggfs_ollama_layers_free(l);
    return 1;
}

static int test_layers_number_licenses_and_name_blob_paths(void)
{
    const char *json = "{\"layers\":[" LAYER("model", HEX_A) "," LAYER("license", HEX_B) "," LAYER("license", HEX_C)
                       "," LAYER("license", HEX_D) "," LAYER("projector", HEX_E) "," LAYER("adapter", HEX_F) "]}";
    const blob blobs[] = {{HEX_B, "MIT", 0}, {HEX_C, "Apache", 0}, {HEX_D, "GPL", 0}, {NULL, NULL, 0}};
    char msg[400];
    ggfs_ollama_layers *l = layers_of(json, blobs, true, msg, sizeof msg);
    EXPECT(l != NULL);
    EXPECT_EQ(l->n_files, 3);
    EXPECT_STR(l->files[0].name, "license");
    EXPECT_STR(l->files[1].name, "license.2");
    EXPECT_STR(l->files[2].name, "license.3");
    EXPECT_STR(l->tree_hex[GGFS_OLLAMA_PROJECTOR_TREE], HEX_E);
    EXPECT_STR(l->tree_hex[GGFS_OLLAMA_ADAPTER_TREE], HEX_F);
    const char *body = strstr(l->modelfile, "\n\n");
    EXPECT(body != NULL);
    EXPECT_STR(body, "\n\nFROM host/ns/tiny:latest\nADAPTER /store/blobs/sha256-4444\n"
                     "FROM /store/blobs/sha256-3333\nLICENSE MIT\nLICENSE Apache\nLICENSE GPL\n");
    ggfs_ollama_layers_free(l);
    return 1;
}

static int test_a_layer_over_the_cap_is_left_out_and_a_failed_read_refuses(void)
{
    const char *json = "{\"layers\":[" LAYER("model", HEX_A) "," LAYER("template", HEX_B) "," LAYER("system", HEX_C) "]}";
    char *big = malloc(GGFS_OLLAMA_SMALL_MAX + 2);
    memset(big, 'x', GGFS_OLLAMA_SMALL_MAX + 1);
    big[GGFS_OLLAMA_SMALL_MAX + 1] = '\0';
    const blob blobs[] = {{HEX_B, big, 0}, {HEX_C, "sys", 0}, {NULL, NULL, 0}};
    char msg[400];
    ggfs_ollama_layers *l = layers_of(json, blobs, false, msg, sizeof msg);
    free(big);
    EXPECT(l != NULL);
    EXPECT_EQ(l->n_files, 1);
    EXPECT_STR(l->files[0].name, "system");
    EXPECT(strstr(l->modelfile, "TEMPLATE") == NULL);
    ggfs_ollama_layers_free(l);
    const blob failing[] = {{HEX_B, "t", 0}, {HEX_C, NULL, 0}, {NULL, NULL, 0}};
    EXPECT(layers_of(json, failing, false, msg, sizeof msg) == NULL);
    EXPECT_STR(msg, "M: layers[2]: HTTP 500");
    return 1;
}

static int test_the_small_layers_take_16_mib_in_all(void)
{
    // 20 licenses of 1 MiB: 16 are kept, the rest left out.
    char json[8192] = "{\"layers\":[" LAYER("model", HEX_A);
    static char hexes[20][65];
    blob blobs[21];
    char *text = malloc(GGFS_OLLAMA_SMALL_MAX + 1);
    memset(text, 'l', GGFS_OLLAMA_SMALL_MAX);
    text[GGFS_OLLAMA_SMALL_MAX] = '\0';
    for (int i = 0; i < 20; i++) {
        snprintf(hexes[i], sizeof hexes[i], "%064x", i + 1);
        snprintf(json + strlen(json), sizeof json - strlen(json),
                 ",{\"mediaType\":\"application/vnd.ollama.image.license\",\"digest\":\"sha256:%s\"}", hexes[i]);
        blobs[i] = (blob){hexes[i], text, 0};
    }
    blobs[20] = (blob){NULL, NULL, 0};
    strcat(json, "]}");
    char msg[400];
    ggfs_ollama_layers *l = layers_of(json, blobs, false, msg, sizeof msg);
    free(text);
    EXPECT(l != NULL);
    EXPECT_EQ(l->n_files, GGFS_OLLAMA_SMALL_TOTAL / GGFS_OLLAMA_SMALL_MAX);
    EXPECT_STR(l->files[15].name, "license.16");
    ggfs_ollama_layers_free(l);
    return 1;
}

/* ==== Manifests of many layers ==== */

/* A manifest of n license layers, the model layer after the first
 * model_at of them, malloc'ed. Each license's digest is its number. */
static char *many_layers(size_t n, size_t model_at)
{
    const size_t one = 160;
    char *json = malloc((n + 2) * one + 32), *p = json;
    p += sprintf(p, "{\"layers\":[");
    for (size_t i = 0; i <= n; i++) {
        if (i == model_at)
            p += sprintf(p, "%s" LAYER("model", HEX_A), i ? "," : "");
        if (i < n)
            p += sprintf(p, "%s{\"mediaType\":\"application/vnd.ollama.image.license\",\"digest\":\"sha256:%064zx\"}",
                         i || model_at == 0 ? "," : "", i + 1);
    }
    sprintf(p, "]}");
    return json;
}

static int test_a_manifest_of_thousands_of_layers_is_cut(void)
{
    ggfs_ollama_manifest m;
    char msg[300];
    char *json = many_layers(5000, 0);
    EXPECT(ggfs_ollama_manifest_parse(json, strlen(json), "M", &m, msg, sizeof msg));
    EXPECT_EQ(m.n, GGFS_OLLAMA_LAYERS_MAX);
    EXPECT_EQ(m.layers[m.model].kind, GGFS_OLLAMA_MODEL);
    ggfs_ollama_manifest_free(&m);
    free(json);
    // The model layer past the cap is still the model's.
    json = many_layers(5000, 4000);
    EXPECT(ggfs_ollama_manifest_parse(json, strlen(json), "M", &m, msg, sizeof msg));
    EXPECT_EQ(m.n, GGFS_OLLAMA_LAYERS_MAX + 1);
    EXPECT_STR(m.layers[m.model].hex, HEX_A);
    ggfs_ollama_manifest_free(&m);
    free(json);
    return 1;
}

/* Reads counted: how many at once, at most. */
typedef struct counted {
    pthread_mutex_t lock;
    unsigned now, most, reads;
} counted;

static int counted_read(void *ctx, const ggfs_ollama_layer *layer, size_t cap, char **data, size_t *len, char *why,
                        size_t why_size)
{
    (void)layer, (void)cap, (void)why, (void)why_size;
    counted *c = ctx;
    pthread_mutex_lock(&c->lock);
    c->reads++;
    if (++c->now > c->most)
        c->most = c->now;
    pthread_mutex_unlock(&c->lock);
    nanosleep(&(struct timespec){.tv_nsec = 20 * 1000 * 1000}, NULL);
    pthread_mutex_lock(&c->lock);
    c->now--;
    pthread_mutex_unlock(&c->lock);
    *data = strdup("text");
    *len = 4;
    return 0;
}

static int test_small_layers_are_read_at_once(void)
{
    ggfs_ollama_manifest m;
    char msg[300];
    char *json = many_layers(40, 0);
    EXPECT(ggfs_ollama_manifest_parse(json, strlen(json), "M", &m, msg, sizeof msg));
    free(json);
    counted c = {.lock = PTHREAD_MUTEX_INITIALIZER};
    const ggfs_ollama_store store = {.read = counted_read, .path = path_of, .ctx = &c};
    ggfs_ollama_layers *l = ggfs_ollama_layers_new(&m, "M", "h/n/t:x", "t:x", &store, msg, sizeof msg);
    ggfs_ollama_manifest_free(&m);
    EXPECT(l != NULL);
    EXPECT_EQ(c.reads, 40);
    EXPECT(c.most > 1 && c.most <= GGFS_OLLAMA_READ_THREADS);
    EXPECT_EQ(l->n_files, 40);
    EXPECT_STR(l->files[0].name, "license");
    EXPECT_STR(l->files[39].name, "license.40"); // in the manifest's order
    ggfs_ollama_layers_free(l);
    return 1;
}

int main(void)
{
    int ok = 1;
    ok &= test_names_take_ollamas_defaults_and_hosts();
    ok &= test_names_make_the_registrys_urls();
    ok &= test_names_refuse_every_part_that_is_not_a_name();
    ok &= test_manifests_check_every_known_layers_digest();
    ok &= test_manifests_refuse_json_that_is_not_a_manifest();
    ok &= test_modelfile_is_written_as_ollama_writes_it();
    ok &= test_layers_number_licenses_and_name_blob_paths();
    ok &= test_a_layer_over_the_cap_is_left_out_and_a_failed_read_refuses();
    ok &= test_the_small_layers_take_16_mib_in_all();
    ok &= test_a_manifest_of_thousands_of_layers_is_cut();
    ok &= test_small_layers_are_read_at_once();
    return ok ? 0 : 1;
}
