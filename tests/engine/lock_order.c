/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lock_order.c -- the engine's locks are taken in lock_rank.h's order: in
 * a debug build each order allowed runs, and each inverted pair aborts
 * (in a child, so that the test goes on).
 */
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/lock_rank.h"

static pthread_mutex_t m[LOCK_RANKS];

/* take outer, then inner (ranks); true if the child aborted */
static bool
aborts(enum lock_rank outer, enum lock_rank inner)
{
	int status = 0;
	pid_t pid = fork();

	if (pid == 0) {
		signal(SIGABRT, SIG_DFL);
		if (!freopen("/dev/null", "w", stderr))
			_exit(2);
		rank_lock(&m[outer], outer);
		rank_lock(&m[inner], inner);
		rank_unlock(&m[inner], inner);
		rank_unlock(&m[outer], outer);
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid) {
		perror("lock_order: fork");
		exit(1);
	}
	return WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT;
}

int
main(void)
{
	int bad = 0, pairs = 0;

#ifdef NDEBUG
	printf("lock_order: SKIP: a release build does not check the order\n");
	return 77;
#endif
	for (int i = 0; i < LOCK_RANKS; i++)
		pthread_mutex_init(&m[i], NULL);
	for (int o = 1; o < LOCK_RANKS; o++)
		for (int n = 1; n < LOCK_RANKS; n++) {
			bool want = n >= o;	/* inner must rank below outer */
			bool got = aborts((enum lock_rank)o, (enum lock_rank)n);

			pairs++;
			if (got != want) {
				fprintf(stderr, "lock_order: rank %d then %d: %s\n", o,
					n, got ? "aborted" : "was not refused");
				bad++;
			}
		}
	/* a trylock is recorded, never refused: it cannot deadlock */
	rank_lock(&m[LOCK_RANK_WAL], LOCK_RANK_WAL);
	if (rank_trylock(&m[LOCK_RANK_IO], LOCK_RANK_IO) != 0)
		bad++;
	rank_unlock(&m[LOCK_RANK_IO], LOCK_RANK_IO);
	rank_unlock(&m[LOCK_RANK_WAL], LOCK_RANK_WAL);
	printf("lock_order: %d pairs, %d wrong\n", pairs, bad);
	return bad ? 1 : 0;
}
