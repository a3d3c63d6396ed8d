/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * peer_floor_codec.c -- the peer floors (engine/log/peer_floor.h): the layout,
 * one refusal per rule (by the decoder, bytes with a valid checksum, and
 * by the encoder), a decoder total over arbitrary bytes (every bit of a
 * valid table flipped, with and without its checksum made right again,
 * and random tables: each refused, or accepted with one encoding), the
 * log's two copies (a torn store keeps the previous table), and the rules
 * on an entry: what is an older copy, what raises a floor, a new
 * incarnation replacing an entry, a full table.
 */
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "crc32c.h"
#include "log/peer_floor.h"
#include "repl.h"
#include "unit.h"

#define SIZE (1u << 20)
#define E(i, off) (24 + 32 * (i) + (off))

static void
put_le(uint8_t *p, uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void
restamp(uint8_t *b)
{
	put_le(b + 796, rpma_crc32c(0, b, 796), 4);
}

/* nodes 2 and 3, their promises and configuration epochs; generation 7 */
static struct peer_floors
two(void)
{
	struct peer_floors t = { .gen = 7, .count = 2 };

	t.e[0] = (struct peer_floor){ .node_id = 2, .incarnation = 0xa2,
		.promise = (3ull << 16) | 1, .config = 3 };
	t.e[1] = (struct peer_floor){ .node_id = 3, .incarnation = 0xa3,
		.promise = (2ull << 16) | 1, .config = 1,
		.flags = PEER_FLOOR_F_OLDER_COPY };
	return t;
}

static void
round_trip(void)
{
	struct peer_floors t = two(), back;
	uint8_t a[PEER_FLOORS_SIZE], b[PEER_FLOORS_SIZE];
	const char *why = NULL;

	CU_ASSERT_EQUAL_FATAL(peer_floors_encode(&t, a, &why), 0);
	CU_ASSERT_EQUAL_FATAL(peer_floors_decode(a, sizeof(a), &back, &why), 0);
	CU_ASSERT_EQUAL(memcmp(&back, &t, sizeof(t)), 0);
	CU_ASSERT_EQUAL(peer_floors_encode(&back, b, &why), 0);
	CU_ASSERT_EQUAL(memcmp(a, b, sizeof(a)), 0);
	/* the layout of peer_floor.h */
	CU_ASSERT_EQUAL(memcmp(a, "RPLFLOR\001", 8), 0);
	CU_ASSERT_EQUAL(a[8], 7);
	CU_ASSERT_EQUAL(a[16], 2);
	CU_ASSERT_EQUAL(a[E(1, 0)], 3);
	CU_ASSERT_EQUAL(a[E(1, 4)], PEER_FLOOR_F_OLDER_COPY);
	CU_ASSERT_EQUAL(a[E(1, 8)], 0xa3);
	CU_ASSERT_EQUAL(a[E(0, 16)], 1);
	CU_ASSERT_EQUAL(a[E(0, 18)], 3);		/* term 3 */
	CU_ASSERT_EQUAL(a[E(0, 24)], 3);
	for (int i = E(2, 0); i < 796; i++)
		CU_ASSERT_EQUAL(a[i], 0);
	/* an empty table, and a full one */
	t = (struct peer_floors){ .gen = 1 };
	CU_ASSERT_EQUAL(peer_floors_encode(&t, a, &why), 0);
	CU_ASSERT_EQUAL(peer_floors_decode(a, sizeof(a), &back, &why), 0);
	CU_ASSERT_EQUAL(back.count, 0);
	t.count = PEER_FLOORS_MAX;
	for (uint32_t i = 0; i < PEER_FLOORS_MAX; i++)
		t.e[i] = (struct peer_floor){ .node_id = 100 + i,
			.incarnation = UINT64_MAX - i, .promise = UINT64_MAX,
			.config = UINT64_MAX };
	CU_ASSERT_EQUAL(peer_floors_encode(&t, a, &why), 0);
	CU_ASSERT_EQUAL(peer_floors_decode(a, sizeof(a), &back, &why), 0);
	CU_ASSERT_EQUAL(memcmp(&back, &t, sizeof(t)), 0);
}

/* the decoder must refuse b (restamped) naming want, and leave it empty */
static void
reject(uint8_t *b, const char *want)
{
	struct peer_floors back;
	const char *why = NULL;

	restamp(b);
	CU_ASSERT_EQUAL(peer_floors_decode(b, PEER_FLOORS_SIZE, &back, &why), -1);
	CU_ASSERT(back.gen == 0 && back.count == 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(why);
	if (strstr(why, want) == NULL) {
		printf("\n  decoder said \"%s\", want \"%s\"\n", why, want);
		CU_FAIL("wrong reason");
	}
}

static void
refuse(const struct peer_floors *t, const char *want)
{
	uint8_t b[PEER_FLOORS_SIZE];
	const char *why = NULL;

	CU_ASSERT_EQUAL(peer_floors_encode(t, b, &why), -1);
	CU_ASSERT_PTR_NOT_NULL_FATAL(why);
	if (strstr(why, want) == NULL) {
		printf("\n  encoder said \"%s\", want \"%s\"\n", why, want);
		CU_FAIL("wrong reason");
	}
}

static void
good(uint8_t *b)
{
	struct peer_floors t = two();
	const char *why;

	CU_ASSERT_EQUAL_FATAL(peer_floors_encode(&t, b, &why), 0);
}

static void
refusals(void)
{
	struct peer_floors t, back;
	uint8_t b[PEER_FLOORS_SIZE];
	const char *why;

	good(b);
	b[7] = 2;
	reject(b, "bad magic");
	good(b);
	b[100] ^= 1;
	CU_ASSERT_EQUAL(peer_floors_decode(b, sizeof(b), &back, &why), -1);
	CU_ASSERT(strstr(why, "checksum") != NULL);
	CU_ASSERT_EQUAL(peer_floors_decode(b, sizeof(b) - 1, &back, &why), -1);
	CU_ASSERT(strstr(why, "not 800 bytes") != NULL);
	good(b);
	put_le(b + 8, 0, 8);
	reject(b, "gen is 0");
	t = two();
	t.gen = 0;
	refuse(&t, "gen is 0");
	good(b);
	put_le(b + 16, PEER_FLOORS_MAX + 1, 4);
	reject(b, "count is above 24");
	t = two();
	t.count = PEER_FLOORS_MAX + 1;
	refuse(&t, "count is above 24");
	good(b);
	b[20] = 1;
	reject(b, "reserved");
	good(b);
	b[792] = 1;
	reject(b, "reserved");
	good(b);
	put_le(b + E(1, 8), 0, 8);
	reject(b, "incarnation is 0");
	t = two();
	t.e[1].incarnation = 0;
	refuse(&t, "incarnation is 0");
	good(b);
	b[E(0, 4)] = 2;
	reject(b, "unknown flags");
	t = two();
	t.e[0].flags = 1u << 31;
	refuse(&t, "unknown flags");
	good(b);
	b[E(1, 0)] = 2;
	reject(b, "listed twice");
	t = two();
	t.e[1].node_id = 2;
	refuse(&t, "listed twice");
	/* an entry past count: one byte of it is enough */
	good(b);
	b[E(2, 31)] = 1;
	reject(b, "past the last entry");
	good(b);
	put_le(b + 16, 1, 4);		/* entry 1 now lies past count */
	reject(b, "past the last entry");
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t
next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* whatever b holds: refused and empty, or accepted with one encoding */
static void
total_on(const uint8_t *b, unsigned *accepted)
{
	struct peer_floors t;
	uint8_t again[PEER_FLOORS_SIZE];
	const char *why = NULL;

	if (peer_floors_decode(b, PEER_FLOORS_SIZE, &t, &why) != 0) {
		CU_ASSERT_PTR_NOT_NULL(why);
		CU_ASSERT(t.gen == 0 && t.count == 0);
		return;
	}
	(*accepted)++;
	CU_ASSERT(t.count <= PEER_FLOORS_MAX);
	CU_ASSERT_EQUAL(peer_floors_encode(&t, again, &why), 0);
	CU_ASSERT_EQUAL(memcmp(again, b, PEER_FLOORS_SIZE), 0);
}

static void
total(void)
{
	uint8_t b[PEER_FLOORS_SIZE], v[PEER_FLOORS_SIZE];
	unsigned accepted = 0, flips_accepted = 0;

	good(v);
	/* every bit flipped: the checksum catches each */
	for (int bit = 0; bit < PEER_FLOORS_SIZE * 8; bit++) {
		memcpy(b, v, sizeof(b));
		b[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		total_on(b, &accepted);
	}
	CU_ASSERT_EQUAL(accepted, 0);
	/* and with the checksum made right: the rules must hold */
	for (int bit = 0; bit < 796 * 8; bit++) {
		memcpy(b, v, sizeof(b));
		b[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		restamp(b);
		total_on(b, &flips_accepted);
	}
	/* a value or a node id may change; the magic, count, padding not */
	CU_ASSERT(flips_accepted > 0 && flips_accepted < 796 * 8);
	/* random tables near the valid ones, and random bytes */
	for (int round = 0; round < 20000; round++) {
		int flips = (int)(next() % 8);

		if (round & 1) {
			for (size_t i = 0; i < sizeof(b); i++)
				b[i] = (uint8_t)next();
			if (round & 2)
				memcpy(b, "RPLFLOR\001", 8);
		} else {
			memcpy(b, v, sizeof(b));
			put_le(b + 16, next() % 30, 4);
			for (int f = 0; f < flips; f++)
				b[next() % 796] ^= (uint8_t)(1u << (next() % 8));
		}
		if (round & 4)
			restamp(b);
		total_on(b, &accepted);
	}
}

/* the log's copies: the newer valid one wins; a torn store keeps the last */
static void
log_copies(void)
{
	char path[128];
	struct rpma_ext_mem *mem = NULL;
	struct peer_floors t = two(), got;
	uint8_t *base;

	snprintf(path, sizeof(path), "/dev/shm/rpma-floor-codec-%d", (int)getpid());
	CU_ASSERT_FATAL(rpma_ext_mem_open(RPMA_EXT_MEM_CRASH, path, SIZE,
		RPMA_EXT_MEM_CREATE, &mem) == 0);
	rpma_ext_mem_get_ptr(mem, (void **)&base);
	peer_floors_load(mem, &got);
	CU_ASSERT(got.gen == 0 && got.count == 0);
	/* the first store: generation 1 (whatever t said) in copy A */
	t.gen = 0;
	CU_ASSERT_EQUAL(peer_floors_store(mem, &t), 0);
	CU_ASSERT_EQUAL(t.gen, 1);
	CU_ASSERT_EQUAL(memcmp(base + PEER_FLOORS_OFF, "RPLFLOR\001", 8), 0);
	peer_floors_load(mem, &got);
	CU_ASSERT(got.gen == 1 && got.count == 2 && got.e[0].config == 3);
	/* the next goes to copy B and wins */
	t.e[0].config = 5;
	CU_ASSERT_EQUAL(peer_floors_store(mem, &t), 0);
	CU_ASSERT_EQUAL(t.gen, 2);
	CU_ASSERT_EQUAL(base[4096 + PEER_FLOORS_OFF + 8], 2);
	peer_floors_load(mem, &got);
	CU_ASSERT(got.gen == 2 && got.e[0].config == 5);
	/* the third over copy A; torn, generation 2 stays */
	t.e[0].config = 6;
	CU_ASSERT_EQUAL(peer_floors_store(mem, &t), 0);
	CU_ASSERT_EQUAL(base[PEER_FLOORS_OFF + 8], 3);
	base[PEER_FLOORS_OFF + 30] ^= 0x40;
	peer_floors_load(mem, &got);
	CU_ASSERT(got.gen == 2 && got.e[0].config == 5);
	/* the next store overwrites the torn copy, not the good one */
	t.gen = 2;
	t.e[0].config = 7;
	CU_ASSERT_EQUAL(peer_floors_store(mem, &t), 0);
	CU_ASSERT_EQUAL(t.gen, 3);
	peer_floors_load(mem, &got);
	CU_ASSERT(got.gen == 3 && got.e[0].config == 7);
	CU_ASSERT_EQUAL(base[4096 + PEER_FLOORS_OFF + 8], 2);
	/* an invalid table is not stored */
	t.e[1].node_id = t.e[0].node_id;
	CU_ASSERT_EQUAL(peer_floors_store(mem, &t), REPL_E_INVAL);
	peer_floors_load(mem, &got);
	CU_ASSERT(got.gen == 3 && got.e[1].node_id == 3);
	/* the membership's place is not touched */
	for (int i = 1024; i < 1024 + 808; i++)
		CU_ASSERT_EQUAL(base[i] | base[4096 + i], 0);
	rpma_ext_mem_close(&mem);
	unlink(path);
}

static void
rules(void)
{
	struct peer_floors t = { 0 };
	const uint64_t e2 = (2ull << 16) | 1, e5 = (5ull << 16) | 2;
	const struct peer_floor *e;

	/* nothing known: no answer is an older copy */
	CU_ASSERT_PTR_NULL(peer_floor_older(&t, 3, 0xc, 0, 0));
	/* a promise and a membership seen: the answers at or above pass */
	CU_ASSERT(peer_floor_raise(&t, 3, 0xc, e2, 0));
	CU_ASSERT(peer_floor_raise(&t, 3, 0xc, 0, 3));
	CU_ASSERT(!peer_floor_raise(&t, 3, 0xc, e2, 3));	/* no rise */
	CU_ASSERT(!peer_floor_raise(&t, 3, 0xc, e2 - 1, 2));	/* nor down */
	CU_ASSERT(!peer_floor_raise(&t, 3, 0, e5, 4));	/* no incarnation */
	e = peer_floor_find(&t, 3);
	CU_ASSERT_FATAL(e != NULL);
	CU_ASSERT(e->promise == e2 && e->config == 3 && t.count == 1);
	CU_ASSERT_PTR_NULL(peer_floor_older(&t, 3, 0xc, e2, 3));
	CU_ASSERT_PTR_NULL(peer_floor_older(&t, 3, 0xc, e5, 9));
	/* below either: an older copy of that log */
	CU_ASSERT(peer_floor_older(&t, 3, 0xc, e2 - 1, 3) == e);
	CU_ASSERT(peer_floor_older(&t, 3, 0xc, e5, 2) == e);
	CU_ASSERT(peer_floor_older(&t, 3, 0xc, 0, 0) == e);
	/* another incarnation is another log; another node another entry */
	CU_ASSERT_PTR_NULL(peer_floor_older(&t, 3, 0xd, 0, 0));
	CU_ASSERT_PTR_NULL(peer_floor_older(&t, 4, 0xc, 0, 0));
	/* marked: its answers stay an older copy's, and nothing raises it */
	CU_ASSERT(peer_floor_mark_older(&t, 3, 0xc));
	CU_ASSERT(!peer_floor_mark_older(&t, 3, 0xc));
	CU_ASSERT(!peer_floor_mark_older(&t, 3, 0xd));
	CU_ASSERT(peer_floor_older(&t, 3, 0xc, e5, 9) == e);
	CU_ASSERT(!peer_floor_raise(&t, 3, 0xc, e5 + (1ull << 16), 9));
	CU_ASSERT(e->promise == e2);
	/* its log made anew: the new incarnation replaces the entry */
	CU_ASSERT(peer_floor_raise(&t, 3, 0xd, e5, 0));
	CU_ASSERT(e->incarnation == 0xd && e->flags == 0 && e->promise == e5 &&
		e->config == 0 && t.count == 1);
	CU_ASSERT_PTR_NULL(peer_floor_older(&t, 3, 0xd, e5, 0));
	CU_ASSERT_PTR_NULL(peer_floor_older(&t, 3, 0xc, 0, 0));
	/* full: a new node takes the entry with the lowest promise */
	for (uint32_t i = 1; i < PEER_FLOORS_MAX; i++)
		CU_ASSERT(peer_floor_raise(&t, 100 + i, 0x100 + i,
			e5 + (i << 16), 0));
	CU_ASSERT_EQUAL(t.count, PEER_FLOORS_MAX);
	CU_ASSERT(peer_floor_raise(&t, 200, 0x200, e5 + (50ull << 16), 0));
	CU_ASSERT_EQUAL(t.count, PEER_FLOORS_MAX);
	CU_ASSERT_PTR_NULL(peer_floor_find(&t, 3));	/* node 3's went */
	CU_ASSERT_PTR_NOT_NULL(peer_floor_find(&t, 200));
	CU_ASSERT_PTR_NOT_NULL(peer_floor_find(&t, 101));
	{
		const char *why;

		t.gen = 1;
		CU_ASSERT_EQUAL(peer_floors_check(&t, &why), 0);
	}
}

UNIT_MAIN("peer_floor_codec",
	UNIT_CASE(round_trip),
	UNIT_CASE(refusals),
	UNIT_CASE(total),
	UNIT_CASE(log_copies),
	UNIT_CASE(rules))
