#!/bin/sh
# The negative control of ofi_flush_crash: with persistence disabled on the
# target, the durability check must fail (the program asserts that it does).
exec ./tests/ofi/ofi_flush_crash no-persistence
