# SPDX-License-Identifier: BSD-3-Clause
# test_ports.sh -- sourced: test_ports N sets PORT_BASE to the first of N
# consecutive loopback ports this shell holds alone until it exits.  The
# same blocks and lock files as tests/lib/test_ports.h (see there why):
# TEST_PORTS_LOW 12000, blocks of 64, files in /tmp/rpma-repl-test-ports.
# The lock fds are inherited by the daemons the test starts, so a block
# stays held while any of them lives.
test_ports() {
	local n=$1 dir=/tmp/rpma-repl-test-ports low=12000 size=64
	local nb=$(((32768 - low) / size)) need t b k fd ok fds
	need=$(((n + size - 1) / size))
	mkdir -p "$dir" 2>/dev/null; chmod 1777 "$dir" 2>/dev/null
	for ((t = 0; t < nb; t++)); do
		b=$(((BASHPID + t) % nb))
		((b + need <= nb)) || continue
		fds=() ok=1
		for ((k = 0; k < need; k++)); do
			exec {fd}>>"$dir/$((b + k))" || { ok=0; break; }
			chmod 0666 "$dir/$((b + k))" 2>/dev/null
			fds+=("$fd")
			flock -n "$fd" || { ok=0; break; }
		done
		# a block where something listens already is passed over
		if ((ok)) && command -v ss >/dev/null &&
			[[ -n $(ss -Htan "( sport >= :$((low + b * size)) and sport < :$((low + b * size + n)) )" 2>/dev/null | grep -v TIME-WAIT) ]]; then
			ok=0
		fi
		if ((ok)); then
			PORT_BASE=$((low + b * size))
			return 0
		fi
		for fd in "${fds[@]}"; do exec {fd}>&-; done
	done
	echo "test_ports: no block of $n free ports in $low..32767" >&2
	return 1
}
