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
 *   NT       records appended in a run (2 to 6)
 *   MAXLOSS  copies lost in a run (the file and its marker gone, as on a
 *            replaced disk)
 *   RESEED   a failed copy may be made anew from another node's base
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
 *   I-wedge   no FAILED copy's hold is counted by the primary
 *   NO_I_MARKER, NO_I_REBUILD, NO_I_COPY, NO_I_GAP, NO_I_WEDGE: that one
 *             is not checked (for a run that shows another)
 *
 * The rules put back the way they were, or broken (each must be found):
 *   BUG_COPY_FROM_FIRST   at start a copy with marker m holds from m but
 *                         applies the log again from its first record,
 *                         keeping its marker (the code before the fix)
 *   BUG_MARK_BEFORE_SYNC  a marker is written before the file is synced
 *   BUG_NO_BASE_FROM_FIRST a copy without a marker does not fail when the
 *                         log was released: it applies the log from its
 *                         first record over its empty file, and marks it
 *   BUG_FAILED_KEEPS_HOLD a FAILED copy's hold still counts
 *   BUG_REBUILD_SHORT_BASE a rebuild takes the node's file as its base
 *                         whatever its marker says
 *   BUG_RELEASE_PAST_HOLDS the primary releases up to its base whatever
 *                         the holds
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
	bit lost;	/* ghost: its file was lost since it last started (the
			 * hold the primary counts was the old file's) */
#ifdef FROM_FIRST
	bit first;	/* starting: its first read is still to come */
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
 * it ends when the copy fails.
 */
#define HB(n)		(nd[n].held -> nd[n].hold + 1 : 255)
#if NN > 2
#define HOLDS_BOUND	MIN(HB(0), MIN(HB(1), HB(2)))
#else
#define HOLDS_BOUND	MIN(HB(0), HB(1))
#endif
#ifdef BUG_RELEASE_PAST_HOLDS
#define RELEASE_TO	(nd[pr].mk)
#else
#define RELEASE_TO	MIN(nd[pr].mk, HOLDS_BOUND)
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
			if
			:: nd[zi].held -> printf("  hold %d", nd[zi].hold)
			:: else -> skip
			fi;
			if
			:: nd[zi].lost -> printf("  (file lost)")
			:: else -> skip
			fi;
			printf("\n")
		}
		printf("    log %d..%d  records", F, last);
		for (zi : 1 .. last) {
			printf(" %d", zi);
			SHOW_PAGES(rec[zi - 1])
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

/* a copy fails: its hold ends with it (the primary stops counting it) and
 * its marker stays, true since every write into the file was forward;
 * BUG_FAILED_KEEPS_HOLD: the hold stays, and the log can never be
 * released past it again */
inline FAIL(n) {
	nd[n].st = FAILED;
	nd[n].pos = 0;
#ifdef FROM_FIRST
	nd[n].first = 0;
#endif
#ifndef BUG_FAILED_KEEPS_HOLD
	nd[n].held = 0;
	nd[n].hold = 0
#endif
}

/* ---- the primary appends record last + 1, writing the pages s ---- */
#define G_APPEND	(pr != NOPR && last < NT)
inline APPEND(s) {
	printf("append: record %d writes pages ", last + 1);
	SHOW_PAGES(s);
	printf("\n");
	rec[last] = s;
	last++
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
 * the log from its first record too, over its empty file.
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
		:: F > nd[n].mk + 1 -> FAIL(n)
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
 * the copy fails.  A copy that starts applies under one lock until it
 * has caught up (readers see the file as the last run left it), then
 * FOLLOWING.
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
		printf("apply: n%d needs record %d, the log begins at %d: FAILED\n",
			n, nd[n].pos + 1, F);
		CHECK_GAP(!nd[n].held,
			"I-gap violated: a copy that holds finds a gap in the log\n");
		FAIL(n)
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
 * stands for, never more.  BUG_MARK_BEFORE_SYNC: not synced.
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
	nd[n].hold = nd[n].pos - 1
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
 * from then on.
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
	:: else -> skip
	fi;
	nd[n].st = DOWN;
#ifdef FROM_FIRST
	nd[n].first = 0;
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
 */
#define G_RESEED(n, s)	(n != s && nd[n].st == FAILED && nd[s].st == DOWN && \
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
		/* I-wedge: a failed copy holds nothing */
		CHECK_WEDGE(!(nd[zi].st == FAILED && nd[zi].held),
			"I-wedge violated: the log is kept for a failed copy\n")
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
		fi;
		/* the choices: pages written, or what a crash left of each */
		if
		:: act == A_APPEND -> if SUBSETS(ALLPAGES) fi
		:: act == A_CKPT ->
#ifdef PARTIAL_CKPT
			if SUBSETS(CH(ck, pa)) fi
#else
			pb = CH(ck, pa)
#endif
		:: act == A_CRASH -> CHOOSE_CRASH(pa)
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
			fi;
			CHECKS();
			SHOW();
			act = 0; pa = 0; pb = 0; pc = 0
		}
	}
	od
}
