#!/usr/bin/env python3
"""Readers and writers of an edited mount, for edit_versions.bats: each
reader reads a file the way a user does while edits go on, and fails
unless what it read is one whole version of the file, with the size it
had; each writer edits as users do, and fails on any error.

usage: edit_readers.py copy-across MNT SEED COUNT   a copy of model.gguf that runs across an
                                                    edit, at COUNT random points, equals the
                                                    model as it was at its open
       edit_readers.py held MNT                     handles opened before an edit re-read and
                                                    fstat their version; new opens the edit
       edit_readers.py mapped MNT                   a mapping made before an edit that shortens
                                                    the header reads the old bytes to its end
       edit_readers.py random-writer MNT SEED SECONDS
                                                    edits as users do: values, new typed keys,
                                                    rm, renames over keys
       edit_readers.py parsing-reader MNT SECONDS GGML_REF GGML_LIB SOURCE SCRATCH
                                                    copies model.gguf; ggml reads every copy, which
                                                    holds SOURCE's tensors and their bytes
       edit_readers.py name-writer MNT SECONDS      rewrites general.name for SECONDS, each time
                                                    with a value of another length
"""
import mmap
import os
import random
import struct
import sys
import time

CHUNK = 64 * 1024
SHORT = b'a'
LONG = b'b' * 930


def set_name(mnt, name):
    """Edits general.name; the close returns the verdict."""
    fd = os.open(os.path.join(mnt, 'metadata', 'general.name'), os.O_WRONLY | os.O_TRUNC)
    try:
        os.write(fd, name + b'\n')
    finally:
        os.close(fd)


def read_whole(path):
    with open(path, 'rb') as f:
        return f.read()


def check(cond, what):
    if not cond:
        sys.exit('edit_readers: ' + what)


def copy_across(mnt, seed, count):
    rng = random.Random(seed)
    gguf = os.path.join(mnt, 'model.gguf')
    name = SHORT
    set_name(mnt, name)
    for i in range(count):
        before = read_whole(gguf)
        point = rng.randrange(len(before))
        fd = os.open(gguf, os.O_RDONLY)
        size = os.fstat(fd).st_size
        check(size == len(before), 'copy %d: fstat says %d bytes, the model has %d' % (i, size, len(before)))
        parts, done, edited = [], 0, False
        while True:
            if not edited and done >= point:
                name = LONG if name == SHORT else SHORT
                set_name(mnt, name)
                edited = True
            part = os.read(fd, CHUNK)
            if not part:
                break
            parts.append(part)
            done += len(part)
        check(edited, 'copy %d: the edit at %d came after the end' % (i, point))
        check(os.fstat(fd).st_size == size, 'copy %d: fstat changed across the edit' % i)
        os.close(fd)
        copy = b''.join(parts)
        check(len(copy) == size, 'copy %d (edit at %d): %d bytes read, fstat said %d' % (i, point, len(copy), size))
        check(copy == before, 'copy %d (edit at %d): the copy is not the model as opened' % (i, point))
        after = read_whole(gguf)
        encoded = b'general.name' + struct.pack('<IQ', 8, len(name)) + name  # type string, length, bytes
        check(after != before and encoded in after and encoded not in before,
              'copy %d: a new open does not see the edit' % i)
        check(len(after) != len(before), 'copy %d: the edit did not move the data' % i)
    print('%d copies across an edit, each the model as opened' % count)


def held(mnt):
    files = ['model.gguf', 'metadata.json', 'header', 'warnings', 'metadata/general.name']
    set_name(mnt, LONG)
    fds = {f: os.open(os.path.join(mnt, f), os.O_RDONLY) for f in files}
    first = {f: os.pread(fds[f], CHUNK, 0) for f in files}
    sizes = {f: os.fstat(fds[f]).st_size for f in files}
    set_name(mnt, SHORT)
    for f in files:
        check(os.fstat(fds[f]).st_size == sizes[f], '%s: fstat of a handle changed across an edit' % f)
        check(os.pread(fds[f], CHUNK, 0) == first[f], '%s: a handle re-read other bytes after an edit' % f)
        fresh = read_whole(os.path.join(mnt, f))
        if f != 'warnings':
            check(fresh[:CHUNK] != first[f], '%s: a new open does not see the edit' % f)
        if f in ('model.gguf', 'metadata.json', 'metadata/general.name'):
            check(os.stat(os.path.join(mnt, f)).st_size == len(fresh) != sizes[f],
                  '%s: a new stat does not see the edit' % f)
        os.close(fds[f])
    print('handles kept their version:', ', '.join(files))


def mapped(mnt):
    gguf = os.path.join(mnt, 'model.gguf')
    set_name(mnt, LONG)
    before = read_whole(gguf)
    with open(gguf, 'rb') as f:
        m = mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ)
    set_name(mnt, SHORT)
    check(os.stat(gguf).st_size < len(before), 'the edit did not shorten model.gguf')
    check(m.size() == len(before), 'the mapping changed size')
    check(m[:] == before, 'the mapping reads other bytes after the edit')
    m.close()
    print('the mapping read its %d bytes to the end' % len(before))


def name_writer(mnt, seconds):
    """Rewrites general.name for SECONDS, each time with another length."""
    i = 0
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        set_name(mnt, b'x' * (i % 700) + b' %d' % i)
        i += 1
    print('%d edits of general.name' % i)


def random_writer(mnt, seed, seconds):
    """Edits for SECONDS as users do, in keys of its own (stress.SEED.*) and
    general.name: values of random lengths, new typed keys, rm, a file
    renamed over a key as sed -i does. Any failure but a name another
    writer took first is fatal."""
    rng = random.Random(seed)
    meta = os.path.join(mnt, 'metadata')
    own = []
    n = 0
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        op = rng.randrange(5)
        if op == 0:
            set_name(mnt, b'w%d-' % seed + b'n' * rng.randrange(2000))
        elif op == 1:
            key = os.path.join(meta, 'stress.%d.k%d' % (seed, n))
            open(key, 'w').close()
            os.setxattr(key, 'user.gguf.type', b'u32')
            with open(key, 'w') as f:
                f.write('%d\n' % rng.randrange(2 ** 32))
            own.append(key)
        elif op == 2 and own:
            os.unlink(own.pop(rng.randrange(len(own))))
        elif op == 3:
            tmp = os.path.join(meta, '.stress%d.tmp' % seed)
            with open(tmp, 'w') as f:
                f.write('renamed by %d: %s\n' % (seed, 'r' * rng.randrange(500)))
            os.rename(tmp, os.path.join(meta, 'general.name'))
        elif op == 4 and len(own) >= 2:
            src = own.pop(rng.randrange(len(own)))
            os.rename(src, own[rng.randrange(len(own))])
        n += 1
    print('writer %d: %d edits' % (seed, n))


def tensor_table(dump):
    """ggml's dump-tensors lines, offsets made relative to the data's
    start (which an edit moves), and that start."""
    rows = [l.split('\t') for l in dump.splitlines() if l and not l.startswith('#')]
    start = min(int(r[3]) for r in rows)
    return [r[:3] + [str(int(r[3]) - start)] + r[4:] for r in rows], start


def parsing_reader(mnt, seconds, ggml_ref, ggml_lib, source, scratch):
    """Copies model.gguf for SECONDS and has ggml read each copy: every
    copy parses, is as long as its fstat said, and holds the model's
    tensors: the same table as the source's, and the same data bytes."""
    import subprocess

    def dump(what, path):
        r = subprocess.run([ggml_ref, ggml_lib, what, path], capture_output=True, text=True)
        check(r.returncode == 0, '%s: ggml cannot read it: %s' % (path, r.stderr[-300:]))
        return r.stdout

    want, want_start = tensor_table(dump('dump-tensors', source))
    want_data = read_whole(source)[want_start:]
    gguf = os.path.join(mnt, 'model.gguf')
    copies = 0
    end = time.monotonic() + seconds
    while copies == 0 or time.monotonic() < end:
        with open(gguf, 'rb') as f:
            size = os.fstat(f.fileno()).st_size
            copy = f.read()
        check(len(copy) == size, 'copy %d: %d bytes, fstat said %d' % (copies, len(copy), size))
        with open(scratch, 'wb') as f:
            f.write(copy)
        dump('dump-metadata', scratch)
        got, start = tensor_table(dump('dump-tensors', scratch))
        check(got == want, 'copy %d: its tensors are not the model\'s' % copies)
        check(copy[start:] == want_data, 'copy %d: its tensor data is not the model\'s' % copies)
        copies += 1
    check(copies >= min(5, seconds + 1), 'only %d copies in %g s' % (copies, seconds))
    print('%d copies of model.gguf, each read by ggml with the model\'s tensors' % copies)


def main():
    cmd, mnt = sys.argv[1], sys.argv[2]
    if cmd == 'copy-across':
        copy_across(mnt, int(sys.argv[3]), int(sys.argv[4]))
    elif cmd == 'held':
        held(mnt)
    elif cmd == 'mapped':
        mapped(mnt)
    elif cmd == 'random-writer':
        random_writer(mnt, int(sys.argv[3]), float(sys.argv[4]))
    elif cmd == 'parsing-reader':
        parsing_reader(mnt, float(sys.argv[3]), *sys.argv[4:8])
    elif cmd == 'name-writer':
        name_writer(mnt, float(sys.argv[3]))
    else:
        sys.exit(__doc__)


if __name__ == '__main__':
    main()
