/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * node_copy.c -- a replica node's sqlite_copy (repld.conf(5)): the copy of
 * its replvfs database that sqlite/rv_copy.h follows, started with the
 * replica's thread and stopped before it, and what status shows of it.
 */
#include "config.h"

#include <stdio.h>

#include "archiver_base.h"
#include "log.h"
#include "node.h"

bool
node_copy_status(struct node *n, struct rv_copy_status *st)
{
	if (n->conf.sqlite_copy == NULL)
		return false;
	pthread_mutex_lock(&n->lock);
	if (n->copy != NULL)
		rv_copy_get(n->copy, st);
	else
		*st = n->copy_last;
	pthread_mutex_unlock(&n->lock);
	return true;
}

/* sqlite_copy: the replica's copy of its replvfs database, followed */
void
node_copy_start(struct node *n, struct repl_replica_node *replica)
{
	struct rv_copy *copy;
	char why[sizeof(n->copy_last.error)];

	if (n->conf.sqlite_copy == NULL)
		return;
	if (rv_copy_start(replica, n->conf.sqlite_copy, n->conf.cluster_uuid, &copy,
			why, sizeof(why)) != 0) {
		log_error("sqlite_copy %s: not followed: %s", n->conf.sqlite_copy, why);
		n->copy_last.state = RV_COPY_FAILED;
		snprintf(n->copy_last.error, sizeof(n->copy_last.error), "%s", why);
		return;
	}
	log_notice("sqlite_copy %s: follows the log's committed transactions",
		n->conf.sqlite_copy);
	pthread_mutex_lock(&n->lock);
	n->copy = copy;
	pthread_mutex_unlock(&n->lock);
	archiver_base_set_copy(copy, &n->conf);
}

void
node_copy_stop(struct node *n)
{
	struct rv_copy *copy;

	archiver_base_set_copy(NULL, &n->conf);	/* before the copy goes */
	pthread_mutex_lock(&n->lock);
	copy = n->copy;
	n->copy = NULL;
	if (copy != NULL)
		rv_copy_get(copy, &n->copy_last);
	pthread_mutex_unlock(&n->lock);
	/* not under n->lock: it joins the copy's thread */
	rv_copy_stop(&copy);
}
