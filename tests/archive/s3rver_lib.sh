# SPDX-License-Identifier: BSD-3-Clause
#
# s3rver_lib.sh -- sourced: a local S3-compatible server for the tests of
# the archive's S3 target (s3rver, from npm; tools/quickstart check
# installs it into build/tools/s3rver and exports S3RVER).
#
#   s3rver_start DIR BUCKET...   starts it on a free loopback port, its
#       objects under DIR, the buckets made; exports AWS_ENDPOINT_URL,
#       AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY (s3rver's own account)
#       and AWS_REGION, sets S3RVER_PID.  Exits 77 without s3rver, 99 when
#       it does not come up.
#   s3rver_stop                  ends it (the caller's EXIT trap calls it)
#
# s3rver checks the access key id (an unknown one is refused) but not
# SigV4 signatures nor payload hashes.  Its continuation tokens use DES,
# which Node.js 17 and later have only in OpenSSL's legacy provider.
. "$(dirname "${BASH_SOURCE[0]}")/../lib/test_ports.sh"

s3rver_find() {
	local top
	top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
	S3RVER=${S3RVER:-}
	[[ -z $S3RVER && -x $top/build/tools/s3rver/node_modules/.bin/s3rver ]] &&
		S3RVER=$top/build/tools/s3rver/node_modules/.bin/s3rver
	[[ -z $S3RVER ]] && S3RVER=$(command -v s3rver)
	if [[ -z $S3RVER || ! -x $S3RVER ]]; then
		echo "SKIP: $NAME: no s3rver (S3RVER unset, none in build/tools/s3rver" \
			"nor on PATH; tools/quickstart check installs it with npm)"
		exit 77
	fi
	command -v node > /dev/null ||
		{ echo "SKIP: $NAME: no node to run s3rver (Debian: nodejs)"; exit 77; }
	command -v curl > /dev/null ||
		{ echo "SKIP: $NAME: no curl to see s3rver up (Debian: curl)"; exit 77; }
}

s3rver_start() {
	local dir=$1 b args=() major t
	shift
	s3rver_find
	test_ports 1 || exit 99
	for b in "$@"; do args+=(--configure-bucket "$b"); done
	major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null)
	mkdir -p "$dir"
	if [[ ${major:-0} -ge 17 ]]; then
		NODE_OPTIONS="${NODE_OPTIONS:+$NODE_OPTIONS }--openssl-legacy-provider" \
			"$S3RVER" -d "$dir" -a 127.0.0.1 -p "$PORT_BASE" --no-vhost-buckets \
			-s "${args[@]}" > "$dir.log" 2>&1 &
	else
		"$S3RVER" -d "$dir" -a 127.0.0.1 -p "$PORT_BASE" --no-vhost-buckets -s \
			"${args[@]}" > "$dir.log" 2>&1 &
	fi
	S3RVER_PID=$!
	export AWS_ENDPOINT_URL=http://127.0.0.1:$PORT_BASE AWS_ACCESS_KEY_ID=S3RVER \
		AWS_SECRET_ACCESS_KEY=S3RVER AWS_REGION=us-east-1
	unset AWS_SESSION_TOKEN AWS_DEFAULT_REGION REPL_ARCHIVE_S3_TIMEOUT_MS
	# any HTTP answer: it listens
	for ((t = 0; t < 150; t++)); do
		curl -s -o /dev/null --noproxy '*' "$AWS_ENDPOINT_URL/" && return 0
		kill -0 "$S3RVER_PID" 2> /dev/null || break
		sleep 0.1
	done
	echo "$NAME: s3rver did not come up on $AWS_ENDPOINT_URL: $(tail -n 20 "$dir.log")"
	s3rver_stop
	exit 99
}

s3rver_stop() {
	[[ -n ${S3RVER_PID-} ]] || return 0
	kill -CONT "$S3RVER_PID" 2> /dev/null
	kill "$S3RVER_PID" 2> /dev/null
	wait "$S3RVER_PID" 2> /dev/null
	S3RVER_PID=
}
