/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * repl_admission.c -- a replica (tests/engine/repl-node, a real process, TLS on
 * its control channel) accepts a data connection only with the admission
 * token of the TLS session it is serving: no private data, a wrong token,
 * and a token replayed from an earlier session are each rejected before
 * accept, and the primary holding the right token still gets in.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TEST_NAME "repl_admission"
#include "repl_test_node.h"
#include "../lib/test_ports.h"

#define SIZE (8192 + 1024 * 1024)

int
main(void)
{
	char dir[] = "/tmp/rpma-admission-XXXXXX", cmd[1024], path[600];
	char ca[600], cert[600], key[600], ctl[16], data[16];
	const char *exe = getenv("REPL_NODE") ? getenv("REPL_NODE") : "./tests/engine/repl-node";
	struct ctl_hello_reply hr;
	struct ctl_tls *tls = NULL;
	struct ctl_chan *ch;
	struct rpma_peer *peer = NULL;
	struct test_node node;
	uint8_t token[CTL_TOKEN_SIZE], old_token[CTL_TOKEN_SIZE], zero[CTL_TOKEN_SIZE] = { 0 };
	const char *why = "";
	int ret, refusals, base = test_ports(8);

	if (access(exe, X_OK) != 0) {
		fprintf(stderr, "repl_admission: %s not built\n", exe);
		return 99;
	}
	if (mkdtemp(dir) == NULL)
		return 99;
	ret = test_make_ca(dir);
	if (ret == 77)
		printf("repl_admission: SKIP: no openssl command to make a CA\n");
	if (ret)
		return ret;
	snprintf(ca, sizeof(ca), "%s/tls/ca.pem", dir);
	snprintf(cert, sizeof(cert), "%s/tls/primary.pem", dir);
	snprintf(key, sizeof(key), "%s/tls/primary.key", dir);
	snprintf(path, sizeof(path), "/dev/shm/rpma-admission-%d", (int)getpid());
	snprintf(ctl, sizeof(ctl), "%d", base);
	snprintf(data, sizeof(data), "%d", base + 1);

	if (test_node_start(&node, exe, dir, NULL, path, SIZE, ctl, data))
		return 99;
	if (ctl_tls_new(ca, cert, key, 0, &tls, &why) ||
	    rpma_ext_peer_new_ofi("tcp", &peer)) {
		fprintf(stderr, "repl_admission: setup: %s\n", why);
		test_node_stop(&node);
		return 99;
	}

	/* session 1: its token opens the door (and is remembered) */
	ch = test_hello(tls, ctl, SIZE - 8192, &hr);
	CHECK(ch != NULL);
	if (ch) {
		CHECK(ctl_chan_admission_token(ch, old_token) == 0);
		CHECK(test_data_connect(peer, hr.data_port, old_token, sizeof(old_token)) == 1);
		ctl_chan_close(&ch);
	}
	usleep(200000);	/* the replica drops the session, waits for the next */

	/* session 2: no token, a wrong one, the replayed one: all rejected */
	ch = test_hello(tls, ctl, SIZE - 8192, &hr);
	CHECK(ch != NULL);
	if (ch) {
		CHECK(ctl_chan_admission_token(ch, token) == 0);
		CHECK(memcmp(token, old_token, sizeof(token)) != 0);
		CHECK(test_data_connect(peer, hr.data_port, NULL, 0) == 0);
		CHECK(test_data_connect(peer, hr.data_port, zero, sizeof(zero)) == 0);
		CHECK(test_data_connect(peer, hr.data_port, old_token, sizeof(old_token)) == 0);
		/* and the session's own token still gets in */
		CHECK(test_data_connect(peer, hr.data_port, token, sizeof(token)) == 1);
		ctl_chan_close(&ch);
	}

	CHECK(test_node_stop(&node) == 0);
	/* the replica said why, three times */
	refusals = test_node_count(&node, "refused a data connection without the "
		"admission token");
	CHECK(refusals == 3);
	printf("repl_admission: %d data connections refused before accept\n", refusals);
	rpma_peer_delete(&peer);
	ctl_tls_delete(&tls);
	unlink(path);
	snprintf(cmd, sizeof(cmd), getenv("KEEP") ? "true %s" : "rm -rf %s", dir);
	if (system(cmd) != 0)
		failed = 1;
	printf("repl_admission: %s\n", failed ? "FAIL" : "ok");
	return failed;
}
