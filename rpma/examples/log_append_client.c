/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * log_append_client -- append entries to a remote log so that a crash at
 * any moment leaves a log whose `used` word covers only durable entries:
 *
 *   1. write the entry after the used bytes, flush it (PERSISTENT);
 *   2. only then atomically store the new `used` and flush that word.
 *
 * The order matters: a `used` that reached persistence before its entry
 * would point at garbage after a crash.
 *
 *   log_append_client TRANSPORT ADDR PORT ENTRY...
 */
#include "common.h"

int
main(int argc, char *argv[])
{
	struct rpma_peer *peer;
	struct rpma_mr_local *local;
	struct rpma_mr_remote *log;
	struct rpma_conn_req *req;
	struct rpma_conn *conn;
	struct rpma_conn_private_data pdata;
	struct rpma_cq *cq;
	static char buf[4096];
	uint64_t used;
	char word[8];

	if (argc < 5) {
		fprintf(stderr, "usage: %s TRANSPORT ADDR PORT ENTRY...\n", argv[0]);
		return 2;
	}
	peer = example_peer(argv[1], argv[2]);
	if (rpma_mr_reg(peer, buf, sizeof(buf), RPMA_MR_USAGE_WRITE_SRC |
			RPMA_MR_USAGE_READ_DST, &local))
		DIE("rpma_mr_reg");
	if (rpma_conn_req_new(peer, argv[2], argv[3], NULL, &req) ||
	    rpma_conn_req_connect(&req, NULL, &conn))
		DIE("cannot connect to %s:%s", argv[2], argv[3]);
	example_expect_event(conn, RPMA_CONN_ESTABLISHED);
	if (rpma_conn_get_private_data(conn, &pdata) ||
	    rpma_mr_remote_from_descriptor(pdata.ptr, example_desc_size(peer), &log))
		DIE("the server's descriptor");
	rpma_conn_get_cq(conn, &cq);

	/* where the log ends now */
	if (rpma_read(conn, local, 0, log, 0, 8, RPMA_F_COMPLETION_ALWAYS, buf))
		DIE("rpma_read");
	example_wait(cq, buf);
	memcpy(&used, buf, 8);

	for (int i = 4; i < argc; i++) {
		size_t len = strlen(argv[i]) + 1;

		if (len > sizeof(buf) - 8)
			DIE("entry %d is too long", i - 3);
		memcpy(buf + 8, argv[i], len);
		if (rpma_write(conn, log, 8 + used, local, 8, len,
				RPMA_F_COMPLETION_ON_ERROR, NULL) ||
		    rpma_flush(conn, log, 8 + used, len, RPMA_FLUSH_TYPE_PERSISTENT,
				RPMA_F_COMPLETION_ALWAYS, argv[i]))
			DIE("appending entry %d", i - 3);
		example_wait(cq, argv[i]);	/* the entry is durable */

		used += len;
		memcpy(word, &used, 8);
		if (rpma_atomic_write(conn, log, 0, word, RPMA_F_COMPLETION_ON_ERROR, NULL) ||
		    rpma_flush(conn, log, 0, 8, RPMA_FLUSH_TYPE_PERSISTENT,
				RPMA_F_COMPLETION_ALWAYS, word))
			DIE("publishing entry %d", i - 3);
		example_wait(cq, word);		/* and now it is in the log */
		printf("appended \"%s\", log now %llu bytes\n", argv[i],
			(unsigned long long)used);
	}

	rpma_conn_disconnect(conn);
	example_expect_event(conn, RPMA_CONN_CLOSED);
	rpma_conn_delete(&conn);
	rpma_mr_remote_delete(&log);
	rpma_mr_dereg(&local);
	rpma_peer_delete(&peer);
	return 0;
}
