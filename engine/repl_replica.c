/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * repl_replica.c -- librepl's replica side (repl.h: repl_replica_*) over
 * replica/replica.h.  The handle owns copies of every string of the
 * configuration (the caller's may go once open returned), the stop flag
 * and the state the serving loop keeps for other threads.
 */
#include "config.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "facade.h"
#include "replica/replica.h"

struct repl_replica_node {
	struct replica_cfg cfg;		/* points into what follows */
	struct replica *replica;
	atomic_int stop;		/* lock-free: set from a signal handler */
	struct replica_state state;
	struct replica_peer *peers;
	char *strs[8 + 2 * 64];		/* the copied strings, to free */
	int n_strs;
};

/* a copy owned by the node, or NULL for NULL; *ok false when out of memory */
static const char *
keep(struct repl_replica_node *n, const char *s, bool *ok)
{
	char *c;

	if (s == NULL)
		return NULL;
	if ((c = strdup(s)) == NULL || n->n_strs == (int)(sizeof(n->strs) /
			sizeof(n->strs[0]))) {
		free(c);
		*ok = false;
		return NULL;
	}
	n->strs[n->n_strs++] = c;
	return c;
}

static void
node_free(struct repl_replica_node *n)
{
	for (int i = 0; i < n->n_strs; i++)
		free(n->strs[i]);
	free(n->peers);
	replica_state_destroy(&n->state);
	free(n);
}

int
repl_replica_open(const struct repl_replica_cfg *cfg,
		struct repl_replica_node **node_ptr)
{
	struct repl_replica_node *n;
	enum rpma_ext_mem_backend backend;
	bool ok = true;
	int ret;

	if (cfg == NULL || node_ptr == NULL || cfg->path == NULL ||
	    cfg->addr == NULL || cfg->ctl_port == NULL || cfg->data_port == NULL ||
	    facade_backend(cfg->backend, &backend) != 0 ||
	    ((cfg->create || cfg->reinit) && cfg->size == 0) ||
	    cfg->n_peers < 0 || cfg->n_peers > 64 ||
	    (cfg->n_peers && cfg->peers == NULL) || cfg->quorum < 0 ||
	    cfg->timeout_ms < 0)
		return REPL_E_INVAL;
	for (int i = 0; i < cfg->n_peers; i++)
		if (cfg->peers[i].host == NULL || cfg->peers[i].port == NULL)
			return REPL_E_INVAL;
	if ((n = calloc(1, sizeof(*n))) == NULL)
		return REPL_E_NOMEM;
	if (replica_state_init(&n->state)) {
		free(n);
		return REPL_E_NOMEM;
	}
	atomic_init(&n->stop, 0);
	n->cfg = (struct replica_cfg){
		.backend = backend,
		.size = cfg->size,
		.create = cfg->create != 0,
		.reinit = cfg->reinit != 0,
		.n_peers = cfg->n_peers,
		.quorum = cfg->quorum,
		.node_id = cfg->node_id,
		.timeout_ms = cfg->timeout_ms ? cfg->timeout_ms : 2000,
		.stop = &n->stop,
		.state = &n->state,
		.test_refuse_data = cfg->test_refuse_data != 0,
	};
	memcpy(n->cfg.cluster_uuid, cfg->cluster_uuid, sizeof(n->cfg.cluster_uuid));
	n->cfg.path = keep(n, cfg->path, &ok);
	n->cfg.provider = keep(n, cfg->provider ? cfg->provider : "tcp", &ok);
	n->cfg.addr = keep(n, cfg->addr, &ok);
	n->cfg.ctl_port = keep(n, cfg->ctl_port, &ok);
	n->cfg.data_port = keep(n, cfg->data_port, &ok);
	n->cfg.tls_ca = keep(n, cfg->tls_ca, &ok);
	n->cfg.tls_cert = keep(n, cfg->tls_cert, &ok);
	n->cfg.tls_key = keep(n, cfg->tls_key, &ok);
	if (ok && cfg->n_peers > 0 &&
	    (n->peers = calloc((size_t)cfg->n_peers, sizeof(*n->peers))) == NULL)
		ok = false;
	for (int i = 0; ok && i < cfg->n_peers; i++) {
		n->peers[i].host = keep(n, cfg->peers[i].host, &ok);
		n->peers[i].port = keep(n, cfg->peers[i].port, &ok);
	}
	n->cfg.peers = n->peers;
	if (!ok) {
		node_free(n);
		return REPL_E_NOMEM;
	}
	if ((ret = replica_open(&n->cfg, &n->replica)) != 0) {
		node_free(n);
		return facade_err(ret);
	}
	*node_ptr = n;
	return 0;
}

int
repl_replica_run(struct repl_replica_node *node)
{
	if (node == NULL || node->replica == NULL)
		return REPL_E_INVAL;
	return facade_err(replica_serve(node->replica));
}

int
repl_replica_stop(struct repl_replica_node *node)
{
	if (node == NULL)
		return REPL_E_INVAL;
	atomic_store(&node->stop, 1);
	return 0;
}

int
repl_replica_info(struct repl_replica_node *node, struct repl_replica_info *info)
{
	if (node == NULL || info == NULL)
		return REPL_E_INVAL;
	replica_state_get(&node->state, info);
	return 0;
}

int
repl_replica_iterate(struct repl_replica_node *node, uint64_t from,
		repl_iterate_fn *cb, void *arg)
{
	int ret;

	if (node == NULL || node->replica == NULL || cb == NULL)
		return REPL_E_INVAL;
	ret = replica_iterate(node->replica, from, cb, arg);
	return ret < 0 ? facade_err(ret) : ret;
}

int
repl_replica_iterate_records(struct repl_replica_node *node, uint64_t from,
		repl_record_fn *cb, void *arg)
{
	int ret;

	if (node == NULL || node->replica == NULL || cb == NULL)
		return REPL_E_INVAL;
	ret = replica_iterate_records(node->replica, from, cb, arg);
	return ret < 0 ? facade_err(ret) : ret;
}

int
repl_replica_wait(struct repl_replica_node *node, uint64_t lsn, int timeout_ms)
{
	if (node == NULL || timeout_ms < 0)
		return REPL_E_INVAL;
	return replica_state_wait(&node->state, lsn, timeout_ms);
}

int
repl_replica_hold_slot(struct repl_replica_node *node, int slot, uint64_t lsn)
{
	if (node == NULL || slot < 0 || slot >= REPL_HOLD_SLOTS)
		return REPL_E_INVAL;
	replica_state_hold(&node->state, slot, lsn);
	return 0;
}

int
repl_replica_unhold_slot(struct repl_replica_node *node, int slot)
{
	if (node == NULL || slot < 0 || slot >= REPL_HOLD_SLOTS)
		return REPL_E_INVAL;
	replica_state_unhold(&node->state, slot);
	return 0;
}

int
repl_replica_hold(struct repl_replica_node *node, uint64_t lsn)
{
	return repl_replica_hold_slot(node, 0, lsn);
}

int
repl_replica_unhold(struct repl_replica_node *node)
{
	return repl_replica_unhold_slot(node, 0);
}

int
repl_replica_want_base(struct repl_replica_node *node, int want)
{
	if (node == NULL)
		return REPL_E_INVAL;
	replica_state_want_base(&node->state, want != 0);
	return 0;
}

int
repl_replica_close(struct repl_replica_node **node_ptr)
{
	if (node_ptr == NULL)
		return REPL_E_INVAL;
	if (*node_ptr == NULL)
		return 0;
	replica_close(&(*node_ptr)->replica);
	node_free(*node_ptr);
	*node_ptr = NULL;
	return 0;
}
