/*
 * Where llama.cpp puts a model's bytes with one GPU (see offload.h). Each
 * rule names the llama.cpp code it follows.
 */
#include <stdlib.h>
#include <string.h>

#include "model/llm_graph.h"
#include "model/offload.h"
#include "model/host_weights.h"

/* Where llama_model_loader::create_tensor puts a tensor: its layer's
 * device (LLM_TENSOR_INFOS' layer of the tensor's kind). */
typedef enum place {
    PLACE_INPUT,      // the token embeddings: always the host
    PLACE_LAYER,      // blk.N.*: layer N's device
    PLACE_OUTPUT,     // the output layer's device (the first to go to the GPU)
    PLACE_EACH_LAYER, // rope_freqs and rope factors: one copy per device that has a layer
} place;

/* A file's bytes the host maps: from the first byte of its first tensor
 * on the host to the end of its last (llama_model_loader::
 * get_mapping_range; a CPU buffer made from the mapping). */
typedef struct hull {
    uint64_t start, end;
} hull;

typedef struct placed {
    uint64_t start, end; // the data's bytes in its file
    uint32_t shard;
    uint32_t layer;      // PLACE_LAYER's N
    uint8_t place;
    bool expert;         // an expert tensor --n-cpu-moe keeps on the host
    bool host_only;      // its op does not run on the GPU: the loader keeps it on the host
} placed;

struct ggfs_offload {
    const ggfs_memory_rules *rules;
    uint32_t n_shards;
    uint64_t n_tensors;
    placed *tensors;
    hull *hulls;          // one per shard, for each line's host mapping
    uint64_t tied_output; // bytes of a second copy on the output layer's device: the token
                          // embeddings as the output matrix, or the output as the embeddings
    uint32_t rope_first, rope_last; // the first and last layers that load rope_freqs (PLACE_EACH_LAYER)
    bool has_experts;
    uint32_t lookups;     // embeddings the input looks up: tokens', and positions' and token types' if any
    bool unroped_k;       // the architecture's K gets no rotary embedding (unroped_k)
    uint64_t n_vocab;
    uint32_t *qkv_rows;   // per layer: a fused Q, K and V projection's output width, or 0
    uint64_t *projected;  // per layer: the widths of its Q, K and V projections, added
    bool gated;           // a dense feed-forward block with a gate (gate, up, their product)
    bool *expert_layer;   // per layer: its feed-forward block is experts
    ggfs_llm_model *graph; // the architecture's graph, where it is written (model/llm_graph.h)
    ggfs_compute_memo *memo; // its figures, kept with the view (NULL: none)
};

/* A GPU buffer holds each tensor at an offset aligned to its buffer
 * type's alignment (ggml_backend_alloc_ctx_tensors_from_buft). */
#define GPU_ALIGN 16

static uint64_t aligned(uint64_t n)
{
    return (n + GPU_ALIGN - 1) / GPU_ALIGN * GPU_ALIGN;
}

static bool has_prefix(ggp_str name, const char *prefix)
{
    const size_t n = strlen(prefix);
    return name.len >= n && memcmp(name.ptr, prefix, n) == 0;
}

static bool contains(ggp_str name, const char *part)
{
    const size_t n = strlen(part);
    for (size_t i = 0; i + n <= name.len; i++) {
        if (memcmp(name.ptr + i, part, n) == 0)
            return true;
    }
    return false;
}

/* common.h's LLM_FFN_EXPS_REGEX, "\.ffn_(up|down|gate|gate_up)_(ch|)exps",
 * which --n-cpu-moe applies to blk.N for N below its value. */
static bool is_expert(ggp_str name)
{
    static const char *const parts[] = {".ffn_up_exps",  ".ffn_down_exps",  ".ffn_gate_exps",  ".ffn_gate_up_exps",
                                        ".ffn_up_chexps", ".ffn_down_chexps", ".ffn_gate_chexps", ".ffn_gate_up_chexps"};
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
        if (contains(name, parts[i]))
            return true;
    }
    return false;
}

static bool name_is(ggp_str name, const char *s)
{
    return name.len == strlen(s) && memcmp(name.ptr, s, name.len) == 0;
}

/* The architectures whose loaders never take the token embeddings as the
 * output matrix (no TENSOR_DUPLICATED copy in their load_arch_tensors):
 * without output.weight they have no output layer's matrix at all. */
static const char *const untied_output[] = {
    "apertus", "arwkv7", "baichuan", "bailingmoe", "bailingmoe2", "bert", "bitnet", "codeshell", "dbrx", "dots1",
    "eurobert", "gpt-oss", "gptneox", "internlm2", "jais", "jina-bert-v2", "jina-bert-v3", "kimi-k3", "kimi-linear",
    "llada-moe", "maple", "mellum", "mimo2", "minimax-m2", "modern-bert", "muse-glimmer", "nemotron", "neo-bert",
    "nomic-bert", "nomic-bert-moe", "olmo2", "olmoe", "orion", "phi2", "phimoe", "plamo", "qwen", "qwen2moe", "rwkv6",
    "rwkv6qwen2", "rwkv7", "stablelm", "step35", "talkie", "wavtokenizer-dec", "xverse",
};

/* The architectures whose loaders take the output matrix as the token
 * embeddings when the file has none: a TENSOR_DUPLICATED copy of the
 * output kind, so a second copy on the output layer's device. */
static const char *const output_as_input[] = {"codeshell"};

/* The architectures that load rope_freqs in their full-attention layers
 * only (not in the sliding ones). */
static const char *const rope_freqs_full_only[] = {"gemma4"};

/* The architectures whose token_embd_norm is the output norm
 * (LLM_TENSOR_OUTPUT_NORM_LFM2); elsewhere it is layer 0's. */
static const char *const embd_norm_output[] = {"lfm2", "lfm2moe"};

/* The architectures whose graphs apply no rotary embedding to K (learned
 * positions or ALiBi): from a fused projection, K stays a view into its
 * rows, as V does. */
static const char *const unroped_k[] = {"bloom", "gpt2", "jais", "mpt", "refact", "starcoder"};

static bool listed(ggp_str arch, const char *const *names, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (name_is(arch, names[i]))
            return true;
    }
    return false;
}

/* N of prefix N. at the start of name, or false. */
static bool number_after(ggp_str name, const char *prefix, uint32_t *out)
{
    const size_t start = strlen(prefix);
    if (!has_prefix(name, prefix))
        return false;
    uint64_t n = 0;
    size_t i = start;
    for (; i < name.len && name.ptr[i] >= '0' && name.ptr[i] <= '9' && n <= UINT32_MAX; i++)
        n = n * 10 + (uint64_t)(name.ptr[i] - '0');
    if (i == start || i >= name.len || name.ptr[i] != '.' || n > UINT32_MAX)
        return false;
    *out = (uint32_t)n;
    return true;
}

/* Where a tensor goes by its name (LLM_TENSOR_INFOS' layer of its kind,
 * and the layer number its loader gives a repeating kind); *layer is set
 * for PLACE_LAYER. */
static place place_of(ggp_str name, ggp_str arch, uint32_t *layer)
{
    static const char *const input[] = {"token_embd.", "position_embd.", "token_types.", "per_layer_token_embd.",
                                        "hrm."};
    static const char *const each[] = {"rope_freqs.", "rope_factors_long.", "rope_factors_short."};
    // repeating kinds outside blk.N that their loaders give layer 0
    static const char *const first_layer[] = {"token_embd_norm.", "conv1d.", "per_layer_model_proj.",
                                              "per_layer_proj_norm."};
    // (T5's encoder and decoder blocks are layer N's alike)
    if (number_after(name, "blk.", layer) || number_after(name, "enc.blk.", layer) ||
        number_after(name, "dec.blk.", layer) || number_after(name, "posnet.", layer) ||
        number_after(name, "convnext.", layer))
        return PLACE_LAYER;
    for (size_t i = 0; i < sizeof input / sizeof input[0]; i++) {
        if (has_prefix(name, input[i]))
            return PLACE_INPUT;
    }
    for (size_t i = 0; i < sizeof each / sizeof each[0]; i++) {
        if (has_prefix(name, each[i]))
            return PLACE_EACH_LAYER;
    }
    const size_t n_norm = sizeof embd_norm_output / sizeof embd_norm_output[0];
    if (has_prefix(name, "token_embd_norm.") && listed(arch, embd_norm_output, n_norm))
        return PLACE_OUTPUT;
    for (size_t i = 0; i < sizeof first_layer / sizeof first_layer[0]; i++) {
        if (has_prefix(name, first_layer[i])) {
            *layer = 0;
            return PLACE_LAYER;
        }
    }
    return PLACE_OUTPUT;
}

/* The layers that load rope_freqs: each, or the full-attention ones. */
static void find_rope_layers(ggfs_offload *o, ggp_str arch)
{
    const size_t n_full_only = sizeof rope_freqs_full_only / sizeof rope_freqs_full_only[0];
    const bool full_only = listed(arch, rope_freqs_full_only, n_full_only);
    o->rope_first = UINT32_MAX;
    o->rope_last = 0;
    for (uint32_t il = 0; il < o->rules->n_layer; il++) {
        if (full_only && o->rules->layer[il].sliding)
            continue;
        o->rope_first = il < o->rope_first ? il : o->rope_first;
        o->rope_last = il;
    }
}

static ggp_str architecture(const ggp_file *keys)
{
    static const char key[] = "general.architecture";
    const ggp_kv *kv = ggp_kv_find(keys, key, sizeof key - 1);
    return kv && kv->value.type == GGP_V_STRING ? ggp_value_str(keys, &kv->value) : (ggp_str){0};
}

static uint64_t key_count(const ggp_file *keys, const char *key)
{
    const ggp_kv *kv = ggp_kv_find(keys, key, strlen(key));
    return kv && kv->value.type == GGP_V_ARRAY ? kv->value.count : 0;
}

ggfs_offload *ggfs_offload_new(const ggfs_model *m, const ggfs_memory_rules *rules, const ggp_file *keys,
                               ggfs_compute_memo *memo)
{
    const ggp_file **files = malloc(m->n_shards * sizeof *files);
    if (!files)
        return NULL;
    for (uint32_t k = 0; k < m->n_shards; k++)
        files[k] = m->shards[k].file;
    ggfs_offload *o = ggfs_offload_new_files(files, m->n_shards, rules, keys);
    free(files);
    if (o)
        o->memo = memo;
    return o;
}

ggfs_offload *ggfs_offload_new_files(const ggp_file *const *files, uint32_t n_files, const ggfs_memory_rules *rules,
                                     const ggp_file *keys)
{
    uint64_t n_tensors = 0;
    for (uint32_t k = 0; k < n_files; k++)
        n_tensors += ggp_tensor_count(files[k]);
    ggfs_offload *o = calloc(1, sizeof *o);
    if (!o || !(o->tensors = calloc(n_tensors ? n_tensors : 1, sizeof *o->tensors)) ||
        !(o->hulls = calloc(n_files ? n_files : 1, sizeof *o->hulls)) ||
        !(o->qkv_rows = calloc(rules->n_layer ? rules->n_layer : 1, sizeof *o->qkv_rows)) ||
        !(o->projected = calloc(rules->n_layer ? rules->n_layer : 1, sizeof *o->projected)) ||
        !(o->expert_layer = calloc(rules->n_layer ? rules->n_layer : 1, sizeof *o->expert_layer))) {
        ggfs_offload_free(o);
        return NULL;
    }
    o->rules = rules;
    o->lookups = 1;
    o->n_shards = n_files;
    o->n_tensors = n_tensors;
    o->n_vocab = key_count(keys, "tokenizer.ggml.tokens");
    const ggp_str arch = architecture(keys);
    bool has_output = false, has_embd = false;
    uint64_t embd = 0, output = 0, i = 0;
    for (uint32_t shard = 0; shard < n_files; shard++) {
        for (uint64_t j = 0; j < ggp_tensor_count(files[shard]); j++, i++) {
            const ggp_tensor *t = ggp_tensor_at(files[shard], j);
            placed *p = &o->tensors[i];
            p->shard = shard;
            p->start = t->offset;
            p->end = t->offset + t->bytes;
            p->place = (uint8_t)place_of(t->name, arch, &p->layer);
            if (p->place == PLACE_LAYER) {
                if (p->layer >= rules->n_layer) {
                    ggfs_offload_free(o);
                    return NULL;
                }
                p->expert = is_expert(t->name);
                p->host_only = ggfs_weight_host_only(keys, arch, t);
                o->has_experts |= p->expert;
                o->expert_layer[p->layer] |= p->expert;
                const bool fused = contains(t->name, ".attn_qkv.weight");
                const bool rows_fit = t->ne[1] > 0 && t->ne[1] <= UINT32_MAX;
                if (fused && rows_fit)
                    o->qkv_rows[p->layer] = (uint32_t)t->ne[1];
                if ((fused || contains(t->name, ".attn_q.weight") || contains(t->name, ".attn_k.weight") ||
                     contains(t->name, ".attn_v.weight")) &&
                    rows_fit)
                    o->projected[p->layer] += (uint64_t)t->ne[1];
                o->gated |= contains(t->name, ".ffn_gate.weight");
            }
            if (name_is(t->name, "position_embd.weight") || name_is(t->name, "token_types.weight"))
                o->lookups++;
            if (name_is(t->name, "output.weight"))
                output = t->bytes, has_output = true;
            if (name_is(t->name, "token_embd.weight"))
                embd = t->bytes, has_embd = true;
        }
    }
    // Most of llama.cpp's loaders take the token embeddings as the output
    // matrix when the file has none (TENSOR_DUPLICATED): a second copy only
    // where the output layer's device is not the host's.
    const size_t n_untied = sizeof untied_output / sizeof untied_output[0];
    o->tied_output = has_output || listed(arch, untied_output, n_untied) ? 0 : embd;
    const size_t n_as_input = sizeof output_as_input / sizeof output_as_input[0];
    if (!has_embd && listed(arch, output_as_input, n_as_input))
        o->tied_output = output;
    o->unroped_k = listed(arch, unroped_k, sizeof unroped_k / sizeof unroped_k[0]);
    find_rope_layers(o, arch);
    if (!(o->graph = ggfs_llm_model_new(files, n_files, rules, keys, arch))) {
        ggfs_offload_free(o);
        return NULL;
    }
    return o;
}

void ggfs_offload_free(ggfs_offload *o)
{
    if (!o)
        return;
    free(o->tensors);
    free(o->hulls);
    free(o->qkv_rows);
    free(o->projected);
    free(o->expert_layer);
    ggfs_llm_model_free(o->graph);
    free(o);
}

bool ggfs_offload_has_experts(const ggfs_offload *o)
{
    return o->has_experts;
}

static void hull_add(hull *h, const placed *p)
{
    if (h->start == h->end) {
        h->start = p->start, h->end = p->end;
        return;
    }
    if (p->start < h->start)
        h->start = p->start;
    if (p->end > h->end)
        h->end = p->end;
}

/* The model's bytes on each device; *host_largest, the largest layer
 * tensor left on the host. */
static void place_weights(const ggfs_offload *o, uint32_t i_gpu_start, uint32_t cpu_moe, ggfs_offload_row *row,
                          uint64_t *host_largest)
{
    const uint32_t n_layer = o->rules->n_layer;
    const bool output_on_gpu = n_layer >= i_gpu_start;
    // layers [0, i_gpu_start) on the host, [i_gpu_start, n_layer) on the GPU
    // a device holds a copy of rope_freqs when it holds a layer that loads it
    const bool host_has_layer = o->rope_first < i_gpu_start;
    const bool gpu_has_layer = o->rope_first != UINT32_MAX && o->rope_last >= i_gpu_start;
    hull *hulls = o->hulls;
    memset(hulls, 0, o->n_shards * sizeof *hulls);
    uint64_t gpu = 0;
    for (uint64_t i = 0; i < o->n_tensors; i++) {
        const placed *p = &o->tensors[i];
        bool on_gpu = false, on_host = false;
        switch (p->place) {
        case PLACE_INPUT: on_host = true; break;
        case PLACE_LAYER:
            on_gpu = p->layer >= i_gpu_start && !(p->expert && p->layer < cpu_moe) && !p->host_only;
            on_host = !on_gpu;
            break;
        case PLACE_OUTPUT:
            on_gpu = output_on_gpu;
            on_host = !on_gpu;
            break;
        case PLACE_EACH_LAYER:
            on_gpu = gpu_has_layer;
            on_host = host_has_layer;
            break;
        }
        if (on_gpu)
            gpu += aligned(p->end - p->start);
        if (on_host)
            hull_add(&hulls[p->shard], p);
        if (on_host && p->place == PLACE_LAYER && p->end - p->start > *host_largest)
            *host_largest = p->end - p->start;
    }
    if (output_on_gpu)
        gpu += aligned(o->tied_output);
    uint64_t host = 0;
    for (uint32_t s = 0; s < o->n_shards; s++)
        host += hulls[s].end - hulls[s].start;
    row->gpu_model = gpu;
    row->host_model = host;
}

/* The KV cache and recurrent state: each layer's on its device
 * (llama_kv_cache and llama_memory_recurrent with offload_kqv). */
static void place_caches(const ggfs_offload *o, uint32_t ctx, int cache, uint32_t i_gpu_start, ggfs_offload_row *row)
{
    const ggfs_memory_rules *r = o->rules;
    for (uint32_t il = 0; il < r->n_layer; il++) {
        const uint64_t bytes = ggfs_memory_layer_cells(r, il, ctx) * r->layer[il].cell_bytes[cache] + r->layer[il].state;
        if (il >= i_gpu_start)
            row->gpu_kv += bytes;
        else
            row->host_kv += bytes;
    }
}

/* The floats per token live at once in layer il's feed-forward block:
 * gate, up and their product (up alone, its activation taking its place,
 * without a gate), and a few small inputs; in an expert layer, those of
 * each expert a token uses, beside the router's logits. */
static uint64_t ffn_width(const ggfs_offload *o, uint32_t il)
{
    const ggfs_memory_rules *r = o->rules;
    if (!o->expert_layer[il] || r->n_expert == 0 || r->n_expert_used == 0)
        return (o->gated ? 3 : 1) * (uint64_t)r->n_ff + 6;
    const uint64_t n_ff_exp = r->n_ff_exp ? r->n_ff_exp : r->n_ff;
    return (uint64_t)r->n_expert_used * 3 * n_ff_exp + r->n_expert + 6;
}

/* The floats of K per token in a layer: half its K and V cell (a fused
 * projection's K and V are as wide). */
static uint64_t k_floats(const ggfs_offload *o, uint32_t il)
{
    return o->rules->layer[il].cell_bytes[GGFS_CACHE_F16] / 4;
}

/* The floats per token of the widest layer's Q, K and V projections;
 * from a fused projection, its rows and the rotated Q and K made from
 * views into them. */
static uint64_t projected_width(const ggfs_offload *o)
{
    uint64_t widest = 0;
    for (uint32_t il = 0; il < o->rules->n_layer; il++) {
        uint64_t width = o->projected[il];
        if (o->qkv_rows[il] && !o->unroped_k && k_floats(o, il) < o->qkv_rows[il])
            width += o->qkv_rows[il] - k_floats(o, il);
        widest = width > widest ? width : widest;
    }
    return widest;
}

/* The bytes per token of the f32 K and V rows of the widest layer left on
 * the host: llama.cpp computes them on the GPU and copies them to the host
 * to store them in that layer's cache there. From a fused projection, a
 * copy of a view into its rows spans them whole: V's, and K's unless a
 * rotary embedding made K a tensor of its own. */
static uint64_t host_kv_rows(const ggfs_offload *o, uint32_t i_gpu_start)
{
    const ggfs_memory_rules *r = o->rules;
    uint64_t widest = 0;
    for (uint32_t il = 0; il < i_gpu_start && il < r->n_layer; il++) {
        uint64_t rows = 2 * r->layer[il].cell_bytes[GGFS_CACHE_F16]; // f32 K and V
        if (o->qkv_rows[il] && rows) {
            const uint64_t fused = 4 * (uint64_t)o->qkv_rows[il];
            rows = (o->unroped_k ? fused : 4 * k_floats(o, il)) + fused;
        }
        if (rows > widest)
            widest = rows;
    }
    return widest;
}

/* The bytes of the largest K and V cache of a layer left on the host: the
 * GPU runs that layer's attention on a copy of them. */
static uint64_t host_cache(const ggfs_offload *o, uint32_t ctx, int cache, uint32_t i_gpu_start)
{
    const ggfs_memory_rules *r = o->rules;
    uint64_t largest = 0;
    for (uint32_t il = 0; il < i_gpu_start && il < r->n_layer; il++) {
        const uint64_t bytes = ggfs_memory_layer_cells(r, il, ctx) * r->layer[il].cell_bytes[cache];
        largest = bytes > largest ? bytes : largest;
    }
    return largest;
}

/* The compute buffers, modelled on the peak of what ggml's graph
 * allocator keeps live for a ubatch of n_ubatch tokens (sched_reserve's
 * worst case: n_ubatch tokens, as many outputs). On the GPU, which runs
 * the large products even of weights left on the host (op offload): the
 * larger of the logits and the widest layer's peak, its feed-forward
 * activations or its Q, K and V, each beside two embedding-wide
 * activations and the f16 attention masks (over the cells, and over the
 * sliding layers' cache where there are any; the last layer's
 * feed-forward block comes after their last use); and beside them what is
 * copied in for the layers left on the host, the largest weight for its
 * product and the largest layer's K and V cache for its attention. On the
 * host: the graph's inputs (the embeddings input, which the graph always
 * has, the masks and the token, position, cache-row and output indices)
 * and the larger of the embeddings looked up (tokens', and positions' and
 * token types' where the model has them) and, with layers on the host,
 * the K and V rows copied there for their caches. A model without a cache
 * (an encoder) masks the ubatch against itself. */
static void place_compute(const ggfs_offload *o, uint32_t ctx, int cache, uint32_t i_gpu_start, uint64_t host_largest,
                          ggfs_offload_row *row)
{
    const uint64_t ubatch = ctx < 512 ? ctx : 512;
    const uint64_t cells = (ctx + UINT64_C(255)) / 256 * 256;
    uint64_t mask = o->rules->full.layers + o->rules->swa.layers ? cells * ubatch * 2 : 0;
    // a model without any cache (an encoder) masks the ubatch against itself
    if (mask == 0 && o->rules->recurrent == 0)
        mask = ubatch * ubatch * 2;
    // sliding layers have a mask of their own, over their cache's cells
    ggfs_memory m;
    ggfs_memory_at(o->rules, ctx, &m);
    if (m.swa_layers)
        mask += m.swa_cells * ubatch * 2;
    const uint64_t logits = ubatch * 4 * o->n_vocab;
    const uint64_t embd = ubatch * 4 * (uint64_t)o->rules->n_embd;
    // a layer's peak: its feed-forward activations beside the residual
    // (and the hole the first layer's input leaves) and a weight copied in,
    // or its Q, K and V beside their normed input and the residual and a
    // cache copied in
    // (the masks go after the last layer's attention, before its
    // feed-forward block)
    uint64_t ffn = 0;
    for (uint32_t il = 0; il < o->rules->n_layer; il++) {
        const uint64_t live = ubatch * 4 * ffn_width(o, il) + (il + 1 < o->rules->n_layer ? mask : 0);
        ffn = live > ffn ? live : ffn;
    }
    ffn += 2 * embd + host_largest;
    const uint64_t attention =
        ubatch * 4 * projected_width(o) + 2 * embd + host_cache(o, ctx, cache, i_gpu_start) + mask;
    const uint64_t layer = ffn > attention ? ffn : attention;
    row->gpu_compute = logits + 2 * embd + host_largest > layer ? logits + 2 * embd + host_largest : layer;
    // tokens, positions and output rows (i32), each cache's K and V rows (i64)
    const uint64_t caches = (m.kv_layers > 0) + (m.swa_layers > 0);
    const uint64_t indices = ubatch * (3 * 4 + caches * 2 * 8);
    const uint64_t kv_rows = ubatch * host_kv_rows(o, i_gpu_start);
    // (the positions' and token types' lookups are live with the tokens')
    const uint64_t lookups = o->lookups * embd;
    row->host_compute = embd + mask + indices + (kv_rows > lookups ? kv_rows : lookups);
}

/* The compute buffers from the architecture's graph, kept in the memo. */
static bool graph_compute(const ggfs_offload *o, uint32_t ctx, int cache, uint32_t i_gpu_start, ggfs_offload_row *row)
{
    if (ggfs_compute_memo_get(o->memo, ctx, cache, i_gpu_start, &row->gpu_compute, &row->host_compute))
        return true;
    if (!ggfs_llm_compute(o->graph, ctx, cache, i_gpu_start, &row->gpu_compute, &row->host_compute))
        return false;
    ggfs_compute_memo_put(o->memo, ctx, cache, i_gpu_start, row->gpu_compute, row->host_compute);
    return true;
}

void ggfs_offload_at(const ggfs_offload *o, uint32_t ctx, int cache, uint32_t gpu_layers, uint32_t cpu_moe,
                     ggfs_offload_row *row)
{
    memset(row, 0, sizeof *row);
    row->cache = cache;
    row->gpu_layers = gpu_layers;
    row->cpu_moe = cpu_moe;
    // load_tensors: i_gpu_start = max(n_layer + 1 - n_gpu_layers, 0), the
    // output layer being number n_layer
    const uint32_t n_layer = o->rules->n_layer;
    const uint32_t i_gpu_start = gpu_layers > n_layer ? 0 : n_layer + 1 - gpu_layers;
    uint64_t host_largest = 0;
    place_weights(o, i_gpu_start, cpu_moe, row, &host_largest);
    place_caches(o, ctx, cache, i_gpu_start, row);
    // the graph itself where it is written, else the model of its peak
    if (cpu_moe > 0 || !graph_compute(o, ctx, cache, i_gpu_start, row))
        place_compute(o, ctx, cache, i_gpu_start, host_largest, row);
    // output_reserve: the logits of one output per sequence, f32, in the
    // output device's host buffer type (host memory either way)
    row->host_output = o->n_vocab * 4;
}
