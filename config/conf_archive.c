/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * conf_archive.c -- the archive group of repld.conf:
 *
 *   archive = {
 *           target = "/var/backups/repl/cluster-a";
 *           on = "replica";            # or "any"
 *           segment_bytes = "16M";
 *           publish_ms = 1000;
 *           compress = 0;              # zstd level, 0: none
 *           max_hold = "32M";          # default: half of log.size
 *           base_every_ms = 3600000;   # with sqlite_copy: a base so often
 *   };
 *
 * repld.conf(5) describes each setting; this is where each is checked.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf_archive.h"

/* a table's name is its group's path, "_" for "." (check-product-man.sh) */
static const char *const archive_keys[] = {
	"target", "on", "segment_bytes", "publish_ms", "compress", "max_hold",
	"base_every_ms", NULL
};
static const char *const archive_on_names[] = { "replica", "any", NULL };

/* a size: bytes, or "64M"; within lo..hi */
static int
get_bytes(struct conf_ctx *c, const config_setting_t *s, const char *what,
		uint64_t lo, uint64_t hi, uint64_t *out)
{
	const char *v;

	if (conf_is_int(s)) {
		long long n = config_setting_get_int64(s);

		if (n < 0)
			return conf_fail(c, s, "%s %lld is negative", what, n);
		*out = (uint64_t)n;
	} else if (config_setting_type(s) == CONFIG_TYPE_STRING) {
		v = config_setting_get_string(s);
		if (!conf_parse_size(v, out))
			return conf_fail(c, s, "%s \"%.64s\" is not a size: bytes, or a "
					"number with K, M, G or T (1024-based), e.g. \"16M\"",
					what, v);
	} else {
		return conf_fail(c, s, "%s must be an integer or a string such as "
				"\"16M\", not %s", what, conf_type_name(s));
	}
	if (*out < lo || *out > hi)
		return conf_fail(c, s, "%s %llu bytes is out of range %llu..%llu", what,
				(unsigned long long)*out, (unsigned long long)lo,
				(unsigned long long)hi);
	return 0;
}

int
conf_load_archive(struct conf_ctx *c, const config_setting_t *root,
		struct repld_conf *o)
{
	const config_setting_t *s = config_setting_get_member(root, "archive");
	const config_setting_t *m;
	int on = 0;

	o->archive.segment_bytes = ARCHIVE_SEGMENT_DEFAULT;
	o->archive.publish_ms = ARCHIVE_PUBLISH_MS_DEFAULT;
	o->archive.max_hold = o->log.size / 2;
	o->archive.base_every_ms = ARCHIVE_BASE_EVERY_MS_DEFAULT;
	if (s == NULL)
		return 0;
	if (conf_get_group(c, s, "archive", archive_keys))
		return -1;
	if ((m = config_setting_get_member(s, "target")) == NULL)
		return conf_fail(c, s, "archive.target is required: the directory "
				"the archive is kept in");
	/* an s3:// URL is taken as it is; a directory relative to this file */
	if (config_setting_type(m) == CONFIG_TYPE_STRING &&
	    strncmp(config_setting_get_string(m), "s3://", 5) == 0) {
		if (conf_dup_string(c, config_setting_get_string(m), &o->archive.target))
			return -1;
	} else if (conf_get_path(c, m, "archive.target", &o->archive.target)) {
		return -1;
	}
	if (conf_opt_choice(c, s, "on", "archive.on", archive_on_names, 0, &on))
		return -1;
	o->archive.any = on == 1;
	if ((m = config_setting_get_member(s, "segment_bytes")) != NULL &&
	    get_bytes(c, m, "archive.segment_bytes", ARCHIVE_SEGMENT_MIN,
			ARCHIVE_SEGMENT_MAX, &o->archive.segment_bytes))
		return -1;
	if (conf_opt_int(c, s, "publish_ms", "archive.publish_ms",
			ARCHIVE_PUBLISH_MS_MIN, ARCHIVE_PUBLISH_MS_MAX,
			ARCHIVE_PUBLISH_MS_DEFAULT, &o->archive.publish_ms) ||
	    conf_opt_int(c, s, "compress", "archive.compress", 0,
			ARCHIVE_COMPRESS_MAX, 0, &o->archive.compress) ||
	    conf_opt_int(c, s, "base_every_ms", "archive.base_every_ms",
			ARCHIVE_BASE_EVERY_MS_MIN, ARCHIVE_BASE_EVERY_MS_MAX,
			ARCHIVE_BASE_EVERY_MS_DEFAULT, &o->archive.base_every_ms))
		return -1;
	/* like retention.reader_max_lag: appends need the rest of the log */
	if ((m = config_setting_get_member(s, "max_hold")) != NULL &&
	    get_bytes(c, m, "archive.max_hold", 0, o->log.size / 4 * 3,
			&o->archive.max_hold))
		return -1;
	return 0;
}
