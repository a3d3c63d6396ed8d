/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * node_state_test.c -- repld's node states (tools/repld/node_state.c):
 * every state is reached from STARTING and reaches STOPPED, the gate is
 * open where a log serves or a failure is final, and a state's role is the
 * log it holds open.
 */
#include <stdbool.h>
#include <string.h>

#include "node.h"
#include "unit.h"

/* the states reached from s by the table (a bit each) */
static unsigned
reach(enum node_state s)
{
	unsigned seen = 1u << s, before;

	do {
		before = seen;
		for (int a = 0; a < NODE_STATES; a++)
			for (int b = 0; b < NODE_STATES; b++)
				if ((seen & 1u << a) && node_state_allowed(a, b))
					seen |= 1u << b;
	} while (seen != before);
	return seen;
}

static void
reachable(void)
{
	CU_ASSERT_EQUAL(reach(NODE_ST_STARTING), (1u << NODE_STATES) - 1);
	for (int s = 0; s < NODE_STATES; s++)
		CU_ASSERT_TRUE((reach(s) & 1u << NODE_ST_STOPPED) != 0);
	for (int s = 0; s < NODE_STATES; s++)
		CU_ASSERT_FALSE(node_state_allowed(NODE_ST_STOPPED, s));
	CU_ASSERT_FALSE(node_state_allowed(NODE_STATES, NODE_ST_STOPPED));
	CU_ASSERT_FALSE(node_state_allowed(NODE_ST_STARTING, NODE_STATES));
}

static void
named(void)
{
	for (int a = 0; a < NODE_STATES; a++) {
		CU_ASSERT_STRING_NOT_EQUAL(node_state_name(a), "unknown");
		for (int b = a + 1; b < NODE_STATES; b++)
			CU_ASSERT_STRING_NOT_EQUAL(node_state_name(a), node_state_name(b));
	}
	CU_ASSERT_STRING_EQUAL(node_state_name(NODE_STATES), "unknown");
}

static void
gate(void)
{
	for (int s = 0; s < NODE_STATES; s++) {
		bool open = node_state_gate_open(s);

		CU_ASSERT_EQUAL(open, s == NODE_ST_REPLICA || s == NODE_ST_PRIMARY ||
			s == NODE_ST_FAILED);
		/* a closed gate: a change, or a stop; appenders wait only on
		 * a change that ends in a log open again */
		CU_ASSERT_EQUAL(!open, node_state_changing(s) ||
			node_state_stopping(s));
		if (node_state_waits(s))
			CU_ASSERT_TRUE(node_state_changing(s));
		/* opening the gate again keeps the log open */
		CU_ASSERT_EQUAL(node_state_role(node_state_opened(
			node_state_role(s, NODE_ST_STARTING)), NODE_ST_STARTING),
			node_state_role(s, NODE_ST_STARTING));
	}
	CU_ASSERT_FALSE(node_state_waits(NODE_ST_REOPENING));
	CU_ASSERT_FALSE(node_state_waits(NODE_ST_FENCED));
	CU_ASSERT_FALSE(node_state_waits(NODE_ST_DEPOSED));
}

static void
roles(void)
{
	CU_ASSERT_EQUAL(node_state_role(NODE_ST_PROMOTING, 0), NODE_REPLICA);
	CU_ASSERT_EQUAL(node_state_role(NODE_ST_CHANGING, 0), NODE_PRIMARY);
	CU_ASSERT_EQUAL(node_state_role(NODE_ST_FENCED, 0), NODE_PRIMARY);
	CU_ASSERT_EQUAL(node_state_role(NODE_ST_DEPOSED, 0), NODE_DOWN);
	CU_ASSERT_EQUAL(node_state_role(NODE_ST_SWITCHING, 0), NODE_DOWN);
	/* a stop: what it was until its log closed */
	CU_ASSERT_EQUAL(node_state_role(NODE_ST_STOPPING, NODE_ST_PRIMARY),
		NODE_PRIMARY);
	CU_ASSERT_EQUAL(node_state_role(NODE_ST_STOPPING, NODE_ST_REPLICA),
		NODE_REPLICA);
	CU_ASSERT_EQUAL(node_state_role(NODE_ST_STOPPED, NODE_ST_PRIMARY),
		NODE_DOWN);
	/* a fenced primary's appenders are told so after its stop began */
	CU_ASSERT_TRUE(node_state_fenced(NODE_ST_STOPPED, NODE_ST_DEPOSED));
	CU_ASSERT_FALSE(node_state_fenced(NODE_ST_STOPPED, NODE_ST_PRIMARY));
	CU_ASSERT_TRUE(node_state_reopening(NODE_ST_STOPPING, NODE_ST_REOPENING));
	CU_ASSERT_FALSE(node_state_reopening(NODE_ST_PRIMARY, NODE_ST_REOPENING));
}

int
main(void)
{
	static CU_TestInfo cases[] = {
		UNIT_CASE(reachable),
		UNIT_CASE(named),
		UNIT_CASE(gate),
		UNIT_CASE(roles),
		CU_TEST_INFO_NULL,
	};

	return unit_run("node_state", cases);
}
