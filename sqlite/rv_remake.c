/* SPDX-License-Identifier: BSD-3-Clause */
/* rv_remake.c -- a replica's copy made anew from an image (rv_remake.h) */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "image_record.h"
#include "rv_remake.h"
#include "txn_record.h"

#define DB_HDR_WRITE_VERSION	18	/* 1, 1: rollback journal; 2, 2: WAL */
#define DB_HDR_CHANGE_COUNTER	24
#define DB_HDR_VALID_FOR	92

static void
put_be32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (24 - 8 * i));
}

static bool
is_written(const struct rv_remake *m, uint32_t pgno)
{
	size_t i = (pgno - 1) / 8;

	return i < m->written_cap && (m->written[i] >> ((pgno - 1) % 8) & 1);
}

static int
set_written(struct rv_remake *m, uint32_t pgno)
{
	size_t i = (pgno - 1) / 8;

	if (i >= m->written_cap) {
		size_t cap = m->written_cap ? m->written_cap : 4096;
		uint8_t *w;

		while (cap <= i)
			cap *= 2;
		if ((w = realloc(m->written, cap)) == NULL)
			return -1;
		memset(w + m->written_cap, 0, cap - m->written_cap);
		m->written = w;
		m->written_cap = cap;
	}
	m->written[i] |= (uint8_t)(1u << ((pgno - 1) % 8));
	return 0;
}

int
rv_remake_begin(struct rv_remake *m, const char *path, const uint8_t db_uuid[16],
		uint64_t first_lsn, uint64_t base_lsn, uint32_t image_pages,
		char *why, size_t whylen)
{
	rv_remake_end(m);
	if ((m->tmp_path = malloc(strlen(path) + sizeof(RV_REMAKE_SUFFIX))) == NULL) {
		snprintf(why, whylen, "out of memory");
		return -1;
	}
	strcpy(m->tmp_path, path);
	strcat(m->tmp_path, RV_REMAKE_SUFFIX);
	m->a.fd = open(m->tmp_path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (m->a.fd < 0) {
		snprintf(why, whylen, "%s: %s", m->tmp_path, strerror(errno));
		free(m->tmp_path);
		m->tmp_path = NULL;
		return -1;
	}
	m->a.name = m->tmp_path;
	memcpy(m->a.db_uuid, db_uuid, sizeof(m->a.db_uuid));
	m->a.rollback_header = true;
	m->a.applied_lsn = base_lsn;
	m->base_lsn = base_lsn;
	m->first_lsn = first_lsn;
	m->next_pgno = 1;
	m->image_pages = image_pages;
	m->min_db_pages = UINT32_MAX;
	return 0;
}

/* a transaction: applied, and its pages (and those it cut) are not the image's */
static int
transaction(struct rv_remake *m, uint64_t lsn, const void *data, size_t len,
		char *why, size_t whylen)
{
	struct txn_hdr h;
	char err[256];

	if (!txn_record_parse(data, len, &h, err, sizeof(err))) {
		snprintf(why, whylen, "%s: the record at LSN %llu: %s", m->tmp_path,
			(unsigned long long)lsn, err);
		return -1;
	}
	for (uint32_t i = 0; i < h.n_frames; i++) {
		uint32_t pgno;
		const uint8_t *page;

		txn_frame(data, &h, i, &pgno, &page);
		if (set_written(m, pgno) != 0) {
			snprintf(why, whylen, "out of memory");
			return -1;
		}
	}
	if (rv_apply_record(&m->a, lsn, 0, data, len, why, whylen) != 0)
		return -1;
	if (h.db_size < m->min_db_pages)
		m->min_db_pages = h.db_size;
	return 0;
}

/* pages of the image, where no transaction applied so far wrote or cut */
static int
image_pages(struct rv_remake *m, uint64_t lsn, const void *data,
		const struct img_hdr *h, char *why, size_t whylen)
{
	for (uint32_t i = 0; i < h->n_pages; i++) {
		uint32_t pgno = h->first_pgno + i;
		uint8_t first[65536];
		const uint8_t *page = image_page(data, h, i);

		if (is_written(m, pgno) || pgno > m->min_db_pages)
			continue;
		if (pgno == 1) {
			/* readers of the copy are in rollback-journal mode */
			memcpy(first, page, h->page_size);
			first[DB_HDR_WRITE_VERSION] = 1;
			first[DB_HDR_WRITE_VERSION + 1] = 1;
			page = first;
		}
		if (rv_write_all(m->a.fd, page, h->page_size,
				(off_t)(pgno - 1) * h->page_size) != 0) {
			snprintf(why, whylen, "%s: page %u of the image record at LSN "
				"%llu: %s", m->tmp_path, pgno, (unsigned long long)lsn,
				strerror(errno));
			return -1;
		}
	}
	m->image_bytes += (uint64_t)h->n_pages * h->page_size;
	m->next_pgno = h->first_pgno + h->n_pages;
	m->a.applied_lsn = lsn;
	if (h->flags & IMG_F_LAST)
		m->complete = true;
	return 0;
}

int
rv_remake_record(struct rv_remake *m, uint64_t lsn, const void *data,
		size_t len, char *why, size_t whylen)
{
	struct img_hdr h;
	char err[256];

	if (!image_record_is(data, len))
		return transaction(m, lsn, data, len, why, whylen);
	if (!image_record_parse(data, len, &h, err, sizeof(err))) {
		snprintf(why, whylen, "%s: the record at LSN %llu: %s", m->tmp_path,
			(unsigned long long)lsn, err);
		return -1;
	}
	/* an older image's, or this one's after it ended: nothing to do */
	if (lsn < m->first_lsn || (m->complete && !(h.flags & IMG_F_FIRST))) {
		m->a.applied_lsn = lsn;
		return 0;
	}
	if (lsn > m->first_lsn && (h.flags & IMG_F_FIRST))
		return 1;
	if (memcmp(h.db_uuid, m->a.db_uuid, sizeof(h.db_uuid)) != 0 ||
	    h.base_lsn != m->base_lsn || h.first_pgno != m->next_pgno ||
	    h.db_pages != m->image_pages ||
	    (m->a.page_size != 0 && h.page_size != m->a.page_size)) {
		snprintf(why, whylen, "%s: the image record at LSN %llu does not "
			"continue the image begun at LSN %llu (its page %u, base LSN "
			"%llu)", m->tmp_path, (unsigned long long)lsn,
			(unsigned long long)m->first_lsn, h.first_pgno,
			(unsigned long long)h.base_lsn);
		return -1;
	}
	m->a.page_size = h.page_size;
	return image_pages(m, lsn, data, &h, why, whylen);
}

int
rv_remake_install(struct rv_remake *m, int fd, uint32_t *counter, char *why,
		size_t whylen)
{
	uint32_t pages = m->min_db_pages != UINT32_MAX ? m->a.db_pages : m->image_pages;
	uint32_t ps = m->a.page_size;
	uint8_t *page;

	if (ps == 0) {
		/* an image of an empty file, and no transaction since */
		if (ftruncate(fd, 0) != 0 || fdatasync(fd) != 0) {
			snprintf(why, whylen, "%s: %s", m->tmp_path, strerror(errno));
			return -1;
		}
		return 0;
	}
	if ((page = malloc(ps)) == NULL) {
		snprintf(why, whylen, "out of memory");
		return -1;
	}
	for (uint32_t p = 1; p <= pages; p++) {
		ssize_t n = pread(m->a.fd, page, ps, (off_t)(p - 1) * ps);

		if (n < 0) {
			snprintf(why, whylen, "%s: %s", m->tmp_path, strerror(errno));
			free(page);
			return -1;
		}
		if (n < (ssize_t)ps)	/* a page no one wrote: zeros, as SQLite's */
			memset(page + n, 0, ps - (size_t)n);
		if (p == 1) {
			/* readers drop what they cached of the file before */
			(*counter)++;
			put_be32(page + DB_HDR_CHANGE_COUNTER, *counter);
			put_be32(page + DB_HDR_VALID_FOR, *counter);
		}
		if (rv_write_all(fd, page, ps, (off_t)(p - 1) * ps) != 0) {
			snprintf(why, whylen, "writing the remade copy's page %u: %s", p,
				strerror(errno));
			free(page);
			return -1;
		}
	}
	free(page);
	if (ftruncate(fd, (off_t)pages * ps) != 0 || fdatasync(fd) != 0) {
		snprintf(why, whylen, "the remade copy: %s", strerror(errno));
		return -1;
	}
	return 0;
}

void
rv_remake_end(struct rv_remake *m)
{
	if (m->tmp_path != NULL) {
		close(m->a.fd);
		(void)unlink(m->tmp_path);
		free(m->tmp_path);
	}
	free(m->written);
	memset(m, 0, sizeof(*m));
	m->a.fd = -1;
}
