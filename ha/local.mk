# ha -- high availability: the failover rules as pure functions and the
# coordinator's keys in etcd (their values written and parsed totally).
# repld's coordinator drives the node with them; the etcd client and the
# lease are engine/coord/'s (librepl_coord).
noinst_LTLIBRARIES += ha/libreplha.la
ha_libreplha_la_SOURCES = \
	ha/ha_rules.c ha/ha_rules.h \
	ha/coord_keys.c ha/coord_keys.h \
	ha/coord_read.c
ha_libreplha_la_CPPFLAGS = -I$(top_srcdir)/ha -I$(top_srcdir)/engine \
	-I$(top_srcdir)/engine/include $(JANSSON_CFLAGS)
ha_libreplha_la_LIBADD = engine/librepl_coord.la $(JANSSON_LIBS)

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
