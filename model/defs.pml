/*
 * defs.pml -- bounds, encodings, state and switches of model/repl.pml.
 * docs/model.md describes the model; tests/model/check-model.sh runs it.
 *
 * Bounds (spin -DNAME=VALUE):
 *   NN        nodes (ids 0 .. NN-1, at most 4)
 *   C0, K0    the bootstrap configuration (a bit per node) and its k
 *   L         LSNs a log holds (3 or 4)
 *   MAXT      the highest term a promotion may pick
 *   MAXLOSS   disks lost in a run (each node at most once)
 *   MAXCHG    membership changes started in a run
 *   CHANGE_KINDS  which changes (bit 0: add a node, 1: remove one, 2: k)
 *
 * Slices (fewer behaviours, for the runs that must stay small):
 *   PRIMARY_SYNC  a primary's own appends are durable at once
 *   NO_APPEND     no client records; epoch-start records only
 *   NO_CRASH      no crash (disks lost are still possible)
 *   NO_I3         I3 is not checked (only I1, I2)
 *
 * The rules v2 replaced, put back (each must be found unsafe):
 *   NO_EPOCH_START   no epoch-start record; a primary commits records of
 *                    older epochs by counting replicas (Raft figure 8)
 *   OLD_MEMBERSHIP   a change takes effect on the primary at once, no
 *                    joint phase (C2)
 *   SELF_COUNTS_WITHOUT_MEMBERSHIP  a node without a membership (lost
 *                    disk) promotes under the configured one and counts
 *                    itself (C1)
 *   MEMBER_AT_COMMIT_ONLY  MEMBERSHIP once caught up to the commit point
 *                    only, not to the epoch-start record
 *
 * v2's text where the model shows it unsafe (each must be found unsafe;
 * the default is the rule the model checks instead, docs/model.md):
 *   REINIT_NO_FLOOR  a node restarted with --reinit has no promise
 *                    (default: before it answers anything it takes the
 *                    highest promise of k + 1 other nodes)
 *   PRIMARY_OUTSIDE_COUNTS  a primary that is not in its configuration
 *                    counts itself toward k + 1 (default: it does not)
 *   MATCH_CONFIG_EPOCH  a promotion counts the nodes whose membership has
 *                    its config epoch (default: the same membership)
 *   DCS_CHANGES      every change is first taken in a coordination store
 *                    (etcd) by compare-and-swap: a J is stored only if its
 *                    config epoch is above the store's, or it is the J the
 *                    store holds (a later primary carrying the same change
 *                    on); with MATCH_CONFIG_EPOCH it must pass
 *   BOOTSTRAP_ACTION + BOOTSTRAP_ANY_REACHABLE  a lost disk restarted with
 *                    --bootstrap, refused only if a peer it reaches holds
 *                    something (default with BOOTSTRAP_ACTION: every other
 *                    node of the configuration must answer, holding
 *                    nothing)
 */
#ifndef SHOW_TRAIL
#define SHOW_TRAIL	0
#endif
#ifndef NN
#define NN	3
#endif
#ifndef C0
#define C0	7
#endif
#ifndef K0
#define K0	1
#endif
#ifndef L
#define L	3
#endif
#ifndef MAXT
#define MAXT	3
#endif
#ifndef MAXLOSS
#define MAXLOSS	0
#endif
#ifndef MAXCHG
#define MAXCHG	0
#endif
#ifndef CHANGE_KINDS
#define CHANGE_KINDS	7
#endif

/* bit i of a set of nodes */
#define IN(m, i)	(((m) >> (i)) & 1)
#define POP(m)		(IN(m, 0) + IN(m, 1) + IN(m, 2) + IN(m, 3))

/* epochs: term * NN + node id, ordered by (term, id) as term << 16 | id is */
#define EPOCH(term, n)	((term) * NN + (n))
#define TERM(ep)	((ep) / NN)
#define NODE_OF(ep)	((ep) % NN)

/* a record: the epoch it was written in and its writer's incarnation */
#define REC(ep, inc)	((ep) * 2 + (inc))
#define REC_EP(rec)	((rec) / 2)

/*
 * A membership: config epoch (0: none), joint flag, the configuration (the
 * old one if joint) and its k, the new configuration and its k (if joint).
 */
#define MS(ce, j, mo, ko, mn, kn) \
	((ce) | ((j) << 3) | ((mo) << 4) | ((ko) << 8) | ((mn) << 10) | ((kn) << 14))
#define CE(ms)		((ms) & 7)
#define JT(ms)		(((ms) >> 3) & 1)
#define MOLD(ms)	(((ms) >> 4) & 15)
#define KOLD(ms)	(((ms) >> 8) & 3)
#define MNEW(ms)	(((ms) >> 10) & 15)
#define KNEW(ms)	(((ms) >> 14) & 3)
#define OLDPART(ms)	(((ms) >> 4) & 63)	/* configuration and k */
#define NEWPART(ms)	(((ms) >> 10) & 63)	/* new configuration and k */
#define MS0		MS(1, 0, C0, K0, 0, 0)	/* what --bootstrap stores */

typedef Node {
	byte log[L];		/* record by LSN (index l: LSN l + 1), 0: none */
	byte prom;		/* the epoch promised (followed), 0: none */
	unsigned last : 3;	/* last LSN in the log */
	unsigned fl : 3;	/* last LSN durable (flushed) */
	unsigned start : 3;	/* as primary: LSN of its epoch-start record */
	unsigned commit : 3;	/* as primary: its commit point */
	unsigned ms : 16;	/* stored membership (MS below), 0: none */
	unsigned memok : 4;	/* as primary: replicas that count (MEMBERSHIP) */
	bit pinc;		/* incarnation of the node it promised to */
	bit synced;		/* caught up with the primary of prom (HELLO) */
	bit inc;		/* its incarnation: 1 once its disk was lost */
	bit joint;		/* the stored membership is joint (J) */
	bit prim;		/* it acts as primary */
	bit adm;		/* ghost: got its membership holding every
				 * acknowledged record */
}
