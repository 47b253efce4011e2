#!/usr/bin/env python3
"""Checks a mounted model's views for tools against the rest of the mount
and against ggml, with the tools users reach for.

usage: check_mount_views.py metadata MOUNTPOINT X.expected
    metadata.json, read by Python's json and by jq, holds every key of
    ggml's reading (X.expected) in file order, and each value equals the
    key's file under metadata/.
usage: check_mount_views.py tensors MOUNTPOINT X.tensors X.ref
    tensors.tsv, read by Python's csv and by awk, equals every info;
    numpy.load(f32.npy), with and without mmap_mode, is the tensor with its
    shape, bit for bit ggml's to_float; reads of f32.npy at any offset are
    its header then f32; stats equal numpy's on the same values, and
    grep -l '^nans: [1-9]' finds exactly the tensors with NaNs.

Prints one line per failure; exits 1 if any.
"""
import csv
import io
import os
import random
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, '..', 'views'))
import check_views  # noqa: E402
from check_views import check_json_against, check_stats, expected_value, normalise, tokens  # noqa: E402
from spec_render import file_name, line_escape  # noqa: E402


def fail(msg):
    check_views.fail(msg)


def file_text(v, in_array=False):
    """What metadata/KEY holds for a JSON value (tokens form), per SPEC."""
    if isinstance(v, tuple):
        return {'NaN': b'nan', 'Infinity': b'inf', '-Infinity': b'-inf'}.get(v[1], v[1].encode())
    if isinstance(v, bool):
        return b'true' if v else b'false'
    if isinstance(v, bytes):
        return line_escape(v) if in_array else v
    raise TypeError(v)


def check_metadata(mnt, expected):
    want = []
    for line in open(expected):
        k, t, v = line.rstrip('\n').split('\t')
        want.append((bytes.fromhex(k), expected_value(t, v)))
    text = open(os.path.join(mnt, 'metadata.json'), 'rb').read()
    if len(text) != os.stat(os.path.join(mnt, 'metadata.json')).st_size:
        fail(f'metadata.json: stat size differs from its {len(text)} bytes')
    check_json_against('metadata.json', text, want)
    # Every value is the key's file under metadata/.
    for key, value in tokens(text.decode('utf-8')):
        key = key.encode('utf-8', 'surrogateescape')
        value = normalise(value)
        stored = open(os.path.join(mnt.encode(), b'metadata', file_name(key)), 'rb').read()
        if isinstance(value, list):
            lines = stored.split(b'\n')[:-1] if stored else []
            if len(lines) != len(value):
                fail(f'{key!r}: {len(value)} elements in metadata.json, {len(lines)} lines in its file')
                continue
            for i, (line, v) in enumerate(zip(lines, value)):
                same = normalise(tokens(line.decode('utf-8'))) == v if isinstance(v, list) \
                    else line == file_text(v, in_array=True)
                if not same:
                    fail(f'{key!r}[{i}]: metadata.json has {str(v)[:100]}, its file {line[:100]!r}')
        elif stored != file_text(value) + b'\n':
            fail(f'{key!r}: metadata.json has {str(value)[:100]}, its file {stored[:100]!r}')


def info_of(path):
    return dict(l.split(': ', 1) for l in open(path, encoding='utf-8', errors='surrogateescape')
                .read().splitlines())


def check_tensors(mnt, tensors, ref):
    tensors_dir = os.path.join(mnt, 'tensors')
    infos = {}
    for d in os.listdir(tensors_dir):
        info = info_of(os.path.join(tensors_dir, d, 'info'))
        infos[info['name']] = (d, info)
    tsv_path = os.path.join(mnt, 'tensors.tsv')
    text = open(tsv_path, 'rb').read()
    if len(text) != os.stat(tsv_path).st_size:
        fail(f'tensors.tsv: stat size differs from its {len(text)} bytes')
    rows = list(csv.reader(io.StringIO(text.decode('utf-8', 'surrogateescape')), delimiter='\t',
                           quoting=csv.QUOTE_NONE))
    if rows[0] != ['name', 'type', 'shape', 'elements', 'bytes', 'offset', 'shard']:
        fail(f'tensors.tsv header {rows[0]}')
    if sorted(r[0] for r in rows[1:]) != sorted(infos):
        fail(f'tensors.tsv names {[r[0] for r in rows[1:]][:5]}..., info names {list(infos)[:5]}...')
    for name, typ, shape, elements, nbytes, offset, shard in rows[1:]:
        info = infos.get(name, (None, {}))[1]
        want = [info.get('type'), info.get('shape', '').replace(' ', ','), info.get('elements'),
                info.get('bytes'), info.get('offset'), info.get('shard', '1')]
        if [typ, shape, elements, nbytes, offset, shard] != want:
            fail(f'tensors.tsv row {name}: {[typ, shape, elements, nbytes, offset, shard]}, info {want}')
    # awk sees seven fields a line and the same bytes as every info.
    r = subprocess.run(['awk', '-F', '\t', 'NR > 1 {b += $5} NF != 7 {bad++} END {print b, bad + 0}', tsv_path],
                       stdout=subprocess.PIPE)
    total = sum(int(i['bytes']) for _, i in infos.values() if i['bytes'] != 'unknown')
    if r.stdout.decode() != f'{total} 0\n':
        fail(f'awk reads tensors.tsv as {r.stdout.decode()!r}, infos add up to {total}')

    ref_values = np.fromfile(ref, dtype='<f4')
    rng = random.Random(7)
    pos = 0
    with_nans = set()
    for row in (l.rstrip('\n').split('\t') for l in open(tensors) if not l.startswith('#')):
        name, ne = row[0], [int(x) for x in row[2].split()]
        n = int(np.prod(ne))
        want = ref_values[pos:pos + n]
        pos += n
        d = os.path.join(tensors_dir, infos[name][0])
        shape = tuple(int(x) for x in reversed(infos[name][1]['shape'].split()))
        npy = os.path.join(d, 'f32.npy')
        for mode in (None, 'r'):
            a = np.load(npy, mmap_mode=mode)
            if a.shape != shape or a.dtype != np.dtype('<f4') or \
                    not np.array_equal(a.reshape(-1).view('<u4'), want.view('<u4')):
                fail(f'{name}: numpy.load(f32.npy, mmap_mode={mode}) is not the tensor ({a.shape}, {shape})')
            del a
        whole = open(npy, 'rb').read()
        f32 = open(os.path.join(d, 'f32'), 'rb').read()
        header_len = len(whole) - len(f32)
        if os.stat(npy).st_size != len(whole) or whole[header_len:] != f32 or header_len % 64:
            fail(f'{name}: f32.npy is not a {header_len}-byte header then f32')
        with open(npy, 'rb') as f:
            for _ in range(20):
                off = rng.randrange(len(whole) + 1)
                size = rng.randrange(1, 300)
                f.seek(off)
                if f.read(size) != whole[off:off + size]:
                    fail(f'{name}: f32.npy read of {size} at {off} differs')
        stats_path = os.path.join(d, 'stats')
        stats = open(stats_path, 'rb').read()
        if os.stat(stats_path).st_size != len(stats):
            fail(f'{name}: stats size in stat differs from its text')
        check_stats(f'{name} stats', stats, want)
        if np.isnan(want).any():
            with_nans.add(infos[name][0])
    r = subprocess.run("grep -l '^nans: [1-9]' */stats", shell=True, cwd=tensors_dir, stdout=subprocess.PIPE)
    found = {l.split('/')[0] for l in r.stdout.decode().splitlines()}
    if found != with_nans:
        fail(f"grep -l '^nans: [1-9]' finds {sorted(found)}, the tensors with NaNs are {sorted(with_nans)}")


def main():
    if sys.argv[1] == 'metadata':
        check_metadata(sys.argv[2], sys.argv[3])
    else:
        check_tensors(sys.argv[2], sys.argv[3], sys.argv[4])
    sys.exit(1 if check_views.failures else 0)


if __name__ == '__main__':
    main()
