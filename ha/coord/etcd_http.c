/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * etcd_http.c -- the etcd client's libcurl plumbing (etcd_http.h).
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coord/etcd_http.h"

#define TIMEOUT_MS_DEFAULT 2000
#define CONNECT_MS_MAX 1000

/* curl_global_init is not thread-safe before libcurl 7.84: once, here */
static pthread_once_t global_once = PTHREAD_ONCE_INIT;
static CURLcode global_rc;

static void
global_init(void)
{
	global_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

static char *
dup_or_null(const char *s, bool *failed)
{
	char *d;

	if (s == NULL)
		return NULL;
	if ((d = strdup(s)) == NULL)
		*failed = true;
	return d;
}

int
etcd_http_init(struct etcd_http *hp, const struct etcd_client_cfg *cfg,
	char *err, size_t err_size)
{
	bool failed = false;

	memset(hp, 0, sizeof(*hp));
	pthread_once(&global_once, global_init);
	if (global_rc != CURLE_OK) {
		snprintf(err, err_size, "etcd: curl_global_init: %s",
			curl_easy_strerror(global_rc));
		return -1;
	}
	if (cfg->n_endpoints == 0 || cfg->endpoints == NULL) {
		snprintf(err, err_size, "etcd: no endpoint");
		return -1;
	}
	if (cfg->timeout_ms < 0 || cfg->connect_timeout_ms < 0) {
		snprintf(err, err_size, "etcd: negative timeout");
		return -1;
	}
	for (size_t i = 0; i < cfg->n_endpoints; i++) {
		const char *e = cfg->endpoints[i];

		if (e == NULL || (strncmp(e, "http://", 7) != 0 &&
				strncmp(e, "https://", 8) != 0)) {
			snprintf(err, err_size,
				"etcd: endpoint %zu (%s): not http://host:port or https://host:port",
				i, e != NULL ? e : "NULL");
			return -1;
		}
	}
	hp->timeout_ms = cfg->timeout_ms ? cfg->timeout_ms : TIMEOUT_MS_DEFAULT;
	hp->connect_timeout_ms = cfg->connect_timeout_ms ? cfg->connect_timeout_ms :
		hp->timeout_ms < CONNECT_MS_MAX ? hp->timeout_ms : CONNECT_MS_MAX;
	hp->endpoints = calloc(cfg->n_endpoints, sizeof(*hp->endpoints));
	failed = hp->endpoints == NULL;
	for (size_t i = 0; !failed && i < cfg->n_endpoints; i++) {
		/* no trailing '/': the paths begin with one */
		size_t len = strlen(cfg->endpoints[i]);

		while (len > 0 && cfg->endpoints[i][len - 1] == '/')
			len--;
		if ((hp->endpoints[i] = strndup(cfg->endpoints[i], len)) == NULL)
			failed = true;
		hp->n_endpoints = i + 1;
	}
	hp->ca_file = dup_or_null(cfg->ca_file, &failed);
	hp->cert_file = dup_or_null(cfg->cert_file, &failed);
	hp->key_file = dup_or_null(cfg->key_file, &failed);
	if (!failed && (hp->headers = curl_slist_append(NULL,
			"Content-Type: application/json")) == NULL)
		failed = true;
	if (failed) {
		etcd_http_fini(hp);
		snprintf(err, err_size, "etcd: out of memory");
		return -1;
	}
	return 0;
}

int
etcd_http_copy(struct etcd_http *dst, const struct etcd_http *src)
{
	struct etcd_client_cfg cfg = {
		.endpoints = (const char *const *)src->endpoints,
		.n_endpoints = src->n_endpoints,
		.timeout_ms = src->timeout_ms,
		.connect_timeout_ms = src->connect_timeout_ms,
		.ca_file = src->ca_file, .cert_file = src->cert_file,
		.key_file = src->key_file,
	};
	char err[128];

	return etcd_http_init(dst, &cfg, err, sizeof(err));
}

void
etcd_http_fini(struct etcd_http *hp)
{
	for (size_t i = 0; i < hp->n_endpoints; i++)
		free(hp->endpoints[i]);
	free(hp->endpoints);
	free(hp->ca_file);
	free(hp->cert_file);
	free(hp->key_file);
	curl_slist_free_all(hp->headers);
	memset(hp, 0, sizeof(*hp));
}

int
etcd_http_setup(CURL *h, const struct etcd_http *hp)
{
	int f = 0;

	/* no SIGALRM for timeouts: the engine has threads */
	f |= curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	f |= curl_easy_setopt(h, CURLOPT_HTTPHEADER, hp->headers);
	f |= curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, (long)hp->connect_timeout_ms);
	f |= curl_easy_setopt(h, CURLOPT_TCP_NODELAY, 1L);
	/* no proxy from the environment: etcd's clock decides on leases */
	f |= curl_easy_setopt(h, CURLOPT_NOPROXY, "*");
	f |= curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	f |= curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
	if (hp->ca_file != NULL)
		f |= curl_easy_setopt(h, CURLOPT_CAINFO, hp->ca_file);
	if (hp->cert_file != NULL)
		f |= curl_easy_setopt(h, CURLOPT_SSLCERT, hp->cert_file);
	if (hp->key_file != NULL)
		f |= curl_easy_setopt(h, CURLOPT_SSLKEY, hp->key_file);
	return f;
}

bool
etcd_http_unsent(CURL *h, CURLcode rc)
{
	long sent = 0;

	switch (rc) {
	case CURLE_COULDNT_RESOLVE_HOST:
	case CURLE_COULDNT_CONNECT:
	case CURLE_SSL_CONNECT_ERROR:
	case CURLE_PEER_FAILED_VERIFICATION:
		return true;
	default:
		break;
	}
	/* e.g. a connect that timed out: no request's byte went */
	if (curl_easy_getinfo(h, CURLINFO_REQUEST_SIZE, &sent) != CURLE_OK)
		return false;
	return sent == 0;
}

long
etcd_http_status(CURL *h)
{
	long status = 0;

	if (curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status) != CURLE_OK)
		return 0;
	return status;
}

void
etcd_text(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, size, fmt, ap);
	va_end(ap);
}
