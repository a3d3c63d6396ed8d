# tests/scenario -- real-process scenarios: repld nodes on loopback driven
# through crashes, lost disks, restarts, promotions and membership
# changes, each a way the protocol before v2 loses acknowledged records or
# leaves two primaries.  Each checks the safety properties black-box
# (scenario_lib.sh): every acknowledged record in the final primary's log,
# no LSN acknowledged with two records, at most one primary; a step may
# be refused, explicitly.  Each is in XFAIL_TESTS while the code before
# the fix for it fails it.

# what the scenarios share (sourced by them)
EXTRA_DIST += tests/scenario/scenario_lib.sh
