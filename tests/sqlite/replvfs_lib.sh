# SPDX-License-Identifier: BSD-3-Clause
#
# replvfs_lib.sh -- what the replvfs tests share (sourced after NAME is
# set, before cluster_lib.sh): EXT, the extension (REPLVFS, default the
# build tree's), and a sanitizer build's runtime preloaded, as sqlite3,
# python3 and the writer are not built with it (their own allocations are
# not the tests' leaks).  PYTHONPATH gains this directory, for
# replvfs_load.py.
EXT=${REPLVFS:-$PWD/sqlite/.libs/libreplvfs.so}
[[ -f $EXT ]] || { echo "$NAME: $EXT not built"; exit 99; }
san=$(ldd "$EXT" | grep -o '/[^ ]*lib[at]san\.so[^ ]*' | head -n 1)
if [[ -n $san ]]; then
	export LD_PRELOAD=$san
	export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
fi
export PYTHONPATH=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)${PYTHONPATH:+:$PYTHONPATH}
