# tests/conformance -- our core against Debian's librpma 1.2, byte for byte.
#
# Two programs, because both libraries export the same symbols:
#   librpma-oracle  links Debian's librpma only (never rpma/);
#   conformance     links our core, runs the oracle as a child process and
#                   explains every disagreement by a row of
#                   docs/librpma-differences.md.
# Without librpma-dev the oracle is not built and the test SKIPs.

CONFORMANCE_COMMON = \
	tests/conformance/shared.c tests/conformance/shared.h

check_PROGRAMS += tests/conformance/conformance
TESTS += tests/conformance/conformance
tests_conformance_conformance_SOURCES = $(CONFORMANCE_COMMON) \
	tests/conformance/conformance.c tests/conformance/conformance.h \
	tests/conformance/corpus.c tests/conformance/classify.c
tests_conformance_conformance_CPPFLAGS = $(AM_CPPFLAGS) \
	-DORACLE_PATH='"$(abs_top_builddir)/tests/conformance/librpma-oracle$(EXEEXT)"' \
	-DDIFFERENCES_PATH='"$(abs_top_srcdir)/docs/librpma-differences.md"'

if HAVE_LIBRPMA
check_PROGRAMS += tests/conformance/librpma-oracle
tests_conformance_conformance_CPPFLAGS += -DHAVE_LIBRPMA_ORACLE=1
EXTRA_tests_conformance_conformance_DEPENDENCIES = \
	tests/conformance/librpma-oracle$(EXEEXT)
# no -I of rpma/: the oracle must see <librpma.h> and nothing of ours
tests_conformance_librpma_oracle_SOURCES = $(CONFORMANCE_COMMON) \
	tests/conformance/oracle.c
tests_conformance_librpma_oracle_CPPFLAGS = -DCONFORMANCE_ORACLE \
	$(LIBRPMA_CFLAGS)
tests_conformance_librpma_oracle_LDADD = $(LIBRPMA_LIBS)
endif

EXTRA_DIST += docs/librpma-differences.md
