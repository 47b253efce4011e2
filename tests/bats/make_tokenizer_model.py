#!/usr/bin/env python3
"""make_tokenizer_model.py OUT KIND: writes a small GGUF model (one f32
tensor) with a hand-made tokenizer, and prints, one line per key, the key
and the file offset of the key (its length field), as warnings names it.

KIND special: seven tokens (escapes: a tab, a newline, a control byte;
a type llama.cpp does not name), scores, special ids inside and outside the
vocabulary and llama.cpp's "none" as u32 and i32, add_bos and add_eos, and
a BPE model ("gpt2") without tokenizer.ggml.pre.
KIND bare: two tokens, no types, no scores, no special ids; a BPE model
with its pre-tokenizer."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'hostile'))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_hostile import V, Gguf  # noqa: E402
from make_template_model import write_model  # noqa: E402

TOKENS = ['<unk>', '<s>', '</s>', 'a\tb', 'new\nline', '\u00e9', '\x01']


def special():
    return [
        ('general.architecture', 'str', 'llama'),
        ('tokenizer.ggml.model', 'str', 'gpt2'),
        ('tokenizer.ggml.tokens', ('arr', 'str'), TOKENS),
        ('tokenizer.ggml.token_type', ('arr', 'i32'), [2, 3, 3, 1, 4, 6, 9]),
        ('tokenizer.ggml.scores', ('arr', 'f32'), [0, 0, 0, -1.5, 0.25, 1e-05, -3]),
        ('tokenizer.ggml.bos_token_id', 'u32', 1),
        ('tokenizer.ggml.eos_token_id', 'u32', 7),
        ('tokenizer.ggml.eot_token_id', 'u32', 4294967295),
        ('tokenizer.ggml.padding_token_id', 'i32', -1),
        ('tokenizer.ggml.unknown_token_id', 'i32', -5),
        ('tokenizer.ggml.seperator_token_id', 'u32', 3),
        ('tokenizer.ggml.odd_token_id', 'str', '3'),
        ('tokenizer.ggml.add_bos_token', 'bool', True),
        ('tokenizer.ggml.add_eos_token', 'bool', False),
    ]


def bare():
    return [
        ('general.architecture', 'str', 'llama'),
        ('tokenizer.ggml.model', 'str', 'gpt2'),
        ('tokenizer.ggml.pre', 'str', 'llama-bpe'),
        ('tokenizer.ggml.tokens', ('arr', 'str'), ['x', 'y']),
    ]


def main():
    out, kind = sys.argv[1], sys.argv[2]
    keys = {'special': special, 'bare': bare}[kind]()
    g = Gguf()
    g.header(1, len(keys))
    offsets = []
    for key, vtype, value in keys:
        offsets.append((key, len(g.b)))
        if isinstance(vtype, tuple):
            g.kv_array(key, V[vtype[1]], value)
        else:
            g.kv(key, V[vtype], value)
    write_model(g, out, offsets)


if __name__ == '__main__':
    main()
