/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * repld.c -- repld, one node of a replicated log cluster, as a daemon.
 *
 *   repld -c FILE		run the node FILE describes (its role: a
 *				replica, or the primary)
 *   repld -c FILE --check	only check FILE and its TLS files: "FILE: ok"
 *				on stdout, or "FILE:LINE: reason" (or
 *				"FILE: TLS: reason") on stderr
 *   repld -c FILE --reconfigure	a primary adopts the file's membership
 *				even if its log stores another
 *   repld --help | --version
 *
 * It stays in the foreground, writes no pid file and logs to stderr
 * (log.h: one format, or journald's priorities) and tells systemd when it
 * is ready, reloading, stopping and alive (notify.h: Type=notify).  SIGTERM or SIGINT
 * stops it cleanly: appends in flight get their answers, a replica closes
 * its log, a primary first lets its replicas drain what it holds.  SIGHUP
 * reads the file again and applies a changed membership.  The admin
 * socket (admin_proto.h) serves replctl and local appenders.
 * With metrics_listen set, HTTP (http.h) serves /metrics and the health
 * paths for Prometheus and load balancers.
 *
 * A replica serves primaries until stopped.  A primary promotes itself on
 * start (a new epoch: it fences n - k + 1 nodes, itself counting) and then
 * serves until stopped, logging its status every 10 s.
 *
 * Exit status:
 *   0  stopped by SIGTERM/SIGINT (or --check, --help, --version succeeded)
 *   1  a runtime failure (the log or the endpoints could not be set up)
 *   2  bad usage, or a configuration file that does not load (its TLS
 *      certificate, key or CA file too)
 *   3  fenced: a newer primary took over from this one
 *   4  promotion refused: fewer than n - k + 1 nodes reachable
 *   5  refused to start ("refused to start: ..."): the log is locked by
 *      another process, missing or blank, another cluster's, or stores
 *      another membership (without --reconfigure)
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "admin.h"
#include "archiver.h"
#include "coordinator.h"
#include "http.h"
#include "log.h"
#include "node.h"
#include "node_ha.h"
#include "notify.h"
#include "repl.h"
#include "repld_conf.h"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "unknown"
#endif

/* the exit codes are node.h's REPLD_EXIT_* (repld(8)) */

#define STATUS_EVERY_MS 10000
#define TICK_MS 100

static volatile sig_atomic_t stop, reload;

static void
on_signal(int sig)
{
	if (sig == SIGHUP)
		reload = 1;
	else
		stop = 1;
}

static void
usage(FILE *f)
{
	fprintf(f,
		"usage: repld -c FILE [--check] [--reconfigure] [--bootstrap | --reinit]\n"
		"       repld --help | --version\n"
		"\n"
		"  -c, --config FILE  the node's configuration\n"
		"      --check        only check the configuration, then exit\n"
		"      --reconfigure  a primary: make the file's membership the next\n"
		"                     one, even if the log stores another\n"
		"      --bootstrap    the first start of a new cluster: make the log\n"
		"                     (it must not exist, unless the primary's is a\n"
		"                     restored log); the primary stores the file's\n"
		"                     membership as the cluster's first\n"
		"      --reinit       a replica whose disk was replaced: make its log\n"
		"                     anew whatever the path holds (it copies all\n"
		"                     from the primary); starts as a replica, and\n"
		"                     serves no primary before it took its promise\n"
		"                     floor from quorum + 1 of its peers\n"
		"  -h, --help         this text\n"
		"  -V, --version      the version\n"
		"\n"
		"Signals: SIGTERM/SIGINT drain and stop, SIGHUP reloads the membership.\n"
		"Exit status: 0 clean stop, 1 runtime failure, 2 usage or\n"
		"configuration error, 3 fenced by a newer primary, 4 promotion\n"
		"refused (not enough nodes reachable), 5 refused to start (the\n"
		"log is locked, missing, another cluster's or stores another\n"
		"membership, or this node is no member: the message says).\n");
}

static void
catch_signals(void)
{
	/* no SA_RESTART: a wait in progress returns and sees the flag */
	struct sigaction sa = { .sa_handler = on_signal };
	struct sigaction ign = { .sa_handler = SIG_IGN };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	/* a client closing its socket must not kill the daemon */
	sigaction(SIGPIPE, &ign, NULL);
}

/* the primary's status line: its log, then each replica's state and lag */
static void
log_status(struct node *n)
{
	char peer[REPLD_PEERS_MAX][REPLD_ADDRESS_MAX + 8], line[1536], d[24];
	struct repl_replica_status rs;
	struct repl_status st;
	struct repl *repl;
	bool changing;
	size_t at;
	int np;

	if ((repl = node_try_enter(n, &changing)) == NULL)
		return;
	repl_status(repl, &st);
	pthread_mutex_lock(&n->lock);
	np = n->conf.n_peers;
	for (int i = 0; i < np; i++)
		snprintf(peer[i], sizeof(peer[i]), "%s:%u", n->conf.peers[i].address,
			n->conf.peers[i].control_port);
	pthread_mutex_unlock(&n->lock);
	at = (size_t)snprintf(line, sizeof(line), "primary, epoch %llu: LSN %llu..%llu, "
		"durable %llu, committed %llu, %d replicas up (quorum %d)%s",
		(unsigned long long)st.epoch, (unsigned long long)st.first_lsn,
		(unsigned long long)st.last_lsn,
		(unsigned long long)st.durable_lsn,
		(unsigned long long)st.commit_lsn, st.replicas_up, n->conf.quorum,
		st.log_full ? ", LOG FULL" : "");
	for (int i = 0; i < np && at < sizeof(line); i++) {
		if (repl_replica_status(repl, i, &rs) != 0)
			continue;
		if (rs.state == REPL_REPLICA_STREAMING)
			at += (size_t)snprintf(line + at, sizeof(line) - at, "; %s streaming, "
				"lag %llu records (%s)", peer[i],
				(unsigned long long)rs.lag_records,
				repld_duration_text(rs.lag_ms, d, sizeof(d)));
		else
			at += (size_t)snprintf(line + at, sizeof(line) - at, "; %s %s, "
				"%llu records behind (%s): %s", peer[i],
				rs.state == REPL_REPLICA_CATCHING_UP ? "catching up" : "DOWN",
				(unsigned long long)rs.lag_records,
				repld_duration_text(rs.lag_ms, d, sizeof(d)), rs.why);
	}
	node_leave(n);
	log_notice("%s", line);
}

/* what systemd's status line last said, to send it on a change only */
struct shown {
	enum node_role role;
	uint64_t epoch;
	int up, of;
	bool following;
	bool valid;
};

/* STATUS=: "primary, epoch N, U of M replicas" or "replica, ..." */
static void
status_changed(struct node *n, struct shown *was)
{
	struct shown now = { .role = node_role(n), .valid = true };

	if (now.role == NODE_PRIMARY) {
		struct repl_status st;
		struct repl *repl;
		bool changing;

		if ((repl = node_try_enter(n, &changing)) == NULL)
			return;	/* a change is under way: ask next tick */
		repl_status(repl, &st);
		node_leave(n);
		now.epoch = st.epoch;
		now.up = st.replicas_up;
		pthread_mutex_lock(&n->lock);
		now.of = n->conf.n_peers;
		pthread_mutex_unlock(&n->lock);
	} else if (now.role == NODE_REPLICA) {
		struct repl_replica_info ri;

		node_replica_info(n, &ri);
		now.epoch = ri.epoch;
		now.following = ri.following != 0;
	}
	if (was->valid && was->role == now.role && was->epoch == now.epoch &&
	    was->up == now.up && was->of == now.of &&
	    was->following == now.following)
		return;
	*was = now;
	if (now.role == NODE_PRIMARY)
		notify_status("primary, epoch %llu, %d of %d replicas",
			(unsigned long long)now.epoch, now.up, now.of);
	else if (now.role == NODE_REPLICA)
		notify_status("replica, epoch %llu, %s",
			(unsigned long long)now.epoch,
			now.following ? "following a primary" : "no primary");
	else
		notify_status("down");
}

static enum repl_log_level
log_level_of(enum repld_log_level l)
{
	switch (l) {
	case REPLD_LOG_ERROR:	return REPL_LOG_LEVEL_ERROR;
	case REPLD_LOG_WARNING:	return REPL_LOG_LEVEL_WARNING;
	case REPLD_LOG_NOTICE:	return REPL_LOG_LEVEL_NOTICE;
	case REPLD_LOG_INFO:	return REPL_LOG_LEVEL_INFO;
	case REPLD_LOG_DEBUG:	return REPL_LOG_LEVEL_DEBUG;
	default:		return REPL_LOG_LEVEL_WARNING;
	}
}

/* serve until a signal, a fence or a failure ends it; the exit code */
static int
run(struct node *n, const struct node_start_how *how, bool *node_in_use)
{
	struct admin *admin = NULL;
	struct http *http = NULL;
	struct shown shown = { .valid = false };
	char err[512];
	int ret, since = 0;

	/* first the socket: a status can be asked during a long promotion */
	if (admin_start(n, n->conf.admin_socket, &admin, err, sizeof(err)) != 0) {
		log_error("%s", err);
		return REPLD_EXIT_FAILED;
	}
	log_notice("admin socket %s", n->conf.admin_socket);
	/* beside it: /metrics and the health paths answer during a promotion */
	if (http_start(n, &http, err, sizeof(err)) != 0) {
		log_error("%s", err);
		*node_in_use = !admin_stop(&admin);
		return REPLD_EXIT_FAILED;
	}
	if (http)
		log_notice("metrics and health on http://%s%s%s:%u/",
			strchr(n->conf.metrics.host, ':') ? "[" : "",
			n->conf.metrics.host,
			strchr(n->conf.metrics.host, ':') ? "]" : "",
			n->conf.metrics.port);
	/*
	 * A primary by its file, not a new cluster's: if etcd names another
	 * leader, a failover happened while this node was down, and it
	 * follows (its restart promotion would be refused the same, later).
	 */
	struct node_start_how start = *how;
	uint64_t leader_epoch;
	uint32_t leader;

	if (!how->bootstrap && !how->reinit && !how->reconfigure)
		node_ha_membership_at_start(n);
	if (n->conf.role == REPLD_ROLE_PRIMARY && !how->bootstrap &&
	    (leader = node_ha_leader_at_start(&n->conf, &leader_epoch)) != 0) {
		log_notice("coordinator: node %u holds the leader key (epoch %llu): "
			"starting as a replica", leader,
			(unsigned long long)leader_epoch);
		start.as_replica = true;
	}
	/* before the node starts: a replica it serves as is handed to it */
	struct archiver *archiver = NULL;

	if (archiver_start(n, &archiver) != 0) {
		log_error("cannot start the archiver's thread: %s", strerror(errno));
		http_stop(&http);
		*node_in_use = !admin_stop(&admin);
		return REPLD_EXIT_FAILED;
	}
	atomic_store(&n->archiver, archiver);
	if ((ret = node_start(n, &start)) != 0) {
		(void)node_stop(n);
		archiver_stop(archiver);
		http_stop(&http);
		*node_in_use = !admin_stop(&admin);
		return ret;
	}
	if (retention_start(&n->retention) != 0) {
		log_error("cannot start the retention thread: %s",
			strerror(errno));
		(void)node_stop(n);
		archiver_stop(archiver);
		http_stop(&http);
		*node_in_use = !admin_stop(&admin);
		return REPLD_EXIT_FAILED;
	}
	/* automatic failover, when the file names a coordinator */
	struct coordinator *coord;

	if (node_ha_start(n, &coord, err, sizeof(err)) != 0) {
		log_error("%s", err);
		retention_stop(&n->retention);
		(void)node_stop(n);
		archiver_stop(archiver);
		http_stop(&http);
		*node_in_use = !admin_stop(&admin);
		return REPLD_EXIT_FAILED;
	}
	atomic_store(&n->coord, coord);
	/* the admin socket answers, a primary acknowledges, a replica listens */
	notify_ready();
	status_changed(n, &shown);
	while (!stop) {
		(void)poll(NULL, 0, TICK_MS);
		if (reload) {
			char msg[640];

			reload = 0;
			log_notice("SIGHUP: reloading the membership");
			notify_reloading();
			/* it logs what it did, or why it did nothing */
			(void)node_reload(n, msg, sizeof(msg));
			notify_ready();
		}
		/* from here only: a loop stuck elsewhere stops the pings */
		notify_watchdog();
		status_changed(n, &shown);
		if ((ret = node_tick(n)) >= 0)
			break;
		if ((since += TICK_MS) >= STATUS_EVERY_MS) {
			log_status(n);
			since = 0;
		}
	}
	notify_stopping();
	/* first: it may be changing the node, and a primary's key goes now */
	coordinator_stop(atomic_load(&n->coord));
	retention_stop(&n->retention);	/* it may hold the gate */
	ret = node_stop(n);
	archiver_stop(archiver);	/* the node let go of its replica */
	http_stop(&http);
	/* a connection still writing may still read the node: leave it be */
	*node_in_use = !admin_stop(&admin);
	return ret;
}

/* the directory part of path into dir ("." when it has none) */
static void
dir_of(const char *path, char *dir, size_t len)
{
	const char *slash = strrchr(path, '/');

	if (slash == NULL)
		snprintf(dir, len, ".");
	else if (slash == path)
		snprintf(dir, len, "/");
	else
		snprintf(dir, len, "%.*s", (int)(slash - path), path);
}

/* the directories the systemd unit makes at its start (conf/repld@.service) */
static bool
made_by_unit(const char *dir)
{
	return strcmp(dir, "/run/repld") == 0 || strncmp(dir, "/var/lib/repld/", 15) == 0;
}

/*
 * Whether directory dir (of setting what, for file) is there: true, or
 * false with why.  For --check (only) a directory the systemd unit makes
 * may be missing yet: a note on standard output says so.
 */
static bool
dir_there(const char *dir, const char *what, const char *file, bool check_only,
		char *why, size_t len)
{
	struct stat st;

	if (stat(dir, &st) == 0 && S_ISDIR(st.st_mode))
		return true;
	if (stat(dir, &st) == 0) {
		snprintf(why, len, "%s: %.200s is not a directory", what, dir);
		return false;
	}
	if (check_only && made_by_unit(dir)) {
		printf("%s: note: %s: the directory %s does not exist yet; the systemd "
			"unit makes it at its start\n", file, what, dir);
		return true;
	}
	snprintf(why, len, "%s: the directory %.200s does not exist", what, dir);
	return false;
}

/*
 * Where the files go, as far as can be told before anything is opened:
 * the log's directory exists and the log, if there, is a file or a
 * device; the admin socket's directory exists.  0, or -1 with why.
 */
static int
paths_check(const struct repld_conf *conf, const char *file, bool check_only,
		char *why, size_t len)
{
	char dir[4096];
	struct stat st;

	dir_of(conf->log.path, dir, sizeof(dir));
	if (!dir_there(dir, "log.path", file, check_only, why, len))
		return -1;
	if (stat(conf->log.path, &st) == 0 && !S_ISREG(st.st_mode) &&
	    !S_ISBLK(st.st_mode) && !S_ISCHR(st.st_mode)) {
		snprintf(why, len, "log.path: %.200s is neither a file nor a device",
			conf->log.path);
		return -1;
	}
	if (conf->admin_socket != NULL) {
		dir_of(conf->admin_socket, dir, sizeof(dir));
		if (!dir_there(dir, "admin_socket", file, check_only, why, len))
			return -1;
	}
	return 0;
}

int
main(int argc, char *argv[])
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "check", no_argument, NULL, 'k' },
		{ "reconfigure", no_argument, NULL, 'r' },
		{ "bootstrap", no_argument, NULL, 'b' },
		{ "reinit", no_argument, NULL, 'R' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	struct repld_conf conf;
	struct node node;
	const char *path = NULL;
	char err[512];
	struct node_start_how how = { 0 };
	bool check = false, node_in_use = false;
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
		case 'r':
			how.reconfigure = true;
			break;
		case 'b':
			how.bootstrap = true;
			break;
		case 'R':
			how.reinit = true;
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
			return REPLD_EXIT_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "repld: unexpected argument %s (try --help)\n",
			argv[optind]);
		return REPLD_EXIT_USAGE;
	}
	if (path == NULL) {
		fprintf(stderr, "repld: no configuration: -c FILE (try --help)\n");
		return REPLD_EXIT_USAGE;
	}
	if (how.bootstrap && how.reinit) {
		fprintf(stderr, "repld: --bootstrap and --reinit exclude each other "
			"(try --help)\n");
		return REPLD_EXIT_USAGE;
	}
	if (repld_conf_load(path, &conf, err, sizeof(err)) != 0) {
		fprintf(stderr, "%s\n", err);
		return REPLD_EXIT_USAGE;
	}
	/* the files as the engine loads them, before any log is touched */
	if (conf.tls.ca != NULL && repl_tls_check(conf.tls.ca, conf.tls.cert,
			conf.tls.key, err, sizeof(err)) != 0) {
		fprintf(stderr, "%s: %s\n", path, err);
		repld_conf_free(&conf);
		return REPLD_EXIT_USAGE;
	}
	if (paths_check(&conf, path, check, err, sizeof(err)) != 0) {
		fprintf(stderr, "%s: %s\n", path, err);
		repld_conf_free(&conf);
		return REPLD_EXIT_USAGE;
	}
	if (check) {
		printf("%s: ok\n", path);
		repld_conf_free(&conf);
		return 0;
	}
	/* from here on one format for repld's lines and librepl's; usage and
	 * configuration errors above stay plain, for whoever typed them */
	log_init();
	log_set_threshold(log_level_of(conf.log_level));
	notify_init();
	catch_signals();
	node_init(&node, path, &conf);
	ret = run(&node, &how, &node_in_use);
	if (!node_in_use)
		node_free(&node);
	return ret;
}
