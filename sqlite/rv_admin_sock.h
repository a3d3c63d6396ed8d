/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rv_admin_sock.h -- repld's admin socket, as far as a replvfs primary
 * serves it, in the application's process (URI parameter repl_admin=1:
 * repl_conf's admin_socket), so that replctl(8) works against it:
 *
 *   STATUS                   rv_admin_status's reply
 *   ADD HOST:PORT [QUORUM]   rv_admin_change
 *   REMOVE HOST:PORT [QUORUM]
 *
 * Any other verb of admin_proto.h is answered WRONG_ROLE: the records of
 * the log are SQLite's commits, and a promotion is an open elsewhere.
 * One thread serves one client at a time; only this process's user (and
 * root) is served, whatever the socket file's mode.
 */
#ifndef REPLSQLITE_RV_ADMIN_SOCK_H
#define REPLSQLITE_RV_ADMIN_SOCK_H

#include <stddef.h>

struct rv_db;
struct rv_admin_sock;

/* listen at path for d; 0, or -1 with why (a sentence) */
int rv_admin_sock_start(struct rv_db *d, const char *path, struct rv_admin_sock **out,
		char *why, size_t whylen);
/* the thread ends (a change it runs first), the socket file goes */
void rv_admin_sock_stop(struct rv_admin_sock **s);

#endif
