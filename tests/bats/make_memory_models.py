#!/usr/bin/env python3
"""Writes tiny llama.cpp-loadable models of twelve families, with random
weights, through ggml's own gguf writer (libggml-base.so, loaded with
ctypes): each family's keys and the tensors its llama.cpp loader asks for
(src/models/ARCH.cpp), small enough that loading takes well under a
second. They cover every architecture memory/ knows and each of its rules:
grouped-query attention (llama, qwen2), the proportions of real models (f16
matrices, a vocabulary well above the embedding: llama_f16), heads too small for a quantized
cache (llama_head8), head sizes given apart (qwen3),
experts (qwen3moe), sliding-window layers by default and by a given window
(gemma2, gemma3), an MLA cache (deepseek2), recurrent state without and
with groups (mamba, mamba2) and a hybrid whose conv layers have no KV heads
(lfm2). Deterministic.

usage: make_memory_models.py LIBGGML_BASE.so OUTDIR
       (writes OUTDIR/FAMILY.gguf for each family; the names on stdout)
"""
import ctypes
import os
import sys

import numpy as np

GGML_TYPE_F32 = 0
GGML_TYPE_F16 = 1
GGUF_TYPE_INT32 = 5
CONTEXT = 8192  # every family's trained context


class InitParams(ctypes.Structure):
    _fields_ = [("mem_size", ctypes.c_size_t), ("mem_buffer", ctypes.c_void_p), ("no_alloc", ctypes.c_bool)]


def load(path):
    g = ctypes.CDLL(path)
    g.ggml_init.restype = ctypes.c_void_p
    g.ggml_init.argtypes = [InitParams]
    g.ggml_new_tensor.restype = ctypes.c_void_p
    g.ggml_new_tensor.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_int, ctypes.POINTER(ctypes.c_int64)]
    g.ggml_set_name.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
    g.ggml_get_data.restype = ctypes.c_void_p
    g.ggml_get_data.argtypes = [ctypes.c_void_p]
    g.ggml_free.argtypes = [ctypes.c_void_p]
    g.gguf_init_empty.restype = ctypes.c_void_p
    g.gguf_free.argtypes = [ctypes.c_void_p]
    for fn, t in (("u32", ctypes.c_uint32), ("f32", ctypes.c_float), ("bool", ctypes.c_bool)):
        getattr(g, "gguf_set_val_" + fn).argtypes = [ctypes.c_void_p, ctypes.c_char_p, t]
    g.gguf_set_val_str.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p]
    g.gguf_set_arr_str.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_char_p), ctypes.c_size_t]
    g.gguf_set_arr_data.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t]
    g.gguf_add_tensor.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
    g.gguf_write_to_file.restype = ctypes.c_bool
    g.gguf_write_to_file.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_bool]
    return g


def byte_tokens():
    """GPT-2's byte alphabet: a printable character for each byte."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + \
        list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    by = dict(zip(bs, cs))
    return [chr(by[b]) for b in range(256)]


class Writer:
    def __init__(self, g, arch):
        self.g, self.arch = g, arch
        self.ctx = g.gguf_init_empty()
        self.tensors = []
        self.half = False  # matrices in f16, as real models have them
        self.extra_tokens = 0
        self.str("general.architecture", arch)
        self.str("general.name", "memory-" + arch)

    def key(self, k):
        return (k if k.startswith(("general.", "tokenizer.")) else self.arch + "." + k).encode()

    def u32(self, k, v):
        self.g.gguf_set_val_u32(self.ctx, self.key(k), v)

    def u32s(self, values):
        for k, v in values.items():
            self.u32(k, v)

    def f32(self, k, v):
        self.g.gguf_set_val_f32(self.ctx, self.key(k), v)

    def str(self, k, v):
        self.g.gguf_set_val_str(self.ctx, self.key(k), v.encode())

    def i32s(self, k, vs):
        a = (ctypes.c_int32 * len(vs))(*vs)
        self.g.gguf_set_arr_data(self.ctx, self.key(k), GGUF_TYPE_INT32, a, len(vs))

    def strs(self, k, vs):
        a = (ctypes.c_char_p * len(vs))(*[v.encode() for v in vs])
        self.g.gguf_set_arr_str(self.ctx, self.key(k), a, len(vs))

    def tensor(self, name, *ne):
        self.tensors.append((name, ne))

    def vocab(self):
        tokens = byte_tokens() + ["<s>", "</s>"] + ["<t%d>" % i for i in range(self.extra_tokens)]
        self.str("tokenizer.ggml.model", "gpt2")
        self.str("tokenizer.ggml.pre", "llama-bpe")
        self.strs("tokenizer.ggml.tokens", tokens)
        self.i32s("tokenizer.ggml.token_type", [1] * 256 + [3, 3] + [1] * self.extra_tokens)
        self.strs("tokenizer.ggml.merges", ["Ġ t", "h e"])
        self.u32("tokenizer.ggml.bos_token_id", 256)
        self.u32("tokenizer.ggml.eos_token_id", 257)
        return len(tokens)

    def write(self, path):
        rng = np.random.default_rng(sum(self.arch.encode()))
        total = sum(int(np.prod(ne)) * 4 + 1024 for _, ne in self.tensors)
        ggml = self.g.ggml_init(InitParams(total + 1024 * 1024, None, False))
        for name, ne in self.tensors:
            dims = (ctypes.c_int64 * len(ne))(*ne)
            half = self.half and len(ne) >= 2
            t = self.g.ggml_new_tensor(ggml, GGML_TYPE_F16 if half else GGML_TYPE_F32, len(ne), dims)
            self.g.ggml_set_name(t, name.encode())
            n = int(np.prod(ne))
            data = (rng.standard_normal(n) * 0.02).astype(np.float16 if half else np.float32)
            if name.endswith("norm.weight") or name.endswith("norm"):
                data = np.ones(n, np.float32)
            ctypes.memmove(self.g.ggml_get_data(t), data.ctypes.data, data.nbytes)
            self.g.gguf_add_tensor(self.ctx, t)
        tmp = path + ".tmp"
        if not self.g.gguf_write_to_file(self.ctx, tmp.encode(), False):
            sys.exit("cannot write " + tmp)
        os.replace(tmp, path)
        self.g.ggml_free(ggml)
        self.g.gguf_free(self.ctx)


def dims(w, embd, layers, ff, heads, heads_kv):
    """The keys every family has, and the vocabulary; its size."""
    w.u32("context_length", CONTEXT)
    w.u32("embedding_length", embd)
    w.u32("block_count", layers)
    w.u32("feed_forward_length", ff)
    if heads is not None:
        w.u32("attention.head_count", heads)
    if isinstance(heads_kv, list):
        w.i32s("attention.head_count_kv", heads_kv)
    elif heads_kv is not None:
        w.u32("attention.head_count_kv", heads_kv)
    w.f32("attention.layer_norm_rms_epsilon", 1e-5)
    return w.vocab()


def common(w, embd, layers, ff, heads, heads_kv, output=True):
    """dims, and the embedding and output tensors (output: an output
    matrix of its own, not the embedding's)."""
    vocab = dims(w, embd, layers, ff, heads, heads_kv)
    w.tensor("token_embd.weight", embd, vocab)
    w.tensor("output_norm.weight", embd)
    if output:
        w.tensor("output.weight", embd, vocab)
    return vocab


def attention(w, i, embd, q, k, v, norms=False):
    w.tensor(f"blk.{i}.attn_norm.weight", embd)
    w.tensor(f"blk.{i}.attn_q.weight", embd, q)
    w.tensor(f"blk.{i}.attn_k.weight", embd, k)
    w.tensor(f"blk.{i}.attn_v.weight", embd, v)
    w.tensor(f"blk.{i}.attn_output.weight", q, embd)
    if norms:
        w.tensor(f"blk.{i}.attn_q_norm.weight", norms)
        w.tensor(f"blk.{i}.attn_k_norm.weight", norms)


def ffn(w, i, embd, ff):
    w.tensor(f"blk.{i}.ffn_norm.weight", embd)
    w.tensor(f"blk.{i}.ffn_gate.weight", embd, ff)
    w.tensor(f"blk.{i}.ffn_up.weight", embd, ff)
    w.tensor(f"blk.{i}.ffn_down.weight", ff, embd)


def experts(w, i, embd, ff, n):
    w.tensor(f"blk.{i}.ffn_gate_inp.weight", embd, n)
    w.tensor(f"blk.{i}.ffn_gate_exps.weight", embd, ff, n)
    w.tensor(f"blk.{i}.ffn_up_exps.weight", embd, ff, n)
    w.tensor(f"blk.{i}.ffn_down_exps.weight", ff, embd, n)


def llama(g):  # grouped-query attention: 8 heads of 32, 2 of them for K and V
    w = Writer(g, "llama")
    common(w, 256, 3, 512, 8, 2)
    w.u32("rope.dimension_count", 32)
    for i in range(3):
        attention(w, i, 256, 256, 64, 64)
        ffn(w, i, 256, 512)
    return w


def llama_f16(g):  # shaped as real models are: f16 matrices, a vocabulary of 8192 well above the embedding
    w = Writer(g, "llama")
    w.half, w.extra_tokens = True, 8192 - 258
    common(w, 512, 4, 1536, 8, 2)
    w.u32("rope.dimension_count", 64)
    for i in range(4):
        attention(w, i, 512, 512, 128, 128)
        ffn(w, i, 512, 1536)
    return w


def llama_head8(g):  # heads of 8: llama.cpp refuses q8_0 and q4_0 caches (blocks of 32)
    w = Writer(g, "llama")
    common(w, 64, 2, 128, 8, 4)
    w.u32("rope.dimension_count", 8)
    for i in range(2):
        attention(w, i, 64, 64, 32, 32)
        ffn(w, i, 64, 128)
    return w


def qwen3(g):  # head size given apart from the embedding: 64 x 4 heads, 2 for K and V
    w = Writer(g, "qwen3")
    common(w, 128, 2, 256, 4, 2)
    w.u32s({"attention.key_length": 64, "attention.value_length": 64})
    for i in range(2):
        attention(w, i, 128, 256, 128, 128, norms=64)
        ffn(w, i, 128, 256)
    return w


def qwen2(g):
    w = Writer(g, "qwen2")
    common(w, 128, 2, 256, 4, 2)
    for i in range(2):
        attention(w, i, 128, 128, 64, 64)
        ffn(w, i, 128, 256)
    return w


def qwen3moe(g):
    w = Writer(g, "qwen3moe")
    common(w, 128, 2, 256, 4, 4)
    w.u32s({"attention.key_length": 32, "attention.value_length": 32, "expert_count": 4, "expert_used_count": 2,
            "expert_feed_forward_length": 64})
    for i in range(2):
        attention(w, i, 128, 128, 128, 128, norms=32)
        w.tensor(f"blk.{i}.ffn_norm.weight", 128)
        experts(w, i, 128, 64, 4)
    return w


def gemma3(g):  # 7 layers: 0-4 slide over 700 tokens, 5 attends fully, 6 slides
    w = Writer(g, "gemma3")
    common(w, 128, 7, 256, 4, 1)
    w.u32s({"attention.key_length": 32, "attention.value_length": 32, "attention.sliding_window": 700})
    for i in range(7):
        attention(w, i, 128, 128, 32, 32, norms=32)
        w.tensor(f"blk.{i}.post_attention_norm.weight", 128)
        ffn(w, i, 128, 256)
        w.tensor(f"blk.{i}.post_ffw_norm.weight", 128)
    return w


def gemma2(g, embd=128, layers=4, ff=256, heads=4, heads_kv=2, window=None):
    """Every other layer sliding; with no window given, llama.cpp's 4096."""
    head = embd // heads
    w = Writer(g, "gemma2")
    common(w, embd, layers, ff, heads, heads_kv, output=False)
    lengths = {"attention.key_length": head, "attention.value_length": head}
    if window:
        lengths["attention.sliding_window"] = window
    w.u32s(lengths)
    for i in range(layers):
        attention(w, i, embd, embd, heads_kv * head, heads_kv * head)
        w.tensor(f"blk.{i}.post_attention_norm.weight", embd)
        ffn(w, i, embd, ff)
        w.tensor(f"blk.{i}.post_ffw_norm.weight", embd)
    return w


def deepseek2(g, embd=128, heads=4, lora_q=64, lora_kv=64, rope=32, nope=32, v_mla=32, ff=256, expert_ff=64):
    """MLA: one cache row of kv_lora_rank + rope dims a layer, no V; a
    dense layer, then experts beside a shared one."""
    w = Writer(g, "deepseek2")
    common(w, embd, 2, ff, heads, 1)
    w.u32s({
        "attention.key_length": lora_kv + rope, "attention.value_length": lora_kv,
        "attention.key_length_mla": nope + rope, "attention.value_length_mla": v_mla,
        "attention.q_lora_rank": lora_q, "attention.kv_lora_rank": lora_kv, "rope.dimension_count": rope,
        "leading_dense_block_count": 1, "expert_count": 4, "expert_used_count": 2, "expert_shared_count": 1,
        "expert_feed_forward_length": expert_ff,
    })
    for i in range(2):
        w.tensor(f"blk.{i}.attn_norm.weight", embd)
        w.tensor(f"blk.{i}.attn_q_a_norm.weight", lora_q)
        w.tensor(f"blk.{i}.attn_kv_a_norm.weight", lora_kv)
        w.tensor(f"blk.{i}.attn_q_a.weight", embd, lora_q)
        w.tensor(f"blk.{i}.attn_q_b.weight", lora_q, heads * (nope + rope))
        w.tensor(f"blk.{i}.attn_kv_a_mqa.weight", embd, lora_kv + rope)
        w.tensor(f"blk.{i}.attn_k_b.weight", nope, lora_kv, heads)
        w.tensor(f"blk.{i}.attn_v_b.weight", lora_kv, v_mla, heads)
        w.tensor(f"blk.{i}.attn_output.weight", heads * v_mla, embd)
        if i == 0:
            ffn(w, i, embd, ff)
        else:
            w.tensor(f"blk.{i}.ffn_norm.weight", embd)
            experts(w, i, embd, expert_ff, 4)
            w.tensor(f"blk.{i}.ffn_gate_shexp.weight", embd, expert_ff)
            w.tensor(f"blk.{i}.ffn_up_shexp.weight", embd, expert_ff)
            w.tensor(f"blk.{i}.ffn_down_shexp.weight", expert_ff, embd)
    return w


def mamba(g, embd=256, layers=4, inner=512, conv=4, state=64, dt=16):
    """recurrent: conv and SSM state per layer, f32, no KV cache."""
    w = Writer(g, "mamba")
    common(w, embd, layers, 0, 0, 0)
    w.u32s({"ssm.conv_kernel": conv, "ssm.inner_size": inner, "ssm.state_size": state, "ssm.time_step_rank": dt})
    for i in range(layers):
        w.tensor(f"blk.{i}.attn_norm.weight", embd)
        w.tensor(f"blk.{i}.ssm_in.weight", embd, 2 * inner)
        w.tensor(f"blk.{i}.ssm_conv1d.weight", conv, inner)
        w.tensor(f"blk.{i}.ssm_conv1d.bias", inner)
        w.tensor(f"blk.{i}.ssm_x.weight", inner, dt + 2 * state)
        w.tensor(f"blk.{i}.ssm_dt.weight", dt, inner)
        w.tensor(f"blk.{i}.ssm_dt.bias", inner)
        w.tensor(f"blk.{i}.ssm_a", state, inner)
        w.tensor(f"blk.{i}.ssm_d", inner)
        w.tensor(f"blk.{i}.ssm_out.weight", inner, embd)
    return w


def mamba2(g):  # recurrent with groups: the conv state covers B and C of each group
    w = Writer(g, "mamba2")
    embd, inner, conv, state, groups, heads = 256, 512, 4, 128, 2, 8
    common(w, embd, 3, 0, 0, 0)
    w.u32s({"ssm.conv_kernel": conv, "ssm.inner_size": inner, "ssm.state_size": state,
            "ssm.time_step_rank": heads, "ssm.group_count": groups})
    conv_dim = inner + 2 * groups * state
    for i in range(3):
        w.tensor(f"blk.{i}.attn_norm.weight", embd)
        w.tensor(f"blk.{i}.ssm_in.weight", embd, inner + conv_dim + heads)
        w.tensor(f"blk.{i}.ssm_conv1d.weight", conv, conv_dim)
        w.tensor(f"blk.{i}.ssm_conv1d.bias", conv_dim)
        w.tensor(f"blk.{i}.ssm_dt.bias", heads)
        w.tensor(f"blk.{i}.ssm_a", 1, heads)
        w.tensor(f"blk.{i}.ssm_d", 1, heads)
        w.tensor(f"blk.{i}.ssm_norm.weight", inner // groups, groups)
        w.tensor(f"blk.{i}.ssm_out.weight", inner, embd)
    return w


def lfm2(g):  # hybrid: conv layers (no KV heads) and attention layers
    w = Writer(g, "lfm2")
    # a long conv cache, so that its state shows at the 0.01 MiB llama.cpp prints
    embd, lcache, kv = 128, 129, [0, 2, 0, 0, 2]
    vocab = dims(w, embd, len(kv), 256, 4, kv)
    w.u32("shortconv.l_cache", lcache)
    w.tensor("token_embd.weight", embd, vocab)
    w.tensor("token_embd_norm.weight", embd)
    for i, n in enumerate(kv):
        ffn(w, i, embd, 256)
        w.tensor(f"blk.{i}.attn_norm.weight", embd)
        if n:
            w.tensor(f"blk.{i}.attn_q_norm.weight", 32)
            w.tensor(f"blk.{i}.attn_k_norm.weight", 32)
            w.tensor(f"blk.{i}.attn_q.weight", embd, embd)
            w.tensor(f"blk.{i}.attn_k.weight", embd, 32 * n)
            w.tensor(f"blk.{i}.attn_v.weight", embd, 32 * n)
            w.tensor(f"blk.{i}.attn_output.weight", embd, embd)
        else:
            w.tensor(f"blk.{i}.shortconv.conv.weight", lcache, embd)
            w.tensor(f"blk.{i}.shortconv.in_proj.weight", embd, 3 * embd)
            w.tensor(f"blk.{i}.shortconv.out_proj.weight", embd, embd)
    return w


FAMILIES = [llama, llama_f16, llama_head8, qwen2, qwen3, qwen3moe, gemma2, gemma3, deepseek2, mamba, mamba2, lfm2]


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    g = load(sys.argv[1])
    os.makedirs(sys.argv[2], exist_ok=True)
    for family in FAMILIES:
        path = os.path.join(sys.argv[2], family.__name__ + ".gguf")
        family(g).write(path)
        print(path)


if __name__ == "__main__":
    main()
