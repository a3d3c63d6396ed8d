/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * repld_conf.c -- read repld's configuration file with libconfig and check
 * every setting: its name, its type, its range, and how it fits the others.
 * This file is the schema (the settings, their defaults, their cross-checks);
 * how any one value is read and refused is conf_read.c's.
 *
 * The first fault found ends the load; its message names the file and the
 * line of the setting at fault (a setting that is missing: its group's
 * line, line 1 for a top-level one).
 */
#include "config.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <libconfig.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "conf_archive.h"
#include "conf_coord.h"
#include "conf_read.h"
#include "repld_conf.h"

#if defined(HAVE_DECL_IBV_WR_FLUSH) && HAVE_DECL_IBV_WR_FLUSH
#define NATIVE_FLUSH 1
#else
#define NATIVE_FLUSH 0
#endif

#define LOG_SIZE_MIN (1ull << 20)
#define LOG_SIZE_MAX (1ull << 40)
#define LOG_SIZE_DEFAULT (256ull << 20)
#define LOG_SIZE_ALIGN 4096u		/* the page a log is mapped by */

#define HEARTBEAT_MIN 10
#define HEARTBEAT_MAX 60000
#define HEARTBEAT_DEFAULT 100		/* the engine's */
#define DOWN_MIN 100
#define DOWN_MAX 600000
#define DOWN_DEFAULT 2000		/* the engine's */
#define PROMOTE_WAIT_MIN 100
#define PROMOTE_WAIT_MAX 3600000	/* default: twice down_ms, the engine's */
#define FULL_TIMEOUT_MAX 3600000
#define FULL_TIMEOUT_DEFAULT 1000
#define BUSY_POLL_AUTO (-1)		/* repl.h's REPL_BUSY_POLL_AUTO */
#define BUSY_POLL_MAX 1000000		/* and REPL_BUSY_POLL_MAX */
#define KEEP_SECONDS_MAX 315360000	/* ten years */
#define ALARM_PERCENT_DEFAULT 90

static const char *const top_keys[] = {
	"node_id", "role", "cluster_uuid", "listen", "transport", "flush_method",
	"log", "full_timeout_ms", "busy_poll_us", "peers", "quorum", "tls",
	"timeouts", "admin_socket", "log_level", "retention",
	"metrics_listen", "coordinator", "sqlite_copy", "archive", NULL
};
static const char *const listen_keys[] = {
	"address", "control_port", "data_port", NULL
};
static const char *const log_keys[] = { "backend", "path", "size", NULL };
static const char *const peer_keys[] = { "address", "control_port", NULL };
static const char *const tls_keys[] = { "ca", "cert", "key", NULL };
static const char *const retention_keys[] = {
	"mode", "keep", "keep_records", "keep_seconds", "alarm_percent",
	"reader_max_lag", "replica_max_hold", NULL
};
static const char *const timeouts_keys[] = {
	"heartbeat_ms", "down_ms", "promote_wait_ms", NULL
};

/* indexed by the enums' values */
static const char *const role_names[] = { "replica", "primary", NULL };
static const char *const transport_names[] = {
	"auto", "verbs", "ofi:tcp", "ofi:net", NULL
};
static const char *const retention_mode_names[] = {
	"auto", "checkpointer", NULL
};
static const char *const flush_names[] = {
	"auto", "apm", "gpspm", "native", NULL
};
static const char *const backend_names[] = {
	"", "pmem", "file", "crash", NULL
};
static const char *const level_names[] = {
	"", "error", "warning", "notice", "info", "debug", NULL
};

const char *
repld_duration_text(uint64_t ms, char *buf, size_t size)
{
	uint64_t s = ms / 1000;

	if (ms < 1000)
		snprintf(buf, size, "%" PRIu64 "ms", ms);
	else if (s < 60)
		snprintf(buf, size, "%" PRIu64 "s", s);
	else if (s < 3600)
		snprintf(buf, size, "%" PRIu64 "m%02" PRIu64 "s", s / 60, s % 60);
	else
		snprintf(buf, size, "%" PRIu64 "h%02" PRIu64 "m", s / 3600, s / 60 % 60);
	return buf;
}

void
repld_host_port(char *buf, size_t size, const char *host, unsigned port)
{
	snprintf(buf, size, strchr(host, ':') ? "[%s]:%u" : "%s:%u", host, port);
}

static int
hex_digit(char ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	ch = (char)tolower((unsigned char)ch);
	return ch >= 'a' && ch <= 'f' ? ch - 'a' + 10 : -1;
}

bool
repld_uuid_parse(const char *v, uint8_t out[16])
{
	int k = 0;

	for (int i = 0; i < 36; i++) {
		bool dash = i == 8 || i == 13 || i == 18 || i == 23;

		if (v[i] == '\0' || (dash ? v[i] != '-' :
				hex_digit(v[i]) < 0 || hex_digit(v[i + 1]) < 0))
			return false;
		if (dash)
			continue;
		out[k++] = (uint8_t)(hex_digit(v[i]) << 4 | hex_digit(v[i + 1]));
		i++;
	}
	return v[36] == '\0';
}

static int
get_uuid(struct conf_ctx *c, const config_setting_t *s, struct repld_conf *o)
{
	const char *v = NULL;
	uint8_t any = 0;

	if (conf_get_string(c, s, "cluster_uuid", &v))
		return -1;
	if (!repld_uuid_parse(v, o->cluster_uuid))
		goto bad;
	for (int i = 0; i < 16; i++)
		any |= o->cluster_uuid[i];
	for (int i = 0; i < 36; i++)
		o->cluster_uuid_text[i] = (char)tolower((unsigned char)v[i]);
	o->cluster_uuid_text[36] = '\0';
	if (any == 0)
		return conf_fail(c, s, "cluster_uuid is the nil UUID: make one with "
				"cat /proc/sys/kernel/random/uuid");
	return 0;
bad:
	return conf_fail(c, s, "cluster_uuid \"%.64s\" is not a UUID: 8-4-4-4-12 hexadecimal "
			"digits (cat /proc/sys/kernel/random/uuid makes one)", v);
}

static int
get_size(struct conf_ctx *c, const config_setting_t *s, uint64_t *out)
{
	const char *v = NULL;

	if (conf_is_int(s)) {
		long long n = config_setting_get_int64(s);

		if (n < (long long)LOG_SIZE_MIN || n > (long long)LOG_SIZE_MAX)
			return conf_fail(c, s, "log.size %lld is out of range "
					"%llu..%llu (1M..1T)", n, LOG_SIZE_MIN, LOG_SIZE_MAX);
		*out = (uint64_t)n;
	} else if (config_setting_type(s) == CONFIG_TYPE_STRING) {
		v = config_setting_get_string(s);
		if (!conf_parse_size(v, out))
			return conf_fail(c, s, "log.size \"%.64s\" is not a size: "
					"bytes, or a number with K, M, G or T (1024-based), "
					"e.g. \"64M\"", v);
		if (*out < LOG_SIZE_MIN || *out > LOG_SIZE_MAX)
			return conf_fail(c, s, "log.size \"%s\" is out of range 1M..1T", v);
	} else {
		return conf_fail(c, s, "log.size must be an integer or a string "
				"such as \"64M\", not %s", conf_type_name(s));
	}
	if (*out % LOG_SIZE_ALIGN != 0)
		return conf_fail(c, s, "log.size %llu bytes is not a multiple of 4K",
				(unsigned long long)*out);
	return 0;
}

/*
 * retention.keep, reader_max_lag and replica_max_hold: bytes, or a size string; at
 * most three quarters of log.size, since the daemon releases only once an
 * eighth more is in use and appends need the rest.
 */
static int
get_keep(struct conf_ctx *c, const config_setting_t *s, const char *name,
		uint64_t log_size, uint64_t *out)
{
	const char *v;

	if (conf_is_int(s)) {
		long long n = config_setting_get_int64(s);

		if (n < 0)
			return conf_fail(c, s, "%s %lld is negative", name, n);
		*out = (uint64_t)n;
	} else if (config_setting_type(s) == CONFIG_TYPE_STRING) {
		v = config_setting_get_string(s);
		if (!conf_parse_size(v, out))
			return conf_fail(c, s, "%s \"%.64s\" is not a size: "
					"bytes, or a number with K, M, G or T (1024-based), "
					"e.g. \"64M\"", name, v);
	} else {
		return conf_fail(c, s, "%s must be an integer or a string "
				"such as \"64M\", not %s", name, conf_type_name(s));
	}
	if (*out > log_size / 4 * 3)
		return conf_fail(c, s, "%s %llu bytes is more than three "
				"quarters of log.size (%llu bytes): appends need the rest",
				name, (unsigned long long)*out, (unsigned long long)log_size);
	return 0;
}

/*
 * retention.KEY, when given: a bound on what WHO keeps, as keep but more
 * than 0
 */
static int
get_bound(struct conf_ctx *c, const config_setting_t *s, const char *key,
		const char *who, uint64_t log_size, uint64_t *out)
{
	const config_setting_t *m = config_setting_get_member(s, key);
	char name[64];

	if (m == NULL)
		return 0;
	snprintf(name, sizeof(name), "retention.%s", key);
	if (get_keep(c, m, name, log_size, out))
		return -1;
	if (*out == 0)
		return conf_fail(c, m, "%s must be more than 0 bytes: %s at most "
				"that much", name, who);
	return 0;
}

static int
load_retention(struct conf_ctx *c, const config_setting_t *root, struct repld_conf *o)
{
	const config_setting_t *s = config_setting_get_member(root, "retention");
	const config_setting_t *m;
	long long n;
	int mode;

	o->retention.mode = REPLD_RETENTION_AUTO;
	o->retention.keep = o->log.size / 4;
	o->retention.keep_records = 0;
	o->retention.keep_seconds = 0;
	o->retention.reader_max_lag = o->log.size / 2;
	o->retention.replica_max_hold = o->log.size / 2;
	o->retention.alarm_percent = ALARM_PERCENT_DEFAULT;
	if (s == NULL)
		return 0;
	if (conf_get_group(c, s, "retention", retention_keys) ||
	    conf_opt_choice(c, s, "mode", "retention.mode", retention_mode_names,
			REPLD_RETENTION_AUTO, &mode))
		return -1;
	o->retention.mode = (enum repld_retention_mode)mode;
	if ((m = config_setting_get_member(s, "keep")) != NULL &&
	    get_keep(c, m, "retention.keep", o->log.size, &o->retention.keep))
		return -1;
	if (get_bound(c, s, "reader_max_lag", "a reader holds", o->log.size,
			&o->retention.reader_max_lag) ||
	    get_bound(c, s, "replica_max_hold", "a replica away holds", o->log.size,
			&o->retention.replica_max_hold))
		return -1;
	if ((m = config_setting_get_member(s, "keep_records")) != NULL) {
		if (conf_get_int(c, m, "retention.keep_records", 0, INT64_MAX, &n))
			return -1;
		o->retention.keep_records = (uint64_t)n;
	}
	return conf_opt_int(c, s, "keep_seconds", "retention.keep_seconds", 0,
			KEEP_SECONDS_MAX, 0, &o->retention.keep_seconds) ||
	       conf_opt_int(c, s, "alarm_percent", "retention.alarm_percent", 1, 100,
			ALARM_PERCENT_DEFAULT, &o->retention.alarm_percent) ? -1 : 0;
}

static int
load_listen(struct conf_ctx *c, const config_setting_t *root, struct repld_conf *o)
{
	const config_setting_t *s = config_setting_get_member(root, "listen");
	const config_setting_t *a;
	int ctl, data;

	if (s == NULL)
		return conf_fail(c, root, "listen is required: "
				"{ address, control_port, data_port }");
	if (conf_get_group(c, s, "listen", listen_keys))
		return -1;
	if ((a = config_setting_get_member(s, "address")) == NULL)
		return conf_fail(c, s, "listen.address is required");
	if (conf_get_address(c, a, "listen.address", &o->listen.address) ||
	    conf_opt_int(c, s, "control_port", "listen.control_port", 1, 65535,
			REPLD_CONTROL_PORT_DEFAULT, &ctl) ||
	    conf_opt_int(c, s, "data_port", "listen.data_port", 1, 65535,
			REPLD_DATA_PORT_DEFAULT, &data))
		return -1;
	if (ctl == data) {
		a = config_setting_get_member(s, "data_port");
		return conf_fail(c, a != NULL ? a : s,
				"listen.data_port %d is the same as listen.control_port", data);
	}
	o->listen.control_port = (uint16_t)ctl;
	o->listen.data_port = (uint16_t)data;
	return 0;
}

static int
load_log(struct conf_ctx *c, const config_setting_t *root, struct repld_conf *o)
{
	const config_setting_t *s = config_setting_get_member(root, "log");
	const config_setting_t *m;
	int backend;

	if (s == NULL)
		return conf_fail(c, root, "log is required: { backend, path, size }");
	if (conf_get_group(c, s, "log", log_keys) ||
	    conf_opt_choice(c, s, "backend", "log.backend", backend_names,
			REPLD_BACKEND_PMEM, &backend))
		return -1;
	o->log.backend = (enum repld_backend)backend;
	if ((m = config_setting_get_member(s, "path")) == NULL)
		return conf_fail(c, s, "log.path is required");
	if (conf_get_path(c, m, "log.path", &o->log.path))
		return -1;
	o->log.size = LOG_SIZE_DEFAULT;
	if ((m = config_setting_get_member(s, "size")) != NULL &&
	    get_size(c, m, &o->log.size))
		return -1;
	return 0;
}

static int
load_peers(struct conf_ctx *c, const config_setting_t *root, struct repld_conf *o)
{
	const config_setting_t *s = config_setting_get_member(root, "peers");
	const config_setting_t *at[REPLD_PEERS_MAX];
	char what[48], a[80], b[80];
	int n;

	if (s == NULL)
		return 0;
	if (config_setting_type(s) == CONFIG_TYPE_ARRAY && config_setting_length(s) == 0)
		return 0;	/* [] reads as "none" as well as () */
	if (!config_setting_is_list(s))
		return conf_fail(c, s, "peers must be a list "
				"( { address = ...; control_port = ...; }, ... ), not %s",
				conf_type_name(s));
	if ((n = config_setting_length(s)) > REPLD_PEERS_MAX)
		return conf_fail(c, s, "peers lists %d nodes; at most %d are supported", n,
				REPLD_PEERS_MAX);
	for (int i = 0; i < n; i++) {
		const config_setting_t *e = config_setting_get_elem(s, (unsigned)i);
		const config_setting_t *m;
		struct repld_peer *p = &o->peers[i];
		int port;

		at[i] = e;
		snprintf(what, sizeof(what), "peers[%d]", i);
		if (conf_get_group(c, e, what, peer_keys))
			return -1;
		if ((m = config_setting_get_member(e, "address")) == NULL)
			return conf_fail(c, e, "peers[%d].address is required", i);
		snprintf(what, sizeof(what), "peers[%d].address", i);
		if (conf_get_address(c, m, what, &p->address))
			return -1;
		o->n_peers = i + 1;	/* owns p->address from here */
		snprintf(what, sizeof(what), "peers[%d].control_port", i);
		if (conf_opt_int(c, e, "control_port", what, 1, 65535,
				REPLD_CONTROL_PORT_DEFAULT, &port))
			return -1;
		p->control_port = (uint16_t)port;

		/* names as written: nothing is resolved while loading */
		repld_host_port(a, sizeof(a), p->address, p->control_port);
		if (strcasecmp(p->address, o->listen.address) == 0 &&
		    p->control_port == o->listen.control_port)
			return conf_fail(c, e, "peer %s is this node's own listen address", a);
		for (int j = 0; j < i; j++) {
			repld_host_port(b, sizeof(b), o->peers[j].address,
				o->peers[j].control_port);
			if (strcasecmp(a, b) == 0)
				return conf_fail(c, e, "peer %s is listed twice "
						"(first on line %u)", a,
						conf_source_line(at[j]));
		}
	}
	return 0;
}

static int
load_quorum(struct conf_ctx *c, const config_setting_t *root, struct repld_conf *o)
{
	const config_setting_t *s = config_setting_get_member(root, "quorum");
	const config_setting_t *why;
	long long q;

	if (s == NULL) {
		why = config_setting_get_member(root, "role");
		if (o->role == REPLD_ROLE_PRIMARY && o->n_peers == 0)
			return conf_fail(c, why, "quorum is required for a primary: "
					"0, as it has no peers");
		if (o->role == REPLD_ROLE_PRIMARY)
			return conf_fail(c, why, "quorum is required for a primary: "
					"0..%d, how many of its peers hold a record before "
					"it is durable",
					o->n_peers);
		if (o->n_peers > 0) {
			why = config_setting_get_member(root, "peers");
			return conf_fail(c, why, "quorum is required with peers: 0..%d",
					o->n_peers);
		}
		o->quorum = 0;
		return 0;
	}
	if (conf_is_int(s) && (q = config_setting_get_int64(s)) > o->n_peers)
		return conf_fail(c, s, "quorum %lld is more than the %d peer%s", q, o->n_peers,
				o->n_peers == 1 ? "" : "s");
	if (conf_get_int(c, s, "quorum", 0, o->n_peers, &q))
		return -1;
	o->quorum = (int)q;
	return 0;
}

static int
load_tls(struct conf_ctx *c, const config_setting_t *root, struct repld_conf *o)
{
	const config_setting_t *s = config_setting_get_member(root, "tls");
	const config_setting_t *m[3];
	const char *has[3], *lacks[3];
	char **field[3] = { &o->tls.ca, &o->tls.cert, &o->tls.key };
	char what[16], h[64], l[64];
	int nh = 0, nl = 0;

	if (s == NULL)
		return 0;
	if (conf_get_group(c, s, "tls", tls_keys))
		return -1;
	for (int i = 0; i < 3; i++) {
		m[i] = config_setting_get_member(s, tls_keys[i]);
		if (m[i] != NULL)
			has[nh++] = tls_keys[i];
		else
			lacks[nl++] = tls_keys[i];
	}
	if (nl > 0) {
		conf_join(h, sizeof(h), has, nh, false);
		conf_join(l, sizeof(l), lacks, nl, false);
		return conf_fail(c, s, "tls %s%s%s %s: give ca, cert and key, or no tls group",
				nh ? "has " : "", h, nh ? " but lacks" : "lacks", l);
	}
	for (int i = 0; i < 3; i++) {
		snprintf(what, sizeof(what), "tls.%s", tls_keys[i]);
		if (conf_get_path(c, m[i], what, field[i]) ||
		    conf_check_readable(c, m[i], what, *field[i]))
			return -1;
	}
	return 0;
}

static int
load_timeouts(struct conf_ctx *c, const config_setting_t *root, struct repld_conf *o)
{
	const config_setting_t *s = config_setting_get_member(root, "timeouts");
	const config_setting_t *hb, *down;

	o->timeouts.heartbeat_ms = HEARTBEAT_DEFAULT;
	o->timeouts.down_ms = DOWN_DEFAULT;
	o->timeouts.promote_wait_ms = 2 * DOWN_DEFAULT;
	if (s == NULL)
		return 0;
	if (conf_get_group(c, s, "timeouts", timeouts_keys) ||
	    conf_opt_int(c, s, "heartbeat_ms", "timeouts.heartbeat_ms", HEARTBEAT_MIN,
			HEARTBEAT_MAX, HEARTBEAT_DEFAULT, &o->timeouts.heartbeat_ms) ||
	    conf_opt_int(c, s, "down_ms", "timeouts.down_ms", DOWN_MIN, DOWN_MAX,
			DOWN_DEFAULT, &o->timeouts.down_ms) ||
	    conf_opt_int(c, s, "promote_wait_ms", "timeouts.promote_wait_ms",
			PROMOTE_WAIT_MIN, PROMOTE_WAIT_MAX, 2LL * o->timeouts.down_ms,
			&o->timeouts.promote_wait_ms))
		return -1;
	if (o->timeouts.down_ms <= o->timeouts.heartbeat_ms) {
		hb = config_setting_get_member(s, "heartbeat_ms");
		down = config_setting_get_member(s, "down_ms");
		if (down != NULL)
			return conf_fail(c, down, "timeouts.down_ms %d must be more than "
					"timeouts.heartbeat_ms %d", o->timeouts.down_ms,
					o->timeouts.heartbeat_ms);
		return conf_fail(c, hb, "timeouts.heartbeat_ms %d must be less than "
				"timeouts.down_ms (%d by default)", o->timeouts.heartbeat_ms,
				o->timeouts.down_ms);
	}
	return 0;
}

static int
load_admin_socket(struct conf_ctx *c, const config_setting_t *root, struct repld_conf *o)
{
	const config_setting_t *s = config_setting_get_member(root, "admin_socket");
	size_t room = sizeof(((struct sockaddr_un *)NULL)->sun_path) - 1;
	size_t len;

	if (s == NULL)
		return conf_dup_string(c, REPLD_ADMIN_SOCKET_DEFAULT, &o->admin_socket);
	if (conf_get_path(c, s, "admin_socket", &o->admin_socket))
		return -1;
	if ((len = strlen(o->admin_socket)) > room)
		return conf_fail(c, s, "admin_socket %.40s... is %zu bytes long; a UNIX socket "
				"path holds at most %zu", o->admin_socket, len, room);
	return 0;
}

/* a host name: letters, digits, '-' and '.' */
static bool
is_metrics_host_name(const char *v)
{
	if (*v == '\0' || *v == '.' || *v == '-')
		return false;
	for (; *v; v++)
		if (!isalnum((unsigned char)*v) && *v != '-' && *v != '.')
			return false;
	return true;
}

/* metrics_listen = "HOST:PORT" ("[IPv6]:PORT"); absent: no HTTP endpoints */
static int
load_metrics(struct conf_ctx *c, const config_setting_t *root, struct repld_conf *o)
{
	const config_setting_t *s = config_setting_get_member(root, "metrics_listen");
	unsigned char ip[16];
	char host[REPLD_ADDRESS_MAX + 1];
	const char *v, *colon, *h;
	size_t hlen;
	char *end;
	long port;

	if (s == NULL)
		return 0;
	if (conf_get_string(c, s, "metrics_listen", &v))
		return -1;
	if ((colon = strrchr(v, ':')) == NULL)
		return conf_fail(c, s, "metrics_listen \"%s\" is not HOST:PORT", v);
	h = v;
	hlen = (size_t)(colon - v);
	if (hlen >= 2 && v[0] == '[' && v[hlen - 1] == ']') {
		h++;
		hlen -= 2;
	}
	if (hlen == 0 || hlen > REPLD_ADDRESS_MAX)
		return conf_fail(c, s, "metrics_listen \"%s\": the host must be 1..%d "
				"characters", v, REPLD_ADDRESS_MAX);
	memcpy(host, h, hlen);
	host[hlen] = '\0';
	if (inet_pton(AF_INET, host, ip) != 1 && inet_pton(AF_INET6, host, ip) != 1 &&
	    (h != v || !is_metrics_host_name(host)))
		return conf_fail(c, s, "metrics_listen \"%s\": \"%s\" is not a host "
				"name or an IP address", v, host);
	errno = 0;
	port = strtol(colon + 1, &end, 10);
	if (!isdigit((unsigned char)colon[1]) || *end != '\0' || errno != 0 ||
	    port < 1 || port > 65535)
		return conf_fail(c, s, "metrics_listen \"%s\": the port must be "
				"1..65535", v);
	o->metrics.port = (uint16_t)port;
	return conf_dup_string(c, host, &o->metrics.host);
}

static int
load(struct conf_ctx *c, const config_setting_t *root, struct repld_conf *o)
{
	const config_setting_t *s;
	long long v;
	int i;

	if (conf_check_keys(c, root, NULL, top_keys))
		return -1;

	if ((s = config_setting_get_member(root, "node_id")) == NULL)
		return conf_fail(c, root, "node_id is required: 1..65535");
	if (conf_get_int(c, s, "node_id", 1, 65535, &v))
		return -1;
	o->node_id = (uint16_t)v;
	if (conf_opt_choice(c, root, "role", "role", role_names, REPLD_ROLE_REPLICA, &i))
		return -1;
	o->role = (enum repld_role)i;
	if ((s = config_setting_get_member(root, "cluster_uuid")) == NULL)
		return conf_fail(c, root, "cluster_uuid is required "
				"(cat /proc/sys/kernel/random/uuid makes one)");
	if (get_uuid(c, s, o) || load_listen(c, root, o))
		return -1;

	if (conf_opt_choice(c, root, "transport", "transport", transport_names,
			REPLD_TRANSPORT_AUTO, &i))
		return -1;
	o->transport = (enum repld_transport)i;
	if (conf_opt_choice(c, root, "flush_method", "flush_method", flush_names,
			REPLD_FLUSH_AUTO, &i))
		return -1;
	o->flush_method = (enum repld_flush_method)i;
	if (o->flush_method == REPLD_FLUSH_NATIVE && !NATIVE_FLUSH)
		return conf_fail(c, config_setting_get_member(root, "flush_method"),
				"flush_method \"native\" needs ibv_wr_flush, which this "
				"system's rdma-core lacks: use \"auto\", \"apm\" or \"gpspm\"");
	/* libfabric has no RDMA read that makes writes durable: only GPSPM */
	if (o->flush_method == REPLD_FLUSH_APM &&
	    (o->transport == REPLD_TRANSPORT_OFI_TCP ||
	     o->transport == REPLD_TRANSPORT_OFI_NET))
		return conf_fail(c, config_setting_get_member(root, "flush_method"),
				"flush_method \"apm\" needs verbs; over %s only \"gpspm\" "
				"(or \"auto\") persists", transport_names[o->transport]);

	if (load_log(c, root, o) || load_retention(c, root, o) ||
	    conf_opt_int(c, root, "full_timeout_ms", "full_timeout_ms", 0, FULL_TIMEOUT_MAX,
			FULL_TIMEOUT_DEFAULT, &o->full_timeout_ms) ||
	    conf_opt_int(c, root, "busy_poll_us", "busy_poll_us", BUSY_POLL_AUTO,
			BUSY_POLL_MAX, BUSY_POLL_AUTO, &o->busy_poll_us) ||
	    load_peers(c, root, o) || load_quorum(c, root, o) ||
	    load_tls(c, root, o) || load_timeouts(c, root, o) ||
	    load_admin_socket(c, root, o) || load_metrics(c, root, o) ||
	    (config_setting_get_member(root, "sqlite_copy") != NULL &&
	     conf_get_path(c, config_setting_get_member(root, "sqlite_copy"),
			"sqlite_copy", &o->sqlite_copy)) ||
	    conf_load_coordinator(c, root, o) || conf_load_archive(c, root, o))
		return -1;
	if (conf_opt_choice(c, root, "log_level", "log_level", level_names,
			REPLD_LOG_NOTICE, &i))
		return -1;
	o->log_level = (enum repld_log_level)i;
	return 0;
}

int
repld_conf_load(const char *path, struct repld_conf *out, char *err, size_t errlen)
{
	struct conf_ctx c = { .path = path, .err = err, .errlen = errlen };
	const char *files[CONF_SOURCES_MAX];
	struct stat st;
	config_t cf;
	int n = 0, ret = -1;

	if (err != NULL && errlen > 0)
		err[0] = '\0';
	if (out == NULL)
		return -1;
	memset(out, 0, sizeof(*out));
	if (path == NULL) {
		c.path = "(null)";
		return conf_fail_at(&c, c.path, 0, "no configuration file given");
	}
	/* libconfig says only "file I/O error": find out why first */
	if (stat(path, &st) != 0 || access(path, R_OK) != 0)
		return conf_fail_at(&c, path, 0, "cannot read it: %s", strerror(errno));
	if (S_ISDIR(st.st_mode))
		return conf_fail_at(&c, path, 0, "is a directory");
	conf_set_dir(&c);

	config_init(&cf);
	config_set_include_dir(&cf, c.dir);
	if (config_read_file(&cf, path) != CONFIG_TRUE) {
		const char *file = config_error_file(&cf);

		conf_fail_at(&c, conf_shown_name(&c, file),
				(unsigned)(config_error_line(&cf) > 0 ?
					config_error_line(&cf) : 0),
				"%s", config_error_text(&cf));
		goto out;
	}
	conf_collect_sources(config_root_setting(&cf), files, &n);
	if (CONF_LIBCONFIG_WRAPS_WIDE_INTS)
		for (int i = 0; i < n; i++)
			if (conf_scan_wide_ints(&c, files[i]))
				goto out;
	ret = load(&c, config_root_setting(&cf), out);
out:
	config_destroy(&cf);
	if (ret != 0)
		repld_conf_free(out);
	return ret;
}

void
repld_conf_free(struct repld_conf *conf)
{
	if (conf == NULL)
		return;
	free(conf->listen.address);
	free(conf->log.path);
	for (int i = 0; i < conf->n_peers; i++)
		free(conf->peers[i].address);
	free(conf->tls.ca);
	free(conf->tls.cert);
	free(conf->tls.key);
	free(conf->admin_socket);
	free(conf->sqlite_copy);
	free(conf->archive.target);
	free(conf->metrics.host);
	for (int i = 0; i < conf->coordinator.n_endpoints; i++)
		free(conf->coordinator.endpoints[i]);
	free(conf->coordinator.prefix);
	free(conf->coordinator.ca);
	free(conf->coordinator.cert);
	free(conf->coordinator.key);
	memset(conf, 0, sizeof(*conf));
}

const char *
repld_backend_name(enum repld_backend b)
{
	return b >= REPLD_BACKEND_PMEM && b <= REPLD_BACKEND_CRASH ?
		backend_names[b] : "?";
}

const char *
repld_flush_name(enum repld_flush_method f)
{
	return f >= REPLD_FLUSH_AUTO && f <= REPLD_FLUSH_NATIVE ? flush_names[f] : "?";
}
