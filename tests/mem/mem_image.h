/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mem_image.h -- what the persistence-backend tests share: files in a
 * temporary directory, and the durable image read back with plain file I/O.
 * Define MEM_TEST_DIR (a mkdtemp template) and REGION before including.
 */
#ifndef MEM_IMAGE_H
#define MEM_IMAGE_H

#include <stdio.h>

static char dir[] = MEM_TEST_DIR;

static const char *
path(const char *name)
{
	static char buf[256];
	snprintf(buf, sizeof(buf), "%s/%s", dir, name);
	return buf;
}

/* the durable image, read with plain file I/O by this process */
static void
read_image(const char *name, unsigned char *buf)
{
	FILE *f = fopen(path(name), "rb");

	CU_ASSERT_FATAL(f != NULL);
	CU_ASSERT_EQUAL(fread(buf, 1, REGION, f), REGION);
	fclose(f);
}

static int
all_equal(const unsigned char *p, size_t n, unsigned char v)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != v)
			return 0;
	return 1;
}

#endif
