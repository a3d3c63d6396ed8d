/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * repl_identity.c -- a replica (tests/engine/repl-node, a real process) takes a
 * HELLO only from the node its epoch names and the log that chose it:
 *
 *  - an epoch whose low 16 bits are not the sender's node id is refused;
 *  - a HELLO claiming the replica's own node id is refused;
 *  - once it promised an epoch to one incarnation of node 1, the same
 *    epoch from another incarnation of node 1 (its log made anew on a
 *    replaced disk, which starts from epoch 0 and picks its old epoch
 *    again) is refused;
 *  - an epoch more than 1024 terms above the one it follows is refused as
 *    implausible (it would use up the epochs);
 *  - and in each case nothing changed: the replica still follows the epoch
 *    it promised, as a PROBE (which changes nothing either) shows, and the
 *    right incarnation is still served;
 *  - a primary whose log follows the last term refuses to promote before
 *    it sends anything: the replica is not fenced.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TEST_NAME "repl_identity"
#include "repl.h"
#include "repl_test_node.h"
#include "log/wal.h"
#include "../lib/test_ports.h"

#define SIZE (8192 + 1024 * 1024)
#define RING (SIZE - 8192)

static struct ctl_tls *tls;
static char port[16];

/* a fence HELLO to the replica under test (test_fence_hello) */
static int
hello(uint32_t node, uint64_t epoch, uint64_t inc, uint32_t flags,
		const char *want, struct ctl_hello_reply *hr)
{
	return test_fence_hello(tls, port, RING, node, epoch, inc, flags, want, hr);
}

/* the epoch the replica follows, asked without changing anything */
static uint64_t
followed(void)
{
	struct ctl_hello_reply hr;

	return hello(1, 1, 1, CTL_HELLO_F_PROBE, NULL, &hr) == 1 ? hr.epoch : 0;
}

/* the stopped log at path follows epoch from now on (as if promoted) */
static void
set_log_epoch(const char *path, uint64_t epoch)
{
	struct rpma_ext_mem *mem = NULL;
	struct wal_identity id;
	struct wal *w = NULL;
	uint64_t ring;

	CHECK(rpma_ext_mem_open(RPMA_EXT_MEM_CRASH, path, 0, 0, &mem) == 0);
	if (mem && wal_open(mem, &w) == 0) {
		wal_identity(w, &id, &ring);
		CHECK(wal_set_epoch(w, epoch, id.incarnation) == 0);
		wal_close(&w);
	}
	rpma_ext_mem_close(&mem);
}

/*
 * A primary whose log follows the last term promotes nothing: refused
 * before any HELLO is sent, so the replica still follows what it did.
 */
static void
exhausted_epochs(const char *dir, const char *ca, const char *cert,
		const char *key)
{
	char ppath[600];
	struct repl_replica rep = { "127.0.0.1", port };
	struct repl_cfg c = { .backend = REPL_BACKEND_CRASH, .size = SIZE,
		.create = 1, .bootstrap = 1, .node_id = 1, .full_timeout_ms = 1000,
		.replicas = &rep, .n_replicas = 1, .quorum = 1,
		.down_timeout_ms = 2000, .promote_wait_ms = 2000,
		.tls_ca = ca, .tls_cert = cert, .tls_key = key };
	struct repl *r = NULL;
	uint64_t before;

	snprintf(ppath, sizeof(ppath), "/dev/shm/rpma-identity-p-%d", (int)getpid());
	c.path = ppath;
	memcpy(c.cluster_uuid, test_uuid, 16);
	(void)dir;
	/* a cluster of this primary and the replica: a first promotion */
	CHECK(repl_open(&c, &r) == 0);
	CHECK(repl_close(&r) == 0);
	before = followed();
	CHECK(before != 0 && (before & 0xffff) == 1);
	/* its log now says the last term (as if 65535 promotions had run) */
	set_log_epoch(ppath, (0xffffull << 16) | 1);
	c.create = c.bootstrap = 0;
	CHECK(repl_open(&c, &r) == REPL_E_INVAL);
	CHECK(r == NULL);
	CHECK(followed() == before);	/* not fenced */
	/* the control: an ordinary epoch promotes, and fences */
	set_log_epoch(ppath, before + (5ull << 16));
	CHECK(repl_open(&c, &r) == 0);
	CHECK(repl_close(&r) == 0);
	{
		uint64_t now = followed();

		if (now != before + (6ull << 16))
			fprintf(stderr, TEST_NAME ": control: follows %llx, before %llx\n",
				(unsigned long long)now, (unsigned long long)before);
		CHECK(now == before + (6ull << 16));
	}
	unlink(ppath);
}

int
main(void)
{
	char dir[] = "/tmp/rpma-identity-XXXXXX", path[600];
	char ca[600], cert[600], key[600], data[16];
	const char *exe = getenv("REPL_NODE") ? getenv("REPL_NODE") : "./tests/engine/repl-node";
	const uint64_t inc_a = 0xa11ce, inc_b = 0xb0b;
	const uint64_t e1 = (1ull << 16) | 1;	/* term 1 of node 1 */
	struct ctl_hello_reply hr;
	struct test_node node;
	const char *why = "";
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
	snprintf(path, sizeof(path), "/dev/shm/rpma-identity-%d", (int)getpid());
	snprintf(port, sizeof(port), "%d", base);
	snprintf(data, sizeof(data), "%d", base + 1);
	if (test_node_start(&node, exe, dir, NULL, path, SIZE, port, data))
		return 99;
	if (ctl_tls_new(ca, cert, key, 0, &tls, &why)) {
		fprintf(stderr, TEST_NAME ": setup: %s\n", why);
		test_node_stop(&node);
		return 99;
	}

	/* a fresh replica follows nothing; node 1's incarnation A fences it */
	CHECK(followed() == 0);
	CHECK(hello(1, e1, inc_a, 0, NULL, &hr) == 1);
	CHECK(hr.incarnation != 0);
	CHECK(followed() == e1);

	/* not node 1's epoch, though node 1 sends it */
	CHECK(hello(1, (2ull << 16) | 3, inc_a, 0, "not one node 1 chose", NULL) == 0);
	/* its own node id (tests/engine/repl-node's replica is node 2) */
	CHECK(hello(hr.node_id, (2ull << 16) | hr.node_id, inc_a, 0,
		"own node id", NULL) == 0);
	/* the promised epoch from another incarnation of node 1 */
	CHECK(hello(1, e1, inc_b, 0, "another incarnation", NULL) == 0);
	/* far above: implausible */
	CHECK(hello(1, (1030ull << 16) | 1, inc_a, 0, "implausible", NULL) == 0);
	/* none of that changed what it follows */
	CHECK(followed() == e1);

	/* the incarnation it promised to is still served, and a newer term */
	CHECK(hello(1, e1, inc_a, 0, NULL, &hr) == 1);
	CHECK(hello(1, (1024ull << 16) | 1, inc_b, 0, NULL, &hr) == 1);
	CHECK(followed() == ((1024ull << 16) | 1));
	/* an older epoch is STALE, and a probe says the same without change */
	CHECK(hello(1, e1, inc_a, 0, NULL, &hr) == 1);
	CHECK(hr.flags & CTL_HELLO_F_STALE);
	CHECK(hello(1, e1, inc_a, CTL_HELLO_F_PROBE, NULL, &hr) == 1);
	CHECK((hr.flags & CTL_HELLO_F_STALE) && hr.epoch == ((1024ull << 16) | 1));

	/*
	 * A bootstrap refuses a replica that promised anything: the next
	 * case makes its cluster with the replica on a blank log.
	 */
	CHECK(test_node_stop(&node) == 0);
	unlink(path);
	if (test_node_start(&node, exe, dir, NULL, path, SIZE, port, data))
		return 99;
	CHECK(followed() == 0);
	exhausted_epochs(dir, ca, cert, key);

	CHECK(test_node_stop(&node) == 0);
	ctl_tls_delete(&tls);
	unlink(path);
	{
		char cmd[700];

		snprintf(cmd, sizeof(cmd), failed ? "true %s" : "rm -rf %s", dir);
		(void)!system(cmd);
	}
	printf(TEST_NAME ": %s\n", failed ? "FAIL" : "ok");
	return failed ? 1 : 0;
}
