/* SPDX-License-Identifier: BSD-3-Clause */
/* fail.c -- an error: why, a sentence, and -1 */
#include "config.h"

#include <stdio.h>

#include "archive_int.h"

int
archive_fail(char *why, size_t whylen, const char *fmt, ...)
{
	va_list ap;

	if (why != NULL && whylen > 0) {
		va_start(ap, fmt);
		vsnprintf(why, whylen, fmt, ap);
		va_end(ap);
	}
	return -1;
}
