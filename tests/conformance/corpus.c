/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * corpus.c -- the conformance corpus: byte strings for
 * rpma_mr_remote_from_descriptor() and rpma_peer_cfg_from_descriptor(),
 * and the named probes.  Deterministic for a given seed; the boundary
 * cases do not depend on the seed at all, so every row of the differences
 * table is exercised whatever the seed.
 *
 * Format-0 descriptors are laid out here by hand (offsets of descriptor.c);
 * format-1 ones come from our encoder, rpma_mr_desc_encode().  Either way
 * the corpus is just bytes and both libraries see the same ones.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conformance.h"
#include "crc32c.h"
#include "descriptor.h"

#define F0 RPMA_EXT_MR_DESC_SIZE_V0
#define F1 RPMA_EXT_MR_DESC_SIZE_V1

/* splitmix64: small, fast, and the same on every platform */
static uint64_t rng_state;

static uint64_t
rnd(void)
{
	uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

/* uniform enough in [0, n) for n > 0 */
static uint64_t
rnd_below(uint64_t n)
{
	return rnd() % n;
}

static void
rnd_bytes(unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (unsigned char)rnd();
}

static void
put_le(unsigned char *p, uint64_t v, int bytes)
{
	for (int i = 0; i < bytes; i++, v >>= 8)
		p[i] = (unsigned char)v;
}

static int
add(struct conf_corpus *c, uint8_t kind, const void *bytes, size_t size,
		const char *origin)
{
	if (size > CONF_MAX_PAYLOAD)
		return -1;
	if (c->count == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 4096;
		struct conf_case *n = realloc(c->cases, cap * sizeof(*n));
		if (n == NULL)
			return -1;
		c->cases = n;
		c->cap = cap;
	}
	unsigned char *copy = malloc(size ? size : 1);
	if (copy == NULL)
		return -1;
	if (size)
		memcpy(copy, bytes, size);
	c->cases[c->count++] = (struct conf_case){
		.kind = kind, .size = (uint32_t)size, .bytes = copy,
		.origin = origin,
	};
	c->per_kind[kind]++;
	return 0;
}

#define ADD(kind, bytes, size, origin) \
	do { \
		if (add(corpus, (kind), (bytes), (size), (origin))) \
			return -1; \
	} while (0)

static void
f0(unsigned char *p, uint64_t raddr, uint64_t size, uint32_t rkey, uint8_t usage)
{
	put_le(p + 0, raddr, 8);
	put_le(p + 8, size, 8);
	put_le(p + 16, rkey, 4);
	p[20] = usage;
}

/* a region that our rules accept: non-empty, not wrapping */
static void
valid_region(uint64_t *raddr, uint64_t *size)
{
	switch (rnd_below(4)) {
	case 0:		/* a typical heap/pmem mapping */
		*raddr = 0x7F0000000000ull + (rnd_below(1ull << 40) & ~0xFFFull);
		*size = 1 + rnd_below(1ull << 30);
		break;
	case 1:		/* tiny */
		*raddr = rnd();
		*size = 1 + rnd_below(64);
		break;
	default:	/* anywhere, as large as still fits */
		*raddr = rnd();
		/* 2^64 - raddr bytes remain; raddr 0 leaves all of them */
		*size = *raddr == 0 ? (rnd() | 1) :
			1 + rnd_below(0 - *raddr);
		break;
	}
}

/*
 * Our encoder must lay format 0 out as the hand-written bytes: one more
 * check that the corpus's format-0 cases are what they claim to be.
 */
static int
f0_encoder_agrees(const unsigned char *p)
{
	struct rpma_mr_desc d = {
		.raddr = 0, .size = 0, .key = 0, .usage = p[20],
		.transport = RPMA_EXT_TRANSPORT_VERBS,
	};
	unsigned char enc[F0];

	for (int i = 7; i >= 0; i--) {
		d.raddr = d.raddr << 8 | p[i];
		d.size = d.size << 8 | p[8 + i];
	}
	for (int i = 3; i >= 0; i--)
		d.key = d.key << 8 | p[16 + i];
	if (rpma_mr_desc_encode(&d, RPMA_MR_DESC_FORMAT_0, enc) != 0 ||
	    memcmp(enc, p, F0) != 0) {
		fprintf(stderr, "FAIL: rpma_mr_desc_encode(format 0) disagrees with the documented layout\n");
		return -1;
	}
	return 0;
}

static int
gen_f0_valid(struct conf_corpus *corpus, unsigned char valid0[][F0],
		size_t nvalid)
{
	unsigned char p[F0];
	size_t k = 0;

	/* every non-zero usage, eight regions each */
	for (unsigned usage = 1; usage <= 0xFF; usage++) {
		for (int v = 0; v < 8; v++) {
			uint64_t raddr, size;
			valid_region(&raddr, &size);
			f0(p, raddr, size, (uint32_t)rnd(), (uint8_t)usage);
			if (f0_encoder_agrees(p))
				return -1;
			ADD(CONF_KIND_MR, p, F0, "f0-valid");
			memcpy(valid0[k++ % nvalid], p, F0);
		}
	}
	return 0;
}

static int
gen_f0_boundary(struct conf_corpus *corpus)
{
	static const uint64_t raddrs[] = { 0, 1, 0x1000, 0x7FFFFFFFFFFFFFFFull,
		0x8000000000000000ull, UINT64_MAX - 4096, UINT64_MAX - 1,
		UINT64_MAX };
	static const uint64_t sizes[] = { 0, 1, 2, 4096, 0x8000000000000000ull,
		UINT64_MAX - 1, UINT64_MAX };
	static const uint8_t usages[] = { 0, 0x01, 0x10, 0x20, 0x30, 0x40,
		0x80, 0xFF };
	static const uint32_t rkeys[] = { 0, UINT32_MAX };
	unsigned char p[F0];

#define N(a) (sizeof(a) / sizeof((a)[0]))
	for (size_t r = 0; r < N(raddrs); r++)
		for (size_t s = 0; s < N(sizes); s++)
			for (size_t u = 0; u < N(usages); u++)
				for (size_t k = 0; k < N(rkeys); k++) {
					f0(p, raddrs[r], sizes[s], rkeys[k], usages[u]);
					ADD(CONF_KIND_MR, p, F0, "f0-boundary");
				}

	/* regions ending exactly at 2^64, and one byte past it */
	for (size_t r = 0; r < N(raddrs); r++) {
		if (raddrs[r] == 0)
			continue;
		uint64_t exact = 0 - raddrs[r];	/* raddr + size == 2^64 */
		for (size_t u = 0; u < N(usages); u++)
			for (size_t k = 0; k < N(rkeys); k++) {
				f0(p, raddrs[r], exact, rkeys[k], usages[u]);
				ADD(CONF_KIND_MR, p, F0, "f0-end-at-2^64");
				f0(p, raddrs[r], exact + 1, rkeys[k], usages[u]);
				ADD(CONF_KIND_MR, p, F0, "f0-end-past-2^64");
			}
	}
#undef N
	return 0;
}

static int
gen_random_sizes(struct conf_corpus *corpus)
{
	static unsigned char p[4096];
	static const size_t large[] = { 255, 4096 };

	for (size_t size = 0; size <= 64 + 2; size++) {
		size_t n = size <= 64 ? size : large[size - 65];
		for (int i = 0; i < 40; i++) {
			rnd_bytes(p, n);
			/* every fourth one with an empty usage byte */
			if (n > 20 && i % 4 == 3)
				p[20] = 0;
			ADD(CONF_KIND_MR, p, n, "random-size");
		}
	}
	for (int i = 0; i < 1000; i++) {
		size_t n = (size_t)rnd_below(101);
		rnd_bytes(p, n);
		ADD(CONF_KIND_MR, p, n, "random-any");
	}
	return 0;
}

static void
f1_refresh_crc(unsigned char *p)
{
	put_le(p + 36, rpma_crc32c(0, p, 36), 4);
}

static int
gen_f1(struct conf_corpus *corpus, unsigned char valid1[][F1], size_t nvalid)
{
	unsigned char p[F1 + 64];
	size_t k;

	/* valid ones */
	for (k = 0; k < nvalid; k++) {
		struct rpma_mr_desc d = {
			.key = rnd(),
			.usage = 1 + (int)rnd_below(0xFF),
			.transport = (enum rpma_ext_transport)(1 + rnd_below(4)),
		};
		valid_region(&d.raddr, &d.size);
		if (k % 10 == 0)
			d.raddr = 0;	/* offset-addressed */
		if (d.transport == RPMA_EXT_TRANSPORT_VERBS)
			d.key &= UINT32_MAX;	/* a verbs rkey */
		if (rpma_mr_desc_encode(&d, RPMA_MR_DESC_FORMAT_1, valid1[k]))
			return -1;
		ADD(CONF_KIND_MR, valid1[k], F1, "f1-valid");
	}

	/* well-formed, but the region is not valid */
	for (int i = 0; i < 60; i++) {
		struct rpma_mr_desc d = {
			.key = rnd(),
			.usage = 1 + (int)rnd_below(0xFF),
			.transport = (enum rpma_ext_transport)(1 + rnd_below(4)),
			.raddr = i % 3 ? rnd() | 0x8000000000000000ull : rnd(),
			.size = i % 3 ? (rnd() | 0x8000000000000000ull) : 0,
		};
		if (d.transport == RPMA_EXT_TRANSPORT_VERBS)
			d.key &= UINT32_MAX;
		if (rpma_mr_desc_encode(&d, RPMA_MR_DESC_FORMAT_1, p))
			return -1;
		ADD(CONF_KIND_MR, p, F1, "f1-bad-region");
	}

	/* well-formed and checksummed, but a verbs key wider than 32 bits */
	for (int i = 0; i < 20; i++) {
		uint32_t crc;

		memcpy(p, valid1[rnd_below(nvalid)], F1);
		p[5] = RPMA_EXT_TRANSPORT_VERBS;
		p[12 + i % 4] |= 1;	/* a bit in the key's upper half */
		crc = rpma_crc32c(0, p, 36);
		for (int b = 0; b < 4; b++)
			p[36 + b] = (unsigned char)(crc >> (8 * b));
		ADD(CONF_KIND_MR, p, F1, "f1-verbs-wide-key");
	}

	/* bit flips */
	for (int i = 0; i < 500; i++) {
		memcpy(p, valid1[rnd_below(nvalid)], F1);
		int flips = 1 + (int)rnd_below(3);
		for (int f = 0; f < flips; f++) {
			uint64_t bit = rnd_below(F1 * 8);
			p[bit / 8] ^= (unsigned char)(1u << (bit % 8));
		}
		ADD(CONF_KIND_MR, p, F1, "f1-bitflip");
	}

	/* byte replacement */
	for (int i = 0; i < 400; i++) {
		memcpy(p, valid1[rnd_below(nvalid)], F1);
		int n = 1 + (int)rnd_below(4);
		for (int f = 0; f < n; f++)
			p[rnd_below(F1)] = (unsigned char)rnd();
		ADD(CONF_KIND_MR, p, F1, "f1-byte-replaced");
	}

	/* a field changed and the crc made to match again */
	for (int i = 0; i < 300; i++) {
		memcpy(p, valid1[rnd_below(nvalid)], F1);
		switch (i % 6) {
		case 0: p[4] = (unsigned char)rnd(); break;		/* version */
		case 1: p[5] = (unsigned char)rnd_below(8); break;	/* transport */
		case 2: p[7] = (unsigned char)rnd(); break;		/* usage high */
		case 3: p[6] = i % 12 == 3 ? 0 : (unsigned char)rnd(); /* usage */
			if (i % 12 == 3)
				p[7] = 0;
			break;
		case 4: p[32 + rnd_below(4)] = (unsigned char)(1 + rnd_below(255));
			break;						/* reserved */
		default: rnd_bytes(p + 8, 24); break;			/* key/raddr/size */
		}
		f1_refresh_crc(p);
		ADD(CONF_KIND_MR, p, F1, "f1-field-crc-fixed");
	}

	/* truncation */
	for (int i = 0; i < 300; i++) {
		memcpy(p, valid1[rnd_below(nvalid)], F1);
		ADD(CONF_KIND_MR, p, (size_t)rnd_below(F1), "f1-truncated");
	}

	/* extension by 1..64 bytes */
	for (int i = 0; i < 300; i++) {
		memcpy(p, valid1[rnd_below(nvalid)], F1);
		size_t extra = 1 + (size_t)rnd_below(64);
		rnd_bytes(p + F1, extra);
		ADD(CONF_KIND_MR, p, F1 + extra, "f1-extended");
	}
	return 0;
}

static int
gen_f0_mutations(struct conf_corpus *corpus, unsigned char valid0[][F0],
		size_t nvalid)
{
	unsigned char p[64];

	for (int i = 0; i < 800; i++) {
		memcpy(p, valid0[rnd_below(nvalid)], F0);
		int flips = 1 + (int)rnd_below(3);
		for (int f = 0; f < flips; f++) {
			uint64_t bit = rnd_below(F0 * 8);
			p[bit / 8] ^= (unsigned char)(1u << (bit % 8));
		}
		ADD(CONF_KIND_MR, p, F0, "f0-bitflip");
	}
	for (int i = 0; i < 200; i++) {
		memcpy(p, valid0[rnd_below(nvalid)], F0);
		ADD(CONF_KIND_MR, p, 20, "f0-truncated-20");
	}
	for (int i = 0; i < 500; i++) {
		memcpy(p, valid0[rnd_below(nvalid)], F0);
		size_t n = 22 + (size_t)rnd_below(64 - 22 + 1);
		rnd_bytes(p + F0, n - F0);
		ADD(CONF_KIND_MR, p, n, "f0-extended");
	}
	return 0;
}

static int
gen_peer_cfg(struct conf_corpus *corpus)
{
	unsigned char p[8];

	for (int i = 0; i < 4; i++) {
		p[0] = (unsigned char)i;
		ADD(CONF_KIND_PCFG, p, 0, "pcfg-size-0");
	}
	for (unsigned v = 0; v <= 0xFF; v++) {
		p[0] = (unsigned char)v;
		ADD(CONF_KIND_PCFG, p, 1, "pcfg-size-1");
	}
	for (size_t n = 2; n <= 8; n++) {
		for (int i = 0; i < 40; i++) {
			rnd_bytes(p, n);
			if (i % 2 == 0)
				p[0] = (unsigned char)(i / 2 % 2);	/* 0 or 1 */
			ADD(CONF_KIND_PCFG, p, n, "pcfg-size-2..8");
		}
	}
	return 0;
}

int
conf_corpus_build(struct conf_corpus *corpus, uint64_t seed)
{
	static unsigned char valid0[512][F0];
	static unsigned char valid1[600][F1];

	memset(corpus, 0, sizeof(*corpus));
	rng_state = seed;

	if (gen_f0_valid(corpus, valid0, 512) ||
	    gen_f0_boundary(corpus) ||
	    gen_random_sizes(corpus) ||
	    gen_f1(corpus, valid1, 600) ||
	    gen_f0_mutations(corpus, valid0, 512) ||
	    gen_peer_cfg(corpus))
		return -1;

	for (size_t i = 0; i < conf_probe_count(); i++) {
		const char *name = conf_probe_name(i);
		ADD(CONF_KIND_PROBE, name, strlen(name), "probe");
	}
	return 0;
}

void
conf_corpus_free(struct conf_corpus *corpus)
{
	for (size_t i = 0; i < corpus->count; i++)
		free(corpus->cases[i].bytes);
	free(corpus->cases);
	memset(corpus, 0, sizeof(*corpus));
}
