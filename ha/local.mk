# ha -- high availability, a wing of its own: the etcd client (etcd v3 over
# its JSON gateway, libcurl and jansson; base64 from libcrypto) and the
# leader key under a lease (ha/coord/), the coordinator's keys in etcd,
# their values written and parsed totally (coord_keys.c, coord_read.c), the
# failover rules as pure functions (ha_rules.c), and the coordinator that
# runs them for a node it drives through an operations table (coordinator.h:
# repld's node_ha.c fills it).  Not in librepl: a database that links
# librepl needs neither etcd nor libcurl.
noinst_LTLIBRARIES += ha/libreplha.la
ha_libreplha_la_SOURCES = \
	ha/coord/etcd_msg.c ha/coord/etcd_msg.h ha/coord/etcd_req.c \
	ha/coord/etcd_b64.c ha/coord/etcd_http.c ha/coord/etcd_http.h \
	ha/coord/etcd_client.c ha/coord/etcd_client.h ha/coord/etcd_watch.c \
	ha/coord/leader.c ha/coord/leader.h \
	ha/ha_rules.c ha/ha_rules.h \
	ha/coord_keys.c ha/coord_keys.h \
	ha/coord_read.c \
	ha/coordinator.c ha/coordinator.h ha/coord_internal.h ha/coord_base.c \
	ha/coord_rules.c ha/coord_membership.c ha/coord_switchover.c \
	ha/coord_maintenance.c ha/coord_archiver.c \
	ha/coord_watch.c
ha_libreplha_la_CPPFLAGS = -I$(top_srcdir)/ha -I$(top_srcdir)/engine -I$(top_srcdir)/lib \
	-I$(top_srcdir)/engine/include $(CURL_CFLAGS) $(JANSSON_CFLAGS) $(SSL_CFLAGS)
# libcrypto: base64 (etcd_b64.c)
ha_libreplha_la_LIBADD = $(CURL_LIBS) $(JANSSON_LIBS) $(SSL_LIBS) $(AX_PTHREAD_LIBS)

# the rules, step by step: every transition and the documented timelines
check_PROGRAMS += tests/ha/ha_rules_test
TESTS += tests/ha/ha_rules_test
tests_ha_ha_rules_test_SOURCES = tests/ha/ha_rules_test.c
tests_ha_ha_rules_test_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/ha \
	-I$(top_srcdir)/engine -I$(top_srcdir)/engine/include $(JANSSON_CFLAGS)
tests_ha_ha_rules_test_LDADD = ha/libreplha.la

# the coordinator's key values written and read back, and etcd's bytes
# that are not such values refused whole
check_PROGRAMS += tests/ha/coord_keys_test
TESTS += tests/ha/coord_keys_test
tests_ha_coord_keys_test_SOURCES = tests/ha/coord_keys_test.c
tests_ha_coord_keys_test_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/ha \
	-I$(top_srcdir)/engine -I$(top_srcdir)/engine/include $(JANSSON_CFLAGS)
tests_ha_coord_keys_test_LDADD = ha/libreplha.la

# etcd's JSON gateway answers decoded (each shape, omitted fields, every
# wrong field named) and the requests encoded
check_PROGRAMS += tests/ha/etcd_msg
TESTS += tests/ha/etcd_msg
tests_ha_etcd_msg_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/ha -I$(top_srcdir)/engine \
	-I$(top_srcdir)/engine/include $(JANSSON_CFLAGS)
tests_ha_etcd_msg_LDADD = ha/libreplha.la engine/librepl_internal.la $(JANSSON_LIBS) $(LDADD)

# the etcd client against a real etcd on loopback (skipped without etcd)
check_PROGRAMS += tests/ha/etcd_live
TESTS += tests/ha/etcd_live.sh
EXTRA_DIST += tests/ha/etcd_live.sh
tests_ha_etcd_live_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/ha -I$(top_srcdir)/engine \
	-I$(top_srcdir)/engine/include
tests_ha_etcd_live_LDADD = ha/libreplha.la engine/librepl_internal.la $(LDADD) $(AX_PTHREAD_LIBS)

# the leader key under a lease, and the epochs counter, against a real
# etcd on loopback (skipped without etcd)
check_PROGRAMS += tests/ha/coord_leader_live
TESTS += tests/ha/coord_leader_live.sh
EXTRA_DIST += tests/ha/coord_leader_live.sh
tests_ha_coord_leader_live_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/ha -I$(top_srcdir)/engine \
	-I$(top_srcdir)/engine/include
tests_ha_coord_leader_live_LDADD = ha/libreplha.la engine/librepl_internal.la $(LDADD) $(AX_PTHREAD_LIBS)

# the etcd client against a fake etcd: failover on Unavailable only,
# timeouts, answers that are not etcd's, a watch's stream cut anywhere
check_PROGRAMS += tests/ha/etcd_fake
TESTS += tests/ha/etcd_fake
tests_ha_etcd_fake_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/ha -I$(top_srcdir)/engine \
	-I$(top_srcdir)/engine/include
tests_ha_etcd_fake_LDADD = ha/libreplha.la engine/librepl_internal.la $(LDADD) $(AX_PTHREAD_LIBS)

# repl_ha(3): the library's page (not installed, as the library is not),
# rendered without a warning and naming every function of its headers
EXTRA_DIST += ha/repl_ha.3
TESTS += tests/ha/check-ha-man.sh
EXTRA_DIST += tests/ha/check-ha-man.sh
