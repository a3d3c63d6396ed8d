/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: ctl_msg_decode and ctl_msg_frame_len on arbitrary
 * bytes, as a peer on the control channel may send them.
 *
 * The first input byte steers the rest, so the fuzzer gets past the header
 * to the bodies' checks: bit 0 stamps the magic and CTL_VERSION, bit 1 a body
 * length that matches the input, bit 2 a known type (from bits 4-7: every
 * type from HELLO to VERIFY_REPLY); bit 3 makes the rest a whole MEMBERSHIP
 * frame instead (zero-padded or cut to its size, header, the body's magic
 * and its checksum stamped), so the fuzzer works on its fields.
 * Besides "no crash, no over-read", it checks what must hold:
 * - a header's length is one frame at most (CTL_FRAME_MAX);
 * - a failure names its reason;
 * - an accepted frame re-encodes to the same bytes.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "crc32c.h"
#include "ctl/ctl_msg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond) do { if (!(cond)) abort(); } while (0)

static void
put_le(uint8_t *p, uint32_t v, int n)
{
	for (int i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t again[CTL_FRAME_MAX];
	struct ctl_msg m;
	const char *why;
	uint8_t *buf;
	size_t len;
	int flen, ret;

	if (size < 1)
		return 0;
	len = size - 1;
	if (data[0] & 8) {
		uint8_t *b;

		len = CTL_HDR_SIZE + MEMBERSHIP_SIZE;
		buf = calloc(1, len);
		CHECK(buf != NULL);
		memcpy(buf, data + 1, size - 1 < len ? size - 1 : len);
		b = buf + CTL_HDR_SIZE;
		memcpy(buf, "RPLC", 4);
		put_le(buf + 4, CTL_VERSION, 2);
		put_le(buf + 6, CTL_MEMBERSHIP, 2);
		put_le(buf + 8, MEMBERSHIP_SIZE, 4);
		memcpy(b, "RPLMEMB\002", 8);
		put_le(b + MEMBERSHIP_SIZE - 4, rpma_crc32c(0, b, MEMBERSHIP_SIZE - 4), 4);
		goto decode;
	}
	/* an exact-size heap copy so ASan catches any over-read */
	buf = malloc(len ? len : 1);
	CHECK(buf != NULL);
	memcpy(buf, data + 1, len);
	if (len >= CTL_HDR_SIZE) {
		if (data[0] & 1) {
			memcpy(buf, "RPLC", 4);
			put_le(buf + 4, CTL_VERSION, 2);
		}
		if (data[0] & 2)
			put_le(buf + 8, (uint32_t)(len - CTL_HDR_SIZE), 4);
		if (data[0] & 4)
			put_le(buf + 6, 1u + (data[0] >> 4) % CTL_VERIFY_REPLY, 2);

		why = NULL;
		flen = ctl_msg_frame_len(buf, &why);
		if (flen < 0)
			CHECK(flen == -1 && why != NULL && why[0] != '\0');
		else
			CHECK(flen >= CTL_HDR_SIZE && flen <= CTL_FRAME_MAX);
	}

decode:
	why = NULL;
	ret = ctl_msg_decode(buf, len, &m, &why);
	if (ret != 0) {
		CHECK(ret == -1 && why != NULL && why[0] != '\0');
	} else {
		CHECK(len >= CTL_HDR_SIZE && len <= CTL_FRAME_MAX);
		CHECK(ctl_msg_frame_len(buf, &why) == (int)len);
		CHECK(strcmp(ctl_msg_type_name((int)m.type), "unknown") != 0);
		CHECK(ctl_msg_check(&m, &why) == 0);
		CHECK(ctl_msg_encode(&m, again, sizeof(again)) == (int)len);
		CHECK(memcmp(again, buf, len) == 0);
	}
	free(buf);
	return 0;
}
