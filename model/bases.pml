/*
 * bases.pml -- the SQLite layer's own state as a SPIN model: the database
 * files, their base markers, the replicas' copies (repld's sqlite_copy)
 * and their holds on the log, and the log's releases behind the bases.
 * docs/model.md ("Bases, copies and holds") describes it, and
 * docs/sqlite.md ("The rules") the rules it checks; tests/model/
 * check-model.sh runs it (the runs named bases-*).
 *
 * The replication protocol is not modelled again here (repl.pml is that
 * model): every record appended is committed, and every node's log holds
 * it for as long as the log's range holds its LSN.  What is modelled is
 * what the SQLite layer keeps beside the log and what it lets the log
 * release.
 *
 * An abstract database: NP pages; records 1 .. NT, each writing a
 * nonempty set of pages (chosen when it is appended), every page in full.
 * A page's content is the LSN of the record that last wrote it (0: the
 * empty database's), or GARB (a torn write).  db@x[p] is the LSN of the
 * last record <= x that writes p, 0 if none: the database after x.
 *
 * Bounds (spin -DNAME=VALUE):
 *   NN       nodes (2 or 3): n0 starts as the primary, the others as
 *            replicas with a copy each
 *   NP       pages (2 or 3)
 *   NT       records appended in a run (2 to 6), transactions and image
 *            records alike
 *   MAXTX    of them transactions, at most (default NT)
 *   MAXLOSS  copies lost in a run (the file and its marker gone, as on a
 *            replaced disk)
 *   RESEED   a failed copy may be made anew from another node's base (with
 *            REMAKE, where no copy fails: a down copy seeded by hand)
 *   REMAKE   a copy that cannot follow is remade from the primary's image
 *            (rule 7) instead of failing: it removes its marker, lets go
 *            of its hold and asks; the primary pins its releases at its
 *            base B and writes its file into the log page by page, each
 *            page read as it is at that moment; the copy holds from B at
 *            the image's first record, applies every record after B into
 *            a new file (an image page only where no transaction of this
 *            remake wrote), its hold moving up behind it, installs the
 *            new file and marks it
 *
 * More behaviours, which the default covers (docs/model.md says why):
 *   CRASH_CHOICES  a crash leaves each page written since the last sync
 *            kept, reverted or torn (default: torn)
 *   PARTIAL_CKPT   a checkpoint may write only some of its pages
 *
 * The invariants (each can be switched off, for the runs that show
 * another one):
 *   I-marker  every marker m != 0 is true of its durable file: each page
 *             that no record in (m, last] writes is db@m[p] (not garbage)
 *   I-rebuild a rebuild yields db@last on every page
 *   I-copy    a FOLLOWING copy between batches is db@pos
 *   I-gap     a copy that holds never finds a gap: the records after its
 *             position (after its marker, at start) are in the log
 *   I-wedge   no FAILED copy's hold is counted by the primary, nor that
 *             of a copy that waits for an image
 *   I-remake  the file a remake installs is db@pos on every page
 *   NO_I_MARKER, NO_I_REBUILD, NO_I_COPY, NO_I_GAP, NO_I_WEDGE,
 *   NO_I_REMAKE: that one is not checked (for a run that shows another)
 *
 * The rules put back the way they were, or broken (each must be found):
 *   BUG_COPY_FROM_FIRST   at start a copy with marker m holds from m but
 *                         applies the log again from its first record,
 *                         keeping its marker (the code before the fix)
 *   BUG_MARK_BEFORE_SYNC  a marker is written before the file is synced
 *   BUG_NO_BASE_FROM_FIRST a copy without a marker does not fail when the
 *                         log was released: it applies the log from its
 *                         first record over its empty file, and marks it
 *   BUG_FAILED_KEEPS_HOLD a FAILED copy's hold still counts (with REMAKE:
 *                         that of a copy that asks for an image)
 *   BUG_REBUILD_SHORT_BASE a rebuild takes the node's file as its base
 *                         whatever its marker says
 *   BUG_RELEASE_PAST_HOLDS the primary releases up to its base whatever
 *                         the holds
 * and, with REMAKE:
 *   BUG_IMAGE_NO_PIN      the primary does not pin its releases at the
 *                         image's base: the records after B may go before
 *                         the copy that asked holds them
 *   BUG_IMAGE_OVERWRITES  an image page is written into the new file even
 *                         where a transaction of this remake wrote it
 *   BUG_IMAGE_MARK_EARLY  the install marks the new file at once, before
 *                         it is synced
 *   BUG_REMAKE_HOLD_BACK  a remaking copy holds only the records after
 *                         its position, not the one at it: its mark at the
 *                         install moves its hold back by one, to before
 *                         the log's first record if a release took the
 *                         record at its position meanwhile, where it
 *                         counts for nothing
 */
#ifndef SHOW_TRAIL
#define SHOW_TRAIL	0
#endif
#if defined(BUG_COPY_FROM_FIRST) || defined(BUG_NO_BASE_FROM_FIRST)
#define FROM_FIRST	1	/* a copy may read the log from its first record */
#endif
#ifndef NN
#define NN	2
#endif
#ifndef NP
#define NP	2
#endif
#ifndef NT
#define NT	4
#endif
#ifndef MAXLOSS
#define MAXLOSS	0
#endif
#ifndef MAXTX
#define MAXTX	NT
#endif
#if defined(BUG_IMAGE_NO_PIN) || defined(BUG_IMAGE_OVERWRITES) || \
    defined(BUG_IMAGE_MARK_EARLY) || defined(BUG_REMAKE_HOLD_BACK)
#ifndef REMAKE
#error "BUG_IMAGE_* and BUG_REMAKE_HOLD_BACK break rule 7: they need REMAKE"
#endif
#endif

#define GARB	15		/* a page's content after a torn write */
#define NOPR	7		/* pr when no node is the primary */
#define BIT(p)		(1 << (p))
#define IN(m, i)	(((m) >> (i)) & 1)
#define ALLPAGES	((1 << NP) - 1)
#define MIN(a, b)	((a) < (b) -> (a) : (b))

/* a node's role: the state of its copy, or the primary */
#define DOWN		0	/* repld not running (its copy not either) */
#define STARTING	1	/* the copy applies the log under one lock */
#define FOLLOWING	2	/* the copy applies batch after batch */
#define FAILED		3	/* the copy stopped; repld runs on */
#define PRIMARY		4	/* the application's database */
#define REMAKING	5	/* (REMAKE) the copy is made anew from an image */

typedef Node {
	byte dur[NP];	/* each page's durable content */
	byte vol[NP];	/* each page's content written since the last sync
			 * (where dirty): what a reader of the file sees */
	byte dirty;	/* the pages written since the last sync */
	byte mk;	/* the base marker NAME-repl-base: 0 none, else its LSN
			 * (written atomically: a new file renamed over it) */
	byte st;	/* DOWN .. PRIMARY */
	byte pos;	/* as a copy: the last record applied */
	byte hold;	/* its hold: records > hold are kept for it */
	bit held;	/* the primary counts this hold (also while the
			 * node is down: it releases no further than what it
			 * heard last) */
	bit lost;	/* ghost: its file was lost since it last started, or
			 * (REMAKE) its marker removed for a remake and no new
			 * one written yet (the hold the primary counts is not
			 * its marker's) */
#ifdef FROM_FIRST
	bit first;	/* starting: its first read is still to come */
#endif
#ifdef REMAKE
	/* REMAKING: pos is the last record applied into the new file */
	byte want;	/* 1: it asks for an image; 2: an image was begun for
			 * it (the primary's pin waits for its hold) */
	byte il;	/* the LSN of its image's first record (0: none yet) */
	byte ipg;	/* the image's pages applied into the new file */
	byte nw;	/* the pages the transactions of this remake wrote */
	byte nf[NP];	/* the new file (PATH-repl-remake): lost in a crash */
#endif
}

Node nd[NN];
byte rec[NT];		/* the pages record t + 1 writes */
byte last;		/* the last record appended */
byte F = 1;		/* the first record every log holds (releases apply to
			 * every node's log) */
byte pr;		/* the primary's node (NOPR: none) */
byte ck;		/* the primary's checkpoint: records <= ck are all in
			 * its file (SQLite's WAL backfilled up to them) */
byte losses;
byte ntx;		/* transactions appended */
#ifdef REMAKE
/* an image record t + 1 writes no page of the database (rec[t] = 0): it
 * carries page iv[t] >> 4 of the primary's file, as read (iv[t] & 15);
 * ifb[t] is its base B in the image's first record, else 0 */
byte iv[NT];
byte ifb[NT];
byte ib;		/* the primary's image under way: its base B (0: none) */
byte inx;		/* ... the pages written into the log so far */
byte ifirst;		/* the LSN of the newest image's first record, for the
			 * copies it was begun for (0: none yet) */
byte pin;		/* the primary releases nothing after pin (0: no pin)
			 * until every copy the image was begun for holds */
#endif

bit verbose = SHOW_TRAIL;

/* the action and its node and choices (pages, outcomes): 0 between steps */
byte act, pa, pb, pc;

/* scratch of one indivisible step: not part of the state */
hidden byte zi, zj, zt, zv, zw, zb;
hidden byte img[NP];

/* ---- the database the records make ---- */

/* the pages the records in (a, b] write */
#define RIN(t, a, b)	((t) > (a) && (t) <= (b) -> rec[(t) - 1] : 0)
#if NT > 5
#define CH(a, b)	(RIN(1, a, b) | RIN(2, a, b) | RIN(3, a, b) | RIN(4, a, b) | \
			 RIN(5, a, b) | RIN(6, a, b))
#elif NT > 4
#define CH(a, b)	(RIN(1, a, b) | RIN(2, a, b) | RIN(3, a, b) | RIN(4, a, b) | \
			 RIN(5, a, b))
#elif NT > 3
#define CH(a, b)	(RIN(1, a, b) | RIN(2, a, b) | RIN(3, a, b) | RIN(4, a, b))
#elif NT > 2
#define CH(a, b)	(RIN(1, a, b) | RIN(2, a, b) | RIN(3, a, b))
#else
#define CH(a, b)	(RIN(1, a, b) | RIN(2, a, b))
#endif

/* zv := db@x[p] */
inline DBAT(x, p) {
	zv = 0;
	for (zw : 1 .. x) {
		if
		:: IN(rec[zw - 1], p) -> zv = zw
		:: else -> skip
		fi
	}
}

/* what a reader of node n's file reads of page p */
#define VIEW(n, p)	(IN(nd[n].dirty, p) -> nd[n].vol[p] : nd[n].dur[p])

/* node n writes page p with content c (not durable until a sync) */
inline WRITE(n, p, c) {
	nd[n].vol[p] = c;
	nd[n].dirty = nd[n].dirty | BIT(p)
}

/* node n syncs its file: every page written becomes durable */
inline SYNC(n) {
	for (zj : 0 .. NP - 1) {
		if
		:: IN(nd[n].dirty, zj) -> nd[n].dur[zj] = nd[n].vol[zj]; nd[n].vol[zj] = 0
		:: else -> skip
		fi
	}
	nd[n].dirty = 0
}

/* a copy's hold, from its marker m: the records after m - 1 (m stays in
 * the log, so that it always holds the newest record); everything (0)
 * without a marker */
#define HOLD_AT(m)	((m) > 0 -> (m) - 1 : 0)

/*
 * How far the primary may release: F moves to at most its own base's LSN
 * (the log keeps that record), and to at most h + 1 for the hold h of
 * every copy it counts.  A FAILED copy's hold does not count (I-wedge):
 * it ends when the copy fails.  A hold that begins before the log's first
 * record (h + 1 < F) counts for nothing either (held_limit in
 * engine/primary/cluster.c): what it would keep is gone already.
 */
#define HB(n)		(nd[n].held && nd[n].hold + 1 >= F -> nd[n].hold + 1 : 255)
#if NN > 2
#define HOLDS_BOUND	MIN(HB(0), MIN(HB(1), HB(2)))
#else
#define HOLDS_BOUND	MIN(HB(0), HB(1))
#endif
/* an image's pin at B keeps the records after B (rule 7);
 * BUG_IMAGE_NO_PIN: no pin */
#if defined(REMAKE) && !defined(BUG_IMAGE_NO_PIN)
#define PIN_BOUND	(pin != 0 -> pin + 1 : 255)
#else
#define PIN_BOUND	255
#endif
#ifdef BUG_RELEASE_PAST_HOLDS
#define RELEASE_TO	(nd[pr].mk)
#else
#define RELEASE_TO	MIN(nd[pr].mk, MIN(HOLDS_BOUND, PIN_BOUND))
#endif

/* ---- what a replayed trail prints (spin -t); nothing in the search ---- */
inline SHOW_PAGES(m) {
	printf("{");
	zb = 0;
	for (zj : 0 .. NP - 1) {
		if
		:: IN(m, zj) ->
			if
			:: zb -> printf(",")
			:: else -> skip
			fi;
			printf("%d", zj);
			zb = 1
		:: else -> skip
		fi
	}
	printf("}")
}
inline SHOW_CONTENT(c) {
	if
	:: c == GARB -> printf("#")
	:: else -> printf("%d", c)
	fi
}
inline SHOW() {
	if
	:: verbose ->
		for (zi : 0 .. NN - 1) {
			printf("    n%d ", zi);
			if
			:: nd[zi].st == PRIMARY -> printf("primary   ")
			:: nd[zi].st == DOWN -> printf("down      ")
			:: nd[zi].st == STARTING -> printf("starting  ")
			:: nd[zi].st == FOLLOWING -> printf("following ")
			:: nd[zi].st == FAILED -> printf("FAILED    ")
			:: nd[zi].st == REMAKING -> printf("remaking  ")
			fi;
			printf(" pages");
			for (zt : 0 .. NP - 1) {
				printf(" ");
				SHOW_CONTENT(nd[zi].dur[zt]);
				if
				:: IN(nd[zi].dirty, zt) ->
					printf(">");
					SHOW_CONTENT(nd[zi].vol[zt])
				:: else -> skip
				fi
			}
			printf("  marker %d", nd[zi].mk);
			if
			:: nd[zi].st == STARTING || nd[zi].st == FOLLOWING ->
				printf("  pos %d", nd[zi].pos)
			:: nd[zi].st == PRIMARY -> printf("  checkpoint %d", ck)
			:: else -> skip
			fi;
#ifdef REMAKE
			if
			:: nd[zi].st == PRIMARY && ib != 0 ->
				printf("  image at %d: %d pages in", ib, inx)
			:: else -> skip
			fi;
			if
			:: nd[zi].st == PRIMARY && pin != 0 ->
				printf("  pin %d", pin)
			:: else -> skip
			fi;
			if
			:: nd[zi].st == REMAKING && nd[zi].il == 0 ->
				printf("  asks");
				if
				:: nd[zi].want == 2 -> printf(" (image begun)")
				:: else -> skip
				fi
			:: nd[zi].st == REMAKING && nd[zi].il != 0 ->
				printf("  image %d, new file", nd[zi].il);
				for (zt : 0 .. NP - 1) {
					printf(" ");
					SHOW_CONTENT(nd[zi].nf[zt])
				}
				printf(" at %d", nd[zi].pos)
			:: else -> skip
			fi;
#endif
			if
			:: nd[zi].held -> printf("  hold %d", nd[zi].hold)
			:: else -> skip
			fi;
			if
			:: nd[zi].lost && nd[zi].st != REMAKING ->
				printf("  (base gone)")
			:: else -> skip
			fi;
			printf("\n")
		}
		printf("    log %d..%d  records", F, last);
		for (zi : 1 .. last) {
			printf(" %d", zi);
#ifdef REMAKE
			if
			:: rec[zi - 1] == 0 ->
				/* an image record: [page=content], its base */
				printf("[%d=", iv[zi - 1] >> 4);
				SHOW_CONTENT(iv[zi - 1] & 15);
				if
				:: ifb[zi - 1] != 0 -> printf(" base %d", ifb[zi - 1])
				:: else -> skip
				fi;
				printf("]")
			:: else -> SHOW_PAGES(rec[zi - 1])
			fi
#else
			SHOW_PAGES(rec[zi - 1])
#endif
		}
		printf("  db@%d:", last);
		for (zi : 0 .. NP - 1) {
			DBAT(last, zi);
			printf(" %d", zv)
		}
		printf("\n")
	:: else -> skip
	fi
}

/* an invariant: the replay of a trail names it before SPIN's assert fires */
#define CHECK(cond, text)	if :: !(cond) -> printf(text) :: else -> skip fi; assert(cond)
/* NO_I_X: invariant I-x is not checked (a run that shows another one) */
#ifdef NO_I_MARKER
#define CHECK_MARKER(cond, text) skip
#else
#define CHECK_MARKER(cond, text) CHECK(cond, text)
#endif
#ifdef NO_I_REBUILD
#define CHECK_REBUILD(cond, text) skip
#else
#define CHECK_REBUILD(cond, text) CHECK(cond, text)
#endif
#ifdef NO_I_COPY
#define CHECK_COPY(cond, text)	skip
#else
#define CHECK_COPY(cond, text)	CHECK(cond, text)
#endif
#ifdef NO_I_GAP
#define CHECK_GAP(cond, text)	skip
#else
#define CHECK_GAP(cond, text)	CHECK(cond, text)
#endif
#ifdef NO_I_WEDGE
#define CHECK_WEDGE(cond, text)	skip
#else
#define CHECK_WEDGE(cond, text)	CHECK(cond, text)
#endif
#ifdef NO_I_REMAKE
#define CHECK_REMAKE(cond, text) skip
#else
#define CHECK_REMAKE(cond, text) CHECK(cond, text)
#endif

/* a copy that cannot go on lets go of its hold (the primary stops
 * counting it); BUG_FAILED_KEEPS_HOLD: the hold stays, and where it does
 * not begin before the log's first record (HB) the log can never be
 * released past it again */
inline LET_GO(n) {
#ifndef BUG_FAILED_KEEPS_HOLD
	nd[n].held = 0;
	nd[n].hold = 0
#else
	skip
#endif
}

/* a copy fails: its hold ends with it and its marker stays, true since
 * every write into the file was forward */
inline FAIL(n) {
	nd[n].st = FAILED;
	nd[n].pos = 0;
#ifdef FROM_FIRST
	nd[n].first = 0;
#endif
	LET_GO(n)
}

#ifdef REMAKE
/* the pin ends once no copy the image was begun for waits for it */
inline PIN_LOOK() {
	zb = 0;
	for (zj : 0 .. NN - 1) {
		if
		:: nd[zj].want == 2 -> zb = 1
		:: else -> skip
		fi
	}
	if
	:: !zb -> pin = 0
	:: else -> skip
	fi
}

/* the new file goes (removed, or lost with the node) */
inline DROP_NEW(n) {
	for (zj : 0 .. NP - 1) {
		nd[n].nf[zj] = 0
	}
	nd[n].nw = 0;
	nd[n].ipg = 0;
	nd[n].il = 0
}

/* a remaking copy asks (again) for an image: nothing held meanwhile */
inline ASK(n) {
	DROP_NEW(n);
	nd[n].pos = 0;
	nd[n].want = 1;
	LET_GO(n)
}

/*
 * A copy that cannot follow is remade (rule 7): its marker removed first
 * (durably: the file is no base it can go on from), its hold let go, and
 * an image asked for.  ghost lost: the hold the primary may still count
 * for it (while it is down) is no longer its marker's.
 */
inline REMAKE_BEGIN(n) {
	printf("remake: n%d cannot follow: marker removed, hold let go, asks for an image\n",
		n);
	nd[n].st = REMAKING;
	nd[n].mk = 0;
	nd[n].lost = 1;
	ASK(n)
}
#endif

/* ---- the primary appends record last + 1, writing the pages s ---- */
#define G_APPEND	(pr != NOPR && last < NT && ntx < MAXTX)
inline APPEND(s) {
	printf("append: record %d writes pages ", last + 1);
	SHOW_PAGES(s);
	printf("\n");
	rec[last] = s;
	last++;
	ntx++
}

/*
 * ---- the primary checkpoints up to record c: the pages s ----
 * SQLite's checkpoint copies into the database file, for every page the
 * records in (ck, c] wrote, its newest content up to c (only records
 * already appended: nothing the log may lose reaches the file); c below
 * last is a checkpoint held back by a reader.  The writes are not durable
 * yet.  One that wrote them all has backfilled the WAL up to c (ck = c).
 * With PARTIAL_CKPT a checkpoint may also write only some of them (s),
 * as one a crash or an error stops half-way, and ck stays; by default s
 * is every page (the crash that stops one tears every page it wrote).
 */
#define G_CKPT(c)	(pr != NOPR && ck < c && c <= last)
inline CHECKPOINT(c, s) {
	printf("checkpoint: n%d writes pages ", pr);
	SHOW_PAGES(s);
	printf(" as of record %d", c);
	if
	:: s != CH(ck, c) -> printf(" (part of it)")
	:: else -> skip
	fi;
	printf("\n");
	for (zi : 0 .. NP - 1) {
		if
		:: IN(s, zi) -> DBAT(c, zi); WRITE(pr, zi, zv)
		:: else -> skip
		fi
	}
	if
	:: s == CH(ck, c) -> ck = c
	:: else -> skip
	fi
}

/*
 * ---- the primary's file becomes a base at B = last ----
 * SQLite restarts its WAL only once every frame is in the database file
 * (ck = last): the file then holds every record up to B.  The release
 * thread syncs the file, then writes the marker (the rule: never a marker
 * the durable file does not bear out).  BUG_MARK_BEFORE_SYNC: the marker
 * first, the pages still in the page cache.
 */
#define G_BASE		(pr != NOPR && ck == last && last > nd[pr].mk)
inline BASE() {
#ifndef BUG_MARK_BEFORE_SYNC
	printf("base: n%d syncs its file and marks it at %d\n", pr, last);
	SYNC(pr);
#else
	printf("base: n%d marks its file at %d (not synced)\n", pr, last);
#endif
	nd[pr].mk = last
}

/* ---- the primary releases the log: F moves up to its base, within
 * every hold it counts (RELEASE_TO above; BUG_RELEASE_PAST_HOLDS: up to
 * its base only) ---- */
#define G_RELEASE	(pr != NOPR && RELEASE_TO > F)
inline RELEASE() {
	F = RELEASE_TO;
	printf("release: the log now begins at record %d\n", F)
}

/*
 * ---- repld starts on node n: its copy reads its marker m ----
 * It holds the records after m - 1 (everything without a marker) before
 * it first reads the log, so nothing it needs can go after it has
 * looked.  If the log already begins past m + 1 it cannot follow: FAILED
 * ("needs a new base").  Else it applies from m + 1 on: every write into
 * the file is forward, so the marker stays true throughout.
 * BUG_COPY_FROM_FIRST (the code before the fix): its first read takes
 * the log from its first record, whatever that is by then (at most m:
 * the hold), and it applies all of it over a file that holds up to m,
 * keeping its marker m until it passes it.  BUG_NO_BASE_FROM_FIRST (the
 * code before a later fix): a copy without a marker whose start check
 * saw its replica's log before it caught up (so not yet released) reads
 * the log from its first record too, over its empty file.  REMAKE: a copy
 * that cannot follow is remade instead of failing.
 */
#define G_START(n)	(nd[n].st == DOWN && n != pr)
inline START(n) {
	printf("start: n%d's copy, marker %d, the log begins at %d\n", n, nd[n].mk, F);
	/* a hold counted while it was down kept what follows its marker */
	CHECK_GAP(!nd[n].held || nd[n].lost || F <= nd[n].mk + 1,
		"I-gap violated: a copy that held finds the log begins past its marker\n");
	nd[n].lost = 0;
	nd[n].hold = HOLD_AT(nd[n].mk);
	nd[n].held = 1;
	if
#ifdef BUG_NO_BASE_FROM_FIRST
	:: nd[n].mk == 0 ->
		/* its start check saw the log before it caught up */
		nd[n].first = 1;
		nd[n].st = STARTING
#endif
	:: else ->
		if
		:: F > nd[n].mk + 1 ->
#ifdef REMAKE
			REMAKE_BEGIN(n)
#else
			FAIL(n)
#endif
		:: else ->
#ifdef BUG_COPY_FROM_FIRST
			/* its first read takes the log from its first record on */
			nd[n].first = 1;
			nd[n].st = STARTING
#else
			nd[n].pos = nd[n].mk;
			nd[n].st = (nd[n].pos == last -> FOLLOWING : STARTING)
#endif
		fi
	fi
}

/*
 * ---- a copy applies the next record (one batch) ----
 * Its pages are written, not synced (a crash may lose, keep or tear each
 * of them).  Past its position the log may have been released (a gap):
 * the copy fails (REMAKE: is remade).  A copy that starts applies under
 * one lock until it has caught up (readers see the file as the last run
 * left it), then FOLLOWING.  An image record writes no page: a copy that
 * follows passes over it.
 */
#define G_APPLY(n)	((nd[n].st == STARTING || nd[n].st == FOLLOWING) && \
			 nd[n].pos < last)
inline APPLY(n) {
#ifdef FROM_FIRST
	if
	:: nd[n].first -> nd[n].pos = F - 1; nd[n].first = 0
	:: else -> skip
	fi;
#endif
	if
	:: nd[n].pos + 1 < F ->
#ifdef REMAKE
		printf("apply: n%d needs record %d, the log begins at %d\n",
			n, nd[n].pos + 1, F);
#else
		printf("apply: n%d needs record %d, the log begins at %d: FAILED\n",
			n, nd[n].pos + 1, F);
#endif
		CHECK_GAP(!nd[n].held,
			"I-gap violated: a copy that holds finds a gap in the log\n");
#ifdef REMAKE
		REMAKE_BEGIN(n)
#else
		FAIL(n)
#endif
	:: else ->
		nd[n].pos++;
		printf("apply: n%d applies record %d\n", n, nd[n].pos);
		for (zi : 0 .. NP - 1) {
			if
			:: IN(rec[nd[n].pos - 1], zi) -> WRITE(n, zi, nd[n].pos)
			:: else -> skip
			fi
		}
		if
		:: nd[n].st == STARTING && nd[n].pos == last -> nd[n].st = FOLLOWING
		:: else -> skip
		fi
	fi
}

/*
 * ---- a copy marks its file a base at its position ----
 * The file is synced first, then the marker written, and only then the
 * hold moves (to pos - 1): the primary may release what the durable base
 * stands for, never more.  BUG_MARK_BEFORE_SYNC: not synced.  The ghost
 * lost ends: the hold is this marker's (a remade copy's first marker too).
 */
#define G_MARK(n)	(nd[n].st == FOLLOWING && nd[n].pos > nd[n].mk)
inline MARK(n) {
#ifndef BUG_MARK_BEFORE_SYNC
	printf("mark: n%d syncs its copy and marks it at %d\n", n, nd[n].pos);
	SYNC(n);
#else
	printf("mark: n%d marks its copy at %d (not synced)\n", n, nd[n].pos);
#endif
	nd[n].mk = nd[n].pos;
	nd[n].hold = nd[n].pos - 1;
	nd[n].lost = 0
}

/*
 * ---- node n crashes (repld, or the application on the primary) ----
 * Each page written since the last sync reached the disk (keep), did not
 * (it reverts to its durable content) or was torn (garbage: tear).  By
 * default every such page is torn: no guard reads a page's content and
 * no check accepts garbage, so whatever a kept or reverted page makes
 * fail, a torn one makes fail at the same step (docs/model.md);
 * CRASH_CHOICES searches the three outcomes of each page.  The primary's
 * -wal is gone with it (its frames are the log's, which holds them).  A
 * copy's hold stays counted while it is down; an old primary's node will
 * run as a replica whose hold is its own marker's (the next primary
 * releases nothing until it has heard from every replica), so it holds
 * from then on.  REMAKE: a remaking copy's new file is lost with it (it
 * starts over), and it no longer waits for an image (the pin ends); a
 * primary's image ends with it, and its pin: a copy the image was begun
 * for asks the next primary.
 */
#define G_CRASH(n)	(nd[n].st != DOWN)
#ifdef CRASH_CHOICES
inline CHOOSE1(n, p) {
	if
	:: IN(nd[n].dirty, p) ->
		if
		:: pb = pb | BIT(p)
		:: pc = pc | BIT(p)
		:: skip
		fi
	:: else -> skip
	fi
}
inline CHOOSE_CRASH(n) {
	CHOOSE1(n, 0);
	CHOOSE1(n, 1);
	CHOOSE1(n, 2)
}
#else
inline CHOOSE_CRASH(n) {
	pc = nd[n].dirty
}
#endif
inline CRASH(n, keep, tear) {
	printf("crash: n%d", n);
	if
	:: nd[n].dirty != 0 ->
		printf(" (pages not synced:");
		if
		:: keep != 0 -> printf(" kept "); SHOW_PAGES(keep)
		:: else -> skip
		fi;
		if
		:: tear != 0 -> printf(" torn "); SHOW_PAGES(tear)
		:: else -> skip
		fi;
		if
		:: (nd[n].dirty & ~(keep | tear)) != 0 ->
			printf(" reverted "); SHOW_PAGES(nd[n].dirty & ~(keep | tear))
		:: else -> skip
		fi;
		printf(")")
	:: else -> skip
	fi;
	printf("\n");
	for (zi : 0 .. NP - 1) {
		if
		:: IN(keep, zi) -> nd[n].dur[zi] = nd[n].vol[zi]
		:: IN(tear, zi) -> nd[n].dur[zi] = GARB
		:: else -> skip
		fi;
		nd[n].vol[zi] = 0
	}
	nd[n].dirty = 0;
	if
	:: n == pr ->
		pr = NOPR;
		ck = 0;
		nd[n].held = 1;
		nd[n].hold = HOLD_AT(nd[n].mk)
#ifdef REMAKE
		;
		ib = 0;
		inx = 0;
		ifirst = 0;
		pin = 0;
		for (zi : 0 .. NN - 1) {
			if
			:: nd[zi].want == 2 -> nd[zi].want = 1
			:: else -> skip
			fi
		}
#endif
	:: else -> skip
	fi;
	nd[n].st = DOWN;
#ifdef FROM_FIRST
	nd[n].first = 0;
#endif
#ifdef REMAKE
	DROP_NEW(n);
	nd[n].want = 0;
	PIN_LOOK();
#endif
	nd[n].pos = 0
}

/*
 * ---- failover: the application opens the database on node n ----
 * n's repld is stopped (its copy DOWN).  The rebuild: with the log
 * beginning at 1, from an empty file; else from n's file as a base, only
 * if its marker m reaches F - 1 (F <= m + 1), else the open fails
 * (allowed: not an error).  Every record F .. last is applied over it;
 * the result (I-rebuild: db@last) is synced, renamed over n's file and
 * marked at last.  BUG_REBUILD_SHORT_BASE: n's file is taken whatever its
 * marker says.
 */
#ifdef BUG_REBUILD_SHORT_BASE
#define BASE_OK(n)	1
#else
#define BASE_OK(n)	(F == 1 || (nd[n].mk > 0 && F <= nd[n].mk + 1))
#endif
#define G_PROMOTE(n)	(pr == NOPR && nd[n].st == DOWN && BASE_OK(n))
inline PROMOTE(n) {
	if
	:: F == 1 -> printf("promote: n%d rebuilds from an empty file", n)
	:: else -> printf("promote: n%d rebuilds from its file (marker %d)", n, nd[n].mk)
	fi;
	printf(" and records %d..%d\n", F, last);
	for (zi : 0 .. NP - 1) {
		img[zi] = (F == 1 -> 0 : nd[n].dur[zi])
	}
	for (zt : F .. last) {
		for (zi : 0 .. NP - 1) {
			if
			:: IN(rec[zt - 1], zi) -> img[zi] = zt
			:: else -> skip
			fi
		}
	}
	for (zi : 0 .. NP - 1) {
		DBAT(last, zi);
		CHECK_REBUILD(img[zi] == zv, "I-rebuild violated: the rebuilt file is not the database\n");
		nd[n].dur[zi] = img[zi];
		nd[n].vol[zi] = 0;
		img[zi] = 0
	}
	nd[n].dirty = 0;
	nd[n].mk = last;
	nd[n].st = PRIMARY;
	nd[n].held = 0;
	nd[n].hold = 0;
	nd[n].lost = 0;
	pr = n;
	ck = last
}

/* ---- node n's copy is lost (its disk replaced): an empty file, no
 * marker; the primary still counts the hold it last heard ---- */
#define G_LOSE(n)	(losses < MAXLOSS && nd[n].st == DOWN)
inline LOSE(n) {
	printf("lose: n%d's file and marker are gone\n", n);
	for (zi : 0 .. NP - 1) {
		nd[n].dur[zi] = 0
	}
	nd[n].mk = 0;
	nd[n].lost = 1;
	losses++
}

/*
 * ---- a failed copy n is made anew from node s's base ----
 * Its repld stopped, it takes a consistent snapshot of s's file at s's
 * marker (s stopped: a replica whose repld is down, or the primary's node
 * while the application is closed), with the marker, and holds from it
 * at once.  s must be a base the log still continues (F <= marker + 1).
 * With REMAKE no copy fails (one that cannot follow is remade): a copy
 * whose repld is stopped is seeded so instead (docs/sqlite.md, "Replacing
 * a lost node", step 5).
 */
#ifdef REMAKE
#define SEEDABLE(n)	(nd[n].st == FAILED || nd[n].st == DOWN)
#else
#define SEEDABLE(n)	(nd[n].st == FAILED)
#endif
#define G_RESEED(n, s)	(n != s && SEEDABLE(n) && nd[s].st == DOWN && \
			 nd[s].mk > 0 && F <= nd[s].mk + 1)
inline MAKE_ANEW(n, s) {
	printf("reseed: n%d takes n%d's file and marker %d\n", n, s, nd[s].mk);
	for (zi : 0 .. NP - 1) {
		nd[n].dur[zi] = nd[s].dur[zi];
		nd[n].vol[zi] = 0
	}
	nd[n].dirty = 0;
	nd[n].mk = nd[s].mk;
	nd[n].hold = HOLD_AT(nd[s].mk);
	nd[n].held = 1;
	nd[n].lost = 0;
	nd[n].st = DOWN
}

#ifdef REMAKE
/*
 * ---- the primary begins an image for the copies that ask ----
 * (Heartbeats are instant: it sees every request at once.)  Its base B
 * is its marker: the durable file is db@B on every page no record after
 * B writes (I-marker), and a checkpoint writes only pages records after
 * B write.  It pins its releases at B (nothing after B goes) until every
 * copy it begins the image for holds, or is gone.  One image at a time,
 * and none while a pin waits.
 */
#define ASKS(n)		(nd[n].want == 1)
#if NN > 2
#define ANY_ASKS	(ASKS(0) || ASKS(1) || ASKS(2))
#else
#define ANY_ASKS	(ASKS(0) || ASKS(1))
#endif
#define G_IMG_BEGIN	(pr != NOPR && ib == 0 && pin == 0 && ANY_ASKS && \
			 nd[pr].mk > 0)
inline IMG_BEGIN() {
	printf("image: n%d begins its image at its base %d and pins releases there\n",
		pr, nd[pr].mk);
	ib = nd[pr].mk;
	inx = 0;
	ifirst = 0;
	pin = ib;
	for (zi : 0 .. NN - 1) {
		if
		:: nd[zi].want == 1 -> nd[zi].want = 2
		:: else -> skip
		fi
	}
}

/*
 * ---- the primary writes the next page of its image into the log ----
 * Page inx of its file as it is now (no lock: what a reader of the file
 * sees), as record last + 1; the first names the base.  torn: the page
 * was read while a checkpoint wrote it, which only a page that a record
 * in (ck, last] writes can be (a checkpoint writes no other).
 */
#define G_IMG_PAGE	(pr != NOPR && ib != 0 && last < NT)
#define TORN_READ	(IN(CH(ck, last), inx))
inline IMG_PAGE(torn) {
	zv = (torn -> GARB : VIEW(pr, inx));
	printf("image: n%d reads page %d of its file (", pr, inx);
	SHOW_CONTENT(zv);
	printf(") into record %d", last + 1);
	rec[last] = 0;
	iv[last] = zv | (inx << 4);
	if
	:: inx == 0 ->
		printf(", the image's first (base %d)", ib);
		ifb[last] = ib;
		ifirst = last + 1
	:: else -> ifb[last] = 0
	fi;
	printf("\n");
	last++;
	inx++;
	if
	:: inx == NP -> ib = 0; inx = 0
	:: else -> skip
	fi
}

/*
 * ---- a copy reads the first record of the image begun for it ----
 * It holds the records after B at once (hold B), so the pin is no longer
 * needed for it, and starts an empty new file from B.
 */
#define G_TAKE(n)	(nd[n].st == REMAKING && nd[n].want == 2 && \
			 ifirst != 0 && F <= ifirst)
inline TAKE(n) {
	nd[n].il = ifirst;
	nd[n].want = 0;
	nd[n].pos = ifb[ifirst - 1];
	nd[n].hold = nd[n].pos;
	nd[n].held = 1;
	printf("take: n%d reads the image at %d (base %d) and holds from it\n",
		n, ifirst, nd[n].pos);
	PIN_LOOK()
}

/*
 * What a remaking copy holds once it applied record t into its new file:
 * the records from t on (hold t - 1), as a marked copy holds from its
 * marker, so that the mark at the install (hold t - 1 again) does not move
 * it back.  BUG_REMAKE_HOLD_BACK: the records after t only (hold t); the
 * release may then take t, and the mark's hold, t - 1, counts for nothing.
 */
#ifdef BUG_REMAKE_HOLD_BACK
#define HOLD_APPLIED(t)	(t)
#else
#define HOLD_APPLIED(t)	((t) - 1)
#endif

/* a remaking copy starts over with image record t (a first, base zb) */
inline RESTART(n, t) {
	DROP_NEW(n);
	nd[n].il = t;
	nd[n].pos = zb;
	nd[n].hold = zb;
	nd[n].held = 1
}

/*
 * ---- a remaking copy applies the next record into its new file ----
 * A transaction writes its pages (whole); a page of its image only where
 * no transaction of this remake wrote (BUG_IMAGE_OVERWRITES: everywhere).
 * Other images' records before its own are passed over.  A later image's
 * first record (another copy's, or a new primary's) starts it over with
 * that image, as the code does: that base was not pinned for it, so if
 * the log no longer holds the records after it, it asks again (the code
 * finds that gap at its next batch).  The hold moves up with what it
 * applied (HOLD_APPLIED): the new file is no base, and a copy that starts
 * over asks for a new image.  A gap in its own image's records (a hold
 * that did not keep them): it asks again, but I-gap says that never
 * happens.
 */
#define G_RAPPLY(n)	(nd[n].st == REMAKING && nd[n].il != 0 && \
			 nd[n].pos < last)
inline RAPPLY(n) {
	if
	:: nd[n].pos + 1 < F ->
		printf("remake: n%d needs record %d, the log begins at %d: it asks again\n",
			n, nd[n].pos + 1, F);
		CHECK_GAP(!nd[n].held,
			"I-gap violated: a remaking copy that holds finds a gap in the log\n");
		ASK(n)
	:: else ->
		zt = nd[n].pos + 1;
		if
		:: rec[zt - 1] != 0 ->
			printf("remake: n%d applies record %d into its new file\n", n, zt);
			for (zi : 0 .. NP - 1) {
				if
				:: IN(rec[zt - 1], zi) -> nd[n].nf[zi] = zt
				:: else -> skip
				fi
			}
			nd[n].nw = nd[n].nw | rec[zt - 1];
			nd[n].pos = zt;
			nd[n].hold = HOLD_APPLIED(zt)
		:: rec[zt - 1] == 0 && ifb[zt - 1] != 0 && zt > nd[n].il ->
			zb = ifb[zt - 1];
			if
			:: F <= zb + 1 ->
				printf("remake: n%d finds a later image at %d (base %d): it starts over with it\n",
					n, zt, zb);
				RESTART(n, zt)
			:: else ->
				printf("remake: n%d finds a later image at %d (base %d), released past: it asks again\n",
					n, zt, zb);
				ASK(n)
			fi
		:: rec[zt - 1] == 0 && zt >= nd[n].il && nd[n].ipg < NP &&
		   (zt == nd[n].il || ifb[zt - 1] == 0) ->
			zi = iv[zt - 1] >> 4;
			if
#ifndef BUG_IMAGE_OVERWRITES
			:: IN(nd[n].nw, zi) ->
				printf("remake: n%d passes over image page %d at %d (a transaction wrote it)\n",
					n, zi, zt)
#endif
			:: else ->
				printf("remake: n%d writes image page %d at %d into its new file\n",
					n, zi, zt);
				nd[n].nf[zi] = iv[zt - 1] & 15
			fi;
			nd[n].ipg++;
			nd[n].pos = zt;
			nd[n].hold = HOLD_APPLIED(zt)
		:: else ->
			printf("remake: n%d passes over record %d (another image's)\n", n, zt);
			nd[n].pos = zt;
			nd[n].hold = HOLD_APPLIED(zt)
		fi
	fi
}

/*
 * ---- a remade copy installs its new file ----
 * Once its image's last page is in (the code also waits until it caught
 * up, which the model need not), the new file is written over the copy
 * under the lock (not synced: a crash tears it, and with no marker the
 * copy starts over), and it follows from there; mark then syncs it and
 * writes the marker (rule 1).  BUG_IMAGE_MARK_EARLY: the marker at once.
 */
#define G_INSTALL(n)	(nd[n].st == REMAKING && nd[n].il != 0 && \
			 nd[n].ipg == NP)
inline INSTALL(n) {
	printf("install: n%d writes its new file over its copy, at %d\n", n, nd[n].pos);
	for (zi : 0 .. NP - 1) {
		DBAT(nd[n].pos, zi);
		CHECK_REMAKE(nd[n].nf[zi] == zv,
			"I-remake violated: the remade file is not the database at its position\n");
		WRITE(n, zi, nd[n].nf[zi])
	}
	DROP_NEW(n);
	nd[n].st = FOLLOWING
#ifdef BUG_IMAGE_MARK_EARLY
	;
	nd[n].mk = nd[n].pos;
	nd[n].hold = nd[n].pos - 1;
	nd[n].lost = 0
#endif
}

/*
 * ---- a remaking copy gives up and asks again ----
 * Whatever stops an image it waits for or applies (a failover that cut it
 * short, the pin's time-out): it lets go and asks, as at its start.
 */
#define G_GIVEUP(n)	(nd[n].st == REMAKING && (nd[n].il != 0 || nd[n].want == 2))
inline GIVEUP(n) {
	printf("give up: n%d drops its image and asks again\n", n);
	ASK(n);
	PIN_LOOK()
}
#endif

/* ---- the invariants checked in every state ---- */
inline CHECKS() {
	for (zi : 0 .. NN - 1) {
		/* I-marker: a marker is true of the durable file */
		if
		:: nd[zi].mk > 0 ->
			for (zt : 0 .. NP - 1) {
				if
				:: !IN(CH(nd[zi].mk, last), zt) ->
					DBAT(nd[zi].mk, zt);
					CHECK_MARKER(nd[zi].dur[zt] == zv,
						"I-marker violated: a page of a marked file is not the database at its marker\n")
				:: else -> skip
				fi
			}
		:: else -> skip
		fi;
		/* I-copy: a following copy is the database at its position */
		if
		:: nd[zi].st == FOLLOWING ->
			for (zt : 0 .. NP - 1) {
				DBAT(nd[zi].pos, zt);
				CHECK_COPY(VIEW(zi, zt) == zv,
					"I-copy violated: a following copy is not the database at its position\n")
			}
		:: else -> skip
		fi;
		/* I-wedge: a failed copy holds nothing, nor one that waits
		 * for an image */
		CHECK_WEDGE(!(nd[zi].st == FAILED && nd[zi].held),
			"I-wedge violated: the log is kept for a failed copy\n")
#ifdef REMAKE
		;
		CHECK_WEDGE(!(nd[zi].st == REMAKING && nd[zi].il == 0 && nd[zi].held),
			"I-wedge violated: the log is kept for a copy that waits for an image\n")
#endif
	}
}

#define A_APPEND	1
#define A_CKPT		2
#define A_BASE		3
#define A_RELEASE	4
#define A_START		5
#define A_APPLY		6
#define A_MARK		7
#define A_CRASH		8
#define A_PROMOTE	9
#define A_LOSE		10
#define A_RESEED	11
#define A_IMG_BEGIN	12
#define A_IMG_PAGE	13
#define A_TAKE		14
#define A_RAPPLY	15
#define A_INSTALL	16
#define A_GIVEUP	17

#define P1(G, X, a)	:: G(a) -> act = X; pa = a
#define P2(G, X, a, b)	:: G(a, b) -> act = X; pa = a; pb = b
#if NN > 2
#define EACH(M, ...)	M(__VA_ARGS__, 0) M(__VA_ARGS__, 1) M(__VA_ARGS__, 2)
#define EACH2(M, ...)	M(__VA_ARGS__, 0) M(__VA_ARGS__, 1) M(__VA_ARGS__, 2)
#else
#define EACH(M, ...)	M(__VA_ARGS__, 0) M(__VA_ARGS__, 1)
#define EACH2(M, ...)	M(__VA_ARGS__, 0) M(__VA_ARGS__, 1)
#endif
#define NODE2(G, X, a)	EACH2(P2, G, X, a)
#if NT > 5
#define LSNS(M, ...)	M(__VA_ARGS__, 1) M(__VA_ARGS__, 2) M(__VA_ARGS__, 3) \
			M(__VA_ARGS__, 4) M(__VA_ARGS__, 5) M(__VA_ARGS__, 6)
#elif NT > 4
#define LSNS(M, ...)	M(__VA_ARGS__, 1) M(__VA_ARGS__, 2) M(__VA_ARGS__, 3) \
			M(__VA_ARGS__, 4) M(__VA_ARGS__, 5)
#elif NT > 3
#define LSNS(M, ...)	M(__VA_ARGS__, 1) M(__VA_ARGS__, 2) M(__VA_ARGS__, 3) \
			M(__VA_ARGS__, 4)
#elif NT > 2
#define LSNS(M, ...)	M(__VA_ARGS__, 1) M(__VA_ARGS__, 2) M(__VA_ARGS__, 3)
#else
#define LSNS(M, ...)	M(__VA_ARGS__, 1) M(__VA_ARGS__, 2)
#endif
/* a nonempty set of pages s within m, into pb */
#define PS(m, s)	:: (s) <= ALLPAGES && ((s) & ~(m)) == 0 -> pb = s
#define SUBSETS(m)	PS(m, 1) PS(m, 2) PS(m, 3) PS(m, 4) PS(m, 5) PS(m, 6) PS(m, 7)

init {
	d_step {
		/* n0 opens the (empty) database: the primary; every other
		 * node's copy holds everything until it starts */
		nd[0].st = PRIMARY;
		pr = 0;
		for (zi : 1 .. NN - 1) {
			nd[zi].held = 1
		}
	}
end:	do
	:: atomic {
		if
		:: G_APPEND -> act = A_APPEND
		LSNS(P1, G_CKPT, A_CKPT)
		:: G_BASE -> act = A_BASE
		:: G_RELEASE -> act = A_RELEASE
		EACH(P1, G_START, A_START)
		EACH(P1, G_APPLY, A_APPLY)
		EACH(P1, G_MARK, A_MARK)
		EACH(P1, G_CRASH, A_CRASH)
		EACH(P1, G_PROMOTE, A_PROMOTE)
#if MAXLOSS > 0
		EACH(P1, G_LOSE, A_LOSE)
#endif
#ifdef RESEED
		EACH(NODE2, G_RESEED, A_RESEED)
#endif
#ifdef REMAKE
		:: G_IMG_BEGIN -> act = A_IMG_BEGIN
		:: G_IMG_PAGE -> act = A_IMG_PAGE
		EACH(P1, G_TAKE, A_TAKE)
		EACH(P1, G_RAPPLY, A_RAPPLY)
		EACH(P1, G_INSTALL, A_INSTALL)
		EACH(P1, G_GIVEUP, A_GIVEUP)
#endif
		fi;
		/* the choices: pages written, or what a crash left of each */
		if
		:: act == A_APPEND -> if SUBSETS(ALLPAGES) fi
		:: act == A_CKPT ->
#ifdef PARTIAL_CKPT
			/* (none: image records only, which write no page) */
			if SUBSETS(CH(ck, pa)) :: CH(ck, pa) == 0 -> pb = 0 fi
#else
			pb = CH(ck, pa)
#endif
		:: act == A_CRASH -> CHOOSE_CRASH(pa)
#ifdef REMAKE
		/* a page read while a checkpoint writes it */
		:: act == A_IMG_PAGE ->
			if
			:: TORN_READ -> pb = 1
			:: skip
			fi
#endif
		:: else -> skip
		fi;
		d_step {
			if
			:: act == A_APPEND -> APPEND(pb)
			:: act == A_CKPT -> CHECKPOINT(pa, pb)
			:: act == A_BASE -> BASE()
			:: act == A_RELEASE -> RELEASE()
			:: act == A_START -> START(pa)
			:: act == A_APPLY -> APPLY(pa)
			:: act == A_MARK -> MARK(pa)
			:: act == A_CRASH -> CRASH(pa, pb, pc)
			:: act == A_PROMOTE -> PROMOTE(pa)
			:: act == A_LOSE -> LOSE(pa)
			:: act == A_RESEED -> MAKE_ANEW(pa, pb)
#ifdef REMAKE
			:: act == A_IMG_BEGIN -> IMG_BEGIN()
			:: act == A_IMG_PAGE -> IMG_PAGE(pb)
			:: act == A_TAKE -> TAKE(pa)
			:: act == A_RAPPLY -> RAPPLY(pa)
			:: act == A_INSTALL -> INSTALL(pa)
			:: act == A_GIVEUP -> GIVEUP(pa)
#endif
			fi;
			CHECKS();
			SHOW();
			act = 0; pa = 0; pb = 0; pc = 0
		}
	}
	od
}
