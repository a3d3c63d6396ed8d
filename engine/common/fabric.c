/* SPDX-License-Identifier: BSD-3-Clause */
/* fabric.c -- peers and connection configurations by transport name */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>

#include "common/clock.h"
#include "common/fabric.h"
#include "common/elog.h"
#include "common/errors.h"
#include "common/fault.h"

static bool
is_verbs(const char *provider)
{
	return provider != NULL && strcmp(provider, "verbs") == 0;
}

int
fabric_peer_new(const char *provider, const char *addr, bool local,
		struct rpma_peer **peer_ptr)
{
	struct ibv_context *ctx = NULL;
	int ret;

	if (provider == NULL)
		return REPL_E_INVAL;
	REPL_FAULT(REPL_E_TRANSPORT, {});
	if (!is_verbs(provider))
		return rpma_ext_peer_new_ofi(provider, peer_ptr);
	ret = rpma_utils_get_ibv_context(addr, local ?
		RPMA_UTIL_IBV_CONTEXT_LOCAL : RPMA_UTIL_IBV_CONTEXT_REMOTE, &ctx);
	if (ret) {
		REPL_LOG_ERROR("no RDMA device %s %s", local ? "has the address" :
			"reaches", addr);
		return ret;
	}
	return rpma_peer_new(ctx, peer_ptr);
}

struct rpma_conn_cfg *
fabric_conn_cfg(const char *provider, int depth, int timeout_ms)
{
	struct rpma_conn_cfg *cfg = NULL;

	REPL_FAULT(NULL, {});
	if (rpma_conn_cfg_new(&cfg))
		return NULL;
	if (rpma_conn_cfg_set_sq_size(cfg, (uint32_t)depth) ||
	    rpma_conn_cfg_set_cq_size(cfg, (uint32_t)depth) ||
	    rpma_conn_cfg_set_timeout(cfg, timeout_ms) ||
	    (is_verbs(provider) && rpma_ext_conn_cfg_set_gpspm(cfg, true))) {
		rpma_conn_cfg_delete(&cfg);
		return NULL;
	}
	return cfg;
}

/*
 * conn's next event within the deadline (ms, clock_now_ms): 0 with *ev,
 * or RPMA_E_NO_EVENT when none came in time.  The event fd is made
 * nonblocking first: it may show readable with no event behind it
 * (libfabric's wait fd does, e.g. after a refused connection), and a
 * blocking read would then wait for an event that never comes.
 */
static int
next_event(struct rpma_conn *conn, uint64_t until, enum rpma_conn_event *ev)
{
	int fd, fl, ret;

	if (rpma_conn_get_event_fd(conn, &fd))
		return REPL_E_TRANSPORT;
	if ((fl = fcntl(fd, F_GETFL)) < 0 ||
	    (!(fl & O_NONBLOCK) && fcntl(fd, F_SETFL, fl | O_NONBLOCK) != 0))
		return REPL_E_TRANSPORT;
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		uint64_t now = clock_now_ms();

		if ((ret = rpma_conn_next_event(conn, ev)) != RPMA_E_NO_EVENT)
			return ret;
		if (now >= until)
			return RPMA_E_NO_EVENT;
		if (poll(&p, 1, (int)(until - now)) < 0 && errno != EINTR)
			return REPL_E_TRANSPORT;
	}
}

void
fabric_conn_drop(struct rpma_conn **conn, int wait_ms)
{
	uint64_t until;
	enum rpma_conn_event ev;

	if (*conn == NULL)
		return;
	rpma_conn_disconnect(*conn);
	until = clock_now_ms() + (uint64_t)wait_ms;
	while (next_event(*conn, until, &ev) == 0 &&
	       ev != RPMA_CONN_CLOSED && ev != RPMA_CONN_LOST)
		;
	rpma_conn_delete(conn);
}

int
fabric_conn_established(struct rpma_conn *conn, int timeout_ms)
{
	enum rpma_conn_event ev;

	if (REPL_FAULTED() ||
	    next_event(conn, clock_now_ms() + (uint64_t)timeout_ms, &ev))
		return REPL_E_TRANSPORT;
	return ev == RPMA_CONN_ESTABLISHED ? 0 : REPL_E_TRANSPORT;
}

const char *
fabric_flush_method_name(enum rpma_ext_flush_method method)
{
	switch (method) {
	case RPMA_EXT_FLUSH_APM:	return "apm";
	case RPMA_EXT_FLUSH_GPSPM:	return "gpspm";
	case RPMA_EXT_FLUSH_NATIVE:	return "native";
	default:			return "";
	}
}

int
fabric_flush_check(const char *provider, int method, const char **why)
{
	if (method < REPL_FLUSH_AUTO || method > REPL_FLUSH_GPSPM) {
		*why = "unknown flush method (not AUTO, APM or GPSPM)";
		return -1;
	}
	if (method == REPL_FLUSH_APM && !is_verbs(provider)) {
		*why = "APM needs the verbs transport: a libfabric provider "
			"persists only by a request the replica's CPU serves (GPSPM)";
		return -1;
	}
	return 0;
}

int
fabric_flush_apply(struct rpma_conn *conn, int method, char *why, size_t n)
{
	enum rpma_ext_flush_method got = RPMA_EXT_FLUSH_NONE;
	enum rpma_ext_flush_method want = method == REPL_FLUSH_APM ?
		RPMA_EXT_FLUSH_APM : RPMA_EXT_FLUSH_GPSPM;

	if (method == REPL_FLUSH_AUTO)
		return 0;
	if (method == REPL_FLUSH_APM) {
		struct rpma_peer_cfg *pcfg = NULL;
		int ret = rpma_peer_cfg_new(&pcfg);

		if (ret == 0)
			ret = rpma_peer_cfg_set_direct_write_to_pmem(pcfg, true);
		if (ret == 0)
			ret = rpma_conn_apply_remote_peer_cfg(conn, pcfg);
		if (pcfg)
			rpma_peer_cfg_delete(&pcfg);
		if (ret) {
			snprintf(why, n, "cannot declare the replica's ring PMem for APM");
			return -1;
		}
	}
	if (rpma_ext_conn_get_flush_method(conn, RPMA_FLUSH_TYPE_PERSISTENT, &got) ||
	    got != want) {
		snprintf(why, n, "its connection flushes by %s, not %s as configured",
			got == RPMA_EXT_FLUSH_NONE ? "no method" :
			fabric_flush_method_name(got), fabric_flush_method_name(want));
		return -1;
	}
	return 0;
}

const char *
fabric_backend_name(unsigned backend)
{
	switch (backend) {
	case RPMA_EXT_MEM_PMEM:		return "pmem";
	case RPMA_EXT_MEM_FILE:		return "file";
	case RPMA_EXT_MEM_CRASH:	return "crash";
	default:			return "";
	}
}
