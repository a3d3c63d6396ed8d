/*
 * actions.pml -- the actions of model/repl.pml.  Every action is a guard
 * G_X(...) (an expression: the action can be taken) and a body X(...)
 * that runs inside one d_step, so it is one indivisible step.
 */

/* ---- helpers ---- */

#define LASTEP(n)	(nd[n].last > 0 -> REC_EP(nd[n].log[nd[n].last - 1]) : 0)
/* a's log is more advanced than b's: (epoch of last record, LSN) */
#define AHEAD(a, b)	(LASTEP(a) > LASTEP(b) || \
			 (LASTEP(a) == LASTEP(b) && nd[a].last > nd[b].last))
/* replica b follows primary a and is caught up with it (HELLO done) */
#define FOLLOWS(b, a)	(nd[b].synced && nd[b].prom == nd[a].prom && \
			 nd[b].pinc == nd[a].inc)
/* the nodes a primary links to: both configurations while joint */
#define LINKED(a)	(MOLD(nd[a].ms) | MNEW(nd[a].ms))
/* the nodes a promoter fences: its membership's, or the configured */
#define PLINKED(a)	(CE(nd[a].ms) != 0 -> LINKED(a) : C0)

/* replica b counts for primary a's acknowledgement of LSN c */
#define ACKS(a, b, c)	(a != b && IN(MOLD(nd[a].ms), b) && IN(nd[a].memok, b) && \
			 FOLLOWS(b, a) && nd[b].fl >= c)
#if NN > 3
#define NACKS(a, c)	(ACKS(a, 0, c) + ACKS(a, 1, c) + ACKS(a, 2, c) + ACKS(a, 3, c))
#else
#define NACKS(a, c)	(ACKS(a, 0, c) + ACKS(a, 1, c) + ACKS(a, 2, c))
#endif

/*
 * The membership promoter q counts under: its own (with
 * SELF_COUNTS_WITHOUT_MEMBERSHIP and none, the configured one).
 */
#ifdef SELF_COUNTS_WITHOUT_MEMBERSHIP
#define QMS(q)		(CE(nd[q].ms) != 0 -> nd[q].ms : MS0)
#else
#define QMS(q)		(nd[q].ms)
#endif
#define QCE(q)		CE(QMS(q))
#define QJ(q)		JT(QMS(q))
#define QMO(q)		MOLD(QMS(q))
#define QMN(q)		MNEW(QMS(q))
#define QKO(q)		KOLD(QMS(q))
#define QKN(q)		KNEW(QMS(q))
/* b counts for q: it holds q's membership M or, for M = F of config epoch
 * e + 1, the J of epoch e that F finishes (FOF: the F a J finishes into) */
#define FOF(ms)		((CE(ms) + 1) | (NEWPART(ms) << 4))
#ifdef MATCH_CONFIG_EPOCH
#define MATCHES(b, q)	(CE(nd[b].ms) == QCE(q) || \
			 (JT(nd[b].ms) && !QJ(q) && CE(nd[b].ms) + 1 == QCE(q)))
#else
#define MATCHES(b, q)	(nd[b].ms == QMS(q) || (JT(nd[b].ms) && FOF(nd[b].ms) == QMS(q)))
#endif
/*
 * Whether q may promote depends on its log alone: no lease, leader key or
 * pre-vote is waited for, so a promotion while the old primary still runs
 * (a lease expired under it, or revoked by the coordinator's takeover
 * rule) is in every run (docs/model.md, "What is left out").
 */
#ifdef SELF_COUNTS_WITHOUT_MEMBERSHIP
#define COUNTS(b, q)	(b == q -> 1 : MATCHES(b, q))
#define MAY_PROMOTE(q)	1
#else
#define COUNTS(b, q)	(MATCHES(b, q))
#define MAY_PROMOTE(q)	(CE(nd[q].ms) != 0)
#endif

/* the sum over the nodes of M(n, q, f) */
#if NN > 3
#define SUMN(M, q, f)	(M(0, q, f) + M(1, q, f) + M(2, q, f) + M(3, q, f))
#else
#define SUMN(M, q, f)	(M(0, q, f) + M(1, q, f) + M(2, q, f))
#endif
#define FENCED(b, q, f)	(b == q || IN(f, b))
#define CNT_OLD(b, q, f) (FENCED(b, q, f) && COUNTS(b, q) && IN(QMO(q), b))
#define CNT_NEW(b, q, f) (FENCED(b, q, f) && COUNTS(b, q) && IN(QMN(q), b))
#define NEWER(b, q, f)	(IN(f, b) && CE(nd[b].ms) > QCE(q))
#define TOPTERM(b, q, f) (FENCED(b, q, f) && TERM(nd[b].prom) >= MAXT)

/* v2: commit only at or past its own epoch-start record */
#ifdef NO_EPOCH_START
#define OWN_EPOCH(a, c)	1
#else
#define OWN_EPOCH(a, c)	(c >= nd[a].start)
#endif
/* v2: a member only once flushed past the epoch-start record */
#ifdef MEMBER_AT_COMMIT_ONLY
#define PAST_START(b, a)	1
#else
#define PAST_START(b, a)	(nd[b].fl >= nd[a].start)
#endif
/* --bootstrap must reach every other node of the configuration */
#ifdef BOOTSTRAP_ANY_REACHABLE
#define ALL_PEERS(a, b)	1
#else
#define ALL_PEERS(a, b)	(b == (C0 & ~(1 << a)))
#endif
#define PRISTINE(n)	(nd[n].last == 0 && nd[n].prom == 0 && CE(nd[n].ms) == 0)
#define NONE_HOLDS(b, n) (!IN(b, n) || PRISTINE(n))
#if NN > 3
#define ALL_PRISTINE(b)	(NONE_HOLDS(b, 0) && NONE_HOLDS(b, 1) && \
			 NONE_HOLDS(b, 2) && NONE_HOLDS(b, 3))
#else
#define ALL_PRISTINE(b)	(NONE_HOLDS(b, 0) && NONE_HOLDS(b, 1) && NONE_HOLDS(b, 2))
#endif


/* ---- what a replayed trail prints (spin -t); nothing in the search ---- */
inline SHOW_REC(rec) {
	if
	:: rec == 0 -> printf("   -  ")
	:: else -> printf(" %d.%d%c ", TERM(REC_EP(rec)), NODE_OF(REC_EP(rec)),
		(rec % 2 -> 39 : 32))
	fi
}
/* a set of nodes, as {0,2} */
inline SHOW_SET(m) {
	if
	:: verbose ->
		printf("{");
		zs = 0;
		for (zj : 0 .. NN - 1) {
			if
			:: IN(m, zj) ->
				if
				:: zs -> printf(",")
				:: else -> skip
				fi;
				printf("%d", zj);
				zs = 1
			:: else -> skip
			fi
		}
		printf("}")
	:: else -> skip
	fi
}
inline SHOW() {
	if
	:: verbose ->
		for (zi : 0 .. NN - 1) {
			printf("    n%d%c", zi, (nd[zi].prim -> 42 : 32));
			for (zj : 0 .. L - 1) {
				SHOW_REC(nd[zi].log[zj])
			}
			printf(" durable %d  epoch %d.%d%c ", nd[zi].fl,
				TERM(nd[zi].prom), NODE_OF(nd[zi].prom),
				(nd[zi].synced -> 32 : 63));
			if
			:: CE(nd[zi].ms) == 0 -> printf("no membership")
			:: JT(nd[zi].ms) ->
				printf("cfg %d J ", CE(nd[zi].ms));
				zm = MOLD(nd[zi].ms); SHOW_SET(zm);
				printf(" k %d -> ", KOLD(nd[zi].ms));
				zm = MNEW(nd[zi].ms); SHOW_SET(zm);
				printf(" k %d", KNEW(nd[zi].ms))
			:: else ->
				printf("cfg %d ", CE(nd[zi].ms));
				zm = MOLD(nd[zi].ms); SHOW_SET(zm);
				printf(" k %d", KOLD(nd[zi].ms))
			fi;
			if
			:: nd[zi].inc -> printf("  (new disk)\n")
			:: else -> printf("\n")
			fi
		}
		printf("    acknowledged ");
		for (zj : 0 .. L - 1) {
			SHOW_REC(acked[zj])
		}
		printf("\n")
	:: else -> skip
	fi
}

/* an invariant: the replay of a trail names it before SPIN's assert fires */
#define CHECK(cond, text)	if :: !(cond) -> printf(text) :: else -> skip fi; assert(cond)
#ifdef NO_I3
#define CHECK3(cond, text)	skip
#else
#define CHECK3(cond, text)	CHECK(cond, text)
#endif

/* node n's log holds every acknowledged record at its LSN */
#define HOLDS1(n, l)	(acked[l] == 0 || nd[n].log[l] == acked[l])
#if L > 3
#define HOLDS_ACKED(n)	(HOLDS1(n, 0) && HOLDS1(n, 1) && HOLDS1(n, 2) && HOLDS1(n, 3))
#else
#define HOLDS_ACKED(n)	(HOLDS1(n, 0) && HOLDS1(n, 1) && HOLDS1(n, 2))
#endif

/* cut node n's log after LSN c (c is evaluated more than once) */
inline TRUNCATE(n, c) {
	zj = c;
	do
	:: zj < L -> nd[n].log[zj] = 0; zj++
	:: else -> break
	od;
	if
	:: nd[n].last > c -> nd[n].last = c
	:: else -> skip
	fi;
	if
	:: nd[n].fl > c -> nd[n].fl = c
	:: else -> skip
	fi
}

/* node n stops acting as primary: its volatile primary state is gone */
inline DEMOTE(n) {
	nd[n].prim = 0;
	nd[n].start = 0;
	nd[n].commit = 0;
	nd[n].memok = 0
}

/* ---- the primary appends a record ---- */
#define G_APPEND(a)	(nd[a].prim && nd[a].last < L)
inline APPEND(a) {
	printf("append: n%d LSN %d\n", a, nd[a].last + 1);
	nd[a].log[nd[a].last] = REC(nd[a].prom, nd[a].inc);
	nd[a].last++;
#ifdef PRIMARY_SYNC
	nd[a].fl = nd[a].last
#endif
}

/* ---- a node persists what its log holds ---- */
#define G_FLUSH(a)	(nd[a].fl < nd[a].last)
inline FLUSH(a) {
	printf("flush: n%d to LSN %d\n", a, nd[a].last);
	nd[a].fl = nd[a].last
}

/*
 * ---- HELLO from primary a to node b ----
 * Refused (STALE) with an epoch below b's promise, and with b's promise
 * made to another incarnation; else b promises, fences whatever it
 * followed, and is cut after the newest LSN both logs agree on (catch-up).
 */
#define G_HELLO(a, b)	(a != b && nd[a].prim && IN(LINKED(a), b) && \
			 (nd[a].prom > nd[b].prom || \
			  (nd[a].prom == nd[b].prom && nd[a].inc == nd[b].pinc && \
			   !nd[b].synced)))
inline HELLO(a, b) {
	printf("hello: n%d -> n%d\n", a, b);
	if
	:: nd[b].prim -> DEMOTE(b)
	:: else -> skip
	fi;
	nd[b].prom = nd[a].prom;
	nd[b].pinc = nd[a].inc;
	zi = 0;
	do
	:: zi < nd[b].last && zi < nd[a].last && nd[b].log[zi] == nd[a].log[zi] -> zi++
	:: else -> break
	od;
	/* I3: the catch-up never cuts an acknowledged record */
	for (zj : zi .. L - 1) {
		CHECK3(acked[zj] == 0 || nd[b].log[zj] != acked[zj],
			"I3 violated: the catch-up cuts an acknowledged record\n")
	}
	TRUNCATE(b, zi);
	nd[b].synced = 1;
	/* a new session: b counts for a again only after MEMBERSHIP */
	nd[a].memok = nd[a].memok & ~(1 << b);
	EAGER(a, b)
}

/*
 * ---- the primary writes its next record to a caught-up replica ----
 * The RDMA write and the replica's flush are one step (docs/model.md).
 */
#define G_REPL(a, b)	(a != b && nd[a].prim && FOLLOWS(b, a) && \
			 nd[b].last < nd[a].last)
inline REPLICATE(a, b) {
	printf("replicate: n%d -> n%d LSN %d\n", a, b, nd[b].last + 1);
	nd[b].log[nd[b].last] = nd[a].log[nd[b].last];
	nd[b].last++;
	nd[b].fl = nd[b].last;
	EAGER(a, b)
}

/*
 * ---- the primary moves its commit point to LSN c ----
 * c is durable on itself and on k replicas of the configuration that
 * follow it and stored its membership; v2: only records of its own epoch
 * (at or past its epoch-start record).  Never while a change is under way.
 */
/*
 * The primary counts itself only if it belongs to the configuration (it
 * may not: a node that J removes can be promoted under J and finish it).
 * PRIMARY_OUTSIDE_COUNTS: v2's text, the primary + k replicas always.
 */
#ifdef PRIMARY_OUTSIDE_COUNTS
#define SELF_ACK(a)	1
#else
#define SELF_ACK(a)	IN(MOLD(nd[a].ms), a)
#endif
#define G_COMMIT(a, c)	(nd[a].prim && !JT(nd[a].ms) && c > nd[a].commit && \
			 c <= nd[a].fl && OWN_EPOCH(a, c) && \
			 NACKS(a, c) + SELF_ACK(a) >= KOLD(nd[a].ms) + 1)
inline COMMIT(a, c) {
	printf("commit: n%d acknowledges up to LSN %d\n", a, c);
	nd[a].commit = c;
	for (zj : 0 .. c - 1) {
		if
		:: acked[zj] == 0 ->
			acked[zj] = nd[a].log[zj];
			ackep[zj] = nd[a].prom
		:: else ->
			CHECK(acked[zj] == nd[a].log[zj],
				"I2 violated: another record was acknowledged at this LSN\n")
		fi
	}
	/* I3: each replica counted was admitted holding what was
	 * acknowledged then */
	for (zi : 0 .. NN - 1) {
		if
		:: ACKS(a, zi, c) ->
			CHECK3(nd[zi].adm,
				"I3 violated: an acknowledgement counts a node admitted without the acknowledged records\n")
		:: else -> skip
		fi
	}
	/* I1: a later primary already running holds them */
	for (zi : 0 .. NN - 1) {
		if
		:: nd[zi].prim && nd[zi].prom > nd[a].prom ->
			for (zj : 0 .. c - 1) {
				CHECK(nd[zi].log[zj] == acked[zj],
					"I1 violated: a later primary lacks a record acknowledged now\n")
			}
		:: else -> skip
		fi
	}
}

/*
 * ---- MEMBERSHIP from primary a to replica b ----
 * Only once b holds everything up to a's commit point and (v2) its
 * epoch-start record; b stores a's membership and counts for a from then.
 */
#define QUALIFIES(b, a)	(a != b && nd[a].prim && FOLLOWS(b, a) && \
			 IN((JT(nd[a].ms) -> LINKED(a) : MOLD(nd[a].ms)), b) && \
			 nd[b].fl >= nd[a].commit && PAST_START(b, a))
#define HOLDS_SAME(b, a) (nd[b].ms == nd[a].ms)
/*
 * A replica that already stores a's membership is counted as soon as it
 * qualifies (MEMBERSHIP would change nothing on it; a may still wait before
 * it commits): EAGER(a, b) at the end of HELLO and REPLICATE.  GRANT
 * stores a membership the replica does not hold.
 */
inline EAGER(a, b) {
	if
	:: QUALIFIES(b, a) && HOLDS_SAME(b, a) ->
		nd[a].memok = nd[a].memok | (1 << b);
		nd[b].adm = nd[b].adm || HOLDS_ACKED(b)
	:: else -> skip
	fi
}
#define G_GRANT(a, b)	(QUALIFIES(b, a) && !HOLDS_SAME(b, a))
inline GRANT(a, b) {
	printf("membership: n%d -> n%d (cfg %d)\n", a, b, CE(nd[a].ms));
	nd[b].ms = nd[a].ms;
	nd[a].memok = nd[a].memok | (1 << b);
	/* ghost: admitted holding every acknowledged record? */
	nd[b].adm = HOLDS_ACKED(b)
}

/* ---- a crash and restart with the disk: what was not flushed is gone ---- */
#define G_CRASH(a)	(nd[a].prim || nd[a].fl < nd[a].last)
inline CRASH(a) {
	printf("crash: n%d (disk kept)\n", a);
	DEMOTE(a);
	TRUNCATE(a, nd[a].fl)
}

/* everything on node a's disk is gone; it restarts as a new incarnation */
inline WIPE(a) {
	DEMOTE(a);
	TRUNCATE(a, 0);
	nd[a].prom = 0;
	nd[a].pinc = 0;
	nd[a].synced = 0;
	nd[a].ms = 0;
	nd[a].adm = 0;
	nd[a].inc = 1;
	losses++
}

/*
 * ---- a lost disk and a restart with --reinit ----
 * A fresh log, a new incarnation, no membership.  Before it answers
 * anything it takes as its promise the highest one among k + 1 other
 * nodes of the configuration (the set b).  REINIT_NO_FLOOR: v2's text,
 * which starts it with no promise at all (b is empty).
 */
#ifdef REINIT_NO_FLOOR
#define FLOOR_SET(a, b)	(b == 0)
#else
#define FLOOR_SET(a, b)	(!IN(b, a) && (b & ~C0) == 0 && POP(b) >= K0 + 1)
#endif
#define G_LOSE(a, b)	(begun && losses < MAXLOSS && !nd[a].inc && FLOOR_SET(a, b))
inline LOSE_DISK(a, b) {
	printf("disk lost: n%d, restarted with --reinit, promise from ", a);
	SHOW_SET(b);
	printf("\n");
	WIPE(a);
	for (zi : 0 .. NN - 1) {
		if
		:: IN(b, zi) && nd[zi].prom > nd[a].prom ->
			nd[a].prom = nd[zi].prom;
			nd[a].pinc = nd[zi].pinc
		:: else -> skip
		fi
	}
}

/*
 * ---- a lost disk and a restart with --bootstrap ----
 * It stores the configuration as membership epoch 1 unless a peer it
 * reaches (the set b) holds records, an epoch or a membership.
 */
#define G_BOOT(a, b)	(begun && losses < MAXLOSS && !nd[a].inc && IN(C0, a) && \
			 !IN(b, a) && (b & ~C0) == 0 && ALL_PEERS(a, b) && \
			 ALL_PRISTINE(b))
inline LOSE_DISK_BOOTSTRAP(a, b) {
	printf("disk lost: n%d, restarted with --bootstrap, reaching ", a);
	SHOW_SET(b);
	printf("\n");
	WIPE(a);
	nd[a].ms = MS0;
	nd[a].adm = HOLDS_ACKED(a)
}

/*
 * ---- promotion of node q, fencing the set f of nodes it reaches ----
 * Under the membership M that q holds, it counts q and the fenced nodes
 * that hold M (a fenced node holding a newer membership refuses it), picks
 * the term above every one they know, takes the most advanced log among
 * them by (epoch of the last record, LSN), and writes its epoch-start
 * record.  Where the counts fall short it changes nothing.
 */
#define G_PROMOTE(q, f)	(!nd[q].prim && MAY_PROMOTE(q) && G_FENCE(q, f))
/* the set f gives q a quorum (the rest of G_PROMOTE) */
#define G_FENCE(q, f)	(!IN(f, q) && (f & ~PLINKED(q)) == 0 && \
			 SUMN(NEWER, q, f) == 0 && SUMN(TOPTERM, q, f) == 0 && \
			 SUMN(CNT_OLD, q, f) >= POP(QMO(q)) - QKO(q) && \
			 (!QJ(q) || SUMN(CNT_NEW, q, f) >= POP(QMN(q)) - QKN(q)))
inline PROMOTE(q, f) {
	zt = TERM(nd[q].prom);
	best = q;
	for (zi : 0 .. NN - 1) {
		if
		:: IN(f, zi) ->
			if
			:: TERM(nd[zi].prom) > zt -> zt = TERM(nd[zi].prom)
			:: else -> skip
			fi;
			if
			:: AHEAD(zi, best) -> best = zi
			:: else -> skip
			fi
		:: else -> skip
		fi
	}
	zt = zt + 1;
	/* room for the epoch-start record (a bound of the model) */
#ifdef NO_EPOCH_START
	ok = 1;
#else
	ok = (nd[best].last < L);
#endif
	if
	:: ok ->
		ze = EPOCH(zt, q);
		printf("promote: n%d, epoch %d.%d, fencing ", q, zt, q);
		SHOW_SET(f);
		printf(", takes n%d's log\n", best);
		/* I3: each node counted was admitted holding what was
		 * acknowledged then */
		for (zi : 0 .. NN - 1) {
			if
			:: FENCED(zi, q, f) && COUNTS(zi, q) ->
				CHECK3(nd[zi].adm,
					"I3 violated: a promotion counts a node admitted without the acknowledged records\n")
			:: else -> skip
			fi
		}
		/* fence */
		for (zi : 0 .. NN - 1) {
			if
			:: IN(f, zi) ->
				DEMOTE(zi);
				nd[zi].prom = ze;
				nd[zi].pinc = nd[q].inc;
				nd[zi].synced = 0
			:: else -> skip
			fi
		}
		/* take the most advanced log; the copy is persisted */
		if
		:: best != q ->
			for (zj : 0 .. L - 1) {
				nd[q].log[zj] = nd[best].log[zj]
			}
			nd[q].last = nd[best].last
		:: else -> skip
		fi;
		nd[q].fl = nd[q].last;
		/* I1: the new primary holds every acknowledged record */
		for (zj : 0 .. L - 1) {
			if
			:: acked[zj] != 0 ->
				CHECK(nd[q].log[zj] == acked[zj],
					"I1 violated: the new primary lacks an acknowledged record\n")
			:: else -> skip
			fi
		}
#ifndef NO_EPOCH_START
		nd[q].log[nd[q].last] = REC(ze, nd[q].inc);
		nd[q].last++;
#ifdef PRIMARY_SYNC
		nd[q].fl = nd[q].last;
#endif
#endif
		nd[q].start = nd[q].last;
		nd[q].commit = 0;
		nd[q].memok = 0;
		nd[q].prom = ze;
		nd[q].pinc = nd[q].inc;
		nd[q].synced = 1;
		nd[q].prim = 1;
		begun = 1;
		if
		:: CE(nd[q].ms) == 0 ->
			nd[q].ms = MS0;
			nd[q].adm = HOLDS_ACKED(q)
		:: else -> skip
		fi
	:: else -> skip
	fi
}

/*
 * ---- primary a starts a membership change ----
 * kind 0: add node c; 1: remove node c (not itself); 2: k becomes c.
 * v2: it stores J = (C1, C2, config epoch + 1, joint) and acknowledges
 * nothing until FINISH.  OLD_MEMBERSHIP: C2 takes effect on it at once.
 */
#define CHANGE_OK(a, c, kind) \
	((kind == 0 && !IN(MOLD(nd[a].ms), c)) || \
	 (kind == 1 && IN(MOLD(nd[a].ms), c) && c != a && POP(MOLD(nd[a].ms)) > 2) || \
	 (kind == 2 && c >= 1 && c < POP(MOLD(nd[a].ms)) && c != KOLD(nd[a].ms)))
/* the J that change (a, c, kind) stores */
#define JNEW(a, c, kind) (kind == 0 -> MOLD(nd[a].ms) | (1 << c) : \
			 (kind == 1 -> MOLD(nd[a].ms) & ~(1 << c) : MOLD(nd[a].ms)))
#define JKNEW(a, c, kind) (kind == 2 -> c : \
			 (kind == 1 && KOLD(nd[a].ms) >= POP(MOLD(nd[a].ms)) - 2 -> \
			  POP(MOLD(nd[a].ms)) - 2 : KOLD(nd[a].ms)))
#define JOF(a, c, kind)	MS(CE(nd[a].ms) + 1, 1, MOLD(nd[a].ms), KOLD(nd[a].ms), \
			 JNEW(a, c, kind), JKNEW(a, c, kind))
/* DCS_CHANGES: the compare-and-swap in the store that precedes J */
#ifdef DCS_CHANGES
#define DCS_OK(a, c, kind) (CE(JOF(a, c, kind)) > CE(dcs) || JOF(a, c, kind) == dcs)
#else
#define DCS_OK(a, c, kind) 1
#endif
#define G_CHANGE(a, c, kind) (G_CHANGER(a) && IN(CHANGE_KINDS, kind) && \
			 CHANGE_OK(a, c, kind) && DCS_OK(a, c, kind))
#define G_CHANGER(a)	(nd[a].prim && !JT(nd[a].ms) && changes < MAXCHG)
inline CHANGE(a, c, kind) {
	if
	:: kind == 0 -> printf("change: n%d adds node %d\n", a, c)
	:: kind == 1 -> printf("change: n%d removes node %d\n", a, c)
	:: else -> printf("change: n%d sets k to %d\n", a, c)
	fi;
#ifdef DCS_CHANGES
	dcs = JOF(a, c, kind);
#endif
	Mo = MOLD(nd[a].ms);
	Mko = KOLD(nd[a].ms);
	if
	:: kind == 0 -> Mn = Mo | (1 << c); Mkn = Mko
	:: kind == 1 ->
		Mn = Mo & ~(1 << c);
		Mkn = (Mko < POP(Mn) - 1 -> Mko : POP(Mn) - 1)
	:: kind == 2 -> Mn = Mo; Mkn = c
	fi;
#ifdef OLD_MEMBERSHIP
	nd[a].ms = MS(CE(nd[a].ms) + 1, 0, Mn, Mkn, 0, 0);
	nd[a].memok = nd[a].memok & Mn;
#else
	nd[a].ms = MS(CE(nd[a].ms) + 1, 1, Mo, Mko, Mn, Mkn);
	nd[a].memok = 0;
#endif
#ifdef DCS_CHANGES
	assert(nd[a].ms == dcs);	/* JOF is the J CHANGE stores */
#endif
	changes++
}

/*
 * ---- primary a finishes the change ----
 * J is on k1 + 1 nodes of C1 and k2 + 1 of C2 (a counting in each it
 * belongs to): it stores F = (C2, config epoch + 1) and from then counts
 * C2's replicas that stored J or F.
 */
#define JCOUNT(a, m)	(IN(m, a) + POP(nd[a].memok & m & ~(1 << a)))
#define G_FINISH(a)	(nd[a].prim && JT(nd[a].ms) && \
			 JCOUNT(a, MOLD(nd[a].ms)) >= KOLD(nd[a].ms) + 1 && \
			 JCOUNT(a, MNEW(nd[a].ms)) >= KNEW(nd[a].ms) + 1)
inline FINISH(a) {
	printf("change: n%d finishes (F)\n", a);
	for (zi : 0 .. NN - 1) {
		if
		:: zi != a && IN(nd[a].memok & LINKED(a), zi) ->
			CHECK3(nd[zi].adm,
				"I3 violated: J counted on a node admitted without the acknowledged records\n")
		:: else -> skip
		fi
	}
	nd[a].ms = MS(CE(nd[a].ms) + 1, 0, MNEW(nd[a].ms), KNEW(nd[a].ms), 0, 0);
	nd[a].memok = nd[a].memok & MOLD(nd[a].ms)
}
