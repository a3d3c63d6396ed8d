/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ctl_stream.h -- messages for the control channel's tests: a zeroed
 * message, the i-th message of a stream of every type, and a whole send
 * for the tests' relays.
 */
#ifndef CTL_STREAM_H
#define CTL_STREAM_H

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "ctl/ctl_msg.h"

/* send all n bytes (a relay's forwarding): 0, or -1 */
static inline int
send_all(int fd, const uint8_t *p, size_t n)
{
	while (n > 0) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* a zeroed message: padding and unused bytes compare equal after decode */
static inline struct ctl_msg *
msg_init(struct ctl_msg *m, enum ctl_type type, uint32_t seq)
{
	memset(m, 0, sizeof(*m));
	m->type = type;
	m->seq = seq;
	return m;
}

/* the i-th message of the stream: every type, valid, derived from i */
static inline void
stream_msg(int i, struct ctl_msg *m)
{
	uint64_t v = (uint64_t)i * 0x9E3779B97F4A7C15ull;
	struct log_pos p = { (uint64_t)i + 1, (uint64_t)(i % 512) * 8,
		(uint32_t)i / 7 + 1, (uint32_t)v };

	msg_init(m, (enum ctl_type)(CTL_HELLO + i % CTL_VERIFY_REPLY), (uint32_t)i);
	switch (m->type) {
	case CTL_HELLO:
		memcpy(m->u.hello.cluster_uuid, &v, sizeof(v));
		m->u.hello.node_id = (uint32_t)i;
		m->u.hello.epoch = v;
		m->u.hello.ring_size = 1 << 20;
		m->u.hello.head = p;
		m->u.hello.incarnation = v | 1;
		break;
	case CTL_HELLO_REPLY:
		m->u.hello_reply.ring_size = 1 << 20;
		m->u.hello_reply.head = p;
		m->u.hello_reply.tail = p;
		m->u.hello_reply.incarnation = v | 1;
		m->u.hello_reply.data_port = (uint16_t)i;
		m->u.hello_reply.backend = (uint8_t)(i % (CTL_BACKEND_MAX + 1));
		m->u.hello_reply.desc_len = (uint16_t)(i % (CTL_DESC_MAX + 1));
		for (int k = 0; k < m->u.hello_reply.desc_len; k++)
			m->u.hello_reply.desc[k] = (uint8_t)(i + k);
		break;
	case CTL_QUERY:
		m->u.query.lsn = v | 1;
		break;
	case CTL_QUERY_REPLY:
		m->u.query_reply.lsn = p.lsn;
		m->u.query_reply.found = (uint32_t)(i / 10) & 1;
		if (m->u.query_reply.found) {
			m->u.query_reply.after = p;
			m->u.query_reply.after.lsn++;
		}
		break;
	case CTL_TRUNCATE:
	case CTL_SET_HEAD:
		m->u.cut.pos = p;
		m->u.cut.epoch = v;
		break;
	case CTL_ACK:
		m->u.ack.head = p;
		m->u.ack.tail = p;
		break;
	case CTL_COMMIT:
		m->u.commit.epoch = v;
		m->u.commit.commit_lsn = v >> 1;
		m->u.commit.flushed = p;
		break;
	case CTL_HEARTBEAT:
		m->u.heartbeat.time_ns = v;
		break;
	case CTL_MEMBERSHIP:
		m->u.membership.config_epoch = v | 1;
		m->u.membership.count = (uint32_t)i % MEMBERSHIP_NODES_MAX + 1;
		m->u.membership.k = (m->u.membership.count - 1) / 2;
		for (uint32_t k = 0; k < m->u.membership.count; k++) {
			struct member *e = &m->u.membership.m[k];

			e->node_id = k % 2 ? k + 1 : 0;
			e->flags = MEMBER_F_NEW;
			e->port = (uint16_t)(7000 + k);
			e->incarnation = v ^ k;
			snprintf(e->host, sizeof(e->host), "node%u-%d", k, i);
		}
		break;
	case CTL_ERROR:
		m->u.error.code = -i;
		snprintf(m->u.error.text, sizeof(m->u.error.text),
			"error %d of the stream", i);
		break;
	case CTL_VERIFY:
		m->u.verify = (struct ctl_verify){ p.lsn, p.lsn + (uint64_t)i,
			(uint32_t)i / 60 + 1 };
		break;
	case CTL_VERIFY_REPLY:
		m->u.verify_reply.from = p.lsn;
		m->u.verify_reply.per_range = 256;
		m->u.verify_reply.n = (uint32_t)i % CTL_VERIFY_RANGES_MAX + 1;
		m->u.verify_reply.to = p.lsn + 256ull * m->u.verify_reply.n - 1;
		for (uint32_t k = 0; k < m->u.verify_reply.n; k++)
			m->u.verify_reply.crc[k] = (uint32_t)(v >> (k % 32)) | 1;
		break;
	}
}

#endif
