/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * verbs_fence.c -- fencing over real RDMA: a replica (replica_run, provider
 * verbs, in a thread) follows primary 1 (epoch E1), then primary 2 says
 * HELLO with epoch E2 > E1.  From then on:
 *  - primary 1's connection is gone: its write + flush complete in error;
 *  - a write with primary 1's key fails with a remote access error, even
 *    over a connection the replica admitted (primary 2's): the region it
 *    names was deregistered;
 *  - a flush stamped with E1 is refused with a remote access error;
 *  - primary 2's own writes and flushes succeed;
 * and none of the refused bytes reach the ring: after a third primary
 * persists the whole range, the replica's image holds primary 2's pattern
 * and neither of the others.  Without an RDMA device it exits 77 (the VM
 * rig runs it: make check-rdma).
 */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "verbs_harness.h"
#include "ctl/ctl_chan.h"
#include "replica/replica.h"
#include "log/wal.h"

#define SIZE (4u << 20)
#define LEN 4096
#define E1 (1ull << 16 | 1)
#define E2 (2ull << 16 | 2)
#define E3 (3ull << 16 | 3)

static const uint8_t uuid[16] = "verbs-fence-tst";
static char ctl_port[8], data_port[8], image[64];
static atomic_int stop;	/* replica_cfg.stop */
static uint64_t ring_size;

static void *
replica_main(void *arg)
{
	struct replica_cfg cfg = {
		.path = image, .backend = RPMA_EXT_MEM_CRASH, .size = SIZE,
		.create = 1, .node_id = 9, .provider = "verbs", .addr = ip,
		.ctl_port = ctl_port, .data_port = data_port, .timeout_ms = 10000,
		.stop = &stop,
	};

	(void)arg;
	memcpy(cfg.cluster_uuid, uuid, 16);
	return (void *)(intptr_t)replica_run(&cfg);
}

struct session {
	struct ctl_chan *ch;
	struct rpma_conn *conn;
	struct rpma_mr_remote *dst;
	struct rpma_cq *cq;
};

/* HELLO with epoch, then the data connection (GPSPM), stamped with epoch */
static void
hello(struct rpma_peer *peer, uint64_t epoch, uint32_t node, struct session *s)
{
	struct ctl_msg m = { .type = CTL_HELLO, .seq = 1 };
	struct rpma_conn_cfg *cfg = NULL;
	struct rpma_conn_req *req = NULL;
	char port[8];
	int ret = -1;

	for (int tries = 0; tries < 100 && ret; tries++) {
		ret = ctl_connect(ip, ctl_port, 5000, NULL, &s->ch);
		if (ret)
			usleep(100000);
	}
	CHECK(ret == 0, "control channel to the replica");
	memcpy(m.u.hello.cluster_uuid, uuid, 16);
	m.u.hello.node_id = node;
	m.u.hello.epoch = epoch;
	m.u.hello.incarnation = 0x100 + node;	/* one log per node */
	m.u.hello.ring_size = ring_size;
	m.u.hello.head = (struct log_pos){ 1, 0, 1, 0 };
	CHECK(ctl_chan_send(s->ch, &m, 5000) == 0, "HELLO");
	CHECK(ctl_chan_recv(s->ch, &m, 20000) == 0 && m.type == CTL_HELLO_REPLY,
		"HELLO_REPLY (epoch %llu)", (unsigned long long)epoch);
	CHECK(!(m.u.hello_reply.flags & CTL_HELLO_F_STALE), "not stale");
	CHECK(rpma_mr_remote_from_descriptor(m.u.hello_reply.desc,
		m.u.hello_reply.desc_len, &s->dst) == 0, "descriptor");
	snprintf(port, sizeof(port), "%u", (unsigned)m.u.hello_reply.data_port);
	CHECK(rpma_conn_cfg_new(&cfg) == 0 && rpma_ext_conn_cfg_set_gpspm(cfg, true) == 0,
		"cfg");
	CHECK(rpma_conn_req_new(peer, ip, port, cfg, &req) == 0, "request");
	CHECK(rpma_conn_req_connect(&req, NULL, &s->conn) == 0, "connect");
	CHECK(v_next_event(s->conn) == RPMA_CONN_ESTABLISHED, "established");
	CHECK(rpma_ext_conn_set_epoch(s->conn, epoch) == 0, "epoch");
	CHECK(rpma_conn_get_cq(s->conn, &s->cq) == 0, "cq");
	rpma_conn_cfg_delete(&cfg);
}

/* write LEN bytes at off (with dst), then flush; the flush's completion */
static struct ibv_wc
write_flush(struct session *s, struct rpma_mr_remote *dst, struct rpma_mr_local *src,
		size_t src_off, size_t off, bool signal_write)
{
	struct ibv_wc wc = { .status = IBV_WC_GENERAL_ERR };

	if (rpma_write(s->conn, dst, off, src, src_off, LEN, signal_write ?
			RPMA_F_COMPLETION_ALWAYS : RPMA_F_COMPLETION_ON_ERROR,
			(void *)7) != 0)
		return wc;
	if (signal_write)
		return v_wait_wc(s->cq);
	if (rpma_flush(s->conn, dst, off, LEN, RPMA_FLUSH_TYPE_PERSISTENT,
			RPMA_F_COMPLETION_ALWAYS, (void *)8) != 0)
		return wc;
	return v_wait_wc(s->cq);
}

static int
image_has(size_t off, const unsigned char *pattern)
{
	unsigned char buf[LEN];
	int fd = open(image, O_RDONLY);

	CHECK(fd >= 0 && pread(fd, buf, LEN, (off_t)off) == LEN, "read the image");
	close(fd);
	return memcmp(buf, pattern, LEN) == 0;
}

int
main(void)
{
	static unsigned char pat[3][LEN];
	struct session ss[3] = { { 0 } }, *s1 = &ss[0], *s2 = &ss[1], *s3 = &ss[2];
	struct rpma_peer *peer;
	struct rpma_mr_local *src;
	struct ibv_wc wc;
	pthread_t thread;
	void *ret;
	size_t off[3];

	setvbuf(stdout, NULL, _IOLBF, 0);
	v_require_rdma();
	snprintf(ctl_port, sizeof(ctl_port), "%d", 9300 + (int)(getpid() % 300) * 2);
	snprintf(data_port, sizeof(data_port), "%d", 9301 + (int)(getpid() % 300) * 2);
	snprintf(image, sizeof(image), "/tmp/rpma-verbs-fence-%d", (int)getpid());
	ring_size = (SIZE - WAL_RING_OFF) & ~(uint64_t)7;
	for (int p = 0; p < 3; p++) {
		memset(pat[p], 0xA0 + p, LEN);
		off[p] = WAL_RING_OFF + ring_size - (size_t)(p + 1) * LEN;
	}
	CHECK(pthread_create(&thread, NULL, replica_main, NULL) == 0, "replica");
	peer = v_peer_new();
	CHECK(rpma_mr_reg(peer, pat, sizeof(pat), RPMA_MR_USAGE_WRITE_SRC, &src) == 0,
		"reg");

	/* primary 1 follows: its write + flush succeed */
	hello(peer, E1, 1, s1);
	wc = write_flush(s1, s1->dst, src, 0, off[2] - LEN, false);
	CHECK(wc.status == IBV_WC_SUCCESS, "primary 1 before the fence: %s",
		ibv_wc_status_str(wc.status));

	/* primary 2 fences it */
	hello(peer, E2, 2, s2);

	/* primary 1's own connection: the replica dropped it */
	{
		enum rpma_conn_event ev = v_next_event(s1->conn);

		CHECK(ev == RPMA_CONN_CLOSED || ev == RPMA_CONN_LOST,
			"primary 1's connection after the fence: %s",
			rpma_utils_conn_event_2str(ev));
	}
	if (rpma_write(s1->conn, s1->dst, off[0], src, 0, LEN,
			RPMA_F_COMPLETION_ALWAYS, (void *)6) == 0) {
		wc = v_wait_wc(s1->cq);
		CHECK(wc.status != IBV_WC_SUCCESS, "primary 1's write after the fence");
		printf("verbs_fence: primary 1's write after the fence: %s\n",
			ibv_wc_status_str(wc.status));
	} else {
		printf("verbs_fence: primary 1's write after the fence: refused (%s)\n",
			rpma_ext_errormsg());
	}

	/* primary 2's own: fine */
	wc = write_flush(s2, s2->dst, src, 2 * LEN, off[2], false);
	CHECK(wc.status == IBV_WC_SUCCESS, "primary 2: %s", ibv_wc_status_str(wc.status));

	/* a flush of epoch E1, over an admitted connection: refused */
	CHECK(rpma_ext_conn_set_epoch(s2->conn, E1) == 0, "epoch E1");
	CHECK(rpma_flush(s2->conn, s2->dst, off[2], LEN, RPMA_FLUSH_TYPE_PERSISTENT,
		RPMA_F_COMPLETION_ALWAYS, (void *)8) == 0, "flush of epoch E1");
	wc = v_wait_wc(s2->cq);
	CHECK(wc.status == IBV_WC_REM_ACCESS_ERR, "a flush of the old epoch: %s",
		ibv_wc_status_str(wc.status));
	CHECK(rpma_ext_conn_set_epoch(s2->conn, E2) == 0, "epoch E2");

	/* primary 1's key, over an admitted connection: the NIC refuses it */
	wc = write_flush(s2, s1->dst, src, LEN, off[1], true);
	CHECK(wc.status == IBV_WC_REM_ACCESS_ERR, "a write with the old key: %s",
		ibv_wc_status_str(wc.status));
	printf("verbs_fence: the old epoch's flush and the old key's write: "
		"remote access errors\n");

	/* a third primary persists the whole range: what is in memory shows */
	hello(peer, E3, 3, s3);
	CHECK(rpma_flush(s3->conn, s3->dst, off[2], 3 * LEN, RPMA_FLUSH_TYPE_PERSISTENT,
		RPMA_F_COMPLETION_ALWAYS, (void *)9) == 0, "flush all");
	wc = v_wait_wc(s3->cq);
	CHECK(wc.status == IBV_WC_SUCCESS, "flush all: %s", ibv_wc_status_str(wc.status));
	CHECK(image_has(off[2], pat[2]), "primary 2's bytes are in the ring");
	CHECK(!image_has(off[0], pat[0]), "primary 1's bytes after the fence reached the ring");
	CHECK(!image_has(off[1], pat[1]), "the old key's bytes reached the ring");

	for (struct session *s = ss; s < ss + 3; s++) {
		enum rpma_conn_event ev;

		if (s->conn) {
			rpma_conn_disconnect(s->conn);
			while (rpma_conn_next_event(s->conn, &ev) == 0 &&
			       ev != RPMA_CONN_CLOSED && ev != RPMA_CONN_LOST)
				;
			rpma_conn_delete(&s->conn);
		}
		rpma_mr_remote_delete(&s->dst);
		ctl_chan_close(&s->ch);
	}
	CHECK(rpma_mr_dereg(&src) == 0, "dereg");
	CHECK(rpma_peer_delete(&peer) == 0, "peer delete");
	stop = 1;
	pthread_join(thread, &ret);
	CHECK(ret == NULL, "replica_run: %d", (int)(intptr_t)ret);
	unlink(image);
	printf("PASS: fencing over verbs: the old primary's key and epoch are refused, "
		"the ring holds none of their bytes\n");
	return 0;
}
