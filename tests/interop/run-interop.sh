#!/bin/sh
# run-interop.sh TARGET CLIENT -- one interop pairing over rdma_cm at
# $RPMA_TESTING_IP: the target in the background, then the client; both must
# succeed.  Installed as interop-librpma-to-ours and interop-ours-to-librpma
# (wrappers that name the pairing); SKIP (77) where there is no RDMA.
set -u
target=$1 client=$2
dir=$(dirname "$0")
# in the rig everything sits in /files; in a build tree the programs are
# in the build directory, the scripts in the source directory
[ -x "$dir/$target" ] || dir=./tests/interop
ip=${RPMA_TESTING_IP:-}
if [ -z "$ip" ]; then
	echo "SKIP: RPMA_TESTING_IP is not set (the VM rig sets it: make check-rdma)"
	exit 77
fi
port=$((7400 + $$ % 500))
seed=$$
dax=
[ -c /dev/dax0.0 ] && dax=/dev/dax0.0
"$dir/$target" "$ip" "$port" "$seed" $dax & tpid=$!
# the target prints when it listens; a client that comes earlier is rejected
for i in $(seq 1 50); do
	/usr/sbin/rdma resource show cm_id 2>/dev/null | grep -q 'state LISTEN' && break
	kill -0 $tpid 2>/dev/null || break
	sleep 0.1
done
"$dir/$client" "$ip" "$port" "$seed"; crc=$?
wait $tpid; trc=$?
[ $crc -eq 77 ] && exit 77
echo "client exit $crc, target exit $trc"
[ $crc -eq 0 ] && [ $trc -eq 0 ]
