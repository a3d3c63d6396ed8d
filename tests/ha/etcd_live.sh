#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# etcd_live.sh -- one etcd on loopback (tests/lib/etcd_lib.sh), then
# etcd_live's cases against it; a third port is left closed, for the
# failover to a second endpoint.
set -u

NAME=etcd_live
PROG=${ETCD_LIVE:-./tests/ha/etcd_live}
ETCD_PORTS=3
. "$(dirname "${BASH_SOURCE[0]}")/../lib/etcd_lib.sh"
closed=$((PORT_BASE + 2))

etcd_start
timeout 60 "$PROG" "$ETCD_URL" "http://127.0.0.1:$closed"
rc=$?
((rc == 0)) || { echo "$NAME: etcd's log:"; etcd_log_tail; }
exit $rc
