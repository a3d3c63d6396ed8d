/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * link_split.c -- how a link cuts a batch's ring bytes into the pieces it
 * writes and flushes: none crosses the ring's end, none is longer than a
 * flush may be (LINK_FLUSH_MAX: the core refuses a flush of 2^32 bytes or
 * more), and together they are the range, in order.
 */
#include <stdint.h>

#include "primary/primary.h"
#include "unit.h"

#define PIECES_MAX 64

struct piece {
	uint64_t off, len;
};

/* the pieces of len bytes from off; checks what holds for any split */
static int
split(uint64_t ring, uint64_t off, uint64_t len, uint64_t max,
		struct piece *p)
{
	struct link_split s;
	uint64_t total = 0, at = off;
	int n = 0;

	link_split_init(&s, ring, off, len, max);
	while (n < PIECES_MAX && link_split_next(&s, &p[n].off, &p[n].len)) {
		CU_ASSERT(p[n].len > 0);
		CU_ASSERT(p[n].len <= max);
		CU_ASSERT_EQUAL(p[n].off, at);		/* contiguous, in order */
		CU_ASSERT(p[n].off < ring);
		CU_ASSERT(p[n].len <= ring - p[n].off);	/* no wrap inside */
		total += p[n].len;
		at = p[n].off + p[n].len == ring ? 0 : p[n].off + p[n].len;
		n++;
	}
	CU_ASSERT_FATAL(n < PIECES_MAX);
	CU_ASSERT_EQUAL(total, len);
	return n;
}

/* a ring larger than every range below: only the limit cuts */
#define BIG_RING (64 * LINK_FLUSH_MAX)

static void
test_limit(void)
{
	struct piece p[PIECES_MAX];
	const uint64_t L = LINK_FLUSH_MAX;

	CU_ASSERT_EQUAL(L, UINT32_MAX);
	CU_ASSERT_EQUAL(split(BIG_RING, 8, 0, L, p), 0);
	CU_ASSERT_EQUAL_FATAL(split(BIG_RING, 8, 1, L, p), 1);
	CU_ASSERT_EQUAL(p[0].len, 1);
	CU_ASSERT_EQUAL_FATAL(split(BIG_RING, 8, L - 1, L, p), 1);
	CU_ASSERT_EQUAL(p[0].len, L - 1);
	CU_ASSERT_EQUAL_FATAL(split(BIG_RING, 8, L, L, p), 1);
	CU_ASSERT_EQUAL(p[0].len, L);
	CU_ASSERT_EQUAL_FATAL(split(BIG_RING, 8, L + 1, L, p), 2);
	CU_ASSERT_EQUAL(p[0].len, L);
	CU_ASSERT_EQUAL(p[1].off, 8 + L);
	CU_ASSERT_EQUAL(p[1].len, 1);
	CU_ASSERT_EQUAL_FATAL(split(BIG_RING, 0, 3 * L + 5, L, p), 4);
	for (int i = 0; i < 3; i++) {
		CU_ASSERT_EQUAL(p[i].off, (uint64_t)i * L);
		CU_ASSERT_EQUAL(p[i].len, L);
	}
	CU_ASSERT_EQUAL(p[3].off, 3 * L);
	CU_ASSERT_EQUAL(p[3].len, 5);
}

/* the ring's end cuts too, and the rest starts at offset 0 */
static void
test_wrap(void)
{
	struct piece p[PIECES_MAX];
	const uint64_t L = LINK_FLUSH_MAX;
	uint64_t ring = 4 * L + 4096;

	/* ends exactly at the ring's end: one piece, nothing at 0 */
	CU_ASSERT_EQUAL_FATAL(split(ring, ring - 64, 64, L, p), 1);
	CU_ASSERT_EQUAL(p[0].off, ring - 64);
	/* across the end, each side short */
	CU_ASSERT_EQUAL_FATAL(split(ring, ring - 64, 100, L, p), 2);
	CU_ASSERT_EQUAL(p[0].len, 64);
	CU_ASSERT_EQUAL(p[1].off, 0);
	CU_ASSERT_EQUAL(p[1].len, 36);
	/* across the end with more than the limit on each side */
	CU_ASSERT_EQUAL_FATAL(split(ring, ring - (L + 8), 3 * L + 5, L, p), 4);
	CU_ASSERT_EQUAL(p[0].off, ring - (L + 8));
	CU_ASSERT_EQUAL(p[0].len, L);
	CU_ASSERT_EQUAL(p[1].off, ring - 8);
	CU_ASSERT_EQUAL(p[1].len, 8);
	CU_ASSERT_EQUAL(p[2].off, 0);
	CU_ASSERT_EQUAL(p[2].len, L);
	CU_ASSERT_EQUAL(p[3].off, L);
	CU_ASSERT_EQUAL(p[3].len, L - 3);
	/* the whole ring from its middle */
	CU_ASSERT_EQUAL_FATAL(split(ring, 2 * L, ring, L, p), 5);
	CU_ASSERT_EQUAL(p[2].off, 4 * L);
	CU_ASSERT_EQUAL(p[2].len, 4096);
	CU_ASSERT_EQUAL(p[3].off, 0);
	CU_ASSERT_EQUAL(p[4].off, L);
	CU_ASSERT_EQUAL(p[4].len, L);
}

/* a small ring and limit: every offset and length, against a byte map */
static void
test_exhaustive(void)
{
	enum { RING = 40, MAX = 7 };
	struct piece p[PIECES_MAX];

	for (uint64_t off = 0; off < RING; off += 8)
		for (uint64_t len = 0; len <= RING; len++) {
			int n = split(RING, off, len, MAX, p), seen[RING] = { 0 };

			for (int i = 0; i < n; i++)
				for (uint64_t b = 0; b < p[i].len; b++)
					seen[p[i].off + b]++;
			for (uint64_t b = 0; b < RING; b++)
				CU_ASSERT_EQUAL(seen[b],
					(b + RING - off) % RING < len ? 1 : 0);
			/* as few pieces as the two cuts allow */
			{
				uint64_t first = RING - off < len ? RING - off : len;

				CU_ASSERT_EQUAL((uint64_t)n, (first + MAX - 1) / MAX +
					(len - first + MAX - 1) / MAX);
			}
		}
}

/* requests of a batch of len bytes from off, as post_batch() posts them */
static uint64_t
batch_ops(uint64_t ring, uint64_t off, uint64_t len)
{
	struct piece p[PIECES_MAX];
	int n = split(ring, off, len, LINK_FLUSH_MAX, p);
	uint64_t ops = n == 0 ? 1 : 0;	/* nothing new: one bare flush */

	for (int i = 0; i < n; i++)
		ops += link_piece_ops(p[i].len);
	return ops;
}

/* no batch posts more than the send queue is sized for */
static void
test_ops_bound(void)
{
	const uint64_t W = LINK_WRITE_MAX, L = LINK_FLUSH_MAX;
	const uint64_t rings[] = { 1u << 20, W, W + 8, 64u << 20, 256u << 20,
		4 * L + 4096, 9 * L };

	CU_ASSERT_EQUAL(link_piece_ops(0), 1);
	CU_ASSERT_EQUAL(link_piece_ops(W), 1);
	CU_ASSERT_EQUAL(link_piece_ops(W + 1), 3);
	CU_ASSERT_EQUAL(link_piece_ops(3 * W), 4);
	for (size_t r = 0; r < sizeof(rings) / sizeof(rings[0]); r++) {
		uint64_t ring = rings[r], max = link_batch_ops_max(ring);
		const uint64_t offs[] = { 0, 8, ring / 2, ring - 8, ring > W + 8 ?
			ring - W - 8 : 16 };
		const uint64_t lens[] = { 0, 1, W, W + 1, ring / 2, ring - 8, ring };

		CU_ASSERT(link_sq_depth(ring) >= LINK_FLIGHT * max + 8);
		for (size_t o = 0; o < sizeof(offs) / sizeof(offs[0]); o++)
			for (size_t l = 0; l < sizeof(lens) / sizeof(lens[0]); l++)
				if (lens[l] <= ring)	/* a batch is never more */
					CU_ASSERT(batch_ops(ring, offs[o] & ~7ull,
						lens[l]) <= max);
	}
	/* a full resync of a full 256 MiB log in one batch: more than 40 */
	CU_ASSERT(batch_ops(256u << 20, 8, (256u << 20) - 8) > 40);
}

UNIT_MAIN("link_split",
	UNIT_CASE(test_limit), UNIT_CASE(test_wrap), UNIT_CASE(test_exhaustive),
	UNIT_CASE(test_ops_bound))
