/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * repl_admission.c -- a replica (tools/repl-node, a real process, TLS on
 * its control channel) accepts a data connection only with the admission
 * token of the TLS session it is serving: no private data, a wrong token,
 * and a token replayed from an earlier session are each rejected before
 * accept, and the primary holding the right token still gets in.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ctl_chan.h"
#include "rpma.h"

#define SIZE (8192 + 1024 * 1024)
#define CHECK(cond) do { if (!(cond)) { \
	fprintf(stderr, "repl_admission: %s:%d: %s failed\n", __FILE__, \
		__LINE__, #cond); failed = 1; } } while (0)

static const uint8_t uuid[16] = "repl-node-test!";
static int failed;

/* a TLS session with the replica, as a primary: HELLO, then its reply */
static struct ctl_chan *
hello(struct ctl_tls *tls, const char *port, struct ctl_hello_reply *hr)
{
	struct ctl_chan *ch = NULL;
	struct ctl_msg m = { .type = CTL_HELLO, .seq = 1 };

	if (ctl_connect("127.0.0.1", port, 3000, tls, &ch)) {
		fprintf(stderr, "repl_admission: connect: %s\n", ctl_last_error());
		return NULL;
	}
	memcpy(m.u.hello.cluster_uuid, uuid, 16);
	m.u.hello.node_id = 1;
	m.u.hello.epoch = 1;
	m.u.hello.ring_size = SIZE - 8192;
	m.u.hello.head = (struct ctl_pos){ .lsn = 1, .off = 0, .lap = 1 };
	if (ctl_chan_send(ch, &m, 3000) || ctl_chan_recv(ch, &m, 3000) ||
	    m.type != CTL_HELLO_REPLY) {
		fprintf(stderr, "repl_admission: no HELLO_REPLY: %s\n", ctl_chan_why(ch));
		ctl_chan_close(&ch);
		return NULL;
	}
	*hr = m.u.hello_reply;
	return ch;
}

/* open a data connection with this private data; 1 if it was accepted */
static int
data_connect(struct rpma_peer *peer, uint16_t port, const void *pd, size_t len)
{
	struct rpma_conn_private_data pdata = { (void *)pd, (uint8_t)len };
	struct rpma_conn_req *req = NULL;
	struct rpma_conn *conn = NULL;
	enum rpma_conn_event ev = RPMA_CONN_UNDEFINED;
	char p[8];
	int ok;

	snprintf(p, sizeof(p), "%u", (unsigned)port);
	if (rpma_conn_req_new(peer, "127.0.0.1", p, NULL, &req))
		return 0;
	if (rpma_conn_req_connect(&req, pd ? &pdata : NULL, &conn))
		return 0;
	ok = rpma_conn_next_event(conn, &ev) == 0 && ev == RPMA_CONN_ESTABLISHED;
	if (ok) {
		rpma_conn_disconnect(conn);
		while (rpma_conn_next_event(conn, &ev) == 0 && ev != RPMA_CONN_CLOSED &&
		       ev != RPMA_CONN_LOST)
			;
	}
	rpma_conn_delete(&conn);
	return ok;
}

int
main(void)
{
	char dir[] = "/tmp/rpma-admission-XXXXXX", cmd[1024], path[600];
	char ca[600], cert[600], key[600], ctl[8], data[8], line[64];
	const char *node = getenv("REPL_NODE") ? getenv("REPL_NODE") : "./tools/repl-node";
	struct ctl_hello_reply hr;
	struct ctl_tls *tls = NULL;
	struct ctl_chan *ch;
	struct rpma_peer *peer = NULL;
	uint8_t token[CTL_TOKEN_SIZE], old_token[CTL_TOKEN_SIZE], zero[CTL_TOKEN_SIZE] = { 0 };
	const char *why = "";
	int out[2], ret, base = 20000 + (int)(getpid() % 1500) * 8;
	FILE *f;
	pid_t pid;

	if (access(node, X_OK) != 0) {
		fprintf(stderr, "repl_admission: %s not built\n", node);
		return 99;
	}
	if (mkdtemp(dir) == NULL)
		return 99;
	snprintf(cmd, sizeof(cmd), "sh %s %s/tls >/dev/null", MAKE_TEST_CA, dir);
	ret = system(cmd);
	if (WIFEXITED(ret) && WEXITSTATUS(ret) == 77) {
		printf("repl_admission: SKIP: no openssl command to make a CA\n");
		return 77;
	}
	if (ret != 0)
		return 99;
	snprintf(ca, sizeof(ca), "%s/tls/ca.pem", dir);
	snprintf(cert, sizeof(cert), "%s/tls/primary.pem", dir);
	snprintf(key, sizeof(key), "%s/tls/primary.key", dir);
	snprintf(path, sizeof(path), "/dev/shm/rpma-admission-%d", (int)getpid());
	snprintf(ctl, sizeof(ctl), "%d", base);
	snprintf(data, sizeof(data), "%d", base + 1);

	/* the replica, its stderr kept to look for its refusals */
	if (pipe(out))
		return 99;
	pid = fork();
	if (pid == 0) {
		char tlsdir[600], size[32], errf[700];

		snprintf(tlsdir, sizeof(tlsdir), "%s/tls", dir);
		snprintf(size, sizeof(size), "%d", SIZE);
		snprintf(errf, sizeof(errf), "%s/replica.err", dir);
		setenv("REPL_NODE_TLS_DIR", tlsdir, 1);
		setenv("REPL_NODE_TIMEOUT_MS", "3000", 1);
		dup2(out[1], 1);
		if (freopen(errf, "w", stderr) == NULL)
			_exit(99);
		execl(node, node, "replica", path, size, ctl, data, (char *)NULL);
		_exit(99);
	}
	close(out[1]);
	f = fdopen(out[0], "r");
	if (f == NULL || fgets(line, sizeof(line), f) == NULL || strncmp(line, "ready", 5)) {
		fprintf(stderr, "repl_admission: the replica did not start\n");
		kill(pid, SIGKILL);
		return 99;
	}

	if (ctl_tls_new(ca, cert, key, 0, &tls, &why) ||
	    rpma_ext_peer_new_ofi("tcp", &peer)) {
		fprintf(stderr, "repl_admission: setup: %s\n", why);
		kill(pid, SIGKILL);
		return 99;
	}

	/* session 1: its token opens the door (and is remembered) */
	ch = hello(tls, ctl, &hr);
	CHECK(ch != NULL);
	if (ch) {
		CHECK(ctl_chan_admission_token(ch, old_token) == 0);
		CHECK(data_connect(peer, hr.data_port, old_token, sizeof(old_token)) == 1);
		ctl_chan_close(&ch);
	}
	usleep(200000);	/* the replica drops the session, waits for the next */

	/* session 2: no token, a wrong one, the replayed one: all rejected */
	ch = hello(tls, ctl, &hr);
	CHECK(ch != NULL);
	if (ch) {
		CHECK(ctl_chan_admission_token(ch, token) == 0);
		CHECK(memcmp(token, old_token, sizeof(token)) != 0);
		CHECK(data_connect(peer, hr.data_port, NULL, 0) == 0);
		CHECK(data_connect(peer, hr.data_port, zero, sizeof(zero)) == 0);
		CHECK(data_connect(peer, hr.data_port, old_token, sizeof(old_token)) == 0);
		/* and the session's own token still gets in */
		CHECK(data_connect(peer, hr.data_port, token, sizeof(token)) == 1);
		ctl_chan_close(&ch);
	}

	kill(pid, SIGTERM);
	waitpid(pid, &ret, 0);
	CHECK(WIFEXITED(ret) && WEXITSTATUS(ret) == 0);
	{
		/* the replica said why, three times */
		char errf[700], buf[4096];
		int refusals = 0;
		FILE *e;

		snprintf(errf, sizeof(errf), "%s/replica.err", dir);
		e = fopen(errf, "r");
		while (e && fgets(buf, sizeof(buf), e))
			refusals += strstr(buf, "refused a data connection without the "
				"admission token") != NULL;
		if (e)
			fclose(e);
		CHECK(refusals == 3);
		printf("repl_admission: %d data connections refused before accept\n",
			refusals);
	}
	rpma_peer_delete(&peer);
	ctl_tls_delete(&tls);
	unlink(path);
	snprintf(cmd, sizeof(cmd), getenv("KEEP") ? "true %s" : "rm -rf %s", dir);
	if (system(cmd) != 0)
		failed = 1;
	printf("repl_admission: %s\n", failed ? "FAIL" : "ok");
	return failed;
}
