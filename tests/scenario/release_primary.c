/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * release_primary.c -- one node of a repld cluster run as a primary that
 * releases its log, which repld cannot be asked to do (the scenario
 * tests' c6_released_log.sh):
 *
 *   release_primary FILE PAYLOAD...
 *
 * The node's repld is not running; FILE is its configuration (repld.conf),
 * whose log, peers, quorum and timeouts are used as repld uses them.  The
 * log is opened as the primary (a promotion, as every open with replicas
 * is), each PAYLOAD appended as one record and made durable by the quorum
 * rule; stdout gets "LSN PAYLOAD" for each, once acknowledged.  Then
 * everything is released (repl_release of the last LSN: the database
 * checkpointed it all), which moves the streaming replicas' checkpoints
 * too; stdout gets "released FIRST LAST", repl_status' first_lsn (0: no
 * record kept) and last_lsn after it.  Then
 * it waits for SIGTERM (a clean close, exit 0) or its end by SIGKILL.
 *
 * Exit status: 0 SIGTERM after the release; 1 a failure (on stderr);
 * 2 usage or a file that does not load; 4 the promotion refused.
 */
#include "config.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "repl.h"
#include "repld_conf.h"
#include "rpma.h"

static volatile sig_atomic_t stop;

static void
on_term(int sig)
{
	(void)sig;
	stop = 1;
}

int
main(int argc, char *argv[])
{
	struct repld_conf conf;
	struct repl_replica reps[REPLD_PEERS_MAX];
	char ports[REPLD_PEERS_MAX][8], err[512];
	struct repl *repl = NULL;
	struct repl_status st;
	uint64_t lsn = 0;
	struct sigaction sa = { .sa_handler = on_term };
	sigset_t term, old;
	int ret;

	if (argc < 3) {
		fprintf(stderr, "usage: release_primary FILE PAYLOAD...\n");
		return 2;
	}
	if (repld_conf_load(argv[1], &conf, err, sizeof(err)) != 0) {
		fprintf(stderr, "release_primary: %s\n", err);
		return 2;
	}
	rpma_log_set_threshold(RPMA_LOG_THRESHOLD, (enum rpma_log_level)conf.log_level);
	rpma_log_set_threshold(RPMA_LOG_THRESHOLD_AUX,
		(enum rpma_log_level)conf.log_level);
	setvbuf(stderr, NULL, _IOLBF, 0);
	setvbuf(stdout, NULL, _IOLBF, 0);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	/* blocked until it waits for them: none is missed */
	sigemptyset(&term);
	sigaddset(&term, SIGTERM);
	sigaddset(&term, SIGINT);
	sigprocmask(SIG_BLOCK, &term, &old);

	for (int i = 0; i < conf.n_peers; i++) {
		snprintf(ports[i], sizeof(ports[i]), "%u", conf.peers[i].control_port);
		reps[i] = (struct repl_replica){ conf.peers[i].address, ports[i] };
	}
	struct repl_cfg cfg = {
		.path = conf.log.path,
		.backend = (enum repl_backend)conf.log.backend,
		.size = conf.log.size,
		.node_id = conf.node_id,
		.full_timeout_ms = conf.full_timeout_ms,
		.replicas = reps,
		.n_replicas = conf.n_peers,
		.quorum = conf.quorum,
		.provider = "tcp",
		.heartbeat_ms = conf.timeouts.heartbeat_ms,
		.down_timeout_ms = conf.timeouts.down_ms,
		.promote_wait_ms = conf.timeouts.promote_wait_ms,
		.tls_ca = conf.tls.ca,
		.tls_cert = conf.tls.cert,
		.tls_key = conf.tls.key,
	};
	memcpy(cfg.cluster_uuid, conf.cluster_uuid, sizeof(cfg.cluster_uuid));
	if ((ret = repl_open(&cfg, &repl)) != 0) {
		fprintf(stderr, "release_primary: cannot open %s as the primary: %s\n",
			conf.log.path, repl_strerror(ret));
		repld_conf_free(&conf);
		return ret == REPL_E_NO_QUORUM ? 4 : 1;
	}
	repl_status(repl, &st);
	fprintf(stderr, "release_primary: node %u is the primary of epoch %llu\n",
		conf.node_id, (unsigned long long)st.epoch);
	for (int i = 2; i < argc; i++) {
		if ((ret = repl_append(repl, argv[i], strlen(argv[i]), &lsn)) ||
		    (ret = repl_wait_durable(repl, lsn, 10000))) {
			fprintf(stderr, "release_primary: %s: %s\n", argv[i],
				repl_strerror(ret));
			goto out;
		}
		printf("%llu %s\n", (unsigned long long)lsn, argv[i]);
	}
	if ((ret = repl_release(repl, lsn)) != 0) {
		fprintf(stderr, "release_primary: release to LSN %llu: %s\n",
			(unsigned long long)lsn, repl_strerror(ret));
		goto out;
	}
	repl_status(repl, &st);
	printf("released %llu %llu\n", (unsigned long long)st.first_lsn,
		(unsigned long long)st.last_lsn);
	while (!stop)
		sigsuspend(&old);
out:
	repl_close(&repl);
	repld_conf_free(&conf);
	return ret ? 1 : 0;
}
