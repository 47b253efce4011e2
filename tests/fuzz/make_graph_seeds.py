#!/usr/bin/env python3
"""Writes the memory harness's seeds that reach offload/'s graphs
(fs/model/llm_arches.c): tiny models with every weight their graph
needs, written with ggml's own writer as the memory suite's models are
(tests/bats/make_memory_models.py), so that the fuzzer starts from a
dense layer, experts, sliding windows and latent attention. Each is a
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


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    g = m.load(sys.argv[1])
    for family in (llama, qwen3moe, gemma2, deepseek2):
        family(g).write(os.path.join(sys.argv[2], "graph-" + family.__name__))


if __name__ == "__main__":
    main()
