/* SPDX-License-Identifier: BSD-3-Clause */
/* err_2str.c -- rpma_err_2str: librpma's text for every code, "Unknown error" otherwise */
#include <limits.h>

#include "unit.h"

static void
err_2str__codes(void)
{
	static const struct {
		int code;
		int value;	/* librpma 1.x's numeric value */
		const char *text;
	} t[] = {
		{ 0, 0, "Success" },
		{ RPMA_E_UNKNOWN, -100000, "Unknown error" },
		{ RPMA_E_NOSUPP, -100001, "Not supported" },
		{ RPMA_E_PROVIDER, -100002, "Provider error occurred" },
		{ RPMA_E_NOMEM, -100003, "Out of memory" },
		{ RPMA_E_INVAL, -100004, "Invalid argument" },
		{ RPMA_E_NO_COMPLETION, -100005, "No next completion available" },
		{ RPMA_E_NO_EVENT, -100006, "No next event available" },
		{ RPMA_E_AGAIN, -100007, "Temporary error, try again" },
		{ RPMA_E_SHARED_CHANNEL, -100008, "Completion channel is shared" },
		{ RPMA_E_NOT_SHARED_CHNL, -100009, "Completion channel is not shared" },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		CU_ASSERT_EQUAL(t[i].code, t[i].value);
		CU_ASSERT_STRING_EQUAL(rpma_err_2str(t[i].code), t[i].text);
	}
}

/* errno values, neighbours of the range and extremes are all unknown */
static void
err_2str__unknown(void)
{
	static const int codes[] = { 1, -1, 22, -22, -99999, -100010, -100011,
		100004, INT_MIN, INT_MAX };

	for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++) {
		CU_ASSERT_PTR_NOT_NULL_FATAL(rpma_err_2str(codes[i]));
		CU_ASSERT_STRING_EQUAL(rpma_err_2str(codes[i]), "Unknown error");
	}
}

UNIT_MAIN("rpma_err_2str",
	UNIT_CASE(err_2str__codes),
	UNIT_CASE(err_2str__unknown))
