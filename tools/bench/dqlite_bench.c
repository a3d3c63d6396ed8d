/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dqlite_bench.c -- dqlite-bench: sqlite-bench's single-row INSERT
 * transactions through a dqlite cluster on 127.0.0.1, timed per commit.
 *
 *   dqlite-bench [--nodes N] [--port P] [--clients C] [--records N]
 *                [--seconds S] [--warmup W] [--label TEXT] DIR
 *
 * Node i (1..N) is a forked process running dqlite's node API on
 * 127.0.0.1:P+i-1 with its data in DIR/n<i>; node 1 bootstraps the
 * cluster and the others join it as voters (ADD, then ASSIGN voter), so
 * that a commit is durable on a majority of the N nodes (all of them when
 * N is 2); N is 3 and P 24000 unless given.  The table is t(id INTEGER
 * PRIMARY KEY, c INT, v INT); each transaction is one autocommit INSERT of
 * (client, sequence), a statement prepared once per connection, sent to
 * node 1, the leader.  With one client it runs --records
 * transactions after --warmup; with more, each client has its own thread
 * and socket and runs for --seconds.  dqlite runs one write transaction at
 * a time: a SQLITE_BUSY answer is retried after a short sleep (counted).
 * One line of results, latency from the request's send to its answer:
 *
 *   LABEL clients=C commits=N p50_us=.. p90_us=.. p99_us=.. max_us=.. \
 *   rate=../s busy=..
 *
 * dqlite 1.11 has no public C client: the program speaks the wire
 * protocol (version 1) itself.  A message is an 8-byte header (the body's
 * length in 8-byte words, u32 little-endian; the type, u8; the schema, u8;
 * two unused bytes) and the body: integers little-endian, texts
 * NUL-terminated and padded with zeros to a multiple of 8 bytes.
 *
 * The node processes are killed and reaped on every way out, and die with
 * this program if it is killed (PR_SET_PDEATHSIG).  A benchmark, not a
 * test: the numbers mean something only beside another system's in the
 * same run (tools/bench/sqlite-vs).
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <arpa/inet.h>
#include <unistd.h>

#include <dqlite.h>
#include <sqlite3.h>

#include "bench_util.h"

#define MAX_NODES 9
#define MAX_CLIENTS 64
#define LAT_MAX 2000000L		/* latencies kept per client */
#define MSG_MAX 4096			/* the longest request sent */
#define ANSWER_MAX 8192			/* the longest answer taken */
#define ANSWER_TIMEOUT_S 30		/* an answer's wait before it fails */
#define SETUP_TIMEOUT_NS 20000000000ULL	/* the cluster's forming */

/* the wire protocol (dqlite's src/protocol.h) */
#define PROTOCOL_VERSION 1
enum {
	REQ_LEADER = 0, REQ_CLIENT = 1, REQ_OPEN = 3, REQ_PREPARE = 4,
	REQ_EXEC = 5, REQ_EXEC_SQL = 8, REQ_ADD = 12, REQ_ASSIGN = 13,
};
enum {
	ANS_FAILURE = 0, ANS_SERVER = 1, ANS_WELCOME = 2, ANS_DB = 4,
	ANS_STMT = 5, ANS_RESULT = 6, ANS_EMPTY = 8,
};
#define ROLE_VOTER 0

/* one connection to a node */
struct dq {
	int fd;
	int port;
	uint8_t out[MSG_MAX];
	size_t out_len;			/* header included */
	int out_overflow;
	uint8_t in[ANSWER_MAX];		/* the last answer's body */
	uint64_t code;			/* a FAILURE's code, else 0 */
	char err[384];			/* what went wrong */
};

/* a reader of an answer's body: every length checked against it */
struct cur {
	const uint8_t *p;
	size_t left;
};

struct client {
	int id;
	struct dq dq;
	uint32_t db, stmt;
	uint64_t *lat;
	long n;
	uint64_t busy;
	int failed;
};

static const char *base_dir;
static int n_nodes = 3, base_port = 24000;
static long records = 5000, warmup = 200;
static double seconds = 5;
static int clients = 1;
static atomic_int go, stop;

static pid_t parent_pid;
static volatile pid_t node_pid[MAX_NODES + 1];

/* ---- the node processes ---- */

/* kill and reap every node started; safe in a signal handler */
static void
kill_nodes(void)
{
	if (getpid() != parent_pid)
		return;
	for (int i = 1; i <= n_nodes; i++)
		if (node_pid[i] > 0)
			kill(node_pid[i], SIGKILL);
	for (int i = 1; i <= n_nodes; i++) {
		if (node_pid[i] <= 0)
			continue;
		while (waitpid(node_pid[i], NULL, 0) < 0 && errno == EINTR)
			;
		node_pid[i] = 0;
	}
}

static void
on_signal(int sig)
{
	kill_nodes();
	_exit(128 + sig);
}

/* the child's life: node `id` until it is killed */
static void __attribute__((noreturn))
node_main(int id)
{
	char dir[4096], addr[64];
	dqlite_node *node = NULL;
	int rc;

	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent_pid)
		_exit(1);
	snprintf(dir, sizeof(dir), "%s/n%d", base_dir, id);
	snprintf(addr, sizeof(addr), "127.0.0.1:%d", base_port + id - 1);
	if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
		fprintf(stderr, "dqlite-bench: node %d: mkdir %s: %s\n", id, dir,
			strerror(errno));
		_exit(1);
	}
	if ((rc = dqlite_node_create((dqlite_node_id)id, addr, dir, &node)) != 0) {
		fprintf(stderr, "dqlite-bench: node %d: dqlite_node_create(%s): "
			"error %d%s%s\n", id, dir, rc, node ? ": " : "",
			node ? dqlite_node_errmsg(node) : "");
		_exit(1);
	}
	if ((rc = dqlite_node_set_bind_address(node, addr)) != 0 ||
	    (rc = dqlite_node_start(node)) != 0) {
		const char *msg = dqlite_node_errmsg(node);

		fprintf(stderr, "dqlite-bench: node %d on %s: cannot start: error "
			"%d: %s\n", id, addr, rc, msg && *msg ? msg :
			"no message (is the port taken?)");
		_exit(1);
	}
	for (;;)
		pause();
}

static int
start_nodes(void)
{
	for (int i = 1; i <= n_nodes; i++) {
		pid_t p = fork();

		if (p < 0) {
			bench_say("fork of node %d: %s", i, strerror(errno));
			return -1;
		}
		if (p == 0)
			node_main(i);
		node_pid[i] = p;
	}
	return 0;
}

/* 0 while every node runs, else -1 after naming the one that ended */
static int
nodes_alive(void)
{
	int st;

	for (int i = 1; i <= n_nodes; i++) {
		if (node_pid[i] <= 0 || waitpid(node_pid[i], &st, WNOHANG) != node_pid[i])
			continue;
		node_pid[i] = 0;
		if (WIFSIGNALED(st))
			bench_say("node %d died of signal %d", i, WTERMSIG(st));
		else
			bench_say("node %d exited with status %d", i, WEXITSTATUS(st));
		return -1;
	}
	return 0;
}

/* ---- the wire protocol ---- */

static int __attribute__((format(printf, 2, 3)))
dq_fail(struct dq *d, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(d->err, sizeof(d->err), fmt, ap);
	va_end(ap);
	return -1;
}

static void
put_le(uint8_t *p, uint64_t v, int bytes)
{
	for (int i = 0; i < bytes; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t
get_le(const uint8_t *p, int bytes)
{
	uint64_t v = 0;

	for (int i = bytes - 1; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static void
req_begin(struct dq *d)
{
	d->out_len = 8;
	d->out_overflow = 0;
}

static uint8_t *
req_room(struct dq *d, size_t n)
{
	uint8_t *p;

	if (d->out_overflow || n > sizeof(d->out) - d->out_len) {
		d->out_overflow = 1;
		return NULL;
	}
	p = d->out + d->out_len;
	memset(p, 0, n);
	d->out_len += n;
	return p;
}

static void
put_u64(struct dq *d, uint64_t v)
{
	uint8_t *p = req_room(d, 8);

	if (p != NULL)
		put_le(p, v, 8);
}

static void
put_u32(struct dq *d, uint32_t v)
{
	uint8_t *p = req_room(d, 4);

	if (p != NULL)
		put_le(p, v, 4);
}

/* a text: its bytes, a NUL, zeros up to the next multiple of 8 */
static void
put_text(struct dq *d, const char *s)
{
	size_t n = strlen(s), padded = (n + 1 + 7) & ~(size_t)7;
	uint8_t *p = req_room(d, padded);

	if (p != NULL)
		memcpy(p, s, n);
}

/* the parameters of one statement, all integers: a count, a type per
 * value (the count and types padded to 8 bytes), the values */
static void
put_int_params(struct dq *d, const int64_t *v, int n)
{
	uint8_t *p = req_room(d, ((size_t)n + 1 + 7) & ~(size_t)7);

	if (p == NULL)
		return;
	p[0] = (uint8_t)n;
	for (int i = 0; i < n; i++)
		p[1 + i] = SQLITE_INTEGER;
	for (int i = 0; i < n; i++)
		put_u64(d, (uint64_t)v[i]);
}

static int
write_all(struct dq *d, const uint8_t *p, size_t n, const char *what)
{
	while (n > 0) {
		ssize_t w = send(d->fd, p, n, MSG_NOSIGNAL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return dq_fail(d, "%s to 127.0.0.1:%d: send: %s", what,
				d->port, w < 0 ? strerror(errno) : "nothing sent");
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

static int
read_all(struct dq *d, uint8_t *p, size_t n, const char *what)
{
	while (n > 0) {
		ssize_t r = recv(d->fd, p, n, 0);

		if (r < 0 && errno == EINTR)
			continue;
		if (r == 0)
			return dq_fail(d, "%s on 127.0.0.1:%d: the node closed the "
				"connection", what, d->port);
		if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return dq_fail(d, "%s on 127.0.0.1:%d: no answer within %d s",
				what, d->port, ANSWER_TIMEOUT_S);
		if (r < 0)
			return dq_fail(d, "%s on 127.0.0.1:%d: recv: %s", what,
				d->port, strerror(errno));
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

static int
cur_u64(struct cur *c, uint64_t *v)
{
	if (c->left < 8)
		return -1;
	*v = get_le(c->p, 8);
	c->p += 8;
	c->left -= 8;
	return 0;
}

static int
cur_u32(struct cur *c, uint32_t *v)
{
	if (c->left < 4)
		return -1;
	*v = (uint32_t)get_le(c->p, 4);
	c->p += 4;
	c->left -= 4;
	return 0;
}

/* a text in the body: its NUL and its padding inside what is left */
static int
cur_text(struct cur *c, const char **s)
{
	const uint8_t *nul = memchr(c->p, 0, c->left);
	size_t padded;

	if (nul == NULL)
		return -1;
	padded = ((size_t)(nul - c->p) + 1 + 7) & ~(size_t)7;
	if (padded > c->left)
		return -1;
	*s = (const char *)c->p;
	c->p += padded;
	c->left -= padded;
	return 0;
}

static const char *
answer_name(unsigned type)
{
	static const char *const names[] = {
		"FAILURE", "SERVER", "WELCOME", "SERVERS", "DB", "STMT",
		"RESULT", "ROWS", "EMPTY", "FILES", "METADATA",
	};

	return type < sizeof(names) / sizeof(names[0]) ? names[type] : "unknown";
}

/*
 * The request built since req_begin, of `type`, and its answer, which
 * must be of type `want`: 0 with c on its body; -1 (d->err) when it could
 * not be sent, the answer is short or malformed, or is a FAILURE (its
 * code in d->code).
 */
static int
dq_call(struct dq *d, uint8_t type, unsigned want, const char *what, struct cur *c)
{
	uint8_t hdr[8];
	size_t len;
	unsigned got;

	d->code = 0;
	if (d->out_overflow || (d->out_len - 8) % 8 != 0)
		return dq_fail(d, "%s: the request does not fit in %d bytes", what,
			MSG_MAX);
	put_le(d->out, (d->out_len - 8) / 8, 4);
	d->out[4] = type;
	d->out[5] = 0;			/* schema */
	d->out[6] = d->out[7] = 0;
	if (write_all(d, d->out, d->out_len, what) != 0 ||
	    read_all(d, hdr, sizeof(hdr), what) != 0)
		return -1;
	len = (size_t)get_le(hdr, 4) * 8;
	got = hdr[4];
	if (len > sizeof(d->in))
		return dq_fail(d, "%s on 127.0.0.1:%d: an answer of %zu bytes (%s), "
			"more than %d", what, d->port, len, answer_name(got),
			ANSWER_MAX);
	if (read_all(d, d->in, len, what) != 0)
		return -1;
	c->p = d->in;
	c->left = len;
	if (got == ANS_FAILURE) {
		const char *msg;
		uint64_t code;

		if (cur_u64(c, &code) != 0 || cur_text(c, &msg) != 0 || c->left != 0)
			return dq_fail(d, "%s on 127.0.0.1:%d: a malformed FAILURE "
				"answer (%zu bytes)", what, d->port, len);
		d->code = code ? code : 1;
		return dq_fail(d, "%s on 127.0.0.1:%d: failed: %s (code %llu)",
			what, d->port, msg, (unsigned long long)code);
	}
	if (got != want)
		return dq_fail(d, "%s on 127.0.0.1:%d: a %s answer (type %u), not %s",
			what, d->port, answer_name(got), got, answer_name(want));
	return 0;
}

/* after the fields of an answer: nothing may be left, nothing missing */
static int
dq_parsed(struct dq *d, int short_answer, const struct cur *c, const char *what,
	unsigned want)
{
	if (short_answer)
		return dq_fail(d, "%s on 127.0.0.1:%d: a short or malformed %s "
			"answer", what, d->port, answer_name(want));
	if (c->left != 0)
		return dq_fail(d, "%s on 127.0.0.1:%d: a %s answer with %zu bytes "
			"too many", what, d->port, answer_name(want), c->left);
	return 0;
}

static void
dq_close(struct dq *d)
{
	if (d->fd >= 0)
		close(d->fd);
	d->fd = -1;
}

/* a connection to the node on port, past the protocol's handshake */
static int
dq_connect(struct dq *d, int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	struct timeval tv = { .tv_sec = ANSWER_TIMEOUT_S };
	uint8_t version[8];
	int one = 1;

	d->port = port;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if ((d->fd = socket(AF_INET, SOCK_STREAM, 0)) < 0)
		return dq_fail(d, "socket: %s", strerror(errno));
	setsockopt(d->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	setsockopt(d->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (connect(d->fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
		dq_fail(d, "connect to 127.0.0.1:%d: %s", port, strerror(errno));
		dq_close(d);
		return -1;
	}
	put_le(version, PROTOCOL_VERSION, 8);
	if (write_all(d, version, sizeof(version), "the protocol version") != 0) {
		dq_close(d);
		return -1;
	}
	return 0;
}

/* LEADER: the leader's id (0 while there is none) */
static int
dq_leader(struct dq *d, uint64_t *id, char *addr, size_t addr_len)
{
	const char *a = "";
	struct cur c;
	int bad;

	req_begin(d);
	put_u64(d, 0);
	if (dq_call(d, REQ_LEADER, ANS_SERVER, "LEADER", &c) != 0)
		return -1;
	bad = cur_u64(&c, id) != 0 || cur_text(&c, &a) != 0;
	snprintf(addr, addr_len, "%s", a);
	return dq_parsed(d, bad, &c, "LEADER", ANS_SERVER);
}

/* CLIENT: this connection's client id */
static int
dq_client(struct dq *d, uint64_t id)
{
	uint64_t heartbeat;
	struct cur c;

	req_begin(d);
	put_u64(d, id);
	if (dq_call(d, REQ_CLIENT, ANS_WELCOME, "CLIENT", &c) != 0)
		return -1;
	return dq_parsed(d, cur_u64(&c, &heartbeat) != 0, &c, "CLIENT", ANS_WELCOME);
}

/* OPEN: the database `name` on this connection (flags and VFS unused) */
static int
dq_open(struct dq *d, const char *name, uint32_t *db)
{
	uint32_t pad;
	struct cur c;

	req_begin(d);
	put_text(d, name);
	put_u64(d, 0);
	put_text(d, "");
	if (dq_call(d, REQ_OPEN, ANS_DB, "OPEN", &c) != 0)
		return -1;
	return dq_parsed(d, cur_u32(&c, db) != 0 || cur_u32(&c, &pad) != 0, &c,
		"OPEN", ANS_DB);
}

static int
dq_prepare(struct dq *d, uint32_t db, const char *sql, uint32_t *stmt)
{
	uint32_t db_id;
	uint64_t params;
	struct cur c;

	req_begin(d);
	put_u64(d, db);
	put_text(d, sql);
	if (dq_call(d, REQ_PREPARE, ANS_STMT, "PREPARE", &c) != 0)
		return -1;
	return dq_parsed(d, cur_u32(&c, &db_id) != 0 || cur_u32(&c, stmt) != 0 ||
		cur_u64(&c, &params) != 0, &c, "PREPARE", ANS_STMT);
}

static int
dq_result(struct dq *d, struct cur *c, const char *what)
{
	uint64_t last_id, rows;

	return dq_parsed(d, cur_u64(c, &last_id) != 0 || cur_u64(c, &rows) != 0,
		c, what, ANS_RESULT);
}

/* EXEC_SQL: SQL text without parameters */
static int
dq_exec_sql(struct dq *d, uint32_t db, const char *sql)
{
	struct cur c;

	req_begin(d);
	put_u64(d, db);
	put_text(d, sql);
	if (dq_call(d, REQ_EXEC_SQL, ANS_RESULT, "EXEC_SQL", &c) != 0)
		return -1;
	return dq_result(d, &c, "EXEC_SQL");
}

/* EXEC: a prepared statement with integer parameters */
static int
dq_exec(struct dq *d, uint32_t db, uint32_t stmt, const int64_t *v, int n)
{
	struct cur c;

	req_begin(d);
	put_u32(d, db);
	put_u32(d, stmt);
	put_int_params(d, v, n);
	if (dq_call(d, REQ_EXEC, ANS_RESULT, "EXEC", &c) != 0)
		return -1;
	return dq_result(d, &c, "EXEC");
}

/* ADD: node `id` at addr, a spare until it is assigned a role */
static int
dq_add(struct dq *d, uint64_t id, const char *addr)
{
	uint64_t unused;
	struct cur c;

	req_begin(d);
	put_u64(d, id);
	put_text(d, addr);
	if (dq_call(d, REQ_ADD, ANS_EMPTY, "ADD", &c) != 0)
		return -1;
	return dq_parsed(d, cur_u64(&c, &unused) != 0, &c, "ADD", ANS_EMPTY);
}

/* ASSIGN: node `id`'s role; its answer once the change is committed */
static int
dq_assign(struct dq *d, uint64_t id, uint64_t role)
{
	uint64_t unused;
	struct cur c;

	req_begin(d);
	put_u64(d, id);
	put_u64(d, role);
	if (dq_call(d, REQ_ASSIGN, ANS_EMPTY, "ASSIGN", &c) != 0)
		return -1;
	return dq_parsed(d, cur_u64(&c, &unused) != 0, &c, "ASSIGN", ANS_EMPTY);
}

static int
is_busy(const struct dq *d)
{
	return (d->code & 0xff) == SQLITE_BUSY;
}

/* ---- the cluster and the workload ---- */

/* a connection to node i, retried while it starts */
static int
connect_node(struct dq *d, int i)
{
	uint64_t t0 = bench_now_ns();

	while (dq_connect(d, base_port + i - 1) != 0) {
		if (nodes_alive() != 0)
			return -1;
		if (bench_now_ns() - t0 > SETUP_TIMEOUT_NS) {
			bench_say("node %d: %s", i, d->err);
			return -1;
		}
		usleep(20000);
	}
	return 0;
}

/*
 * Node 1 the leader, the others voters, the table made: on d, a
 * connection to node 1.  A change is retried while the cluster settles
 * (one configuration change at a time).
 */
static int
form_cluster(struct dq *d)
{
	char addr[64], want[64];
	uint64_t id = 0, t0 = bench_now_ns();
	uint32_t db;

	for (int i = 2; i <= n_nodes; i++) {	/* each node listens */
		struct dq probe;

		if (connect_node(&probe, i) != 0)
			return -1;
		dq_close(&probe);
	}
	if (connect_node(d, 1) != 0)
		return -1;
	snprintf(want, sizeof(want), "127.0.0.1:%d", base_port);
	while (dq_leader(d, &id, addr, sizeof(addr)) == 0 && id != 1) {
		if (bench_now_ns() - t0 > SETUP_TIMEOUT_NS) {
			bench_say("node 1 is not the leader after %llu s (leader %llu)",
				SETUP_TIMEOUT_NS / 1000000000ULL, (unsigned long long)id);
			return -1;
		}
		usleep(20000);
	}
	if (id != 1 || strcmp(addr, want) != 0) {
		if (id == 1)
			bench_say("LEADER: node 1 at %s, not %s", addr, want);
		else
			bench_say("%s", d->err);
		return -1;
	}
	for (int i = 2; i <= n_nodes; i++) {
		snprintf(addr, sizeof(addr), "127.0.0.1:%d", base_port + i - 1);
		if (nodes_alive() != 0)
			return -1;
		for (int step = 0; step < 2; step++) {
			t0 = bench_now_ns();
			while ((step == 0 ? dq_add(d, (uint64_t)i, addr) :
				dq_assign(d, (uint64_t)i, ROLE_VOTER)) != 0) {
				/* a FAILURE is the cluster's; anything else ends it */
				if (d->code == 0 || nodes_alive() != 0 ||
				    bench_now_ns() - t0 > SETUP_TIMEOUT_NS) {
					bench_say("node %d: %s", i, d->err);
					return -1;
				}
				usleep(50000);
			}
		}
	}
	if (dq_client(d, 0) != 0 || dq_open(d, "bench.db", &db) != 0 ||
	    dq_exec_sql(d, db, "CREATE TABLE IF NOT EXISTS t(id INTEGER PRIMARY "
			"KEY, c INT, v INT)") != 0) {
		bench_say("%s", d->err);
		return -1;
	}
	return 0;
}

static int
open_client(struct client *c)
{
	if (dq_connect(&c->dq, base_port) != 0 ||
	    dq_client(&c->dq, (uint64_t)c->id) != 0 ||
	    dq_open(&c->dq, "bench.db", &c->db) != 0 ||
	    dq_prepare(&c->dq, c->db, "INSERT INTO t(c, v) VALUES(?, ?)", &c->stmt) != 0) {
		bench_say("client %d: %s", c->id, c->dq.err);
		return -1;
	}
	return 0;
}

/* one transaction; its latency in ns, or 0 on failure (c->failed) */
static uint64_t
insert(struct client *c, long seq)
{
	int64_t v[2] = { c->id, seq };
	uint64_t t0 = bench_now_ns();

	/* another connection writes: retry after 20 us, doubling to 500 us,
	 * as sqlite-bench does */
	for (useconds_t wait = 20; dq_exec(&c->dq, c->db, c->stmt, v, 2) != 0;
	     wait = wait < 500 ? 2 * wait : 500) {
		if (!is_busy(&c->dq)) {
			c->failed = 1;
			return 0;
		}
		c->busy++;
		usleep(wait);
	}
	return bench_now_ns() - t0;
}

static void *
run(void *arg)
{
	struct client *c = arg;
	long seq = 0;
	uint64_t ns;

	while (!atomic_load(&go))
		usleep(100);
	while (!atomic_load(&stop) && c->n < LAT_MAX) {
		if ((ns = insert(c, ++seq)) == 0)
			break;
		c->lat[c->n++] = ns;
	}
	return NULL;
}

static void
usage(void)
{
	fprintf(stderr, "usage: dqlite-bench [--nodes N] [--port P] [--clients C] "
		"[--records N] [--seconds S] [--warmup W] [--label T] DIR\n");
	exit(2);
}

/* the measurement, the nodes running; 0 after the line is printed */
static int
bench(struct client *cl, const char *label)
{
	pthread_t th[MAX_CLIENTS];
	uint64_t *all, t0, busy = 0;
	struct dq setup = { .fd = -1 };
	long total = 0;
	int started = 0, rc = -1;

	if (form_cluster(&setup) != 0)
		goto out;
	for (int i = 0; i < clients; i++) {
		cl[i].id = i + 1;
		if ((cl[i].lat = malloc(sizeof(uint64_t) * LAT_MAX)) == NULL) {
			bench_say("out of memory");
			goto out;
		}
		if (open_client(&cl[i]) != 0)
			goto out;
	}
	for (long i = 0; i < warmup; i++)
		if (insert(&cl[0], -i - 1) == 0) {
			bench_say("warm-up: %s", cl[0].dq.err);
			goto out;
		}
	t0 = bench_now_ns();
	if (clients == 1) {
		while (cl[0].n < records && cl[0].n < LAT_MAX) {
			uint64_t ns = insert(&cl[0], cl[0].n + 1);

			if (ns == 0)
				break;
			cl[0].lat[cl[0].n++] = ns;
		}
	} else {
		for (; started < clients; started++)
			if (pthread_create(&th[started], NULL, run, &cl[started]) != 0) {
				bench_say("cannot start client %d", started + 1);
				break;
			}
		if (started == clients) {
			atomic_store(&go, 1);
			while (bench_now_ns() - t0 < (uint64_t)(seconds * 1e9))
				usleep(10000);
		}
		atomic_store(&go, 1);
		atomic_store(&stop, 1);
		for (int i = 0; i < started; i++)
			pthread_join(th[i], NULL);
		if (started < clients)
			goto out;
	}
	t0 = bench_now_ns() - t0;
	for (int i = 0; i < clients; i++) {
		if (cl[i].failed) {
			bench_say("client %d: %s", i + 1, cl[i].dq.err);
			goto out;
		}
		total += cl[i].n;
		busy += cl[i].busy;
	}
	if (total == 0 || (all = malloc(sizeof(uint64_t) * (size_t)total)) == NULL) {
		bench_say("no commits");
		goto out;
	}
	total = 0;
	for (int i = 0; i < clients; i++) {
		memcpy(all + total, cl[i].lat, sizeof(uint64_t) * (size_t)cl[i].n);
		total += cl[i].n;
	}
	bench_sort(all, total);
	printf("%s clients=%d commits=%ld p50_us=%.0f p90_us=%.0f p99_us=%.0f "
		"max_us=%.0f rate=%.0f/s busy=%llu\n", label, clients, total,
		bench_pct(all, total, 50), bench_pct(all, total, 90),
		bench_pct(all, total, 99), all[total - 1] / 1e3,
		total / (t0 / 1e9), (unsigned long long)busy);
	free(all);
	rc = 0;
out:
	dq_close(&setup);
	for (int i = 0; i < clients; i++) {
		dq_close(&cl[i].dq);
		free(cl[i].lat);
		cl[i].lat = NULL;
	}
	return rc;
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "nodes", required_argument, NULL, 'N' },
		{ "port", required_argument, NULL, 'p' },
		{ "clients", required_argument, NULL, 'c' },
		{ "records", required_argument, NULL, 'n' },
		{ "seconds", required_argument, NULL, 's' },
		{ "warmup", required_argument, NULL, 'w' },
		{ "label", required_argument, NULL, 'l' },
		{ NULL, 0, NULL, 0 },
	};
	static struct client cl[MAX_CLIENTS];
	const char *label = "dqlite";
	struct sigaction sa = { .sa_handler = on_signal };
	int o, rc;

	while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (o) {
		case 'N': n_nodes = atoi(optarg); break;
		case 'p': base_port = atoi(optarg); break;
		case 'c': clients = atoi(optarg); break;
		case 'n': records = atol(optarg); break;
		case 's': seconds = atof(optarg); break;
		case 'w': warmup = atol(optarg); break;
		case 'l': label = optarg; break;
		default: usage();
		}
	}
	if (optind != argc - 1 || n_nodes < 1 || n_nodes > MAX_NODES ||
	    base_port < 1 || base_port > 65535 - MAX_NODES || clients < 1 ||
	    clients > MAX_CLIENTS || records < 1 || seconds <= 0 || warmup < 0)
		usage();
	base_dir = argv[optind];
	for (int i = 0; i < clients; i++)
		cl[i].dq.fd = -1;
	if (mkdir(base_dir, 0755) != 0 && errno != EEXIST) {
		bench_say("mkdir %s: %s", base_dir, strerror(errno));
		return 1;
	}
	parent_pid = getpid();
	atexit(kill_nodes);
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	fflush(NULL);		/* the children inherit no buffered output */
	rc = start_nodes() == 0 && bench(cl, label) == 0 ? 0 : 1;
	fflush(stdout);
	kill_nodes();
	return rc;
}
