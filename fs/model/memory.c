/*
 * What llama.cpp allocates for a model at a context size (see memory.h).
 * Each rule names the llama.cpp code it follows; the hyperparameters are
 * read as llama_model_base::load_hparams and each architecture's
 * load_arch_hparams read them.
 */
#include <stdio.h>
#include <string.h>

#include "model/memory.h"
#include "model/memory_arches.h"

#define MAX_LAYERS GGFS_MEMORY_MAX_LAYERS
#define CTX_PAD 256      // llama_context: n_ctx = GGML_PAD(n_ctx, 256); the SWA cache likewise
#define N_UBATCH 512     // llama_context_default_params().n_ubatch
#define STATE_BYTES 4    // recurrent state is f32 (create_memory)

/* ==== Architectures ==== */

static const ggfs_arch_rules *arch_of(const ggp_file *keys)
{
    static const char key[] = "general.architecture";
    const ggp_kv *kv = ggp_kv_find(keys, key, sizeof key - 1);
    if (!kv || kv->value.type != GGP_V_STRING)
        return NULL;
    const ggp_str name = ggp_value_str(keys, &kv->value);
    return ggfs_arch_rules_of(name.ptr, name.len);
}

/* ==== Reading keys ==== */

typedef enum found { ABSENT, FOUND, BAD } found;

static bool is_integer(ggp_vtype t)
{
    return t == GGP_V_U8 || t == GGP_V_I8 || t == GGP_V_U16 || t == GGP_V_I16 || t == GGP_V_U32 ||
           t == GGP_V_I32 || t == GGP_V_U64 || t == GGP_V_I64;
}

static bool is_signed(ggp_vtype t)
{
    return t == GGP_V_I8 || t == GGP_V_I16 || t == GGP_V_I32 || t == GGP_V_I64;
}

/* One integer element as a u32; false when negative or too big. */
static bool value_u32(const ggp_file *keys, const ggp_value *v, uint32_t *out)
{
    if (v->type == GGP_V_BOOL) {
        *out = (uint32_t)ggp_value_u64(keys, v);
        return true;
    }
    if (!is_integer(v->type))
        return false;
    if (is_signed(v->type)) {
        const int64_t s = ggp_value_i64(keys, v);
        if (s < 0 || s > UINT32_MAX)
            return false;
        *out = (uint32_t)s;
        return true;
    }
    const uint64_t u = ggp_value_u64(keys, v);
    if (u > UINT32_MAX)
        return false;
    *out = (uint32_t)u;
    return true;
}

static const ggp_kv *arch_key(const ggp_file *keys, const char *arch, const char *suffix)
{
    char name[128];
    const int n = snprintf(name, sizeof name, "%s.%s", arch, suffix);
    return n > 0 && (size_t)n < sizeof name ? ggp_kv_find(keys, name, (size_t)n) : NULL;
}

/* ARCH.suffix as one u32 (left as it is when absent). */
static found get_u32(const ggp_file *keys, const char *arch, const char *suffix, uint32_t *out)
{
    const ggp_kv *kv = arch_key(keys, arch, suffix);
    if (!kv)
        return ABSENT;
    return value_u32(keys, &kv->value, out) ? FOUND : BAD;
}

/* ARCH.suffix as a u32 for each of n layers: one value for all, or an
 * array of exactly n (llama_model_loader::get_key_or_arr); left as it is
 * when absent. */
static found get_per_layer(const ggp_file *keys, const char *arch, const char *suffix, uint32_t n,
                           uint32_t *out)
{
    const ggp_kv *kv = arch_key(keys, arch, suffix);
    if (!kv)
        return ABSENT;
    if (kv->value.type != GGP_V_ARRAY) {
        uint32_t v;
        if (!value_u32(keys, &kv->value, &v))
            return BAD;
        for (uint32_t i = 0; i < n; i++)
            out[i] = v;
        return FOUND;
    }
    if (kv->value.count != n)
        return BAD;
    ggp_array_iter it;
    ggp_value elem;
    ggp_array_iter_init(&it, keys, &kv->value);
    for (uint32_t i = 0; ggp_array_next(&it, &elem); i++) {
        if (!value_u32(keys, &elem, &out[i]))
            return BAD;
    }
    return FOUND;
}

/* ==== Hyperparameters (llama_hparams) ==== */

typedef struct hparams {
    uint32_t n_layer_all, n_layer_nextn, n_embd, n_ctx_train;
    uint32_t n_head[MAX_LAYERS], n_head_kv[MAX_LAYERS], n_ff[MAX_LAYERS];
    uint32_t head_k_full, head_v_full, head_k_swa, head_v_swa;
    // the keys (ARCH.suffix) each head size comes from, for the warnings
    const char *head_k_full_key, *head_v_full_key, *head_k_swa_key, *head_v_swa_key;
    bool mla;
    bool is_swa[MAX_LAYERS], is_recr[MAX_LAYERS];
    uint32_t n_swa;
    uint32_t n_layer_kv; // layers from here on reuse another's cache (gemma3n, gemma4)
    uint32_t ssm_d_conv, ssm_d_inner, ssm_d_state, ssm_n_group, shortconv_l_cache;
    uint32_t wkv_head_size, token_shift_count, kda_head_dim;
} hparams;

/* The trunk: the layers before the prediction layers. */
static uint32_t trunk(const hparams *h)
{
    return h->n_layer_all - h->n_layer_nextn;
}

/* llama_hparams::set_swa_pattern: the full-attention layer last (or
 * first) of each period; period 0: every layer slides. */
static void set_swa_pattern(hparams *h, uint32_t period, bool dense_first)
{
    for (uint32_t il = 0; il < trunk(h); il++)
        h->is_swa[il] = period == 0 || (dense_first ? il % period != 0 : il % period < period - 1);
}

/* llama_model_base::load_swa_pattern: the pattern key's array of flags
 * (required when `array`), or its period, else `period`. */
static bool swa_pattern(const ggp_file *keys, const char *arch, uint32_t period, bool dense_first, bool array,
                        hparams *h)
{
    const ggp_kv *kv = arch_key(keys, arch, "attention.sliding_window_pattern");
    if (kv && kv->value.type == GGP_V_ARRAY) {
        // get_arr copies as many flags as the array holds, at most the layers
        if (kv->value.count > h->n_layer_all)
            return false;
        ggp_array_iter it;
        ggp_value elem;
        ggp_array_iter_init(&it, keys, &kv->value);
        for (uint32_t i = 0; ggp_array_next(&it, &elem); i++) {
            uint32_t flag;
            if (!value_u32(keys, &elem, &flag))
                return false;
            h->is_swa[i] = flag != 0;
        }
        return true;
    }
    if (array || (kv && !value_u32(keys, &kv->value, &period)))
        return false;
    set_swa_pattern(h, period, dense_first);
    return true;
}

/* The window and the sliding layers (each load_hparams' own rule). */
static bool read_swa(const ggp_file *keys, const char *arch, const ggfs_arch_rules *r, hparams *h)
{
    if (r->swa == GGFS_SWA_NONE)
        return true;
    uint32_t window = r->window_size;
    const found f = get_u32(keys, arch, "attention.sliding_window", &window);
    if (f == BAD)
        return false;
    if (r->swa == GGFS_SWA_LLAMA4) {
        // chunked attention over 8192 tokens unless the key says 0
        if (f == FOUND && window == 0)
            return true;
        h->n_swa = 8192;
        return swa_pattern(keys, arch, 4, false, false, h);
    }
    switch (r->window) {
    case GGFS_WIN_REQUIRED:
        if (f == ABSENT)
            return false;
        break;
    case GGFS_WIN_IF_GIVEN:
    case GGFS_WIN_FORCED:
        if (f == ABSENT || window == 0)
            return true;
        if (r->window == GGFS_WIN_FORCED)
            window = r->window_size;
        break;
    default:
        break;
    }
    if (r->window_64 && h->n_layer_all != 64)
        return true;
    h->n_swa = window;
    if (r->swa == GGFS_SWA_LFM2) {
        for (uint32_t il = 0; il < trunk(h); il++)
            h->is_swa[il] = !h->is_recr[il];
        return true;
    }
    return swa_pattern(keys, arch, r->period, r->dense_first, r->swa == GGFS_SWA_ARRAY, h);
}

/* Which layers are recurrent, and the keys their state's size needs. */
static bool read_recurrent(const ggp_file *keys, const char *arch, const ggfs_arch_rules *r, hparams *h)
{
    const uint32_t n = trunk(h);
    uint32_t interval = r->interval;
    uint32_t flags[MAX_LAYERS];
    found f;
    switch (r->recr_layers) {
    case GGFS_RL_ALL:
        for (uint32_t il = 0; il < n && r->recr != GGFS_RECR_NONE; il++)
            h->is_recr[il] = true;
        break;
    case GGFS_RL_NO_KV_HEADS:
        for (uint32_t il = 0; il < n; il++)
            h->is_recr[il] = h->n_head_kv[il] == 0;
        break;
    case GGFS_RL_NEMOTRON:
        for (uint32_t il = 0; il < n; il++)
            h->is_recr[il] = h->n_head_kv[il] == 0 && h->n_ff[il] == 0;
        break;
    case GGFS_RL_INTERVAL:
        if ((f = get_per_layer(keys, arch, "attention.recurrent_layers", h->n_layer_all, flags)) == BAD)
            return false;
        if (f == ABSENT && (get_u32(keys, arch, "full_attention_interval", &interval) == BAD || interval == 0))
            return false;
        for (uint32_t il = 0; il < n; il++)
            h->is_recr[il] = f == FOUND ? flags[il] != 0 : (il + 1) % interval != 0;
        break;
    default:
        return false;
    }
    switch (r->recr) {
    case GGFS_RECR_NONE:
    case GGFS_RECR_LA:
        return true;
    case GGFS_RECR_SSM:
    case GGFS_RECR_SSM_GROUPS:
        return get_u32(keys, arch, "ssm.conv_kernel", &h->ssm_d_conv) == FOUND &&
               get_u32(keys, arch, "ssm.inner_size", &h->ssm_d_inner) == FOUND &&
               get_u32(keys, arch, "ssm.state_size", &h->ssm_d_state) == FOUND &&
               (r->recr == GGFS_RECR_SSM || get_u32(keys, arch, "ssm.group_count", &h->ssm_n_group) == FOUND);
    case GGFS_RECR_RWKV:
        h->token_shift_count = 2;
        return get_u32(keys, arch, "wkv.head_size", &h->wkv_head_size) == FOUND &&
               get_u32(keys, arch, "token_shift_count", &h->token_shift_count) != BAD;
    case GGFS_RECR_CONV:
        return get_u32(keys, arch, "shortconv.l_cache", &h->shortconv_l_cache) == FOUND;
    case GGFS_RECR_KDA:
        return get_u32(keys, arch, "ssm.conv_kernel", &h->ssm_d_conv) == FOUND &&
               get_u32(keys, arch, "kda.head_dim", &h->kda_head_dim) == FOUND;
    }
    return false;
}

/* A head size from ARCH.suffix when given, noting the key it came from;
 * false when the key is there but not a u32. */
static bool get_head(const ggp_file *keys, const char *arch, const char *suffix, uint32_t *out, const char **from)
{
    const found f = get_u32(keys, arch, suffix, out);
    if (f == FOUND)
        *from = suffix;
    return f != BAD;
}

/* gemma3n's and gemma4's layers past n_layer_kv reuse an earlier one's
 * cache (llama_hparams::n_layer_kv_from_start). */
static bool read_kv_from(const ggp_file *keys, const char *arch, const ggfs_arch_rules *r, hparams *h)
{
    h->n_layer_kv = h->n_layer_all;
    uint32_t shared = 0;
    switch (r->kv_from) {
    case GGFS_KV_FROM_20:
        if (h->n_layer_all > 20)
            h->n_layer_kv = 20;
        return true;
    case GGFS_KV_FROM_SHARED:
        if (get_u32(keys, arch, "attention.shared_kv_layers", &shared) == BAD || shared > h->n_layer_all)
            return false;
        h->n_layer_kv = h->n_layer_all - shared;
        return true;
    default:
        return true;
    }
}

static bool read_hparams(const ggp_file *keys, const char *arch, const ggfs_arch_rules *r, hparams *h)
{
    memset(h, 0, sizeof *h);
    if (get_u32(keys, arch, "context_length", &h->n_ctx_train) != FOUND ||
        get_u32(keys, arch, "embedding_length", &h->n_embd) != FOUND ||
        get_u32(keys, arch, "block_count", &h->n_layer_all) != FOUND)
        return false;
    if (h->n_layer_all == 0 || h->n_layer_all > MAX_LAYERS)
        return false;
    if (get_u32(keys, arch, "nextn_predict_layers", &h->n_layer_nextn) == BAD || h->n_layer_nextn > h->n_layer_all)
        return false;
    const uint32_t n = h->n_layer_all;
    if (get_per_layer(keys, arch, "attention.head_count", n, h->n_head) == BAD ||
        get_per_layer(keys, arch, "feed_forward_length", n, h->n_ff) == BAD)
        return false;
    memcpy(h->n_head_kv, h->n_head, sizeof h->n_head); // head_count_kv defaults to head_count
    if (get_per_layer(keys, arch, "attention.head_count_kv", n, h->n_head_kv) == BAD)
        return false;
    if (h->n_head[0] > 0) {
        h->head_k_full = h->head_v_full = h->n_embd / h->n_head[0];
        h->head_k_full_key = h->head_v_full_key = "attention.head_count";
        if (!get_head(keys, arch, "attention.key_length", &h->head_k_full, &h->head_k_full_key) ||
            !get_head(keys, arch, "attention.value_length", &h->head_v_full, &h->head_v_full_key))
            return false;
    }
    h->head_k_swa = h->head_k_full;
    h->head_v_swa = h->head_v_full;
    h->head_k_swa_key = h->head_k_full_key;
    h->head_v_swa_key = h->head_v_full_key;
    if (!get_head(keys, arch, "attention.key_length_swa", &h->head_k_swa, &h->head_k_swa_key) ||
        !get_head(keys, arch, "attention.value_length_swa", &h->head_v_swa, &h->head_v_swa_key))
        return false;
    if (r->swa_heads && (!arch_key(keys, arch, "attention.key_length_swa") ||
                         !arch_key(keys, arch, "attention.value_length_swa")))
        return false;
    // llama_hparams::is_mla: both MLA head sizes given, for the
    // architectures that read them
    uint32_t k_mla = 0, v_mla = 0;
    if (r->mla && (get_u32(keys, arch, "attention.key_length_mla", &k_mla) == BAD ||
                   get_u32(keys, arch, "attention.value_length_mla", &v_mla) == BAD))
        return false;
    h->mla = k_mla != 0 && v_mla != 0;
    return read_recurrent(keys, arch, r, h) && read_swa(keys, arch, r, h) && read_kv_from(keys, arch, r, h);
}

/* ==== Sizes ==== */

/* Every figure stays below 2^61 (a cell's bytes below 2^37, so that 2^24
 * cells of both caches, the state and the weights add up within 64 bits):
 * keys asking for more describe no model llama.cpp could allocate, and
 * have no memory/. */
#define FIGURE_MAX (UINT64_C(1) << 61)
#define CELL_MAX (UINT64_C(1) << 37)

/* *out = a * b; false past FIGURE_MAX. */
static bool mul(uint64_t a, uint64_t b, uint64_t *out)
{
    if (a != 0 && b > FIGURE_MAX / a)
        return false;
    *out = a * b;
    return true;
}

/* *sum += a; false past FIGURE_MAX. */
static bool add(uint64_t *sum, uint64_t a)
{
    if (a > FIGURE_MAX - *sum)
        return false;
    *sum += a;
    return true;
}

/* ggml_row_size of a row of ne elements: f16 2 bytes each; q8_0 34 and
 * q4_0 18 bytes per block of 32. */
static bool row_bytes(int type, uint64_t ne, uint64_t *out)
{
    static const uint64_t block_bytes[GGFS_CACHE_TYPES] = {[GGFS_CACHE_F16] = 64, [GGFS_CACHE_Q8_0] = 34,
                                                           [GGFS_CACHE_Q4_0] = 18};
    if (!mul(ne, block_bytes[type], out))
        return false;
    *out /= 32;
    return true;
}

/* One layer's K and V rows in rule (llama_kv_cache's constructor: K of
 * n_embd_k_gqa, V of n_embd_v_gqa unless MLA, which keeps no V). */
static bool add_layer(ggfs_kv_rule *rule, ggfs_layer_memory *layer, const hparams *h, uint32_t il)
{
    const bool swa = h->is_swa[il];
    uint64_t k, v = 0;
    if (!mul(swa ? h->head_k_swa : h->head_k_full, h->n_head_kv[il], &k) ||
        (!h->mla && !mul(swa ? h->head_v_swa : h->head_v_full, h->n_head_kv[il], &v)))
        return false;
    rule->layers++;
    layer->cache = swa ? GGFS_LAYER_SWA : GGFS_LAYER_FULL;
    for (int t = 0; t < GGFS_CACHE_TYPES; t++) {
        uint64_t k_bytes, v_bytes;
        if (!row_bytes(t, k, &k_bytes) || !row_bytes(t, v, &v_bytes) || !add(&rule->cell_bytes[t], k_bytes) ||
            !add(&rule->cell_bytes[t], v_bytes))
            return false;
        layer->cell_bytes[t] = k_bytes + v_bytes;
    }
    return rule->cell_bytes[GGFS_CACHE_F16] <= CELL_MAX; // f16's is the largest
}

/* llama_hparams::n_embd_r plus n_embd_s, in bytes of f32 state. */
static bool state_bytes(const hparams *h, const ggfs_arch_rules *r, uint64_t *out)
{
    uint64_t conv = 0, scan = 0, width, groups, heads;
    bool ok = true;
    switch (r->recr) {
    case GGFS_RECR_SSM:
    case GGFS_RECR_SSM_GROUPS:
        width = h->ssm_d_inner;
        ok = mul(h->ssm_n_group, h->ssm_d_state, &groups) && mul(groups, 2, &groups) && add(&width, groups) &&
             mul(h->ssm_d_conv > 0 ? h->ssm_d_conv - 1 : 0, width, &conv) &&
             mul(h->ssm_d_state, h->ssm_d_inner, &scan);
        break;
    case GGFS_RECR_RWKV:
        ok = mul(h->token_shift_count, h->n_embd, &conv) && mul(h->n_embd, h->wkv_head_size, &scan);
        break;
    case GGFS_RECR_CONV:
        ok = mul(h->n_embd, h->shortconv_l_cache > 0 ? h->shortconv_l_cache - 1 : 0, &conv);
        break;
    case GGFS_RECR_KDA:
        ok = mul(3 * (uint64_t)(h->ssm_d_conv > 0 ? h->ssm_d_conv - 1 : 3), h->n_head[0], &heads) &&
             mul(heads, h->kda_head_dim, &conv) && mul(h->kda_head_dim, h->kda_head_dim, &scan) &&
             mul(scan, h->n_head[0], &scan);
        break;
    case GGFS_RECR_LA:
        ok = mul(h->head_k_full, h->head_k_full, &scan) && mul(scan, h->n_head[0], &scan);
        break;
    default:
        break;
    }
    return ok && add(&conv, scan) && mul(conv, STATE_BYTES, out);
}

/* Whether layer il has a cache of its own (create_memory's filters). */
static bool has_attention(const hparams *h, const ggfs_arch_rules *r, uint32_t il)
{
    switch (r->kv) {
    case GGFS_KV_PLAIN:
        // the prediction layers at the end have their own context's cache,
        // unless every layer is one; gemma3n's and gemma4's last layers
        // reuse an earlier one's
        if (h->n_layer_nextn > 0 && trunk(h) > 0 && il >= trunk(h))
            return false;
        return il < h->n_layer_kv;
    case GGFS_KV_HYBRID:
        switch (r->attn_layers) {
        case GGFS_AL_ALL: return true;
        case GGFS_AL_TRUNK_NOT_RECR: return il < trunk(h) && !h->is_recr[il];
        case GGFS_AL_NEMOTRON: return !h->is_recr[il] && h->n_ff[il] == 0;
        default: return !h->is_recr[il];
        }
    default:
        return false;
    }
}

/* llama_init_from_model refuses a quantized cache when flash attention is
 * forced off (a quantized V needs it), and a quantized K (then V) cache
 * whose block size does not divide some trunk layer's head size, flash
 * attention being on (its "auto" turns on for a quantized V cache). */
static void note_refusals(const ggp_file *keys, const ggfs_arch_rules *a, const hparams *h, ggfs_memory_rules *rules)
{
    static const uint32_t block[GGFS_CACHE_TYPES] = {[GGFS_CACHE_F16] = 1, [GGFS_CACHE_Q8_0] = 32,
                                                     [GGFS_CACHE_Q4_0] = 32};
    static const char arch_key_name[] = "general.architecture";
    const char *arch = a->name;
    for (int t = 0; t < GGFS_CACHE_TYPES; t++) {
        ggfs_cache_refusal *r = &rules->refusal[t];
        if (a->no_flash && block[t] > 1) {
            const ggp_kv *kv = ggp_kv_find(keys, arch_key_name, sizeof arch_key_name - 1);
            r->refused = r->no_flash = true;
            r->row = 'V';
            r->offset = kv ? kv->offset : 0;
            snprintf(r->key, sizeof r->key, "%s", arch_key_name);
            continue;
        }
        for (int row = 0; row < 2 && !r->refused; row++) {
            for (uint32_t il = 0; il < trunk(h) && !r->refused; il++) {
                const bool swa = h->is_swa[il];
                const uint32_t head = row == 0 ? (swa ? h->head_k_swa : h->head_k_full)
                                               : (swa ? h->head_v_swa : h->head_v_full);
                if (head % block[t] == 0)
                    continue;
                const char *suffix = row == 0 ? (swa ? h->head_k_swa_key : h->head_k_full_key)
                                              : (swa ? h->head_v_swa_key : h->head_v_full_key);
                const ggp_kv *kv = arch_key(keys, arch, suffix);
                r->refused = true;
                r->row = row == 0 ? 'K' : 'V';
                r->head = head;
                r->offset = kv ? kv->offset : 0;
                snprintf(r->key, sizeof r->key, "%s.%s", arch, suffix);
            }
        }
    }
}

bool ggfs_memory_read(const ggp_file *keys, uint64_t weights, ggfs_memory_rules *rules)
{
    memset(rules, 0, sizeof *rules);
    const ggfs_arch_rules *r = arch_of(keys);
    if (!r || weights > FIGURE_MAX)
        return false;
    hparams h;
    if (!read_hparams(keys, r->name, r, &h))
        return false;
    rules->n_ctx_train = h.n_ctx_train;
    rules->weights = weights;
    rules->n_swa = h.n_swa;
    note_refusals(keys, r, &h, rules);
    uint64_t state = 0;
    bool ok = true;
    rules->n_layer = h.n_layer_all;
    rules->n_nextn = h.n_layer_nextn;
    rules->n_embd = h.n_embd;
    for (uint32_t il = 0; il < h.n_layer_all; il++)
        rules->n_ff = h.n_ff[il] > rules->n_ff ? h.n_ff[il] : rules->n_ff;
    // the experts' shape, for offload/'s compute buffers (none when a key
    // is not a number)
    if (get_u32(keys, r->name, "expert_count", &rules->n_expert) != FOUND ||
        get_u32(keys, r->name, "expert_used_count", &rules->n_expert_used) != FOUND)
        rules->n_expert = rules->n_expert_used = 0;
    if (get_u32(keys, r->name, "expert_feed_forward_length", &rules->n_ff_exp) != FOUND)
        rules->n_ff_exp = 0;
    for (uint32_t il = 0; ok && il < h.n_layer_all; il++) {
        rules->layer[il].sliding = h.is_swa[il];
        rules->layer[il].n_head = h.n_head[il];
        rules->layer[il].n_head_kv = h.n_head_kv[il];
        rules->layer[il].head_k = h.is_swa[il] ? h.head_k_swa : h.head_k_full;
        rules->layer[il].head_v = h.is_swa[il] ? h.head_v_swa : h.head_v_full;
        // recurrent state for the trunk's recurrent layers (is_recr is
        // never set past them)
        if (h.is_recr[il] && r->kv != GGFS_KV_PLAIN && r->kv != GGFS_KV_NONE) {
            ok = state_bytes(&h, r, &state) && add(&rules->recurrent, state);
            rules->layer[il].state = state;
        }
        if (ok && has_attention(&h, r, il))
            ok = add_layer(h.is_swa[il] ? &rules->swa : &rules->full, &rules->layer[il], &h, il);
    }
    return ok;
}

const char *ggfs_cache_name(int type)
{
    static const char *const names[GGFS_CACHE_TYPES] = {
        [GGFS_CACHE_F16] = "f16", [GGFS_CACHE_Q8_0] = "q8_0", [GGFS_CACHE_Q4_0] = "q4_0"};
    return type >= 0 && type < GGFS_CACHE_TYPES ? names[type] : "?";
}

static uint64_t pad(uint64_t n, uint64_t to)
{
    return (n + to - 1) / to * to;
}

/* The full-attention cache's cells and the sliding-window cache's. */
static void cells_at(const ggfs_memory_rules *rules, uint32_t ctx, uint64_t *cells, uint64_t *swa_cells)
{
    // llama_context: n_ctx = GGML_PAD(n_ctx, 256); one sequence, n_ctx_seq = n_ctx.
    *cells = pad(ctx, CTX_PAD);
    // n_ubatch = min(n_batch, 512) where n_batch = min(n_ctx before padding, 2048).
    const uint64_t ubatch = ctx < N_UBATCH ? ctx : N_UBATCH;
    // llama_kv_cache_iswa: GGML_PAD(min(size_base, n_swa + n_ubatch), 256).
    const uint64_t swa_want = (uint64_t)rules->n_swa + ubatch;
    *swa_cells = pad(*cells < swa_want ? *cells : swa_want, CTX_PAD);
}

uint64_t ggfs_memory_layer_cells(const ggfs_memory_rules *rules, uint32_t il, uint32_t ctx)
{
    uint64_t cells, swa_cells;
    cells_at(rules, ctx, &cells, &swa_cells);
    switch (il < rules->n_layer ? rules->layer[il].cache : GGFS_LAYER_NO_KV) {
    case GGFS_LAYER_FULL: return cells;
    case GGFS_LAYER_SWA: return swa_cells;
    default: return 0;
    }
}

void ggfs_memory_at(const ggfs_memory_rules *rules, uint32_t ctx, ggfs_memory *out)
{
    memset(out, 0, sizeof *out);
    uint64_t cells, swa_cells;
    cells_at(rules, ctx, &cells, &swa_cells);
    out->context = cells;
    out->weights = rules->weights;
    out->kv_layers = rules->full.layers;
    out->kv_cells = rules->full.layers ? cells : 0;
    out->swa_layers = rules->swa.layers;
    out->swa_cells = rules->swa.layers ? swa_cells : 0;
    for (int t = 0; t < GGFS_CACHE_TYPES; t++) {
        out->refused[t] = rules->refusal[t].refused;
        out->kv[t] = out->refused[t] ? 0
                                     : rules->full.cell_bytes[t] * out->kv_cells + rules->swa.cell_bytes[t] * out->swa_cells;
    }
    out->recurrent = rules->recurrent;
    out->total_f16 = out->weights + out->kv[GGFS_CACHE_F16] + out->recurrent;
}

uint32_t ggfs_memory_listed(const ggfs_memory_rules *rules, uint32_t i)
{
    const uint32_t trained = rules->n_ctx_train < GGFS_MEMORY_CTX_MAX ? rules->n_ctx_train : GGFS_MEMORY_CTX_MAX;
    if (trained == 0)
        return 0;
    uint32_t k = 0;
    for (uint32_t c = GGFS_MEMORY_LISTED_FIRST; c < trained; c *= 2, k++) {
        if (k == i)
            return c;
    }
    return i == k ? trained : 0;
}

uint64_t ggfs_memory_weights(const ggfs_model *m)
{
    uint64_t total = 0;
    uint32_t shard;
    for (uint64_t i = 0; i < m->n_tensors; i++) {
        const ggp_tensor *t = ggfs_model_tensor(m, i, &shard);
        if (t->type)
            total += t->bytes;
    }
    return total;
}
