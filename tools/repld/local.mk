# tools/repld -- the daemon: its configuration file, its node and admin socket

# repld.conf's reader is config/ (config/local.mk), the admin socket's
# protocol admin/ (admin/local.mk)

# example configurations: one node of each role, and a cluster on one host;
# installed into $(docdir)/examples, localhost-3node/ as a subdirectory
repldexamplesdir = $(docdir)/examples
repldexamples_DATA = \
	conf/repld-primary.conf \
	conf/repld-replica.conf
repldexamples3nodedir = $(docdir)/examples/localhost-3node
repldexamples3node_DATA = \
	conf/localhost-3node/node1.conf \
	conf/localhost-3node/node2.conf \
	conf/localhost-3node/node3.conf
REPLD_CONF_EXAMPLES = $(repldexamples_DATA) $(repldexamples3node_DATA)
EXTRA_DIST += $(REPLD_CONF_EXAMPLES)

# the systemd unit (an instance per configuration file), made at build
# time so that it names the installed repld; --with-systemdsystemunitdir
# chooses where it goes (default $(prefix)/lib/systemd/system), "no" skips it
EXTRA_DIST += conf/repld@.service.in
CLEANFILES += conf/repld@.service
if INSTALL_SYSTEMD_UNIT
systemdsystemunit_DATA = conf/repld@.service
else
noinst_DATA = conf/repld@.service
endif
conf/repld@.service: $(srcdir)/conf/repld@.service.in Makefile
	$(AM_V_GEN)$(MKDIR_P) conf && \
	sed -e 's|@bindir[@]|$(bindir)|g' $(srcdir)/conf/repld@.service.in > $@.tmp && \
	mv -f $@.tmp $@

# the daemon: one node (replica or primary) as its configuration describes
bin_PROGRAMS += tools/repld/repld
tools_repld_repld_SOURCES = tools/repld/repld.c \
	tools/repld/log.c tools/repld/log.h \
	tools/repld/notify.c tools/repld/notify.h \
	tools/repld/node.c tools/repld/node_gate.c tools/repld/node.h tools/repld/node_internal.h \
	tools/repld/node_role.c tools/repld/node_membership.c \
	tools/repld/node_reopen.c tools/repld/node_state.c \
	tools/repld/admin.c tools/repld/admin.h \
	tools/repld/admin_conn.h tools/repld/admin_loop.c \
	tools/repld/admin_status.c tools/repld/admin_status.h \
	tools/repld/member_seen.c tools/repld/member_seen.h \
	tools/repld/archiver.c tools/repld/archiver.h \
	tools/repld/archiver_base.c tools/repld/archiver_base.h \
	tools/repld/admin_ha.c tools/repld/admin_ha.h \
	tools/repld/retention.c tools/repld/retention.h \
	tools/repld/reader.c tools/repld/reader.h \
	tools/repld/json_out.c tools/repld/json_out.h \
	tools/repld/http.c tools/repld/http.h \
	tools/repld/health_query.c tools/repld/health_query.h \
	tools/repld/metrics.c tools/repld/metrics.h \
	tools/repld/metrics_text.c tools/repld/metrics_text.h \
	tools/repld/metrics_process.c tools/repld/metrics_process.h \
	tools/repld/node_ha.c tools/repld/node_ha.h tools/repld/node_copy.c
# on librepl's public API only (tests/api/check-public-symbols.sh), and
# the failover's wing (ha/: the coordinator, the etcd client, the rules)
tools_repld_repld_CPPFLAGS = $(PUBLIC_CPPFLAGS) -I$(top_srcdir)/tools/repld \
	-I$(top_srcdir)/ha -I$(top_srcdir)/engine -I$(top_srcdir)/sqlite $(JANSSON_CFLAGS) $(MHD_CFLAGS) $(SYSTEMD_CFLAGS)
# repld.conf's reader and the admin socket's protocol, each its own folder
tools_repld_repld_CPPFLAGS += -I$(top_srcdir)/config -I$(top_srcdir)/admin \
	-I$(top_srcdir)/archive
tools_repld_repld_LDADD = config/librepl_conf.la admin/libadmin_proto.la engine/librepl.la \
	ha/libreplha.la sqlite/librv_copy.la archive/libarchive.la \
	$(JANSSON_LIBS) $(MHD_LIBS) $(SYSTEMD_LIBS) $(AX_PTHREAD_LIBS) -lm

# the Prometheus text exposition's writer
check_PROGRAMS += tests/tools/metrics_text_test
TESTS += tests/tools/metrics_text_test
tests_tools_metrics_text_test_SOURCES = tests/tools/metrics_text_test.c \
	tools/repld/metrics_text.c
tests_tools_metrics_text_test_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tools/repld
tests_tools_metrics_text_test_LDADD = $(LDADD) -lm

# a health path's limits on a replica: the query string, the refusals
check_PROGRAMS += tests/tools/health_query_test
TESTS += tests/tools/health_query_test
tests_tools_health_query_test_SOURCES = tests/tools/health_query_test.c \
	tools/repld/health_query.c
tests_tools_health_query_test_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tools/repld

# the process_* families: /proc's lines parsed, this process's values
check_PROGRAMS += tests/tools/metrics_process_test
TESTS += tests/tools/metrics_process_test
tests_tools_metrics_process_test_SOURCES = tests/tools/metrics_process_test.c \
	tools/repld/metrics_process.c tools/repld/metrics_text.c
tests_tools_metrics_process_test_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tools/repld
tests_tools_metrics_process_test_LDADD = $(LDADD) -lm

# the node's states: the table of their changes, what each says
check_PROGRAMS += tests/tools/node_state_test
TESTS += tests/tools/node_state_test
tests_tools_node_state_test_SOURCES = tests/tools/node_state_test.c \
	tools/repld/node_state.c
tests_tools_node_state_test_CPPFLAGS = $(AM_CPPFLAGS) $(PUBLIC_CPPFLAGS) \
	-I$(top_srcdir)/tools/repld -I$(top_srcdir)/config -I$(top_srcdir)/sqlite \
	-I$(top_srcdir)/engine

# the admin socket's text, both ends: requests, replies, replctl's reader
check_PROGRAMS += tests/tools/admin_proto_test
TESTS += tests/tools/admin_proto_test
tests_tools_admin_proto_test_SOURCES = tests/tools/admin_proto_test.c \
	tools/repld/json_out.c tools/replctl/json_in.c
tests_tools_admin_proto_test_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/admin \
	-I$(top_srcdir)/tools/repld -I$(top_srcdir)/tools/replctl $(JANSSON_CFLAGS)
tests_tools_admin_proto_test_LDADD = admin/libadmin_proto.la $(JANSSON_LIBS)
