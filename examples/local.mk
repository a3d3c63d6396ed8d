# examples/ -- programs that use the installed libraries as their users
# would; each has its own plain Makefile (pkg-config only)

# kvstore: also compiled here, against the tree's librepl, so that a change
# to repl.h that breaks it fails the build and not only its test; named
# apart from the kvstore its own Makefile builds (in-tree builds)
check_PROGRAMS += examples/kvstore/kvstore-tree
examples_kvstore_kvstore_tree_SOURCES = examples/kvstore/kvstore.c
examples_kvstore_kvstore_tree_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/engine/include
examples_kvstore_kvstore_tree_LDADD = engine/librepl.la
EXTRA_DIST += examples/kvstore/Makefile examples/kvstore/README.md
