# tools/replctl -- the administration tool; for now its offline commands
# (dump, status), which read a log image and never write it

bin_PROGRAMS += tools/replctl/replctl
tools_replctl_replctl_SOURCES = tools/replctl/replctl.c tools/replctl/replctl.h \
	tools/replctl/logread.c tools/replctl/dump.c tools/replctl/status.c
tools_replctl_replctl_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/engine \
	-I$(top_srcdir)/engine/include
tools_replctl_replctl_LDADD = engine/librepl_internal.la rpma/librpmacore_internal.la \
	$(AX_PTHREAD_LIBS)
