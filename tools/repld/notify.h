/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * notify.h -- repld tells systemd (Type=notify) how it is: ready,
 * reloading, stopping, its status line, and that its loop is alive.
 * Each is a no-op when NOTIFY_SOCKET is unset (not started by systemd).
 */
#ifndef REPLD_NOTIFY_H
#define REPLD_NOTIFY_H

/* read WATCHDOG_USEC/WATCHDOG_PID once, before the loop */
void notify_init(void);
void notify_ready(void);
/* SIGHUP: RELOADING=1 with the monotonic clock, then notify_ready() */
void notify_reloading(void);
void notify_stopping(void);
void notify_status(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* from the daemon's loop: WATCHDOG=1 once half the interval has passed */
void notify_watchdog(void);

#endif
