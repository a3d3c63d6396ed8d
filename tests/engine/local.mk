# tests/engine -- the replication engine's local log
ENGINE_TESTS = tests/engine/wal_format_recovery

check_PROGRAMS += $(ENGINE_TESTS)
TESTS += $(ENGINE_TESTS)
tests_engine_wal_format_recovery_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/engine
tests_engine_wal_format_recovery_LDADD = engine/librepl_internal.la $(LDADD)
EXTRA_DIST += tests/engine/wal_common.h

ENGINE_TESTS += tests/engine/wal_crash
check_PROGRAMS += tests/engine/wal_crash
TESTS += tests/engine/wal_crash
tests_engine_wal_crash_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/engine
tests_engine_wal_crash_LDADD = engine/librepl_internal.la $(LDADD)

check_PROGRAMS += tests/engine/repl_api
TESTS += tests/engine/repl_api
tests_engine_repl_api_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/engine/include
tests_engine_repl_api_LDADD = engine/librepl_internal.la $(LDADD)

check_PROGRAMS += tests/engine/wal_steps
TESTS += tests/engine/wal_steps
tests_engine_wal_steps_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/engine
tests_engine_wal_steps_LDADD = engine/librepl_internal.la $(LDADD)
