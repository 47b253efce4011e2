#!/usr/bin/env python3
"""Checks the views for tools that the parser renders (through views_dump)
against ggml's own reading of the fixtures and against what the tools
users reach for make of them:

- metadata.json, read by Python's json (every number's exact text, NaN,
  Infinity, strings back to their bytes through surrogateescape) and by jq,
  against ggml's reading of metadata.gguf (X.expected) and its big-endian,
  v1 and v2 variants; and a file with what ggml cannot write: nested
  arrays, u64 above 2^53, NaN payloads, invalid UTF-8 in keys, a repeated key;
- tensors.tsv, read by Python's csv and by awk, against ggml's X.tensors;
- f32.npy of every tensor of every type, through numpy.load with and
  without mmap_mode, against ggml's to_float (X.ref), bit for bit;
- stats of every tensor against numpy on the same values;
- warnings of files with a chat template that reaches for Python's
  internals, a repeated key, overlapping tensors, an
  ik_llama.cpp type, an unknown type and trailing bytes.

usage: check_views.py VIEWS_DUMP FIXTURES
Prints one line per failure; exits 1 if any.
"""
import csv
import io
import json
import math
import os
import re
import struct
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, '..', 'bats'))
sys.path.insert(0, os.path.join(HERE, '..', 'hostile'))
from spec_render import shortest  # noqa: E402
from make_hostile import Gguf, V  # noqa: E402

failures = 0


def fail(msg):
    global failures
    failures += 1
    print(msg)


def dump(tool, path, *args, scalar=False):
    cmd = [tool] + (['--scalar'] if scalar else []) + [path] + list(args)
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if r.returncode != 0:
        fail(f'{" ".join(cmd)}: exit {r.returncode}: {r.stderr.decode(errors="replace").strip()}')
    return r.stdout


# ==== metadata.json ====

def tokens(text):
    """json.loads keeping each number's and constant's literal text, and the
    key order."""
    return json.loads(text, parse_int=lambda s: ('num', s), parse_float=lambda s: ('num', s),
                      parse_constant=lambda s: ('num', s), object_pairs_hook=list)


def to_bytes(s):
    return s.encode('utf-8', 'surrogateescape')


def float_text(x, single):
    """The JSON text SPEC asks for a float: the metadata file's text, with
    JSON's names for the non-finite."""
    if math.isnan(x):
        return 'NaN'
    if math.isinf(x):
        return '-Infinity' if x < 0 else 'Infinity'
    return shortest(x, single)


def expected_scalar(t, v):
    """ggml's reading of a scalar (X.expected form) as the token json
    gives for it."""
    if t in ('f32', 'f64'):
        bits = int(v, 16)
        x = struct.unpack('<f', struct.pack('<I', bits))[0] if t == 'f32' else \
            struct.unpack('<d', struct.pack('<Q', bits))[0]
        return ('num', float_text(x, t == 'f32'))
    if t == 'bool':
        return v == '1'
    if t == 'str':
        return bytes.fromhex(v)
    return ('num', v)


def expected_value(t, v):
    if not t.startswith('arr['):
        return expected_scalar(t, v)
    et = t[4:-1]
    count, _, rest = v.partition(':')
    return [expected_scalar(et, x) for x in (rest.split(',') if int(count) else [])]


def normalise(v):
    """A parsed JSON value with strings turned back into their bytes."""
    if isinstance(v, str):
        return to_bytes(v)
    if isinstance(v, list):
        return [normalise(x) for x in v]
    return v


def jq_model(v):
    """What jq 1.6 prints for a value: numbers are doubles (NaN is null,
    infinities the largest double), lone surrogates are U+FFFD."""
    if isinstance(v, tuple):
        x = float(v[1].replace('Infinity', 'inf').replace('NaN', 'nan'))
        if math.isnan(x):
            return None
        if math.isinf(x):
            return math.copysign(1.7976931348623157e308, x)
        return x
    if isinstance(v, bytes):
        return re.sub('[\udc80-\udcff]', '\ufffd', v.decode('utf-8', 'surrogateescape'))
    if isinstance(v, list):
        return [jq_model(x) for x in v]
    return v


def jq_value(v):
    if isinstance(v, bool) or v is None or isinstance(v, str):
        return v
    if isinstance(v, (int, float)):
        return float(v)
    return [jq_value(x) for x in v]


def check_json_against(label, text, want):
    """text: metadata.json; want: [(key bytes, expected value)] in order."""
    try:
        got = tokens(text.decode('utf-8'))
    except ValueError as e:
        fail(f'{label}: metadata.json does not parse: {e}')
        return
    got = [(to_bytes(k), normalise(v)) for k, v in got]
    if [k for k, _ in got] != [k for k, _ in want]:
        fail(f'{label}: keys {[k for k, _ in got][:5]}..., expected {[k for k, _ in want][:5]}...')
        return
    for (k, g), (_, w) in zip(got, want):
        if g != w:
            fail(f'{label}: {k!r} is {str(g)[:200]}, expected {str(w)[:200]}')
    # jq reads the same text, and every value is what jq makes of ours.
    with tempfile.NamedTemporaryFile(suffix='.json') as tmp:
        tmp.write(text)
        tmp.flush()
        r = subprocess.run(['jq', '-c', '[to_entries[] | [.key, .value]]', tmp.name],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        if r.returncode != 0:
            fail(f'{label}: jq: {r.stderr.decode(errors="replace")}')
            return
        by_jq = json.loads(r.stdout)
        for (k, g), (_, w) in zip(by_jq, want):
            if jq_value(g) != jq_model(w):
                fail(f'{label}: jq reads {k!r} as {str(g)[:200]}, expected {str(jq_model(w))[:200]}')
        if len(by_jq) != len(want):
            fail(f'{label}: jq sees {len(by_jq)} keys, expected {len(want)}')
        for key, value in ((b'general.architecture', b'llama'),):
            if key in dict(want):
                r = subprocess.run(['jq', '-r', '."%s"' % key.decode(), tmp.name], stdout=subprocess.PIPE)
                if r.stdout != value + b'\n':
                    fail(f'{label}: jq -r \'."{key.decode()}"\' prints {r.stdout!r}')


def check_metadata_fixture(tool, fixtures):
    want = []
    for line in open(os.path.join(fixtures, 'metadata.expected')):
        k, t, v = line.rstrip('\n').split('\t')
        want.append((bytes.fromhex(k), expected_value(t, v)))
    for variant in ('', 'be', 'be-old', 'v1', 'v2'):
        path = os.path.join(fixtures, variant, 'metadata.gguf')
        check_json_against(f'{variant or "."}/metadata.gguf', dump(tool, path, 'metadata.json'), want)


def check_metadata_beyond_ggml(tool, tmp):
    """Values ggml's writer cannot make: nested arrays, repeated keys,
    invalid UTF-8 in keys, NaN payloads."""
    g = Gguf()
    g.header(0, 10)
    g.kv('u64.max', V['u64'], 2**64 - 1)
    g.kv('u64.2^53+1', V['u64'], 2**53 + 1)
    g.kv('i64.min', V['i64'], -2**63)
    g.kv('f32.nan_payload', V['f32'], struct.unpack('<f', struct.pack('<I', 0xffc12345))[0])
    g.kv('f64.neg_inf', V['f64'], -math.inf)
    g.kv(b'key \xfe\x80 "q"', V['str'], b'v\xc3\x28\x00\n')
    g.string('nested')
    g.u32(V['arr'])
    g.u32(V['arr']); g.count(3)
    g.u32(V['i16']); g.count(2); g.raw(struct.pack('<hh', -1, 300))
    g.u32(V['str']); g.count(0)
    g.u32(V['arr']); g.count(1)
    g.u32(V['str']); g.count(2); g.string(b'a\xff'); g.string('\t')
    g.kv_array('floats', V['f64'], [0.1, -0.0, 1e300, math.nan])
    g.kv('u64.max', V['u8'], 7)  # a repeat: not in metadata.json
    g.kv_array('bools', V['bool'], [1, 0])
    path = os.path.join(tmp, 'beyond.gguf')
    open(path, 'wb').write(g.b)
    want = [
        (b'u64.max', ('num', '18446744073709551615')),
        (b'u64.2^53+1', ('num', '9007199254740993')),
        (b'i64.min', ('num', '-9223372036854775808')),
        (b'f32.nan_payload', ('num', 'NaN')),
        (b'f64.neg_inf', ('num', '-Infinity')),
        (b'key \xfe\x80 "q"', b'v\xc3\x28\x00\n'),
        (b'nested', [[('num', '-1'), ('num', '300')], [], [[b'a\xff', b'\t']]]),
        (b'floats', [('num', '0.1'), ('num', '-0'), ('num', '1e+300'), ('num', 'NaN')]),
        (b'bools', [True, False]),
    ]
    text = dump(tool, path, 'metadata.json')
    check_json_against('beyond.gguf', text, want)
    # Python's json gives u64 exactly.
    if json.loads(text)['u64.max'] != 2**64 - 1 or json.loads(text)['u64.2^53+1'] != 2**53 + 1:
        fail('beyond.gguf: Python json does not read the u64 values exactly')


# ==== tensors ====

def fixture_types(fixtures):
    """type id -> ggml name, from the type-NAME.tensors files."""
    names = {}
    for f in os.listdir(fixtures):
        m = re.fullmatch(r'type-(.+)\.tensors', f)
        if m:
            for row in read_tensors(os.path.join(fixtures, f)):
                names[int(row[1])] = m.group(1)
    return names


def read_tensors(path):
    return [l.rstrip('\n').split('\t') for l in open(path) if not l.startswith('#')]


def ggml_n_dims(ne):
    n = 4
    while n > 1 and ne[n - 1] == 1:
        n -= 1
    return n


def check_tsv(tool, fixtures, base, type_names):
    rows = read_tensors(os.path.join(fixtures, base + '.tensors'))
    text = dump(tool, os.path.join(fixtures, base + '.gguf'), 'tensors.tsv')
    got = list(csv.reader(io.StringIO(text.decode()), delimiter='\t', quoting=csv.QUOTE_NONE))
    if got[0] != ['name', 'type', 'shape', 'elements', 'bytes', 'offset', 'shard']:
        fail(f'{base}: tensors.tsv header is {got[0]}')
    if len(got) != len(rows) + 1:
        fail(f'{base}: tensors.tsv has {len(got) - 1} rows, ggml {len(rows)}')
    for g, (name, type_id, ne, offset, nbytes) in zip(got[1:], rows):
        dims = [int(x) for x in ne.split()]
        shape = [int(x) for x in g[2].split(',')] if g[2] else []
        want = [name, type_names.get(int(type_id), g[1]), str(int(np.prod(dims))), nbytes, offset, '1']
        if [g[0], g[1], g[3], g[4], g[5], g[6]] != want or shape + [1] * (4 - len(shape)) != dims:
            fail(f'{base}: tensors.tsv row {g}, ggml {want} shape {dims}')
    # awk splits it into seven fields a line and adds the same bytes.
    r = subprocess.run(['awk', '-F', '\t', 'NR > 1 {n++; b += $5} NF != 7 {bad++} END {print n, b, bad + 0}'],
                       input=text, stdout=subprocess.PIPE)
    want = f'{len(rows)} {sum(int(r[4]) for r in rows)} 0\n'
    if r.stdout.decode() != want:
        fail(f'{base}: awk reads tensors.tsv as {r.stdout.decode()!r}, expected {want!r}')


def parse_stats(text):
    lines = text.decode().split('\n')
    if lines[-1] != '' or len(lines) != 9:
        fail(f'stats text is not 8 lines: {text!r}')
        return {}
    return {k: v for k, v in (l.split(': ', 1) for l in lines[:-1])}


def check_stats(label, text, x):
    s = parse_stats(text)
    keys = ['min', 'max', 'mean', 'std', 'abs_max', 'zeros', 'nans', 'infs']
    if list(s) != keys:
        fail(f'{label}: stats keys {list(s)}')
        return
    finite = x[np.isfinite(x)]
    counts = {'zeros': int(np.sum(x == 0)), 'nans': int(np.sum(np.isnan(x))), 'infs': int(np.sum(np.isinf(x)))}
    for k, n in counts.items():
        if int(s[k]) != n:
            fail(f'{label}: stats {k} {s[k]!r}, numpy {n}')
        # A scan for broken weights: grep -l '^nans: [1-9]'.
        if bool(re.match(r'[1-9]', s[k])) != (n > 0):
            fail(f'{label}: stats {k} line {s[k]!r} misleads grep')
    if finite.size == 0:
        if any(s[k].strip() != 'nan' for k in keys[:5]):
            fail(f'{label}: no finite values, stats {s}')
        return
    for k, want in (('min', finite.min()), ('max', finite.max()), ('abs_max', np.abs(finite).max())):
        if np.float32(float(s[k])) != want:
            fail(f'{label}: stats {k} {s[k]}, numpy {want!r}')
    f64 = finite.astype(np.float64)
    scale = float(np.abs(f64).max())
    for k, want in (('mean', f64.mean()), ('std', f64.std())):
        got = float(s[k])
        # Relative to numpy's result, with a floor at rounding level of the
        # values' magnitude (a mean that cancels to ~0 has no relative error).
        if abs(got - want) > 1e-9 * abs(want) + 1e-15 * scale:
            fail(f'{label}: stats {k} {got!r}, numpy {want!r}')


def check_tensors(tool, fixtures, base, type_names, tmp):
    rows = read_tensors(os.path.join(fixtures, base + '.tensors'))
    ref = np.fromfile(os.path.join(fixtures, base + '.ref'), dtype='<f4')
    path = os.path.join(fixtures, base + '.gguf')
    pos = 0
    for name, type_id, ne, offset, nbytes in rows:
        dims = [int(x) for x in ne.split()]
        n = int(np.prod(dims))
        want = ref[pos:pos + n]
        pos += n
        shape = tuple(reversed(dims[:ggml_n_dims(dims)]))
        label = f'{base}/{name}'
        for scalar in (False, True):
            npy = dump(tool, path, 'f32.npy', name, scalar=scalar)
            p = os.path.join(tmp, 'f32.npy')
            open(p, 'wb').write(npy)
            for mode in (None, 'r'):
                a = np.load(p, mmap_mode=mode)
                if a.shape != shape or a.dtype != np.dtype('<f4'):
                    fail(f'{label}: numpy.load(mmap_mode={mode}) gives {a.dtype} {a.shape}, expected {shape}')
                elif not np.array_equal(a.reshape(-1).view('<u4'), want.view('<u4')):
                    fail(f'{label}: f32.npy values differ from ggml\'s to_float (mmap_mode={mode})')
                del a
            check_stats(f'{label} ({"scalar" if scalar else "simd"})',
                        dump(tool, path, 'stats', name, scalar=scalar), want)


# ==== warnings ====

def check_warnings(tool, tmp):
    def lines_of(g, name):
        path = os.path.join(tmp, name)
        open(path, 'wb').write(g.b)
        return dump(tool, path, 'warnings').decode().splitlines()

    g = Gguf(); g.header(1, 3)
    first = len(g.b); g.kv('tokenizer.ggml.pre', V['str'], 'dbrx')
    g.kv('general.name', V['str'], 'n')
    again = len(g.b); g.kv('tokenizer.ggml.pre', V['str'], 'line\nbreak')
    g.tensor('t', [8], 0, 0); g.pad(); g.raw(b'\0' * 32)
    want = [f"offset {again}: key 'tokenizer.ggml.pre' appears again (first at offset {first}): line\\nbreak"]
    if lines_of(g, 'repeat.gguf') != want:
        fail(f'repeat.gguf: warnings {lines_of(g, "repeat.gguf")}, expected {want}')

    g = Gguf(); g.header(3, 0)
    g.tensor('a', [16], 0, 0); g.tensor('b', [8], 0, 32); g.tensor('c', [8], 0, 64)
    g.pad(); data = len(g.b); g.raw(b'\0' * 96 + b'tail')
    want = [f"offset {data + 32}: tensor 'b' data [{data + 32}, {data + 64}) overlaps tensor 'a' data [{data}, {data + 64})",
            f"offset {data + 96}: 4 bytes after the end of the tensor data"]
    if lines_of(g, 'overlap.gguf') != want:
        fail(f'overlap.gguf: warnings {lines_of(g, "overlap.gguf")}, expected {want}')

    # A chat template reaching for Python's internals: the line's offset is
    # the value's first byte plus the finding's byte in it.
    g = Gguf(); g.header(1, 2)
    g.kv('general.architecture', V['str'], 'llama')
    template = "{{ x|attr('\\x5f_class__') }}{{ y.__init__ }}"
    g.kv('tokenizer.chat_template', V['str'], template)
    value = len(g.b) - len(template.encode())
    g.tensor('t', [8], 0, 0); g.pad(); g.raw(b'\0' * 32)
    want = [f"offset {value + 10}: key 'tokenizer.chat_template' at byte 10 of its value: attr filter name '__class__' begins with '_'",
            f"offset {value + 33}: key 'tokenizer.chat_template' at byte 33 of its value: attribute '__init__' begins with '_'"]
    if lines_of(g, 'template.gguf') != want:
        fail(f'template.gguf: warnings {lines_of(g, "template.gguf")}, expected {want}')

    # iq2_ks (145): 2 bytes of row scale, blocks of 256 in 70 bytes.
    g = Gguf(); g.header(2, 0)
    g.tensor('ik', [256, 2], 145, 0); g.tensor('odd', [8], 5000, 160)
    ttype = g.marks['ttype']
    g.pad(); g.raw(b'\0' * 200)
    want = [f"offset {ttype}: tensor 'odd': unknown type 5000, its size is unknown"]
    if lines_of(g, 'ik.gguf') != want:
        fail(f'ik.gguf: warnings {lines_of(g, "ik.gguf")}, expected {want}')
    tsv = dump(tool, os.path.join(tmp, 'ik.gguf'), 'tensors.tsv').decode().splitlines()
    if tsv[1].split('\t')[1:5] != ['iq2_ks', '256,2', '512', '144']:
        fail(f'ik.gguf: tensors.tsv row {tsv[1]!r}')


def main():
    tool, fixtures = sys.argv[1:3]
    with tempfile.TemporaryDirectory() as tmp:
        check_metadata_fixture(tool, fixtures)
        check_metadata_beyond_ggml(tool, tmp)
        type_names = fixture_types(fixtures)
        bases = sorted(f[:-len('.tensors')] for f in os.listdir(fixtures) if f.endswith('.tensors') and f != 'metadata.tensors')
        for base in bases:
            check_tsv(tool, fixtures, base, type_names)
            check_tensors(tool, fixtures, base, type_names, tmp)
        check_warnings(tool, tmp)
        warnings = dump(tool, os.path.join(fixtures, 'metadata.gguf'), 'warnings')
        if warnings:
            fail(f'metadata.gguf, written by ggml, has warnings: {warnings!r}')
    print(f'{len(bases)} tensor fixtures and metadata checked: {failures} failures')
    sys.exit(1 if failures else 0)


if __name__ == '__main__':
    main()
