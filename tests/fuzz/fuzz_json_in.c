/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: replctl's JSON reader (json_parse and the lookups) on
 * arbitrary bytes, as a broken or hostile daemon might answer.  Besides
 * "no crash, no over-read": every token lies inside the input, every
 * token's subtree ends after it, a failure names its reason, and the
 * lookups stay in bounds whatever the tree.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "json_in.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond) do { if (!(cond)) abort(); } while (0)

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct jtok toks[64];
	struct jdoc d;
	char why[160] = "", out[32];
	char *buf = malloc(size ? size : 1);

	if (buf == NULL)
		return 0;
	memcpy(buf, data, size);
	if (json_parse(&d, buf, size, toks, 64, why, sizeof(why)) != 0) {
		CHECK(why[0] != '\0');
		free(buf);
		return 0;
	}
	CHECK(d.n >= 1 && d.n <= 64);
	for (int i = 0; i < d.n; i++) {
		CHECK(d.t[i].start <= d.t[i].end && d.t[i].end <= size);
		CHECK(d.t[i].next > i && d.t[i].next <= d.n);
		(void)json_u64(&d, i, 0);
		(void)json_i64(&d, i, 0);
		(void)json_bool(&d, i, false);
		json_text(&d, i, out, sizeof(out));
		CHECK(strlen(out) < sizeof(out));
		(void)json_get(&d, i, "ok");
		for (int k = 0; k < 3; k++)
			(void)json_item(&d, i, k);
	}
	free(buf);
	return 0;
}
