/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * repl_api.c -- librepl's API over the local log: argument checks, open
 * (create, reopen, a missing or corrupt log), append/appendv, durability,
 * read, iterate (order, early stop), release, status, error strings, and
 * the lock that keeps a second process off an open log, TLS files that
 * do not load refused before the log is made or formatted.
 */
#include <fcntl.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "unit.h"
#include "repl.h"

static char dir[] = "/tmp/rpma-repl-XXXXXX";
static char path[256];

static struct repl_cfg
cfg_of(int create)
{
	struct repl_cfg c = { .path = path, .backend = REPL_BACKEND_FILE,
		.size = 1 << 20, .create = create, .node_id = 2, .epoch = 9,
		.full_timeout_ms = 10 };
	return c;
}

static void
api__arguments(void)
{
	struct repl_cfg c = cfg_of(1);
	struct repl *r = UNIT_SENTINEL;

	CU_ASSERT_EQUAL(repl_open(NULL, &r), REPL_E_INVAL);
	CU_ASSERT_EQUAL(repl_open(&c, NULL), REPL_E_INVAL);
	c.backend = 0;
	CU_ASSERT_EQUAL(repl_open(&c, &r), REPL_E_INVAL);
	c = cfg_of(1);
	c.size = 0;
	CU_ASSERT_EQUAL(repl_open(&c, &r), REPL_E_INVAL);
	CU_ASSERT_PTR_EQUAL(r, UNIT_SENTINEL);
	CU_ASSERT_EQUAL(repl_append(NULL, "x", 1, &(uint64_t){0}), REPL_E_INVAL);
	CU_ASSERT_EQUAL(repl_wait_durable(NULL, 1, 0), REPL_E_INVAL);
	CU_ASSERT_EQUAL(repl_read(NULL, 1, NULL, 0, &(size_t){0}), REPL_E_INVAL);
	CU_ASSERT_EQUAL(repl_iterate(NULL, 1, NULL, NULL), REPL_E_INVAL);
	CU_ASSERT_EQUAL(repl_release(NULL, 1), REPL_E_INVAL);
	CU_ASSERT_EQUAL(repl_status(NULL, NULL), REPL_E_INVAL);
	CU_ASSERT_EQUAL(repl_close(NULL), REPL_E_INVAL);
	r = NULL;
	CU_ASSERT_EQUAL(repl_close(&r), 0);
}

/* a flush method the transport cannot do is refused before anything opens */
static void
api__flush_method(void)
{
	struct repl_replica rep = { "127.0.0.1", "1" };
	struct repl_cfg c = cfg_of(1);
	struct repl *r = UNIT_SENTINEL;

	unlink(path);
	c.replicas = &rep;
	c.n_replicas = 1;
	c.quorum = 1;
	c.flush_method = REPL_FLUSH_APM;	/* libfabric tcp: GPSPM only */
	CU_ASSERT_EQUAL(repl_open(&c, &r), REPL_E_INVAL);
	c.provider = "net";
	CU_ASSERT_EQUAL(repl_open(&c, &r), REPL_E_INVAL);
	c.flush_method = 3;
	CU_ASSERT_EQUAL(repl_open(&c, &r), REPL_E_INVAL);
	c.flush_method = -1;
	CU_ASSERT_EQUAL(repl_open(&c, &r), REPL_E_INVAL);
	CU_ASSERT_PTR_EQUAL(r, UNIT_SENTINEL);
	CU_ASSERT_EQUAL(access(path, F_OK), -1);	/* nothing was created */
	/* a single node has no replicas to flush on: any method opens */
	c = cfg_of(1);
	c.flush_method = 3;
	CU_ASSERT_EQUAL(repl_open(&c, &r), REPL_E_INVAL);
	c.flush_method = REPL_FLUSH_APM;
	r = NULL;
	CU_ASSERT_EQUAL(repl_open(&c, &r), 0);
	CU_ASSERT_EQUAL(repl_close(&r), 0);
	unlink(path);
}

static void
api__missing_log(void)
{
	struct repl_cfg c = cfg_of(0);
	struct repl *r = NULL;

	unlink(path);
	CU_ASSERT_EQUAL(repl_open(&c, &r), REPL_E_INVAL);
	CU_ASSERT_PTR_NULL(r);
}

struct seen {
	uint64_t next;
	int stop_at;
};

static int
collect(void *arg, uint64_t lsn, const void *data, size_t len)
{
	struct seen *s = arg;
	char want[32];

	snprintf(want, sizeof(want), "record %llu", (unsigned long long)lsn);
	CU_ASSERT_EQUAL(lsn, s->next);
	CU_ASSERT(len == strlen(want) && memcmp(data, want, len) == 0);
	s->next++;
	return s->stop_at && lsn == (uint64_t)s->stop_at ? 7 : 0;
}

static void
api__lifecycle(void)
{
	struct repl_cfg c = cfg_of(1);
	struct repl *r = NULL;
	struct repl_status st;
	struct seen s;
	char buf[32];
	uint64_t lsn = 0;
	size_t len;

	unlink(path);
	CU_ASSERT_EQUAL_FATAL(repl_open(&c, &r), 0);
	for (int i = 1; i <= 10; i++) {
		char rec[32];
		struct iovec iov[2];
		int n = snprintf(rec, sizeof(rec), "record %d", i);

		iov[0].iov_base = rec;	/* split in two: appendv gathers */
		iov[0].iov_len = 3;
		iov[1].iov_base = rec + 3;
		iov[1].iov_len = (size_t)n - 3;
		CU_ASSERT_EQUAL(repl_appendv(r, iov, 2, 0xC0FFEE00u + (uint64_t)i, &lsn), 0);
		CU_ASSERT_EQUAL(lsn, (uint64_t)i);
	}
	CU_ASSERT_EQUAL(repl_status(r, &st), 0);
	CU_ASSERT_EQUAL(st.durable_lsn, 0);
	CU_ASSERT_EQUAL(repl_wait_durable(r, 10, 100), 0);
	CU_ASSERT_EQUAL(repl_status(r, &st), 0);
	CU_ASSERT_EQUAL(st.durable_lsn, 10);
	CU_ASSERT_EQUAL(st.epoch, 9);
	CU_ASSERT_EQUAL(repl_read(r, 4, buf, sizeof(buf), &len), 0);
	CU_ASSERT(len == 8 && memcmp(buf, "record 4", 8) == 0);
	CU_ASSERT_EQUAL(repl_read(r, 11, buf, sizeof(buf), &len), REPL_E_NOT_FOUND);
	{
		/* what a record says of itself: the client resolves by it */
		struct repl_record_info info;

		CU_ASSERT_EQUAL(repl_record_info(r, 4, &info), 0);
		CU_ASSERT_EQUAL(info.client_id, 0xC0FFEE04u);
		CU_ASSERT_EQUAL(info.epoch, 9);
		CU_ASSERT_EQUAL(info.len, 8);
		CU_ASSERT_EQUAL(repl_record_info(r, 11, &info), REPL_E_NOT_FOUND);
		CU_ASSERT_EQUAL(repl_record_info(r, 4, NULL), REPL_E_INVAL);
		CU_ASSERT_EQUAL(repl_record_info(NULL, 4, &info), REPL_E_INVAL);
	}

	s = (struct seen){ .next = 3 };
	CU_ASSERT_EQUAL(repl_iterate(r, 3, collect, &s), 0);
	CU_ASSERT_EQUAL(s.next, 11);
	s = (struct seen){ .next = 1, .stop_at = 5 };
	CU_ASSERT_EQUAL(repl_iterate(r, 1, collect, &s), 7);	/* stopped by cb */
	CU_ASSERT_EQUAL(s.next, 6);

	{
		/* a retention by size: keep at least keep bytes, and no more */
		uint64_t k, used_after, used_all, keep;

		CU_ASSERT_EQUAL(repl_lsn_keeping(r, 0, &k), 0);
		CU_ASSERT_EQUAL(k, 10);		/* nothing to keep: all of it */
		CU_ASSERT_EQUAL(repl_status(r, &st), 0);
		used_all = st.used_bytes;
		CU_ASSERT_EQUAL(repl_lsn_keeping(r, used_all, &k), 0);
		CU_ASSERT_EQUAL(k, 0);		/* all of it kept: first - 1 */
		CU_ASSERT_EQUAL(repl_lsn_keeping(r, used_all + 1, &k), 0);
		CU_ASSERT_EQUAL(k, 0);
		/* records 1..9 are alike, 10 a little longer: 3.5 of them keeps 4 */
		keep = used_all / 10 * 7 / 2;
		CU_ASSERT_EQUAL(repl_lsn_keeping(r, keep, &k), 0);
		CU_ASSERT_EQUAL(k, 6);
		CU_ASSERT_EQUAL(repl_lsn_keeping(r, used_all / 10 * 4, &k), 0);
		CU_ASSERT_EQUAL(k, 6);
		CU_ASSERT_EQUAL(repl_lsn_keeping(NULL, 1, &k), REPL_E_INVAL);
		CU_ASSERT_EQUAL(repl_lsn_keeping(r, 1, NULL), REPL_E_INVAL);
		CU_ASSERT_EQUAL(repl_release(r, 6), 0);
		CU_ASSERT_EQUAL(repl_status(r, &st), 0);
		used_after = st.used_bytes;
		/* at least keep stays, and no record more than it needs */
		CU_ASSERT(used_after >= keep);
		CU_ASSERT(used_after - used_all / 10 < keep);
		/* asking again after the release: the start moved with it */
		CU_ASSERT_EQUAL(repl_lsn_keeping(r, keep, &k), 0);
		CU_ASSERT_EQUAL(k, 6);
	}
	CU_ASSERT_EQUAL(repl_read(r, 6, buf, sizeof(buf), &len), REPL_E_NOT_FOUND);
	CU_ASSERT_EQUAL(repl_close(&r), 0);
	CU_ASSERT_PTR_NULL(r);

	c = cfg_of(0);
	CU_ASSERT_EQUAL_FATAL(repl_open(&c, &r), 0);
	CU_ASSERT_EQUAL(repl_status(r, &st), 0);
	CU_ASSERT_EQUAL(st.first_lsn, 7);
	CU_ASSERT_EQUAL(st.last_lsn, 10);
	repl_close(&r);
}

static void
api__corrupt_log(void)
{
	struct repl_cfg c = cfg_of(0);
	struct repl *r = NULL;
	char zero[8192] = { 0 };
	int fd = open(path, O_WRONLY);

	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_EQUAL(pwrite(fd, zero, sizeof(zero), 0), (ssize_t)sizeof(zero));
	close(fd);
	CU_ASSERT_EQUAL(repl_open(&c, &r), REPL_E_CORRUPT);
	CU_ASSERT_PTR_NULL(r);
}

/*
 * One process at a time on a log: while another process has it open,
 * repl_open refuses it (REPL_E_LOCKED), also with create (it must not
 * format it), and so does a second open in the same process; once the
 * holder closes, it opens with what the holder wrote.
 */
static void
api__locked(void)
{
	struct repl_cfg c = cfg_of(1);
	struct repl *r = NULL, *again = UNIT_SENTINEL;
	struct repl_status st;
	int up[2], go[2];
	char ok = 0;
	pid_t child;
	int status;

	unlink(path);
	CU_ASSERT_EQUAL_FATAL(repl_open(&c, &r), 0);
	CU_ASSERT_EQUAL_FATAL(repl_close(&r), 0);
	CU_ASSERT_FATAL(pipe(up) == 0 && pipe(go) == 0);
	child = fork();
	CU_ASSERT_FATAL(child >= 0);
	if (child == 0) {
		struct repl_cfg cc = cfg_of(0);
		uint64_t lsn;
		char res = 1;

		/* holds the log with three records until told to go */
		if (repl_open(&cc, &r) == 0 && repl_append(r, "a", 1, &lsn) == 0 &&
		    repl_append(r, "b", 1, &lsn) == 0 &&
		    repl_append(r, "c", 1, &lsn) == 0 &&
		    repl_wait_durable(r, lsn, 1000) == 0)
			res = 0;
		if (write(up[1], &res, 1) != 1 || read(go[0], &res, 1) != 1)
			_exit(2);
		_exit(repl_close(&r) == 0 ? 0 : 1);
	}
	CU_ASSERT_EQUAL_FATAL(read(up[0], &ok, 1), 1);
	CU_ASSERT_EQUAL_FATAL(ok, 0);
	c = cfg_of(0);
	CU_ASSERT_EQUAL(repl_open(&c, &again), REPL_E_LOCKED);
	c = cfg_of(1);
	CU_ASSERT_EQUAL(repl_open(&c, &again), REPL_E_LOCKED);
	CU_ASSERT_PTR_EQUAL(again, UNIT_SENTINEL);
	CU_ASSERT_EQUAL(write(go[1], "x", 1), 1);
	CU_ASSERT_EQUAL(waitpid(child, &status, 0), child);
	CU_ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	/* the holder is gone: it opens, with the holder's records */
	c = cfg_of(0);
	CU_ASSERT_EQUAL_FATAL(repl_open(&c, &r), 0);
	CU_ASSERT_EQUAL(repl_status(r, &st), 0);
	CU_ASSERT_EQUAL(st.last_lsn, 3);
	/* a second open in this process conflicts too */
	again = UNIT_SENTINEL;
	CU_ASSERT_EQUAL(repl_open(&c, &again), REPL_E_LOCKED);
	CU_ASSERT_PTR_EQUAL(again, UNIT_SENTINEL);
	CU_ASSERT_EQUAL(repl_close(&r), 0);
	CU_ASSERT_EQUAL_FATAL(repl_open(&c, &r), 0);
	CU_ASSERT_EQUAL(repl_close(&r), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(repl_strerror(REPL_E_LOCKED), "lock"));
	close(up[0]);
	close(up[1]);
	close(go[0]);
	close(go[1]);
}

/* a bootstrap never formats a medium that holds a log: its records stay */
static void
api__bootstrap_keeps_a_log(void)
{
	struct repl_cfg c = cfg_of(1);
	struct repl *r = NULL;
	uint64_t lsn = 0;
	size_t len = 0;
	char buf[8];

	unlink(path);
	c.bootstrap = 1;
	CU_ASSERT_EQUAL_FATAL(repl_open(&c, &r), 0);
	CU_ASSERT_EQUAL(repl_append(r, "kept", 4, &lsn), 0);
	CU_ASSERT_EQUAL(repl_wait_durable(r, lsn, 1000), 0);
	CU_ASSERT_EQUAL(repl_close(&r), 0);
	CU_ASSERT_EQUAL(repl_open(&c, &r), REPL_E_NOT_MEMBER);
	CU_ASSERT_PTR_NULL(r);
	c = cfg_of(0);
	CU_ASSERT_EQUAL_FATAL(repl_open(&c, &r), 0);
	CU_ASSERT_EQUAL(repl_read(r, lsn, buf, sizeof(buf), &len), 0);
	CU_ASSERT(len == 4 && memcmp(buf, "kept", 4) == 0);
	CU_ASSERT_EQUAL(repl_close(&r), 0);
	unlink(path);
}

/*
 * TLS files that do not load are refused before the log is touched: a
 * primary's log to be made is not made, a replica's log made anew keeps
 * its bytes; repl_tls_check names the file
 */
static void
api__tls_before_the_log(void)
{
	struct repl_replica rep = { "127.0.0.1", "1" };
	struct repl_cfg c = cfg_of(1);
	struct repl_replica_cfg rc = { .path = path, .backend = REPL_BACKEND_FILE,
		.size = 1 << 20, .reinit = 1, .peers = &rep, .n_peers = 1,
		.quorum = 1, .node_id = 2, .addr = "127.0.0.1", .ctl_port = "0",
		.data_port = "0" };
	struct repl *r = UNIT_SENTINEL;
	struct repl_replica_node *node = UNIT_SENTINEL;
	char garbage[300], why[600], want[700], before[4096], after[4096];
	int fd;

	snprintf(garbage, sizeof(garbage), "%s/garbage.pem", dir);
	fd = open(garbage, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_EQUAL(write(fd, "not PEM\n", 8), 8);
	close(fd);
	CU_ASSERT_EQUAL(repl_tls_check(garbage, garbage, garbage, why,
		sizeof(why)), REPL_E_INVAL);
	snprintf(want, sizeof(want), "TLS: CA file %s: no certificate or not PEM",
		garbage);
	CU_ASSERT_STRING_EQUAL(why, want);
	CU_ASSERT_EQUAL(repl_tls_check(NULL, garbage, garbage, why, sizeof(why)),
		REPL_E_INVAL);

	/* a primary's first start */
	unlink(path);
	c.replicas = &rep;
	c.n_replicas = 1;
	c.quorum = 1;
	c.bootstrap = 1;
	c.tls_ca = c.tls_cert = c.tls_key = garbage;
	CU_ASSERT_EQUAL(repl_open(&c, &r), REPL_E_INVAL);
	CU_ASSERT_PTR_EQUAL(r, UNIT_SENTINEL);
	CU_ASSERT_NOT_EQUAL(access(path, F_OK), 0);

	/* a replica made anew over a log: its bytes stay */
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	CU_ASSERT_FATAL(fd >= 0);
	memset(before, 0xab, sizeof(before));
	CU_ASSERT_EQUAL(write(fd, before, sizeof(before)), (ssize_t)sizeof(before));
	CU_ASSERT_EQUAL(ftruncate(fd, 1 << 20), 0);
	rc.tls_ca = rc.tls_cert = rc.tls_key = garbage;
	CU_ASSERT_EQUAL(repl_replica_open(&rc, &node), REPL_E_INVAL);
	CU_ASSERT_PTR_EQUAL(node, UNIT_SENTINEL);
	CU_ASSERT_EQUAL(pread(fd, after, sizeof(after), 0), (ssize_t)sizeof(after));
	CU_ASSERT_EQUAL(memcmp(before, after, sizeof(after)), 0);
	close(fd);
	unlink(path);
	unlink(garbage);
}

static void
api__strerror(void)
{
	int codes[] = { REPL_E_INVAL, REPL_E_NOMEM, REPL_E_IO, REPL_E_CORRUPT,
		REPL_E_FULL, REPL_E_TOO_BIG, REPL_E_NOT_FOUND, REPL_E_LOCKED,
		REPL_E_NOT_MEMBER, REPL_E_SUPERSEDED, REPL_E_TRANSPORT, REPL_E_BLANK,
		REPL_E_NO_PEERS, REPL_E_OTHER_CLUSTER };

	CU_ASSERT_STRING_EQUAL(repl_strerror(0), "Success");
	for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++)
		CU_ASSERT_STRING_NOT_EQUAL(repl_strerror(codes[i]), "Unknown error");
	CU_ASSERT_STRING_EQUAL(repl_strerror(-1), "Unknown error");
}

int
main(void)
{
	static CU_TestInfo cases[] = {
		UNIT_CASE(api__arguments),
		UNIT_CASE(api__flush_method),
		UNIT_CASE(api__missing_log),
		UNIT_CASE(api__lifecycle),
		UNIT_CASE(api__corrupt_log),
		UNIT_CASE(api__locked),
		UNIT_CASE(api__bootstrap_keeps_a_log),
		UNIT_CASE(api__tls_before_the_log),
		UNIT_CASE(api__strerror),
		CU_TEST_INFO_NULL,
	};
	int ret;

	if (mkdtemp(dir) == NULL)
		return 99;
	snprintf(path, sizeof(path), "%s/log", dir);
	ret = unit_run("repl api", cases);
	unlink(path);
	rmdir(dir);
	return ret;
}
