/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * peer_floor.c -- the peer floors: their encoding and total decoder, the
 * two copies in the log's header blocks, and the rules on an entry
 * (peer_floor.h has the format and what they are for).
 */
#include "config.h"

#include <endian.h>
#include <string.h>

#include "crc32c.h"
#include "common/elog.h"
#include "common/fault.h"
#include "log/peer_floor.h"
#include "common/errors.h"

#define COPY_SIZE 4096
#define HDR_SIZE 24
#define ENTRY_SIZE 32
#define TAIL_OFF 792
#define CRC_OFF 796

_Static_assert(HDR_SIZE + ENTRY_SIZE * PEER_FLOORS_MAX == TAIL_OFF,
	"the entries end where the trailer starts");
_Static_assert(CRC_OFF + 4 == PEER_FLOORS_SIZE, "the crc ends the encoding");
_Static_assert(PEER_FLOORS_OFF + PEER_FLOORS_SIZE <= COPY_SIZE,
	"the table fits in a header copy");

static const uint8_t magic[8] = { 'R', 'P', 'L', 'F', 'L', 'O', 'R', 0x01 };

static void
put32(uint8_t *p, uint32_t v) { v = htole32(v); memcpy(p, &v, 4); }
static void
put64(uint8_t *p, uint64_t v) { v = htole64(v); memcpy(p, &v, 8); }
static uint32_t
get32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return le32toh(v); }
static uint64_t
get64(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return le64toh(v); }

#define FAIL(w) do { *why = "peer floors: " w; return -1; } while (0)

int
peer_floors_check(const struct peer_floors *t, const char **why)
{
	if (t->gen == 0)
		FAIL("gen is 0");
	if (t->count > PEER_FLOORS_MAX)
		FAIL("count is above 24");
	for (uint32_t i = 0; i < t->count; i++) {
		const struct peer_floor *e = &t->e[i];

		if (e->incarnation == 0)
			FAIL("an entry's incarnation is 0");
		if (e->flags & ~PEER_FLOOR_F_OLDER_COPY)
			FAIL("an entry has unknown flags");
		for (uint32_t j = 0; j < i; j++)
			if (e->node_id == t->e[j].node_id)
				FAIL("a node id is listed twice");
	}
	return 0;
}

int
peer_floors_encode(const struct peer_floors *t, uint8_t *buf, const char **why)
{
	if (peer_floors_check(t, why))
		return -1;
	memset(buf, 0, PEER_FLOORS_SIZE);
	memcpy(buf, magic, 8);
	put64(buf + 8, t->gen);
	put32(buf + 16, t->count);
	for (uint32_t i = 0; i < t->count; i++) {
		const struct peer_floor *e = &t->e[i];
		uint8_t *p = buf + HDR_SIZE + (size_t)i * ENTRY_SIZE;

		put32(p, e->node_id);
		put32(p + 4, e->flags);
		put64(p + 8, e->incarnation);
		put64(p + 16, e->promise);
		put64(p + 24, e->config);
	}
	put32(buf + CRC_OFF, rpma_crc32c(0, buf, CRC_OFF));
	return 0;
}

static int
parse(const uint8_t *buf, size_t len, struct peer_floors *t, const char **why)
{
	static const uint8_t zero[ENTRY_SIZE];

	if (len != PEER_FLOORS_SIZE)
		FAIL("not 800 bytes");
	if (memcmp(buf, magic, 8) != 0)
		FAIL("bad magic (not \"RPLFLOR\" version 1)");
	if (get32(buf + CRC_OFF) != rpma_crc32c(0, buf, CRC_OFF))
		FAIL("checksum mismatch");
	if (get32(buf + 20) != 0 || get32(buf + TAIL_OFF) != 0)
		FAIL("a reserved field is not 0");
	t->gen = get64(buf + 8);
	t->count = get32(buf + 16);
	if (t->count > PEER_FLOORS_MAX)
		FAIL("count is above 24");
	for (uint32_t i = 0; i < PEER_FLOORS_MAX; i++) {
		const uint8_t *p = buf + HDR_SIZE + (size_t)i * ENTRY_SIZE;
		struct peer_floor *e = &t->e[i];

		if (i >= t->count) {
			if (memcmp(p, zero, ENTRY_SIZE) != 0)
				FAIL("bytes past the last entry are not 0");
			continue;
		}
		e->node_id = get32(p);
		e->flags = get32(p + 4);
		e->incarnation = get64(p + 8);
		e->promise = get64(p + 16);
		e->config = get64(p + 24);
	}
	/* the rest are the encoder's rules */
	return peer_floors_check(t, why);
}

int
peer_floors_decode(const uint8_t *buf, size_t len, struct peer_floors *t,
		const char **why)
{
	memset(t, 0, sizeof(*t));
	if (parse(buf, len, t, why) == 0)
		return 0;
	memset(t, 0, sizeof(*t));
	return -1;
}

/* copy k's table, or gen 0 if it holds none valid */
static void
load_copy(struct rpma_ext_mem *mem, int k, struct peer_floors *t)
{
	const char *why;
	uint8_t *base;

	memset(t, 0, sizeof(*t));
	if (rpma_ext_mem_get_ptr(mem, (void **)&base))
		return;
	(void)peer_floors_decode(base + (size_t)k * COPY_SIZE + PEER_FLOORS_OFF,
		PEER_FLOORS_SIZE, t, &why);
}

int
peer_floors_load(struct rpma_ext_mem *mem, struct peer_floors *t)
{
	struct peer_floors b;

	load_copy(mem, 0, t);
	load_copy(mem, 1, &b);
	if (b.gen > t->gen)
		*t = b;
	return 0;
}

int
peer_floors_store(struct rpma_ext_mem *mem, struct peer_floors *t)
{
	struct peer_floors a, b;
	uint8_t buf[PEER_FLOORS_SIZE];
	const char *why;
	uint64_t gen;
	size_t at;
	int k;

	load_copy(mem, 0, &a);
	load_copy(mem, 1, &b);
	/* keep the newer copy: a torn write leaves it in place */
	k = a.gen > b.gen ? 1 : 0;
	gen = (a.gen > b.gen ? a.gen : b.gen) + 1;
	if (gen < t->gen + 1)
		gen = t->gen + 1;
	{
		struct peer_floors next = *t;

		next.gen = gen;
		if (peer_floors_encode(&next, buf, &why)) {
			REPL_LOG_ERROR("cannot store the peer floors: %s", why);
			return REPL_E_INVAL;
		}
	}
	at = (size_t)k * COPY_SIZE + PEER_FLOORS_OFF;
	if (REPL_FAULTED() ||
	    rpma_ext_mem_memcpy(mem, at, buf, PEER_FLOORS_SIZE) ||
	    rpma_ext_mem_persist(mem, at, PEER_FLOORS_SIZE))
		return REPL_E_INVAL;
	t->gen = gen;
	return 0;
}

const struct peer_floor *
peer_floor_find(const struct peer_floors *t, uint32_t node_id)
{
	for (uint32_t i = 0; i < t->count && i < PEER_FLOORS_MAX; i++)
		if (t->e[i].node_id == node_id)
			return &t->e[i];
	return NULL;
}

const struct peer_floor *
peer_floor_older(const struct peer_floors *t, uint32_t node_id,
		uint64_t incarnation, uint64_t prior_epoch, uint64_t config)
{
	const struct peer_floor *e = peer_floor_find(t, node_id);

	if (e == NULL || incarnation == 0 || e->incarnation != incarnation)
		return NULL;
	if ((e->flags & PEER_FLOOR_F_OLDER_COPY) || prior_epoch < e->promise ||
	    config < e->config)
		return e;
	return NULL;
}

/* the entry to give up for a new node id in a full table */
static uint32_t
victim(const struct peer_floors *t)
{
	uint32_t v = 0;

	for (uint32_t i = 1; i < t->count; i++)
		if (t->e[i].promise < t->e[v].promise ||
		    (t->e[i].promise == t->e[v].promise &&
		     t->e[i].config < t->e[v].config))
			v = i;
	return v;
}

bool
peer_floor_raise(struct peer_floors *t, uint32_t node_id, uint64_t incarnation,
		uint64_t promise, uint64_t config)
{
	struct peer_floor *e = (struct peer_floor *)peer_floor_find(t, node_id);
	bool changed = false;

	if (incarnation == 0 || (promise == 0 && config == 0))
		return false;
	if (e == NULL) {
		if (t->count > PEER_FLOORS_MAX)
			return false;
		e = t->count < PEER_FLOORS_MAX ? &t->e[t->count++] :
			&t->e[victim(t)];
		*e = (struct peer_floor){ .node_id = node_id,
			.incarnation = incarnation };
		changed = true;
	} else if (e->incarnation != incarnation) {
		/* its log was made anew: another log, nothing known of it */
		*e = (struct peer_floor){ .node_id = node_id,
			.incarnation = incarnation };
		changed = true;
	} else if (e->flags & PEER_FLOOR_F_OLDER_COPY) {
		return false;
	}
	if (promise > e->promise) {
		e->promise = promise;
		changed = true;
	}
	if (config > e->config) {
		e->config = config;
		changed = true;
	}
	return changed;
}

bool
peer_floor_mark_older(struct peer_floors *t, uint32_t node_id,
		uint64_t incarnation)
{
	struct peer_floor *e = (struct peer_floor *)peer_floor_find(t, node_id);

	if (e == NULL || e->incarnation != incarnation ||
	    (e->flags & PEER_FLOOR_F_OLDER_COPY))
		return false;
	e->flags |= PEER_FLOOR_F_OLDER_COPY;
	return true;
}
