/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * conf_coord.c -- the coordinator group of repld.conf:
 *
 *   coordinator = {
 *           etcd = {
 *                   endpoints = [ "http://10.0.0.1:2379", ... ];
 *                   prefix = "/rpma-repl/";
 *                   lease_ms = 6000;
 *                   timeout_ms = 1000;
 *                   tls = { ca = "..."; cert = "..."; key = "..."; };
 *           };
 *           candidate = true;
 *   };
 *
 * repld.conf(5) describes each setting; this is where each is checked.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf_coord.h"

/* a table's name is its group's path, "_" for "." (check-product-man.sh) */
static const char *const coordinator_keys[] = { "etcd", "candidate", NULL };
static const char *const coordinator_etcd_keys[] = {
	"endpoints", "prefix", "lease_ms", "timeout_ms", "tls", NULL
};
static const char *const coordinator_etcd_tls_keys[] = { "ca", "cert", "key", NULL };

#define ENDPOINT_MAX 255

/*
 * "http://HOST[:PORT]" or "https://..." and nothing else: the client adds
 * the gateway's paths, so a path, a query or user info here would only
 * make requests go elsewhere than the operator meant.  NULL, or why not.
 */
static const char *
endpoint_fault(const char *v)
{
	const char *host, *end, *port = NULL;
	size_t len = strlen(v);

	if (len > ENDPOINT_MAX)
		return "is longer than 255 characters";
	if (strncmp(v, "http://", 7) == 0)
		host = v + 7;
	else if (strncmp(v, "https://", 8) == 0)
		host = v + 8;
	else
		return "must start with http:// or https://";
	end = v + len;
	if (end > host && end[-1] == '/')
		end--;	/* one trailing slash is harmless */
	if (end == host)
		return "names no host";
	if (*host == '[') {
		const char *close = memchr(host, ']', (size_t)(end - host));

		if (close == NULL || close == host + 1)
			return "has an IPv6 address without its closing ]";
		if (close + 1 < end && close[1] != ':')
			return "has something other than :PORT after the IPv6 address";
		if (close + 1 < end)
			port = close + 2;
	} else {
		for (const char *p = host; p < end; p++)
			if (*p == ':') {
				port = p + 1;
				break;
			}
		if (port == host + 1)
			return "names no host";
	}
	for (const char *p = host; p < end; p++)
		if (*p <= ' ' || *p == '/' || *p == '@' || *p == '?' || *p == '#' ||
		    (unsigned char)*p >= 0x7f)
			return "must be scheme://host[:port] with no path, query or user";
	if (port != NULL) {
		long n = 0;

		if (port == end)
			return "has an empty port";
		for (const char *p = port; p < end; p++) {
			if (*p < '0' || *p > '9')
				return "has a port that is not a number";
			n = n * 10 + (*p - '0');
			if (n > 65535)
				break;
		}
		if (n < 1 || n > 65535)
			return "has a port outside 1..65535";
	}
	return NULL;
}

static int
load_endpoints(struct conf_ctx *c, const config_setting_t *etcd,
		struct repld_conf *o)
{
	const config_setting_t *s = config_setting_get_member(etcd, "endpoints");
	int n;

	if (s == NULL)
		return conf_fail(c, etcd, "coordinator.etcd.endpoints is required: "
				"[ \"http://HOST:2379\", ... ]");
	if (!config_setting_is_array(s) && !config_setting_is_list(s))
		return conf_fail(c, s, "coordinator.etcd.endpoints must be a list of "
				"strings [ \"http://HOST:2379\", ... ], not %s",
				conf_type_name(s));
	n = config_setting_length(s);
	if (n < 1 || n > REPLD_ETCD_ENDPOINTS_MAX)
		return conf_fail(c, s, "coordinator.etcd.endpoints lists %d; give 1..%d",
				n, REPLD_ETCD_ENDPOINTS_MAX);
	for (int i = 0; i < n; i++) {
		const config_setting_t *e = config_setting_get_elem(s, (unsigned)i);
		char what[48];
		const char *v, *why;

		snprintf(what, sizeof(what), "coordinator.etcd.endpoints[%d]", i);
		if (conf_get_string(c, e, what, &v))
			return -1;
		if ((why = endpoint_fault(v)) != NULL)
			return conf_fail(c, e, "%s \"%s\" %s", what, v, why);
		for (int j = 0; j < i; j++)
			if (strcmp(o->coordinator.endpoints[j], v) == 0)
				return conf_fail(c, e, "%s \"%s\" is listed twice", what, v);
		if (conf_dup_string(c, v, &o->coordinator.endpoints[i]))
			return -1;
		o->coordinator.n_endpoints = i + 1;
	}
	return 0;
}

/* the key prefix: "/...", ending in "/", printable, no spaces */
static int
load_prefix(struct conf_ctx *c, const config_setting_t *etcd, struct repld_conf *o)
{
	const config_setting_t *s = config_setting_get_member(etcd, "prefix");
	const char *v = REPLD_ETCD_PREFIX_DEFAULT;
	size_t len;

	if (s != NULL && conf_get_string(c, s, "coordinator.etcd.prefix", &v))
		return -1;
	len = strlen(v);
	if (v[0] != '/' || v[len - 1] != '/' || len > 128)
		return conf_fail(c, s, "coordinator.etcd.prefix \"%s\" must start and end "
				"with / (at most 128 characters)", v);
	for (const char *p = v; *p; p++)
		if (*p <= ' ' || (unsigned char)*p >= 0x7f)
			return conf_fail(c, s, "coordinator.etcd.prefix \"%s\" must be "
					"printable ASCII without spaces", v);
	return conf_dup_string(c, v, &o->coordinator.prefix);
}

/* tls: a ca alone (the server's check), or cert and key together */
static int
load_etcd_tls(struct conf_ctx *c, const config_setting_t *etcd, struct repld_conf *o)
{
	const config_setting_t *s = config_setting_get_member(etcd, "tls");
	const config_setting_t *m[3];
	char **field[3] = { &o->coordinator.ca, &o->coordinator.cert,
		&o->coordinator.key };

	if (s == NULL)
		return 0;
	if (conf_get_group(c, s, "coordinator.etcd.tls", coordinator_etcd_tls_keys))
		return -1;
	for (int i = 0; i < 3; i++)
		m[i] = config_setting_get_member(s, coordinator_etcd_tls_keys[i]);
	if ((m[1] == NULL) != (m[2] == NULL))
		return conf_fail(c, s, "coordinator.etcd.tls has %s without %s: a client "
				"certificate needs its key", m[1] ? "cert" : "key",
				m[1] ? "key" : "cert");
	for (int i = 0; i < 3; i++) {
		char what[40];

		if (m[i] == NULL)
			continue;
		snprintf(what, sizeof(what), "coordinator.etcd.tls.%s", coordinator_etcd_tls_keys[i]);
		if (conf_get_path(c, m[i], what, field[i]) ||
		    conf_check_readable(c, m[i], what, *field[i]))
			return -1;
	}
	return 0;
}

int
conf_load_coordinator(struct conf_ctx *c, const config_setting_t *root,
		struct repld_conf *o)
{
	const config_setting_t *s = config_setting_get_member(root, "coordinator");
	const config_setting_t *etcd, *cand, *lease;

	o->coordinator.lease_ms = COORD_LEASE_MS_DEFAULT;
	o->coordinator.timeout_ms = COORD_TIMEOUT_MS_DEFAULT;
	o->coordinator.candidate = 1;
	if (s == NULL)
		return 0;
	if (conf_get_group(c, s, "coordinator", coordinator_keys))
		return -1;
	if ((etcd = config_setting_get_member(s, "etcd")) == NULL)
		return conf_fail(c, s, "coordinator.etcd is required: the coordinator "
				"is etcd (endpoints = [ ... ])");
	if (conf_get_group(c, etcd, "coordinator.etcd", coordinator_etcd_keys) ||
	    load_endpoints(c, etcd, o) || load_prefix(c, etcd, o) ||
	    conf_opt_int(c, etcd, "lease_ms", "coordinator.etcd.lease_ms",
			COORD_LEASE_MS_MIN, COORD_LEASE_MS_MAX, COORD_LEASE_MS_DEFAULT,
			&o->coordinator.lease_ms) ||
	    load_etcd_tls(c, etcd, o))
		return -1;
	/* etcd's TTLs are whole seconds: another value would not be what runs */
	lease = config_setting_get_member(etcd, "lease_ms");
	if (o->coordinator.lease_ms % 1000 != 0)
		return conf_fail(c, lease, "coordinator.etcd.lease_ms %d is not a whole "
				"number of seconds (etcd's leases are): give %d or %d",
				o->coordinator.lease_ms, o->coordinator.lease_ms / 1000 * 1000,
				(o->coordinator.lease_ms / 1000 + 1) * 1000);
	/* by default a third of the lease, at most 1 s */
	if (conf_opt_int(c, etcd, "timeout_ms", "coordinator.etcd.timeout_ms",
			COORD_TIMEOUT_MS_MIN, COORD_TIMEOUT_MS_MAX,
			o->coordinator.lease_ms / 3 < COORD_TIMEOUT_MS_DEFAULT ?
			o->coordinator.lease_ms / 3 : COORD_TIMEOUT_MS_DEFAULT,
			&o->coordinator.timeout_ms))
		return -1;
	/* a request must end well within the lease it renews */
	if (o->coordinator.timeout_ms * 3 > o->coordinator.lease_ms)
		return conf_fail(c, config_setting_get_member(etcd, "timeout_ms") ?
				config_setting_get_member(etcd, "timeout_ms") : etcd,
				"coordinator.etcd.timeout_ms %d is more than a third of "
				"lease_ms %d: a renewal could outlast the lease",
				o->coordinator.timeout_ms, o->coordinator.lease_ms);
	if ((cand = config_setting_get_member(s, "candidate")) != NULL) {
		if (config_setting_type(cand) != CONFIG_TYPE_BOOL)
			return conf_fail(c, cand, "coordinator.candidate must be true or "
					"false, not %s", conf_type_name(cand));
		o->coordinator.candidate = config_setting_get_bool(cand);
	}
	return 0;
}
