/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * reader.c -- records back out of the archive, segment after segment, each
 * read whole and checked totally before its first record is given; and
 * every object read and checked (verify).
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "archive_int.h"

#define OBJECT_MAX (ARCHIVE_HDR_SIZE + ARCHIVE_BODY_MAX)

struct read_ctx {
	archive_record_fn *cb;
	void *arg;
	uint64_t from, to;
	bool stopped;			/* by cb, not by to */
};

static int
in_range(void *arg, const struct archive_record *r)
{
	struct read_ctx *c = arg;
	int rc;

	if (r->lsn < c->from)
		return 0;
	if (r->lsn > c->to)
		return 1;
	rc = c->cb(c->arg, r);
	if (rc == 1)
		c->stopped = true;
	return rc;
}

/* the object name read whole and checked as what its name says */
static int
object_load(struct archive_target *t, const struct archive_object *o, void **buf,
		struct archive_hdr *h, const void **raw, void **owned, char *what,
		size_t whatlen, char *why, size_t whylen)
{
	size_t len;
	int rc;

	snprintf(what, whatlen, "archive %s: %s", t->url, o->name);
	rc = t->ops->get(t, o->name, OBJECT_MAX, buf, &len, why, whylen);
	if (rc > 0)
		return archive_fail(why, whylen, "%s: gone while read (pruned?)", what);
	if (rc < 0)
		return -1;
	if (archive_object_parse(*buf, len, o->kind, t->uuid, o, what, h, raw, owned,
			why, whylen) != 0) {
		free(*buf);
		*buf = NULL;
		return -1;
	}
	return 0;
}

int
archive_read(struct archive_target *t, uint64_t from, uint64_t to,
		archive_record_fn *cb, void *arg, char *why, size_t whylen)
{
	struct archive_listing l;
	struct read_ctx c = { .cb = cb, .arg = arg };
	uint64_t end = 0, pos;
	int rc = 0;

	if (archive_list_names(t, &l, why, whylen) != 0)
		return -1;
	for (size_t i = 0; i < l.n_segments; i++)
		if (l.obj[i].last_lsn > end)
			end = l.obj[i].last_lsn;
	if (l.n_segments == 0) {
		archive_listing_free(&l);
		return archive_fail(why, whylen, "archive %s: holds no segment", t->url);
	}
	if (from == 0)
		from = l.obj[0].first_lsn;
	if (to == 0)
		to = end;
	if (from > to || from < l.obj[0].first_lsn || to > end) {
		archive_fail(why, whylen, "archive %s: LSNs %" PRIu64 "..%" PRIu64
			": not a range within the archive's %" PRIu64 "..%" PRIu64, t->url,
			from, to, l.obj[0].first_lsn, end);
		archive_listing_free(&l);
		return -1;
	}
	c.from = from;
	c.to = to;
	pos = from;
	for (size_t i = 0; i < l.n_segments && pos <= to && rc == 0; i++) {
		const struct archive_object *o = &l.obj[i];
		struct archive_hdr h;
		const void *raw;
		void *buf, *owned;
		char what[700];

		if (o->last_lsn < pos)
			continue;
		if (o->first_lsn > pos) {
			rc = archive_fail(why, whylen, "archive %s: gap: no segment holds "
				"LSNs %" PRIu64 "..%" PRIu64, t->url, pos, o->first_lsn - 1);
			break;
		}
		if (object_load(t, o, &buf, &h, &raw, &owned, what, sizeof(what), why,
				whylen) != 0) {
			rc = -1;
			break;
		}
		c.from = pos;
		rc = archive_segment_records(&h, raw, in_range, &c, what, why, whylen);
		free(owned);
		free(buf);
		if (rc == 1)
			rc = c.stopped ? 1 : 0;
		pos = o->last_lsn + 1;
	}
	archive_listing_free(&l);
	if (rc < 0)
		return -1;
	if (rc == 0 && pos <= to)
		return archive_fail(why, whylen, "archive %s: gap: no segment holds LSNs %"
			PRIu64 "..%" PRIu64, t->url, pos, to);
	return 0;
}

int
archive_verify(struct archive_target *t, uint64_t *checked, uint64_t *bad, char *why,
		size_t whylen)
{
	struct archive_listing l;
	char first_why[ARCHIVE_WHY_MAX] = "";

	*checked = 0;
	*bad = 0;
	if (archive_list_names(t, &l, why, whylen) != 0)
		return -1;
	for (size_t i = 0; i < l.n_segments + l.n_bases; i++) {
		struct archive_hdr h;
		const void *raw;
		void *buf, *owned;
		char what[700], one[ARCHIVE_WHY_MAX];

		(*checked)++;
		if (object_load(t, &l.obj[i], &buf, &h, &raw, &owned, what, sizeof(what),
				one, sizeof(one)) != 0) {
			if (*bad == 0)
				snprintf(first_why, sizeof(first_why), "%s", one);
			(*bad)++;
			continue;
		}
		free(owned);
		free(buf);
	}
	archive_listing_free(&l);
	if (*bad > 0)
		return archive_fail(why, whylen, "%s", first_why);
	return 0;
}
