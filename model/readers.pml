/*
 * readers.pml -- what the connections of a replvfs primary read while
 * commits are in flight (repl_commit=strict, sqlite/rv_db_readers.c), as
 * a SPIN model.  docs/model.md ("Readers and commits in flight")
 * describes it; tests/model/check-model.sh runs it (the runs named
 * readers-*).
 *
 * One database in one process: NC connections, NP pages, at most NT
 * transactions.  The log is abstract: transaction t's record is appended
 * with LSN t (1, 2, ...) and becomes durable in order (dur, the durable
 * point, moves up towards app, the last appended); a commit's wait may
 * time out instead, which poisons the database (its record may still
 * become durable later).  The -wal's frame of a page that transaction t
 * wrote is named by t; the wal-index header (hdr) names the last
 * transaction published.  A page's version in snapshot s is the last
 * transaction <= s that wrote it (0: the database before any), and a
 * version read is a frame read from the -wal (the database file takes no
 * frame before it is durable, so reading a version from it instead is no
 * less safe).
 *
 * A connection is IDLE, READING (a read transaction at snapshot snap),
 * WRITING (it holds SQLite's write lock; its snapshot is the header) or
 * WAITING (its COMMIT waits for its record, after it let the lock go).
 * It has SQLite's page cache: the versions it read or wrote, kept while
 * the header it last began at has not moved (SQLite resets the cache when
 * it has).  A writer appends and publishes its transaction in one step
 * (SQLite writes the header while it holds the write lock).
 *
 * The rules:
 *   R1  a read of a frame by a connection that does not hold the write
 *       lock waits until the frame's transaction is durable (after a
 *       poison: fails; either way nothing is read);
 *   R2  a connection that lets the write lock go remembers app then, and
 *       its next transaction begins only once that is durable;
 *   the writer reads any frame (it builds on what is in flight);
 *   no write transaction begins on a poisoned database.
 *
 * The invariant:
 *   I-read  every page version a read transaction obtains, from the
 *           -wal or from its cache, is durable when it obtains it
 *
 * BUG_NO_READ_GATE drops R1, BUG_NO_SEEN_WAIT drops R2; with both the
 * model is repl_commit=pipelined, whose readers read what is in flight.
 * NO_TIMEOUT: no commit's wait times out (no poison).
 *
 * Bounds (spin -DNAME=VALUE): NC connections (2 or 3), NP pages (2 or
 * 3), NT transactions (1 to 4).
 */

#ifndef NC
#define NC 2
#endif
#ifndef NP
#define NP 2
#endif
#ifndef NT
#define NT 3
#endif
#define ALLPAGES ((1 << NP) - 1)
#define NONE 255
#define IN(s, p) (((s) >> (p)) & 1)

mtype = { IDLE, READING, WRITING, WAITING };

typedef conn_t {
	mtype st;
	byte snap;		/* READING, WRITING: its snapshot */
	byte at;		/* the header its cache belongs to */
	byte cache[NP];		/* each page's version, or NONE */
	byte seen;		/* R2: app when it let the write lock go */
	byte lsn;		/* WAITING: its record */
};

conn_t c[NC];
byte pages[NT + 1];		/* pages[t]: the set of pages t wrote */
byte app, dur, hdr;
bool poisoned;
byte writer = NONE;

/* scratch of one indivisible step: not part of the state */
byte zv, zt, zp, act, pa, pb, pc;
bool zhit;

/* an invariant: the replay of a trail names it before SPIN's assert fires */
#define CHECK(cond, text)	if :: !(cond) -> printf(text) :: else -> skip fi; assert(cond)

/* ---- the guards ---- */

#ifdef BUG_NO_SEEN_WAIT
#define SEEN_OK(i)	true
#else
#define SEEN_OK(i)	(c[i].seen <= dur)
#endif
/* a read transaction begins (R2) */
#define G_BEGIN(i)	(c[i].st == IDLE && SEEN_OK(i))
/* a write transaction begins: the lock free, the database not poisoned */
#define G_BEGIN_W(i)	(G_BEGIN(i) && writer == NONE && !poisoned && app < NT)
#define G_END(i)	(c[i].st == READING)
#define G_COMMIT(i)	(c[i].st == WRITING)
#define G_ROLLBACK(i)	(c[i].st == WRITING)
#define G_ACK(i)	(c[i].st == WAITING && c[i].lsn <= dur)
#ifdef NO_TIMEOUT
#define G_TIMEOUT(i)	false
#else
#define G_TIMEOUT(i)	(c[i].st == WAITING && c[i].lsn > dur)
#endif
#define G_DURABLE	(dur < app)
/* a read of page p: from its cache, or a frame (R1 unless the writer) */
#ifdef BUG_NO_READ_GATE
#define FRAME_OK(i, p)	true
#else
#define FRAME_OK(i, p)	(c[i].st == WRITING || VERSION_AT(c[i].snap, p) <= dur)
#endif
#define G_READ(i, p)	((c[i].st == READING || c[i].st == WRITING) && \
			 (c[i].cache[p] != NONE || FRAME_OK(i, p)))

/* page p's version in snapshot s: the last t <= s that wrote it, or 0 */
#define W(t, s, p)	((t) <= (s) && IN(pages[t], p))
#define V1(s, p)	(W(1, s, p) -> 1 : 0)
#define V2(s, p)	(W(2, s, p) -> 2 : V1(s, p))
#define V3(s, p)	(W(3, s, p) -> 3 : V2(s, p))
#define V4(s, p)	(W(4, s, p) -> 4 : V3(s, p))
#if NT == 1
#define VERSION_AT(s, p) V1(s, p)
#elif NT == 2
#define VERSION_AT(s, p) V2(s, p)
#elif NT == 3
#define VERSION_AT(s, p) V3(s, p)
#elif NT == 4
#define VERSION_AT(s, p) V4(s, p)
#else
#error "readers.pml: NT is 1 to 4"
#endif

/* ---- the actions ---- */

#define A_BEGIN		1
#define A_BEGIN_W	2
#define A_END		3
#define A_COMMIT	4
#define A_ROLLBACK	5
#define A_ACK		6
#define A_TIMEOUT	7
#define A_DURABLE	8
#define A_READ		9

/* a replayed trail's steps (check-model.sh prints the lines "step: ...") */
inline SAY() {
	if
	:: act == A_BEGIN ->
		printf("step: c%d begins a read transaction at header %d\n", pa, hdr)
	:: act == A_BEGIN_W ->
		printf("step: c%d takes the write lock at header %d\n", pa, hdr)
	:: act == A_END -> printf("step: c%d ends its read transaction\n", pa)
	:: act == A_COMMIT ->
		printf("step: c%d commits pages %d as LSN %d, lets the lock go, waits\n",
			pa, pc, app)
	:: act == A_ROLLBACK -> printf("step: c%d rolls back, lets the lock go\n", pa)
	:: act == A_ACK -> printf("step: c%d's COMMIT returns: LSN %d durable\n", pa, c[pa].lsn)
	:: act == A_TIMEOUT -> printf("step: c%d's COMMIT times out: poisoned\n", pa)
	:: act == A_DURABLE -> printf("step: durable up to LSN %d\n", dur)
	:: act == A_READ && zhit ->
		printf("step: c%d (%e) reads page %d: version %d from its cache (durable up to %d)\n",
			pa, c[pa].st, pb, zv, dur)
	:: act == A_READ && !zhit ->
		printf("step: c%d (%e) reads page %d: version %d from the file (durable up to %d)\n",
			pa, c[pa].st, pb, zv, dur)
	fi
}


inline BEGIN(i, w) {
	c[i].seen = 0;
	if
	:: c[i].at != hdr ->
		for (zp : 0 .. NP - 1) { c[i].cache[zp] = NONE }
		c[i].at = hdr
	:: else -> skip
	fi;
	c[i].snap = hdr;
	if
	:: w -> c[i].st = WRITING; writer = i
	:: else -> c[i].st = READING
	fi
}

inline READ(i, p) {
	zhit = (c[i].cache[p] != NONE);
	if
	:: zhit -> zv = c[i].cache[p]
	:: else -> zv = VERSION_AT(c[i].snap, p); c[i].cache[p] = zv
	fi;
	SAY();
	CHECK(c[i].st == WRITING || zv <= dur,
		"I-read violated: a read transaction obtained a version not yet durable\n")
}

/* the writer's transaction: pages s appended as LSN app + 1, published */
inline COMMIT(i, s) {
	app++;
	pages[app] = s;
	hdr = app;
	for (zp : 0 .. NP - 1) {
		if
		:: IN(s, zp) -> c[i].cache[zp] = app
		:: else -> skip
		fi
	}
	c[i].at = hdr;
	writer = NONE;
	c[i].seen = app;
	c[i].lsn = app;
	c[i].st = WAITING
}

inline ROLLBACK(i) {
	writer = NONE;
	c[i].seen = app;
	c[i].st = IDLE
}

#define P1(G, X, a)	:: G(a) -> act = X; pa = a
#define P2(G, X, a, b)	:: G(a, b) -> act = X; pa = a; pb = b
#if NC > 2
#define EACH(M, ...)	M(__VA_ARGS__, 0) M(__VA_ARGS__, 1) M(__VA_ARGS__, 2)
#else
#define EACH(M, ...)	M(__VA_ARGS__, 0) M(__VA_ARGS__, 1)
#endif
#if NP > 2
#define PAGES(M, ...)	M(__VA_ARGS__, 0) M(__VA_ARGS__, 1) M(__VA_ARGS__, 2)
#else
#define PAGES(M, ...)	M(__VA_ARGS__, 0) M(__VA_ARGS__, 1)
#endif
#define READS(G, X, a)	PAGES(P2, G, X, a)
/* a nonempty set of pages, into pc */
#define PS(s)		:: (s) <= ALLPAGES -> pc = s
#define SUBSETS		PS(1) PS(2) PS(3) PS(4) PS(5) PS(6) PS(7)

init {
	d_step {
		for (zp : 0 .. NC - 1) {
			c[zp].st = IDLE;
			for (zt : 0 .. NP - 1) { c[zp].cache[zt] = NONE }
		}
	}
end:	do
	:: atomic {
		if
		EACH(P1, G_BEGIN, A_BEGIN)
		EACH(P1, G_BEGIN_W, A_BEGIN_W)
		EACH(P1, G_END, A_END)
		EACH(P1, G_COMMIT, A_COMMIT)
		EACH(P1, G_ROLLBACK, A_ROLLBACK)
		EACH(P1, G_ACK, A_ACK)
		EACH(P1, G_TIMEOUT, A_TIMEOUT)
		EACH(READS, G_READ, A_READ)
		:: G_DURABLE -> act = A_DURABLE
		fi;
		if
		:: act == A_COMMIT -> if SUBSETS fi
		:: else -> skip
		fi;
		d_step {
			if
			:: act == A_BEGIN -> BEGIN(pa, 0)
			:: act == A_BEGIN_W -> BEGIN(pa, 1)
			:: act == A_END -> c[pa].st = IDLE
			:: act == A_COMMIT -> COMMIT(pa, pc)
			:: act == A_ROLLBACK -> ROLLBACK(pa)
			:: act == A_ACK -> c[pa].st = IDLE
			:: act == A_TIMEOUT -> poisoned = true; c[pa].st = IDLE
			:: act == A_DURABLE -> dur++
			:: act == A_READ -> READ(pa, pb)
			fi;
			if
			:: act != A_READ -> SAY()
			:: else -> skip
			fi;
			act = 0; pa = 0; pb = 0; pc = 0
		}
	}
	od
}
