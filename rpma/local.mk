# rpma/ -- the embedded RPMA core: librpmacore


# Everything is compiled once into a convenience library; the installed
# librpmacore exports only the public API (librpmacore.map), while tests link
# the convenience library to reach internals such as fault injection.
noinst_LTLIBRARIES += rpma/librpmacore_internal.la
rpma_librpmacore_internal_la_SOURCES = \
	rpma/conn.c rpma/conn.h \
	rpma/conn_cfg.c rpma/conn_cfg.h \
	rpma/cq.c rpma/cq.h \
	lib/crc32c.c lib/crc32c.h \
	rpma/descriptor.c rpma/descriptor.h \
	rpma/ep.c \
	rpma/err.c rpma/errormsg.h \
	rpma/fault_injection.c rpma/fault_injection.h \
	rpma/log.c rpma/log.h rpma/log_default.c \
	rpma/mem.c rpma/mem.h rpma/mem_file.c rpma/mem_pmem.c \
	rpma/mr.c rpma/mr.h \
	rpma/mr_remote.c rpma/mr_remote.h \
	rpma/ofi/ofi.h rpma/ofi/ofi_conn.c rpma/ofi/ofi_data.c rpma/ofi/ofi_dl.c \
	rpma/ofi/ofi_ep.c \
	rpma/ofi/ofi_peer.c rpma/ofi/ofi_progress.c rpma/ofi/ofi_request.c \
	rpma/ofi/ofi_srq.c \
	rpma/peer.c rpma/peer.h \
	rpma/peer_cfg.c rpma/peer_cfg.h \
	rpma/progress.c rpma/progress.h \
	rpma/provider.h \
	rpma/request.c rpma/request.h \
	rpma/srq.c \
	rpma/srq_cfg.c rpma/srq_cfg.h \
	rpma/verbs/verbs.h rpma/verbs/verbs_conn.c rpma/verbs/verbs_cq.c \
	rpma/verbs/verbs_ep.c rpma/verbs/verbs_gpspm.c rpma/verbs/verbs_peer.c


rpma_librpmacore_internal_la_CFLAGS = $(AM_CFLAGS) $(PMEM2_CFLAGS) $(FABRIC_CFLAGS) $(RDMACM_CFLAGS) \
	$(ISAL_CFLAGS)
# libfabric is not linked: rpma/ofi/ofi_dl.c loads it on first use
rpma_librpmacore_internal_la_LIBADD = $(IBVERBS_LIBS) $(RDMACM_LIBS) $(PMEM2_LIBS) $(ISAL_LIBS) \
	$(AX_PTHREAD_LIBS) $(DLOPEN_LIBS)

lib_LTLIBRARIES += rpma/librpmacore.la
rpma_librpmacore_la_SOURCES =
rpma_librpmacore_la_LIBADD = rpma/librpmacore_internal.la
rpma_librpmacore_la_LDFLAGS = -version-info 0:0:0 \
	-Wl,--version-script=$(top_srcdir)/rpma/librpmacore.map
EXTRA_rpma_librpmacore_la_DEPENDENCIES = rpma/librpmacore.map

include_HEADERS += rpma/include/rpma.h
pkgconfig_DATA += rpma/rpmacore.pc
EXTRA_DIST += rpma/librpmacore.map rpma/rpmacore.pc.in
DISTCLEANFILES += rpma/rpmacore.pc
