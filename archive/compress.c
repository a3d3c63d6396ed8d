/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * compress.c -- an object's body through zstd: compressed by a writer's
 * context kept for its life, decompressed to no more than the header's raw
 * length (bytes from a target are untrusted: a small body that grows past
 * what it claims is refused before it is all inflated).
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include <zstd.h>

#include "archive_int.h"

struct archive_zstd {
	ZSTD_CCtx *cctx;
	void *out;
	size_t cap;
};

struct archive_zstd *
archive_zstd_new(int level)
{
	struct archive_zstd *z = calloc(1, sizeof(*z));

	if (z == NULL)
		return NULL;
	z->cctx = ZSTD_createCCtx();
	if (z->cctx == NULL ||
			ZSTD_isError(ZSTD_CCtx_setParameter(z->cctx,
				ZSTD_c_compressionLevel, level)) ||
			ZSTD_isError(ZSTD_CCtx_setParameter(z->cctx,
				ZSTD_c_contentSizeFlag, 1)) ||
			ZSTD_isError(ZSTD_CCtx_setParameter(z->cctx,
				ZSTD_c_checksumFlag, 0))) {
		archive_zstd_free(z);
		return NULL;
	}
	return z;
}

void
archive_zstd_free(struct archive_zstd *z)
{
	if (z == NULL)
		return;
	ZSTD_freeCCtx(z->cctx);
	free(z->out);
	free(z);
}

int
archive_zstd_compress(struct archive_zstd *z, const void *src, size_t len,
		const void **out, size_t *outlen, char *why, size_t whylen)
{
	size_t bound = ZSTD_compressBound(len), n;

	if (ZSTD_isError(bound))
		return archive_fail(why, whylen, "zstd: %zu bytes cannot be compressed",
			len);
	if (bound > z->cap) {
		void *p = realloc(z->out, bound);

		if (p == NULL)
			return archive_fail(why, whylen, "zstd: out of memory for %zu bytes",
				bound);
		z->out = p;
		z->cap = bound;
	}
	n = ZSTD_compress2(z->cctx, z->out, z->cap, src, len);
	if (ZSTD_isError(n))
		return archive_fail(why, whylen, "zstd: %s", ZSTD_getErrorName(n));
	*out = z->out;
	*outlen = n;
	return 0;
}

int
archive_zstd_decompress(const void *src, size_t len, uint64_t raw_len, void **dst,
		const char *what, char *why, size_t whylen)
{
	ZSTD_DCtx *d = ZSTD_createDCtx();
	ZSTD_inBuffer in = { src, len, 0 };
	ZSTD_outBuffer out = { NULL, 0, 0 };
	size_t ret = 1;
	/* start at what the stored bytes may plausibly give, then double */
	uint64_t cap = len < raw_len / 8 ? (uint64_t)len * 8 + 65536 : raw_len;

	*dst = NULL;
	if (d == NULL)
		return archive_fail(why, whylen, "%s: zstd: out of memory", what);
	if (cap > raw_len)
		cap = raw_len;
	out.dst = malloc(cap > 0 ? (size_t)cap : 1);
	out.size = (size_t)cap;
	if (out.dst == NULL)
		goto nomem;
	/* until every byte is in and the last frame is whole */
	while (in.pos < in.size || ret != 0) {
		size_t in_was = in.pos, out_was = out.pos;

		if (out.pos == out.size && out.size < raw_len) {
			void *p;

			cap = out.size * 2 > raw_len ? raw_len : (uint64_t)out.size * 2;
			p = realloc(out.dst, (size_t)cap);
			if (p == NULL)
				goto nomem;
			out.dst = p;
			out.size = (size_t)cap;
		}
		ret = ZSTD_decompressStream(d, &out, &in);
		if (ZSTD_isError(ret)) {
			ZSTD_freeDCtx(d);
			free(out.dst);
			return archive_fail(why, whylen, "%s: body: zstd: %s", what,
				ZSTD_getErrorName(ret));
		}
		if (in.pos == in_was && out.pos == out_was) {
			ZSTD_freeDCtx(d);
			free(out.dst);
			if (out.pos == out.size)
				return archive_fail(why, whylen, "%s: body: zstd gives more "
					"than the raw length %" PRIu64, what, raw_len);
			return archive_fail(why, whylen, "%s: body: zstd: the last "
				"frame is cut short", what);
		}
	}
	ZSTD_freeDCtx(d);
	if (out.pos != raw_len) {
		free(out.dst);
		return archive_fail(why, whylen, "%s: body: zstd gives %zu bytes, not "
			"the raw length %" PRIu64, what, out.pos, raw_len);
	}
	*dst = out.dst;
	return 0;
nomem:
	ZSTD_freeDCtx(d);
	free(out.dst);
	return archive_fail(why, whylen, "%s: body: out of memory for %" PRIu64
		" bytes", what, cap);
}
