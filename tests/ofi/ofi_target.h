/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ofi_target.h -- a scriptable target process for the ofi tests.
 *
 * h_target_start() forks a child that registers one region, listens on a
 * port of its own (retrying the next ports when one is taken) and accepts
 * connections, sending its region's descriptor (plus H_PDATA_EXTRA bytes of
 * a fixed pattern) as the accept's private data.  The parent drives it
 * over a pipe: the child checks its own memory (hash, 8-byte word),
 * rejects the next request, disconnects, reports the connection events it
 * saw and the private data the last request carried, and exits cleanly
 * (its region, connection, endpoint and peer freed: LeakSanitizer runs in
 * the child too).  The child dies with the parent (PR_SET_PDEATHSIG) and
 * exits by itself when left idle, so no test can leave it behind.
 *
 * Fork before the parent creates any peer: the child must not inherit
 * libfabric's or the core's threads.
 */
#ifndef OFI_TARGET_H
#define OFI_TARGET_H

#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/prctl.h>

#include "ofi_harness.h"

#define H_DESC_SIZE RPMA_EXT_MR_DESC_SIZE_V1
#define H_PDATA_EXTRA 100	/* pattern bytes after the descriptor */

enum h_cmd_op {
	H_CMD_EXIT = 1,
	H_CMD_STATUS,		/* v[0] last event, v[1] ESTABLISHED count,
				   v[2] last request's pdata len, v[3] its hash,
				   v[4] connection alive, v[5] requests seen */
	H_CMD_REJECT_NEXT,	/* delete the next request instead of accepting */
	H_CMD_DISCONNECT,	/* st = rpma_conn_disconnect() */
	H_CMD_HASH,		/* a = offset, b = len: v[0] = hash of region bytes */
	H_CMD_GET8,		/* a = offset: v[0] = the 8 bytes */
	H_CMD_FILL,		/* a = seed: fill the region from rand_r(seed) */
	H_CMD_WATCH_START,	/* a = records, b = record size, c = seed */
	H_CMD_WATCH_STOP,	/* v[0] violations, v[1] tail changes seen,
				   v[2] last tail */
	H_CMD_FENCE,		/* st = rpma_ext_peer_fence(peer, a) */
};

struct h_cmd {
	uint32_t op;
	uint64_t a, b, c;
};

struct h_rep {
	int64_t st;
	uint64_t v[6];
};

struct h_target {
	pid_t pid;
	int cmd_fd;	/* parent -> child */
	int rep_fd;	/* child -> parent */
	char port[16];
};

/* what the child does; set by the test before h_target_start() */
struct h_target_cfg {
	size_t size;		/* region size */
	int usage;		/* region usage */
	const struct rpma_conn_cfg *cfg;	/* for next_conn_req, or NULL */
};

static inline uint64_t
h_hash(const void *p, size_t len)
{
	const unsigned char *b = p;
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < len; i++) {
		h ^= b[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

static inline void
h_fill(void *p, size_t len, unsigned seed)
{
	unsigned char *b = p;

	for (size_t i = 0; i < len; i++)
		b[i] = (unsigned char)rand_r(&seed);
}

/* the pattern the target appends to its descriptor in private data */
static inline unsigned char
h_pdata_byte(size_t i)
{
	return (unsigned char)(i * 7 + 3);
}

/* the log-append record i (ofi_atomic_write): 8-byte lsn, then pattern */
static inline void
h_record(unsigned char *rec, size_t size, uint64_t i, unsigned seed)
{
	memcpy(rec, &i, 8);
	h_fill(rec + 8, size - 8, seed ^ (unsigned)(i * 2654435761u));
}

static inline void
h_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	H_CHECK(fl >= 0 && fcntl(fd, F_SETFL, fl | O_NONBLOCK) == 0, "O_NONBLOCK");
}

/*
 * listen on a port of our own (tests/lib/test_ports.h); another block when
 * one was bound in between by something that takes no block
 */
static inline int
h_listen(struct rpma_peer *peer, struct rpma_ep **ep)
{
	for (int i = 0; i < 8; i++) {
		int port = test_ports(1);
		char p[16];

		snprintf(p, sizeof(p), "%d", port);
		if (rpma_ep_listen(peer, "127.0.0.1", p, ep) == 0)
			return port;
	}
	H_CHECK(0, "no free port to listen on");
	return -1;
}

/* ---------------------------------------------------------------- */
/* the child                                                        */

struct h_watch {
	pthread_t thread;
	atomic_bool stop;
	volatile unsigned char *region;
	uint64_t nrec, recsize;
	unsigned seed;
	unsigned char *rec;
	uint64_t checked;
	uint64_t violations, changes, last_tail;
};

/*
 * The log-append observer: word 0 of the region is the tail (records
 * written), records start at offset 64.  Whenever the tail moves, every
 * record below it must already be complete.
 */
static bool
h_watch_step(struct h_watch *w)
{
	uint64_t tail = __atomic_load_n((uint64_t *)(void *)w->region,
			__ATOMIC_ACQUIRE);

	if (tail == w->last_tail)
		return false;
	w->changes++;
	if (tail > w->nrec) {
		w->violations++;
		w->last_tail = tail;
		return true;
	}
	for (; w->checked < tail; w->checked++) {
		h_record(w->rec, w->recsize, w->checked, w->seed);
		if (memcmp((const void *)(w->region + 64 + w->checked * w->recsize),
				w->rec, w->recsize) != 0) {
			fprintf(stderr, "target: tail %llu visible but record %llu is not\n",
				(unsigned long long)tail,
				(unsigned long long)w->checked);
			w->violations++;
		}
	}
	w->last_tail = tail;
	return true;
}

static void *
h_watch_main(void *arg)
{
	struct h_watch *w = arg;

	while (!atomic_load(&w->stop))
		if (!h_watch_step(w))
			sched_yield();
	h_watch_step(w);	/* what arrived before the stop */
	return NULL;
}

static inline void
h_child_main(const struct h_target_cfg *tc, int cmd_fd, int rep_fd)
{
	struct rpma_peer *peer = NULL;
	struct rpma_mr_local *mr = NULL;
	struct rpma_ep *ep = NULL;
	struct rpma_conn_req *req = NULL;
	struct rpma_conn *conn = NULL;
	unsigned char pd[H_DESC_SIZE + H_PDATA_EXTRA];
	struct rpma_conn_private_data pdata = { pd, sizeof(pd) };
	struct h_watch watch;
	bool watching = false;
	int last_event = RPMA_CONN_UNDEFINED, reject_next = 0;
	uint64_t established = 0, requests = 0, req_len = 0, req_hash = 0;
	size_t desc_size;
	void *region = NULL;
	int ep_fd, conn_fd = -1, port, ret;

	H_CHECK(posix_memalign(&region, 4096, tc->size) == 0, "region");
	memset(region, 0, tc->size);
	H_CHECK(rpma_ext_peer_new_ofi("tcp", &peer) == 0, "target peer");
	H_CHECK(rpma_mr_reg(peer, region, tc->size, tc->usage, &mr) == 0, "target reg");
	H_CHECK(rpma_mr_get_descriptor_size(mr, &desc_size) == 0 &&
		desc_size == H_DESC_SIZE, "descriptor size");
	H_CHECK(rpma_mr_get_descriptor(mr, pd) == 0, "descriptor");
	for (size_t i = 0; i < H_PDATA_EXTRA; i++)
		pd[H_DESC_SIZE + i] = h_pdata_byte(i);

	port = h_listen(peer, &ep);
	H_CHECK(rpma_ep_get_fd(ep, &ep_fd) == 0, "ep fd");
	/* librpma's defect, fixed: nothing pending -> NO_EVENT, no block */
	h_nonblock(ep_fd);
	ret = rpma_ep_next_conn_req(ep, tc->cfg, &req);
	H_CHECK(ret == RPMA_E_NO_EVENT,
		"next_conn_req on an idle O_NONBLOCK fd: %s", rpma_err_2str(ret));
	H_CHECK(write(rep_fd, &port, sizeof(port)) == sizeof(port), "ready");

	for (;;) {
		struct pollfd pfd[3] = {
			{ .fd = cmd_fd, .events = POLLIN },
			{ .fd = ep_fd, .events = POLLIN },
			{ .fd = conn_fd, .events = POLLIN },
		};
		int n = poll(pfd, conn ? 3 : 2, h_timeout_ms(30000));
		enum rpma_conn_event ev;

		H_CHECK(n > 0, "target: idle for %d ms, giving up", h_timeout_ms(30000));
		/*
		 * Each fd on its own: a libfabric EQ's fd also wakes for the
		 * domain's other sockets, so NO_EVENT after POLLIN is normal.
		 */
		ret = pfd[1].revents ? rpma_ep_next_conn_req(ep, tc->cfg, &req) :
			RPMA_E_NO_EVENT;
		if (ret != RPMA_E_NO_EVENT) {
			H_CHECK(ret == 0, "next_conn_req: %s", rpma_err_2str(ret));
			struct rpma_conn_private_data in;
			H_CHECK(rpma_conn_req_get_private_data(req, &in) == 0, "req pdata");
			requests++;
			req_len = in.len;
			req_hash = in.ptr ? h_hash(in.ptr, in.len) : 0;
			if (reject_next || conn != NULL) {
				reject_next = 0;
				H_CHECK(rpma_conn_req_delete(&req) == 0 && req == NULL,
					"reject");
			} else {
				H_CHECK(rpma_conn_req_connect(&req, &pdata, &conn) == 0,
					"accept");
				H_CHECK(rpma_conn_get_event_fd(conn, &conn_fd) == 0, "conn fd");
				h_nonblock(conn_fd);
			}
		}
		if (conn && pfd[2].revents &&
		    (ret = rpma_conn_next_event(conn, &ev)) != RPMA_E_NO_EVENT) {
			H_CHECK(ret == 0, "target next_event: %s", rpma_err_2str(ret));
			last_event = ev;
			if (ev == RPMA_CONN_ESTABLISHED) {
				established++;
			} else {
				H_CHECK(rpma_conn_delete(&conn) == 0, "conn delete");
				conn_fd = -1;
			}
		}
		if (pfd[0].revents) {
			struct h_cmd c;
			struct h_rep r;
			ssize_t got = read(cmd_fd, &c, sizeof(c));

			if (got == 0)
				_exit(4);	/* the parent is gone */
			H_CHECK(got == sizeof(c), "command");
			memset(&r, 0, sizeof(r));
			switch (c.op) {
			case H_CMD_EXIT:
				if (watching) {
					atomic_store(&watch.stop, true);
					pthread_join(watch.thread, NULL);
					free(watch.rec);
				}
				if (conn) {
					rpma_conn_disconnect(conn);
					H_CHECK(rpma_conn_delete(&conn) == 0, "conn delete");
				}
				H_CHECK(rpma_mr_dereg(&mr) == 0, "target dereg");
				H_CHECK(rpma_ep_shutdown(&ep) == 0, "ep shutdown");
				H_CHECK(rpma_peer_delete(&peer) == 0, "peer delete");
				free(region);
				H_CHECK(write(rep_fd, &r, sizeof(r)) == sizeof(r), "reply");
				exit(0);
			case H_CMD_STATUS:
				r.v[0] = (uint64_t)(int64_t)last_event;
				r.v[1] = established;
				r.v[2] = req_len;
				r.v[3] = req_hash;
				r.v[4] = conn != NULL;
				r.v[5] = requests;
				break;
			case H_CMD_REJECT_NEXT:
				reject_next = 1;
				break;
			case H_CMD_DISCONNECT:
				r.st = conn ? rpma_conn_disconnect(conn) : RPMA_E_INVAL;
				break;
			case H_CMD_FENCE:
				r.st = rpma_ext_peer_fence(peer, c.a);
				break;
			case H_CMD_HASH:
				H_CHECK(c.a <= tc->size && c.b <= tc->size - c.a, "hash range");
				r.v[0] = h_hash((char *)region + c.a, c.b);
				break;
			case H_CMD_GET8:
				H_CHECK(c.a <= tc->size - 8 && c.a % 8 == 0, "get8 offset");
				r.v[0] = __atomic_load_n((uint64_t *)(void *)((char *)region + c.a),
					__ATOMIC_ACQUIRE);
				break;
			case H_CMD_FILL:
				h_fill(region, tc->size, (unsigned)c.a);
				break;
			case H_CMD_WATCH_START:
				H_CHECK(!watching && 64 + c.a * c.b <= tc->size, "watch");
				memset(&watch, 0, sizeof(watch));
				atomic_init(&watch.stop, false);
				watch.region = region;
				watch.nrec = c.a;
				watch.recsize = c.b;
				watch.seed = (unsigned)c.c;
				watch.rec = malloc(c.b);
				H_CHECK(watch.rec != NULL, "malloc");
				memset(region, 0, tc->size);
				H_CHECK(pthread_create(&watch.thread, NULL, h_watch_main,
					&watch) == 0, "watch thread");
				watching = true;
				break;
			case H_CMD_WATCH_STOP:
				H_CHECK(watching, "not watching");
				atomic_store(&watch.stop, true);
				pthread_join(watch.thread, NULL);
				free(watch.rec);
				watching = false;
				r.v[0] = watch.violations;
				r.v[1] = watch.changes;
				r.v[2] = watch.last_tail;
				break;
			default:
				r.st = RPMA_E_INVAL;
			}
			H_CHECK(write(rep_fd, &r, sizeof(r)) == sizeof(r), "reply");
		}
	}
}

/* ---------------------------------------------------------------- */
/* the parent                                                       */

static inline void
h_target_start(struct h_target *t, const struct h_target_cfg *tc)
{
	int cmd[2], rep[2], port;
	pid_t parent = getpid();
	struct pollfd pfd;

	H_CHECK(pipe(cmd) == 0 && pipe(rep) == 0, "pipes");
	fflush(NULL);
	t->pid = fork();
	H_CHECK(t->pid >= 0, "fork");
	if (t->pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(5);
		close(cmd[1]);
		close(rep[0]);
		h_child_main(tc, cmd[0], rep[1]);
		_exit(6);
	}
	close(cmd[0]);
	close(rep[1]);
	t->cmd_fd = cmd[1];
	t->rep_fd = rep[0];
	pfd.fd = t->rep_fd;
	pfd.events = POLLIN;
	H_CHECK(poll(&pfd, 1, h_timeout_ms(10000)) > 0, "target did not start");
	H_CHECK(read(t->rep_fd, &port, sizeof(port)) == sizeof(port),
		"target failed to start");
	snprintf(t->port, sizeof(t->port), "%d", port);
}

static inline struct h_rep
h_cmd(struct h_target *t, uint32_t op, uint64_t a, uint64_t b, uint64_t c)
{
	struct h_cmd cmd;
	struct h_rep r;
	struct pollfd pfd = { .fd = t->rep_fd, .events = POLLIN };

	memset(&cmd, 0, sizeof(cmd));	/* no uninitialised padding on the pipe */
	cmd.op = op;
	cmd.a = a;
	cmd.b = b;
	cmd.c = c;

	H_CHECK(write(t->cmd_fd, &cmd, sizeof(cmd)) == sizeof(cmd), "command %u", op);
	H_CHECK(poll(&pfd, 1, h_timeout_ms(10000)) > 0, "target does not answer %u", op);
	H_CHECK(read(t->rep_fd, &r, sizeof(r)) == sizeof(r),
		"target died (command %u)", op);
	return r;
}

/* wait for the child to exit; its status, or -1 after killing it */
static inline int
h_reap(pid_t pid, int timeout_ms)
{
	int status;

	for (int waited = 0; waited < timeout_ms; waited += 10) {
		pid_t r = waitpid(pid, &status, WNOHANG);
		if (r == pid)
			return status;
		H_CHECK(r == 0, "waitpid");
		usleep(10000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	return -1;
}

/* SIGSTOP the child and wait until it is stopped, not just signalled */
static inline void
h_freeze(pid_t pid)
{
	int status;

	H_CHECK(kill(pid, SIGSTOP) == 0, "SIGSTOP");
	H_CHECK(waitpid(pid, &status, WUNTRACED) == pid && WIFSTOPPED(status),
		"child not stopped (0x%x)", status);
}

static inline void
h_target_stop(struct h_target *t)
{
	int status;

	h_cmd(t, H_CMD_EXIT, 0, 0, 0);
	status = h_reap(t->pid, h_timeout_ms(10000));
	H_CHECK(status == 0, "target exit status 0x%x", status);
	close(t->cmd_fd);
	close(t->rep_fd);
}

/* poll the target until its last connection event is ev */
static inline struct h_rep
h_target_wait_event(struct h_target *t, int ev, int timeout_ms)
{
	struct h_rep r;

	for (int waited = 0;; waited += 10) {
		r = h_cmd(t, H_CMD_STATUS, 0, 0, 0);
		if ((int)(int64_t)r.v[0] == ev)
			return r;
		H_CHECK(waited < timeout_ms, "target saw event %d, not %d",
			(int)(int64_t)r.v[0], ev);
		usleep(10000);
	}
}

/* connect, wait for ESTABLISHED, build the target's region from its pdata */
static inline struct rpma_conn *
h_connect(struct rpma_peer *peer, const char *port,
		const struct rpma_conn_cfg *cfg,
		const struct rpma_conn_private_data *pdata,
		struct rpma_mr_remote **remote)
{
	struct rpma_conn_req *req = NULL;
	struct rpma_conn *conn = NULL;
	struct rpma_conn_private_data in;
	enum rpma_conn_event ev;

	H_CHECK(rpma_conn_req_new(peer, "127.0.0.1", port, cfg, &req) == 0, "req");
	H_CHECK(rpma_conn_req_connect(&req, pdata, &conn) == 0, "connect");
	ev = h_next_event(conn, h_timeout_ms(5000));
	H_CHECK(ev == RPMA_CONN_ESTABLISHED, "event %s",
		rpma_utils_conn_event_2str(ev));
	if (remote) {
		H_CHECK(rpma_conn_get_private_data(conn, &in) == 0 &&
			in.len >= H_DESC_SIZE, "descriptor in private data (%u)", in.len);
		H_CHECK(rpma_mr_remote_from_descriptor(in.ptr, H_DESC_SIZE, remote) == 0,
			"remote region");
	}
	return conn;
}

/* the initiator's clean close: disconnect, CLOSED, delete */
static inline void
h_close(struct rpma_conn **conn)
{
	enum rpma_conn_event ev;

	H_CHECK(rpma_conn_disconnect(*conn) == 0, "disconnect");
	ev = h_next_event(*conn, h_timeout_ms(5000));
	H_CHECK(ev == RPMA_CONN_CLOSED, "after disconnect: %s",
		rpma_utils_conn_event_2str(ev));
	H_CHECK(rpma_conn_delete(conn) == 0 && *conn == NULL, "conn delete");
}

/* the next completion must be ctx with status st */
static inline struct ibv_wc
h_expect_wc(struct rpma_cq *cq, uint64_t ctx, enum ibv_wc_status st)
{
	struct ibv_wc wc = h_wait_wc(cq, h_timeout_ms(5000));

	H_CHECK(wc.wr_id == ctx && wc.status == st,
		"completion wr_id 0x%llx status %s, expected 0x%llx %s",
		(unsigned long long)wc.wr_id, ibv_wc_status_str(wc.status),
		(unsigned long long)ctx, ibv_wc_status_str(st));
	return wc;
}

/* nothing more on cq (after what was waited for) */
static inline void
h_expect_empty(struct rpma_cq *cq)
{
	struct ibv_wc wc;
	int ret = rpma_cq_get_wc(cq, 1, &wc, NULL);

	H_CHECK(ret == RPMA_E_NO_COMPLETION, "unexpected completion wr_id 0x%llx status %s",
		ret == 0 ? (unsigned long long)wc.wr_id : 0ull,
		ret == 0 ? ibv_wc_status_str(wc.status) : rpma_err_2str(ret));
}

#endif
