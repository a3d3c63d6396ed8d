/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * wal_restore.c -- a log written offline from records (wal_restore.h), in
 * the format at the top of wal.c.
 *
 * The records go into the ring one after the other, as appends would put
 * them, but at the LSNs, epochs and client ids they carry; the chain of
 * CRCs starts at the first one (ck_crc 0).  When the ring has no room for
 * the next, the oldest are let go as a release would: the checkpoint
 * moves past them, so the log keeps the newest records that fit, and the
 * room a client's append leaves for epoch starts stays free, so that the
 * bootstrap that takes the log can write its epoch's first record.
 *
 * Bytes go through a window of the ring (the newest ones, of the tail's
 * lap) that is written with one pwrite when full, before a wrap and at the
 * end; letting a record go reads its header back, from the window or the
 * file.  Nothing is made durable before the end: then the ring, and only
 * after it the header, each with one fdatasync.  Until then the file's
 * header is all zero, so an interrupted restore leaves nothing any
 * program takes for a log.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/elog.h"
#include "crc32c.h"
#include "log/log_lock.h"
#include "log/wal_internal.h"
#include "log/wal_restore.h"

#define WINDOW (8u << 20)

struct wal_restore {
	char *path;
	int fd;			/* written through, and locked (log_lock.h) */
	uint64_t ring_size;
	uint8_t cluster_uuid[16];
	uint32_t node_id;
	bool started;		/* a record was added */
	struct log_pos head;	/* the oldest record kept */
	uint64_t head_epoch;	/* of record head.lsn - 1 (0: not known) */
	struct log_pos tail;	/* where the next record goes */
	uint64_t used;		/* ring bytes from head to tail */
	uint64_t last_epoch;
	int failed;		/* a write failed: the restore is over */
	char *win;		/* ring bytes [win_off, win_off + win_len) of */
	uint64_t win_off, win_len;	/* lap win_lap, not written yet */
	uint32_t win_lap;
};

static int
pwrite_all(int fd, const void *buf, size_t len, uint64_t off)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = pwrite(fd, (const char *)buf + done, len - done,
				(off_t)(off + done));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		done += (size_t)n;
	}
	return 0;
}

static int
io_failed(struct wal_restore *w, const char *what)
{
	REPL_LOG_ERROR("restore into %s: cannot %s: %s", w->path, what,
		strerror(errno ? errno : EIO));
	w->failed = REPL_E_IO;
	return REPL_E_IO;
}

static int
win_flush(struct wal_restore *w)
{
	if (w->win_len && pwrite_all(w->fd, w->win, w->win_len,
			RING_OFF + w->win_off))
		return io_failed(w, "write the ring");
	w->win_off += w->win_len;
	w->win_len = 0;
	return 0;
}

/* len bytes at ring offset off of the tail's lap, after those emitted before */
static int
emit(struct wal_restore *w, uint64_t off, const void *buf, size_t len)
{
	int ret;

	if (w->win_lap != w->tail.lap || off != w->win_off + w->win_len ||
	    len > WINDOW - w->win_len) {
		if ((ret = win_flush(w)))
			return ret;
		w->win_off = off;
		w->win_lap = w->tail.lap;
	}
	if (len > WINDOW) {
		if (pwrite_all(w->fd, buf, len, RING_OFF + off))
			return io_failed(w, "write the ring");
		w->win_off = off + len;
		return 0;
	}
	memcpy(w->win + w->win_len, buf, len);
	w->win_len += len;
	return 0;
}

/* the record header at p: from the window when it is there, else the file */
static int
hdr_at(struct wal_restore *w, const struct log_pos *p, struct rec_hdr *h)
{
	if (p->lap == w->win_lap && p->off >= w->win_off &&
	    p->off + REC_HDR <= w->win_off + w->win_len) {
		memcpy(h, w->win + (p->off - w->win_off), sizeof(*h));
	} else {
		ssize_t n;

		do
			n = pread(w->fd, h, sizeof(*h), (off_t)(RING_OFF + p->off));
		while (n < 0 && errno == EINTR);
		if (n != (ssize_t)sizeof(*h))
			return io_failed(w, "read a record back");
	}
	if (h->lsn != p->lsn || h->lap != p->lap) {
		REPL_LOG_ERROR("restore into %s: the record at ring offset %llu is "
			"not LSN %llu of lap %u (the file changed under the restore?)",
			w->path, (unsigned long long)p->off,
			(unsigned long long)p->lsn, p->lap);
		w->failed = REPL_E_IO;
		return REPL_E_IO;
	}
	return 0;
}

/* let the oldest record (or the WRAP at the head) go */
static int
let_go(struct wal_restore *w)
{
	struct log_pos before = w->head;
	struct rec_hdr h;
	int ret;

	if ((ret = hdr_at(w, &w->head, &h)))
		return ret;
	if (!(h.flags & FLAG_WRAP))
		w->head_epoch = h.epoch;
	wal_pos_next(w->ring_size, &w->head, h.len, (h.flags & FLAG_WRAP) != 0,
		h.crc);
	w->used -= wal_pos_distance(w->ring_size, &before, &w->head);
	return 0;
}

int
wal_restore_open(const char *path, uint64_t size, const uint8_t cluster_uuid[16],
		uint32_t node_id, struct wal_restore **wr)
{
	struct wal_restore *w;
	int ret;

	if (path == NULL || cluster_uuid == NULL || wr == NULL)
		return REPL_E_INVAL;
	if (size < RING_OFF + 4096 || size > (uint64_t)INT64_MAX) {
		REPL_LOG_ERROR("restore into %s: a log of %llu bytes cannot be (at "
			"least %u)", path, (unsigned long long)size, RING_OFF + 4096);
		return REPL_E_INVAL;
	}
	if ((w = calloc(1, sizeof(*w))) == NULL ||
	    (w->path = strdup(path)) == NULL ||
	    (w->win = malloc(WINDOW)) == NULL) {
		if (w)
			free(w->path);
		free(w);
		return REPL_E_NOMEM;
	}
	w->ring_size = (size - RING_OFF) & ~(uint64_t)7;
	memcpy(w->cluster_uuid, cluster_uuid, sizeof(w->cluster_uuid));
	w->node_id = node_id;
	/* never over a file: a log there may be the only copy of something */
	w->fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (w->fd < 0) {
		ret = errno == EEXIST ? REPL_E_INVAL : REPL_E_IO;
		REPL_LOG_ERROR("restore into %s: %s", path, errno == EEXIST ?
			"the file exists (a restore makes a new one)" : strerror(errno));
		goto err_free;
	}
	if ((ret = log_lock_fd(path, w->fd))) {
		REPL_LOG_ERROR("restore into %s: another process opened it", path);
		goto err_unlink;
	}
	/* the blocks up front: no room is found out before a byte is written */
	if ((ret = posix_fallocate(w->fd, 0, (off_t)size)) != 0 &&
	    (ret != EOPNOTSUPP && ret != EINVAL)) {
		REPL_LOG_ERROR("restore into %s: cannot allocate %llu bytes: %s", path,
			(unsigned long long)size, strerror(ret));
		ret = REPL_E_IO;
		goto err_unlink;
	}
	if (ret != 0 && ftruncate(w->fd, (off_t)size) != 0) {
		REPL_LOG_ERROR("restore into %s: cannot size it to %llu bytes: %s",
			path, (unsigned long long)size, strerror(errno));
		ret = REPL_E_IO;
		goto err_unlink;
	}
	*wr = w;
	return 0;

err_unlink:
	unlink(path);
	close(w->fd);
err_free:
	free(w->win);
	free(w->path);
	free(w);
	return ret;
}

int
wal_restore_add(struct wal_restore *w, const struct repl_log_record *rec)
{
	struct rec_hdr h;
	uint64_t need, waste, before;
	static const char pad[8];
	uint32_t crc;
	int ret;

	if (w == NULL || rec == NULL)
		return REPL_E_INVAL;
	if (w->failed)
		return w->failed;
	if (rec->lsn == 0 || (w->started && rec->lsn != w->tail.lsn) ||
	    rec->epoch > UINT32_MAX || (w->started && rec->epoch < w->last_epoch) ||
	    (rec->epoch_start && rec->len != 0) || (rec->len && rec->data == NULL)) {
		REPL_LOG_ERROR("restore into %s: record LSN %llu (epoch %llu, %zu bytes%s) "
			"refused: %s", w->path, (unsigned long long)rec->lsn,
			(unsigned long long)rec->epoch, rec->len,
			rec->epoch_start ? ", an epoch start" : "",
			rec->lsn == 0 ? "LSNs start at 1" :
			w->started && rec->lsn != w->tail.lsn ?
				"not the LSN after the last one added" :
			rec->epoch > UINT32_MAX ? "epochs are at most 2^32 - 1" :
			w->started && rec->epoch < w->last_epoch ?
				"its epoch is below the last record's" :
			rec->epoch_start ? "an epoch start holds no payload" :
				"no payload given");
		return REPL_E_INVAL;
	}
	need = REC_HDR + wal_align8(rec->len);
	/* as an append: room for a WRAP in front, and the epoch starts' */
	if (rec->len > UINT32_MAX ||
	    need > w->ring_size - REC_HDR - EPOCH_START_RESERVE) {
		REPL_LOG_ERROR("restore into %s: record LSN %llu of %zu bytes does not "
			"fit a ring of %llu bytes", w->path,
			(unsigned long long)rec->lsn, rec->len,
			(unsigned long long)w->ring_size);
		return REPL_E_TOO_BIG;
	}
	if (!w->started) {
		w->head = (struct log_pos){ .lsn = rec->lsn, .off = 0, .lap = 1 };
		w->tail = w->head;
		w->win_lap = 1;
		w->started = true;
	}
	for (;;) {
		waste = need > w->ring_size - w->tail.off ?
			w->ring_size - w->tail.off : 0;
		if (w->used + waste + need + EPOCH_START_RESERVE <= w->ring_size)
			break;
		if ((ret = let_go(w)))
			return ret;
	}
	if (waste) {
		/* does not fit before the end: a WRAP sends readers to 0 */
		memset(&h, 0, sizeof(h));
		h.lsn = w->tail.lsn;
		h.lap = w->tail.lap;
		h.epoch = (uint32_t)rec->epoch;
		h.flags = FLAG_WRAP;
		h.crc = rpma_crc32c(w->tail.crc, &h, sizeof(h));
		if ((ret = emit(w, w->tail.off, &h, sizeof(h))))
			return ret;
		wal_pos_next(w->ring_size, &w->tail, 0, true, h.crc);
		w->used += waste;
	}
	memset(&h, 0, sizeof(h));
	h.lsn = rec->lsn;
	h.len = (uint32_t)rec->len;
	h.lap = w->tail.lap;
	h.client_id = rec->client_id;
	h.epoch = (uint32_t)rec->epoch;
	h.flags = rec->epoch_start ? FLAG_EPOCH_START : 0;
	crc = wal_rec_crc_start(&h, w->tail.crc);
	h.crc = rec->len ? rpma_crc32c(crc, rec->data, rec->len) : crc;
	if ((ret = emit(w, w->tail.off, &h, sizeof(h))) ||
	    (rec->len && (ret = emit(w, w->tail.off + REC_HDR, rec->data, rec->len))) ||
	    (need - REC_HDR > rec->len && (ret = emit(w, w->tail.off + REC_HDR +
			rec->len, pad, need - REC_HDR - rec->len))))
		return ret;
	before = w->tail.off;
	wal_pos_next(w->ring_size, &w->tail, h.len, false, h.crc);
	/* the unused end before an implicit wrap counts as used */
	w->used += w->tail.off > before ? w->tail.off - before :
		w->ring_size - before;
	w->last_epoch = rec->epoch;
	return 0;
}

/* the directory entry made durable too: a new file is not, by its fdatasync */
static void
sync_dir(const char *path)
{
	char *copy = strdup(path);
	int fd;

	if (copy == NULL)
		return;
	fd = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		(void)fsync(fd);
		close(fd);
	}
	free(copy);
}

static void
restore_free(struct wal_restore *w)
{
	close(w->fd);
	free(w->win);
	free(w->path);
	free(w);
}

int
wal_restore_finish(struct wal_restore *w)
{
	struct wal_hdr hd;
	int ret;

	if (w == NULL)
		return REPL_E_INVAL;
	if ((ret = w->failed) || (ret = win_flush(w)))
		goto fail;
	if (!w->started)
		w->head = w->tail = (struct log_pos){ .lsn = 1, .off = 0, .lap = 1 };
	/* the ring first: a header is never durable before its records */
	if (fdatasync(w->fd) != 0) {
		ret = io_failed(w, "make the ring durable");
		goto fail;
	}
	memset(&hd, 0, sizeof(hd));
	memcpy(hd.magic, wal_magic, sizeof(hd.magic));
	hd.version = WAL_VERSION;
	hd.node_id = w->node_id;
	hd.seq = 1;
	memcpy(hd.cluster_uuid, w->cluster_uuid, sizeof(hd.cluster_uuid));
	hd.epoch = w->last_epoch;
	hd.ring_off = RING_OFF;
	hd.ring_size = w->ring_size;
	hd.ck_lsn = w->head.lsn;
	hd.ck_off = w->head.off;
	hd.ck_lap = w->head.lap;
	hd.ck_crc = w->head.crc;
	hd.ck_epoch = w->head_epoch;
	hd.state = 0;		/* closed clean */
	hd.incarnation = wal_new_incarnation();
	hd.epoch_inc = 0;	/* the node that chose the epoch: not known */
	hd.flags = WAL_F_RESTORED;
	hd.crc = wal_hdr_crc(&hd);
	/* copy A; copy B stays zero (invalid), the membership none */
	if (pwrite_all(w->fd, &hd, sizeof(hd), 0) != 0) {
		ret = io_failed(w, "write the header");
		goto fail;
	}
	if (fdatasync(w->fd) != 0) {
		ret = io_failed(w, "make the header durable");
		goto fail;
	}
	sync_dir(w->path);
	REPL_LOG_NOTICE("restored %s: LSNs %llu to %llu, epoch %llu", w->path,
		(unsigned long long)w->head.lsn, (unsigned long long)w->tail.lsn - 1,
		(unsigned long long)w->last_epoch);
	restore_free(w);
	return 0;
fail:
	unlink(w->path);
	restore_free(w);
	return ret;
}

void
wal_restore_abort(struct wal_restore *w)
{
	if (w == NULL)
		return;
	unlink(w->path);
	restore_free(w);
}
