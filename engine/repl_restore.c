/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * repl_restore.c -- librepl's restore (repl.h: repl_restore_*): a log
 * written offline from records, over log/wal_restore.c.
 */
#include "config.h"

#include <stdlib.h>

#include "facade.h"
#include "log/wal_restore.h"

struct repl_restore {
	struct wal_restore *w;
};

int
repl_restore_open(const struct repl_restore_cfg *cfg, struct repl_restore **restore_ptr)
{
	struct repl_restore *r;
	int ret;

	if (cfg == NULL || restore_ptr == NULL || cfg->path == NULL ||
	    cfg->cluster_uuid == NULL)
		return REPL_E_INVAL;
	if ((r = calloc(1, sizeof(*r))) == NULL)
		return REPL_E_NOMEM;
	if ((ret = wal_restore_open(cfg->path, cfg->size, cfg->cluster_uuid,
			cfg->node_id, &r->w))) {
		free(r);
		return facade_err(ret);
	}
	*restore_ptr = r;
	return 0;
}

int
repl_restore_add(struct repl_restore *restore, const struct repl_log_record *rec)
{
	if (restore == NULL || rec == NULL)
		return REPL_E_INVAL;
	return facade_err(wal_restore_add(restore->w, rec));
}

int
repl_restore_finish(struct repl_restore **restore_ptr)
{
	int ret;

	if (restore_ptr == NULL || *restore_ptr == NULL)
		return REPL_E_INVAL;
	ret = wal_restore_finish((*restore_ptr)->w);
	free(*restore_ptr);
	*restore_ptr = NULL;
	return facade_err(ret);
}

void
repl_restore_abort(struct repl_restore **restore_ptr)
{
	if (restore_ptr == NULL || *restore_ptr == NULL)
		return;
	wal_restore_abort((*restore_ptr)->w);
	free(*restore_ptr);
	*restore_ptr = NULL;
}
