/*
 * The memory rules (model/memory.h) on keys written by hand, each figure
 * worked out from llama.cpp's rules apart from the code: SPEC.md's example
 * (a llama 8B: 32 layers, 8 KV heads of 128), sliding windows with their
 * default and given patterns, an MLA cache, Mamba 2's groups, a hybrid's
 * per-layer heads; keys that make a model's memory unknown; the contexts
 * memory/ lists; the names it looks up (tree/memory_files.h); and its
 * files' places in a tree: inode numbers that lead back to them, sizes that
 * are their texts'.
 */
#include "tmptree.h" // first: it asks for _GNU_SOURCE

#include <stdio.h>

#include "check.h"
#include "gguf_writer.h"
#include "model/memory.h"
#include "tree/attr.h"
#include "tree/memory_files.h"
#include "tree/text.h"
#include "tree/tree.h"

/* The keys given as "name=value" u32s, "name=[a,b,...]" u32 arrays, and
 * general.architecture = arch (none when NULL). */
static ggp_file *keys_of(gguf_writer *w, const char *arch, const char *const *kvs, size_t n)
{
    gw_begin(w, 3, false, 0, n + (arch != NULL));
    if (arch)
        gw_kv_str(w, "general.architecture", arch);
    for (size_t i = 0; i < n; i++) {
        char name[128];
        const char *eq = strchr(kvs[i], '=');
        snprintf(name, sizeof name, "%.*s", (int)(eq - kvs[i]), kvs[i]);
        if (eq[1] == '[') {
            uint32_t v[64];
            uint64_t count = 0;
            for (const char *p = eq + 2; *p && *p != ']'; count++) {
                v[count] = (uint32_t)strtoul(p, (char **)&p, 10);
                if (*p == ',')
                    p++;
            }
            gw_kv_u32s(w, name, v, count);
        } else {
            gw_kv_u32(w, name, (uint32_t)strtoul(eq + 1, NULL, 10));
        }
    }
    ggp_error err;
    ggp_file *f = ggp_open_mem(w->b, w->n, &err);
    if (!f)
        fprintf(stderr, "offset %llu: %s\n", (unsigned long long)err.offset, err.msg);
    return f;
}

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* rules of arch with the keys given; false when the rules are unknown. */
static bool rules_of(const char *arch, const char *const *kvs, size_t n, uint64_t weights, ggfs_memory_rules *r)
{
    gguf_writer w;
    ggp_file *f = keys_of(&w, arch, kvs, n);
    const bool known = f && ggfs_memory_read(f, weights, r);
    ggp_close(f);
    gw_free(&w);
    return known;
}

static int test_spec_example(void)
{
    static const char *const kvs[] = {
        "llama.context_length=131072", "llama.embedding_length=4096", "llama.block_count=32",
        "llama.attention.head_count=32", "llama.attention.head_count_kv=8",
    };
    ggfs_memory_rules r;
    EXPECT(rules_of("llama", kvs, N(kvs), 4368438976, &r));
    ggfs_memory m;
    ggfs_memory_at(&r, 6000, &m);
    EXPECT_EQ(m.context, 6144);
    EXPECT_EQ(m.weights, 4368438976);
    EXPECT_EQ(m.kv_layers, 32);
    EXPECT_EQ(m.kv_cells, 6144);
    EXPECT_EQ(m.swa_layers, 0);
    EXPECT_EQ(m.swa_cells, 0);
    EXPECT_EQ(m.kv[GGFS_CACHE_F16], 805306368);  // 32 x 6144 x (1024 + 1024) x 2
    EXPECT_EQ(m.kv[GGFS_CACHE_Q8_0], 427819008); // 32 x 6144 x 2 x 1024/32 x 34
    EXPECT_EQ(m.kv[GGFS_CACHE_Q4_0], 226492416); // 32 x 6144 x 2 x 1024/32 x 18
    EXPECT_EQ(m.recurrent, 0);
    EXPECT_EQ(m.total_f16, 5173745344);
    // the prediction layers at the end are not in the main context's cache
    static const char *const nextn[] = {
        "llama.context_length=131072", "llama.embedding_length=4096", "llama.block_count=33",
        "llama.attention.head_count=32", "llama.attention.head_count_kv=8", "llama.nextn_predict_layers=1",
    };
    EXPECT(rules_of("llama", nextn, N(nextn), 4368438976, &r));
    ggfs_memory_at(&r, 6000, &m);
    EXPECT_EQ(m.kv_layers, 32);
    EXPECT_EQ(m.kv[GGFS_CACHE_F16], 805306368);
    return 1;
}

static int test_sliding_windows(void)
{
    // gemma2: a 4096 window and every other layer sliding by default;
    // head 256 given, 4 KV heads
    static const char *const g2[] = {
        "gemma2.context_length=8192", "gemma2.embedding_length=2304", "gemma2.block_count=4",
        "gemma2.attention.head_count=8", "gemma2.attention.head_count_kv=4", "gemma2.attention.key_length=256",
        "gemma2.attention.value_length=256",
    };
    ggfs_memory_rules r;
    ggfs_memory m;
    EXPECT(rules_of("gemma2", g2, N(g2), 0, &r));
    ggfs_memory_at(&r, 8192, &m);
    EXPECT_EQ(m.kv_layers, 2);
    EXPECT_EQ(m.swa_layers, 2);
    EXPECT_EQ(m.kv_cells, 8192);
    EXPECT_EQ(m.swa_cells, 4608); // 4096 + 512
    EXPECT_EQ(m.kv[GGFS_CACHE_F16], (2 * 8192 + 2 * 4608) * 2 * 1024 * 2ull);
    // a context below the window: the window's cache is the context's
    ggfs_memory_at(&r, 1000, &m);
    EXPECT_EQ(m.swa_cells, 1024);
    // gemma3 without a window: no sliding layers at all
    static const char *const g3_none[] = {
        "gemma3.context_length=8192", "gemma3.embedding_length=256", "gemma3.block_count=7",
        "gemma3.attention.head_count=4", "gemma3.attention.head_count_kv=1",
    };
    EXPECT(rules_of("gemma3", g3_none, N(g3_none), 0, &r));
    EXPECT_EQ(r.full.layers, 7);
    EXPECT_EQ(r.swa.layers, 0);
    // gemma3 with a window of 100 and a period of 3: layers 2 and 5 full;
    // a context of 100 has a batch of 100
    static const char *const g3[] = {
        "gemma3.context_length=8192", "gemma3.embedding_length=256", "gemma3.block_count=7",
        "gemma3.attention.head_count=4", "gemma3.attention.head_count_kv=1", "gemma3.attention.sliding_window=100",
        "gemma3.attention.sliding_window_pattern=3",
    };
    EXPECT(rules_of("gemma3", g3, N(g3), 0, &r));
    EXPECT_EQ(r.full.layers, 2);
    EXPECT_EQ(r.swa.layers, 5);
    ggfs_memory_at(&r, 100, &m);
    EXPECT_EQ(m.context, 256);
    EXPECT_EQ(m.swa_cells, 256);
    ggfs_memory_at(&r, 5000, &m);
    EXPECT_EQ(m.swa_cells, 768); // 100 + 512, padded
    // the pattern as one flag per layer
    static const char *const g3_flags[] = {
        "gemma3.context_length=8192", "gemma3.embedding_length=256", "gemma3.block_count=3",
        "gemma3.attention.head_count=4", "gemma3.attention.sliding_window=100",
        "gemma3.attention.sliding_window_pattern=[0,1,0]",
    };
    EXPECT(rules_of("gemma3", g3_flags, N(g3_flags), 0, &r));
    EXPECT_EQ(r.full.layers, 2);
    EXPECT_EQ(r.swa.layers, 1);
    return 1;
}

static int test_mla_recurrent_hybrid(void)
{
    // deepseek2 with MLA: one K row of kv_lora_rank 512 + rope 64, no V
    static const char *const ds[] = {
        "deepseek2.context_length=163840", "deepseek2.embedding_length=7168", "deepseek2.block_count=61",
        "deepseek2.attention.head_count=128", "deepseek2.attention.head_count_kv=1",
        "deepseek2.attention.key_length=576", "deepseek2.attention.value_length=512",
        "deepseek2.attention.key_length_mla=192", "deepseek2.attention.value_length_mla=128",
    };
    ggfs_memory_rules r;
    ggfs_memory m;
    EXPECT(rules_of("deepseek2", ds, N(ds), 0, &r));
    ggfs_memory_at(&r, 4096, &m);
    EXPECT_EQ(m.kv[GGFS_CACHE_F16], 61ull * 4096 * 576 * 2);
    EXPECT_EQ(m.kv[GGFS_CACHE_Q8_0], 61ull * 4096 * 576 / 32 * 34);
    // mamba2: conv state (4-1) x (1024 + 2 x 8 x 128), SSM state 128 x 1024, f32
    static const char *const m2[] = {
        "mamba2.context_length=1048576", "mamba2.embedding_length=512", "mamba2.block_count=3",
        "mamba2.ssm.conv_kernel=4", "mamba2.ssm.inner_size=1024", "mamba2.ssm.state_size=128",
        "mamba2.ssm.group_count=8", "mamba2.ssm.time_step_rank=16",
    };
    EXPECT(rules_of("mamba2", m2, N(m2), 10, &r));
    ggfs_memory_at(&r, 4096, &m);
    EXPECT_EQ(m.recurrent, 3ull * (3 * (1024 + 2 * 8 * 128) + 128 * 1024) * 4);
    EXPECT_EQ(m.kv_layers, 0);
    EXPECT_EQ(m.kv_cells, 0);
    EXPECT_EQ(m.kv[GGFS_CACHE_F16], 0);
    EXPECT_EQ(m.total_f16, 10 + m.recurrent);
    // mamba2 needs its groups; mamba has none
    EXPECT(!rules_of("mamba2", m2, N(m2) - 2, 0, &r));
    // lfm2: the layers with no KV heads are conv layers, state 1024 x (3-1)
    static const char *const lf[] = {
        "lfm2.context_length=128000", "lfm2.embedding_length=1024", "lfm2.block_count=4",
        "lfm2.attention.head_count=16", "lfm2.attention.head_count_kv=[0,8,0,8]", "lfm2.shortconv.l_cache=3",
    };
    EXPECT(rules_of("lfm2", lf, N(lf), 0, &r));
    ggfs_memory_at(&r, 512, &m);
    EXPECT_EQ(m.kv_layers, 2);
    EXPECT_EQ(m.kv[GGFS_CACHE_F16], 2ull * 512 * (2 * 8 * 64) * 2);
    EXPECT_EQ(m.recurrent, 2ull * 1024 * 2 * 4);
    return 1;
}

static int test_unknown(void)
{
    static const char *const ok[] = {
        "llama.context_length=4096", "llama.embedding_length=256", "llama.block_count=2",
        "llama.attention.head_count=4",
    };
    ggfs_memory_rules r;
    EXPECT(rules_of("llama", ok, N(ok), 0, &r));
    EXPECT(!rules_of("llama4", ok, N(ok), 0, &r));
    EXPECT(!rules_of("llam", ok, N(ok), 0, &r));
    EXPECT(!rules_of(NULL, ok, N(ok), 0, &r));
    static const char *const no_blocks[] = {"llama.context_length=4096", "llama.embedding_length=256"};
    EXPECT(!rules_of("llama", no_blocks, N(no_blocks), 0, &r));
    static const char *const zero[] = {"llama.context_length=4096", "llama.embedding_length=256",
                                       "llama.block_count=0"};
    EXPECT(!rules_of("llama", zero, N(zero), 0, &r));
    static const char *const many[] = {"llama.context_length=4096", "llama.embedding_length=256",
                                       "llama.block_count=513"};
    EXPECT(!rules_of("llama", many, N(many), 0, &r));
    static const char *const short_array[] = {
        "llama.context_length=4096", "llama.embedding_length=256", "llama.block_count=3",
        "llama.attention.head_count=4", "llama.attention.head_count_kv=[1,2]",
    };
    EXPECT(!rules_of("llama", short_array, N(short_array), 0, &r));
    // sizes no model could have: figures that would not fit in 64 bits
    static const char *const huge_rows[] = {
        "llama.context_length=4096", "llama.embedding_length=4000000000", "llama.block_count=512",
        "llama.attention.head_count=1", "llama.attention.head_count_kv=4000000000",
    };
    EXPECT(!rules_of("llama", huge_rows, N(huge_rows), 0, &r));
    static const char *const huge_state[] = {
        "mamba2.context_length=4096", "mamba2.embedding_length=1", "mamba2.block_count=512",
        "mamba2.ssm.conv_kernel=4000000000", "mamba2.ssm.inner_size=4000000000",
        "mamba2.ssm.state_size=4000000000", "mamba2.ssm.group_count=4000000000",
    };
    EXPECT(!rules_of("mamba2", huge_state, N(huge_state), 0, &r));
    EXPECT(!rules_of("llama", ok, N(ok), UINT64_C(1) << 62, &r));
    // the largest a cell may take: 512 layers of 2^27 bytes = 2^36
    static const char *const large[] = {
        "llama.context_length=4096", "llama.embedding_length=33554432", "llama.block_count=512",
        "llama.attention.head_count=1", "llama.attention.head_count_kv=1",
    };
    EXPECT(rules_of("llama", large, N(large), 0, &r));
    ggfs_memory m;
    ggfs_memory_at(&r, GGFS_MEMORY_CTX_MAX, &m);
    EXPECT_EQ(m.kv[GGFS_CACHE_F16], (UINT64_C(1) << 36) * GGFS_MEMORY_CTX_MAX);
    return 1;
}

static int test_listed_and_names(void)
{
    ggfs_memory_rules r = {0};
    static const struct {
        uint32_t trained;
        uint32_t want[8];
    } cases[] = {
        {8192, {512, 1024, 2048, 4096, 8192}},
        {6000, {512, 1024, 2048, 4096, 6000}},
        {512, {512}},
        {300, {300}},
        {0, {0}},
        {UINT32_C(1) << 30, {0}}, // checked apart below
    };
    for (size_t c = 0; c + 1 < N(cases); c++) {
        r.n_ctx_train = cases[c].trained;
        uint32_t i = 0;
        for (; cases[c].want[i]; i++)
            EXPECT_EQ(ggfs_memory_listed(&r, i), cases[c].want[i]);
        EXPECT_EQ(ggfs_memory_listed(&r, i), 0);
        EXPECT_EQ(ggfs_memory_listed(&r, i + 1), 0);
    }
    r.n_ctx_train = UINT32_C(1) << 30;
    EXPECT_EQ(ggfs_memory_listed(&r, 15), GGFS_MEMORY_CTX_MAX); // 512 << 15 = 2^24
    EXPECT_EQ(ggfs_memory_listed(&r, 16), 0);

    uint32_t ctx = 0;
    EXPECT(ggfs_memory_name_parse("1", &ctx) && ctx == 1);
    EXPECT(ggfs_memory_name_parse("16777216", &ctx) && ctx == GGFS_MEMORY_CTX_MAX);
    static const char *const bad[] = {"", "0", "01", "+1", "-1", "16777217", "99999999999999999999", "1k", " 1"};
    for (size_t i = 0; i < N(bad); i++)
        EXPECT(!ggfs_memory_name_parse(bad[i], &ctx));
    return 1;
}

/* memory/CTX of ctx in tree: found by its name, numbered both ways,
 * statted at its text's size. */
static int check_ctx_file(ggfs_tree *tree, uint32_t ctx)
{
    char name[16];
    snprintf(name, sizeof name, "%u", ctx);
    const ggfs_node dir = ggfs_lookup(tree, ggfs_node_at(GGFS_ROOT, 0), "memory");
    EXPECT_EQ(dir.kind, GGFS_MEMORY_DIR);
    const ggfs_node node = ggfs_lookup(tree, dir, name);
    EXPECT_EQ(node.kind, GGFS_MEMORY_CTX);
    EXPECT_EQ(node.index, ctx);
    const uint64_t ino = ggfs_ino_of(tree, node);
    EXPECT(ino != 0);
    const ggfs_node back = ggfs_node_of(tree, ino);
    EXPECT_EQ(back.kind, GGFS_MEMORY_CTX);
    EXPECT_EQ(back.index, ctx);
    struct stat st;
    EXPECT(ggfs_stat(tree, node, &st));
    EXPECT_EQ(st.st_ino, ino);
    // the text an open reads: its first line the padded context, its size stat's
    ggfs_buffer text;
    ggfs_buffer_init(&text);
    ggfs_view *view = ggfs_tree_view(tree);
    const bool rendered = ggfs_text_render(tree, view, node, &text.sink);
    ggfs_view_put(view);
    char first[32];
    snprintf(first, sizeof first, "context: %u\n", (ctx + 255) / 256 * 256);
    const bool starts = rendered && text.len > strlen(first) && memcmp(text.data, first, strlen(first)) == 0;
    const size_t len = text.len;
    free(text.data);
    EXPECT(starts);
    EXPECT_EQ(len, (uint64_t)st.st_size);
    return 1;
}

static int test_tree_places(void)
{
    gguf_writer w;
    gw_begin(&w, 3, false, 1, 5);
    gw_kv_str(&w, "general.architecture", "llama");
    gw_kv_u32(&w, "llama.context_length", 4096);
    gw_kv_u32(&w, "llama.embedding_length", 64);
    gw_kv_u32(&w, "llama.block_count", 2);
    gw_kv_u32(&w, "llama.attention.head_count", 2);
    static const uint64_t ne[] = {64};
    gw_tensor(&w, "w", 1, ne, GW_TENSOR_F32, 0);
    gw_pad(&w, 32);
    static const float data[64];
    gw_bytes(&w, data, sizeof data);
    char *root = tmptree_new();
    char path[4096];
    EXPECT(root && tmptree_file(root, "m.gguf", w.b, w.n) && tmptree_path(path, sizeof path, root, "m.gguf"));
    gw_free(&w);
    ggfs_model_error err;
    ggfs_model *model = ggfs_model_open(path, NULL, &err);
    EXPECT(model != NULL);
    ggfs_tree tree;
    EXPECT(ggfs_tree_init(&tree, model));
    EXPECT_EQ(tree.memory_weights, sizeof data);
    int ok = check_ctx_file(&tree, 1) && check_ctx_file(&tree, 4096) && check_ctx_file(&tree, 65537) &&
             check_ctx_file(&tree, GGFS_MEMORY_CTX_MAX);
    // memory/'s numbers lie between the tensors' and none of another file
    const uint64_t last_tensor = ggfs_ino_of(&tree, ggfs_node_at(GGFS_TENSOR_SHA256, 0));
    ok = ok && ggfs_ino_of(&tree, ggfs_node_at(GGFS_MEMORY_CTX, 1)) == last_tensor + 1;
    ok = ok && ggfs_ino_of(&tree, ggfs_node_at(GGFS_MEMORY_CTX, 0)) == 0;
    ok = ok && ggfs_ino_of(&tree, ggfs_node_at(GGFS_MEMORY_CTX, GGFS_MEMORY_CTX_MAX + 1)) == 0;
    // then offload/'s, CTX 1 first, and none of another file after them
    ok = ok && ggfs_ino_of(&tree, ggfs_node_at(GGFS_OFFLOAD_CTX, 1)) == last_tensor + GGFS_MEMORY_CTX_MAX + 1;
    ok = ok && ggfs_node_of(&tree, last_tensor + GGFS_MEMORY_CTX_MAX + 1).kind == GGFS_OFFLOAD_CTX;
    ok = ok && ggfs_node_of(&tree, last_tensor + 2 * GGFS_MEMORY_CTX_MAX).index == GGFS_MEMORY_CTX_MAX;
    ok = ok && ggfs_node_of(&tree, last_tensor + 2 * GGFS_MEMORY_CTX_MAX + 1).kind == GGFS_NONE;
    struct stat st;
    // ".", its entry and the subdirectories' "..": metadata, tensors, memory, offload
    ok = ok && ggfs_stat(&tree, ggfs_node_at(GGFS_ROOT, 0), &st) && st.st_nlink == 6;
    ggfs_tree_destroy(&tree);
    ggfs_model_close(model);
    tmptree_free(root);
    return ok;
}

/* llama_init_from_model's refusals: a quantized cache whose block of 32
 * does not divide some trunk layer's K (then V) head size. */
static int test_refused_cache_types(void)
{
    // heads of 64 / 8 = 8 (stories260K): q8_0 and q4_0 refused for K
    static const char *const small[] = {
        "llama.context_length=512", "llama.embedding_length=64", "llama.block_count=5",
        "llama.attention.head_count=8", "llama.attention.head_count_kv=4",
    };
    ggfs_memory_rules r;
    ggfs_memory m;
    EXPECT(rules_of("llama", small, N(small), 0, &r));
    EXPECT(!r.refusal[GGFS_CACHE_F16].refused);
    for (int t = GGFS_CACHE_Q8_0; t <= GGFS_CACHE_Q4_0; t++) {
        EXPECT(r.refusal[t].refused);
        EXPECT_EQ(r.refusal[t].row, 'K');
        EXPECT_EQ(r.refusal[t].head, 8);
        EXPECT(strcmp(r.refusal[t].key, "llama.attention.head_count") == 0);
    }
    ggfs_memory_at(&r, 512, &m);
    EXPECT(!m.refused[GGFS_CACHE_F16] && m.refused[GGFS_CACHE_Q8_0] && m.refused[GGFS_CACHE_Q4_0]);
    EXPECT_EQ(m.kv[GGFS_CACHE_F16], 5 * 512 * 2 * 32 * 2);
    EXPECT_EQ(m.kv[GGFS_CACHE_Q8_0], 0);
    // K rows of 64 given, V's still 8: V refused, named by its own key
    static const char *const v_small[] = {
        "llama.context_length=512", "llama.embedding_length=64", "llama.block_count=5",
        "llama.attention.head_count=8", "llama.attention.key_length=64",
    };
    EXPECT(rules_of("llama", v_small, N(v_small), 0, &r));
    EXPECT(r.refusal[GGFS_CACHE_Q8_0].refused);
    EXPECT_EQ(r.refusal[GGFS_CACHE_Q8_0].row, 'V');
    EXPECT(strcmp(r.refusal[GGFS_CACHE_Q8_0].key, "llama.attention.head_count") == 0);
    // sliding-window layers are checked with their own head sizes: only
    // key_length_swa (48) is not whole blocks
    static const char *const swa[] = {
        "gemma2.context_length=8192", "gemma2.embedding_length=256", "gemma2.block_count=4",
        "gemma2.attention.head_count=4", "gemma2.attention.key_length_swa=48",
    };
    EXPECT(rules_of("gemma2", swa, N(swa), 0, &r));
    EXPECT(r.refusal[GGFS_CACHE_Q4_0].refused);
    EXPECT_EQ(r.refusal[GGFS_CACHE_Q4_0].row, 'K');
    EXPECT_EQ(r.refusal[GGFS_CACHE_Q4_0].head, 48);
    EXPECT(strcmp(r.refusal[GGFS_CACHE_Q4_0].key, "gemma2.attention.key_length_swa") == 0);
    // a recurrent model has no heads: nothing to refuse
    static const char *const mamba[] = {
        "mamba.context_length=512", "mamba.embedding_length=64", "mamba.block_count=2", "mamba.ssm.conv_kernel=4",
        "mamba.ssm.inner_size=128", "mamba.ssm.state_size=16",
    };
    EXPECT(rules_of("mamba", mamba, N(mamba), 0, &r));
    EXPECT(!r.refusal[GGFS_CACHE_Q8_0].refused && !r.refusal[GGFS_CACHE_Q4_0].refused);
    return 1;
}

/* Rows of the architecture table with rules of their own, each figure
 * worked out from llama.cpp's source apart from the code. */
static int test_arch_rows(void)
{
    ggfs_memory_rules r;
    ggfs_memory m;
    // llama4: chunks of 8192 whatever the window key says, three of every
    // four layers; none at all when the key is 0
    static const char *const l4[] = {
        "llama4.context_length=65536", "llama4.embedding_length=256", "llama4.block_count=8",
        "llama4.attention.head_count=4", "llama4.attention.sliding_window=100",
    };
    EXPECT(rules_of("llama4", l4, N(l4), 0, &r));
    EXPECT_EQ(r.swa.layers, 6);
    EXPECT_EQ(r.full.layers, 2);
    EXPECT_EQ(r.n_swa, 8192);
    ggfs_memory_at(&r, 65536, &m);
    EXPECT_EQ(m.swa_cells, 8704);
    static const char *const l4_off[] = {
        "llama4.context_length=65536", "llama4.embedding_length=256", "llama4.block_count=8",
        "llama4.attention.head_count=4", "llama4.attention.sliding_window=0",
    };
    EXPECT(rules_of("llama4", l4_off, N(l4_off), 0, &r));
    EXPECT_EQ(r.swa.layers, 0);
    // exaone4: a window only with 64 layers
    static const char *const ex32[] = {
        "exaone4.context_length=8192", "exaone4.embedding_length=256", "exaone4.block_count=32",
        "exaone4.attention.head_count=4",
    };
    EXPECT(rules_of("exaone4", ex32, N(ex32), 0, &r));
    EXPECT_EQ(r.swa.layers, 0);
    static const char *const ex64[] = {
        "exaone4.context_length=8192", "exaone4.embedding_length=256", "exaone4.block_count=64",
        "exaone4.attention.head_count=4",
    };
    EXPECT(rules_of("exaone4", ex64, N(ex64), 0, &r));
    EXPECT_EQ(r.swa.layers, 48);
    EXPECT_EQ(r.n_swa, 4096);
    // smallthinker: a given window becomes 4096, the dense layer first
    static const char *const st[] = {
        "smallthinker.context_length=8192", "smallthinker.embedding_length=256", "smallthinker.block_count=8",
        "smallthinker.attention.head_count=4", "smallthinker.attention.sliding_window=100",
    };
    EXPECT(rules_of("smallthinker", st, N(st), 0, &r));
    EXPECT_EQ(r.n_swa, 4096);
    EXPECT_EQ(r.layer[0].cache, GGFS_LAYER_FULL);
    EXPECT_EQ(r.layer[1].cache, GGFS_LAYER_SWA);
    EXPECT_EQ(r.layer[4].cache, GGFS_LAYER_FULL);
    // gpt-oss requires its window
    static const char *const oss[] = {
        "gpt-oss.context_length=8192", "gpt-oss.embedding_length=256", "gpt-oss.block_count=4",
        "gpt-oss.attention.head_count=4",
    };
    EXPECT(!rules_of("gpt-oss", oss, N(oss), 0, &r));
    // gemma3n: layers from 20 on reuse an earlier one's cache
    static const char *const g3n[] = {
        "gemma3n.context_length=8192", "gemma3n.embedding_length=256", "gemma3n.block_count=30",
        "gemma3n.attention.head_count=4", "gemma3n.attention.sliding_window=512",
    };
    EXPECT(rules_of("gemma3n", g3n, N(g3n), 0, &r));
    EXPECT_EQ(r.full.layers + r.swa.layers, 20);
    EXPECT_EQ(r.full.layers, 4); // 4, 9, 14, 19
    // grok: no quantized cache at all
    static const char *const grok[] = {
        "grok.context_length=8192", "grok.embedding_length=256", "grok.block_count=2", "grok.attention.head_count=4",
    };
    EXPECT(rules_of("grok", grok, N(grok), 0, &r));
    EXPECT(r.refusal[GGFS_CACHE_Q8_0].refused && r.refusal[GGFS_CACHE_Q8_0].no_flash);
    EXPECT(r.refusal[GGFS_CACHE_Q4_0].refused && !r.refusal[GGFS_CACHE_F16].refused);
    // rwkv6: token shift 2 x n_embd and n_embd x head size, f32, a layer
    static const char *const rwkv[] = {
        "rwkv6.context_length=8192", "rwkv6.embedding_length=256", "rwkv6.block_count=3", "rwkv6.wkv.head_size=64",
    };
    EXPECT(rules_of("rwkv6", rwkv, N(rwkv), 0, &r));
    EXPECT_EQ(r.recurrent, 3 * (2 * 256 + 256 * 64) * 4);
    EXPECT_EQ(r.full.layers, 0);
    // falcon-h1: attention and state in every layer
    static const char *const fh[] = {
        "falcon-h1.context_length=8192", "falcon-h1.embedding_length=256", "falcon-h1.block_count=2",
        "falcon-h1.attention.head_count=4", "falcon-h1.attention.head_count_kv=1", "falcon-h1.ssm.conv_kernel=4",
        "falcon-h1.ssm.inner_size=512", "falcon-h1.ssm.state_size=16", "falcon-h1.ssm.group_count=1",
    };
    EXPECT(rules_of("falcon-h1", fh, N(fh), 0, &r));
    EXPECT_EQ(r.full.layers, 2);
    EXPECT_EQ(r.recurrent, 2 * (3 * (512 + 2 * 16) + 16 * 512) * 4);
    // nemotron_h: layers with a feed-forward have neither cache
    static const char *const nh[] = {
        "nemotron_h.context_length=8192", "nemotron_h.embedding_length=256", "nemotron_h.block_count=3",
        "nemotron_h.attention.head_count=4", "nemotron_h.attention.head_count_kv=[0,2,0]",
        "nemotron_h.feed_forward_length=[0,0,512]", "nemotron_h.ssm.conv_kernel=4", "nemotron_h.ssm.inner_size=512",
        "nemotron_h.ssm.state_size=16", "nemotron_h.ssm.group_count=1",
    };
    EXPECT(rules_of("nemotron_h", nh, N(nh), 0, &r));
    EXPECT_EQ(r.full.layers, 1);
    EXPECT(r.layer[0].state > 0 && r.layer[1].state == 0 && r.layer[2].state == 0);
    EXPECT_EQ(r.layer[2].cache, GGFS_LAYER_NO_KV);
    // MLA keys mean nothing to an architecture that does not read them
    static const char *const mla[] = {
        "qwen2.context_length=8192", "qwen2.embedding_length=256", "qwen2.block_count=1",
        "qwen2.attention.head_count=4", "qwen2.attention.key_length_mla=64", "qwen2.attention.value_length_mla=64",
    };
    EXPECT(rules_of("qwen2", mla, N(mla), 0, &r));
    EXPECT_EQ(r.full.cell_bytes[GGFS_CACHE_F16], 2 * 256 * 2);
    // an encoder: no cache, weights only
    static const char *const bert[] = {
        "bert.context_length=512", "bert.embedding_length=256", "bert.block_count=2", "bert.attention.head_count=4",
    };
    EXPECT(rules_of("bert", bert, N(bert), 1000, &r));
    ggfs_memory_at(&r, 512, &m);
    EXPECT_EQ(m.kv[GGFS_CACHE_F16], 0);
    EXPECT_EQ(m.total_f16, 1000);
    return 1;
}

int main(void)
{
    int ok = 1;
    ok &= test_spec_example();
    ok &= test_sliding_windows();
    ok &= test_mla_recurrent_hybrid();
    ok &= test_unknown();
    ok &= test_refused_cache_types();
    ok &= test_arch_rows();
    ok &= test_listed_and_names();
    ok &= test_tree_places();
    puts(ok ? "test_memory: ok" : "test_memory: FAILED");
    return ok ? 0 : 1;
}
