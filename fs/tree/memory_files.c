/*
 * The text of memory/CTX and memory.tsv (see memory_files.h).
 */
#include <inttypes.h>

#include "tree/memory_files.h"

bool ggfs_memory_name_parse(const char *name, uint32_t *ctx)
{
    if (name[0] < '1' || name[0] > '9')
        return false;
    uint64_t v = 0;
    for (const char *p = name; *p; p++) {
        if (*p < '0' || *p > '9')
            return false;
        v = v * 10 + (uint64_t)(*p - '0');
        if (v > GGFS_MEMORY_CTX_MAX)
            return false;
    }
    *ctx = (uint32_t)v;
    return true;
}

static void render_ctx(const ggfs_memory *m, ggp_sink *sink)
{
    ggp_sink_printf(sink, "context: %" PRIu64 "\n", m->context);
    ggp_sink_printf(sink, "weights: %" PRIu64 "\n", m->weights);
    ggp_sink_printf(sink, "kv_layers: %" PRIu32 "\n", m->kv_layers);
    ggp_sink_printf(sink, "kv_cells: %" PRIu64 "\n", m->kv_cells);
    ggp_sink_printf(sink, "swa_layers: %" PRIu32 "\n", m->swa_layers);
    ggp_sink_printf(sink, "swa_cells: %" PRIu64 "\n", m->swa_cells);
    ggp_sink_printf(sink, "kv_f16: %" PRIu64 "\n", m->kv[GGFS_CACHE_F16]);
    ggp_sink_printf(sink, "kv_q8_0: %" PRIu64 "\n", m->kv[GGFS_CACHE_Q8_0]);
    ggp_sink_printf(sink, "kv_q4_0: %" PRIu64 "\n", m->kv[GGFS_CACHE_Q4_0]);
    ggp_sink_printf(sink, "recurrent: %" PRIu64 "\n", m->recurrent);
    ggp_sink_printf(sink, "total_f16: %" PRIu64 "\n", m->total_f16);
}

static void render_tsv(const ggfs_memory_rules *rules, ggp_sink *sink)
{
    ggp_sink_printf(sink, "context\tweights\tkv_f16\tkv_q8_0\tkv_q4_0\trecurrent\ttotal_f16\n");
    uint32_t ctx;
    for (uint32_t i = 0; (ctx = ggfs_memory_listed(rules, i)) != 0; i++) {
        ggfs_memory m;
        ggfs_memory_at(rules, ctx, &m);
        ggp_sink_printf(sink, "%" PRIu32, ctx);
        const uint64_t fields[] = {m.weights,   m.kv[GGFS_CACHE_F16], m.kv[GGFS_CACHE_Q8_0], m.kv[GGFS_CACHE_Q4_0],
                                   m.recurrent, m.total_f16};
        for (size_t f = 0; f < sizeof fields / sizeof fields[0]; f++)
            ggp_sink_printf(sink, "\t%" PRIu64, fields[f]);
        ggp_sink_printf(sink, "\n");
    }
}

bool ggfs_memory_ctx_render(const ggp_file *keys, uint64_t weights, uint32_t ctx, ggp_sink *sink)
{
    ggfs_memory_rules rules;
    if (ctx < 1 || ctx > GGFS_MEMORY_CTX_MAX || !ggfs_memory_read(keys, weights, &rules))
        return false;
    ggfs_memory m;
    ggfs_memory_at(&rules, ctx, &m);
    render_ctx(&m, sink);
    return true;
}

bool ggfs_memory_tsv_render(const ggp_file *keys, uint64_t weights, ggp_sink *sink)
{
    ggfs_memory_rules rules;
    if (!ggfs_memory_read(keys, weights, &rules))
        return false;
    render_tsv(&rules, sink);
    return true;
}
