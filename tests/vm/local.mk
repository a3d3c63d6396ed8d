# tests/vm -- the RDMA test rig: Debian's kernel under QEMU (TCG) with
# Soft-RoCE (rdma_rxe) and emulated PMem, for the tests that need real RDMA.
# tests/vm/run-guest explains it all at its top.
#
#   make check-rdma      one guest with PMem: the rig's smoke test (rxe0,
#                        rping, ib_write_lat/ib_read_lat, fsdax, libpmem2,
#                        device-dax) and whatever RDMA_VM_FILES add
#   make check-rdma-two  two guests joined by virtio-net: ib_write_lat
#                        between them
#
# Neither is part of `make check`: a first run downloads about 75 MB of
# Debian packages (kept in RPMA_VM_CACHE, default /var/cache/rpma-repl-vm)
# and installs qemu-system-x86 when it is missing, which needs root.
# RUN_GUEST_FLAGS adds options, e.g. `make check-rdma RUN_GUEST_FLAGS=--quiet`.

EXTRA_DIST += \
	tests/vm/run-guest \
	tests/vm/init \
	tests/vm/vm-devdax \
	tests/vm/vm-peer \
	tests/vm/smoke.sh \
	tests/vm/rdma-tests.sh

# Built only for check-rdma. (Nothing else declares EXTRA_PROGRAMS; whoever
# adds another one turns this into +=, after an "EXTRA_PROGRAMS =" in
# Makefile.am.)
EXTRA_PROGRAMS = tests/vm/pmem2-granularity
tests_vm_pmem2_granularity_SOURCES = tests/vm/pmem2-granularity.c
tests_vm_pmem2_granularity_CFLAGS = $(AM_CFLAGS) $(PMEM2_CFLAGS)
tests_vm_pmem2_granularity_LDADD = $(PMEM2_LIBS)
CLEANFILES += tests/vm/pmem2-granularity$(EXEEXT)

# Programs copied to /files in the guest (real ELF files: see run-guest about
# libtool) and the command that runs there. The verbs tests join here.
RDMA_VM_FILES = tests/vm/pmem2-granularity$(EXEEXT) $(VERBS_TESTS) \
	$(INTEROP_BINS) $(srcdir)/tests/vm/rdma-tests.sh \
	$(srcdir)/tests/interop/run-interop.sh \
	$(srcdir)/tests/interop/interop-librpma-to-ours \
	$(srcdir)/tests/interop/interop-ours-to-librpma
RDMA_VM_COMMAND = /files/rdma-tests.sh
RUN_GUEST = $(top_srcdir)/tests/vm/run-guest
RUN_GUEST_FLAGS =

check-rdma: $(RDMA_VM_FILES)
	@files=$$(mktemp -d "$${TMPDIR:-/tmp}/check-rdma.XXXXXX") || exit 1; \
	trap 'rm -rf "$$files"' EXIT; \
	for f in $(RDMA_VM_FILES); do \
	  case $$f in /*) src=$$f ;; *) src=$(abs_builddir)/$$f ;; esac; \
	  ln -s "$$src" "$$files/$${f##*/}" || exit 1; \
	done; \
	$(RUN_GUEST) $(RUN_GUEST_FLAGS) --pmem --files "$$files" -- $(RDMA_VM_COMMAND); \
	rc=$$?; \
	if test $$rc -eq 0; then \
	  echo "check-rdma: PASS"; \
	else \
	  echo "check-rdma: FAIL (run-guest exited $$rc)"; \
	fi; \
	exit $$rc

check-rdma-two:
	@$(RUN_GUEST) $(RUN_GUEST_FLAGS) --two -- /files/smoke.sh; \
	rc=$$?; \
	if test $$rc -eq 0; then \
	  echo "check-rdma-two: PASS"; \
	else \
	  echo "check-rdma-two: FAIL (run-guest exited $$rc)"; \
	fi; \
	exit $$rc

.PHONY: check-rdma check-rdma-two
