/* SPDX-License-Identifier: BSD-3-Clause */
/* fabric.c -- peers and connection configurations by transport name */
#include "config.h"

#include <poll.h>
#include <string.h>

#include "clock.h"
#include "fabric.h"
#include "log.h"

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
		return RPMA_E_INVAL;
	if (!is_verbs(provider))
		return rpma_ext_peer_new_ofi(provider, peer_ptr);
	ret = rpma_utils_get_ibv_context(addr, local ?
		RPMA_UTIL_IBV_CONTEXT_LOCAL : RPMA_UTIL_IBV_CONTEXT_REMOTE, &ctx);
	if (ret) {
		RPMA_LOG_ERROR("no RDMA device %s %s", local ? "has the address" :
			"reaches", addr);
		return ret;
	}
	return rpma_peer_new(ctx, peer_ptr);
}

struct rpma_conn_cfg *
fabric_conn_cfg(const char *provider, int depth, int timeout_ms)
{
	struct rpma_conn_cfg *cfg = NULL;

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

void
fabric_conn_drop(struct rpma_conn **conn, int wait_ms)
{
	uint64_t until;
	int fd;

	if (*conn == NULL)
		return;
	rpma_conn_disconnect(*conn);
	if (rpma_conn_get_event_fd(*conn, &fd) == 0) {
		until = clock_now_ms() + (uint64_t)wait_ms;
		for (;;) {
			struct pollfd p = { .fd = fd, .events = POLLIN };
			enum rpma_conn_event ev;
			int left = (int)(until - clock_now_ms());

			if (left <= 0 || poll(&p, 1, left) <= 0)
				break;
			if (rpma_conn_next_event(*conn, &ev) != 0 ||
			    ev == RPMA_CONN_CLOSED || ev == RPMA_CONN_LOST)
				break;
		}
	}
	rpma_conn_delete(conn);
}

int
fabric_conn_established(struct rpma_conn *conn, int timeout_ms)
{
	struct pollfd p = { .events = POLLIN };
	enum rpma_conn_event ev;

	if (rpma_conn_get_event_fd(conn, &p.fd) || poll(&p, 1, timeout_ms) != 1 ||
	    rpma_conn_next_event(conn, &ev))
		return RPMA_E_PROVIDER;
	return ev == RPMA_CONN_ESTABLISHED ? 0 : RPMA_E_PROVIDER;
}
