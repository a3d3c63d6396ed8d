# engine/ -- the replication engine: librepl (repl.h) over the local log
noinst_LTLIBRARIES += engine/librepl_internal.la
# the wings, bottom to top: common/, then log/, ctl/ and coord/ (siblings), then
# primary/ and replica/ (siblings), then repl.c.  A wing includes only the
# ones below it (tests/engine/engine_layering.sh checks it, and that no
# file-level loop exists), and none reaches the core's private headers.
engine_librepl_internal_la_SOURCES = \
	engine/common/clock.h engine/common/pos.h engine/common/elog.h engine/common/errors.h \
	engine/common/lock_rank.c engine/common/lock_rank.h \
	engine/common/fault.c engine/common/fault.h engine/common/tsan.h \
	engine/common/fabric.c engine/common/fabric.h \
	engine/common/membership.c engine/common/membership.h \
	engine/common/membership_change.c
engine_librepl_internal_la_SOURCES += \
	engine/log/wal.c engine/log/wal_read.c engine/log/wal_probe.c engine/log/wal.h engine/log/wal_internal.h \
	engine/log/wal_format.c engine/log/wal_hdr.c engine/log/wal_replica.c engine/log/wal_verify.c \
	engine/log/wal_restore.c engine/log/wal_restore.h \
	engine/log/membership_log.c engine/log/membership_v1.c \
	engine/log/peer_floor.c engine/log/peer_floor.h \
	engine/log/log_lock.c engine/log/log_lock.h
engine_librepl_internal_la_SOURCES += \
	engine/ctl/ctl_msg.c engine/ctl/ctl_msg.h \
	engine/ctl/ctl_stream.c engine/ctl/ctl_stream.h engine/ctl/ctl_tls.c \
	engine/ctl/ctl_chan.c engine/ctl/ctl_chan.h
engine_librepl_internal_la_SOURCES += \
	engine/primary/primary.h engine/primary/quorum.c \
	engine/primary/cluster_ms.c engine/primary/cluster_floor.c \
	engine/primary/link_catchup.c engine/primary/link_connect.c engine/primary/link_state.c \
	engine/primary/link_verify.c engine/primary/link_progress.c \
	engine/primary/link_io.c engine/primary/link.c \
	engine/primary/verify.c engine/primary/promote.c engine/primary/promote_hello.c \
	engine/primary/promote_hello.h engine/primary/fence_listen.c \
	engine/primary/cluster.c engine/primary/cluster.h \
	engine/primary/durable_wait.c
engine_librepl_internal_la_SOURCES += \
	engine/replica/replica_state.c engine/replica/replica_open.c \
	engine/replica/replica.c engine/replica/replica.h engine/replica/replica_internal.h \
	engine/replica/replica_pending.c \
	engine/replica/promise_floor.c engine/replica/promise_floor.h
engine_librepl_internal_la_SOURCES += engine/repl.c engine/include/repl.h \
	engine/facade.h engine/repl_replica.c engine/repl_reader.c \
	engine/repl_log.c engine/repl_host.c engine/repl_restore.c
engine_librepl_internal_la_CPPFLAGS = $(ENGINE_CPPFLAGS)

lib_LTLIBRARIES += engine/librepl.la
engine_librepl_la_SOURCES =
# the core goes in whole, its symbols hidden: librepl stands alone
engine_librepl_la_LIBADD = engine/librepl_internal.la rpma/librpmacore_internal.la
engine_librepl_la_LDFLAGS = -version-info 0:0:0 \
	-Wl,--version-script=$(top_srcdir)/engine/librepl.map
EXTRA_engine_librepl_la_DEPENDENCIES = engine/librepl.map

include_HEADERS += engine/include/repl.h
pkgconfig_DATA += engine/librepl.pc
EXTRA_DIST += engine/librepl.map engine/librepl.pc.in
DISTCLEANFILES += engine/librepl.pc

# an example database: links the installed-style library
noinst_PROGRAMS += engine/repl_example
engine_repl_example_SOURCES = engine/examples/repl_example.c
engine_repl_example_CPPFLAGS = $(PUBLIC_CPPFLAGS)
engine_repl_example_LDADD = engine/librepl.la

# the control channel's TLS (OpenSSL); librepl and every program linking
# librepl_internal.la get the libraries through libtool's dependency_libs
engine_librepl_internal_la_CPPFLAGS += $(SSL_CFLAGS) $(JANSSON_CFLAGS)
engine_librepl_internal_la_LIBADD = $(SSL_LIBS) $(JANSSON_LIBS)
