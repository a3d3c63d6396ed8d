# tests/verbs -- the verbs provider; SKIP (77) without an RDMA device, run
# for real in the VM rig (make check-rdma) with RPMA_TESTING_IP set.
VERBS_TESTS = tests/verbs/verbs_data_path tests/verbs/verbs_gpspm tests/verbs/verbs_srq \
	tests/verbs/verbs_fence
EXTRA_DIST += tests/verbs/verbs_harness.h

check_PROGRAMS += $(VERBS_TESTS)
TESTS += $(VERBS_TESTS)

# fencing over verbs: the engine's replica in a thread
tests_verbs_verbs_fence_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/engine -I$(top_srcdir)/engine/include
tests_verbs_verbs_fence_LDADD = engine/librepl_internal.la $(LDADD) $(AX_PTHREAD_LIBS)
