/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * link_states.c -- a link's state changes only as cluster.h's table says:
 * each listed change is taken and counted (entries, time in the state
 * left), and in a debug build one not listed aborts (in a child).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "primary/primary.h"
#include "unit.h"

static struct cluster c;
static struct link l;

static void
fresh(void)
{
	static bool init;

	if (!init) {
		pthread_mutex_init(&c.lock, NULL);
		pthread_cond_init(&c.cond, NULL);
		init = true;
	}
	memset(&l, 0, sizeof(l));
	l.c = &c;
	l.host = "test";
	l.ctl_port = "0";
	l.state = REPL_LINK_DOWN;
	l.state_since_ms = clock_now_ms();
}

/* does from -> to abort? (in a child: the parent keeps going) */
static bool
aborts(enum repl_link_state from, enum repl_link_state to)
{
	int status = 0;
	pid_t pid = fork();

	if (pid == 0) {
		fresh();
		l.state = from;
		/* the abort itself, not a handler's report of it */
		signal(SIGABRT, SIG_DFL);
		if (!freopen("/dev/null", "w", stderr))
			_exit(2);
		/* its message is the point, not noise in the test's log */
		link_set_state(&l, to);
		_exit(0);
	}
	CU_ASSERT_FATAL(pid > 0);
	CU_ASSERT_FATAL(waitpid(pid, &status, 0) == pid);
	return WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT;
}

/* a whole life: connect, catch up, stream, fail, reconnect, be fenced */
static void
test_allowed(void)
{
	static const enum repl_link_state path[] = {
		REPL_LINK_CONNECTING, REPL_LINK_CATCHING_UP, REPL_LINK_STREAMING, REPL_LINK_DRAINING,
		REPL_LINK_DRAINING, REPL_LINK_DOWN, REPL_LINK_CONNECTING, REPL_LINK_DRAINING, REPL_LINK_DOWN,
		REPL_LINK_FENCED,
	};

	fresh();
	for (size_t i = 0; i < sizeof(path) / sizeof(path[0]); i++) {
		link_set_state(&l, path[i]);
		CU_ASSERT(l.state == path[i]);
	}
	CU_ASSERT(atomic_load(&l.n.entered[REPL_LINK_CONNECTING]) == 2);
	CU_ASSERT(atomic_load(&l.n.entered[REPL_LINK_STREAMING]) == 1);
	/* DRAINING to itself is a second failure's reason, not an entry */
	CU_ASSERT(atomic_load(&l.n.entered[REPL_LINK_DRAINING]) == 2);
	CU_ASSERT(atomic_load(&l.n.entered[REPL_LINK_DOWN]) == 2);
	CU_ASSERT(atomic_load(&l.n.entered[REPL_LINK_FENCED]) == 1);

	/* time in a state is counted when it is left */
	fresh();
	link_set_state(&l, REPL_LINK_CONNECTING);
	usleep(20000);
	link_set_state(&l, REPL_LINK_CATCHING_UP);
	CU_ASSERT(atomic_load(&l.n.state_ms[REPL_LINK_CONNECTING]) >= 15);
	CU_ASSERT(atomic_load(&l.n.state_ms[REPL_LINK_CATCHING_UP]) == 0);
	CU_ASSERT(l.left_ms == 0);
	link_set_state(&l, REPL_LINK_STREAMING);
	link_set_state(&l, REPL_LINK_DRAINING);
	CU_ASSERT(l.left_ms > 0);	/* its lag's age counts from here */
}

static void
test_forbidden(void)
{
#ifdef NDEBUG
	printf("link_states: a release build: the table is not checked\n");
#else
	/* what must never happen: quorum without catch-up, life after the end */
	CU_ASSERT(aborts(REPL_LINK_DOWN, REPL_LINK_STREAMING));
	CU_ASSERT(aborts(REPL_LINK_CONNECTING, REPL_LINK_STREAMING));
	CU_ASSERT(aborts(REPL_LINK_STREAMING, REPL_LINK_DOWN));
	CU_ASSERT(aborts(REPL_LINK_STREAMING, REPL_LINK_CATCHING_UP));
	CU_ASSERT(aborts(REPL_LINK_DRAINING, REPL_LINK_STREAMING));
	CU_ASSERT(aborts(REPL_LINK_FENCED, REPL_LINK_CONNECTING));
	CU_ASSERT(aborts(REPL_LINK_RETIRED, REPL_LINK_DOWN));
	CU_ASSERT(aborts(REPL_LINK_DOWN, REPL_LINK_DOWN));
	/* and the allowed ones do not */
	CU_ASSERT(!aborts(REPL_LINK_DOWN, REPL_LINK_CONNECTING));
	CU_ASSERT(!aborts(REPL_LINK_STREAMING, REPL_LINK_DRAINING));
#endif
}

UNIT_MAIN("link_states",
	UNIT_CASE(test_allowed), UNIT_CASE(test_forbidden))
