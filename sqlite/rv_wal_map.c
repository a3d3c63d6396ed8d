/* SPDX-License-Identifier: BSD-3-Clause */
/* rv_wal_map.c -- a -wal read through a shared mapping (rv_wal_map.h) */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "rv_wal_map.h"

/*
 * The first mapping: a -wal of 4 KiB pages holds about 4 MiB when SQLite
 * checkpoints at 1000 frames, so most connections never map again.
 */
#define MAP_MIN ((size_t)8 << 20)

void
rv_wal_map_init(struct rv_wal_map *m)
{
	m->fd = -1;
	m->base = NULL;
	m->len = 0;
}

int
rv_wal_map_open(struct rv_wal_map *m, const char *path)
{
	rv_wal_map_init(m);
	return (m->fd = open(path, O_RDONLY | O_CLOEXEC)) < 0 ? -1 : 0;
}

const uint8_t *
rv_wal_map_cover(struct rv_wal_map *m, uint64_t end)
{
	size_t len = MAP_MIN;
	void *p;

	if (end <= m->len)
		return m->base;
	if (m->fd < 0) {
		errno = EBADF;
		return NULL;
	}
	while (len < end) {
		if (len > SIZE_MAX / 2) {
			errno = EFBIG;
			return NULL;
		}
		len *= 2;
	}
	/* a mapping may reach past the file's end: only reads there fault */
	p = mmap(NULL, len, PROT_READ, MAP_SHARED, m->fd, 0);
	if (p == MAP_FAILED)
		return NULL;
	if (m->base != NULL)
		(void)munmap((void *)m->base, m->len);
	m->base = p;
	m->len = len;
	return m->base;
}

void
rv_wal_map_close(struct rv_wal_map *m)
{
	if (m->base != NULL)
		(void)munmap((void *)m->base, m->len);
	if (m->fd >= 0)
		(void)close(m->fd);
	rv_wal_map_init(m);
}
