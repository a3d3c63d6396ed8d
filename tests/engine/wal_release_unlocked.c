/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * wal_release_unlocked.c -- a release makes its new header generation
 * durable (on a FILE log: an fdatasync, milliseconds on a disk) without
 * the log's lock, so appends go on meanwhile; the space is free only once
 * that generation is durable.
 *
 * The test's own fdatasync() and pwritev2() stand in for libc's (the
 * executable's definitions are the ones the library's calls resolve to):
 * once armed, the next call that makes data durable (an fdatasync, or a
 * pwritev2 with RWF_DSYNC: the file backend's persist of one range)
 * blocks until the test lets it go.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "log/wal.h"
#include "unit.h"

static pthread_mutex_t gate_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate_cond = PTHREAD_COND_INITIALIZER;
static bool gate_armed, gate_entered, gate_open;

static void
gate_pass(void)
{
	pthread_mutex_lock(&gate_lock);
	if (gate_armed) {
		gate_armed = false;
		gate_entered = true;
		pthread_cond_broadcast(&gate_cond);
		while (!gate_open)
			pthread_cond_wait(&gate_cond, &gate_lock);
	}
	pthread_mutex_unlock(&gate_lock);
}

int
fdatasync(int fd)
{
	gate_pass();
	return (int)syscall(SYS_fdatasync, fd);
}

ssize_t
pwritev2(int fd, const struct iovec *iov, int iovcnt, off_t offset, int flags)
{
	if (flags & RWF_DSYNC)
		gate_pass();
	/* 64-bit: the offset's high half is 0 */
	return (ssize_t)syscall(SYS_pwritev2, fd, iov, iovcnt, offset, 0L, flags);
}

/* wait up to ms for *flag under gate_lock; true if it became true */
static bool
gate_wait(bool *flag, int ms)
{
	struct timespec until;
	bool yes;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += ms / 1000;
	until.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&gate_lock);
	while (!*flag && pthread_cond_timedwait(&gate_cond, &gate_lock,
			&until) != ETIMEDOUT)
		;
	yes = *flag;
	pthread_mutex_unlock(&gate_lock);
	return yes;
}

static void
open_gate(void)
{
	pthread_mutex_lock(&gate_lock);
	gate_open = true;
	pthread_cond_broadcast(&gate_cond);
	pthread_mutex_unlock(&gate_lock);
}

struct job {
	struct wal *wal;
	uint64_t lsn;
	int ret;
	bool done;
};

static void *
release_main(void *arg)
{
	struct job *j = arg;

	j->ret = wal_release(j->wal, j->lsn);
	return NULL;
}

static void *
append_main(void *arg)
{
	struct job *j = arg;
	struct iovec iov = { .iov_base = "after", .iov_len = 5 };

	j->ret = wal_append(j->wal, &iov, 1, 7, 1000, &j->lsn);
	pthread_mutex_lock(&gate_lock);
	j->done = true;
	pthread_cond_broadcast(&gate_cond);
	pthread_mutex_unlock(&gate_lock);
	return NULL;
}

static void
test_append_during_release(void)
{
	char path[64];
	struct rpma_ext_mem *mem = NULL;
	struct wal_identity id = { .node_id = 1, .epoch = 1 };
	struct wal *wal = NULL;
	struct wal_status before, during, after;
	struct job rel = { 0 }, app = { 0 };
	pthread_t rt, at;
	char buf[512];
	uint64_t lsn = 0;

	snprintf(path, sizeof(path), "/dev/shm/rpma-wal-release-%d", (int)getpid());
	unlink(path);
	CU_ASSERT_EQUAL_FATAL(rpma_ext_mem_open(RPMA_EXT_MEM_FILE, path, 1 << 20,
		RPMA_EXT_MEM_CREATE, &mem), 0);
	memset(id.cluster_uuid, 0x5a, sizeof(id.cluster_uuid));
	CU_ASSERT_EQUAL_FATAL(wal_format(mem, &id), 0);
	CU_ASSERT_EQUAL_FATAL(wal_open(mem, &wal), 0);
	memset(buf, 'r', sizeof(buf));
	for (int i = 0; i < 100; i++) {
		struct iovec iov = { .iov_base = buf, .iov_len = sizeof(buf) };

		CU_ASSERT_EQUAL_FATAL(wal_append(wal, &iov, 1, 1, 1000, &lsn), 0);
	}
	CU_ASSERT_EQUAL_FATAL(wal_sync(wal, lsn), 0);
	wal_status(wal, &before);
	CU_ASSERT_EQUAL(before.first_lsn, 1);

	/* the release's header persist blocks in fdatasync */
	pthread_mutex_lock(&gate_lock);
	gate_armed = true;
	pthread_mutex_unlock(&gate_lock);
	rel.wal = wal;
	rel.lsn = 50;
	CU_ASSERT_EQUAL_FATAL(pthread_create(&rt, NULL, release_main, &rel), 0);
	CU_ASSERT_FATAL(gate_wait(&gate_entered, 5000));

	/* an append meanwhile: it needs the log's lock, and gets it */
	app.wal = wal;
	CU_ASSERT_EQUAL_FATAL(pthread_create(&at, NULL, append_main, &app), 0);
	if (!gate_wait(&app.done, 3000)) {
		/* the release holds the lock across its persist */
		CU_FAIL("an append waited 3 s for a release's fdatasync");
		open_gate();
		pthread_join(rt, NULL);
		pthread_join(at, NULL);
		goto out;
	}
	/* not free yet: the new checkpoint is not durable */
	wal_status(wal, &during);
	CU_ASSERT_EQUAL(during.first_lsn, 1);
	open_gate();
	pthread_join(rt, NULL);
	pthread_join(at, NULL);
	CU_ASSERT_EQUAL(rel.ret, 0);
	CU_ASSERT_EQUAL(app.ret, 0);
	CU_ASSERT_EQUAL(app.lsn, lsn + 1);
	wal_status(wal, &after);
	CU_ASSERT_EQUAL(after.first_lsn, 51);
	CU_ASSERT(after.used < during.used);

	/* the moved checkpoint is what a reopen finds */
	CU_ASSERT_EQUAL(wal_sync(wal, app.lsn), 0);
	wal_close(&wal);
	CU_ASSERT_EQUAL_FATAL(wal_open(mem, &wal), 0);
	wal_status(wal, &after);
	CU_ASSERT_EQUAL(after.first_lsn, 51);
	CU_ASSERT_EQUAL(after.last_lsn, lsn + 1);
out:
	wal_close(&wal);
	rpma_ext_mem_close(&mem);
	unlink(path);
}

UNIT_MAIN("wal_release_unlocked", UNIT_CASE(test_append_during_release))
