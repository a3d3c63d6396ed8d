# config/ -- repld.conf(5): read with libconfig, every setting checked, and
# a node of it mapped onto librepl's repl_cfg (primary_cfg).  Below sqlite/
# and tools/: repld, replctl and libreplvfs all link it; it uses only
# librepl's public header (repl.h), whose library its users link.

noinst_LTLIBRARIES += config/librepl_conf.la
config_librepl_conf_la_SOURCES = config/repld_conf.c config/repld_conf.h \
	config/conf_read.c config/conf_read.h \
	config/conf_coord.c config/conf_coord.h \
	config/conf_archive.c config/conf_archive.h \
	config/primary_cfg.c config/primary_cfg.h
config_librepl_conf_la_CPPFLAGS = $(PUBLIC_CPPFLAGS) $(LIBCONFIG_CFLAGS)
config_librepl_conf_la_LIBADD = $(LIBCONFIG_LIBS)
