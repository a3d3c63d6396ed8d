/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * repld.c -- repld, one node of a replicated log cluster, as a daemon.
 *
 *   repld -c FILE		run the node FILE describes (its role: a
 *				replica, or the primary)
 *   repld -c FILE --check	only check FILE: "FILE: ok" on stdout, or
 *				"FILE:LINE: reason" on stderr
 *   repld --help | --version
 *
 * It stays in the foreground, writes no pid file and logs to stderr (the
 * service manager keeps it: systemd Type=simple).  SIGTERM or SIGINT
 * stops it cleanly: a replica closes its log, a primary first lets its
 * replicas drain what it holds.
 *
 * A replica serves primaries until stopped.  A primary promotes itself on
 * start (a new epoch: it fences n - k + 1 nodes, itself counting) and then
 * serves until stopped, logging its status every 10 s.
 *
 * Exit status:
 *   0  stopped by SIGTERM/SIGINT (or --check, --help, --version succeeded)
 *   1  a runtime failure (the log or the endpoints could not be set up)
 *   2  bad usage, or a configuration file that does not load
 *   3  fenced: a newer primary took over from this one
 *   4  promotion refused: fewer than n - k + 1 nodes reachable
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "repl.h"
#include "replica.h"
#include "repld_conf.h"
#include "rpma.h"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "unknown"
#endif

#define EXIT_RUNTIME 1
#define EXIT_USAGE 2
#define EXIT_FENCED 3
#define EXIT_NO_QUORUM 4

#define STATUS_EVERY_MS 10000
#define TICK_MS 100

static volatile sig_atomic_t stop;

static void
on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void
usage(FILE *f)
{
	fprintf(f,
		"usage: repld -c FILE [--check]\n"
		"       repld --help | --version\n"
		"\n"
		"  -c, --config FILE  the node's configuration\n"
		"      --check        only check the configuration, then exit\n"
		"  -h, --help         this text\n"
		"  -V, --version      the version\n"
		"\n"
		"Exit status: 0 clean stop, 1 runtime failure, 2 usage or\n"
		"configuration error, 3 fenced by a newer primary, 4 promotion\n"
		"refused (not enough nodes reachable).\n");
}

/* the libfabric provider name, or "verbs" */
static const char *
provider_of(const struct repld_conf *conf)
{
	struct ibv_context *ctx = NULL;

	switch (conf->transport) {
	case REPLD_TRANSPORT_VERBS:
		return "verbs";
	case REPLD_TRANSPORT_OFI_NET:
		return "net";
	case REPLD_TRANSPORT_OFI_TCP:
		return "tcp";
	case REPLD_TRANSPORT_AUTO:
	default:
		/* an RDMA device serving the listen address: use it */
		if (rpma_utils_get_ibv_context(conf->listen.address,
				RPMA_UTIL_IBV_CONTEXT_LOCAL, &ctx) == 0)
			return "verbs";
		return "tcp";
	}
}

static void
catch_signals(void)
{
	/* no SA_RESTART: a wait in progress returns and sees stop */
	struct sigaction sa = { .sa_handler = on_signal };
	struct sigaction ign = { .sa_handler = SIG_IGN };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	/* a peer closing its socket must not kill the daemon */
	sigaction(SIGPIPE, &ign, NULL);
}

static void
say_listening(void *arg)
{
	const struct repld_conf *conf = arg;

	fprintf(stderr, "repld: node %u (replica) listening on %s, control port "
		"%u, data port %u\n", conf->node_id, conf->listen.address,
		conf->listen.control_port, conf->listen.data_port);
}

static int
run_replica(const struct repld_conf *conf)
{
	char ctl_port[8], data_port[8];
	struct replica_cfg cfg = {
		.path = conf->log.path,
		/* repld_backend has rpma_ext_mem_backend's values */
		.backend = (enum rpma_ext_mem_backend)conf->log.backend,
		.size = conf->log.size,
		.create = 1,	/* formats only a medium that holds no log */
		.node_id = conf->node_id,
		.provider = provider_of(conf),
		.addr = conf->listen.address,
		.ctl_port = ctl_port,
		.data_port = data_port,
		.timeout_ms = conf->timeouts.down_ms,
		.tls_ca = conf->tls.ca,
		.tls_cert = conf->tls.cert,
		.tls_key = conf->tls.key,
		.stop = &stop,
		.ready = say_listening,
		.ready_arg = (void *)conf,
	};

	snprintf(ctl_port, sizeof(ctl_port), "%u", conf->listen.control_port);
	snprintf(data_port, sizeof(data_port), "%u", conf->listen.data_port);
	memcpy(cfg.cluster_uuid, conf->cluster_uuid, sizeof(cfg.cluster_uuid));
	if (replica_run(&cfg) != 0) {
		fprintf(stderr, "repld: the replica could not start (log %s, %s "
			"ports %s/%s)\n", conf->log.path, conf->listen.address,
			ctl_port, data_port);
		return EXIT_RUNTIME;
	}
	fprintf(stderr, "repld: node %u stopped\n", conf->node_id);
	return 0;
}

static const char *
state_name(enum repl_replica_state s)
{
	return s == REPL_REPLICA_STREAMING ? "streaming" :
		s == REPL_REPLICA_CATCHING_UP ? "catching up" : "down";
}

static void
log_status(struct repl *repl, const struct repld_conf *conf,
		const struct repl_status *st)
{
	fprintf(stderr, "repld: primary, epoch %llu: LSN %llu..%llu, durable "
		"%llu, committed %llu, %d of %d replicas up (quorum %d)\n",
		(unsigned long long)st->epoch, (unsigned long long)st->first_lsn,
		(unsigned long long)st->last_lsn,
		(unsigned long long)st->durable_lsn,
		(unsigned long long)st->commit_lsn, st->replicas_up,
		conf->n_peers, conf->quorum);
	for (int i = 0; i < conf->n_peers; i++) {
		struct repl_replica_status rs;

		if (repl_replica_status(repl, i, &rs))
			continue;
		fprintf(stderr, "repld:   replica %s:%u %s, flushed LSN %llu, lag "
			"%llu%s%s\n", conf->peers[i].address,
			conf->peers[i].control_port, state_name(rs.state),
			(unsigned long long)rs.flushed_lsn,
			(unsigned long long)rs.lag_records,
			rs.state != REPL_REPLICA_STREAMING && rs.why[0] ? ": " : "",
			rs.state != REPL_REPLICA_STREAMING ? rs.why : "");
	}
}

static int
run_primary(const struct repld_conf *conf)
{
	struct repl_replica reps[REPLD_PEERS_MAX];
	char ports[REPLD_PEERS_MAX][8];
	struct repl_cfg cfg = {
		.path = conf->log.path,
		.backend = (enum repl_backend)conf->log.backend,
		.size = conf->log.size,
		.node_id = conf->node_id,
		.full_timeout_ms = conf->full_timeout_ms,
		.replicas = reps,
		.n_replicas = conf->n_peers,
		.quorum = conf->quorum,
		.provider = provider_of(conf),
		.heartbeat_ms = conf->timeouts.heartbeat_ms,
		.down_timeout_ms = conf->timeouts.down_ms,
		.promote_wait_ms = conf->timeouts.promote_wait_ms,
		.tls_ca = conf->tls.ca,
		.tls_cert = conf->tls.cert,
		.tls_key = conf->tls.key,
	};
	struct repl *repl = NULL;
	struct repl_status st;
	int ret, since = 0;

	for (int i = 0; i < conf->n_peers; i++) {
		snprintf(ports[i], sizeof(ports[i]), "%u", conf->peers[i].control_port);
		reps[i] = (struct repl_replica){ conf->peers[i].address, ports[i] };
	}
	memcpy(cfg.cluster_uuid, conf->cluster_uuid, sizeof(cfg.cluster_uuid));
	/* the first start of a node: its log does not exist yet */
	cfg.create = access(conf->log.path, F_OK) != 0 && errno == ENOENT;
	fprintf(stderr, "repld: node %u (primary) %s log %s, promoting over %s\n",
		conf->node_id, cfg.create ? "creating" : "opening", conf->log.path,
		cfg.provider);
	if ((ret = repl_open(&cfg, &repl)) != 0) {
		if (ret == REPL_E_NO_QUORUM) {
			fprintf(stderr, "repld: promotion refused: %s; replicas:",
				repl_strerror(ret));
			for (int i = 0; i < conf->n_peers; i++)
				fprintf(stderr, " %s:%u", conf->peers[i].address,
					conf->peers[i].control_port);
			fprintf(stderr, " (the unreachable ones are named above)\n");
			return EXIT_NO_QUORUM;
		}
		fprintf(stderr, "repld: cannot open the log %s: %s\n",
			conf->log.path, repl_strerror(ret));
		return EXIT_RUNTIME;
	}
	repl_status(repl, &st);
	fprintf(stderr, "repld: node %u is the primary of epoch %llu\n",
		conf->node_id, (unsigned long long)st.epoch);
	while (!stop) {
		(void)poll(NULL, 0, TICK_MS);
		if (repl_status(repl, &st) == 0 && st.fenced) {
			fprintf(stderr, "repld: fenced: a newer primary took over "
				"(this one was of epoch %llu, its last LSN %llu)\n",
				(unsigned long long)st.epoch,
				(unsigned long long)st.last_lsn);
			repl_close(&repl);
			return EXIT_FENCED;
		}
		if ((since += TICK_MS) >= STATUS_EVERY_MS) {
			log_status(repl, conf, &st);
			since = 0;
		}
	}
	fprintf(stderr, "repld: stopping: draining the replicas\n");
	if ((ret = repl_close(&repl)) != 0) {
		fprintf(stderr, "repld: closing the log: %s\n", repl_strerror(ret));
		return EXIT_RUNTIME;
	}
	fprintf(stderr, "repld: node %u stopped\n", conf->node_id);
	return 0;
}

int
main(int argc, char *argv[])
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "check", no_argument, NULL, 'k' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	struct repld_conf conf;
	const char *path = NULL;
	char err[512];
	bool check = false;
	int opt, ret;

	opterr = 0;	/* one line of our own instead of getopt's */
	while ((opt = getopt_long(argc, argv, "c:hV", opts, NULL)) != -1) {
		switch (opt) {
		case 'c':
			path = optarg;
			break;
		case 'k':
			check = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("repld %s\n", PACKAGE_VERSION);
			return 0;
		default:
			if (optopt == 'c')
				fprintf(stderr, "repld: -c needs a FILE (try --help)\n");
			else
				fprintf(stderr, "repld: unknown option %s (try --help)\n",
					argv[optind - 1]);
			return EXIT_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "repld: unexpected argument %s (try --help)\n",
			argv[optind]);
		return EXIT_USAGE;
	}
	if (path == NULL) {
		fprintf(stderr, "repld: no configuration: -c FILE (try --help)\n");
		return EXIT_USAGE;
	}
	if (repld_conf_load(path, &conf, err, sizeof(err)) != 0) {
		fprintf(stderr, "%s\n", err);
		return EXIT_USAGE;
	}
	if (check) {
		printf("%s: ok\n", path);
		repld_conf_free(&conf);
		return 0;
	}
	/* the engine logs through the core: both to the sink and to stderr */
	rpma_log_set_threshold(RPMA_LOG_THRESHOLD, (enum rpma_log_level)conf.log_level);
	rpma_log_set_threshold(RPMA_LOG_THRESHOLD_AUX,
		(enum rpma_log_level)conf.log_level);
	/* line by line, as a service manager reads it */
	setvbuf(stderr, NULL, _IOLBF, 0);
	catch_signals();
	ret = conf.role == REPLD_ROLE_PRIMARY ? run_primary(&conf) :
		run_replica(&conf);
	repld_conf_free(&conf);
	return ret;
}
