/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: repld's admin socket requests (admin_req_parse) on
 * arbitrary bytes, consumed the way the daemon consumes a client's stream.
 * Besides "no crash, no over-read", it checks what must hold:
 * - progress: a parsed or refused request consumes at least one byte,
 *   "need more" consumes none;
 * - an APPEND's record lies inside the input and is 1..ADMIN_RECORD_MAX;
 * - a refusal names its reason;
 * - a MAINTENANCE reason is one line of printable bytes within its size.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "admin_proto.h"
#include "admin_req.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond) do { if (!(cond)) abort(); } while (0)

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* a private copy: a read past it is caught */
	char *buf = malloc(size ? size : 1);
	size_t off = 0;

	if (buf == NULL)
		return 0;
	memcpy(buf, data, size);
	while (off < size) {
		struct admin_req req;
		char why[256] = "";
		size_t used = 12345;
		enum admin_parse p = admin_req_parse(buf + off, size - off, &req,
			&used, why, sizeof(why));

		if (p == ADMIN_PARSE_MORE) {
			CHECK(used == 0);
			break;
		}
		if (p == ADMIN_PARSE_FATAL) {
			CHECK(why[0] != '\0');
			break;
		}
		CHECK(used >= 1 && used <= size - off);
		if (p == ADMIN_PARSE_BAD) {
			CHECK(why[0] != '\0');
		} else {
			CHECK(p == ADMIN_PARSE_OK);
			if (req.verb == ADMIN_APPEND) {
				const char *d = req.data;

				CHECK(req.len >= 1 && req.len <= ADMIN_RECORD_MAX);
				CHECK(d >= buf + off && d + req.len == buf + off + used);
			}
			/* a reason is one printable line of at most its bytes */
			if (req.verb == ADMIN_MAINTENANCE) {
				CHECK(strlen(req.reason) <= ADMIN_REASON_MAX);
				CHECK(req.maintenance_on || req.reason[0] == '\0');
				for (const char *r = req.reason; *r; r++)
					CHECK((unsigned char)*r >= 0x20 && *r != 0x7f);
			}
			if (req.verb == ADMIN_ADD || req.verb == ADMIN_REMOVE)
				CHECK(req.port != 0 && req.host[0] != '\0' &&
					strlen(req.host) <= ADMIN_HOST_MAX);
		}
		off += used;
	}
	free(buf);
	return 0;
}
