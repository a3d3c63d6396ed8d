# tests/interop -- our core against Debian's librpma 1.2 over verbs, both
# directions.  The same two sources are built against each library; the
# interop-* scripts pair them up.  They SKIP without RDMA and run for real in
# the VM rig (make check-rdma).
if HAVE_LIBRPMA
INTEROP_BINS = \
	tests/interop/interop_target_ours tests/interop/interop_client_ours \
	tests/interop/interop_target_librpma tests/interop/interop_client_librpma
check_PROGRAMS += $(INTEROP_BINS)

tests_interop_interop_target_ours_SOURCES = tests/interop/interop_target.c
tests_interop_interop_target_ours_LDADD = rpma/librpmacore_internal.la
tests_interop_interop_client_ours_SOURCES = tests/interop/interop_client.c
tests_interop_interop_client_ours_LDADD = rpma/librpmacore_internal.la

# these see only Debian's header and library
tests_interop_interop_target_librpma_SOURCES = tests/interop/interop_target.c
tests_interop_interop_target_librpma_CPPFLAGS = -DUSE_LIBRPMA $(LIBRPMA_CFLAGS)
tests_interop_interop_target_librpma_LDADD = $(LIBRPMA_LIBS) $(IBVERBS_LIBS)
tests_interop_interop_client_librpma_SOURCES = tests/interop/interop_client.c
tests_interop_interop_client_librpma_CPPFLAGS = -DUSE_LIBRPMA $(LIBRPMA_CFLAGS)
tests_interop_interop_client_librpma_LDADD = $(LIBRPMA_LIBS) $(IBVERBS_LIBS)

INTEROP_TESTS = tests/interop/interop-librpma-to-ours tests/interop/interop-ours-to-librpma
TESTS += $(INTEROP_TESTS)
endif
EXTRA_DIST += tests/interop/interop.h tests/interop/run-interop.sh \
	tests/interop/interop-librpma-to-ours tests/interop/interop-ours-to-librpma
