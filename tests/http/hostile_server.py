#!/usr/bin/env python3
"""One scriptable hostile server on loopback for hostile.bats: plain files
with byte ranges, the Hub's API (as hub_emulator.py emulates it), an Ollama
registry and S3's ListObjectsV2 and GetObject, each answering as the mode
in MODE_FILE (read again at every request) says. Every request is logged
to LOG as one JSON line: time, method, the host:port it was received on,
path and every header, so that a test can grep a "foreign" instance's log
for a secret.

usage: hostile_server.py PORT_FILE LOG MODE_FILE FILES FOREIGN_URL

FILES/model.gguf is every model's bytes (every .gguf path and key, every
blob of a manifest's model layer); FOREIGN_URL (http://localhost:PORT) is
the other instance, where hostile modes send the client. The server exits
when its parent ends, or after 900 s.

Modes (the first word of MODE_FILE; files are served plainly in any mode
that does not name them):
  normal                 everything as a well-behaved server answers
  total-max, total-2p62  206s with Content-Range totals 2^64-1, 2^62+1
  ratelimit-huge         429 "RateLimit: "api";r=0;t=99999999999999999999"
  retry-after-huge       429 "Retry-After: 9999999999"
  retry-after-two        the first file request a 429 "Retry-After: 2"
  length-negative        200/206 with Content-Length: -1
  length-huge            206 with Content-Length: 2^63
  unvalidated            206s without ETag or Last-Modified, bytes changed
  redirect-loop          every file a 302 to itself
  redirect-file          every file a 302 to file:///etc/passwd
  gzip-bomb              206 with Content-Encoding: gzip, 1 GB of zeros
  auth-loop              every file a 401 with a Bearer challenge on itself
  hub-link-foreign       tree and author pages link their next page abroad
  hub-resolve-foreign    resolve redirects abroad
  hub-null               tree entries with null and wrong-typed fields
  hub-empty-pages        tree/author pages empty, a new cursor each time
  hub-repeat-pages       tree/author pages repeating one entry, new cursor
  hub-at-name            the repo holds dir@x/m.gguf
  hub-names              .., ../up.gguf, NUL, a 5,000-byte name, RTL mark
  registry-blob-foreign  blobs need the bearer token; 307 abroad
  registry-realm-foreign the token's realm is abroad
  registry-layers        a manifest with 5,000 small text layers
  registry-adapter       a manifest with an adapter layer
  s3-foreign             GetObject a 307 abroad
  s3-same-token          IsTruncated with the same token each page
  s3-new-token           IsTruncated with a new token, no new key
  s3-repeat-key          IsTruncated, new token, the same key each page
  s3-slash               a key with / past the prefix (delimiter ignored)
  s3-url-names           encoding-type=url: "café model+1.gguf"
  s3-marker              a prefix whose only entry is dir/ and a/./b.gguf
  chunked-overrun        206s sent chunked, 1 MiB more than their Content-Range
  hub-deep-json          tree pages of 100,000 nested arrays
  hub-big-page           a tree page of 17 MiB
  hub-stall-page         a tree page that stops halfway for 8 s
  s3-laughs              a listing with billion laughs in its DOCTYPE
  s3-external            a listing naming an external entity (file:///etc/passwd)
  registry-big-template  a manifest whose template layer is 100 MB
"""
import hashlib
import http.server
import json
import os
import struct
import sys
import threading
import time
import urllib.parse
import zlib

PORT_FILE, LOG, MODE_FILE, FILES, FOREIGN = sys.argv[1:6]
COMMIT = "0123456789abcdef0123456789abcdef01234567"
TOKEN = "registry_hostile_token_77"
PARENT = os.getppid()
lock = threading.Lock()
counter = {"n": 0}
bomb = []  # gzip_bomb()'s, once made
bomb_lock = threading.Lock()
with open(os.path.join(FILES, "model.gguf"), "rb") as f:
    MODEL = f.read()
MODEL_HEX = hashlib.sha256(MODEL).hexdigest()
TEXT = b"{{ .Prompt }}"
TEXT_HEX = hashlib.sha256(TEXT).hexdigest()
BIG_TEMPLATE = 100 * 1000 * 1000  # bytes of registry-big-template's layer
BIG_HEX = "b" * 64


def gzip_bomb():
    """1 GiB of zeros as gzip (about 1 MB), made once: a deflate block of
    1 MiB of zeros after a full flush is the same bytes every time, so the
    stream is its header, that block 1,024 times, an empty final block and
    the trailer (CRC-32 and length of the whole), in a third of a second
    where compressing it all takes seconds, longer than timeout_s."""
    with bomb_lock:
        if not bomb:
            chunk = bytes(1 << 20)
            z = zlib.compressobj(9, zlib.DEFLATED, 31)
            first = z.compress(chunk) + z.flush(zlib.Z_FULL_FLUSH)  # the gzip header and a block
            block = z.compress(chunk) + z.flush(zlib.Z_FULL_FLUSH)
            crc = 0
            for _ in range(1024):
                crc = zlib.crc32(chunk, crc)
            bomb.append(first + block * 1023 + b"\x03\x00" + struct.pack("<II", crc, (1024 << 20) & 0xFFFFFFFF))
        return bomb[0]


def mode():
    try:
        with open(MODE_FILE) as f:
            return (f.read().split() or ["normal"])[0]
    except OSError:
        return "normal"


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def reply(self, status, body=b"", headers=(), length=None):
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)) if length is None else length)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def log_request_line(self, m):
        host, port = self.server.server_address[:2]
        line = {"t": time.time(), "mode": m, "method": self.command, "at": "%s:%d" % (host, port),
                "path": self.path, "headers": dict(self.headers.items())}
        with lock, open(LOG, "a") as log:
            log.write(json.dumps(line) + "\n")

    def do_HEAD(self):
        self.do_GET()

    def do_GET(self):
        m = mode()
        self.log_request_line(m)
        url = urllib.parse.urlsplit(self.path)
        parts = [urllib.parse.unquote(p) for p in url.path.split("/")[1:]]
        query = urllib.parse.parse_qs(url.query, keep_blank_values=True)
        try:
            if parts[:2] == ["api", "models"]:
                return self.hub_api(m, url, parts, query)
            if len(parts) >= 5 and parts[2] == "resolve":
                return self.resolve(m, parts)
            if parts[:1] == ["v2"] or parts[:1] == ["token"]:
                return self.registry(m, url, parts)
            if parts[:1] == ["bucket"]:
                return self.s3(m, parts, query)
            if parts[:1] == ["files"]:
                return self.file(m, MODEL)
        except (BrokenPipeError, ConnectionResetError):
            return
        self.reply(404)

    # ==== plain files with ranges ====
    def file(self, m, data, etag='"v1"'):
        if m == "redirect-loop":
            return self.reply(302, b"", [("Location", self.path)])
        if m == "redirect-file":
            return self.reply(302, b"", [("Location", "file:///etc/passwd")])
        if m == "auth-loop":
            return self.reply(401, b"", [("WWW-Authenticate", 'Bearer realm="http://%s%s"' % (
                self.headers.get("Host"), self.path))])
        if m == "ratelimit-huge":
            return self.reply(429, b"", [("RateLimit", '"api";r=0;t=99999999999999999999')])
        if m == "retry-after-huge":
            return self.reply(429, b"", [("Retry-After", "9999999999")])
        if m == "retry-after-two":
            with lock:
                first = counter["n"] == 0
                counter["n"] += 1
            if first:
                return self.reply(429, b"", [("Retry-After", "2")])
        headers = [("Accept-Ranges", "bytes")]
        if m == "unvalidated":
            data = bytes(b ^ 0x5A for b in data)
        else:
            headers.append(("ETag", etag))
            headers.append(("Last-Modified", "Mon, 02 Jan 2006 15:04:05 GMT"))
        rng = self.headers.get("Range", "")
        start, end = 0, len(data) - 1
        if rng.startswith("bytes="):
            a, _, b = rng[6:].partition("-")
            start = int(a or 0)
            end = min(int(b), len(data) - 1) if b else len(data) - 1
        if start >= len(data):
            return self.reply(416, b"", [("Content-Range", "bytes */%d" % len(data))])
        body = data[start:end + 1]
        total = {"total-max": "18446744073709551615", "total-2p62": str(2**62 + 1)}.get(m, str(len(data)))
        headers.append(("Content-Range", "bytes %d-%d/%s" % (start, end, total)))
        if m == "length-negative":
            return self.reply(206, body, headers, length="-1")
        if m == "length-huge":
            return self.reply(206, body, headers, length=str(2**63))
        if m == "chunked-overrun":
            self.send_response(206)
            for k, v in headers:
                self.send_header(k, v)
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for piece in (body, bytes(1 << 20)):
                self.wfile.write(b"%x\r\n" % len(piece) + piece + b"\r\n")
            self.wfile.write(b"0\r\n\r\n")
            return None
        if m == "gzip-bomb":
            headers.append(("Content-Encoding", "gzip"))
            return self.reply(206, gzip_bomb(), headers)
        return self.reply(206 if rng else 200, body, headers)

    # ==== the Hub ====
    def entry(self, path, size=len(MODEL)):
        return {"type": "file", "oid": "e" * 40, "size": size, "path": path,
                "lfs": {"oid": hashlib.sha256(path.encode()).hexdigest(), "size": size, "pointerSize": 134}}

    def next_link(self, base, cursor, foreign=False):
        host = FOREIGN if foreign else "http://" + self.headers.get("Host", "")
        sep = "&" if "?" in base else "?"
        return ("Link", '<%s%s%scursor=%d>; rel="next"' % (host, base, sep, cursor))

    def hub_api(self, m, url, parts, query):
        cursor = int(query.get("cursor", ["0"])[0] or 0)
        if parts == ["api", "models"]:
            org = query.get("author", [""])[0]
            base = "/api/models?author=%s&filter=gguf" % org
            if m == "hub-empty-pages":
                return self.json([], [self.next_link(base, cursor + 1)])
            if m == "hub-repeat-pages":
                return self.json([{"id": org + "/repo"}], [self.next_link(base, cursor + 1)])
            if m == "hub-link-foreign" and cursor == 0:
                return self.json([{"id": org + "/repo"}], [self.next_link(base, 1, True)])
            if m == "hub-null":
                return self.json([{"id": None}, {"id": 5}, {"id": [org]}, {}, {"id": org + "/repo"}])
            return self.json([{"id": org + "/repo"}] if cursor == 0 else [])
        org, repo, what = parts[2], parts[3], parts[4] if len(parts) > 4 else ""
        if what == "revision":
            return self.json({"id": org + "/" + repo, "sha": COMMIT})
        if what != "tree":
            return self.reply(404)
        base = url.path + "?recursive=true"
        if m == "hub-empty-pages":
            return self.json([], [self.next_link(base, cursor + 1)])
        if m == "hub-repeat-pages":
            return self.json([self.entry("model.gguf")], [self.next_link(base, cursor + 1)])
        if m == "hub-deep-json":
            return self.reply(200, b"[" * 100000 + b"]" * 100000, [("Content-Type", "application/json")])
        if m == "hub-stall-page":
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", "100000")
            self.end_headers()
            self.wfile.write(json.dumps([self.entry("model.gguf")]).encode()[:-1])
            self.wfile.flush()
            time.sleep(8)
            return None
        if m == "hub-big-page":
            pad = "x" * 1000
            return self.json([dict(self.entry("model.gguf"), pad=pad) for _ in range(17 * 1024)])
        if m == "hub-link-foreign":
            if cursor == 0:
                return self.json([self.entry("model.gguf")], [self.next_link(base, 1, True)])
            return self.json([])
        if m == "hub-null":
            return self.json([{"type": None, "path": "a.gguf", "size": 5},
                              {"type": "file", "path": None, "size": 5},
                              {"type": "file", "path": 7, "size": "big"},
                              {"type": "file", "path": "b.gguf", "size": None, "lfs": None},
                              {"type": "file", "path": "c.gguf", "lfs": {"oid": None, "size": "x"}},
                              {"type": ["file"], "path": {"x": 1}},
                              None, 5, "text", [],
                              self.entry("model.gguf")])
        if m == "hub-at-name":
            return self.json([{"type": "directory", "oid": "d" * 40, "size": 0, "path": "dir@x"},
                              self.entry("dir@x/m.gguf")])
        if m == "hub-names":
            return self.json([self.entry(".."), self.entry("../up.gguf"), self.entry("nul\u0000.gguf"),
                              self.entry("x" * 5000 + ".gguf"), self.entry("\u202egnp.gguf"),
                              self.entry("model.gguf")])
        return self.json([self.entry("model.gguf")])

    def resolve(self, m, parts):
        path = "/".join(parts[4:])
        if m == "hub-resolve-foreign":
            where = "%s/files/%s" % (FOREIGN, urllib.parse.quote(path))
        else:
            where = "/files/%s" % urllib.parse.quote(path)
        return self.reply(302, b"", [("Location", where), ("X-Linked-Size", str(len(MODEL))),
                                     ("X-Linked-Etag", '"v1"'), ("X-Repo-Commit", COMMIT)])

    def stream_big_template(self):
        """A 100 MB text layer, written as the client takes it."""
        self.send_response(200)
        self.send_header("Content-Length", str(BIG_TEMPLATE))
        self.end_headers()
        chunk = b"{{ .Prompt }}" * 80000
        sent = 0
        while sent < BIG_TEMPLATE:
            piece = chunk[:BIG_TEMPLATE - sent]
            self.wfile.write(piece)
            sent += len(piece)

    def json(self, obj, headers=()):
        self.reply(200, json.dumps(obj).encode(), [("Content-Type", "application/json")] + list(headers))

    # ==== an Ollama registry ====
    def registry(self, m, url, parts):
        if parts == ["token"]:
            return self.json({"token": TOKEN, "expires_in": 300})
        wants_token = m in ("registry-blob-foreign", "registry-realm-foreign")
        if wants_token and self.headers.get("Authorization") != "Bearer " + TOKEN:
            realm = (FOREIGN if m == "registry-realm-foreign" else "http://" + self.headers.get("Host")) + "/token"
            return self.reply(401, b"", [("WWW-Authenticate", 'Bearer realm="%s",service="r",scope="repository:%s:pull"'
                                          % (realm, "/".join(parts[1:3])))])
        if len(parts) >= 5 and parts[3] == "manifests":
            layers = [{"mediaType": "application/vnd.ollama.image.model", "digest": "sha256:" + MODEL_HEX,
                       "size": len(MODEL)}]
            if m == "registry-layers":
                layers += [{"mediaType": "application/vnd.ollama.image.template", "digest": "sha256:" + TEXT_HEX,
                            "size": len(TEXT)}] * 5000
            if m == "registry-big-template":
                layers.append({"mediaType": "application/vnd.ollama.image.template", "digest": "sha256:" + BIG_HEX,
                               "size": BIG_TEMPLATE})
            if m == "registry-adapter":
                layers.append({"mediaType": "application/vnd.ollama.image.adapter", "digest": "sha256:" + MODEL_HEX,
                               "size": len(MODEL)})
            man = {"schemaVersion": 2, "mediaType": "application/vnd.docker.distribution.manifest.v2+json",
                   "config": {"mediaType": "application/vnd.docker.container.image.v1+json",
                              "digest": "sha256:" + TEXT_HEX, "size": len(TEXT)},
                   "layers": layers}
            return self.reply(200, json.dumps(man).encode(),
                              [("Content-Type", "application/vnd.docker.distribution.manifest.v2+json")])
        if len(parts) >= 5 and parts[3] == "blobs":
            if m == "registry-blob-foreign":
                return self.reply(307, b"", [("Location", FOREIGN + self.path)])
            if parts[4].endswith(BIG_HEX):
                return self.stream_big_template()
            return self.file(m, TEXT if parts[4].endswith(TEXT_HEX) else MODEL, '"%s"' % parts[4][7:])
        return self.reply(404)

    # ==== S3 ====
    def s3(self, m, parts, query):
        key = "/".join(parts[1:])
        if key:
            if m == "s3-foreign":
                return self.reply(307, b"", [("Location", FOREIGN + self.path)])
            return self.file(m, MODEL)
        prefix = query.get("prefix", [""])[0]
        token = query.get("continuation-token", [""])[0]
        n = int(token[1:]) if token[1:].isdigit() else 0
        keys, prefixes, truncated, nxt, enc = [prefix + "model.gguf"], [], False, "", False
        if m == "s3-same-token":
            truncated, nxt = True, "t1"
        elif m == "s3-new-token":
            keys, truncated, nxt = ([prefix + "model.gguf"] if n == 0 else []), True, "t%d" % (n + 1)
        elif m == "s3-repeat-key":
            truncated, nxt = True, "t%d" % (n + 1)
        elif m == "s3-slash":
            # One bucket's keys, under whatever prefix is asked, with the
            # delimiter ignored: keys deeper than one level come back whole.
            keys = [k for k in ("p/model.gguf", "p/deep/er/model.gguf") if k.startswith(prefix)]
        elif m == "s3-url-names":
            keys, enc = [prefix + "café model+1.gguf"], query.get("encoding-type") == ["url"]
        elif m == "s3-marker":
            keys = [prefix + "dir/", prefix + "a/./b.gguf"]
        def name(k):
            return urllib.parse.quote_plus(k, safe="/") if enc else k
        body = ['<?xml version="1.0" encoding="UTF-8"?>',
                '<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">',
                "<Name>bucket</Name><Prefix>%s</Prefix><KeyCount>%d</KeyCount><MaxKeys>1000</MaxKeys>"
                % (name(prefix), len(keys)), "<IsTruncated>%s</IsTruncated>" % ("true" if truncated else "false")]
        if enc:
            body.append("<EncodingType>url</EncodingType>")
        if truncated:
            body.append("<NextContinuationToken>%s</NextContinuationToken>" % nxt)
        for k in keys:
            body.append('<Contents><Key>%s</Key><LastModified>2026-01-01T00:00:00.000Z</LastModified>'
                        '<ETag>"v1"</ETag><Size>%d</Size><StorageClass>STANDARD</StorageClass></Contents>'
                        % (name(k), len(MODEL)))
        for p in prefixes:
            body.append("<CommonPrefixes><Prefix>%s</Prefix></CommonPrefixes>" % name(p))
        body.append("</ListBucketResult>")
        if m == "s3-laughs":
            lol = ['<!ENTITY l0 "lol">'] + ['<!ENTITY l%d "%s">' % (i, "&l%d;" % (i - 1) * 10) for i in range(1, 10)]
            body.insert(1, "<!DOCTYPE ListBucketResult [%s]>" % "".join(lol))
            body.insert(-1, "<CommonPrefixes><Prefix>%s&l9;</Prefix></CommonPrefixes>" % prefix)
        if m == "s3-external":
            body.insert(1, '<!DOCTYPE ListBucketResult [<!ENTITY x SYSTEM "file:///etc/passwd">]>')
            body.insert(-1, "<CommonPrefixes><Prefix>%s&x;/</Prefix></CommonPrefixes>" % prefix)
        return self.reply(200, "".join(body).encode(), [("Content-Type", "application/xml")])


def watch_parent():
    started = time.monotonic()
    while os.getppid() == PARENT and time.monotonic() - started < 900:
        time.sleep(0.5)
    os._exit(0)


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
server.daemon_threads = True
threading.Thread(target=watch_parent, daemon=True).start()
with open(PORT_FILE + ".tmp", "w") as f:
    f.write(str(server.server_address[1]))
os.rename(PORT_FILE + ".tmp", PORT_FILE)
server.serve_forever()
