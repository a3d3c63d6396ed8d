/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rv_db_membership.c -- a replicated database's membership changed while it
 * runs (rv_db.h: rv_db_reconfigure), its state read for the SQL functions
 * and the admin socket (rv_db_inspect), and that socket started.
 */
#include "config.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3ext.h>
SQLITE_EXTENSION_INIT3

#include "repl.h"
#include "primary_cfg.h"
#include "repld_conf.h"
#include "rv_admin_sock.h"
#include "rv_db.h"
#include "rv_db_internal.h"
#include "rv_release.h"

void
rv_db_inspect(struct rv_db *d, void (*fn)(const struct rv_db_view *v, void *arg),
		void *arg)
{
	struct rv_db_view v;

	pthread_rwlock_rdlock(&d->log_lock);
	v = (struct rv_db_view){ .path = d->path, .repl = d->repl, .conf = &d->conf,
		.rel = d->rel, .appended_lsn = atomic_load(&d->appended_lsn),
		.durable_lsn = atomic_load(&d->durable_lsn) };
	fn(&v, arg);
	pthread_rwlock_unlock(&d->log_lock);
}

int
rv_db_admin_listen(struct rv_db *d, char *why, size_t whylen)
{
	int ret = 0;

	/* once per database, whichever connection asks first */
	pthread_mutex_lock(&dbs_lock);
	if (d->admin == NULL && rv_admin_sock_start(d, d->conf.admin_socket,
			&d->admin, why, whylen) != 0)
		ret = -1;
	pthread_mutex_unlock(&dbs_lock);
	return ret;
}

/* the log of conf opened again as the primary, its membership the next one */
static int
log_reconfigure(const struct repld_conf *conf, struct repl **out)
{
	struct primary_cfg pc;
	bool no_rdma;

	primary_cfg_fill(&pc, conf, primary_cfg_provider(conf, &no_rdma));
	pc.cfg.reconfigure = 1;
	return repl_open(&pc.cfg, out);
}

/* why an open under conf's membership failed, as repld says it */
static void
open_failed(const struct repld_conf *conf, int ret, char *why, size_t whylen)
{
	if (ret == REPL_E_NO_QUORUM)
		snprintf(why, whylen, "fewer than n - k + 1 nodes reachable (%d "
			"replicas, quorum %d; librepl's log names the unreachable "
			"ones)", conf->n_peers, conf->quorum);
	else if (ret == REPL_E_MEMBERSHIP)
		snprintf(why, whylen, "%s (librepl's log says why: a change still in "
			"progress is finished first)", repl_strerror(ret));
	else
		snprintf(why, whylen, "%s", repl_strerror(ret));
}

static void
peers_free(struct repld_peer *p, int n)
{
	for (int i = 0; i < n; i++) {
		free(p[i].address);
		p[i].address = NULL;
	}
}

int
rv_db_reconfigure(struct rv_db *d, const struct repld_peer *peers, int n_peers,
		int quorum, struct repl_status *st, char *why, size_t whylen)
{
	struct repld_peer old[REPLD_PEERS_MAX], fresh[REPLD_PEERS_MAX];
	int old_n, old_k, ret, back;
	uint64_t lsn;
	char err[256];

	if (n_peers < 0 || n_peers > REPLD_PEERS_MAX || quorum < 0 || quorum > n_peers) {
		snprintf(why, whylen, "%d replicas with quorum %d", n_peers, quorum);
		return REPL_E_INVAL;
	}
	memset(fresh, 0, sizeof(fresh));
	for (int i = 0; i < n_peers; i++)
		if ((fresh[i].address = strdup(peers[i].address)) == NULL) {
			peers_free(fresh, i);
			snprintf(why, whylen, "out of memory");
			return REPL_E_NOMEM;
		} else {
			fresh[i].control_port = peers[i].control_port;
		}
	/* this thread's own armed commit needs the log: waited for first */
	(void)rv_db_wait_pending();
	/*
	 * Under lock no commit is between its append and its wait; with
	 * log_lock no armed commit, reader or checkpoint waits on the log.
	 */
	pthread_mutex_lock(&d->lock);
	pthread_rwlock_wrlock(&d->log_lock);
	if (d->repl == NULL) {
		ret = REPL_E_INVAL;
		snprintf(why, whylen, "the log is closed (an earlier change failed): "
			"close and open the database again");
		goto out;
	}
	/*
	 * Drained: whatever was appended is durable before the log closes, so
	 * no commit's wait straddles the change.  A poisoned database's last
	 * record stays in doubt: the promotion below decides it, as any.
	 */
	lsn = atomic_load(&d->appended_lsn);
	if (d->poisoned == 0 && lsn > atomic_load(&d->durable_lsn)) {
		if ((ret = repl_wait_durable(d->repl, lsn, d->timeout_ms)) != 0) {
			snprintf(why, whylen, "LSN %llu, appended before the change, is "
				"not durable: %s; nothing changed",
				(unsigned long long)lsn, repl_strerror(ret));
			goto out;
		}
		rv_db_durable_at(d, lsn);
	}
	if (d->rel != NULL)
		rv_release_pause(d->rel);
	memcpy(old, d->conf.peers, sizeof(old));
	old_n = d->conf.n_peers;
	old_k = d->conf.quorum;
	(void)repl_close(&d->repl);
	memcpy(d->conf.peers, fresh, sizeof(fresh));
	d->conf.n_peers = n_peers;
	d->conf.quorum = quorum;
	/* the same log: the database file stays as it is, nothing is rebuilt */
	if ((ret = log_reconfigure(&d->conf, &d->repl)) == 0) {
		peers_free(old, old_n);
		(void)repl_status(d->repl, st);
		sqlite3_log(SQLITE_NOTICE, "replvfs: %s: membership %d replicas, quorum "
			"%d -> %d replicas, quorum %d (configuration epoch %llu%s)",
			d->path, old_n, old_k, n_peers, quorum,
			(unsigned long long)st->config_epoch,
			st->config_joint ? ", joint: not committed yet" : "");
	} else {
		open_failed(&d->conf, ret, err, sizeof(err));
		memcpy(d->conf.peers, old, sizeof(old));
		d->conf.n_peers = old_n;
		d->conf.quorum = old_k;
		peers_free(fresh, n_peers);
		if ((back = rv_db_log_open(&d->conf, false, &d->repl)) == 0) {
			snprintf(why, whylen, "the new membership did not take: %s; the "
				"old one (%d replicas, quorum %d) is open again", err,
				old_n, old_k);
		} else {
			char err2[256];

			/* nothing to commit through: the file stays as the log has it */
			open_failed(&d->conf, back, err2, sizeof(err2));
			d->repl = NULL;
			d->poisoned = back;
			snprintf(why, whylen, "the new membership did not take: %s; nor "
				"did the old one open again: %s; this database takes no "
				"more writes until opened again", err, err2);
		}
		sqlite3_log(SQLITE_WARNING, "replvfs: %s: %s", d->path, why);
	}
	if (d->rel != NULL && d->repl != NULL)
		rv_release_resume(d->rel, d->repl);
	pthread_rwlock_unlock(&d->log_lock);
	pthread_mutex_unlock(&d->lock);
	return ret;
out:
	pthread_rwlock_unlock(&d->log_lock);
	pthread_mutex_unlock(&d->lock);
	peers_free(fresh, n_peers);
	return ret;
}
