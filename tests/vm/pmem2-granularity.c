/*
 * tests/vm/pmem2-granularity.c -- the RDMA test guest's PMem probe: maps PATH
 * (a file, made 2 MiB when new or empty, or a device-dax device) with
 * libpmem2, asking only for PAGE granularity, and prints the store
 * granularity libpmem2 actually gives it: BYTE, CACHE_LINE or PAGE. Then it
 * stores and persists a few bytes through the mapping and reads them back.
 *
 * tests/vm/smoke.sh runs it on the fsdax mount and on /dev/dax0.0, where
 * CACHE_LINE is expected; on an ordinary file it says PAGE. Exit status 0
 * when the mapping worked, 1 otherwise (with libpmem2's message).
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libpmem2.h>

#define PROBE_FILE_SIZE (2u << 20)

static const char *
granularity_name(enum pmem2_granularity g)
{
	switch (g) {
	case PMEM2_GRANULARITY_BYTE:
		return "BYTE";
	case PMEM2_GRANULARITY_CACHE_LINE:
		return "CACHE_LINE";
	case PMEM2_GRANULARITY_PAGE:
		return "PAGE";
	}
	return "unknown";
}

int
main(int argc, char *argv[])
{
	static const char pattern[] = "rpma-repl pmem2 probe";
	struct pmem2_config *cfg = NULL;
	struct pmem2_source *src = NULL;
	struct pmem2_map *map = NULL;
	struct stat st;
	int fd, ret = 1;

	if (argc != 2) {
		fprintf(stderr, "usage: %s PATH\n", argv[0]);
		return 2;
	}
	fd = open(argv[1], O_RDWR | O_CREAT, 0600);
	if (fd < 0 || fstat(fd, &st) != 0) {
		perror(argv[1]);
		goto err_close;
	}
	if (S_ISREG(st.st_mode) && st.st_size == 0 &&
	    ftruncate(fd, PROBE_FILE_SIZE) != 0) {
		perror("ftruncate");
		goto err_close;
	}
	if (pmem2_config_new(&cfg) != 0)
		goto err_pmem2;
	if (pmem2_config_set_required_store_granularity(cfg,
			PMEM2_GRANULARITY_PAGE) != 0)
		goto err_pmem2;
	if (pmem2_source_from_fd(&src, fd) != 0)
		goto err_pmem2;
	if (pmem2_map_new(&map, cfg, src) != 0)
		goto err_pmem2;

	char *addr = pmem2_map_get_address(map);
	pmem2_memcpy_fn copy = pmem2_get_memcpy_fn(map);

	copy(addr, pattern, sizeof(pattern), 0); /* copies and persists */
	if (memcmp(addr, pattern, sizeof(pattern)) != 0) {
		fprintf(stderr, "%s: read back differs from what was stored\n",
			argv[1]);
		goto err_unmap;
	}
	printf("%s (mapped %zu bytes, persisted a store)\n",
		granularity_name(pmem2_map_get_store_granularity(map)),
		pmem2_map_get_size(map));
	ret = 0;

err_unmap:
	pmem2_map_delete(&map);
	goto err_source;
err_pmem2:
	fprintf(stderr, "%s: libpmem2: %s\n", argv[1], pmem2_errormsg());
err_source:
	pmem2_source_delete(&src);
	pmem2_config_delete(&cfg);
err_close:
	if (fd >= 0)
		close(fd);
	return ret;
}
