#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""sigv4_proxy.py -- an HTTP reverse proxy in front of a local S3-compatible
server (s3rver, which checks neither signatures nor payload hashes) that
checks every request as S3 would before forwarding it: its AWS Signature
Version 4 (Authorization header), the time of x-amz-date, the credential's
scope and the payload's SHA-256.  Written from AWS's public description of
SigV4 for S3 ("Authenticating Requests: Using the Authorization Header"),
with the Python standard library only.

  sigv4_proxy.py --upstream http://127.0.0.1:PORT --access-key ID
                 --secret SECRET [--region us-east-1] --port-file FILE
                 --counts FILE [--corrupt-put]
  sigv4_proxy.py --self-test

It listens on a free loopback port (written to --port-file once it
listens).  A request that passes is forwarded to the upstream server and
its answer relayed (status, headers, body); one that does not is answered
here, as S3 answers it, with an S3 error document (the client parses
those, archive/s3_xml.c):

  403 SignatureDoesNotMatch     the signature is not the one computed
  400 XAmzContentSHA256Mismatch x-amz-content-sha256 is not the SHA-256
                                of the body received
  403 RequestTimeTooSkewed      x-amz-date more than 15 minutes off
  400 AuthorizationHeaderMalformed  a region or service not this one's,
                                a scope date not x-amz-date's, a bad
                                Credential
  403 AccessDenied              no SigV4 Authorization header, an x-amz-*
                                header not signed, host or x-amz-date not
                                signed
  400 InvalidRequest            no x-amz-content-sha256
  403 InvalidAccessKeyId        an access key other than --access-key
  400 IncompleteBody            a body shorter than its Content-Length

(S3 answers a payload hash mismatch with 400, not 403; the client treats
either as a failed request.)

The payload: our client (archive/s3_request.c) computes the SHA-256 of
every body it sends -- PUT's object, and the empty body of GET and DELETE
-- and sends it as x-amz-content-sha256, which libcurl's CURLOPT_AWS_SIGV4
signs as the payload hash; it never sends UNSIGNED-PAYLOAD (nor
STREAMING-* chunk signatures).  UNSIGNED-PAYLOAD is valid SigV4 and
accepted here as S3 accepts it, but counted (unsigned_payload), and
tests/archive/archive_s3_sigv4.sh fails when it is not 0: without a signed
payload hash S3 could not reject an upload corrupted on its way.  The body
is read as the client sends it: with Content-Length (what s3_request.c
sends, CURLOPT_INFILESIZE_LARGE), or chunked (Transfer-Encoding), and
"Expect: 100-continue" answered (libcurl 7.88 sends it with every PUT).

--corrupt-put alters one byte of every non-empty PUT body (the middle one)
after it is received and before it is checked: the check of the payload
hash must then refuse it (a negative control of that check).

Counts (at exit and on SIGTERM, into --counts, a "NAME VALUE" line each):
verified (signature, time, scope and payload hash hold: forwarded),
verified_METHOD of each method, verified_signing:LIST of each list of
signed headers, rejected (any of them failed),
rejected_CODE for each error code,
unknown_key (an access key other than the one given: 403 InvalidAccessKeyId,
as S3 answers before it looks at the signature; not counted in rejected),
unsigned_payload (verified with UNSIGNED-PAYLOAD), upstream_errors (the
upstream server not reached: 500 InternalError); and how bodies came:
body_content_length, body_chunked, body_expect_100.  Each refused request
is logged on stderr with why, its canonical request and string to sign.
"""

import argparse
import calendar
import hashlib
import hmac
import http.client
import http.server
import os
import re
import signal
import socket
import sys
import threading
import time
import urllib.parse
import uuid
from xml.sax.saxutils import escape

ALGORITHM = "AWS4-HMAC-SHA256"
MAX_SKEW_S = 15 * 60
EMPTY_SHA256 = hashlib.sha256(b"").hexdigest()

# ---- SigV4, from the specification ----

UNRESERVED = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.~")


def uri_encode(raw, keep_slash):
    """bytes percent-encoded as SigV4 wants: every byte but the unreserved
    ones (and '/' in a path) as %XX, hex digits upper case"""
    out = []
    for b in raw:
        if b in UNRESERVED or (keep_slash and b == 0x2F):
            out.append(chr(b))
        else:
            out.append("%%%02X" % b)
    return "".join(out)


def canonical_uri(path):
    """the path as sent, decoded once and encoded once (S3 neither
    normalizes the path nor encodes it twice)"""
    if path == "":
        return "/"
    return uri_encode(urllib.parse.unquote_to_bytes(path), keep_slash=True)


def canonical_query(query):
    """name=value pairs decoded, encoded, sorted by name then value;
    a name without '=' has the empty value"""
    pairs = []
    for part in query.split("&"):
        if part == "":
            continue
        name, _, value = part.partition("=")
        pairs.append((uri_encode(urllib.parse.unquote_to_bytes(name), False),
                      uri_encode(urllib.parse.unquote_to_bytes(value), False)))
    pairs.sort()
    return "&".join("%s=%s" % p for p in pairs)


def canonical_header_value(values):
    """a header's values (several when it came more than once) trimmed,
    runs of spaces made one, joined with ','"""
    return ",".join(re.sub(r"[ \t]+", " ", v.strip()) for v in values)


def hmac_sha256(key, msg):
    return hmac.new(key, msg.encode("utf-8"), hashlib.sha256).digest()


def signing_key(secret, date, region, service):
    k = hmac_sha256(("AWS4" + secret).encode("utf-8"), date)
    k = hmac_sha256(k, region)
    k = hmac_sha256(k, service)
    return hmac_sha256(k, "aws4_request")


def canonical_request(method, target, headers, signed, payload_hash):
    """headers: a dict of lower-case name to its list of values"""
    path, _, query = target.partition("?")
    lines = [method, canonical_uri(path), canonical_query(query)]
    lines += ["%s:%s" % (n, canonical_header_value(headers[n])) for n in signed]
    lines += ["", ";".join(signed), payload_hash]
    return "\n".join(lines)


def string_to_sign(amz_date, scope, creq):
    return "\n".join([ALGORITHM, amz_date, scope,
                      hashlib.sha256(creq.encode("utf-8")).hexdigest()])


def signature(secret, date, region, service, sts):
    return hmac.new(signing_key(secret, date, region, service), sts.encode("utf-8"),
                    hashlib.sha256).hexdigest()


# ---- checking one request ----

class Refusal(Exception):
    """the request is refused: status, S3 error code, message, more fields"""

    def __init__(self, status, code, message, **fields):
        super().__init__(message)
        self.status, self.code, self.message, self.fields = status, code, message, fields


class Verdict:
    def __init__(self):
        self.creq = self.sts = self.signed = None
        self.unsigned_payload = False


def parse_authorization(value):
    if not value.startswith(ALGORITHM + " "):
        raise Refusal(400, "AuthorizationHeaderMalformed",
                      "the authorization header is not %s" % ALGORITHM)
    parts = {}
    for item in value[len(ALGORITHM) + 1:].split(","):
        name, eq, v = item.strip().partition("=")
        if not eq or name in parts:
            raise Refusal(400, "AuthorizationHeaderMalformed",
                          "the authorization header is malformed: %r" % item.strip())
        parts[name] = v
    if set(parts) != {"Credential", "SignedHeaders", "Signature"}:
        raise Refusal(400, "AuthorizationHeaderMalformed",
                      "the authorization header needs exactly Credential, "
                      "SignedHeaders and Signature, not %s" % sorted(parts))
    return parts["Credential"], parts["SignedHeaders"], parts["Signature"]


def verify(method, target, header_items, body, keys, region, now):
    """header_items: (name, value) pairs as received; keys: access key id
    to secret.  A Verdict, or raises Refusal."""
    v = Verdict()
    headers = {}
    for name, value in header_items:
        headers.setdefault(name.lower(), []).append(value)
    auth = headers.get("authorization")
    if auth is None:
        raise Refusal(403, "AccessDenied", "no Authorization header")
    if len(auth) > 1:
        raise Refusal(400, "InvalidArgument", "more than one Authorization header")
    credential, signed_list, provided = parse_authorization(auth[0])

    cred = credential.split("/")
    if len(cred) != 5 or cred[4] != "aws4_request":
        raise Refusal(400, "AuthorizationHeaderMalformed",
                      "the Credential %r is not KEY/DATE/REGION/SERVICE/aws4_request"
                      % credential)
    key_id, date, cred_region, service, _ = cred
    if key_id not in keys:
        raise Refusal(403, "InvalidAccessKeyId", "The AWS Access Key Id you provided "
                      "does not exist in our records.", AWSAccessKeyId=key_id)
    if cred_region != region:
        raise Refusal(400, "AuthorizationHeaderMalformed", "the region '%s' is wrong; "
                      "expecting '%s'" % (cred_region, region), Region=region)
    if service != "s3":
        raise Refusal(400, "AuthorizationHeaderMalformed", "the service '%s' in the "
                      "credential is not 's3'" % service)

    amz = headers.get("x-amz-date")
    if amz is None or len(amz) != 1 or not re.fullmatch(r"\d{8}T\d{6}Z", amz[0]):
        raise Refusal(403, "AccessDenied", "AWS authentication requires a valid "
                      "x-amz-date header (YYYYMMDDTHHMMSSZ)")
    amz_date = amz[0]
    try:
        t = calendar.timegm(time.strptime(amz_date, "%Y%m%dT%H%M%SZ"))
    except ValueError:
        raise Refusal(403, "AccessDenied", "x-amz-date %r is not a time" % amz_date)
    if date != amz_date[:8]:
        raise Refusal(400, "AuthorizationHeaderMalformed", "Invalid credential date "
                      "\"%s\": not the date of x-amz-date \"%s\"" % (date, amz_date))
    if abs(now - t) > MAX_SKEW_S:
        raise Refusal(403, "RequestTimeTooSkewed", "The difference between the request "
                      "time and the current time is too large.", RequestTime=amz_date,
                      ServerTime=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now)),
                      MaxAllowedSkewMilliseconds=str(MAX_SKEW_S * 1000))

    sha = headers.get("x-amz-content-sha256")
    if sha is None:
        raise Refusal(400, "InvalidRequest", "Missing required header for this request: "
                      "x-amz-content-sha256")
    payload_hash = sha[0]
    if len(sha) != 1 or not (payload_hash == "UNSIGNED-PAYLOAD" or
                             re.fullmatch(r"[0-9a-f]{64}", payload_hash)):
        raise Refusal(400, "InvalidArgument", "x-amz-content-sha256 must be "
                      "UNSIGNED-PAYLOAD or a SHA-256 in lower-case hex (chunk "
                      "signatures are not taken here): %r" % sha)

    signed = signed_list.split(";")
    if signed != sorted(set(signed)) or any(n != n.lower() or n == "" for n in signed):
        raise Refusal(403, "SignatureDoesNotMatch", "SignedHeaders %r is not a sorted "
                      "list of distinct lower-case names" % signed_list)
    for must in ("host", "x-amz-date", "x-amz-content-sha256"):
        if must not in signed:
            raise Refusal(403, "AccessDenied", "%s is not among the signed headers" % must)
    unsigned = sorted(n for n in headers if n.startswith("x-amz-") and n not in signed)
    if unsigned:
        raise Refusal(403, "AccessDenied", "There were headers present in the request "
                      "which were not signed", HeadersNotSigned=", ".join(unsigned))
    missing = [n for n in signed if n not in headers]
    if missing:
        raise Refusal(403, "SignatureDoesNotMatch", "signed headers missing from the "
                      "request: %s" % ", ".join(missing))

    v.signed = signed_list
    scope = "%s/%s/%s/aws4_request" % (date, cred_region, service)
    v.creq = canonical_request(method, target, headers, signed, payload_hash)
    v.sts = string_to_sign(amz_date, scope, v.creq)
    want = signature(keys[key_id], date, cred_region, service, v.sts)
    if not hmac.compare_digest(want, provided):
        raise Refusal(403, "SignatureDoesNotMatch", "The request signature we "
                      "calculated does not match the signature you provided. Check "
                      "your key and signing method.", AWSAccessKeyId=key_id,
                      StringToSign=v.sts, SignatureProvided=provided,
                      CanonicalRequest=v.creq)

    # the signature holds, over the hash claimed: now the body's own hash
    if payload_hash == "UNSIGNED-PAYLOAD":
        v.unsigned_payload = True
    else:
        got = hashlib.sha256(body).hexdigest()
        if got != payload_hash:
            raise Refusal(400, "XAmzContentSHA256Mismatch", "The provided "
                          "'x-amz-content-sha256' header does not match what was "
                          "computed.", ClientComputedContentSHA256=payload_hash,
                          S3ComputedContentSHA256=got)
    return v


def error_document(code, message, resource, fields):
    xml = ['<?xml version="1.0" encoding="UTF-8"?>\n<Error>',
           "<Code>%s</Code>" % escape(code), "<Message>%s</Message>" % escape(message)]
    for name, value in fields.items():
        xml.append("<%s>%s</%s>" % (name, escape(value), name))
    xml.append("<Resource>%s</Resource>" % escape(resource))
    xml.append("<RequestId>%s</RequestId>" % uuid.uuid4().hex[:16].upper())
    xml.append("</Error>")
    return "".join(xml).encode("utf-8")


# ---- the proxy ----

HOP_BY_HOP = {"connection", "keep-alive", "proxy-connection", "transfer-encoding", "te",
              "trailer", "upgrade", "expect", "content-length"}


class Counts:
    def __init__(self, path):
        self.path = path
        self.lock = threading.Lock()
        self.n = {"verified": 0, "rejected": 0, "unknown_key": 0, "unsigned_payload": 0,
                  "upstream_errors": 0}

    def add(self, name):
        with self.lock:
            self.n[name] = self.n.get(name, 0) + 1

    def write(self):
        if not self.path:
            return
        with self.lock:
            tmp = self.path + ".tmp"
            with open(tmp, "w") as f:
                for name in sorted(self.n):
                    f.write("%s %d\n" % (name, self.n[name]))
            os.replace(tmp, self.path)


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"	# keep-alive, and Expect: 100-continue answered
    server_version = "sigv4-proxy"

    def setup(self):
        super().setup()
        self.upstream = None
        # an answer's header and body are two writes: without this, Nagle's
        # algorithm and the client's delayed ACK hold the body ~40 ms
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, fmt, *args):
        pass	# refusals are logged with why; the rest is counted

    def read_body(self):
        te = self.headers.get("Transfer-Encoding", "")
        if self.headers.get("Expect", "").lower() == "100-continue":
            self.server.cfg.counts.add("body_expect_100")
        if te.lower() == "chunked":
            self.server.cfg.counts.add("body_chunked")
            body = bytearray()
            while True:
                line = self.rfile.readline(1024)
                size = int(line.split(b";")[0].strip(), 16)
                if size == 0:
                    while self.rfile.readline(8192) not in (b"\r\n", b"\n", b""):
                        pass	# trailers
                    return bytes(body)
                body += self.rfile.read(size)
                self.rfile.readline(8)	# CRLF after the chunk
        elif te:
            raise ValueError("Transfer-Encoding %r" % te)
        n = int(self.headers.get("Content-Length", "0"))
        if n <= 0:
            return b""
        self.server.cfg.counts.add("body_content_length")
        body = self.rfile.read(n)
        if len(body) != n:
            raise ValueError("%d bytes of a Content-Length of %d" % (len(body), n))
        return body

    def reply(self, status, headers, body):
        self.send_response_only(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def refuse(self, r, target):
        cfg = self.server.cfg
        if r.code == "InvalidAccessKeyId":
            cfg.counts.add("unknown_key")
        else:
            cfg.counts.add("rejected")
            cfg.counts.add("rejected_" + r.code)
        log = ["sigv4_proxy: refused %s %s: %d %s: %s" % (self.command, target, r.status,
                                                          r.code, r.message)]
        for name in ("AWSAccessKeyId", "ClientComputedContentSHA256",
                     "S3ComputedContentSHA256", "HeadersNotSigned"):
            if name in r.fields:
                log.append("  %s: %s" % (name, r.fields[name]))
        for name, what in (("CanonicalRequest", "canonical request"),
                           ("StringToSign", "string to sign")):
            if name in r.fields:
                log.append("  %s:\n    %s" % (what, r.fields[name].replace("\n", "\n    ")))
        sys.stderr.write("\n".join(log) + "\n")
        sys.stderr.flush()
        resource = urllib.parse.unquote(target.partition("?")[0])
        self.reply(r.status, [("Content-Type", "application/xml")],
                   error_document(r.code, r.message, resource, r.fields))

    def upstream_exchange(self, target, headers, body):
        """the request sent upstream on this client connection's own
        upstream connection (kept open between requests; a new one, once,
        when the one kept was closed meanwhile): the response and its body"""
        cfg = self.server.cfg
        for attempt in (0, 1):
            fresh = self.upstream is None
            if fresh:
                self.upstream = http.client.HTTPConnection(cfg.up_host, cfg.up_port,
                                                           timeout=60)
            try:
                # the body as received, with its Content-Length (http.client's)
                self.upstream.request(self.command, target, body=body if body or
                                      self.command in ("PUT", "POST") else None,
                                      headers=headers)
                resp = self.upstream.getresponse()
                data = resp.read()
                if resp.will_close:
                    self.upstream.close()
                    self.upstream = None
                return resp, data
            except (OSError, http.client.HTTPException):
                self.upstream.close()
                self.upstream = None
                if fresh or attempt == 1:
                    raise
        raise AssertionError("not reached")

    def finish(self):
        if self.upstream is not None:
            self.upstream.close()
        super().finish()

    def forward(self, target, body):
        cfg = self.server.cfg
        headers = join_headers((n, val) for n, val in self.headers.items()
                               if n.lower() not in HOP_BY_HOP)
        try:
            resp, data = self.upstream_exchange(target, headers, body)
        except (OSError, http.client.HTTPException) as e:
            cfg.counts.add("upstream_errors")
            sys.stderr.write("sigv4_proxy: %s %s: upstream: %s\n" % (self.command, target, e))
            self.reply(500, [("Content-Type", "application/xml")],
                       error_document("InternalError", "the upstream server: %s" % e,
                                      target, {}))
            return
        out = [(n, val) for n, val in resp.getheaders() if n.lower() not in HOP_BY_HOP]
        self.send_response_only(resp.status, resp.reason)
        for n, val in out:
            self.send_header(n, val)
        if self.command == "HEAD":
            # no body: the length of the one a GET would have had
            if resp.getheader("Content-Length") is not None:
                self.send_header("Content-Length", resp.getheader("Content-Length"))
            self.end_headers()
            return
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def handle_request(self):
        cfg = self.server.cfg
        target = self.path
        if not target.startswith("/"):
            # absolute form (a client that took us for a proxy): its path
            u = urllib.parse.urlsplit(target)
            target = (u.path or "/") + ("?" + u.query if u.query else "")
        try:
            body = self.read_body()
        except (ValueError, OSError) as e:
            self.close_connection = True
            cfg.counts.add("rejected")
            cfg.counts.add("rejected_IncompleteBody")
            sys.stderr.write("sigv4_proxy: %s %s: the body: %s\n" % (self.command, target, e))
            self.reply(400, [("Content-Type", "application/xml")],
                       error_document("IncompleteBody", str(e), target, {}))
            return
        if cfg.corrupt_put and self.command == "PUT" and body:
            i = len(body) // 2
            body = body[:i] + bytes([body[i] ^ 0x01]) + body[i + 1:]
            sys.stderr.write("sigv4_proxy: --corrupt-put: PUT %s: byte %d of %d altered\n"
                             % (target, i, len(body)))
        try:
            v = verify(self.command, target, self.headers.items(), body, cfg.keys,
                       cfg.region, time.time())
        except Refusal as r:
            self.refuse(r, target)
            return
        cfg.counts.add("verified")
        cfg.counts.add("verified_" + self.command)
        cfg.counts.add("verified_signing:" + v.signed)
        if v.unsigned_payload:
            cfg.counts.add("unsigned_payload")
        self.forward(target, body)

    def run(self):
        try:
            self.handle_request()
        except (BrokenPipeError, ConnectionResetError):
            # the client stopped reading (a ranged read that had enough)
            self.close_connection = True

    do_GET = do_PUT = do_DELETE = do_HEAD = do_POST = run


def join_headers(items):
    """http.client takes a dict: a header sent more than once is joined
    with ',' (as HTTP allows)"""
    d, names = {}, {}
    for n, val in items:
        k = names.setdefault(n.lower(), n)
        d[k] = d[k] + "," + val if k in d else val
    return d


class Config:
    pass


def serve(args):
    cfg = Config()
    u = urllib.parse.urlsplit(args.upstream)
    if u.scheme != "http" or not u.hostname:
        sys.exit("sigv4_proxy: --upstream must be http://HOST[:PORT]")
    cfg.up_host, cfg.up_port = u.hostname, u.port or 80
    cfg.keys = {args.access_key: args.secret}
    cfg.region = args.region
    cfg.corrupt_put = args.corrupt_put
    cfg.counts = Counts(args.counts)

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    srv.cfg = cfg

    def on_term(signum, frame):
        cfg.counts.write()
        os._exit(0)

    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGINT, on_term)
    if args.port_file:
        tmp = args.port_file + ".tmp"
        with open(tmp, "w") as f:
            f.write("%d\n" % srv.server_address[1])
        os.replace(tmp, args.port_file)
    try:
        srv.serve_forever()
    finally:
        cfg.counts.write()


# ---- the verifier checked against AWS's published example ----

def self_test():
    """AWS's example "GET Object" of "Signature Calculations for the
    Authorization Header: Transferring Payload in a Single Chunk (AWS
    Signature Version 4)" (Amazon S3 API Reference): the first 10 bytes of
    test.txt in examplebucket, its canonical request's hash and its
    signature as published; then the same request refused for each thing
    that can be wrong with it; and the page's other three examples."""
    key, secret = "AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
    keys = {key: secret}
    when = 1369353600	# 2013-05-24T00:00:00Z
    assert time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(when)) == "20130524T000000Z"
    fails = []

    def check(what, cond):
        print("%s: %s" % ("ok" if cond else "FAIL", what))
        if not cond:
            fails.append(what)

    hdrs = [("Host", "examplebucket.s3.amazonaws.com"), ("Range", "bytes=0-9"),
            ("x-amz-content-sha256", EMPTY_SHA256), ("x-amz-date", "20130524T000000Z")]
    auth = ("AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/"
            "aws4_request,SignedHeaders=host;range;x-amz-content-sha256;x-amz-date,"
            "Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41")
    req = hdrs + [("Authorization", auth)]

    # the pieces, as the example shows them
    check("empty payload hash", EMPTY_SHA256 ==
          "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    h = {n.lower(): [val] for n, val in hdrs}
    creq = canonical_request("GET", "/test.txt", h,
                             ["host", "range", "x-amz-content-sha256", "x-amz-date"],
                             EMPTY_SHA256)
    check("canonical request's SHA-256 7344ae5b...", hashlib.sha256(creq.encode()).hexdigest()
          == "7344ae5b7ee6c3e7e6b0fe0640412a37625d1fbfff95c48bbb2dc43964946972")
    sts = string_to_sign("20130524T000000Z", "20130524/us-east-1/s3/aws4_request", creq)
    check("signature f0e8bdb8...", signature(secret, "20130524", "us-east-1", "s3", sts) ==
          "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41")

    # the whole request: verified
    try:
        verify("GET", "/test.txt", req, b"", keys, "us-east-1", when + 60)
        check("the example request verifies", True)
    except Refusal as r:
        check("the example request verifies (%s: %s)" % (r.code, r.message), False)

    # the page's other examples, whole: a PUT (a '$' in the key, encoded
    # in the canonical path; a body and its hash), a listing (a query to
    # sort) and a subresource without '=' (?lifecycle)
    def example(what, method, target, items, signed, sig, body=b""):
        a = ("AWS4-HMAC-SHA256 Credential=%s/20130524/us-east-1/s3/aws4_request,"
             "SignedHeaders=%s,Signature=%s" % (key, signed, sig))
        try:
            verify(method, target, items + [("Authorization", a)], body, keys,
                   "us-east-1", when)
            check("the example %s verifies" % what, True)
        except Refusal as r:
            check("the example %s verifies (%s: %s)" % (what, r.code, r.message), False)

    put_body = b"Welcome to Amazon S3."
    put_hash = "44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072"
    check("the PUT example's payload hash", hashlib.sha256(put_body).hexdigest() == put_hash)
    example("PUT Object", "PUT", "/test$file.text",
            [("Host", "examplebucket.s3.amazonaws.com"),
             ("Date", "Fri, 24 May 2013 00:00:00 GMT"), ("x-amz-date", "20130524T000000Z"),
             ("x-amz-storage-class", "REDUCED_REDUNDANCY"),
             ("x-amz-content-sha256", put_hash)],
            "date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class",
            "98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd", put_body)
    plain = [("Host", "examplebucket.s3.amazonaws.com"),
             ("x-amz-date", "20130524T000000Z"), ("x-amz-content-sha256", EMPTY_SHA256)]
    example("GET Bucket (List Objects)", "GET", "/?max-keys=2&prefix=J", plain,
            "host;x-amz-content-sha256;x-amz-date",
            "34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7")
    example("GET Bucket Lifecycle", "GET", "/?lifecycle", plain,
            "host;x-amz-content-sha256;x-amz-date",
            "fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543")

    def refused(what, code, method="GET", target="/test.txt", items=req, body=b"",
                ks=keys, region="us-east-1", now=when):
        try:
            verify(method, target, items, body, ks, region, now)
            check("%s: refused with %s (it was verified)" % (what, code), False)
        except Refusal as r:
            check("%s: refused with %s" % (what, code), r.code == code)

    refused("another secret", "SignatureDoesNotMatch",
            ks={key: secret[:-1] + "Z"})
    refused("another path", "SignatureDoesNotMatch", target="/test.txt2")
    refused("a query added", "SignatureDoesNotMatch", target="/test.txt?x=1")
    refused("another method", "SignatureDoesNotMatch", method="DELETE")
    refused("a signed header changed", "SignatureDoesNotMatch",
            items=[("Range", "bytes=0-8") if n == "Range" else (n, val) for n, val in req])
    refused("a body whose hash is not x-amz-content-sha256", "XAmzContentSHA256Mismatch",
            body=b"x")
    refused("16 minutes late", "RequestTimeTooSkewed", now=when + 16 * 60)
    refused("16 minutes early", "RequestTimeTooSkewed", now=when - 16 * 60)
    refused("another region expected", "AuthorizationHeaderMalformed", region="eu-west-1")
    refused("an unknown access key", "InvalidAccessKeyId", ks={"OTHERKEY": secret})
    refused("an x-amz header not signed", "AccessDenied",
            items=req + [("x-amz-meta-a", "b")])
    refused("no Authorization", "AccessDenied", items=hdrs)
    refused("no x-amz-content-sha256", "InvalidRequest",
            items=[(n, val) for n, val in req if n != "x-amz-content-sha256"])
    # canonical forms: the query sorted and encoded, the path encoded once
    check("canonical query", canonical_query("prefix=a%2Fb&list-type=2&max-keys=7&x") ==
          "list-type=2&max-keys=7&prefix=a%2Fb&x=")
    check("canonical query encodes what the client left raw",
          canonical_query("a=b/c+d") == "a=b%2Fc%2Bd")
    check("canonical path", canonical_uri("/b/seg/a$b%20c~") == "/b/seg/a%24b%20c~")
    if fails:
        print("sigv4_proxy: self-test: %d failed" % len(fails))
        return 1
    print("sigv4_proxy: self-test: ok")
    return 0


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--self-test", action="store_true")
    p.add_argument("--upstream")
    p.add_argument("--access-key")
    p.add_argument("--secret")
    p.add_argument("--region", default="us-east-1")
    p.add_argument("--port-file")
    p.add_argument("--counts")
    p.add_argument("--corrupt-put", action="store_true")
    args = p.parse_args()
    if args.self_test:
        sys.exit(self_test())
    if not (args.upstream and args.access_key and args.secret is not None):
        p.error("--upstream, --access-key and --secret are needed")
    serve(args)


if __name__ == "__main__":
    main()
