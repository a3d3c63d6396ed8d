/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lock_rank.h -- the engine's lock order, checked in debug builds.
 *
 * Every lock has a rank; a thread takes a lock only while each lock it
 * holds ranks above it, so no two threads can wait for each other.  From
 * the outermost in:
 *
 *   c->verify_lock > c->release_lock > l->io_lock > c->lock
 *     > c->floor_lock > wal->hdr_lock > wal->lock
 *
 * (primary.h says what each guards).  With assertions on (no NDEBUG) each
 * thread keeps what it holds and a lock taken out of order aborts with a
 * message naming both; otherwise these are the bare pthread calls.  A
 * trylock cannot deadlock: it is recorded, never checked.
 */
#ifndef REPL_LOCK_RANK_H
#define REPL_LOCK_RANK_H

#include <pthread.h>

enum lock_rank {
	LOCK_RANK_WAL = 1,	/* wal->lock: the innermost */
	LOCK_RANK_WAL_HDR,	/* wal->hdr_lock */
	LOCK_RANK_FLOOR,	/* c->floor_lock */
	LOCK_RANK_CLUSTER,	/* c->lock */
	LOCK_RANK_IO,		/* a link's io_lock */
	LOCK_RANK_RELEASE,	/* c->release_lock */
	LOCK_RANK_VERIFY,	/* c->verify_lock: the outermost */
	LOCK_RANKS
};

#ifndef NDEBUG
/* how many locks of each rank this thread holds */
extern _Thread_local unsigned char lock_held[LOCK_RANKS];

void lock_rank_check(enum lock_rank r);

static inline void
rank_lock(pthread_mutex_t *m, enum lock_rank r)
{
	lock_rank_check(r);
	pthread_mutex_lock(m);
	lock_held[r]++;
}

static inline int
rank_trylock(pthread_mutex_t *m, enum lock_rank r)
{
	int ret = pthread_mutex_trylock(m);

	if (ret == 0)
		lock_held[r]++;
	return ret;
}

static inline void
rank_unlock(pthread_mutex_t *m, enum lock_rank r)
{
	lock_held[r]--;
	pthread_mutex_unlock(m);
}
#else
static inline void
rank_lock(pthread_mutex_t *m, enum lock_rank r)
{
	(void)r;
	pthread_mutex_lock(m);
}

static inline int
rank_trylock(pthread_mutex_t *m, enum lock_rank r)
{
	(void)r;
	return pthread_mutex_trylock(m);
}

static inline void
rank_unlock(pthread_mutex_t *m, enum lock_rank r)
{
	(void)r;
	pthread_mutex_unlock(m);
}
#endif

#endif
