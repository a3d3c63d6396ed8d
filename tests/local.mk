# tests/ -- unit (CUnit), conformance against Debian's librpma, fuzzing

# Test programs take these unless they set their own: every unit test is
# just a source file named after its program.
LDADD = rpma/librpmacore_internal.la $(CUNIT_LIBS)
AM_CPPFLAGS += -I$(top_srcdir)/tests/unit
AM_CFLAGS += $(CUNIT_CFLAGS)

EXTRA_DIST += tests/unit/unit.h tests/unit/nomem.h
# the tree's folders stay layered: lib < rpma < engine < config, admin <
# sqlite, ha < tools (includes and build rules; docs/design.md §1)
TESTS += tests/tree_layering.sh
EXTRA_DIST += tests/tree_layering.sh

# ThreadSanitizer suppressions for a --enable-tsan build (README)
EXTRA_DIST += tests/tsan.supp

include tests/unit/local.mk
include tests/mem/local.mk
include tests/engine/local.mk
include tests/ofi/local.mk
include tests/verbs/local.mk
include tests/interop/local.mk
include tests/conformance/local.mk
include tests/fuzz/local.mk
include tests/bench-rdma/local.mk
include tests/vm/local.mk
include tests/api/local.mk
include tests/tools/local.mk
include tests/scenario/local.mk
include tests/model/local.mk
include tests/examples/local.mk
include tests/archive/local.mk
EXTRA_DIST += tests/lib/test_ports.h tests/lib/test_ports.sh tests/lib/etcd_lib.sh \
	tests/lib/lt_unwrap.sh
