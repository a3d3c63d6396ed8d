/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * oracle.c -- librpma-oracle: runs conformance cases through Debian's
 * librpma 1.2 and nothing else (it must never share a process with our
 * core: both export the same symbols).
 *
 * Reads framed cases from stdin (shared.h) until EOF and prints one result
 * line per case on stdout.  Exit status 0, or 2 on a malformed stream.
 */
#include <stdio.h>
#include <stdlib.h>

#include <librpma.h>

#include "shared.h"

static int
read_exact(void *buf, size_t size)
{
	return fread(buf, 1, size, stdin) == size ? 0 : -1;
}

int
main(void)
{
	static unsigned char payload[CONF_MAX_PAYLOAD];
	char line[CONF_LINE_MAX];
	unsigned char header[5];
	unsigned long cases = 0;

	conf_init_library();

	for (;;) {
		size_t got = fread(header, 1, 1, stdin);
		if (got == 0) {
			if (ferror(stdin)) {
				perror("librpma-oracle: stdin");
				return 2;
			}
			break;	/* clean EOF between cases */
		}
		if (read_exact(header + 1, 4)) {
			fprintf(stderr, "librpma-oracle: truncated header after %lu cases\n",
				cases);
			return 2;
		}
		size_t size = (size_t)header[1] | (size_t)header[2] << 8 |
			(size_t)header[3] << 16 | (size_t)header[4] << 24;
		if (size > CONF_MAX_PAYLOAD || read_exact(payload, size)) {
			fprintf(stderr, "librpma-oracle: bad payload of case %lu\n",
				cases);
			return 2;
		}
		conf_eval(header[0], payload, size, line);
		printf("%s\n", line);
		cases++;
	}
	if (fflush(stdout) != 0 || ferror(stdout)) {
		perror("librpma-oracle: stdout");
		return 2;
	}
	return 0;
}
