/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rv_copy_remake.c -- a replica's copy that cannot follow its log, made
 * anew from the primary's image (rv_remake.h; docs/sqlite.md, rule 7):
 * it asks, waits for the image's first record, holds from its base,
 * applies the records after it into a new file and installs that file.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "image_record.h"
#include "rv_base.h"
#include "rv_copy_internal.h"

#define IMAGE_STALL_MS	120000		/* an image that stopped coming: ask again */

static void
remake_publish(struct rv_copy *c)
{
	pthread_mutex_lock(&c->lock);
	c->st.state = RV_COPY_REMAKING;
	c->st.image_lsn = c->m.first_lsn;
	c->st.image_bytes = c->m.image_bytes;
	c->st.image_total_bytes = (uint64_t)c->m.image_pages * c->m.a.page_size;
	c->st.holding = c->m.first_lsn != 0;
	c->st.hold_lsn = c->m.first_lsn != 0 ? c->m.a.applied_lsn : 0;
	pthread_mutex_unlock(&c->lock);
}

/*
 * Waiting for an image: the records from *scan on are looked at for an
 * image's first record, which the primary writes once a heartbeat said
 * this replica wants one.  Nothing is held meanwhile.  1 with *first_lsn
 * and *h, 0 none yet, -1 (c->why).
 */
static int
find_image(struct rv_copy *c, uint64_t *scan, uint64_t *first_lsn,
		struct img_hdr *h)
{
	char err[256];
	int ret;

	if (repl_replica_wait(c->node, *scan, WAIT_MS) != 0)
		return 0;
	if ((ret = rv_copy_next_batch(c, *scan)) <= 0)
		return ret;
	for (size_t i = 0; i < c->n_recs; i++) {
		const uint8_t *d = c->buf + c->recs[i].off;

		*scan = c->recs[i].lsn + 1;
		if (image_record_is(d, c->recs[i].len) &&
		    image_record_parse(d, c->recs[i].len, h, err, sizeof(err)) &&
		    (h->flags & IMG_F_FIRST) &&
		    memcmp(h->db_uuid, c->a.db_uuid, sizeof(h->db_uuid)) == 0) {
			*first_lsn = c->recs[i].lsn;
			return 1;
		}
	}
	return 0;
}

/*
 * The records from the image's base on into the new file, until the image
 * is complete and nothing committed is left: 0; 1 another image began
 * (*scan at it); 2 ask again: the log no longer holds a record needed, or
 * the image stopped coming (a new primary's epoch began, which cut it
 * short, or none of its pages came for IMAGE_STALL_MS); -1 (c->why); -2
 * stopped.
 */
static int
remake_apply(struct rv_copy *c, uint64_t *scan)
{
	struct repl_replica_info info;
	uint64_t epoch = 0, bytes = 0, moved_ms = rv_copy_now_ms();
	int ret;

	if (repl_replica_info(c->node, &info) == 0)
		epoch = info.epoch;
	while (!atomic_load(&c->stop)) {
		uint64_t pos = c->m.a.applied_lsn + 1;

		if (!c->m.complete) {
			if (c->m.image_bytes != bytes) {
				bytes = c->m.image_bytes;
				moved_ms = rv_copy_now_ms();
			}
			if (repl_replica_info(c->node, &info) == 0 && epoch != 0 &&
			    info.epoch != epoch) {
				fprintf(stderr, "replvfs copy: %s: a new primary's epoch "
					"began before the image was complete: asking "
					"again\n", c->path);
				return 2;
			}
			if (rv_copy_now_ms() - moved_ms >= IMAGE_STALL_MS) {
				fprintf(stderr, "replvfs copy: %s: no page of the image "
					"came for %d s: asking again\n", c->path,
					IMAGE_STALL_MS / 1000);
				return 2;
			}
		}

		if (repl_replica_wait(c->node, pos, WAIT_MS) != 0) {
			if (c->m.complete)
				return 0;
			continue;
		}
		if ((ret = rv_copy_next_batch(c, pos)) < 0)
			return -1;
		if (ret == 0) {
			if (c->m.complete)
				return 0;
			rv_copy_sleep_ms(WAIT_MS);
			continue;
		}
		if (c->recs[0].lsn != pos) {
			fprintf(stderr, "replvfs copy: %s: the log no longer holds LSN "
				"%llu, which the image needs: asking again\n", c->path,
				(unsigned long long)pos);
			return 2;
		}
		for (size_t i = 0; i < c->n_recs; i++) {
			ret = rv_remake_record(&c->m, c->recs[i].lsn,
				c->buf + c->recs[i].off, c->recs[i].len, c->why,
				sizeof(c->why));
			if (ret == 1) {
				*scan = c->recs[i].lsn;
				return 1;
			}
			if (ret < 0)
				return -1;
		}
		/*
		 * What is applied into the new file need not stay; the last
		 * record applied does, so that the hold never begins before
		 * the log's first record (such a hold counts for nothing) when
		 * the install marks it (mark_base holds from the base on).
		 */
		(void)repl_replica_hold(c->node, c->m.a.applied_lsn - 1);
		remake_publish(c);
	}
	return -2;
}

/*
 * The new file over the copy, under the EXCLUSIVE lock (held already when
 * locked): readers see the old database until then, the new one after.
 * Marked a base at what it applied.  0, or -1 (c->why).
 */
static int
remake_install(struct rv_copy *c, bool locked)
{
	uint32_t pages = c->m.min_db_pages != UINT32_MAX ? c->m.a.db_pages :
		c->m.image_pages;

	if (!locked && !rv_copy_lock(c))
		return -2;
	if (rv_copy_applying_begin(c) != 0 ||
	    rv_remake_install(&c->m, c->a.fd, &c->a.change_counter, c->why,
			sizeof(c->why)) != 0) {
		rv_copy_unlock(c);
		return -1;
	}
	c->a.applied_lsn = c->m.a.applied_lsn;
	c->a.page_size = c->m.a.page_size;
	c->a.db_pages = pages;
	c->a.records += c->m.a.records;
	(void)unlink(c->applying);
	atomic_store(&c->file_lsn, c->a.applied_lsn);
	rv_copy_unlock(c);
	c->from_primary = false;
	c->base_lsn = 0;
	return rv_copy_mark_base(c);
}

/*
 * The copy cannot follow (c->why says why): it is made anew from its
 * primary's image (rv_remake.h).  Its marker goes first (the file is no
 * base it can go on from), and its hold: nothing is held until an image
 * begins, then the records after the image's base are, which the primary
 * keeps until it sees this hold (rv_image.c).  A file from a primary, or
 * torn, keeps readers out throughout (locked); a whole one is read as it
 * is until the new one is installed.  0 following again, -1 (c->why), -2
 * stopped.
 */
int
rv_copy_remake(struct rv_copy *c, bool locked)
{
	uint64_t scan = c->a.applied_lsn + 1, first = 0;
	struct img_hdr h;
	char err[300];
	bool held = locked;	/* until the install, which lets it go */
	int ret;

	fprintf(stderr, "replvfs copy: %s; remaking it from the primary's image\n",
		c->why);
	pthread_mutex_lock(&c->lock);
	c->st.state = RV_COPY_REMAKING;
	snprintf(c->st.error, sizeof(c->st.error), "%s", c->why);
	c->st.base_lsn = 0;
	c->st.image_lsn = c->st.image_bytes = c->st.image_total_bytes = 0;
	c->st.holding = false;
	c->st.hold_lsn = 0;
	pthread_mutex_unlock(&c->lock);
	if (rv_base_remove(c->path, err, sizeof(err)) != 0) {
		snprintf(c->why, sizeof(c->why), "%s", err);
		if (held)
			rv_copy_unlock(c);
		return -1;
	}
	c->base_lsn = 0;
	(void)repl_replica_unhold(c->node);
	(void)repl_replica_want_base(c->node, 1);
	while (!atomic_load(&c->stop)) {
		if (first == 0) {
			if ((ret = find_image(c, &scan, &first, &h)) < 0)
				break;
			if (ret == 0)
				continue;
		}
		/* hold what the image needs, before the primary stops keeping it */
		(void)repl_replica_hold(c->node, h.base_lsn);
		(void)repl_replica_want_base(c->node, 0);
		if (rv_remake_begin(&c->m, c->path, c->a.db_uuid, first, h.base_lsn,
				h.db_pages, c->why, sizeof(c->why)) != 0)
			break;
		remake_publish(c);
		fprintf(stderr, "replvfs copy: %s: the image at LSN %llu (base LSN "
			"%llu, %u pages)\n", c->path, (unsigned long long)first,
			(unsigned long long)h.base_lsn, h.db_pages);
		ret = remake_apply(c, &scan);
		if (ret == 0) {
			held = false;
			if ((ret = remake_install(c, locked)) == 0) {
				rv_remake_end(&c->m);
				pthread_mutex_lock(&c->lock);
				c->st.remakes++;
				c->st.error[0] = '\0';
				c->st.image_lsn = 0;
				c->st.image_bytes = c->st.image_total_bytes = 0;
				pthread_mutex_unlock(&c->lock);
				fprintf(stderr, "replvfs copy: %s: remade from the primary's "
					"image, at LSN %llu\n", c->path,
					(unsigned long long)c->a.applied_lsn);
				rv_copy_publish(c, 0);
				return 0;
			}
			break;
		}
		rv_remake_end(&c->m);
		first = 0;
		if (ret == 1)
			continue;	/* another image: its first record at scan */
		if (ret != 2)
			break;
		/* the log lost what it needed: ask again, from where it is */
		(void)repl_replica_unhold(c->node);
		(void)repl_replica_want_base(c->node, 1);
		remake_publish(c);
	}
	rv_remake_end(&c->m);
	(void)repl_replica_want_base(c->node, 0);
	if (held)
		rv_copy_unlock(c);
	return atomic_load(&c->stop) ? -2 : -1;
}

