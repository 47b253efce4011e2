// cpu_moe_client: what llama.cpp puts on a GPU and on the host with every
// layer offloaded and `--n-cpu-moe N`, as its command-line tools ask for
// it (common.h's llm_add_n_cpu_ffn_overrides: one tensor buffer override
// a layer, `blk\.I\.ffn_(up|down|gate|gate_up)_(ch|)exps` to the CPU's
// buffer type, for I below N). node-llama-cpp passes no such override,
// so this loads the model through llama.cpp's C API itself, linked to the
// Vulkan build node-llama-cpp ships.
//
// For each N, prints one JSON line: {"model": MODEL, "cpu_moe": N,
// "lines": [the model buffer lines llama.cpp logged]}.
//
//   usage: cpu_moe_client BACKEND_DIR MODEL N...
//          (BACKEND_DIR: the folder of the ggml backends to load)
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ggml-backend.h"
#include "llama.h"

#define MAX_LINES 16
#define MAX_LAYERS 512

typedef struct logged {
    char lines[MAX_LINES][160];
    int n;
    char partial[160]; // the line so far: llama.cpp may log one in pieces
} logged;

static void keep_buffer_lines(enum ggml_log_level level, const char *text, void *data)
{
    (void)level;
    logged *l = data;
    for (; *text; text++) {
        size_t used = strlen(l->partial);
        if (*text != '\n' && used + 1 < sizeof l->partial) {
            l->partial[used] = *text;
            l->partial[used + 1] = '\0';
            continue;
        }
        if (*text == '\n' && strstr(l->partial, "model buffer size") && l->n < MAX_LINES)
            snprintf(l->lines[l->n++], sizeof l->lines[0], "%s", l->partial);
        if (*text == '\n')
            l->partial[0] = '\0'; // a longer line is cut, never one of these
    }
}

/* s as a JSON string's contents (the lines are printable ASCII). */
static void print_json_string(const char *s)
{
    putchar('"');
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            putchar('\\');
        if ((unsigned char)*s >= 0x20)
            putchar(*s);
    }
    putchar('"');
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: cpu_moe_client BACKEND_DIR MODEL N...\n");
        return 2;
    }
    logged log = {0};
    llama_log_set(keep_buffer_lines, &log);
    ggml_backend_load_all_from_path(argv[1]);
    llama_backend_init();
    static char patterns[MAX_LAYERS][64];
    static struct llama_model_tensor_buft_override overrides[MAX_LAYERS + 1];
    for (int a = 3; a < argc; a++) {
        const int n = atoi(argv[a]);
        if (n < 0 || n > MAX_LAYERS) {
            fprintf(stderr, "cpu_moe_client: N out of range: %s\n", argv[a]);
            return 2;
        }
        for (int i = 0; i < n; i++) {
            snprintf(patterns[i], sizeof patterns[i], "blk\\.%d\\.ffn_(up|down|gate|gate_up)_(ch|)exps", i);
            overrides[i].pattern = patterns[i];
            overrides[i].buft = ggml_backend_cpu_buffer_type();
        }
        overrides[n].pattern = NULL;
        overrides[n].buft = NULL;
        struct llama_model_params params = llama_model_default_params();
        params.n_gpu_layers = 999;
        params.tensor_buft_overrides = n ? overrides : NULL;
        log.n = 0;
        struct llama_model *model = llama_model_load_from_file(argv[2], params);
        if (!model) {
            fprintf(stderr, "cpu_moe_client: %s: llama.cpp could not load it\n", argv[2]);
            return 1;
        }
        printf("{\"model\":");
        print_json_string(argv[2]);
        printf(",\"cpu_moe\":%d,\"lines\":[", n);
        for (int i = 0; i < log.n; i++) {
            printf(i ? "," : "");
            print_json_string(log.lines[i]);
        }
        printf("]}\n");
        fflush(stdout);
        llama_model_free(model);
    }
    llama_backend_free();
    return 0;
}
