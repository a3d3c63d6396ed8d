# tools/ -- programs: quickstart, demos (later repld, replctl, bench)

noinst_PROGRAMS += tools/descriptor_demo
tools_descriptor_demo_SOURCES = tools/descriptor_demo.c
tools_descriptor_demo_LDADD = rpma/librpmacore_internal.la

# what the benchmarks share: clock, percentiles, the network floor; the
# medium's floor is on the core (rpma.h), so only the two that link it
# compile bench_floor.c
noinst_LTLIBRARIES += tools/bench/libbenchutil.la
tools_bench_libbenchutil_la_SOURCES = tools/bench/bench_util.c tools/bench/bench_util.h \
	tools/bench/proc_counts.c tools/bench/proc_counts.h
tools_bench_libbenchutil_la_CPPFLAGS = $(PUBLIC_CPPFLAGS)
BENCH_FLOOR = tools/bench/bench_floor.c tools/bench/bench_floor.h

# the per-append counts (syscalls, context switches) count what a process does
check_PROGRAMS += tests/tools/proc_counts_test
TESTS += tests/tools/proc_counts_test
tests_tools_proc_counts_test_SOURCES = tests/tools/proc_counts_test.c
tests_tools_proc_counts_test_CPPFLAGS = $(PUBLIC_CPPFLAGS) -I$(top_srcdir)/tools/bench
tests_tools_proc_counts_test_LDADD = tools/bench/libbenchutil.la $(AX_PTHREAD_LIBS)

# the core's micro-benchmark: write+flush against its floor, same run
noinst_PROGRAMS += tools/bench/rpma-bench
tools_bench_rpma_bench_SOURCES = tools/bench/rpma_bench.c $(BENCH_FLOOR)
tools_bench_rpma_bench_LDADD = tools/bench/libbenchutil.la rpma/librpmacore_internal.la

# the engine's benchmark: append+durable, alone or replicated, against
# copy+persist (+ a TCP round trip), same run
noinst_PROGRAMS += tools/bench/repl-bench
# on librepl's public API (tests/api/check-public-symbols.sh); its floor
# takes the core's public memory API from librpmacore
tools_bench_repl_bench_SOURCES = tools/bench/repl_bench.c $(BENCH_FLOOR)
tools_bench_repl_bench_CPPFLAGS = $(PUBLIC_CPPFLAGS)
tools_bench_repl_bench_LDADD = tools/bench/libbenchutil.la engine/librepl.la \
	rpma/librpmacore.la $(AX_PTHREAD_LIBS)

# runs repl-bench over a matrix of configurations: one markdown table
EXTRA_DIST += tools/bench/repl-bench-matrix tools/bench/repl-bench-ab
# replctl bench --csv files as a PNG (gnuplot)
EXTRA_DIST += tools/bench/plot-bench

# the machine's own floors (TCP round trip, pwrite+fdatasync overwrite and
# into a fallocated file) for vs-postgres, beside PostgreSQL and repld
noinst_PROGRAMS += tools/bench/io-floor
tools_bench_io_floor_SOURCES = tools/bench/io_floor.c
tools_bench_io_floor_CPPFLAGS = $(PUBLIC_CPPFLAGS)
tools_bench_io_floor_LDADD = tools/bench/libbenchutil.la

# repld and librepl beside PostgreSQL 15 synchronous replication, one run
# (docs/benchmarks.md)
EXTRA_DIST += tools/bench/vs-postgres

# the demo's and the replication tests' cluster node (repl-node) is a test
# process: tests/engine/local.mk
EXTRA_DIST += tools/demo-cluster tools/repld-demo tools/bench/repld-vs-engine \
	tools/bench/archive-ab

# the restore benchmark's archive (tools/bench/archive_fill.c)
noinst_PROGRAMS += tools/bench/archive-fill
tools_bench_archive_fill_SOURCES = tools/bench/archive_fill.c
tools_bench_archive_fill_CPPFLAGS = -I$(top_srcdir)/archive
tools_bench_archive_fill_LDADD = archive/libarchive.la
