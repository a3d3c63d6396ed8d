/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * etcd_http.h -- what the etcd client and its watch share over libcurl:
 * the endpoints and TLS files (copied), one easy handle's options, and the
 * test of whether a failed request can have reached etcd.
 */
#ifndef REPL_ETCD_HTTP_H
#define REPL_ETCD_HTTP_H

#include <stdbool.h>
#include <stddef.h>

#include <curl/curl.h>

#include "coord/etcd_client.h"

struct etcd_http {
	char **endpoints;
	size_t n_endpoints;
	int timeout_ms, connect_timeout_ms;
	char *ca_file, *cert_file, *key_file;
	struct curl_slist *headers;	/* Content-Type: application/json */
};

/* checks and copies cfg; nonzero with why in err */
int etcd_http_init(struct etcd_http *hp, const struct etcd_client_cfg *cfg,
	char *err, size_t err_size);
int etcd_http_copy(struct etcd_http *dst, const struct etcd_http *src);
void etcd_http_fini(struct etcd_http *hp);

/* the options every handle has (not the URL, body or timeout); nonzero on failure */
int etcd_http_setup(CURL *h, const struct etcd_http *hp);

/*
 * Whether a request that failed with rc cannot have reached etcd (so
 * another endpoint may have it): nothing was sent on the connection.
 */
bool etcd_http_unsent(CURL *h, CURLcode rc);

/* the easy handle's read of the answer's HTTP status (0: none) */
long etcd_http_status(CURL *h);

/* snprintf into a buffer where a cut text is fine (an error's message) */
void etcd_text(char *buf, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* the client's endpoints and options, and the endpoint it tries first */
const struct etcd_http *etcd_client_http(const struct etcd_client *c);
size_t etcd_client_first(const struct etcd_client *c);

#endif
