/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rpma-bench -- write+flush latency and bandwidth of the RPMA core, beside
 * the floor measured in the same run on the same machine:
 *
 *   ours:  rpma_write(size) + rpma_flush(PERSISTENT) to a target process,
 *          timed from posting the write to the flush's completion;
 *   floor: a TCP round trip carrying `size` bytes (delivery and its
 *          acknowledgement) + one persist of `size` bytes on the same
 *          medium (copy, then the backend's persist), each measured alone.
 *
 * The ratio ours/floor is what the core adds.  Percentiles come from every
 * operation's own latency; the medium says whether the persist is durable
 * (a disk) or not (/dev/shm).
 *
 *   rpma-bench [-t tcp|net|verbs] [-a ADDR] [-p PORT] [-s SIZE] [-q DEPTH]
 *              [-n OPS] [-b file|crash|pmem] [-d DIR] [-w SPIN_US]
 *
 * The initiator polls for a completion for SPIN_US (default 20), then
 * sleeps in rpma_cq_wait(), as the floor's blocking socket sleeps; -w 0
 * busy-polls throughout.
 */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_floor.h"
#include "bench_util.h"
#include "rpma.h"

#define DIE(...) \
	do { \
		fprintf(stderr, "rpma-bench: "); \
		fprintf(stderr, __VA_ARGS__); \
		fprintf(stderr, " (%s)\n", rpma_ext_errormsg()); \
		exit(1); \
	} while (0)

struct opts {
	const char *transport;
	const char *addr;
	int port;
	size_t size;
	int depth;
	long ops;
	enum rpma_ext_mem_backend backend;
	const char *backend_name;
	const char *dir;
	uint64_t spin_ns;	/* poll this long before sleeping; 0: never sleep */
};

struct stats {
	double p50, p99, p999, mb_s;
};

static struct stats
summarize(uint64_t *lat, long n, uint64_t total_ns, size_t size)
{
	struct bench_stats b = bench_summarize(lat, n);

	return (struct stats){ b.p50, b.p99, b.p999,
		(double)size * (double)n / ((double)total_ns / 1e9) / 1e6 };
}

static struct rpma_peer *
peer_new(const struct opts *o)
{
	struct rpma_peer *peer = NULL;

	if (strcmp(o->transport, "verbs") == 0) {
		struct ibv_context *ctx;
		if (rpma_utils_get_ibv_context(o->addr, RPMA_UTIL_IBV_CONTEXT_LOCAL, &ctx) ||
		    rpma_peer_new(ctx, &peer))
			DIE("no verbs peer on %s", o->addr);
	} else if (rpma_ext_peer_new_ofi(o->transport, &peer)) {
		DIE("no %s peer", o->transport);
	}
	return peer;
}

static char *
region_path(const struct opts *o, const char *what)
{
	static char buf[2][512];
	static int k;
	char *p = buf[k++ & 1];

	snprintf(p, 512, "%s/rpma-bench-%s-%d", o->dir, what, (int)getpid());
	return p;
}

static size_t
region_size(const struct opts *o)
{
	size_t r = o->size * (size_t)o->depth * 4;

	return r < (1 << 20) ? (1 << 20) : r;
}

/* ---------------------------------------------------------------- */
/* the target process                                               */

static void
target(const struct opts *o, const char *path, int ready_fd)
{
	struct rpma_peer *peer = peer_new(o);
	struct rpma_ext_mem *mem;
	struct rpma_mr_local *mr;
	struct rpma_ep *ep;
	struct rpma_conn_req *req;
	struct rpma_conn *conn;
	struct rpma_conn_private_data pdata;
	unsigned char desc[64];
	size_t desc_size;
	char port[16];
	enum rpma_conn_event ev;

	snprintf(port, sizeof(port), "%d", o->port);
	if (rpma_ext_mem_open(o->backend, path, region_size(o), RPMA_EXT_MEM_CREATE, &mem))
		DIE("target memory at %s", path);
	if (rpma_ext_mr_reg_mem(peer, mem, RPMA_MR_USAGE_WRITE_DST |
			RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT, &mr) ||
	    rpma_mr_get_descriptor_size(mr, &desc_size) ||
	    rpma_mr_get_descriptor(mr, desc))
		DIE("target region");
	if (rpma_ep_listen(peer, o->addr, port, &ep))
		DIE("listen on %s:%s", o->addr, port);
	if (write(ready_fd, "L", 1) != 1)
		DIE("ready");
	if (rpma_ep_next_conn_req(ep, NULL, &req))
		DIE("request");
	pdata.ptr = desc;
	pdata.len = (uint8_t)desc_size;
	if (rpma_conn_req_connect(&req, &pdata, &conn))
		DIE("accept");
	while (rpma_conn_next_event(conn, &ev) == 0 && ev != RPMA_CONN_CLOSED &&
	       ev != RPMA_CONN_LOST)
		;
	rpma_conn_delete(&conn);
	rpma_ep_shutdown(&ep);
	rpma_mr_dereg(&mr);
	rpma_ext_mem_close(&mem);
	unlink(path);
	rpma_peer_delete(&peer);
	exit(0);
}

/* ---------------------------------------------------------------- */
/* ours: write + flush                                              */

static struct stats
bench_ours(const struct opts *o)
{
	char port[16], c;
	const char *path = region_path(o, "target");
	struct rpma_peer *peer;
	struct rpma_mr_local *src;
	struct rpma_mr_remote *dst;
	struct rpma_conn_req *req;
	struct rpma_conn *conn;
	struct rpma_conn_private_data pdata;
	struct rpma_cq *cq;
	enum rpma_conn_event ev;
	uint64_t *lat, *start;
	char *buf;
	long posted = 0, done = 0;
	int ready[2], status;
	uint64_t t0;
	size_t dsize;
	pid_t pid;

	if (pipe(ready))
		DIE("pipe");
	pid = fork();
	if (pid == 0) {
		close(ready[0]);
		target(o, path, ready[1]);
	}
	close(ready[1]);
	lat = calloc((size_t)o->ops, sizeof(*lat));
	start = calloc((size_t)o->depth, sizeof(*start));
	if (lat == NULL || start == NULL || posix_memalign((void **)&buf, 4096,
			o->size * (size_t)o->depth))
		DIE("out of memory");
	memset(buf, 0x5a, o->size * (size_t)o->depth);
	if (read(ready[0], &c, 1) != 1)
		DIE("the target did not start");

	snprintf(port, sizeof(port), "%d", o->port);
	peer = peer_new(o);
	if (rpma_mr_reg(peer, buf, o->size * (size_t)o->depth,
			RPMA_MR_USAGE_WRITE_SRC, &src))
		DIE("register");
	if (rpma_conn_req_new(peer, o->addr, port, NULL, &req) ||
	    rpma_conn_req_connect(&req, NULL, &conn) ||
	    rpma_conn_next_event(conn, &ev) || ev != RPMA_CONN_ESTABLISHED)
		DIE("connect");
	dsize = strcmp(o->transport, "verbs") == 0 ? RPMA_EXT_MR_DESC_SIZE_V0 :
		RPMA_EXT_MR_DESC_SIZE_V1;
	if (rpma_conn_get_private_data(conn, &pdata) ||
	    rpma_mr_remote_from_descriptor(pdata.ptr, dsize, &dst))
		DIE("descriptor");
	rpma_conn_get_cq(conn, &cq);

	t0 = bench_now_ns();
	uint64_t idle_since = t0;
	while (done < o->ops) {
		struct ibv_wc wc[16];
		int n = 0, ret;

		/* keep `depth` write+flush pairs in flight, slot k at offset k */
		while (posted < o->ops && posted - done < o->depth) {
			long k = posted % o->depth;
			size_t off = (size_t)k * o->size;

			start[k] = bench_now_ns();
			if (rpma_write(conn, dst, off, src, off, o->size,
					RPMA_F_COMPLETION_ON_ERROR, NULL) ||
			    rpma_flush(conn, dst, off, o->size, RPMA_FLUSH_TYPE_PERSISTENT,
					RPMA_F_COMPLETION_ALWAYS, (void *)(uintptr_t)(k + 1)))
				DIE("post");
			posted++;
		}
		ret = rpma_cq_get_wc(cq, 16, wc, &n);
		if (ret == RPMA_E_NO_COMPLETION) {
			/* poll briefly, then sleep as the floor's socket does */
			if (o->spin_ns && bench_now_ns() - idle_since > o->spin_ns) {
				if (rpma_cq_wait(cq))
					DIE("rpma_cq_wait");
			}
			continue;
		}
		if (ret)
			DIE("completion");
		idle_since = bench_now_ns();
		for (int i = 0; i < n; i++) {
			long k = (long)wc[i].wr_id - 1;
			if (wc[i].status != IBV_WC_SUCCESS)
				DIE("flush failed: %s", ibv_wc_status_str(wc[i].status));
			lat[done++] = bench_now_ns() - start[k];
		}
	}
	uint64_t total = bench_now_ns() - t0;

	rpma_conn_disconnect(conn);
	while (rpma_conn_next_event(conn, &ev) == 0 && ev != RPMA_CONN_CLOSED)
		;
	rpma_conn_delete(&conn);
	rpma_mr_remote_delete(&dst);
	rpma_mr_dereg(&src);
	rpma_peer_delete(&peer);
	waitpid(pid, &status, 0);
	free(buf);
	free(start);
	struct stats s = summarize(lat, o->ops, total, o->size);
	free(lat);
	return s;
}

/* ---------------------------------------------------------------- */
/* the floor: a TCP round trip with the payload, and one persist      */

static struct stats
bench_tcp(const struct opts *o)
{
	uint64_t *lat = calloc((size_t)o->ops, sizeof(*lat)), total;

	if (lat == NULL)
		DIE("out of memory");
	if (bench_tcp_round_trips(o->port + 1, o->size, o->ops, lat, &total))
		exit(1);
	struct stats st = summarize(lat, o->ops, total, o->size);
	free(lat);
	return st;
}

static struct stats
bench_persist(const struct opts *o, int *durable)
{
	uint64_t *lat = calloc((size_t)o->ops, sizeof(*lat)), total;
	bool dur = false;

	if (lat == NULL)
		DIE("out of memory");
	if (bench_copy_persist(o->backend, region_path(o, "floor"), region_size(o),
			o->size, o->depth, o->ops, lat, &total, &dur))
		exit(1);
	*durable = dur;
	struct stats s = summarize(lat, o->ops, total, o->size);
	free(lat);
	return s;
}

static void
usage(void)
{
	fprintf(stderr, "usage: rpma-bench [-t tcp|net|verbs] [-a ADDR] [-p PORT] "
		"[-s SIZE] [-q DEPTH] [-n OPS] [-b file|crash|pmem] [-d DIR] [-w SPIN_US]\n");
	exit(2);
}

int
main(int argc, char *argv[])
{
	struct opts o = {
		.transport = "tcp", .addr = "127.0.0.1", .port = 0, .size = 64,
		.depth = 1, .ops = 10000, .backend = RPMA_EXT_MEM_FILE,
		.backend_name = "file", .dir = "/tmp", .spin_ns = 20000,
	};
	struct stats ours, tcp, persist;
	int opt, durable = 0;

	while ((opt = getopt(argc, argv, "t:a:p:s:q:n:b:d:w:h")) != -1) {
		switch (opt) {
		case 't': o.transport = optarg; break;
		case 'a': o.addr = optarg; break;
		case 'p': o.port = atoi(optarg); break;
		case 's': o.size = strtoul(optarg, NULL, 0); break;
		case 'q': o.depth = atoi(optarg); break;
		case 'n': o.ops = atol(optarg); break;
		case 'b':
			o.backend_name = optarg;
			if (strcmp(optarg, "file") == 0)
				o.backend = RPMA_EXT_MEM_FILE;
			else if (strcmp(optarg, "crash") == 0)
				o.backend = RPMA_EXT_MEM_CRASH;
			else if (strcmp(optarg, "pmem") == 0)
				o.backend = RPMA_EXT_MEM_PMEM;
			else
				usage();
			break;
		case 'd': o.dir = optarg; break;
		case 'w': o.spin_ns = strtoull(optarg, NULL, 0) * 1000; break;
		default: usage();
		}
	}
	if (o.size == 0 || o.depth < 1 || o.ops < 1)
		usage();
	if (o.port == 0)	/* below the ephemeral range (32768 and up) */
		o.port = 20000 + (int)(getpid() % 1500) * 8;
	signal(SIGPIPE, SIG_IGN);
	rpma_log_set_threshold(RPMA_LOG_THRESHOLD_AUX, RPMA_LOG_LEVEL_ERROR);

	/* the floor first: nothing of ours is running yet */
	tcp = bench_tcp(&o);
	persist = bench_persist(&o, &durable);
	ours = bench_ours(&o);

	printf("rpma-bench: %s, %zu B, depth %d, %ld ops, backend %s in %s (%s, %s)\n",
		o.transport, o.size, o.depth, o.ops, o.backend_name, o.dir,
		bench_fs_name(o.dir), durable ? "durable" : "NOT durable");
	printf("%-26s %10s %10s %10s %10s\n", "", "p50 us", "p99 us", "p99.9 us", "MB/s");
	printf("%-26s %10.1f %10.1f %10.1f %10.1f\n", "write+flush (ours)",
		ours.p50, ours.p99, ours.p999, ours.mb_s);
	printf("%-26s %10.1f %10.1f %10.1f %10.1f\n", "tcp round trip (floor)",
		tcp.p50, tcp.p99, tcp.p999, tcp.mb_s);
	printf("%-26s %10.1f %10.1f %10.1f %10.1f\n", "copy+persist (floor)",
		persist.p50, persist.p99, persist.p999, persist.mb_s);
	printf("ratio ours/floor at p50: %.2f (floor = tcp round trip + persist = %.1f us)\n",
		ours.p50 / (tcp.p50 + persist.p50), tcp.p50 + persist.p50);
	return 0;
}
