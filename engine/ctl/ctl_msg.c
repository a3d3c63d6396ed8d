/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ctl_msg.c -- the control channel's messages: encoding and a total
 * decoder.
 *
 * WIRE FORMAT (little-endian; version CTL_VERSION; docs/replication.md has
 * the tables)
 *
 * A 16-byte header (magic "RPLC", version u16, type u16, body_len u32,
 * seq u32), then the body: its fixed fields are the tables f_* below, in
 * body offsets; a position is 24 bytes (lsn u64, off u64, lap u32, crc
 * u32).  docs/replication.md has each table with what every field means.
 *
 * Every field of a decoded message is determined by the frame's bytes (the
 * rest of *m is zeroed), and the encoder refuses what the decoder would
 * reject, so encode(decode(x)) == x for every accepted x.
 *
 * The code is driven by one table per type (msg_types below): its fixed
 * fields (where on the wire, which kind, where in struct ctl_msg) move
 * both ways through the same two functions, and a per-type rule checks
 * what the fields mean and moves the variable part, if any.  The same
 * tables give docs/replication.md's rows (ctl_msg_layout; the ctl_msg
 * test compares them).
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "ctl/ctl_msg.h"

#define POS_SIZE 24
#define HELLO_REPLY_FIXED 152
#define ERROR_FIXED 6
#define VERIFY_REPLY_FIXED 24
#define VERIFY_ENTRY 8

static const uint8_t magic[4] = { 'R', 'P', 'L', 'C' };

#define CTL_STR_(x) #x
#define CTL_STR(x) CTL_STR_(x)

uint64_t
ctl_verify_ranges(uint64_t from, uint64_t to, uint32_t per_range)
{
	if (from == 0 || to < from || per_range == 0)
		return 0;
	/* no overflow: to - from + 1 may not fit, (to - from) / per does */
	return (to - from) / per_range + 1;
}

/* little-endian access, byte by byte: fields are not aligned */

static uint16_t
get16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t
get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
		(uint32_t)p[3] << 24;
}

static uint64_t
get64(const uint8_t *p)
{
	return (uint64_t)get32(p) | (uint64_t)get32(p + 4) << 32;
}

static void
put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static void
put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void
put64(uint8_t *p, uint64_t v)
{
	put32(p, (uint32_t)v);
	put32(p + 4, (uint32_t)(v >> 32));
}

static void
get_pos(const uint8_t *p, struct log_pos *pos)
{
	pos->lsn = get64(p);
	pos->off = get64(p + 8);
	pos->lap = get32(p + 16);
	pos->crc = get32(p + 20);
}

static void
put_pos(uint8_t *p, const struct log_pos *pos)
{
	put64(p, pos->lsn);
	put64(p + 8, pos->off);
	put32(p + 16, pos->lap);
	put32(p + 20, pos->crc);
}

/* the faults of one position field, named for *why */
#define POS_WHY(f) { f ".lsn is 0", f ".lap is 0", \
	f ".off is not a multiple of 8", f ".off is not below ring_size" }

static const char *const w_hello_head[] = POS_WHY("HELLO: head");
static const char *const w_reply_head[] = POS_WHY("HELLO_REPLY: head");
static const char *const w_reply_tail[] = POS_WHY("HELLO_REPLY: tail");
static const char *const w_query_after[] = POS_WHY("QUERY_REPLY: after");
static const char *const w_truncate[] = POS_WHY("TRUNCATE: pos");
static const char *const w_set_head[] = POS_WHY("SET_HEAD: pos");
static const char *const w_ack_head[] = POS_WHY("ACK: head");
static const char *const w_ack_tail[] = POS_WHY("ACK: tail");
static const char *const w_commit[] = POS_WHY("COMMIT: flushed");

/* NULL if pos is a valid position (ring_size 0: not known), else why not */
static const char *
pos_fault(const struct log_pos *pos, uint64_t ring_size,
		const char *const why[4])
{
	if (pos->lsn == 0)
		return why[0];
	if (pos->lap == 0)
		return why[1];
	if (pos->off % 8 != 0)
		return why[2];
	if (ring_size != 0 && pos->off >= ring_size)
		return why[3];
	return NULL;
}

static int
pos_zero(const struct log_pos *pos)
{
	return pos->lsn == 0 && pos->off == 0 && pos->lap == 0 && pos->crc == 0;
}

static int
printable(uint8_t c)
{
	return c >= 0x20 && c <= 0x7e;
}

/* ------------------------------------------------------------------ */
/* the tables                                                         */

enum kind { K_U8, K_U16, K_U32, K_I32, K_U64, K_POS, K_UUID, K_RSV };

static const char *const kind_name[] = {
	[K_U8] = "u8", [K_U16] = "u16", [K_U32] = "u32", [K_I32] = "i32",
	[K_U64] = "u64", [K_POS] = "pos", [K_UUID] = "bytes",
};

struct field {
	uint16_t at;		/* offset in the body */
	uint8_t kind;
	uint8_t size;		/* K_RSV: its bytes (they must be 0) */
	uint16_t mem;		/* offset in struct ctl_msg */
	const char *name;	/* as docs/replication.md names it */
};

/*
 * A field of kind k at body offset `at`, held in m->u.member.  The member's
 * size must be the kind's: a mismatch does not compile (a negative array).
 */
#define KSIZE(k) ((k) == K_U8 ? 1 : (k) == K_U16 ? 2 : \
	(k) == K_U32 || (k) == K_I32 ? 4 : (k) == K_U64 ? 8 : \
	(k) == K_POS ? POS_SIZE : 16)
#define FLD(at, k, member, name) { (at), (k), KSIZE(k), \
	(uint16_t)(offsetof(struct ctl_msg, u.member) + 0 * sizeof(char[ \
	sizeof(((struct ctl_msg *)0)->u.member) == \
	((k) == K_POS ? sizeof(struct log_pos) : KSIZE(k)) ? 1 : -1])), (name) }
#define RSV(at, n) { (at), K_RSV, (n), 0, "reserved" }

static const struct field f_hello[] = {
	FLD(0, K_UUID, hello.cluster_uuid, "cluster_uuid"),
	FLD(16, K_U32, hello.node_id, "node_id"),
	FLD(20, K_U32, hello.flags, "flags"),
	FLD(24, K_U64, hello.epoch, "epoch"),
	FLD(32, K_U64, hello.ring_size, "ring_size"),
	FLD(40, K_POS, hello.head, "head"),
	FLD(64, K_U64, hello.incarnation, "incarnation"),
	FLD(72, K_U64, hello.head_epoch, "head_epoch"),
};

static const struct field f_hello_reply[] = {
	FLD(0, K_UUID, hello_reply.cluster_uuid, "cluster_uuid"),
	FLD(16, K_U32, hello_reply.node_id, "node_id"),
	FLD(20, K_U32, hello_reply.flags, "flags"),
	FLD(24, K_U64, hello_reply.epoch, "epoch"),
	FLD(32, K_U64, hello_reply.ring_size, "ring_size"),
	FLD(40, K_POS, hello_reply.head, "head"),
	FLD(64, K_POS, hello_reply.tail, "tail"),
	FLD(88, K_U16, hello_reply.data_port, "data_port"),
	FLD(90, K_U16, hello_reply.desc_len, "desc_len"),
	FLD(92, K_U8, hello_reply.backend, "backend"),
	RSV(93, 3),
	FLD(96, K_U64, hello_reply.tail_epoch, "tail_epoch"),
	FLD(104, K_U64, hello_reply.config_epoch, "config_epoch"),
	FLD(112, K_U64, hello_reply.incarnation, "incarnation"),
	FLD(120, K_U64, hello_reply.head_epoch, "head_epoch"),
	FLD(128, K_U64, hello_reply.prior_epoch, "prior_epoch"),
	FLD(136, K_U64, hello_reply.epoch_inc, "epoch_inc"),
	FLD(144, K_U32, hello_reply.config_crc, "config_crc"),
	RSV(148, 4),
};

static const struct field f_query[] = {
	FLD(0, K_U64, query.lsn, "lsn"),
};

static const struct field f_query_reply[] = {
	FLD(0, K_U64, query_reply.lsn, "lsn"),
	FLD(8, K_U32, query_reply.found, "found"),
	RSV(12, 4),
	FLD(16, K_POS, query_reply.after, "after"),
};

static const struct field f_cut[] = {
	FLD(0, K_POS, cut.pos, "pos"),
	FLD(24, K_U64, cut.epoch, "epoch"),
};

static const struct field f_ack[] = {
	FLD(0, K_I32, ack.status, "status"),
	RSV(4, 4),
	FLD(8, K_POS, ack.head, "head"),
	FLD(32, K_POS, ack.tail, "tail"),
	FLD(56, K_U64, ack.hold_next, "hold_next"),
};

static const struct field f_commit[] = {
	FLD(0, K_U64, commit.epoch, "epoch"),
	FLD(8, K_U64, commit.commit_lsn, "commit_lsn"),
	FLD(16, K_POS, commit.flushed, "flushed"),
};

static const struct field f_heartbeat[] = {
	FLD(0, K_U64, heartbeat.time_ns, "time_ns"),
	FLD(8, K_U64, heartbeat.hold_next, "hold_next"),
	FLD(16, K_U32, heartbeat.flags, "flags"),
	RSV(20, 4),
};

static const struct field f_error[] = {
	FLD(0, K_I32, error.code, "code"),
};

static const struct field f_verify[] = {
	FLD(0, K_U64, verify.from, "from"),
	FLD(8, K_U64, verify.to, "to"),
	FLD(16, K_U32, verify.per_range, "per_range"),
	RSV(20, 4),
};

static const struct field f_verify_reply[] = {
	FLD(0, K_U64, verify_reply.from, "from"),
	FLD(8, K_U64, verify_reply.to, "to"),
	FLD(16, K_U32, verify_reply.per_range, "per_range"),
	FLD(20, K_U32, verify_reply.n, "n"),
};

/* ------------------------------------------------------------------ */
/* the rules of each type                                             */

static const char *
check_hello(const uint8_t *b, uint32_t len, struct ctl_msg *m)
{
	const struct ctl_hello *h = &m->u.hello;

	(void)b;
	(void)len;
	if (h->flags & ~(uint32_t)(CTL_HELLO_F_FENCE_ONLY | CTL_HELLO_F_PROBE))
		return "HELLO: unknown flags";
	if (h->ring_size == 0 || h->ring_size % 8 != 0)
		return "HELLO: ring_size is 0 or not a multiple of 8";
	if (h->incarnation == 0)
		return "HELLO: incarnation is 0";
	return pos_fault(&h->head, h->ring_size, w_hello_head);
}

static const char *
check_hello_reply(const uint8_t *b, uint32_t len, struct ctl_msg *m)
{
	struct ctl_hello_reply *r = &m->u.hello_reply;
	const char *w;

	if (r->incarnation == 0)
		return "HELLO_REPLY: incarnation is 0";
	if (r->flags & ~(uint32_t)(CTL_HELLO_F_SUSPECT | CTL_HELLO_F_STALE |
	    CTL_HELLO_F_PENDING))
		return "HELLO_REPLY: unknown flags";
	if (r->backend > CTL_BACKEND_MAX)
		return "HELLO_REPLY: backend is not 0 to 3";
	if ((r->config_epoch == 0) != (r->config_crc == 0))
		return "HELLO_REPLY: config_crc is 0 with a membership, "
			"or not 0 without one";
	if (r->prior_epoch > r->epoch)
		return "HELLO_REPLY: prior_epoch is above epoch";
	if (r->desc_len > CTL_DESC_MAX)
		return "HELLO_REPLY: desc_len exceeds 64";
	if (len != HELLO_REPLY_FIXED + (uint32_t)r->desc_len)
		return "HELLO_REPLY: body length is not 152 + desc_len";
	memcpy(r->desc, b + HELLO_REPLY_FIXED, r->desc_len);
	if (r->ring_size == 0 || r->ring_size % 8 != 0)
		return "HELLO_REPLY: ring_size is 0 or not a multiple of 8";
	if ((w = pos_fault(&r->head, r->ring_size, w_reply_head)) ||
	    (w = pos_fault(&r->tail, r->ring_size, w_reply_tail)))
		return w;
	if (r->tail.lsn < r->head.lsn)
		return "HELLO_REPLY: tail.lsn is below head.lsn";
	return NULL;
}

static int
tail_hello_reply(const struct ctl_msg *m, uint8_t *b, const char **why)
{
	const struct ctl_hello_reply *r = &m->u.hello_reply;

	if (r->desc_len > CTL_DESC_MAX) {
		*why = "HELLO_REPLY: desc_len exceeds 64";
		return -1;
	}
	memcpy(b + HELLO_REPLY_FIXED, r->desc, r->desc_len);
	return r->desc_len;
}

static const char *
check_query_reply(const uint8_t *b, uint32_t len, struct ctl_msg *m)
{
	const struct ctl_query_reply *q = &m->u.query_reply;
	const char *w;

	(void)b;
	(void)len;
	if (q->found > 1)
		return "QUERY_REPLY: found is not 0 or 1";
	if (!q->found)
		return pos_zero(&q->after) ? NULL :
			"QUERY_REPLY: after is not zero but found is 0";
	if ((w = pos_fault(&q->after, 0, w_query_after)))
		return w;
	if (q->after.lsn - 1 != q->lsn)
		return "QUERY_REPLY: after.lsn is not lsn + 1";
	return NULL;
}

static const char *
check_cut(const uint8_t *b, uint32_t len, struct ctl_msg *m)
{
	(void)b;
	(void)len;
	return pos_fault(&m->u.cut.pos, 0,
		m->type == CTL_TRUNCATE ? w_truncate : w_set_head);
}

static const char *
check_ack(const uint8_t *b, uint32_t len, struct ctl_msg *m)
{
	const struct ctl_ack *a = &m->u.ack;
	const char *w;

	(void)b;
	(void)len;
	if (a->status > 0)
		return "ACK: status is positive";
	/* a failed replica may not know where its log stands */
	if (a->status < 0 && pos_zero(&a->head) && pos_zero(&a->tail))
		return NULL;
	if ((w = pos_fault(&a->head, 0, w_ack_head)) ||
	    (w = pos_fault(&a->tail, 0, w_ack_tail)))
		return w;
	if (a->tail.lsn < a->head.lsn)
		return "ACK: tail.lsn is below head.lsn";
	return NULL;
}

static const char *
check_commit(const uint8_t *b, uint32_t len, struct ctl_msg *m)
{
	(void)b;
	(void)len;
	return pos_fault(&m->u.commit.flushed, 0, w_commit);
}

static const char *
check_heartbeat(const uint8_t *b, uint32_t len, struct ctl_msg *m)
{
	(void)b;
	(void)len;
	if (m->u.heartbeat.flags & ~(uint32_t)CTL_HEARTBEAT_F_WANTS_BASE)
		return "HEARTBEAT: unknown flags";
	return NULL;
}

static const char *
check_error(const uint8_t *b, uint32_t len, struct ctl_msg *m)
{
	struct ctl_error *e = &m->u.error;
	uint16_t tlen = get16(b + 4);

	if (tlen > CTL_TEXT_MAX)
		return "ERROR: text length exceeds 200";
	if (len != ERROR_FIXED + (uint32_t)tlen)
		return "ERROR: body length is not 6 + text length";
	for (uint16_t i = 0; i < tlen; i++) {
		if (!printable(b[ERROR_FIXED + i]))
			return "ERROR: text is not printable ASCII";
		e->text[i] = (char)b[ERROR_FIXED + i];
	}
	e->text[tlen] = '\0';
	return NULL;
}

/* the text's length is the field at 4 (text_len): it lives in the text */
static int
tail_error(const struct ctl_msg *m, uint8_t *b, const char **why)
{
	size_t tlen = strnlen(m->u.error.text, CTL_TEXT_MAX + 1);

	if (tlen > CTL_TEXT_MAX) {
		*why = "ERROR: text length exceeds 200";
		return -1;
	}
	put16(b + 4, (uint16_t)tlen);
	memcpy(b + ERROR_FIXED, m->u.error.text, tlen);
	return (int)tlen;
}

static const char *
check_membership(const uint8_t *b, uint32_t len, struct ctl_msg *m)
{
	const char *w;

	return membership_decode(b, len, &m->u.membership, &w) ? w : NULL;
}

static int
tail_membership(const struct ctl_msg *m, uint8_t *b, const char **why)
{
	return membership_encode(&m->u.membership, b, why) ? -1 : 0;
}

static const char *
check_verify(const uint8_t *b, uint32_t len, struct ctl_msg *m)
{
	const struct ctl_verify *v = &m->u.verify;

	(void)b;
	(void)len;
	if (v->from == 0 || v->to < v->from || v->per_range == 0)
		return "VERIFY: from is 0, to below from, or per_range 0";
	if (ctl_verify_ranges(v->from, v->to, v->per_range) >
	    CTL_VERIFY_RANGES_MAX)
		return "VERIFY: more than 64 ranges";
	return NULL;
}

static const char *
check_verify_reply(const uint8_t *b, uint32_t len, struct ctl_msg *m)
{
	struct ctl_verify_reply *v = &m->u.verify_reply;

	if (v->n == 0 || v->n > CTL_VERIFY_RANGES_MAX)
		return "VERIFY_REPLY: n is not 1 to 64";
	if (len != VERIFY_REPLY_FIXED + VERIFY_ENTRY * v->n)
		return "VERIFY_REPLY: body length is not 24 + 8 n";
	if (ctl_verify_ranges(v->from, v->to, v->per_range) != v->n)
		return "VERIFY_REPLY: n is not the ranges of from..to";
	for (uint32_t i = 0; i < v->n; i++) {
		const uint8_t *e = b + VERIFY_REPLY_FIXED + VERIFY_ENTRY * i;

		v->crc[i] = get32(e);
		v->flags[i] = get32(e + 4);
		if (v->flags[i] & ~(uint32_t)CTL_VERIFY_F_MISSING)
			return "VERIFY_REPLY: unknown flags";
		if ((v->flags[i] & CTL_VERIFY_F_MISSING) && v->crc[i] != 0)
			return "VERIFY_REPLY: crc of a missing range is not 0";
	}
	return NULL;
}

static int
tail_verify_reply(const struct ctl_msg *m, uint8_t *b, const char **why)
{
	const struct ctl_verify_reply *v = &m->u.verify_reply;

	if (v->n == 0 || v->n > CTL_VERIFY_RANGES_MAX) {
		*why = "VERIFY_REPLY: n is not 1 to 64";
		return -1;
	}
	for (uint32_t i = 0; i < v->n; i++) {
		uint8_t *e = b + VERIFY_REPLY_FIXED + VERIFY_ENTRY * i;

		put32(e, v->crc[i]);
		put32(e + 4, v->flags[i]);
	}
	return (int)(VERIFY_ENTRY * v->n);
}

/* ------------------------------------------------------------------ */
/* the types                                                          */

struct msg_type {
	const char *name;
	uint32_t min, max;	/* the body lengths it may have */
	const char *bad_len;
	uint32_t fixed;		/* the bytes before its variable part */
	const struct field *f;
	uint8_t nf;
	const char *bad_rsv;	/* a reserved field is not 0 */
	const char *(*check)(const uint8_t *b, uint32_t len, struct ctl_msg *m);
	int (*tail)(const struct ctl_msg *m, uint8_t *b, const char **why);
};

#define FIELDS(a) (a), (uint8_t)(sizeof(a) / sizeof((a)[0]))

static const struct msg_type msg_types[] = {
	[CTL_HELLO] = { "HELLO", 80, 80, "HELLO: body length is not 80",
		80,
		FIELDS(f_hello), NULL, check_hello, NULL },
	[CTL_HELLO_REPLY] = { "HELLO_REPLY", HELLO_REPLY_FIXED,
		HELLO_REPLY_FIXED + CTL_DESC_MAX,
		"HELLO_REPLY: body length is not 152 to 216",
		HELLO_REPLY_FIXED,
		FIELDS(f_hello_reply), "HELLO_REPLY: reserved field is not 0",
		check_hello_reply, tail_hello_reply },
	[CTL_QUERY] = { "QUERY", 8, 8, "QUERY: body length is not 8",
		8,
		FIELDS(f_query), NULL, NULL, NULL },
	[CTL_QUERY_REPLY] = { "QUERY_REPLY", 40, 40,
		"QUERY_REPLY: body length is not 40", 40,
		FIELDS(f_query_reply),
		"QUERY_REPLY: reserved field is not 0", check_query_reply, NULL },
	[CTL_TRUNCATE] = { "TRUNCATE", 32, 32, "TRUNCATE: body length is not 32",
		32,
		FIELDS(f_cut), NULL, check_cut, NULL },
	[CTL_SET_HEAD] = { "SET_HEAD", 32, 32, "SET_HEAD: body length is not 32",
		32,
		FIELDS(f_cut), NULL, check_cut, NULL },
	[CTL_ACK] = { "ACK", 64, 64, "ACK: body length is not 64",
		64,
		FIELDS(f_ack), "ACK: reserved field is not 0", check_ack, NULL },
	[CTL_COMMIT] = { "COMMIT", 40, 40, "COMMIT: body length is not 40",
		40,
		FIELDS(f_commit), NULL, check_commit, NULL },
	[CTL_HEARTBEAT] = { "HEARTBEAT", 24, 24,
		"HEARTBEAT: body length is not 24", 24,
		FIELDS(f_heartbeat), "HEARTBEAT: reserved field is not 0",
		check_heartbeat, NULL },
	[CTL_ERROR] = { "ERROR", ERROR_FIXED, ERROR_FIXED + CTL_TEXT_MAX,
		"ERROR: body length is not 6 to 206", ERROR_FIXED,
		FIELDS(f_error), NULL,
		check_error, tail_error },
	[CTL_MEMBERSHIP] = { "MEMBERSHIP", MEMBERSHIP_SIZE, MEMBERSHIP_SIZE,
		"MEMBERSHIP: body length is not 808", MEMBERSHIP_SIZE,
		NULL, 0, NULL,
		check_membership, tail_membership },
	[CTL_VERIFY] = { "VERIFY", 24, 24, "VERIFY: body length is not 24",
		24,
		FIELDS(f_verify), "VERIFY: reserved field is not 0", check_verify,
		NULL },
	[CTL_VERIFY_REPLY] = { "VERIFY_REPLY", VERIFY_REPLY_FIXED + VERIFY_ENTRY,
		VERIFY_REPLY_FIXED + VERIFY_ENTRY * CTL_VERIFY_RANGES_MAX,
		"VERIFY_REPLY: body length is not 32 to 536",
		VERIFY_REPLY_FIXED,
		FIELDS(f_verify_reply), NULL, check_verify_reply,
		tail_verify_reply },
};

_Static_assert(CTL_HDR_SIZE + MEMBERSHIP_SIZE <= CTL_FRAME_MAX,
	"a MEMBERSHIP fits a frame");
_Static_assert(CTL_HDR_SIZE + VERIFY_REPLY_FIXED +
	VERIFY_ENTRY * CTL_VERIFY_RANGES_MAX <= CTL_FRAME_MAX,
	"a VERIFY_REPLY fits a frame");

#define NTYPES (sizeof(msg_types) / sizeof(msg_types[0]))

static int
type_known(uint32_t type)
{
	return type < NTYPES && msg_types[type].name != NULL;
}

const char *
ctl_msg_type_name(int type)
{
	return type >= 0 && type_known((uint32_t)type) ? msg_types[type].name :
		"unknown";
}

int
ctl_msg_layout(int type, int i, char *row, size_t size)
{
	const struct field *f;

	if (type < 0 || !type_known((uint32_t)type) || i < 0 ||
	    i >= msg_types[type].nf)
		return -1;
	f = &msg_types[type].f[i];
	snprintf(row, size, "| %u | %u | %s | `%s` |", (unsigned)f->at,
		(unsigned)f->size, f->kind == K_RSV ?
		(f->size == 4 ? "u32" : "bytes") : kind_name[f->kind], f->name);
	return 0;
}

/* ------------------------------------------------------------------ */
/* the fields, both ways                                              */

static void
get_fields(const struct msg_type *t, const uint8_t *b, struct ctl_msg *m)
{
	uint8_t *base = (uint8_t *)m;

	for (int i = 0; i < t->nf; i++) {
		const struct field *f = &t->f[i];
		const uint8_t *w = b + f->at;
		uint8_t *p = base + f->mem;
		uint16_t v16;
		uint32_t v32;
		uint64_t v64;
		struct log_pos pos;

		switch (f->kind) {
		case K_U8:
			*p = w[0];
			break;
		case K_U16:
			v16 = get16(w);
			memcpy(p, &v16, sizeof(v16));
			break;
		case K_U32:
		case K_I32:
			v32 = get32(w);
			memcpy(p, &v32, sizeof(v32));
			break;
		case K_U64:
			v64 = get64(w);
			memcpy(p, &v64, sizeof(v64));
			break;
		case K_POS:
			get_pos(w, &pos);
			memcpy(p, &pos, sizeof(pos));
			break;
		case K_UUID:
			memcpy(p, w, 16);
			break;
		}
	}
}

static int
reserved_zero(const struct msg_type *t, const uint8_t *b)
{
	for (int i = 0; i < t->nf; i++)
		if (t->f[i].kind == K_RSV)
			for (int j = 0; j < t->f[i].size; j++)
				if (b[t->f[i].at + j] != 0)
					return 0;
	return 1;
}

static void
put_fields(const struct msg_type *t, const struct ctl_msg *m, uint8_t *b)
{
	const uint8_t *base = (const uint8_t *)m;

	for (int i = 0; i < t->nf; i++) {
		const struct field *f = &t->f[i];
		uint8_t *w = b + f->at;
		const uint8_t *p = base + f->mem;
		uint16_t v16;
		uint32_t v32;
		uint64_t v64;
		struct log_pos pos;

		switch (f->kind) {
		case K_U8:
			w[0] = *p;
			break;
		case K_U16:
			memcpy(&v16, p, sizeof(v16));
			put16(w, v16);
			break;
		case K_U32:
		case K_I32:
			memcpy(&v32, p, sizeof(v32));
			put32(w, v32);
			break;
		case K_U64:
			memcpy(&v64, p, sizeof(v64));
			put64(w, v64);
			break;
		case K_POS:
			memcpy(&pos, p, sizeof(pos));
			put_pos(w, &pos);
			break;
		case K_UUID:
			memcpy(w, p, 16);
			break;
		case K_RSV:
			break;	/* the frame was zeroed */
		}
	}
}

/* ------------------------------------------------------------------ */
/* frames                                                             */

int
ctl_msg_frame_len(const uint8_t *hdr, const char **why)
{
	uint32_t type, body;

	if (memcmp(hdr, magic, sizeof(magic)) != 0) {
		*why = "bad magic (not \"RPLC\")";
		return -1;
	}
	/* a peer of another version: its fields may mean other things */
	if (get16(hdr + 4) < CTL_VERSION) {
		*why = "unsupported version: the peer's control protocol is "
			"older than this node's " CTL_STR(CTL_VERSION);
		return -1;
	}
	if (get16(hdr + 4) > CTL_VERSION) {
		*why = "unsupported version: the peer's control protocol is "
			"newer than this node's " CTL_STR(CTL_VERSION);
		return -1;
	}
	type = get16(hdr + 6);
	if (!type_known(type)) {
		*why = "unknown message type";
		return -1;
	}
	/* each type's bounds keep the frame within CTL_FRAME_MAX */
	body = get32(hdr + 8);
	if (body < msg_types[type].min || body > msg_types[type].max) {
		*why = msg_types[type].bad_len;
		return -1;
	}
	return (int)(CTL_HDR_SIZE + body);
}

int
ctl_msg_decode(const uint8_t *buf, size_t len, struct ctl_msg *m,
		const char **why)
{
	const struct msg_type *t;
	const uint8_t *b = buf + CTL_HDR_SIZE;
	const char *w = NULL;
	int flen;

	memset(m, 0, sizeof(*m));
	if (len < CTL_HDR_SIZE) {
		*why = "frame shorter than its header";
		return -1;
	}
	if ((flen = ctl_msg_frame_len(buf, why)) < 0)
		return -1;
	if ((size_t)flen != len) {
		*why = len < (size_t)flen ? "frame shorter than its body length" :
			"frame longer than its body length";
		return -1;
	}
	m->type = (enum ctl_type)get16(buf + 6);
	m->seq = get32(buf + 12);
	t = &msg_types[m->type];
	get_fields(t, b, m);
	if (!reserved_zero(t, b))
		w = t->bad_rsv;
	else if (t->check != NULL)
		w = t->check(b, (uint32_t)(len - CTL_HDR_SIZE), m);
	if (w != NULL) {
		*why = w;
		return -1;
	}
	return 0;
}

/* the frame of m into buf (CTL_FRAME_MAX bytes), unchecked; its length */
static int
put_frame(const struct ctl_msg *m, uint8_t *buf, const char **why)
{
	const struct msg_type *t;
	uint8_t *b = buf + CTL_HDR_SIZE;
	uint32_t len;
	int tail = 0;

	if (m->type < 0 || !type_known((uint32_t)m->type)) {
		*why = "unknown message type";
		return -1;
	}
	t = &msg_types[m->type];
	memset(buf, 0, CTL_FRAME_MAX);	/* reserved fields */
	put_fields(t, m, b);
	if (t->tail != NULL && (tail = t->tail(m, b, why)) < 0)
		return -1;
	len = t->fixed + (uint32_t)tail;
	memcpy(buf, magic, sizeof(magic));
	put16(buf + 4, CTL_VERSION);
	put16(buf + 6, (uint16_t)m->type);
	put32(buf + 8, len);
	put32(buf + 12, m->seq);
	return (int)(CTL_HDR_SIZE + len);
}

int
ctl_msg_check(const struct ctl_msg *m, const char **why)
{
	uint8_t buf[CTL_FRAME_MAX];
	struct ctl_msg back;
	int len;

	if ((len = put_frame(m, buf, why)) < 0)
		return -1;
	/* what the peer would make of it: one set of rules for both sides */
	return ctl_msg_decode(buf, (size_t)len, &back, why);
}

int
ctl_msg_encode(const struct ctl_msg *m, uint8_t *buf, size_t size)
{
	uint8_t frame[CTL_FRAME_MAX];
	struct ctl_msg back;
	const char *why;
	int len;

	if ((len = put_frame(m, frame, &why)) < 0 ||
	    ctl_msg_decode(frame, (size_t)len, &back, &why) != 0 ||
	    (size_t)len > size)
		return -1;
	memcpy(buf, frame, (size_t)len);
	return len;
}
