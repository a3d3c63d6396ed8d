/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * repl_floor.c -- a replica whose log was made anew (tests/engine/repl-node with
 * REPL_NODE_REINIT, a real process, over TLS) takes its promise floor
 * before it serves a primary (docs/replication.md, "Identity and
 * bootstrap").  Its peers are two nodes this test plays, node 1 (epoch E1)
 * and node 3 (epoch E3, above it), with k = 1: it needs both answers.
 *
 *  - Made anew while neither answers, and while only node 1 does, it
 *    answers a PROBE (promising nothing) and refuses every other HELLO
 *    with "not ready", changing nothing.
 *  - SIGKILLed before its floor and restarted without reinit, its log is
 *    still marked promise pending (read offline too), and it still waits.
 *  - An answer marked PENDING (a peer made anew itself) does not count.
 *  - Once both answer it takes the higher promise, E3 and the incarnation
 *    that chose it, as its own: node 1's E1 is then STALE, E3 from another
 *    incarnation of node 3 is refused, node 3's own is served.  The mark
 *    is gone from its header, and a restart needs no floor.
 *  - The peers only ever got PROBEs.
 *  - Made anew without peers it refuses to start (exit 5) before it
 *    formats anything: the log is as it was.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TEST_NAME "repl_floor"
#include "repl_test_node.h"
#include "log/wal.h"
#include "../lib/test_ports.h"

#define SIZE (8192 + 1024 * 1024)
#define RING (SIZE - 8192)

static const uint64_t E1 = (1ull << 16) | 1;	/* term 1 of node 1 */
static const uint64_t E3 = (2ull << 16) | 3;	/* term 2 of node 3 */
static const uint64_t INC1 = 0x1111, INC3 = 0x3333;

static struct ctl_tls *tls;
static char port[16];

/* a node this test plays: answers PROBEs with its promise */
struct fake_peer {
	uint32_t node_id;
	uint64_t epoch, inc;
	char port[16];
	struct ctl_listener *l;
	pthread_t thread;
	atomic_bool stop;
	atomic_bool pending;	/* answers as a log made anew taking its floor */
	atomic_int probes, others;	/* HELLOs it got */
};

static void *
fake_main(void *arg)
{
	struct fake_peer *p = arg;

	while (!atomic_load(&p->stop)) {
		struct pollfd pfd = { .fd = ctl_listener_fd(p->l), .events = POLLIN };
		struct ctl_chan *ch = NULL;
		struct ctl_msg m, out = { .type = CTL_HELLO_REPLY };
		struct ctl_hello_reply *hr = &out.u.hello_reply;

		if (poll(&pfd, 1, 100) <= 0 || ctl_accept(p->l, 2000, &ch) != 0)
			continue;
		if (ctl_chan_recv(ch, &m, 2000) == 0 && m.type == CTL_HELLO) {
			if (!(m.u.hello.flags & CTL_HELLO_F_PROBE)) {
				atomic_fetch_add(&p->others, 1);
			} else {
				atomic_fetch_add(&p->probes, 1);
				out.seq = m.seq;
				memcpy(hr->cluster_uuid, test_uuid, 16);
				hr->node_id = p->node_id;
				hr->flags = m.u.hello.epoch < p->epoch ? CTL_HELLO_F_STALE : 0;
				if (atomic_load(&p->pending))
					hr->flags |= CTL_HELLO_F_PENDING;
				hr->epoch = hr->prior_epoch = p->epoch;
				hr->epoch_inc = p->inc;
				hr->incarnation = p->inc;
				hr->ring_size = m.u.hello.ring_size;
				hr->head = hr->tail = (struct log_pos){ .lsn = 1, .lap = 1 };
				(void)ctl_chan_send(ch, &out, 2000);
			}
		}
		ctl_chan_close(&ch);
	}
	return NULL;
}

static void
fake_start(struct fake_peer *p, struct ctl_tls *server)
{
	atomic_store(&p->stop, false);
	if (ctl_listen("127.0.0.1", p->port, server, &p->l) != 0 ||
	    pthread_create(&p->thread, NULL, fake_main, p) != 0) {
		fprintf(stderr, TEST_NAME ": node %u cannot listen on %s: %s\n",
			(unsigned)p->node_id, p->port, ctl_last_error());
		exit(99);
	}
}

static void
fake_stop(struct fake_peer *p)
{
	atomic_store(&p->stop, true);
	pthread_join(p->thread, NULL);
	ctl_listener_close(&p->l);
}

/* a fence HELLO to the replica under test (test_fence_hello) */
static int
hello(uint32_t node, uint64_t epoch, uint64_t inc, uint32_t flags,
		const char *want, struct ctl_hello_reply *hr)
{
	return test_fence_hello(tls, port, RING, node, epoch, inc, flags, want, hr);
}

/* the replica's promise, asked without changing anything (~0: no answer) */
static uint64_t
followed(uint64_t *inc)
{
	struct ctl_hello_reply hr;

	if (hello(1, E1, INC1, CTL_HELLO_F_PROBE, NULL, &hr) != 1)
		return ~0ull;
	if (inc)
		*inc = hr.epoch_inc;
	return hr.epoch;
}

/* the stopped log at path, read offline */
static int
offline(const char *path, struct wal_identity *id)
{
	struct rpma_ext_mem *mem = NULL;
	struct wal *w = NULL;
	uint64_t ring;
	int ret;

	if ((ret = rpma_ext_mem_open(RPMA_EXT_MEM_CRASH, path, 0, 0, &mem)))
		return ret;
	if ((ret = wal_open(mem, &w)) == 0) {
		wal_identity(w, id, &ring);
		wal_close(&w);
	}
	rpma_ext_mem_close(&mem);
	return ret;
}

/*
 * Run the replica without waiting for it to be ready: its exit status, or
 * -1 if it still runs after 10 s (then it is killed)
 */
static int
run_to_exit(const char *exe, const char *dir, const char *path, const char *data)
{
	char tlsdir[600], sz[32], err[700];
	pid_t pid;
	int status = 0;

	snprintf(tlsdir, sizeof(tlsdir), "%s/tls", dir);
	snprintf(sz, sizeof(sz), "%d", SIZE);
	snprintf(err, sizeof(err), "%s/replica-refused.err", dir);
	fflush(NULL);	/* the child's copy of the buffers must stay empty */
	if ((pid = fork()) == 0) {
		setenv("REPL_NODE_TLS_DIR", tlsdir, 1);
		if (freopen("/dev/null", "w", stdout) == NULL ||
		    freopen(err, "w", stderr) == NULL)
			_exit(99);
		execl(exe, exe, "replica", path, sz, port, data, (char *)NULL);
		_exit(99);
	}
	if (pid < 0)
		return -1;
	for (int t = 0; t < 200; t++) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			return WIFEXITED(status) ? WEXITSTATUS(status) :
				128 + WTERMSIG(status);
		usleep(50000);
	}
	fprintf(stderr, TEST_NAME ": the replica made anew without peers still "
		"runs after 10 s\n");
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	return -1;
}

int
main(void)
{
	char dir[] = "/tmp/rpma-floor-XXXXXX", path[600], peers[64];
	char ca[600], cert[600], key[600], data[16];
	const char *exe = getenv("REPL_NODE") ? getenv("REPL_NODE") : "./tests/engine/repl-node";
	struct fake_peer p1 = { .node_id = 1, .epoch = E1, .inc = INC1 };
	struct fake_peer p3 = { .node_id = 3, .epoch = E3, .inc = INC3 };
	struct ctl_tls *server = NULL;
	struct ctl_hello_reply hr;
	struct wal_identity id;
	struct test_node node;
	const char *why = "";
	uint64_t inc = 0, before;
	int ret, base = test_ports(4);

	if (access(exe, X_OK) != 0) {
		fprintf(stderr, TEST_NAME ": %s not built\n", exe);
		return 99;
	}
	if (mkdtemp(dir) == NULL)
		return 99;
	ret = test_make_ca(dir);
	if (ret == 77)
		printf(TEST_NAME ": SKIP: no openssl command to make a CA\n");
	if (ret)
		return ret;
	snprintf(ca, sizeof(ca), "%s/tls/ca.pem", dir);
	snprintf(cert, sizeof(cert), "%s/tls/primary.pem", dir);
	snprintf(key, sizeof(key), "%s/tls/primary.key", dir);
	snprintf(path, sizeof(path), "/dev/shm/rpma-floor-%d", (int)getpid());
	snprintf(port, sizeof(port), "%d", base);
	snprintf(data, sizeof(data), "%d", base + 1);
	snprintf(p1.port, sizeof(p1.port), "%d", base + 2);
	snprintf(p3.port, sizeof(p3.port), "%d", base + 3);
	snprintf(peers, sizeof(peers), "127.0.0.1:%s,127.0.0.1:%s", p1.port,
		p3.port);
	if (ctl_tls_new(ca, cert, key, 0, &tls, &why) ||
	    ctl_tls_new(ca, cert, key, 1, &server, &why)) {
		fprintf(stderr, TEST_NAME ": setup: %s\n", why);
		return 99;
	}
	setenv("REPL_NODE_PEERS", peers, 1);
	setenv("REPL_NODE_QUORUM", "1", 1);
	setenv("REPL_NODE_REINIT", "1", 1);

	/* made anew; no peer answers: a PROBE is answered, nothing else */
	if (test_node_start(&node, exe, dir, NULL, path, SIZE, port, data))
		return 99;
	CHECK(followed(&inc) == 0 && inc == 0);
	CHECK(hello(1, E1, INC1, 0, "not ready: taking its promise floor from 2 "
		"other nodes", NULL) == 0);
	CHECK(hello(3, E3, INC3, 0, "not ready", NULL) == 0);
	CHECK(followed(NULL) == 0);
	/* node 1 answers, node 3 does not: one answer of the two needed */
	fake_start(&p1, server);
	for (int t = 0; t < 100 && atomic_load(&p1.probes) < 2; t++)
		usleep(50000);
	CHECK(atomic_load(&p1.probes) >= 2);
	CHECK(hello(1, E1, INC1, 0, "(1 answered)", NULL) == 0);
	CHECK(followed(NULL) == 0);
	CHECK(test_node_count(&node, "waiting for its promise floor: 1 of the 2 "
		"answers") >= 1);

	/* killed before its floor: still marked, offline and after a restart */
	kill(node.pid, SIGKILL);
	waitpid(node.pid, NULL, 0);
	fclose(node.out);
	CHECK(offline(path, &id) == 0 && (id.flags & WAL_F_PROMISE_PENDING) &&
		id.epoch == 0);
	before = id.incarnation;
	unsetenv("REPL_NODE_REINIT");
	if (test_node_start(&node, exe, dir, NULL, path, SIZE, port, data))
		return 99;
	CHECK(test_node_count(&node, "has not taken its promise floor yet") == 1);
	CHECK(hello(1, E1, INC1, 0, "not ready", NULL) == 0);
	CHECK(followed(NULL) == 0);

	/*
	 * node 3 answers, but as a log made anew itself (PENDING): its
	 * answer promises nothing and does not count
	 */
	atomic_store(&p3.pending, true);
	fake_start(&p3, server);
	for (int t = 0; t < 100 && atomic_load(&p3.probes) < 2; t++)
		usleep(50000);
	CHECK(atomic_load(&p3.probes) >= 2);
	CHECK(followed(NULL) == 0);
	for (int t = 0; t < 60 && test_node_count(&node, "is taking its own "
			"promise floor") < 1; t++)
		usleep(50000);
	CHECK(test_node_count(&node, "is taking its own promise floor") >= 1);

	/* node 3 answers for real: its promise, the higher, is the floor */
	atomic_store(&p3.pending, false);
	for (int t = 0; t < 200 && followed(NULL) != E3; t++)
		usleep(50000);
	CHECK(followed(&inc) == E3 && inc == INC3);
	CHECK(test_node_count(&node, "took its promise floor: epoch 131075 ") == 1);
	/* node 1's epoch is below it: STALE, nothing changed */
	CHECK(hello(1, E1, INC1, 0, NULL, &hr) == 1);
	CHECK((hr.flags & CTL_HELLO_F_STALE) && hr.epoch == E3);
	/* E3 was chosen by node 3's log INC3, not another one */
	CHECK(hello(3, E3, 0x3bad, 0, "another incarnation", NULL) == 0);
	/* node 3 itself is served */
	CHECK(hello(3, E3, INC3, 0, NULL, &hr) == 1);
	CHECK(!(hr.flags & CTL_HELLO_F_STALE) && hr.epoch == E3);
	CHECK(test_node_stop(&node) == 0);
	CHECK(offline(path, &id) == 0 && id.flags == 0 && id.epoch == E3 &&
		id.epoch_inc == INC3 && id.incarnation == before);
	/* the peers were only asked */
	CHECK(atomic_load(&p1.others) == 0 && atomic_load(&p3.others) == 0);
	fake_stop(&p1);
	fake_stop(&p3);

	/* a restart needs no floor: served with every peer gone */
	if (test_node_start(&node, exe, dir, NULL, path, SIZE, port, data))
		return 99;
	CHECK(hello(3, E3, INC3, 0, NULL, &hr) == 1 && hr.epoch == E3);
	CHECK(test_node_stop(&node) == 0);

	/* made anew without peers: refused before it formats */
	setenv("REPL_NODE_REINIT", "1", 1);
	unsetenv("REPL_NODE_PEERS");
	CHECK(run_to_exit(exe, dir, path, data) == 5);
	CHECK(offline(path, &id) == 0 && id.flags == 0 && id.epoch == E3 &&
		id.incarnation == before);

	ctl_tls_delete(&tls);
	ctl_tls_delete(&server);
	unlink(path);
	{
		char cmd[700];

		snprintf(cmd, sizeof(cmd), failed ? "true %s" : "rm -rf %s", dir);
		(void)!system(cmd);
	}
	printf(TEST_NAME ": %s\n", failed ? "FAIL" : "ok");
	return failed ? 1 : 0;
}
