#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# archive_s3.sh -- the archive on an S3-compatible object store: a local
# s3rver with two buckets, then the directory tests' round trip, damage
# and retention checks run on s3:// targets (ARCHIVE_TEST_TARGET), and
# archive_s3, the checks only S3 has (listing pages, errors naming the
# status and S3's code, a server down or silent).  Skipped (77) without
# s3rver; s3rver is ended on exit.
set -u
NAME=archive_s3
. "$(dirname "$0")/s3rver_lib.sh"

D=$(mktemp -d "${TMPDIR:-/tmp}/$NAME.XXXXXX") || exit 99
cleanup() {
	s3rver_stop
	rm -rf "$D"
}
trap cleanup EXIT
s3rver_start "$D/s3" archive-test archive-root
export ARCHIVE_TEST_TARGET=s3://archive-test/run ARCHIVE_TEST_EMPTY_BUCKET=archive-root
# no proxy between the tests and the loopback server
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY ALL_PROXY all_proxy

rc=0
for t in archive_roundtrip archive_damage archive_retention archive_s3; do
	./tests/archive/$t || { echo "$NAME: FAIL: $t on S3 exited $?"; rc=1; }
done
kill -0 "$S3RVER_PID" 2> /dev/null ||
	{ echo "$NAME: FAIL: s3rver died: $(tail -n 20 "$D/s3.log")"; rc=1; }
[[ $rc == 0 ]] && echo "$NAME: ok"
exit $rc
