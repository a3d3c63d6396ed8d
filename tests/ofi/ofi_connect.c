/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ofi_connect.c -- connection setup over ofi tcp, real processes:
 * private data both ways (intact, the core's hello invisible), too much
 * private data refused, NO_EVENT on idle O_NONBLOCK fds (the target checks
 * its listening fd itself), a rejected request, disconnects from either
 * side seen as RPMA_CONN_CLOSED by the other, and reconnecting on the same
 * peer after a close.
 */
#include "ofi_target.h"

#define REGION 4096

static int cases;

/* a write + flush on conn, checked in the target's memory */
static void
prove_working(struct rpma_conn *conn, struct rpma_mr_remote *remote,
		struct rpma_mr_local *src_mr, unsigned char *src,
		struct h_target *t, unsigned *seed)
{
	struct rpma_cq *cq;
	struct h_rep r;

	h_fill(src, 64, (unsigned)rand_r(seed));
	H_CHECK(rpma_conn_get_cq(conn, &cq) == 0, "cq");
	H_CHECK(rpma_write(conn, remote, REGION - 64, src_mr, 0, 64,
		RPMA_F_COMPLETION_ON_ERROR, NULL) == 0, "write");
	H_CHECK(rpma_flush(conn, remote, REGION - 64, 64, RPMA_FLUSH_TYPE_VISIBILITY,
		RPMA_F_COMPLETION_ALWAYS, (void *)0x77) == 0, "flush");
	h_expect_wc(cq, 0x77, IBV_WC_SUCCESS);
	r = h_cmd(t, H_CMD_HASH, REGION - 64, 64, 0);
	H_CHECK(r.v[0] == h_hash(src, 64), "the target does not have the bytes");
}

int
main(void)
{
	struct h_target_cfg tc = {
		.size = REGION,
		.usage = RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY,
	};
	struct h_target t;
	struct rpma_peer *peer = NULL;
	struct rpma_mr_local *src_mr = NULL;
	struct rpma_mr_remote *remote = NULL;
	struct rpma_conn_req *req = NULL;
	struct rpma_conn *conn = NULL;
	struct rpma_conn_private_data out, in;
	unsigned char mine[224], big[255], src[64];
	enum rpma_conn_event ev;
	struct h_rep r;
	unsigned seed = h_seed();
	int fd, ret;

	rpma_log_set_threshold(RPMA_LOG_THRESHOLD_AUX, RPMA_LOG_LEVEL_FATAL);
	/* the target checked NO_EVENT on its idle listening fd before this */
	h_target_start(&t, &tc);
	cases++;

	H_CHECK(rpma_ext_peer_new_ofi("tcp", &peer) == 0, "peer");
	H_CHECK(rpma_mr_reg(peer, src, sizeof(src), RPMA_MR_USAGE_WRITE_SRC,
		&src_mr) == 0, "reg");

	/* 1. private data both ways: the most this transport carries */
	h_fill(mine, sizeof(mine), (unsigned)rand_r(&seed));
	out.ptr = mine;
	out.len = sizeof(mine);
	conn = h_connect(peer, t.port, NULL, &out, &remote);
	r = h_cmd(&t, H_CMD_STATUS, 0, 0, 0);
	H_CHECK(r.v[2] == sizeof(mine) && r.v[3] == h_hash(mine, sizeof(mine)),
		"target got %llu bytes of private data, not our %zu intact",
		(unsigned long long)r.v[2], sizeof(mine));
	H_CHECK(rpma_conn_get_private_data(conn, &in) == 0, "pdata");
	H_CHECK(in.len == H_DESC_SIZE + H_PDATA_EXTRA,
		"got %u bytes of private data, the target sent %d", in.len,
		H_DESC_SIZE + H_PDATA_EXTRA);
	H_CHECK(memcmp(in.ptr, "RPMC", 4) != 0, "the core's hello is visible");
	for (size_t i = 0; i < H_PDATA_EXTRA; i++)
		H_CHECK(((unsigned char *)in.ptr)[H_DESC_SIZE + i] == h_pdata_byte(i),
			"private data byte %zu differs", H_DESC_SIZE + i);
	cases += 2;

	/* 2. an idle connection's O_NONBLOCK event fd: NO_EVENT, no block */
	H_CHECK(rpma_conn_get_event_fd(conn, &fd) == 0, "event fd");
	h_nonblock(fd);
	ret = rpma_conn_next_event(conn, &ev);
	H_CHECK(ret == RPMA_E_NO_EVENT, "next_event on an idle O_NONBLOCK fd: %s",
		rpma_err_2str(ret));
	cases++;
	prove_working(conn, remote, src_mr, src, &t, &seed);

	/* 3. we disconnect: the target sees CLOSED, and so do we */
	{
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		H_CHECK(rpma_conn_disconnect(conn) == 0, "disconnect");
		for (;;) {
			H_CHECK(poll(&pfd, 1, h_timeout_ms(5000)) > 0, "no CLOSED");
			ret = rpma_conn_next_event(conn, &ev);
			if (ret != RPMA_E_NO_EVENT)
				break;
		}
		H_CHECK(ret == 0 && ev == RPMA_CONN_CLOSED, "our event: %s / %s",
			rpma_err_2str(ret), rpma_utils_conn_event_2str(ev));
		H_CHECK(rpma_conn_delete(&conn) == 0, "delete");
		rpma_mr_remote_delete(&remote);
		h_target_wait_event(&t, RPMA_CONN_CLOSED, h_timeout_ms(5000));
		cases += 2;
	}

	/* 4. too much private data for the transport: refused, not truncated */
	h_fill(big, sizeof(big), (unsigned)rand_r(&seed));
	out.ptr = big;
	out.len = sizeof(big);
	H_CHECK(rpma_conn_req_new(peer, "127.0.0.1", t.port, NULL, &req) == 0, "req");
	ret = rpma_conn_req_connect(&req, &out, &conn);
	H_CHECK(ret == RPMA_E_INVAL && req == NULL && conn == NULL,
		"255 bytes of private data: %s", rpma_err_2str(ret));
	cases++;

	/* 5. the target deletes the request: REJECTED */
	h_cmd(&t, H_CMD_REJECT_NEXT, 0, 0, 0);
	H_CHECK(rpma_conn_req_new(peer, "127.0.0.1", t.port, NULL, &req) == 0, "req");
	H_CHECK(rpma_conn_req_connect(&req, NULL, &conn) == 0, "connect");
	ev = h_next_event(conn, h_timeout_ms(5000));
	H_CHECK(ev == RPMA_CONN_REJECTED, "a deleted request: %s",
		rpma_utils_conn_event_2str(ev));
	H_CHECK(rpma_conn_delete(&conn) == 0, "delete rejected");
	r = h_cmd(&t, H_CMD_STATUS, 0, 0, 0);
	H_CHECK(r.v[4] == 0 && r.v[2] == 0, "target: connection %llu, pdata %llu",
		(unsigned long long)r.v[4], (unsigned long long)r.v[2]);
	cases++;

	/* 6. reconnect on the same peer, no private data; the target closes */
	conn = h_connect(peer, t.port, NULL, NULL, &remote);
	r = h_cmd(&t, H_CMD_STATUS, 0, 0, 0);
	H_CHECK(r.v[1] == 2 && r.v[2] == 0, "target: %llu connections, pdata %llu",
		(unsigned long long)r.v[1], (unsigned long long)r.v[2]);
	prove_working(conn, remote, src_mr, src, &t, &seed);
	r = h_cmd(&t, H_CMD_DISCONNECT, 0, 0, 0);
	H_CHECK(r.st == 0, "target disconnect: %s", rpma_err_2str((int)r.st));
	ev = h_next_event(conn, h_timeout_ms(5000));
	H_CHECK(ev == RPMA_CONN_CLOSED, "the target disconnected: %s",
		rpma_utils_conn_event_2str(ev));
	/* operations on a closed connection fail at once or complete in error */
	{
		struct rpma_cq *cq;
		rpma_conn_get_cq(conn, &cq);
		ret = rpma_flush(conn, remote, 0, 8, RPMA_FLUSH_TYPE_VISIBILITY,
			RPMA_F_COMPLETION_ALWAYS, (void *)0x99);
		if (ret == 0)
			H_CHECK(h_wait_wc(cq, h_timeout_ms(5000)).status != IBV_WC_SUCCESS,
				"flush on a closed connection succeeded");
	}
	H_CHECK(rpma_conn_delete(&conn) == 0, "delete");
	rpma_mr_remote_delete(&remote);
	h_target_wait_event(&t, RPMA_CONN_CLOSED, h_timeout_ms(5000));
	cases += 3;

	/* 7. and once more after the target's close */
	conn = h_connect(peer, t.port, NULL, NULL, &remote);
	prove_working(conn, remote, src_mr, src, &t, &seed);
	h_close(&conn);
	rpma_mr_remote_delete(&remote);
	h_target_wait_event(&t, RPMA_CONN_CLOSED, h_timeout_ms(5000));
	r = h_cmd(&t, H_CMD_STATUS, 0, 0, 0);
	H_CHECK(r.v[1] == 3 && r.v[5] == 4, "target: %llu connections, %llu requests",
		(unsigned long long)r.v[1], (unsigned long long)r.v[5]);
	cases++;

	H_CHECK(rpma_mr_dereg(&src_mr) == 0, "dereg");
	H_CHECK(rpma_peer_delete(&peer) == 0, "peer delete");
	h_target_stop(&t);
	printf("PASS: %d cases\n", cases);
	return 0;
}
