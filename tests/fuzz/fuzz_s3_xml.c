/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: the S3 target's parser of its server's answers
 * (archive/s3_xml.c) on arbitrary bytes, as a ListBucketResult page and
 * as an Error.  Besides "no crash": a page refused says why and holds
 * nothing; one accepted holds keys that are NUL-terminated, not empty,
 * at most 1024 bytes and without control characters, and a continuation
 * token exactly when it is truncated; an error's code and message are
 * printable and fit their buffers.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "archive_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond) do { if (!(cond)) abort(); } while (0)

static void
printable(const char *s)
{
	for (; *s != '\0'; s++)
		CHECK((unsigned char)*s >= 0x20 && *s != 0x7f);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct s3_list_page pg;
	char why[ARCHIVE_WHY_MAX] = "", code[64], msg[200];
	const char *doc = (const char *)data;

	if (s3_list_parse(doc, size, &pg, why, sizeof(why)) == 0) {
		CHECK(pg.truncated == (pg.next_token != NULL));
		for (size_t i = 0; i < pg.n; i++) {
			size_t n = strlen(pg.keys[i]);

			CHECK(n > 0 && n <= 1024);
			printable(pg.keys[i]);
		}
		if (pg.next_token != NULL)
			printable(pg.next_token);
		s3_list_page_free(&pg);
	} else {
		CHECK(why[0] != '\0' && pg.keys == NULL && pg.n == 0 &&
			pg.next_token == NULL);
	}
	if (s3_error_parse(doc, size, code, sizeof(code), msg, sizeof(msg)) == 0) {
		CHECK(code[0] != '\0' && strlen(code) < sizeof(code) &&
			strlen(msg) < sizeof(msg));
		printable(code);
		printable(msg);
	} else {
		CHECK(code[0] == '\0' && msg[0] == '\0');
	}
	return 0;
}
