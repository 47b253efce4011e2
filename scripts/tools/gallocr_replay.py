#!/usr/bin/env python3
"""Replays ggml's graph allocator (ggml-alloc.c: ggml_gallocr_reserve_n over
its dynamic allocator) over the graphs compute_graph_log.c logged, and
prints for each graph the bytes each buffer needs by the replay beside
those ggml reserved, and the tensors live at each buffer's peak.

usage: gallocr_replay.py LOG

The replay follows ggml's rules: leafs and graph inputs are placed first;
a node is placed after its sources, in a source's place when its op can
work in place and that source is its own, not an output, of the same
layout and used by nothing else; a tensor is freed after its last user
(a view frees its source when the source's last view and user are done);
a free block is chosen best-fit among all but the last, which grows the
buffer. A buffer's size is the largest end any tensor reached (the
buffer ggml then allocates may be larger: Vulkan's host buffer type adds
32 bytes). Tensors that already have memory (weights, caches) take none.
A tensor placed in a source's memory is listed under that source's name.
"""
import sys

IN_PLACE = {"FILL", "SCALE", "DIAG_MASK_ZERO", "DIAG_MASK_INF", "ADD", "ADD_ID", "ADD1", "SUB", "MUL", "DIV", "SQR",
            "SQRT", "LOG", "UNARY", "ROPE", "ROPE_BACK", "SILU_BACK", "RMS_NORM", "RMS_NORM_BACK", "CLAMP",
            "SOFT_MAX", "SOFT_MAX_BACK"}
FLAG_INPUT, FLAG_OUTPUT = 1, 2


class Tensor:
    def __init__(self, w):
        self.id, self.op, self.type = w[2], w[3], w[4]
        self.ne, self.nb = tuple(map(int, w[5:9])), tuple(map(int, w[9:13]))
        self.flags, self.has_data = int(w[13]), w[14] == "1"
        self.view_src = None if w[15] in ("(nil)", "0") else w[15]
        self.view_offs, self.buffer, self.nbytes = int(w[16]), int(w[17]), int(w[18])
        self.srcs = w[w.index("[") + 1:w.index("]")]
        self.name = " ".join(w[w.index("]") + 1:])
        # the allocator's state
        self.children = self.views = 0
        self.allocated = False
        self.place = None  # (buffer, offset)


def parse(path):
    graphs, buffers, graph = [], {}, None
    with open(path) as f:
        for line in f:
            w = line.split()
            if not w:
                continue
            if w[0] == "BUFT":
                buffers.setdefault(w[1], {})[int(w[2])] = (w[3], int(w[4]))
            elif w[0] == "GRAPH":
                graph = {"galloc": w[1], "leafs": [], "nodes": [], "tensors": {}, "sizes": {}}
            elif w[0] in ("L", "N"):
                t = Tensor(w)
                graph["tensors"].setdefault(t.id, t)
                graph["leafs" if w[0] == "L" else "nodes"].append(graph["tensors"][t.id])
            elif w[0] == "SIZE":
                graph["sizes"][int(w[1])] = int(w[2])
            elif w[0] == "END":
                graphs.append(graph)
    return graphs, buffers


class Blocks:
    """ggml_dyn_tallocr with one chunk: free blocks by offset, the last endless."""

    def __init__(self, alignment):
        self.alignment, self.free, self.size = alignment, [[0, 1 << 62]], 0
        self.live, self.peak = {}, (0, {})

    def aligned(self, n):
        return -(-n // self.alignment) * self.alignment

    def alloc(self, t):
        size = self.aligned(t.nbytes)
        fits = [i for i, b in enumerate(self.free[:-1]) if b[1] >= size]
        # best fit; on equal sizes the later block, as ggml's <= does
        best = min(fits, key=lambda i: (self.free[i][1], -i)) if fits else len(self.free) - 1
        offset = self.free[best][0]
        self.free[best][0] += size
        self.free[best][1] -= size
        if self.free[best][1] == 0:
            del self.free[best]
        self.live[t.id] = t
        if offset + size > self.size:
            self.size = offset + size
            self.peak = (self.size, dict(self.live))
        return offset

    def release(self, offset, size, t=None):
        size = self.aligned(size)
        if t is not None:
            self.live.pop(t.id, None)
        f = self.free
        for i, b in enumerate(f):
            if b[0] + b[1] == offset:
                b[1] += size
                if i + 1 < len(f) and b[0] + b[1] == f[i + 1][0]:
                    b[1] += f[i + 1][1]
                    del f[i + 1]
                return
            if offset + size == b[0]:
                b[0], b[1] = offset, b[1] + size
                if i > 0 and f[i - 1][0] + f[i - 1][1] == b[0]:
                    f[i - 1][1] += b[1]
                    del f[i]
                return
        f.insert(sum(1 for b in f if b[0] < offset), [offset, size])


def replay(graph, alignments):
    tensors = graph["tensors"]
    blocks = {b: Blocks(a) for b, a in alignments.items()}
    for t in tensors.values():
        t.children = t.views = 0
        t.allocated, t.place = False, None

    def same_layout(a, b):
        return a.type == b.type and a.ne == b.ne and a.nb == b.nb

    def take_place(t, parent, owner):
        # the node takes the parent's memory and gives back what it does not need
        t.place = owner.place
        parent.allocated = owner.allocated = False
        a = blocks[owner.place[0]]
        extra = a.aligned(owner.nbytes) - a.aligned(t.nbytes)
        if extra > 0:
            a.release(owner.place[1] + a.aligned(t.nbytes), extra)

    def allocate(t, buffer):
        if t.has_data or t.allocated or t.view_src is not None:
            return
        t.allocated = True
        if t.op in IN_PLACE:
            for p in (tensors[s] for s in t.srcs):
                if not p.allocated or p.flags & FLAG_OUTPUT or not same_layout(t, p):
                    continue
                if p.view_src is not None and tensors[p.view_src].flags & FLAG_OUTPUT:
                    continue
                if p.children == 1 and p.views == 0:
                    if p.view_src is None:
                        take_place(t, p, p)
                        return
                    v = tensors[p.view_src]
                    if v.views == 1 and v.children == 0 and p.view_offs == 0:
                        take_place(t, p, v)
                        return
        t.place = (buffer, blocks[buffer].alloc(t))

    def free(t):
        if not t.flags & FLAG_OUTPUT:
            blocks[t.place[0]].release(t.place[1], t.nbytes, t)
            t.allocated = False

    for t in graph["leafs"]:
        allocate(t, t.buffer)
    for t in graph["nodes"]:
        if t.view_src is not None and t.op != "NONE":
            tensors[t.view_src].views += 1
        if t.flags & FLAG_INPUT:
            allocate(t, t.buffer)
        for s in t.srcs:
            tensors[s].children += 1
            if tensors[s].flags & FLAG_INPUT:
                allocate(tensors[s], t.buffer)
    for t in graph["nodes"]:
        for s in t.srcs:
            allocate(tensors[s], t.buffer)
        allocate(t, t.buffer)
        for p in (tensors[s] for s in t.srcs):
            p.children -= 1
            if p.children or p.views:
                continue
            if p.view_src is not None:
                v = tensors[p.view_src]
                v.views -= 1
                if v.views == 0 and v.children == 0 and v.allocated:
                    free(v)
            elif p.allocated:
                free(p)
    return blocks


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    graphs, buffers = parse(sys.argv[1])
    for n, graph in enumerate(graphs):
        names = buffers[graph["galloc"]]
        blocks = replay(graph, {b: a for b, (_, a) in names.items()})
        print("graph %d (%d nodes):" % (n, len(graph["nodes"])))
        for b in sorted(blocks):
            size, live = blocks[b].peak
            print("  %s: replay %d bytes, ggml %d bytes; live at the peak:"
                  % (names[b][0], blocks[b].size, graph["sizes"].get(b, -1)))
            for t in sorted(live.values(), key=lambda t: -t.nbytes):
                print("    %10d  %-10s %-5s %-28s %s" % (t.nbytes, t.op, t.type, "x".join(map(str, t.ne)), t.name))


if __name__ == "__main__":
    main()
