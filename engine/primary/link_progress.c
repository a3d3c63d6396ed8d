/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * link_progress.c -- how far a link's catch-up has come: the bytes the
 * replica lacked when it connected (from where it resumes to what this
 * primary had published then), the bytes of them it received, and the
 * time left at the recent rate.  A full resync of a full log is one batch
 * of the whole ring, so the link counts its writes as they complete
 * (link_io.c) rather than waiting for the batch's one flush.
 */
#include "config.h"

#include <stdint.h>

#include "primary/primary.h"

/* how often the link thread takes a rate sample */
#define PROGRESS_SAMPLE_MS 250

static uint64_t
done_bytes(const struct link *l)
{
	uint64_t d = atomic_load_explicit(&l->delivered, memory_order_relaxed);

	return d < l->catchup_total ? d : l->catchup_total;
}

void
link_progress_begin(struct link *l, const struct log_pos *start,
		const struct log_pos *target, uint64_t now)
{
	l->catchup_total = wal_pos_distance(l->c->ring_size, start, target);
	l->catchup_target = *target;
	l->catchup_began_ms = l->catchup_sample_ms = now;
	l->catchup_rate = l->catchup_sample_done = 0;
}

void
link_progress_end(struct link *l)
{
	l->catchup_total = 0;
	l->catchup_rate = 0;
	atomic_store_explicit(&l->count_writes, false, memory_order_relaxed);
}

/* has the replica flushed everything the catch-up was to send? */
static bool
reached(const struct link *l)
{
	return l->flushed_lsn >= l->catchup_target.lsn;
}

void
link_progress_sample(struct link *l, uint64_t now)
{
	uint64_t done, dt, rate;

	if (l->catchup_total == 0)
		return;
	if (reached(l)) {
		link_progress_end(l);
		return;
	}
	if (now < l->catchup_sample_ms + PROGRESS_SAMPLE_MS)
		return;
	done = done_bytes(l);
	dt = now - l->catchup_sample_ms;
	rate = (done - l->catchup_sample_done) * 1000 / dt;
	/* the recent rate: each sample weighs as much as all before it */
	l->catchup_rate = l->catchup_rate ? (l->catchup_rate + rate) / 2 : rate;
	l->catchup_sample_ms = now;
	l->catchup_sample_done = done;
}

bool
link_progress_get(const struct link *l, uint64_t now, uint64_t *total,
		uint64_t *done, uint64_t *eta_ms)
{
	uint64_t left, spent;

	*total = *done = *eta_ms = 0;
	if (l->catchup_total == 0 || reached(l) ||
	    (l->state != REPL_LINK_STREAMING && l->state != REPL_LINK_CATCHING_UP))
		return false;
	*total = l->catchup_total;
	*done = done_bytes(l);
	left = *total - *done;
	spent = now > l->catchup_began_ms ? now - l->catchup_began_ms : 0;
	if (left == 0)
		*eta_ms = 0;
	else if (l->catchup_rate > 0)
		*eta_ms = (uint64_t)((double)left * 1000 / (double)l->catchup_rate);
	else if (*done > 0 && spent > 0)	/* no sample yet: the rate so far */
		*eta_ms = (uint64_t)((double)left * (double)spent / (double)*done);
	else
		*eta_ms = UINT64_MAX;	/* nothing received yet: not known */
	return true;
}
