/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * membership.c -- the membership's encoding and its total decoder
 * (membership.h has the format).  The decoder parses the bytes, checking
 * what only bytes can be wrong in (magic, checksum, padding), and then
 * applies the same rules the encoder applies to a struct: the two sides
 * cannot disagree.
 */
#include "config.h"

#include <endian.h>
#include <stdio.h>
#include <string.h>

#include "crc32c.h"
#include "common/membership.h"

#define HDR_SIZE 32
#define ENTRY_SIZE 64
#define HOST_FIELD 48
#define FROM_CRC_OFF 800
#define CRC_OFF 804

_Static_assert(HDR_SIZE + ENTRY_SIZE * MEMBERSHIP_NODES_MAX == FROM_CRC_OFF,
	"the entries end where from_crc starts");
_Static_assert(CRC_OFF + 4 == MEMBERSHIP_SIZE, "the crc ends the encoding");
_Static_assert(MEMBER_HOST_MAX + 1 == HOST_FIELD, "a host field holds its NUL");

static const uint8_t magic[8] = { 'R', 'P', 'L', 'M', 'E', 'M', 'B', 0x02 };

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

#define FAIL(w) do { *why = "membership: " w; return -1; } while (0)

/* the rules on the fields of one entry */
static int
check_entry(const struct membership *ms, const struct member *e,
		const char **why)
{
	bool joint = (ms->flags & MEMBERSHIP_F_JOINT) != 0;
	size_t hl = strnlen(e->host, sizeof(e->host));

	if (e->node_id > 0xffff)
		FAIL("an entry's node_id is above 65535");
	if (e->flags == 0)
		FAIL("an entry's flags are 0 (in neither configuration)");
	if (e->flags & ~(uint16_t)(MEMBER_F_NEW | MEMBER_F_OLD))
		FAIL("an entry has unknown flags");
	if ((e->flags & MEMBER_F_OLD) && !joint)
		FAIL("an entry is in OLD without JOINT");
	if (!(e->flags & MEMBER_F_NEW) && !joint)
		FAIL("an entry is not in NEW without JOINT");
	if (hl == sizeof(e->host))
		FAIL("an entry's host is longer than 47 characters");
	for (size_t j = 0; j < hl; j++)
		if (e->host[j] < 0x21 || e->host[j] > 0x7e)
			FAIL("an entry's host is not printable (or has a space)");
	if (hl == 0 && e->port != 0)
		FAIL("an entry's host is empty but its port is not 0");
	if (hl != 0 && e->port == 0)
		FAIL("an entry's port is 0");
	if (hl == 0 && e->node_id == 0)
		FAIL("an entry has neither an address nor a node id");
	return 0;
}

static bool
same_addr(const struct member *a, const struct member *b)
{
	return a->port != 0 && a->port == b->port && strcmp(a->host, b->host) == 0;
}

int
membership_check(const struct membership *ms, const char **why)
{
	uint32_t n_new = 0, n_old = 0;

	if (ms->v1)
		FAIL("a version 1 membership is read, never written");
	if (ms->config_epoch == 0)
		FAIL("config_epoch is 0");
	if (ms->flags & ~(uint32_t)(MEMBERSHIP_F_JOINT | MEMBERSHIP_F_FROM_JOINT))
		FAIL("unknown flags");
	if ((ms->flags & MEMBERSHIP_F_JOINT) && (ms->flags & MEMBERSHIP_F_FROM_JOINT))
		FAIL("JOINT and FROM_JOINT together");
	if (ms->from_crc != 0 && !(ms->flags & MEMBERSHIP_F_FROM_JOINT))
		FAIL("from_crc is not 0 without FROM_JOINT");
	if (ms->count == 0 || ms->count > MEMBERSHIP_NODES_MAX)
		FAIL("count is not 1 to 12");
	if (ms->k_old != 0 && !(ms->flags & MEMBERSHIP_F_JOINT))
		FAIL("k_old is not 0 without JOINT");
	for (uint32_t i = 0; i < ms->count; i++) {
		const struct member *e = &ms->m[i];

		if (check_entry(ms, e, why))
			return -1;
		for (uint32_t j = 0; j < i; j++) {
			if (e->node_id != 0 && e->node_id == ms->m[j].node_id)
				FAIL("a node id is listed twice");
			if (same_addr(e, &ms->m[j]))
				FAIL("an address is listed twice");
		}
		n_new += (e->flags & MEMBER_F_NEW) != 0;
		n_old += (e->flags & MEMBER_F_OLD) != 0;
	}
	if (ms->k >= n_new)
		FAIL("k is not below the nodes of NEW");
	if ((ms->flags & MEMBERSHIP_F_JOINT) && ms->k_old >= n_old)
		FAIL("k_old is not below the nodes of OLD");
	return 0;
}

int
membership_encode(const struct membership *ms, uint8_t *buf, const char **why)
{
	if (membership_check(ms, why))
		return -1;
	memset(buf, 0, MEMBERSHIP_SIZE);
	memcpy(buf, magic, 8);
	put64(buf + 8, ms->config_epoch);
	put32(buf + 16, ms->k);
	put32(buf + 20, ms->k_old);
	put32(buf + 24, ms->flags);
	put32(buf + 28, ms->count);
	for (uint32_t i = 0; i < ms->count; i++) {
		const struct member *e = &ms->m[i];
		uint8_t *p = buf + HDR_SIZE + (size_t)i * ENTRY_SIZE;

		put32(p, e->node_id);
		put16(p + 4, e->flags);
		put16(p + 6, e->port);
		put64(p + 8, e->incarnation);
		memcpy(p + 16, e->host, strlen(e->host));
	}
	put32(buf + FROM_CRC_OFF, ms->from_crc);
	put32(buf + CRC_OFF, rpma_crc32c(0, buf, CRC_OFF));
	return 0;
}

int
membership_decode(const uint8_t *buf, size_t len, struct membership *ms,
		const char **why)
{
	static const uint8_t zero[ENTRY_SIZE];

	memset(ms, 0, sizeof(*ms));
	if (len != MEMBERSHIP_SIZE)
		FAIL("not 808 bytes");
	if (memcmp(buf, magic, 8) != 0)
		FAIL("bad magic (not \"RPLMEMB\" version 2)");
	if (get32(buf + CRC_OFF) != rpma_crc32c(0, buf, CRC_OFF))
		FAIL("checksum mismatch");
	ms->config_epoch = get64(buf + 8);
	ms->k = get32(buf + 16);
	ms->k_old = get32(buf + 20);
	ms->flags = get32(buf + 24);
	ms->count = get32(buf + 28);
	ms->from_crc = get32(buf + FROM_CRC_OFF);
	if (ms->count == 0 || ms->count > MEMBERSHIP_NODES_MAX)
		FAIL("count is not 1 to 12");
	for (uint32_t i = 0; i < MEMBERSHIP_NODES_MAX; i++) {
		const uint8_t *p = buf + HDR_SIZE + (size_t)i * ENTRY_SIZE;
		struct member *e = &ms->m[i];
		size_t hl;

		if (i >= ms->count) {
			if (memcmp(p, zero, ENTRY_SIZE) != 0)
				FAIL("bytes past the last entry are not 0");
			continue;
		}
		e->node_id = get32(p);
		e->flags = get16(p + 4);
		e->port = get16(p + 6);
		e->incarnation = get64(p + 8);
		hl = strnlen((const char *)p + 16, HOST_FIELD);
		if (hl == HOST_FIELD)
			FAIL("an entry's host is longer than 47 characters");
		for (size_t j = hl; j < HOST_FIELD; j++)
			if (p[16 + j] != 0)
				FAIL("an entry's host is not NUL-padded");
		memcpy(e->host, p + 16, hl);
	}
	/* the rest are the encoder's rules */
	if (membership_check(ms, why)) {
		memset(ms, 0, sizeof(*ms));
		return -1;
	}
	return 0;
}

uint32_t
membership_crc(const struct membership *ms)
{
	uint8_t buf[MEMBERSHIP_SIZE];
	const char *why;
	uint32_t crc;

	if (ms->config_epoch == 0)
		return 0;
	if (ms->v1)
		crc = ms->v1_crc;	/* never encoded: the crc it was read with */
	else if (membership_encode(ms, buf, &why) != 0)
		return 0;
	else
		crc = get32(buf + CRC_OFF);
	return crc != 0 ? crc : 1;	/* 0 says "none" */
}

uint32_t
membership_nodes(const struct membership *ms, uint16_t flag)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < ms->count && i < MEMBERSHIP_NODES_MAX; i++)
		n += (ms->m[i].flags & flag) != 0;
	return n;
}

void
membership_addr(const struct member *m, char *buf, size_t len)
{
	if (m->port)
		snprintf(buf, len, "%s:%u", m->host, (unsigned)m->port);
	else
		snprintf(buf, len, "node %u", (unsigned)m->node_id);
}
