/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * interop.h -- shared by the interop programs, which are compiled twice:
 * against Debian's librpma (-DUSE_LIBRPMA) and against librpmacore.  They
 * use only librpma 1.2's API, so either build talks to the other.
 *
 * The target's private data (our own small layout, little-endian):
 *   byte 0: MR descriptor size (21), byte 1: peer-cfg descriptor size (1),
 *   then the MR descriptor, then the peer-cfg descriptor.
 * rdma_cm may hand the receiver more bytes than were sent (RoCE pads
 * private data): receivers check "at least", never "exactly".
 */
#ifndef INTEROP_H
#define INTEROP_H

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef USE_LIBRPMA
#include <librpma.h>
#define IMPL "librpma 1.2"
#else
#include "rpma.h"
#define IMPL "librpmacore"
#endif

#define REGION 8192
#define PATTERN_LEN 4096
#define PATTERN_OFF (REGION - PATTERN_LEN)	/* the region's last bytes */
#define TAIL_OFF 0				/* the atomic word */
#define TAIL_VALUE 0x1122334455667788ull

#define CHECK(cond, ...) \
	do { \
		if (!(cond)) { \
			fprintf(stderr, "[%s] %s:%d: %s: ", IMPL, __FILE__, __LINE__, #cond); \
			fprintf(stderr, __VA_ARGS__); \
			fprintf(stderr, "\n"); \
			exit(1); \
		} \
	} while (0)

/* the bytes the client writes, derived from a seed both sides get */
static inline void
interop_pattern(unsigned seed, unsigned char *buf, size_t len)
{
	uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;

	for (size_t i = 0; i < len; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		buf[i] = (unsigned char)x;
	}
}

static inline struct rpma_peer *
interop_peer(const char *ip)
{
	struct ibv_context *ctx;
	struct rpma_peer *peer;
	int ret = rpma_utils_get_ibv_context(ip, RPMA_UTIL_IBV_CONTEXT_LOCAL, &ctx);

	if (ret) {
		printf("SKIP: no RDMA device serves %s (%s)\n", ip, rpma_err_2str(ret));
		exit(77);
	}
	CHECK(rpma_peer_new(ctx, &peer) == 0, "rpma_peer_new");
	return peer;
}

static inline struct ibv_wc
interop_wait(struct rpma_cq *cq)
{
	struct ibv_wc wc;
	int ret;

	for (;;) {
		ret = rpma_cq_get_wc(cq, 1, &wc, NULL);
		if (ret == 0)
			return wc;
		CHECK(ret == RPMA_E_NO_COMPLETION, "rpma_cq_get_wc: %s", rpma_err_2str(ret));
		CHECK(rpma_cq_wait(cq) == 0, "rpma_cq_wait");
	}
}

static inline enum rpma_conn_event
interop_event(struct rpma_conn *conn)
{
	enum rpma_conn_event ev = RPMA_CONN_UNDEFINED;

	CHECK(rpma_conn_next_event(conn, &ev) == 0, "rpma_conn_next_event");
	return ev;
}

#endif
