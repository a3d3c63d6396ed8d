/* SPDX-License-Identifier: BSD-3-Clause */
/* rv_image.c -- the primary's database file into its log (rv_image.h) */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3ext.h>
SQLITE_EXTENSION_INIT3

#include "image_record.h"
#include "rv_base.h"
#include "rv_db.h"
#include "rv_image.h"

#define CHUNK_MAX	(1u << 20)	/* bytes of pages in a record, at most */
#define STEP_BYTES	(4u << 20)	/* written per step, at most */
#define FILL_MAX	50		/* percent of the log: no page past it */
#define PIN_MAX_MS	30000		/* a replica that asked and never held */
#define EMPTY_PAGE_SIZE	4096		/* an empty file's image says some size */
#define MAX_REPLICAS	64

struct rv_image {
	char *path;
	uint8_t db_uuid[16];
	int db_fd;
	uint8_t *buf;			/* a record being made */
	size_t cap;

	pthread_mutex_t lock;		/* guards what follows (rv_image_get) */
	bool active;
	uint64_t base_lsn, first_lsn, pin_lsn, pin_since_ms;
	uint32_t page_size, db_pages, next_pgno;
	uint64_t txid;			/* the newest transaction id, carried */
	bool asked[MAX_REPLICAS];	/* the replicas that wanted this one */
	uint64_t images;
	/* read at every COMMIT (rv_db_checkpoint_due): no lock for it */
	atomic_bool waits_room;		/* its next record waits for releases */
	/* idle_base's look so far (the release thread's alone) */
	uint64_t idle_base, idle_scanned, idle_txn;
};

static uint64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

struct rv_image *
rv_image_new(const char *path, const uint8_t db_uuid[16], int db_fd)
{
	struct rv_image *im = calloc(1, sizeof(*im));

	if (im == NULL || (im->path = strdup(path)) == NULL) {
		free(im);
		return NULL;
	}
	memcpy(im->db_uuid, db_uuid, sizeof(im->db_uuid));
	im->db_fd = db_fd;
	pthread_mutex_init(&im->lock, NULL);
	return im;
}

/* does a replica ask for an image?  The ones that do, marked in asked */
static bool
anyone_asks(struct repl *repl, bool asked[MAX_REPLICAS])
{
	struct repl_replica_status st;
	bool any = false;

	for (int i = 0; i < MAX_REPLICAS && repl_replica_status(repl, i, &st) == 0; i++) {
		asked[i] = st.state == REPL_REPLICA_STREAMING && st.wants_base;
		any |= asked[i];
	}
	return any;
}

/* the file's page size from its header (an empty file: some size) */
static uint32_t
file_page_size(int fd)
{
	uint8_t b[2];
	uint32_t v;

	if (pread(fd, b, 2, 16) != 2)
		return EMPTY_PAGE_SIZE;
	v = (uint32_t)b[0] << 8 | b[1];
	if (v == 1)
		return 65536;
	return v >= 512 && v <= 32768 && (v & (v - 1)) == 0 ? v : 0;
}

/* an image begins at the database's base; false when it cannot */
static bool
begin(struct rv_image *im, struct repl *repl, const bool asked[MAX_REPLICAS])
{
	struct repl_status rs;
	struct stat st;
	uint64_t base, at;
	char why[300];

	if (rv_base_read(im->path, im->db_uuid, &base, why, sizeof(why)) != 1) {
		sqlite3_log(SQLITE_WARNING, "replvfs: %s: a replica asks for the "
			"database's image, and the file is no base (%s)", im->path,
			why[0] ? why : "no marker");
		return false;
	}
	if (fstat(im->db_fd, &st) != 0 || repl_status(repl, &rs) != 0)
		return false;
	pthread_mutex_lock(&im->lock);
	im->page_size = st.st_size < 100 ? EMPTY_PAGE_SIZE : file_page_size(im->db_fd);
	if (im->page_size == 0) {
		pthread_mutex_unlock(&im->lock);
		sqlite3_log(SQLITE_WARNING, "replvfs: %s: no image: the file's page "
			"size is not SQLite's", im->path);
		return false;
	}
	im->db_pages = st.st_size < 100 ? 0 : (uint32_t)(st.st_size / im->page_size);
	/*
	 * Each record carries the newest transaction id as its client id
	 * (rv_db_txid_after): a release past the last transaction, which an
	 * idle database's image needs (idle_base), keeps it.  One looked up
	 * now will do: a transaction that comes later stays in the log ahead
	 * of the records that follow it until a base passes it, and the
	 * larger id counts.
	 */
	im->txid = rv_db_txid_after(repl, &at) - 1;
	im->base_lsn = base;
	im->pin_lsn = base;
	im->pin_since_ms = now_ms();
	im->next_pgno = 1;
	im->first_lsn = 0;
	im->active = true;
	memcpy(im->asked, asked, sizeof(im->asked));
	pthread_mutex_unlock(&im->lock);
	sqlite3_log(SQLITE_NOTICE, "replvfs: %s: a replica's copy asks to be "
		"remade: writing the database's image into the log (base LSN %llu, "
		"%u pages of %u bytes)", im->path, (unsigned long long)base,
		im->db_pages, im->page_size);
	return true;
}

/* the next record of the image; 0, 1 the log has no room now, -1 failed */
static int
write_next(struct rv_image *im, struct repl *repl, size_t *bytes)
{
	struct repl_status rs;
	struct img_hdr h = { .version = IMG_VERSION, .page_size = im->page_size,
		.base_lsn = im->base_lsn, .first_pgno = im->next_pgno,
		.db_pages = im->db_pages };
	uint64_t chunk, lsn;
	struct iovec iov;
	size_t len;
	int ret;

	if (repl_status(repl, &rs) != 0 || rs.size_bytes == 0)
		return -1;
	if (rs.used_bytes * 100 / rs.size_bytes >= FILL_MAX)
		return 1;
	chunk = rs.size_bytes / 16 < CHUNK_MAX ? rs.size_bytes / 16 : CHUNK_MAX;
	h.n_pages = (uint32_t)(chunk / im->page_size);
	if (h.n_pages == 0)
		h.n_pages = 1;
	if (h.n_pages > im->db_pages - im->next_pgno + 1)
		h.n_pages = im->db_pages - im->next_pgno + 1;
	memcpy(h.db_uuid, im->db_uuid, sizeof(h.db_uuid));
	if (im->next_pgno == 1)
		h.flags |= IMG_F_FIRST;
	if (im->next_pgno + h.n_pages > im->db_pages)
		h.flags |= IMG_F_LAST;
	len = (size_t)image_record_len(h.n_pages, h.page_size);
	if (len > im->cap) {
		uint8_t *b = realloc(im->buf, len);

		if (b == NULL)
			return -1;
		im->buf = b;
		im->cap = len;
	}
	if (!image_hdr_encode(&h, im->buf))
		return -1;
	for (uint32_t i = 0; i < h.n_pages; i++) {
		uint8_t *page = im->buf + IMG_HDR_SIZE + (size_t)i * h.page_size;
		ssize_t n = pread(im->db_fd, page, h.page_size,
			(off_t)(h.first_pgno + i - 1) * h.page_size);

		/* past the end now (a checkpoint cut it): zeros; a later record says */
		if (n < (ssize_t)h.page_size)
			memset(page + (n > 0 ? n : 0), 0, h.page_size - (size_t)(n > 0 ? n : 0));
	}
	iov = (struct iovec){ im->buf, len };
	ret = repl_appendv(repl, &iov, 1, im->txid, &lsn);
	if (ret == REPL_E_FULL)
		return 1;
	if (ret != 0) {
		sqlite3_log(SQLITE_WARNING, "replvfs: %s: the image's record of page "
			"%u not appended: %s", im->path, h.first_pgno, repl_strerror(ret));
		return -1;
	}
	pthread_mutex_lock(&im->lock);
	if (h.flags & IMG_F_FIRST)
		im->first_lsn = lsn;
	im->next_pgno += h.n_pages;
	if (h.flags & IMG_F_LAST) {
		im->active = false;
		im->images++;
	}
	pthread_mutex_unlock(&im->lock);
	*bytes += len;
	if (h.flags & IMG_F_LAST)
		sqlite3_log(SQLITE_NOTICE, "replvfs: %s: the database's image is in "
			"the log, LSN %llu to %llu", im->path,
			(unsigned long long)im->first_lsn, (unsigned long long)lsn);
	return 0;
}

/*
 * The pin ends once every replica that asked holds records (the ones
 * after the base, as its copy took them at the first record) and no
 * longer asks, or is gone, or PIN_MAX_MS passed.
 */
static void
pin_look(struct rv_image *im, struct repl *repl)
{
	struct repl_replica_status st;
	bool needed = false;

	for (int i = 0; i < MAX_REPLICAS && repl_replica_status(repl, i, &st) == 0; i++)
		if (im->asked[i] && st.state == REPL_REPLICA_STREAMING &&
		    !(st.holds && !st.wants_base))
			needed = true;
	if (needed && now_ms() - im->pin_since_ms < PIN_MAX_MS)
		return;
	if (needed)
		sqlite3_log(SQLITE_WARNING, "replvfs: %s: a replica that asked for "
			"the image took no hold in %d s: the log is released past its "
			"base again", im->path, PIN_MAX_MS / 1000);
	pthread_mutex_lock(&im->lock);
	im->pin_lsn = 0;
	pthread_mutex_unlock(&im->lock);
}

/*
 * An image waits for room, and the log is released only behind a base:
 * with no transaction since the file's base (an idle database), the file
 * is a base at the log's last record too, and that is offered (the
 * release keeps that record, which carries the newest transaction id).
 * Without that, a database idle while its image is written would keep
 * the image's records for good, and a log too small to hold the whole
 * image would never finish it.  0: nothing to offer.  Each record after
 * the base is looked at once (the image waits in steps of IMAGE_MS).
 */
static uint64_t
idle_base(struct rv_image *im, struct repl *repl)
{
	struct repl_status rs;
	struct repl_record_info info;
	uint64_t base;
	char magic[4], why[300];
	size_t len;

	if (rv_base_read(im->path, im->db_uuid, &base, why, sizeof(why)) != 1 ||
	    repl_status(repl, &rs) != 0 || rs.last_lsn <= base || base + 1 < rs.first_lsn)
		return 0;
	if (base != im->idle_base) {
		im->idle_base = im->idle_scanned = base;
		im->idle_txn = 0;
	}
	if (im->idle_txn != 0)
		return 0;	/* a transaction after the base: not idle */
	for (uint64_t lsn = im->idle_scanned + 1; lsn <= rs.last_lsn; lsn++) {
		if (repl_record_info(repl, lsn, &info) != 0)
			return 0;	/* unknown: it may be a transaction */
		if (info.len >= 4 &&
		    (repl_read(repl, lsn, magic, sizeof(magic), &len) != 0 ||
		     memcmp(magic, IMG_MAGIC, 4) != 0)) {
			im->idle_txn = lsn;
			return 0;
		}
		im->idle_scanned = lsn;
	}
	return rs.last_lsn;
}

bool
rv_image_step(struct rv_image *im, struct repl *repl, uint64_t *offer)
{
	bool asked[MAX_REPLICAS] = { false };
	size_t bytes = 0;
	int ret = 0;

	*offer = 0;
	if (!im->active && im->pin_lsn == 0 &&
	    (!anyone_asks(repl, asked) || !begin(im, repl, asked)))
		return false;
	while (im->active && bytes < STEP_BYTES &&
	       (ret = write_next(im, repl, &bytes)) == 0)
		;
	if (ret < 0)
		rv_image_abandon(im);
	atomic_store_explicit(&im->waits_room, im->active && ret == 1,
		memory_order_relaxed);
	if (ret == 1)
		*offer = idle_base(im, repl);
	/* the commit point moves past what was written: copies read up to it */
	if (bytes > 0) {
		struct repl_status rs;

		if (repl_status(repl, &rs) == 0)
			(void)repl_wait_durable(repl, rs.last_lsn, 5000);
	}
	if (im->pin_lsn != 0)
		pin_look(im, repl);
	return im->active || im->pin_lsn != 0;
}

bool
rv_image_waits_room(struct rv_image *im)
{
	return atomic_load_explicit(&im->waits_room, memory_order_relaxed);
}

uint64_t
rv_image_pin(struct rv_image *im)
{
	uint64_t v;

	pthread_mutex_lock(&im->lock);
	v = im->pin_lsn;
	pthread_mutex_unlock(&im->lock);
	return v;
}

void
rv_image_abandon(struct rv_image *im)
{
	pthread_mutex_lock(&im->lock);
	im->active = false;
	im->pin_lsn = 0;
	pthread_mutex_unlock(&im->lock);
	atomic_store_explicit(&im->waits_room, false, memory_order_relaxed);
}

void
rv_image_get(struct rv_image *im, struct rv_image_status *st)
{
	pthread_mutex_lock(&im->lock);
	st->images = im->images;
	st->active = im->active;
	st->first_lsn = im->first_lsn;
	st->pin_lsn = im->pin_lsn;
	pthread_mutex_unlock(&im->lock);
}

void
rv_image_free(struct rv_image **imp)
{
	struct rv_image *im = *imp;

	if (im == NULL)
		return;
	pthread_mutex_destroy(&im->lock);
	free(im->buf);
	free(im->path);
	free(im);
	*imp = NULL;
}
