/* SPDX-License-Identifier: BSD-3-Clause */
/* ext_mem_open.c -- rpma_ext_mem_open/close and the getters, every backend */
#include <linux/magic.h>
#include <sys/vfs.h>

#include <unistd.h>

#include "unit.h"

static char dir[] = "/tmp/rpma-mem-XXXXXX";

static const char *
path(const char *name)
{
	static char buf[256];
	snprintf(buf, sizeof(buf), "%s/%s", dir, name);
	return buf;
}

static void
open__null_args(void)
{
	struct rpma_ext_mem *mem = UNIT_SENTINEL;

	CU_ASSERT_EQUAL(rpma_ext_mem_open(RPMA_EXT_MEM_FILE, NULL, 4096,
		RPMA_EXT_MEM_CREATE, &mem), RPMA_E_INVAL);
	CU_ASSERT_EQUAL(rpma_ext_mem_open(RPMA_EXT_MEM_FILE, path("a"), 4096,
		RPMA_EXT_MEM_CREATE, NULL), RPMA_E_INVAL);
	CU_ASSERT_PTR_EQUAL(mem, UNIT_SENTINEL);
}

static void
open__bad_flags_and_backend(void)
{
	struct rpma_ext_mem *mem = UNIT_SENTINEL;

	CU_ASSERT_EQUAL(rpma_ext_mem_open(RPMA_EXT_MEM_FILE, path("b"), 4096,
		0x80, &mem), RPMA_E_INVAL);
	CU_ASSERT_EQUAL(rpma_ext_mem_open(RPMA_EXT_MEM_FILE, path("b"), 4096,
		RPMA_EXT_MEM_CREATE | RPMA_EXT_MEM_EVICTION_NOISE, &mem), RPMA_E_INVAL);
	CU_ASSERT_EQUAL(rpma_ext_mem_open((enum rpma_ext_mem_backend)9, path("b"),
		4096, RPMA_EXT_MEM_CREATE, &mem), RPMA_E_INVAL);
	CU_ASSERT_PTR_EQUAL(mem, UNIT_SENTINEL);
}

static void
open__missing_file_without_create(void)
{
	struct rpma_ext_mem *mem = UNIT_SENTINEL;

	CU_ASSERT_EQUAL(rpma_ext_mem_open(RPMA_EXT_MEM_FILE, path("missing"), 4096,
		0, &mem), RPMA_E_INVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(rpma_ext_errormsg(), "missing"));
	CU_ASSERT_PTR_EQUAL(mem, UNIT_SENTINEL);
}

static void
open__empty_file_without_size(void)
{
	struct rpma_ext_mem *mem = UNIT_SENTINEL;

	CU_ASSERT_EQUAL(rpma_ext_mem_open(RPMA_EXT_MEM_FILE, path("empty"), 0,
		RPMA_EXT_MEM_CREATE, &mem), RPMA_E_INVAL);
	CU_ASSERT_PTR_EQUAL(mem, UNIT_SENTINEL);
}

static void
check_backend(enum rpma_ext_mem_backend backend, const char *name, bool durable)
{
	struct rpma_ext_mem *mem = NULL;
	enum rpma_ext_mem_backend got;
	void *ptr = NULL;
	size_t size = 0;
	bool dur = !durable;

	CU_ASSERT_EQUAL_FATAL(rpma_ext_mem_open(backend, path(name), 8192,
		RPMA_EXT_MEM_CREATE, &mem), 0);
	CU_ASSERT_EQUAL(rpma_ext_mem_get_ptr(mem, &ptr), 0);
	CU_ASSERT_PTR_NOT_NULL(ptr);
	CU_ASSERT_EQUAL(rpma_ext_mem_get_size(mem, &size), 0);
	CU_ASSERT_EQUAL(size, 8192);
	CU_ASSERT_EQUAL(rpma_ext_mem_get_backend(mem, &got), 0);
	CU_ASSERT_EQUAL(got, backend);
	CU_ASSERT_EQUAL(rpma_ext_mem_is_durable(mem, &dur), 0);
	CU_ASSERT_EQUAL(dur, durable);
	memset(ptr, 0x5a, size);	/* the whole region is writable */
	CU_ASSERT_EQUAL(rpma_ext_mem_close(&mem), 0);
	CU_ASSERT_PTR_NULL(mem);

	/* reopen with size 0: the file's size */
	CU_ASSERT_EQUAL_FATAL(rpma_ext_mem_open(backend, path(name), 0, 0, &mem), 0);
	CU_ASSERT_EQUAL(rpma_ext_mem_get_size(mem, &size), 0);
	CU_ASSERT_EQUAL(size, 8192);
	CU_ASSERT_EQUAL(rpma_ext_mem_close(&mem), 0);
}

/* the test directory is durable unless it is in memory */
static bool
dir_is_durable(void)
{
	struct statfs st;

	CU_ASSERT_FATAL(statfs(dir, &st) == 0);
	return st.f_type != TMPFS_MAGIC && st.f_type != RAMFS_MAGIC;
}

static void
open__file_backend(void)
{
	check_backend(RPMA_EXT_MEM_FILE, "file", dir_is_durable());
}

static void
open__crash_backend_is_not_durable(void)
{
	check_backend(RPMA_EXT_MEM_CRASH, "crash", false);
}

static void
open__pmem_backend_on_ordinary_file(void)
{
	/* page granularity: libpmem2 maps it, persist is msync */
	check_backend(RPMA_EXT_MEM_PMEM, "pmem", dir_is_durable());
}

static void
close__null(void)
{
	struct rpma_ext_mem *mem = NULL;

	CU_ASSERT_EQUAL(rpma_ext_mem_close(NULL), RPMA_E_INVAL);
	CU_ASSERT_EQUAL(rpma_ext_mem_close(&mem), 0);
}

static void
getters__null(void)
{
	struct rpma_ext_mem *mem = NULL;
	enum rpma_ext_mem_backend b;
	void *ptr;
	size_t size;
	bool dur;

	CU_ASSERT_EQUAL(rpma_ext_mem_get_ptr(NULL, &ptr), RPMA_E_INVAL);
	CU_ASSERT_EQUAL(rpma_ext_mem_get_size(NULL, &size), RPMA_E_INVAL);
	CU_ASSERT_EQUAL(rpma_ext_mem_get_backend(NULL, &b), RPMA_E_INVAL);
	CU_ASSERT_EQUAL(rpma_ext_mem_is_durable(NULL, &dur), RPMA_E_INVAL);
	CU_ASSERT_EQUAL_FATAL(rpma_ext_mem_open(RPMA_EXT_MEM_CRASH, path("g"), 4096,
		RPMA_EXT_MEM_CREATE, &mem), 0);
	CU_ASSERT_EQUAL(rpma_ext_mem_get_ptr(mem, NULL), RPMA_E_INVAL);
	CU_ASSERT_EQUAL(rpma_ext_mem_get_size(mem, NULL), RPMA_E_INVAL);
	CU_ASSERT_EQUAL(rpma_ext_mem_get_backend(mem, NULL), RPMA_E_INVAL);
	CU_ASSERT_EQUAL(rpma_ext_mem_is_durable(mem, NULL), RPMA_E_INVAL);
	rpma_ext_mem_close(&mem);
}

static int
run(void)
{
	static CU_TestInfo cases[] = {
		UNIT_CASE(open__null_args),
		UNIT_CASE(open__bad_flags_and_backend),
		UNIT_CASE(open__missing_file_without_create),
		UNIT_CASE(open__empty_file_without_size),
		UNIT_CASE(open__file_backend),
		UNIT_CASE(open__crash_backend_is_not_durable),
		UNIT_CASE(open__pmem_backend_on_ordinary_file),
		UNIT_CASE(close__null),
		UNIT_CASE(getters__null),
		CU_TEST_INFO_NULL,
	};
	return unit_run("rpma_ext_mem_open", cases);
}

int
main(void)
{
	int ret;

	if (mkdtemp(dir) == NULL)
		return 99;
	ret = run();
	for (const char *const *n = (const char *const[]){ "file", "crash",
			"pmem", "g", "empty", NULL }; *n; n++)
		unlink(path(*n));
	rmdir(dir);
	return ret;
}
