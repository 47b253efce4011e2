// make_arch_models: a tiny random model of every architecture the pinned
// llama.cpp knows, made by llama.cpp itself. For each architecture we give
// llama.cpp a metadata context (a superset of the keys its loaders read:
// each loader takes what it needs and ignores the rest) and a tiny
// vocabulary; dry loads tell which tensors the architecture's loader
// requires (declare_tensors), llama.cpp's public llama_model_init_from_user
// creates them with the shapes the loader gives, we fill each with
// deterministic random values, and llama_model_save_to_file writes the
// model as llama.cpp itself describes it. So the tensors, their shapes and
// the keys are llama.cpp's, not a copy of its rules that could drift.
// (Five architectures llama.cpp's saver refuses are written by us: its
// tensors and our metadata, the keys it loaded them from.)
//
// Sizes are small (loading takes milliseconds) with heads of 64 or 128
// (multiples of 32, so q8_0 and q4_0 caches are accepted), a trained
// context of 8192, and a sliding window of 700 where the architecture has
// one (the window plus a batch of 512 pads to 1280 cells, which shows).
//
//   usage: make_arch_models OUTDIR [ARCH...]
//          (no ARCH: every architecture in the table; one line per
//          architecture on stdout, `ARCH ok` or `ARCH failed: why`;
//          llama.cpp's warnings and errors on stderr; exit 1 if an ARCH
//          is unknown)
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <libgen.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ggml-backend.h"
#include "ggml.h"
#include "gguf.h"
#include "llama.h"

enum {
    CONTEXT = 8192,     // every model's trained context
    WINDOW = 700,       // the sliding window, where there is one
    SECONDS = 120,      // an architecture that takes longer is a failure
    WHY_MAX = 512,      // bytes of llama.cpp's last error kept for the report
};

// What sets an architecture apart from the default model, as data: the
// same differences llama.cpp's own test of every architecture
// (tests/test-llama-archs.cpp) makes, for the same reasons, given in the
// comments of the table below.
enum {
    MOE = 1 << 0,         // its loader requires experts
    MLA = 1 << 1,         // multi-head latent attention: K/V lengths of MLA
    HYBRID = 1 << 2,      // per-layer head counts, layer 1 recurrent (0 heads)
    SWA_LIST = 1 << 3,    // the sliding-window pattern is one flag per layer
    FF_LIST = 1 << 4,     // per-layer feed-forward lengths, the first two 0
    OWN_WRITER = 1 << 5,  // llama.cpp's saver refuses it (asserts): ours
    SSM_256 = 1 << 6,     // linear-attention inner size of 256, not 2 x embd
    DECLARE = 1 << 7,     // tensors of its own declared up front (declare_own)
};

struct arch {
    const char *name;
    unsigned flags;
    // 0 for the default of each (see model_dims)
    uint32_t layers, embd, heads, heads_kv, ff, vocab;
};

// Every architecture of llama.cpp's LLM_ARCH_NAMES (src/llama-arch.cpp), in
// its order. Heads are embd / heads wide: 256 / 2 = 128 unless a row says.
static const struct arch ARCHS[] = {
    {.name = "clip", .flags = 0},  // a vision encoder: no text model, expected to fail
    {.name = "llama", .flags = 0},
    {.name = "llama4", .flags = MOE, .layers = 4},  // no-RoPE layers every 4th: needs 4
    {.name = "deci", .flags = 0},
    {.name = "falcon", .flags = 0},
    {.name = "grok", .flags = MOE},
    {.name = "gpt2", .flags = 0},
    {.name = "gptj", .flags = 0},  // no implementation in llama.cpp, expected to fail
    {.name = "gptneox", .flags = 0},
    {.name = "mpt", .flags = 0},
    {.name = "baichuan", .flags = 0},
    {.name = "starcoder", .flags = 0},
    {.name = "refact", .flags = 0},
    {.name = "bert", .flags = 0},
    {.name = "modern-bert", .flags = 0},
    {.name = "nomic-bert", .flags = 0},
    {.name = "nomic-bert-moe", .flags = 0},
    {.name = "neo-bert", .flags = 0},
    {.name = "jina-bert-v2", .flags = DECLARE},
    {.name = "jina-bert-v3", .flags = 0},
    {.name = "eurobert", .flags = 0},
    {.name = "bloom", .flags = 0},
    {.name = "stablelm", .flags = 0},
    {.name = "qwen", .flags = 0},
    {.name = "qwen2", .flags = 0},
    {.name = "qwen2moe", .flags = MOE},
    {.name = "qwen2vl", .flags = 0},
    {.name = "qwen3", .flags = 0, .heads = 4, .heads_kv = 1},  // heads of 64, one KV head
    {.name = "qwen3moe", .flags = MOE},
    {.name = "qwen3next", .flags = MOE | SSM_256 | DECLARE},
    {.name = "qwen3vl", .flags = 0},
    {.name = "qwen3vlmoe", .flags = MOE},
    {.name = "qwen35", .flags = SSM_256 | DECLARE},
    {.name = "qwen35moe", .flags = MOE | SSM_256 | DECLARE},
    {.name = "qwen4exp", .flags = MOE | SSM_256},
    {.name = "phi2", .flags = 0},
    {.name = "phi3", .flags = DECLARE},
    {.name = "phimoe", .flags = MOE},
    {.name = "plamo", .flags = 0},
    {.name = "plamo2", .flags = HYBRID},
    {.name = "plamo3", .flags = 0},
    {.name = "codeshell", .flags = 0},
    {.name = "orion", .flags = 0},
    {.name = "internlm2", .flags = 0},
    {.name = "minicpm", .flags = 0},
    {.name = "minicpm3", .flags = 0},
    {.name = "gemma", .flags = 0},
    {.name = "gemma2", .flags = 0},
    {.name = "gemma3", .flags = 0},
    // 20 layers keep their own KV (hard-coded), the rest share it
    {.name = "gemma3n", .flags = OWN_WRITER, .layers = 22, .embd = 64, .heads = 1, .ff = 96},
    // every 5th layer is full attention
    {.name = "gemma4", .flags = 0, .layers = 5, .embd = 128, .heads = 2, .ff = 192},
    {.name = "gemma4-assistant", .flags = 0, .layers = 5, .embd = 128, .heads = 2, .ff = 192},
    {.name = "gemma-embedding", .flags = 0},
    {.name = "starcoder2", .flags = 0},
    {.name = "mamba", .flags = 0},
    {.name = "mamba2", .flags = 0},
    {.name = "maple", .flags = MOE | SWA_LIST},
    {.name = "jamba", .flags = HYBRID},
    {.name = "falcon-h1", .flags = DECLARE},
    {.name = "xverse", .flags = 0},
    {.name = "command-r", .flags = 0},
    {.name = "cohere2", .flags = 0},
    {.name = "cohere2moe", .flags = MOE | SWA_LIST},
    {.name = "dbrx", .flags = MOE},
    {.name = "olmo", .flags = 0},
    {.name = "olmo2", .flags = 0},
    {.name = "olmoe", .flags = MOE},
    {.name = "muse-glimmer", .flags = SWA_LIST, .heads = 4, .heads_kv = 2},
    {.name = "openelm", .flags = 0},
    {.name = "arctic", .flags = MOE},
    {.name = "deepseek", .flags = MOE},
    {.name = "deepseek2", .flags = MOE | MLA, .embd = 128, .heads = 1, .ff = 192},
    {.name = "deepseek2-ocr", .flags = MOE},
    {.name = "deepseek32", .flags = MOE | MLA, .embd = 128, .heads = 1, .ff = 192},
    // heads of 64, one KV head
    {.name = "deepseek4", .flags = MOE, .layers = 4, .embd = 512, .heads = 8, .heads_kv = 1, .ff = 1024},
    {.name = "chatglm", .flags = 0},
    {.name = "glm4", .flags = 0},
    {.name = "glm4moe", .flags = MOE},
    {.name = "glm-dsa", .flags = MOE | MLA, .embd = 128, .heads = 1, .ff = 192},
    {.name = "bitnet", .flags = OWN_WRITER},
    {.name = "t5", .flags = OWN_WRITER | DECLARE},
    {.name = "t5encoder", .flags = DECLARE},
    {.name = "jais", .flags = 0},
    {.name = "jais2", .flags = 0},
    {.name = "nemotron", .flags = 0},
    {.name = "nemotron_h", .flags = HYBRID | FF_LIST | DECLARE, .layers = 3},
    {.name = "nemotron_h_moe", .flags = MOE | HYBRID | FF_LIST | DECLARE, .layers = 3},
    {.name = "exaone", .flags = 0},
    {.name = "exaone4", .flags = 0},
    {.name = "exaone-moe", .flags = MOE},
    {.name = "rwkv6", .flags = DECLARE},
    {.name = "rwkv6qwen2", .flags = 0},
    {.name = "rwkv7", .flags = 0},
    {.name = "arwkv7", .flags = DECLARE},
    {.name = "granite", .flags = 0},
    {.name = "granitemoe", .flags = 0},
    {.name = "granitehybrid", .flags = HYBRID | DECLARE},
    {.name = "graniteswitch", .flags = 0},  // one adapter
    {.name = "granite_swa", .flags = SWA_LIST},
    {.name = "chameleon", .flags = 0, .vocab = 10240},  // image tokens are hard-coded ids
    {.name = "wavtokenizer-dec", .flags = DECLARE},
    {.name = "plm", .flags = 0},
    {.name = "bailingmoe", .flags = MOE},
    {.name = "bailingmoe2", .flags = MOE},
    {.name = "bailingmoe3", .flags = MOE | MLA | HYBRID, .embd = 128, .heads = 1, .ff = 192},
    {.name = "dots1", .flags = MOE},
    {.name = "dots3note", .flags = MOE | MLA | SWA_LIST, .embd = 128, .heads = 1, .ff = 192},
    {.name = "arcee", .flags = 0},
    {.name = "afmoe", .flags = MOE, .heads = 4, .heads_kv = 2},
    {.name = "laguna", .flags = MOE},
    {.name = "ernie4_5", .flags = MOE},
    {.name = "ernie4_5-moe", .flags = MOE},
    {.name = "hunyuan-moe", .flags = MOE},
    {.name = "hunyuan-dense", .flags = 0},
    {.name = "hunyuan_vl", .flags = 0},
    {.name = "hy_v3", .flags = MOE},
    {.name = "hy_v4", .flags = MOE | MLA, .embd = 128, .heads = 1, .ff = 192},
    {.name = "smollm3", .flags = 0},
    {.name = "gpt-oss", .flags = MOE},
    {.name = "lfm2", .flags = HYBRID},
    {.name = "lfm2moe", .flags = MOE | HYBRID},
    {.name = "dream", .flags = 0},
    {.name = "smallthinker", .flags = MOE},
    {.name = "llada", .flags = 0},
    {.name = "llada-moe", .flags = MOE},
    {.name = "seed_oss", .flags = 0},
    {.name = "grovemoe", .flags = MOE},
    {.name = "apertus", .flags = OWN_WRITER},
    {.name = "minimax-01", .flags = MOE},
    // one low and one high block, aliased into 8 cache slots
    {.name = "hrm_text", .flags = 0, .layers = 8},
    {.name = "minimax-m2", .flags = MOE},
    {.name = "minimax-m3", .flags = MOE},
    {.name = "cogvlm", .flags = 0},
    {.name = "rnd1", .flags = MOE},
    {.name = "pangu-embedded", .flags = 0},
    {.name = "mistral3", .flags = 0},
    {.name = "eagle3", .flags = 0},  // a draft head of another model: expected to fail alone
    {.name = "dflash", .flags = SWA_LIST},  // likewise
    {.name = "mistral4", .flags = MOE | MLA, .embd = 128, .heads = 1, .ff = 192},
    {.name = "paddleocr", .flags = MOE},
    {.name = "mimo2", .flags = MOE | SWA_LIST},
    {.name = "step35", .flags = MOE | SWA_LIST | OWN_WRITER},
    {.name = "spark2_5", .flags = SWA_LIST},
    {.name = "llama-embed", .flags = 0},
    {.name = "maincoder", .flags = 0},
    {.name = "kimi-linear", .flags = MOE | MLA | HYBRID, .embd = 128, .heads = 1, .ff = 192},
    {.name = "kimi-k3", .flags = MOE | MLA | HYBRID, .embd = 128, .heads = 1, .ff = 192},
    {.name = "talkie", .flags = 0},
    {.name = "mellum", .flags = MOE},
    {.name = "nanbeige", .flags = 0},
    {.name = "qwen3tts", .flags = 0, .vocab = 3072},  // at least its codec head (3072)
    {.name = "pockettts", .flags = DECLARE},
};

enum { N_ARCHS = sizeof ARCHS / sizeof ARCHS[0] };

// The model's sizes: the row's, or the defaults (heads of 128).
struct dims {
    uint32_t layers, embd, heads, heads_kv, head, ff, vocab;
};

static struct dims model_dims(const struct arch *a)
{
    struct dims d = {
        .layers = a->layers ? a->layers : 2,
        .embd = a->embd ? a->embd : 256,
        .heads = a->heads ? a->heads : 2,
        .ff = a->ff ? a->ff : 384,
        .vocab = a->vocab ? a->vocab : 128,
    };
    d.heads_kv = a->heads_kv ? a->heads_kv : d.heads;
    d.head = d.embd / d.heads;
    return d;
}

// --- metadata: KEY is the name after the architecture's prefix ---

struct meta {
    struct gguf_context *g;
    const char *arch;
};

static const char *key(const struct meta *m, const char *name)
{
    static char buf[256];
    snprintf(buf, sizeof buf, "%s.%s", m->arch, name);
    return buf;
}

static void u32(const struct meta *m, const char *name, uint32_t v)
{
    gguf_set_val_u32(m->g, key(m, name), v);
}

static void f32(const struct meta *m, const char *name, float v)
{
    gguf_set_val_f32(m->g, key(m, name), v);
}

static void flag(const struct meta *m, const char *name, bool v)
{
    gguf_set_val_bool(m->g, key(m, name), v);
}

static void u32s(const struct meta *m, const char *name, const uint32_t *v, size_t n)
{
    gguf_set_arr_data(m->g, key(m, name), GGUF_TYPE_UINT32, v, n);
}

static void u64s(const struct meta *m, const char *name, const uint64_t *v, size_t n)
{
    gguf_set_arr_data(m->g, key(m, name), GGUF_TYPE_UINT64, v, n);
}

static void f32s(const struct meta *m, const char *name, const float *v, size_t n)
{
    gguf_set_arr_data(m->g, key(m, name), GGUF_TYPE_FLOAT32, v, n);
}

enum { MAX_LAYERS = 32 };

// A per-layer array of VALUE, with EXCEPT at layer AT (or none if AT < 0).
static void per_layer(const struct meta *m, const char *name, uint32_t layers, uint32_t value,
                      int at, uint32_t except)
{
    uint32_t v[MAX_LAYERS];
    for (uint32_t il = 0; il < layers; il++)
        v[il] = (int)il == at ? except : value;
    u32s(m, name, v, layers);
}

// The sizes every loader reads.
static void add_sizes(const struct meta *m, const struct arch *a, const struct dims *d)
{
    gguf_set_val_str(m->g, "general.architecture", a->name);
    u32(m, "vocab_size", d->vocab);
    u32(m, "context_length", CONTEXT);
    u32(m, "embedding_length", d->embd);
    u32(m, "features_length", d->embd);
    u32(m, "block_count", d->layers);
    u32(m, "leading_dense_block_count", 1);
    if (a->flags & FF_LIST) {
        // its first layers are recurrent and attention-only: no FFN
        uint32_t v[MAX_LAYERS];
        for (uint32_t il = 0; il < d->layers; il++)
            v[il] = il <= 1 ? 0 : d->ff;
        u32s(m, "feed_forward_length", v, d->layers);
    } else {
        u32(m, "feed_forward_length", d->ff);
    }
    if (a->flags & HYBRID) {
        // layer 1 has no attention heads: the loaders take it as recurrent
        per_layer(m, "attention.head_count", d->layers, d->heads, 1, 0);
        per_layer(m, "attention.head_count_kv", d->layers, d->heads_kv, 1, 0);
    } else {
        u32(m, "attention.head_count", d->heads);
        u32(m, "attention.head_count_kv", d->heads_kv);
    }
}

// Multi-head latent attention: the geometry of DeepSeek-V2's caches
// (576 = 512 latent + 64 RoPE per cached row).
static void add_mla(const struct meta *m, const struct arch *a, const struct dims *d)
{
    u32(m, "attention.key_length", 576);
    u32(m, "attention.value_length", 512);
    u32(m, "rope.dimension_count", 64);
    u32(m, "attention.key_length_mla", 192);
    u32(m, "attention.value_length_mla", 128);
    if (strcmp(a->name, "dots3note") == 0) {
        // its sliding-window layers: the same MLA geometry
        u32(m, "attention.kv_lora_rank_swa", 512);
        u32(m, "attention.key_length_swa", 576);
        u32(m, "attention.value_length_swa", 512);
        u32(m, "attention.key_length_mla_swa", 192);
        u32(m, "attention.value_length_mla_swa", 128);
        f32(m, "rope.freq_base_swa", 10000.0f);
        // an indexer on the full-attention (even) layers
        uint32_t v[MAX_LAYERS];
        for (uint32_t il = 0; il < d->layers; il++)
            v[il] = il % 2 ? 0 : 1;
        u32s(m, "attention.indexer.types", v, d->layers);
    }
}

// The sliding window and which layers use it (a loader without one
// ignores both).
static void add_window(const struct meta *m, const struct arch *a, const struct dims *d)
{
    u32(m, "attention.sliding_window", WINDOW);
    if (strncmp(a->name, "gemma4", 6) == 0) {
        u32(m, "embedding_length_per_layer_input", d->embd / 2);
        u32(m, "attention.shared_kv_layers", 0);
        u32(m, "attention.key_length_swa", d->head);
        u32(m, "attention.value_length_swa", d->head);
        f32(m, "rope.freq_base_swa", 10000.0f);
        // one flag per layer (1: sliding window), every 5th layer full
        uint32_t v[MAX_LAYERS];
        for (uint32_t il = 0; il < d->layers; il++)
            v[il] = il % 5 != 4;
        u32s(m, "attention.sliding_window_pattern", v, d->layers);
    } else if (a->flags & SWA_LIST) {
        uint32_t v[MAX_LAYERS];
        for (uint32_t il = 0; il < d->layers; il++)
            v[il] = il % 2;
        u32s(m, "attention.sliding_window_pattern", v, d->layers);
    } else {
        u32(m, "attention.sliding_window_pattern", 2);  // every 2nd full
    }
}

// Experts: two, both used, one shared, sigmoid gating (DeepSeek-V4's
// sqrt-softplus).
static void add_experts(const struct meta *m, const struct arch *a, const struct dims *d)
{
    u32(m, "expert_feed_forward_length", d->ff);
    // distinct from the expert length, so that a key read for the other
    // shows as a wrong shape
    u32(m, "expert_shared_feed_forward_length", d->ff / 2);
    u32(m, "expert_latent_length", d->ff);
    u32(m, "interleave_moe_layer_step", 2);
    u32(m, "expert_count", 2);
    u32(m, "expert_used_count", 2);
    u32(m, "expert_shared_count", 1);
    u32(m, "expert_gating_func", strcmp(a->name, "deepseek4") == 0 ? 4 : 2);
    f32(m, "expert_group_scale", 1.0f);
    u32(m, "experts_per_group", 1);
}

// Sparse-attention indexers (DeepSeek-V3.2 and kin): a top-k larger than
// any context, so every key is selected.
static void add_indexer(const struct meta *m, const struct arch *a, const struct dims *d)
{
    // MiniMax-M3 keeps one indexer head per KV head
    u32(m, "attention.indexer.head_count", strcmp(a->name, "minimax-m3") == 0 ? d->heads : 64);
    // Qwen4-exp ropes indexer keys with the main rotary width
    u32(m, "attention.indexer.key_length", strcmp(a->name, "qwen4exp") == 0 ? d->head : 128);
    u32(m, "attention.indexer.top_k", 131072);
    u32(m, "attention.indexer.block_size", 4);
    u32(m, "attention.indexer.local_blocks", 1);
    if (strcmp(a->name, "minimax-m3") == 0)
        u32(m, "rope.dimension_count", 64);  // at most the indexer's key length
}

// Qwen4-exp: hyper-connections, compressed-sparse layers and per-layer
// n-gram embeddings whose history lives in the recurrent layer 0.
static void add_qwen4exp(const struct meta *m, const struct dims *d)
{
    enum { NGRAM = 3, PER_NGRAM = 2, HEADS = (NGRAM - 1) * PER_NGRAM };
    uint32_t ratios[MAX_LAYERS], ple_layers[] = {0};
    uint64_t multipliers[] = {1, 3, 5}, offsets[HEADS], sizes[HEADS];
    for (uint32_t il = 0; il < d->layers; il++)
        ratios[il] = 4;
    for (uint32_t h = 0; h < HEADS; h++) {
        offsets[h] = (uint64_t)h * d->vocab;
        sizes[h] = d->vocab;
    }
    u32(m, "hyper_connection.count", 4);
    u32(m, "hyper_connection.low_rank", 8);
    u32s(m, "attention.compress_ratios", ratios, d->layers);
    u32s(m, "ple.layers", ple_layers, 1);
    u32(m, "ple.ngram_size", NGRAM);
    u32(m, "ple.heads_per_ngram", PER_NGRAM);
    u32(m, "ple.conv_kernel", 4);
    u32(m, "ple.eos_token_id", 0);
    u32(m, "embedding_length_per_layer_input", d->embd / HEADS);
    u64s(m, "ple.layer_multipliers", multipliers, NGRAM);
    u64s(m, "ple.head_offsets", offsets, HEADS);
    u64s(m, "ple.head_vocab_sizes", sizes, HEADS);
}

// DeepSeek-V4: grouped output projection, compressed layers (none, none,
// 1:4, 1:128), hyper-connections.
static void add_deepseek4(const struct meta *m, const struct dims *d)
{
    const uint32_t ratios[] = {0, 0, 4, 128};
    u32(m, "attention.key_length", d->head);
    u32(m, "attention.value_length", d->head);
    u32(m, "rope.dimension_count", d->head / 2);
    u32(m, "attention.output_group_count", 8);
    u32(m, "attention.output_lora_rank", 32);
    u32s(m, "attention.compress_ratios", ratios, 4);
    f32(m, "attention.compress_rope_freq_base", 160000.0f);
    u32(m, "hyper_connection.count", 4);
    u32(m, "hyper_connection.sinkhorn_iterations", 2);
    f32(m, "hyper_connection.epsilon", 1.0e-6f);
    u32(m, "hash_layer_count", 0);
    f32(m, "swiglu_clamp_exp", 10.0f);
    f32(m, "expert_weights_scale", 1.0f);
    flag(m, "expert_weights_norm", true);
}

// Hy-V4: hyper-connections; layer 0 owns an indexer the odd layers share.
static void add_hy_v4(const struct meta *m, const struct dims *d)
{
    uint32_t v[MAX_LAYERS];
    for (uint32_t il = 0; il < d->layers; il++)
        v[il] = il % 2 ? 0 : 1;
    u32(m, "hyper_connection.count", 4);
    f32(m, "hyper_connection.epsilon", 1.0e-6f);
    f32(m, "hyper_connection.magnitude", 2.0f);
    f32(m, "swiglu_clamp_exp", 10.0f);
    f32(m, "expert_weights_scale", 1.0f);
    flag(m, "expert_weights_norm", true);
    u32s(m, "attention.indexer.types", v, d->layers);
}

// Keys only one architecture reads.
static void add_own(const struct meta *m, const struct arch *a, const struct dims *d)
{
    if (strcmp(a->name, "qwen4exp") == 0) {
        add_qwen4exp(m, d);
    } else if (strcmp(a->name, "deepseek4") == 0) {
        add_deepseek4(m, d);
    } else if (strcmp(a->name, "hy_v4") == 0) {
        add_hy_v4(m, d);
    } else if (strcmp(a->name, "hrm_text") == 0) {
        u32(m, "hrm.layers_per_stack", 1);
        u32(m, "hrm.h_cycles", 2);
        u32(m, "hrm.l_cycles", 3);
    } else if (strcmp(a->name, "gemma4-assistant") == 0) {
        u32(m, "embedding_length_out", 2 * d->embd);  // its target's width
    } else if (strcmp(a->name, "eagle3") == 0 || strcmp(a->name, "dflash") == 0) {
        // draft heads read hidden states of three layers of their target
        const uint32_t target[] = {0, 1, 1};
        u32s(m, "target_layers", target, 3);
        u32(m, "target_hidden_size", d->embd);
    } else if (strcmp(a->name, "graniteswitch") == 0) {
        // one adapter, switched on by token 1 (which reads as token 2)
        const int32_t activate[] = {1}, substitute[] = {2};
        u32(m, "adapters.count", 1);
        u32(m, "adapters.lora_rank", 8);
        gguf_set_arr_data(m->g, key(m, "adapters.token_ids_activate"), GGUF_TYPE_INT32, activate, 1);
        gguf_set_arr_data(m->g, key(m, "adapters.token_ids_substitute"), GGUF_TYPE_INT32, substitute, 1);
    } else if (strcmp(a->name, "rwkv6qwen2") == 0 || strcmp(a->name, "arwkv7") == 0) {
        // one token shift (the attention's): their graph asserts the state is one embedding wide
        u32(m, "token_shift_count", 1);
    } else if (strcmp(a->name, "maple") == 0) {
        f32(m, "swiglu_clamp_exp", 7.0f);
    } else if (strcmp(a->name, "bailingmoe3") == 0) {
        const float exp[] = {0.0f, 4.0f}, shexp[] = {0.0f, 5.0f};
        f32s(m, "swiglu_clamp_exp", exp, 2);
        f32s(m, "swiglu_clamp_shexp", shexp, 2);
    }
}

// Everything else some loader reads, with a value that works for all:
// norms, recurrent state sizes (Mamba, RWKV, gated delta nets, short
// convolutions), RoPE sections, audio decoders' blocks.
static void add_rest(const struct meta *m, const struct arch *a, const struct dims *d)
{
    const uint32_t q = d->head / 4, sections[] = {q, q, q, q};
    flag(m, "use_parallel_residual", false);
    f32(m, "logit_scale", 1.0f);
    u32(m, "time_mix_extra_dim", 64);
    u32(m, "time_decay_extra_dim", 128);
    u32(m, "full_attention_interval", 2);
    f32(m, "attention.max_alibi_bias", 8.0f);
    f32(m, "attention.clamp_kqv", 1.0f);
    f32(m, "attention.layer_norm_epsilon", 1e-5f);
    f32(m, "attention.layer_norm_rms_epsilon", 1e-5f);
    f32(m, "attention.group_norm_epsilon", 1e-5f);
    u32(m, "attention.group_norm_groups", 8);
    u32(m, "attention.q_lora_rank", strcmp(a->name, "deepseek4") == 0 ? 64 : 512);
    u32(m, "attention.kv_lora_rank", 512);
    u32(m, "attention.relative_buckets_count", 8);
    u32(m, "attention.decay_lora_rank", 64);  // RWKV-7's low-rank projections
    u32(m, "attention.iclr_lora_rank", 64);
    u32(m, "attention.value_residual_mix_lora_rank", 32);
    u32(m, "attention.gate_lora_rank", 128);
    u32s(m, "rope.dimension_sections", sections, 4);
    u32(m, "posnet.embedding_length", d->embd);
    u32(m, "posnet.block_count", d->layers);
    u32(m, "convnext.embedding_length", d->embd);
    u32(m, "convnext.block_count", d->layers);
    gguf_set_val_f32(m->g, "xielu.alpha_n", 1.0f);
    gguf_set_val_f32(m->g, "xielu.alpha_p", 1.0f);
    gguf_set_val_f32(m->g, "xielu.beta", 1.0f);
    gguf_set_val_f32(m->g, "xielu.eps", 1.0e-7f);
    u32(m, "ssm.inner_size", a->flags & SSM_256 ? 256 : 2 * d->embd);
    u32(m, "ssm.conv_kernel", 4);
    u32(m, "ssm.state_size", 128);
    u32(m, "ssm.time_step_rank", d->heads);
    u32(m, "ssm.group_count", strcmp(a->name, "plamo2") == 0 ? 0 : 2);
    u32(m, "kda.head_dim", 128);
    flag(m, "kda.safe_gate", true);
    f32(m, "kda.gate_lower_bound", -5.0f);
    u32(m, "wkv.head_size", d->head);
    u32(m, "shortconv.l_cache", 3);
    f32(m, "residual_scale", 3.5565588200778455f);
    u32(m, "attn_res.block_size", 12);
    f32(m, "activation.situ_beta", 4.0f);
    f32(m, "activation.situ_linear_beta", 25.0f);
}

// A vocabulary of VOCAB tokens `tok_I` with llama.cpp's "test" tokenizer
// (no merges, no special tokens): enough to load and to make a context.
static void add_vocab(struct gguf_context *g, uint32_t vocab)
{
    char (*text)[16] = malloc(vocab * sizeof *text);
    const char **tokens = malloc(vocab * sizeof *tokens);
    float *scores = calloc(vocab, sizeof *scores);
    if (!text || !tokens || !scores) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    for (uint32_t i = 0; i < vocab; i++) {
        snprintf(text[i], sizeof text[i], "tok_%u", i);
        tokens[i] = text[i];
    }
    gguf_set_val_str(g, "tokenizer.ggml.model", "test");
    gguf_set_val_u32(g, "tokenizer.ggml.token_type_count", 2);  // BERTs' segments
    gguf_set_arr_str(g, "tokenizer.ggml.tokens", tokens, vocab);
    gguf_set_arr_data(g, "tokenizer.ggml.scores", GGUF_TYPE_FLOAT32, scores, vocab);
    free(text);
    free(tokens);
    free(scores);
}

// A tensor listed in the metadata before loading: its type is used, and
// its shape where a loader reads it (to choose between layouts).
static void declare(struct gguf_context *g, enum ggml_type type, int64_t ne0, int64_t ne1,
                    const char *format, uint32_t il)
{
    struct ggml_tensor t;
    memset(&t, 0, sizeof t);
    t.type = type;
    for (int i = 0; i < GGML_MAX_DIMS; i++)
        t.ne[i] = i == 0 ? ne0 : i == 1 ? ne1 : 1;
    t.nb[0] = ggml_type_size(type);
    t.nb[1] = ggml_row_size(type, ne0);
    for (int i = 2; i < GGML_MAX_DIMS; i++)
        t.nb[i] = t.nb[i - 1] * t.ne[i - 1];
    ggml_format_name(&t, format, il);
    gguf_add_tensor(g, &t);
}

// Optional tensors (TENSOR_NOT_REQUIRED) whose graph uses them all the
// same: a dry load never asks for them, and without them llama.cpp
// crashes building the graph. Which layers hold each:
enum holders {
    EVERY_LAYER,
    FIRST_LAYER,      // shared by the others (T5's relative position bias)
    RECURRENT_LAYER,  // the layer HYBRID makes recurrent: layer 1
    LINEAR_LAYERS,    // the gated delta net layers: all but every 2nd (full_attention_interval 2)
};
static const struct optional_tensor {
    const char *arch, *format;
    enum holders holders;
} OPTIONAL_TENSORS[] = {
    // the fused Q/K/V, or the three: the loader takes either
    {"phi3", "blk.%u.attn_qkv.weight", EVERY_LAYER},
    {"pockettts", "blk.%u.attn_qkv.weight", EVERY_LAYER},
    // the Mamba-2 convolution's bias, which build_mamba2_layer adds
    {"falcon-h1", "blk.%u.ssm_conv1d.bias", EVERY_LAYER},
    {"granitehybrid", "blk.%u.ssm_conv1d.bias", RECURRENT_LAYER},
    {"nemotron_h", "blk.%u.ssm_conv1d.bias", RECURRENT_LAYER},
    {"nemotron_h_moe", "blk.%u.ssm_conv1d.bias", RECURRENT_LAYER},
    // the linear attention's fused Q/K/V and its gate (or the older ssm_in)
    {"qwen3next", "blk.%u.attn_qkv.weight", LINEAR_LAYERS},
    {"qwen3next", "blk.%u.attn_gate.weight", LINEAR_LAYERS},
    {"qwen35", "blk.%u.attn_qkv.weight", LINEAR_LAYERS},
    {"qwen35", "blk.%u.attn_gate.weight", LINEAR_LAYERS},
    {"qwen35moe", "blk.%u.attn_qkv.weight", LINEAR_LAYERS},
    {"qwen35moe", "blk.%u.attn_gate.weight", LINEAR_LAYERS},
    // the gate's low-rank pair, which the fused token-shift mix of six
    // (the loader's first choice) expects
    {"arwkv7", "blk.%u.time_mix_g1.weight", EVERY_LAYER},
    {"arwkv7", "blk.%u.time_mix_g2.weight", EVERY_LAYER},
    // layer 0's relative position bias serves every layer
    {"t5", "enc.blk.%u.attn_rel_b.weight", FIRST_LAYER},
    {"t5", "dec.blk.%u.attn_rel_b.weight", FIRST_LAYER},
    {"t5encoder", "enc.blk.%u.attn_rel_b.weight", FIRST_LAYER},
};

static bool holds(enum holders h, uint32_t il)
{
    switch (h) {
    case EVERY_LAYER: return true;
    case FIRST_LAYER: return il == 0;
    case RECURRENT_LAYER: return il == 1;
    case LINEAR_LAYERS: return (il + 1) % 2 != 0;
    }
    return false;
}

// Tensors the dry loads cannot find: optional ones an architecture needs
// (one of), and ones whose type or listed shape matters.
static void declare_own(struct gguf_context *g, const struct arch *a, const struct dims *d)
{
    for (size_t i = 0; i < sizeof OPTIONAL_TENSORS / sizeof *OPTIONAL_TENSORS; i++) {
        const struct optional_tensor *o = &OPTIONAL_TENSORS[i];
        for (uint32_t il = 0; il < d->layers && strcmp(o->arch, a->name) == 0; il++)
            if (holds(o->holders, il))
                declare(g, GGML_TYPE_F32, 1, 1, o->format, il);
    }
    for (uint32_t il = 0; il < d->layers; il++) {
        if (strcmp(a->name, "wavtokenizer-dec") == 0) {
            // its convolutions run through im2col, which takes f16 kernels
            declare(g, GGML_TYPE_F16, 1, 1, "posnet.%u.conv1.weight", il);
            declare(g, GGML_TYPE_F16, 1, 1, "posnet.%u.conv2.weight", il);
            declare(g, GGML_TYPE_F16, 1, 1, "convnext.%u.dw.weight", il);
        } else if (strcmp(a->name, "rwkv6") == 0) {
            // the fused token-shift mix, or five separate ones: the fused
            declare(g, GGML_TYPE_F32, 1, 1, "blk.%u.time_mix_lerp_fused.weight", il);
        } else if (strcmp(a->name, "jina-bert-v2") == 0) {
            // the up projection's width tells a plain FFN from a gated one
            declare(g, GGML_TYPE_F32, d->embd, d->ff, "blk.%u.ffn_up.weight", il);
        }
    }
    if (strcmp(a->name, "wavtokenizer-dec") == 0)
        declare(g, GGML_TYPE_F16, 1, 1, "conv1d.weight", 0);
}

static struct gguf_context *arch_metadata(const struct arch *a)
{
    const struct dims d = model_dims(a);
    const struct meta m = {gguf_init_empty(), a->name};
    add_sizes(&m, a, &d);
    add_rest(&m, a, &d);
    add_window(&m, a, &d);
    add_indexer(&m, a, &d);
    if (a->flags & MLA)
        add_mla(&m, a, &d);
    if (a->flags & MOE)
        add_experts(&m, a, &d);
    add_own(&m, a, &d);
    add_vocab(m.g, d.vocab);
    if (a->flags & DECLARE)
        declare_own(m.g, a, &d);
    return m.g;
}

// --- tensors ---

// splitmix64: a fixed sequence per tensor name, whatever the order the
// loader creates tensors in.
static uint64_t next_random(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

// A normal value of standard deviation 0.1 (Box-Muller): weights of that
// size keep every architecture's activations finite.
static float next_normal(uint64_t *s)
{
    const double u1 = ((next_random(s) >> 11) + 1.0) / 9007199254740993.0;
    const double u2 = (next_random(s) >> 11) / 9007199254740992.0;
    return (float)(0.1 * sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2));
}

static uint64_t name_seed(const char *name)
{
    uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a
    for (; *name; name++)
        h = (h ^ (unsigned char)*name) * 0x100000001b3ull;
    return h;
}

// With our own writer, the tensors llama.cpp made, with their data, go
// into this context (the metadata copied in first).
struct fill {
    struct gguf_context *out;
    void **kept;  // the buffers out points into, freed after writing
    size_t n_kept, cap_kept;
    bool failed;
};

static void keep(struct fill *f, const struct ggml_tensor *t, void *data)
{
    if (f->n_kept == f->cap_kept) {
        f->cap_kept = f->cap_kept ? 2 * f->cap_kept : 64;
        f->kept = realloc(f->kept, f->cap_kept * sizeof *f->kept);
        if (!f->kept) {
            fprintf(stderr, "out of memory\n");
            exit(1);
        }
    }
    f->kept[f->n_kept++] = data;
    if (gguf_find_tensor(f->out, t->name) >= 0)
        return;  // a tensor llama.cpp duplicated for another buffer
    gguf_add_tensor(f->out, t);
    gguf_set_tensor_data(f->out, t->name, data);
}

// Called by llama.cpp for each tensor it created: random values, f32 or
// f16 as it made them. Mamba's A must be negative (the state decays).
static void fill_tensor(struct ggml_tensor *t, void *ud)
{
    struct fill *f = ud;
    const bool negative = strstr(t->name, "ssm_a") != NULL;
    const int64_t n = ggml_nelements(t);
    uint64_t s = name_seed(t->name);
    void *data = malloc(ggml_nbytes(t) ? ggml_nbytes(t) : 1);
    if (!data) {
        f->failed = true;
        return;
    }
    if (t->type == GGML_TYPE_F32 || t->type == GGML_TYPE_F16) {
        for (int64_t i = 0; i < n; i++) {
            float v = next_normal(&s);
            v = negative ? -fabsf(v) : v;
            if (t->type == GGML_TYPE_F32)
                ((float *)data)[i] = v;
            else
                ((ggml_fp16_t *)data)[i] = ggml_fp32_to_fp16(v);
        }
    } else {
        memset(data, 0, ggml_nbytes(t));  // no other type is asked for
    }
    ggml_backend_tensor_set(t, data, 0, ggml_nbytes(t));
    if (f->out)
        keep(f, t, data);
    else
        free(data);
}

// --- one architecture, in a child process ---

// llama.cpp's last error (and an abort's message), where the parent can
// read it after the child is gone.
static char *last_error;

// The first error since last_error was emptied: llama.cpp's own reason
// (the lines after it only say that loading failed).
static void keep_error(const char *text)
{
    size_t n = strlen(text);
    if (last_error[0])
        return;
    while (n && (text[n - 1] == '\n' || text[n - 1] == ' '))
        n--;
    if (n == 0)
        return;
    n = n < WHY_MAX - 1 ? n : WHY_MAX - 1;
    memcpy(last_error, text, n);
    last_error[n] = 0;
}

static void on_log(enum ggml_log_level level, const char *text, void *ud)
{
    (void)ud;
    if (level == GGML_LOG_LEVEL_ERROR)
        keep_error(text);
    // the metadata dumps of every dry load would bury the reasons
    if (level == GGML_LOG_LEVEL_WARN || level == GGML_LOG_LEVEL_ERROR)
        fputs(text, stderr);
}

static void on_abort(const char *message)
{
    keep_error(message);
    fprintf(stderr, "%s\n", message);
}

static bool quiet_progress(float progress, void *ud)
{
    (void)progress;
    (void)ud;
    return true;
}

// The name in llama.cpp's "missing tensor 'NAME'", or false.
static bool missing_tensor(const char *error, char *name, size_t size)
{
    const char *start = strstr(error, "missing tensor '");
    if (!start)
        return false;
    start += strlen("missing tensor '");
    const char *end = strchr(start, '\'');
    if (!end || (size_t)(end - start) >= size)
        return false;
    memcpy(name, start, end - start);
    name[end - start] = 0;
    return true;
}

// The prebuilt llama.cpp (node-llama-cpp applies llama.cpp's PR 22566)
// creates only the tensors the metadata lists and expects every listed one
// to be created. So the list is learnt from llama.cpp: a dry load (no_alloc)
// names the first required tensor that is not listed; we list it (f32, its
// shape is the loader's) and load again, until the load succeeds. Optional
// tensors (biases, norms a loader can do without) are then left out, as a
// converter leaves out what a checkpoint does not have.
static bool declare_tensors(struct gguf_context *meta)
{
    struct llama_model_params params = llama_model_default_params();
    params.progress_callback = quiet_progress;
    params.no_alloc = true;
    for (int pass = 0; pass < 100000; pass++) {
        last_error[0] = 0;
        struct fill none = {0};  // a dry load fills nothing, but keeps nothing if it did
        struct llama_model *model = llama_model_init_from_user(meta, fill_tensor, &none, params);
        if (model) {
            llama_model_free(model);
            last_error[0] = 0;
            return true;
        }
        char name[GGML_MAX_NAME];
        if (!missing_tensor(last_error, name, sizeof name) || gguf_find_tensor(meta, name) >= 0)
            return false;
        struct ggml_tensor t;
        memset(&t, 0, sizeof t);
        t.type = GGML_TYPE_F32;
        for (int i = 0; i < GGML_MAX_DIMS; i++) {
            t.ne[i] = 1;
            t.nb[i] = sizeof(float);
        }
        ggml_set_name(&t, name);
        gguf_add_tensor(meta, &t);
    }
    return false;
}

// Whether llama.cpp loads the file at PATH back; its reason in last_error
// if not.
static bool loads_back(const char *path)
{
    struct llama_model_params params = llama_model_default_params();
    params.progress_callback = quiet_progress;
    last_error[0] = 0;
    struct llama_model *model = llama_model_load_from_file(path, params);
    if (!model)
        return false;
    llama_model_free(model);
    return true;
}

// Our metadata (the keys llama.cpp loaded the model from) and the tensors
// it made, as they are.
static bool write_own(struct gguf_context *out, const char *path)
{
    if (gguf_write_to_file(out, path, false))
        return true;
    snprintf(last_error, WHY_MAX, "cannot write %.300s: %s", path, strerror(errno));
    return false;
}

// Saves MODEL with llama.cpp's saver and checks that llama.cpp loads the
// file back: the saver leaves out tensors of some architectures (a BERT's
// token embeddings, when there is no output layer to share them with).
// Where it refuses the architecture or its file does not load, our writer.
static bool save_model(const struct arch *a, const struct llama_model *model,
                       struct gguf_context *out, const char *path)
{
    if (!(a->flags & OWN_WRITER)) {
        llama_model_save_to_file(model, path);
        if (loads_back(path))
            return true;
        fprintf(stderr, "%s: llama.cpp's saver wrote a file it does not load (%s): "
                "written by make_arch_models instead\n", a->name, last_error);
    }
    last_error[0] = 0;
    if (!write_own(out, path))
        return false;
    if (loads_back(path))
        return true;
    if (!last_error[0])
        keep_error("llama.cpp does not load the file back");
    return false;
}

// Makes and saves one model; the message for a failure in last_error.
static bool make_model(const struct arch *a, const char *path)
{
    struct gguf_context *meta = arch_metadata(a);
    if (!declare_tensors(meta)) {
        if (!last_error[0])
            keep_error("llama.cpp made no model");
        gguf_free(meta);
        return false;
    }
    // every tensor is kept, for our writer should the saver fail
    struct fill f = {.out = gguf_init_empty()};
    gguf_set_kv(f.out, meta);
    struct llama_model_params params = llama_model_default_params();
    params.progress_callback = quiet_progress;
    struct llama_model *model = llama_model_init_from_user(meta, fill_tensor, &f, params);
    bool ok = model && !f.failed;
    if (!model && !last_error[0])
        keep_error("llama.cpp made no model");
    if (ok)
        ok = save_model(a, model, f.out, path);
    if (model)
        llama_model_free(model);
    for (size_t i = 0; i < f.n_kept; i++)
        free(f.kept[i]);
    free(f.kept);
    gguf_free(f.out);
    gguf_free(meta);
    return ok;
}

// Runs one architecture in a child, so that an abort in llama.cpp (an
// assertion on a shape it did not expect) fails that one only.
static bool run_arch(const struct arch *a, const char *outdir)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.gguf", outdir, a->name);
    last_error[0] = 0;
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        printf("%s failed: fork: %s\n", a->name, strerror(errno));
        return false;
    }
    if (pid == 0) {
        alarm(SECONDS);
        fprintf(stderr, "=== %s\n", a->name);
        _exit(make_model(a, path) ? 0 : 1);
    }
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
        printf("%s ok\n", a->name);
        return true;
    }
    unlink(path);  // nothing half-written stays
    if (WIFSIGNALED(status))
        printf("%s failed: %s%s%s\n", a->name, strsignal(WTERMSIG(status)),
               last_error[0] ? ": " : "", last_error);
    else
        printf("%s failed: %s\n", a->name, last_error[0] ? last_error : "no reason given");
    return false;
}

// ggml finds its CPU backends beside its own library: the folder of the
// libggml-base.so this program was linked to.
static void load_backends(void)
{
    Dl_info info;
    if (dladdr((void *)ggml_backend_tensor_set, &info) && info.dli_fname) {
        char *copy = strdup(info.dli_fname);
        ggml_backend_load_all_from_path(dirname(copy));
        free(copy);
    } else {
        ggml_backend_load_all();
    }
}

static const struct arch *find_arch(const char *name)
{
    for (size_t i = 0; i < N_ARCHS; i++)
        if (strcmp(ARCHS[i].name, name) == 0)
            return &ARCHS[i];
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: make_arch_models OUTDIR [ARCH...]\n");
        return 2;
    }
    for (int i = 2; i < argc; i++) {
        if (!find_arch(argv[i])) {
            fprintf(stderr, "make_arch_models: unknown architecture: %s\n", argv[i]);
            return 1;
        }
    }
    last_error = mmap(NULL, WHY_MAX, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (last_error == MAP_FAILED) {
        perror("mmap");
        return 1;
    }
    llama_log_set(on_log, NULL);
    ggml_set_abort_callback(on_abort);
    load_backends();
    llama_backend_init();
    if (argc == 2) {
        for (size_t i = 0; i < N_ARCHS; i++)
            run_arch(&ARCHS[i], argv[1]);
    } else {
        for (int i = 2; i < argc; i++)
            run_arch(find_arch(argv[i]), argv[1]);
    }
    llama_backend_free();
    return 0;
}
