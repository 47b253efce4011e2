/*
 * offload/'s graphs (model/llm_graph.h) over the fuzz seeds that reach
 * them (tests/fuzz/seeds/memory/graph-*, tiny models of the shapes each
 * architecture's graph needs): each has its graph, and builds, schedules
 * and allocates it with every layer on the host, half, and all on the GPU;
 * the GPU then has a compute buffer. (Their bytes are checked against
 * llama.cpp's own by the offload suite; here, that a graph is built at
 * all, where a failing one would fall back to the model of the peak.)
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "ggp.h"
#include "model/llm_graph.h"
#include "model/memory.h"

static int test_seed(const char *path)
{
    ggp_error err;
    ggp_file *f = ggp_open(path, &err);
    EXPECT(f);
    static const char key[] = "general.architecture";
    const ggp_kv *kv = ggp_kv_find(f, key, sizeof key - 1);
    EXPECT(kv && kv->value.type == GGP_V_STRING);
    uint64_t weights = 0;
    for (uint64_t i = 0; i < ggp_tensor_count(f); i++)
        weights += ggp_tensor_at(f, i)->bytes;
    ggfs_memory_rules *rules = malloc(sizeof *rules);
    EXPECT(rules && ggfs_memory_read(f, weights, rules));
    const ggp_file *files[] = {f};
    ggfs_llm_model *m = ggfs_llm_model_new(files, 1, rules, f, ggp_value_str(f, &kv->value));
    EXPECT(m && ggfs_llm_has_graph(m));
    const uint32_t starts[3] = {rules->n_layer + 1, rules->n_layer / 2, 0};
    for (int i = 0; i < 3; i++) {
        uint64_t gpu, host;
        if (!ggfs_llm_compute(m, 512, 0, starts[i], &gpu, &host)) {
            fprintf(stderr, "%s: no graph with the layers from %u on the GPU\n", path, starts[i]);
            return 0;
        }
        EXPECT(host > 0);
        EXPECT(starts[i] != 0 || gpu > 0);
    }
    ggfs_llm_model_free(m);
    free(rules);
    ggp_close(f);
    return 1;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_llm_graph SEEDS_DIR\n");
        return 2;
    }
    DIR *d = opendir(argv[1]);
    if (!d) {
        perror(argv[1]);
        return 1;
    }
    int ok = 1, n = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (strncmp(e->d_name, "graph-", 6) != 0)
            continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", argv[1], e->d_name);
        ok &= test_seed(path);
        n++;
    }
    closedir(d);
    // (the seeds of make_graph_seeds.py: none missing)
    if (n < 16) {
        fprintf(stderr, "only %d graph seeds in %s\n", n, argv[1]);
        ok = 0;
    }
    printf(ok ? "llm graph: ok (%d seeds)\n" : "llm graph: FAILED (%d seeds)\n", n);
    return ok ? 0 : 1;
}
