# tests/tools -- the programs' pieces: repld's configuration file

# every example in conf/ loads; every file in conf-bad/ is refused with the
# message its first line names
check_PROGRAMS += tests/tools/conf_test
TESTS += tests/tools/conf_test
tests_tools_conf_test_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/config \
	-DCONF_DIR='"$(abs_top_srcdir)/conf"' \
	-DBAD_DIR='"$(abs_top_srcdir)/tests/tools/conf-bad"'
tests_tools_conf_test_LDADD = config/librepl_conf.la $(LDADD)

CONF_BAD = \
	tests/tools/conf-bad/archive-no-target.conf \
	tests/tools/conf-bad/archive-on.conf \
	tests/tools/conf-bad/archive-segment.conf \
	tests/tools/conf-bad/archive-max-hold.conf \
	tests/tools/conf-bad/archive-compress.conf \
	tests/tools/conf-bad/archive-key.conf \
	tests/tools/conf-bad/address-any.conf \
	tests/tools/conf-bad/archive-base-every.conf \
	tests/tools/conf-bad/address-port.conf \
	tests/tools/conf-bad/admin-socket-long.conf \
	tests/tools/conf-bad/backend-dram.conf \
	tests/tools/conf-bad/coordinator-candidate.conf \
	tests/tools/conf-bad/coordinator-endpoint-path.conf \
	tests/tools/conf-bad/coordinator-endpoint-port.conf \
	tests/tools/conf-bad/coordinator-endpoint-scheme.conf \
	tests/tools/conf-bad/coordinator-endpoint-twice.conf \
	tests/tools/conf-bad/coordinator-key.conf \
	tests/tools/conf-bad/coordinator-lease.conf \
	tests/tools/conf-bad/coordinator-no-etcd.conf \
	tests/tools/conf-bad/coordinator-prefix.conf \
	tests/tools/conf-bad/coordinator-timeout.conf \
	tests/tools/conf-bad/coordinator-tls-cert.conf \
	tests/tools/conf-bad/duplicate.conf \
	tests/tools/conf-bad/flush-apm-ofi.conf \
	tests/tools/conf-bad/flush-bad.conf \
	tests/tools/conf-bad/flush-native.conf \
	tests/tools/conf-bad/full-timeout.conf \
	tests/tools/conf-bad/busy-poll.conf \
	tests/tools/conf-bad/heartbeat-default-down.conf \
	tests/tools/conf-bad/heartbeat-down.conf \
	tests/tools/conf-bad/heartbeat-range.conf \
	tests/tools/conf-bad/include-bad.inc \
	tests/tools/conf-bad/include.conf \
	tests/tools/conf-bad/listen-ports.conf \
	tests/tools/conf-bad/log-level-loud.conf \
	tests/tools/conf-bad/log-path-empty.conf \
	tests/tools/conf-bad/metrics-listen-host.conf \
	tests/tools/conf-bad/metrics-listen-port.conf \
	tests/tools/conf-bad/missing-listen-address.conf \
	tests/tools/conf-bad/missing-log-path.conf \
	tests/tools/conf-bad/missing-node-id.conf \
	tests/tools/conf-bad/missing-uuid.conf \
	tests/tools/conf-bad/node-id-0.conf \
	tests/tools/conf-bad/node-id-70000.conf \
	tests/tools/conf-bad/peers-9.conf \
	tests/tools/conf-bad/peers-duplicate.conf \
	tests/tools/conf-bad/peers-self.conf \
	tests/tools/conf-bad/quorum-missing.conf \
	tests/tools/conf-bad/quorum-more.conf \
	tests/tools/conf-bad/quorum-negative.conf \
	tests/tools/conf-bad/quorum-replica-peers.conf \
	tests/tools/conf-bad/role-leader.conf \
	tests/tools/conf-bad/size-align.conf \
	tests/tools/conf-bad/size-large.conf \
	tests/tools/conf-bad/size-small-int.conf \
	tests/tools/conf-bad/size-small.conf \
	tests/tools/conf-bad/size-suffix.conf \
	tests/tools/conf-bad/syntax.conf \
	tests/tools/conf-bad/tls-cert-only.conf \
	tests/tools/conf-bad/tls-empty.conf \
	tests/tools/conf-bad/tls-missing-file.conf \
	tests/tools/conf-bad/transport-rdma.conf \
	tests/tools/conf-bad/transport-shm.conf \
	tests/tools/conf-bad/type-listen.conf \
	tests/tools/conf-bad/type-node-id.conf \
	tests/tools/conf-bad/type-peers.conf \
	tests/tools/conf-bad/type-port.conf \
	tests/tools/conf-bad/type-size.conf \
	tests/tools/conf-bad/typo-timeouts.conf \
	tests/tools/conf-bad/typo-top.conf \
	tests/tools/conf-bad/unknown-listen.conf \
	tests/tools/conf-bad/unknown-peer.conf \
	tests/tools/conf-bad/unknown-top.conf \
	tests/tools/conf-bad/uuid-nil.conf \
	tests/tools/conf-bad/uuid-short.conf \
	tests/tools/conf-bad/retention-keep.conf \
	tests/tools/conf-bad/retention-reader-lag.conf \
	tests/tools/conf-bad/retention-replica-hold.conf \
	tests/tools/conf-bad/retention-mode.conf \
	tests/tools/conf-bad/retention-alarm.conf \
	tests/tools/conf-bad/retention-key.conf \
	tests/tools/conf-bad/wide-int.conf
EXTRA_DIST += $(CONF_BAD)

# repld as a three-node cluster on this host: start, --check, clean stops,
# promotion with one replica, fencing, and a refused promotion
TESTS += tests/tools/repld_cluster.sh
EXTRA_DIST += tests/tools/repld_cluster.sh

# replctl's offline commands (dump, status) on a log a small cluster wrote
TESTS += tests/tools/replctl_dump.sh
EXTRA_DIST += tests/tools/replctl_dump.sh

# what the live-cluster tests below share (sourced by them)
EXTRA_DIST += tests/tools/cluster_lib.sh

# every live replctl command against a three-node cluster: status, peers,
# append, bench, fence, promote, add/remove, reload (and SIGHUP), usage
TESTS += tests/tools/replctl_live.sh
EXTRA_DIST += tests/tools/replctl_live.sh

# remove/add and a promotion while a client appends: nothing acknowledged
# is lost (replctl dump of the new primary's and a replica's logs)
TESTS += tests/tools/repld_under_load.sh
EXTRA_DIST += tests/tools/repld_under_load.sh

# SIGTERM to the primary with appends in flight: exit 0, every
# acknowledged record in its log and in a replica's
TESTS += tests/tools/repld_sigterm.sh
EXTRA_DIST += tests/tools/repld_sigterm.sh

# replctl with no daemon, a dead one, a stopped one, a non-socket, a bad
# -c file; the admin socket's mode and a second daemon on it
TESTS += tests/tools/replctl_no_daemon.sh
EXTRA_DIST += tests/tools/replctl_no_daemon.sh

# a second repld on a log another holds: refused at once (exit 5, the
# holder's pid named); the first unharmed; the lock goes with its holder
TESTS += tests/tools/repld_log_lock.sh
EXTRA_DIST += tests/tools/repld_log_lock.sh

# two replctl add at once: each builds on the membership the other left
TESTS += tests/tools/repld_concurrent_add.sh
EXTRA_DIST += tests/tools/repld_concurrent_add.sh

# a membership change the primary cannot make leaves it serving: with both
# replicas down it is refused before the primary closes its log; with them
# stopped after that check, the old configuration is reopened by itself
# once they are back
TESTS += tests/tools/repld_add_refused.sh
EXTRA_DIST += tests/tools/repld_add_refused.sh

# idle TCP connections to a replica's control port: a promotion that must
# fence it still succeeds at once; the replica drops them in time
TESTS += tests/tools/repld_idle_conns.sh
EXTRA_DIST += tests/tools/repld_idle_conns.sh

# a replica that refuses the data connection after a good HELLO: the
# primary's link fails and retries (reconnects rise); SIGTERM ends it, exit 0
TESTS += tests/tools/repld_data_refused.sh
EXTRA_DIST += tests/tools/repld_data_refused.sh

# the log does not fill: 50 x a 16 MiB log through a primary and a replica
# (mode auto); RELEASE refused where it has no meaning; mode checkpointer:
# full until a RELEASE, the space alarm raised and cleared
TESTS += tests/tools/repld_retention.sh
TESTS += tests/tools/repld_reader.sh
EXTRA_DIST += tests/tools/repld_reader.sh
TESTS += tests/tools/repld_full_resync.sh
EXTRA_DIST += tests/tools/repld_full_resync.sh
EXTRA_DIST += tests/tools/repld_retention.sh

# the HTTP endpoints: /metrics parses as the text format and names what
# repld(8) lists, counts the appends; /primary, /replica, /health follow the
# cluster; 405, 404; a metrics port already held stops the start (exit 1)
TESTS += tests/tools/repld_metrics.sh
EXTRA_DIST += tests/tools/repld_metrics.sh

# promtool check metrics (Prometheus's checker, PROMTOOL) finds no error and
# no lint problem on a primary's and a replica's /metrics, each also alone;
# skipped (77) without promtool
TESTS += tests/tools/repld_promtool.sh
EXTRA_DIST += tests/tools/repld_promtool.sh

# a light steady load at quorum 2 (30 records a second for 10 s): no
# replica dropped as silent, no reconnect
TESTS += tests/tools/repld_steady_load.sh
EXTRA_DIST += tests/tools/repld_steady_load.sh

# how a replica's log is made: a blank log only with --bootstrap, --reinit
# once; a log made anew waits for its promise floor (status says so),
# across a refused promotion and a restart, and takes it once k + 1 answer
TESTS += tests/tools/repld_reinit.sh
EXTRA_DIST += tests/tools/repld_reinit.sh

# the TLS files: the openssl commands of repld.conf(5) as printed make
# certificates that connect; a garbage CA, certificate or key, another
# node's key, another CA's certificate, an expired or not yet valid one:
# --check and a start exit 2 naming the file and the reason, and nothing
# is made (no log at --bootstrap; --reinit leaves the log's bytes)
TESTS += tests/tools/repld_tls_check.sh
EXTRA_DIST += tests/tools/repld_tls_check.sh

# starts the log refuses exit 5 (not restarted): a primary whose file says
# another membership than its log stores, a primary's and a replica's log
# of another cluster (the logs unchanged)
TESTS += tests/tools/repld_refused.sh
EXTRA_DIST += tests/tools/repld_refused.sh
# a first start that fails leaves no log; --check sees missing directories
TESTS += tests/tools/repld_first_start.sh
EXTRA_DIST += tests/tools/repld_first_start.sh
# what stays down is said once: a replica down, dials without a HELLO
TESTS += tests/tools/repld_quiet_logs.sh
EXTRA_DIST += tests/tools/repld_quiet_logs.sh

# the failover tests' partition tool: pass, blackhole, refuse on demand
check_PROGRAMS += tests/tools/tcp_proxy
# and their stopwatch: the first acknowledgement by any node
check_PROGRAMS += tests/tools/first_ack

# a restored log (repl_restore_*) bootstraps a new cluster: its records
# read back byte for byte, appends go on after them, both replicas verify;
# --bootstrap over an ordinary log is still refused
check_PROGRAMS += tests/tools/restore_log
tests_tools_restore_log_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/engine/include
tests_tools_restore_log_LDADD = engine/librepl.la
TESTS += tests/tools/repld_restore_bootstrap.sh
EXTRA_DIST += tests/tools/repld_restore_bootstrap.sh
EXTRA_DIST += tests/tools/ha_cluster.sh

# automatic failover on etcd: 20 rounds of kill -9 of the primary under
# appends; every acknowledged record on the new primary, the old one back
# as a replica, the failover time's p50/p99 (skipped without etcd)
TESTS += tests/tools/repld_ha_failover.sh
EXTRA_DIST += tests/tools/repld_ha_failover.sh
TESTS += tests/tools/tcp_proxy_test.sh
EXTRA_DIST += tests/tools/tcp_proxy_test.sh

# the admin socket's loop: one connection's order across a control verb,
# a client that reads nothing holds up nobody, 8 clients at once
check_PROGRAMS += tests/tools/admin_client
TESTS += tests/tools/repld_admin_loop.sh
EXTRA_DIST += tests/tools/repld_admin_loop.sh

# replctl(8)'s EXIT STATUS, one case per documented status (table-driven):
# usage errors before any request (bad numbers named), refusals, a log
# unreadable, no daemon, records not acknowledged (the daemon's
# REPL_E_TIMEDOUT and replctl's --timeout) and status of a primary that
# cannot acknowledge / a replica that follows no primary; global options
# before or after the command
TESTS += tests/tools/replctl_exit.sh
EXTRA_DIST += tests/tools/replctl_exit.sh

# the JSON schemas of replctl(8) against a running cluster's output, both
# ways: every key printed is documented (with its type), every documented
# key is printed (optional ones aside); json_keys lists an object's keys
check_PROGRAMS += tests/tools/json_keys
tests_tools_json_keys_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS)
tests_tools_json_keys_LDADD = $(JANSSON_LIBS)
TESTS += tests/tools/replctl_schema.sh
EXTRA_DIST += tests/tools/replctl_schema.sh

# replctl switchover and failover against a scripted admin socket: the
# requests, the wait for the new leader, every exit code; status's
# coordinator block
TESTS += tests/tools/replctl_switchover.sh
EXTRA_DIST += tests/tools/replctl_switchover.sh

# replctl bench --csv with several clients: a row per acknowledged append,
# latencies positive, each client's start offsets nondecreasing; the plot
# of tools/bench/plot-bench and the series it dumps (the tail is 1 - F,
# the throughput line has whole bins only; 77 for that part without
# gnuplot)
TESTS += tests/tools/replctl_bench_csv.sh
EXTRA_DIST += tests/tools/replctl_bench_csv.sh

# replctl bench's counts per acknowledged append: the daemon counted is the
# primary; replctl's syscalls an append's three (one send for a line and its
# record, 64 B and 1 MiB); 77 for that part without the syscall tracepoint
TESTS += tests/tools/replctl_bench_counts.sh
EXTRA_DIST += tests/tools/replctl_bench_counts.sh

# repld's log: one line format (UTC timestamp, level) for its own lines and
# librepl's, journald's <N> priorities when stderr is the journal,
# log_level over both, and transport "auto" without RDMA logging no error
TESTS += tests/tools/repld_log_format.sh
EXTRA_DIST += tests/tools/repld_log_format.sh

# repld's sd_notify messages to a datagram receiver in NOTIFY_SOCKET's
# place: READY=1 with the admin socket up, STATUS= naming the role,
# WATCHDOG=1 at half WATCHDOG_USEC, RELOADING=1 on SIGHUP, STOPPING=1
TESTS += tests/tools/repld_notify.sh
EXTRA_DIST += tests/tools/repld_notify.sh

# the systemd unit: systemd-analyze verify is clean, its security exposure
# is at most 3.0, Type=notify with a watchdog, no restart after 2..5
TESTS += tests/tools/repld_unit.sh
EXTRA_DIST += tests/tools/repld_unit.sh

# automatic failover on etcd (repld's coordinator): ha_lib.sh is what they
# share; etcd down 30 s under load: appends go on, failover paused, no
# promotion, the leader key taken back
EXTRA_DIST += tests/tools/ha_lib.sh
TESTS += tests/tools/repld_ha_etcd_down.sh
EXTRA_DIST += tests/tools/repld_ha_etcd_down.sh
# a primary SIGSTOPped past its lease: a replica takes over; resumed, the old
# one acknowledges nothing new and rejoins as a replica (it does not exit)
TESTS += tests/tools/repld_ha_sigstop.sh
EXTRA_DIST += tests/tools/repld_ha_sigstop.sh
# a killed node's member key, live in etcd until its lease ends, is
# shown with what the node asked sees of it: no link
TESTS += tests/tools/repld_ha_members_seen.sh
EXTRA_DIST += tests/tools/repld_ha_members_seen.sh
# the coordinator turned on in a running cluster node by node, the
# replicas first: no campaign, the primary stays the primary
TESTS += tests/tools/repld_ha_enable.sh
EXTRA_DIST += tests/tools/repld_ha_enable.sh
# a primary paused between proposing a membership change in etcd and
# carrying it: resumed, it changes nothing and rejoins the new primary
TESTS += tests/tools/repld_ha_paused_change.sh
EXTRA_DIST += tests/tools/repld_ha_paused_change.sh
# replctl switchover, switchover --to, failover --to under load: a new
# primary each time, the old one its replica, nothing acknowledged lost;
# BAD_TARGET and NO_COORDINATOR refused with exit 1
TESTS += tests/tools/repld_ha_switchover.sh
EXTRA_DIST += tests/tools/repld_ha_switchover.sh
# maintenance: on, a switchover still works, the primary killed and no
# takeover for three leases, off and a replica takes over with every
# acknowledged record; replctl history lists the two promotions
TESTS += tests/tools/repld_ha_maintenance.sh
EXTRA_DIST += tests/tools/repld_ha_maintenance.sh
# the membership key: add, remove, a failover over it, a change left in
# it carried, one it cannot carry left alone
TESTS += tests/tools/repld_ha_membership.sh
EXTRA_DIST += tests/tools/repld_ha_membership.sh
# the coordinator over https with client certificates, and a failover
TESTS += tests/tools/repld_ha_etcd_tls.sh
EXTRA_DIST += tests/tools/repld_ha_etcd_tls.sh
# the primary cut from etcd (a tcp_proxy blackholed): no failover, appends
# go on; with a replica cut from it too, that replica does not campaign
# while the other reports link_up; cut from etcd and both replicas: a
# replica takes over, and the old primary, healed, rejoins as its replica
TESTS += tests/tools/repld_ha_partition.sh
EXTRA_DIST += tests/tools/repld_ha_partition.sh
# a three-member etcd losing its leader under load: no failover, appends go
# on; then the primary killed with two members left: a replica takes over
TESTS += tests/tools/repld_ha_etcd_cluster.sh
EXTRA_DIST += tests/tools/repld_ha_etcd_cluster.sh
# continuous backup: a replica archives every committed record (killed,
# its target failing, it holds and catches up, no gap); restore rebuilds
# a log that holds every acknowledged record
TESTS += tests/tools/repld_archive.sh
EXTRA_DIST += tests/tools/repld_archive.sh tests/tools/archive_lib.sh
# the same with the archive on S3 (a local s3rver; skipped without it)
TESTS += tests/tools/repld_archive_s3.sh
EXTRA_DIST += tests/tools/repld_archive_s3.sh
# the archiving node promoted (archive.on = "any"): it archives its own
# log and its retention holds for it; no gap across the failover
TESTS += tests/tools/repld_archive_failover.sh
EXTRA_DIST += tests/tools/repld_archive_failover.sh
# the archiving replica away: the primary keeps its hold while it is down,
# a restarted primary releases nothing until it has connected once, and
# past retention.replica_max_hold the primary releases past it (a gap said)
TESTS += tests/tools/repld_archive_away.sh
EXTRA_DIST += tests/tools/repld_archive_away.sh
# one archiver at a time through etcd's log-archiver key: the archiving
# node killed, the standby takes over without a gap
TESTS += tests/tools/repld_ha_archive.sh
EXTRA_DIST += tests/tools/repld_ha_archive.sh
