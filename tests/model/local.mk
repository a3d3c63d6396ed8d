# tests/model -- the SPIN model of the replication protocol (model/,
# docs/model.md): the v2 rules searched exhaustively within small bounds,
# and negative controls (one rule put back as it was) that must be found
TESTS += tests/model/check-model.sh
EXTRA_DIST += tests/model/check-model.sh model/repl.pml model/defs.pml \
	model/actions.pml model/bases.pml model/readers.pml model/archive.pml \
	docs/model.md
