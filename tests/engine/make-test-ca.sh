#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
#
# make-test-ca.sh DIR -- the certificates of the control channel's TLS tests:
# a CA (ca.pem) that signed primary, replica1 and replica2 (NAME.pem,
# NAME.key, CN=NAME), an intruder (CN=replica1) signed by another CA
# (other-ca.pem), and expired (CN=expired, signed by ca.pem, valid in
# 2000), future (CN=future, signed by ca.pem, valid from 2099), and
# both-ca.pem (ca.pem and other-ca.pem: what an intruder trusts, so that its
# own certificate verifies).  EC P-256 keys: fast.  Exits 77 (automake's SKIP) without openssl.
set -eu

dir=${1:?usage: make-test-ca.sh DIR}
if ! command -v openssl >/dev/null 2>&1; then
	echo "make-test-ca.sh: no openssl command" >&2
	exit 77
fi
mkdir -p "$dir"
cd "$dir"

# everything from this file: no dependence on the system's openssl.cnf
cat > ca.cnf <<'CNF'
[ req ]
distinguished_name = dn
prompt = no
[ dn ]
CN = unused
[ ca_ext ]
basicConstraints = critical, CA:TRUE
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
[ leaf_ext ]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = serverAuth, clientAuth
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
[ ca ]
default_ca = past
[ past ]
database = index.txt
new_certs_dir = .
serial = serial
certificate = ca.pem
private_key = ca.key
default_md = sha256
policy = any
x509_extensions = leaf_ext
unique_subject = no
[ any ]
commonName = supplied
CNF
export OPENSSL_CONF="$PWD/ca.cnf"

key() {
	openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 \
		-out "$1.key" 2>/dev/null
}

# ca NAME CN: a self-signed CA
ca() {
	key "$1"
	openssl req -new -x509 -key "$1.key" -subj "/CN=$2" -days 2 \
		-config ca.cnf -extensions ca_ext -out "$1.pem"
}

# leaf NAME CN CA SERIAL: a certificate signed by CA
leaf() {
	key "$1"
	openssl req -new -key "$1.key" -subj "/CN=$2" -config ca.cnf \
		-out "$1.csr"
	openssl x509 -req -in "$1.csr" -CA "$3.pem" -CAkey "$3.key" \
		-set_serial "$4" -days 2 -extfile ca.cnf -extensions leaf_ext \
		-out "$1.pem" 2>/dev/null
	rm -f "$1.csr"
}

ca ca "test CA"
ca other-ca "other CA"
leaf primary primary ca 1
leaf replica1 replica1 ca 2
leaf replica2 replica2 ca 3
leaf intruder replica1 other-ca 4

# dated NAME SERIAL START END: a leaf of ca valid only from START to END;
# only 'openssl ca' sets dates outside the present
dated() {
	key "$1"
	openssl req -new -key "$1.key" -subj "/CN=$1" -config ca.cnf \
		-out "$1.csr"
	: > index.txt
	echo "$2" > serial
	openssl ca -batch -config ca.cnf -notext -in "$1.csr" \
		-startdate "$3" -enddate "$4" -out "$1.pem" 2>/dev/null
	rm -f "$1.csr" index.txt* serial* "$2.pem"
}

dated expired 05 20000101000000Z 20000201000000Z
dated future 06 20990101000000Z 20990201000000Z

cat ca.pem other-ca.pem > both-ca.pem
