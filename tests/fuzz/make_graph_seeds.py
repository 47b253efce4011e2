#!/usr/bin/env python3
"""Writes the memory harness's seeds that reach offload/'s graphs
(fs/model/llm_arches.c): tiny models with every weight their graph
needs, written with ggml's own writer as the memory suite's models are
(tests/bats/make_memory_models.py), so that the fuzzer starts from a
dense layer, experts, sliding windows, latent attention, per-layer
inputs, biased experts and sinks, an encoder, experts weighted first and
a delta net. Each is a
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
    w = m.Writer(g, "gemma2")
    m.common(w, EMBD, 2, FF, 2, 1, output=False)
    w.u32s({"attention.key_length": HEAD, "attention.value_length": HEAD, "attention.sliding_window": 64})
    for i in range(2):
        m.attention(w, i, EMBD, EMBD, HEAD, HEAD)
        w.tensor(f"blk.{i}.post_attention_norm.weight", EMBD)
        m.ffn(w, i, EMBD, FF)
        w.tensor(f"blk.{i}.post_ffw_norm.weight", EMBD)
    return w


def deepseek2(g):  # latent attention, a dense layer then experts
    w = m.Writer(g, "deepseek2")
    heads, lora_q, lora_kv, rope, nope, v_mla = 2, 8, 8, 4, 4, 4
    m.common(w, EMBD, 2, FF, heads, 1)
    w.u32s({
        "attention.key_length": lora_kv + rope, "attention.value_length": lora_kv,
        "attention.key_length_mla": nope + rope, "attention.value_length_mla": v_mla,
        "attention.q_lora_rank": lora_q, "attention.kv_lora_rank": lora_kv, "rope.dimension_count": rope,
        "leading_dense_block_count": 1, "expert_count": 4, "expert_used_count": 2, "expert_shared_count": 1,
        "expert_feed_forward_length": 8,
    })
    for i in range(2):
        w.tensor(f"blk.{i}.attn_norm.weight", EMBD)
        w.tensor(f"blk.{i}.attn_q_a_norm.weight", lora_q)
        w.tensor(f"blk.{i}.attn_kv_a_norm.weight", lora_kv)
        w.tensor(f"blk.{i}.attn_q_a.weight", EMBD, lora_q)
        w.tensor(f"blk.{i}.attn_q_b.weight", lora_q, heads * (nope + rope))
        w.tensor(f"blk.{i}.attn_kv_a_mqa.weight", EMBD, lora_kv + rope)
        w.tensor(f"blk.{i}.attn_k_b.weight", nope, lora_kv, heads)
        w.tensor(f"blk.{i}.attn_v_b.weight", lora_kv, v_mla, heads)
        w.tensor(f"blk.{i}.attn_output.weight", heads * v_mla, EMBD)
        if i == 0:
            m.ffn(w, i, EMBD, FF)
        else:
            w.tensor(f"blk.{i}.ffn_norm.weight", EMBD)
            m.experts(w, i, EMBD, 8, 4)
            w.tensor(f"blk.{i}.ffn_gate_shexp.weight", EMBD, 8)
            w.tensor(f"blk.{i}.ffn_up_shexp.weight", EMBD, 8)
            w.tensor(f"blk.{i}.ffn_down_shexp.weight", 8, EMBD)
    return w


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


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    g = m.load(sys.argv[1])
    for family in (llama, qwen3moe, gemma2, deepseek2, gemma4, gpt_oss, bert, llama4, qwen3next):
        family(g).write(os.path.join(sys.argv[2], "graph-" + family.__name__.replace("_", "-")))


if __name__ == "__main__":
    main()
