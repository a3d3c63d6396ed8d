#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# tcp_proxy_test.sh -- the failover tests' partition tool does what its
# modes say: pass relays both ways; blackhole keeps a live connection open
# and moves no byte (nor a new connection's); pass again resumes the live
# connection; refuse resets the connections there are and each new one.
# With --only-from ADDR (and a TARGET of ADDR:PORT form), the modes apply to
# connections from that address alone.
NAME=tcp_proxy_test
PROXY=${TCP_PROXY:-./tests/tools/tcp_proxy}
[[ -x $PROXY ]] || { echo "$NAME: $PROXY not built"; exit 99; }
command -v python3 > /dev/null || { echo "$NAME: SKIP: no python3"; exit 77; }
. "$(dirname "$0")/../lib/test_ports.sh"
test_ports 3 || exit 99
D=$(mktemp -d) || exit 99
pids=()
trap 'kill "${pids[@]}" 2>/dev/null; wait 2>/dev/null; rm -rf "$D"' EXIT
fail() { echo "$NAME: FAIL: $*"; exit 1; }
T=$PORT_BASE P=$((PORT_BASE + 1))

# an echo server on T
python3 - "$T" > "$D/echo.out" 2>&1 <<'PY' &
import socket, sys, threading
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(16)
def serve(c):
    while True:
        try:
            b = c.recv(65536)
        except OSError:
            return
        if not b:
            return
        c.sendall(b)
while True:
    c, _ = s.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
PY
pids+=($!)
"$PROXY" "$P" "$T" "$D/proxy.pid" > "$D/proxy.out" 2>&1 &
pids+=($!)
for ((i = 0; i < 50; i++)); do
	[[ -s $D/proxy.pid ]] && grep -q "mode pass" "$D/proxy.out" && break
	sleep 0.1
done
proxy=$(cat "$D/proxy.pid")
out=$D/proxy.out
mode() {	# SIGNAL NAME: switch, and wait for the line
	local c
	c=$(grep -c "mode $2" "$out")
	kill -"$1" "$proxy"
	for ((i = 0; i < 50; i++)); do
		(( $(grep -c "mode $2" "$out") > c )) && return 0
		sleep 0.05
	done
	fail "no switch to $2"
}

# one client, driven step by step through a fifo
mkfifo "$D/cmd"
cat > "$D/client.py" <<'PY'
import socket, sys
c = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
c.settimeout(0.5)
def ask(word):
    try:
        c.sendall(word.encode())
        got = c.recv(100).decode()
        print("echo " + (got if got else "closed"), flush=True)
    except socket.timeout:
        print("echo timeout", flush=True)
    except OSError as e:
        print("echo error " + type(e).__name__, flush=True)
for line in sys.stdin:
    ask(line.strip())
PY
python3 "$D/client.py" "$P" < "$D/cmd" > "$D/client.out" 2>&1 &
pids+=($!)
exec 3> "$D/cmd"
step() {	# WORD EXPECT: the client's answer to WORD
	local c n
	c=$(wc -l < "$D/client.out")
	echo "$1" >&3
	for ((i = 0; i < 40; i++)); do
		n=$(wc -l < "$D/client.out")
		(( n > c )) && break
		sleep 0.05
	done
	got=$(sed -n "$((c + 1))p" "$D/client.out")
	[[ $got == "$2" ]] || fail "$1: got \"$got\", want \"$2\""
}
new_conn() {	# [PORT [SOURCE]]: a fresh connection's fate: echo, timeout or reset
	python3 - "${1:-$P}" "${2:-127.0.0.1}" <<'PY'
import socket, sys
try:
    c = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=0.5,
                                 source_address=(sys.argv[2], 0))
    c.sendall(b"x")
    b = c.recv(10)
    print("echo" if b == b"x" else "closed")
except socket.timeout:
    print("timeout")
except OSError:
    print("reset")
PY
}

step one "echo one"
mode USR1 blackhole
step two "echo timeout"
[[ $(new_conn) == timeout ]] || fail "blackhole: a new connection moved bytes"
mode USR2 pass
step three "echo three"
[[ $(new_conn) == echo ]] || fail "pass: a new connection did not echo"
mode HUP refuse
step four "echo error ConnectionResetError"
r=$(new_conn)
[[ $r == reset || $r == closed ]] || fail "refuse: a new connection got $r"
mode USR2 pass
[[ $(new_conn) == echo ]] || fail "pass after refuse: no echo"
kill -TERM "$proxy"

# --only-from 127.0.0.2: what comes from 127.0.0.1 always passes
Q=$((PORT_BASE + 2))
"$PROXY" --only-from 127.0.0.2 "$Q" "127.0.0.1:$T" "$D/proxy2.pid" > "$D/proxy2.out" 2>&1 &
pids+=($!)
for ((i = 0; i < 50; i++)); do
	[[ -s $D/proxy2.pid ]] && grep -q "mode pass" "$D/proxy2.out" && break
	sleep 0.1
done
proxy=$(cat "$D/proxy2.pid") out=$D/proxy2.out
[[ $(new_conn "$Q" 127.0.0.2) == echo ]] || fail "--only-from, pass: no echo from 127.0.0.2"
mode USR1 blackhole
[[ $(new_conn "$Q" 127.0.0.2) == timeout ]] || fail "--only-from, blackhole: 127.0.0.2 moved bytes"
[[ $(new_conn "$Q" 127.0.0.1) == echo ]] || fail "--only-from, blackhole: 127.0.0.1 was cut too"
mode HUP refuse
r=$(new_conn "$Q" 127.0.0.2)
[[ $r == reset || $r == closed ]] || fail "--only-from, refuse: 127.0.0.2 got $r"
[[ $(new_conn "$Q" 127.0.0.1) == echo ]] || fail "--only-from, refuse: 127.0.0.1 was cut too"
"$PROXY" --only-from nowhere 1 2 > /dev/null 2>&1
[[ $? == 2 ]] || fail "--only-from nowhere: not exit 2"
"$PROXY" "$Q" 300.0.0.1:5 > /dev/null 2>&1
[[ $? == 2 ]] || fail "a TARGET of 300.0.0.1:5: not exit 2"
echo "$NAME: pass, blackhole, pass, refuse, pass as their names say; --only-from cuts its address alone"
