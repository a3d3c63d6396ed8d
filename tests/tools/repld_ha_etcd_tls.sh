#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# repld_ha_etcd_tls.sh -- the coordinator against an etcd that serves only
# https and asks for client certificates (coordinator.etcd.tls: ca, cert,
# key): three repld nodes (lease 1 s) beside one such etcd on loopback.
#
#   1. etcd refuses a client without a certificate (so the nodes' own
#      certificates are what lets them in) and one that does not trust its
#      CA;
#   2. the cluster comes up over https: node1 holds the leader key, and the
#      membership key says configuration epoch 1;
#   3. the primary is killed (SIGKILL): a replica acknowledges within 15 s,
#      and holds the leader key;
#   4. node1 back as a replica, its file naming a CA that did not sign
#      etcd's certificate: it reports etcd unreachable in status (reachable
#      false, the TLS failure in last_error), and the new primary keeps the
#      leader key.
# Without an etcd binary or openssl it is skipped (77).
NAME=repld_ha_etcd_tls
ETCD=${ETCD:-$(command -v etcd)}
[[ -n $ETCD && -x $ETCD ]] ||
	{ echo "SKIP: $NAME: no etcd binary (Debian: apt-get install etcd-server)"; exit 77; }
command -v openssl > /dev/null || { echo "SKIP: $NAME: no openssl"; exit 77; }
FIRST_ACK=${FIRST_ACK:-./tests/tools/first_ack}
[[ -x $FIRST_ACK ]] || { echo "$NAME: $FIRST_ACK not built"; exit 99; }
. "$(dirname "$0")/cluster_lib.sh"
. "$(dirname "$0")/ha_cluster.sh"
T0=$SECONDS

# the test CA and its client certificates, and etcd's server certificate
# for 127.0.0.1 signed by it
ETCD_TLS=$D/t
sh "$(dirname "$0")/../engine/make-test-ca.sh" "$ETCD_TLS" > "$D/openssl.err" 2>&1 ||
	fail "make-test-ca.sh: $(tail -n 3 "$D/openssl.err")"
(
	cd "$ETCD_TLS" || exit 1
	printf '%s\n' "basicConstraints = critical, CA:FALSE" \
		"keyUsage = critical, digitalSignature" \
		"extendedKeyUsage = serverAuth, clientAuth" "subjectAltName = IP:127.0.0.1" > etcd.ext
	openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out etcd.key &&
	openssl req -new -key etcd.key -subj "/CN=etcd" -config ca.cnf -out etcd.csr &&
	openssl x509 -req -in etcd.csr -CA ca.pem -CAkey ca.key -set_serial 77 \
		-days 2 -extfile etcd.ext -out etcd.pem
) >> "$D/openssl.err" 2>&1 || fail "etcd's certificate: $(tail -n 3 "$D/openssl.err")"

ha_etcd_start

# 1. what etcd lets in
curl -sf --max-time 2 --cacert "$ETCD_TLS/ca.pem" "$ETCD_URL/version" > /dev/null 2>&1 &&
	fail "etcd answered a client without a certificate"
curl -sf --max-time 2 --cacert "$ETCD_TLS/other-ca.pem" --cert "$ETCD_TLS/primary.pem" \
	--key "$ETCD_TLS/primary.key" "$ETCD_URL/version" > /dev/null 2>&1 &&
	fail "a client that does not trust etcd's CA got an answer"
curl -sf --max-time 2 "${ETCD_CURL[@]}" "$ETCD_URL/version" > /dev/null ||
	fail "etcd did not answer a client with the test CA's certificate"
echo "$NAME: etcd on $ETCD_URL: client certificates required"

# 2. the cluster over https
ha_start_cluster 1000
s=$(status_json 1)
[[ $(jstr "$s" endpoint) == "$ETCD_URL" ]] || fail "node1's endpoint is not $ETCD_URL: $s"
for ((t = 0; t < 100; t++)); do
	[[ $(status_json 1) == *'"membership":{"state":"applied","config_epoch":1,'* ]] && break
	sleep 0.1
done
[[ $(status_json 1) == *'"membership":{"state":"applied","config_epoch":1,'* ]] ||
	fail "node1's membership key is not applied at epoch 1: $(status_json 1)"

# 3. a failover over https
kill -9 "${pid[1]}"
wait "${pid[1]}" 2>/dev/null
unset 'pid[1]'
out=$("$FIRST_ACK" 15000 77 "$(sock 2)" "$(sock 3)") ||
	fail "no node acknowledged within 15 s of node1's kill"
read -r idx ms _ <<< "$out"
new=$((idx + 1))
for ((t = 0; t < 50; t++)); do
	[[ $(status_json "$new") == *'"holds_leader":true'* ]] && break
	sleep 0.1
done
[[ $(status_json "$new") == *'"holds_leader":true'* ]] ||
	fail "node$new acknowledged but does not hold the leader key"
echo "$NAME: node1 killed; node$new acknowledged $ms ms later and holds the leader key"

# 4. node1 back with a CA that did not sign etcd's certificate: it cannot
# reach etcd, says so, and takes over nothing
sed -i "s|ca = \"$ETCD_TLS/ca.pem\"|ca = \"$ETCD_TLS/other-ca.pem\"|" "$D/node1.conf"
sed -i 's/^role = "primary";/role = "replica";/' "$D/node1.conf"
grep -q "other-ca.pem" "$D/node1.conf" || fail "node1's file does not name other-ca.pem"
start 1
for ((t = 0; t < 100; t++)); do
	s=$(status_json 1)
	[[ $s == *'"reachable":false'* && $(jstr "$s" last_error) == *[Ss][Ss][Ll]* ]] && break
	sleep 0.1
done
[[ $s == *'"reachable":false'* ]] || fail "node1 with the wrong CA reports etcd reachable: $s"
[[ $(jstr "$s" last_error) == *[Ss][Ss][Ll]* ]] ||
	fail "node1's last_error does not name the TLS failure: $(jstr "$s" last_error)"
[[ $(status_json "$new") == *'"holds_leader":true'* ]] ||
	fail "node$new lost the leader key to node1"
echo "$NAME: node1 with the wrong CA: etcd unreachable ($(jstr "$s" last_error))"

for n in 1 2 3; do clean_stderr "$D/node$n.err" "node$n"; done
echo "$NAME: ok ($((SECONDS - T0)) s)"
