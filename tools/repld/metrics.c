/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * metrics.c -- repld's counters and its /metrics text (metrics.h).
 *
 * Every family documented in repld(8) is written at every scrape, with its
 * # HELP and # TYPE; a family that this node's role has no value for (a
 * replica's lag on a replica node, a session's state on the primary) has
 * no sample.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "archiver.h"
#include "archiver_base.h"
#include "coordinator.h"
#include "metrics.h"
#include "metrics_process.h"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "unknown"
#endif

/* repld_append_durable_seconds' upper bounds: 10 us .. 1 s */
#define LATENCY_BOUNDS 16
static const uint64_t bound_ns[LATENCY_BOUNDS] = {
	10000, 25000, 50000, 100000, 250000, 500000,
	1000000, 2500000, 5000000, 10000000, 25000000, 50000000,
	100000000, 250000000, 500000000, 1000000000,
};

static struct {
	atomic_uint_fast64_t acknowledged, failed, bytes;
	atomic_uint_fast64_t durable_ns;	/* the latencies' sum */
	atomic_uint_fast64_t bucket[LATENCY_BOUNDS + 1];	/* the last: +Inf */
} appends;

void
metrics_append_answered(uint64_t received_ns, size_t bytes, int err)
{
	uint64_t ns, now;
	int b = 0;

	if (err != 0) {
		atomic_fetch_add_explicit(&appends.failed, 1, memory_order_relaxed);
		return;
	}
	now = metrics_now_ns();
	ns = now > received_ns ? now - received_ns : 0;
	while (b < LATENCY_BOUNDS && ns > bound_ns[b])
		b++;
	atomic_fetch_add_explicit(&appends.bucket[b], 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&appends.durable_ns, ns, memory_order_relaxed);
	atomic_fetch_add_explicit(&appends.bytes, bytes, memory_order_relaxed);
	atomic_fetch_add_explicit(&appends.acknowledged, 1, memory_order_relaxed);
}

void
metrics_append_refused(void)
{
	atomic_fetch_add_explicit(&appends.failed, 1, memory_order_relaxed);
}

static uint64_t
get(atomic_uint_fast64_t *v)
{
	return atomic_load_explicit(v, memory_order_relaxed);
}

/* the link's and the session's states, as STATUS names them */

static const char *const session_states[REPL_SESSION_STATES] = {
	[REPL_SESSION_IDLE] = "idle",
	[REPL_SESSION_FLOOR] = "floor",
	[REPL_SESSION_FOLLOWING] = "following",
	[REPL_SESSION_FENCED_FOR] = "fenced_for",
	[REPL_SESSION_STOPPED] = "stopped",
};

/* what one scrape reads of the node, each part copied once */
struct view {
	enum node_role role;
	bool primary;			/* st and rs[] are the primary's */
	struct repl_status st;
	struct retention_info ri;
	int n_peers, quorum;
	char peer[REPLD_PEERS_MAX][REPLD_ADDRESS_MAX + 8];
	bool peer_ok[REPLD_PEERS_MAX];
	struct repl_replica_status rs[REPLD_PEERS_MAX];
	struct repl_replica_info info;	/* a replica's (or down) */
};

static void
view_get(struct node *n, struct view *v)
{
	struct repl *repl;
	bool changing;

	memset(v, 0, sizeof(*v));
	pthread_mutex_lock(&n->lock);
	v->n_peers = n->conf.n_peers;
	v->quorum = n->conf.quorum;
	for (int i = 0; i < v->n_peers; i++)
		snprintf(v->peer[i], sizeof(v->peer[i]), "%s:%u",
			n->conf.peers[i].address, n->conf.peers[i].control_port);
	pthread_mutex_unlock(&n->lock);
	/* as STATUS does: the primary's handle cannot go meanwhile */
	if ((repl = node_try_enter(n, &changing)) != NULL) {
		v->primary = true;
		v->role = NODE_PRIMARY;
		repl_status(repl, &v->st);
		for (int i = 0; i < v->n_peers; i++)
			v->peer_ok[i] = repl_replica_status(repl, i, &v->rs[i]) == 0;
		node_leave(n);
		retention_get(&n->retention, &v->ri);
	} else {
		v->role = node_role(n);
		if (v->role == NODE_PRIMARY)	/* changing: no handle now */
			v->role = NODE_DOWN;
		node_replica_info(n, &v->info);
	}
}

static void
gauge(struct mtext *t, const char *name, const char *help, bool has,
		uint64_t value)
{
	mtext_family(t, name, "gauge", help);
	if (has)
		mtext_sample_u64(t, name, NULL, value);
}

static void
counter(struct mtext *t, const char *name, const char *help, bool has,
		uint64_t value)
{
	mtext_family(t, name, "counter", help);
	if (has)
		mtext_sample_u64(t, name, NULL, value);
}

static void
appends_text(struct mtext *t)
{
	double bounds[LATENCY_BOUNDS];
	uint64_t counts[LATENCY_BOUNDS + 1];

	counter(t, "repld_appends_total", "Appends acknowledged durable to "
		"the admin socket's clients.", true, get(&appends.acknowledged));
	counter(t, "repld_appends_failed_total", "Appends answered with an "
		"error (refused, failed, or timed out).", true, get(&appends.failed));
	counter(t, "repld_append_bytes_total", "Payload bytes of the appends "
		"acknowledged.", true, get(&appends.bytes));
	for (int i = 0; i < LATENCY_BOUNDS; i++) {
		bounds[i] = (double)bound_ns[i] / 1e9;
		counts[i] = get(&appends.bucket[i]);
	}
	counts[LATENCY_BOUNDS] = get(&appends.bucket[LATENCY_BOUNDS]);
	mtext_family(t, "repld_append_durable_seconds", "histogram",
		"Time from an append received to its acknowledgement (durable by "
		"the quorum rule).");
	mtext_histogram(t, "repld_append_durable_seconds", bounds, counts,
		LATENCY_BOUNDS, (double)get(&appends.durable_ns) / 1e9);
}

static void
log_text(struct mtext *t, const struct view *v)
{
	bool up = v->role != NODE_DOWN || v->info.size_bytes != 0;
	const struct repl_status *st = &v->st;
	const struct repl_replica_info *in = &v->info;
	bool p = v->primary;

	gauge(t, "repld_epoch", "The epoch this node's log is in.", up,
		p ? st->epoch : in->epoch);
	gauge(t, "repld_config_epoch", "The epoch of the membership this node "
		"holds (0: none).", up, p ? st->config_epoch : in->config_epoch);
	gauge(t, "repld_log_first_lsn", "Oldest record the log keeps (0: none).",
		up, p ? st->first_lsn : in->first_lsn);
	gauge(t, "repld_log_last_lsn", "Newest record appended to the log "
		"(0: none).", up, p ? st->last_lsn : in->last_lsn);
	gauge(t, "repld_log_durable_lsn", "Newest record durable in this "
		"node's log.", up, p ? st->durable_lsn : in->durable_lsn);
	gauge(t, "repld_log_commit_lsn", "Newest record durable by the quorum "
		"rule (the primary).", p, st->commit_lsn);
	gauge(t, "repld_log_used_bytes", "Bytes of the log in use.", up,
		p ? st->used_bytes : in->used_bytes);
	gauge(t, "repld_log_size_bytes", "Bytes the log holds.", up,
		p ? st->size_bytes : in->size_bytes);
	counter(t, "repld_log_flushes_total", "Ranges of the log made durable "
		"(flushes).", up, p ? st->persist_ranges : in->persist_ranges);
	counter(t, "repld_log_fdatasyncs_total", "Barriers of the medium those "
		"flushes took (the file backend: fdatasync calls).", up,
		p ? st->persist_barriers : in->persist_barriers);
}

static void
primary_text(struct mtext *t, const struct view *v)
{
	const struct retention_info *ri = &v->ri;
	bool p = v->primary;

	gauge(t, "repld_quorum", "Replicas that must hold a record before it "
		"is acknowledged.", true, (uint64_t)v->quorum);
	gauge(t, "repld_replicas_streaming", "Replicas streaming (counting "
		"toward the quorum).", p, (uint64_t)v->st.replicas_up);
	gauge(t, "repld_can_acknowledge", "1 when this node is the primary, "
		"its streaming replicas meet the quorum and its log has room.", true,
		p && !v->st.fenced && v->st.replicas_up >= v->quorum && !v->st.log_full);
	gauge(t, "repld_log_full", "1 when the primary's last append found its "
		"log full (REPL_E_FULL) and nothing was released since.", p,
		(uint64_t)(v->st.log_full != 0));
	counter(t, "repld_log_appends_full_total", "Appends refused because the "
		"log was full (REPL_E_FULL).", p, v->st.appends_full);
	gauge(t, "repld_retention_release_lsn", "The release point of the "
		"retention's last pass (the primary).", p, ri->release_lsn);
	gauge(t, "repld_retention_checkpoint_lsn", "The last RELEASE of a "
		"checkpointer (the primary).", p, ri->checkpoint_lsn);
	counter(t, "repld_retention_releases_total", "Releases that moved the "
		"log's start (the primary).", p, ri->releases);
	gauge(t, "repld_space_alarm", "1 while the log's use is at or above "
		"retention.alarm_percent (the primary).", p, ri->alarm);
	counter(t, "repld_space_alarms_total", "Times the space alarm was "
		"raised (the primary).", p, ri->alarms);
	gauge(t, "repld_readers", "Readers (READ) streaming committed records "
		"(the primary).", p, (uint64_t)ri->n_readers);
	counter(t, "repld_readers_lost_total", "Readers that fell more than "
		"retention.reader_max_lag behind (the primary).", p, ri->readers_lost);
	gauge(t, "repld_retention_unseen_replicas", "Replicas not connected "
		"since this node became the primary: the log releases nothing for "
		"them, within retention.replica_max_hold (the primary).", p,
		(uint64_t)ri->unseen_replicas);
	counter(t, "repld_retention_replica_holds_dropped_total", "Times the log "
		"was released past what a replica away (down, or not seen) may "
		"hold, past retention.replica_max_hold (the primary).", p,
		ri->replica_holds_dropped);
}

/* one family, a sample per replica (labels replica="host:port") */
enum rfield {
	R_STREAMING, R_FLUSHED, R_LAG_RECORDS, R_LAG_BYTES, R_RECONNECTS,
	R_BATCHES, R_FLUSHES, R_CATCH_UPS, R_FULL_RESYNCS, R_CATCHUP_TOTAL,
	R_CATCHUP_DONE,
};

static uint64_t
rfield(const struct repl_replica_status *rs, enum rfield f)
{
	switch (f) {
	case R_STREAMING:	return rs->state == REPL_REPLICA_STREAMING;
	case R_FLUSHED:		return rs->flushed_lsn;
	case R_LAG_RECORDS:	return rs->lag_records;
	case R_LAG_BYTES:	return rs->lag_bytes;
	case R_RECONNECTS:	return rs->reconnects;
	case R_BATCHES:		return rs->batches;
	case R_FLUSHES:		return rs->flushes;
	case R_CATCH_UPS:	return rs->catch_ups;
	case R_FULL_RESYNCS:	return rs->full_resyncs;
	case R_CATCHUP_TOTAL:	return rs->catchup_total_bytes;
	case R_CATCHUP_DONE:	return rs->catchup_done_bytes;
	}
	return 0;
}

static void
per_replica(struct mtext *t, const struct view *v, const char *name,
		const char *type, const char *help, enum rfield f)
{
	mtext_family(t, name, type, help);
	for (int i = 0; v->primary && i < v->n_peers; i++)
		if (v->peer_ok[i]) {
			const char *l[] = { "replica", v->peer[i], NULL };

			mtext_sample_u64(t, name, l, rfield(&v->rs[i], f));
		}
}

static void
replicas_text(struct mtext *t, const struct view *v)
{
	const char *name;

	per_replica(t, v, "repld_replica_streaming", "gauge", "1 while the "
		"replica streams (counts toward the quorum).", R_STREAMING);
	per_replica(t, v, "repld_replica_flushed_lsn", "gauge", "Newest LSN "
		"flushed on the replica.", R_FLUSHED);
	per_replica(t, v, "repld_replica_lag_records", "gauge", "Records "
		"appended on the primary, not yet flushed on the replica.",
		R_LAG_RECORDS);
	per_replica(t, v, "repld_replica_lag_bytes", "gauge", "Bytes appended "
		"on the primary, not yet flushed on the replica.", R_LAG_BYTES);
	name = "repld_replica_lag_seconds";
	mtext_family(t, name, "gauge", "How long the oldest record not yet "
		"flushed on the replica has waited.");
	for (int i = 0; v->primary && i < v->n_peers; i++)
		if (v->peer_ok[i]) {
			const char *l[] = { "replica", v->peer[i], NULL };

			mtext_sample(t, name, l, (double)v->rs[i].lag_ms / 1e3);
		}
	per_replica(t, v, "repld_replica_reconnects_total", "counter",
		"Times the primary connected to the replica again.", R_RECONNECTS);
	per_replica(t, v, "repld_replica_batches_total", "counter",
		"Write+flush batches posted to the replica.", R_BATCHES);
	per_replica(t, v, "repld_replica_flushes_total", "counter",
		"Of those batches, the ones flushed on the replica.", R_FLUSHES);
	per_replica(t, v, "repld_replica_catch_ups_total", "counter",
		"Connections to the replica that caught up and streamed.",
		R_CATCH_UPS);
	per_replica(t, v, "repld_replica_full_resyncs_total", "counter",
		"Catch-ups that copied the whole log.", R_FULL_RESYNCS);
	per_replica(t, v, "repld_replica_catchup_bytes", "gauge", "Bytes the "
		"replica lacked when its catch-up in progress began (0: none).",
		R_CATCHUP_TOTAL);
	per_replica(t, v, "repld_replica_catchup_done_bytes", "gauge", "Of "
		"those, the bytes the replica received (0: no catch-up).",
		R_CATCHUP_DONE);

	/* the link's states: each replica x each state */
	static const char *const fam[3][3] = {
		{ "repld_replica_link_state", "gauge",
		  "1 for the state the link to the replica is in, else 0." },
		{ "repld_replica_link_transitions_total", "counter",
		  "Times the link to the replica entered the state." },
		{ "repld_replica_link_state_seconds_total", "counter",
		  "Time the link to the replica spent in the state." },
	};
	for (int k = 0; k < 3; k++) {
		mtext_family(t, fam[k][0], fam[k][1], fam[k][2]);
		for (int i = 0; v->primary && i < v->n_peers; i++) {
			const struct repl_replica_status *rs = &v->rs[i];

			if (!v->peer_ok[i])
				continue;
			for (int s = 0; s < REPL_LINK_STATES; s++) {
				const char *l[] = { "replica", v->peer[i],
					"state", repl_link_state_name((enum repl_link_state)s), NULL };

				if (k == 0)
					mtext_sample_u64(t, fam[k][0], l,
						rs->link_state == (enum repl_link_state)s);
				else if (k == 1)
					mtext_sample_u64(t, fam[k][0], l,
						rs->state_entries[s]);
				else
					mtext_sample(t, fam[k][0], l,
						(double)rs->state_ms[s] / 1e3);
			}
		}
	}
}

/* a replica node's session with its primary */
static void
session_text(struct mtext *t, const struct view *v)
{
	const struct repl_replica_info *in = &v->info;
	bool r = v->role == NODE_REPLICA;

	gauge(t, "repld_following", "1 while this replica serves a primary's "
		"session (connected to it).", r, (uint64_t)(in->following != 0));
	static const char *const fam[2][3] = {
		{ "repld_session_state", "gauge",
		  "1 for the state this replica's session is in, else 0." },
		{ "repld_session_transitions_total", "counter",
		  "Times this replica's session entered the state." },
	};
	for (int k = 0; k < 2; k++) {
		mtext_family(t, fam[k][0], fam[k][1], fam[k][2]);
		for (int s = 0; r && s < REPL_SESSION_STATES; s++) {
			const char *l[] = { "state", session_states[s], NULL };

			mtext_sample_u64(t, fam[k][0], l, k == 0 ?
				in->session == (enum repl_session_state)s :
				in->state_entries[s]);
		}
	}
	counter(t, "repld_sessions_total", "Sessions this replica began with "
		"a primary.", r, in->sessions);
	counter(t, "repld_session_fences_total", "Times a primary's HELLO "
		"fenced this replica.", r, in->fences);
	counter(t, "repld_session_silent_drops_total", "Sessions dropped "
		"because the primary fell silent.", r, in->silent_drops);
	counter(t, "repld_session_commits_total", "COMMIT messages this replica "
		"received.", r, in->commits);
	gauge(t, "repld_replica_readable_lsn", "Newest record readers of this "
		"replica's log can take: committed, and held here.", r,
		in->readable_lsn);
	mtext_family(t, "repld_replica_last_contact_seconds", "gauge", "Time "
		"since this replica last heard from a primary it followed.");
	if (r && in->primary_silent_ms != UINT64_MAX)
		mtext_sample(t, "repld_replica_last_contact_seconds", NULL,
			(double)in->primary_silent_ms / 1e3);
}

/* sqlite_copy: families always, samples with a copy configured */
static void
copy_text(struct mtext *t, struct node *n)
{
	struct rv_copy_status st = { 0 };
	bool has = node_copy_status(n, &st);

	gauge(t, "repld_sqlite_copy_applied_lsn", "The last record applied to "
		"this replica's copy of its SQLite database.", has, st.applied_lsn);
	counter(t, "repld_sqlite_copy_transactions_total", "Transaction records "
		"applied to the copy since the daemon started.", has, st.transactions);
	counter(t, "repld_sqlite_copy_lock_wait_seconds_total", "Seconds the copy "
		"waited for readers' transactions to end.", has, st.lock_wait_ms / 1000);
	gauge(t, "repld_sqlite_copy_failed", "1 once the copy met a record or a "
		"file error it cannot get past (status: sqlite_copy.error).", has,
		(uint64_t)(st.state == RV_COPY_FAILED));
	gauge(t, "repld_sqlite_copy_holding", "1 while the copy holds the "
		"records after its base in the log (0 once it failed).", has,
		(uint64_t)st.holding);
	gauge(t, "repld_sqlite_copy_remaking", "1 while the copy is made anew "
		"from the primary's image (status: sqlite_copy.error).", has,
		(uint64_t)(st.state == RV_COPY_REMAKING));
	counter(t, "repld_sqlite_copy_remakes_total", "Times the copy was made "
		"anew from the primary's image since the daemon started.", has,
		st.remakes);
}

/* automatic failover: families always, samples with a coordinator */
static void
coordinator_text(struct mtext *t, struct node *n)
{
	struct coordinator *coord = atomic_load(&n->coord);
	struct coord_view cv = { 0 };
	bool has = coord != NULL;

	if (has)
		coordinator_view(coord, &cv);
	gauge(t, "repld_coordinator_reachable", "1 while etcd answers the "
		"coordinator; 0 means automatic failover is paused.", has,
		cv.reachable);
	gauge(t, "repld_coordinator_unreachable_seconds", "Seconds since etcd "
		"last answered (0 while it answers).", has, cv.unreachable_ms / 1000);
	gauge(t, "repld_coordinator_leader", "1 while this node holds the "
		"leader key.", has, cv.holds_leader);
	gauge(t, "repld_coordinator_maintenance", "1 while etcd holds the "
		"maintenance key: no node takes over by itself.", has, cv.maintenance);
	counter(t, "repld_coordinator_campaigns_total", "Campaigns for the "
		"leader key this node began.", has, cv.campaigns);
	counter(t, "repld_coordinator_promotions_total", "Campaigns this node "
		"won and promoted itself after.", has, cv.promotions);
	counter(t, "repld_coordinator_takeovers_total", "Leases of silent "
		"primaries this node revoked to take over before they ran out.",
		has, cv.takeovers);
	counter(t, "repld_coordinator_etcd_requests_total", "HTTP requests the "
		"coordinator sent to etcd (each attempt on each endpoint).", has,
		cv.etcd_requests);
	gauge(t, "repld_coordinator_membership_config_epoch", "The configuration "
		"epoch etcd's membership key holds (0: absent or not a membership).",
		has, cv.has_ms ? cv.ms.config_epoch : 0);
	gauge(t, "repld_coordinator_membership_pending", "1 while etcd's "
		"membership key holds a later configuration epoch than this node's "
		"log (a change not yet carried, or not yet given to this replica).",
		has, strcmp(cv.ms_state, "pending") == 0);
}

/* the archiver: families always, samples with an archive group */
static void
archive_text(struct mtext *t, struct node *n)
{
	struct archiver *a = atomic_load(&n->archiver);
	struct archiver_info ai = { 0 };
	struct archiver_base_info bi = { 0 };
	bool has = a != NULL;

	if (has) {
		archiver_get(a, &ai);
		archiver_base_get(&bi);
	}
	gauge(t, "repld_archive_archived_lsn", "The newest LSN the archiver "
		"published to the archive (0: none since the start).", has,
		ai.archived_lsn);
	gauge(t, "repld_archive_lag_records", "Committed records not yet "
		"published to the archive.", has, ai.lag_records);
	gauge(t, "repld_archive_lag_seconds", "Seconds the oldest record read "
		"and not yet published has waited.", has, ai.lag_ms / 1000);
	gauge(t, "repld_archive_last_success_timestamp_seconds", "Unix time of "
		"the archiver's last publish (0: none since the start).", has,
		ai.last_success_ms / 1000);
	counter(t, "repld_archive_failures_total", "Failed attempts to write "
		"to the archive since the start.", has, ai.failures);
	gauge(t, "repld_archive_holding", "1 while the archiver holds the "
		"log's records it has not archived.", has, ai.holding);
	gauge(t, "repld_archive_hold_dropped", "1 while the archiver lets go "
		"of the log: it holds more than archive.max_hold.", has,
		ai.hold_dropped);
	gauge(t, "repld_archive_gap", "1 once records left the log before the "
		"archiver read them: the archive has a gap.", has, ai.gap_at != 0);
	gauge(t, "repld_archive_last_base_lsn", "The LSN of the last base of "
		"the sqlite_copy database the archiver published (0: none since the "
		"start).", has, bi.last_base_lsn);
	gauge(t, "repld_archive_last_base_timestamp_seconds", "Unix time the "
		"archiver published its last base (0: none since the start).", has,
		bi.last_base_ms / 1000);
}

void
metrics_render(struct node *n, struct mtext *t)
{
	static const char *const roles[] = { "primary", "replica", "down" };
	static const enum node_role role_of[] = { NODE_PRIMARY, NODE_REPLICA,
		NODE_DOWN };
	const char *ver[] = { "version", PACKAGE_VERSION, NULL };
	struct view v;

	view_get(n, &v);
	mtext_family(t, "repld_build_info", "gauge", "Always 1; the version "
		"of repld as a label.");
	mtext_sample_u64(t, "repld_build_info", ver, 1);
	mtext_family(t, "repld_role", "gauge", "1 for the role this node has "
		"now, else 0.");
	for (int i = 0; i < 3; i++) {
		const char *l[] = { "role", roles[i], NULL };

		mtext_sample_u64(t, "repld_role", l, v.role == role_of[i]);
	}
	appends_text(t);
	log_text(t, &v);
	primary_text(t, &v);
	replicas_text(t, &v);
	session_text(t, &v);
	copy_text(t, n);
	coordinator_text(t, n);
	archive_text(t, n);
	metrics_process_text(t);
}
