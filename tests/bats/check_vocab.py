#!/usr/bin/env python3
"""check_vocab.py DIR...: each DIR is a mounted model with a vocabulary;
its tokenizer/vocab.tsv must be, line for line, the arrays of metadata/:
the id, tokenizer.ggml.token_type's number as llama.cpp names it (empty
without the key), tokenizer.ggml.scores' line (empty without), and
tokenizer.ggml.tokens' line (the same escapes); and its size in stat must
be the bytes read. Prints the models and tokens checked."""

import os
import sys

NAMES = {1: 'normal', 2: 'unknown', 3: 'control', 4: 'user_defined', 5: 'unused', 6: 'byte'}


def lines(path):
    """The lines of a metadata/ array file, or None without the key."""
    if not os.path.exists(path):
        return None
    with open(path, 'rb') as f:
        data = f.read()
    return data.split(b'\n')[:-1] if data else []


def check(model):
    meta = os.path.join(model, 'metadata')
    tokens = lines(os.path.join(meta, 'tokenizer.ggml.tokens'))
    types = lines(os.path.join(meta, 'tokenizer.ggml.token_type'))
    scores = lines(os.path.join(meta, 'tokenizer.ggml.scores'))
    path = os.path.join(model, 'tokenizer', 'vocab.tsv')
    with open(path, 'rb') as f:
        data = f.read()
    if os.stat(path).st_size != len(data):
        sys.exit(f'{path}: stat says {os.stat(path).st_size} bytes, read {len(data)}')
    rows = data.split(b'\n')
    if rows[-1] != b'' or rows[0] != b'id\ttype\tscore\ttoken':
        sys.exit(f'{path}: no header, or no newline at the end')
    rows = rows[1:-1]
    if len(rows) != len(tokens):
        sys.exit(f'{path}: {len(rows)} lines for {len(tokens)} tokens')
    for i, row in enumerate(rows):
        if types is None:
            want_type = b''
        else:
            number = int(types[i])
            want_type = NAMES[number].encode() if number in NAMES else types[i]
        want = [str(i).encode(), want_type, b'' if scores is None else scores[i], tokens[i]]
        if row.split(b'\t') != want:
            sys.exit(f'{path}: line {i + 2} is {row!r}, expected {want!r}')
    return len(rows)


def main():
    n = sum(check(d) for d in sys.argv[1:])
    print(f'{len(sys.argv) - 1} models, {n} tokens')
    if len(sys.argv) < 2 or n == 0:
        sys.exit('no vocabulary checked')


if __name__ == '__main__':
    main()
