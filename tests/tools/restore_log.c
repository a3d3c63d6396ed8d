/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * restore_log.c -- the shell tests' restored log: writes a log with
 * repl_restore_* as a restore from an archive would, and prints the
 * records a reader of the new cluster must find in it.
 *
 *   restore_log PATH SIZE UUID NODE_ID FIRST COUNT
 *
 * COUNT records from LSN FIRST on: an epoch start at FIRST (epoch
 * 0x10001) and one half-way (epoch 0x20002); the others carry the payload
 * "restored LSN" and a run of bytes 0..255 as long as LSN % 97, the
 * client id LSN * 3.  Prints each record that is no epoch start as
 * replctl read --json does: {"lsn":N,"len":L,"payload":"HEX"}.
 * Exit 0, 1 (a librepl call failed, named), 2 (usage).
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "repl.h"

static int
uuid_parse(const char *s, uint8_t out[16])
{
	int n = 0;

	for (; *s && n < 32; s++) {
		unsigned v;

		if (*s == '-')
			continue;
		if (sscanf(s, "%1x", &v) != 1)
			return -1;
		out[n / 2] = (uint8_t)(n % 2 ? out[n / 2] | v : v << 4);
		n++;
	}
	return n == 32 && *s == '\0' ? 0 : -1;
}

int
main(int argc, char **argv)
{
	struct repl_restore_cfg cfg;
	struct repl_restore *r = NULL;
	uint8_t uuid[16], buf[256];
	uint64_t first, count;
	int ret;

	if (argc != 7 || uuid_parse(argv[3], uuid) != 0 ||
	    (first = strtoull(argv[5], NULL, 10)) == 0 ||
	    (count = strtoull(argv[6], NULL, 10)) < 2) {
		fprintf(stderr, "usage: restore_log PATH SIZE UUID NODE_ID FIRST COUNT\n");
		return 2;
	}
	cfg = (struct repl_restore_cfg){ .path = argv[1],
		.size = strtoull(argv[2], NULL, 10), .cluster_uuid = uuid,
		.node_id = (uint32_t)strtoul(argv[4], NULL, 10) };
	if ((ret = repl_restore_open(&cfg, &r)) != 0) {
		fprintf(stderr, "restore_log: repl_restore_open: %s\n", repl_strerror(ret));
		return 1;
	}
	for (uint64_t lsn = first; lsn < first + count; lsn++) {
		bool second = lsn >= first + count / 2;
		struct repl_log_record rec = { .lsn = lsn,
			.epoch = second ? 0x20002 : 0x10001,
			.epoch_start = lsn == first || lsn == first + count / 2 };

		if (!rec.epoch_start) {
			int n = snprintf((char *)buf, sizeof(buf), "restored %" PRIu64, lsn);

			for (uint64_t k = 0; k < lsn % 97; k++)
				buf[n + (int)k] = (uint8_t)k;
			rec.len = (size_t)n + lsn % 97;
			rec.data = buf;
			rec.client_id = lsn * 3;
		}
		if ((ret = repl_restore_add(r, &rec)) != 0) {
			fprintf(stderr, "restore_log: repl_restore_add LSN %" PRIu64 ": %s\n",
				lsn, repl_strerror(ret));
			repl_restore_abort(&r);
			return 1;
		}
		if (rec.epoch_start)
			continue;
		printf("{\"lsn\":%" PRIu64 ",\"len\":%zu,\"payload\":\"", lsn, rec.len);
		for (size_t i = 0; i < rec.len; i++)
			printf("%02x", buf[i]);
		printf("\"}\n");
	}
	if ((ret = repl_restore_finish(&r)) != 0) {
		fprintf(stderr, "restore_log: repl_restore_finish: %s\n", repl_strerror(ret));
		return 1;
	}
	return 0;
}
