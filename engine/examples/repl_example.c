/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * repl_example -- how a database uses librepl: create a log, append a few
 * records, wait until they are durable (only then acknowledge them),
 * read one back, walk the log, and release what a checkpoint covered.
 *
 *   repl_example FILE
 */
#include <stdio.h>
#include <string.h>

#include "repl.h"

static int
show(void *arg, uint64_t lsn, const void *data, size_t len)
{
	(void)arg;
	printf("  lsn %llu: %.*s\n", (unsigned long long)lsn, (int)len,
		(const char *)data);
	return 0;
}

int
main(int argc, char *argv[])
{
	const char *records[] = { "BEGIN 17", "UPDATE t SET a=1", "COMMIT 17" };
	struct repl_cfg cfg = { .backend = REPL_BACKEND_FILE, .size = 1 << 20,
		.create = 1, .node_id = 1, .epoch = 1, .full_timeout_ms = 1000 };
	struct repl *repl = NULL;
	struct repl_status st;
	uint64_t lsn = 0;
	char buf[64];
	size_t len;
	int ret;

	if (argc != 2) {
		fprintf(stderr, "usage: %s FILE\n", argv[0]);
		return 2;
	}
	cfg.path = argv[1];
	if ((ret = repl_open(&cfg, &repl))) {
		fprintf(stderr, "repl_open %s: %s\n", argv[1], repl_strerror(ret));
		return 1;
	}
	for (size_t i = 0; i < sizeof(records) / sizeof(records[0]); i++) {
		if ((ret = repl_append(repl, records[i], strlen(records[i]), &lsn))) {
			fprintf(stderr, "repl_append: %s\n", repl_strerror(ret));
			return 1;
		}
	}
	/* one persist covers all three: now the transaction may be acknowledged */
	if ((ret = repl_wait_durable(repl, lsn, 1000))) {
		fprintf(stderr, "repl_wait_durable: %s\n", repl_strerror(ret));
		return 1;
	}
	printf("durable up to lsn %llu\n", (unsigned long long)lsn);
	if (repl_read(repl, 2, buf, sizeof(buf), &len) == 0)
		printf("record 2 reads back: %.*s\n", (int)len, buf);
	printf("the log:\n");
	repl_iterate(repl, 1, show, NULL);
	repl_release(repl, 1);		/* a checkpoint covered the first record */
	repl_status(repl, &st);
	printf("status: records %llu..%llu, durable %llu, %llu of %llu bytes used\n",
		(unsigned long long)st.first_lsn, (unsigned long long)st.last_lsn,
		(unsigned long long)st.durable_lsn, (unsigned long long)st.used_bytes,
		(unsigned long long)st.size_bytes);
	repl_close(&repl);
	return 0;
}
