/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * archive_fill.c -- an archive of a given size for the restore benchmark:
 * records of SIZE bytes (half random, half zeros: data that zstd halves)
 * from LSN 1 on, an epoch start first, through the archive's own writer.
 *
 *   archive-fill ARCHIVE BYTES [SIZE [ZSTD_LEVEL]]   (SIZE default 4096)
 *
 * The archive gets a new cluster uuid.  Prints the records and bytes
 * written and the rate.  Exit 0, 1 (the archive failed, named), 2 (usage).
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "archive.h"

static double
now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int
main(int argc, char *argv[])
{
	struct archive_writer_cfg cfg = { .segment_bytes = 16u << 20 };
	struct archive_target *t = NULL;
	struct archive_writer *w = NULL;
	uint8_t uuid[16], *rec;
	char why[ARCHIVE_WHY_MAX];
	uint64_t bytes, size = 4096, n, lsn = 1, seed = 88172645463325252ull;
	double t0;

	if (argc < 3 || argc > 5 || (bytes = strtoull(argv[2], NULL, 0)) == 0 ||
	    (argc > 3 && (size = strtoull(argv[3], NULL, 0)) == 0) || size > (1u << 20)) {
		fprintf(stderr, "usage: archive-fill ARCHIVE BYTES [SIZE [ZSTD_LEVEL]]\n");
		return 2;
	}
	if (argc > 4)
		cfg.zstd_level = atoi(argv[4]);
	{
		FILE *u = fopen("/dev/urandom", "rb");

		if (u == NULL || fread(uuid, 1, 16, u) != 16) {
			fprintf(stderr, "archive-fill: /dev/urandom: cannot read\n");
			return 1;
		}
		fclose(u);
	}
	uuid[6] = (uint8_t)((uuid[6] & 0x0f) | 0x40);
	uuid[8] = (uint8_t)((uuid[8] & 0x3f) | 0x80);
	if ((rec = calloc(1, (size_t)size)) == NULL)
		return 1;
	if (archive_target_open(argv[1], uuid, &t, why, sizeof(why)) != 0 ||
	    archive_writer_open(t, &cfg, &w, why, sizeof(why)) != 0)
		goto fail;
	t0 = now_s();
	if (archive_writer_add(w, lsn++, 1, 0, (uint64_t)time(NULL) * 1000,
			ARCHIVE_REC_EPOCH_START, NULL, 0, why, sizeof(why)) != 0)
		goto fail;
	for (n = 0; n * size < bytes; n++) {
		for (uint64_t i = 0; i < size / 2; i += 8) {
			seed ^= seed << 13;
			seed ^= seed >> 7;
			seed ^= seed << 17;
			memcpy(rec + i, &seed, size / 2 - i < 8 ? size / 2 - i : 8);
		}
		if (archive_writer_add(w, lsn++, 1, n, (uint64_t)time(NULL) * 1000, 0,
				rec, (size_t)size, why, sizeof(why)) != 0)
			goto fail;
	}
	if (archive_writer_flush(w, why, sizeof(why)) != 0)
		goto fail;
	printf("archive-fill: %" PRIu64 " records, %" PRIu64 " bytes in %.2f s "
		"(%.0f MB/s)\n", n, n * size, now_s() - t0,
		(double)(n * size) / 1e6 / (now_s() - t0));
	archive_writer_close(&w);
	archive_target_close(&t);
	free(rec);
	return 0;
fail:
	fprintf(stderr, "archive-fill: %s\n", why);
	archive_writer_close(&w);
	archive_target_close(&t);
	free(rec);
	return 1;
}
