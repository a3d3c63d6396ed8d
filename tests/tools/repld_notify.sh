#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# repld_notify.sh -- repld's messages to systemd (repld(8), SYSTEMD), read
# by a datagram socket in NOTIFY_SOCKET's place, on a primary and its
# replica (quorum 1 of 1):
#
#  1. READY=1 once each serves: its admin socket accepts and STATUS there
#     names its role, a primary's promotion done (the receiver asks as the
#     datagram arrives);
#  2. STATUS= names the role: "primary, epoch N, 1 of 1 replicas",
#     "replica, epoch N, ...";
#  3. WATCHDOG_USEC with WATCHDOG_PID the daemon's: WATCHDOG=1 at half the
#     interval; WATCHDOG_PID another process's: none;
#  4. SIGHUP: RELOADING=1 with MONOTONIC_USEC, then READY=1 again;
#  5. SIGTERM: STOPPING=1.
#
# Environment: REPLD, REPLCTL (the build tree's by default).
set -u

NAME=repld_notify
command -v python3 >/dev/null ||
	{ echo "$NAME: python3 is not installed (Debian: python3)" >&2; exit 77; }
. "$(dirname "$0")/cluster_lib.sh"
T0=$SECONDS
REAL_REPLD=$(realpath "$REPLD")

# what systemd would do: WATCHDOG_PID is the pid the daemon will have
cat > "$D/repld-wd" <<EOF2
#!/bin/bash
[[ \${WD_PID-} == self ]] && export WATCHDOG_PID=\$\$
[[ \${WD_PID-} == other ]] && export WATCHDOG_PID=1
exec "$REAL_REPLD" "\$@"
EOF2
chmod +x "$D/repld-wd"
REPLD=$D/repld-wd

# the receiver: one line per datagram (newlines as "|"), and on READY=1
# whether the admin socket accepts a connection right then
cat > "$D/recv.py" <<'EOF2'
import json, os, socket, sys
path, out, admin = sys.argv[1], sys.argv[2], sys.argv[3]
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(path)
s.settimeout(60)
with open(out, "a", buffering=1) as f:
    while True:
        try:
            data = s.recv(4096).decode()
        except socket.timeout:
            break
        line = data.replace("\n", "|")
        if "READY=1" in data.split("\n"):
            c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            c.settimeout(10)
            try:
                c.connect(admin)
                line += " admin=up"
                # and what it says it is at that moment
                c.sendall(b"STATUS\n")
                reply = b""
                while not reply.endswith(b"\n"):
                    more = c.recv(65536)
                    if not more:
                        break
                    reply += more
                line += " role=%s" % json.loads(reply).get("role")
            except (OSError, ValueError) as e:
                line += " admin=down(%s)" % e
            finally:
                c.close()
        f.write(line + "\n")
EOF2
receiver() {	# N: node N's receiver, its lines in $D/notify.N
	python3 "$D/recv.py" "$D/notify$1.sock" "$D/notify.$1" "$(sock "$1")" \
		2>> "$D/recv.err" &
	bg+=($!)
	for _ in $(seq 50); do [[ -S $D/notify$1.sock ]] && return; sleep 0.1; done
	fail "receiver $1 did not bind"
}
# wait_notify N REGEX WHAT [COUNT]: until COUNT of node N's datagrams match
wait_notify() {
	local t c
	for ((t = 0; t < 100; t++)); do
		c=$(grep -Ec -- "$2" "$D/notify.$1" 2>/dev/null)
		((${c:-0} >= ${4:-1})) && return 0
		sleep 0.1
	done
	fail "node$1: no $3 in 10 s; it sent: $(tr '\n' ' ' < "$D/notify.$1" 2>/dev/null)"
}

conf 1 primary 3000 1 2
conf 2 replica 3000 1 1
receiver 1
receiver 2
NOTIFY_SOCKET=$D/notify2.sock WATCHDOG_USEC=400000 WD_PID=other start 2
wait_for 2 "listening" "listening"
wait_notify 2 '^READY=1' "READY=1"
grep -q '^READY=1 admin=up role=replica$' "$D/notify.2" ||
	fail "replica: READY=1 before its admin socket accepted: $(grep READY "$D/notify.2")"
wait_notify 2 '^STATUS=replica, epoch [0-9]+' "a replica's STATUS="

NOTIFY_SOCKET=$D/notify1.sock WATCHDOG_USEC=400000 WD_PID=self start 1
up 1 2
wait_notify 1 '^READY=1' "READY=1"
grep -q '^READY=1 admin=up role=primary$' "$D/notify.1" ||
	fail "primary: READY=1 before its admin socket accepted or it was the primary: $(grep READY "$D/notify.1")"
wait_notify 1 '^STATUS=primary, epoch [1-9][0-9]*, 1 of 1 replicas$' \
	"a primary's STATUS= with its replica up"
echo "$NAME: READY=1 with the admin socket up; $(grep -m1 '^STATUS=primary' "$D/notify.1")"

# 3: the watchdog, at half of 400 ms: 5 or more in 2 s (at 100 ms ticks)
n0=$(grep -c '^WATCHDOG=1$' "$D/notify.1")
sleep 2
n1=$(grep -c '^WATCHDOG=1$' "$D/notify.1")
((n1 - n0 >= 5 && n1 - n0 <= 12)) ||
	fail "WATCHDOG=1 $((n1 - n0)) times in 2 s at WATCHDOG_USEC=400000 (want about 10)"
! grep -q '^WATCHDOG=1' "$D/notify.2" ||
	fail "the replica pinged a watchdog that WATCHDOG_PID gave another process"
echo "$NAME: WATCHDOG=1 $((n1 - n0)) times in 2 s; none for another WATCHDOG_PID"

# 4: SIGHUP
kill -HUP "${pid[1]}"
wait_notify 1 '^RELOADING=1\|MONOTONIC_USEC=[0-9]+$' "RELOADING=1 with MONOTONIC_USEC"
wait_notify 1 '^READY=1' "READY=1 after the reload" 2
r=$(grep -n '^RELOADING=1' "$D/notify.1" | cut -d: -f1)
a=$(grep -n '^READY=1' "$D/notify.1" | sed -n 2p | cut -d: -f1)
((r < a)) || fail "READY=1 came before RELOADING=1"

# 5: SIGTERM
stop 1
wait_notify 1 '^STOPPING=1$' "STOPPING=1"
stop 2
wait_notify 2 '^STOPPING=1$' "STOPPING=1"
clean_stderr "$D/node1.err" "node1"
clean_stderr "$D/node2.err" "node2"
echo "$NAME: RELOADING=1 then READY=1 on SIGHUP, STOPPING=1 on SIGTERM"
echo "$NAME: ok ($((SECONDS - T0)) s)"
