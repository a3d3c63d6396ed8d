# tests/ofi -- the libfabric provider over loopback tcp, real processes.
# Each program forks its target; each takes ports of its own (tests/lib/test_ports.h).
OFI_PROGS = \
	tests/ofi/ofi_flush_crash \
	tests/ofi/ofi_srq \
	tests/ofi/ofi_connect \
	tests/ofi/ofi_write_read \
	tests/ofi/ofi_atomic_write \
	tests/ofi/ofi_send_recv \
	tests/ofi/ofi_checks \
	tests/ofi/ofi_peer_gone \
	tests/ofi/ofi_flush_refused \
	tests/ofi/ofi_flush_group \
	tests/ofi/ofi_write_flush \
	tests/ofi/ofi_cq_poll \
	tests/ofi/ofi_polled

OFI_TESTS = $(OFI_PROGS) \
	tests/ofi/ofi_flush_crash_control.sh

check_PROGRAMS += $(OFI_PROGS)
TESTS += $(OFI_TESTS)
EXTRA_DIST += tests/ofi/ofi_harness.h tests/ofi/ofi_target.h \
	tests/ofi/ofi_flush_crash_control.sh
