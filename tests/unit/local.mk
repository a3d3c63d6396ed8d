# tests/unit -- one CUnit program per API function; tests/unit/NAME.c
# builds tests/unit/NAME with the defaults of tests/local.mk.
UNIT_TESTS = \
	tests/unit/crc32c

check_PROGRAMS += $(UNIT_TESTS)
TESTS += $(UNIT_TESTS)
