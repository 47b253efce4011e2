/*
 * tokenizer/special over a large vocabulary: a million tokens and twenty
 * thousand tokenizer.ggml.*_token_id keys, in an order that is not the
 * ids' (descending, with repeats), plus the cases each line can be: none
 * (u32 4294967295), a negative id, an id past the vocabulary, the empty
 * token. The text must be exactly the one the SPEC describes. The size
 * is the check on the walk: one pass over the tokens per key (2e10 steps)
 * would run far past this test's timeout; one pass in all is a second.
 * scripts/bench times the same render.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "ggp.h"
#include "gguf_writer.h"

enum { N_TOKENS = 1000000, N_KEYS = 20000 };

static uint64_t id_of_key(size_t i)
{
    return (uint64_t)(N_TOKENS - 1) - (uint64_t)(i / 2) * 97; // descending, each id twice
}

static int test_special_of_a_million_tokens(void)
{
    gguf_writer w;
    gw_begin(&w, 3, false, 0, N_KEYS + 6);
    gw_key(&w, "tokenizer.ggml.tokens", GW_ARR);
    gw_uint(&w, GW_STR, 4);
    gw_count(&w, N_TOKENS);
    gw_str(&w, ""); // token 0 is empty
    for (uint64_t id = 1; id < N_TOKENS; id++) {
        char t[24];
        snprintf(t, sizeof t, "t%" PRIu64, id);
        gw_str(&w, t);
    }
    for (size_t i = 0; i < N_KEYS; i++) {
        char k[64];
        snprintf(k, sizeof k, "tokenizer.ggml.k%zu_token_id", i);
        gw_kv_u32(&w, k, (uint32_t)id_of_key(i));
    }
    gw_kv_u32(&w, "tokenizer.ggml.none_token_id", UINT32_MAX);
    gw_kv_int(&w, "tokenizer.ggml.neg_token_id", GW_I32, (uint32_t)-3, 4);
    gw_kv_u32(&w, "tokenizer.ggml.past_token_id", N_TOKENS);
    gw_kv_u32(&w, "tokenizer.ggml.empty_token_id", 0);
    gw_key(&w, "tokenizer.ggml.add_bos_token", GW_BOOL);
    gw_uint(&w, 1, 1);

    ggp_error err;
    ggp_file *f = ggp_open_mem(w.b, w.n, &err);
    EXPECT(f != NULL);
    ggp_bytes got = {0};
    ggp_bytes_sink sink;
    ggp_bytes_sink_init(&sink, &got);
    EXPECT(ggp_render_special_tokens(f, &sink.sink));

    size_t cap = (size_t)N_KEYS * 48 + 256, n = 0;
    char *want = malloc(cap);
    EXPECT(want != NULL);
    for (size_t i = 0; i < N_KEYS; i++)
        n += (size_t)snprintf(want + n, cap - n, "k%zu: %" PRIu64 " t%" PRIu64 "\n", i, id_of_key(i), id_of_key(i));
    n += (size_t)snprintf(want + n, cap - n, "none: -1 -\nneg: -3 -\npast: %d -\nempty: 0 \nadd_bos: true\n",
                          N_TOKENS);
    EXPECT_EQ(got.len, n);
    EXPECT(memcmp(got.data, want, n) == 0);
    free(want);
    free(got.data);
    ggp_close(f);
    gw_free(&w);
    return 1;
}

int main(void)
{
    int ok = test_special_of_a_million_tokens();
    printf("special tokens: %s\n", ok ? "ok" : "FAILED");
    return ok ? 0 : 1;
}
