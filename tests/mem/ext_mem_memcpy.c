/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ext_mem_memcpy.c -- rpma_ext_mem_memcpy: argument and range checks, the
 * bytes arrive on every backend, and they become durable only through a
 * later persist: the file backend's image (read directly), and the crash
 * backend after the writer is SIGKILLed.
 */
#include <signal.h>
#include <stdint.h>
#include <sys/wait.h>
#include <unistd.h>

#include "unit.h"

#define REGION 65536
#define HALF (REGION / 2)

#define MEM_TEST_DIR "/tmp/rpma-memcpy-XXXXXX"
#include "mem_image.h"

/* bytes no fill value would produce by accident */
static void
pattern(unsigned char *p, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (unsigned char)((i * 131u + seed * 7u) % 251u + 1u);
}

static void
memcpy__null_and_range_checks(void)
{
	static unsigned char src[REGION];
	struct rpma_ext_mem *mem = NULL;
	unsigned char *p;

	memset(src, 0xC3, sizeof(src));
	CU_ASSERT_EQUAL(rpma_ext_mem_memcpy(NULL, 0, src, 1), RPMA_E_INVAL);
	CU_ASSERT_EQUAL_FATAL(rpma_ext_mem_open(RPMA_EXT_MEM_CRASH, path("r"),
		REGION, RPMA_EXT_MEM_CREATE, &mem), 0);
	rpma_ext_mem_get_ptr(mem, (void **)&p);

	CU_ASSERT_EQUAL(rpma_ext_mem_memcpy(mem, 0, NULL, 1), RPMA_E_INVAL);
	CU_ASSERT_EQUAL(rpma_ext_mem_memcpy(mem, 0, NULL, 0), 0);
	CU_ASSERT_EQUAL(rpma_ext_mem_memcpy(mem, REGION, src, 0), 0);
	CU_ASSERT(all_equal(p, REGION, 0x00));	/* nothing copied so far */

	/* refused ranges copy nothing, not even their in-range part */
	CU_ASSERT_EQUAL(rpma_ext_mem_memcpy(mem, REGION - 1, src, 2), RPMA_E_INVAL);
	CU_ASSERT_EQUAL(p[REGION - 1], 0x00);
	CU_ASSERT_EQUAL(rpma_ext_mem_memcpy(mem, REGION + 1, src, 0), RPMA_E_INVAL);
	CU_ASSERT_EQUAL(rpma_ext_mem_memcpy(mem, 1, src, SIZE_MAX), RPMA_E_INVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(rpma_ext_errormsg(), "outside"));
	CU_ASSERT(all_equal(p, REGION, 0x00));

	CU_ASSERT_EQUAL(rpma_ext_mem_memcpy(mem, REGION - 1, src, 1), 0);
	CU_ASSERT_EQUAL(p[REGION - 1], 0xC3);
	CU_ASSERT_EQUAL(rpma_ext_mem_memcpy(mem, 0, src, REGION), 0);
	CU_ASSERT(all_equal(p, REGION, 0xC3));
	rpma_ext_mem_close(&mem);
}

/* exactly [off, off + len) changes, on unaligned edges and past libpmem2's
 * non-temporal threshold (256 bytes) */
static void
check_copies(enum rpma_ext_mem_backend backend, const char *name)
{
	static unsigned char src[REGION];
	struct rpma_ext_mem *mem = NULL;
	unsigned char *p;
	const size_t off = 13, len = 40000;

	CU_ASSERT_EQUAL_FATAL(rpma_ext_mem_open(backend, path(name), REGION,
		RPMA_EXT_MEM_CREATE, &mem), 0);
	rpma_ext_mem_get_ptr(mem, (void **)&p);
	CU_ASSERT(all_equal(p, REGION, 0x00));

	pattern(src, sizeof(src), 1);
	CU_ASSERT_EQUAL(rpma_ext_mem_memcpy(mem, off, src, len), 0);
	CU_ASSERT(all_equal(p, off, 0x00));
	CU_ASSERT_EQUAL(memcmp(p + off, src, len), 0);
	CU_ASSERT(all_equal(p + off + len, REGION - off - len, 0x00));

	/* a small copy at the very end */
	CU_ASSERT_EQUAL(rpma_ext_mem_memcpy(mem, REGION - 3, "xyz", 3), 0);
	CU_ASSERT_EQUAL(memcmp(p + REGION - 3, "xyz", 3), 0);
	CU_ASSERT_EQUAL(p[REGION - 4], 0x00);

	/* the whole region */
	pattern(src, sizeof(src), 2);
	CU_ASSERT_EQUAL(rpma_ext_mem_memcpy(mem, 0, src, REGION), 0);
	CU_ASSERT_EQUAL(memcmp(p, src, REGION), 0);
	CU_ASSERT_EQUAL(rpma_ext_mem_close(&mem), 0);
}

static void
memcpy__data_arrives_file(void)
{
	check_copies(RPMA_EXT_MEM_FILE, "df");
}

static void
memcpy__data_arrives_crash(void)
{
	check_copies(RPMA_EXT_MEM_CRASH, "dc");
}

static void
memcpy__data_arrives_pmem(void)
{
	check_copies(RPMA_EXT_MEM_PMEM, "dp");
}

/* file backend: copies reach the file only through a persist covering them */
static void
memcpy__file_durable_only_after_persist(void)
{
	static unsigned char image[REGION];
	static unsigned char a[HALF], b[HALF];
	struct rpma_ext_mem *mem = NULL;
	unsigned char *p;

	pattern(a, HALF, 3);
	pattern(b, HALF, 4);
	CU_ASSERT_EQUAL_FATAL(rpma_ext_mem_open(RPMA_EXT_MEM_FILE, path("f"),
		REGION, RPMA_EXT_MEM_CREATE, &mem), 0);
	CU_ASSERT_EQUAL(rpma_ext_mem_memcpy(mem, 0, a, HALF / 2), 0);
	CU_ASSERT_EQUAL(rpma_ext_mem_memcpy(mem, HALF / 2, a + HALF / 2, HALF / 2), 0);
	CU_ASSERT_EQUAL(rpma_ext_mem_memcpy(mem, HALF, b, HALF), 0);

	read_image("f", image);
	CU_ASSERT(all_equal(image, REGION, 0x00));

	/* one persist over both copies of the first half */
	CU_ASSERT_EQUAL(rpma_ext_mem_persist(mem, 0, HALF), 0);
	read_image("f", image);
	CU_ASSERT_EQUAL(memcmp(image, a, HALF), 0);
	CU_ASSERT(all_equal(image + HALF, HALF, 0x00));
	rpma_ext_mem_close(&mem);

	/* reopening sees the persisted half only */
	CU_ASSERT_EQUAL_FATAL(rpma_ext_mem_open(RPMA_EXT_MEM_FILE, path("f"), 0, 0,
		&mem), 0);
	rpma_ext_mem_get_ptr(mem, (void **)&p);
	CU_ASSERT_EQUAL(memcmp(p, a, HALF), 0);
	CU_ASSERT(all_equal(p + HALF, HALF, 0x00));
	rpma_ext_mem_close(&mem);
}

/*
 * crash backend: a child copies both halves, persists the first, and is
 * SIGKILLed; the image holds the first half and none of the second.
 */
static void
memcpy__crash_sigkill_loses_the_unpersisted_copy(void)
{
	static unsigned char image[REGION];
	static unsigned char a[HALF], b[HALF];
	int ready[2];
	int status;
	pid_t pid;
	char c;

	pattern(a, HALF, 5);
	pattern(b, HALF, 6);
	CU_ASSERT_FATAL(pipe(ready) == 0);
	pid = fork();
	CU_ASSERT_FATAL(pid >= 0);
	if (pid == 0) {
		struct rpma_ext_mem *mem = NULL;

		close(ready[0]);
		if (rpma_ext_mem_open(RPMA_EXT_MEM_CRASH, path("c"), REGION,
				RPMA_EXT_MEM_CREATE, &mem))
			_exit(2);
		if (rpma_ext_mem_memcpy(mem, HALF, b, HALF) ||	/* never persisted */
		    rpma_ext_mem_memcpy(mem, 0, a, HALF) ||
		    rpma_ext_mem_persist(mem, 0, HALF))
			_exit(3);
		if (write(ready[1], "k", 1) != 1)
			_exit(4);
		for (;;)
			pause();		/* killed here, mem still open */
	}
	close(ready[1]);
	CU_ASSERT_EQUAL(read(ready[0], &c, 1), 1);
	close(ready[0]);
	kill(pid, SIGKILL);
	CU_ASSERT_EQUAL(waitpid(pid, &status, 0), pid);
	CU_ASSERT(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);

	read_image("c", image);
	CU_ASSERT_EQUAL(memcmp(image, a, HALF), 0);
	CU_ASSERT(all_equal(image + HALF, HALF, 0x00));
}

/* pmem backend: memcpy then persist, the file holds the bytes on reopen */
static void
memcpy__pmem_persisted_copy_survives_reopen(void)
{
	static unsigned char image[REGION];
	static unsigned char a[REGION];
	struct rpma_ext_mem *mem = NULL;
	unsigned char *p;

	pattern(a, REGION, 7);
	CU_ASSERT_EQUAL_FATAL(rpma_ext_mem_open(RPMA_EXT_MEM_PMEM, path("p"),
		REGION, RPMA_EXT_MEM_CREATE, &mem), 0);
	CU_ASSERT_EQUAL(rpma_ext_mem_memcpy(mem, 7, a, REGION - 7), 0);
	CU_ASSERT_EQUAL(rpma_ext_mem_persist(mem, 7, REGION - 7), 0);
	CU_ASSERT_EQUAL(rpma_ext_mem_close(&mem), 0);

	read_image("p", image);
	CU_ASSERT(all_equal(image, 7, 0x00));
	CU_ASSERT_EQUAL(memcmp(image + 7, a, REGION - 7), 0);

	CU_ASSERT_EQUAL_FATAL(rpma_ext_mem_open(RPMA_EXT_MEM_PMEM, path("p"), 0, 0,
		&mem), 0);
	rpma_ext_mem_get_ptr(mem, (void **)&p);
	CU_ASSERT_EQUAL(memcmp(p + 7, a, REGION - 7), 0);
	rpma_ext_mem_close(&mem);
}

int
main(void)
{
	static CU_TestInfo cases[] = {
		UNIT_CASE(memcpy__null_and_range_checks),
		UNIT_CASE(memcpy__data_arrives_file),
		UNIT_CASE(memcpy__data_arrives_crash),
		UNIT_CASE(memcpy__data_arrives_pmem),
		UNIT_CASE(memcpy__file_durable_only_after_persist),
		UNIT_CASE(memcpy__crash_sigkill_loses_the_unpersisted_copy),
		UNIT_CASE(memcpy__pmem_persisted_copy_survives_reopen),
		CU_TEST_INFO_NULL,
	};
	int ret;

	if (mkdtemp(dir) == NULL)
		return 99;
	ret = unit_run("rpma_ext_mem_memcpy", cases);
	for (const char *const *n = (const char *const[]){ "r", "df", "dc", "dp",
			"f", "c", "p", NULL }; *n; n++)
		unlink(path(*n));
	rmdir(dir);
	return ret;
}
