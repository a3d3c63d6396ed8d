/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * wal.h -- the local write-ahead log: a ring of self-validating records in
 * the memory of a persistence backend (rpma_ext_mem).  The on-media format
 * is specified at the top of wal.c.
 */
#ifndef REPL_WAL_H
#define REPL_WAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "rpma.h"

#include "common/pos.h"
#include "repl.h"

struct wal;

/* the ring starts here in the region; a replica's ring is at the same place */
#define WAL_RING_OFF 8192

/*
 * The header's flags.  PROMISE_PENDING: the log was made anew (a replica's
 * reinit) and has not taken its promise floor yet, so it must serve no
 * primary: it promised nothing, not even what its previous log promised
 * (docs/replication.md, "Identity and bootstrap").  Set at format, cleared
 * by wal_take_floor.
 */
#define WAL_F_PROMISE_PENDING	(1u << 0)
/*
 * RESTORED: the log was written offline from an archive's records
 * (wal_restore.h) and no cluster took it yet: a bootstrap may take it as
 * its new cluster's first log although it holds records.  Set by the
 * restore, cleared once a bootstrap stored its membership.
 */
#define WAL_F_RESTORED		(1u << 1)
#define WAL_F_KNOWN		(WAL_F_PROMISE_PENDING | WAL_F_RESTORED)

struct wal_identity {
	uint8_t cluster_uuid[16];
	uint32_t node_id;
	uint64_t epoch;
	/*
	 * The log's incarnation: random at format (wal_format draws one when
	 * this is 0), so a log recreated on a replaced disk is told apart
	 * from the one it replaces.
	 */
	uint64_t incarnation;
	uint64_t epoch_inc;	/* the incarnation of the log that chose epoch */
	uint32_t flags;		/* WAL_F_*: wal_format writes them */
	unsigned health;	/* REPL_HEALTH_* */
};

/* format mem as an empty log (overwrites it); unknown flags: REPL_E_INVAL */
int wal_format(struct rpma_ext_mem *mem, const struct wal_identity *id);

/*
 * What a medium holds, before wal_open: a log (VALID); nothing, every
 * header byte zero (BLANK: a new file or device); a log whose header
 * copies both fail their checks (DAMAGED); or something else (FOREIGN: a
 * mistyped path?).  Only a BLANK medium is formatted without being told.
 */
enum wal_probe {
	WAL_PROBE_VALID,
	WAL_PROBE_BLANK,
	WAL_PROBE_DAMAGED,
	WAL_PROBE_FOREIGN,
};
enum wal_probe wal_probe(struct rpma_ext_mem *mem);

/*
 * The cluster id of a formatted log, read without writing anything (a
 * wal_open() marks the log open): 0, or REPL_E_CORRUPT (no valid header)
 */
int wal_cluster_of(struct rpma_ext_mem *mem, uint8_t uuid[16]);

/*
 * Open a formatted log: pick the valid header copy, then scan records from
 * the checkpoint to the first one whose CRC, LSN or lap does not match.
 * Nothing past that point is ever returned.
 */
int wal_open(struct rpma_ext_mem *mem, struct wal **wal_ptr);
void wal_close(struct wal **wal_ptr);

/*
 * Append one record (thread-safe): copies it into the ring and returns its
 * LSN; it is durable only after wal_sync() covered it.  Blocks up to
 * timeout_ms while the ring is full, then REPL_E_FULL.
 */
int wal_append(struct wal *wal, const struct iovec *iov, int iovcnt,
		uint64_t client_id, int timeout_ms, uint64_t *lsn);

/*
 * Append an epoch-start record (no payload, client id 0, the header's
 * epoch): a new primary's first record (docs/replication.md, the commit
 * rule).  wal_iterate does not pass it to its callback.
 */
int wal_append_epoch_start(struct wal *wal, int timeout_ms, uint64_t *lsn);

/*
 * Make every record up to lsn durable.  Appends that arrive while a persist
 * is in progress share the next one (group commit).
 */
int wal_sync(struct wal *wal, uint64_t lsn);

/* the record with this LSN, if it is still in the ring and valid */
int wal_read(struct wal *wal, uint64_t lsn, void *buf, size_t buf_size,
		size_t *len);

/*
 * Call cb for each record from lsn from on, in order, under the log's lock
 * (cb must not call into the log); stops at cb's first non-zero result,
 * which it returns.
 */
/* record lsn's client id, epoch (the low 32 bits it keeps) and length */
int wal_record_info(struct wal *wal, uint64_t lsn, uint64_t *client_id,
		uint64_t *epoch, size_t *len);

/* is record lsn an epoch-start record (wal_append_epoch_start)? */
bool wal_is_epoch_start(struct wal *wal, uint64_t lsn);

typedef int wal_iterate_fn(void *arg, uint64_t lsn, const void *data,
		size_t len);
int wal_iterate(struct wal *wal, uint64_t from, wal_iterate_fn *cb, void *arg);
/*
 * The same for every record up to lsn to, epoch starts included, with
 * what each says of itself (an archiver's view: the LSNs have no holes)
 */
int wal_iterate_records(struct wal *wal, uint64_t from, uint64_t to,
		repl_record_fn *cb, void *arg);

/* records up to lsn are no longer needed: their space may be reused */
int wal_release(struct wal *wal, uint64_t lsn);

/* what the medium's checks said when the log was opened (wal_status.health) */

struct wal_status {
	uint64_t first_lsn;	/* oldest record kept (0: none) */
	uint64_t last_lsn;	/* newest appended (0: none) */
	uint64_t durable_lsn;	/* newest made durable */
	uint64_t used;		/* bytes of the ring in use */
	uint64_t size;		/* bytes of the ring */
	uint64_t epoch;
	unsigned health;	/* REPL_HEALTH_* */
	bool full;		/* the last append found no room, none made since */
	uint64_t full_refusals;	/* appends refused for room (REPL_E_FULL) */
};

void wal_status(struct wal *wal, struct wal_status *st);

/* --- replication ------------------------------------------------------ */

/* the checkpoint, the end of what is published, the end of what is durable */
void wal_positions(struct wal *wal, struct log_pos *head, struct log_pos *pub,
		struct log_pos *durable);

/* ring bytes from position from to position to (to not before from) */
uint64_t wal_pos_distance(uint64_t ring_size, const struct log_pos *from,
		const struct log_pos *to);

/* the position after record lsn (lsn = first - 1 gives the checkpoint) */
int wal_pos_after(struct wal *wal, uint64_t lsn, struct log_pos *after);

/*
 * The newest LSN whose release would leave at least keep bytes of records
 * after it (head.lsn - 1 when even releasing nothing leaves fewer).
 */
int wal_lsn_keeping(struct wal *wal, uint64_t keep, uint64_t *lsn);

/* the identity and geometry in the header */
void wal_identity(struct wal *wal, struct wal_identity *id, uint64_t *ring_size);

/*
 * A replica: the primary says everything before p was flushed here (its
 * tail hint); p must be a position of our chain.
 */
int wal_note_persisted(struct wal *wal, const struct log_pos *p);
/*
 * A replica, its primary gone: take in what the ring holds and persist
 * it, so that what it reports as its log is on its medium (the primary's
 * last writes may have landed without their flush).
 */
int wal_refresh_persist(struct wal *wal);

/*
 * The checksum of records from..to (wal_verify.c says of what): equal on
 * two logs if they hold the same records.  REPL_E_NOT_FOUND if this log
 * does not hold them all, REPL_E_CORRUPT if a record header in the way is
 * damaged.
 */
int wal_range_crc(struct wal *wal, uint64_t from, uint64_t to, uint32_t *crc);

/*
 * The epoch of the newest record: of the one before the checkpoint when
 * every record was released (0: the log never held one).
 */
uint64_t wal_tail_epoch(struct wal *wal);

/* the epoch of record lsn - 1 (lsn = the checkpoint's: ck_epoch; 0: not known) */
uint64_t wal_epoch_before(struct wal *wal, uint64_t lsn);

/*
 * A new epoch, durable in the header: a primary's start, or a replica's
 * promise; epoch_inc is the incarnation of the log whose node chose it.
 */
int wal_set_epoch(struct wal *wal, uint64_t epoch, uint64_t epoch_inc);

/*
 * A log made anew takes its promise floor: epoch (chosen by the log of
 * incarnation epoch_inc) becomes its promise unless it promised a higher
 * one already, and WAL_F_PROMISE_PENDING is cleared, in one header update:
 * a crash leaves either the pending log or the promise.
 */
int wal_take_floor(struct wal *wal, uint64_t epoch, uint64_t epoch_inc);

/* clear the header flags in flags (WAL_F_*), durable on return */
int wal_clear_flags(struct wal *wal, uint32_t flags);

/*
 * A replica's ring is written by its primary, not by wal_append.  These
 * bring the log's view up to date with what is in the ring, and let the
 * primary shape it; none may run while wal_append does.
 */
/* take in valid records the primary wrote after the current end */
int wal_refresh(struct wal *wal);
/*
 * End the log at `at`: if it is a point of this log's chain, the records
 * after it are forgotten; otherwise the log restarts, empty, at `at`,
 * whose preceding record has epoch at_epoch (0: not known).  Durable
 * before it returns.
 */
int wal_truncate(struct wal *wal, const struct log_pos *at, uint64_t at_epoch);
/* move the checkpoint forward to `at`, a point of this log's chain */
int wal_set_head(struct wal *wal, const struct log_pos *at);
/* readers (wal_read, wal_iterate) see nothing after lsn (UINT64_MAX: all) */
void wal_set_read_limit(struct wal *wal, uint64_t lsn);

#endif
