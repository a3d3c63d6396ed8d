# engine/ -- the replication engine (librepl); for now its local log
noinst_LTLIBRARIES += engine/librepl_internal.la
engine_librepl_internal_la_SOURCES = engine/wal.c engine/wal.h
engine_librepl_internal_la_LIBADD = rpma/librpmacore_internal.la
