/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * membership_v1.c -- the version 1 membership, as logs written before
 * node ids were listed still hold it: the writer's replicas (n, k, their
 * addresses), the writer itself not listed.  Read only; only the node
 * that wrote it may use it, and its first promotion replaces it with a
 * version 2 membership of the next configuration epoch (cluster_ms.c).
 *
 *   off size field
 *     0    8 magic         "RPLMEMB" 0x01
 *     8    8 config_epoch  1, 2, ...
 *    16    4 quorum        k
 *    20    4 n             members that follow, at most 8
 *    24  64n members       reserved u32 (0), port u16, reserved u16 (0),
 *                          host[56] (NUL-padded, printable)
 *   536    4 reserved      0
 *   540    4 crc           CRC-32C of bytes 0..539
 */
#include "config.h"

#include <endian.h>
#include <string.h>

#include "crc32c.h"
#include "common/membership.h"

#define V1_SIZE 544
#define V1_MEMBERS_MAX 8
#define V1_MEMBER 64
#define V1_HOST 56
#define V1_CRC_OFF 540

static const uint8_t magic_v1[8] = { 'R', 'P', 'L', 'M', 'E', 'M', 'B', 0x01 };

static uint16_t
get16(const uint8_t *p) { uint16_t v; memcpy(&v, p, 2); return le16toh(v); }
static uint32_t
get32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return le32toh(v); }
static uint64_t
get64(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return le64toh(v); }

#define FAIL(w) do { memset(ms, 0, sizeof(*ms)); \
	*why = "membership v1: " w; return -1; } while (0)

int
membership_decode_v1(const uint8_t *buf, size_t len, struct membership *ms,
		const char **why)
{
	static const uint8_t zero[V1_MEMBER];
	uint32_t n;

	memset(ms, 0, sizeof(*ms));
	if (len < V1_SIZE)
		FAIL("shorter than 544 bytes");
	if (memcmp(buf, magic_v1, 8) != 0)
		FAIL("bad magic (not \"RPLMEMB\" version 1)");
	if (get32(buf + V1_CRC_OFF) != rpma_crc32c(0, buf, V1_CRC_OFF))
		FAIL("checksum mismatch");
	ms->config_epoch = get64(buf + 8);
	ms->k = get32(buf + 16);
	n = get32(buf + 20);
	if (ms->config_epoch == 0)
		FAIL("config_epoch is 0");
	if (n == 0 || n > V1_MEMBERS_MAX)
		FAIL("n is not 1 to 8");
	if (ms->k > n)
		FAIL("quorum above the members");
	if (get32(buf + 536) != 0)
		FAIL("reserved field is not 0");
	for (uint32_t i = 0; i < V1_MEMBERS_MAX; i++) {
		const uint8_t *e = buf + 24 + (size_t)i * V1_MEMBER;
		struct member *m = &ms->m[i];
		size_t hl;

		if (i >= n) {
			if (memcmp(e, zero, V1_MEMBER) != 0)
				FAIL("bytes past the last member");
			continue;
		}
		if (get32(e) != 0 || get16(e + 6) != 0)
			FAIL("member reserved field is not 0");
		m->port = get16(e + 4);
		if (m->port == 0)
			FAIL("port 0");
		hl = strnlen((const char *)e + 8, V1_HOST);
		if (hl == 0 || hl == V1_HOST)
			FAIL("host empty or not terminated");
		/* version 2 has room for 47 characters */
		if (hl > MEMBER_HOST_MAX)
			FAIL("a host longer than 47 characters");
		for (size_t j = 0; j < V1_HOST; j++)
			if (j < hl ? (e[8 + j] < 0x21 || e[8 + j] > 0x7e) : e[8 + j] != 0)
				FAIL("host not printable or not NUL-padded");
		memcpy(m->host, e + 8, hl);
		m->flags = MEMBER_F_NEW;
	}
	ms->count = n;
	ms->v1 = true;
	ms->v1_crc = get32(buf + V1_CRC_OFF);
	return 0;
}
