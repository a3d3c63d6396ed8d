/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * repl_node.c -- repl-node: one node of a small cluster, as a process the
 * demo and the tests can SIGKILL, freeze and restart, and the verifier that
 * checks what the nodes left.  This file holds main and the modes that run
 * as cluster processes; the modes that read and check a log image (forge,
 * status, verify, verify-acks) are repl_node_check.c's.
 *
 *   repl-node replica PATH SIZE CTL_PORT DATA_PORT
 *	serve primaries until SIGTERM; prints "ready" once listening.  A new
 *	log gets node id REPL_NODE_NODE_ID, else CTL_PORT.  With
 *	REPL_NODE_REINIT=1 the log is made anew whatever it holds
 *	(repl_replica_cfg.reinit) and takes its promise floor from the nodes of
 *	REPL_NODE_PEERS (HOST:PORT,...), k REPL_NODE_QUORUM (0), before it
 *	serves a primary; so does a log still marked promise pending.  Exits 5 when such a log has no peers
 *	(REPL_E_NO_PEERS), 1 on other failures.  REPL_TEST_REFUSE_DATA
 *	set: it refuses every data connection (repl_replica_cfg's test hook).
 *
 *   repl-node primary PATH SIZE SEED UNTIL QUORUM ACKED_FILE HOST:PORT...
 *	promote this node (every start is a promotion) and append records
 *	until the log's last LSN reaches UNTIL.  Record n written in epoch E
 *	is E and n (8 bytes each, little-endian) followed by bytes derived
 *	from (SEED, E, n), so two primaries never write the same LSN alike.
 *	After each batch is durable, one line per record "EPOCH LSN HASH"
 *	(HASH: FNV-1a 64 of the payload, hex) is appended to ACKED_FILE: the
 *	acknowledgements the test holds the cluster to.  Releases as it goes,
 *	so the ring laps.  Exits 0 when done (or on SIGTERM), after every
 *	replica flushed everything; 3 when a newer primary fenced it; 4 when
 *	it cannot promote (fewer than n - k + 1 nodes reachable); 5 when its
 *	log holds no membership (REPL_E_NOT_MEMBER: a new or blank log, not
 *	the cluster's first start; or a refused bootstrap); 6 when, with
 *	REPL_NODE_RESTART=1, its log last followed another node's epoch or a
 *	newer primary took over while this node was down (REPL_E_SUPERSEDED:
 *	its log unchanged, no node of the newer epoch fenced; serve the log
 *	as a replica).  An existing log is opened as it is (a replica's too:
 *	the node id is the log's).
 *
 *   repl-node proxy LISTEN_PORT TARGET_HOST:PORT
 *	a TCP relay on 127.0.0.1:LISTEN_PORT to the target, bytes unchanged
 *	both ways (TLS passes through); prints "ready" once listening.
 *	SIGUSR1 cuts every open connection (both sides); new ones are
 *	accepted as before.
 *
 * The crash backend is used throughout: a SIGKILL loses exactly what was
 * not persisted.  Environment: REPL_NODE_BATCH (max records per batch),
 * REPL_NODE_PAUSE_US (a primary's pause after each acknowledged batch; 0:
 * none, it appends as fast as the replicas take it),
 * REPL_NODE_TIMEOUT_MS (replica down timeout), REPL_NODE_NODE_ID (the node
 * id of a log a primary creates, 1; or a replica, its CTL_PORT),
 * REPL_NODE_FORCE (1: force the
 * promotion), REPL_NODE_RECONFIGURE (1: the replicas and quorum given
 * replace the log's membership), REPL_NODE_RESTART (1: this start is a
 * restart of the node that led before, from its unchanged files, not a
 * promotion asked for: repl_cfg.refuse_if_superseded),
 * REPL_NODE_PROVIDER ("verbs", or a libfabric provider; tcp),
 * REPL_NODE_ADDR (where a replica listens; 127.0.0.1), REPL_NODE_LISTEN
 * (HOST:PORT: where a primary's control port listens, and its address in
 * the membership; none by default), REPL_NODE_TLS_DIR (TLS on the control
 * channel with DIR/ca.pem and DIR/NAME.pem + DIR/NAME.key, NAME from
 * REPL_NODE_TLS_NAME, else "primary" or "replica1"; as made by
 * tests/engine/make-test-ca.sh).
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "repl.h"
#include "repl_node.h"
#include "log/wal.h"
#include "wal_common.h"

#define EXIT_FENCED 3
#define EXIT_NO_QUORUM 4
#define EXIT_NOT_MEMBER 5
#define EXIT_SUPERSEDED 6
static const uint8_t uuid[16] = "repl-node-test!";

static atomic_int stop;	/* set by the signal handler */
static struct repl_replica_node *_Atomic replica_node;	/* the replica mode's */

static void
on_signal(int sig)
{
	struct repl_replica_node *node = atomic_load(&replica_node);

	(void)sig;
	stop = 1;
	if (node)
		repl_replica_stop(node);
}

static void
say_ready(void *arg)
{
	(void)arg;
	printf("ready\n");
	fflush(stdout);
}

static int
env_int(const char *name, int dflt)
{
	const char *v = getenv(name);

	return v && *v ? atoi(v) : dflt;
}

static void
put_le64(unsigned char *p, uint64_t v)
{
	for (int i = 0; i < 8; i++, v >>= 8)
		p[i] = (unsigned char)v;
}

uint64_t
fnv1a(const unsigned char *p, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < len; i++) {
		h ^= p[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

/* the payload a primary of epoch writes as record lsn; its length */
size_t
payload_make(uint64_t seed, uint64_t epoch, uint64_t lsn, unsigned char *buf)
{
	uint64_t s = seed ^ (epoch * 0xD6E8FEB86659FD93ull);
	size_t len = PAYLOAD_HDR + wal_test_len(s, lsn, MAX_LEN - PAYLOAD_HDR);

	put_le64(buf, epoch);
	put_le64(buf + 8, lsn);
	wal_test_fill(s, lsn, buf + PAYLOAD_HDR, len - PAYLOAD_HDR);
	return len;
}

/* TLS files from REPL_NODE_TLS_DIR, or all NULL (plain TCP) */
static char tls_paths[3][512];

static void
tls_files(const char *dflt_name, const char **ca, const char **cert,
		const char **key)
{
	const char *dir = getenv("REPL_NODE_TLS_DIR");
	const char *name = getenv("REPL_NODE_TLS_NAME");

	*ca = *cert = *key = NULL;
	if (dir == NULL || *dir == '\0')
		return;
	if (name == NULL || *name == '\0')
		name = dflt_name;
	snprintf(tls_paths[0], sizeof(tls_paths[0]), "%s/ca.pem", dir);
	snprintf(tls_paths[1], sizeof(tls_paths[1]), "%s/%s.pem", dir, name);
	snprintf(tls_paths[2], sizeof(tls_paths[2]), "%s/%s.key", dir, name);
	*ca = tls_paths[0];
	*cert = tls_paths[1];
	*key = tls_paths[2];
}

/* REPL_NODE_PEERS: HOST:PORT,... (at most 8) */
static struct repl_replica floor_peers[8];
static char floor_spec[8][128];

static int
env_peers(void)
{
	const char *v = getenv("REPL_NODE_PEERS");
	int n = 0;

	while (v && *v && n < 8) {
		size_t len = strcspn(v, ",");
		char *colon;

		snprintf(floor_spec[n], sizeof(floor_spec[n]), "%.*s", (int)len, v);
		if ((colon = strrchr(floor_spec[n], ':')) != NULL) {
			*colon = '\0';
			floor_peers[n] = (struct repl_replica){ floor_spec[n], colon + 1 };
			n++;
		}
		v += len + (v[len] == ',');
	}
	return n;
}

static int
run_replica(int argc, char *argv[])
{
	struct repl_replica_cfg cfg = {
		.backend = REPL_BACKEND_CRASH, .create = 1, .provider = "tcp",
		.addr = "127.0.0.1", .peers = floor_peers,
	};
	struct sigaction sa = { .sa_handler = on_signal };
	struct repl_replica_node *node = NULL;
	int ret;

	if (argc != 6)
		return 2;
	cfg.path = argv[2];
	cfg.size = strtoull(argv[3], NULL, 0);
	cfg.ctl_port = argv[4];
	cfg.data_port = argv[5];
	/* a node made anew at another address keeps its node id */
	cfg.node_id = (uint32_t)env_int("REPL_NODE_NODE_ID", atoi(argv[4]));
	cfg.timeout_ms = env_int("REPL_NODE_TIMEOUT_MS", 3000);
	cfg.reinit = env_int("REPL_NODE_REINIT", 0);
	cfg.n_peers = env_peers();
	cfg.quorum = env_int("REPL_NODE_QUORUM", 0);
	if (getenv("REPL_NODE_PROVIDER"))
		cfg.provider = getenv("REPL_NODE_PROVIDER");
	if (getenv("REPL_NODE_ADDR"))
		cfg.addr = getenv("REPL_NODE_ADDR");
	/* for tests only: a link failure after a good HELLO */
	cfg.test_refuse_data = getenv("REPL_TEST_REFUSE_DATA") != NULL;
	tls_files("replica1", &cfg.tls_ca, &cfg.tls_cert, &cfg.tls_key);
	memcpy(cfg.cluster_uuid, uuid, 16);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	if ((ret = repl_replica_open(&cfg, &node)) != 0) {
		fprintf(stderr, "repl-node: the replica could not start: %s\n",
			repl_strerror(ret));
		return ret == REPL_E_NO_PEERS ? EXIT_NOT_MEMBER : 1;
	}
	atomic_store(&replica_node, node);
	if (stop)	/* a signal before the handle was there */
		repl_replica_stop(node);
	say_ready(NULL);
	ret = repl_replica_run(node);
	atomic_store(&replica_node, NULL);
	repl_replica_close(&node);
	return ret ? 1 : 0;
}

/* a newer primary took over: nothing more is acknowledged here */
static int
fenced_exit(struct repl **repl, int acked_fd, int err, uint64_t lsn)
{
	fprintf(stderr, "repl-node: fenced: %s (at LSN %llu)\n", repl_strerror(err),
		(unsigned long long)lsn);
	repl_close(repl);
	close(acked_fd);
	return EXIT_FENCED;
}

/*
 * Append; while the ring is full, checkpoint as the database's own
 * checkpointer would (this one thread is also the checkpointer: a lagging
 * replica, or a log promoted full, leaves no space until it releases).
 */
#define FULL_WAIT_MS 200
#define FULL_GIVE_UP_MS 60000

static int
append_or_release(struct repl *repl, const void *buf, size_t len, uint64_t *lsn)
{
	int ret;

	for (int waited = 0; waited < FULL_GIVE_UP_MS; waited += FULL_WAIT_MS) {
		struct repl_status st;

		if ((ret = repl_append(repl, buf, len, lsn)) != REPL_E_FULL)
			return ret;
		repl_status(repl, &st);
		if (st.last_lsn > 400)
			repl_release(repl, st.last_lsn - 400);
	}
	return ret;
}

static int
run_primary(int argc, char *argv[])
{
	struct repl_replica reps[8];
	char hosts[8][64], listen[72];
	struct repl_cfg cfg = {
		.backend = REPL_BACKEND_CRASH, .full_timeout_ms = FULL_WAIT_MS,
	};
	struct repl *repl = NULL;
	struct repl_status st;
	unsigned char buf[MAX_LEN];
	uint64_t seed, until, epoch, lsn = 0, hashes[64];
	int acked_fd, batch_max = env_int("REPL_NODE_BATCH", 8), ret;
	int pause_us = env_int("REPL_NODE_PAUSE_US", 0);
	unsigned rnd;

	if (argc < 9 || argc - 8 > 8)
		return 2;
	if (batch_max < 1 || batch_max > 64)
		batch_max = batch_max < 1 ? 1 : 64;
	cfg.path = argv[2];
	cfg.size = strtoull(argv[3], NULL, 0);
	seed = strtoull(argv[4], NULL, 0);
	until = strtoull(argv[5], NULL, 0);
	cfg.quorum = atoi(argv[6]);
	cfg.n_replicas = argc - 8;
	cfg.node_id = (uint32_t)env_int("REPL_NODE_NODE_ID", 1);
	cfg.force_promotion = env_int("REPL_NODE_FORCE", 0);
	cfg.reconfigure = env_int("REPL_NODE_RECONFIGURE", 0);
	cfg.refuse_if_superseded = env_int("REPL_NODE_RESTART", 0);
	cfg.provider = getenv("REPL_NODE_PROVIDER");	/* NULL: tcp */
	cfg.down_timeout_ms = env_int("REPL_NODE_TIMEOUT_MS", 3000);
	cfg.heartbeat_ms = cfg.down_timeout_ms / 10;
	for (int i = 0; i < cfg.n_replicas; i++) {
		char *colon;

		snprintf(hosts[i], sizeof(hosts[i]), "%s", argv[8 + i]);
		colon = strrchr(hosts[i], ':');
		if (colon == NULL)
			return 2;
		*colon = '\0';
		reps[i] = (struct repl_replica){ hosts[i], colon + 1 };
	}
	cfg.replicas = reps;
	if (getenv("REPL_NODE_LISTEN")) {
		char *colon;

		snprintf(listen, sizeof(listen), "%s", getenv("REPL_NODE_LISTEN"));
		if ((colon = strrchr(listen, ':')) == NULL)
			return 2;
		*colon = '\0';
		cfg.listen_addr = listen;
		cfg.listen_port = colon + 1;
	}
	tls_files("primary", &cfg.tls_ca, &cfg.tls_cert, &cfg.tls_key);
	memcpy(cfg.cluster_uuid, uuid, 16);
	/* the first start of a cluster makes the log; any other opens one */
	cfg.bootstrap = cfg.create = env_int("REPL_NODE_BOOTSTRAP", 0);
	{
		/* SIGTERM: stop appending, let the replicas catch up, close */
		struct sigaction sa = { .sa_handler = on_signal };

		sigaction(SIGTERM, &sa, NULL);
	}
	acked_fd = open(argv[7], O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (acked_fd < 0) {
		fprintf(stderr, "repl-node: cannot open %s\n", argv[7]);
		return 1;
	}
	{
		/*
		 * A writer killed inside its write() may leave a short one (a
		 * fatal signal ends a file write between pages): end that line
		 * here, so ours start on a line of their own.  The verifier
		 * skips a cut line that a newer epoch's follow.
		 */
		off_t end = lseek(acked_fd, 0, SEEK_END);
		char last = '\n';

		if (end > 0 && pread(acked_fd, &last, 1, end - 1) == 1 && last != '\n' &&
		    write(acked_fd, "\n", 1) != 1) {
			close(acked_fd);
			return 1;
		}
	}
	if ((ret = repl_open(&cfg, &repl))) {
		fprintf(stderr, "repl-node: cannot open the primary's log %s: %s\n",
			cfg.path, repl_strerror(ret));
		close(acked_fd);
		return ret == REPL_E_NO_QUORUM ? EXIT_NO_QUORUM :
			ret == REPL_E_NOT_MEMBER ? EXIT_NOT_MEMBER :
			ret == REPL_E_SUPERSEDED ? EXIT_SUPERSEDED : 1;
	}
	rnd = (unsigned)(seed ^ (uint64_t)getpid());
	repl_status(repl, &st);
	epoch = st.epoch;
	fprintf(stderr, "repl-node: primary of epoch %llu, log %llu..%llu, "
		"configuration epoch %llu%s\n", (unsigned long long)epoch,
		(unsigned long long)st.first_lsn, (unsigned long long)st.last_lsn,
		(unsigned long long)st.config_epoch,
		st.config_joint ? " (joint: the change is not committed yet)" : "");
	while (!stop && st.last_lsn < until) {
		int n = 1 + (int)((rnd = rnd * 1103515245 + 12345) >> 16) % batch_max;
		uint64_t first = st.last_lsn + 1;
		char lines[64 * 64];
		size_t used = 0;

		for (int i = 0; i < n && st.last_lsn < until; i++) {
			uint64_t want = st.last_lsn + 1;
			size_t len = payload_make(seed, epoch, want, buf);

			ret = append_or_release(repl, buf, len, &lsn);
			if (ret == REPL_E_FENCED)
				return fenced_exit(&repl, acked_fd, ret, want);
			if (ret || lsn != want) {
				fprintf(stderr, "repl-node: append %llu: %s (got %llu)\n",
					(unsigned long long)want, repl_strerror(ret),
					(unsigned long long)lsn);
				return 1;
			}
			hashes[i] = fnv1a(buf, len);
			st.last_lsn = lsn;
		}
		while ((ret = repl_wait_durable(repl, lsn, 1000)) == REPL_E_TIMEDOUT) {
			/* blocked: say why, as an operator would want to see it */
			repl_status(repl, &st);
			fprintf(stderr, "repl-node: LSN %llu waits: %d of %d replicas up, "
				"quorum %d\n", (unsigned long long)lsn, st.replicas_up,
				cfg.n_replicas, cfg.quorum);
			for (int i = 0; i < cfg.n_replicas; i++) {
				struct repl_replica_status rs;

				repl_replica_status(repl, i, &rs);
				fprintf(stderr, "repl-node:   replica %d %s: %s\n", i,
					rs.state == REPL_REPLICA_STREAMING ? "streaming" :
					rs.state == REPL_REPLICA_CATCHING_UP ? "catching up" :
					"down", rs.why[0] ? rs.why : "-");
			}
		}
		if (ret == REPL_E_UNKNOWN)
			return fenced_exit(&repl, acked_fd, ret, lsn);
		if (ret) {
			fprintf(stderr, "repl-node: wait %llu: %s\n",
				(unsigned long long)lsn, repl_strerror(ret));
			return 1;
		}
		/* the acknowledgements: from here on, these must never be lost */
		for (uint64_t l = first; l <= lsn; l++)
			used += (size_t)snprintf(lines + used, sizeof(lines) - used,
				"%llu %llu %016llx\n", (unsigned long long)epoch,
				(unsigned long long)l,
				(unsigned long long)hashes[l - first]);
		/* one write: lines of two primaries never interleave */
		if (write(acked_fd, lines, used) != (ssize_t)used)
			return 1;
		/* the database checkpoints now and then, keeping a few hundred */
		if (lsn % 97 == 0 && lsn > 400)
			repl_release(repl, lsn - 400);
		if (pause_us > 0)
			usleep((useconds_t)pause_us);
		repl_status(repl, &st);
	}
	/*
	 * Done: wait until every replica flushed everything, for the verifier;
	 * one that stays down for twice the down timeout is not running.
	 */
	{
		int down[8] = { 0 }, gone = 2 * cfg.down_timeout_ms / 100;

		for (int tries = 0; tries < 600; tries++) {
			int all = 1;

			repl_status(repl, &st);
			if (st.fenced)
				return fenced_exit(&repl, acked_fd, REPL_E_FENCED,
					st.last_lsn);
			for (int i = 0; i < cfg.n_replicas; i++) {
				struct repl_replica_status rs;

				repl_replica_status(repl, i, &rs);
				down[i] = rs.state == REPL_REPLICA_DOWN ? down[i] + 1 : 0;
				all &= (rs.state == REPL_REPLICA_STREAMING &&
					rs.flushed_lsn >= st.last_lsn) || down[i] > gone;
			}
			if (all)
				break;
			usleep(100000);
		}
	}
	repl_close(&repl);
	close(acked_fd);
	return 0;
}

/* --- proxy ------------------------------------------------------------ */

#define RELAYS_MAX 32
#define RELAY_BUF 65536

/* one relayed connection: bytes read from fd[d] wait in buf[d] for fd[1 - d] */
struct relay {
	int fd[2];			/* the client's, the target's; -1: unused */
	unsigned char buf[2][RELAY_BUF];
	size_t len[2], off[2];
};

static volatile sig_atomic_t cut;

static void
on_cut(int sig)
{
	(void)sig;
	cut = 1;
}

static void
relay_close(struct relay *r)
{
	for (int d = 0; d < 2; d++) {
		if (r->fd[d] >= 0)
			close(r->fd[d]);
		r->fd[d] = -1;
		r->len[d] = r->off[d] = 0;
	}
}

static int
nonblocking(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	return fl < 0 ? -1 : fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

/* read what waits on either side, write what it can: -1 when it ends */
static int
relay_io(struct relay *r, const short rev[2])
{
	for (int d = 0; d < 2; d++) {
		ssize_t n;

		if (r->len[d] == 0 && (rev[d] & (POLLIN | POLLHUP | POLLERR))) {
			n = read(r->fd[d], r->buf[d], RELAY_BUF);
			if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
				return -1;
			if (n > 0) {
				r->len[d] = (size_t)n;
				r->off[d] = 0;
			}
		}
		if (r->len[d] > r->off[d]) {
			n = send(r->fd[1 - d], r->buf[d] + r->off[d],
				r->len[d] - r->off[d], MSG_NOSIGNAL);
			if (n < 0 && errno != EAGAIN && errno != EINTR)
				return -1;
			if (n > 0 && (r->off[d] += (size_t)n) == r->len[d])
				r->len[d] = r->off[d] = 0;
		}
	}
	if ((rev[0] | rev[1]) & POLLNVAL)
		return -1;
	return 0;
}

static int
run_proxy(int argc, char *argv[])
{
	static struct relay relays[RELAYS_MAX];
	struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_STREAM };
	struct addrinfo *target = NULL;
	struct sockaddr_in sin = { .sin_family = AF_INET };
	struct sigaction sa = { .sa_handler = on_signal };
	struct sigaction sc = { .sa_handler = on_cut };
	char host[256], *colon;
	int lfd, one = 1;

	if (argc != 4)
		return 2;
	snprintf(host, sizeof(host), "%s", argv[3]);
	colon = strrchr(host, ':');
	if (colon == NULL)
		return 2;
	*colon = '\0';
	if (getaddrinfo(host, colon + 1, &hints, &target)) {
		fprintf(stderr, "repl-node proxy: cannot resolve %s\n", argv[3]);
		return 1;
	}
	/* no SA_RESTART: a signal ends the poll at once */
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGUSR1, &sc, NULL);
	signal(SIGPIPE, SIG_IGN);
	for (int i = 0; i < RELAYS_MAX; i++)
		relays[i].fd[0] = relays[i].fd[1] = -1;
	sin.sin_port = htons((uint16_t)atoi(argv[2]));
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (lfd < 0 || setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(lfd, (struct sockaddr *)&sin, sizeof(sin)) || listen(lfd, 16)) {
		fprintf(stderr, "repl-node proxy: cannot listen on port %s: %s\n",
			argv[2], strerror(errno));
		return 1;
	}
	say_ready(NULL);
	while (!stop) {
		struct pollfd p[1 + 2 * RELAYS_MAX];
		int at[RELAYS_MAX], np = 1;

		if (cut) {
			int n = 0;

			cut = 0;
			for (int i = 0; i < RELAYS_MAX; i++)
				if (relays[i].fd[0] >= 0) {
					relay_close(&relays[i]);
					n++;
				}
			fprintf(stderr, "repl-node proxy: cut %d connection(s)\n", n);
		}
		p[0] = (struct pollfd){ .fd = lfd, .events = POLLIN };
		for (int i = 0; i < RELAYS_MAX; i++) {
			struct relay *r = &relays[i];

			at[i] = -1;
			if (r->fd[0] < 0)
				continue;
			at[i] = np;
			for (int d = 0; d < 2; d++)
				p[np + d] = (struct pollfd){ .fd = r->fd[d],
					.events = (short)((r->len[d] == 0 ? POLLIN : 0) |
					(r->len[1 - d] > r->off[1 - d] ? POLLOUT : 0)) };
			np += 2;
		}
		if (poll(p, (nfds_t)np, 100) < 0 || cut)
			continue;
		for (int i = 0; i < RELAYS_MAX; i++) {
			short rev[2];

			if (at[i] < 0)
				continue;
			rev[0] = p[at[i]].revents;
			rev[1] = p[at[i] + 1].revents;
			if ((rev[0] | rev[1]) && relay_io(&relays[i], rev))
				relay_close(&relays[i]);
		}
		if (!(p[0].revents & POLLIN))
			continue;
		for (;;) {
			int cfd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
			int tfd, slot = -1;

			if (cfd < 0)
				break;
			for (int i = 0; i < RELAYS_MAX && slot < 0; i++)
				if (relays[i].fd[0] < 0)
					slot = i;
			/* the target is local: a blocking connect answers at once */
			tfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
			if (slot < 0 || tfd < 0 ||
			    connect(tfd, target->ai_addr, target->ai_addrlen) ||
			    nonblocking(tfd)) {
				if (tfd >= 0)
					close(tfd);
				close(cfd);
				continue;
			}
			(void)setsockopt(cfd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
			(void)setsockopt(tfd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
			relays[slot].fd[0] = cfd;
			relays[slot].fd[1] = tfd;
		}
	}
	for (int i = 0; i < RELAYS_MAX; i++)
		relay_close(&relays[i]);
	close(lfd);
	freeaddrinfo(target);
	return 0;
}

int
main(int argc, char *argv[])
{
	/* the engine's notices (links up, resyncs, truncations) on stderr */
	enum repl_log_level level = env_int("REPL_NODE_DEBUG", 0) ?
		REPL_LOG_LEVEL_DEBUG : REPL_LOG_LEVEL_NOTICE;
	const char *mode = argc >= 2 ? argv[1] : "";

	repl_log_set_threshold(REPL_LOG_THRESHOLD, level);
	repl_log_set_threshold(REPL_LOG_THRESHOLD_STDERR, level);
	if (strcmp(mode, "replica") == 0)
		return run_replica(argc, argv);
	if (strcmp(mode, "primary") == 0)
		return run_primary(argc, argv);
	if (strcmp(mode, "verify") == 0)
		return run_verify(argc, argv, true);
	if (strcmp(mode, "verify-acks") == 0)
		return run_verify(argc, argv, false);
	if (strcmp(mode, "forge") == 0)
		return run_forge(argc, argv);
	if (strcmp(mode, "proxy") == 0)
		return run_proxy(argc, argv);
	if (strcmp(mode, "status") == 0)
		return run_status(argc, argv);
	fprintf(stderr, "usage: repl-node replica|primary|forge|proxy|status|"
		"verify|verify-acks ...\n");
	return 2;
}
