# tests/bench-rdma -- baselines for the RDMA rig (make check-rdma): the
# write+flush latency loop, one source built against Debian's librpma 1.2
# and against our core, run in the guest by tests/vm/baselines.sh beside
# perftest.  Built only for the rig (EXTRA_PROGRAMS), never run by `make
# check`: the times mean something only on real RDMA.
#
# This file is included before tests/vm/local.mk, whose RDMA_VM_FILES (a
# prerequisite list, expanded as it is read) names BENCH_RDMA_BINS.

EXTRA_PROGRAMS += tests/bench-rdma/rdma_wf_loop_ours
BENCH_RDMA_BINS = tests/bench-rdma/rdma_wf_loop_ours$(EXEEXT)

tests_bench_rdma_rdma_wf_loop_ours_SOURCES = tests/bench-rdma/rdma_wf_loop.c
tests_bench_rdma_rdma_wf_loop_ours_LDADD = rpma/librpmacore_internal.la

if HAVE_LIBRPMA
EXTRA_PROGRAMS += tests/bench-rdma/rdma_wf_loop_librpma
BENCH_RDMA_BINS += tests/bench-rdma/rdma_wf_loop_librpma$(EXEEXT)
# sees only Debian's header and library, nothing of rpma/
tests_bench_rdma_rdma_wf_loop_librpma_SOURCES = tests/bench-rdma/rdma_wf_loop.c
tests_bench_rdma_rdma_wf_loop_librpma_CPPFLAGS = -DUSE_LIBRPMA $(LIBRPMA_CFLAGS)
tests_bench_rdma_rdma_wf_loop_librpma_LDADD = $(LIBRPMA_LIBS) $(IBVERBS_LIBS)
endif

CLEANFILES += $(BENCH_RDMA_BINS)
