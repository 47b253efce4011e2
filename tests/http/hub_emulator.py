#!/usr/bin/env python3
"""A Hugging Face Hub API on loopback, as the Hub documents it, for the
tests of hf:// collection mounts: each repo a folder of files on disk,
served at one commit.

  GET /api/models/ORG/REPO/revision/REV      {"sha": COMMIT, ...}; 404 for an
                                             unknown repo or revision
  GET /api/models/ORG/REPO/tree/COMMIT[/DIR]?recursive=true[&cursor=N]
                                             LIMIT entries a page, the next
                                             page in `Link: <URL>; rel="next"`
  GET /ORG/REPO/resolve/REV/PATH             302 to FILES_URL/PATH?X-Amz-Signature=...
                                             (another host) with X-Linked-Size and,
                                             for a GGUF file (kept in LFS), its
                                             SHA-256 as X-Linked-Etag; REV the
                                             commit, or a revision a single-file
                                             mount names

A GGUF file's tree entry has its LFS object, `lfs.oid` its SHA-256 and
`lfs.size` its size, as the Hub lists them. What is published of a file
may be told apart from its bytes by REPOS_DIR/.published.json, read at
every request: {"ORG/REPO/PATH": {"sha256": HEX, "tree_size": N,
"linked_size": N}}, each optional (sha256 for both the listing and the
resolve answer; tree_size the listing's lfs.size; linked_size the
resolve answer's X-Linked-Size).

`gated/*` repos answer 401 without `Authorization: Bearer TOKEN`. The repo
`busy/*` answers its revision 429 (RateLimit t=1, then Retry-After 1) twice
first. The `evil/*` repos give hostile listings: evil/names (dot
components, a NUL, a 300-byte name), evil/badjson, evil/cut (JSON cut
short), evil/loop (a page linking to itself), evil/changed (a path on two
pages), evil/huge (110,000 entries). Every request is logged to LOG as
`METHOD PATH auth=yes|no`.

  GET /api/models?author=ORG&filter=gguf     [{"id": "ORG/REPO", ...}] for
                                             each repo with GGUF files, paged
                                             as the tree; author `hostile`
                                             lists ids that are not its own
                                             or not names, and a repo the Hub
                                             does not know

usage: hub_emulator.py PORT_FILE LOG REPOS_DIR FILES_URL TOKEN [LIMIT [DELAY_MS]]
REPOS_DIR/ORG/REPO/ is each ordinary repo's content (gated/* and busy/*
included); FILES_URL/ORG/REPO/PATH serves its bytes.
"""
import hashlib
import http.server
import json
import os
import sys
import threading
import time
import urllib.parse

PORT_FILE, LOG, REPOS, FILES_URL, TOKEN = sys.argv[1:6]
LIMIT = int(sys.argv[6]) if len(sys.argv) > 6 else 3
DELAY_S = int(sys.argv[7]) / 1000 if len(sys.argv) > 7 else 0  # added to every answer (benchmarks)
COMMIT = "0123456789abcdef0123456789abcdef01234567"
REVISIONS = {"main", "v1.0", COMMIT}
lock = threading.Lock()
busy_left = {"n": 2}
huge = []


digests = {}


def sha256_of(path):
    """The file's SHA-256, computed once for its size and time."""
    st = os.stat(path)
    key = (path, st.st_size, st.st_mtime_ns)
    with lock:
        if key in digests:
            return digests[key]
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    with lock:
        digests[key] = h.hexdigest()
    return digests[key]


def told(org, repo, path):
    """What .published.json says of a file instead of its own bytes."""
    try:
        with open(os.path.join(REPOS, ".published.json")) as f:
            return json.load(f).get("%s/%s/%s" % (org, repo, path), {})
    except FileNotFoundError:
        return {}


def files_of(org, repo):
    root = os.path.join(REPOS, org, repo)
    out = []
    for d, dirs, files in os.walk(root):
        dirs.sort()
        rel = os.path.relpath(d, root)
        if rel != ".":
            out.append({"type": "directory", "oid": "d" * 40, "size": 0, "path": rel})
        for f in sorted(files):
            p = os.path.join(d, f)
            path = os.path.relpath(p, root)
            size = os.path.getsize(p)
            e = {"type": "file", "oid": hashlib.sha1(path.encode() + str(size).encode()).hexdigest(),
                 "size": 134 if f.endswith(".gguf") else size, "path": path}
            if f.endswith(".gguf"):
                lie = told(org, repo, path)
                e["lfs"] = {"oid": lie.get("sha256") or sha256_of(p), "size": lie.get("tree_size", size),
                            "pointerSize": 134}
            out.append(e)
    return out


def hostile(repo):
    def f(path, size=1000):
        return {"type": "file", "oid": "e" * 40, "size": size, "path": path,
                "lfs": {"oid": hashlib.sha256(path.encode()).hexdigest(), "size": size, "pointerSize": 134}}
    if repo == "names":
        return [f("good.gguf"), f("../escape.gguf"), f("a/../../up.gguf"), f("./here.gguf"),
                f("a//b.gguf"), f("nul\u0000byte.gguf"), f("x" * 300 + ".gguf"), f("sub/ok.gguf")]
    if repo == "changed":
        return [f("a.gguf"), f("b.gguf"), f("c.gguf"), f("b.gguf")]
    if repo == "huge":
        if not huge:
            huge.extend({"type": "file", "oid": "e" * 40, "size": 1000, "path": "m%06d.gguf" % i} for i in range(110000))
        return huge
    return [f("a.gguf"), f("b.gguf"), f("c.gguf"), f("d.gguf")]


class Hub(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def reply(self, status, body=b"", headers=()):
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def json(self, obj, headers=()):
        self.reply(200, json.dumps(obj).encode(), [("Content-Type", "application/json")] + list(headers))

    def author(self, url, query):
        """The author's repos holding GGUF files, LIMIT a page."""
        org = query.get("author", [""])[0]
        if query.get("filter") != ["gguf"]:
            return self.reply(400, b'{"error":"want filter=gguf"}')
        if org == "hostile":
            repos = ["hostile/broken", "other/theirs", "hostile/..", "hostile/a/b", "hostile/nul\u0000"]
        else:
            root = os.path.join(REPOS, org)
            repos = [org + "/" + r for r in sorted(os.listdir(root)) if os.path.isdir(os.path.join(root, r)) and
                     any(f.endswith(".gguf") for _, _, fs in os.walk(os.path.join(root, r)) for f in fs)] \
                if os.path.isdir(root) else []
        cursor = int(query.get("cursor", ["0"])[0])
        page = [{"id": r, "_id": "x", "tags": ["gguf"]} for r in repos[cursor:cursor + LIMIT]]
        headers = []
        if cursor + LIMIT < len(repos):
            link = "http://%s%s?author=%s&filter=gguf&cursor=%d" % (self.headers["Host"], url.path, org,
                                                                   cursor + LIMIT)
            headers.append(("Link", '<%s>; rel="next"' % link))
        return self.json(page, headers)

    def do_GET(self):
        if DELAY_S:
            time.sleep(DELAY_S)
        auth = self.headers.get("Authorization")
        with lock, open(LOG, "a") as log:
            log.write("GET %s auth=%s\n" % (self.path, "yes" if auth else "no"))
        url = urllib.parse.urlsplit(self.path)
        parts = [urllib.parse.unquote(p) for p in url.path.split("/")[1:]]
        query = urllib.parse.parse_qs(url.query)
        authorized = auth == "Bearer " + TOKEN
        if parts == ["api", "models"]:
            return self.author(url, query)
        if parts[:2] == ["api", "models"] and len(parts) >= 6:
            org, repo, what = parts[2], parts[3], parts[4]
            if org == "gated" and not authorized:
                return self.reply(401, b'{"error":"Access to this repo is restricted"}')
            known = org == "evil" or os.path.isdir(os.path.join(REPOS, org, repo))
            if not known:
                return self.reply(404, b'{"error":"Repository not found"}')
            if what == "revision":
                rev = "/".join(parts[5:])
                if org == "busy":
                    with lock:
                        busy_left["n"] -= 1
                        n = busy_left["n"]
                    if n == 1:
                        return self.reply(429, b"", [("RateLimit", '"api";r=0;t=1')])
                    if n == 0:
                        return self.reply(429, b"", [("Retry-After", "1")])
                if rev not in REVISIONS:
                    return self.reply(404, b'{"error":"Revision not found"}')
                return self.json({"id": org + "/" + repo, "sha": COMMIT})
            if what == "tree":
                if parts[5] != COMMIT:
                    return self.reply(404, b'{"error":"Revision not found"}')
                if query.get("recursive") != ["true"]:
                    return self.reply(400, b'{"error":"want recursive"}')
                if org == "evil" and repo == "badjson":
                    return self.reply(200, b"<html>not json</html>")
                if org == "evil" and repo == "cut":
                    return self.reply(200, b'[{"type":"file","path":"a.gguf","size":1')
                entries = hostile(repo) if org == "evil" else files_of(org, repo)
                sub = "/".join(parts[6:])
                if sub:
                    entries = [e for e in entries if e["path"].startswith(sub + "/")]
                    if not entries:
                        return self.reply(404, b'{"error":"Path not found"}')
                limit = 1000 if repo == "huge" else LIMIT
                cursor = int(query.get("cursor", ["0"])[0])
                page = entries[cursor:cursor + limit]
                headers = []
                nxt = cursor + limit
                if org == "evil" and repo == "loop":
                    nxt = 0 if cursor >= limit else nxt
                if nxt < len(entries) or (org == "evil" and repo == "loop"):
                    link = "http://%s%s?recursive=true&cursor=%d" % (self.headers["Host"], url.path, nxt)
                    headers.append(("Link", '<%s>; rel="next"' % link))
                return self.json(page, headers)
        if len(parts) >= 5 and parts[2] == "resolve":
            org, repo, rev = parts[0], parts[1], parts[3]
            if org == "gated" and not authorized:
                return self.reply(401, b"")
            if rev not in REVISIONS:
                return self.reply(404, b"Revision not found")
            path = "/".join(parts[4:])
            local = os.path.join(REPOS, org, repo, path)
            if not os.path.isfile(local):
                return self.reply(404, b"")
            where = "%s/%s/%s/%s?X-Amz-Signature=%s&Expires=9999999999" % (
                FILES_URL, org, repo, urllib.parse.quote(path), hashlib.sha1(path.encode()).hexdigest())
            lie = told(org, repo, path)
            headers = [("Location", where), ("X-Linked-Size", str(lie.get("linked_size", os.path.getsize(local)))),
                       ("X-Repo-Commit", COMMIT)]
            if path.endswith(".gguf"):
                headers.append(("X-Linked-Etag", '"%s"' % (lie.get("sha256") or sha256_of(local))))
            return self.reply(302, b"", headers)
        self.reply(404, b"")


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Hub)
with open(PORT_FILE + ".tmp", "w") as f:
    f.write(str(server.server_address[1]))
os.rename(PORT_FILE + ".tmp", PORT_FILE)
server.serve_forever()
