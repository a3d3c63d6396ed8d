/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fabric_conn.c -- fabric_conn_established and fabric_conn_drop keep their
 * bounds (libfabric tcp): a data connection to a closed port is refused at
 * once and then dropped within the drop's wait (after the refusal the
 * event fd polls readable with no event to come: a blocking read waited
 * for ever, and with it a primary's link thread and repl_close); one to a
 * port that takes the TCP connection and never answers ends with the
 * connect's timeout.  An alarm turns a hang into a failure.
 */
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/fabric.h"
#include "unit.h"

#define TIMEOUT_MS 1500
#define DROP_MS 200

static struct rpma_peer *peer;

/* a TCP port on 127.0.0.1: listening (it takes connections, says nothing) or closed */
static int
local_port(bool listening, int *fd)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	socklen_t len = sizeof(sin);
	int port;

	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	*fd = socket(AF_INET, SOCK_STREAM, 0);
	CU_ASSERT_FATAL(*fd >= 0);
	CU_ASSERT_FATAL(bind(*fd, (struct sockaddr *)&sin, sizeof(sin)) == 0);
	CU_ASSERT_FATAL(getsockname(*fd, (struct sockaddr *)&sin, &len) == 0);
	port = ntohs(sin.sin_port);
	if (listening) {
		CU_ASSERT_FATAL(listen(*fd, 4) == 0);
	} else {
		close(*fd);
		*fd = -1;
	}
	return port;
}

/* connect to port; the time fabric_conn_established took, its result */
static struct rpma_conn *
try_connect(int port, int *ret, uint64_t *took_ms)
{
	struct rpma_conn_cfg *ccfg = fabric_conn_cfg("tcp", 40, TIMEOUT_MS);
	struct rpma_conn_req *req = NULL;
	struct rpma_conn *conn = NULL;
	char p[16];
	uint64_t t0;

	CU_ASSERT_PTR_NOT_NULL_FATAL(ccfg);
	snprintf(p, sizeof(p), "%d", port);
	CU_ASSERT_EQUAL_FATAL(rpma_conn_req_new(peer, "127.0.0.1", p, ccfg, &req), 0);
	rpma_conn_cfg_delete(&ccfg);
	CU_ASSERT_EQUAL_FATAL(rpma_conn_req_connect(&req, NULL, &conn), 0);
	t0 = clock_now_ms();
	*ret = fabric_conn_established(conn, TIMEOUT_MS);
	*took_ms = clock_now_ms() - t0;
	return conn;
}

static void
drop_bounded(struct rpma_conn **conn)
{
	uint64_t t0 = clock_now_ms();

	fabric_conn_drop(conn, DROP_MS);
	CU_ASSERT_PTR_NULL(*conn);
	CU_ASSERT(clock_now_ms() - t0 < DROP_MS + 1000);
}

static void
conn_refused(void)
{
	for (int i = 0; i < 3; i++) {
		int fd, ret, port = local_port(false, &fd);
		uint64_t took;
		struct rpma_conn *conn = try_connect(port, &ret, &took);

		CU_ASSERT_NOT_EQUAL(ret, 0);
		CU_ASSERT(took < TIMEOUT_MS);
		drop_bounded(&conn);
	}
}

static void
conn_silent(void)
{
	int fd, ret, port = local_port(true, &fd);
	uint64_t took;
	struct rpma_conn *conn = try_connect(port, &ret, &took);

	CU_ASSERT_NOT_EQUAL(ret, 0);
	CU_ASSERT(took >= TIMEOUT_MS - 100 && took < TIMEOUT_MS + 1000);
	drop_bounded(&conn);
	close(fd);
}

static void
setup(void)
{
	if (fabric_peer_new("tcp", "127.0.0.1", false, &peer))
		UNIT_SKIP("no libfabric tcp provider");
	alarm(30);	/* a hang fails the test */
}

static void
conn_cases(void)
{
	setup();
	conn_refused();
	conn_silent();
	rpma_peer_delete(&peer);
}

UNIT_MAIN("fabric_conn",
	UNIT_CASE(conn_cases))
