#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# repld_unit.sh -- the systemd unit conf/repld@.service.in (repld(8),
# SYSTEMD), rendered with the build tree's repld as repld@test.service:
#
#  1. systemd-analyze verify finds nothing wrong with it;
#  2. systemd-analyze security --offline scores its exposure at most 3.0;
#  3. it is Type=notify with a watchdog, runs under no capability, and does
#     not restart after exit statuses 2, 3, 4 and 5 (repld(8), EXIT STATUS).
#
# Exit 77 without systemd-analyze.  Environment: REPLD (the build tree's).
set -u

NAME=repld_unit
MAX=3.0
command -v systemd-analyze >/dev/null ||
	{ echo "$NAME: systemd-analyze is not installed (Debian: systemd)" >&2; exit 77; }
UNIT_IN=$(dirname "$0")/../../conf/repld@.service.in
REPLD=$(realpath "${REPLD:-./tools/repld/repld}")
[[ -r $UNIT_IN ]] || { echo "$NAME: no $UNIT_IN"; exit 99; }
[[ -x $REPLD ]] || { echo "$NAME: $REPLD not built"; exit 99; }
D=$(mktemp -d "/tmp/$NAME.XXXXXX") || exit 99
trap 'rm -rf "$D"' EXIT
fail() { echo "$NAME: FAIL: $*"; exit 1; }

# as the build does (tools/repld/local.mk), with the built repld's directory
sed -e "s|@bindir@|$(dirname "$REPLD")|g" "$UNIT_IN" > "$D/repld@test.service"
! grep -q '@[a-z]*@' "$D/repld@test.service" ||
	fail "a placeholder left: $(grep -m1 '@[a-z]*@' "$D/repld@test.service")"

# 1: man pages may not be installed here; the rest must be clean
systemd-analyze verify --man=no "$D/repld@test.service" > "$D/verify" 2>&1 ||
	fail "systemd-analyze verify: $(cat "$D/verify")"
[[ ! -s $D/verify ]] || fail "systemd-analyze verify says: $(cat "$D/verify")"

# 2: the overall exposure, as it prints it
systemd-analyze security --offline=true "$D/repld@test.service" > "$D/security" 2>&1 ||
	fail "systemd-analyze security: exit $?: $(tail -n 3 "$D/security")"
score=$(sed -n 's/.*Overall exposure level for repld@test.service: \([0-9.]*\).*/\1/p' "$D/security")
[[ -n $score ]] || fail "no overall exposure in: $(tail -n 3 "$D/security")"
awk -v s="$score" -v m="$MAX" 'BEGIN { exit !(s <= m) }' ||
	fail "exposure $score > $MAX: $(grep '✗' "$D/security" | sort -k2 | head -n 20)"
# and its own threshold (tenths) agrees
systemd-analyze security --offline=true --threshold=30 "$D/repld@test.service" \
	> /dev/null 2>&1 || fail "systemd-analyze security --threshold=30 refuses it"

# 3: what repld and its manual rely on
for want in 'Type=notify' 'NotifyAccess=main' 'WatchdogSec=30s' \
	'RestartPreventExitStatus=2 3 4 5' 'CapabilityBoundingSet=' \
	'LimitMEMLOCK=infinity' 'StateDirectory=repld/%i' \
	'RuntimeDirectory=repld' 'RuntimeDirectoryPreserve=yes' 'UMask=0077'; do
	grep -qx -- "$want" "$D/repld@test.service" || fail "the unit lacks $want"
done
echo "$NAME: verify clean; exposure $score (at most $MAX); Type=notify, watchdog 30 s"
echo "$NAME: ok"
