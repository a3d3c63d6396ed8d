/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * replctl.h -- what replctl's commands share: exit codes, an offline
 * read-only reader of a log image (the format is at the top of
 * engine/log/wal.c), and output helpers.
 */
#ifndef REPLCTL_H
#define REPLCTL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "common/membership.h"
#include "log/wal_internal.h"

#define EXIT_OK		0
#define EXIT_FAILED	1
#define EXIT_USAGE	2
#define EXIT_NO_LOG	3
/* 4, EXIT_UNREACHABLE (client.h): the daemon cannot be reached */

/* a log image opened read-only: the file's bytes are the region's */
struct logimg {
	int fd;
	uint64_t size;		/* of the file */
	struct wal_hdr hdr;	/* the valid copy with the larger seq */
	int hdr_copy;
	struct membership ms;	/* config_epoch 0: none stored */
};

/* one record met while walking the ring from the checkpoint */
struct logrec {
	struct rec_hdr h;
	uint64_t off;		/* in the ring */
	uint8_t head[32];	/* the payload's first bytes */
	size_t head_len;
};

/* where and why the walk stopped */
struct logend {
	struct log_pos at;	/* the position that holds no valid record */
	bool damaged;		/* the slot claims this LSN and lap but fails */
	char why[160];
};

/* 0, or EXIT_NO_LOG with a message in err */
int logimg_open(const char *path, struct logimg *img, char *err, size_t errlen);
void logimg_close(struct logimg *img);

/*
 * Walk the records from the checkpoint by recovery's rule; cb per record
 * (a non-zero result stops the walk).  Total: any bytes only end the walk.
 */
typedef int logrec_fn(void *arg, const struct logrec *r);
int logimg_walk(struct logimg *img, logrec_fn *cb, void *arg, struct logend *end);

/* the offline summary: what wal_status would report, without opening */
struct logsum {
	uint64_t first_lsn, last_lsn, used, tail_epoch;
	uint64_t records;
	struct logend end;
};
int logimg_summary(struct logimg *img, struct logsum *s);

/* a command-line number: decimal, or hexadecimal with 0x; min..max */
bool arg_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out);

const char *health_str(const struct wal_hdr *h);
void uuid_str(const uint8_t u[16], char out[37]);
void json_str(FILE *f, const char *s);

/* ms_show.c: the stored membership, offline */
void ms_summary(const struct membership *ms, char *buf, size_t len);
void ms_nodes_text(FILE *f, const struct membership *ms, const char *indent);
void ms_json(FILE *f, const struct membership *ms);

int cmd_dump(int argc, char *argv[]);
int cmd_status(int argc, char *argv[]);

/* the commands against a running repld (client.h: struct live_opts) */
struct live_opts;
/*
 * argv[0] the command; the global options may come among its arguments
 * too (into o).  cmd_live: -1 when argv[0] is no live command.
 */
int cmd_live(int argc, char *argv[], struct live_opts *o);
int cmd_append(int argc, char *argv[], struct live_opts *o);
int cmd_bench(int argc, char *argv[], struct live_opts *o);

#endif
