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

/* A cache's bytes, or `-` for a cache type llama.cpp refuses. */
static void put_kv(const ggfs_memory *m, int type, ggp_sink *sink)
{
    if (m->refused[type])
        ggp_sink_printf(sink, "-");
    else
        ggp_sink_printf(sink, "%" PRIu64, m->kv[type]);
}

static void render_ctx(const ggfs_memory *m, ggp_sink *sink)
{
    ggp_sink_printf(sink, "context: %" PRIu64 "\n", m->context);
    ggp_sink_printf(sink, "weights: %" PRIu64 "\n", m->weights);
    ggp_sink_printf(sink, "kv_layers: %" PRIu32 "\n", m->kv_layers);
    ggp_sink_printf(sink, "kv_cells: %" PRIu64 "\n", m->kv_cells);
    ggp_sink_printf(sink, "swa_layers: %" PRIu32 "\n", m->swa_layers);
    ggp_sink_printf(sink, "swa_cells: %" PRIu64 "\n", m->swa_cells);
    for (int t = 0; t < GGFS_CACHE_TYPES; t++) {
        ggp_sink_printf(sink, "kv_%s: ", ggfs_cache_name(t));
        put_kv(m, t, sink);
        ggp_sink_printf(sink, "\n");
    }
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
        ggp_sink_printf(sink, "%" PRIu32 "\t%" PRIu64, ctx, m.weights);
        for (int t = 0; t < GGFS_CACHE_TYPES; t++) {
            ggp_sink_printf(sink, "\t");
            put_kv(&m, t, sink);
        }
        ggp_sink_printf(sink, "\t%" PRIu64 "\t%" PRIu64 "\n", m.recurrent, m.total_f16);
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

void ggfs_memory_warnings_render(const ggp_file *keys, ggp_sink *sink)
{
    ggfs_memory_rules rules;
    if (!ggfs_memory_read(keys, 0, &rules))
        return;
    for (int t = 0; t < GGFS_CACHE_TYPES; t++) {
        const ggfs_cache_refusal *r = &rules.refusal[t];
        if (!r->refused)
            continue;
        // llama.cpp's own message, then what it means here (in pieces:
        // one printf's line is short)
        ggp_sink_printf(sink, "offset %" PRIu64 ": ", r->offset);
        ggp_sink_printf(sink, "%s: ", r->key);
        if (r->no_flash)
            ggp_sink_printf(sink, "quantized V cache requires flash_attn to be enabled, which llama.cpp turns off for "
                                  "this architecture");
        else
            ggp_sink_printf(sink, "%c cache type %s with block size 32 does not divide n_embd_head_%c=%" PRIu32, r->row,
                            ggfs_cache_name(t), r->row == 'K' ? 'k' : 'v', r->head);
        ggp_sink_printf(sink, ": llama.cpp makes no %s KV cache for this model\n", ggfs_cache_name(t));
    }
}
