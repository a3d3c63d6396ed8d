/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * repl_node.c -- repl-node: one node of a small cluster, as a process the
 * demo and the tests can SIGKILL and restart, and the verifier that checks
 * what the nodes left.
 *
 *   repl-node replica PATH SIZE CTL_PORT DATA_PORT
 *	serve primaries until SIGTERM; prints "ready" once listening.
 *
 *   repl-node primary PATH SIZE SEED UNTIL QUORUM ACKED_FILE HOST:PORT...
 *	append records until the log's last LSN reaches UNTIL; record n's
 *	payload is derived from (SEED, n).  After each batch is durable its
 *	last LSN is appended to ACKED_FILE (the acknowledgement the test
 *	holds the cluster to).  Releases as it goes, so the ring laps.
 *	Exits 0 when done (or on SIGTERM), after every replica flushed
 *	everything.
 *
 *   repl-node forge PATH N
 *	append N records of junk to the log at PATH (a replica's) in the
 *	previous epoch, as a primary deposed before committing them would
 *	have left them.
 *
 *   repl-node verify SEED ACKED_FILE PRIMARY REPLICA...
 *	the primary holds every acknowledged LSN still in its ring, each
 *	record byte-exact; every replica's ring is byte-identical to the
 *	primary's over the LSNs both hold, and holds the newest acknowledged.
 *
 * The crash backend is used throughout: a SIGKILL loses exactly what was
 * not persisted.  Environment: REPL_NODE_BATCH (max records per batch),
 * REPL_NODE_TIMEOUT_MS (replica down timeout), REPL_NODE_TLS_DIR (TLS on
 * the control channel with DIR/ca.pem and DIR/NAME.pem + DIR/NAME.key,
 * NAME from REPL_NODE_TLS_NAME, else "primary" or "replica1"; as made by
 * tests/engine/make-test-ca.sh).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "repl.h"
#include "replica.h"
#include "wal.h"
#include "wal_common.h"

#define MAX_LEN 600
static const uint8_t uuid[16] = "repl-node-test!";

static volatile sig_atomic_t stop;

static void
on_signal(int sig)
{
	(void)sig;
	stop = 1;
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

static int
run_replica(int argc, char *argv[])
{
	struct replica_cfg cfg = {
		.backend = RPMA_EXT_MEM_CRASH, .create = 1, .provider = "tcp",
		.addr = "127.0.0.1", .stop = &stop, .ready = say_ready,
	};
	struct sigaction sa = { .sa_handler = on_signal };

	if (argc != 6)
		return 2;
	cfg.path = argv[2];
	cfg.size = strtoull(argv[3], NULL, 0);
	cfg.ctl_port = argv[4];
	cfg.data_port = argv[5];
	cfg.node_id = (uint32_t)atoi(argv[4]);
	cfg.timeout_ms = env_int("REPL_NODE_TIMEOUT_MS", 3000);
	tls_files("replica1", &cfg.tls_ca, &cfg.tls_cert, &cfg.tls_key);
	memcpy(cfg.cluster_uuid, uuid, 16);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	if (replica_run(&cfg) != 0) {
		fprintf(stderr, "repl-node: the replica could not start\n");
		return 1;
	}
	return 0;
}

static int
run_primary(int argc, char *argv[])
{
	struct repl_replica reps[8];
	char hosts[8][64];
	struct repl_cfg cfg = {
		.backend = REPL_BACKEND_CRASH, .node_id = 1, .full_timeout_ms = 30000,
	};
	struct repl *repl = NULL;
	struct repl_status st;
	unsigned char buf[MAX_LEN];
	uint64_t seed, until, lsn = 0;
	int acked_fd, batch_max = env_int("REPL_NODE_BATCH", 8), ret;
	unsigned rnd;

	if (argc < 9 || argc - 8 > 8)
		return 2;
	cfg.path = argv[2];
	cfg.size = strtoull(argv[3], NULL, 0);
	seed = strtoull(argv[4], NULL, 0);
	until = strtoull(argv[5], NULL, 0);
	cfg.quorum = atoi(argv[6]);
	cfg.n_replicas = argc - 8;
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
	tls_files("primary", &cfg.tls_ca, &cfg.tls_cert, &cfg.tls_key);
	memcpy(cfg.cluster_uuid, uuid, 16);
	cfg.create = access(cfg.path, F_OK) != 0;
	{
		/* SIGTERM: stop appending, let the replicas catch up, close */
		struct sigaction sa = { .sa_handler = on_signal };

		sigaction(SIGTERM, &sa, NULL);
	}
	acked_fd = open(argv[7], O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (acked_fd < 0 || (ret = repl_open(&cfg, &repl))) {
		fprintf(stderr, "repl-node: cannot open the primary's log %s\n", cfg.path);
		return 1;
	}
	rnd = (unsigned)(seed ^ (uint64_t)getpid());
	repl_status(repl, &st);
	while (!stop && st.last_lsn < until) {
		int n = 1 + (int)((rnd = rnd * 1103515245 + 12345) >> 16) % batch_max;
		char line[32];

		for (int i = 0; i < n && st.last_lsn < until; i++) {
			uint64_t want = st.last_lsn + 1;
			size_t len = wal_test_len(seed, want, MAX_LEN);

			wal_test_fill(seed, want, buf, len);
			if ((ret = repl_append(repl, buf, len, &lsn)) || lsn != want) {
				fprintf(stderr, "repl-node: append %llu: %s (got %llu)\n",
					(unsigned long long)want, repl_strerror(ret),
					(unsigned long long)lsn);
				return 1;
			}
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
		if (ret) {
			fprintf(stderr, "repl-node: wait %llu: %s\n",
				(unsigned long long)lsn, repl_strerror(ret));
			return 1;
		}
		/* the acknowledgement: from here on, lsn must never be lost */
		snprintf(line, sizeof(line), "%llu\n", (unsigned long long)lsn);
		if (write(acked_fd, line, strlen(line)) != (ssize_t)strlen(line))
			return 1;
		/* the database checkpoints now and then, keeping a few hundred */
		if (lsn % 97 == 0 && lsn > 400)
			repl_release(repl, lsn - 400);
		repl_status(repl, &st);
	}
	/* done: wait until every replica flushed everything, for the verifier */
	for (int tries = 0; tries < 600; tries++) {
		int all = 1;

		for (int i = 0; i < cfg.n_replicas; i++) {
			struct repl_replica_status rs;

			repl_replica_status(repl, i, &rs);
			all &= rs.state == REPL_REPLICA_STREAMING && rs.flushed_lsn >= lsn;
		}
		if (all)
			break;
		usleep(100000);
	}
	repl_close(&repl);
	close(acked_fd);
	return 0;
}

/* --- verify ----------------------------------------------------------- */

static struct wal *
open_image(const char *path, struct rpma_ext_mem **mem)
{
	struct wal *wal = NULL;

	if (rpma_ext_mem_open(RPMA_EXT_MEM_CRASH, path, 0, 0, mem) ||
	    wal_open(*mem, &wal)) {
		fprintf(stderr, "verify: cannot open %s\n", path);
		exit(1);
	}
	return wal;
}

static uint64_t
max_acked(const char *path)
{
	FILE *f = fopen(path, "r");
	unsigned long long v, max = 0;

	if (f == NULL)
		return 0;
	while (fscanf(f, "%llu", &v) == 1)
		if (v > max)
			max = v;
	fclose(f);
	return max;
}

/* ring bytes of the records [from, to] */
static int
same_bytes(struct rpma_ext_mem *ma, struct wal *a, struct rpma_ext_mem *mb,
		struct wal *b, uint64_t from, uint64_t to)
{
	struct wal_pos pa, pb, ea, eb;
	char *xa, *xb;
	struct wal_identity id;
	uint64_t ring;

	if (wal_pos_after(a, from - 1, &pa) || wal_pos_after(b, from - 1, &pb) ||
	    wal_pos_after(a, to, &ea) || wal_pos_after(b, to, &eb))
		return 0;
	if (memcmp(&pa, &pb, sizeof(pa)) || memcmp(&ea, &eb, sizeof(ea)))
		return 0;
	wal_identity(a, &id, &ring);
	rpma_ext_mem_get_ptr(ma, (void **)&xa);
	rpma_ext_mem_get_ptr(mb, (void **)&xb);
	xa += WAL_RING_OFF;
	xb += WAL_RING_OFF;
	if (pa.lap == ea.lap)
		return memcmp(xa + pa.off, xb + pa.off, ea.off - pa.off) == 0;
	return memcmp(xa + pa.off, xb + pa.off, ring - pa.off) == 0 &&
		memcmp(xa, xb, ea.off) == 0;
}

static int
run_forge(int argc, char *argv[])
{
	struct rpma_ext_mem *mem = NULL;
	struct wal *wal;
	unsigned char junk[100];
	struct iovec iov = { junk, sizeof(junk) };
	struct wal_identity id;
	uint64_t lsn = 0, ring;

	if (argc != 4)
		return 2;
	memset(junk, 0xEE, sizeof(junk));
	wal = open_image(argv[2], &mem);
	wal_identity(wal, &id, &ring);
	/* written by the primary of the term before the one it follows */
	if (id.epoch < 0x20000 || wal_set_epoch(wal, id.epoch - 0x10000))
		return 1;
	for (long i = 0; i < atol(argv[3]); i++)
		if (wal_append(wal, &iov, 1, 0, 0, &lsn))
			return 1;
	if (wal_sync(wal, lsn) || wal_set_epoch(wal, id.epoch))
		return 1;
	printf("forge: %s now ends at LSN %llu\n", argv[2], (unsigned long long)lsn);
	wal_close(&wal);
	rpma_ext_mem_close(&mem);
	return 0;
}

static int
run_verify(int argc, char *argv[])
{
	struct rpma_ext_mem *pm = NULL;
	struct wal *pw;
	struct wal_status ps;
	unsigned char got[MAX_LEN], want[MAX_LEN];
	uint64_t seed, acked;
	int bad = 0;

	if (argc < 5)
		return 2;
	seed = strtoull(argv[2], NULL, 0);
	acked = max_acked(argv[3]);
	pw = open_image(argv[4], &pm);
	wal_status(pw, &ps);
	printf("verify: newest acknowledged LSN %llu; primary holds %llu..%llu\n",
		(unsigned long long)acked, (unsigned long long)ps.first_lsn,
		(unsigned long long)ps.last_lsn);
	if (ps.last_lsn < acked) {
		printf("verify: FAIL: the primary lost acknowledged LSNs %llu..%llu\n",
			(unsigned long long)ps.last_lsn + 1, (unsigned long long)acked);
		bad++;
	}
	for (uint64_t l = ps.first_lsn; l && l <= ps.last_lsn; l++) {
		size_t len = 0, wl = wal_test_len(seed, l, MAX_LEN);

		wal_test_fill(seed, l, want, wl);
		if (wal_read(pw, l, got, sizeof(got), &len) || len != wl ||
		    memcmp(got, want, wl)) {
			printf("verify: FAIL: primary LSN %llu is not what was appended\n",
				(unsigned long long)l);
			bad++;
			break;
		}
	}
	for (int i = 5; i < argc; i++) {
		struct rpma_ext_mem *rm = NULL;
		struct wal *rw = open_image(argv[i], &rm);
		struct wal_status rs;
		uint64_t from, to;

		wal_status(rw, &rs);
		from = rs.first_lsn > ps.first_lsn ? rs.first_lsn : ps.first_lsn;
		to = rs.last_lsn < ps.last_lsn ? rs.last_lsn : ps.last_lsn;
		printf("verify: replica %s holds %llu..%llu; identical over %llu..%llu: ",
			argv[i], (unsigned long long)rs.first_lsn,
			(unsigned long long)rs.last_lsn, (unsigned long long)from,
			(unsigned long long)to);
		if (rs.last_lsn < acked || from > to ||
		    !same_bytes(pm, pw, rm, rw, from, to)) {
			printf("NO\n");
			bad++;
		} else {
			printf("yes\n");
		}
		if (rs.last_lsn > ps.last_lsn) {
			printf("verify: FAIL: replica %s holds LSNs the primary does not\n",
				argv[i]);
			bad++;
		}
		wal_close(&rw);
		rpma_ext_mem_close(&rm);
	}
	wal_close(&pw);
	rpma_ext_mem_close(&pm);
	printf("verify: %s\n", bad ? "FAIL" : "ok");
	return bad ? 1 : 0;
}

int
main(int argc, char *argv[])
{
	/* the engine's notices (links up, resyncs, truncations) on stderr */
	enum rpma_log_level level = env_int("REPL_NODE_DEBUG", 0) ?
		RPMA_LOG_LEVEL_DEBUG : RPMA_LOG_LEVEL_NOTICE;

	rpma_log_set_threshold(RPMA_LOG_THRESHOLD, level);
	rpma_log_set_threshold(RPMA_LOG_THRESHOLD_AUX, level);
	if (argc >= 2 && strcmp(argv[1], "replica") == 0)
		return run_replica(argc, argv);
	if (argc >= 2 && strcmp(argv[1], "primary") == 0)
		return run_primary(argc, argv);
	if (argc >= 2 && strcmp(argv[1], "verify") == 0)
		return run_verify(argc, argv);
	if (argc >= 2 && strcmp(argv[1], "forge") == 0)
		return run_forge(argc, argv);
	fprintf(stderr, "usage: repl-node replica|primary|verify ...\n");
	return 2;
}
