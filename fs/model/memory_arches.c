/*
 * The table of llama.cpp's memory rules (see memory_arches.h), read from
 * llama-model.cpp's create_memory, llama-arch.cpp's llm_arch_is_recurrent
 * and llm_arch_is_hybrid, and each models/ARCH.cpp's hyperparameters, as
 * bundled with node-llama-cpp 3.22.1. Left out, so without memory/: the
 * architectures whose caches are of other kinds (deepseek32, glm-dsa,
 * hy_v4, dots3note, deepseek4, qwen4exp, minimax-m3: indexer and
 * compressed caches), those that share another context's cache (eagle3,
 * dflash, gemma4-assistant), those that add or repeat layers beyond
 * block_count (graniteswitch, nanbeige), and those llama.cpp cannot load
 * as a text model (clip, gptj).
 */
#include <string.h>

#include "model/memory_arches.h"

// The generic rule: one cache over every layer, each layer's K and V rows
// its KV heads times its head sizes (the prediction layers left out).
#define G(n) {.name = n, .kv = GGFS_KV_PLAIN}
// No cache at all.
#define NONE(n) {.name = n, .kv = GGFS_KV_NONE}
// Sliding layers by load_swa_pattern(period, dense first or last).
#define SWA(n, win, size, per, first)                                                                               \
    {.name = n, .kv = GGFS_KV_PLAIN, .swa = GGFS_SWA_PATTERN, .window = win, .window_size = size, .period = per, \
     .dense_first = first}
// Sliding layers as the pattern key's array says, over a window the model gives.
#define SWA_ARRAY(n) {.name = n, .kv = GGFS_KV_PLAIN, .swa = GGFS_SWA_ARRAY, .window = GGFS_WIN_REQUIRED}

static const ggfs_arch_rules arches[] = {
    // the generic rule
    G("llama"), G("deci"), G("falcon"), G("gpt2"), G("gptneox"), G("mpt"), G("baichuan"), G("starcoder"),
    G("refact"), G("bloom"), G("stablelm"), G("qwen"), G("qwen2"), G("qwen2moe"), G("qwen2vl"), G("qwen3"),
    G("qwen3moe"), G("qwen3vl"), G("qwen3vlmoe"), G("phi2"), G("phi3"), G("phimoe"), G("plamo"), G("codeshell"),
    G("orion"), G("internlm2"), G("minicpm"), G("minicpm3"), G("gemma"), G("starcoder2"), G("xverse"),
    G("command-r"), G("dbrx"), G("olmo"), G("olmoe"), G("openelm"), G("arctic"), G("deepseek"),
    G("deepseek2-ocr"), G("chatglm"), G("glm4"), G("glm4moe"), G("bitnet"), G("t5"), G("t5encoder"), G("jais"),
    G("jais2"), G("nemotron"), G("exaone"), G("granite"), G("granitemoe"), G("chameleon"), G("plm"),
    G("bailingmoe"), G("bailingmoe2"), G("dots1"), G("arcee"), G("ernie4_5"), G("ernie4_5-moe"),
    G("hunyuan-moe"), G("hunyuan-dense"), G("hunyuan_vl"), G("hy_v3"), G("smollm3"), G("seed_oss"),
    G("grovemoe"), G("apertus"), G("hrm_text"), G("minimax-m2"), G("cogvlm"), G("pangu-embedded"),
    G("mistral3"), G("paddleocr"), G("llama-embed"), G("maincoder"), G("talkie"), G("qwen3tts"), G("pockettts"),
    // MLA: one K row per layer when both MLA head sizes are given
    {.name = "deepseek2", .kv = GGFS_KV_PLAIN, .mla = true},
    {.name = "mistral4", .kv = GGFS_KV_PLAIN, .mla = true},
    // flash attention forced off: no quantized V cache
    {.name = "grok", .kv = GGFS_KV_PLAIN, .no_flash = true},
    // no cache
    NONE("bert"), NONE("nomic-bert"), NONE("nomic-bert-moe"), NONE("neo-bert"),
    NONE("jina-bert-v2"), NONE("jina-bert-v3"), NONE("eurobert"),
    NONE("wavtokenizer-dec"), NONE("dream"), NONE("llada"), NONE("llada-moe"), NONE("rnd1"),
    // sliding windows
    SWA("gemma2", GGFS_WIN_DEFAULT, 4096, 2, false),
    SWA("gemma3", GGFS_WIN_IF_GIVEN, 0, 6, false),
    // no cache, but its attention slides in the pattern's layers
    {.name = "gemma-embedding", .kv = GGFS_KV_NONE, .swa = GGFS_SWA_PATTERN, .window = GGFS_WIN_REQUIRED, .period = 6},
    {.name = "modern-bert", .kv = GGFS_KV_NONE, .swa = GGFS_SWA_PATTERN, .window = GGFS_WIN_IF_GIVEN, .period = 3,
     .dense_first = true},
    {.name = "gemma3n", .kv = GGFS_KV_PLAIN, .swa = GGFS_SWA_PATTERN, .window = GGFS_WIN_REQUIRED, .period = 5,
     .kv_from = GGFS_KV_FROM_20},
    {.name = "gemma4", .kv = GGFS_KV_PLAIN, .swa = GGFS_SWA_ARRAY, .window = GGFS_WIN_REQUIRED, .swa_heads = true,
     .kv_from = GGFS_KV_FROM_SHARED},
    {.name = "llama4", .kv = GGFS_KV_PLAIN, .swa = GGFS_SWA_LLAMA4},
    SWA("plamo3", GGFS_WIN_IF_GIVEN, 0, 8, false),
    SWA("cohere2", GGFS_WIN_REQUIRED, 0, 4, false),
    SWA("cohere2moe", GGFS_WIN_REQUIRED, 0, 4, true),
    SWA("olmo2", GGFS_WIN_IF_GIVEN, 0, 4, false),
    SWA("muse-glimmer", GGFS_WIN_REQUIRED, 0, 4, false),
    {.name = "exaone4", .kv = GGFS_KV_PLAIN, .swa = GGFS_SWA_PATTERN, .window = GGFS_WIN_DEFAULT,
     .window_size = 4096, .period = 4, .window_64 = true},
    SWA("exaone-moe", GGFS_WIN_REQUIRED, 0, 4, false),
    SWA("afmoe", GGFS_WIN_IF_GIVEN, 0, 4, false),
    SWA("laguna", GGFS_WIN_IF_GIVEN, 0, 4, true),
    SWA("mellum", GGFS_WIN_IF_GIVEN, 0, 4, false),
    SWA("smallthinker", GGFS_WIN_FORCED, 4096, 4, true),
    SWA("gpt-oss", GGFS_WIN_REQUIRED, 0, 2, false),
    SWA_ARRAY("maple"), SWA_ARRAY("granite_swa"), SWA_ARRAY("mimo2"), SWA_ARRAY("step35"), SWA_ARRAY("spark2_5"),
    // recurrent
    {.name = "mamba", .kv = GGFS_KV_RECURRENT, .recr = GGFS_RECR_SSM},
    {.name = "mamba2", .kv = GGFS_KV_RECURRENT, .recr = GGFS_RECR_SSM_GROUPS},
    {.name = "rwkv6", .kv = GGFS_KV_RECURRENT, .recr = GGFS_RECR_RWKV},
    {.name = "rwkv6qwen2", .kv = GGFS_KV_RECURRENT, .recr = GGFS_RECR_RWKV},
    {.name = "rwkv7", .kv = GGFS_KV_RECURRENT, .recr = GGFS_RECR_RWKV},
    {.name = "arwkv7", .kv = GGFS_KV_RECURRENT, .recr = GGFS_RECR_RWKV},
    // hybrids
    {.name = "jamba", .kv = GGFS_KV_HYBRID, .recr = GGFS_RECR_SSM, .recr_layers = GGFS_RL_NO_KV_HEADS},
    {.name = "falcon-h1", .kv = GGFS_KV_HYBRID, .recr = GGFS_RECR_SSM_GROUPS, .attn_layers = GGFS_AL_ALL},
    {.name = "plamo2", .kv = GGFS_KV_HYBRID, .recr = GGFS_RECR_SSM_GROUPS, .recr_layers = GGFS_RL_NO_KV_HEADS},
    {.name = "granitehybrid", .kv = GGFS_KV_HYBRID, .recr = GGFS_RECR_SSM_GROUPS,
     .recr_layers = GGFS_RL_NO_KV_HEADS},
    {.name = "nemotron_h", .kv = GGFS_KV_HYBRID, .recr = GGFS_RECR_SSM_GROUPS, .recr_layers = GGFS_RL_NEMOTRON,
     .attn_layers = GGFS_AL_NEMOTRON},
    {.name = "nemotron_h_moe", .kv = GGFS_KV_HYBRID, .recr = GGFS_RECR_SSM_GROUPS,
     .recr_layers = GGFS_RL_NEMOTRON, .attn_layers = GGFS_AL_NEMOTRON},
    {.name = "qwen3next", .kv = GGFS_KV_HYBRID, .recr = GGFS_RECR_SSM_GROUPS, .recr_layers = GGFS_RL_INTERVAL,
     .interval = 4, .attn_layers = GGFS_AL_TRUNK_NOT_RECR},
    {.name = "qwen35", .kv = GGFS_KV_HYBRID, .recr = GGFS_RECR_SSM_GROUPS, .recr_layers = GGFS_RL_INTERVAL,
     .interval = 4, .attn_layers = GGFS_AL_TRUNK_NOT_RECR},
    {.name = "qwen35moe", .kv = GGFS_KV_HYBRID, .recr = GGFS_RECR_SSM_GROUPS, .recr_layers = GGFS_RL_INTERVAL,
     .interval = 4, .attn_layers = GGFS_AL_TRUNK_NOT_RECR},
    {.name = "minimax-01", .kv = GGFS_KV_HYBRID, .recr = GGFS_RECR_LA, .recr_layers = GGFS_RL_INTERVAL,
     .interval = 8, .attn_layers = GGFS_AL_TRUNK_NOT_RECR},
    {.name = "lfm2", .kv = GGFS_KV_HYBRID, .swa = GGFS_SWA_LFM2, .window = GGFS_WIN_IF_GIVEN,
     .recr = GGFS_RECR_CONV, .recr_layers = GGFS_RL_NO_KV_HEADS},
    {.name = "lfm2moe", .kv = GGFS_KV_HYBRID, .recr = GGFS_RECR_CONV, .recr_layers = GGFS_RL_NO_KV_HEADS},
    {.name = "bailingmoe3", .kv = GGFS_KV_HYBRID, .recr = GGFS_RECR_KDA, .recr_layers = GGFS_RL_NO_KV_HEADS,
     .mla = true},
    {.name = "kimi-linear", .kv = GGFS_KV_HYBRID, .recr = GGFS_RECR_KDA, .recr_layers = GGFS_RL_NO_KV_HEADS,
     .mla = true},
    {.name = "kimi-k3", .kv = GGFS_KV_HYBRID, .recr = GGFS_RECR_KDA, .recr_layers = GGFS_RL_NO_KV_HEADS,
     .mla = true},
};

const ggfs_arch_rules *ggfs_arch_rules_of(const char *name, size_t len)
{
    for (size_t i = 0; i < sizeof arches / sizeof arches[0]; i++) {
        if (strlen(arches[i].name) == len && memcmp(arches[i].name, name, len) == 0)
            return &arches[i];
    }
    return NULL;
}
