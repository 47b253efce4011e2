#!/usr/bin/env python3
"""An S3 front for the tests: checks every request's Signature Version 4
with botocore, then passes it to s3rver, answering as S3 does where s3rver
3.7.1 does not.

  sigv4_proxy.py CONFIG PORT BACKEND_PORT

CONFIG is a JSON file, read again at every request so that a test may
change it while the proxy runs:
  {"region": "eu-west-1",                 # the bucket's region
   "credentials": [{"access": "AK", "secret": "SK", "token": null}],
   "public": false,                       # unsigned requests allowed
   "skew_s": 0,                           # the proxy's clock, shifted
   "slow_down": 0,                        # answer this many of the next
                                          # signed requests 503 SlowDown
   "extra_keys": {"bucket": [["key", size]]},  # keys listed that s3rver
                                          # cannot store ('..', NUL)
   "list_answer": null,                   # a body to answer every listing
                                          # with instead (hostile XML)
   "list_sizes": {"bucket/key": 10},      # the Size a listing says of a
                                          # key instead of its own
   "max_keys": 1000}                      # keys and prefixes a page, at
                                          # most, whatever the client asks

A request that is not signed right (an x-amz-* header left out of the
signed headers included, as S3 wants them all signed) is answered 403
SignatureDoesNotMatch
(or S3's other codes: InvalidAccessKeyId, AccessDenied, InvalidToken,
RequestTimeTooSkewed, and 301 PermanentRedirect naming the region when the
signature's scope is another region), in S3's XML, and never reaches
s3rver. Each request is logged, one line, to stderr, with its verdict.

Where s3rver departs from S3 the proxy answers itself: ranges other than
FIRST-LAST with LAST > FIRST (bytes=0-0, suffix and open ranges), which
s3rver gets wrong, are cut from the whole object here; ListObjectsV2 is
computed here from s3rver's full listing (S3's paging: max-keys counts keys
and common prefixes together, the continuation token resumes after the
last of either, a prefix is never repeated).

s3rver keeps no checksums: the proxy keeps them. A PUT through it (signed)
with x-amz-checksum-sha256 is refused 400 BadDigest when the checksum is
not the body's, and otherwise remembered (in CONFIG.checksums, so that a
proxy started again has them); a GET or HEAD with x-amz-checksum-mode:
ENABLED is answered it, with x-amz-checksum-type: FULL_OBJECT, when the
answer is the whole object, as S3 does (a part of an object is sent no
checksum of the whole). A PUT straight to s3rver changes the bytes and
leaves the checksum: an object the store corrupted.
"""
import hashlib
import base64
import datetime
import http.client
import http.server
import json
import socketserver
import os
import sys
import threading
import urllib.parse
from xml.sax.saxutils import escape

from botocore.auth import S3SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

CONFIG, PORT, BACKEND = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
SKEW_LIMIT_S = 15 * 60
SIGNING_HEADERS = ("authorization", "x-amz-date", "x-amz-content-sha256", "x-amz-security-token")


def config():
    with open(CONFIG) as f:
        return json.load(f)


CONFIG_LOCK = threading.Lock()
LOG_LOCK = threading.Lock()


def log(line):
    """One request's line, whole: requests served at once never share one."""
    with LOG_LOCK:
        sys.stderr.write(line + "\n")
        sys.stderr.flush()


def take_slow_down():
    """True when this request is to be answered 503 SlowDown (one of the
    count the config asks for, which is then one less)."""
    with CONFIG_LOCK:
        cfg = config()
        if cfg.get("slow_down", 0) <= 0:
            return False
        cfg["slow_down"] -= 1
        with open(CONFIG + ".proxy", "w") as f:
            json.dump(cfg, f)
        os.replace(CONFIG + ".proxy", CONFIG)
        return True


def error_xml(code, message, **extra):
    fields = "".join(f"<{k}>{escape(str(v))}</{k}>" for k, v in extra.items())
    return (f'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>{code}</Code>'
            f"<Message>{escape(message)}</Message>{fields}<RequestId>TESTS3PROXY</RequestId></Error>").encode()


class Refusal(Exception):
    def __init__(self, status, code, message, headers=None, **extra):
        super().__init__(code)
        self.status, self.code, self.message = status, code, message
        self.headers, self.extra = headers or {}, extra


def parse_authorization(value):
    if not value.startswith("AWS4-HMAC-SHA256 "):
        raise Refusal(400, "InvalidRequest", "only AWS4-HMAC-SHA256 is accepted")
    fields = {}
    for part in value[len("AWS4-HMAC-SHA256 "):].split(","):
        k, _, v = part.strip().partition("=")
        fields[k] = v
    try:
        access, date, region, service, term = fields["Credential"].split("/")
        return access, date, region, service, term, fields["SignedHeaders"].split(";"), fields["Signature"]
    except (KeyError, ValueError):
        raise Refusal(400, "AuthorizationHeaderMalformed", "the authorization header is malformed")


def check_signature(handler, cfg, bucket):
    """Raises Refusal unless the request is signed as S3 wants."""
    auth = handler.headers.get("Authorization")
    if auth is None:
        if cfg.get("public"):
            return
        raise Refusal(403, "AccessDenied", "Access Denied")
    access, date, region, service, term, signed, signature = parse_authorization(auth)
    cred = next((c for c in cfg["credentials"] if c["access"] == access), None)
    if cred is None:
        raise Refusal(403, "InvalidAccessKeyId",
                      "The AWS Access Key Id you provided does not exist in our records.", AWSAccessKeyId=access)
    amz_date = handler.headers.get("x-amz-date", "")
    try:
        when = datetime.datetime.strptime(amz_date, "%Y%m%dT%H%M%SZ").replace(tzinfo=datetime.timezone.utc)
    except ValueError:
        raise Refusal(403, "AccessDenied", "AWS authentication requires a valid Date or x-amz-date header")
    now = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(seconds=cfg.get("skew_s", 0))
    if abs((now - when).total_seconds()) > SKEW_LIMIT_S:
        raise Refusal(403, "RequestTimeTooSkewed",
                      "The difference between the request time and the current time is too large.",
                      RequestTime=amz_date, ServerTime=now.strftime("%Y-%m-%dT%H:%M:%SZ"))
    if region != cfg["region"] or service != "s3" or term != "aws4_request" or date != amz_date[:8]:
        if region != cfg["region"]:
            raise Refusal(301, "PermanentRedirect",
                          "The bucket you are attempting to access must be addressed using the specified endpoint.",
                          headers={"x-amz-bucket-region": cfg["region"]}, Bucket=bucket)
        raise Refusal(403, "SignatureDoesNotMatch", "bad credential scope")
    if "host" not in signed or "x-amz-date" not in signed or "x-amz-content-sha256" not in signed:
        raise Refusal(403, "SignatureDoesNotMatch", "host, x-amz-date and x-amz-content-sha256 must be signed")
    unsigned = sorted({k.lower() for k in handler.headers.keys() if k.lower().startswith("x-amz-")} - set(signed))
    if unsigned:
        raise Refusal(403, "SignatureDoesNotMatch", "x-amz-* headers must be signed: " + ", ".join(unsigned))
    token = handler.headers.get("x-amz-security-token")
    if cred.get("token") is not None and (token != cred["token"] or "x-amz-security-token" not in signed):
        raise Refusal(403, "InvalidToken", "The provided token is malformed or otherwise invalid.")
    if cred.get("token") is None and token is not None:
        raise Refusal(403, "InvalidToken", "The provided token is malformed or otherwise invalid.")
    payload = handler.headers.get("x-amz-content-sha256")
    if payload is None:
        raise Refusal(400, "InvalidRequest", "Missing required header for this request: x-amz-content-sha256")

    # The canonical request as botocore builds it, from the signed headers
    # only, with the request's own time.
    headers = {}
    for name in signed:
        value = handler.headers.get(name)
        if value is None:
            raise Refusal(403, "SignatureDoesNotMatch", f"signed header {name} missing")
        headers[name] = value
    url = f"http://{handler.headers.get('host')}{handler.path}"
    request = AWSRequest(method=handler.command, url=url, headers=headers)
    request.context["timestamp"] = amz_date
    signer = S3SigV4Auth(Credentials(cred["access"], cred["secret"], cred.get("token")), "s3", region)
    canonical = signer.canonical_request(request)
    expected = signer.signature(signer.string_to_sign(request, canonical), request)
    if expected != signature:
        raise Refusal(403, "SignatureDoesNotMatch",
                      "The request signature we calculated does not match the signature you provided.",
                      CanonicalRequest=canonical)
    # The query must be sent in canonical form already: S3 signs it as sent
    # (botocore sorted it above, so a query out of order fails here too).
    query = urllib.parse.urlsplit(handler.path).query
    if query and query != canonical.split("\n")[2]:
        raise Refusal(403, "SignatureDoesNotMatch", "the query string was not sent in canonical form",
                      CanonicalRequest=canonical)


def backend(method, path, headers=None, body=None):
    conn = http.client.HTTPConnection("127.0.0.1", BACKEND, timeout=30)
    conn.request(method, path, body=body, headers=headers or {})
    resp = conn.getresponse()
    body = resp.read()
    conn.close()
    return resp, body


def all_keys(bucket, cfg):
    """Every key of the bucket, with its size and ETag, from s3rver."""
    keys, token = [], None
    while True:
        q = {"list-type": "2", "max-keys": "1000"}
        if token:
            q["continuation-token"] = token
        resp, body = backend("GET", f"/{bucket}?" + urllib.parse.urlencode(q))
        if resp.status != 200:
            return None, resp, body
        import xml.etree.ElementTree as ET
        root = ET.fromstring(body)
        ns = root.tag[:root.tag.index("}") + 1] if root.tag.startswith("{") else ""
        for c in root.findall(f"{ns}Contents"):
            keys.append((c.find(f"{ns}Key").text, int(c.find(f"{ns}Size").text), c.find(f"{ns}ETag").text))
        token_el = root.find(f"{ns}NextContinuationToken")
        if root.find(f"{ns}IsTruncated").text != "true" or token_el is None:
            break
        token = token_el.text
    sizes = cfg.get("list_sizes", {})
    keys = [(k, sizes.get(f"{bucket}/{k}", size), etag) for k, size, etag in keys]
    for key, size in cfg.get("extra_keys", {}).get(bucket, []):
        keys.append((key, size, '"00000000000000000000000000000000"'))
    keys.sort(key=lambda k: k[0].encode("utf-8"))
    return keys, None, None


def list_objects_v2(bucket, query, cfg):
    keys, resp, body = all_keys(bucket, cfg)
    if keys is None:
        return resp.status, body
    prefix = query.get("prefix", "")
    delimiter = query.get("delimiter", "")
    max_keys = min(int(query.get("max-keys", "1000")), int(cfg.get("max_keys", 1000)))
    url_encoding = query.get("encoding-type") == "url"
    after = query.get("start-after", "")
    if "continuation-token" in query:
        after = base64.urlsafe_b64decode(query["continuation-token"].encode()).decode("utf-8")
    entries = []  # (sort name, kind, value)
    seen_prefixes = set()
    for key, size, etag in keys:
        if not key.startswith(prefix):
            continue
        rest = key[len(prefix):]
        if delimiter and delimiter in rest:
            cp = prefix + rest[:rest.index(delimiter) + len(delimiter)]
            if cp not in seen_prefixes:
                seen_prefixes.add(cp)
                entries.append((cp, "prefix", None))
        else:
            entries.append((key, "key", (size, etag)))
    entries = [e for e in entries if e[0].encode("utf-8") > after.encode("utf-8")]
    page, truncated = entries[:max_keys], len(entries) > max_keys

    def enc(s):
        return urllib.parse.quote(s, safe="/") if url_encoding else escape(s)

    out = ['<?xml version="1.0" encoding="UTF-8"?>\n'
           '<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">',
           f"<Name>{escape(bucket)}</Name><Prefix>{enc(prefix)}</Prefix>",
           f"<KeyCount>{len(page)}</KeyCount><MaxKeys>{max_keys}</MaxKeys>"]
    if delimiter:
        out.append(f"<Delimiter>{enc(delimiter)}</Delimiter>")
    if url_encoding:
        out.append("<EncodingType>url</EncodingType>")
    out.append(f"<IsTruncated>{'true' if truncated else 'false'}</IsTruncated>")
    if "continuation-token" in query:
        out.append(f"<ContinuationToken>{escape(query['continuation-token'])}</ContinuationToken>")
    if truncated:
        token = base64.urlsafe_b64encode(page[-1][0].encode("utf-8")).decode()
        out.append(f"<NextContinuationToken>{token}</NextContinuationToken>")
    for name, kind, info in page:
        if kind == "key":
            out.append(f"<Contents><Key>{enc(name)}</Key><LastModified>2026-01-01T00:00:00.000Z</LastModified>"
                       f"<ETag>{escape(info[1])}</ETag><Size>{info[0]}</Size>"
                       "<StorageClass>STANDARD</StorageClass></Contents>")
    for name, kind, _ in page:
        if kind == "prefix":
            out.append(f"<CommonPrefixes><Prefix>{enc(name)}</Prefix></CommonPrefixes>")
    out.append("</ListBucketResult>")
    return 200, "".join(out).encode("utf-8")


CHECKSUMS_LOCK = threading.Lock()


def checksums():
    try:
        with open(CONFIG + ".checksums") as f:
            return json.load(f)
    except FileNotFoundError:
        return {}


def remember_checksum(object_name, value):
    """Keeps (or, None, forgets) the checksum a PUT of object_name sent."""
    with CHECKSUMS_LOCK:
        kept = checksums()
        if value is None:
            kept.pop(object_name, None)
        else:
            kept[object_name] = value
        with open(CONFIG + ".checksums.new", "w") as f:
            json.dump(kept, f)
        os.replace(CONFIG + ".checksums.new", CONFIG + ".checksums")


def checksum_headers(handler, object_name, status, headers):
    """x-amz-checksum-sha256 of the object, when the request asks for it
    and the answer is the whole object."""
    if handler.headers.get("x-amz-checksum-mode", "").upper() != "ENABLED":
        return []
    value = checksums().get(object_name)
    if value is None:
        return []
    if status == 206:
        cr = dict((k.lower(), v) for k, v in headers).get("content-range", "")
        first_last, _, total = cr.removeprefix("bytes ").partition("/")
        first, _, last = first_last.partition("-")
        if not (first == "0" and total.isdigit() and last == str(int(total) - 1)):
            return []
    elif status != 200:
        return []
    return [("x-amz-checksum-sha256", value), ("x-amz-checksum-type", "FULL_OBJECT")]


def simple_range(value):
    """FIRST, LAST of 'bytes=FIRST-LAST' when s3rver gets it right."""
    if not value or not value.startswith("bytes="):
        return None
    first, _, last = value[6:].partition("-")
    if first.isdigit() and last.isdigit() and int(last) > int(first):
        return int(first), int(last)
    return None


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def reply(self, status, body, headers=()):
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def do_HEAD(self):
        self.do_GET()

    def do_GET(self):
        cfg = config()
        split = urllib.parse.urlsplit(self.path)
        bucket = urllib.parse.unquote(split.path.lstrip("/").split("/", 1)[0])
        try:
            check_signature(self, cfg, bucket)
            if take_slow_down():
                raise Refusal(503, "SlowDown", "Please reduce your request rate.")
        except Refusal as r:
            log(f"proxy: {self.command} {self.path} refused {r.status} {r.code}")
            body = error_xml(r.code, r.message, **r.extra)
            self.reply(r.status, body, [("Content-Type", "application/xml"), *r.headers.items()])
            return
        log(f"proxy: {self.command} {self.path} range={self.headers.get('Range')} signed")
        query = dict(urllib.parse.parse_qsl(split.query, keep_blank_values=True))
        if "/" not in split.path.strip("/") and query.get("list-type") == "2":
            if cfg.get("list_answer") is not None:
                status, body = 200, cfg["list_answer"].encode("utf-8")
            else:
                status, body = list_objects_v2(bucket, query, cfg)
            self.reply(status, body, [("Content-Type", "application/xml")])
            return
        rng = self.headers.get("Range")
        object_name = urllib.parse.unquote(split.path.lstrip("/"))
        if rng is None or simple_range(rng):
            fwd = {"Range": rng} if rng else {}
            resp, body = backend(self.command, self.path, fwd)
            headers = [(k, v) for k, v in resp.getheaders()
                       if k.lower() not in ("content-length", "connection", "transfer-encoding", "date")]
            self.reply(resp.status, body, headers + checksum_headers(self, object_name, resp.status, headers))
            return
        self.cut_range(rng, object_name)

    def do_PUT(self):
        cfg = config()
        split = urllib.parse.urlsplit(self.path)
        bucket = urllib.parse.unquote(split.path.lstrip("/").split("/", 1)[0])
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        checksum = self.headers.get("x-amz-checksum-sha256")
        try:
            check_signature(self, cfg, bucket)
            if checksum is not None and checksum != base64.b64encode(hashlib.sha256(body).digest()).decode():
                raise Refusal(400, "BadDigest", "The SHA256 you specified did not match the calculated checksum.")
        except Refusal as r:
            log(f"proxy: {self.command} {self.path} refused {r.status} {r.code}")
            self.reply(r.status, error_xml(r.code, r.message, **r.extra), [("Content-Type", "application/xml")])
            return
        log(f"proxy: {self.command} {self.path} range=None signed")
        resp, rbody = backend("PUT", self.path, {"Content-Length": str(len(body))}, body)
        if resp.status == 200:
            remember_checksum(urllib.parse.unquote(split.path.lstrip("/")), checksum)
        headers = [(k, v) for k, v in resp.getheaders() if k.lower() == "etag"]
        if resp.status == 200 and checksum is not None:
            headers.append(("x-amz-checksum-sha256", checksum))
        self.reply(resp.status, rbody, headers)

    def cut_range(self, rng, object_name):
        resp, body = backend("GET", self.path)
        headers = [(k, v) for k, v in resp.getheaders()
                   if k.lower() in ("etag", "last-modified", "content-type")]
        if resp.status != 200:
            self.reply(resp.status, body, headers)
            return
        size = len(body)
        first, _, last = rng[6:].partition("-")
        if first == "" and last.isdigit():          # the last N bytes
            first, last = max(0, size - int(last)), size - 1
        elif first.isdigit() and last == "":        # from FIRST to the end
            first, last = int(first), size - 1
        elif first.isdigit() and last.isdigit():
            first, last = int(first), min(int(last), size - 1)
        else:
            self.reply(400, error_xml("InvalidArgument", "bad Range"), headers)
            return
        if first >= size or first > last:
            self.reply(416, error_xml("InvalidRange", "The requested range is not satisfiable"), headers)
            return
        headers.append(("Content-Range", f"bytes {first}-{last}/{size}"))
        self.reply(206, body[first:last + 1], headers + checksum_headers(self, object_name, 206, headers))


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


Server(("127.0.0.1", PORT), Handler).serve_forever()
