/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * listing.c -- what an archive holds, from its objects' names (the index)
 * and their headers (times, sizes, checked against the names), and how
 * far it reaches without a gap.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "archive_int.h"

static int
obj_cmp(const void *a, const void *b)
{
	const struct archive_object *x = a, *y = b;

	if (x->kind != y->kind)
		return x->kind == ARCHIVE_SEGMENT ? -1 : 1;
	if (x->first_lsn != y->first_lsn)
		return x->first_lsn < y->first_lsn ? -1 : 1;
	if (x->last_lsn != y->last_lsn)
		return x->last_lsn < y->last_lsn ? -1 : 1;
	return 0;
}

/*
 * From the oldest object on, each covers its LSNs (a base its one): the
 * reach ends before the first LSN no object covers that a newer one
 * follows.  Segments and bases are merged by first LSN.
 */
void
archive_listing_reach(struct archive_listing *l)
{
	size_t i = 0, j = l->n_segments, n = l->n_segments + l->n_bases;
	uint64_t end = 0;	/* the last LSN reached */
	bool started = false;

	l->contiguous_to = 0;
	l->gap_at = 0;
	while (i < l->n_segments || j < n) {
		const struct archive_object *o;

		if (j >= n || (i < l->n_segments && l->obj[i].first_lsn <= l->obj[j].first_lsn))
			o = &l->obj[i++];
		else
			o = &l->obj[j++];
		if (started && end != UINT64_MAX && o->first_lsn > end + 1) {
			l->gap_at = end + 1;
			break;
		}
		if (!started || o->last_lsn > end)
			end = o->last_lsn;
		started = true;
	}
	l->contiguous_to = end;
}

int
archive_list_names(struct archive_target *t, struct archive_listing *out, char *why,
		size_t whylen)
{
	char **names = NULL;
	size_t n = 0, k = 0;

	memset(out, 0, sizeof(*out));
	if (t->ops->list(t, &names, &n, why, whylen) != 0)
		return -1;
	out->obj = calloc(n > 0 ? n : 1, sizeof(*out->obj));
	if (out->obj == NULL) {
		for (size_t i = 0; i < n; i++)
			free(names[i]);
		free(names);
		return archive_fail(why, whylen, "archive %s: out of memory", t->url);
	}
	for (size_t i = 0; i < n; i++) {
		struct archive_object *o = &out->obj[k];

		if (archive_name_parse(names[i], &o->kind, &o->first_lsn,
				&o->last_lsn) == 0 && strlen(names[i]) < sizeof(o->name)) {
			strcpy(o->name, names[i]);
			if (o->kind == ARCHIVE_SEGMENT)
				out->n_segments++;
			else
				out->n_bases++;
			k++;
		}
		free(names[i]);
	}
	free(names);
	qsort(out->obj, k, sizeof(*out->obj), obj_cmp);
	archive_listing_reach(out);
	return 0;
}

int
archive_list(struct archive_target *t, struct archive_listing *out, char *why,
		size_t whylen)
{
	if (archive_list_names(t, out, why, whylen) != 0)
		return -1;
	for (size_t i = 0; i < out->n_segments + out->n_bases; i++) {
		struct archive_object *o = &out->obj[i];
		uint8_t buf[ARCHIVE_HDR_SIZE];
		struct archive_hdr h;
		char what[700];
		size_t got;
		uint64_t size;

		snprintf(what, sizeof(what), "archive %s: %s", t->url, o->name);
		if (t->ops->head(t, o->name, buf, sizeof(buf), &got, &size, why,
				whylen) != 0 ||
				archive_hdr_parse(buf, got, size, t->uuid, what, &h, why,
					whylen) != 0)
			goto fail;
		if (h.kind != o->kind || h.first_lsn != o->first_lsn ||
				h.last_lsn != o->last_lsn) {
			archive_fail(why, whylen, "%s: header: a %s of LSNs %" PRIu64 "..%"
				PRIu64 ", not what its name says", what,
				h.kind == ARCHIVE_SEGMENT ? "segment" : "base", h.first_lsn,
				h.last_lsn);
			goto fail;
		}
		o->first_ms = h.first_ms;
		o->last_ms = h.last_ms;
		o->bytes = size;
	}
	return 0;
fail:
	archive_listing_free(out);
	return -1;
}

void
archive_listing_free(struct archive_listing *l)
{
	if (l == NULL)
		return;
	free(l->obj);
	memset(l, 0, sizeof(*l));
}
