/*
 * The fuzz target of the memory rules (model/memory.h, model/offload.h):
 * a GGUF file's keys and tensors, hostile, turned into memory/ and
 * offload/ figures at the smallest, a listed and the largest context.
 * Checks what must hold whatever the keys say: nothing overflows (every
 * figure below 2^62), each offload line's two sides of the KV cache add
 * up to memory/'s figure and the recurrent state, the weights' two sides
 * never exceed the file, and a refused cache type has no figure.
 */
#include <stdint.h>
#include <stdlib.h>

#include "ggp.h"
#include "model/memory.h"
#include "model/offload.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define LIMIT (UINT64_C(1) << 62)

static void check_line(const ggfs_offload *o, const ggfs_memory_rules *rules, uint32_t ctx, int cache,
                       uint32_t ngl, uint32_t cpu_moe, const ggfs_memory *m, uint64_t file_size)
{
    ggfs_offload_row row;
    ggfs_offload_at(o, ctx, cache, ngl, cpu_moe, &row);
    if (row.gpu_kv + row.host_kv != m->kv[cache] + m->recurrent)
        abort();
    if (row.host_model > file_size || row.gpu_model >= LIMIT || row.gpu_compute >= LIMIT ||
        row.host_compute >= LIMIT || row.host_output >= LIMIT)
        abort();
    (void)rules;
}

static void check_ctx(const ggp_file *f, const ggfs_memory_rules *rules, uint32_t ctx)
{
    ggfs_memory m;
    ggfs_memory_at(rules, ctx, &m);
    if (m.total_f16 >= LIMIT || m.context < ctx || m.context % 256 != 0)
        abort();
    for (int t = 0; t < GGFS_CACHE_TYPES; t++) {
        if (m.kv[t] >= LIMIT || (m.refused[t] && m.kv[t] != 0))
            abort();
    }
    if (m.refused[GGFS_CACHE_F16])
        abort();
    const ggp_file *files[] = {f};
    ggfs_offload *o = ggfs_offload_new_files(files, 1, rules, f);
    if (!o)
        return;
    const uint32_t all = rules->n_layer + 1;
    // every -ngl of a model of few layers; of more, the ends and a middle
    // (each line of a model's own graph costs in proportion to its layers)
    const uint32_t step = all > 16 ? all / 4 : 1;
    for (int t = 0; t < GGFS_CACHE_TYPES; t++) {
        if (m.refused[t])
            continue;
        for (uint32_t ngl = 0; ngl <= all; ngl += ngl + 1 >= all ? 1 : step)
            check_line(o, rules, ctx, t, ngl, 0, &m, ggp_file_size(f));
        check_line(o, rules, ctx, t, all, rules->n_layer, &m, ggp_file_size(f));
    }
    ggfs_offload_free(o);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ggp_error err;
    ggp_file *f = ggp_open_mem(data, size, &err);
    if (!f)
        return 0;
    uint64_t weights = 0;
    for (uint64_t i = 0; i < ggp_tensor_count(f); i++)
        weights += ggp_tensor_at(f, i)->bytes;
    ggfs_memory_rules *rules = malloc(sizeof *rules);
    if (rules && ggfs_memory_read(f, weights, rules)) {
        check_ctx(f, rules, 1);
        const uint32_t listed = ggfs_memory_listed(rules, 1);
        if (listed)
            check_ctx(f, rules, listed);
        check_ctx(f, rules, GGFS_MEMORY_CTX_MAX);
    }
    free(rules);
    ggp_close(f);
    return 0;
}
