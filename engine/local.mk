# engine/ -- the replication engine: librepl (repl.h) over the local log
noinst_LTLIBRARIES += engine/librepl_internal.la
engine_librepl_internal_la_SOURCES = \
	engine/repl.c engine/include/repl.h \
	engine/clock.h engine/wal.c engine/wal.h engine/wal_internal.h engine/wal_replica.c \
	engine/wal_format.c engine/wal_verify.c engine/log_lock.c engine/log_lock.h
engine_librepl_internal_la_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/engine/include

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
engine_repl_example_SOURCES = engine/repl_example.c
engine_repl_example_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/engine/include
engine_repl_example_LDADD = engine/librepl.la

# the control channel between a primary and its replicas
engine_librepl_internal_la_SOURCES += engine/ctl_msg.c engine/ctl_msg.h \
	engine/ctl_chan.c engine/ctl_chan.h engine/ctl_chan_internal.h engine/ctl_tls.c

# replication: the primary's links and the replica's side
engine_librepl_internal_la_SOURCES += \
	engine/cluster.c engine/cluster.h engine/cluster_internal.h engine/link.c \
	engine/link_session.c engine/verify.c \
	engine/promote.c engine/fence_listen.c engine/fabric.c engine/fabric.h \
	engine/membership.c engine/membership_v1.c engine/membership_change.c \
	engine/membership_log.c engine/membership.h engine/cluster_ms.c \
	engine/peer_floor.c engine/peer_floor.h engine/cluster_floor.c \
	engine/replica.c engine/replica.h engine/promise_floor.c engine/promise_floor.h

# the control channel's TLS (OpenSSL); librepl and every program linking
# librepl_internal.la get the libraries through libtool's dependency_libs
engine_librepl_internal_la_CPPFLAGS += $(SSL_CFLAGS)
engine_librepl_internal_la_LIBADD = $(SSL_LIBS)
