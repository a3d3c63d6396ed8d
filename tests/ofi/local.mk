# tests/ofi -- the libfabric provider over loopback tcp, real processes
OFI_TESTS = \
	tests/ofi/ofi_flush_crash \
	tests/ofi/ofi_flush_crash_control.sh

check_PROGRAMS += tests/ofi/ofi_flush_crash
TESTS += $(OFI_TESTS)
EXTRA_DIST += tests/ofi/ofi_harness.h tests/ofi/ofi_flush_crash_control.sh
