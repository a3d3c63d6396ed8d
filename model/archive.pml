/*
 * archive.pml -- the archiver's own state as a SPIN model: what repld's
 * archiver (tools/repld/archiver.c) has published to the archive, the
 * gaps it has said, the hold it keeps on the log, the log-archiver key
 * that lets one node archive at a time, and what the primary knows of
 * each replica's hold when it releases.  docs/model.md ("The archive")
 * describes it, and docs/replication.md ("Held records", "The archive's
 * hold") the rules it checks; tests/model/check-model.sh runs it (the
 * runs named archive*).
 *
 * The replication protocol is not modelled again (repl.pml is that
 * model): every record appended is committed at once, and every node's
 * log holds it from its append until it is released.  A release moves F,
 * the first record every node's log holds, as in bases.pml.  A real
 * replica's own log may keep more: a down replica's log does not move,
 * and rule 1 stops a streaming replica's checkpoint at its hold.  So F is
 * conservative, except where that is what a rule relies on: the release
 * is bounded by the current hold of every connected replica (rule 1 and
 * the release's SET_HEAD round), and by a disconnected holder's
 * checkpoint, which is F when it went down (rule 3).
 *
 * Nodes n0 .. NN-1: n0 starts as the primary, the others as replicas
 * whose repld has just started (each holds its whole log until its
 * archiver's first round).  Every node has the archive configured; a
 * replica archives while it holds the log-archiver key, and with
 * archive.on = "any" (the default here) the primary may hold it too.
 * Records 1 .. NT; the archive is meant to hold every one from 1 on.
 *
 * Bounds (spin -DNAME=VALUE):
 *   NN        nodes (3)
 *   NT        records appended in a run (5)
 *   MAXCRASH  crashes of a replica's repld (2)
 *   MAXFAIL   failovers: the primary crashes, a replica is promoted (1)
 *   MAXDROP   holds let go of for space: the archiver's archive.max_hold
 *             and the primary's retention.replica_max_hold together (1)
 *
 * Switches:
 *   ON_REPLICA  archive.on = "replica": the archiving node, promoted,
 *             gives up the key and its hold; the primary never archives
 *   NO_KEY    no log-archiver key: every node that may archive does, as
 *             they would if etcd's key failed
 *
 * The invariants, checked after every step:
 *   I-gap     the archive has no hole (a record below the highest one
 *             archived that is not archived) unless a hold was let go of
 *             for space (the ghost dropped)
 *   I-said    every hole in the archive is a gap an archiver said
 *   NO_I_GAP, NO_I_SAID: that one is not checked
 *
 * The rules broken (each must be found):
 *   BUG_HOLD_FROM_NEXT     the hold is at next, the first record not yet
 *                          read, not at keep, the first not published: a
 *                          failed publish re-reads records let go of
 *   BUG_NO_ATTACH_HOLD     a restarted archiver holds nothing until its
 *                          first round
 *   BUG_DOWN_HOLD_FORGOTTEN the primary stops counting a replica's hold
 *                          when the replica goes down (rule 3 off)
 *   BUG_UNSEEN_RELEASES    a new primary releases before every replica
 *                          has connected to it once
 *   BUG_NO_GAP_CHECK       an archiver that lists the archive goes on from
 *                          max(e + 1, F) without saying a gap
 * and three that are the code as it was before the hand-over rule
 * (docs/model.md, "The archive", the findings), which the model found
 * unsafe and the code now follows (archiver.c's standby and
 * archiver_primary_hold, node_ha.c's op_archive_wanted):
 *   BUG_TAKE_UNHELD        a node that takes the key holds nothing until
 *                          its round has listed the archive
 *   BUG_TAKE_UNCONNECTED   a replica takes the key whenever it is free,
 *                          before the primary knows the replica holds
 *   BUG_PROMOTED_UNHELD    the archiving node promoted (archive.on =
 *                          "any"): its retention counts its hold only from
 *                          its first round as the primary
 */
#ifndef SHOW_TRAIL
#define SHOW_TRAIL	0
#endif
#ifndef NN
#define NN	3
#endif
#ifndef NT
#define NT	5
#endif
#ifndef MAXCRASH
#define MAXCRASH	2
#endif
#ifndef MAXFAIL
#define MAXFAIL	1
#endif
#ifndef MAXDROP
#define MAXDROP	1
#endif
#if NN != 3
#error "archive.pml is written for 3 nodes"
#endif
#if NT > 6
#error "records are bits 1 .. NT of a byte: NT is at most 6"
#endif

#define NONE		7	/* no node (the primary, the key's holder) */
#define BIT(r)		(1 << (r))
#define IN(m, r)	(((m) >> (r)) & 1)
/* the records a .. b - 1, as a mask (a <= b) */
#define SPAN(a, b)	((1 << (b)) - (1 << (a)))
#define MIN(a, b)	((a) < (b) -> (a) : (b))

/* a node's state */
#define DOWN		0	/* repld not running */
#define STARTING	1	/* a replica whose archiver has not had its first
				 * round: it holds its whole log (the attach) */
#define STANDBY		2	/* a replica that does not archive: holds nothing */
#define ARCHIVING	3	/* a replica that archives (it holds the key) */
#define PRIMARY		4	/* the primary; it archives if it holds the key */

typedef Node {
	byte st;	/* DOWN .. PRIMARY */
	bit ar;		/* it archives (holds the key; with NO_KEY: started to) */
	bit ls;		/* archiving: its writer is open, the archive listed */
	byte nx;	/* archiving, listed: the next record to read */
	byte kp;	/* ... the first record not published (keep) */
	bit hd;		/* it holds the log: records hv .. are kept for it */
	byte hv;
	/* what the primary of the moment knows of this node (a replica) */
	bit cn;		/* connected: its first ACK to this primary came since
			 * the node (or the primary) last started */
	bit seen;	/* connected once since this primary started */
	bit held;	/* its last ACK or heartbeat said a hold, from hk */
	byte hk;
}

Node nd[NN];
byte last;		/* the last record appended (and committed) */
byte F = 1;		/* the first record every node's log holds */
byte pr;		/* the primary's node */
byte key = NONE;	/* the log-archiver key's holder (NONE: free) */
byte arch;		/* the records published (bits 1 .. NT) */
byte ae;		/* the highest of them (0: none): the archive's end */
byte said;		/* the records the archivers said were a gap */
byte crashes, fails, drops;
bit dropped;		/* ghost: a hold was let go of for space */

bit verbose = SHOW_TRAIL;

/* the action and its node and choice: 0 between steps */
byte act, pa, pb;

/* scratch of one indivisible step: not part of the state */
hidden byte zi, zv, zw;

/* ---- what a replayed trail prints (spin -t); nothing in the search ---- */
inline SHOW_MASK(m) {
	printf("{");
	zw = 0;
	for (zi : 1 .. NT) {
		if
		:: IN(m, zi) ->
			if
			:: zw -> printf(",")
			:: else -> skip
			fi;
			printf("%d", zi);
			zw = 1
		:: else -> skip
		fi
	}
	printf("}")
}
inline SHOW() {
	if
	:: verbose ->
		for (zv : 0 .. NN - 1) {
			printf("    n%d ", zv);
			if
			:: nd[zv].st == DOWN -> printf("down      ")
			:: nd[zv].st == STARTING -> printf("starting  ")
			:: nd[zv].st == STANDBY -> printf("standby   ")
			:: nd[zv].st == ARCHIVING -> printf("archiving ")
			:: nd[zv].st == PRIMARY -> printf("primary   ")
			fi;
			if
			:: nd[zv].ar && nd[zv].ls ->
				printf(" next %d keep %d", nd[zv].nx, nd[zv].kp)
			:: nd[zv].ar && !nd[zv].ls -> printf(" (to list)")
			:: else -> skip
			fi;
			if
			:: nd[zv].hd -> printf("  holds from %d", nd[zv].hv)
			:: else -> printf("  holds nothing")
			fi;
			if
			:: nd[zv].st != PRIMARY && pr != NONE ->
				printf("  | primary knows:");
				if
				:: !nd[zv].seen -> printf(" not seen")
				:: nd[zv].held -> printf(" hold from %d", nd[zv].hk)
				:: else -> printf(" no hold")
				fi;
				if
				:: nd[zv].cn -> printf(", connected")
				:: else -> skip
				fi
			:: else -> skip
			fi;
			printf("\n")
		}
		printf("    log %d..%d  archive ", F, last);
		SHOW_MASK(arch);
		if
		:: said != 0 -> printf("  said gap "); SHOW_MASK(said)
		:: else -> skip
		fi;
		if
		:: key != NONE -> printf("  key n%d", key)
		:: else -> skip
		fi;
		if
		:: dropped -> printf("  (a hold was dropped)")
		:: else -> skip
		fi;
		printf("\n")
	:: else -> skip
	fi
}

/* an invariant: the replay of a trail names it before SPIN's assert fires */
#define CHECK(cond, text)	if :: !(cond) -> printf(text) :: else -> skip fi; assert(cond)
#ifdef NO_I_GAP
#define CHECK_GAP(cond, text)	skip
#else
#define CHECK_GAP(cond, text)	CHECK(cond, text)
#endif
#ifdef NO_I_SAID
#define CHECK_SAID(cond, text)	skip
#else
#define CHECK_SAID(cond, text)	CHECK(cond, text)
#endif

/* ---- the holds and the release ---- */

/*
 * How far the primary may release: F moves to at most last (the log keeps
 * its last record), and
 * - to at most hk for every connected replica whose last ACK or
 *   heartbeat said a hold from hk (rule 2);
 * - not at all while a replica whose last word was a hold is down or not
 *   reconnected (rule 3: no further than its checkpoint, which is F when
 *   it went down; held_limit bounds a holder that is not streaming by its
 *   replica_head);
 * - to at most hv for every connected replica that holds from hv now
 *   (rule 1: its checkpoint stops at its hold when it answers the
 *   release's SET_HEAD, and the primary releases no further than a
 *   holder's checkpoint: cluster_release's second held_limit);
 * - to at most its own archiver's hold, if it archives (retention's
 *   "archive" hold).
 * A hold that begins before the log's first record counts for nothing
 * (held_limit): what it would keep is gone already.
 */
#define KB(n)	(n != pr && nd[n].held && nd[n].hk >= F -> \
			 (nd[n].cn -> nd[n].hk : F) : 255)
#define CB(n)	(n != pr && nd[n].cn && nd[n].hd && nd[n].hv >= F -> nd[n].hv : 255)
#define OB	(nd[pr].ar && nd[pr].hd && nd[pr].hv >= F -> nd[pr].hv : 255)
#define NB(n)	MIN(KB(n), CB(n))
#define RELEASE_TO	MIN(last, MIN(OB, MIN(NB(0), MIN(NB(1), NB(2)))))
/* a new primary releases nothing until every replica has connected to it
 * once (its first ACK says its hold); BUG_UNSEEN_RELEASES: at once */
#ifdef BUG_UNSEEN_RELEASES
#define ALL_SEEN	1
#else
#define SEEN(n)		(n == pr || nd[n].seen)
#define ALL_SEEN	(SEEN(0) && SEEN(1) && SEEN(2))
#endif

/* the hold of an archiver that read up to nx and published below kp */
#ifdef BUG_HOLD_FROM_NEXT
#define HOLD_AT(n)	(nd[n].nx)
#else
#define HOLD_AT(n)	(nd[n].kp)
#endif
inline HOLD_MOVE(n) {
	if
	:: nd[n].hd -> nd[n].hv = HOLD_AT(n)
	:: else -> skip
	fi
}

/* the key is free to take (NO_KEY: always, and nobody holds it) */
#ifdef NO_KEY
#define KEY_FREE	1
#define KEY_TAKE(n)	skip
#else
#define KEY_FREE	(key == NONE)
#define KEY_TAKE(n)	key = n
#endif
/*
 * A replica takes the key only once the primary of the moment knows the
 * hold it has (its whole log): connected, and its last ACK or heartbeat
 * said this hold.  BUG_TAKE_UNCONNECTED: whenever the key is free (the
 * code: the coordinator's tick takes it, whatever the replica's link).
 */
#ifdef BUG_TAKE_UNCONNECTED
#define MAY_TAKE(n)	1
#else
#define MAY_TAKE(n)	(nd[n].cn && nd[n].held && nd[n].hk == nd[n].hv && \
			 nd[n].hk >= F)
#endif

#define UP(n)		(nd[n].st == STARTING || nd[n].st == STANDBY || \
			 nd[n].st == ARCHIVING)
#define LISTED(n)	(nd[n].ar && nd[n].ls)

/* ---- the primary appends (and commits) record last + 1 ---- */
#define G_APPEND	(pr != NONE && last < NT)
inline APPEND() {
	last++;
	printf("append: record %d\n", last)
}

/*
 * ---- an archiver lists the archive ----
 * Its writer opens (the round after it took the key, after a failed
 * publish): e, the newest segment's last record (0: an empty archive).
 * It goes on from e + 1, holding from there; if its log no longer holds
 * e + 1 (F > e + 1), the records e + 1 .. F - 1 are a gap, which it says,
 * and it goes on from F.  BUG_NO_GAP_CHECK: it goes on from max(e + 1, F)
 * and says nothing.
 */
inline LIST(n) {
	printf("list: n%d finds the archive ends at %d", n, ae);
	if
	:: ae + 1 < F ->
#ifndef BUG_NO_GAP_CHECK
		printf(": records %d..%d left the log, it says a gap", ae + 1, F - 1);
		said = said | SPAN(ae + 1, F);
#else
		printf(": it goes on from %d", F);
#endif
		nd[n].nx = F
	:: else -> nd[n].nx = ae + 1
	fi;
	printf("\n");
	nd[n].kp = nd[n].nx;
	nd[n].ls = 1;
	nd[n].hd = 1;
	nd[n].hv = nd[n].kp
}
#define G_LIST(n)	(nd[n].ar && !nd[n].ls)

/*
 * ---- a replica's archiver has its round, holding its whole log ----
 * (After a restart, or after it saw the key free while it stood by.)
 * With the key held by another node it stands by and lets go of its
 * hold.  With the key free it takes it, once it may (MAY_TAKE: until
 * then it waits, holding), and lists the archive.
 */
#define G_FIRST(n)	(nd[n].st == STARTING && (!KEY_FREE || MAY_TAKE(n)))
inline FIRST(n) {
	if
	:: KEY_FREE ->
		printf("round: n%d takes the key\n", n);
		KEY_TAKE(n);
		nd[n].st = ARCHIVING;
		nd[n].ar = 1;
		LIST(n)
	:: else ->
		printf("round: n%d stands by and lets go of its hold\n", n);
		nd[n].st = STANDBY;
		nd[n].hd = 0;
		nd[n].hv = 0
	fi
}

/*
 * ---- a node that does not archive sees the key free ----
 * A standby replica holds its whole log again, as at a restart, and has
 * the round above (it takes the key once the primary knows that hold).
 * BUG_TAKE_UNHELD: it takes the key at once, holding nothing until its
 * round has listed the archive (the code: hold_from in that round).
 * With archive.on = "any" the primary may take it too: its hold is its
 * own retention's, which counts it at once (BUG_TAKE_UNHELD: only once
 * it has listed, as in the code).
 */
#ifdef ON_REPLICA
#define G_FREE(n)	(KEY_FREE && nd[n].st == STANDBY)
#else
#define G_FREE(n)	(KEY_FREE && (nd[n].st == STANDBY || \
			 (nd[n].st == PRIMARY && !nd[n].ar)))
#endif
inline FREE(n) {
	if
	:: nd[n].st == PRIMARY ->
		KEY_TAKE(n);
		nd[n].ar = 1;
		nd[n].ls = 0;
#ifndef BUG_TAKE_UNHELD
		printf("take: n%d (the primary) takes the key and holds its whole log\n", n);
		nd[n].hd = 1;
		nd[n].hv = F
#else
		printf("take: n%d (the primary) takes the key (it holds nothing until it lists)\n", n)
#endif
	:: else ->
#ifndef BUG_TAKE_UNHELD
		printf("free: n%d sees the key free and holds its whole log\n", n);
		nd[n].st = STARTING;
		nd[n].hd = 1;
		nd[n].hv = F
#else
		printf("take: n%d takes the key (it holds nothing until it lists)\n", n);
		KEY_TAKE(n);
		nd[n].st = ARCHIVING;
		nd[n].ar = 1;
		nd[n].ls = 0
#endif
	fi
}

/* ---- an archiver reads its next record ---- */
#define G_READ(n)	(LISTED(n) && nd[n].nx >= F && nd[n].nx <= last)
inline READ(n) {
	printf("read: n%d reads record %d\n", n, nd[n].nx);
	nd[n].nx++;
	HOLD_MOVE(n)
}

/*
 * ---- an archiver's round finds its next record released ----
 * (Only after a hold was let go of, if the rules hold.)  What it read and
 * did not publish goes out first (the writer's skip flushes); then the
 * records nx .. F - 1 are a gap, said, and it goes on from F.
 */
#define G_SKIP(n)	(LISTED(n) && nd[n].nx < F)
inline SKIP(n) {
	printf("round: n%d needs record %d, the log begins at %d: it publishes what it read and says a gap %d..%d\n",
		n, nd[n].nx, F, nd[n].nx, F - 1);
	arch = arch | SPAN(nd[n].kp, nd[n].nx);
	ae = (nd[n].nx - 1 > ae -> nd[n].nx - 1 : ae);
	said = said | SPAN(nd[n].nx, F);
	nd[n].nx = F;
	nd[n].kp = F;
	HOLD_MOVE(n)
}

/* ---- an archiver publishes what it read: one segment, whole ---- */
#define G_PUBLISH(n)	(LISTED(n) && nd[n].kp < nd[n].nx)
inline PUBLISH(n) {
	printf("publish: n%d publishes segment %d..%d\n", n, nd[n].kp, nd[n].nx - 1);
	arch = arch | SPAN(nd[n].kp, nd[n].nx);
	ae = (nd[n].nx - 1 > ae -> nd[n].nx - 1 : ae);
	nd[n].kp = nd[n].nx;
	HOLD_MOVE(n)
}

/*
 * ---- a publish fails (the target down) ----
 * What was read since keep is dropped with the writer; the hold stays
 * where it is (at keep), and the next round opens a new writer, which
 * lists the archive.
 */
#define G_PFAIL(n)	(LISTED(n) && nd[n].kp < nd[n].nx)
inline PFAIL(n) {
	printf("fail: n%d drops records %d..%d, to read again\n",
		n, nd[n].kp, nd[n].nx - 1);
	nd[n].nx = nd[n].kp;
	nd[n].ls = 0
}

/*
 * ---- a replica's ACK or heartbeat reaches the primary ----
 * It says the replica's hold (or none); the first since the replica or
 * the primary started connects it.
 */
#define G_REPORT(n)	(pr != NONE && UP(n) && \
			 (!nd[n].cn || nd[n].held != nd[n].hd || \
			  (nd[n].hd && nd[n].hk != nd[n].hv)))
inline REPORT(n) {
#ifndef BUG_ATTACH_HOLD_STALE
	/* a replica that holds its whole log holds it as it is once it has
	 * caught up (its first ACK): from F */
	if
	:: nd[n].st == STARTING && nd[n].hd && nd[n].hv < F ->
		printf("hold: n%d holds its whole log, now from %d\n", n, F);
		nd[n].hv = F
	:: else -> skip
	fi;
#endif
	nd[n].cn = 1;
	nd[n].seen = 1;
	nd[n].held = nd[n].hd;
	nd[n].hk = (nd[n].hd -> nd[n].hv : 0);
	if
	:: nd[n].hd -> printf("report: n%d tells the primary it holds from %d\n", n, nd[n].hv)
	:: else -> printf("report: n%d tells the primary it holds nothing\n", n)
	fi
}

/* ---- the primary releases the log up to record t - 1: F := t ---- */
#define G_RELEASE(t)	(pr != NONE && ALL_SEEN && F < t && t <= RELEASE_TO)
inline RELEASE(t) {
	F = t;
	printf("release: the log now begins at record %d\n", F)
}

/*
 * ---- an archiver lets go of its hold for space (archive.max_hold) ----
 * It reads on; its next listing holds again.
 */
#define G_DROP(n)	(drops < MAXDROP && nd[n].ar && nd[n].hd)
inline DROP(n) {
	printf("drop: n%d's log is past archive.max_hold: it lets go of its hold\n", n);
	nd[n].hd = 0;
	nd[n].hv = 0;
	dropped = 1;
	drops++
}

/*
 * ---- the primary releases past replicas that are not connected ----
 * retention.replica_max_hold: its log's use passed it, so it forgets the
 * holds of the replicas that are not connected (down, or not seen since it
 * started, or restarted and not yet back) and no longer waits to see them.
 */
#define NC(n)		(n != pr && !nd[n].cn && (!nd[n].seen || nd[n].held))
#define G_PDROP		(pr != NONE && drops < MAXDROP && (NC(0) || NC(1) || NC(2)))
inline PDROP() {
	printf("drop: the primary's log is past retention.replica_max_hold: it forgets the holds of the replicas not connected\n");
	for (zi : 0 .. NN - 1) {
		if
		:: zi != pr && !nd[zi].cn ->
			nd[zi].seen = 1;
			nd[zi].held = 0;
			nd[zi].hk = 0
		:: else -> skip
		fi
	}
	dropped = 1;
	drops++
}

/* a node's volatile state goes: the archiver's writer, its hold */
inline VOLATILE(n) {
	nd[n].ar = 0;
	nd[n].ls = 0;
	nd[n].nx = 0;
	nd[n].kp = 0;
	nd[n].hd = 0;
	nd[n].hv = 0;
	if
	:: key == n -> key = NONE
	:: else -> skip
	fi
}

/*
 * ---- a replica's repld crashes ----
 * Its archiver's state goes, and the key with it (its lease lapses).  The
 * primary still counts the hold it last heard (rule 3);
 * BUG_DOWN_HOLD_FORGOTTEN: it forgets it.
 */
#define G_CRASH(n)	(crashes < MAXCRASH && UP(n))
inline CRASH(n) {
	printf("crash: n%d\n", n);
	VOLATILE(n);
	nd[n].st = DOWN;
	nd[n].cn = 0;
#ifdef BUG_DOWN_HOLD_FORGOTTEN
	nd[n].held = 0;
	nd[n].hk = 0;
#endif
	crashes++
}

/*
 * ---- a replica's repld starts ----
 * Its archiver holds the whole log before the replica serves (before its
 * first ACK); BUG_NO_ATTACH_HOLD: nothing until its first round.
 */
#define G_RESTART(n)	(nd[n].st == DOWN)
inline RESTART(n) {
	nd[n].st = STARTING;
#ifndef BUG_NO_ATTACH_HOLD
	printf("restart: n%d, holding its whole log\n", n);
	nd[n].hd = 1;
	nd[n].hv = F
#else
	printf("restart: n%d, holding nothing\n", n)
#endif
}

/*
 * ---- failover: the primary crashes and replica n is promoted ----
 * The new primary knows no replica yet.  With archive.on = "any" an
 * archiving n archives on from its own log (its writer stays; its hold,
 * now retention's, is taken again at its first round as the primary,
 * which lists); with "replica" (ON_REPLICA) it gives up the key and holds
 * nothing.  A replica that did not archive holds nothing as the primary.
 */
#define G_FAILOVER(n)	(pr != NONE && fails < MAXFAIL && UP(n))
inline FAILOVER(n) {
	printf("failover: n%d crashes, n%d is promoted", pr, n);
	VOLATILE(pr);
	nd[pr].st = DOWN;
	for (zi : 0 .. NN - 1) {
		nd[zi].cn = 0;
		nd[zi].seen = 0;
		nd[zi].held = 0;
		nd[zi].hk = 0
	}
	nd[n].st = PRIMARY;
	if
#ifndef BUG_PROMOTED_UNHELD
	:: nd[n].ar -> skip
#else
	:: nd[n].ar -> nd[n].hd = 0; nd[n].hv = 0; nd[n].ls = 0
#endif
	:: else -> nd[n].hd = 0; nd[n].hv = 0
	fi;
	if
	:: nd[n].ar ->
#ifdef ON_REPLICA
		printf(": it gives up the key and its hold");
		nd[n].ar = 0;
		nd[n].ls = 0;
		nd[n].hd = 0;
		nd[n].hv = 0;
		nd[n].nx = 0;
		nd[n].kp = 0;
		if
		:: key == n -> key = NONE
		:: else -> skip
		fi
#else
		printf(": it archives on")
#endif
	:: else -> skip
	fi;
	printf("\n");
	pr = n;
	fails++
}

/* ---- the invariants, after every step ---- */
inline CHECKS() {
	zv = 0;
	for (zi : 1 .. NT) {
		if
		:: IN(arch, zi) -> zv = zi
		:: else -> skip
		fi
	}
	for (zi : 1 .. NT) {
		if
		:: zi < zv && !IN(arch, zi) ->
			CHECK_GAP(dropped,
				"I-gap violated: the archive has a hole, and no hold was dropped\n");
			CHECK_SAID(IN(said, zi),
				"I-said violated: the archive has a hole no archiver said\n")
		:: else -> skip
		fi
	}
}

#define A_APPEND	1
#define A_LIST		2
#define A_FIRST		3
#define A_FREE		4
#define A_READ		5
#define A_SKIP		6
#define A_PUBLISH	7
#define A_PFAIL		8
#define A_REPORT	9
#define A_RELEASE	10
#define A_DROP		11
#define A_PDROP		12
#define A_CRASH		13
#define A_RESTART	14
#define A_FAILOVER	15

#define P1(G, X, a)	:: G(a) -> act = X; pa = a
#define EACH(G, X)	P1(G, X, 0) P1(G, X, 1) P1(G, X, 2)
#define LSNS(G, X)	P1(G, X, 2) P1(G, X, 3) P1(G, X, 4) P1(G, X, 5) P1(G, X, 6)

init {
	d_step {
		/* n0 the primary, new: it has seen no replica; the others
		 * just started, each holding its whole log */
		nd[0].st = PRIMARY;
		pr = 0;
		for (zi : 1 .. NN - 1) {
			nd[zi].st = STARTING;
			nd[zi].hd = 1;
			nd[zi].hv = 1
		}
	}
end:	do
	:: atomic {
		if
		:: G_APPEND -> act = A_APPEND
		EACH(G_LIST, A_LIST)
		EACH(G_FIRST, A_FIRST)
		EACH(G_FREE, A_FREE)
		EACH(G_READ, A_READ)
		EACH(G_SKIP, A_SKIP)
		EACH(G_PUBLISH, A_PUBLISH)
		EACH(G_PFAIL, A_PFAIL)
		EACH(G_REPORT, A_REPORT)
		LSNS(G_RELEASE, A_RELEASE)
		EACH(G_DROP, A_DROP)
		:: G_PDROP -> act = A_PDROP
		EACH(G_CRASH, A_CRASH)
		EACH(G_RESTART, A_RESTART)
		EACH(G_FAILOVER, A_FAILOVER)
		fi;
		d_step {
			if
			:: act == A_APPEND -> APPEND()
			:: act == A_LIST -> LIST(pa)
			:: act == A_FIRST -> FIRST(pa)
			:: act == A_FREE -> FREE(pa)
			:: act == A_READ -> READ(pa)
			:: act == A_SKIP -> SKIP(pa)
			:: act == A_PUBLISH -> PUBLISH(pa)
			:: act == A_PFAIL -> PFAIL(pa)
			:: act == A_REPORT -> REPORT(pa)
			:: act == A_RELEASE -> RELEASE(pa)
			:: act == A_DROP -> DROP(pa)
			:: act == A_PDROP -> PDROP()
			:: act == A_CRASH -> CRASH(pa)
			:: act == A_RESTART -> RESTART(pa)
			:: act == A_FAILOVER -> FAILOVER(pa)
			fi;
			CHECKS();
			SHOW();
			act = 0; pa = 0
		}
	}
	od
}
