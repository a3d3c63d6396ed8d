/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * admin_conn.h -- inside the admin socket's server (admin.c, admin_loop.c,
 * reader.c): the server, its connections, and what the loop (admin_loop.c)
 * and the readers (reader.c) take from the connection code (admin.c).  Not
 * for other files.
 */
#ifndef REPLD_ADMIN_CONN_H
#define REPLD_ADMIN_CONN_H

#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>
#include <sys/un.h>

#include "admin_proto.h"
#include "admin_req.h"
#include "metrics.h"
#include "node.h"

#define PENDING_MAX 256			/* appends answered by one wait */
#define APPEND_WAIT_MS 30000		/* then REPL_E_TIMEDOUT: outcome unknown */
/*
 * A connection's request bytes; a record that would not fit whole from
 * where its line begins is received into a buffer of its own (conn.rec)
 */
#define IN_CAP (ADMIN_LINE_MAX + (64u << 10))
#define OUT_CAP (ADMIN_REPLY_MAX + PENDING_MAX * 160)
#define SEND_TIMEOUT_S 5		/* a client that reads no answers */
#define LOOP_SLICE_MS 20		/* the loop's wait, between looks at input */
#define LOOP_EVENTS 64
#define LOOP_REREADS 8			/* reads after one that filled its room */
#define PEEK_LEN 7			/* "APPEND " */

struct admin {
	struct node *node;
	int fd;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	pthread_t thread;
	atomic_bool quit;

	/* the connections' sockets, so a stop can end their reads */
	pthread_mutex_t lock;
	pthread_cond_t gone;
	int conn_fd[ADMIN_CLIENTS_MAX];
	int clients;
	/* READ ... follow: each follower's eventfd (-1: free), woken per round */
	int follower_fd[RETENTION_READERS_MAX];
	atomic_int n_followers;		/* read without the lock: any to wake? */

	/* the listener's: connections whose first bytes have not come yet */
	struct conn *fresh[ADMIN_CLIENTS_MAX];
	int nfresh;

	/* the loop's: its thread's only, but for joining (under lock) */
	pthread_t loop_thread;
	int ep;
	struct conn *lc[ADMIN_CLIENTS_MAX];
	int nlc;
	struct conn *joining[ADMIN_CLIENTS_MAX];
	int njoining;
	/*
	 * Two rounds at most, each inside the gate once: the older one's
	 * flush travels while the newer one takes what the clients send
	 * meanwhile (loop_settle).
	 */
	struct repl *old;	/* the round waited on: each conn's first nold */
	uint64_t old_last;	/* its last LSN (0: nothing to wait for) */
	uint64_t old_since_ms;
	struct repl *round;	/* the round appending, after the old one's */
	uint64_t round_since_ms;
	int last_round;		/* appends the last round answered */
	int last_conns;		/* ... and the connections they came from */
	bool looked;		/* the round had its look before its wait */
};

struct pending {
	int err;		/* of the append itself */
	uint64_t lsn;
	uint64_t received_ns;	/* metrics: its durable latency */
	size_t bytes;
};

struct conn {
	struct admin *a;
	int fd;
	char *in;
	size_t have;
	char *out;
	size_t out_len;
	/*
	 * A large APPEND being received: its line and first bytes stay in
	 * in[big_at, big_end), the rest of its record goes straight into rec
	 * (rec_len bytes, rec_have there so far), and repl_appendv takes
	 * both parts: the record is copied once, into the log.  rec_len 0:
	 * none.
	 */
	char *rec;
	size_t rec_cap, rec_len, rec_have;
	size_t big_at, big_end, big_head;
	uint64_t big_client_id;
	struct repl *repl;	/* inside the gate while appends are pending */
	struct pending pend[PENDING_MAX];
	int npend;
	int nold;		/* the loop's: how many of pend are the old round's */
	/*
	 * Settles left that look for input arrived meanwhile: set when one
	 * answered more than one append (the client keeps several in flight).
	 */
	int pipelined;
	bool in_loop;		/* served by the loop, not a thread */
	bool eof;		/* the loop's: the client sent its last */
	bool filled;		/* the last read took all the room offered */
	bool handoff;		/* the loop's: to a thread once answered */
};

/* admin.c: a connection's replies and appends */
int64_t admin_time_ms(void);
int conn_out_flush(struct conn *c);
void conn_reply_error(struct conn *c, const char *name, int code,
		const char *message);
const char *admin_gate_message(int err);
uint64_t conn_pend_last(const struct conn *c);
void conn_answer_first(struct conn *c, int n, int wret);
/*
 * Receive what the client sent into c's buffers (flags: recvmsg's): > 0
 * bytes, 0 the client's end, -1 errno; -2 no room (a whole request waits)
 */
ssize_t conn_recv(struct conn *c, int flags);
/*
 * The next request from in[off, have), admin_req_parse's way; an
 * APPEND's record is iov[0..*niov).  A large record not all here yet
 * is taken into rec (PARSE_MORE) and comes out whole once it is.
 */
enum admin_parse conn_parse(struct conn *c, size_t off, struct admin_req *req,
		size_t *used, struct iovec iov[2], int *niov, char *why,
		size_t whylen);
/* in[0, off) was served: dropped, unless a large record is being received */
void conn_consumed(struct conn *c, size_t off);

/* where a parse begins: the served bytes before a large record stay */
static inline size_t
conn_start(const struct conn *c)
{
	return c->rec_len ? c->big_at : 0;
}
void conn_append(struct conn *c, const struct admin_req *req,
		const struct iovec *iov, int niov);
void conn_free(struct conn *c);
/* hand c to a thread of its own; false: none could be made */
bool conn_thread(struct conn *c);

/* admin_loop.c: the loop's thread, and a connection joining it */
void *loop_main(void *arg);
bool loop_join(struct admin *a, struct conn *c);

#endif
