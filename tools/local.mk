# tools/ -- programs: quickstart, demos (later repld, replctl, bench)

noinst_PROGRAMS += tools/descriptor_demo
tools_descriptor_demo_SOURCES = tools/descriptor_demo.c
tools_descriptor_demo_LDADD = rpma/librpmacore_internal.la
