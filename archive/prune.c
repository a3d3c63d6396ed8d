/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * prune.c -- retention: the oldest objects deleted, oldest first, so that
 * what stays is the archive with its beginning cut (a crash midway leaves
 * no hole), and never what a restore to a point kept needs.
 *
 * With bases, the archive is cut at a base's LSN (the cut): bases before
 * it and segments wholly at or before it go.  The cut is the oldest of the
 * newest keep_bases bases (keep_bases 0, or no more bases than that: the
 * oldest base); with keep_ms, no later than the base a restore to the
 * oldest young record needs (the newest base at or before the first LSN
 * of the oldest segment whose last record is young; none: nothing goes)
 * nor than the oldest young base.  "Young": last time >= now - keep_ms.
 *
 * Without bases (a raw log's archive, whose records need nothing before
 * them), segments go from the oldest on while their last record is not
 * young; keep_ms 0 keeps all.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "archive_int.h"

/* the LSN the archive is cut at: what is wholly before it goes (0: none) */
static uint64_t
cut_of(const struct archive_listing *l, unsigned keep_bases, uint64_t keep_ms,
		uint64_t young)
{
	const struct archive_object *seg = l->obj, *base = l->obj + l->n_segments;
	size_t nb = l->n_bases;
	uint64_t cut;

	cut = keep_bases > 0 && nb > keep_bases ? base[nb - keep_bases].first_lsn :
		base[0].first_lsn;
	if (keep_ms == 0)
		return cut;
	for (size_t i = 0; i < l->n_segments; i++) {
		uint64_t need = 0;
		bool found = false;

		if (seg[i].last_ms < young)
			continue;
		for (size_t b = 0; b < nb && base[b].first_lsn <= seg[i].first_lsn; b++) {
			need = base[b].first_lsn;
			found = true;
		}
		if (!found)
			return 0;
		if (need < cut)
			cut = need;
		break;
	}
	for (size_t b = 0; b < nb; b++) {
		if (base[b].last_ms >= young) {
			if (base[b].first_lsn < cut)
				cut = base[b].first_lsn;
			break;
		}
	}
	return cut;
}

int
archive_prune(struct archive_target *t, unsigned keep_bases, uint64_t keep_ms,
		uint64_t now_ms, uint64_t *deleted, char *why, size_t whylen)
{
	struct archive_listing l;
	uint64_t young = keep_ms > 0 && now_ms > keep_ms ? now_ms - keep_ms : 0;
	size_t i = 0, j, n;
	int rc = 0;

	*deleted = 0;
	if (archive_list(t, &l, why, whylen) != 0)
		return -1;
	j = l.n_segments;
	n = l.n_segments + l.n_bases;
	if (l.n_bases == 0) {
		for (; keep_ms > 0 && i < l.n_segments && l.obj[i].last_ms < young; i++) {
			rc = t->ops->del(t, l.obj[i].name, why, whylen);
			if (rc != 0)
				break;
			(*deleted)++;
		}
		archive_listing_free(&l);
		return rc;
	}

	uint64_t cut = cut_of(&l, keep_bases, keep_ms, young);

	/* both kinds by LSN, oldest first, up to the cut */
	while (rc == 0) {
		const struct archive_object *o;
		bool seg_goes = i < l.n_segments && l.obj[i].last_lsn <= cut;
		bool base_goes = j < n && l.obj[j].first_lsn < cut;

		if (seg_goes && (!base_goes || l.obj[i].first_lsn <= l.obj[j].first_lsn))
			o = &l.obj[i++];
		else if (base_goes)
			o = &l.obj[j++];
		else
			break;
		rc = t->ops->del(t, o->name, why, whylen);
		if (rc == 0)
			(*deleted)++;
	}
	archive_listing_free(&l);
	return rc;
}
