/* SPDX-License-Identifier: BSD-3-Clause */
/* membership.c -- the membership's encoding (membership.h has the format) */
#include "config.h"

#include <endian.h>
#include <string.h>

#include "crc32c.h"
#include "membership.h"

#define CRC_OFF 540
#define MEMBER_SIZE 64

static const uint8_t magic[8] = { 'R', 'P', 'L', 'M', 'E', 'M', 'B', 0x01 };

static void
put16(uint8_t *p, uint16_t v) { v = htole16(v); memcpy(p, &v, 2); }
static void
put32(uint8_t *p, uint32_t v) { v = htole32(v); memcpy(p, &v, 4); }
static void
put64(uint8_t *p, uint64_t v) { v = htole64(v); memcpy(p, &v, 8); }
static uint16_t
get16(const uint8_t *p) { uint16_t v; memcpy(&v, p, 2); return le16toh(v); }
static uint32_t
get32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return le32toh(v); }
static uint64_t
get64(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return le64toh(v); }

void
membership_encode(const struct membership *ms, uint8_t *buf)
{
	memset(buf, 0, MEMBERSHIP_SIZE);
	memcpy(buf, magic, 8);
	put64(buf + 8, ms->config_epoch);
	put32(buf + 16, ms->quorum);
	put32(buf + 20, ms->n);
	for (uint32_t i = 0; i < ms->n && i < MEMBERS_MAX; i++) {
		uint8_t *e = buf + 24 + (size_t)i * MEMBER_SIZE;

		put16(e + 4, ms->m[i].port);
		memcpy(e + 8, ms->m[i].host, strnlen(ms->m[i].host, MEMBER_HOST_MAX));
	}
	put32(buf + CRC_OFF, rpma_crc32c(0, buf, CRC_OFF));
}

int
membership_decode(const uint8_t *buf, size_t len, struct membership *ms,
		const char **why)
{
	static const uint8_t zero[MEMBER_SIZE];

	memset(ms, 0, sizeof(*ms));
	if (len != MEMBERSHIP_SIZE)
		return *why = "membership: not 544 bytes", -1;
	if (memcmp(buf, magic, 8) != 0)
		return *why = "membership: bad magic", -1;
	if (get32(buf + CRC_OFF) != rpma_crc32c(0, buf, CRC_OFF))
		return *why = "membership: checksum mismatch", -1;
	ms->config_epoch = get64(buf + 8);
	ms->quorum = get32(buf + 16);
	ms->n = get32(buf + 20);
	if (ms->config_epoch == 0)
		return *why = "membership: config_epoch is 0", -1;
	if (ms->n > MEMBERS_MAX)
		return *why = "membership: more than 8 members", -1;
	if (ms->quorum > ms->n)
		return *why = "membership: quorum above the members", -1;
	if (get32(buf + 536) != 0)
		return *why = "membership: reserved field is not 0", -1;
	for (uint32_t i = 0; i < MEMBERS_MAX; i++) {
		const uint8_t *e = buf + 24 + (size_t)i * MEMBER_SIZE;
		size_t hl;

		if (i >= ms->n) {
			if (memcmp(e, zero, MEMBER_SIZE) != 0)
				return *why = "membership: bytes past the last member", -1;
			continue;
		}
		ms->m[i].port = get16(e + 4);
		if (get32(e) != 0 || get16(e + 6) != 0)
			return *why = "membership: member reserved field is not 0", -1;
		hl = strnlen((const char *)e + 8, 56);
		if (hl == 0 || hl > MEMBER_HOST_MAX)
			return *why = "membership: host empty or not terminated", -1;
		for (size_t j = 0; j < 56; j++)
			if (j < hl ? (e[8 + j] < 0x21 || e[8 + j] > 0x7e) : e[8 + j] != 0)
				return *why = "membership: host not printable or not NUL-padded", -1;
		memcpy(ms->m[i].host, e + 8, hl);
		if (ms->m[i].port == 0)
			return *why = "membership: port 0", -1;
	}
	return 0;
}

bool
membership_same(const struct membership *a, const struct membership *b)
{
	return a->quorum == b->quorum && a->n == b->n;
}
