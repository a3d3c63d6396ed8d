/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ext_mem_health.c -- rpma_ext_mem_get_health: NULL arguments, nothing is
 * known for the file backends nor for a PMEM mapping of a tmpfs file, a PMEM
 * mapping of any file opens and answers consistently, and the clipping of
 * bad blocks to the mapping.
 */
#include <linux/magic.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "unit.h"
#include "mem.h"

#define REGION 65536

static char dir[] = "/tmp/rpma-health-XXXXXX";
static char shm_dir[] = "/dev/shm/rpma-health-XXXXXX";
static int have_shm;

static const char *
path_in(const char *d, const char *name)
{
	static char buf[256];
	snprintf(buf, sizeof(buf), "%s/%s", d, name);
	return buf;
}

static const char *
path(const char *name)
{
	return path_in(dir, name);
}

static int
all_zero(const void *p, size_t n)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < n; i++)
		if (b[i] != 0)
			return 0;
	return 1;
}

/* get_health into a struct full of 0xFF, so unwritten bytes show */
static int
get_health(const struct rpma_ext_mem *mem, struct rpma_ext_mem_health *h)
{
	memset(h, 0xFF, sizeof(*h));
	return rpma_ext_mem_get_health(mem, h);
}

static void
health__null_args(void)
{
	struct rpma_ext_mem_health h, before;
	struct rpma_ext_mem *mem = NULL;

	memset(&h, 0xAB, sizeof(h));
	memcpy(&before, &h, sizeof(h));
	CU_ASSERT_EQUAL(rpma_ext_mem_get_health(NULL, &h), RPMA_E_INVAL);
	CU_ASSERT_EQUAL(memcmp(&h, &before, sizeof(h)), 0);
	CU_ASSERT_EQUAL_FATAL(rpma_ext_mem_open(RPMA_EXT_MEM_CRASH, path("n"),
		REGION, RPMA_EXT_MEM_CREATE, &mem), 0);
	CU_ASSERT_EQUAL(rpma_ext_mem_get_health(mem, NULL), RPMA_E_INVAL);
	rpma_ext_mem_close(&mem);
}

static void
check_nothing_known(enum rpma_ext_mem_backend backend, const char *file)
{
	struct rpma_ext_mem_health h;
	struct rpma_ext_mem *mem = NULL;

	CU_ASSERT_EQUAL_FATAL(rpma_ext_mem_open(backend, file, REGION,
		RPMA_EXT_MEM_CREATE, &mem), 0);
	CU_ASSERT_EQUAL(get_health(mem, &h), 0);
	CU_ASSERT(all_zero(&h, sizeof(h)));	/* every flag, value, reserved */
	CU_ASSERT_EQUAL(rpma_ext_mem_close(&mem), 0);
}

static void
health__file_backend_knows_nothing(void)
{
	check_nothing_known(RPMA_EXT_MEM_FILE, path("f"));
}

static void
health__crash_backend_knows_nothing(void)
{
	check_nothing_known(RPMA_EXT_MEM_CRASH, path("c"));
}

/* no NVDIMM can be behind tmpfs: libpmem2 maps it, and knows nothing */
static void
health__pmem_on_tmpfs_knows_nothing(void)
{
	if (!have_shm) {
		printf("(no tmpfs at /dev/shm) ");
		return;
	}
	check_nothing_known(RPMA_EXT_MEM_PMEM, path_in(shm_dir, "p"));
}

/* a PMEM mapping of a file in /tmp: whatever is known is consistent */
static void
health__pmem_on_tmp_is_consistent(void)
{
	struct rpma_ext_mem_health h, again;
	struct rpma_ext_mem *mem = NULL;

	CU_ASSERT_EQUAL_FATAL(rpma_ext_mem_open(RPMA_EXT_MEM_PMEM, path("p"),
		REGION, RPMA_EXT_MEM_CREATE, &mem), 0);
	CU_ASSERT_EQUAL(get_health(mem, &h), 0);

	CU_ASSERT(h.usc_known == 0 || h.usc_known == 1);
	CU_ASSERT(h.device_id_known == 0 || h.device_id_known == 1);
	CU_ASSERT(h.badblocks_known == 0 || h.badblocks_known == 1);
	if (!h.usc_known)
		CU_ASSERT_EQUAL(h.usc, 0);
	if (h.device_id_known) {
		size_t n = strnlen(h.device_id, sizeof(h.device_id));

		CU_ASSERT(n > 0 && n < sizeof(h.device_id));
		CU_ASSERT(all_zero(h.device_id + n, sizeof(h.device_id) - n));
	} else {
		CU_ASSERT(all_zero(h.device_id, sizeof(h.device_id)));
	}
	if (h.badblocks_known) {
		CU_ASSERT(h.badblock_bytes <= REGION);
		CU_ASSERT_EQUAL(h.badblocks == 0, h.badblock_bytes == 0);
		CU_ASSERT(h.badblocks <= h.badblock_bytes);
	} else {
		CU_ASSERT_EQUAL(h.badblocks, 0);
		CU_ASSERT_EQUAL(h.badblock_bytes, 0);
	}
	/* without an nd region, libpmem2 can tell none of them */
	if (!h.device_id_known)
		CU_ASSERT_EQUAL(h.badblocks_known, 0);
	CU_ASSERT_EQUAL(h.reserved0, 0);
	CU_ASSERT(all_zero(h.reserved, sizeof(h.reserved)));

	/* read once at open: the same answer every time */
	CU_ASSERT_EQUAL(get_health(mem, &again), 0);
	CU_ASSERT_EQUAL(memcmp(&h, &again, sizeof(h)), 0);
	printf("(usc %s, device id %s, bad blocks %s) ",
		h.usc_known ? "known" : "unknown",
		h.device_id_known ? h.device_id : "unknown",
		h.badblocks_known ? "known" : "unknown");
	CU_ASSERT_EQUAL(rpma_ext_mem_close(&mem), 0);
}

/* bad blocks are counted only for their bytes inside the mapping */
static void
health__badblock_overlap_clips_to_the_mapping(void)
{
	CU_ASSERT_EQUAL(rpma_mem_badblock_overlap(0, 512, 4096), 512);
	CU_ASSERT_EQUAL(rpma_mem_badblock_overlap(3584, 512, 4096), 512);
	CU_ASSERT_EQUAL(rpma_mem_badblock_overlap(4000, 512, 4096), 96);
	CU_ASSERT_EQUAL(rpma_mem_badblock_overlap(4095, 1, 4096), 1);
	CU_ASSERT_EQUAL(rpma_mem_badblock_overlap(4096, 512, 4096), 0);
	CU_ASSERT_EQUAL(rpma_mem_badblock_overlap(8192, 512, 4096), 0);
	CU_ASSERT_EQUAL(rpma_mem_badblock_overlap(0, SIZE_MAX, 4096), 4096);
	CU_ASSERT_EQUAL(rpma_mem_badblock_overlap(SIZE_MAX, SIZE_MAX, 4096), 0);
	CU_ASSERT_EQUAL(rpma_mem_badblock_overlap(0, 0, 4096), 0);
	CU_ASSERT_EQUAL(rpma_mem_badblock_overlap(0, 512, 0), 0);
}

int
main(void)
{
	static CU_TestInfo cases[] = {
		UNIT_CASE(health__null_args),
		UNIT_CASE(health__file_backend_knows_nothing),
		UNIT_CASE(health__crash_backend_knows_nothing),
		UNIT_CASE(health__pmem_on_tmpfs_knows_nothing),
		UNIT_CASE(health__pmem_on_tmp_is_consistent),
		UNIT_CASE(health__badblock_overlap_clips_to_the_mapping),
		CU_TEST_INFO_NULL,
	};
	struct statfs st;
	int ret;

	if (mkdtemp(dir) == NULL)
		return 99;
	have_shm = statfs("/dev/shm", &st) == 0 && st.f_type == TMPFS_MAGIC &&
		mkdtemp(shm_dir) != NULL;
	ret = unit_run("rpma_ext_mem_get_health", cases);
	for (const char *const *n = (const char *const[]){ "n", "f", "c", "p",
			NULL }; *n; n++)
		unlink(path(*n));
	rmdir(dir);
	if (have_shm) {
		unlink(path_in(shm_dir, "p"));
		rmdir(shm_dir);
	}
	return ret;
}
