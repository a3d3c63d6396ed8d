/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * repl_test_node.h -- what the tests that run tests/engine/repl-node replicas
 * with TLS share: the test CA, starting and stopping a replica process
 * (its stderr kept in a file, to look for its refusals), a HELLO over TLS
 * as a primary sends it, and a data connection with chosen private data.
 * Define TEST_NAME (a string, for messages) before including it.
 */
#ifndef REPL_TEST_NODE_H
#define REPL_TEST_NODE_H

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/clock.h"
#include "ctl/ctl_chan.h"
#include "rpma.h"

#define CHECK(cond) do { if (!(cond)) { \
	fprintf(stderr, TEST_NAME ": %s:%d: %s failed\n", __FILE__, \
		__LINE__, #cond); failed = 1; } } while (0)

static int failed;
static const uint8_t test_uuid[16] = "repl-node-test!";

/* a replica process */
struct test_node {
	pid_t pid;
	FILE *out;	/* its stdout, open until it exits: it must not get SIGPIPE */
	char err[700];	/* the file that holds its stderr */
};

/* make the test CA into dir/tls: 0, 77 without openssl, 99 on failure */
static inline int
test_make_ca(const char *dir)
{
	char cmd[1024];
	int ret;

	snprintf(cmd, sizeof(cmd), "sh %s %s/tls >/dev/null", MAKE_TEST_CA, dir);
	ret = system(cmd);
	if (WIFEXITED(ret) && WEXITSTATUS(ret) == 77)
		return 77;
	return ret == 0 ? 0 : 99;
}

/*
 * Start `exe replica path size ctl data` with TLS from dir/tls under the
 * certificate `name` (NULL: the tool's default, replica1).  0 once it said
 * it is ready, else -1 (and nothing left running).
 */
static inline int
test_node_start(struct test_node *n, const char *exe, const char *dir,
		const char *name, const char *path, size_t size, const char *ctl,
		const char *data)
{
	char line[64];
	int out[2];

	memset(n, 0, sizeof(*n));
	snprintf(n->err, sizeof(n->err), "%s/replica-%s.err", dir, ctl);
	if (pipe(out))
		return -1;
	/* not inherited by the replicas started later */
	fcntl(out[0], F_SETFD, FD_CLOEXEC);
	n->pid = fork();
	if (n->pid < 0)
		return -1;
	if (n->pid == 0) {
		char tlsdir[600], sz[32];

		snprintf(tlsdir, sizeof(tlsdir), "%s/tls", dir);
		snprintf(sz, sizeof(sz), "%zu", size);
		setenv("REPL_NODE_TLS_DIR", tlsdir, 1);
		setenv("REPL_NODE_TIMEOUT_MS", "3000", 1);
		if (name)
			setenv("REPL_NODE_TLS_NAME", name, 1);
		else
			unsetenv("REPL_NODE_TLS_NAME");
		close(out[0]);
		dup2(out[1], 1);
		if (freopen(n->err, "w", stderr) == NULL)
			_exit(99);
		execl(exe, exe, "replica", path, sz, ctl, data, (char *)NULL);
		_exit(99);
	}
	close(out[1]);
	n->out = fdopen(out[0], "r");
	if (n->out == NULL || fgets(line, sizeof(line), n->out) == NULL ||
	    strncmp(line, "ready", 5)) {
		fprintf(stderr, TEST_NAME ": the replica on port %s did not start\n", ctl);
		kill(n->pid, SIGKILL);
		waitpid(n->pid, NULL, 0);
		if (n->out)
			fclose(n->out);
		else
			close(out[0]);
		n->pid = 0;
		n->out = NULL;
		return -1;
	}
	return 0;
}

/* SIGTERM it; 0 if it exited cleanly */
static inline int
test_node_stop(struct test_node *n)
{
	int status = 0;

	if (n->pid <= 0)
		return -1;
	kill(n->pid, SIGTERM);
	waitpid(n->pid, &status, 0);
	n->pid = 0;
	if (n->out)
		fclose(n->out);
	n->out = NULL;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

/* how many lines of its stderr (so far) contain s */
static inline int
test_node_count(const struct test_node *n, const char *s)
{
	char buf[4096];
	int count = 0;
	FILE *e = fopen(n->err, "r");

	while (e && fgets(buf, sizeof(buf), e))
		count += strstr(buf, s) != NULL;
	if (e)
		fclose(e);
	return count;
}

/* a TLS session with a replica, as a primary: HELLO, then its reply */
static inline struct ctl_chan *
test_hello(struct ctl_tls *tls, const char *port, uint64_t ring_size,
		struct ctl_hello_reply *hr)
{
	struct ctl_chan *ch = NULL;
	struct ctl_msg m = { .type = CTL_HELLO, .seq = 1 };

	if (ctl_connect("127.0.0.1", port, 3000, tls, &ch)) {
		fprintf(stderr, TEST_NAME ": connect: %s\n", ctl_last_error());
		return NULL;
	}
	memcpy(m.u.hello.cluster_uuid, test_uuid, 16);
	m.u.hello.node_id = 1;
	m.u.hello.epoch = 1;		/* term 0 of node 1 */
	m.u.hello.incarnation = 0x7e57;
	m.u.hello.ring_size = ring_size;
	m.u.hello.head = (struct log_pos){ .lsn = 1, .off = 0, .lap = 1 };
	if (ctl_chan_send(ch, &m, 3000) || ctl_chan_recv(ch, &m, 3000) ||
	    m.type != CTL_HELLO_REPLY) {
		fprintf(stderr, TEST_NAME ": no HELLO_REPLY: %s\n", ctl_chan_why(ch));
		ctl_chan_close(&ch);
		return NULL;
	}
	*hr = m.u.hello_reply;
	return ch;
}

/*
 * A promotion's fence (HELLO with FENCE_ONLY, plus flags) from node `node`
 * (incarnation inc) with epoch: 1 if answered with a HELLO_REPLY (*hr), 0
 * if refused with an ERROR whose text contains `want` (NULL: any), -1
 * otherwise.
 */
static inline int
test_fence_hello(struct ctl_tls *tls, const char *port, uint64_t ring_size,
		uint32_t node, uint64_t epoch, uint64_t inc, uint32_t flags,
		const char *want, struct ctl_hello_reply *hr)
{
	struct ctl_chan *ch = NULL;
	struct ctl_msg m = { .type = CTL_HELLO, .seq = 1 };
	int ret = -1;

	if (ctl_connect("127.0.0.1", port, 3000, tls, &ch)) {
		fprintf(stderr, TEST_NAME ": connect: %s\n", ctl_last_error());
		return -1;
	}
	memcpy(m.u.hello.cluster_uuid, test_uuid, 16);
	m.u.hello.node_id = node;
	m.u.hello.epoch = epoch;
	m.u.hello.incarnation = inc;
	m.u.hello.flags = flags | CTL_HELLO_F_FENCE_ONLY;
	m.u.hello.ring_size = ring_size;
	m.u.hello.head = (struct log_pos){ .lsn = 1, .off = 0, .lap = 1 };
	if (ctl_chan_send(ch, &m, 3000) == 0 && ctl_chan_recv(ch, &m, 3000) == 0) {
		if (m.type == CTL_HELLO_REPLY) {
			if (hr)
				*hr = m.u.hello_reply;
			ret = 1;
		} else if (m.type == CTL_ERROR) {
			printf(TEST_NAME ": epoch %llx from node %u inc %llx: "
				"refused: %s\n", (unsigned long long)epoch,
				(unsigned)node, (unsigned long long)inc,
				m.u.error.text);
			ret = want == NULL || strstr(m.u.error.text, want) ? 0 : -1;
		}
	}
	ctl_chan_close(&ch);
	return ret;
}

/*
 * A connection's next event within ms, else RPMA_CONN_UNDEFINED: a
 * replica that neither accepts nor rejects must fail the test, not hang it.
 */
static inline enum rpma_conn_event
test_conn_event(struct rpma_conn *conn, int ms)
{
	uint64_t until = clock_now_ms() + (uint64_t)ms;
	enum rpma_conn_event ev = RPMA_CONN_UNDEFINED;
	struct pollfd p = { .events = POLLIN };
	int fl;

	if (rpma_conn_get_event_fd(conn, &p.fd) || (fl = fcntl(p.fd, F_GETFL)) < 0 ||
	    fcntl(p.fd, F_SETFL, fl | O_NONBLOCK))
		return RPMA_CONN_UNDEFINED;
	for (;;) {
		int ret = rpma_conn_next_event(conn, &ev);
		uint64_t now = clock_now_ms();

		if (ret == 0)
			return ev;
		if (ret != RPMA_E_NO_EVENT || now >= until)
			return RPMA_CONN_UNDEFINED;
		/* short polls: an event may already be queued behind the fd */
		(void)poll(&p, 1, until - now < 50 ? (int)(until - now) : 50);
	}
}

/* open a data connection with this private data; 1 if it was accepted */
static inline int
test_data_connect(struct rpma_peer *peer, uint16_t port, const void *pd,
		size_t len)
{
	struct rpma_conn_private_data pdata = { (void *)pd, (uint8_t)len };
	struct rpma_conn_req *req = NULL;
	struct rpma_conn *conn = NULL;
	enum rpma_conn_event ev;
	char p[8];
	int ok;

	snprintf(p, sizeof(p), "%u", (unsigned)port);
	if (rpma_conn_req_new(peer, "127.0.0.1", p, NULL, &req))
		return 0;
	if (rpma_conn_req_connect(&req, pd ? &pdata : NULL, &conn))
		return 0;
	ok = test_conn_event(conn, 3000) == RPMA_CONN_ESTABLISHED;
	if (ok) {
		rpma_conn_disconnect(conn);
		do
			ev = test_conn_event(conn, 3000);
		while (ev != RPMA_CONN_CLOSED && ev != RPMA_CONN_LOST &&
		       ev != RPMA_CONN_UNDEFINED);
	}
	rpma_conn_delete(&conn);
	return ok;
}

#endif
