# tests/examples -- the examples built as their users build them

# make install DESTDIR=..., then examples/kvstore's own Makefile against
# the staged librepl (pkg-config), and the store run: replay, del, errors
TESTS += tests/examples/kvstore.sh
EXTRA_DIST += tests/examples/kvstore.sh

# the test builds with the compiler and flags of this build (sanitizers
# included), and runs the install with this make
AM_TESTS_ENVIRONMENT = MAKE='$(MAKE)' EXAMPLE_CC='$(CC)' \
	EXAMPLE_CFLAGS='$(AX_CFLAGS) $(CFLAGS)' EXAMPLE_LDFLAGS='$(LDFLAGS)'; \
	export MAKE EXAMPLE_CC EXAMPLE_CFLAGS EXAMPLE_LDFLAGS;
