/* SPDX-License-Identifier: BSD-3-Clause */
/* utils_conn_event_2str.c -- rpma_utils_conn_event_2str: librpma's text for every event */
#include "unit.h"

static void
conn_event_2str__events(void)
{
	static const struct {
		enum rpma_conn_event event;
		int value;	/* librpma 1.x's numeric value */
		const char *text;
	} t[] = {
		{ RPMA_CONN_UNDEFINED, -1, "Undefined connection event" },
		{ RPMA_CONN_ESTABLISHED, 0, "Connection established" },
		{ RPMA_CONN_CLOSED, 1, "Connection closed" },
		{ RPMA_CONN_LOST, 2, "Connection lost" },
		{ RPMA_CONN_REJECTED, 3, "Connection rejected" },
		{ RPMA_CONN_UNREACHABLE, 4, "Connection unreachable" },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		CU_ASSERT_EQUAL((int)t[i].event, t[i].value);
		CU_ASSERT_STRING_EQUAL(rpma_utils_conn_event_2str(t[i].event), t[i].text);
	}
}

static void
conn_event_2str__unsupported(void)
{
	static const int events[] = { -2, 5, 6, 100, -100 };

	for (size_t i = 0; i < sizeof(events) / sizeof(events[0]); i++) {
		const char *s = rpma_utils_conn_event_2str((enum rpma_conn_event)events[i]);

		CU_ASSERT_PTR_NOT_NULL_FATAL(s);
		CU_ASSERT_STRING_EQUAL(s, "Unsupported connection event");
	}
}

UNIT_MAIN("rpma_utils_conn_event_2str",
	UNIT_CASE(conn_event_2str__events),
	UNIT_CASE(conn_event_2str__unsupported))
