/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * promote_hello.h -- what promote.c and promote_hello.c share: a peer as a
 * promotion's round left it, and the HELLOs that fence it.
 */
#ifndef REPL_PROMOTE_HELLO_H
#define REPL_PROMOTE_HELLO_H

#include <stdbool.h>
#include <stdint.h>

#include "ctl/ctl_msg.h"

struct cluster;
struct ctl_chan;

struct fenced {
	struct ctl_chan *ch;	/* NULL: not fenced */
	struct ctl_hello_reply hr;
	bool ok;		/* fenced in the last round: hr is its answer */
	bool older;		/* hr comes from an older copy of its log (why) */
	bool probed;		/* a restart's probe reached it this round */
	bool ask;		/* asking_start(): ask it in this round */
	uint32_t seq;
	char why[256];		/* why not */
};

#define HELLO_GATE 2		/* asking_next: the caller's gate closed */
#define HELLO_NONE 3		/* asking_next: nothing (more) to take */

/* the caller's gate closed before `before`: logged, true */
bool promote_gate_closed(const struct cluster *c, const char *before);
void fenced_close_all(struct fenced *f, int n);
/*
 * HELLO with flags to replica i: 0 answered (f->ch stays open, f->hr its
 * answer), 1 it follows a higher epoch (f->hr.epoch), -1 unreachable or
 * refused (f->why).
 */
int promote_hello_one(struct cluster *c, int i, uint64_t epoch, uint32_t flags,
		struct fenced *f);

/* a round's HELLOs, all at once (promote_hello.c says how) */
struct asking;
/* ask the replicas f[i].ask says; gated: behind the caller's gate; NULL: no memory */
struct asking *asking_start(struct cluster *c, struct fenced *f, int n,
		uint64_t epoch, uint32_t flags, bool gated);
/*
 * The next ask that ended, waiting for one at most wait_ms (< 0: until one
 * ends; 0: not at all): its replica in *i; as promote_hello_one, or
 * HELLO_GATE, or HELLO_NONE (none ended in that time, or none is left)
 */
int asking_next(struct asking *a, struct cluster *c, struct fenced *f,
		uint64_t epoch, uint32_t flags, int wait_ms, int *i);
/* the round is over: the asks still running are left to end by themselves */
void asking_end(struct asking **ap);

#endif
