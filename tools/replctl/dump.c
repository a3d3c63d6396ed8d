/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dump.c -- replctl dump: a log's header and records, decoded offline,
 * one line each (or one JSON object each).
 */
#include "config.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"
#include "replctl.h"

/* hex: the first HEAD bytes; full: every byte, in hex */
enum payload_mode { PAYLOAD_HEX, PAYLOAD_NONE, PAYLOAD_FULL };

struct dump_arg {
	uint64_t from, to;
	bool json;
	enum payload_mode payload;
	uint64_t listed;
};

static void
hex(char *out, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", p[i]);
	out[2 * n] = '\0';
}

static void
print_header(const struct repl_log_header *h, bool json)
{
	const struct repl_membership *ms = &h->membership;
	char u[37];

	uuid_str(h->cluster_uuid, u);
	if (json) {
		printf("{\"type\":\"header\",\"node_id\":%" PRIu32 ",\"cluster_uuid\":\"%s\","
			"\"epoch\":%" PRIu64 ",\"ring_size\":%" PRIu64 ",\"header_copy\":\"%c\","
			"\"seq\":%" PRIu64 ",\"incarnation\":\"%016" PRIx64 "\","
			"\"checkpoint\":{\"lsn\":%" PRIu64 ",\"off\":%" PRIu64
			",\"lap\":%" PRIu32 ",\"epoch\":%" PRIu64 "},\"health\":\"%s\","
			"\"promise_pending\":%s,\"membership\":", h->node_id, u, h->epoch,
			h->ring_size, 'A' + h->header_copy, h->seq, h->incarnation,
			h->checkpoint_lsn, h->checkpoint_off, h->checkpoint_lap,
			h->checkpoint_epoch, health_str(h),
			h->promise_pending ? "true" : "false");
		ms_json(stdout, ms);
		printf("}\n");
		return;
	}
	printf("log: node %" PRIu32 "  cluster %s  epoch %" PRIu64 "  ring %" PRIu64
		" bytes  header copy %c seq %" PRIu64 "  incarnation %016" PRIx64 "%s\n",
		h->node_id, u, h->epoch, h->ring_size, 'A' + h->header_copy, h->seq,
		h->incarnation, h->promise_pending ?
		"  PROMISE PENDING (made anew: no promise floor taken yet)" : "");
	printf("checkpoint: LSN %" PRIu64 " at ring offset %" PRIu64 " lap %" PRIu32
		" epoch %" PRIu64 "  health %s\n", h->checkpoint_lsn,
		h->checkpoint_off, h->checkpoint_lap, h->checkpoint_epoch,
		health_str(h));
	{
		char sum[200];

		ms_summary(ms, sum, sizeof(sum));
		printf("membership: %s\n", sum);
		ms_nodes_text(stdout, ms, "  ");
	}
	printf("%12s %10s %20s %8s %12s %6s %4s  %s\n", "LSN", "EPOCH", "CLIENT",
		"LEN", "OFFSET", "LAP", "CRC", "PAYLOAD");
}

#define HEAD 32	/* the payload's bytes shown */

/* every byte of a payload, in hex, to stdout */
static void
full_hex(const uint8_t *p, size_t n)
{
	static const char digits[] = "0123456789abcdef";

	for (size_t i = 0; i < n; i++) {
		putchar(digits[p[i] >> 4]);
		putchar(digits[p[i] & 15]);
	}
}

static int
dump_rec(void *arg, const struct repl_log_record *r)
{
	struct dump_arg *a = arg;
	size_t head_len = r->len < HEAD ? r->len : HEAD;
	char pl[2 * HEAD + 4];
	bool more = r->len > head_len;

	if (r->lsn < a->from)
		return 0;
	if (r->lsn > a->to)
		return 1;
	a->listed++;
	hex(pl, r->data, head_len);
	if (a->json) {
		printf("{\"type\":\"record\",\"lsn\":%" PRIu64 ",\"epoch\":%" PRIu64
			",\"client_id\":%" PRIu64 ",\"len\":%zu,\"off\":%" PRIu64
			",\"lap\":%" PRIu32 ",\"crc_ok\":true,\"epoch_start\":%s", r->lsn,
			r->epoch, r->client_id, r->len, r->off, r->lap,
			r->epoch_start ? "true" : "false");
		if (a->payload == PAYLOAD_HEX)
			printf(",\"payload\":\"%s\",\"payload_truncated\":%s", pl,
				more ? "true" : "false");
		if (a->payload == PAYLOAD_FULL) {
			printf(",\"payload\":\"");
			full_hex(r->data, r->len);
			printf("\",\"payload_truncated\":false");
		}
		printf("}\n");
		return 0;
	}
	if (r->epoch_start)
		strcpy(pl, "(epoch start)");
	else if (a->payload == PAYLOAD_NONE)
		strcpy(pl, "-");
	else if (more && a->payload == PAYLOAD_HEX)
		strcat(pl, "...");
	printf("%12" PRIu64 " %10" PRIu64 " %20" PRIu64 " %8zu %12" PRIu64
		" %6" PRIu32 " %4s  ", r->lsn, r->epoch, r->client_id, r->len,
		r->off, r->lap, "ok");
	if (a->payload == PAYLOAD_FULL && !r->epoch_start)
		full_hex(r->data, r->len);
	else
		fputs(pl, stdout);
	putchar('\n');
	return 0;
}

static void
usage(void)
{
	fprintf(stderr, "usage: replctl dump [--backend pmem|file|crash] [--from LSN] "
		"[--to LSN] [--json] [--payload hex|full|none] LOG\n");
}

int
cmd_dump(int argc, char *argv[], struct live_opts *o)
{
	static const struct option opts[] = {
		{ "backend", required_argument, NULL, 'b' },
		{ "from", required_argument, NULL, 'f' },
		{ "to", required_argument, NULL, 't' },
		{ "payload", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct dump_arg a = { .from = 0, .to = UINT64_MAX };
	struct repl_reader *rd = NULL;
	struct repl_log_header hdr;
	struct repl_log_end end;
	char err[512];
	int c;

	/* the global options anywhere too: --json is dump's */
	optind = 0;
	while ((c = live_getopt(argc, argv, false, NULL, opts, o)) != -1) {
		switch (c) {
		case 'b':
			/* every backend keeps the region as the file's bytes */
			if (strcmp(optarg, "pmem") && strcmp(optarg, "file") &&
			    strcmp(optarg, "crash")) {
				fprintf(stderr, "replctl dump: unknown backend '%s'\n", optarg);
				return EXIT_USAGE;
			}
			break;
		case 'f':
		case 't':
			if (!opt_u64(c == 'f' ? "--from" : "--to", optarg, 0,
					UINT64_MAX, c == 'f' ? &a.from : &a.to))
				return EXIT_USAGE;
			break;
		case 'p':
			if (strcmp(optarg, "hex") == 0)
				a.payload = PAYLOAD_HEX;
			else if (strcmp(optarg, "none") == 0)
				a.payload = PAYLOAD_NONE;
			else if (strcmp(optarg, "full") == 0)
				a.payload = PAYLOAD_FULL;
			else {
				fprintf(stderr, "replctl dump: --payload: hex, full or none\n");
				return EXIT_USAGE;
			}
			break;
		case 'h':
			usage();
			return EXIT_OK;
		default:
			usage();
			return EXIT_USAGE;
		}
	}
	a.json = o->json;
	if (argc - optind != 1 || a.from > a.to) {
		if (a.from > a.to)
			fprintf(stderr, "replctl dump: --from is past --to\n");
		usage();
		return EXIT_USAGE;
	}
	if (repl_reader_open(argv[optind], &rd, err, sizeof(err))) {
		fprintf(stderr, "replctl dump: %s\n", err);
		return EXIT_NO_LOG;
	}
	repl_reader_header(rd, &hdr);
	print_header(&hdr, a.json);
	repl_reader_walk(rd, dump_rec, &a, &end);
	if (a.json) {
		printf("{\"type\":\"end\",\"records\":%" PRIu64 ",\"lsn\":%" PRIu64
			",\"off\":%" PRIu64 ",\"lap\":%" PRIu32 ",\"damaged\":%s,\"why\":",
			a.listed, end.lsn, end.off, end.lap,
			end.damaged ? "true" : "false");
		json_str(stdout, end.why);
		printf("}\n");
	} else if (end.stopped) {
		printf("end: %" PRIu64 " records listed, --to reached\n", a.listed);
	} else {
		printf("end: %" PRIu64 " records listed; LSN %" PRIu64 " at ring offset %"
			PRIu64 " lap %" PRIu32 ": %s\n", a.listed, end.lsn, end.off,
			end.lap, end.why);
	}
	repl_reader_close(&rd);
	return fflush(stdout) == 0 ? EXIT_OK : EXIT_FAILED;
}
