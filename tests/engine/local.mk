# tests/engine -- the replication engine's local log

# a cluster node (replica, primary, verifier): the replication tests' and
# tools/demo-cluster's processes; built by "make" (the demo runs it), on
# librepl's internals and this folder's headers
noinst_PROGRAMS += tests/engine/repl-node
tests_engine_repl_node_SOURCES = tests/engine/repl_node.c tests/engine/repl_node.h \
	tests/engine/repl_node_check.c
tests_engine_repl_node_CPPFLAGS = $(ENGINE_CPPFLAGS) -I$(top_srcdir)/tests/engine
tests_engine_repl_node_LDADD = engine/librepl_internal.la rpma/librpmacore_internal.la \
	$(AX_PTHREAD_LIBS)
ENGINE_TESTS = tests/engine/wal_format_recovery

check_PROGRAMS += $(ENGINE_TESTS)
TESTS += $(ENGINE_TESTS)
tests_engine_wal_format_recovery_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/engine -I$(top_srcdir)/engine/include
tests_engine_wal_format_recovery_LDADD = engine/librepl_internal.la $(LDADD)
EXTRA_DIST += tests/engine/wal_common.h

check_PROGRAMS += tests/engine/wal_crash
TESTS += tests/engine/wal_crash
tests_engine_wal_crash_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/engine -I$(top_srcdir)/engine/include
tests_engine_wal_crash_LDADD = engine/librepl_internal.la $(LDADD)

check_PROGRAMS += tests/engine/repl_api
TESTS += tests/engine/repl_api
tests_engine_repl_api_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/engine/include
tests_engine_repl_api_LDADD = engine/librepl_internal.la $(LDADD)

check_PROGRAMS += tests/engine/wal_steps
TESTS += tests/engine/wal_steps
tests_engine_wal_steps_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/engine -I$(top_srcdir)/engine/include
tests_engine_wal_steps_LDADD = engine/librepl_internal.la $(LDADD)

# a release's header persist does not hold the log's lock
check_PROGRAMS += tests/engine/wal_release_unlocked
TESTS += tests/engine/wal_release_unlocked
tests_engine_wal_release_unlocked_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/engine -I$(top_srcdir)/engine/include
tests_engine_wal_release_unlocked_LDADD = engine/librepl_internal.la $(LDADD)

check_PROGRAMS += tests/engine/ctl_msg
TESTS += tests/engine/ctl_msg
tests_engine_ctl_msg_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/engine -I$(top_srcdir)/engine/include
tests_engine_ctl_msg_LDADD = engine/librepl_internal.la $(LDADD)

# the control channel's framed TCP transport
check_PROGRAMS += tests/engine/ctl_chan
TESTS += tests/engine/ctl_chan
tests_engine_ctl_chan_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/engine -I$(top_srcdir)/engine/include
tests_engine_ctl_chan_LDADD = engine/librepl_internal.la $(LDADD) $(AX_PTHREAD_LIBS)

# a refused or silent data connection: connect and drop keep their bounds
check_PROGRAMS += tests/engine/fabric_conn
TESTS += tests/engine/fabric_conn
tests_engine_fabric_conn_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/engine -I$(top_srcdir)/engine/include
tests_engine_fabric_conn_LDADD = engine/librepl_internal.la $(LDADD)


# 1 primary + 2 replicas as processes, SIGKILLed at random (ofi tcp)
TESTS += tests/engine/repl_cluster.sh
EXTRA_DIST += tests/engine/repl_cluster.sh

check_PROGRAMS += tests/engine/wal_replica
TESTS += tests/engine/wal_replica
tests_engine_wal_replica_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/engine -I$(top_srcdir)/engine/include
tests_engine_wal_replica_LDADD = engine/librepl_internal.la $(LDADD)

# the membership's encoding, its version 1 reader and a change's memberships
check_PROGRAMS += tests/engine/membership_codec
TESTS += tests/engine/membership_codec
tests_engine_membership_codec_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/engine -I$(top_srcdir)/engine/include
tests_engine_membership_codec_LDADD = engine/librepl_internal.la $(LDADD)

# the peer floors: their encoding, a decoder total over any bytes, the
# log's two copies and the rules on an entry
check_PROGRAMS += tests/engine/peer_floor_codec
TESTS += tests/engine/peer_floor_codec
tests_engine_peer_floor_codec_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/engine -I$(top_srcdir)/engine/include
tests_engine_peer_floor_codec_LDADD = engine/librepl_internal.la $(LDADD)

# a replica's log gone back to an older copy: refused by the primary's link
# and its next promotion (the peer floors), until made anew
check_PROGRAMS += tests/engine/repl_older_copy
TESTS += tests/engine/repl_older_copy
tests_engine_repl_older_copy_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/engine -I$(top_srcdir)/engine/include
tests_engine_repl_older_copy_LDADD = engine/librepl_internal.la $(LDADD) \
	$(AX_PTHREAD_LIBS)

# a promotion asks its peers at once: a silent one does not hold it up
check_PROGRAMS += tests/engine/repl_promote_parallel
TESTS += tests/engine/repl_promote_parallel
tests_engine_repl_promote_parallel_CPPFLAGS = $(AM_CPPFLAGS) \
	-I$(top_srcdir)/engine -I$(top_srcdir)/engine/include
tests_engine_repl_promote_parallel_LDADD = engine/librepl_internal.la \
	$(LDADD) $(AX_PTHREAD_LIBS)

# the membership: stored with its configuration epoch, changed only on purpose
check_PROGRAMS += tests/engine/repl_membership
TESTS += tests/engine/repl_membership
tests_engine_repl_membership_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/engine -I$(top_srcdir)/engine/include
tests_engine_repl_membership_LDADD = engine/librepl_internal.la $(LDADD) \
	$(AX_PTHREAD_LIBS)

# a replica that stops answering: marked down; quorum blocks or goes on
TESTS += tests/engine/repl_quorum.sh
EXTRA_DIST += tests/engine/repl_quorum.sh
EXTRA_DIST += tests/engine/wal_test.h

# the control channel over TLS: certificates from make-test-ca.sh
check_PROGRAMS += tests/engine/ctl_tls
TESTS += tests/engine/ctl_tls
tests_engine_ctl_tls_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/engine -I$(top_srcdir)/engine/include \
	$(SSL_CFLAGS) \
	-DMAKE_TEST_CA='"$(abs_top_srcdir)/tests/engine/make-test-ca.sh"'
tests_engine_ctl_tls_LDADD = engine/librepl_internal.la $(SSL_LIBS) $(LDADD) \
	$(AX_PTHREAD_LIBS)
EXTRA_DIST += tests/engine/make-test-ca.sh tests/engine/ctl_stream.h

# a replica admits a data connection only with its TLS session's token
check_PROGRAMS += tests/engine/repl_admission
TESTS += tests/engine/repl_admission
tests_engine_repl_admission_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/engine -I$(top_srcdir)/engine/include \
	$(SSL_CFLAGS) \
	-DMAKE_TEST_CA='"$(abs_top_srcdir)/tests/engine/make-test-ca.sh"'
tests_engine_repl_admission_LDADD = engine/librepl_internal.la $(SSL_LIBS) $(LDADD)
EXTRA_DIST += tests/engine/cluster_lib.sh

# attacks with valid TLS refused by name; a flipped bit refused by TLS
check_PROGRAMS += tests/engine/repl_attacks
TESTS += tests/engine/repl_attacks
tests_engine_repl_attacks_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/engine -I$(top_srcdir)/engine/include \
	$(SSL_CFLAGS) \
	-DMAKE_TEST_CA='"$(abs_top_srcdir)/tests/engine/make-test-ca.sh"'
tests_engine_repl_attacks_LDADD = engine/librepl_internal.la $(SSL_LIBS) $(LDADD) \
	$(AX_PTHREAD_LIBS)
EXTRA_DIST += tests/engine/repl_test_node.h

# a promotion while the old primary lives (frozen): it is fenced, exits 3
TESTS += tests/engine/repl_fence.sh
EXTRA_DIST += tests/engine/repl_fence.sh

# kills, promotions and fencing, proxy cuts at random; every ack checked
TESTS += tests/engine/repl_chaos.sh
EXTRA_DIST += tests/engine/repl_chaos.sh

# lost disks, failover sequences, restarts of old primaries at random
TESTS += tests/engine/repl_chaos_disks.sh
EXTRA_DIST += tests/engine/repl_chaos_disks.sh

# membership changes (add, remove, move a node) while nodes fail, at random
TESTS += tests/engine/repl_chaos_membership.sh
EXTRA_DIST += tests/engine/repl_chaos_membership.sh

# a primary's view of each replica: transport, flush method, backend, lag
check_PROGRAMS += tests/engine/repl_replica_status
TESTS += tests/engine/repl_replica_status
tests_engine_repl_replica_status_CPPFLAGS = $(AM_CPPFLAGS) \
	-I$(top_srcdir)/engine -I$(top_srcdir)/engine/include
tests_engine_repl_replica_status_LDADD = engine/librepl_internal.la $(LDADD) \
	$(AX_PTHREAD_LIBS)
EXTRA_DIST += tests/engine/repl_inproc.h

# a replica's own state, as its daemon shows it, read from another thread
check_PROGRAMS += tests/engine/replica_state
TESTS += tests/engine/replica_state
tests_engine_replica_state_CPPFLAGS = $(AM_CPPFLAGS) \
	-I$(top_srcdir)/engine -I$(top_srcdir)/engine/include
tests_engine_replica_state_LDADD = engine/librepl_internal.la $(LDADD) \
	$(AX_PTHREAD_LIBS)

# repl_verify: two replicas compared range by range; a changed byte found
check_PROGRAMS += tests/engine/repl_verify
TESTS += tests/engine/repl_verify
tests_engine_repl_verify_CPPFLAGS = $(AM_CPPFLAGS) \
	-I$(top_srcdir)/engine -I$(top_srcdir)/engine/include
tests_engine_repl_verify_LDADD = engine/librepl_internal.la $(LDADD) \
	$(AX_PTHREAD_LIBS)

# a replica takes a HELLO only from the node and log its epoch names
check_PROGRAMS += tests/engine/repl_identity
TESTS += tests/engine/repl_identity
tests_engine_repl_identity_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/engine -I$(top_srcdir)/engine/include \
	$(SSL_CFLAGS) \
	-DMAKE_TEST_CA='"$(abs_top_srcdir)/tests/engine/make-test-ca.sh"'
tests_engine_repl_identity_LDADD = engine/librepl_internal.la $(SSL_LIBS) $(LDADD)

# a replica made anew takes its promise floor before it serves a primary
check_PROGRAMS += tests/engine/repl_floor
TESTS += tests/engine/repl_floor
tests_engine_repl_floor_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/engine -I$(top_srcdir)/engine/include \
	$(SSL_CFLAGS) \
	-DMAKE_TEST_CA='"$(abs_top_srcdir)/tests/engine/make-test-ca.sh"'
tests_engine_repl_floor_LDADD = engine/librepl_internal.la $(SSL_LIBS) $(LDADD) \
	$(AX_PTHREAD_LIBS)

# a link's batch cut into pieces that neither wrap nor pass a flush's limit
check_PROGRAMS += tests/engine/link_split
TESTS += tests/engine/link_split
tests_engine_link_split_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/engine -I$(top_srcdir)/engine/include
tests_engine_link_split_LDADD = engine/librepl_internal.la $(LDADD)

# a link's state changes only as its table says; a forbidden one aborts
check_PROGRAMS += tests/engine/link_states
TESTS += tests/engine/link_states
tests_engine_link_states_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/engine \
	-I$(top_srcdir)/engine/include
tests_engine_link_states_LDADD = engine/librepl_internal.la $(LDADD)

# engine/'s wings stay layered and its files form no loop (includes and nm)
TESTS += tests/engine/engine_layering.sh
EXTRA_DIST += tests/engine/engine_layering.sh

# the engine's locks: every inverted pair aborts a debug build
check_PROGRAMS += tests/engine/lock_order
TESTS += tests/engine/lock_order
tests_engine_lock_order_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/engine \
	-I$(top_srcdir)/engine/include
tests_engine_lock_order_LDADD = engine/librepl_internal.la $(LDADD)

# every engine fault point of a primary/replica pair, failed one at a time
# (debug builds; each run a process, so LeakSanitizer checks each)
check_PROGRAMS += tests/engine/fault_sweep
TESTS += tests/engine/fault_sweep
tests_engine_fault_sweep_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/engine \
	-I$(top_srcdir)/engine/include \
	-DMAKE_TEST_CA='"$(abs_top_srcdir)/tests/engine/make-test-ca.sh"'
tests_engine_fault_sweep_LDADD = engine/librepl_internal.la $(SSL_LIBS) $(LDADD)


# archiving and restoring: every committed record iterated (epoch starts
# included), restored into a new log byte for byte, the newest kept when
# the ring is smaller, and a restored log bootstrapping a new cluster
check_PROGRAMS += tests/engine/repl_restore
TESTS += tests/engine/repl_restore
tests_engine_repl_restore_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/engine/include
tests_engine_repl_restore_LDADD = engine/librepl_internal.la $(LDADD) \
	$(AX_PTHREAD_LIBS)
