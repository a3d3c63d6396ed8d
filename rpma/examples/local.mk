# rpma/examples -- programs that show the core's API (built, not installed)
EXAMPLES = \
	rpma/examples/write_flush_server rpma/examples/write_flush_client \
	rpma/examples/log_append_server rpma/examples/log_append_client

noinst_PROGRAMS += $(EXAMPLES)
rpma_examples_write_flush_server_LDADD = rpma/librpmacore_internal.la
rpma_examples_write_flush_client_LDADD = rpma/librpmacore_internal.la
rpma_examples_log_append_server_LDADD = rpma/librpmacore_internal.la
rpma_examples_log_append_client_LDADD = rpma/librpmacore_internal.la
EXTRA_DIST += rpma/examples/common.h
