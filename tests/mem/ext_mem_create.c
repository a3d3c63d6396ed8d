/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ext_mem_create.c -- rpma_ext_mem_open with RPMA_EXT_MEM_CREATE writes
 * every block of a new file: the file's extents (FIEMAP) cover it with no
 * hole and none of them is unwritten (only reserved, as posix_fallocate
 * leaves them), on every backend that takes a file, and for the part an
 * existing file is extended by; what the file held stays as it was.
 *
 * An unwritten extent costs the first write to each block a conversion
 * and a journal commit inside its fdatasync.  The check needs a filesystem
 * that shows them: the test runs in the first of /var/tmp, $TMPDIR and
 * /tmp whose filesystem reports a posix_fallocate'd range as unwritten
 * (ext4, XFS, btrfs), and is skipped where none does (tmpfs has no FIEMAP).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "unit.h"

#define CHUNK (1 << 20)
/* not a multiple of the chunk creation writes by, nor of a large page */
#define SIZE (3 * CHUNK + 3 * 4096)
#define OLD 8192

static char dir[512];

static const char *
path(const char *name)
{
	static char buf[600];
	snprintf(buf, sizeof(buf), "%s/%s", dir, name);
	return buf;
}

/*
 * The extents of [0, size) of the file: 0 every byte is in a written
 * extent, 1 some are in a hole or an unwritten (or not yet allocated)
 * extent, -1 the filesystem cannot tell (errno set).
 */
static int
unwritten_or_hole(const char *file, off_t size, char *why, size_t why_len)
{
	enum { N = 64 };
	struct fiemap *fm = calloc(1, sizeof(*fm) + N * sizeof(struct fiemap_extent));
	int fd = open(file, O_RDONLY | O_CLOEXEC);
	uint64_t covered = 0;	/* bytes from 0 known written */
	int ret = 0, e;

	snprintf(why, why_len, "written");
	if (fm == NULL || fd < 0) {
		e = errno;
		ret = -1;
		goto out;
	}
	while (covered < (uint64_t)size && ret == 0) {
		memset(fm, 0, sizeof(*fm) + N * sizeof(struct fiemap_extent));
		fm->fm_start = covered;
		fm->fm_length = (uint64_t)size - covered;
		fm->fm_flags = FIEMAP_FLAG_SYNC;
		fm->fm_extent_count = N;
		if (ioctl(fd, FS_IOC_FIEMAP, fm) != 0) {
			e = errno;
			ret = -1;
			break;
		}
		if (fm->fm_mapped_extents == 0) {
			snprintf(why, why_len, "a hole at byte %llu",
				(unsigned long long)covered);
			ret = 1;
			break;
		}
		for (unsigned i = 0; i < fm->fm_mapped_extents; i++) {
			const struct fiemap_extent *x = &fm->fm_extents[i];

			if (x->fe_logical > covered) {
				snprintf(why, why_len, "a hole at bytes %llu..%llu",
					(unsigned long long)covered,
					(unsigned long long)x->fe_logical);
				ret = 1;
				break;
			}
			if (x->fe_flags & (FIEMAP_EXTENT_UNWRITTEN |
					FIEMAP_EXTENT_DELALLOC | FIEMAP_EXTENT_UNKNOWN)) {
				snprintf(why, why_len, "an extent of bytes %llu..%llu "
					"with flags 0x%x (unwritten 0x%x)",
					(unsigned long long)x->fe_logical,
					(unsigned long long)(x->fe_logical + x->fe_length),
					x->fe_flags, FIEMAP_EXTENT_UNWRITTEN);
				ret = 1;
				break;
			}
			if (x->fe_logical + x->fe_length > covered)
				covered = x->fe_logical + x->fe_length;
			if (x->fe_flags & FIEMAP_EXTENT_LAST)
				break;
		}
		if (ret == 0 && covered < (uint64_t)size &&
		    (fm->fm_extents[fm->fm_mapped_extents - 1].fe_flags &
		     FIEMAP_EXTENT_LAST)) {
			snprintf(why, why_len, "a hole at bytes %llu..%lld",
				(unsigned long long)covered, (long long)size);
			ret = 1;
		}
	}
	e = errno;
out:
	if (fd >= 0)
		close(fd);
	free(fm);
	errno = e;
	return ret;
}

/* does this directory's filesystem show a reserved range as unwritten? */
static bool
shows_unwritten(const char *d, char *why, size_t why_len)
{
	char probe[600];
	bool shows = false;
	int fd;

	snprintf(probe, sizeof(probe), "%s/rpma-extent-probe-%d", d, (int)getpid());
	fd = open(probe, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0) {
		snprintf(why, why_len, "%s: %s", d, strerror(errno));
		return false;
	}
	if ((errno = posix_fallocate(fd, 0, 1 << 16)) != 0) {
		snprintf(why, why_len, "%s: posix_fallocate: %s", d, strerror(errno));
	} else {
		switch (unwritten_or_hole(probe, 1 << 16, why, why_len)) {
		case 1:
			shows = true;
			break;
		case 0:
			snprintf(why, why_len, "%s: a posix_fallocate'd range shows "
				"as written", d);
			break;
		default:
			snprintf(why, why_len, "%s: no FIEMAP: %s", d, strerror(errno));
		}
	}
	close(fd);
	unlink(probe);
	return shows;
}

static void
check_written(const char *name, off_t size)
{
	char why[200];
	struct stat st;

	CU_ASSERT_FATAL(stat(path(name), &st) == 0);
	CU_ASSERT_EQUAL(st.st_size, size);
	/* every byte stored: no block is left to allocate later either */
	CU_ASSERT(st.st_blocks * 512 >= size);
	if (unwritten_or_hole(path(name), size, why, sizeof(why)) != 0) {
		printf("\n  %s: %s\n", name, why);
		CU_FAIL("a new file holds a hole or an unwritten extent");
	}
}

static void
create_and_check(enum rpma_ext_mem_backend backend, const char *name)
{
	struct rpma_ext_mem *mem = NULL;

	CU_ASSERT_EQUAL_FATAL(rpma_ext_mem_open(backend, path(name), SIZE,
		RPMA_EXT_MEM_CREATE, &mem), 0);
	/* written before the open returned, not on close */
	check_written(name, SIZE);
	CU_ASSERT_EQUAL(rpma_ext_mem_close(&mem), 0);
}

static void
create__file_backend_writes_every_block(void)
{
	create_and_check(RPMA_EXT_MEM_FILE, "file");
}

static void
create__crash_backend_writes_every_block(void)
{
	create_and_check(RPMA_EXT_MEM_CRASH, "crash");
}

static void
create__pmem_backend_on_a_file_writes_every_block(void)
{
	create_and_check(RPMA_EXT_MEM_PMEM, "pmem");
}

/* extended: the old bytes stay, the new ones are zeros, all written */
static void
create__extended_file_keeps_its_bytes(void)
{
	static const enum rpma_ext_mem_backend backends[] = {
		RPMA_EXT_MEM_FILE, RPMA_EXT_MEM_CRASH, RPMA_EXT_MEM_PMEM };
	static unsigned char old[OLD], got[SIZE];

	for (unsigned b = 0; b < 3; b++) {
		struct rpma_ext_mem *mem = NULL;
		unsigned char *p;
		int fd;

		memset(old, 0xC3, sizeof(old));
		fd = open(path("ext"), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		CU_ASSERT_FATAL(fd >= 0);
		CU_ASSERT_FATAL(pwrite(fd, old, OLD, 0) == OLD);
		CU_ASSERT_FATAL(fsync(fd) == 0);

		CU_ASSERT_EQUAL_FATAL(rpma_ext_mem_open(backends[b], path("ext"),
			SIZE, RPMA_EXT_MEM_CREATE, &mem), 0);
		rpma_ext_mem_get_ptr(mem, (void **)&p);
		CU_ASSERT(memcmp(p, old, OLD) == 0);
		CU_ASSERT(p[OLD] == 0 && p[SIZE - 1] == 0);
		check_written("ext", SIZE);
		CU_ASSERT(pread(fd, got, SIZE, 0) == SIZE);
		CU_ASSERT(memcmp(got, old, OLD) == 0);
		for (size_t i = OLD; i < SIZE; i++)
			if (got[i] != 0) {
				CU_FAIL("the extension is not zeros");
				break;
			}
		CU_ASSERT_EQUAL(rpma_ext_mem_close(&mem), 0);
		close(fd);
	}
}

static int
run(void)
{
	static CU_TestInfo cases[] = {
		UNIT_CASE(create__file_backend_writes_every_block),
		UNIT_CASE(create__crash_backend_writes_every_block),
		UNIT_CASE(create__pmem_backend_on_a_file_writes_every_block),
		UNIT_CASE(create__extended_file_keeps_its_bytes),
		CU_TEST_INFO_NULL,
	};
	return unit_run("rpma_ext_mem_open: a new file's blocks", cases);
}

int
main(void)
{
	const char *tmpdir = getenv("TMPDIR");
	const char *dirs[] = { "/var/tmp", tmpdir && *tmpdir ? tmpdir : "/tmp",
		"/tmp" };
	char why[3][300], reason[1000];
	int ret;

	for (unsigned i = 0; i < 3 && dir[0] == '\0'; i++)
		if (i > 0 && strcmp(dirs[i], dirs[i - 1]) == 0)
			snprintf(why[i], sizeof(why[i]), "%s: as above", dirs[i]);
		else if (shows_unwritten(dirs[i], why[i], sizeof(why[i])))
			snprintf(dir, sizeof(dir), "%s/rpma-create-XXXXXX", dirs[i]);
		else
			printf("%s\n", why[i]);
	if (dir[0] == '\0') {
		snprintf(reason, sizeof(reason), "no directory's filesystem shows "
			"unwritten extents (tmpfs has no FIEMAP): %s; %s; %s",
			why[0], why[1], why[2]);
		UNIT_SKIP(reason);
	}
	if (mkdtemp(dir) == NULL)
		return 99;
	printf("in %s\n", dir);
	ret = run();
	for (const char *const *n = (const char *const[]){ "file", "crash",
			"pmem", "ext", NULL }; *n; n++)
		unlink(path(*n));
	rmdir(dir);
	return ret;
}
