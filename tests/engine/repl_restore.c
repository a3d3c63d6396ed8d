/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * repl_restore.c -- archiving and restoring through librepl's API
 * (repl_iterate_records, repl_replica_iterate_records, repl_restore_*):
 *
 *  1. a primary with one replica (in threads, crash-backend logs in
 *     /dev/shm) appends, is restarted (a promotion: a second epoch
 *     start), appends more: repl_iterate_records sees every LSN from 1
 *     on, the epoch starts flagged, the payloads and client ids as
 *     appended; the replica's repl_replica_iterate_records the same; a
 *     record not yet committed (the replica stopped) is not seen, though
 *     repl_iterate sees it;
 *  2. those records restored into a new log: repl_reader_walk of it gives
 *     exactly them (LSN, epoch, client id, payload, epoch start), its
 *     header says restored, epoch the last record's, no membership;
 *  3. a restore of more than the ring holds keeps the newest records,
 *     the checkpoint at the first kept one (small records over many laps,
 *     and records larger than the restore's write buffer);
 *  4. refused: a record out of order, not contiguous, an epoch going
 *     down, an epoch start with a payload, one larger than the ring, a
 *     path that exists; abort removes the file;
 *  5. the restored log bootstraps a new cluster (a new, empty replica):
 *     a new epoch above the log's, configuration epoch 1, the next append
 *     at the next LSN, the replica holding the same records
 *     (repl_verify); the log is no longer marked restored, and a second
 *     bootstrap over it is refused, as is one over an ordinary log;
 *  6. a GiB of 4 KiB records restored into a 64 MiB log in /dev/shm,
 *     timed (under 30 s).
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "repl.h"
#include "../lib/test_ports.h"

#define NAME "repl_restore"
#define LOG_SIZE (1u << 20)
#define N1 40
#define N2 60

#define CHECK(cond) do { if (!(cond)) { fprintf(stderr, NAME ": %s:%d: %s " \
	"failed\n", __FILE__, __LINE__, #cond); failed = 1; } } while (0)

static int failed;
static const uint8_t uuid_a[16] = "restore-source!";
static const uint8_t uuid_b[16] = "restore-target!";

/* a record as the tests keep it */
struct rec {
	uint64_t lsn, epoch, client_id;
	size_t len;
	uint8_t *data;
	int epoch_start;
};

struct recs {
	struct rec *r;
	size_t n, cap;
	uint64_t stop_after;	/* the callback stops after this many (0: never) */
};

static int
keep(void *arg, const struct repl_log_record *rec)
{
	struct recs *v = arg;
	struct rec *r;

	if (v->n == v->cap) {
		v->cap = v->cap ? 2 * v->cap : 256;
		v->r = realloc(v->r, v->cap * sizeof(*v->r));
		if (v->r == NULL)
			exit(99);
	}
	r = &v->r[v->n++];
	*r = (struct rec){ rec->lsn, rec->epoch, rec->client_id, rec->len, NULL,
		rec->epoch_start };
	if ((r->data = malloc(rec->len + 1)) == NULL)
		exit(99);
	if (rec->len)
		memcpy(r->data, rec->data, rec->len);
	return v->stop_after && v->n == v->stop_after ? 7 : 0;
}

static void
recs_free(struct recs *v)
{
	for (size_t i = 0; i < v->n; i++)
		free(v->r[i].data);
	free(v->r);
	memset(v, 0, sizeof(*v));
}

static bool
rec_equal(const struct rec *a, const struct rec *b)
{
	return a->lsn == b->lsn && a->epoch == b->epoch &&
		a->client_id == b->client_id && a->len == b->len &&
		a->epoch_start == b->epoch_start &&
		memcmp(a->data, b->data, a->len) == 0;
}

static struct repl_log_record
as_log_record(const struct rec *r)
{
	return (struct repl_log_record){ .lsn = r->lsn, .epoch = r->epoch,
		.client_id = r->client_id, .len = r->len, .data = r->data,
		.epoch_start = r->epoch_start };
}

/* restore v into path; 0 or the first failing call's result */
static int
restore(const char *path, uint64_t size, const uint8_t *uuid, const struct recs *v)
{
	struct repl_restore_cfg cfg = { path, size, uuid, 1 };
	struct repl_restore *r = NULL;
	int ret;

	if ((ret = repl_restore_open(&cfg, &r)))
		return ret;
	for (size_t i = 0; i < v->n; i++) {
		struct repl_log_record lr = as_log_record(&v->r[i]);

		if ((ret = repl_restore_add(r, &lr))) {
			repl_restore_abort(&r);
			return ret;
		}
	}
	return repl_restore_finish(&r);
}

/* the log at path walked offline, and its header */
static int
walk(const char *path, struct recs *out, struct repl_log_header *h)
{
	struct repl_reader *rd = NULL;
	char why[256];
	int ret;

	if ((ret = repl_reader_open(path, &rd, why, sizeof(why)))) {
		fprintf(stderr, NAME ": %s\n", why);
		return ret;
	}
	ret = repl_reader_header(rd, h);
	if (ret == 0)
		ret = repl_reader_walk(rd, keep, out, NULL);
	repl_reader_close(&rd);
	return ret;
}

/* ---- nodes ---------------------------------------------------------- */

struct node {
	struct repl_replica_node *node;
	pthread_t thread;
	int ret;
	char path[128], ctl[16], data[16];
};

static void *
node_main(void *arg)
{
	struct node *n = arg;

	n->ret = repl_replica_run(n->node);
	return NULL;
}

static int
replica_start(struct node *n, const char *tag, int port, const uint8_t *uuid,
		uint32_t id)
{
	struct repl_replica_cfg c = { .path = n->path, .backend = REPL_BACKEND_CRASH,
		.size = LOG_SIZE, .create = 1, .node_id = id, .provider = "tcp",
		.addr = "127.0.0.1", .ctl_port = n->ctl, .data_port = n->data,
		.timeout_ms = 5000 };
	int ret;

	snprintf(n->path, sizeof(n->path), "/dev/shm/rpma-restore-%d-%s",
		(int)getpid(), tag);
	snprintf(n->ctl, sizeof(n->ctl), "%d", port);
	snprintf(n->data, sizeof(n->data), "%d", port + 1);
	memcpy(c.cluster_uuid, uuid, 16);
	if ((ret = repl_replica_open(&c, &n->node)))
		return ret;
	if (pthread_create(&n->thread, NULL, node_main, n))
		exit(99);
	return 0;
}

static void
replica_end(struct node *n)
{
	if (n->node == NULL)
		return;
	repl_replica_stop(n->node);
	pthread_join(n->thread, NULL);
	CHECK(n->ret == 0);
	repl_replica_close(&n->node);
	unlink(n->path);
}

static int
primary_open(const char *path, const struct node *rep, const uint8_t *uuid,
		bool bootstrap, struct repl **p)
{
	struct repl_replica list[1] = { { "127.0.0.1", rep->ctl } };
	struct repl_cfg c = { .path = path, .backend = REPL_BACKEND_CRASH,
		.size = LOG_SIZE, .create = bootstrap, .bootstrap = bootstrap,
		.node_id = 1, .full_timeout_ms = 5000, .replicas = list,
		.n_replicas = 1, .quorum = 1, .down_timeout_ms = 2000,
		.heartbeat_ms = 100, .promote_wait_ms = 10000 };

	memcpy(c.cluster_uuid, uuid, 16);
	return repl_open(&c, p);
}

static void
payload(uint64_t k, char *buf, size_t *len)
{
	*len = (size_t)snprintf(buf, 128, "record %llu %.*s", (unsigned long long)k,
		(int)(k % 50), "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx");
}

static int
append_n(struct repl *p, uint64_t k0, int n, uint64_t *last)
{
	for (int i = 0; i < n; i++) {
		char buf[128];
		struct iovec iov = { buf, 0 };
		int ret;

		payload(k0 + (uint64_t)i, buf, &iov.iov_len);
		if ((ret = repl_appendv(p, &iov, 1, 500 + (k0 + (uint64_t)i) % 9, last)))
			return ret;
	}
	return repl_wait_durable(p, *last, 10000);
}

static int
count_plain(void *arg, uint64_t lsn, const void *data, size_t len)
{
	(void)lsn, (void)data, (void)len;
	++*(uint64_t *)arg;
	return 0;
}

/* ---- 1 and 2 ------------------------------------------------------------ */

static void
source_records(int base, struct recs *src)
{
	char ppath[128];
	struct node rep = { 0 };
	struct repl *p = NULL;
	struct repl_replica_info info;
	struct recs part = { 0 }, onrep = { 0 };
	uint64_t last = 0, e1, e2, plain = 0;
	size_t k = 0;

	snprintf(ppath, sizeof(ppath), "/dev/shm/rpma-restore-%d-p", (int)getpid());
	CHECK(replica_start(&rep, "r", base, uuid_a, 11) == 0);
	CHECK(primary_open(ppath, &rep, uuid_a, true, &p) == 0);
	if (p == NULL)
		goto out;
	CHECK(append_n(p, 0, N1, &last) == 0);
	CHECK(repl_close(&p) == 0);
	/* a restart is a promotion: the second epoch's first record */
	CHECK(primary_open(ppath, &rep, uuid_a, false, &p) == 0);
	if (p == NULL)
		goto out;
	CHECK(append_n(p, N1, N2, &last) == 0);
	CHECK(last == N1 + N2 + 2);

	CHECK(repl_iterate_records(p, 0, keep, src) == 0);
	CHECK(src->n == N1 + N2 + 2);
	e1 = src->n ? src->r[0].epoch : 0;
	e2 = src->n ? src->r[src->n - 1].epoch : 0;
	CHECK(e1 != 0 && e2 > e1);
	for (size_t i = 0; i < src->n; i++) {
		const struct rec *r = &src->r[i];
		bool start = i == 0 || i == N1 + 1;
		char buf[128];
		size_t len;

		CHECK(r->lsn == i + 1);
		CHECK(r->epoch_start == start);
		CHECK(r->epoch == (i <= N1 ? e1 : e2));
		if (start) {
			CHECK(r->len == 0 && r->client_id == 0);
			continue;
		}
		payload(k, buf, &len);
		CHECK(r->len == len && memcmp(r->data, buf, len) == 0);
		CHECK(r->client_id == 500 + k % 9);
		k++;
	}
	/* from an LSN on; a callback's stop */
	part.stop_after = 5;
	CHECK(repl_iterate_records(p, 60, keep, &part) == 7);
	CHECK(part.n == 5 && part.r[0].lsn == 60 && part.r[4].lsn == 64);
	CHECK(repl_iterate_records(p, 0, NULL, &part) == REPL_E_INVAL);
	CHECK(repl_iterate_records(NULL, 0, keep, &part) == REPL_E_INVAL);
	recs_free(&part);

	/* the replica: the same, once its commit point reached the end */
	CHECK(repl_replica_wait(rep.node, last, 10000) == 0);
	CHECK(repl_replica_info(rep.node, &info) == 0);
	CHECK(info.readable_lsn == last);
	CHECK(repl_replica_iterate_records(rep.node, 0, keep, &onrep) == 0);
	CHECK(onrep.n == src->n);
	for (size_t i = 0; i < onrep.n && i < src->n; i++)
		CHECK(rec_equal(&onrep.r[i], &src->r[i]));
	CHECK(repl_replica_iterate_records(NULL, 0, keep, &onrep) == REPL_E_INVAL);
	recs_free(&onrep);

	/* not committed (its replica is gone): not an archiver's */
	replica_end(&rep);
	CHECK(repl_append(p, "late", 4, &last) == 0);
	CHECK(repl_iterate(p, 0, count_plain, &plain) == 0);
	CHECK(plain == N1 + N2 + 1);
	CHECK(repl_iterate_records(p, 0, keep, &part) == 0);
	CHECK(part.n == src->n);
	recs_free(&part);
	printf(NAME ": %zu records, LSNs 1..%llu, epoch starts at 1 and %d "
		"(epochs %llu, %llu), equal on the replica\n", src->n,
		(unsigned long long)src->n, N1 + 2, (unsigned long long)e1,
		(unsigned long long)e2);
out:
	repl_close(&p);
	replica_end(&rep);
	unlink(ppath);
}

static void
restore_equal(const struct recs *src, const char *path)
{
	struct repl_log_header h;
	struct recs back = { 0 };

	CHECK(restore(path, LOG_SIZE, uuid_b, src) == 0);
	CHECK(walk(path, &back, &h) == 0);
	CHECK(back.n == src->n);
	for (size_t i = 0; i < back.n && i < src->n; i++)
		CHECK(rec_equal(&back.r[i], &src->r[i]));
	CHECK(h.restored == 1);
	CHECK(h.epoch == src->r[src->n - 1].epoch);
	CHECK(h.membership.config_epoch == 0);
	CHECK(h.clean == 1 && h.promise_pending == 0);
	CHECK(h.node_id == 1 && memcmp(h.cluster_uuid, uuid_b, 16) == 0);
	CHECK(h.checkpoint_lsn == 1 && h.file_size == LOG_SIZE);
	recs_free(&back);
	/* never over a file */
	CHECK(restore(path, LOG_SIZE, uuid_b, src) == REPL_E_INVAL);
	CHECK(walk(path, &back, &h) == 0 && back.n == src->n && h.restored);
	recs_free(&back);
	printf(NAME ": restored and walked back: the same %zu records, header "
		"restored, epoch %llu, no membership\n", src->n,
		(unsigned long long)h.epoch);
}

/* ---- 3 and 4 -------------------------------------------------------------- */

/* records larger than the restore's write buffer (8 MiB), around small ones */
static void
restore_large(const char *path)
{
	const size_t big = (9u << 20) + 5;
	struct recs src = { 0 }, back = { 0 };
	struct repl_log_header h;
	uint8_t *buf = malloc(big);

	if (buf == NULL)
		exit(99);
	for (uint64_t i = 0; i < 9; i++) {
		struct repl_log_record lr = { .lsn = 50 + i, .epoch = 0x10001,
			.client_id = i, .len = i % 2 ? big : 100, .data = buf };

		for (size_t b = 0; b < lr.len; b += 4096)
			buf[b] = (uint8_t)(i * 13 + b / 4096);
		keep(&src, &lr);
	}
	free(buf);
	/* 32 MiB: the three newest big ones and what follows the oldest kept */
	CHECK(restore(path, 32u << 20, uuid_b, &src) == 0);
	CHECK(walk(path, &back, &h) == 0);
	CHECK(back.n >= 5 && back.n < src.n);
	CHECK(back.n && back.r[back.n - 1].lsn == 58);
	for (size_t i = 0; i < back.n; i++)
		CHECK(rec_equal(&back.r[i], &src.r[back.r[i].lsn - 50]));
	printf(NAME ": records of 9 MiB restored into a 32 MiB log: LSNs %llu..58 "
		"kept, equal\n", back.n ? (unsigned long long)back.r[0].lsn : 0ull);
	recs_free(&back);
	recs_free(&src);
	unlink(path);
}

static void
restore_wraps(const char *path)
{
	const uint64_t first = 1000, n = 3000, size = 8192 + 65536;
	struct recs src = { 0 }, back = { 0 };
	struct repl_log_header h;
	uint64_t bytes = 0;

	for (uint64_t i = 0; i < n; i++) {
		uint8_t buf[400];
		struct repl_log_record lr = { .lsn = first + i,
			.epoch = ((i / 700 + 1) << 16) | 3, .client_id = i * 31,
			.len = (size_t)((i * 37) % 397), .data = buf,
			.epoch_start = i % 700 == 0 };

		if (lr.epoch_start)
			lr.len = lr.client_id = 0;
		for (size_t b = 0; b < lr.len; b++)
			buf[b] = (uint8_t)(i + b * 7);
		bytes += 40 + ((lr.len + 7) & ~(size_t)7);
		keep(&src, &lr);
	}
	CHECK(restore(path, size, uuid_b, &src) == 0);
	CHECK(walk(path, &back, &h) == 0);
	CHECK(back.n > 100 && back.n < n);
	CHECK(back.n && back.r[back.n - 1].lsn == first + n - 1);
	CHECK(back.n && h.checkpoint_lsn == back.r[0].lsn);
	for (size_t i = 0; i < back.n; i++) {
		uint64_t at = back.r[i].lsn - first;

		CHECK(back.r[i].lsn == back.r[0].lsn + i);
		CHECK(at < n && rec_equal(&back.r[i], &src.r[at]));
	}
	if (back.n)
		CHECK(h.checkpoint_epoch == src.r[back.r[0].lsn - first - 1].epoch);
	CHECK(h.epoch == src.r[n - 1].epoch && h.restored);
	printf(NAME ": %llu records (%llu KiB in the ring) into a 64 KiB ring: "
		"the newest %zu kept, LSNs %llu..%llu\n", (unsigned long long)n,
		(unsigned long long)bytes >> 10, back.n,
		back.n ? (unsigned long long)back.r[0].lsn : 0ull,
		back.n ? (unsigned long long)back.r[back.n - 1].lsn : 0ull);
	recs_free(&back);
	recs_free(&src);
	unlink(path);
}

static void
restore_refusals(const char *path)
{
	struct repl_restore_cfg cfg = { path, LOG_SIZE, uuid_b, 1 };
	struct repl_restore_cfg small = { path, 8192, uuid_b, 1 };
	struct repl_restore *r = NULL;
	static uint8_t big[LOG_SIZE];
	struct repl_log_record lr = { .lsn = 5, .epoch = 0x20001, .len = 3,
		.data = "abc" };

	CHECK(repl_restore_open(NULL, &r) == REPL_E_INVAL);
	CHECK(repl_restore_open(&small, &r) == REPL_E_INVAL);
	CHECK(access(path, F_OK) != 0);
	CHECK(repl_restore_open(&cfg, &r) == 0);
	if (r == NULL)
		return;
	CHECK(repl_restore_add(r, NULL) == REPL_E_INVAL);
	CHECK(repl_restore_add(r, &lr) == 0);
	lr.lsn = 7;			/* a hole */
	CHECK(repl_restore_add(r, &lr) == REPL_E_INVAL);
	lr.lsn = 5;			/* again */
	CHECK(repl_restore_add(r, &lr) == REPL_E_INVAL);
	lr.lsn = 4;			/* back */
	CHECK(repl_restore_add(r, &lr) == REPL_E_INVAL);
	lr.lsn = 6;
	lr.epoch = 0x10001;		/* an epoch going down */
	CHECK(repl_restore_add(r, &lr) == REPL_E_INVAL);
	lr.epoch = 0x30001;
	lr.epoch_start = 1;		/* with a payload */
	CHECK(repl_restore_add(r, &lr) == REPL_E_INVAL);
	lr.epoch_start = 0;
	lr.epoch = 1ull << 32;		/* beyond the format's */
	CHECK(repl_restore_add(r, &lr) == REPL_E_INVAL);
	lr.epoch = 0x30001;
	lr.data = big;
	lr.len = sizeof(big);		/* larger than the ring */
	CHECK(repl_restore_add(r, &lr) == REPL_E_TOO_BIG);
	lr.data = "def";
	lr.len = 3;
	CHECK(repl_restore_add(r, &lr) == 0);	/* the refusals changed nothing */
	CHECK(access(path, F_OK) == 0);
	repl_restore_abort(&r);
	CHECK(r == NULL);
	CHECK(access(path, F_OK) != 0 && errno == ENOENT);
	repl_restore_abort(&r);		/* nothing: harmless */
	CHECK(repl_restore_finish(&r) == REPL_E_INVAL);
	printf(NAME ": holes, repeats, epochs going down, an epoch start with a "
		"payload and a record larger than the ring refused; abort removed "
		"the file\n");
}

/* ---- 5 -------------------------------------------------------------------- */

static void
bootstrap_restored(int base, const struct recs *src, const char *path)
{
	struct node rep = { 0 };
	struct repl *p = NULL;
	struct repl_status st;
	struct repl_verify_result vr;
	struct repl_log_header h;
	struct recs now = { 0 };
	char other[160];
	uint64_t last = 0, e_log = src->r[src->n - 1].epoch;

	CHECK(replica_start(&rep, "r2", base + 2, uuid_b, 12) == 0);
	CHECK(primary_open(path, &rep, uuid_b, true, &p) == 0);
	if (p == NULL)
		goto out;
	CHECK(repl_status(p, &st) == 0);
	CHECK(st.epoch > e_log);
	CHECK(st.config_epoch == 1);
	CHECK(st.first_lsn == 1 && st.last_lsn == src->n + 1);
	CHECK(repl_append(p, "after", 5, &last) == 0);
	CHECK(last == src->n + 2);
	CHECK(repl_wait_durable(p, last, 15000) == 0);
	CHECK(repl_iterate_records(p, 0, keep, &now) == 0);
	CHECK(now.n == src->n + 2);
	for (size_t i = 0; i < src->n && i < now.n; i++)
		CHECK(rec_equal(&now.r[i], &src->r[i]));
	CHECK(now.n > src->n && now.r[src->n].epoch_start &&
		now.r[src->n].epoch == st.epoch);
	CHECK(repl_verify(p, 0, 1, last, &vr) == 0);
	CHECK(vr.from == 1 && vr.to == last && vr.mismatches == 0);
	recs_free(&now);
	CHECK(repl_close(&p) == 0);
	CHECK(walk(path, &now, &h) == 0);
	CHECK(h.restored == 0 && h.membership.config_epoch == 1);
	recs_free(&now);
	/* taken once: a member now, so a second bootstrap is refused */
	CHECK(primary_open(path, &rep, uuid_b, true, &p) == REPL_E_NOT_MEMBER);
	CHECK(p == NULL);
	printf(NAME ": the restored log bootstrapped a cluster: epoch %llu above "
		"%llu, next LSN %llu, the replica verified equal; a second "
		"bootstrap refused\n", (unsigned long long)st.epoch,
		(unsigned long long)e_log, (unsigned long long)last);

	/* a restore of another cluster's id is not taken */
	snprintf(other, sizeof(other), "%s-other", path);
	CHECK(restore(other, LOG_SIZE, uuid_a, src) == 0);
	CHECK(primary_open(other, &rep, uuid_b, true, &p) == REPL_E_OTHER_CLUSTER);
	unlink(other);
out:
	repl_close(&p);
	replica_end(&rep);
}

/* an ordinary log that exists is refused by a bootstrap, as before */
static void
bootstrap_ordinary(const char *path)
{
	struct repl_cfg c = { .path = path, .backend = REPL_BACKEND_CRASH,
		.size = LOG_SIZE, .create = 1, .node_id = 1 };
	struct repl_replica list[1] = { { "127.0.0.1", "1" } };
	struct repl *p = NULL;

	memcpy(c.cluster_uuid, uuid_b, 16);
	CHECK(repl_open(&c, &p) == 0);
	CHECK(repl_append(p, "x", 1, &(uint64_t){ 0 }) == 0);
	CHECK(repl_close(&p) == 0);
	c.bootstrap = 1;
	c.replicas = list;
	c.n_replicas = 1;
	c.quorum = 1;
	CHECK(repl_open(&c, &p) == REPL_E_NOT_MEMBER);
	unlink(path);
}

/* ---- 6 -------------------------------------------------------------------- */

static void
restore_speed(const char *path)
{
	const uint64_t n = (1u << 30) / 4096, size = 64u << 20;
	struct repl_restore_cfg cfg = { path, size, uuid_b, 1 };
	struct repl_restore *r = NULL;
	struct repl_log_header h;
	struct repl_reader *rd = NULL;
	struct repl_log_summary sum;
	static uint8_t buf[4096];
	struct timespec t0, t1;
	double s;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	CHECK(repl_restore_open(&cfg, &r) == 0);
	if (r == NULL)
		return;
	for (uint64_t i = 0; i < n; i++) {
		struct repl_log_record lr = { .lsn = 1 + i, .epoch = 0x10001,
			.client_id = i, .len = sizeof(buf), .data = buf };

		memcpy(buf, &i, sizeof(i));
		if (repl_restore_add(r, &lr) != 0) {
			CHECK(!"an add failed");
			break;
		}
	}
	CHECK(repl_restore_finish(&r) == 0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	CHECK(repl_reader_open(path, &rd, NULL, 0) == 0);
	if (rd) {
		CHECK(repl_reader_header(rd, &h) == 0 && h.restored);
		CHECK(repl_reader_summary(rd, &sum) == 0);
		CHECK(sum.last_lsn == n && sum.records > 15000);
		CHECK(sum.end.damaged == 0);
		repl_reader_close(&rd);
	}
	CHECK(s < 30.0);
	printf(NAME ": 1 GiB of 4 KiB records restored into a 64 MiB log in "
		"%.1f s (the newest %llu kept)\n", s,
		(unsigned long long)sum.records);
	unlink(path);
}

int
main(void)
{
	int base = test_ports(8);
	struct recs src = { 0 };
	char path[128];

	snprintf(path, sizeof(path), "/dev/shm/rpma-restore-%d-log", (int)getpid());
	source_records(base, &src);
	if (src.n != N1 + N2 + 2) {
		fprintf(stderr, NAME ": no source records: stopping\n");
		return 1;
	}
	restore_equal(&src, path);
	bootstrap_restored(base, &src, path);
	unlink(path);
	bootstrap_ordinary(path);
	restore_wraps(path);
	restore_large(path);
	restore_refusals(path);
	restore_speed(path);
	recs_free(&src);
	unlink(path);
	return failed;
}
