# SPDX-License-Identifier: BSD-3-Clause
#
# lt_unwrap.sh -- lt_unwrap VAR (sourced, not run): if $VAR names one of
# libtool's wrapper scripts for a program of the build tree, set VAR to the
# program it runs and add the library path the wrapper would set to
# LD_LIBRARY_PATH (exported); anything else is left as it is.  A wrapper is a
# shell script that runs sed before it execs the program, some hundreds of
# milliseconds on a loaded machine, and a test that polls `replctl status`
# pays that on every poll.
lt_unwrap() {
	local w=${!1} prog lib
	[[ -f $w && -r $w ]] || return 0
	head -n 3 "$w" 2>/dev/null | grep -q 'temporary wrapper script' || return 0
	prog=$(dirname "$w")/.libs/$(basename "$w")
	[[ -x $prog ]] || return 0
	lib=$(sed -n 's/^ *LD_LIBRARY_PATH="\(.*\):\$LD_LIBRARY_PATH"$/\1/p' "$w" | head -n 1)
	[[ -n $lib ]] || return 0
	case ":${LD_LIBRARY_PATH-}:" in
	*":$lib:"*) ;;
	*) export LD_LIBRARY_PATH=$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} ;;
	esac
	printf -v "$1" '%s' "$prog"
}
