/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ctl_msg.c -- the control channel's messages: their encoding and total
 * decoder (the framed TCP channel: ctl_chan.c).
 *
 * The decoder gets every message type at its edge values, every truncation
 * and every single-bit flip of valid frames, and one frame per rule it
 * enforces.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "ctl/ctl_chan.h"
#include "ctl/ctl_msg.h"
#include "ctl_stream.h"
#include "unit.h"

#define NSAMPLES 32
#define NSTREAM 1000
#define IO_TIMEOUT 10000

static const struct log_pos pos_max = {
	.lsn = UINT64_MAX, .off = UINT64_MAX - 7, .lap = UINT32_MAX,
	.crc = UINT32_MAX,
};
static const struct log_pos pos_min = { .lsn = 1, .off = 0, .lap = 1 };

/* valid messages of every type at their edge values; returns how many */
static int
samples(struct ctl_msg *s)
{
	int n = 0;
	struct ctl_msg *m;

	m = msg_init(&s[n++], CTL_HELLO, 0);
	memset(m->u.hello.cluster_uuid, 0xff, 16);
	m->u.hello.node_id = UINT32_MAX;
	m->u.hello.flags = CTL_HELLO_F_FENCE_ONLY | CTL_HELLO_F_PROBE;
	m->u.hello.epoch = UINT64_MAX;
	m->u.hello.ring_size = UINT64_MAX - 7;
	m->u.hello.head = (struct log_pos){ UINT64_MAX, UINT64_MAX - 15,
		UINT32_MAX, UINT32_MAX };
	m->u.hello.incarnation = UINT64_MAX;
	m->u.hello.head_epoch = UINT64_MAX - 2;
	m = msg_init(&s[n++], CTL_HELLO, UINT32_MAX);
	m->u.hello.ring_size = 8;
	m->u.hello.head = pos_min;
	m->u.hello.incarnation = 1;

	m = msg_init(&s[n++], CTL_HELLO_REPLY, 7);
	m->u.hello_reply.ring_size = 4096;
	m->u.hello_reply.head = pos_min;
	m->u.hello_reply.tail = pos_min;
	m->u.hello_reply.incarnation = 1;
	m = msg_init(&s[n++], CTL_HELLO_REPLY, UINT32_MAX);
	memset(m->u.hello_reply.cluster_uuid, 0xa5, 16);
	m->u.hello_reply.node_id = UINT32_MAX;
	m->u.hello_reply.flags = CTL_HELLO_F_SUSPECT | CTL_HELLO_F_STALE |
		CTL_HELLO_F_PENDING;
	m->u.hello_reply.epoch = UINT64_MAX;
	m->u.hello_reply.tail_epoch = UINT64_MAX - 1;
	m->u.hello_reply.incarnation = UINT64_MAX - 3;
	m->u.hello_reply.head_epoch = UINT64_MAX - 4;
	m->u.hello_reply.prior_epoch = UINT64_MAX - 5;
	m->u.hello_reply.epoch_inc = UINT64_MAX - 6;
	m->u.hello_reply.config_epoch = UINT64_MAX - 8;
	m->u.hello_reply.config_crc = UINT32_MAX;
	m->u.hello_reply.ring_size = UINT64_MAX - 7;
	m->u.hello_reply.head = (struct log_pos){ 5, 4088, 3, 0xdeadbeef };
	m->u.hello_reply.tail = (struct log_pos){ UINT64_MAX, UINT64_MAX - 15,
		UINT32_MAX, UINT32_MAX };
	m->u.hello_reply.data_port = UINT16_MAX;
	m->u.hello_reply.backend = CTL_BACKEND_MAX;
	m->u.hello_reply.desc_len = CTL_DESC_MAX;
	for (int i = 0; i < CTL_DESC_MAX; i++)
		m->u.hello_reply.desc[i] = (uint8_t)(0xff - i);
	m = msg_init(&s[n++], CTL_HELLO_REPLY, 1);
	m->u.hello_reply.ring_size = 1 << 20;
	m->u.hello_reply.incarnation = 0x0123456789abcdefull;
	m->u.hello_reply.head = (struct log_pos){ 10, 64, 1, 1 };
	m->u.hello_reply.tail = (struct log_pos){ 10, 64, 1, 1 };
	m->u.hello_reply.data_port = 7204;
	m->u.hello_reply.backend = CTL_BACKEND_PMEM;
	m->u.hello_reply.desc_len = 1;
	m->u.hello_reply.desc[0] = 0;

	m = msg_init(&s[n++], CTL_QUERY, 3);
	m->u.query.lsn = 1;
	m = msg_init(&s[n++], CTL_QUERY, 4);
	m->u.query.lsn = UINT64_MAX;

	m = msg_init(&s[n++], CTL_QUERY_REPLY, 5);
	m->u.query_reply.lsn = UINT64_MAX;
	m->u.query_reply.found = 0;
	m = msg_init(&s[n++], CTL_QUERY_REPLY, 6);
	m->u.query_reply.lsn = UINT64_MAX - 1;
	m->u.query_reply.found = 1;
	m->u.query_reply.after = pos_max;
	m = msg_init(&s[n++], CTL_QUERY_REPLY, 6);
	m->u.query_reply.lsn = 1;
	m->u.query_reply.found = 1;
	m->u.query_reply.after = (struct log_pos){ 2, 0, 1, 0 };

	m = msg_init(&s[n++], CTL_TRUNCATE, 8);
	m->u.cut.pos = pos_max;
	m->u.cut.epoch = UINT64_MAX;
	m = msg_init(&s[n++], CTL_TRUNCATE, 9);
	m->u.cut.pos = pos_min;
	m = msg_init(&s[n++], CTL_SET_HEAD, 10);
	m->u.cut.pos = pos_max;
	m->u.cut.epoch = 0x10001;
	m = msg_init(&s[n++], CTL_SET_HEAD, 11);
	m->u.cut.pos = pos_min;

	m = msg_init(&s[n++], CTL_ACK, 12);
	m->u.ack.status = 0;
	m->u.ack.head = pos_min;
	m->u.ack.tail = pos_max;
	m = msg_init(&s[n++], CTL_ACK, 13);
	m->u.ack.status = INT32_MIN;
	m = msg_init(&s[n++], CTL_ACK, 14);
	m->u.ack.status = -1;
	m->u.ack.head = pos_max;
	m->u.ack.tail = pos_max;
	m->u.ack.hold_next = UINT64_MAX;

	m = msg_init(&s[n++], CTL_COMMIT, 15);
	m->u.commit.flushed = pos_min;
	m = msg_init(&s[n++], CTL_COMMIT, 16);
	m->u.commit.epoch = UINT64_MAX;
	m->u.commit.commit_lsn = UINT64_MAX;
	m->u.commit.flushed = pos_max;

	/* a primary's (zeros but the time) and a replica's answer */
	m = msg_init(&s[n++], CTL_HEARTBEAT, 17);
	m = msg_init(&s[n++], CTL_HEARTBEAT, 18);
	m->u.heartbeat.time_ns = UINT64_MAX;
	m->u.heartbeat.hold_next = UINT64_MAX;
	m->u.heartbeat.flags = CTL_HEARTBEAT_F_WANTS_BASE;

	m = msg_init(&s[n++], CTL_ERROR, 19);
	m->u.error.code = INT32_MIN;
	m = msg_init(&s[n++], CTL_ERROR, 20);
	m->u.error.code = INT32_MAX;
	for (int i = 0; i < CTL_TEXT_MAX; i++)
		m->u.error.text[i] = (char)(0x20 + i % 95);	/* ' ' to '~' */
	m = msg_init(&s[n++], CTL_ERROR, 21);
	m->u.error.code = -110;
	strcpy(m->u.error.text, "replica 2: log is full");

	/* the smallest membership: one node, k 0, no node id known */
	m = msg_init(&s[n++], CTL_MEMBERSHIP, 22);
	m->u.membership.config_epoch = 1;
	m->u.membership.count = 1;
	m->u.membership.m[0] = (struct member){ .flags = MEMBER_F_NEW, .port = 1,
		.host = "a" };
	/* the largest: joint, 12 nodes, 8 in each configuration, k 7 of each */
	m = msg_init(&s[n++], CTL_MEMBERSHIP, 23);
	m->u.membership.config_epoch = UINT64_MAX;
	m->u.membership.flags = MEMBERSHIP_F_JOINT;
	m->u.membership.count = MEMBERSHIP_NODES_MAX;
	m->u.membership.k = 7;
	m->u.membership.k_old = 7;
	for (int i = 0; i < MEMBERSHIP_NODES_MAX; i++) {
		struct member *e = &m->u.membership.m[i];

		e->node_id = (uint32_t)(UINT16_MAX - i);
		e->flags = i % 3 == 0 ? MEMBER_F_NEW | MEMBER_F_OLD :
			i % 3 == 1 ? MEMBER_F_NEW : MEMBER_F_OLD;
		e->port = (uint16_t)(UINT16_MAX - i);
		e->incarnation = UINT64_MAX - (uint64_t)i;
		for (int j = 0; j < MEMBER_HOST_MAX; j++)
			e->host[j] = (char)(0x21 + (i + j) % 94);
	}

	m = msg_init(&s[n++], CTL_VERIFY, 24);
	m->u.verify = (struct ctl_verify){ 1, 1, 1 };
	m = msg_init(&s[n++], CTL_VERIFY, 25);
	/* 64 ranges, the last one a single record, at the top of the LSNs */
	m->u.verify = (struct ctl_verify){ UINT64_MAX - 63 * 256ull, UINT64_MAX, 256 };

	m = msg_init(&s[n++], CTL_VERIFY_REPLY, 26);
	m->u.verify_reply = (struct ctl_verify_reply){ .from = 7, .to = 7,
		.per_range = UINT32_MAX, .n = 1, .flags = { CTL_VERIFY_F_MISSING } };
	m = msg_init(&s[n++], CTL_VERIFY_REPLY, 27);
	m->u.verify_reply.from = 1;
	m->u.verify_reply.to = 64ull * UINT32_MAX;
	m->u.verify_reply.per_range = UINT32_MAX;
	m->u.verify_reply.n = CTL_VERIFY_RANGES_MAX;
	for (int i = 0; i < CTL_VERIFY_RANGES_MAX; i++)
		m->u.verify_reply.crc[i] = UINT32_MAX - (uint32_t)i;

	CU_ASSERT_FATAL(n <= NSAMPLES);
	return n;
}

/* decode from an exact-size heap copy, so a read past len is caught */
static int
decode_exact(const uint8_t *frame, size_t len, struct ctl_msg *m,
		const char **why)
{
	uint8_t *copy = malloc(len ? len : 1);
	int ret;

	CU_ASSERT_FATAL(copy != NULL);
	memcpy(copy, frame, len);
	*why = NULL;
	ret = ctl_msg_decode(copy, len, m, why);
	free(copy);
	if (ret != 0) {
		CU_ASSERT_EQUAL(ret, -1);
		CU_ASSERT_PTR_NOT_NULL(*why);
	}
	return ret;
}

/* the body sizes docs/replication.md gives */
static int
body_size(const struct ctl_msg *m)
{
	switch (m->type) {
	case CTL_HELLO:		return 80;
	case CTL_HELLO_REPLY:	return 152 + m->u.hello_reply.desc_len;
	case CTL_MEMBERSHIP:	return 808;
	case CTL_QUERY:		return 8;
	case CTL_QUERY_REPLY:	return 40;
	case CTL_TRUNCATE:	return 32;
	case CTL_SET_HEAD:	return 32;
	case CTL_ACK:		return 64;
	case CTL_COMMIT:	return 40;
	case CTL_HEARTBEAT:	return 24;
	case CTL_ERROR:		return 6 + (int)strlen(m->u.error.text);
	case CTL_VERIFY:	return 24;
	case CTL_VERIFY_REPLY:	return 24 + 8 * (int)m->u.verify_reply.n;
	}
	return -1;
}

static void
round_trip(void)
{
	struct ctl_msg s[NSAMPLES], back;
	uint8_t frame[CTL_FRAME_MAX], again[CTL_FRAME_MAX];
	const char *why;
	int n = samples(s), seen[CTL_VERIFY_REPLY + 1] = { 0 };

	for (int i = 0; i < n; i++) {
		int len = ctl_msg_encode(&s[i], frame, sizeof(frame));

		CU_ASSERT_FATAL(len >= CTL_HDR_SIZE && len <= CTL_FRAME_MAX);
		CU_ASSERT_EQUAL(ctl_msg_frame_len(frame, &why), len);
		CU_ASSERT_EQUAL(ctl_msg_check(&s[i], &why), 0);
		CU_ASSERT_EQUAL_FATAL(decode_exact(frame, (size_t)len, &back,
			&why), 0);
		CU_ASSERT_EQUAL(memcmp(&back, &s[i], sizeof(back)), 0);
		CU_ASSERT_EQUAL(ctl_msg_encode(&back, again, sizeof(again)), len);
		CU_ASSERT_EQUAL(memcmp(again, frame, (size_t)len), 0);
		/* too small a buffer is refused, not overrun */
		CU_ASSERT_EQUAL(ctl_msg_encode(&s[i], again, (size_t)len - 1), -1);
		CU_ASSERT_EQUAL(len, CTL_HDR_SIZE + body_size(&s[i]));
		seen[s[i].type]++;
	}
	for (int t = CTL_HELLO; t <= CTL_VERIFY_REPLY; t++)
		CU_ASSERT(seen[t] >= 2);

	/* the exact bytes of one frame, as docs/replication.md lays it out */
	msg_init(&back, CTL_QUERY, 0x04030201);
	back.u.query.lsn = 0x1122334455667788ull;
	{
		static const uint8_t want[] = { 'R', 'P', 'L', 'C', 5, 0, 3, 0,
			8, 0, 0, 0, 1, 2, 3, 4,
			0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11 };

		CU_ASSERT_EQUAL(ctl_msg_encode(&back, frame, sizeof(frame)),
			(int)sizeof(want));
		CU_ASSERT_EQUAL(memcmp(frame, want, sizeof(want)), 0);
	}
}

static void
type_names(void)
{
	CU_ASSERT_STRING_EQUAL(ctl_msg_type_name(CTL_HELLO), "HELLO");
	CU_ASSERT_STRING_EQUAL(ctl_msg_type_name(CTL_HELLO_REPLY), "HELLO_REPLY");
	CU_ASSERT_STRING_EQUAL(ctl_msg_type_name(CTL_SET_HEAD), "SET_HEAD");
	CU_ASSERT_STRING_EQUAL(ctl_msg_type_name(CTL_ERROR), "ERROR");
	CU_ASSERT_STRING_EQUAL(ctl_msg_type_name(0), "unknown");
	CU_ASSERT_STRING_EQUAL(ctl_msg_type_name(CTL_MEMBERSHIP), "MEMBERSHIP");
	CU_ASSERT_STRING_EQUAL(ctl_msg_type_name(12), "VERIFY");
	CU_ASSERT_STRING_EQUAL(ctl_msg_type_name(13), "VERIFY_REPLY");
	CU_ASSERT_STRING_EQUAL(ctl_msg_type_name(14), "unknown");
	CU_ASSERT_STRING_EQUAL(ctl_msg_type_name(-1), "unknown");
}

static void
truncations(void)
{
	struct ctl_msg s[NSAMPLES], back;
	uint8_t frame[CTL_FRAME_MAX + 1];
	const char *why;
	int n = samples(s);

	for (int i = 0; i < n; i++) {
		int len = ctl_msg_encode(&s[i], frame, CTL_FRAME_MAX);

		CU_ASSERT_FATAL(len > 0);
		for (int cut = 0; cut < len; cut++)
			CU_ASSERT_EQUAL(decode_exact(frame, (size_t)cut, &back,
				&why), -1);
		/* and a byte too many */
		frame[len] = 0;
		CU_ASSERT_EQUAL(decode_exact(frame, (size_t)len + 1, &back,
			&why), -1);
	}
}

static void
bit_flips(void)
{
	struct ctl_msg s[NSAMPLES], back;
	uint8_t frame[CTL_FRAME_MAX], again[CTL_FRAME_MAX];
	const char *why;
	int n = samples(s), accepted = 0, rejected = 0;

	for (int i = 0; i < n; i++) {
		int len = ctl_msg_encode(&s[i], frame, sizeof(frame));

		CU_ASSERT_FATAL(len > 0);
		for (int bit = 0; bit < len * 8; bit++) {
			frame[bit / 8] ^= (uint8_t)(1u << (bit % 8));
			if (decode_exact(frame, (size_t)len, &back, &why) == 0) {
				accepted++;
				CU_ASSERT_EQUAL(ctl_msg_encode(&back, again,
					sizeof(again)), len);
				CU_ASSERT_EQUAL(memcmp(again, frame,
					(size_t)len), 0);
			} else {
				rejected++;
			}
			/* a header's verdict never promises more than a frame */
			if (ctl_msg_frame_len(frame, &why) > CTL_FRAME_MAX)
				CU_FAIL("frame_len beyond CTL_FRAME_MAX");
			frame[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		}
	}
	/* both outcomes occur: flips of data fields pass, of checks fail */
	CU_ASSERT(accepted > 0);
	CU_ASSERT(rejected > 0);
}

/* encode m bypassing nothing: the encoder must refuse it */
static void
refused(const struct ctl_msg *m, const char *want_why)
{
	uint8_t frame[CTL_FRAME_MAX];
	const char *why = NULL;

	CU_ASSERT_EQUAL(ctl_msg_encode(m, frame, sizeof(frame)), -1);
	CU_ASSERT_EQUAL(ctl_msg_check(m, &why), -1);
	CU_ASSERT_PTR_NOT_NULL_FATAL(why);
	if (strstr(why, want_why) == NULL) {
		printf("\n  encoder said \"%s\", want \"%s\"\n", why, want_why);
		CU_FAIL("wrong reason");
	}
}

static void
expect_reject(const uint8_t *frame, size_t len, const char *want_why)
{
	struct ctl_msg back;
	const char *why = NULL;

	CU_ASSERT_EQUAL_FATAL(decode_exact(frame, len, &back, &why), -1);
	if (strstr(why, want_why) == NULL) {
		printf("\n  decoder said \"%s\", want \"%s\"\n", why, want_why);
		CU_FAIL("wrong reason");
	}
}

static void
put_le(uint8_t *p, uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* a valid message's frame, for one corruption */
static int
frame_of(const struct ctl_msg *m, uint8_t *frame)
{
	int len = ctl_msg_encode(m, frame, CTL_FRAME_MAX);

	CU_ASSERT_FATAL(len > 0);
	return len;
}

static void verify_rejections(void);

/* HEARTBEAT: 24 bytes exactly, known flags only, reserved bytes 0 */
static void
heartbeat_rejections(const struct ctl_msg *s, int n)
{
	struct ctl_msg m, back;
	uint8_t f[CTL_FRAME_MAX + 8];
	const char *why;
	int hb = 0, len;

	while (hb < n && !(s[hb].type == CTL_HEARTBEAT &&
	    s[hb].u.heartbeat.flags != 0))
		hb++;
	CU_ASSERT_FATAL(hb < n);
	len = frame_of(&s[hb], f);
	CU_ASSERT_EQUAL(len, 16 + 24);
	/* the fields where docs/replication.md puts them */
	CU_ASSERT_EQUAL(f[16 + 8], 0xff);
	CU_ASSERT_EQUAL(f[16 + 15], 0xff);
	CU_ASSERT_EQUAL(f[16 + 16], CTL_HEARTBEAT_F_WANTS_BASE);
	CU_ASSERT_EQUAL(decode_exact(f, (size_t)len, &back, &why), 0);
	CU_ASSERT_EQUAL(back.u.heartbeat.hold_next, UINT64_MAX);
	CU_ASSERT_EQUAL(back.u.heartbeat.flags, CTL_HEARTBEAT_F_WANTS_BASE);

	/* a version 4 heartbeat (8 bytes), and one too long */
	put_le(f + 8, 8, 4);
	expect_reject(f, 16 + 8, "HEARTBEAT: body length is not 24");
	CU_ASSERT_EQUAL(ctl_msg_frame_len(f, &why), -1);
	put_le(f + 8, 23, 4);
	expect_reject(f, 16 + 23, "HEARTBEAT: body length is not 24");
	put_le(f + 8, 25, 4);
	f[len] = 0;
	expect_reject(f, 16 + 25, "HEARTBEAT: body length is not 24");
	/* the header right, the frame a byte short or long */
	put_le(f + 8, 24, 4);
	expect_reject(f, (size_t)len - 1, "shorter");
	expect_reject(f, (size_t)len + 1, "longer");

	/* every flag bit but WANTS_BASE is unknown */
	for (int bit = 1; bit < 32; bit++) {
		len = frame_of(&s[hb], f);
		put_le(f + 16 + 16, CTL_HEARTBEAT_F_WANTS_BASE | 1u << bit, 4);
		expect_reject(f, (size_t)len, "HEARTBEAT: unknown flags");
		m = s[hb];
		m.u.heartbeat.flags = 1u << bit;
		refused(&m, "HEARTBEAT: unknown flags");
	}
	len = frame_of(&s[hb], f);
	f[16 + 23] = 1;
	expect_reject(f, (size_t)len, "HEARTBEAT: reserved field is not 0");
	/* without a hold or the flag: a primary's heartbeat */
	msg_init(&m, CTL_HEARTBEAT, 1);
	CU_ASSERT_EQUAL(ctl_msg_check(&m, &why), 0);
}

static void
rejections(void)
{
	struct ctl_msg s[NSAMPLES], m;
	uint8_t f[CTL_FRAME_MAX + 8];
	const char *why;
	int n = samples(s), len;

	/* s[0]: HELLO, s[3]: HELLO_REPLY with 64 descriptor bytes */
	len = frame_of(&s[0], f);
	f[0] = 'X';
	expect_reject(f, (size_t)len, "magic");
	CU_ASSERT_EQUAL(ctl_msg_frame_len(f, &why), -1);

	len = frame_of(&s[0], f);
	put_le(f + 4, 1, 2);	/* the version before incarnations */
	expect_reject(f, (size_t)len, "version");
	put_le(f + 4, 2, 2);	/* the version before prior_epoch, config_crc */
	expect_reject(f, (size_t)len, "version");
	put_le(f + 4, 3, 2);	/* the version before hold_next */
	expect_reject(f, (size_t)len, "version");
	put_le(f + 4, 4, 2);	/* the version before HEARTBEAT's hold */
	expect_reject(f, (size_t)len, "older than this node's 5");
	CU_ASSERT_EQUAL(ctl_msg_frame_len(f, &why), -1);
	put_le(f + 4, 6, 2);
	expect_reject(f, (size_t)len, "newer than this node's 5");
	put_le(f + 4, 0xffff, 2);
	expect_reject(f, (size_t)len, "newer");
	put_le(f + 4, 0, 2);
	expect_reject(f, (size_t)len, "version");

	len = frame_of(&s[0], f);
	put_le(f + 6, 0, 2);
	expect_reject(f, (size_t)len, "type");
	put_le(f + 6, 14, 2);
	expect_reject(f, (size_t)len, "type");
	put_le(f + 6, 0xffff, 2);
	expect_reject(f, (size_t)len, "type");

	/* body length off by one, the frame agreeing with it */
	len = frame_of(&s[0], f);
	put_le(f + 8, 79, 4);
	expect_reject(f, (size_t)len - 1, "HELLO: body length");
	put_le(f + 8, 81, 4);
	f[len] = 0;
	expect_reject(f, (size_t)len + 1, "HELLO: body length");
	/* and a header promising more than the frame has */
	put_le(f + 8, 0xffffffff, 4);
	expect_reject(f, (size_t)len, "body length");
	CU_ASSERT_EQUAL(ctl_msg_frame_len(f, &why), -1);

	/* HELLO_REPLY: the variable part must match desc_len */
	len = frame_of(&s[4], f);	/* desc_len 1 */
	put_le(f + 8, 152 + 2, 4);
	f[len] = 0;
	expect_reject(f, (size_t)len + 1, "152 + desc_len");
	put_le(f + 8, 152, 4);
	expect_reject(f, (size_t)len - 1, "152 + desc_len");

	len = frame_of(&s[3], f);
	put_le(f + 16 + 90, 65, 2);
	expect_reject(f, (size_t)len, "HELLO_REPLY: desc_len exceeds 64");
	m = s[3];
	m.u.hello_reply.desc_len = 65;
	refused(&m, "desc_len exceeds 64");

	/* reserved fields */
	len = frame_of(&s[0], f);
	f[16 + 20] = 4;
	expect_reject(f, (size_t)len, "HELLO: unknown flags");
	len = frame_of(&s[3], f);
	f[16 + 95] = 0x80;
	expect_reject(f, (size_t)len, "HELLO_REPLY: reserved");
	f[16 + 95] = 0;
	f[16 + 151] = 1;
	expect_reject(f, (size_t)len, "HELLO_REPLY: reserved");
	f[16 + 151] = 0;
	f[16 + 20] |= 8;	/* flags: bit 3 is none */
	expect_reject(f, (size_t)len, "HELLO_REPLY: unknown flags");
	f[16 + 20] &= (uint8_t)~8;
	/* a membership's epoch and its crc: both or neither */
	put_le(f + 16 + 144, 0, 4);
	expect_reject(f, (size_t)len, "HELLO_REPLY: config_crc");
	m = s[4];	/* config_epoch 0 */
	m.u.hello_reply.config_crc = 7;
	refused(&m, "config_crc");
	/* a promise never goes down within one answer */
	m = s[4];
	m.u.hello_reply.epoch = 5;
	m.u.hello_reply.prior_epoch = 6;
	refused(&m, "prior_epoch is above epoch");
	len = frame_of(&s[3], f);
	f[16 + 92] = CTL_BACKEND_MAX + 1;
	expect_reject(f, (size_t)len, "HELLO_REPLY: backend");
	m = s[3];
	m.u.hello_reply.backend = CTL_BACKEND_MAX + 1;
	refused(&m, "backend");
	len = frame_of(&s[8], f);	/* QUERY_REPLY */
	f[16 + 12] = 1;
	expect_reject(f, (size_t)len, "QUERY_REPLY: reserved");
	len = frame_of(&s[14], f);	/* ACK */
	f[16 + 4] = 1;
	expect_reject(f, (size_t)len, "ACK: reserved");

	heartbeat_rejections(s, n);

	/* ERROR: printable text only, the length consistent */
	m = s[23];
	CU_ASSERT_EQUAL_FATAL(m.type, CTL_ERROR);
	len = frame_of(&m, f);
	f[16 + 6 + 3] = '\n';
	expect_reject(f, (size_t)len, "printable");
	f[16 + 6 + 3] = 0x7f;
	expect_reject(f, (size_t)len, "printable");
	f[16 + 6 + 3] = 0;
	expect_reject(f, (size_t)len, "printable");
	m.u.error.text[3] = '\t';
	refused(&m, "printable");
	len = frame_of(&s[22], f);	/* 200 characters */
	put_le(f + 16 + 4, 201, 2);
	expect_reject(f, (size_t)len, "text length exceeds 200");
	put_le(f + 16 + 4, 199, 2);
	expect_reject(f, (size_t)len, "6 + text length");
	m = s[22];
	m.u.error.text[CTL_TEXT_MAX] = 'x';	/* no NUL within 200 */
	refused(&m, "exceeds 200");

	/* positions: aligned offsets, LSNs and laps from 1 */
	msg_init(&m, CTL_TRUNCATE, 1);
	m.u.cut.pos = (struct log_pos){ 1, 4, 1, 0 };
	refused(&m, "TRUNCATE: pos.off is not a multiple of 8");
	m.u.cut.pos.off = 8;
	len = frame_of(&m, f);
	f[16 + 8] = 12;
	expect_reject(f, (size_t)len, "TRUNCATE: pos.off is not a multiple of 8");
	f[16 + 8] = 8;
	put_le(f + 16, 0, 8);
	expect_reject(f, (size_t)len, "TRUNCATE: pos.lsn is 0");
	m.u.cut.pos.lap = 0;
	refused(&m, "TRUNCATE: pos.lap is 0");

	/* incarnations are never 0 */
	m = s[1];
	m.u.hello.incarnation = 0;
	refused(&m, "HELLO: incarnation is 0");
	len = frame_of(&s[1], f);
	put_le(f + 16 + 64, 0, 8);
	expect_reject(f, (size_t)len, "HELLO: incarnation is 0");
	m = s[2];
	m.u.hello_reply.incarnation = 0;
	refused(&m, "HELLO_REPLY: incarnation is 0");

	msg_init(&m, CTL_SET_HEAD, 1);
	refused(&m, "SET_HEAD: pos.lsn is 0");
	msg_init(&m, CTL_COMMIT, 1);
	refused(&m, "COMMIT: flushed.lsn is 0");
	/* but QUERY lsn 0 asks for the position before the first record */
	msg_init(&m, CTL_QUERY, 1);
	CU_ASSERT_EQUAL(ctl_msg_check(&m, &why), 0);
	msg_init(&m, CTL_QUERY_REPLY, 1);
	m.u.query_reply.found = 1;
	m.u.query_reply.after = pos_min;
	CU_ASSERT_EQUAL(ctl_msg_check(&m, &why), 0);
	m.u.query_reply.after.lsn = 2;
	refused(&m, "after.lsn is not lsn + 1");

	m = s[0];
	m.u.hello.head.off = m.u.hello.ring_size;
	refused(&m, "HELLO: head.off is not below ring_size");
	m = s[0];
	m.u.hello.ring_size = 12;
	refused(&m, "ring_size");
	m = s[3];
	m.u.hello_reply.tail.lsn = 4;	/* below head.lsn 5 */
	refused(&m, "tail.lsn is below head.lsn");
	m = s[3];
	m.u.hello_reply.flags = 8;
	refused(&m, "flags");
	m = s[0];
	m.u.hello.flags = 4;
	refused(&m, "HELLO: unknown flags");

	/* QUERY_REPLY: found is a boolean; after only when found */
	m = s[9];
	m.u.query_reply.found = 2;
	refused(&m, "found is not 0 or 1");
	m.u.query_reply.found = 0;
	refused(&m, "after is not zero");
	m = s[9];
	m.u.query_reply.after.lsn = m.u.query_reply.lsn;
	refused(&m, "after.lsn is not lsn + 1");

	/* ACK: a status is 0 or negative; zero positions only on failure */
	m = s[15];	/* status INT32_MIN, positions zero */
	m.u.ack.status = 0;
	refused(&m, "ACK: head.lsn is 0");
	m.u.ack.status = 1;
	refused(&m, "status is positive");

	/* and what cannot be encoded at all */
	msg_init(&m, (enum ctl_type)0, 1);
	refused(&m, "type");
	msg_init(&m, (enum ctl_type)14, 1);
	refused(&m, "type");
	/* a membership the decoder would refuse (tests/engine/membership_codec.c
	 * has every rule); ms: the smallest sample, ms + 1 the largest */
	msg_init(&m, CTL_MEMBERSHIP, 1);
	refused(&m, "config_epoch is 0");
	{
		int ms = 0;

		while (ms < n && s[ms].type != CTL_MEMBERSHIP)
			ms++;
		CU_ASSERT_FATAL(ms + 1 < n && s[ms + 1].type == CTL_MEMBERSHIP);
		m = s[ms];
		m.u.membership.k = 1;
		refused(&m, "k is not below the nodes of NEW");
		m = s[ms];
		strcpy(m.u.membership.m[0].host, "a b");
		refused(&m, "host is not printable");
		m.u.membership.m[0].host[0] = '\0';
		refused(&m, "host is empty but its port is not 0");
		m = s[ms + 1];
		m.u.membership.m[5].node_id = m.u.membership.m[2].node_id;
		refused(&m, "a node id is listed twice");
		len = frame_of(&s[ms], f);
		f[16 + 804] ^= 1;
		expect_reject(f, (size_t)len, "membership: checksum mismatch");
	}

	verify_rejections();
}

/* VERIFY and VERIFY_REPLY: ranges bounded, entries consistent */
static void
verify_rejections(void)
{
	struct ctl_msg m;
	uint8_t f[CTL_FRAME_MAX + 8];
	int len;

	CU_ASSERT_EQUAL(ctl_verify_ranges(1, 256, 256), 1);
	CU_ASSERT_EQUAL(ctl_verify_ranges(1, 257, 256), 2);
	CU_ASSERT_EQUAL(ctl_verify_ranges(1, UINT64_MAX, 1), UINT64_MAX);
	CU_ASSERT_EQUAL(ctl_verify_ranges(0, 5, 1), 0);
	CU_ASSERT_EQUAL(ctl_verify_ranges(5, 4, 1), 0);
	CU_ASSERT_EQUAL(ctl_verify_ranges(5, 5, 0), 0);

	msg_init(&m, CTL_VERIFY, 1);
	m.u.verify = (struct ctl_verify){ 0, 5, 1 };
	refused(&m, "VERIFY: from is 0");
	m.u.verify = (struct ctl_verify){ 6, 5, 1 };
	refused(&m, "to below from");
	m.u.verify = (struct ctl_verify){ 1, 5, 0 };
	refused(&m, "per_range 0");
	m.u.verify = (struct ctl_verify){ 1, 64 * 256 + 1, 256 };
	refused(&m, "VERIFY: more than 64 ranges");
	m.u.verify = (struct ctl_verify){ 1, 64 * 256, 256 };
	len = frame_of(&m, f);
	f[16 + 23] = 1;
	expect_reject(f, (size_t)len, "VERIFY: reserved");

	msg_init(&m, CTL_VERIFY_REPLY, 1);
	m.u.verify_reply = (struct ctl_verify_reply){ .from = 1, .to = 10,
		.per_range = 5, .n = 2, .crc = { 1, 2 } };
	len = frame_of(&m, f);
	CU_ASSERT_EQUAL(len, 16 + 24 + 16);
	f[16 + 24 + 8 + 4] = 2;		/* entry 1: an unknown flag */
	expect_reject(f, (size_t)len, "VERIFY_REPLY: unknown flags");
	f[16 + 24 + 8 + 4] = CTL_VERIFY_F_MISSING;	/* missing, crc 2 */
	expect_reject(f, (size_t)len, "crc of a missing range is not 0");
	m.u.verify_reply.n = 3;		/* 1..10 by 5 is two ranges */
	refused(&m, "n is not the ranges");
	m.u.verify_reply.n = 0;
	refused(&m, "n is not 1 to 64");
	m.u.verify_reply.n = CTL_VERIFY_RANGES_MAX + 1;
	refused(&m, "n is not 1 to 64");
	/* the body must hold exactly n entries */
	m.u.verify_reply.n = 2;
	len = frame_of(&m, f);
	put_le(f + 8, 24 + 8, 4);
	expect_reject(f, (size_t)len - 8, "24 + 8 n");
	put_le(f + 8, 24 + 8 * (CTL_VERIFY_RANGES_MAX + 1), 4);
	expect_reject(f, (size_t)len, "VERIFY_REPLY: body length");
}

/*
 * docs/replication.md's table of each type has a row for every field the
 * codec's table holds, at the same offset, size and type, within that
 * type's section ("### NAME (type T, ...": TRUNCATE and SET_HEAD share one).
 */
static void
doc_tables(void)
{
	const char *srcdir = getenv("srcdir");
	char path[1024], row[128];
	FILE *f;
	char *doc;
	long size;
	int rows = 0;

	snprintf(path, sizeof(path), "%s/docs/replication.md",
		srcdir ? srcdir : ".");
	CU_ASSERT_FATAL((f = fopen(path, "r")) != NULL);
	fseek(f, 0, SEEK_END);
	size = ftell(f);
	rewind(f);
	CU_ASSERT_FATAL((doc = calloc(1, (size_t)size + 1)) != NULL);
	CU_ASSERT_FATAL(fread(doc, 1, (size_t)size, f) == (size_t)size);
	fclose(f);
	for (int t = CTL_HELLO; t <= CTL_VERIFY_REPLY; t++) {
		char head[64];
		const char *sec, *end;

		snprintf(head, sizeof(head), "(type %d, ", t);
		sec = strstr(doc, head);
		if (sec == NULL) {	/* SET_HEAD: in TRUNCATE's section */
			snprintf(head, sizeof(head), "(type %d, ", t - 1);
			sec = strstr(doc, head);
		}
		CU_ASSERT_FATAL(sec != NULL);
		end = strstr(sec, "\n### ");
		for (int i = 0; ctl_msg_layout(t, i, row, sizeof(row)) == 0; i++) {
			const char *at = strstr(sec, row);
			bool ok = at != NULL && (end == NULL || at < end);

			if (!ok)
				fprintf(stderr, "docs/replication.md, %s: no row \"%s\"\n",
					ctl_msg_type_name(t), row);
			CU_ASSERT(ok);
			rows++;
		}
	}
	CU_ASSERT(rows > 50);
	CU_ASSERT(ctl_msg_layout(0, 0, row, sizeof(row)) == -1);
	CU_ASSERT(ctl_msg_layout(CTL_HELLO, 99, row, sizeof(row)) == -1);
	free(doc);
}

UNIT_MAIN("ctl_msg",
	UNIT_CASE(doc_tables),
	UNIT_CASE(round_trip),
	UNIT_CASE(type_names),
	UNIT_CASE(truncations),
	UNIT_CASE(bit_flips),
	UNIT_CASE(rejections))
