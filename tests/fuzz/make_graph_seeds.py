#!/usr/bin/env python3
"""Writes the memory harness's seeds that reach offload/'s graphs
(fs/model/llm_arches.c): tiny models with every weight their graph
needs, written with ggml's own writer as the memory suite's models are
(tests/bats/make_memory_models.py), so that the fuzzer starts from a
dense layer, experts, sliding windows, latent attention, per-layer
inputs, biased experts and sinks, an encoder, experts weighted first, a
delta net, Mamba-1, the RWKVs, T5's decoder, hrm_text's passes, lightning
attention and wavtokenizer-dec's convolutions. Each is a
few tens of kilobytes.

usage: make_graph_seeds.py LIBGGML_BASE OUTDIR
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bats"))
import make_memory_models as m  # noqa: E402

EMBD, FF, HEAD = 16, 32, 8


def llama(g):
    w = m.Writer(g, "llama")
    m.common(w, EMBD, 2, FF, 2, 1)
    w.u32("rope.dimension_count", HEAD)
    for i in range(2):
        m.attention(w, i, EMBD, EMBD, HEAD, HEAD)
        m.ffn(w, i, EMBD, FF)
    return w


def qwen3moe(g):
    w = m.Writer(g, "qwen3moe")
    m.common(w, EMBD, 2, FF, 2, 1)
    w.u32s({"attention.key_length": HEAD, "attention.value_length": HEAD, "expert_count": 4,
            "expert_used_count": 2, "expert_feed_forward_length": 8})
    for i in range(2):
        m.attention(w, i, EMBD, EMBD, HEAD, HEAD, norms=HEAD)
        w.tensor(f"blk.{i}.ffn_norm.weight", EMBD)
        m.experts(w, i, EMBD, 8, 4)
    return w


def gemma2(g):  # every other layer slides
    return m.gemma2(g, EMBD, 2, FF, 2, 1, window=64)


def deepseek2(g):  # latent attention, a dense layer then experts
    return m.deepseek2(g, EMBD, 2, 8, 8, 4, 4, 4, FF, 8)


def gemma4(g):  # per-layer inputs, V from K, a sliding and a full layer
    w = m.Writer(g, "gemma4")
    per_layer = 4
    vocab = m.common(w, EMBD, 2, FF, 2, 1, output=False)
    w.u32s({"attention.key_length": HEAD, "attention.value_length": HEAD, "attention.key_length_swa": HEAD,
            "attention.value_length_swa": HEAD, "attention.sliding_window": 64,
            "embedding_length_per_layer_input": per_layer})
    w.i32s("attention.sliding_window_pattern", [1, 0])
    w.tensor("per_layer_token_embd.weight", per_layer * 2, vocab)
    w.tensor("per_layer_model_proj.weight", EMBD, per_layer * 2)
    w.tensor("per_layer_proj_norm.weight", per_layer)
    w.tensor("rope_freqs.weight", HEAD // 2)
    for i in range(2):
        w.tensor(f"blk.{i}.attn_norm.weight", EMBD)
        w.tensor(f"blk.{i}.attn_q.weight", EMBD, 2 * HEAD)
        w.tensor(f"blk.{i}.attn_k.weight", EMBD, HEAD)
        w.tensor(f"blk.{i}.attn_output.weight", 2 * HEAD, EMBD)
        w.tensor(f"blk.{i}.attn_q_norm.weight", HEAD)
        w.tensor(f"blk.{i}.attn_k_norm.weight", HEAD)
        w.tensor(f"blk.{i}.post_attention_norm.weight", EMBD)
        m.ffn(w, i, EMBD, FF)
        w.tensor(f"blk.{i}.post_ffw_norm.weight", EMBD)
        w.tensor(f"blk.{i}.inp_gate.weight", EMBD, per_layer)
        w.tensor(f"blk.{i}.proj.weight", per_layer, EMBD)
        w.tensor(f"blk.{i}.post_norm.weight", EMBD)
    return w


def gpt_oss(g):  # biases of the router and the experts, sinks, every other layer sliding
    w = m.Writer(g, "gpt-oss")
    m.common(w, EMBD, 2, FF, 2, 1)
    w.u32s({"attention.key_length": HEAD, "attention.value_length": HEAD, "attention.sliding_window": 64,
            "expert_count": 4, "expert_used_count": 2, "expert_feed_forward_length": 8})
    for i in range(2):
        m.attention(w, i, EMBD, 2 * HEAD, HEAD, HEAD)
        w.tensor(f"blk.{i}.attn_output.bias", EMBD)
        w.tensor(f"blk.{i}.attn_sinks.weight", 2)
        w.tensor(f"blk.{i}.post_attention_norm.weight", EMBD)
        m.experts(w, i, EMBD, 8, 4)
        w.tensor(f"blk.{i}.ffn_gate_inp.bias", 4)
        for kind in ("gate", "up"):
            w.tensor(f"blk.{i}.ffn_{kind}_exps.bias", 8, 4)
        w.tensor(f"blk.{i}.ffn_down_exps.bias", EMBD, 4)
    return w


def bert(g):  # an encoder: no cache, positions and token types, norms after each sum
    w = m.Writer(g, "bert")
    m.common(w, EMBD, 2, FF, 2, 2, output=False)
    w.tensor("position_embd.weight", EMBD, 64)
    w.tensor("token_types.weight", EMBD, 2)
    w.tensor("token_embd_norm.weight", EMBD)
    w.tensor("token_embd_norm.bias", EMBD)
    for i in range(2):
        for kind in ("q", "k", "v"):
            w.tensor(f"blk.{i}.attn_{kind}.weight", EMBD, EMBD)
            w.tensor(f"blk.{i}.attn_{kind}.bias", EMBD)
        w.tensor(f"blk.{i}.attn_output.weight", EMBD, EMBD)
        w.tensor(f"blk.{i}.attn_output_norm.weight", EMBD)
        w.tensor(f"blk.{i}.attn_output_norm.bias", EMBD)
        w.tensor(f"blk.{i}.ffn_up.weight", EMBD, FF)
        w.tensor(f"blk.{i}.ffn_down.weight", FF, EMBD)
        w.tensor(f"blk.{i}.layer_output_norm.weight", EMBD)
        w.tensor(f"blk.{i}.layer_output_norm.bias", EMBD)
    return w


def llama4(g):  # a dense layer, then experts weighted before them beside a shared one
    w = m.Writer(g, "llama4")
    m.common(w, EMBD, 2, FF, 2, 1)
    w.u32s({"attention.key_length": HEAD, "attention.value_length": HEAD, "rope.dimension_count": HEAD,
            "interleave_moe_layer_step": 2, "expert_count": 4, "expert_used_count": 1,
            "expert_feed_forward_length": 8})
    for i in range(2):
        m.attention(w, i, EMBD, 2 * HEAD, HEAD, HEAD)
        if i == 0:
            m.ffn(w, i, EMBD, FF)
        else:
            w.tensor(f"blk.{i}.ffn_norm.weight", EMBD)
            m.experts(w, i, EMBD, 8, 4)
            for kind in ("gate", "up"):
                w.tensor(f"blk.{i}.ffn_{kind}_shexp.weight", EMBD, 8)
            w.tensor(f"blk.{i}.ffn_down_shexp.weight", 8, EMBD)
    return w


def qwen3next(g):  # a delta net whose Q and K have fewer heads than V, beside an attention layer
    w = m.Writer(g, "qwen3next")
    heads, state, d_conv = 2, HEAD, 4
    d_inner = heads * state
    channels = d_inner + 2 * state  # one group of Q and K heads
    m.common(w, EMBD, 2, FF, 2, 1)
    w.u32s({"attention.key_length": HEAD, "attention.value_length": HEAD, "rope.dimension_count": HEAD,
            "ssm.conv_kernel": d_conv, "ssm.inner_size": d_inner, "ssm.state_size": state,
            "ssm.time_step_rank": heads, "ssm.group_count": 1})
    w.i32s("attention.recurrent_layers", [1, 0])
    w.tensor("blk.0.attn_norm.weight", EMBD)
    w.tensor("blk.0.attn_qkv.weight", EMBD, channels)
    w.tensor("blk.0.attn_gate.weight", EMBD, d_inner)
    w.tensor("blk.0.ssm_ba.weight", EMBD, 2 * heads)
    w.tensor("blk.0.ssm_conv1d.weight", d_conv, channels)
    w.tensor("blk.0.ssm_dt.bias", heads)
    w.tensor("blk.0.ssm_a", heads)
    w.tensor("blk.0.ssm_norm.weight", state)
    w.tensor("blk.0.ssm_out.weight", d_inner, EMBD)
    w.tensor("blk.1.attn_norm.weight", EMBD)
    w.tensor("blk.1.attn_q.weight", EMBD, 2 * 2 * HEAD)
    w.tensor("blk.1.attn_k.weight", EMBD, HEAD)
    w.tensor("blk.1.attn_v.weight", EMBD, HEAD)
    w.tensor("blk.1.attn_output.weight", 2 * HEAD, EMBD)
    w.tensor("blk.1.attn_q_norm.weight", HEAD)
    w.tensor("blk.1.attn_k_norm.weight", HEAD)
    for i in range(2):
        w.tensor(f"blk.{i}.post_attention_norm.weight", EMBD)
        w.tensor(f"blk.{i}.ffn_gate.weight", EMBD, FF)
        w.tensor(f"blk.{i}.ffn_up.weight", EMBD, FF)
        w.tensor(f"blk.{i}.ffn_down.weight", FF, EMBD)
    return w


def mamba(g):  # Mamba-1: a scan of a matrix A, which the GPU has no shader for
    return m.mamba(g, EMBD, 2, 32, 4, 8, 4)


def rwkv(g, arch):  # time mixes (wkv6 or wkv7), channel mixes, two token shifts a layer
    w = m.Writer(g, arch)
    v7, extra = arch == "rwkv7", 4
    vocab = m.dims(w, EMBD, 2, FF, 0, 0)
    w.u32s({"wkv.head_size": HEAD, "token_shift_count": 2})
    w.tensor("token_embd.weight", EMBD, vocab)
    for name in ("token_embd_norm", "output_norm"):
        w.tensor(name + ".weight", EMBD)
        w.tensor(name + ".bias", EMBD)
    w.tensor("output.weight", EMBD, vocab)
    for i in range(2):
        t = f"blk.{i}.time_mix_"
        for name in ("attn_norm", "attn_norm_2", "time_mix_ln"):
            w.tensor(f"blk.{i}.{name}.weight", EMBD)
            w.tensor(f"blk.{i}.{name}.bias", EMBD)
        for name in ("receptance", "key", "value", "output"):
            w.tensor(t + name + ".weight", EMBD, EMBD)
        if v7:
            w.tensor(t + "lerp_fused.weight", EMBD, 1, 1, 6)
            for x in ("w", "a", "v", "g"):
                w.tensor(t + x + "1.weight", EMBD, extra)
                w.tensor(t + x + "2.weight", extra, EMBD)
            for x in ("w0", "a0", "v0", "k_k", "k_a"):
                w.tensor(t + x + ".weight", EMBD)
            w.tensor(t + "r_k.weight", HEAD, EMBD // HEAD)
        else:
            w.tensor(t + "lerp_x.weight", EMBD)
            w.tensor(t + "lerp_fused.weight", EMBD, 1, 1, 5)
            w.tensor(t + "w1.weight", EMBD, 5 * extra)
            w.tensor(t + "w2.weight", extra, EMBD, 5)
            w.tensor(t + "decay.weight", EMBD)
            w.tensor(t + "decay_w1.weight", EMBD, extra)
            w.tensor(t + "decay_w2.weight", extra, EMBD)
            w.tensor(t + "first.weight", HEAD, EMBD // HEAD)
            w.tensor(t + "gate.weight", EMBD, EMBD)
            w.tensor(f"blk.{i}.channel_mix_lerp_r.weight", EMBD)
            w.tensor(f"blk.{i}.channel_mix_receptance.weight", EMBD, EMBD)
        w.tensor(f"blk.{i}.channel_mix_lerp_k.weight", EMBD)
        w.tensor(f"blk.{i}.channel_mix_key.weight", EMBD, FF)
        w.tensor(f"blk.{i}.channel_mix_value.weight", FF, EMBD)
    return w


def rwkv6(g):
    return rwkv(g, "rwkv6")


def rwkv7(g):
    return rwkv(g, "rwkv7")


def t5(g):  # a decoder: self attention biased by position buckets, cross attention over the encoder's output
    w = m.Writer(g, "t5")
    vocab = m.dims(w, EMBD, 2, FF, 2, 2)
    w.u32s({"attention.key_length": HEAD, "attention.value_length": HEAD, "attention.relative_buckets_count": 8})
    w.tensor("token_embd.weight", EMBD, vocab)
    w.tensor("dec.output_norm.weight", EMBD)
    for i in range(2):
        d = f"dec.blk.{i}."
        for name in ("attn", "cross_attn"):
            for x in ("q", "k", "v"):
                w.tensor(d + f"{name}_{x}.weight", EMBD, EMBD)
            w.tensor(d + f"{name}_o.weight", EMBD, EMBD)
            w.tensor(d + f"{name}_norm.weight", EMBD)
        w.tensor(d + "ffn_norm.weight", EMBD)
        w.tensor(d + "ffn_up.weight", EMBD, FF)
        w.tensor(d + "ffn_down.weight", FF, EMBD)
    w.tensor("dec.blk.0.attn_rel_b.weight", 2, 8)
    return w


def hrm_text(g):  # passes of stacks reusing the first passes' layers
    w = m.Writer(g, "hrm_text")
    stack, high, low = 1, 2, 1
    m.common(w, EMBD, stack * high * (low + 1), FF, 2, 2)
    w.u32s({"attention.key_length": HEAD, "attention.value_length": HEAD, "rope.dimension_count": HEAD,
            "hrm.layers_per_stack": stack, "hrm.h_cycles": high, "hrm.l_cycles": low})
    w.tensor("hrm.z_l_init", EMBD)
    for i in range(2 * stack):
        m.attention(w, i, EMBD, EMBD, EMBD, EMBD)
        w.tensor(f"blk.{i}.attn_gate.weight", EMBD, EMBD)
        m.ffn(w, i, EMBD, FF)
    return w


def minimax_01(g):  # lightning attention, then an attention layer; experts
    w = m.Writer(g, "minimax-01")
    m.common(w, EMBD, 2, FF, 2, 2)
    w.u32s({"attention.key_length": HEAD, "attention.value_length": HEAD, "rope.dimension_count": HEAD,
            "expert_count": 2, "expert_used_count": 2, "expert_feed_forward_length": FF})
    w.f32("residual_scale", 1.0)
    w.i32s("attention.recurrent_layers", [1, 0])
    w.tensor("blk.0.attn_norm.weight", EMBD)
    w.tensor("blk.0.attn_norm_2.weight", EMBD)
    w.tensor("blk.0.attn_qkv.weight", EMBD, 3 * EMBD)
    w.tensor("blk.0.attn_gate.weight", EMBD, EMBD)
    w.tensor("blk.0.attn_output.weight", EMBD, EMBD)
    m.attention(w, 1, EMBD, EMBD, EMBD, EMBD)
    for i in range(2):
        w.tensor(f"blk.{i}.ffn_norm.weight", EMBD)
        m.experts(w, i, EMBD, FF, 2)
    return w


def wavtokenizer_dec(g):  # convolutions: im2col and a product, group norms, ConvNeXt blocks
    w = m.Writer(g, "wavtokenizer-dec")
    vocab = m.dims(w, EMBD, 2, FF, 1, 1)
    w.u32s({"posnet.block_count": 2, "convnext.block_count": 2, "posnet.embedding_length": EMBD,
            "convnext.embedding_length": EMBD})
    w.u32("attention.group_norm_groups", 4)
    w.f32("attention.group_norm_epsilon", 1e-6)
    w.f32("attention.layer_norm_epsilon", 1e-6)
    w.tensor("token_embd.weight", EMBD, vocab)
    for name in ("token_embd_norm", "output_norm"):
        w.tensor(name + ".weight", EMBD)
        w.tensor(name + ".bias", EMBD)
    w.tensor("conv1d.weight", 7, EMBD, EMBD)
    w.tensor("conv1d.bias", 1, EMBD)
    w.tensor("output.weight", EMBD, EMBD)
    w.tensor("output.bias", EMBD)
    for i in range(2):
        p = f"posnet.{i}."
        for n in ("norm1", "norm2"):
            w.tensor(p + n + ".weight", 1, EMBD)
            w.tensor(p + n + ".bias", 1, EMBD)
        for n in ("conv1", "conv2"):
            w.tensor(p + n + ".weight", 3, EMBD, EMBD)
            w.tensor(p + n + ".bias", 1, EMBD)
        c = f"convnext.{i}."
        w.tensor(c + "dw.weight", 7, 1, EMBD)
        w.tensor(c + "dw.bias", 1, EMBD)
        for n in ("norm.weight", "norm.bias", "gamma.weight"):
            w.tensor(c + n, EMBD)
        w.tensor(c + "pw1.weight", EMBD, FF)
        w.tensor(c + "pw1.bias", FF)
        w.tensor(c + "pw2.weight", FF, EMBD)
        w.tensor(c + "pw2.bias", EMBD)
    return w


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    g = m.load(sys.argv[1])
    for family in (llama, qwen3moe, gemma2, deepseek2, gemma4, gpt_oss, bert, llama4, qwen3next, mamba, rwkv6, rwkv7,
                   t5, hrm_text, minimax_01, wavtokenizer_dec):
        family(g).write(os.path.join(sys.argv[2], "graph-" + family.__name__.replace("_", "-")))


if __name__ == "__main__":
    main()
