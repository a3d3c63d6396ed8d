# tests/mem -- the persistence backends (rpma_ext_mem_*)
MEM_TESTS = \
	tests/mem/ext_mem_open \
	tests/mem/ext_mem_persist

check_PROGRAMS += $(MEM_TESTS)
TESTS += $(MEM_TESTS)
