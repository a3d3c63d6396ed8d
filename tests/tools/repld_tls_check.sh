#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# repld_tls_check.sh -- the TLS files of repld's configuration:
#   1. the openssl commands of repld.conf(5)'s CERTIFICATES section, run as
#      the page prints them (node2 with its own name): --check says ok and a
#      primary and a replica with them connect;
#   2. a garbage CA, certificate or key file, another node's key, a
#      certificate of another CA, an expired one and one not valid yet:
#      --check exits 2 with "FILE: TLS: reason" exactly, naming the file;
#   3. a start with each of them exits 2 with the same message before
#      anything is made: --bootstrap creates no log (and no admin socket),
#      --reinit leaves an existing log's bytes as they were.
#
# Environment: REPLD, REPLCTL (the build tree's by default; cluster_lib.sh).
set -u

NAME=repld_tls_check
command -v openssl > /dev/null 2>&1 || { echo "$NAME: no openssl command"; exit 77; }
. "$(dirname "$0")/cluster_lib.sh"
SRC=${srcdir:-$(dirname "$0")/../..}
PAGE=$SRC/docs/man/repld.conf.5
[[ -r $PAGE ]] || { echo "$NAME: no $PAGE"; exit 99; }

T0=$SECONDS

# tlsconf N ROLE CA CERT KEY [CONF ARGS...]: conf N ROLE ..., with a tls group
tlsconf() {
	local n=$1 role=$2 ca=$3 cert=$4 key=$5
	shift 5
	conf "$n" "$role" "$@"
	cat >> "$D/node$n.conf" <<-EOF
	tls = {
		ca = "$ca";
		cert = "$cert";
		key = "$key";
	};
	EOF
}

# 1. the page's commands, as printed
cmds=$(awk '/^\.SH CERTIFICATES/ { s = 1; next }
	s && /^\.SH/ { exit }
	s && /^\.EX/ { e = 1; next }
	s && /^\.EE/ { e = 0; next }
	s && e' "$PAGE")
[[ $(grep -c '^openssl ' <<< "$cmds") -eq 5 ]] ||
	fail "repld.conf(5)'s CERTIFICATES: not the 5 openssl commands: $cmds"
cmds=$(sed 's/\\-/-/g' <<< "$cmds")
[[ $cmds != *\\* ]] || fail "a roff escape this test does not undo: $cmds"
mkdir "$D/tls" || exit 99
(cd "$D/tls" && bash -eu -c "$cmds") > "$D/openssl.err" 2>&1 ||
	fail "the CERTIFICATES commands failed: $(cat "$D/openssl.err")"
# another node: the node's commands with its name
(cd "$D/tls" && bash -eu -c "$(grep node1 <<< "$cmds" | sed 's/node1/node2/g')") \
	>> "$D/openssl.err" 2>&1 ||
	fail "the CERTIFICATES commands for node2 failed: $(cat "$D/openssl.err")"
for f in ca.pem node1.key node1.pem node2.key node2.pem; do
	[[ -s $D/tls/$f ]] || fail "the CERTIFICATES commands made no $f"
done
T=$D/tls
tlsconf 1 primary "$T/ca.pem" "$T/node1.pem" "$T/node1.key" 3000 1 2
out=$("$REPLD" -c "$D/node1.conf" --check 2>&1)
rc=$?
[[ $rc -eq 0 && $out == "$D/node1.conf: ok" ]] ||
	fail "--check with the page's certificates: exit $rc, \"$out\""
tlsconf 2 replica "$T/ca.pem" "$T/node2.pem" "$T/node2.key" 3000 1 1
start 2 --bootstrap
wait_for 2 "listening" "listening"
start 1 --bootstrap
up 1 2
stop 1
stop 2
grep -q "plain TCP" "$D/node1.err" "$D/node2.err" &&
	fail "the nodes ran without TLS"
echo "$NAME: the CERTIFICATES commands make certificates that connect ($((SECONDS - T0)) s)"

# the other CA, expired and not yet valid certificates (each signed by t/ca.pem)
sh "$SRC/tests/engine/make-test-ca.sh" "$D/t" > "$D/openssl.err" 2>&1 ||
	fail "make-test-ca.sh: $(cat "$D/openssl.err")"
printf 'not a certificate\n' > "$T/garbage.pem"
O=$D/t

# 2. and 3. each bad file: CA CERT KEY MESSAGE
cases=(
	"$T/garbage.pem|$T/node1.pem|$T/node1.key|TLS: CA file $T/garbage.pem: no certificate or not PEM"
	"$T/ca.pem|$T/garbage.pem|$T/node1.key|TLS: certificate file $T/garbage.pem: no certificate or not PEM"
	"$T/ca.pem|$T/node1.pem|$T/garbage.pem|TLS: key file $T/garbage.pem: no private key or not PEM"
	"$T/ca.pem|$T/node1.pem|$T/node2.key|TLS: key file $T/node2.key does not match certificate $T/node1.pem"
	"$T/ca.pem|$O/replica1.pem|$O/replica1.key|TLS: certificate $O/replica1.pem is not signed by CA file $T/ca.pem"
	"$O/other-ca.pem|$T/node1.pem|$T/node1.key|TLS: certificate $T/node1.pem is not signed by CA file $O/other-ca.pem"
	"$O/ca.pem|$O/expired.pem|$O/expired.key|TLS: certificate $O/expired.pem has expired"
	"$O/ca.pem|$O/future.pem|$O/future.key|TLS: certificate $O/future.pem is not valid yet"
)
sum2=$(md5sum < "$D/node2.log")
for c in "${cases[@]}"; do
	IFS='|' read -r ca cert key msg <<< "$c"
	want="$D/node1.conf: $msg"
	# --check
	tlsconf 1 primary "$ca" "$cert" "$key" 3000 1 2
	out=$("$REPLD" -c "$D/node1.conf" --check 2> "$D/check.err")
	rc=$?
	clean_stderr "$D/check.err" "--check ($msg)"
	[[ $rc -eq 2 && -z $out && $(cat "$D/check.err") == "$want" ]] ||
		fail "--check: exit $rc (want 2), stderr \"$(cat "$D/check.err")\", want \"$want\""
	# the primary's first start: no log, no admin socket made
	rm -f "$D/node1.log"
	timeout 10 "$REPLD" -c "$D/node1.conf" --bootstrap 2> "$D/start.err"
	rc=$?
	clean_stderr "$D/start.err" "a start ($msg)"
	[[ $rc -eq 2 ]] || fail "--bootstrap with a bad TLS file: exit $rc, not 2 ($msg): $(cat "$D/start.err")"
	grep -qxF "$want" "$D/start.err" ||
		fail "--bootstrap: the message is not \"$want\": $(cat "$D/start.err")"
	[[ ! -e $D/node1.log && ! -e $D/node1.sock ]] ||
		fail "--bootstrap with a bad TLS file left $(ls "$D"/node1.log "$D"/node1.sock 2>/dev/null)"
	# a replica made anew: the old log stays as it was
	tlsconf 2 replica "$ca" "$cert" "$key" 3000 1 1
	timeout 10 "$REPLD" -c "$D/node2.conf" --reinit 2> "$D/start.err"
	rc=$?
	clean_stderr "$D/start.err" "--reinit ($msg)"
	[[ $rc -eq 2 ]] || fail "--reinit with a bad TLS file: exit $rc, not 2 ($msg): $(cat "$D/start.err")"
	grep -qxF "$D/node2.conf: $msg" "$D/start.err" ||
		fail "--reinit: the message is not \"$D/node2.conf: $msg\": $(cat "$D/start.err")"
	[[ $(md5sum < "$D/node2.log") == "$sum2" ]] ||
		fail "--reinit with a bad TLS file changed the log ($msg)"
	echo "$NAME: exit 2: $msg"
done

echo "$NAME: ok ($((SECONDS - T0)) s)"
