/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * wal_internal.h -- the log's objects and helpers shared by wal.c (format,
 * appends, recovery, space) and wal_replica.c (a replica's ring written
 * from elsewhere).  The on-media format is specified at the top of wal.c.
 */
#ifndef REPL_WAL_INTERNAL_H
#define REPL_WAL_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "common/lock_rank.h"
#include "log/wal.h"

#define HDR_COPY_SIZE 4096
#define RING_OFF WAL_RING_OFF
_Static_assert(WAL_RING_OFF == 2 * HDR_COPY_SIZE, "the ring follows both header copies");
#define REC_HDR 40
#define FLAG_WRAP 1u
#define FLAG_EPOCH_START 2u
#define WAL_VERSION 2

struct wal_hdr {
	char magic[8];
	uint32_t version;
	uint32_t node_id;
	uint64_t seq;
	uint8_t cluster_uuid[16];
	uint64_t epoch;
	uint64_t ring_off;
	uint64_t ring_size;
	uint64_t ck_lsn;
	uint64_t ck_off;
	uint32_t ck_lap;
	uint32_t ck_crc;
	uint64_t usc;
	uint32_t dev_crc;
	uint32_t state;
	uint64_t incarnation;	/* this log's, random at format, never 0 */
	uint64_t epoch_inc;	/* the incarnation of the log that chose epoch */
	uint64_t ck_epoch;	/* the epoch of record ck_lsn - 1 (0: none) */
	uint32_t flags;		/* WAL_F_* (wal.h); no other bit */
	uint32_t crc;
};
_Static_assert(sizeof(struct wal_hdr) == 136, "header is 136 bytes");
/* version 1's header: the same fields up to state, then reserved and crc */
#define WAL_V1_HDR_SIZE 112

#define STATE_OPEN 1u

struct rec_hdr {
	uint64_t lsn;
	uint32_t len;
	uint32_t lap;
	uint64_t client_id;
	uint32_t epoch;
	uint32_t flags;
	uint32_t crc;
	uint32_t reserved;
};
_Static_assert(sizeof(struct rec_hdr) == REC_HDR, "record header is 40 bytes");


struct wal {
	struct rpma_ext_mem *mem;
	char *base;		/* the whole region */
	char *ring;
	uint64_t ring_size;
	struct wal_hdr hdr;	/* the current header */
	int hdr_copy;		/* which copy holds it */
	/*
	 * Held by whoever writes a header generation, before lock: so a
	 * checkpoint's move can write and persist the next generation with
	 * lock released (a file's fdatasync takes milliseconds, and the
	 * appenders need lock to reserve), and no other generation can be
	 * written meanwhile.  hdr and hdr_copy change under both.
	 */
	pthread_mutex_t hdr_lock;

	pthread_mutex_t lock;
	pthread_cond_t space;	/* signalled when space is released */
	pthread_cond_t synced;	/* signalled when a sync ends */
	pthread_cond_t published; /* signalled when records are published */
	unsigned pub_waiters, sync_waiters;
	/* pub.lsn and durable.lsn, for waiters spinning without the lock */
	_Atomic uint64_t pub_lsn, durable_lsn;
	/* appends between reserve and publish, by LSN modulo PUB_SLOTS */
	struct slot *slots;
	struct log_pos head;	/* the oldest record kept (the checkpoint) */
	struct log_pos tail;	/* where the next reservation goes (crc unknown) */
	struct log_pos pub;		/* records before it are complete: readable */
	uint64_t used;		/* ring bytes from head to tail */
	struct log_pos durable;	/* everything before is persistent */
	bool syncing;
	/*
	 * A persist takes a disk's flush (the FILE backend): waiting for
	 * another's sleeps at once, as yielding through it only takes the CPU
	 * from the threads doing the work
	 */
	bool slow_persist;
	uint64_t read_limit;	/* readers see LSNs below it (a replica's commit) */
	/*
	 * An append found no room (REPL_E_FULL) and none has been made since:
	 * cleared by a release and by an append that fits
	 */
	bool full;
	uint64_t full_refusals;	/* appends refused for room, ever */

	unsigned health;	/* REPL_HEALTH_* found at open */

	/* every IDX_STRIDE-th LSN's position, so a read scans few records */
	struct log_pos *idx;
	uint64_t idx_cap;
};

/* wal->lock, the innermost of the engine's locks (common/lock_rank.h) */
static inline void
wal_lock(struct wal *wal)
{
	rank_lock(&wal->lock, LOCK_RANK_WAL);
}

static inline void
wal_unlock(struct wal *wal)
{
	rank_unlock(&wal->lock, LOCK_RANK_WAL);
}

static inline void
wal_hdr_lock(struct wal *wal)
{
	rank_lock(&wal->hdr_lock, LOCK_RANK_WAL_HDR);
}

static inline void
wal_hdr_unlock(struct wal *wal)
{
	rank_unlock(&wal->hdr_lock, LOCK_RANK_WAL_HDR);
}

/*
 * Room a client's append leaves free for epoch-start records (each at most
 * REC_HDR, and as much again wasted before a wrap): a log that appends
 * filled can still take a few promotions' first records, so that it can
 * be opened again, and released, after its primary stopped with it full
 * (a restored log leaves it too, for the bootstrap that takes it).
 */
#define EPOCH_START_RESERVE	(4 * 2 * REC_HDR)

#define IDX_STRIDE 64
#define PUB_SLOTS 1024
#define SPIN_ROUNDS 50

/* a filled record waiting for its turn to be published */
struct slot {
	struct rec_hdr h;	/* crc not yet chained */
	struct log_pos at;
	uint32_t crc0;		/* CRC of header + payload from zero */
	uint32_t xpow;		/* x^(8 * (header + payload)): chains crc0 */
	bool wrap;		/* a WRAP precedes it */
	bool ready;
};

/* wal_format.c: the format's rules, on bytes alone */
extern const char wal_magic[8];

static inline uint64_t
wal_align8(uint64_t v)
{
	return (v + 7) & ~(uint64_t)7;
}

uint32_t wal_hdr_crc(const struct wal_hdr *h);
/* a random incarnation, never 0 */
uint64_t wal_new_incarnation(void);
/*
 * A valid version 1 header copy?  Then h becomes it in version 2's layout
 * with the fields version 2 added zero and version still 1, for the
 * caller to upgrade.
 */
bool wal_hdr_from_v1(struct wal_hdr *h, uint64_t size);
/* a valid header for a region of size bytes? (why: what fails, or NULL) */
bool wal_hdr_check(const struct wal_hdr *h, uint64_t size, const char **why);
/* the position after a record (or WRAP) of len payload bytes at p */
void wal_pos_next(uint64_t ring_size, struct log_pos *p, uint32_t len, bool wrap,
		uint32_t crc);

/* what the record header h found at position p is (before its CRC) */
enum wal_slot {
	WAL_SLOT_END = 0,	/* not the record expected there: the log ends */
	WAL_SLOT_RECORD = 1,
	WAL_SLOT_WRAP = 2,
	WAL_SLOT_BAD = 3,	/* claims the slot, but a field is impossible */
};
enum wal_slot wal_slot_check(const struct rec_hdr *h, const struct log_pos *p,
		uint64_t ring_size, const char **why);
/* the chained CRC over h (its crc field as 0); the payload continues it */
uint32_t wal_rec_crc_start(const struct rec_hdr *h, uint32_t prev);

/* wal.c */
int wal_persist(struct wal *wal, uint64_t off, uint64_t len);
/* wal_hdr.c */
int wal_hdr_write(struct rpma_ext_mem *mem, char *base, int k, struct wal_hdr *h);
int wal_hdr_update(struct wal *wal, struct wal_hdr *nh);
int wal_set_checkpoint(struct wal *wal, const struct log_pos *at,
		uint64_t ck_epoch);
int wal_move_head(struct wal *wal, const struct log_pos *at, uint64_t ck_epoch);
/* wal.c */
void wal_advance(const struct wal *wal, struct log_pos *p, uint32_t len,
		bool wrap, uint32_t crc);
int wal_rec_at(const struct wal *wal, const struct log_pos *p, struct rec_hdr *h);
uint64_t wal_distance(const struct wal *wal, const struct log_pos *from,
		const struct log_pos *to);
void wal_idx_note(struct wal *wal, const struct log_pos *p);
struct log_pos wal_idx_find(const struct wal *wal, uint64_t lsn);
int wal_find(struct wal *wal, uint64_t lsn, struct log_pos *at, struct rec_hdr *h);
/* the medium's mapping, when it is large enough to be a log (wal.c) */
int wal_region(struct rpma_ext_mem *mem, char **base, size_t *size);
/*
 * Both header copies of mem, and whether each is valid (a version 1 one
 * read as version 2): 0, REPL_E_INVAL (no log's mapping), REPL_E_CORRUPT
 * (neither valid).
 */
int wal_hdrs_read(struct rpma_ext_mem *mem, char **base, size_t *size,
		struct wal_hdr *a, struct wal_hdr *b, bool *va, bool *vb);

/* the current copy of two read by wal_hdrs_read: 0 (A) or 1 (B) */
static inline int
wal_hdr_pick(const struct wal_hdr *a, const struct wal_hdr *b, bool va, bool vb)
{
	return va && (!vb || a->seq >= b->seq) ? 0 : 1;
}

#endif
