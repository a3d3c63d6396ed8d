/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * restore.c -- replctl restore: a log rebuilt from an archive (repld.conf(5),
 * archive) as of a point -- an LSN, a time, or the newest record the
 * archive holds without a gap -- into DIR/repl.log, which a new cluster
 * starts from (repld --bootstrap; repld(8), BACKUP AND RESTORE).
 *
 * Two reads of the archive: the first measures what the log must hold
 * (when --log-size is not given) and finds the end for --to-time, the
 * second writes.  Every segment's checksum is checked on each read.
 * With --database, a replvfs database as of the same point too
 * (restore_db.c), the point then being a transaction's.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "archive.h"
#include "client.h"
#include "conf_read.h"
#include "repld_conf.h"
#include "replctl.h"
#include "restore_db.h"

#define RESTORE_FILE "repl.log"
#define REC_OVERHEAD 64			/* a record's header and padding, at most */
#define LOG_MIN (16ull << 20)
#define LOG_ALIGN (1ull << 20)

struct measure {
	uint64_t to_time_ms;		/* 0: no time bound */
	uint64_t last_lsn;		/* the last record within it */
	uint64_t bytes;
	uint64_t records;
};

static int
measure_record(void *arg, const struct archive_record *r)
{
	struct measure *m = arg;

	if (m->to_time_ms && r->time_ms > m->to_time_ms)
		return 1;
	m->last_lsn = r->lsn;
	m->bytes += r->len + REC_OVERHEAD;
	m->records++;
	return 0;
}

struct writing {
	struct repl_restore *rs;
	uint64_t records;
	int err;
};

static int
write_record(void *arg, const struct archive_record *r)
{
	struct writing *w = arg;
	struct repl_log_record rec = {
		.lsn = r->lsn, .epoch = r->epoch, .client_id = r->client_id,
		.len = r->len, .data = r->data,
		.epoch_start = (r->flags & ARCHIVE_REC_EPOCH_START) != 0,
	};

	if ((w->err = repl_restore_add(w->rs, &rec)) != 0)
		return -1;
	w->records++;
	return 0;
}

/* "2026-12-06T21:00:00Z", or milliseconds since 1970 */
static bool
parse_time(const char *s, uint64_t *ms)
{
	struct tm tm = { 0 };
	const char *end;

	if (arg_u64(s, 0, UINT64_MAX, ms))
		return true;
	end = strptime(s, "%Y-%m-%dT%H:%M:%SZ", &tm);
	if (end == NULL || *end != '\0')
		return false;
	*ms = (uint64_t)timegm(&tm) * 1000 + 999;	/* the whole second */
	return true;
}

int
cmd_restore(int argc, char *argv[], struct live_opts *o)
{
	enum { OPT_ARCHIVE = 0x300, OPT_TO_LSN, OPT_TO_TIME, OPT_LATEST,
		OPT_NODE_ID, OPT_UUID, OPT_SIZE, OPT_DATABASE };
	static const struct option opts[] = {
		{ "archive", required_argument, NULL, OPT_ARCHIVE },
		{ "to-lsn", required_argument, NULL, OPT_TO_LSN },
		{ "to-time", required_argument, NULL, OPT_TO_TIME },
		{ "latest", no_argument, NULL, OPT_LATEST },
		{ "node-id", required_argument, NULL, OPT_NODE_ID },
		{ "cluster-uuid", required_argument, NULL, OPT_UUID },
		{ "log-size", required_argument, NULL, OPT_SIZE },
		{ "database", no_argument, NULL, OPT_DATABASE },
		{ NULL, 0, NULL, 0 },
	};
	const char *archive = NULL, *dir;
	uint64_t to_lsn = 0, node_id = 1, size = 0, from, to;
	struct measure m = { 0 };
	int points = 0, c, ret;
	uint8_t uuid[16];
	bool has_uuid = false, database = false;
	uint64_t db_end_ms = 0;
	struct restore_db_result dr = { 0 };
	char db_path[4096];
	struct archive_target *t = NULL;
	struct archive_listing l;
	struct writing w = { 0 };
	char why[ARCHIVE_WHY_MAX], path[4096];

	optind = 0;
	while ((c = live_getopt(argc, argv, false, NULL, opts, o)) != -1) {
		switch (c) {
		case OPT_ARCHIVE:
			archive = optarg;
			break;
		case OPT_TO_LSN:
			if (!opt_u64("--to-lsn", optarg, 1, UINT64_MAX, &to_lsn))
				return EXIT_USAGE;
			points++;
			break;
		case OPT_TO_TIME:
			if (!parse_time(optarg, &m.to_time_ms)) {
				fprintf(stderr, "replctl: restore: --to-time \"%s\" is neither "
					"YYYY-MM-DDTHH:MM:SSZ (UTC) nor milliseconds since "
					"1970\n", optarg);
				return EXIT_USAGE;
			}
			points++;
			break;
		case OPT_LATEST:
			points++;
			break;
		case OPT_NODE_ID:
			if (!opt_u64("--node-id", optarg, 1, 65535, &node_id))
				return EXIT_USAGE;
			break;
		case OPT_UUID:
			if (!repld_uuid_parse(optarg, uuid)) {
				fprintf(stderr, "replctl: restore: --cluster-uuid \"%s\" is "
					"not a UUID (8-4-4-4-12 hexadecimal digits)\n", optarg);
				return EXIT_USAGE;
			}
			has_uuid = true;
			break;
		case OPT_SIZE:
			if (!conf_parse_size(optarg, &size) || size < LOG_MIN ||
			    size % 4096 != 0) {
				fprintf(stderr, "replctl: restore: --log-size \"%s\" is not a "
					"size of at least 16M, a multiple of 4K\n", optarg);
				return EXIT_USAGE;
			}
			break;
		case OPT_DATABASE:
			database = true;
			break;
		default:
			return EXIT_USAGE;
		}
	}
	if (archive == NULL || points != 1 || argc - optind != 1) {
		fprintf(stderr, "usage: replctl restore --archive ARCHIVE (--to-lsn N | "
			"--to-time T | --latest) [--node-id N] [--cluster-uuid U] "
			"[--log-size SIZE] [--database] DIR\n");
		return EXIT_USAGE;
	}
	dir = argv[optind];
	if (archive_target_open(archive, NULL, &t, why, sizeof(why)) != 0) {
		archive_error("restore", archive, why);
		return EXIT_NO_LOG;
	}
	if (!has_uuid)
		memcpy(uuid, archive_target_uuid(t), 16);
	/* names only: the objects read below are checked as they are read */
	if (archive_list_names(t, &l, why, sizeof(why)) != 0) {
		archive_error("restore", archive, why);
		archive_target_close(&t);
		return EXIT_FAILED;
	}
	from = l.n_segments ? l.obj[0].first_lsn : 0;
	to = l.contiguous_to;
	archive_listing_free(&l);
	ret = EXIT_FAILED;
	if (from == 0 || to < from) {
		fprintf(stderr, "replctl: restore: archive %s holds no records\n", archive);
		goto out;
	}
	if (to_lsn) {
		if (to_lsn < from || to_lsn > to) {
			fprintf(stderr, "replctl: restore: the archive holds LSN %" PRIu64
				"..%" PRIu64 " without a gap: --to-lsn %" PRIu64 " is not "
				"in it\n", from, to, to_lsn);
			goto out;
		}
		to = to_lsn;
	}
	/* a database's point is a transaction's, by its commit time */
	if (database) {
		uint64_t end;

		if (restore_db_end(t, from, to, m.to_time_ms, &end, &db_end_ms, why,
				sizeof(why)) != 0) {
			archive_error("restore", archive, why);
			goto out;
		}
		if (end == 0) {
			fprintf(stderr, "replctl: restore: the archive holds no transaction "
				"of the database at or before the point (LSN %" PRIu64 "..%"
				PRIu64 "%s)\n", from, to, m.to_time_ms ? ", --to-time" : "");
			goto out;
		}
		to = end;
		m.to_time_ms = 0;
	}
	/* what the log must hold, and where a time ends it */
	if (archive_read(t, from, to, measure_record, &m, why, sizeof(why)) != 0) {
		archive_error("restore", archive, why);
		goto out;
	}
	if (m.records == 0) {
		fprintf(stderr, "replctl: restore: no record of the archive is as old "
			"as --to-time\n");
		goto out;
	}
	to = m.last_lsn;
	if (size == 0) {
		size = m.bytes + m.bytes / 4 + 8192;
		size = (size + LOG_ALIGN - 1) / LOG_ALIGN * LOG_ALIGN;
		if (size < LOG_MIN)
			size = LOG_MIN;
	}
	if (mkdir(dir, 0750) != 0 && errno != EEXIST) {
		fprintf(stderr, "replctl: restore: %s: %s\n", dir, strerror(errno));
		goto out;
	}
	snprintf(path, sizeof(path), "%s/%s", dir, RESTORE_FILE);
	struct repl_restore_cfg rc = { .path = path, .size = size,
		.cluster_uuid = uuid, .node_id = (uint32_t)node_id };

	if ((ret = repl_restore_open(&rc, &w.rs)) != 0) {
		fprintf(stderr, "replctl: restore: %s: %s\n", path, repl_strerror(ret));
		ret = EXIT_FAILED;
		goto out;
	}
	if (archive_read(t, from, to, write_record, &w, why, sizeof(why)) != 0) {
		fprintf(stderr, "replctl: restore: %s%s%s\n", w.err ? path : archive,
			w.err ? ": " : ": ", w.err ? repl_strerror(w.err) : why);
		repl_restore_abort(&w.rs);
		ret = EXIT_FAILED;
		goto out;
	}
	if ((ret = repl_restore_finish(&w.rs)) != 0) {
		fprintf(stderr, "replctl: restore: %s: %s\n", path, repl_strerror(ret));
		ret = EXIT_FAILED;
		goto out;
	}
	if (database) {
		snprintf(db_path, sizeof(db_path), "%s/%s", dir, RESTORE_DB_FILE);
		if (restore_db_build(t, from, to, db_path, &dr, why, sizeof(why)) != 0) {
			fprintf(stderr, "replctl: restore: the database %s: %s\n", db_path,
				why);
			ret = EXIT_FAILED;
			goto out;
		}
	}
	if (o->json && database) {
		char base[24] = "null";

		if (dr.base_lsn)
			snprintf(base, sizeof(base), "%" PRIu64, dr.base_lsn);
		printf("{\"ok\":true,\"log\":\"%s\",\"from_lsn\":%" PRIu64 ",\"to_lsn\":%"
			PRIu64 ",\"records\":%" PRIu64 ",\"log_size\":%" PRIu64 ",\"database\":"
			"\"%s\",\"base_lsn\":%s,\"transactions\":%" PRIu64 ",\"commit_ms\":%"
			PRIu64 "}\n", path, from, to, w.records, size, db_path, base,
			dr.transactions, db_end_ms);
	} else if (o->json)
		printf("{\"ok\":true,\"log\":\"%s\",\"from_lsn\":%" PRIu64 ",\"to_lsn\":%"
			PRIu64 ",\"records\":%" PRIu64 ",\"log_size\":%" PRIu64 "}\n", path,
			from, to, w.records, size);
	else
		printf("restored LSN %" PRIu64 "..%" PRIu64 " (%" PRIu64 " records) into "
			"%s (log.size %" PRIu64 "); a new cluster starts from it with "
			"repld --bootstrap (repld(8), BACKUP AND RESTORE)\n", from, to,
			w.records, path, size);
	if (!o->json && database) {
		if (dr.base_lsn)
			printf("restored the database %s as of LSN %" PRIu64 ": the base at "
				"LSN %" PRIu64 " and %" PRIu64 " transactions after it\n",
				db_path, to, dr.base_lsn, dr.transactions);
		else
			printf("restored the database %s as of LSN %" PRIu64 ": %" PRIu64
				" transactions from the archive's first record, no base\n",
				db_path, to, dr.transactions);
	}
	ret = EXIT_OK;
out:
	archive_target_close(&t);
	return ret;
}
