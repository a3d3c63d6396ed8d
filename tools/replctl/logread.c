/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * logread.c -- how the offline commands show what librepl's reader
 * (repl_reader_*) found in a log image: its health, its identity, strings.
 */
#include "config.h"

#include <stdio.h>

#include "replctl.h"

const char *
health_str(const struct repl_log_header *h)
{
	/* the medium's counters need the device; offline only the state */
	return h->clean ? "clean" : "not-closed";
}

void
uuid_str(const uint8_t u[16], char out[37])
{
	char *o = out;

	for (int i = 0; i < 16; i++) {
		if (i == 4 || i == 6 || i == 8 || i == 10)
			*o++ = '-';
		o += sprintf(o, "%02x", u[i]);
	}
}

void
json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
		if (*c == '"' || *c == '\\')
			fprintf(f, "\\%c", *c);
		else if (*c == '\n')
			fputs("\\n", f);
		else if (*c == '\t')
			fputs("\\t", f);
		else if (*c < 0x20 || *c >= 0x7f)
			fprintf(f, "\\u%04x", *c);	/* not UTF-8: each byte */
		else
			fputc(*c, f);
	}
	fputc('"', f);
}
