/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * notify.c -- repld's messages to systemd (notify.h), by sd_notify(3).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <systemd/sd-daemon.h>

#include "log.h"
#include "notify.h"

static uint64_t watchdog_every_us;	/* 0: no watchdog asked for */
static uint64_t watchdog_last_us;

static uint64_t
monotonic_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* a lost notification is not worth stopping for: say it at debug */
static void
notify_send(const char *state)
{
	int r = sd_notify(0, state);

	if (r < 0)
		log_debug("sd_notify %.*s: %s", (int)strcspn(state, "\n"), state,
			strerror(-r));
}

void
notify_init(void)
{
	uint64_t usec = 0;

	/* > 0 only if WATCHDOG_PID is ours (or unset) and WATCHDOG_USEC set */
	if (sd_watchdog_enabled(0, &usec) > 0 && usec > 0) {
		/* half the interval: a late tick still arrives in time */
		watchdog_every_us = usec / 2;
		watchdog_last_us = monotonic_us();
		log_info("watchdog: every %llu ms",
			(unsigned long long)(watchdog_every_us / 1000));
	}
}

void
notify_ready(void)
{
	notify_send("READY=1");
}

void
notify_reloading(void)
{
	char state[64];

	/* systemd >= 253 wants the clock to tell this reload from the last */
	snprintf(state, sizeof(state), "RELOADING=1\nMONOTONIC_USEC=%llu",
		(unsigned long long)monotonic_us());
	notify_send(state);
}

void
notify_stopping(void)
{
	notify_send("STOPPING=1");
}

void
notify_status(const char *fmt, ...)
{
	char state[256] = "STATUS=";
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(state + 7, sizeof(state) - 7, fmt, ap);
	va_end(ap);
	notify_send(state);
}

void
notify_watchdog(void)
{
	uint64_t now;

	if (watchdog_every_us == 0)
		return;
	now = monotonic_us();
	if (now - watchdog_last_us < watchdog_every_us)
		return;
	watchdog_last_us = now;
	notify_send("WATCHDOG=1");
}
