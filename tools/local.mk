# tools/ -- programs: quickstart, demos (later repld, replctl, bench)

noinst_PROGRAMS += tools/descriptor_demo
tools_descriptor_demo_SOURCES = tools/descriptor_demo.c
tools_descriptor_demo_LDADD = rpma/librpmacore_internal.la

# the core's micro-benchmark: write+flush against its floor, same run
noinst_PROGRAMS += tools/bench/rpma-bench
tools_bench_rpma_bench_SOURCES = tools/bench/rpma_bench.c
tools_bench_rpma_bench_LDADD = rpma/librpmacore_internal.la

# the local log's benchmark: append+durable against copy+persist, same run
noinst_PROGRAMS += tools/bench/repl-bench
tools_bench_repl_bench_SOURCES = tools/bench/repl_bench.c
tools_bench_repl_bench_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/engine/include
tools_bench_repl_bench_LDADD = engine/librepl_internal.la rpma/librpmacore_internal.la $(AX_PTHREAD_LIBS)
