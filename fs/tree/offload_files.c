/*
 * The text of offload/CTX (see offload_files.h).
 */
#include <inttypes.h>
#include <stdlib.h>

#include "model/offload.h"
#include "tree/offload_files.h"

static void put_row(const ggfs_offload *o, uint32_t ctx, int cache, uint32_t gpu_layers, uint32_t cpu_moe,
                    ggp_sink *sink)
{
    ggfs_offload_row r;
    ggfs_offload_at(o, ctx, cache, gpu_layers, cpu_moe, &r);
    const uint64_t gpu_total = r.gpu_model + r.gpu_kv + r.gpu_compute;
    const uint64_t host_total = r.host_model + r.host_kv + r.host_compute + r.host_output;
    ggp_sink_printf(sink,
                    "%s\t%" PRIu32 "\t%" PRIu32 "\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64
                    "\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\n",
                    ggfs_cache_name(cache), gpu_layers, cpu_moe, r.gpu_model, r.gpu_kv, r.gpu_compute, r.host_model,
                    r.host_kv, r.host_compute, r.host_output, gpu_total, host_total);
}

bool ggfs_offload_ctx_render(const ggp_file *keys, const ggfs_model *m, uint64_t weights, uint32_t ctx,
                             ggfs_compute_memo *memo, ggp_sink *sink)
{
    ggfs_memory_rules *rules = malloc(sizeof *rules);
    if (!rules)
        return false;
    ggfs_offload *o = NULL;
    if (ctx < 1 || ctx > GGFS_MEMORY_CTX_MAX || !ggfs_memory_read(keys, weights, rules) ||
        !(o = ggfs_offload_new(m, rules, keys, memo))) {
        free(rules);
        return false;
    }
    ggp_sink_printf(sink, "cache\tgpu_layers\tcpu_moe\tgpu_model\tgpu_kv\tgpu_compute\thost_model\thost_kv\t"
                          "host_compute\thost_output\tgpu_total\thost_total\n");
    // every layer and the output layer: -ngl n_layer + 1
    const uint32_t all = rules->n_layer + 1;
    for (int cache = 0; cache < GGFS_CACHE_TYPES; cache++) {
        if (rules->refusal[cache].refused)
            continue; // llama.cpp makes no such context: no line
        for (uint32_t ngl = 0; ngl <= all; ngl++)
            put_row(o, ctx, cache, ngl, 0, sink);
        for (uint32_t n = 1; ggfs_offload_has_experts(o) && n <= rules->n_layer; n++)
            put_row(o, ctx, cache, all, n, sink);
    }
    ggfs_offload_free(o);
    free(rules);
    return true;
}
