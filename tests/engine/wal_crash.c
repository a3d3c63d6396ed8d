/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * wal_crash.c -- the local log across SIGKILL, on the crash backend with
 * eviction noise (each persist also writes random unpersisted lines, as a
 * CPU's cache would): a child appends records of random sizes, syncs, and
 * reports each synced (acknowledged) LSN on a pipe; the parent kills it at
 * a random moment, reopens the image and checks that every acknowledged
 * record is there byte-exact and that everything recovered is exactly what
 * was written.  200 rounds, the log carried from one to the next (small
 * ring: it wraps many times).  The seed is printed; WAL_CRASH_SEED repeats.
 */
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "unit.h"
#include "log/wal.h"
#include "wal_common.h"

#define ROUNDS 200
#define RING (64 * 1024)
#define MAXLEN 3000

static char path[64];
static uint64_t seed;

static void
child(int ack_fd)
{
	struct rpma_ext_mem *mem = NULL;
	struct wal *wal = NULL;
	struct wal_status st;
	unsigned char buf[MAXLEN];

	if (rpma_ext_mem_open(RPMA_EXT_MEM_CRASH, path, 0, RPMA_EXT_MEM_EVICTION_NOISE,
			&mem) || wal_open(mem, &wal))
		_exit(2);
	wal_status(wal, &st);
	for (uint64_t lsn = st.last_lsn + 1;; lsn++) {
		size_t len = wal_test_len(seed, lsn, MAXLEN);
		struct iovec iov = { buf, len };
		uint64_t got;

		wal_test_fill(seed, lsn, buf, len);
		if (wal_append(wal, &iov, 1, lsn, 1000, &got) || got != lsn)
			_exit(3);
		if (lsn % 3 == 0) {	/* groups of three */
			if (wal_sync(wal, lsn))
				_exit(4);
			if (write(ack_fd, &lsn, sizeof(lsn)) != sizeof(lsn))
				_exit(5);
			/* keep about the last 8 records */
			if (lsn > 8 && wal_release(wal, lsn - 8))
				_exit(6);
		}
	}
}

static void
wal__sigkill_rounds_keep_every_acknowledged_record(void)
{
	struct rpma_ext_mem *mem = NULL;
	struct wal_identity id = { .node_id = 1, .epoch = 1 };
	struct wal *wal = NULL;
	uint64_t acked_max = 0, recovered_total = 0;
	unsigned rnd = (unsigned)seed;

	CU_ASSERT_FATAL(rpma_ext_mem_open(RPMA_EXT_MEM_CRASH, path, 8192 + RING,
		RPMA_EXT_MEM_CREATE, &mem) == 0);
	CU_ASSERT_FATAL(wal_format(mem, &id) == 0);
	CU_ASSERT_FATAL(rpma_ext_mem_close(&mem) == 0);

	for (int round = 0; round < ROUNDS; round++) {
		struct wal_status st;
		struct timespec until;
		int fds[2], status;
		uint64_t acked = 0, v;
		pid_t pid;

		CU_ASSERT_FATAL(pipe(fds) == 0);
		fflush(NULL);
		pid = fork();
		CU_ASSERT_FATAL(pid >= 0);
		if (pid == 0) {
			close(fds[0]);
			child(fds[1]);
		}
		close(fds[1]);
		/* let it run 1..10 ms, reading acknowledgements meanwhile */
		clock_gettime(CLOCK_MONOTONIC, &until);
		until.tv_nsec += (long)(1 + rand_r(&rnd) % 10) * 1000000;
		for (;;) {
			struct timespec now;
			clock_gettime(CLOCK_MONOTONIC, &now);
			if (now.tv_sec > until.tv_sec + (until.tv_nsec >= 1000000000) ||
			    (now.tv_sec == until.tv_sec && now.tv_nsec >= until.tv_nsec))
				break;
			struct pollfd pfd = { .fd = fds[0], .events = POLLIN };
			if (poll(&pfd, 1, 1) == 1 && read(fds[0], &v, sizeof(v)) == sizeof(v))
				acked = v;
		}
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		/* acknowledgements still in the pipe count too */
		while (read(fds[0], &v, sizeof(v)) == sizeof(v))
			acked = v;
		close(fds[0]);
		CU_ASSERT_FATAL(WIFSIGNALED(status));
		if (acked > acked_max)
			acked_max = acked;

		CU_ASSERT_FATAL(rpma_ext_mem_open(RPMA_EXT_MEM_CRASH, path, 0, 0, &mem) == 0);
		CU_ASSERT_FATAL(wal_open(mem, &wal) == 0);
		wal_status(wal, &st);
		CU_ASSERT(st.last_lsn >= acked_max);
		if (st.last_lsn < acked_max)
			printf("round %d: acknowledged %llu, recovered up to %llu\n", round,
				(unsigned long long)acked_max, (unsigned long long)st.last_lsn);
		for (uint64_t l = st.first_lsn; l && l <= st.last_lsn; l++) {
			unsigned char got[MAXLEN], want[MAXLEN];
			size_t len = 0, wl = wal_test_len(seed, l, MAXLEN);

			CU_ASSERT_FATAL(wal_read(wal, l, got, sizeof(got), &len) == 0);
			wal_test_fill(seed, l, want, wl);
			CU_ASSERT(len == wl && memcmp(got, want, wl) == 0);
			recovered_total++;
		}
		wal_close(&wal);
		CU_ASSERT_FATAL(rpma_ext_mem_close(&mem) == 0);
	}
	printf("%d kill rounds: acknowledged up to LSN %llu, %llu records verified\n",
		ROUNDS, (unsigned long long)acked_max, (unsigned long long)recovered_total);
}

int
main(void)
{
	static CU_TestInfo cases[] = {
		UNIT_CASE(wal__sigkill_rounds_keep_every_acknowledged_record),
		CU_TEST_INFO_NULL,
	};
	const char *s = getenv("WAL_CRASH_SEED");
	int ret;

	seed = s ? strtoull(s, NULL, 0) : (uint64_t)time(NULL) ^ (uint64_t)getpid();
	printf("seed %llu (set WAL_CRASH_SEED to repeat)\n", (unsigned long long)seed);
	snprintf(path, sizeof(path), "/dev/shm/rpma-wal-crash-%d", (int)getpid());
	ret = unit_run("wal crash", cases);
	unlink(path);
	return ret;
}
