/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * etcd_watch.c -- a watch of a prefix (etcd_client.h): one long POST to
 * /v3/watch whose answer is a stream of JSON objects, one per line.
 *
 * A multi handle runs the transfer so that etcd_watch_stop() can wake it
 * (curl_multi_wakeup) from another thread at once, rather than at the
 * next progress callback, which an idle stream calls only about once a
 * second.  The lines are cut where they end ('\n'); a partial line waits
 * in a buffer bounded by ETCD_ANSWER_MAX.
 */
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coord/etcd_http.h"

#define POLL_MS 1000

struct etcd_watch {
	struct etcd_http http;
	size_t first;		/* the endpoint tried first */
	CURLM *m;
	CURL *h;
	char *body;		/* the create_request */
	etcd_watch_cb cb;
	void *arg;
	atomic_bool stop;
	bool ran;
	/* the partial line */
	char *line;
	size_t len, cap;
	bool received;		/* any byte of an answer */
	enum etcd_rc end;	/* why the write callback ended the transfer */
	int64_t revision;
	char url[512];
	char err[512];
};

static void
set_err(struct etcd_watch *w, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(w->err, sizeof(w->err), fmt, ap);
	va_end(ap);
}

/* one line of the stream, to the callback; nonzero ends the watch (w->end) */
static int
on_line(struct etcd_watch *w, const char *p, size_t len)
{
	struct etcd_watch_result r;
	struct etcd_status st;
	enum etcd_dec d;
	size_t i = 0;
	int ret = 0;

	while (i < len && (p[i] == ' ' || p[i] == '\r' || p[i] == '\t'))
		i++;
	if (i == len)
		return 0;
	d = etcd_dec_watch(p, len, &r, &st);
	if (d == ETCD_DEC_BAD) {
		set_err(w, "etcd %s: %s", w->url, st.message);
		w->end = ETCD_E_PROTO;
		ret = -1;
	} else if (d == ETCD_DEC_ERROR) {
		set_err(w, "etcd %s: code %lld: %s", w->url, (long long)st.code, st.message);
		w->end = ETCD_E_SERVER;
		ret = -1;
	} else {
		if (r.header.revision > w->revision)
			w->revision = r.header.revision;
		if (w->cb(w->arg, &r) != 0) {
			w->end = ETCD_OK;
			ret = -1;
		} else if (r.canceled) {
			set_err(w, "etcd %s: watch canceled (compact_revision %lld): %s",
				w->url, (long long)r.compact_revision,
				r.cancel_reason[0] ? r.cancel_reason : "no reason given");
			w->end = ETCD_E_CANCELED;
			ret = -1;
		}
	}
	etcd_watch_result_free(&r);
	return ret;
}

static size_t
on_data(char *data, size_t size, size_t n, void *arg)
{
	struct etcd_watch *w = arg;
	size_t add = size * n, done = 0;

	w->received = true;
	if (atomic_load(&w->stop)) {
		w->end = ETCD_OK;
		return 0;
	}
	while (done < add) {
		const char *nl = memchr(data + done, '\n', add - done);
		size_t take = nl != NULL ? (size_t)(nl - (data + done)) : add - done;

		if (take > ETCD_ANSWER_MAX - w->len) {
			set_err(w, "etcd %s: etcd answer: a line longer than %u bytes",
				w->url, ETCD_ANSWER_MAX);
			w->end = ETCD_E_PROTO;
			return 0;
		}
		if (w->len + take + 1 > w->cap) {
			size_t cap = w->cap ? w->cap : 4096;
			char *p;

			while (cap < w->len + take + 1)
				cap *= 2;
			if ((p = realloc(w->line, cap)) == NULL) {
				set_err(w, "etcd %s: out of memory", w->url);
				w->end = ETCD_E_NOMEM;
				return 0;
			}
			w->line = p;
			w->cap = cap;
		}
		memcpy(w->line + w->len, data + done, take);
		w->len += take;
		w->line[w->len] = '\0';
		done += take;
		if (nl == NULL)
			break;
		done++;		/* the '\n' */
		w->len = 0;
		if (on_line(w, w->line, strlen(w->line)) != 0)
			return 0;
	}
	return add;
}

enum etcd_rc
etcd_watch_open(struct etcd_client *c, const void *prefix, size_t len,
	int64_t start_revision, etcd_watch_cb cb, void *arg, struct etcd_watch **out)
{
	struct etcd_watch *w;
	uint8_t end[ETCD_KEY_MAX];
	const char *why = NULL;

	*out = NULL;
	if (cb == NULL || prefix == NULL || len == 0 || len > ETCD_KEY_MAX)
		return ETCD_E_INVAL;
	if ((w = calloc(1, sizeof(*w))) == NULL)
		return ETCD_E_NOMEM;
	w->cb = cb;
	w->arg = arg;
	w->end = (enum etcd_rc)-1;
	atomic_init(&w->stop, false);
	if (etcd_http_copy(&w->http, etcd_client_http(c))) {
		free(w);
		return ETCD_E_NOMEM;
	}
	w->first = etcd_client_first(c);
	w->body = etcd_enc_watch_create(prefix, len, end,
		etcd_prefix_end(prefix, len, end), start_revision, true, &why);
	if (w->body == NULL || (w->m = curl_multi_init()) == NULL ||
			(w->h = curl_easy_init()) == NULL || etcd_http_setup(w->h, &w->http) ||
			curl_easy_setopt(w->h, CURLOPT_WRITEFUNCTION, on_data) ||
			curl_easy_setopt(w->h, CURLOPT_WRITEDATA, w) ||
			curl_easy_setopt(w->h, CURLOPT_POSTFIELDS, w->body) ||
			/* a silent peer: TCP keepalive finds a dead connection */
			curl_easy_setopt(w->h, CURLOPT_TCP_KEEPALIVE, 1L) ||
			curl_easy_setopt(w->h, CURLOPT_TCP_KEEPIDLE, 5L) ||
			curl_easy_setopt(w->h, CURLOPT_TCP_KEEPINTVL, 2L)) {
		enum etcd_rc rc = w->body == NULL && why != NULL ? ETCD_E_INVAL :
			ETCD_E_NOMEM;

		etcd_watch_close(w);
		return rc;
	}
	*out = w;
	return ETCD_OK;
}

/* one endpoint's transfer to its end; the curl result in *cc */
static enum etcd_rc
run_one(struct etcd_watch *w, CURLcode *cc)
{
	CURLMsg *msg;
	int running = 1, left;

	*cc = CURLE_OK;
	w->len = 0;
	w->received = false;
	if (curl_easy_setopt(w->h, CURLOPT_URL, w->url) ||
			curl_multi_add_handle(w->m, w->h) != CURLM_OK) {
		set_err(w, "etcd %s: curl_multi_add_handle failed", w->url);
		return ETCD_E_NOMEM;
	}
	while (running && !atomic_load(&w->stop)) {
		CURLMcode mc = curl_multi_perform(w->m, &running);

		if (mc == CURLM_OK && running)
			mc = curl_multi_poll(w->m, NULL, 0, POLL_MS, NULL);
		if (mc != CURLM_OK) {
			set_err(w, "etcd %s: %s", w->url, curl_multi_strerror(mc));
			curl_multi_remove_handle(w->m, w->h);
			return ETCD_E_IO;
		}
	}
	while ((msg = curl_multi_info_read(w->m, &left)) != NULL)
		if (msg->msg == CURLMSG_DONE && msg->easy_handle == w->h)
			*cc = msg->data.result;
	curl_multi_remove_handle(w->m, w->h);
	if (atomic_load(&w->stop))
		return ETCD_OK;
	if (w->end != (enum etcd_rc)-1)
		return w->end;
	if (*cc == CURLE_OK) {
		long status = etcd_http_status(w->h);

		/* an error answer is one line without its '\n' */
		if (w->len > 0 && on_line(w, w->line, w->len) != 0 &&
				w->end != (enum etcd_rc)-1)
			return w->end;
		set_err(w, "etcd %s: the stream ended (HTTP %ld)", w->url, status);
		return ETCD_E_IO;
	}
	set_err(w, "etcd %s: %s", w->url, curl_easy_strerror(*cc));
	return *cc == CURLE_OPERATION_TIMEDOUT ? ETCD_E_TIMEOUT : ETCD_E_IO;
}

enum etcd_rc
etcd_watch_run(struct etcd_watch *w)
{
	enum etcd_rc rc = ETCD_E_UNREACHABLE;
	char last[256] = "";

	if (w->ran)
		return ETCD_E_INVAL;
	w->ran = true;
	for (size_t k = 0; k < w->http.n_endpoints; k++) {
		size_t e = (w->first + k) % w->http.n_endpoints;
		CURLcode cc;

		etcd_text(w->url, sizeof(w->url), "%s/v3/watch", w->http.endpoints[e]);
		rc = run_one(w, &cc);
		/* never connected: the next endpoint may serve the watch */
		if (rc != ETCD_OK && !w->received && cc != CURLE_OK &&
				etcd_http_unsent(w->h, cc)) {
			etcd_text(last, sizeof(last), "%s: %s", w->url, curl_easy_strerror(cc));
			rc = ETCD_E_UNREACHABLE;
			continue;
		}
		return rc;
	}
	set_err(w, "etcd: no endpoint of %zu took the watch; the last: %s",
		w->http.n_endpoints, last);
	return rc;
}

void
etcd_watch_stop(struct etcd_watch *w)
{
	atomic_store(&w->stop, true);
	if (w->m != NULL)
		curl_multi_wakeup(w->m);
}

const char *
etcd_watch_error(const struct etcd_watch *w)
{
	return w->err;
}

int64_t
etcd_watch_revision(const struct etcd_watch *w)
{
	return w->revision;
}

void
etcd_watch_close(struct etcd_watch *w)
{
	if (w == NULL)
		return;
	if (w->h != NULL)
		curl_easy_cleanup(w->h);
	if (w->m != NULL)
		curl_multi_cleanup(w->m);
	etcd_http_fini(&w->http);
	free(w->body);
	free(w->line);
	free(w);
}
