/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * wal_map_test.c -- a -wal read through its mapping (sqlite/rv_wal_map.c),
 * as a commit reads its pages: bytes written with pwrite read back at
 * once, also after a write over them and after a truncation to 0; a
 * file that outgrows the first mapping is mapped again whole; a file
 * that does not exist does not open; a map not open maps nothing; a
 * closed map opens again.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rv_wal_map.h"

static int failures;

#define CHECK(cond) do { if (!(cond)) { failures++; \
	fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond); } } while (0)

#define MIB ((uint64_t)1 << 20)

static void
put(int fd, uint64_t off, int byte, size_t len)
{
	static uint8_t buf[65536];

	memset(buf, byte, len);
	CHECK(pwrite(fd, buf, len, (off_t)off) == (ssize_t)len);
}

/* len bytes at off of the mapping all equal byte */
static int
holds(const uint8_t *base, uint64_t off, int byte, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (base[off + i] != (uint8_t)byte)
			return 0;
	return 1;
}

int
main(void)
{
	const char *tmp = getenv("TMPDIR");
	struct rv_wal_map m;
	const uint8_t *base, *grown;
	char path[4096];
	int fd;

	snprintf(path, sizeof(path), "%s/wal_map_test.%d-wal", tmp ? tmp : "/tmp",
		(int)getpid());
	(void)unlink(path);

	errno = 0;
	CHECK(rv_wal_map_open(&m, path) == -1 && errno == ENOENT && m.fd == -1);
	CHECK(rv_wal_map_cover(&m, 4096) == NULL && errno == EBADF);

	if ((fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600)) < 0) {
		perror(path);
		return 99;
	}
	CHECK(rv_wal_map_open(&m, path) == 0);
	/* a header and a frame, as SQLite writes them */
	put(fd, 0, 0x11, 32);
	put(fd, 32, 0x22, 24);
	put(fd, 56, 0x33, 4096);
	base = rv_wal_map_cover(&m, 56 + 4096);
	CHECK(base != NULL);
	if (base == NULL)
		return 1;
	CHECK(holds(base, 0, 0x11, 32) && holds(base, 32, 0x22, 24) &&
		holds(base, 56, 0x33, 4096));

	/* a page written again in place: seen without mapping again */
	put(fd, 56, 0x44, 4096);
	CHECK(rv_wal_map_cover(&m, 56 + 4096) == base);
	CHECK(holds(base, 56, 0x44, 4096));

	/* past the first mapping: mapped again, the old bytes with it */
	put(fd, 40 * MIB, 0x55, 65536);
	grown = rv_wal_map_cover(&m, 40 * MIB + 65536);
	CHECK(grown != NULL && m.len >= 40 * MIB + 65536);
	if (grown == NULL)
		return 1;
	CHECK(holds(grown, 56, 0x44, 4096) && holds(grown, 40 * MIB, 0x55, 65536));
	CHECK(rv_wal_map_cover(&m, 4096) == grown);

	/* truncated to 0 and written again from the start (a WAL restart
	 * with journal_size_limit, or a TRUNCATE checkpoint) */
	CHECK(ftruncate(fd, 0) == 0);
	put(fd, 0, 0x66, 32);
	put(fd, 32, 0x77, 24);
	put(fd, 56, 0x88, 4096);
	CHECK(rv_wal_map_cover(&m, 56 + 4096) == grown);
	CHECK(holds(grown, 0, 0x66, 32) && holds(grown, 56, 0x88, 4096));

	/* closed, then opened again: it maps again */
	rv_wal_map_close(&m);
	CHECK(m.fd == -1 && m.base == NULL && m.len == 0);
	CHECK(rv_wal_map_open(&m, path) == 0);
	base = rv_wal_map_cover(&m, 56 + 4096);
	CHECK(base != NULL && holds(base, 56, 0x88, 4096));
	rv_wal_map_close(&m);

	close(fd);
	unlink(path);
	if (failures) {
		fprintf(stderr, "wal_map_test: %d failures\n", failures);
		return 1;
	}
	printf("wal_map_test: ok\n");
	return 0;
}
