# tests/scenario -- real-process scenarios: repld nodes on loopback driven
# through crashes, lost disks, restarts, promotions and membership
# changes, each a way the protocol before v2 loses acknowledged records or
# leaves two primaries.  Each checks the safety properties black-box
# (scenario_lib.sh): every acknowledged record in the final primary's log,
# no LSN acknowledged with two records, at most one primary; a step may
# be refused, explicitly.  Each fails on the code before its fix (shown
# against 280e8c0; C2 and C5 on the code before the joint membership
# change); one in XFAIL_TESTS is one whose fix has not landed yet.

# what the scenarios share (sourced by them)
EXTRA_DIST += tests/scenario/scenario_lib.sh

# C1: a primary's lost disk with k = n: it restarts with a fresh log and
# drops its replica's records
TESTS += tests/scenario/c1_lost_disk.sh
EXTRA_DIST += tests/scenario/c1_lost_disk.sh

# C2: an add whose old and new quorums need not meet (k kept at 1): two
# primaries acknowledge different records at one LSN
TESTS += tests/scenario/c2_add_no_overlap.sh
EXTRA_DIST += tests/scenario/c2_add_no_overlap.sh

# C3: Raft's Figure 8: an older epoch's record committed, then overwritten
TESTS += tests/scenario/c3_figure8.sh
EXTRA_DIST += tests/scenario/c3_figure8.sh

# C4: a wiped replica counted a member before it holds the data
TESTS += tests/scenario/c4_member_before_data.sh
EXTRA_DIST += tests/scenario/c4_member_before_data.sh

# C5: a replica replaced at a new address with the same n and k: the
# removed one still counts
TESTS += tests/scenario/c5_replaced_address.sh
EXTRA_DIST += tests/scenario/c5_replaced_address.sh

# C6: a fully released log loses "most advanced" to a stale one
TESTS += tests/scenario/c6_released_log.sh
EXTRA_DIST += tests/scenario/c6_released_log.sh

# C6's primary that releases its log (librepl: repld has no release)
check_PROGRAMS += tests/scenario/release_primary
tests_scenario_release_primary_SOURCES = tests/scenario/release_primary.c
tests_scenario_release_primary_CPPFLAGS = $(AM_CPPFLAGS) \
	-I$(top_srcdir)/engine/include -I$(top_srcdir)/config
tests_scenario_release_primary_LDADD = config/librepl_conf.la \
	engine/librepl_internal.la rpma/librpmacore_internal.la $(AX_PTHREAD_LIBS)

# C7: one replica under two names (127.0.0.1, localhost), fenced and
# counted twice
TESTS += tests/scenario/c7_two_names.sh
EXTRA_DIST += tests/scenario/c7_two_names.sh

# C8: a bootstrap that does not hear from every node: a new cluster
# beside the old one, acknowledging its LSNs again
TESTS += tests/scenario/c8_bootstrap_beside_cluster.sh
EXTRA_DIST += tests/scenario/c8_bootstrap_beside_cluster.sh

# C9: a replica's log put back from an older copy under a running cluster:
# it looks like itself and counts toward a promotion without the records
TESTS += tests/scenario/c9_restored_log.sh
EXTRA_DIST += tests/scenario/c9_restored_log.sh

# R1: a restart of the old primary (role = "primary") undoes a failover
TESTS += tests/scenario/r1_restart_undoes_failover.sh
EXTRA_DIST += tests/scenario/r1_restart_undoes_failover.sh

# R2: a promotion beside a healthy primary leaves two primaries
TESTS += tests/scenario/r2_promote_beside_live_primary.sh
EXTRA_DIST += tests/scenario/r2_promote_beside_live_primary.sh

# M1: a node made anew (--reinit) without a promise floor: an old primary
# not yet fenced acknowledges through it (docs/model.md, finding 1)
TESTS += tests/scenario/m1_reinit_no_floor.sh
EXTRA_DIST += tests/scenario/m1_reinit_no_floor.sh

# M1's partition: a stopped node's port that takes no new connection
check_PROGRAMS += tests/scenario/plug_port
tests_scenario_plug_port_SOURCES = tests/scenario/plug_port.c
tests_scenario_plug_port_LDADD =
