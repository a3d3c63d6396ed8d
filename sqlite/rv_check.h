/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rv_check.h -- a database file rebuilt from the log, checked by SQLite
 * before it replaces the database (rv_rebuild's check): the URI parameter
 * repl_rebuild_check names how (docs/sqlite.md).
 */
#ifndef REPLSQLITE_RV_CHECK_H
#define REPLSQLITE_RV_CHECK_H

#include <stdbool.h>

#include "rv_apply.h"

/*
 * The check a repl_rebuild_check value names: "integrity" (NULL too: the
 * default), "quick" or "off" (*check NULL).  false for any other value.
 */
bool rv_check_by_name(const char *name, rv_rebuild_check **check);

#endif
