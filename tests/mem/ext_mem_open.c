/* SPDX-License-Identifier: BSD-3-Clause */
/* ext_mem_open.c -- rpma_ext_mem_open/close and the getters, every backend */
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
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
	/* the file the failed open created is gone again */
	CU_ASSERT(access(path("empty"), F_OK) != 0 && errno == ENOENT);
}

/* a symbolic link to a file not made yet: the file is made, as O_CREAT does */
static void
open__create_through_a_dangling_link(void)
{
	struct rpma_ext_mem *mem = NULL;
	char target[300];
	struct stat st;

	snprintf(target, sizeof(target), "%s", path("target"));
	CU_ASSERT_FATAL(symlink(target, path("link")) == 0);
	CU_ASSERT_EQUAL_FATAL(rpma_ext_mem_open(RPMA_EXT_MEM_FILE, path("link"),
		8192, RPMA_EXT_MEM_CREATE, &mem), 0);
	CU_ASSERT_EQUAL(rpma_ext_mem_close(&mem), 0);
	CU_ASSERT(stat(target, &st) == 0 && st.st_size == 8192);
}

static const enum rpma_ext_mem_backend file_backends[] = {
	RPMA_EXT_MEM_FILE, RPMA_EXT_MEM_CRASH, RPMA_EXT_MEM_PMEM };

/*
 * Open with create under a file size limit that stops writing the new
 * blocks part-way (EFBIG, as ENOSPC or EIO would): RPMA_E_PROVIDER, the
 * message naming the file, nothing of the failed creation left.
 */
static int
open_limited(enum rpma_ext_mem_backend backend, const char *name, size_t size,
		rlim_t limit)
{
	struct rpma_ext_mem *mem = UNIT_SENTINEL;
	struct rlimit old, lim;
	int ret;

	CU_ASSERT_FATAL(getrlimit(RLIMIT_FSIZE, &old) == 0);
	lim = (struct rlimit){ .rlim_cur = limit, .rlim_max = old.rlim_max };
	CU_ASSERT_FATAL(setrlimit(RLIMIT_FSIZE, &lim) == 0);
	ret = rpma_ext_mem_open(backend, path(name), size, RPMA_EXT_MEM_CREATE, &mem);
	CU_ASSERT_FATAL(setrlimit(RLIMIT_FSIZE, &old) == 0);
	CU_ASSERT_PTR_EQUAL(mem, UNIT_SENTINEL);
	if (ret == 0)
		rpma_ext_mem_close(&mem);
	return ret;
}

static void
open__failed_creation_leaves_no_file(void)
{
	for (unsigned b = 0; b < 3; b++) {
		CU_ASSERT_EQUAL(open_limited(file_backends[b], "limited",
			4u << 20, (3u << 20) / 2), RPMA_E_PROVIDER);
		CU_ASSERT_PTR_NOT_NULL(strstr(rpma_ext_errormsg(), path("limited")));
		CU_ASSERT_PTR_NOT_NULL(strstr(rpma_ext_errormsg(),
			strerror(EFBIG)));
		CU_ASSERT(access(path("limited"), F_OK) != 0 && errno == ENOENT);
	}
}

static void
open__failed_extension_leaves_the_file_as_it_was(void)
{
	static unsigned char old[8192], got[8192 + 1];

	memset(old, 0x3C, sizeof(old));
	for (unsigned b = 0; b < 3; b++) {
		struct stat st;
		int fd = open(path("short"), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC,
			0600);

		CU_ASSERT_FATAL(fd >= 0);
		CU_ASSERT_FATAL(pwrite(fd, old, sizeof(old), 0) == (ssize_t)sizeof(old));
		CU_ASSERT_EQUAL(open_limited(file_backends[b], "short", 4u << 20,
			(3u << 20) / 2), RPMA_E_PROVIDER);
		CU_ASSERT_PTR_NOT_NULL(strstr(rpma_ext_errormsg(), path("short")));
		CU_ASSERT_FATAL(fstat(fd, &st) == 0);
		CU_ASSERT_EQUAL(st.st_size, (off_t)sizeof(old));
		/* and no block reserved past its end stays allocated */
		CU_ASSERT(st.st_blocks * 512 <= 2 * (off_t)sizeof(old));
		CU_ASSERT_EQUAL(pread(fd, got, sizeof(got), 0), (ssize_t)sizeof(old));
		CU_ASSERT(memcmp(got, old, sizeof(old)) == 0);
		close(fd);
	}
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

/* minor page faults of this process so far */
static long
minor_faults(void)
{
	struct rusage ru;

	CU_ASSERT_FATAL(getrusage(RUSAGE_SELF, &ru) == 0);
	return ru.ru_minflt;
}

/*
 * The region's pages are in when the open returns: writing each of them
 * takes no page fault (an append must not allocate memory).  The bound
 * leaves room for faults that are not the region's (a sanitizer's shadow
 * takes one per 8 pages written).
 */
static void
region_is_faulted_in(enum rpma_ext_mem_backend backend, const char *name)
{
	const size_t size = 4 << 20, page = (size_t)sysconf(_SC_PAGESIZE);
	const long pages = (long)(size / page);
	struct rpma_ext_mem *mem = NULL;
	volatile char *p;
	long before, faults;

	CU_ASSERT_EQUAL_FATAL(rpma_ext_mem_open(backend, path(name), size,
		RPMA_EXT_MEM_CREATE, &mem), 0);
	rpma_ext_mem_get_ptr(mem, (void **)&p);
	before = minor_faults();
	for (size_t off = 0; off < size; off += page)
		p[off] = 1;
	faults = minor_faults() - before;
	if (faults > pages / 4)
		printf("\n  %s: %ld page faults writing %ld pages\n", name, faults, pages);
	CU_ASSERT(faults <= pages / 4);
	CU_ASSERT_EQUAL(rpma_ext_mem_close(&mem), 0);
	unlink(path(name));
}

static void
open__file_and_crash_regions_are_faulted_in(void)
{
	region_is_faulted_in(RPMA_EXT_MEM_FILE, "faults-file");
	region_is_faulted_in(RPMA_EXT_MEM_CRASH, "faults-crash");
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
		UNIT_CASE(open__create_through_a_dangling_link),
		UNIT_CASE(open__failed_creation_leaves_no_file),
		UNIT_CASE(open__failed_extension_leaves_the_file_as_it_was),
		UNIT_CASE(open__file_backend),
		UNIT_CASE(open__crash_backend_is_not_durable),
		UNIT_CASE(open__pmem_backend_on_ordinary_file),
		UNIT_CASE(open__file_and_crash_regions_are_faulted_in),
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
	/* a write past RLIMIT_FSIZE fails with EFBIG instead of killing */
	signal(SIGXFSZ, SIG_IGN);
	ret = run();
	for (const char *const *n = (const char *const[]){ "file", "crash",
			"pmem", "g", "empty", "limited", "short", "link", "target",
			NULL }; *n; n++)
		unlink(path(*n));
	rmdir(dir);
	return ret;
}
