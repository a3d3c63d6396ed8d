/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * classify.c -- one classifier per row of docs/librpma-differences.md.
 *
 * A classifier accepts a disagreement only when all of these hold:
 *   - the input is of the exact shape the row is about,
 *   - librpma's result is exactly what librpma 1.2's documented code path
 *     gives for that input (the models below), and
 *   - our result is exactly what the row says we do.
 * Anything else that differs is unexplained, and the test fails.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "conformance.h"
#include "crc32c.h"
#include "rpma.h"

#define F0 RPMA_EXT_MR_DESC_SIZE_V0
#define F1 RPMA_EXT_MR_DESC_SIZE_V1

static uint64_t
le(const unsigned char *p, int bytes)
{
	uint64_t v = 0;
	for (int i = bytes - 1; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

/* ------------------------------------------------------------------ */
/* result lines (printed by shared.c)                                  */

struct mr_res {
	int ret, kept, gs, gf, flush, del, null;
	unsigned long long size;
};

static bool
parse_mr(const char *line, struct mr_res *r)
{
	memset(r, 0, sizeof(*r));
	if (sscanf(line, "ret=%d", &r->ret) != 1)
		return false;
	if (r->ret != 0)
		return sscanf(line, "ret=%d kept=%d", &r->ret, &r->kept) == 2;
	return sscanf(line, "ret=0 gs=%d size=%llu gf=%d flush=%d del=%d null=%d",
		&r->gs, &r->size, &r->gf, &r->flush, &r->del, &r->null) == 6;
}

/* a rejection that left *mr_ptr alone */
static bool
mr_rejected(const char *line, int code)
{
	struct mr_res r;
	return parse_mr(line, &r) && r.ret == code && r.kept == 1;
}

/* an acceptance whose getters report this size and flush type */
static bool
mr_accepted(const char *line, uint64_t size, int flush)
{
	struct mr_res r;
	return parse_mr(line, &r) && r.ret == 0 && r.gs == 0 &&
		r.size == size && r.gf == 0 && r.flush == flush &&
		r.del == 0 && r.null == 1;
}

/*
 * librpma 1.2: any buffer of at least 21 bytes is format 0 read from its
 * first 21 bytes; only a zero usage byte is refused (INVAL).
 */
static bool
librpma_prefix_result(const struct conf_case *c, const char *theirs)
{
	if (c->size < F0)
		return false;
	if (c->bytes[20] == 0)
		return mr_rejected(theirs, RPMA_E_INVAL);
	return mr_accepted(theirs, le(c->bytes + 8, 8), c->bytes[20] & 0x30);
}

/* our region rule: non-empty usage and size, last byte below 2^64 */
static bool
region_ok(uint64_t raddr, uint64_t size, uint64_t usage)
{
	return usage != 0 && size != 0 && raddr <= UINT64_MAX - (size - 1);
}

/* what our format-1 decoder must do with these 40 bytes (descriptor.c) */
static bool
ours_format1_result(const struct conf_case *c, const char *ours)
{
	const unsigned char *p = c->bytes;
	uint64_t usage = le(p + 6, 2);
	bool valid = c->size == F1 && memcmp(p, "RPMD", 4) == 0 &&
		p[4] == 1 &&
		le(p + 36, 4) == rpma_crc32c(0, p, 36) &&
		p[5] >= RPMA_EXT_TRANSPORT_VERBS &&
		p[5] <= RPMA_EXT_TRANSPORT_OFI_SHM &&
		le(p + 32, 4) == 0 && usage <= 0xFF &&
		(p[5] != RPMA_EXT_TRANSPORT_VERBS || le(p + 8, 8) <= UINT32_MAX) &&
		region_ok(le(p + 16, 8), le(p + 24, 8), usage);

	if (!valid)
		return mr_rejected(ours, RPMA_E_NOSUPP);
	return mr_accepted(ours, le(p + 24, 8), (int)(usage & 0x30));
}

/* MRD-1: a size of neither format, longer than format 0 */
static bool
mrd1(const struct conf_case *c, const char *ours, const char *theirs)
{
	return c->kind == CONF_KIND_MR && c->size > F0 && c->size != F1 &&
		c->bytes[20] != 0 &&
		mr_rejected(ours, RPMA_E_INVAL) &&
		librpma_prefix_result(c, theirs);
}

/* MRD-2: format 0 with no usage bits */
static bool
mrd2(const struct conf_case *c, const char *ours, const char *theirs)
{
	return c->kind == CONF_KIND_MR && c->size == F0 &&
		c->bytes[20] == 0 &&
		mr_rejected(ours, RPMA_E_NOSUPP) &&
		mr_rejected(theirs, RPMA_E_INVAL);
}

/* MRD-3: format 0 describing an empty region */
static bool
mrd3(const struct conf_case *c, const char *ours, const char *theirs)
{
	return c->kind == CONF_KIND_MR && c->size == F0 &&
		c->bytes[20] != 0 && le(c->bytes + 8, 8) == 0 &&
		mr_rejected(ours, RPMA_E_NOSUPP) &&
		librpma_prefix_result(c, theirs);
}

/* MRD-4: format 0 whose last byte lies past 2^64 - 1 */
static bool
mrd4(const struct conf_case *c, const char *ours, const char *theirs)
{
	uint64_t raddr, size;

	if (c->kind != CONF_KIND_MR || c->size != F0 || c->bytes[20] == 0)
		return false;
	raddr = le(c->bytes, 8);
	size = le(c->bytes + 8, 8);
	return size != 0 && raddr > UINT64_MAX - (size - 1) &&
		mr_rejected(ours, RPMA_E_NOSUPP) &&
		librpma_prefix_result(c, theirs);
}

/* MRD-5: 40 bytes are format 1 for us, a padded format 0 for librpma */
static bool
mrd5(const struct conf_case *c, const char *ours, const char *theirs)
{
	return c->kind == CONF_KIND_MR && c->size == F1 &&
		ours_format1_result(c, ours) &&
		librpma_prefix_result(c, theirs);
}

/* ------------------------------------------------------------------ */
/* peer configuration descriptors                                      */

static bool
pcfg_rejected(const char *line, int code)
{
	int ret, kept;
	return sscanf(line, "ret=%d kept=%d", &ret, &kept) == 2 &&
		ret == code && kept == 1;
}

/* librpma 1.2: the first byte as a bool, whatever the size (>= 1) */
static bool
pcfg_librpma_result(const struct conf_case *c, const char *theirs)
{
	char expect[CONF_LINE_MAX];
	int dw = c->bytes[0] != 0;

	snprintf(expect, sizeof(expect),
		"ret=0 gdw=0 dw=%d gds=0 dsize=1 gd=0 desc=%d tail=170 del=0 null=1",
		dw, dw);
	return c->size >= 1 && strcmp(theirs, expect) == 0;
}

/* PCD-1: a peer configuration descriptor longer than one byte */
static bool
pcd1(const struct conf_case *c, const char *ours, const char *theirs)
{
	return c->kind == CONF_KIND_PCFG && c->size >= 2 &&
		pcfg_rejected(ours, RPMA_E_INVAL) &&
		pcfg_librpma_result(c, theirs);
}

/* PCD-2: the one byte is neither 0 nor 1 */
static bool
pcd2(const struct conf_case *c, const char *ours, const char *theirs)
{
	return c->kind == CONF_KIND_PCFG && c->size == 1 &&
		c->bytes[0] > 1 &&
		pcfg_rejected(ours, RPMA_E_INVAL) &&
		pcfg_librpma_result(c, theirs);
}

/* ------------------------------------------------------------------ */
/* probes                                                              */

static bool
is_probe(const struct conf_case *c, const char *name)
{
	return c->kind == CONF_KIND_PROBE && c->size == strlen(name) &&
		memcmp(c->bytes, name, c->size) == 0;
}

/* SRQ-1: rpma_srq_cfg defaults */
static bool
srq1(const struct conf_case *c, const char *ours, const char *theirs)
{
	return is_probe(c, "srq_cfg_defaults") &&
		strcmp(ours, "get=0,0 rq=100 rcq=100 del=0") == 0 &&
		strcmp(theirs, "get=0,0 rq=20 rcq=20 del=0") == 0;
}

/* CFG-1: rpma_conn_cfg_set_srq(cfg, NULL) detaches */
static bool
cfg1(const struct conf_case *c, const char *ours, const char *theirs)
{
	return is_probe(c, "rpma_conn_cfg_set_srq(cfg,NULL)") &&
		strcmp(ours, "set=0 set(NULL)=0 get=0 srq=null") == 0 &&
		strcmp(theirs, "set=0 set(NULL)=-100004 get=0 srq=kept") == 0;
}

const struct conf_row conf_rows[] = {
	{ "MRD-1", mrd1 },
	{ "MRD-2", mrd2 },
	{ "MRD-3", mrd3 },
	{ "MRD-4", mrd4 },
	{ "MRD-5", mrd5 },
	{ "PCD-1", pcd1 },
	{ "PCD-2", pcd2 },
	{ "SRQ-1", srq1 },
	{ "CFG-1", cfg1 },
};

const size_t conf_rows_count = sizeof(conf_rows) / sizeof(conf_rows[0]);
