/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * node_state.c -- the node's states (node.h, enum node_state): their
 * names, the changes allowed between them, and what each says about the
 * role and the gate.  Pure functions, with no node behind them, so that the
 * table is tested on its own (tests/tools/node_state_test.c); the one
 * writer of a node's state is node_set_state (node.c).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "node.h"

static const char *const names[NODE_STATES] = {
	[NODE_ST_STARTING] = "starting",
	[NODE_ST_REPLICA] = "replica",
	[NODE_ST_PRIMARY] = "primary",
	[NODE_ST_PROMOTING] = "promoting",
	[NODE_ST_STEPPING_DOWN] = "stepping_down",
	[NODE_ST_CHANGING] = "changing",
	[NODE_ST_SWITCHING] = "switching",
	[NODE_ST_FENCED] = "fenced",
	[NODE_ST_DEPOSED] = "deposed",
	[NODE_ST_REOPENING] = "reopening",
	[NODE_ST_FAILED] = "failed",
	[NODE_ST_STOPPING] = "stopping",
	[NODE_ST_STOPPED] = "stopped",
};

/*
 * The changes the code makes, and no others.  A change of role passes
 * through a closed gate: the state that closes it keeps the log it has
 * (PROMOTING, STEPPING_DOWN, CHANGING, FENCED), then none is open
 * (SWITCHING, DEPOSED), then the next one opens (REPLICA, PRIMARY) or
 * nothing does (FAILED, REOPENING).  Opening a log opens the gate.
 */
static const bool allowed[NODE_STATES][NODE_STATES] = {
	[NODE_ST_STARTING] = { [NODE_ST_REPLICA] = true, [NODE_ST_PRIMARY] = true,
		[NODE_ST_FAILED] = true,
		/* the log is not where it should be: nothing was opened */
		[NODE_ST_STOPPING] = true },
	[NODE_ST_REPLICA] = { [NODE_ST_PROMOTING] = true, [NODE_ST_STOPPING] = true },
	[NODE_ST_PRIMARY] = { [NODE_ST_STEPPING_DOWN] = true,
		[NODE_ST_CHANGING] = true, [NODE_ST_FENCED] = true,
		[NODE_ST_STOPPING] = true },
	/* REPLICA again: a replica whose open had failed has nothing to stop */
	[NODE_ST_PROMOTING] = { [NODE_ST_SWITCHING] = true, [NODE_ST_REPLICA] = true },
	[NODE_ST_STEPPING_DOWN] = { [NODE_ST_SWITCHING] = true },
	[NODE_ST_CHANGING] = { [NODE_ST_SWITCHING] = true },
	[NODE_ST_SWITCHING] = { [NODE_ST_REPLICA] = true, [NODE_ST_PRIMARY] = true,
		[NODE_ST_REOPENING] = true, [NODE_ST_FAILED] = true },
	[NODE_ST_FENCED] = { [NODE_ST_DEPOSED] = true },
	/* SWITCHING: with a coordinator it follows the new primary */
	[NODE_ST_DEPOSED] = { [NODE_ST_SWITCHING] = true, [NODE_ST_STOPPING] = true },
	/* SWITCHING: the reopen's thread did not start */
	[NODE_ST_REOPENING] = { [NODE_ST_PRIMARY] = true, [NODE_ST_REPLICA] = true,
		[NODE_ST_SWITCHING] = true, [NODE_ST_STOPPING] = true },
	[NODE_ST_FAILED] = { [NODE_ST_STOPPING] = true },
	[NODE_ST_STOPPING] = { [NODE_ST_STOPPED] = true },
};

const char *
node_state_name(enum node_state s)
{
	return (unsigned)s < NODE_STATES ? names[s] : "unknown";
}

bool
node_state_allowed(enum node_state from, enum node_state to)
{
	return (unsigned)from < NODE_STATES && (unsigned)to < NODE_STATES &&
		allowed[from][to];
}

enum node_role
node_state_role(enum node_state s, enum node_state stop_from)
{
	switch (s) {
	case NODE_ST_REPLICA:
	case NODE_ST_PROMOTING:		/* the replica serves until it stops */
		return NODE_REPLICA;
	case NODE_ST_PRIMARY:
	case NODE_ST_STEPPING_DOWN:
	case NODE_ST_CHANGING:
	case NODE_ST_FENCED:		/* the log is open until it closes */
		return NODE_PRIMARY;
	case NODE_ST_STOPPING:		/* what it was, until its log closes */
		return stop_from == NODE_ST_STOPPING ? NODE_DOWN :
			node_state_role(stop_from, NODE_ST_STOPPED);
	default:
		return NODE_DOWN;
	}
}

bool
node_state_gate_open(enum node_state s)
{
	return s == NODE_ST_REPLICA || s == NODE_ST_PRIMARY || s == NODE_ST_FAILED;
}

bool
node_state_stopping(enum node_state s)
{
	return s == NODE_ST_STOPPING || s == NODE_ST_STOPPED;
}

bool
node_state_changing(enum node_state s)
{
	return !node_state_gate_open(s) && !node_state_stopping(s);
}

bool
node_state_waits(enum node_state s)
{
	return s == NODE_ST_STARTING || s == NODE_ST_PROMOTING ||
		s == NODE_ST_STEPPING_DOWN || s == NODE_ST_CHANGING ||
		s == NODE_ST_SWITCHING;
}

bool
node_state_fenced(enum node_state s, enum node_state stop_from)
{
	if (node_state_stopping(s))
		s = stop_from;
	return s == NODE_ST_FENCED || s == NODE_ST_DEPOSED;
}

bool
node_state_reopening(enum node_state s, enum node_state stop_from)
{
	if (node_state_stopping(s))
		s = stop_from;
	return s == NODE_ST_REOPENING;
}

enum node_state
node_state_opened(enum node_role r)
{
	return r == NODE_PRIMARY ? NODE_ST_PRIMARY : r == NODE_REPLICA ?
		NODE_ST_REPLICA : NODE_ST_FAILED;
}
