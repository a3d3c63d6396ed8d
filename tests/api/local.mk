# tests/api -- docs/librpma-api-status.md matches librpma and librpmacore
TESTS += tests/api/check-api-status.sh
EXTRA_DIST += tests/api/check-api-status.sh docs/librpma-api-status.md

# every function librepl exports has a manual page; the pages render cleanly
TESTS += tests/api/check-librepl-man.sh
EXTRA_DIST += tests/api/check-librepl-man.sh

# repld, replctl and repl-bench link the shared librepl and use only its API
TESTS += tests/api/check-public-symbols.sh
EXTRA_DIST += tests/api/check-public-symbols.sh
