#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# coord_leader_live.sh -- one etcd on loopback (tests/lib/etcd_lib.sh), then
# coord_leader_live's cases against it.  Its election timeout is short
# (500 ms, heartbeat 50 ms) because etcd raises a lease's TTL to 1.5
# election timeouts at least: so a TTL of 1 s is granted as asked, and the
# takeover cases stay short.
set -u

NAME=coord_leader_live
PROG=${COORD_LEADER_LIVE:-./tests/ha/coord_leader_live}
. "$(dirname "${BASH_SOURCE[0]}")/../lib/etcd_lib.sh"

etcd_start --heartbeat-interval=50 --election-timeout=500
timeout 60 "$PROG" "$ETCD_URL"
rc=$?
((rc == 0)) || { echo "$NAME: etcd's log:"; etcd_log_tail; }
exit $rc
