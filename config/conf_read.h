/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * conf_read.h -- reading values out of a libconfig file, each refusal a
 * message that names the file and the line at fault.  What the values
 * mean (which settings there are, their defaults, how they fit together)
 * is repld_conf.c's; this is only how any one of them is read.
 *
 * Every reader returns 0, or -1 with the message in c->err; "what" is the
 * setting's name as the message shows it ("listen.address", "peers[1]").
 */
#ifndef REPLD_CONF_READ_H
#define REPLD_CONF_READ_H 1

#include <libconfig.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CONF_SOURCES_MAX 32		/* files read through @include */

/* one load: where the file is, and where its first fault is reported */
struct conf_ctx {
	const char *path;		/* as given: names the file when no
					   setting does */
	char dir[PATH_MAX];		/* the file's directory: relative paths
					   start there */
	char shown[PATH_MAX];		/* an @include'd file's name, shown */
	char *err;
	size_t errlen;
};

/* "FILE:LINE: why" into c->err ("FILE: why" when line is 0); -1 */
__attribute__((format(printf, 4, 5)))
int conf_fail_at(struct conf_ctx *c, const char *file, unsigned line,
		const char *fmt, ...);

/* at s's line; the root (line 0) stands for the file's start */
#define conf_fail(c, s, ...) \
	conf_fail_at((c), conf_source_file((c), (s)), conf_source_line(s), \
			__VA_ARGS__)

/* the name of file f (as libconfig gives it; NULL: c->path) to show */
const char *conf_shown_name(struct conf_ctx *c, const char *f);
const char *conf_source_file(struct conf_ctx *c, const config_setting_t *s);
/* s's line, 1 when it has none (the root) */
unsigned conf_source_line(const config_setting_t *s);
/* "an integer", "a group", ...: what s is, for messages */
const char *conf_type_name(const config_setting_t *s);
bool conf_is_int(const config_setting_t *s);
/* "a", "a and b", "a, b and c" ("or" and quoted when quote) */
void conf_join(char *buf, size_t size, const char *const *words, int n,
		bool quote);

/* every setting of group has a name in known (where: the group's, or NULL) */
int conf_check_keys(struct conf_ctx *c, const config_setting_t *group,
		const char *where, const char *const *known);
/* a group whose settings all have a name in known */
int conf_get_group(struct conf_ctx *c, const config_setting_t *s,
		const char *what, const char *const *known);
int conf_get_int(struct conf_ctx *c, const config_setting_t *s,
		const char *what, long long lo, long long hi, long long *v);
/* an optional integer: def when group has no key */
int conf_opt_int(struct conf_ctx *c, const config_setting_t *group,
		const char *key, const char *what, long long lo, long long hi,
		long long def, int *out);
/* a string that is not empty */
int conf_get_string(struct conf_ctx *c, const config_setting_t *s,
		const char *what, const char **v);
/* an optional one of names (NULL-terminated; "" entries are holes): its index */
int conf_opt_choice(struct conf_ctx *c, const config_setting_t *group,
		const char *key, const char *what, const char *const *names,
		int def, int *idx);
int conf_dup_string(struct conf_ctx *c, const char *v, char **out);
/* a path: relative ones from the file's directory */
int conf_get_path(struct conf_ctx *c, const config_setting_t *s,
		const char *what, char **out);
/* where other nodes reach a node: a host name or an IP address */
int conf_get_address(struct conf_ctx *c, const config_setting_t *s,
		const char *what, char **out);
/* "64M", "1GiB", "1048576": bytes, K/M/G/T 1024-based; saturates */
bool conf_parse_size(const char *v, uint64_t *out);
/* a file the daemon reads at start: there and readable now */
int conf_check_readable(struct conf_ctx *c, const config_setting_t *s,
		const char *what, const char *path);

/* refuse integer literals too wide for libconfig's 32 bits in file */
int conf_scan_wide_ints(struct conf_ctx *c, const char *file);
/*
 * Whether the libconfig built against needs that scan: before 1.7 it reads
 * an integer literal without the L suffix into 32 bits, wrapping it; from
 * 1.7 on one that does not fit is read as a 64-bit integer, which the
 * typed readers' ranges then judge.
 */
#define CONF_LIBCONFIG_WRAPS_WIDE_INTS \
	(LIBCONFIG_VER_MAJOR < 1 || \
	 (LIBCONFIG_VER_MAJOR == 1 && LIBCONFIG_VER_MINOR < 7))
/* the files settings came from (the main one and any @include'd) */
void conf_collect_sources(const config_setting_t *s, const char **files,
		int *n);
/* c->dir: the absolute directory of c->path (as written if unresolvable) */
void conf_set_dir(struct conf_ctx *c);

/* a host name by RFC 1123: dot-separated labels, the last not all digits */
bool conf_is_host_name(const char *v);

#endif
