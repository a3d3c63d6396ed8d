/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ctl_msg.c -- the control channel's messages: encoding and a total
 * decoder.
 *
 * WIRE FORMAT (little-endian; version 2; docs/replication.md has the tables)
 *
 * Header (16 bytes):
 *
 *   off size field
 *     0    4 magic       "RPLC"
 *     4    2 version     2
 *     6    2 type        enum ctl_type
 *     8    4 body_len    bytes after the header
 *    12    4 seq         the sender's sequence number
 *
 * A position (24 bytes): lsn u64, off u64, lap u32, crc u32.  A valid one
 * has lsn != 0, lap != 0, off a multiple of 8 (and below ring_size where
 * the message carries one).
 *
 * Bodies:
 *
 *   HELLO (80)        0 uuid[16], 16 node_id u32, 20 flags u32,
 *                     24 epoch u64, 32 ring_size u64, 40 head pos,
 *                     64 incarnation u64, 72 head_epoch u64
 *   HELLO_REPLY       0 uuid[16], 16 node_id u32, 20 flags u32,
 *    (152 + desc_len) 24 epoch u64, 32 ring_size u64, 40 head pos,
 *                     64 tail pos, 88 data_port u16, 90 desc_len u16,
 *                     92 backend u8, 93 reserved[3], 96 tail_epoch u64,
 *                     104 config_epoch u64, 112 incarnation u64,
 *                     120 head_epoch u64, 128 prior_epoch u64,
 *                     136 epoch_inc u64, 144 config_crc u32,
 *                     148 reserved u32, 152 desc[desc_len]
 *   QUERY (8)         0 lsn u64
 *   QUERY_REPLY (40)  0 lsn u64, 8 found u32, 12 reserved u32, 16 after pos
 *   TRUNCATE (32)     0 pos, 24 epoch u64 (of record pos.lsn - 1)
 *   SET_HEAD (32)     0 pos, 24 epoch u64 (of record pos.lsn - 1)
 *   ACK (56)          0 status i32, 4 reserved u32, 8 head pos, 32 tail pos
 *   COMMIT (40)       0 epoch u64, 8 commit_lsn u64, 16 flushed pos
 *   HEARTBEAT (8)     0 time_ns u64
 *   ERROR             0 code i32, 4 text_len u16, 6 text[text_len]
 *     (6 + text_len)
 *   MEMBERSHIP (808)  the encoding in membership.h (answered by ACK)
 *   VERIFY (24)       0 from u64, 8 to u64, 16 per_range u32,
 *                     20 reserved u32
 *   VERIFY_REPLY      0 from u64, 8 to u64, 16 per_range u32, 20 n u32,
 *    (24 + 8 n)       24 n times { crc u32, flags u32 }
 *
 * Every field of a decoded message is determined by the frame's bytes (the
 * rest of *m is zeroed), and the encoder refuses what the decoder would
 * reject, so encode(decode(x)) == x for every accepted x.
 */
#include <string.h>

#include "ctl/ctl_msg.h"

#define POS_SIZE 24
#define CUT_SIZE 32
#define HELLO_SIZE 80
#define HELLO_REPLY_FIXED 152
#define QUERY_SIZE 8
#define QUERY_REPLY_SIZE 40
#define ACK_SIZE 56
#define COMMIT_SIZE 40
#define HEARTBEAT_SIZE 8
#define ERROR_FIXED 6
#define VERIFY_SIZE 24
#define VERIFY_REPLY_FIXED 24
#define VERIFY_ENTRY 8

static const uint8_t magic[4] = { 'R', 'P', 'L', 'C' };

/* each type's name and the body lengths it may have */
static const struct {
	const char *name;
	uint32_t min, max;
	const char *bad_len;
} types[] = {
	[CTL_HELLO] = { "HELLO", HELLO_SIZE, HELLO_SIZE,
		"HELLO: body length is not 80" },
	[CTL_HELLO_REPLY] = { "HELLO_REPLY", HELLO_REPLY_FIXED,
		HELLO_REPLY_FIXED + CTL_DESC_MAX,
		"HELLO_REPLY: body length is not 152 to 216" },
	[CTL_QUERY] = { "QUERY", QUERY_SIZE, QUERY_SIZE,
		"QUERY: body length is not 8" },
	[CTL_QUERY_REPLY] = { "QUERY_REPLY", QUERY_REPLY_SIZE, QUERY_REPLY_SIZE,
		"QUERY_REPLY: body length is not 40" },
	[CTL_TRUNCATE] = { "TRUNCATE", CUT_SIZE, CUT_SIZE,
		"TRUNCATE: body length is not 32" },
	[CTL_SET_HEAD] = { "SET_HEAD", CUT_SIZE, CUT_SIZE,
		"SET_HEAD: body length is not 32" },
	[CTL_ACK] = { "ACK", ACK_SIZE, ACK_SIZE,
		"ACK: body length is not 56" },
	[CTL_COMMIT] = { "COMMIT", COMMIT_SIZE, COMMIT_SIZE,
		"COMMIT: body length is not 40" },
	[CTL_HEARTBEAT] = { "HEARTBEAT", HEARTBEAT_SIZE, HEARTBEAT_SIZE,
		"HEARTBEAT: body length is not 8" },
	[CTL_ERROR] = { "ERROR", ERROR_FIXED, ERROR_FIXED + CTL_TEXT_MAX,
		"ERROR: body length is not 6 to 206" },
	[CTL_MEMBERSHIP] = { "MEMBERSHIP", MEMBERSHIP_SIZE, MEMBERSHIP_SIZE,
		"MEMBERSHIP: body length is not 808" },
	[CTL_VERIFY] = { "VERIFY", VERIFY_SIZE, VERIFY_SIZE,
		"VERIFY: body length is not 24" },
	[CTL_VERIFY_REPLY] = { "VERIFY_REPLY", VERIFY_REPLY_FIXED + VERIFY_ENTRY,
		VERIFY_REPLY_FIXED + VERIFY_ENTRY * CTL_VERIFY_RANGES_MAX,
		"VERIFY_REPLY: body length is not 32 to 536" },
};

_Static_assert(CTL_HDR_SIZE + MEMBERSHIP_SIZE <= CTL_FRAME_MAX,
	"a MEMBERSHIP fits a frame");
_Static_assert(CTL_HDR_SIZE + VERIFY_REPLY_FIXED +
	VERIFY_ENTRY * CTL_VERIFY_RANGES_MAX <= CTL_FRAME_MAX,
	"a VERIFY_REPLY fits a frame");

#define NTYPES (sizeof(types) / sizeof(types[0]))

static int
type_known(uint32_t type)
{
	return type < NTYPES && types[type].name != NULL;
}

const char *
ctl_msg_type_name(int type)
{
	return type >= 0 && type_known((uint32_t)type) ? types[type].name :
		"unknown";
}

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

int
ctl_msg_frame_len(const uint8_t *hdr, const char **why)
{
	uint32_t type, body;

	if (memcmp(hdr, magic, sizeof(magic)) != 0) {
		*why = "bad magic (not \"RPLC\")";
		return -1;
	}
	if (get16(hdr + 4) != CTL_VERSION) {
		*why = "unsupported version (not 2)";
		return -1;
	}
	type = get16(hdr + 6);
	if (!type_known(type)) {
		*why = "unknown message type";
		return -1;
	}
	/* each type's bounds keep the frame within CTL_FRAME_MAX */
	body = get32(hdr + 8);
	if (body < types[type].min || body > types[type].max) {
		*why = types[type].bad_len;
		return -1;
	}
	return (int)(CTL_HDR_SIZE + body);
}

/* the body's fields into m (zeroed), checking each; NULL or the fault */
static const char *
decode_body(const uint8_t *b, uint32_t len, struct ctl_msg *m)
{
	const char *w;

	switch (m->type) {
	case CTL_HELLO: {
		struct ctl_hello *h = &m->u.hello;

		memcpy(h->cluster_uuid, b, 16);
		h->node_id = get32(b + 16);
		h->flags = get32(b + 20);
		if (h->flags & ~(uint32_t)(CTL_HELLO_F_FENCE_ONLY | CTL_HELLO_F_PROBE))
			return "HELLO: unknown flags";
		h->epoch = get64(b + 24);
		h->ring_size = get64(b + 32);
		get_pos(b + 40, &h->head);
		h->incarnation = get64(b + 64);
		h->head_epoch = get64(b + 72);
		if (h->ring_size == 0 || h->ring_size % 8 != 0)
			return "HELLO: ring_size is 0 or not a multiple of 8";
		if (h->incarnation == 0)
			return "HELLO: incarnation is 0";
		return pos_fault(&h->head, h->ring_size, w_hello_head);
	}
	case CTL_HELLO_REPLY: {
		struct ctl_hello_reply *r = &m->u.hello_reply;

		memcpy(r->cluster_uuid, b, 16);
		r->node_id = get32(b + 16);
		r->flags = get32(b + 20);
		r->epoch = get64(b + 24);
		r->ring_size = get64(b + 32);
		get_pos(b + 40, &r->head);
		get_pos(b + 64, &r->tail);
		r->data_port = get16(b + 88);
		r->desc_len = get16(b + 90);
		r->backend = b[92];
		r->tail_epoch = get64(b + 96);
		r->config_epoch = get64(b + 104);
		r->incarnation = get64(b + 112);
		r->head_epoch = get64(b + 120);
		r->prior_epoch = get64(b + 128);
		r->epoch_inc = get64(b + 136);
		r->config_crc = get32(b + 144);
		if (r->incarnation == 0)
			return "HELLO_REPLY: incarnation is 0";
		if (r->flags & ~(uint32_t)(CTL_HELLO_F_SUSPECT | CTL_HELLO_F_STALE |
		    CTL_HELLO_F_PENDING))
			return "HELLO_REPLY: unknown flags";
		if (r->backend > CTL_BACKEND_MAX)
			return "HELLO_REPLY: backend is not 0 to 3";
		if (b[93] != 0 || b[94] != 0 || b[95] != 0 || get32(b + 148) != 0)
			return "HELLO_REPLY: reserved field is not 0";
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
	case CTL_QUERY:
		/* lsn 0 asks for the position before the first record */
		m->u.query.lsn = get64(b);
		return NULL;
	case CTL_QUERY_REPLY: {
		struct ctl_query_reply *q = &m->u.query_reply;

		q->lsn = get64(b);
		q->found = get32(b + 8);
		if (get32(b + 12) != 0)
			return "QUERY_REPLY: reserved field is not 0";
		get_pos(b + 16, &q->after);
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
	case CTL_TRUNCATE:
	case CTL_SET_HEAD:
		get_pos(b, &m->u.cut.pos);
		m->u.cut.epoch = get64(b + POS_SIZE);
		return pos_fault(&m->u.cut.pos, 0,
			m->type == CTL_TRUNCATE ? w_truncate : w_set_head);
	case CTL_ACK: {
		struct ctl_ack *a = &m->u.ack;

		a->status = (int32_t)get32(b);
		if (get32(b + 4) != 0)
			return "ACK: reserved field is not 0";
		get_pos(b + 8, &a->head);
		get_pos(b + 32, &a->tail);
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
	case CTL_COMMIT: {
		struct ctl_commit *c = &m->u.commit;

		c->epoch = get64(b);
		c->commit_lsn = get64(b + 8);
		get_pos(b + 16, &c->flushed);
		return pos_fault(&c->flushed, 0, w_commit);
	}
	case CTL_HEARTBEAT:
		m->u.heartbeat.time_ns = get64(b);
		return NULL;
	case CTL_MEMBERSHIP:
		return membership_decode(b, len, &m->u.membership, &w) ? w : NULL;
	case CTL_VERIFY: {
		struct ctl_verify *v = &m->u.verify;

		v->from = get64(b);
		v->to = get64(b + 8);
		v->per_range = get32(b + 16);
		if (get32(b + 20) != 0)
			return "VERIFY: reserved field is not 0";
		if (v->from == 0 || v->to < v->from || v->per_range == 0)
			return "VERIFY: from is 0, to below from, or per_range 0";
		if (ctl_verify_ranges(v->from, v->to, v->per_range) >
		    CTL_VERIFY_RANGES_MAX)
			return "VERIFY: more than 64 ranges";
		return NULL;
	}
	case CTL_VERIFY_REPLY: {
		struct ctl_verify_reply *v = &m->u.verify_reply;

		v->from = get64(b);
		v->to = get64(b + 8);
		v->per_range = get32(b + 16);
		v->n = get32(b + 20);
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
	case CTL_ERROR: {
		struct ctl_error *e = &m->u.error;
		uint16_t tlen;

		e->code = (int32_t)get32(b);
		tlen = get16(b + 4);
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
	}
	return "unknown message type";
}

int
ctl_msg_decode(const uint8_t *buf, size_t len, struct ctl_msg *m,
		const char **why)
{
	const char *w;
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
	if ((w = decode_body(buf + CTL_HDR_SIZE, (uint32_t)(len - CTL_HDR_SIZE),
			m))) {
		*why = w;
		return -1;
	}
	return 0;
}

/* the frame of m into buf (CTL_FRAME_MAX bytes), unchecked; its length */
static int
put_frame(const struct ctl_msg *m, uint8_t *buf, const char **why)
{
	uint8_t *b = buf + CTL_HDR_SIZE;
	uint32_t len;

	memset(buf, 0, CTL_FRAME_MAX);	/* reserved fields */
	switch (m->type) {
	case CTL_HELLO: {
		const struct ctl_hello *h = &m->u.hello;

		memcpy(b, h->cluster_uuid, 16);
		put32(b + 16, h->node_id);
		put32(b + 20, h->flags);
		put64(b + 24, h->epoch);
		put64(b + 32, h->ring_size);
		put_pos(b + 40, &h->head);
		put64(b + 64, h->incarnation);
		put64(b + 72, h->head_epoch);
		len = HELLO_SIZE;
		break;
	}
	case CTL_HELLO_REPLY: {
		const struct ctl_hello_reply *r = &m->u.hello_reply;

		if (r->desc_len > CTL_DESC_MAX) {
			*why = "HELLO_REPLY: desc_len exceeds 64";
			return -1;
		}
		memcpy(b, r->cluster_uuid, 16);
		put32(b + 16, r->node_id);
		put32(b + 20, r->flags);
		put64(b + 24, r->epoch);
		put64(b + 32, r->ring_size);
		put_pos(b + 40, &r->head);
		put_pos(b + 64, &r->tail);
		put16(b + 88, r->data_port);
		put16(b + 90, r->desc_len);
		b[92] = r->backend;
		put64(b + 96, r->tail_epoch);
		put64(b + 104, r->config_epoch);
		put64(b + 112, r->incarnation);
		put64(b + 120, r->head_epoch);
		put64(b + 128, r->prior_epoch);
		put64(b + 136, r->epoch_inc);
		put32(b + 144, r->config_crc);
		memcpy(b + HELLO_REPLY_FIXED, r->desc, r->desc_len);
		len = HELLO_REPLY_FIXED + r->desc_len;
		break;
	}
	case CTL_QUERY:
		put64(b, m->u.query.lsn);
		len = QUERY_SIZE;
		break;
	case CTL_QUERY_REPLY:
		put64(b, m->u.query_reply.lsn);
		put32(b + 8, m->u.query_reply.found);
		put_pos(b + 16, &m->u.query_reply.after);
		len = QUERY_REPLY_SIZE;
		break;
	case CTL_TRUNCATE:
	case CTL_SET_HEAD:
		put_pos(b, &m->u.cut.pos);
		put64(b + POS_SIZE, m->u.cut.epoch);
		len = CUT_SIZE;
		break;
	case CTL_ACK:
		put32(b, (uint32_t)m->u.ack.status);
		put_pos(b + 8, &m->u.ack.head);
		put_pos(b + 32, &m->u.ack.tail);
		len = ACK_SIZE;
		break;
	case CTL_COMMIT:
		put64(b, m->u.commit.epoch);
		put64(b + 8, m->u.commit.commit_lsn);
		put_pos(b + 16, &m->u.commit.flushed);
		len = COMMIT_SIZE;
		break;
	case CTL_HEARTBEAT:
		put64(b, m->u.heartbeat.time_ns);
		len = HEARTBEAT_SIZE;
		break;
	case CTL_MEMBERSHIP:
		if (membership_encode(&m->u.membership, b, why))
			return -1;
		len = MEMBERSHIP_SIZE;
		break;
	case CTL_VERIFY:
		put64(b, m->u.verify.from);
		put64(b + 8, m->u.verify.to);
		put32(b + 16, m->u.verify.per_range);
		len = VERIFY_SIZE;
		break;
	case CTL_VERIFY_REPLY: {
		const struct ctl_verify_reply *v = &m->u.verify_reply;

		if (v->n == 0 || v->n > CTL_VERIFY_RANGES_MAX) {
			*why = "VERIFY_REPLY: n is not 1 to 64";
			return -1;
		}
		put64(b, v->from);
		put64(b + 8, v->to);
		put32(b + 16, v->per_range);
		put32(b + 20, v->n);
		for (uint32_t i = 0; i < v->n; i++) {
			uint8_t *e = b + VERIFY_REPLY_FIXED + VERIFY_ENTRY * i;

			put32(e, v->crc[i]);
			put32(e + 4, v->flags[i]);
		}
		len = VERIFY_REPLY_FIXED + VERIFY_ENTRY * v->n;
		break;
	}
	case CTL_ERROR: {
		size_t tlen = strnlen(m->u.error.text, CTL_TEXT_MAX + 1);

		if (tlen > CTL_TEXT_MAX) {
			*why = "ERROR: text length exceeds 200";
			return -1;
		}
		put32(b, (uint32_t)m->u.error.code);
		put16(b + 4, (uint16_t)tlen);
		memcpy(b + ERROR_FIXED, m->u.error.text, tlen);
		len = ERROR_FIXED + (uint32_t)tlen;
		break;
	}
	default:
		*why = "unknown message type";
		return -1;
	}
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
