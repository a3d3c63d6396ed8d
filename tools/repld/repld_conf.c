/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * repld_conf.c -- read repld's configuration file with libconfig and check
 * every setting: its name, its type, its range, and how it fits the others.
 *
 * The first fault found ends the load; its message names the file and the
 * line of the setting at fault (a setting that is missing: its group's
 * line, line 1 for a top-level one).
 */
#include "config.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <libconfig.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

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

#define SOURCES_MAX 32			/* files read through @include */

struct ctx {
	const char *path;		/* as given: names the file when no
					   setting does */
	char dir[PATH_MAX];		/* the file's directory: relative paths
					   start there */
	char shown[PATH_MAX];		/* an @include'd file's name, shown */
	char *err;
	size_t errlen;
};

static const char *const top_keys[] = {
	"node_id", "role", "cluster_uuid", "listen", "transport", "flush_method",
	"log", "full_timeout_ms", "peers", "quorum", "tls", "timeouts",
	"admin_socket", "log_level", NULL
};
static const char *const listen_keys[] = {
	"address", "control_port", "data_port", NULL
};
static const char *const log_keys[] = { "backend", "path", "size", NULL };
static const char *const peer_keys[] = { "address", "control_port", NULL };
static const char *const tls_keys[] = { "ca", "cert", "key", NULL };
static const char *const timeouts_keys[] = {
	"heartbeat_ms", "down_ms", "promote_wait_ms", NULL
};

/* indexed by the enums' values */
static const char *const role_names[] = { "replica", "primary", NULL };
static const char *const transport_names[] = {
	"auto", "verbs", "ofi:tcp", "ofi:net", NULL
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

__attribute__((format(printf, 4, 5)))
static int
fail_at(struct ctx *c, const char *file, unsigned line, const char *fmt, ...)
{
	char why[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	if (c->err != NULL && c->errlen > 0) {
		if (line > 0)
			snprintf(c->err, c->errlen, "%s:%u: %s", file, line, why);
		else
			snprintf(c->err, c->errlen, "%s: %s", file, why);
	}
	return -1;
}

/* at s's line; the root (line 0) stands for the file's start */
#define fail(c, s, ...) \
	fail_at((c), source_file((c), (s)), source_line(s), __VA_ARGS__)

/*
 * libconfig names an @include'd file as written, and reads a relative one
 * from the include directory (c->dir): shown from where c->path is.
 */
static const char *
shown_name(struct ctx *c, const char *f)
{
	const char *slash = strrchr(c->path, '/');

	if (f == NULL)
		return c->path;
	if (f[0] == '/' || strcmp(f, c->path) == 0 || slash == NULL)
		return f;
	snprintf(c->shown, sizeof(c->shown), "%.*s/%s", (int)(slash - c->path),
			c->path, f);
	return c->shown;
}

static const char *
source_file(struct ctx *c, const config_setting_t *s)
{
	return shown_name(c, s != NULL ? config_setting_source_file(s) : NULL);
}

static unsigned
source_line(const config_setting_t *s)
{
	unsigned line = s != NULL ? config_setting_source_line(s) : 0;

	return line > 0 ? line : 1;
}

static const char *
type_name(const config_setting_t *s)
{
	switch (config_setting_type(s)) {
	case CONFIG_TYPE_GROUP:
		return "a group";
	case CONFIG_TYPE_INT:
	case CONFIG_TYPE_INT64:
		return "an integer";
	case CONFIG_TYPE_FLOAT:
		return "a floating-point number";
	case CONFIG_TYPE_STRING:
		return "a string";
	case CONFIG_TYPE_BOOL:
		return "a boolean";
	case CONFIG_TYPE_ARRAY:
		return "an array";
	case CONFIG_TYPE_LIST:
		return "a list";
	default:
		return "empty";
	}
}

static bool
is_int(const config_setting_t *s)
{
	return config_setting_type(s) == CONFIG_TYPE_INT ||
		config_setting_type(s) == CONFIG_TYPE_INT64;
}

/* "a", "a and b", "a, b and c" (quoted when quote) */
static void
join(char *buf, size_t size, const char *const *words, int n, bool quote)
{
	size_t len = 0;

	buf[0] = '\0';
	for (int i = 0; i < n && len < size; i++) {
		const char *sep = i == 0 ? "" : i == n - 1 ? (quote ? " or " : " and ") : ", ";

		len += (size_t)snprintf(buf + len, size - len, quote ? "%s\"%s\"" : "%s%s",
				sep, words[i]);
	}
}

/* edit distance, capped: only near misses matter */
static int
distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	int row[65];

	if (la > 64 || lb > 64)
		return INT_MAX;
	for (size_t j = 0; j <= lb; j++)
		row[j] = (int)j;
	for (size_t i = 1; i <= la; i++) {
		int diag = row[0];

		row[0] = (int)i;
		for (size_t j = 1; j <= lb; j++) {
			int up = row[j];
			int sub = diag + (tolower((unsigned char)a[i - 1]) !=
					tolower((unsigned char)b[j - 1]));
			int best = sub < up + 1 ? sub : up + 1;

			row[j] = best < row[j - 1] + 1 ? best : row[j - 1] + 1;
			diag = up;
		}
	}
	return row[lb];
}

/* every setting of group has a name in known (where: the group's, or NULL) */
static int
check_keys(struct ctx *c, const config_setting_t *group, const char *where,
		const char *const *known)
{
	int n = config_setting_length(group);

	for (int i = 0; i < n; i++) {
		const config_setting_t *s = config_setting_get_elem(group, (unsigned)i);
		const char *name = config_setting_name(s);
		const char *near = NULL;
		int k, nk, best = 3;	/* suggest within 2 edits */
		char list[256];

		for (k = 0; known[k] != NULL; k++) {
			int d;

			if (strcmp(known[k], name) == 0)
				break;
			d = distance(known[k], name);
			if (d < best) {
				best = d;
				near = known[k];
			}
		}
		if (known[k] != NULL)
			continue;
		nk = k;
		if (near != NULL)
			return fail(c, s, "unknown setting \"%s\"%s%s: did you mean \"%s\"?",
					name, where ? " in " : "", where ? where : "", near);
		if (where == NULL)
			return fail(c, s, "unknown setting \"%s\"", name);
		join(list, sizeof(list), known, nk, false);
		return fail(c, s, "unknown setting \"%s\" in %s (it takes %s)", name,
				where, list);
	}
	return 0;
}

static int
get_group(struct ctx *c, const config_setting_t *s, const char *what,
		const char *const *known)
{
	if (!config_setting_is_group(s))
		return fail(c, s, "%s must be a group { ... }, not %s", what, type_name(s));
	return check_keys(c, s, what, known);
}

static int
get_int(struct ctx *c, const config_setting_t *s, const char *what,
		long long lo, long long hi, long long *v)
{
	if (!is_int(s))
		return fail(c, s, "%s must be an integer (%lld..%lld), not %s", what,
				lo, hi, type_name(s));
	*v = config_setting_get_int64(s);
	if (*v < lo || *v > hi)
		return fail(c, s, "%s %lld is out of range %lld..%lld", what, *v, lo, hi);
	return 0;
}

/* an optional integer: def when group has no key */
static int
opt_int(struct ctx *c, const config_setting_t *group, const char *key,
		const char *what, long long lo, long long hi, long long def, int *out)
{
	const config_setting_t *s = config_setting_get_member(group, key);
	long long v = def;

	if (s != NULL && get_int(c, s, what, lo, hi, &v))
		return -1;
	*out = (int)v;
	return 0;
}

static int
get_string(struct ctx *c, const config_setting_t *s, const char *what,
		const char **v)
{
	if (config_setting_type(s) != CONFIG_TYPE_STRING)
		return fail(c, s, "%s must be a string, not %s", what, type_name(s));
	*v = config_setting_get_string(s);
	if ((*v)[0] == '\0')
		return fail(c, s, "%s is empty", what);
	return 0;
}

/* one of names (NULL-terminated; "" entries are holes): its index */
static int
get_choice(struct ctx *c, const config_setting_t *s, const char *what,
		const char *const *names, int *idx)
{
	const char *v, *shown[8];
	char list[256];
	int n = 0;

	if (config_setting_type(s) != CONFIG_TYPE_STRING)
		return fail(c, s, "%s must be a string, not %s", what, type_name(s));
	v = config_setting_get_string(s);
	for (int i = 0; names[i] != NULL; i++) {
		if (names[i][0] == '\0')
			continue;
		if (strcmp(names[i], v) == 0) {
			*idx = i;
			return 0;
		}
		shown[n++] = names[i];
	}
	join(list, sizeof(list), shown, n, true);
	return fail(c, s, "%s \"%.64s\" is not %s", what, v, list);
}

static int
opt_choice(struct ctx *c, const config_setting_t *group, const char *key,
		const char *what, const char *const *names, int def, int *idx)
{
	const config_setting_t *s = config_setting_get_member(group, key);

	*idx = def;
	return s != NULL ? get_choice(c, s, what, names, idx) : 0;
}

static int
nomem(struct ctx *c)
{
	return fail_at(c, c->path, 0, "out of memory");
}

static int
dup_string(struct ctx *c, const char *v, char **out)
{
	*out = strdup(v);
	return *out != NULL ? 0 : nomem(c);
}

/* a path: relative ones from the file's directory */
static int
get_path(struct ctx *c, const config_setting_t *s, const char *what, char **out)
{
	const char *v = NULL;

	if (get_string(c, s, what, &v))
		return -1;
	if (v[0] == '/')
		return dup_string(c, v, out);
	if (asprintf(out, "%s/%s", c->dir, v) < 0) {
		*out = NULL;
		return nomem(c);
	}
	return 0;
}

/* a host name by RFC 1123: dot-separated labels, the last not all digits */
static bool
is_host_name(const char *v)
{
	const char *label = v;
	bool digits = true;

	for (const char *p = v;; p++) {
		if (*p == '.' || *p == '\0') {
			size_t len = (size_t)(p - label);

			if (len == 0 || len > 63 || label[0] == '-' || p[-1] == '-')
				return false;
			if (*p == '\0')
				return !digits;
			label = p + 1;
			digits = true;
		} else if (isalnum((unsigned char)*p) || *p == '-') {
			digits = digits && isdigit((unsigned char)*p);
		} else {
			return false;
		}
	}
}

/* where other nodes reach a node: a host name or an IP address */
static int
get_address(struct ctx *c, const config_setting_t *s, const char *what, char **out)
{
	static const unsigned char zero[16];
	unsigned char ip[16];
	const char *v = NULL;
	size_t len;

	if (get_string(c, s, what, &v))
		return -1;
	len = strlen(v);
	if (len > REPLD_ADDRESS_MAX)
		return fail(c, s, "%s is %zu characters long; the membership holds at most %d",
				what, len, REPLD_ADDRESS_MAX);
	if ((inet_pton(AF_INET, v, ip) == 1 && memcmp(ip, zero, 4) == 0) ||
	    (inet_pton(AF_INET6, v, ip) == 1 && memcmp(ip, zero, 16) == 0))
		return fail(c, s, "%s %s is no address other nodes can reach", what, v);
	if (inet_pton(AF_INET, v, ip) != 1 && inet_pton(AF_INET6, v, ip) != 1 &&
	    !is_host_name(v))
		return fail(c, s, "%s \"%s\" is not a host name or an IP address", what, v);
	return dup_string(c, v, out);
}

/* "host:port", IPv6 in brackets */
static void
host_port(char *buf, size_t size, const char *host, unsigned port)
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

static int
get_uuid(struct ctx *c, const config_setting_t *s, struct repld_conf *o)
{
	const char *v = NULL;
	uint8_t any = 0;
	int k = 0;

	if (get_string(c, s, "cluster_uuid", &v))
		return -1;
	for (int i = 0; i < 36; i++) {
		bool dash = i == 8 || i == 13 || i == 18 || i == 23;

		if (v[i] == '\0' || (dash ? v[i] != '-' :
				hex_digit(v[i]) < 0 || hex_digit(v[i + 1]) < 0))
			goto bad;
		if (dash)
			continue;
		o->cluster_uuid[k] = (uint8_t)(hex_digit(v[i]) << 4 | hex_digit(v[i + 1]));
		any |= o->cluster_uuid[k++];
		i++;
	}
	if (v[36] != '\0')
		goto bad;
	for (int i = 0; i < 36; i++)
		o->cluster_uuid_text[i] = (char)tolower((unsigned char)v[i]);
	o->cluster_uuid_text[36] = '\0';
	if (any == 0)
		return fail(c, s, "cluster_uuid is the nil UUID: make one with "
				"cat /proc/sys/kernel/random/uuid");
	return 0;
bad:
	return fail(c, s, "cluster_uuid \"%.64s\" is not a UUID: 8-4-4-4-12 hexadecimal "
			"digits (cat /proc/sys/kernel/random/uuid makes one)", v);
}

/* "64M", "1GiB", "1048576": bytes, K/M/G/T 1024-based; saturates */
static bool
parse_size(const char *v, uint64_t *out)
{
	const char *p = v;
	uint64_t n = 0;
	int shift = 0;

	if (!isdigit((unsigned char)*p))
		return false;
	for (; isdigit((unsigned char)*p); p++) {
		unsigned d = (unsigned)(*p - '0');

		n = n > (UINT64_MAX - d) / 10 ? UINT64_MAX : n * 10 + d;
	}
	while (*p == ' ')
		p++;
	switch (toupper((unsigned char)*p)) {
	case '\0':
		break;
	case 'K':
		shift = 10;
		break;
	case 'M':
		shift = 20;
		break;
	case 'G':
		shift = 30;
		break;
	case 'T':
		shift = 40;
		break;
	default:
		return false;
	}
	if (shift > 0 && strcmp(++p, "iB") == 0)
		p += 2;
	if (*p != '\0')
		return false;
	*out = n > (UINT64_MAX >> shift) ? UINT64_MAX : n << shift;
	return true;
}

static int
get_size(struct ctx *c, const config_setting_t *s, uint64_t *out)
{
	const char *v = NULL;

	if (is_int(s)) {
		long long n = config_setting_get_int64(s);

		if (n < (long long)LOG_SIZE_MIN || n > (long long)LOG_SIZE_MAX)
			return fail(c, s, "log.size %lld is out of range %llu..%llu (1M..1T)",
					n, LOG_SIZE_MIN, LOG_SIZE_MAX);
		*out = (uint64_t)n;
	} else if (config_setting_type(s) == CONFIG_TYPE_STRING) {
		v = config_setting_get_string(s);
		if (!parse_size(v, out))
			return fail(c, s, "log.size \"%.64s\" is not a size: bytes, or a number "
					"with K, M, G or T (1024-based), e.g. \"64M\"", v);
		if (*out < LOG_SIZE_MIN || *out > LOG_SIZE_MAX)
			return fail(c, s, "log.size \"%s\" is out of range 1M..1T", v);
	} else {
		return fail(c, s, "log.size must be an integer or a string such as \"64M\", "
				"not %s", type_name(s));
	}
	if (*out % LOG_SIZE_ALIGN != 0)
		return fail(c, s, "log.size %llu bytes is not a multiple of 4K",
				(unsigned long long)*out);
	return 0;
}

/* a file the daemon reads at start: there and readable now */
static int
check_readable(struct ctx *c, const config_setting_t *s, const char *what,
		const char *path)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return fail(c, s, "%s %s cannot be read: %s", what, path, strerror(errno));
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return fail(c, s, "%s %s is not a regular file", what, path);
	}
	close(fd);
	return 0;
}

/*
 * libconfig 1.5 reads an integer into 32 bits without a word: 5000000000
 * becomes 705032704, so a node id or a size could silently be another one.
 * Any integer literal without the L suffix that does not fit in 32 bits is
 * refused here, before any value is looked at.
 */
static int
scan_wide_ints(struct ctx *c, const char *file)
{
	char *opened;
	FILE *f;
	char *buf = NULL;
	size_t n = 0, cap = 0;
	unsigned line = 1;
	int ret = 0;

	if (file[0] == '/' || strcmp(file, c->path) == 0)
		opened = strdup(file);
	else if (asprintf(&opened, "%s/%s", c->dir, file) < 0)
		opened = NULL;
	if (opened == NULL)
		return nomem(c);
	f = fopen(opened, "r");
	free(opened);
	if (f == NULL)
		return 0;	/* libconfig just read it: nothing to add */
	for (;;) {
		if (n + 4096 + 1 > cap) {
			char *b = realloc(buf, cap = 2 * cap + 4096 + 1);

			if (b == NULL) {
				free(buf);
				fclose(f);
				return nomem(c);
			}
			buf = b;
		}
		size_t got = fread(buf + n, 1, cap - n - 1, f);

		if (got == 0)
			break;
		n += got;
	}
	fclose(f);
	buf[n] = '\0';

	for (const char *p = buf; *p != '\0' && ret == 0;) {
		const char *tok = p;

		if (*p == '\n') {
			line++;
			p++;
		} else if (*p == '#' || (p[0] == '/' && p[1] == '/')) {
			while (*p != '\0' && *p != '\n')
				p++;
		} else if (p[0] == '/' && p[1] == '*') {
			for (p += 2; *p != '\0' && !(p[0] == '*' && p[1] == '/'); p++)
				line += *p == '\n';
			p += *p != '\0' ? 2 : 0;
		} else if (*p == '"') {
			for (p++; *p != '\0' && *p != '"'; p++) {
				if (*p == '\\' && p[1] != '\0')
					p++;
				line += *p == '\n';
			}
			p += *p != '\0';
		} else if (isalpha((unsigned char)*p) || *p == '*') {
			while (isalnum((unsigned char)*p) || *p == '-' || *p == '_' || *p == '*')
				p++;
		} else if (isdigit((unsigned char)*p) ||
				((*p == '-' || *p == '+') && isdigit((unsigned char)p[1]))) {
			bool hex = (p[0] == '0' && (p[1] == 'x' || p[1] == 'X'));
			long long v;

			p += hex ? 2 : *p == '-' || *p == '+';
			while (hex ? isxdigit((unsigned char)*p) : isdigit((unsigned char)*p))
				p++;
			if (!hex && (*p == '.' || *p == 'e' || *p == 'E')) {
				/* a float: libconfig reads those whole */
				while (isdigit((unsigned char)*p) || *p == '.' ||
						*p == 'e' || *p == 'E' ||
						((*p == '-' || *p == '+') &&
						 (p[-1] == 'e' || p[-1] == 'E')))
					p++;
				continue;
			}
			if (*p == 'L')
				continue;
			errno = 0;
			v = strtoll(tok, NULL, hex ? 16 : 10);
			if (errno == ERANGE || v > INT_MAX || v < INT_MIN)
				ret = fail_at(c, shown_name(c, file), line, "integer %.*s does not fit in 32 bits: "
						"write %.*sL", (int)(p - tok), tok,
						(int)(p - tok), tok);
		} else {
			p++;
		}
	}
	free(buf);
	return ret;
}

/* the files settings came from (the main one and any @include'd) */
static void
collect_sources(const config_setting_t *s, const char **files, int *n)
{
	const char *f = config_setting_source_file(s);
	int i;

	for (i = 0; f != NULL && i < *n && strcmp(files[i], f) != 0; i++)
		;
	if (f != NULL && i == *n && *n < SOURCES_MAX)
		files[(*n)++] = f;
	if (config_setting_is_aggregate(s))
		for (i = 0; i < config_setting_length(s); i++)
			collect_sources(config_setting_get_elem(s, (unsigned)i), files, n);
}

static int
load_listen(struct ctx *c, const config_setting_t *root, struct repld_conf *o)
{
	const config_setting_t *s = config_setting_get_member(root, "listen");
	const config_setting_t *a;
	int ctl, data;

	if (s == NULL)
		return fail(c, root, "listen is required: { address, control_port, data_port }");
	if (get_group(c, s, "listen", listen_keys))
		return -1;
	if ((a = config_setting_get_member(s, "address")) == NULL)
		return fail(c, s, "listen.address is required");
	if (get_address(c, a, "listen.address", &o->listen.address) ||
	    opt_int(c, s, "control_port", "listen.control_port", 1, 65535,
			REPLD_CONTROL_PORT_DEFAULT, &ctl) ||
	    opt_int(c, s, "data_port", "listen.data_port", 1, 65535,
			REPLD_DATA_PORT_DEFAULT, &data))
		return -1;
	if (ctl == data) {
		a = config_setting_get_member(s, "data_port");
		return fail(c, a != NULL ? a : s,
				"listen.data_port %d is the same as listen.control_port", data);
	}
	o->listen.control_port = (uint16_t)ctl;
	o->listen.data_port = (uint16_t)data;
	return 0;
}

static int
load_log(struct ctx *c, const config_setting_t *root, struct repld_conf *o)
{
	const config_setting_t *s = config_setting_get_member(root, "log");
	const config_setting_t *m;
	int backend;

	if (s == NULL)
		return fail(c, root, "log is required: { backend, path, size }");
	if (get_group(c, s, "log", log_keys) ||
	    opt_choice(c, s, "backend", "log.backend", backend_names,
			REPLD_BACKEND_PMEM, &backend))
		return -1;
	o->log.backend = (enum repld_backend)backend;
	if ((m = config_setting_get_member(s, "path")) == NULL)
		return fail(c, s, "log.path is required");
	if (get_path(c, m, "log.path", &o->log.path))
		return -1;
	o->log.size = LOG_SIZE_DEFAULT;
	if ((m = config_setting_get_member(s, "size")) != NULL &&
	    get_size(c, m, &o->log.size))
		return -1;
	return 0;
}

static int
load_peers(struct ctx *c, const config_setting_t *root, struct repld_conf *o)
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
		return fail(c, s, "peers must be a list ( { address = ...; control_port = ...; }, "
				"... ), not %s", type_name(s));
	if ((n = config_setting_length(s)) > REPLD_PEERS_MAX)
		return fail(c, s, "peers lists %d nodes; at most %d are supported", n,
				REPLD_PEERS_MAX);
	for (int i = 0; i < n; i++) {
		const config_setting_t *e = config_setting_get_elem(s, (unsigned)i);
		const config_setting_t *m;
		struct repld_peer *p = &o->peers[i];
		int port;

		at[i] = e;
		snprintf(what, sizeof(what), "peers[%d]", i);
		if (get_group(c, e, what, peer_keys))
			return -1;
		if ((m = config_setting_get_member(e, "address")) == NULL)
			return fail(c, e, "peers[%d].address is required", i);
		snprintf(what, sizeof(what), "peers[%d].address", i);
		if (get_address(c, m, what, &p->address))
			return -1;
		o->n_peers = i + 1;	/* owns p->address from here */
		snprintf(what, sizeof(what), "peers[%d].control_port", i);
		if (opt_int(c, e, "control_port", what, 1, 65535,
				REPLD_CONTROL_PORT_DEFAULT, &port))
			return -1;
		p->control_port = (uint16_t)port;

		/* names as written: nothing is resolved while loading */
		host_port(a, sizeof(a), p->address, p->control_port);
		if (strcasecmp(p->address, o->listen.address) == 0 &&
		    p->control_port == o->listen.control_port)
			return fail(c, e, "peer %s is this node's own listen address", a);
		for (int j = 0; j < i; j++) {
			host_port(b, sizeof(b), o->peers[j].address, o->peers[j].control_port);
			if (strcasecmp(a, b) == 0)
				return fail(c, e, "peer %s is listed twice (first on line %u)",
						a, source_line(at[j]));
		}
	}
	return 0;
}

static int
load_quorum(struct ctx *c, const config_setting_t *root, struct repld_conf *o)
{
	const config_setting_t *s = config_setting_get_member(root, "quorum");
	const config_setting_t *why;
	long long q;

	if (s == NULL) {
		why = config_setting_get_member(root, "role");
		if (o->role == REPLD_ROLE_PRIMARY && o->n_peers == 0)
			return fail(c, why, "quorum is required for a primary: 0, as it has "
					"no peers");
		if (o->role == REPLD_ROLE_PRIMARY)
			return fail(c, why, "quorum is required for a primary: 0..%d, how many "
					"of its peers hold a record before it is durable",
					o->n_peers);
		if (o->n_peers > 0) {
			why = config_setting_get_member(root, "peers");
			return fail(c, why, "quorum is required with peers: 0..%d", o->n_peers);
		}
		o->quorum = 0;
		return 0;
	}
	if (is_int(s) && (q = config_setting_get_int64(s)) > o->n_peers)
		return fail(c, s, "quorum %lld is more than the %d peer%s", q, o->n_peers,
				o->n_peers == 1 ? "" : "s");
	if (get_int(c, s, "quorum", 0, o->n_peers, &q))
		return -1;
	o->quorum = (int)q;
	return 0;
}

static int
load_tls(struct ctx *c, const config_setting_t *root, struct repld_conf *o)
{
	const config_setting_t *s = config_setting_get_member(root, "tls");
	const config_setting_t *m[3];
	const char *has[3], *lacks[3];
	char **field[3] = { &o->tls.ca, &o->tls.cert, &o->tls.key };
	char what[16], h[64], l[64];
	int nh = 0, nl = 0;

	if (s == NULL)
		return 0;
	if (get_group(c, s, "tls", tls_keys))
		return -1;
	for (int i = 0; i < 3; i++) {
		m[i] = config_setting_get_member(s, tls_keys[i]);
		if (m[i] != NULL)
			has[nh++] = tls_keys[i];
		else
			lacks[nl++] = tls_keys[i];
	}
	if (nl > 0) {
		join(h, sizeof(h), has, nh, false);
		join(l, sizeof(l), lacks, nl, false);
		return fail(c, s, "tls %s%s%s %s: give ca, cert and key, or no tls group",
				nh ? "has " : "", h, nh ? " but lacks" : "lacks", l);
	}
	for (int i = 0; i < 3; i++) {
		snprintf(what, sizeof(what), "tls.%s", tls_keys[i]);
		if (get_path(c, m[i], what, field[i]) ||
		    check_readable(c, m[i], what, *field[i]))
			return -1;
	}
	return 0;
}

static int
load_timeouts(struct ctx *c, const config_setting_t *root, struct repld_conf *o)
{
	const config_setting_t *s = config_setting_get_member(root, "timeouts");
	const config_setting_t *hb, *down;

	o->timeouts.heartbeat_ms = HEARTBEAT_DEFAULT;
	o->timeouts.down_ms = DOWN_DEFAULT;
	o->timeouts.promote_wait_ms = 2 * DOWN_DEFAULT;
	if (s == NULL)
		return 0;
	if (get_group(c, s, "timeouts", timeouts_keys) ||
	    opt_int(c, s, "heartbeat_ms", "timeouts.heartbeat_ms", HEARTBEAT_MIN,
			HEARTBEAT_MAX, HEARTBEAT_DEFAULT, &o->timeouts.heartbeat_ms) ||
	    opt_int(c, s, "down_ms", "timeouts.down_ms", DOWN_MIN, DOWN_MAX,
			DOWN_DEFAULT, &o->timeouts.down_ms) ||
	    opt_int(c, s, "promote_wait_ms", "timeouts.promote_wait_ms",
			PROMOTE_WAIT_MIN, PROMOTE_WAIT_MAX, 2LL * o->timeouts.down_ms,
			&o->timeouts.promote_wait_ms))
		return -1;
	if (o->timeouts.down_ms <= o->timeouts.heartbeat_ms) {
		hb = config_setting_get_member(s, "heartbeat_ms");
		down = config_setting_get_member(s, "down_ms");
		if (down != NULL)
			return fail(c, down, "timeouts.down_ms %d must be more than "
					"timeouts.heartbeat_ms %d", o->timeouts.down_ms,
					o->timeouts.heartbeat_ms);
		return fail(c, hb, "timeouts.heartbeat_ms %d must be less than "
				"timeouts.down_ms (%d by default)", o->timeouts.heartbeat_ms,
				o->timeouts.down_ms);
	}
	return 0;
}

static int
load_admin_socket(struct ctx *c, const config_setting_t *root, struct repld_conf *o)
{
	const config_setting_t *s = config_setting_get_member(root, "admin_socket");
	size_t room = sizeof(((struct sockaddr_un *)NULL)->sun_path) - 1;
	size_t len;

	if (s == NULL)
		return dup_string(c, REPLD_ADMIN_SOCKET_DEFAULT, &o->admin_socket);
	if (get_path(c, s, "admin_socket", &o->admin_socket))
		return -1;
	if ((len = strlen(o->admin_socket)) > room)
		return fail(c, s, "admin_socket %.40s... is %zu bytes long; a UNIX socket "
				"path holds at most %zu", o->admin_socket, len, room);
	return 0;
}

static int
load(struct ctx *c, const config_setting_t *root, struct repld_conf *o)
{
	const config_setting_t *s;
	long long v;
	int i;

	if (check_keys(c, root, NULL, top_keys))
		return -1;

	if ((s = config_setting_get_member(root, "node_id")) == NULL)
		return fail(c, root, "node_id is required: 1..65535");
	if (get_int(c, s, "node_id", 1, 65535, &v))
		return -1;
	o->node_id = (uint16_t)v;
	if (opt_choice(c, root, "role", "role", role_names, REPLD_ROLE_REPLICA, &i))
		return -1;
	o->role = (enum repld_role)i;
	if ((s = config_setting_get_member(root, "cluster_uuid")) == NULL)
		return fail(c, root, "cluster_uuid is required "
				"(cat /proc/sys/kernel/random/uuid makes one)");
	if (get_uuid(c, s, o) || load_listen(c, root, o))
		return -1;

	if (opt_choice(c, root, "transport", "transport", transport_names,
			REPLD_TRANSPORT_AUTO, &i))
		return -1;
	o->transport = (enum repld_transport)i;
	if (opt_choice(c, root, "flush_method", "flush_method", flush_names,
			REPLD_FLUSH_AUTO, &i))
		return -1;
	o->flush_method = (enum repld_flush_method)i;
	if (o->flush_method == REPLD_FLUSH_NATIVE && !NATIVE_FLUSH)
		return fail(c, config_setting_get_member(root, "flush_method"),
				"flush_method \"native\" needs ibv_wr_flush, which this "
				"system's rdma-core lacks: use \"auto\", \"apm\" or \"gpspm\"");
	/* libfabric has no RDMA read that makes writes durable: only GPSPM */
	if (o->flush_method == REPLD_FLUSH_APM &&
	    (o->transport == REPLD_TRANSPORT_OFI_TCP ||
	     o->transport == REPLD_TRANSPORT_OFI_NET))
		return fail(c, config_setting_get_member(root, "flush_method"),
				"flush_method \"apm\" needs verbs; over %s only \"gpspm\" "
				"(or \"auto\") persists", transport_names[o->transport]);

	if (load_log(c, root, o) ||
	    opt_int(c, root, "full_timeout_ms", "full_timeout_ms", 0, FULL_TIMEOUT_MAX,
			FULL_TIMEOUT_DEFAULT, &o->full_timeout_ms) ||
	    load_peers(c, root, o) || load_quorum(c, root, o) ||
	    load_tls(c, root, o) || load_timeouts(c, root, o) ||
	    load_admin_socket(c, root, o))
		return -1;
	if (opt_choice(c, root, "log_level", "log_level", level_names,
			REPLD_LOG_NOTICE, &i))
		return -1;
	o->log_level = (enum repld_log_level)i;
	return 0;
}

/* c->dir: the absolute directory of c->path (as written if unresolvable) */
static void
set_dir(struct ctx *c)
{
	char *real = realpath(c->path, NULL);
	const char *p = real != NULL ? real : c->path;
	const char *slash = strrchr(p, '/');

	if (slash == NULL)
		snprintf(c->dir, sizeof(c->dir), ".");
	else if (slash == p)
		snprintf(c->dir, sizeof(c->dir), "/");
	else
		snprintf(c->dir, sizeof(c->dir), "%.*s", (int)(slash - p), p);
	free(real);
}

int
repld_conf_load(const char *path, struct repld_conf *out, char *err, size_t errlen)
{
	struct ctx c = { .path = path, .err = err, .errlen = errlen };
	const char *files[SOURCES_MAX];
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
		return fail_at(&c, c.path, 0, "no configuration file given");
	}
	/* libconfig says only "file I/O error": find out why first */
	if (stat(path, &st) != 0 || access(path, R_OK) != 0)
		return fail_at(&c, path, 0, "cannot read it: %s", strerror(errno));
	if (S_ISDIR(st.st_mode))
		return fail_at(&c, path, 0, "is a directory");
	set_dir(&c);

	config_init(&cf);
	config_set_include_dir(&cf, c.dir);
	if (config_read_file(&cf, path) != CONFIG_TRUE) {
		const char *file = config_error_file(&cf);

		fail_at(&c, shown_name(&c, file),
				(unsigned)(config_error_line(&cf) > 0 ? config_error_line(&cf) : 0),
				"%s", config_error_text(&cf));
		goto out;
	}
	collect_sources(config_root_setting(&cf), files, &n);
	for (int i = 0; i < n; i++)
		if (scan_wide_ints(&c, files[i]))
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
	memset(conf, 0, sizeof(*conf));
}
