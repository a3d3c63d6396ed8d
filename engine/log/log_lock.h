/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * log_lock.h -- one process at a time on a log.  Opening a log (as a
 * primary through repl_open, or as a replica) takes a write lock over the
 * whole file on a descriptor of its own, held until the log is closed.
 *
 * The lock is an open file description lock (F_OFD_SETLK): unlike a
 * POSIX record lock it is not dropped when the process closes another
 * descriptor of the same file (the persistence backend keeps one), and
 * two opens in one process conflict too.  Its holder cannot be asked
 * through F_OFD_GETLK (the pid is -1): it is looked up in /proc, where
 * each descriptor's fdinfo lists the locks it holds.
 */
#ifndef REPL_LOG_LOCK_H
#define REPL_LOG_LOCK_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Lock the log at path (create: the file may be created, as the open that
 * follows may; *created then says whether this call made it, so that an
 * open that fails can remove it again: log_lock_abandon).  0 with *fd the
 * lock's descriptor (-1 when the file cannot be opened: the open of the
 * log that follows says why; or when its filesystem takes no locks, with
 * a warning logged), or REPL_E_LOCKED with an error logged naming the
 * path and the holder.
 */
int log_lock(const char *path, bool create, int *fd, bool *created);

/*
 * An open that failed lets the log go: a file its log_lock made is
 * removed first (it holds no record anyone was told of: a retry finds no
 * log, as before), then the lock is released.
 */
void log_lock_abandon(const char *path, int *fd, bool created);

/*
 * Lock the log on fd, a descriptor of the caller's own that it keeps
 * open as long as it writes the log (a restore writing a file it made):
 * 0, or REPL_E_LOCKED (another process holds it; nothing logged).  A
 * filesystem that takes no locks is logged as a warning and passes.
 */
int log_lock_fd(const char *path, int fd);

/* release the lock: close *fd (if >= 0), then *fd = -1 */
void log_unlock(int *fd);

/*
 * Who holds the lock on path: "process 123 (repld)", or "another process"
 * when /proc does not tell (another user's process, say).
 */
void log_lock_holder(const char *path, char *buf, size_t n);

#endif
