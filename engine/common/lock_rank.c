/* SPDX-License-Identifier: BSD-3-Clause */
/* lock_rank.c -- the per-thread record of held locks (lock_rank.h) */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include "common/lock_rank.h"

#ifndef NDEBUG
_Thread_local unsigned char lock_held[LOCK_RANKS];

static const char *const rank_names[LOCK_RANKS] = {
	[LOCK_RANK_WAL] = "wal->lock",
	[LOCK_RANK_WAL_HDR] = "wal->hdr_lock",
	[LOCK_RANK_FLOOR] = "c->floor_lock",
	[LOCK_RANK_CLUSTER] = "c->lock",
	[LOCK_RANK_IO] = "io_lock",
	[LOCK_RANK_RELEASE] = "c->release_lock",
	[LOCK_RANK_VERIFY] = "c->verify_lock",
};

/* r may be taken only while every lock held ranks above it */
void
lock_rank_check(enum lock_rank r)
{
	for (int i = 1; i <= (int)r; i++) {
		if (lock_held[i] == 0)
			continue;
		fprintf(stderr, "lock order: taking %s while holding %s (the order "
			"is verify > release > io > cluster > floor > wal header > wal)\n",
			rank_names[r], rank_names[i]);
		abort();
	}
}
#endif
