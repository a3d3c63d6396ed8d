/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * conf_read.c -- how repld_conf.c reads any one value out of libconfig:
 * typed readers with ranges, unknown names answered with the nearest known
 * one, sizes such as "64M", integers too wide for libconfig refused, and
 * the file-and-line of every refusal.  Kept apart from the schema so that
 * repld_conf.c reads as the list of settings.
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
#include <sys/stat.h>
#include <unistd.h>

#include "conf_read.h"
#include "repld_conf.h"

int
conf_fail_at(struct conf_ctx *c, const char *file, unsigned line,
		const char *fmt, ...)
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

/*
 * libconfig names an @include'd file as written, and reads a relative one
 * from the include directory (c->dir): shown from where c->path is.
 */
const char *
conf_shown_name(struct conf_ctx *c, const char *f)
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

const char *
conf_source_file(struct conf_ctx *c, const config_setting_t *s)
{
	return conf_shown_name(c, s != NULL ? config_setting_source_file(s) : NULL);
}

unsigned
conf_source_line(const config_setting_t *s)
{
	unsigned line = s != NULL ? config_setting_source_line(s) : 0;

	return line > 0 ? line : 1;
}

const char *
conf_type_name(const config_setting_t *s)
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

bool
conf_is_int(const config_setting_t *s)
{
	return config_setting_type(s) == CONFIG_TYPE_INT ||
		config_setting_type(s) == CONFIG_TYPE_INT64;
}

/* "a", "a and b", "a, b and c" (quoted when quote) */
void
conf_join(char *buf, size_t size, const char *const *words, int n, bool quote)
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
int
conf_check_keys(struct conf_ctx *c, const config_setting_t *group,
		const char *where, const char *const *known)
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
			return conf_fail(c, s, "unknown setting \"%s\"%s%s: did you mean "
					"\"%s\"?",
					name, where ? " in " : "", where ? where : "", near);
		if (where == NULL)
			return conf_fail(c, s, "unknown setting \"%s\"", name);
		conf_join(list, sizeof(list), known, nk, false);
		return conf_fail(c, s, "unknown setting \"%s\" in %s (it takes %s)", name,
				where, list);
	}
	return 0;
}

int
conf_get_group(struct conf_ctx *c, const config_setting_t *s, const char *what,
		const char *const *known)
{
	if (!config_setting_is_group(s))
		return conf_fail(c, s, "%s must be a group { ... }, not %s", what,
				conf_type_name(s));
	return conf_check_keys(c, s, what, known);
}

int
conf_get_int(struct conf_ctx *c, const config_setting_t *s, const char *what,
		long long lo, long long hi, long long *v)
{
	if (!conf_is_int(s))
		return conf_fail(c, s, "%s must be an integer (%lld..%lld), not %s", what,
				lo, hi, conf_type_name(s));
	*v = config_setting_get_int64(s);
	if (*v < lo || *v > hi)
		return conf_fail(c, s, "%s %lld is out of range %lld..%lld", what, *v, lo, hi);
	return 0;
}

/* an optional integer: def when group has no key */
int
conf_opt_int(struct conf_ctx *c, const config_setting_t *group,
		const char *key, const char *what, long long lo, long long hi,
		long long def, int *out)
{
	const config_setting_t *s = config_setting_get_member(group, key);
	long long v = def;

	if (s != NULL && conf_get_int(c, s, what, lo, hi, &v))
		return -1;
	*out = (int)v;
	return 0;
}

int
conf_get_string(struct conf_ctx *c, const config_setting_t *s, const char *what,
		const char **v)
{
	if (config_setting_type(s) != CONFIG_TYPE_STRING)
		return conf_fail(c, s, "%s must be a string, not %s", what, conf_type_name(s));
	*v = config_setting_get_string(s);
	if ((*v)[0] == '\0')
		return conf_fail(c, s, "%s is empty", what);
	return 0;
}

/* one of names (NULL-terminated; "" entries are holes): its index */
static int
get_choice(struct conf_ctx *c, const config_setting_t *s, const char *what,
		const char *const *names, int *idx)
{
	const char *v, *shown[8];
	char list[256];
	int n = 0;

	if (config_setting_type(s) != CONFIG_TYPE_STRING)
		return conf_fail(c, s, "%s must be a string, not %s", what, conf_type_name(s));
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
	conf_join(list, sizeof(list), shown, n, true);
	return conf_fail(c, s, "%s \"%.64s\" is not %s", what, v, list);
}

int
conf_opt_choice(struct conf_ctx *c, const config_setting_t *group,
		const char *key, const char *what, const char *const *names, int def,
		int *idx)
{
	const config_setting_t *s = config_setting_get_member(group, key);

	*idx = def;
	return s != NULL ? get_choice(c, s, what, names, idx) : 0;
}

static int
nomem(struct conf_ctx *c)
{
	return conf_fail_at(c, c->path, 0, "out of memory");
}

int
conf_dup_string(struct conf_ctx *c, const char *v, char **out)
{
	*out = strdup(v);
	return *out != NULL ? 0 : nomem(c);
}

/* a path: relative ones from the file's directory */
int
conf_get_path(struct conf_ctx *c, const config_setting_t *s, const char *what,
		char **out)
{
	const char *v = NULL;

	if (conf_get_string(c, s, what, &v))
		return -1;
	if (v[0] == '/')
		return conf_dup_string(c, v, out);
	if (asprintf(out, "%s/%s", c->dir, v) < 0) {
		*out = NULL;
		return nomem(c);
	}
	return 0;
}

bool
conf_is_host_name(const char *v)
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
int
conf_get_address(struct conf_ctx *c, const config_setting_t *s, const char *what,
		char **out)
{
	static const unsigned char zero[16];
	unsigned char ip[16];
	const char *v = NULL;
	size_t len;

	if (conf_get_string(c, s, what, &v))
		return -1;
	len = strlen(v);
	if (len > REPLD_ADDRESS_MAX)
		return conf_fail(c, s, "%s is %zu characters long; the membership holds "
				"at most %d",
				what, len, REPLD_ADDRESS_MAX);
	if ((inet_pton(AF_INET, v, ip) == 1 && memcmp(ip, zero, 4) == 0) ||
	    (inet_pton(AF_INET6, v, ip) == 1 && memcmp(ip, zero, 16) == 0))
		return conf_fail(c, s, "%s %s is no address other nodes can reach", what, v);
	if (inet_pton(AF_INET, v, ip) != 1 && inet_pton(AF_INET6, v, ip) != 1 &&
	    !conf_is_host_name(v))
		return conf_fail(c, s, "%s \"%s\" is not a host name or an IP address",
				what, v);
	return conf_dup_string(c, v, out);
}

/* "64M", "1GiB", "1048576": bytes, K/M/G/T 1024-based; saturates */
bool
conf_parse_size(const char *v, uint64_t *out)
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

/* a file the daemon reads at start: there and readable now */
int
conf_check_readable(struct conf_ctx *c, const config_setting_t *s, const char *what,
		const char *path)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return conf_fail(c, s, "%s %s cannot be read: %s", what, path, strerror(errno));
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return conf_fail(c, s, "%s %s is not a regular file", what, path);
	}
	close(fd);
	return 0;
}

/*
 * libconfig before 1.7 (Debian 12 has 1.5) reads an integer into 32 bits
 * without a word: 5000000000 becomes 705032704, so a node id or a size
 * could silently be another one.  No reader of libconfig's can tell, so
 * any integer literal without the L suffix that does not fit in 32 bits is
 * refused here, before any value is looked at: a scan of the file's own
 * text, as libconfig's grammar has it (comments, strings, names).  Only
 * for those versions (CONF_LIBCONFIG_WRAPS_WIDE_INTS).
 */
int
conf_scan_wide_ints(struct conf_ctx *c, const char *file)
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
				ret = conf_fail_at(c, conf_shown_name(c, file), line,
						"integer %.*s does not fit in 32 bits: "
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
void
conf_collect_sources(const config_setting_t *s, const char **files, int *n)
{
	const char *f = config_setting_source_file(s);
	int i;

	for (i = 0; f != NULL && i < *n && strcmp(files[i], f) != 0; i++)
		;
	if (f != NULL && i == *n && *n < CONF_SOURCES_MAX)
		files[(*n)++] = f;
	if (config_setting_is_aggregate(s))
		for (i = 0; i < config_setting_length(s); i++)
			conf_collect_sources(config_setting_get_elem(s, (unsigned)i), files, n);
}

/* c->dir: the absolute directory of c->path (as written if unresolvable) */
void
conf_set_dir(struct conf_ctx *c)
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
