#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# repld_archive_s3.sh -- repld_archive.sh with the archive on S3: a local
# s3rver (tests/archive/s3rver_lib.sh) with a bucket, node2 archiving to
# s3://repl-archive/cluster, replctl reading it back; the target's failing
# phase stops the server (SIGSTOP) so that the archiver's requests time
# out (REPL_ARCHIVE_S3_TIMEOUT_MS=2000), then continues it.  Skipped (77)
# without s3rver; the server is ended on exit, the nodes by
# repld_archive.sh's own trap.
set -u
NAME=repld_archive_s3
here=$(dirname "$0")
. "$here/../archive/s3rver_lib.sh"

S3D=$(mktemp -d "${TMPDIR:-/tmp}/$NAME.XXXXXX") || exit 99
cleanup() {
	s3rver_stop
	rm -rf "$S3D"
}
trap cleanup EXIT
s3rver_start "$S3D/s3" repl-archive
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY ALL_PROXY all_proxy
export ARCHIVE_TARGET_URL=s3://repl-archive/cluster S3RVER_PID
export REPL_ARCHIVE_S3_TIMEOUT_MS=2000
bash "$here/repld_archive.sh"
rc=$?
kill -0 "$S3RVER_PID" 2> /dev/null ||
	{ echo "$NAME: FAIL: s3rver died: $(tail -n 20 "$S3D/s3.log")"; rc=1; }
exit $rc
