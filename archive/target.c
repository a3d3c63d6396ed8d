/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * target.c -- a target opened by its URL, and the archive's cluster uuid
 * in it: the object "cluster-uuid", the uuid as text (8-4-4-4-12 hex
 * digits and a newline, 37 bytes), written before the archive's first
 * object and compared at every open after.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include "archive_int.h"

#define UUID_TEXT_LEN 37

static void
uuid_format(const uint8_t u[16], char out[UUID_TEXT_LEN + 1])
{
	static const char hex[] = "0123456789abcdef";
	size_t o = 0;

	for (int i = 0; i < 16; i++) {
		if (i == 4 || i == 6 || i == 8 || i == 10)
			out[o++] = '-';
		out[o++] = hex[u[i] >> 4];
		out[o++] = hex[u[i] & 15];
	}
	out[o++] = '\n';
	out[o] = '\0';
}

static int
hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static int
uuid_parse(const char *s, size_t len, uint8_t u[16])
{
	size_t i = 0;

	if (len != UUID_TEXT_LEN || s[36] != '\n')
		return -1;
	for (int b = 0; b < 16; b++) {
		int hi, lo;

		if (b == 4 || b == 6 || b == 8 || b == 10) {
			if (s[i++] != '-')
				return -1;
		}
		hi = hex_digit(s[i++]);
		lo = hex_digit(s[i++]);
		if (hi < 0 || lo < 0)
			return -1;
		u[b] = (uint8_t)(hi << 4 | lo);
	}
	return 0;
}

int
archive_target_open(const char *url, const uint8_t cluster_uuid[16],
		struct archive_target **tp, char *why, size_t whylen)
{
	struct archive_target *t;
	const char *path = url;
	void *buf = NULL;
	size_t len;
	int rc;

	*tp = NULL;
	if (url == NULL || url[0] == '\0')
		return archive_fail(why, whylen, "archive: no target given");
	if (strncmp(url, "file://", 7) == 0)
		path = url + 7;
	else if (strncmp(url, "s3://", 5) == 0)
		path = NULL;
	else if (strstr(url, "://") != NULL)
		return archive_fail(why, whylen, "archive %s: not a target: a directory (a "
			"path or file://DIR) or s3://BUCKET/PREFIX", url);
	t = calloc(1, sizeof(*t));
	if (t == NULL)
		return archive_fail(why, whylen, "archive %s: out of memory", url);
	if (strlen(url) >= sizeof(t->url)) {
		free(t);
		return archive_fail(why, whylen, "archive: target name too long");
	}
	strcpy(t->url, url);
	/* only a writer (it names its cluster) makes or cleans anything */
	if ((path != NULL ? archive_dir_open(t, path, cluster_uuid != NULL, why, whylen) :
			archive_s3_open(t, url, why, whylen)) != 0) {
		free(t);
		return -1;
	}
	rc = t->ops->get(t, ARCHIVE_UUID_OBJECT, 4096, &buf, &len, why, whylen);
	if (rc < 0)
		goto fail;
	if (rc == 0) {
		uint8_t stored[16];

		if (uuid_parse(buf, len, stored) != 0) {
			archive_fail(why, whylen, "archive %s: %s: not a uuid as text "
				"(36 characters and a newline)", url, ARCHIVE_UUID_OBJECT);
			goto fail;
		}
		if (cluster_uuid != NULL && memcmp(stored, cluster_uuid, 16) != 0) {
			char a[UUID_TEXT_LEN + 1], b[UUID_TEXT_LEN + 1];

			uuid_format(stored, a);
			uuid_format(cluster_uuid, b);
			a[36] = b[36] = '\0';
			archive_fail(why, whylen, "archive %s: the archive of cluster %s, "
				"not of this cluster %s", url, a, b);
			goto fail;
		}
		memcpy(t->uuid, stored, 16);
		t->uuid_stored = true;
	} else if (cluster_uuid != NULL) {
		memcpy(t->uuid, cluster_uuid, 16);
	} else {
		archive_fail(why, whylen, "archive %s: not an archive: no %s in it "
			"(an archiver writes it first)", url, ARCHIVE_UUID_OBJECT);
		goto fail;
	}
	free(buf);
	*tp = t;
	return 0;
fail:
	free(buf);
	t->ops->close(t);
	free(t);
	return -1;
}

void
archive_target_close(struct archive_target **tp)
{
	if (tp == NULL || *tp == NULL)
		return;
	(*tp)->ops->close(*tp);
	free(*tp);
	*tp = NULL;
}

int
archive_put(struct archive_target *t, const char *name, const struct iovec *iov,
		int iovcnt, char *why, size_t whylen)
{
	if (!t->uuid_stored) {
		char text[UUID_TEXT_LEN + 1];
		struct iovec v = { text, UUID_TEXT_LEN };

		uuid_format(t->uuid, text);
		if (t->ops->put(t, ARCHIVE_UUID_OBJECT, &v, 1, why, whylen) != 0)
			return -1;
		t->uuid_stored = true;
	}
	return t->ops->put(t, name, iov, iovcnt, why, whylen);
}

const uint8_t *
archive_target_uuid(const struct archive_target *t)
{
	return t->uuid;
}
