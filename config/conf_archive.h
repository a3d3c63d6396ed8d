/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * conf_archive.h -- the archive group of repld.conf (continuous backup of
 * the committed records): its settings, defaults and checks.  A part of
 * the schema that repld_conf.c holds, in a file of its own because it is
 * one concern.
 */
#ifndef REPLD_CONF_ARCHIVE_H
#define REPLD_CONF_ARCHIVE_H 1

#include <libconfig.h>

#include "conf_read.h"
#include "repld_conf.h"

#define ARCHIVE_SEGMENT_MIN (64ull << 10)
#define ARCHIVE_SEGMENT_MAX (1ull << 30)
#define ARCHIVE_SEGMENT_DEFAULT (16ull << 20)
#define ARCHIVE_PUBLISH_MS_MIN 10
#define ARCHIVE_PUBLISH_MS_MAX 3600000
#define ARCHIVE_PUBLISH_MS_DEFAULT 1000
#define ARCHIVE_COMPRESS_MAX 19
/* with sqlite_copy, the copy's database is published as a base so often */
#define ARCHIVE_BASE_EVERY_MS_MIN 100
#define ARCHIVE_BASE_EVERY_MS_MAX 604800000		/* 7 days */
#define ARCHIVE_BASE_EVERY_MS_DEFAULT 3600000

/* o->archive from root's "archive" (absent: none); 0 or -1 */
int conf_load_archive(struct conf_ctx *c, const config_setting_t *root,
		struct repld_conf *o);

#endif
