/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ext_mem_persist.c -- rpma_ext_mem_persist: range checks, and that exactly
 * the persisted bytes survive, on the file backend (close and reopen) and on
 * the crash backend (the writer SIGKILLed, the image read by another process).
 */
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "unit.h"

#define REGION 65536
#define HALF (REGION / 2)

#define MEM_TEST_DIR "/tmp/rpma-persist-XXXXXX"
#include "mem_image.h"

static void
persist__range_checks(void)
{
	struct rpma_ext_mem *mem = NULL;

	CU_ASSERT_EQUAL(rpma_ext_mem_persist(NULL, 0, 1), RPMA_E_INVAL);
	CU_ASSERT_EQUAL_FATAL(rpma_ext_mem_open(RPMA_EXT_MEM_CRASH, path("r"),
		REGION, RPMA_EXT_MEM_CREATE, &mem), 0);
	CU_ASSERT_EQUAL(rpma_ext_mem_persist(mem, 0, REGION), 0);
	CU_ASSERT_EQUAL(rpma_ext_mem_persist(mem, REGION, 0), 0);
	CU_ASSERT_EQUAL(rpma_ext_mem_persist(mem, REGION - 1, 1), 0);
	CU_ASSERT_EQUAL(rpma_ext_mem_persist(mem, REGION - 1, 2), RPMA_E_INVAL);
	CU_ASSERT_EQUAL(rpma_ext_mem_persist(mem, REGION + 1, 0), RPMA_E_INVAL);
	CU_ASSERT_EQUAL(rpma_ext_mem_persist(mem, 1, SIZE_MAX), RPMA_E_INVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(rpma_ext_errormsg(), "outside"));
	rpma_ext_mem_close(&mem);
}

/* file backend: only the persisted half reaches the file */
static void
persist__file_keeps_exactly_the_persisted_range(void)
{
	static unsigned char image[REGION];
	struct rpma_ext_mem *mem = NULL;
	unsigned char *p;

	CU_ASSERT_EQUAL_FATAL(rpma_ext_mem_open(RPMA_EXT_MEM_FILE, path("f"),
		REGION, RPMA_EXT_MEM_CREATE, &mem), 0);
	rpma_ext_mem_get_ptr(mem, (void **)&p);
	memset(p, 0xA1, HALF);
	memset(p + HALF, 0xB2, HALF);
	CU_ASSERT_EQUAL(rpma_ext_mem_persist(mem, 0, HALF), 0);

	read_image("f", image);
	CU_ASSERT(all_equal(image, HALF, 0xA1));
	CU_ASSERT(all_equal(image + HALF, HALF, 0x00));
	rpma_ext_mem_close(&mem);

	/* reopening loads the image, not what was in memory */
	CU_ASSERT_EQUAL_FATAL(rpma_ext_mem_open(RPMA_EXT_MEM_FILE, path("f"), 0, 0,
		&mem), 0);
	rpma_ext_mem_get_ptr(mem, (void **)&p);
	CU_ASSERT(all_equal(p, HALF, 0xA1));
	CU_ASSERT(all_equal(p + HALF, HALF, 0x00));
	rpma_ext_mem_close(&mem);
}

/*
 * crash backend: a child persists one half, dirties the other, and is
 * SIGKILLed; this process then reads the image.  noise selects eviction
 * noise, which may also leak unpersisted lines, but never loses persisted
 * ones.
 */
static int
crash_child_round(const char *name, unsigned flags, int persists,
		unsigned char *image)
{
	int ready[2];
	pid_t pid;
	char c;
	int status;

	CU_ASSERT_FATAL(pipe(ready) == 0);
	pid = fork();
	CU_ASSERT_FATAL(pid >= 0);
	if (pid == 0) {
		struct rpma_ext_mem *mem = NULL;
		unsigned char *p;

		close(ready[0]);
		if (rpma_ext_mem_open(RPMA_EXT_MEM_CRASH, path(name), REGION,
				RPMA_EXT_MEM_CREATE | flags, &mem))
			_exit(2);
		rpma_ext_mem_get_ptr(mem, (void **)&p);
		memset(p + HALF, 0xB2, HALF);		/* never persisted */
		memset(p, 0xA1, HALF);
		for (int i = 0; i < persists; i++)
			if (rpma_ext_mem_persist(mem, 0, HALF))
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
	read_image(name, image);
	return 0;
}

static void
persist__crash_sigkill_loses_exactly_the_unpersisted(void)
{
	static unsigned char image[REGION];

	crash_child_round("c", 0, 1, image);
	CU_ASSERT(all_equal(image, HALF, 0xA1));
	CU_ASSERT(all_equal(image + HALF, HALF, 0x00));
}

static void
persist__crash_eviction_noise_leaks_lines_keeps_persisted(void)
{
	static unsigned char image[REGION];
	size_t leaked = 0;

	/* 200 persists x 4 random lines of 1024: P(no leak) is about 2^-800 */
	crash_child_round("n", RPMA_EXT_MEM_EVICTION_NOISE, 200, image);
	CU_ASSERT(all_equal(image, HALF, 0xA1));
	for (size_t line = HALF; line < REGION; line += 64) {
		if (image[line] == 0xB2) {
			CU_ASSERT(all_equal(image + line, 64, 0xB2)); /* whole lines */
			leaked++;
		} else {
			CU_ASSERT(all_equal(image + line, 64, 0x00));
		}
	}
	CU_ASSERT(leaked > 0);
	printf("eviction noise leaked %zu of %d unpersisted lines\n", leaked,
		HALF / 64);
}

int
main(void)
{
	static CU_TestInfo cases[] = {
		UNIT_CASE(persist__range_checks),
		UNIT_CASE(persist__file_keeps_exactly_the_persisted_range),
		UNIT_CASE(persist__crash_sigkill_loses_exactly_the_unpersisted),
		UNIT_CASE(persist__crash_eviction_noise_leaks_lines_keeps_persisted),
		CU_TEST_INFO_NULL,
	};
	int ret;

	if (mkdtemp(dir) == NULL)
		return 99;
	ret = unit_run("rpma_ext_mem_persist", cases);
	for (const char *const *n = (const char *const[]){ "r", "f", "c", "n",
			NULL }; *n; n++)
		unlink(path(*n));
	rmdir(dir);
	return ret;
}
