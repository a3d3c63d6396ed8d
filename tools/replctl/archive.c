/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * archive.c -- replctl archive list|verify|prune ARCHIVE: an archive
 * (repld.conf(5), archive) read offline, without a daemon.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "archive.h"
#include "client.h"
#include "replctl.h"

static uint64_t
wall_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	return (uint64_t)t.tv_sec * 1000 + (uint64_t)t.tv_nsec / 1000000;
}

void
archive_error(const char *cmd, const char *archive, const char *why)
{
	size_t n = strlen(archive);

	if (strncmp(why, "archive ", 8) == 0 && strncmp(why + 8, archive, n) == 0 &&
	    why[8 + n] == ':')
		fprintf(stderr, "replctl: %s%s%s\n", cmd ? cmd : "", cmd ? ": " : "", why);
	else
		fprintf(stderr, "replctl: %s%sarchive %s: %s\n", cmd ? cmd : "",
			cmd ? ": " : "", archive, why);
}

static int
open_archive(const char *path, struct archive_target **t)
{
	char why[ARCHIVE_WHY_MAX];

	if (archive_target_open(path, NULL, t, why, sizeof(why)) != 0) {
		archive_error(NULL, path, why);
		return EXIT_NO_LOG;
	}
	return EXIT_OK;
}

static void
object_line(const struct archive_object *ob, bool json)
{
	char a[32], b[32];

	if (json) {
		printf("{\"kind\":\"%s\",\"first_lsn\":%" PRIu64 ",\"last_lsn\":%" PRIu64
			",\"first_ms\":%" PRIu64 ",\"last_ms\":%" PRIu64 ",\"bytes\":%"
			PRIu64 ",\"name\":", ob->kind == ARCHIVE_BASE ? "base" : "segment",
			ob->first_lsn, ob->last_lsn, ob->first_ms, ob->last_ms, ob->bytes);
		json_str(stdout, ob->name);
		printf("}\n");
		return;
	}
	printf("%-8s %12" PRIu64 " %12" PRIu64 "  %s  %s %12" PRIu64 "  %s\n",
		ob->kind == ARCHIVE_BASE ? "base" : "segment", ob->first_lsn,
		ob->last_lsn, utc_text(ob->first_ms, a, sizeof(a)),
		utc_text(ob->last_ms, b, sizeof(b)), ob->bytes, ob->name);
}

static int
archive_list_cmd(const char *path, bool json)
{
	struct archive_target *t = NULL;
	struct archive_listing l;
	char why[ARCHIVE_WHY_MAX];
	int ret;

	if ((ret = open_archive(path, &t)) != EXIT_OK)
		return ret;
	if (archive_list(t, &l, why, sizeof(why)) != 0) {
		archive_error(NULL, path, why);
		archive_target_close(&t);
		return EXIT_FAILED;
	}
	if (!json)
		printf("%-8s %12s %12s  %-20s  %-20s %12s  %s\n", "KIND", "FIRST-LSN",
			"LAST-LSN", "FIRST-TIME", "LAST-TIME", "BYTES", "NAME");
	for (size_t i = 0; i < l.n_segments + l.n_bases; i++)
		object_line(&l.obj[i], json);
	if (json)
		printf("{\"kind\":\"summary\",\"segments\":%zu,\"bases\":%zu,"
			"\"contiguous_to\":%" PRIu64 ",\"gap_at\":%" PRIu64 "}\n",
			l.n_segments, l.n_bases, l.contiguous_to, l.gap_at);
	else if (l.gap_at)
		printf("%zu segments, %zu bases; restorable up to LSN %" PRIu64
			"; GAP: records from LSN %" PRIu64 " are missing\n", l.n_segments,
			l.n_bases, l.contiguous_to, l.gap_at);
	else
		printf("%zu segments, %zu bases; restorable up to LSN %" PRIu64 "\n",
			l.n_segments, l.n_bases, l.contiguous_to);
	archive_listing_free(&l);
	archive_target_close(&t);
	return EXIT_OK;
}

static int
archive_verify_cmd(const char *path, bool json)
{
	struct archive_target *t = NULL;
	char why[ARCHIVE_WHY_MAX] = "";
	uint64_t checked = 0, bad = 0;
	int ret;

	if ((ret = open_archive(path, &t)) != EXIT_OK)
		return ret;
	ret = archive_verify(t, &checked, &bad, why, sizeof(why));
	archive_target_close(&t);
	if (json) {
		printf("{\"ok\":%s,\"checked\":%" PRIu64 ",\"bad\":%" PRIu64 ",\"why\":",
			ret == 0 && bad == 0 ? "true" : "false", checked, bad);
		json_str(stdout, why);
		printf("}\n");
	} else if (ret == 0 && bad == 0) {
		printf("verified %" PRIu64 " objects: every checksum holds\n", checked);
	} else {
		printf("verified %" PRIu64 " objects: %" PRIu64 " BAD; the first: %s\n",
			checked, bad, why);
	}
	return ret == 0 && bad == 0 ? EXIT_OK : EXIT_FAILED;
}

static int
archive_prune_cmd(const char *path, uint64_t keep_bases, uint64_t keep_days,
		bool json)
{
	struct archive_target *t = NULL;
	char why[ARCHIVE_WHY_MAX];
	uint64_t deleted = 0;
	int ret;

	if ((ret = open_archive(path, &t)) != EXIT_OK)
		return ret;
	ret = archive_prune(t, (unsigned)keep_bases, keep_days * 86400000ull,
		wall_ms(), &deleted, why, sizeof(why));
	archive_target_close(&t);
	if (ret != 0) {
		fprintf(stderr, "replctl: archive %s: prune: %s\n", path, why);
		return EXIT_FAILED;
	}
	if (json)
		printf("{\"ok\":true,\"deleted\":%" PRIu64 "}\n", deleted);
	else
		printf("pruned: %" PRIu64 " objects deleted\n", deleted);
	return EXIT_OK;
}

int
cmd_archive(int argc, char *argv[], struct live_opts *o)
{
	enum { OPT_KEEP_BASES = 0x300, OPT_KEEP_DAYS };
	static const struct option opts[] = {
		{ "keep-bases", required_argument, NULL, OPT_KEEP_BASES },
		{ "keep-days", required_argument, NULL, OPT_KEEP_DAYS },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t keep_bases = 0, keep_days = 0;
	bool kb = false, kd = false;
	const char *sub;
	int c;

	optind = 0;
	while ((c = live_getopt(argc, argv, false, NULL, opts, o)) != -1) {
		switch (c) {
		case OPT_KEEP_BASES:
			if (!opt_u64("--keep-bases", optarg, 1, 1000000, &keep_bases))
				return EXIT_USAGE;
			kb = true;
			break;
		case OPT_KEEP_DAYS:
			if (!opt_u64("--keep-days", optarg, 1, 100000, &keep_days))
				return EXIT_USAGE;
			kd = true;
			break;
		default:
			return EXIT_USAGE;
		}
	}
	if (argc - optind != 2) {
		fprintf(stderr, "usage: replctl archive list|verify|prune "
			"[--keep-bases N] [--keep-days D] ARCHIVE\n");
		return EXIT_USAGE;
	}
	sub = argv[optind];
	if ((kb || kd) && strcmp(sub, "prune") != 0) {
		fprintf(stderr, "replctl: archive %s: --keep-bases and --keep-days are "
			"prune's\n", sub);
		return EXIT_USAGE;
	}
	if (strcmp(sub, "list") == 0)
		return archive_list_cmd(argv[optind + 1], o->json);
	if (strcmp(sub, "verify") == 0)
		return archive_verify_cmd(argv[optind + 1], o->json);
	if (strcmp(sub, "prune") == 0) {
		if (!kb && !kd) {
			fprintf(stderr, "replctl: archive prune: give --keep-bases N, "
				"--keep-days D or both: what to keep\n");
			return EXIT_USAGE;
		}
		return archive_prune_cmd(argv[optind + 1], keep_bases, keep_days,
			o->json);
	}
	fprintf(stderr, "replctl: archive: unknown subcommand '%s' (list, verify, "
		"prune)\n", sub);
	return EXIT_USAGE;
}
