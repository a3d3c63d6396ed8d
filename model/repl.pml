/*
 * repl.pml -- the replication protocol (v2 rules) as a SPIN model.
 *
 * One process takes, at every step, one action of one node (or of a pair
 * of nodes) as one indivisible step.  docs/model.md describes the state,
 * the actions, what is left out and why, and the invariants; defs.pml
 * holds the bounds, the encodings and the compile-time switches, and
 * actions.pml the actions.
 */
#include "defs.pml"

Node nd[NN];

/* ghost: what has been acknowledged (index l = LSN l + 1) */
byte acked[L];		/* the record acknowledged at the LSN, 0: none */
byte ackep[L];		/* the epoch of the primary that first acknowledged it */

unsigned losses : 2;	/* disks lost so far */
unsigned changes : 2;	/* membership changes started so far */
#ifdef DCS_CHANGES
unsigned dcs : 16;	/* the change (its J) the coordination store holds */
#endif

/* replaying a trail (spin -DSHOW_TRAIL=1 -t) prints the state after each
 * step; the search runs with 0 and skips that (the same model either way,
 * so the trail replays) */
bit verbose = SHOW_TRAIL;

/* a promotion has happened */
bit begun;

/* the action and nodes (set, LSN, kind) of the step being taken: 0
 * between steps */
byte act, pa, pb, pc;

/* scratch of one indivisible step: not part of the state */
hidden byte zi, zj, zt, ze, zm, zs, best, ok;
hidden byte Mo, Mn, Mko, Mkn;

#include "actions.pml"

/*
 * The main loop has one branch: its if picks an action and its nodes (pa,
 * pb, pc) among those whose guard holds, then the d_step runs that
 * action's body.  Inside the atomic sequence no state is stored, and act,
 * pa, pb, pc are 0 again after it: a step is one transition between stored
 * states, and each body's code exists once.
 */
#define P1(G, X, a)	:: G(a) -> act = X; pa = a
#define P2(G, X, a, b)	:: G(a, b) -> act = X; pa = a; pb = b

/* EACH, EACH2: M(..., n) for every node n (cpp expands no macro inside itself) */
#if NN > 3
#define EACH(M, ...)	M(__VA_ARGS__, 0) M(__VA_ARGS__, 1) M(__VA_ARGS__, 2) M(__VA_ARGS__, 3)
#define EACH2(M, ...)	M(__VA_ARGS__, 0) M(__VA_ARGS__, 1) M(__VA_ARGS__, 2) M(__VA_ARGS__, 3)
#else
#define EACH(M, ...)	M(__VA_ARGS__, 0) M(__VA_ARGS__, 1) M(__VA_ARGS__, 2)
#define EACH2(M, ...)	M(__VA_ARGS__, 0) M(__VA_ARGS__, 1) M(__VA_ARGS__, 2)
#endif
/* every set of nodes, every LSN, every kind of change */
#if NN > 3
#define SETS(M, ...) \
	M(__VA_ARGS__, 0) M(__VA_ARGS__, 1) M(__VA_ARGS__, 2) M(__VA_ARGS__, 3) \
	M(__VA_ARGS__, 4) M(__VA_ARGS__, 5) M(__VA_ARGS__, 6) M(__VA_ARGS__, 7) \
	M(__VA_ARGS__, 8) M(__VA_ARGS__, 9) M(__VA_ARGS__, 10) M(__VA_ARGS__, 11) \
	M(__VA_ARGS__, 12) M(__VA_ARGS__, 13) M(__VA_ARGS__, 14) M(__VA_ARGS__, 15)
#else
#define SETS(M, ...) \
	M(__VA_ARGS__, 0) M(__VA_ARGS__, 1) M(__VA_ARGS__, 2) M(__VA_ARGS__, 3) \
	M(__VA_ARGS__, 4) M(__VA_ARGS__, 5) M(__VA_ARGS__, 6) M(__VA_ARGS__, 7)
#endif
#if L > 3
#define LSNS(M, ...)	M(__VA_ARGS__, 1) M(__VA_ARGS__, 2) M(__VA_ARGS__, 3) M(__VA_ARGS__, 4)
#else
#define LSNS(M, ...)	M(__VA_ARGS__, 1) M(__VA_ARGS__, 2) M(__VA_ARGS__, 3)
#endif
#define KINDS(M, ...)	M(__VA_ARGS__, 0) M(__VA_ARGS__, 1) M(__VA_ARGS__, 2)

#define NODE2(G, X, a)	EACH2(P2, G, X, a)
#define SET2(G, X, a)	SETS(P2, G, X, a)
#define LSN2(G, X, a)	LSNS(P2, G, X, a)

/*
 * The first promotion is n0's, fencing n1, or n1 and n2, or n1 to n3:
 * until then the nodes of C0 are alike (and nothing else can happen), so
 * any other first promotion is one of these with the nodes renamed.
 */
#define FIRSTSET(f)	(f == (2 & C0) || f == (6 & C0) || f == (14 & C0))
/*
 * A promotion and a change are picked in two steps: the node, then the
 * fenced set (the change); where none fits the step changes nothing.
 */
#define G_PROMQ(q)	(!nd[q].prim && MAY_PROMOTE(q) && (begun || q == 0))
#define G_FENCE1(q, f)	(G_FENCE(q, f) && (begun || FIRSTSET(f)))
#define PF(G, f)	:: G(pa, f) -> pb = f
#define PC(G, c, kind)	:: G(pa, c, kind) -> pb = c; pc = kind
#define PCK(G, c)	KINDS(PC, G, c)

/* the actions */
#define A_PROMOTE	1
#define A_CHANGE	2
#define A_FINISH	3
#define A_GRANT		4
#define A_COMMIT	5
#define A_HELLO		6
#define A_REPL		7
#define A_APPEND	8
#define A_FLUSH		9
#define A_CRASH		10
#define A_LOSE		11
#define A_BOOT		12

init {
	d_step {
		/* explicit bootstrap: the nodes of C0 hold membership epoch 1 */
		for (zi : 0 .. NN - 1) {
			if
			:: IN(C0, zi) ->
				nd[zi].ms = MS0;
				nd[zi].adm = 1
			:: else -> skip
			fi
		}
	}
end:	do
	:: atomic {
		if
		EACH(NODE2, G_GRANT, A_GRANT)
		EACH(LSN2, G_COMMIT, A_COMMIT)
		EACH(NODE2, G_HELLO, A_HELLO)
		EACH(NODE2, G_REPL, A_REPL)
#ifndef NO_APPEND
		EACH(P1, G_APPEND, A_APPEND)
#endif
		EACH(P1, G_FLUSH, A_FLUSH)
#ifndef NO_CRASH
		EACH(P1, G_CRASH, A_CRASH)
#endif
		EACH(P1, G_PROMQ, A_PROMOTE)
#if MAXCHG > 0
		EACH(P1, G_CHANGER, A_CHANGE)
#ifndef OLD_MEMBERSHIP
		EACH(P1, G_FINISH, A_FINISH)
#endif
#endif
#if MAXLOSS > 0
		EACH(SET2, G_LOSE, A_LOSE)
#ifdef BOOTSTRAP_ACTION
		EACH(SET2, G_BOOT, A_BOOT)
#endif
#endif
		fi;
		if
		:: act == A_PROMOTE ->
			if
			SETS(PF, G_FENCE1)
			:: else -> act = 0
			fi
#if MAXCHG > 0
		:: act == A_CHANGE ->
			if
			EACH(PCK, G_CHANGE)
			:: else -> act = 0
			fi
#endif
		:: else -> skip
		fi;
		d_step {
			if
			:: act == A_PROMOTE -> PROMOTE(pa, pb)
			:: act == A_CHANGE -> CHANGE(pa, pb, pc)
			:: act == A_FINISH -> FINISH(pa)
			:: act == A_GRANT -> GRANT(pa, pb)
			:: act == A_COMMIT -> COMMIT(pa, pb)
			:: act == A_HELLO -> HELLO(pa, pb)
			:: act == A_REPL -> REPLICATE(pa, pb)
			:: act == A_APPEND -> APPEND(pa)
			:: act == A_FLUSH -> FLUSH(pa)
			:: act == A_CRASH -> CRASH(pa)
			:: act == A_LOSE -> LOSE_DISK(pa, pb)
			:: act == A_BOOT -> LOSE_DISK_BOOTSTRAP(pa, pb)
			:: else -> skip
			fi;
			SHOW();
			act = 0; pa = 0; pb = 0; pc = 0
		}
	}
	od
}
