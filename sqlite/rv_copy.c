/* SPDX-License-Identifier: BSD-3-Clause */
/* rv_copy.c -- a replica's copy of a replvfs database (rv_copy.h) */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "rv_apply.h"
#include "rv_base.h"
#include "rv_copy.h"
#include "rv_copy_internal.h"
#include "txn_record.h"

/*
 * SQLite's file locks (LOCK_*, rv_copy_internal.h) are taken here with fcntl directly, so that repld need not link
 * SQLite, as open file description locks (F_OFD_SETLK): those conflict
 * with SQLite's record locks of other processes and of this one alike,
 * where a record lock would not exclude the readers of an application
 * that keeps its own copy (replvfs's automatic failover, rv_ha.h).  They
 * belong to the copy's own descriptor, so no close of another descriptor
 * of the file drops them.
 */
#define BATCH_MAX	(8u << 20)	/* bytes of records applied per lock */
#define MARK_EVERY_MS	1000		/* a base marked (a sync) at least so often */
/*
 * Beside the file while a batch writes it: a batch cut short (its repld
 * killed) leaves it, and the next start keeps readers out until the copy
 * is a commit's database again.  Not synced: after a crash of the machine
 * no reader runs before the next start anyway.
 */
#define APPLYING_SUFFIX	"-repl-applying"

#ifdef RPMA_DEBUG_FAULT_INJECTION
enum { CRASH_NONE, CRASH_APPLY, CRASH_MARK };	/* RV_COPY_CRASH (below) */
#endif

const char *
rv_copy_state_name(enum rv_copy_state s)
{
	switch (s) {
	case RV_COPY_STARTING:
		return "starting";
	case RV_COPY_FOLLOWING:
		return "following";
	case RV_COPY_FAILED:
		return "failed";
	case RV_COPY_REMAKING:
		return "remaking";
	}
	return "?";
}

static int
set_lock(int fd, short type, off_t start, off_t len)
{
	struct flock fl = { .l_type = type, .l_whence = SEEK_SET, .l_start = start,
		.l_len = len };

	return fcntl(fd, F_OFD_SETLK, &fl);
}

void
rv_copy_sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

uint64_t
rv_copy_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/*
 * SQLite's EXCLUSIVE lock, the way a writer takes it: RESERVED, then
 * PENDING (no new reader), then every SHARED byte (no reader left).
 * false when stopped meanwhile.
 */
bool
rv_copy_lock(struct rv_copy *c)
{
	int fd = c->a.fd;

	while (set_lock(fd, F_WRLCK, LOCK_RESERVED, 1) != 0 ||
	       set_lock(fd, F_WRLCK, LOCK_PENDING, 1) != 0 ||
	       set_lock(fd, F_WRLCK, LOCK_SHARED, LOCK_SHARED_LEN) != 0) {
		if (atomic_load(&c->stop))
			return false;
		rv_copy_sleep_ms(1);
	}
	return true;
}

void
rv_copy_unlock(struct rv_copy *c)
{
	(void)set_lock(c->a.fd, F_UNLCK, LOCK_PENDING, 2 + LOCK_SHARED_LEN);
}

/* take a copy of a committed record into the batch; 1 once it is full */
static int
take(void *arg, uint64_t lsn, const void *data, size_t len)
{
	struct rv_copy *c = arg;

	if (c->n_recs > 0 && c->used + len > BATCH_MAX)
		return 1;
	if (c->used + len > c->cap) {
		size_t cap = c->cap ? c->cap : 1 << 16;
		uint8_t *b;

		while (cap < c->used + len)
			cap *= 2;
		if ((b = realloc(c->buf, cap)) == NULL)
			return -1;
		c->buf = b;
		c->cap = cap;
	}
	if (c->n_recs == c->cap_recs) {
		size_t cap = c->cap_recs ? 2 * c->cap_recs : 64;
		struct batch_rec *r = realloc(c->recs, cap * sizeof(*r));

		if (r == NULL)
			return -1;
		c->recs = r;
		c->cap_recs = cap;
	}
	memcpy(c->buf + c->used, data, len);
	c->recs[c->n_recs++] = (struct batch_rec){ lsn, c->used, len };
	c->used += len;
	return 0;
}

/*
 * A copy that failed applies nothing more until its repld restarts, so it
 * lets go of the records it held: kept, they would fill the log and stop
 * every COMMIT on the primary.  Its marker stays true (every write into
 * the file since the marker was a record after it), so the file remains a
 * base at that LSN for as long as the log holds what follows.
 */
static void
failed(struct rv_copy *c, const char *why)
{
	(void)repl_replica_unhold(c->node);
	pthread_mutex_lock(&c->lock);
	c->st.state = RV_COPY_FAILED;
	c->st.holding = false;
	snprintf(c->st.error, sizeof(c->st.error), "%s", why);
	pthread_mutex_unlock(&c->lock);
	fprintf(stderr, "replvfs copy: %s (its hold on the log ends: the primary "
		"releases past it)\n", why);
}

/* the change counter, moved: readers drop what they cached */
static int
bump(struct rv_copy *c)
{
	uint8_t v[4];

	if (c->a.page_size == 0)
		return 0;
	c->a.change_counter++;
	for (int i = 0; i < 4; i++)
		v[i] = (uint8_t)(c->a.change_counter >> (24 - 8 * i));
	return pwrite(c->a.fd, v, 4, 24) == 4 && pwrite(c->a.fd, v, 4, 92) == 4 ? 0 : -1;
}

/*
 * Copy the next records out of the log into the batch: 1 with some, 0
 * with none, -1 when it failed (why set).
 */
int
rv_copy_next_batch(struct rv_copy *c, uint64_t from)
{
	int ret;

	c->n_recs = c->used = 0;
	ret = repl_replica_iterate(c->node, from, take, c);
	if (ret < 0) {
		snprintf(c->why, sizeof(c->why), "%s: reading the log: %s", c->path,
			ret == -1 ? "out of memory" : repl_strerror(ret));
		return -1;
	}
	return c->n_recs > 0;
}

/*
 * The file synced and marked a base at what it applied; the replica then
 * holds only the records after the one before (so that the newest stays).
 * 0, or -1 with c->why.
 */
int
rv_copy_mark_base(struct rv_copy *c)
{
	uint64_t lsn = c->a.applied_lsn;

	if (lsn <= c->base_lsn)
		return 0;
#ifdef RPMA_DEBUG_FAULT_INJECTION
	rv_base_crash_before_rename = c->crash_at == CRASH_MARK;
#endif
	if (rv_base_write(c->path, c->a.fd, c->a.db_uuid, lsn, c->why,
			sizeof(c->why)) != 0)
		return -1;
	c->base_lsn = lsn;
	c->marked_ms = rv_copy_now_ms();
	c->unmarked_bytes = 0;
	(void)repl_replica_hold(c->node, lsn - 1);
	pthread_mutex_lock(&c->lock);
	c->st.base_lsn = lsn;
	c->st.hold_lsn = lsn - 1;
	pthread_mutex_unlock(&c->lock);
	return 0;
}

/*
 * At start: the log must hold every record after the file's base (all of
 * them without one); the file's page 1 says rollback journal, whatever
 * the base was (a primary's file says WAL).  0, -1 with c->why, or
 * REMAKE (c->why says why).
 */
static int
start_check(struct rv_copy *c)
{
	static const uint8_t rollback[2] = { 1, 1 };
	struct repl_replica_info info;
	struct stat st;

	if (repl_replica_info(c->node, &info) != 0) {
		snprintf(c->why, sizeof(c->why), "%s: the replica's state", c->path);
		return -1;
	}
	c->log_size = info.size_bytes;
	if (c->base_lsn != 0 && info.first_lsn > c->base_lsn + 1) {
		snprintf(c->why, sizeof(c->why), "%s: the log begins at LSN %llu, but "
			"the file holds only up to LSN %llu: the records between were "
			"released while nothing held them here", c->path,
			(unsigned long long)info.first_lsn,
			(unsigned long long)c->base_lsn);
		return REMAKE;
	}
	if (fstat(c->a.fd, &st) == 0 && st.st_size >= 100 &&
	    pwrite(c->a.fd, rollback, 2, 18) != 2) {
		snprintf(c->why, sizeof(c->why), "%s: %s", c->path, strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * The log no longer holds the records after the last one applied (its
 * checkpoint passed them while nothing here held them): the copy cannot
 * follow.  A batch that begins later is fine otherwise (the records the
 * engine keeps for itself are not shown).  0, or -1 with c->why.
 */
/* does the log, as its state says, hold every record the copy needs next? */
static bool
log_reaches(const struct rv_copy *c, const struct repl_replica_info *info)
{
	/*
	 * Without a base the copy needs every record from the log's first:
	 * only a log that begins at LSN 1 will do (one released before this
	 * replica joined, or was made anew, shows that only once it caught
	 * up, later than start_check looked).  With a base, a log that holds
	 * records begins at or before the next one; 0 says it holds none.
	 */
	if (c->a.applied_lsn == 0)
		return info->first_lsn == 1;
	return info->first_lsn != 0 && info->first_lsn <= c->a.applied_lsn + 1;
}

static int
gap_check(struct rv_copy *c)
{
	struct repl_replica_info info;

	if (c->recs[0].lsn == c->a.applied_lsn + 1)
		return 0;
	for (int look = 0; look < 2; look++) {
		if (repl_replica_info(c->node, &info) != 0) {
			snprintf(c->why, sizeof(c->why), "%s: the replica's state",
				c->path);
			return -1;
		}
		if (log_reaches(c, &info))
			return 0;
		/*
		 * The state is what the serving thread last published (each
		 * turn of its loop): a log that just caught up may still
		 * show as empty.  A gap is believed on a second look.
		 */
		if (look == 0)
			rv_copy_sleep_ms(WAIT_MS + 100);
	}
	if (c->a.applied_lsn == 0)
		snprintf(c->why, sizeof(c->why), "%s: the log begins at LSN %llu and "
			"this copy has no base: it cannot be made from the log alone",
			c->path, (unsigned long long)info.first_lsn);
	else
		snprintf(c->why, sizeof(c->why), "%s: the log now begins at LSN %llu, "
			"past LSN %llu, the next this copy needs: it was released while "
			"nothing held it here", c->path,
			(unsigned long long)info.first_lsn,
			(unsigned long long)c->a.applied_lsn + 1);
	return REMAKE;
}

#ifdef RPMA_DEBUG_FAULT_INJECTION
/*
 * Tests of a debug build: RV_COPY_CRASH=apply kills this process (SIGKILL)
 * halfway through the pages of its next batch, =mark in the middle of
 * writing its next base (the file synced, the new marker written, not yet
 * renamed over the old one).
 */
static int
crash_from_env(void)
{
	const char *v = getenv("RV_COPY_CRASH");

	if (v == NULL)
		return CRASH_NONE;
	return strcmp(v, "apply") == 0 ? CRASH_APPLY :
		strcmp(v, "mark") == 0 ? CRASH_MARK : CRASH_NONE;
}

static void
crash_in_batch(struct rv_copy *c)
{
	uint32_t pages = 0;

	if (c->crash_at != CRASH_APPLY)
		return;
	for (size_t i = 0; i < c->n_recs; i++) {
		struct txn_hdr h;
		char err[64];

		if (txn_record_parse(c->buf + c->recs[i].off, c->recs[i].len, &h, err,
				sizeof(err)))
			pages += h.n_frames;
	}
	c->a.crash_after_pages = pages / 2 + 1;
}
#else
static void
crash_in_batch(struct rv_copy *c)
{
	(void)c;
}
#endif

/*
 * Only this copy writes the file: a reader that wrote through a read-write
 * connection moved the file change counter (or left a -wal), and the file
 * is then no longer what the log says.  Its marker goes first (the base
 * is no longer true), then the copy fails.  Under the EXCLUSIVE lock.  0,
 * or -1 with c->why.
 */
static int
foreign_check(struct rv_copy *c)
{
	uint8_t v[4];
	uint32_t counter;
	char wal[4200], err[300];
	bool wal_there;

	wal_there = snprintf(wal, sizeof(wal), "%s-wal", c->path) < (int)sizeof(wal) &&
		access(wal, F_OK) == 0;
	if (!wal_there) {
		if (pread(c->a.fd, v, 4, 24) != 4)
			return 0;	/* no page 1 yet */
		counter = (uint32_t)v[0] << 24 | (uint32_t)v[1] << 16 |
			(uint32_t)v[2] << 8 | v[3];
		if (counter == c->a.change_counter)
			return 0;
	}
	if (rv_base_remove(c->path, err, sizeof(err)) != 0) {
		snprintf(c->why, sizeof(c->why), "%.100s: written by another process (%s); "
			"its marker could not be removed: %.120s", c->path, wal_there ?
			"a -wal beside it" : "its change counter moved", err);
		return -1;
	}
	snprintf(c->why, sizeof(c->why), "%s: written by another process (%s): it "
		"is no longer the log's database and no base; its marker was removed",
		c->path, wal_there ? "a -wal beside it" : "its change counter moved");
	c->base_lsn = 0;
	pthread_mutex_lock(&c->lock);
	c->st.base_lsn = 0;
	pthread_mutex_unlock(&c->lock);
	return REMAKE;
}

/* 0, -1 with c->why, or REMAKE (the copy cannot follow: c->why) */
static int
apply_batch(struct rv_copy *c)
{
	int ret;

	if ((ret = gap_check(c)) != 0 || (ret = foreign_check(c)) != 0)
		return ret;
	crash_in_batch(c);
	c->unmarked_bytes += c->used;
	for (size_t i = 0; i < c->n_recs; i++)
		if (rv_apply_record(&c->a, c->recs[i].lsn, 0, c->buf + c->recs[i].off,
				c->recs[i].len, c->why, sizeof(c->why)) != 0)
			return -1;
	return 0;
}

/* a batch begins: its sentinel first (APPLYING_SUFFIX); 0, or -1 with why */
int
rv_copy_applying_begin(struct rv_copy *c)
{
	int fd;

	atomic_store(&c->file_lsn, 0);
	if ((fd = open(c->applying, O_WRONLY | O_CREAT | O_CLOEXEC, 0644)) < 0) {
		snprintf(c->why, sizeof(c->why), "%s: %s", c->applying, strerror(errno));
		return -1;
	}
	close(fd);
	return 0;
}

/*
 * The start, before any record is read: under the EXCLUSIVE lock the file
 * becomes the copy's (its -wal and -shm removed: their frames are not the
 * log's; page 1 saying rollback journal) and the log must hold every
 * record after its base.  A file that came from a primary keeps the lock
 * until it has caught up with the commit point: past its base it may hold
 * part of a later transaction (a checkpoint cut short), and its -wal,
 * which readers saw until now, is gone.  1 with the lock kept, 0 with it
 * let go, -1 failed (c->why), -2 stopped meanwhile, REMAKE (the lock
 * kept for a file from a primary, else let go).
 */
static int
start(struct rv_copy *c)
{
	int ret;

	if (!rv_copy_lock(c))
		return -2;
	if (rv_drop_wal(c->path, c->why, sizeof(c->why)) != 0) {
		rv_copy_unlock(c);
		return -1;
	}
	if ((ret = start_check(c)) != 0) {
		if (ret != REMAKE || !c->from_primary)
			rv_copy_unlock(c);
		return ret;
	}
	if (c->from_primary)
		return 1;
	rv_copy_unlock(c);
	return 0;
}

/*
 * Caught up at start with nothing to apply: a primary's commit point is
 * known, this log holds everything up to it, and no transaction after the
 * base is committed (what is, past it, is the engine's own: a new
 * primary's first record).  The file is then
 * the database at its base.  A batch found meanwhile is left in c->buf for
 * the loop, which reads it again.
 */
static bool
whole_at_start(struct rv_copy *c)
{
	struct repl_replica_info info;

	/* caught up with the commit point: nothing committed is still on its way */
	if (repl_replica_info(c->node, &info) != 0 || info.commit_lsn == 0 ||
	    info.readable_lsn < info.commit_lsn)
		return false;
	return info.readable_lsn <= c->a.applied_lsn ||
		rv_copy_next_batch(c, c->a.applied_lsn + 1) == 0;
}

void
rv_copy_publish(struct rv_copy *c, uint64_t waited_ms)
{
	pthread_mutex_lock(&c->lock);
	c->st.state = RV_COPY_FOLLOWING;
	c->st.applied_lsn = c->a.applied_lsn;
	c->st.transactions = c->a.records;
	c->st.lock_wait_ms += waited_ms;
	c->st.page_size = c->a.page_size;
	c->st.pages = c->a.db_pages;
	pthread_mutex_unlock(&c->lock);
}

/*
 * Applies the records after the file's base (rv_base.h): from the first
 * after it, never one at or before it, so every write into the file is a
 * record after its marker and the marker stays true at every moment, also
 * when the copy fails or is killed in the middle of a batch.  The replica
 * holds those records from before it served a primary (rv_copy_start), so
 * the log still has them.
 */
static void *
follow(void *arg)
{
	struct rv_copy *c = arg;
	bool starting = true;
	uint64_t t = 0;
	int ret, locked;

	(void)pthread_setname_np(pthread_self(), "repld-sqlcopy");
	if ((locked = start(c)) == -2)
		return NULL;
	if (locked == REMAKE) {
		/* a file from a primary keeps its lock (start) */
		locked = c->from_primary;
		goto remake;
	}
	if (locked < 0)
		goto failed;
	while (!atomic_load(&c->stop)) {
		if (starting && locked && whole_at_start(c)) {
			atomic_store(&c->file_lsn, c->a.applied_lsn);
			rv_copy_unlock(c);
			locked = 0;
			starting = false;
			rv_copy_publish(c, 0);
			continue;
		}
		if (repl_replica_wait(c->node, c->a.applied_lsn + 1, WAIT_MS) != 0)
			continue;
		if ((ret = rv_copy_next_batch(c, c->a.applied_lsn + 1)) < 0)
			goto failed;
		if (ret == 0) {
			/* committed, not here yet (catching up), or released */
			rv_copy_sleep_ms(WAIT_MS);
			continue;
		}
		if (!locked) {
			t = rv_copy_now_ms();
			if (!rv_copy_lock(c))
				break;
			t = rv_copy_now_ms() - t;
			locked = 1;
		}
		/*
		 * A file that came from a primary, or a batch cut short, is
		 * no commit's database until it caught up: its first batches
		 * take every record committed under one hold of the lock.  A
		 * whole file is a commit's after each batch.
		 */
		ret = rv_copy_applying_begin(c);
		while (ret == 0 && (ret = apply_batch(c)) == 0 && starting &&
		       c->from_primary &&
		       (ret = rv_copy_next_batch(c, c->a.applied_lsn + 1)) > 0)
			;
		if (ret == 0 && bump(c) != 0) {
			snprintf(c->why, sizeof(c->why), "%s: %s", c->path, strerror(errno));
			ret = -1;
		}
		if (ret == REMAKE) {
			/*
			 * Nothing of this batch was written (its checks come
			 * first); a file not yet whole keeps readers out.
			 */
			if (!(starting && c->from_primary)) {
				(void)unlink(c->applying);
				rv_copy_unlock(c);
				locked = 0;
			}
			goto remake;
		}
		/* a batch that failed leaves it: the file is no commit's */
		if (ret == 0) {
			(void)unlink(c->applying);
			atomic_store(&c->file_lsn, c->a.applied_lsn);
		}
		rv_copy_unlock(c);
		locked = 0;
		if (ret < 0)
			goto failed;
		starting = false;
		pthread_mutex_lock(&c->lock);
		c->st.batches++;
		pthread_mutex_unlock(&c->lock);
		rv_copy_publish(c, t);
		t = 0;
		/*
		 * Outside the lock: readers go on while the file syncs.  Every
		 * second, or sooner when the log could fill before then.
		 */
		if ((rv_copy_now_ms() - c->marked_ms >= MARK_EVERY_MS ||
		     c->unmarked_bytes >= c->log_size / 8) && rv_copy_mark_base(c) != 0)
			goto failed;
		continue;
remake:
		ret = rv_copy_remake(c, locked);
		locked = 0;		/* the install let it go */
		if (ret == -2)
			return NULL;
		if (ret < 0)
			goto failed;
		starting = false;
	}
	if (locked)
		rv_copy_unlock(c);
	if (!starting && rv_copy_mark_base(c) != 0)
		goto failed;
	return NULL;
failed:
	if (locked)
		rv_copy_unlock(c);
	failed(c, c->why);
	return NULL;
}

int
rv_copy_start(struct repl_replica_node *node, const char *path,
		const uint8_t db_uuid[16], struct rv_copy **out, char *why,
		size_t whylen)
{
	struct rv_copy *c;
	uint8_t hdr[28];
	char wal[4200];

	if ((c = calloc(1, sizeof(*c))) == NULL || (c->path = strdup(path)) == NULL ||
	    (c->applying = malloc(strlen(path) + sizeof(APPLYING_SUFFIX))) == NULL) {
		if (c != NULL)
			free(c->path);
		free(c);
		snprintf(why, whylen, "out of memory");
		return -1;
	}
	strcpy(c->applying, path);
	strcat(c->applying, APPLYING_SUFFIX);
	c->node = node;
	atomic_init(&c->stop, 0);
	atomic_init(&c->file_lsn, 0);
	pthread_mutex_init(&c->lock, NULL);
	c->a.name = c->path;
	c->a.rollback_header = true;
	memcpy(c->a.db_uuid, db_uuid, sizeof(c->a.db_uuid));
	if ((c->a.fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644)) < 0) {
		snprintf(why, whylen, "%s: %s", path, strerror(errno));
		goto fail;
	}
	/*
	 * Its base, and the hold at it, before the replica serves a primary
	 * and before any record is read: the copy goes on from the record
	 * after the base, and the log keeps every record from the base on
	 * (the base's own record too, so that the log is never empty).
	 */
	switch (rv_base_read(path, db_uuid, &c->base_lsn, why, whylen)) {
	case 1:
		(void)repl_replica_hold(node, c->base_lsn - 1);
		c->a.applied_lsn = c->base_lsn;
		c->st.base_lsn = c->base_lsn;
		c->st.hold_lsn = c->base_lsn - 1;
		break;
	case 0:
		c->base_lsn = 0;
		(void)repl_replica_hold(node, 0);
		break;
	default:
		close(c->a.fd);
		goto fail;
	}
	c->st.holding = true;
	/* the counter goes on from the file's: readers' caches name it */
	if (pread(c->a.fd, hdr, sizeof(hdr), 0) == (ssize_t)sizeof(hdr)) {
		c->a.change_counter = (uint32_t)hdr[24] << 24 | (uint32_t)hdr[25] << 16 |
			(uint32_t)hdr[26] << 8 | hdr[27];
		c->from_primary = hdr[18] == 2;
	}
	if (snprintf(wal, sizeof(wal), "%s-wal", path) < (int)sizeof(wal) &&
	    access(wal, F_OK) == 0)
		c->from_primary = true;
	if (access(c->applying, F_OK) == 0)
		c->from_primary = true;		/* a batch cut short */
	/* a remake cut short leaves its file: nothing goes on from it */
	if (snprintf(wal, sizeof(wal), "%s%s", path, RV_REMAKE_SUFFIX) < (int)sizeof(wal))
		(void)unlink(wal);
#ifdef RPMA_DEBUG_FAULT_INJECTION
	c->crash_at = crash_from_env();
#endif
	if (pthread_create(&c->thread, NULL, follow, c) != 0) {
		snprintf(why, whylen, "cannot start its thread");
		close(c->a.fd);
		goto fail;
	}
	*out = c;
	return 0;
fail:
	pthread_mutex_destroy(&c->lock);
	free(c->applying);
	free(c->path);
	free(c);
	return -1;
}

void
rv_copy_stop(struct rv_copy **cp)
{
	struct rv_copy *c = *cp;

	if (c == NULL)
		return;
	atomic_store(&c->stop, 1);
	pthread_join(c->thread, NULL);
	close(c->a.fd);
	pthread_mutex_destroy(&c->lock);
	free(c->buf);
	free(c->recs);
	free(c->applying);
	free(c->path);
	free(c);
	*cp = NULL;
}

void
rv_copy_get(struct rv_copy *c, struct rv_copy_status *st)
{
	pthread_mutex_lock(&c->lock);
	*st = c->st;
	pthread_mutex_unlock(&c->lock);
}
