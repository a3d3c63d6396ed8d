# sqlite/ -- replvfs, SQLite over librepl: a committed transaction's WAL
# frames become one librepl record (docs/sqlite.md)

# the transaction record and the image record: their codecs alone, with
# no SQLite and no librepl
noinst_LTLIBRARIES += sqlite/libtxn_record.la
sqlite_libtxn_record_la_SOURCES = sqlite/txn_record.c sqlite/txn_record.h \
	sqlite/image_record.c sqlite/image_record.h

check_PROGRAMS += tests/sqlite/txn_record_test
TESTS += tests/sqlite/txn_record_test
tests_sqlite_txn_record_test_SOURCES = tests/sqlite/txn_record_test.c
tests_sqlite_txn_record_test_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/sqlite
tests_sqlite_txn_record_test_LDADD = sqlite/libtxn_record.la

# a replica's copy of the database, followed in repld (sqlite_copy), and
# the pages of a record written into a file: no SQLite needed
noinst_LTLIBRARIES += sqlite/librv_copy.la
sqlite_librv_copy_la_SOURCES = sqlite/rv_copy.c sqlite/rv_copy.h sqlite/rv_copy_snapshot.c \
	sqlite/rv_copy_remake.c sqlite/rv_copy_internal.h \
	sqlite/rv_remake.c sqlite/rv_remake.h \
	sqlite/rv_apply.c sqlite/rv_apply.h sqlite/rv_base.c sqlite/rv_base.h
sqlite_librv_copy_la_CPPFLAGS = $(PUBLIC_CPPFLAGS) -I$(top_srcdir)/sqlite
sqlite_librv_copy_la_LIBADD = sqlite/libtxn_record.la

# the VFS, as a loadable SQLite extension: libreplvfs.so, entry point
# sqlite3_replvfs_init (".load libreplvfs" in the sqlite3 shell)
lib_LTLIBRARIES += sqlite/libreplvfs.la
sqlite_libreplvfs_la_SOURCES = sqlite/extension.c sqlite/vfs.c sqlite/replvfs.h \
	sqlite/rv_db.c sqlite/rv_db_open.c sqlite/rv_db.h sqlite/rv_wal_map.c sqlite/rv_wal_map.h \
	sqlite/rv_release.c sqlite/rv_release.h \
	sqlite/rv_image.c sqlite/rv_image.h \
	sqlite/rv_check.c sqlite/rv_check.h sqlite/rv_node.c sqlite/rv_node.h \
	sqlite/rv_ha.c sqlite/rv_ha.h sqlite/rv_ha_ops.c sqlite/rv_ha_internal.h
sqlite_libreplvfs_la_CPPFLAGS = $(PUBLIC_CPPFLAGS) -I$(top_srcdir)/sqlite \
	-I$(top_srcdir)/config -I$(top_srcdir)/admin -I$(top_srcdir)/ha \
	$(SQLITE3_CFLAGS) $(JANSSON_CFLAGS)
sqlite_libreplvfs_la_LDFLAGS = -module -avoid-version -shared
sqlite_libreplvfs_la_LIBADD = sqlite/librv_copy.la config/librepl_conf.la \
	admin/libadmin_proto.la ha/libreplha.la \
	engine/librepl.la $(JANSSON_LIBS)

# the sqlite3 shell and Python's sqlite3 through the extension, beside two
# repld replicas; a COMMIT the replicas do not hold fails
TESTS += tests/sqlite/replvfs_shell.sh
EXTRA_DIST += tests/sqlite/replvfs_shell.sh

# single-row INSERT transactions, plain SQLite or through replvfs, timed
# per COMMIT (tools/bench/sqlite-vs runs it beside the baselines)
noinst_PROGRAMS += tools/bench/sqlite-bench
tools_bench_sqlite_bench_SOURCES = tools/bench/sqlite_bench.c
tools_bench_sqlite_bench_CPPFLAGS = $(PUBLIC_CPPFLAGS) -I$(top_srcdir)/tools/bench \
	$(SQLITE3_CFLAGS)
tools_bench_sqlite_bench_LDADD = tools/bench/libbenchutil.la $(SQLITE3_LIBS) -lpthread
dist_noinst_SCRIPTS += tools/bench/sqlite-vs

# the same transactions through dqlite (its nodes forked here, its wire
# protocol spoken here): sqlite-vs's dqlite rows; only with libdqlite-dev
if HAVE_DQLITE
noinst_PROGRAMS += tools/bench/dqlite-bench
tools_bench_dqlite_bench_SOURCES = tools/bench/dqlite_bench.c
tools_bench_dqlite_bench_CPPFLAGS = $(PUBLIC_CPPFLAGS) -I$(top_srcdir)/tools/bench \
	$(DQLITE_CFLAGS)
tools_bench_dqlite_bench_LDADD = tools/bench/libbenchutil.la $(DQLITE_LIBS) -lpthread
endif

# dqlite-bench with 3 nodes, briefly at c=1 and c=4: its line parses
# (skipped without dqlite)
TESTS += tests/sqlite/dqlite_bench_smoke.sh
EXTRA_DIST += tests/sqlite/dqlite_bench_smoke.sh

# the application of the failover test: checks the acknowledged
# transactions at open, then commits until killed
check_PROGRAMS += tests/sqlite/replvfs_writer
tests_sqlite_replvfs_writer_SOURCES = tests/sqlite/replvfs_writer.c tests/sqlite/sql_app.c \
	tests/sqlite/sql_app.h
tests_sqlite_replvfs_writer_CPPFLAGS = $(AM_CPPFLAGS) $(SQLITE3_CFLAGS)
tests_sqlite_replvfs_writer_LDADD = $(SQLITE3_LIBS)

# SIGKILL of the primary application in its transactions, ROUNDS (20)
# times, a replica promoted each time: no acknowledged transaction lost
TESTS += tests/sqlite/replvfs_failover.sh
EXTRA_DIST += tests/sqlite/replvfs_failover.sh

# the log released behind checkpoints, held for a replica's copy (down
# too), and a failover that rebuilds from a copy
TESTS += tests/sqlite/replvfs_release.sh
EXTRA_DIST += tests/sqlite/replvfs_release.sh

# repld replicas with sqlite_copy: plain SQLite reads their copies while
# the primary commits; a replica killed, restarted, caught up
TESTS += tests/sqlite/replvfs_replica.sh
EXTRA_DIST += tests/sqlite/replvfs_replica.sh
TESTS += tests/sqlite/replvfs_where.sh
EXTRA_DIST += tests/sqlite/replvfs_where.sh

# an existing database made the log's first transaction; a damaged file
# rebuilt from the log at open
TESTS += tests/sqlite/replvfs_import.sh
EXTRA_DIST += tests/sqlite/replvfs_import.sh

# the order of SQLite's -wal writes that replvfs relies on, pinned
# against the SQLite it is built with (plain SQLite through a recording VFS)
check_PROGRAMS += tests/sqlite/wal_write_order
TESTS += tests/sqlite/wal_write_order
tests_sqlite_wal_write_order_SOURCES = tests/sqlite/wal_write_order.c
tests_sqlite_wal_write_order_CPPFLAGS = $(AM_CPPFLAGS) $(SQLITE3_CFLAGS)
tests_sqlite_wal_write_order_LDADD = $(SQLITE3_LIBS)

# a -wal read through its mapping, as a commit gathers its pages
check_PROGRAMS += tests/sqlite/wal_map_test
TESTS += tests/sqlite/wal_map_test
tests_sqlite_wal_map_test_SOURCES = tests/sqlite/wal_map_test.c \
	sqlite/rv_wal_map.c sqlite/rv_wal_map.h
tests_sqlite_wal_map_test_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/sqlite

# SQLite's -wal writes in every shape the VFS must follow: page sizes,
# spilled and rewritten frames, a transaction larger than the ring,
# checkpoints under a reader, VACUUM
TESTS += tests/sqlite/replvfs_shapes.sh
EXTRA_DIST += tests/sqlite/replvfs_shapes.sh

# what the replvfs tests share: the extension, a sanitizer's runtime, and
# Python's loader of the extension
EXTRA_DIST += tests/sqlite/replvfs_lib.sh tests/sqlite/replvfs_load.py

# the membership of a running replvfs primary changed in SQL
# (repl_member_add, repl_member_remove) and its state (repl_status)
sqlite_libreplvfs_la_SOURCES += sqlite/rv_admin.c sqlite/rv_admin.h \
	sqlite/rv_db_membership.c sqlite/rv_db_internal.h
# strict commits in flight: what another connection may read meanwhile
sqlite_libreplvfs_la_SOURCES += sqlite/rv_db_readers.c
# and repld's admin socket for replctl (repl_admin=1), with its parser
# (admin/libadmin_proto.la)
sqlite_libreplvfs_la_SOURCES += sqlite/rv_admin_sock.c sqlite/rv_admin_sock.h

# a replica lost for good fills the log (COMMIT fails with SQLITE_FULL);
# repl_member_remove lets it commit on, repl_member_add brings a new node
TESTS += tests/sqlite/replvfs_membership.sh
EXTRA_DIST += tests/sqlite/replvfs_membership.sh

# the application of the failovers test: bank transfers with a conserved
# total, savepoints, rollbacks, large transactions, schema changes, VACUUM
# and checkpoints; checks the database at open, then commits until killed
check_PROGRAMS += tests/sqlite/replvfs_bank
tests_sqlite_replvfs_bank_SOURCES = tests/sqlite/replvfs_bank.c tests/sqlite/sql_app.c \
	tests/sqlite/sql_app.h
tests_sqlite_replvfs_bank_CPPFLAGS = $(AM_CPPFLAGS) $(SQLITE3_CFLAGS)
tests_sqlite_replvfs_bank_LDADD = $(SQLITE3_LIBS)

# ROUNDS (12) SIGKILLs of the bank application in its large transactions
# and checkpoints, quorum 1, every node keeping a copy: after each
# failover every other node's copy equals the new primary's database;
# replicas killed while they apply; a replica replaced
TESTS += tests/sqlite/replvfs_failovers.sh
EXTRA_DIST += tests/sqlite/replvfs_failovers.sh

# the application of the automatic-failover test: on every node, a
# replvfs database whose repl_conf has a coordinator; it writes while its
# node is the primary, reopens when the role changes, and checks every
# acknowledged transaction at each open as the primary
check_PROGRAMS += tests/sqlite/replvfs_ha_app
tests_sqlite_replvfs_ha_app_SOURCES = tests/sqlite/replvfs_ha_app.c tests/sqlite/sql_app.c \
	tests/sqlite/sql_app.h
tests_sqlite_replvfs_ha_app_CPPFLAGS = $(AM_CPPFLAGS) $(SQLITE3_CFLAGS)
tests_sqlite_replvfs_ha_app_LDADD = $(SQLITE3_LIBS)

# automatic failover in the application's process (etcd): SIGKILL of the
# primary's application ROUNDS times, a SIGSTOP past its lease, etcd down;
# the failover times' table, no acknowledged transaction lost
TESTS += tests/sqlite/replvfs_ha.sh
EXTRA_DIST += tests/sqlite/replvfs_ha.sh

# strict commits in flight: a second writer appends, a reader waits
TESTS += tests/sqlite/replvfs_strict.sh
EXTRA_DIST += tests/sqlite/replvfs_strict.sh
check_PROGRAMS += tests/sqlite/replvfs_strict_probe
tests_sqlite_replvfs_strict_probe_SOURCES = tests/sqlite/replvfs_strict_probe.c
tests_sqlite_replvfs_strict_probe_CPPFLAGS = $(AM_CPPFLAGS) $(SQLITE3_CFLAGS)
tests_sqlite_replvfs_strict_probe_LDADD = $(SQLITE3_LIBS) $(AX_PTHREAD_LIBS)

# a replvfs database in the archive: bases of a replica's copy, and
# replctl restore --database to a transaction, a time and the latest
TESTS += tests/sqlite/replvfs_archive.sh
EXTRA_DIST += tests/sqlite/replvfs_archive.sh
