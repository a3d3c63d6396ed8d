# tests/mem -- the persistence backends (rpma_ext_mem_*)
MEM_TESTS = \
	tests/mem/ext_mem_open \
	tests/mem/ext_mem_create \
	tests/mem/ext_mem_persist \
	tests/mem/ext_mem_memcpy \
	tests/mem/ext_mem_health

check_PROGRAMS += $(MEM_TESTS)
TESTS += $(MEM_TESTS)
EXTRA_DIST += tests/mem/mem_image.h
