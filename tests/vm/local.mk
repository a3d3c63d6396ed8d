# tests/vm -- the RDMA test rig: Debian's kernel under QEMU (TCG) with
# Soft-RoCE (rdma_rxe) and emulated PMem, for the tests that need real RDMA.
# tests/vm/run-guest explains it all at its top.
#
#   make check-rdma      one guest with PMem: the rig's smoke test (rxe0,
#                        rping, ib_write_lat/ib_read_lat, fsdax, libpmem2,
#                        device-dax), the tests that RDMA_VM_FILES add, and
#                        last the baselines (tests/vm/baselines.sh): perftest
#                        and the write+flush loops of librpma and of our
#                        core, a table of medians
#   make check-rdma-two  two guests with PMem joined by virtio-net
#                        (tests/vm/two-tests.sh): ib_write_lat, then
#                        write+flush from one guest to the other: ours to
#                        ours, librpma to ours, ours to librpma
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
	tests/vm/rdma-tests.sh \
	tests/vm/baselines.sh \
	tests/vm/two-tests.sh \
	tests/vm/verbs_repld.sh

# repld and replctl over verbs to a PMem replica, per flush method: skips
# (77) here, runs in the rig
TESTS += tests/vm/verbs_repld.sh

# Built only for check-rdma.
EXTRA_PROGRAMS += tests/vm/pmem2-granularity
tests_vm_pmem2_granularity_SOURCES = tests/vm/pmem2-granularity.c
tests_vm_pmem2_granularity_CFLAGS = $(AM_CFLAGS) $(PMEM2_CFLAGS)
tests_vm_pmem2_granularity_LDADD = $(PMEM2_LIBS)
CLEANFILES += tests/vm/pmem2-granularity$(EXEEXT)

# Programs copied to /files in the guest (real ELF files: see run-guest about
# libtool) and the command that runs there. The verbs tests join here.
# (These lists are prerequisites, expanded as make reads them: what they
# name must be defined by a file included before this one.)
RDMA_VM_FILES = tests/vm/pmem2-granularity$(EXEEXT) $(VERBS_TESTS) \
	$(INTEROP_BINS) $(srcdir)/tests/vm/rdma-tests.sh \
	$(srcdir)/tests/interop/run-interop.sh \
	$(srcdir)/tests/interop/interop-librpma-to-ours \
	$(srcdir)/tests/interop/interop-ours-to-librpma \
	$(BENCH_RDMA_BINS) $(srcdir)/tests/vm/baselines.sh \
	$(srcdir)/tests/vm/verbs_repld.sh tools/repld/repld$(EXEEXT) \
	tools/replctl/replctl$(EXEEXT)
RDMA_VM_COMMAND = /files/rdma-tests.sh
# the same for check-rdma-two (both guests get all of them)
RDMA_VM_TWO_FILES = $(BENCH_RDMA_BINS) $(srcdir)/tests/vm/two-tests.sh \
	tests/engine/repl-node$(EXEEXT)
RDMA_VM_TWO_COMMAND = /files/two-tests.sh
RUN_GUEST = $(top_srcdir)/tests/vm/run-guest
RUN_GUEST_FLAGS =

# $(call rdma_vm_files,LIST): shell code that makes $$files, a temporary
# directory of symlinks to the files of LIST, removed when the shell exits.
# A program libtool linked to the project's shared libraries (repld,
# replctl: on librepl.so) is a wrapper script in place: its real ELF in
# .libs/ goes instead, and LD_LIBRARY_PATH names the build's .libs so that
# run-guest's ldd finds the libraries to take along.
rdma_vm_files = files=$$(mktemp -d "$${TMPDIR:-/tmp}/check-rdma.XXXXXX") || exit 1; \
	trap 'rm -rf "$$files"' EXIT; \
	LD_LIBRARY_PATH=$(abs_builddir)/engine/.libs:$(abs_builddir)/rpma/.libs$${LD_LIBRARY_PATH:+:$$LD_LIBRARY_PATH}; \
	export LD_LIBRARY_PATH; \
	for f in $(1); do \
	  case $$f in /*) src=$$f ;; *) src=$(abs_builddir)/$$f ;; esac; \
	  real=$$(dirname "$$src")/.libs/$$(basename "$$src"); \
	  if test -f "$$real" && ! head -c 4 "$$src" | grep -q ELF; then src=$$real; fi; \
	  ln -s "$$src" "$$files/$$(basename "$$f")" || exit 1; \
	done

check-rdma: $(RDMA_VM_FILES)
	@$(call rdma_vm_files,$(RDMA_VM_FILES)); \
	$(RUN_GUEST) $(RUN_GUEST_FLAGS) --pmem --files "$$files" -- $(RDMA_VM_COMMAND); \
	rc=$$?; \
	if test $$rc -eq 0; then \
	  echo "check-rdma: PASS"; \
	else \
	  echo "check-rdma: FAIL (run-guest exited $$rc)"; \
	fi; \
	exit $$rc

check-rdma-two: $(RDMA_VM_TWO_FILES)
	@$(call rdma_vm_files,$(RDMA_VM_TWO_FILES)); \
	$(RUN_GUEST) $(RUN_GUEST_FLAGS) --two --pmem --files "$$files" -- $(RDMA_VM_TWO_COMMAND); \
	rc=$$?; \
	if test $$rc -eq 0; then \
	  echo "check-rdma-two: PASS"; \
	else \
	  echo "check-rdma-two: FAIL (run-guest exited $$rc)"; \
	fi; \
	exit $$rc

.PHONY: check-rdma check-rdma-two
