/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * archiver_base.h -- bases of a replvfs database in the archive: on a node
 * with sqlite_copy and an archive group (repld.conf(5)), the archiver also
 * publishes a consistent copy of the copy's database file, a base at the
 * LSN of the last transaction it holds, at most every archive.base_every_ms
 * (replctl restore --database starts from the newest at or before its
 * point).
 *
 * A base is taken under the copy's SHARED lock (rv_copy_snapshot) into
 * SQLITE_COPY-repl-archive-base, and published once the archive holds the
 * records up to its LSN, so that it never stands past the archive's end.
 * One per repld: the node gives it its copy, the archiver's round calls
 * it, status and metrics read it.
 */
#ifndef REPLD_ARCHIVER_BASE_H
#define REPLD_ARCHIVER_BASE_H

#include <stdint.h>

#include "archive.h"
#include "repld_conf.h"
#include "rv_copy.h"

#define ARCHIVER_BASE_SUFFIX "-repl-archive-base"

struct archiver_base_info {
	uint64_t last_base_lsn;		/* the last base published (0: none
					   since the start) */
	uint64_t last_base_ms;		/* wall clock when it was (0: none) */
	uint64_t bases;			/* published since the start */
	char last_error[256];		/* the last failure to take or publish
					   one ("" none) */
};

/* the node's copy while it has one (NULL: none; waits for a round using it) */
void archiver_base_set_copy(struct rv_copy *copy, const struct repld_conf *conf);
/*
 * From the archiver's round, with its open target and the newest LSN it
 * published: a base that is due is taken, one taken is published once
 * archived reaches it.  Failures are logged and retried at the next due
 * time.
 */
void archiver_base_round(struct archive_target *t, uint64_t archived);
void archiver_base_get(struct archiver_base_info *out);

#endif
