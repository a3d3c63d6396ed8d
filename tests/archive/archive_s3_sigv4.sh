#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# archive_s3_sigv4.sh -- the archive's S3 requests checked as S3 checks
# them.  s3rver checks neither SigV4 signatures nor payload hashes, so
# tests/archive/sigv4_proxy.py, a verifier of its own (Python's standard
# library, from AWS's description of SigV4), stands between the client
# and s3rver:
#
#   0. the verifier against AWS's published examples (--self-test);
#   1. through it, archive_roundtrip (objects written, read back whole
#      and by their first bytes, Range), archive_s3 (listings across
#      pages, its error cases), replctl archive list, also with
#      AWS_SESSION_TOKEN (x-amz-security-token, signed), and replctl
#      archive prune of one of archive_roundtrip's archives (its objects
#      deleted): every request verified (signature, x-amz-date within 15
#      minutes, region and service of the credential, x-amz-content-sha256
#      the SHA-256 of the body received), GET, PUT and DELETE among them
#      and a signed Range, none refused; none with UNSIGNED-PAYLOAD; the
#      only unknown access key archive_s3's own NOSUCHKEY;
#   2. replctl archive list with a wrong AWS_SECRET_ACCESS_KEY: exit 3,
#      "HTTP 403: SignatureDoesNotMatch"; with another AWS_REGION: exit 3,
#      AuthorizationHeaderMalformed; nothing verified;
#   3. the proxy altering a byte of every PUT body (--corrupt-put):
#      archive_roundtrip fails with "HTTP 400: XAmzContentSHA256Mismatch",
#      the proxy's payload check refused each PUT, none reached s3rver.
#
# Skipped (77) without python3 or s3rver; what it starts is ended on exit.
set -u
NAME=archive_s3_sigv4
here=$(dirname "$0")
PROXY=$here/sigv4_proxy.py
command -v python3 > /dev/null || { echo "SKIP: $NAME: no python3"; exit 77; }

D=$(mktemp -d "${TMPDIR:-/tmp}/$NAME.XXXXXX") || exit 99
PROXY_PID=
proxy_stop() {
	[[ -n $PROXY_PID ]] || return 0
	kill "$PROXY_PID" 2> /dev/null	# SIGTERM: it writes its counts
	wait "$PROXY_PID" 2> /dev/null
	PROXY_PID=
}
cleanup() {
	proxy_stop
	s3rver_stop
	rm -rf "$D"
}
. "$here/s3rver_lib.sh"
trap cleanup EXIT

rc=0
fail() { echo "$NAME: FAIL: $*"; rc=1; }

# 0. the verifier itself
if ! python3 "$PROXY" --self-test > "$D/self-test.out" 2>&1; then
	cat "$D/self-test.out"
	echo "$NAME: FAIL: sigv4_proxy.py --self-test"
	exit 1
fi
echo "$NAME: $(tail -n 1 "$D/self-test.out") ($(grep -c '^ok' "$D/self-test.out") checks)"

s3rver_start "$D/s3" archive-test archive-root
S3RVER_URL=$AWS_ENDPOINT_URL
# no proxy between the tests and the loopback servers
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY ALL_PROXY all_proxy

# proxy_start NAME [ARGS]: a verifier in front of s3rver, with s3rver's
# account and region; AWS_ENDPOINT_URL pointed at it; its counts in
# D/NAME.counts once stopped, its refusals in D/NAME.log
proxy_start() {
	local name=$1 t
	shift
	python3 "$PROXY" --upstream "$S3RVER_URL" --access-key "$AWS_ACCESS_KEY_ID" \
		--secret "$AWS_SECRET_ACCESS_KEY" --region "$AWS_REGION" \
		--port-file "$D/$name.port" --counts "$D/$name.counts" "$@" \
		2> "$D/$name.log" &
	PROXY_PID=$!
	for ((t = 0; t < 100; t++)); do
		if [[ -s $D/$name.port ]]; then
			export AWS_ENDPOINT_URL=http://127.0.0.1:$(cat "$D/$name.port")
			return 0
		fi
		kill -0 "$PROXY_PID" 2> /dev/null || break
		sleep 0.1
	done
	echo "$NAME: the proxy ($name) did not start: $(tail -n 20 "$D/$name.log")"
	exit 99
}

# count NAME KEY: a stopped proxy's count (0 when it has none)
count() {
	awk -v k="$2" '$1 == k { n = $2 } END { print n + 0 }' "$D/$1.counts"
}

counts_of() {
	[[ -s $D/$1.counts ]] || { fail "$1: the proxy wrote no counts"; return 1; }
	echo "$NAME: $1: $(tr '\n' ' ' < "$D/$1.counts")"
}

# refusals NAME: a proxy's first refusals (InvalidAccessKeyId aside), the
# first one's canonical request and string to sign
refusals() {
	grep '^sigv4_proxy: refused' "$D/$1.log" | grep -v InvalidAccessKeyId | head -n 5
	awk '/^sigv4_proxy: / { if (on) exit; on = /refused/ && !/InvalidAccessKeyId/; next }
		on' "$D/$1.log"
}

# 1. the archive's checks through the verifier
proxy_start verify
export ARCHIVE_TEST_TARGET=s3://archive-test/sigv4 ARCHIVE_TEST_EMPTY_BUCKET=archive-root
for t in archive_roundtrip archive_s3; do
	./tests/archive/$t > "$D/$t.out" 2>&1
	st=$?
	[[ $st == 0 ]] || { cat "$D/$t.out"; fail "$t through the verifier exited $st"; }
done
pages=s3://archive-test/sigv4/archive_s3/pages
out=$(./tools/replctl/replctl archive list "$pages" 2>&1)
grep -q 'restorable up to LSN 400$' <<< "$out" ||
	fail "replctl archive list $pages: $(tail -n 3 <<< "$out")"
out=$(AWS_SESSION_TOKEN=session/token+1= ./tools/replctl/replctl archive list "$pages" 2>&1)
grep -q 'restorable up to LSN 400$' <<< "$out" ||
	fail "replctl archive list $pages with AWS_SESSION_TOKEN: $(tail -n 3 <<< "$out")"
# the records' times (set by the test) are years old: all pruned
resume=s3://archive-test/sigv4/archive_roundtrip/resume
out=$(./tools/replctl/replctl archive prune --keep-days 1 "$resume" 2>&1)
grep -q '^pruned: [1-9][0-9]* objects deleted$' <<< "$out" ||
	fail "replctl archive prune --keep-days 1 $resume: $out"
out=$(./tools/replctl/replctl archive list "$resume" 2>&1)
grep -q '^0 segments, 0 bases' <<< "$out" ||
	fail "replctl archive list $resume after its prune: $(tail -n 3 <<< "$out")"
proxy_stop
if counts_of verify; then
	(($(count verify verified) > 0)) || fail "no request verified"
	for m in GET PUT DELETE; do
		(($(count verify verified_$m) > 0)) || fail "no $m verified"
	done
	(($(count verify verified_signing:host\;range\;x-amz-content-sha256\;x-amz-date) > 0)) ||
		fail "no ranged read verified (Range signed)"
	(($(count verify rejected) == 0)) ||
		fail "$(count verify rejected) requests refused: $(refusals verify)"
	(($(count verify unsigned_payload) == 0)) ||
		fail "$(count verify unsigned_payload) requests with UNSIGNED-PAYLOAD:" \
			"their bodies are not checked"
	(($(count verify upstream_errors) == 0)) ||
		fail "s3rver not reached: $(grep upstream "$D/verify.log")"
	# archive_s3 checks an unknown access key (NOSUCHKEY): the only one
	nosuch=$(grep -c '^  AWSAccessKeyId: NOSUCHKEY$' "$D/verify.log")
	(($(count verify unknown_key) == nosuch)) ||
		fail "an unknown access key other than archive_s3's:" \
			"$(grep -B 1 AWSAccessKeyId "$D/verify.log")"
fi

# 2. the wrong secret, the wrong region: refused, and the client says why
proxy_start wrong
out=$(AWS_SECRET_ACCESS_KEY=not-the-secret ./tools/replctl/replctl archive list "$pages" 2>&1)
st=$?
[[ $st == 3 ]] || fail "a wrong secret: replctl archive list exited $st, not 3: $out"
grep -q 'GET cluster-uuid: HTTP 403: SignatureDoesNotMatch' <<< "$out" ||
	fail "a wrong secret: no SignatureDoesNotMatch in: $out"
out=$(AWS_REGION=eu-west-1 ./tools/replctl/replctl archive list "$pages" 2>&1)
st=$?
[[ $st == 3 ]] || fail "a wrong region: replctl archive list exited $st, not 3: $out"
grep -q 'HTTP 400: AuthorizationHeaderMalformed: the region .eu-west-1. is wrong' <<< "$out" ||
	fail "a wrong region: no AuthorizationHeaderMalformed in: $out"
proxy_stop
if counts_of wrong; then
	(($(count wrong verified) == 0)) || fail "a wrong secret or region verified"
	(($(count wrong rejected_SignatureDoesNotMatch) == 1)) ||
		fail "the wrong secret: not one SignatureDoesNotMatch"
	(($(count wrong rejected_AuthorizationHeaderMalformed) == 1)) ||
		fail "the wrong region: not one AuthorizationHeaderMalformed"
fi

# 3. a byte of each PUT body altered on its way: the payload hash refuses it
proxy_start corrupt --corrupt-put
ARCHIVE_TEST_TARGET=s3://archive-test/corrupt ./tests/archive/archive_roundtrip \
	> "$D/corrupt.out" 2>&1 && fail "archive_roundtrip passed with its PUT bodies altered"
grep -q 'PUT cluster-uuid: HTTP 400: XAmzContentSHA256Mismatch' "$D/corrupt.out" ||
	fail "altered PUTs: no XAmzContentSHA256Mismatch in: $(head -n 5 "$D/corrupt.out")"
proxy_stop
if counts_of corrupt; then
	n=$(count corrupt rejected_XAmzContentSHA256Mismatch)
	((n > 0)) || fail "altered PUTs: none refused for its payload hash"
	(($(count corrupt rejected) == n)) ||
		fail "altered PUTs: refused for another reason: $(refusals corrupt)"
	(($(count corrupt verified_PUT) == 0)) || fail "an altered PUT verified"
	(($(grep -c -- '--corrupt-put: PUT' "$D/corrupt.log") == n)) ||
		fail "altered PUTs: $(grep -c -- '--corrupt-put: PUT' "$D/corrupt.log") altered, $n refused"
fi
# (s3rver keeps an object's key as a path under its bucket's directory)
[[ -d $D/s3/archive-test/sigv4/archive_s3/pages ]] ||
	fail "no $D/s3/archive-test/sigv4/archive_s3/pages: not where s3rver keeps objects?"
[[ -e $D/s3/archive-test/corrupt ]] &&
	fail "an altered PUT reached s3rver: $(find "$D/s3/archive-test/corrupt" | head -n 3)"

kill -0 "$S3RVER_PID" 2> /dev/null ||
	fail "s3rver died: $(tail -n 20 "$D/s3.log")"
[[ $rc == 0 ]] && echo "$NAME: ok"
exit $rc
