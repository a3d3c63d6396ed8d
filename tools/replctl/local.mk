# tools/replctl -- the administration tool: offline commands on a log image
# (dump, status LOG), live ones through repld's admin socket

bin_PROGRAMS += tools/replctl/replctl
tools_replctl_replctl_SOURCES = tools/replctl/replctl.c tools/replctl/replctl.h \
	tools/replctl/logread.c tools/replctl/dump.c tools/replctl/status.c \
	tools/replctl/ms_show.c \
	tools/replctl/client.c tools/replctl/client.h \
	tools/replctl/json_in.c tools/replctl/json_in.h \
	tools/replctl/live.c tools/replctl/append.c tools/replctl/read.c \
	tools/replctl/bench.c tools/replctl/switchover.c tools/replctl/coord_show.c \
	tools/replctl/maintenance.c tools/replctl/history.c \
	tools/replctl/archive.c tools/replctl/restore.c \
	tools/replctl/restore_db.c tools/replctl/restore_db.h
# on librepl's public API only (tests/api/check-public-symbols.sh)
tools_replctl_replctl_CPPFLAGS = $(PUBLIC_CPPFLAGS) -I$(top_srcdir)/config \
	-I$(top_srcdir)/admin -I$(top_srcdir)/archive -I$(top_srcdir)/tools/bench \
	-I$(top_srcdir)/sqlite \
	$(JANSSON_CFLAGS)
tools_replctl_replctl_LDADD = config/librepl_conf.la admin/libadmin_proto.la \
	archive/libarchive.la sqlite/librv_copy.la \
	tools/bench/libbenchutil.la \
	engine/librepl.la $(JANSSON_LIBS) $(AX_PTHREAD_LIBS)
