/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * repl_attacks.c -- attacks on replication by a peer that speaks TLS
 * correctly are each refused with a named reason, and a bit flipped on
 * the wire is refused by TLS itself.
 *
 * 1. A relay between a primary (librepl, in this process) and a replica
 *    (tests/engine/repl-node) flips one bit of the replica's first record after
 *    the handshake: the primary's TLS refuses it, the replica never
 *    streams and nothing becomes durable.  Without the flips, over the
 *    same relay, it streams.
 * 2. A fake replica (this process, with replica1's valid certificate)
 *    offers the primary a ring region too small for the ring, one that
 *    takes no RDMA writes, one without persistent flushes: each is refused
 *    by name, no data connection is opened and the region is untouched.
 *    A proper region from the same fake is streamed to.
 * 3. A primary that presents replica 1's admission token to replica 2
 *    (while in session with replica 2) is refused before accept; replica
 *    2's own token gets in.
 * Certificates of another CA, and expired ones, are refused at the
 * handshake: tests/engine/ctl/ctl_tls.c.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/socket.h>

#define TEST_NAME "repl_attacks"
#include "repl_test_node.h"
#include "ctl_stream.h"

#include "common/clock.h"
#include "repl.h"
#include "log/wal.h"
#include "../lib/test_ports.h"

#define SIZE (WAL_RING_OFF + 1024 * 1024)
#define RING ((uint64_t)SIZE - WAL_RING_OFF)
/* byte of a record to flip: past its 5-byte header, in the ciphertext */
#define FLIP_AT 20

/* ------------------------------------------------------------------ */
/* the primary, and how it sees its one replica                        */

static struct repl *
primary_open(const char *path, const char *tlsdir, const struct repl_replica *rep)
{
	char ca[600], cert[600], key[600];
	struct repl_cfg cfg = {
		.path = path, .backend = REPL_BACKEND_CRASH, .size = SIZE,
		.create = 1, .bootstrap = 1, .node_id = 1, .full_timeout_ms = 1000,
		.replicas = rep, .n_replicas = 1, .quorum = 1,
		.heartbeat_ms = 100, .down_timeout_ms = 1000,
		.tls_ca = ca, .tls_cert = cert, .tls_key = key,
	};
	struct repl *r = NULL;
	int ret;

	snprintf(ca, sizeof(ca), "%s/ca.pem", tlsdir);
	snprintf(cert, sizeof(cert), "%s/primary.pem", tlsdir);
	snprintf(key, sizeof(key), "%s/primary.key", tlsdir);
	memcpy(cfg.cluster_uuid, test_uuid, 16);
	/* a bootstrap the first time (it needs the replica's answer) */
	cfg.create = cfg.bootstrap = access(path, F_OK) != 0;
	if ((ret = repl_open(&cfg, &r)))
		fprintf(stderr, "repl_attacks: repl_open: %s\n", repl_strerror(ret));
	return r;
}

/*
 * Sample the replica's state for up to ms, or until its why contains want
 * (*found says which).  Returns false if it was ever seen streaming.
 */
static bool
never_streams(struct repl *r, int ms, const char *want,
		struct repl_replica_status *st, bool *found)
{
	uint64_t until = clock_now_ms() + (uint64_t)ms;
	bool streamed = false;

	*found = false;
	do {
		repl_replica_status(r, 0, st);
		streamed |= st->state == REPL_REPLICA_STREAMING;
		if (want && strstr(st->why, want)) {
			*found = true;
			break;
		}
		usleep(5000);
	} while (clock_now_ms() < until);
	return !streamed;
}

static bool
streams_within(struct repl *r, int ms)
{
	uint64_t until = clock_now_ms() + (uint64_t)ms;
	struct repl_replica_status st;

	do {
		repl_replica_status(r, 0, &st);
		if (st.state == REPL_REPLICA_STREAMING)
			return true;
		usleep(5000);
	} while (clock_now_ms() < until);
	return false;
}

/* ------------------------------------------------------------------ */
/* 1. a relay that flips a bit of what the replica sends               */

struct proxy {
	int lfd;
	int port;
	int to_port;
	atomic_bool flip;	/* flip a bit in each connection from now on */
	atomic_bool stop;
	atomic_int flips;
	pthread_t thread;
};

/*
 * Relay one connection.  The client speaks in turns: its hello, its
 * certificate and Finished, then (once it holds the session ticket, so
 * the handshake is over) its first message.  From that third turn on,
 * the server's next bytes start an application-data record: one bit of
 * it is flipped.
 */
static void
proxy_relay(struct proxy *p, int cfd)
{
	struct sockaddr_in sa = {
		.sin_family = AF_INET,
		.sin_port = htons((uint16_t)p->to_port),
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK),
	};
	struct pollfd fds[2] = {
		{ .fd = cfd, .events = POLLIN },
		{ .fd = socket(AF_INET, SOCK_STREAM, 0), .events = POLLIN },
	};
	uint8_t buf[4096];
	int turns = 0, last = 1;
	long seen = -1;		/* server bytes since arming; -1: not armed */

	if (fds[1].fd < 0 || connect(fds[1].fd, (struct sockaddr *)&sa, sizeof(sa)))
		goto out;
	while (!atomic_load(&p->stop)) {
		int n = poll(fds, 2, 100);

		if (n < 0 && errno != EINTR)
			break;
		for (int k = 0; n > 0 && k < 2; k++) {
			ssize_t got;

			if (fds[k].revents == 0)
				continue;
			if ((got = recv(fds[k].fd, buf, sizeof(buf), 0)) <= 0)
				goto out;
			if (k == 0 && last == 1)
				turns++;
			last = k;
			if (k == 0 && turns >= 3 && seen < 0 && atomic_load(&p->flip))
				seen = 0;
			if (k == 1 && seen >= 0) {
				if (seen <= FLIP_AT && FLIP_AT < seen + got) {
					buf[FLIP_AT - seen] ^= 0x10;
					atomic_fetch_add(&p->flips, 1);
				}
				seen += got;
			}
			if (send_all(fds[1 - k].fd, buf, (size_t)got))
				goto out;
		}
	}
out:
	if (fds[1].fd >= 0)
		close(fds[1].fd);
	close(cfd);
}

static void *
proxy_run(void *arg)
{
	struct proxy *p = arg;

	while (!atomic_load(&p->stop)) {
		struct pollfd lp = { .fd = p->lfd, .events = POLLIN };
		int cfd;

		if (poll(&lp, 1, 100) <= 0)
			continue;
		if ((cfd = accept(p->lfd, NULL, NULL)) >= 0)
			proxy_relay(p, cfd);
	}
	return NULL;
}

static int
proxy_start(struct proxy *p, int to_port)
{
	struct sockaddr_in sa = {
		.sin_family = AF_INET,
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK),
	};
	socklen_t len = sizeof(sa);

	memset(p, 0, sizeof(*p));
	p->to_port = to_port;
	atomic_init(&p->flip, false);
	atomic_init(&p->stop, false);
	atomic_init(&p->flips, 0);
	p->lfd = socket(AF_INET, SOCK_STREAM, 0);
	if (p->lfd < 0 || bind(p->lfd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    listen(p->lfd, 4) || getsockname(p->lfd, (struct sockaddr *)&sa, &len) ||
	    pthread_create(&p->thread, NULL, proxy_run, p)) {
		if (p->lfd >= 0)
			close(p->lfd);
		return -1;
	}
	p->port = ntohs(sa.sin_port);
	return 0;
}

static void
proxy_stop(struct proxy *p)
{
	atomic_store(&p->stop, true);
	pthread_join(p->thread, NULL);
	close(p->lfd);
}

static void
bit_flip(const char *tlsdir, const char *path, const char *replica_ctl)
{
	struct proxy px;
	char port[16];
	struct repl_replica rep = { "127.0.0.1", port };
	struct repl_replica_status st;
	struct repl *r;
	uint64_t lsn = 0;
	bool found;

	if (proxy_start(&px, atoi(replica_ctl))) {
		fprintf(stderr, "repl_attacks: cannot start the relay\n");
		failed = 1;
		return;
	}
	snprintf(port, sizeof(port), "%d", px.port);
	/* the cluster is made through the relay before it flips anything */
	r = primary_open(path, tlsdir, &rep);
	CHECK(r != NULL);
	repl_close(&r);
	atomic_store(&px.flip, true);
	r = primary_open(path, tlsdir, &rep);
	CHECK(r != NULL);
	if (r == NULL) {
		proxy_stop(&px);
		unlink(path);
		return;
	}
	CHECK(repl_append(r, "through a flipping relay", 24, &lsn) == 0);

	/* attempt after attempt, each with a bit flipped: never streaming */
	CHECK(never_streams(r, 1000, NULL, &st, &found));
	CHECK(repl_wait_durable(r, lsn, 1500) == REPL_E_TIMEDOUT);
	repl_replica_status(r, 0, &st);
	CHECK(st.state != REPL_REPLICA_STREAMING);
	CHECK(strstr(st.why, "TLS") != NULL);
	CHECK(st.reconnects >= 2);
	CHECK(atomic_load(&px.flips) >= 2);
	printf("repl_attacks: bit flip: %d records flipped, %llu attempts, "
		"refused: %s\n", atomic_load(&px.flips),
		(unsigned long long)st.reconnects, st.why);

	/* the same relay without flips: the refusals were the flips' doing */
	atomic_store(&px.flip, false);
	CHECK(streams_within(r, 5000));
	CHECK(repl_wait_durable(r, lsn, 3000) == 0);
	repl_replica_status(r, 0, &st);
	printf("repl_attacks: bit flip: without flips it streams (LSN %llu "
		"flushed)\n", (unsigned long long)st.flushed_lsn);
	repl_close(&r);
	proxy_stop(&px);
	unlink(path);
}

/* ------------------------------------------------------------------ */
/* 2. a fake replica that offers the primary bad regions               */

enum { TOO_SMALL, NOT_WRITABLE, NOT_PERSISTENT, PROPER, N_OFFERS };

static const struct offer {
	const char *what;
	size_t size;
	int usage;
} offers[N_OFFERS] = {
	[TOO_SMALL] = { "a region too small for the ring", WAL_RING_OFF + RING / 2,
		RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT },
	[NOT_WRITABLE] = { "a region that takes no RDMA writes", SIZE,
		RPMA_MR_USAGE_READ_SRC | RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT },
	[NOT_PERSISTENT] = { "a region without persistent flushes", SIZE,
		RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY },
	[PROPER] = { "a proper region", SIZE,
		RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT },
};

struct fake {
	struct ctl_listener *l;
	struct rpma_ep *ep;
	uint16_t data_port;
	uint8_t desc[N_OFFERS][CTL_DESC_MAX];
	size_t desc_len[N_OFFERS];
	atomic_int offer;	/* what the next HELLO_REPLY offers */
	atomic_int replies;
	atomic_int data_conns;	/* data connections the primary opened */
	atomic_bool stop;
	pthread_t thread;
};

/* play a replica as far as a primary lets it: reply, accept, answer */
static void
fake_serve(struct fake *f, struct ctl_chan *ch)
{
	struct ctl_msg m, out = { .type = CTL_HELLO_REPLY };
	struct ctl_hello_reply *hr = &out.u.hello_reply;
	struct log_pos at;
	struct rpma_conn_req *req = NULL;
	struct rpma_conn *conn = NULL;
	enum rpma_conn_event ev;
	struct pollfd pfd[2] = {
		{ .events = POLLIN },
		{ .fd = ctl_chan_fd(ch), .events = POLLIN },
	};
	int o, ret;

	if (ctl_chan_recv(ch, &m, 2000) != 0 || m.type != CTL_HELLO)
		return;
	o = atomic_load(&f->offer);
	memcpy(hr->cluster_uuid, m.u.hello.cluster_uuid, 16);
	hr->node_id = 2;
	hr->incarnation = 2;
	/* a probe asks what it follows: nothing yet; a HELLO fences it */
	hr->epoch = (m.u.hello.flags & CTL_HELLO_F_PROBE) ? 0 : m.u.hello.epoch;
	/* as if it had followed this epoch all along: its promise never fell */
	hr->prior_epoch = hr->epoch;
	hr->ring_size = m.u.hello.ring_size;
	hr->head = hr->tail = at = m.u.hello.head;	/* empty: a full resync */
	hr->data_port = f->data_port;
	hr->desc_len = (uint16_t)f->desc_len[o];
	memcpy(hr->desc, f->desc[o], f->desc_len[o]);
	out.seq = m.seq;
	if (ctl_chan_send(ch, &out, 2000))
		return;
	/* a bootstrap's probe and a promotion's fence want nothing more */
	if (m.u.hello.flags & (CTL_HELLO_F_PROBE | CTL_HELLO_F_FENCE_ONLY))
		return;
	atomic_fetch_add(&f->replies, 1);

	/* a primary that takes the region connects; one that refuses it leaves */
	if (rpma_ep_get_fd(f->ep, &pfd[0].fd) || poll(pfd, 2, 3000) <= 0 ||
	    !(pfd[0].revents & POLLIN))
		return;
	if (rpma_ep_next_conn_req(f->ep, NULL, &req) ||
	    rpma_conn_req_connect(&req, NULL, &conn))
		return;
	if (rpma_conn_next_event(conn, &ev) == 0 && ev == RPMA_CONN_ESTABLISHED)
		atomic_fetch_add(&f->data_conns, 1);
	while (!atomic_load(&f->stop) && (ret = ctl_chan_recv(ch, &m, 100)) >= 0) {
		if (ret == CTL_CHAN_AGAIN)
			continue;
		out = (struct ctl_msg){ .seq = m.seq };
		if (m.type == CTL_QUERY) {
			out.type = CTL_QUERY_REPLY;
			out.u.query_reply.lsn = m.u.query.lsn;
		} else if (m.type == CTL_TRUNCATE || m.type == CTL_SET_HEAD) {
			out.type = CTL_ACK;
			out.u.ack.head = out.u.ack.tail = m.u.cut.pos;
		} else if (m.type == CTL_HEARTBEAT) {
			out.type = CTL_HEARTBEAT;
			out.u.heartbeat = m.u.heartbeat;
		} else if (m.type == CTL_MEMBERSHIP) {
			/* "stored": the primary counts it only after this */
			out.type = CTL_ACK;
			out.u.ack.head = out.u.ack.tail = at;
		} else {
			continue;
		}
		if (ctl_chan_send(ch, &out, 2000))
			break;
	}
	rpma_conn_disconnect(conn);
	while (rpma_conn_next_event(conn, &ev) == 0 && ev != RPMA_CONN_CLOSED &&
	       ev != RPMA_CONN_LOST)
		;
	rpma_conn_delete(&conn);
}

static void *
fake_run(void *arg)
{
	struct fake *f = arg;

	while (!atomic_load(&f->stop)) {
		struct pollfd lp = { .fd = ctl_listener_fd(f->l), .events = POLLIN };
		struct ctl_chan *ch = NULL;

		if (poll(&lp, 1, 100) <= 0)
			continue;
		if (ctl_accept(f->l, 2000, &ch) == 0) {
			fake_serve(f, ch);
			ctl_chan_close(&ch);
		}
	}
	return NULL;
}

/* what the primary must say when it refuses the offer */
static void
refusal_text(int o, char *buf, size_t size)
{
	switch (o) {
	case TOO_SMALL:
		snprintf(buf, size, "its region is %zu bytes; %llu", offers[o].size,
			(unsigned long long)SIZE);
		break;
	case NOT_WRITABLE:
		snprintf(buf, size, "its region does not take RDMA writes");
		break;
	default:
		snprintf(buf, size, "without persistent flushes");
		break;
	}
}

static void
fake_replica(struct ctl_tls *srv, struct rpma_peer *peer, const char *tlsdir,
		const char *path, const char *ctl_port, const char *data_port)
{
	struct repl_replica rep = { "127.0.0.1", ctl_port };
	struct rpma_mr_local *mr[N_OFFERS] = { NULL };
	uint8_t *buf[N_OFFERS] = { NULL }, *copy[N_OFFERS] = { NULL };
	struct repl_replica_status st;
	struct fake f;
	struct repl *r = NULL;
	uint64_t lsn = 0;
	bool found;
	int o;

	memset(&f, 0, sizeof(f));
	atomic_init(&f.offer, TOO_SMALL);
	atomic_init(&f.replies, 0);
	atomic_init(&f.data_conns, 0);
	atomic_init(&f.stop, false);
	f.data_port = (uint16_t)atoi(data_port);
	for (o = 0; o < N_OFFERS; o++) {
		size_t n = offers[o].size;

		buf[o] = malloc(n);
		copy[o] = malloc(n);
		if (buf[o] == NULL || copy[o] == NULL)
			break;
		for (size_t i = 0; i < n; i++)
			buf[o][i] = (uint8_t)(i * 131 + (size_t)o);
		memcpy(copy[o], buf[o], n);
		if (rpma_mr_reg(peer, buf[o], n, offers[o].usage, &mr[o]) ||
		    rpma_mr_get_descriptor_size(mr[o], &f.desc_len[o]) ||
		    f.desc_len[o] > CTL_DESC_MAX ||
		    rpma_mr_get_descriptor(mr[o], f.desc[o]))
			break;
	}
	if (o < N_OFFERS || ctl_listen("127.0.0.1", ctl_port, srv, &f.l) ||
	    rpma_ep_listen(peer, "127.0.0.1", data_port, &f.ep) ||
	    pthread_create(&f.thread, NULL, fake_run, &f)) {
		fprintf(stderr, "repl_attacks: cannot set up the fake replica: %s; %s\n",
			rpma_ext_errormsg(), ctl_last_error());
		failed = 1;
		goto out;
	}

	r = primary_open(path, tlsdir, &rep);
	CHECK(r != NULL);
	if (r)
		CHECK(repl_append(r, "for the fake replica", 20, &lsn) == 0);
	for (o = 0; r && o < PROPER; o++) {
		char want[160];
		int before = atomic_load(&f.replies);

		atomic_store(&f.offer, o);
		refusal_text(o, want, sizeof(want));
		CHECK(never_streams(r, 4000, want, &st, &found));
		CHECK(found);
		/*
		 * The first offer's refusal may predate `before` (the link asked
		 * while the primary opened): a reply after it shows the link goes
		 * on asking (its backoff is at most 1 s) and is refused each time.
		 */
		for (int t = 0; t < 400 && atomic_load(&f.replies) <= before; t++)
			usleep(10000);
		CHECK(atomic_load(&f.replies) > before);
		CHECK(atomic_load(&f.data_conns) == 0);
		/* the region's bytes, as the fake registered them */
		CHECK(memcmp(buf[o], copy[o], offers[o].size) == 0);
		printf("repl_attacks: fake replica, %s: refused: %s\n", offers[o].what,
			st.why);
	}
	if (r) {
		CHECK(repl_wait_durable(r, lsn, 200) == REPL_E_TIMEDOUT);
		/* the same fake with a proper region: it is streamed to */
		atomic_store(&f.offer, PROPER);
		CHECK(streams_within(r, 5000));
		CHECK(repl_wait_durable(r, lsn, 3000) == 0);
		CHECK(atomic_load(&f.data_conns) == 1);
		CHECK(memcmp(buf[PROPER], copy[PROPER], SIZE) != 0);
		printf("repl_attacks: fake replica, %s: streamed to\n", offers[PROPER].what);
		repl_close(&r);
	}
	atomic_store(&f.stop, true);
	pthread_join(f.thread, NULL);
	/* nothing written after the refusals either */
	for (o = 0; o < PROPER; o++)
		CHECK(memcmp(buf[o], copy[o], offers[o].size) == 0);
out:
	if (f.ep)
		rpma_ep_shutdown(&f.ep);
	ctl_listener_close(&f.l);
	for (o = 0; o < N_OFFERS; o++) {
		if (mr[o])
			rpma_mr_dereg(&mr[o]);
		free(buf[o]);
		free(copy[o]);
	}
	unlink(path);
}

/* ------------------------------------------------------------------ */
/* 3. another replica's admission token                                */

static void
other_token(struct ctl_tls *tls, struct rpma_peer *peer, const char *ctl1,
		const char *ctl2)
{
	struct ctl_hello_reply hr1, hr2;
	struct ctl_chan *ch1 = test_hello(tls, ctl1, RING, &hr1);
	struct ctl_chan *ch2 = test_hello(tls, ctl2, RING, &hr2);
	uint8_t t1[CTL_TOKEN_SIZE], t2[CTL_TOKEN_SIZE];

	CHECK(ch1 != NULL && ch2 != NULL);
	if (ch1 && ch2) {
		CHECK(strcmp(ctl_chan_peer_name(ch1), "replica1") == 0);
		CHECK(strcmp(ctl_chan_peer_name(ch2), "replica2") == 0);
		CHECK(ctl_chan_admission_token(ch1, t1) == 0);
		CHECK(ctl_chan_admission_token(ch2, t2) == 0);
		CHECK(memcmp(t1, t2, sizeof(t1)) != 0);
		/* replica 1's token at replica 2's door */
		CHECK(test_data_connect(peer, hr2.data_port, t1, sizeof(t1)) == 0);
		/* its own session's token gets in */
		CHECK(test_data_connect(peer, hr2.data_port, t2, sizeof(t2)) == 1);
	}
	ctl_chan_close(&ch1);
	ctl_chan_close(&ch2);
}

int
main(void)
{
	char dir[] = "/tmp/rpma-attacks-XXXXXX", cmd[100], tlsdir[64];
	char ca[128], cert[128], key[128], path[4][64], port[8][16];
	const char *exe = getenv("REPL_NODE") ? getenv("REPL_NODE") : "./tests/engine/repl-node";
	/* below the ephemeral ports, apart from the other tests' ranges */
	int base = test_ports(16), ret, refusals;
	struct ctl_tls *cli = NULL, *srv = NULL;
	struct rpma_peer *peer = NULL;
	struct test_node node[3];
	uint64_t t0 = clock_now_ms();
	const char *why = "";

	if (access(exe, X_OK) != 0) {
		fprintf(stderr, "repl_attacks: %s not built\n", exe);
		return 99;
	}
	if (mkdtemp(dir) == NULL)
		return 99;
	ret = test_make_ca(dir);
	if (ret == 77)
		printf("repl_attacks: SKIP: no openssl command to make a CA\n");
	if (ret)
		return ret;
	snprintf(tlsdir, sizeof(tlsdir), "%s/tls", dir);
	snprintf(ca, sizeof(ca), "%s/ca.pem", tlsdir);
	for (int i = 0; i < 4; i++)
		snprintf(path[i], sizeof(path[i]), "/dev/shm/rpma-attacks-%d-%d",
			(int)getpid(), i);
	for (int i = 0; i < 8; i++)
		snprintf(port[i], sizeof(port[i]), "%d", base + i);

	/* replica 0 behind the relay; replicas 1 and 2 for the tokens */
	if (test_node_start(&node[0], exe, dir, "replica1", path[0], SIZE, port[0],
			port[1]))
		return 99;
	if (test_node_start(&node[1], exe, dir, "replica1", path[1], SIZE, port[2],
			port[3])) {
		test_node_stop(&node[0]);
		return 99;
	}
	if (test_node_start(&node[2], exe, dir, "replica2", path[2], SIZE, port[4],
			port[5])) {
		test_node_stop(&node[0]);
		test_node_stop(&node[1]);
		return 99;
	}
	snprintf(cert, sizeof(cert), "%s/primary.pem", tlsdir);
	snprintf(key, sizeof(key), "%s/primary.key", tlsdir);
	ret = ctl_tls_new(ca, cert, key, 0, &cli, &why);
	snprintf(cert, sizeof(cert), "%s/replica1.pem", tlsdir);
	snprintf(key, sizeof(key), "%s/replica1.key", tlsdir);
	if (ret || ctl_tls_new(ca, cert, key, 1, &srv, &why) ||
	    rpma_ext_peer_new_ofi("tcp", &peer)) {
		fprintf(stderr, "repl_attacks: setup: %s\n", why);
		for (int i = 0; i < 3; i++)
			test_node_stop(&node[i]);
		return 99;
	}

	bit_flip(tlsdir, path[3], port[0]);
	fake_replica(srv, peer, tlsdir, path[3], port[6], port[7]);
	other_token(cli, peer, port[2], port[4]);

	for (int i = 0; i < 3; i++)
		CHECK(test_node_stop(&node[i]) == 0);
	/* replica 2 said why it refused, once */
	refusals = test_node_count(&node[2], "refused a data connection without "
		"the admission token");
	CHECK(refusals == 1);
	printf("repl_attacks: another replica's token: %d data connection "
		"refused before accept\n", refusals);
	rpma_peer_delete(&peer);
	ctl_tls_delete(&cli);
	ctl_tls_delete(&srv);
	for (int i = 0; i < 4; i++)
		unlink(path[i]);
	snprintf(cmd, sizeof(cmd), getenv("KEEP") ? "true %s" : "rm -rf %s", dir);
	if (system(cmd) != 0)
		failed = 1;
	printf("repl_attacks: %s (%.1f s)\n", failed ? "FAIL" : "ok",
		(double)(clock_now_ms() - t0) / 1000);
	return failed;
}
