/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdma_wf_loop -- the write+flush latency baseline of the RDMA rig: one
 * source, built against Debian's librpma 1.2 (-DUSE_LIBRPMA, as
 * rdma_wf_loop_librpma) and against our core (rdma_wf_loop_ours).  Only
 * librpma 1.2's API is used, so either build talks to the other.
 *
 *   rdma_wf_loop target IP PORT [DEVDAX]
 *   rdma_wf_loop client IP PORT [ITERATIONS [WARMUP [poll|wait]]]
 *
 * The target registers a region (device-dax when a path is given, else
 * anonymous memory), declares direct write to PMem, sends both descriptors
 * in the connection's private data -- byte 0: MR descriptor size, byte 1:
 * peer-cfg descriptor size, then the two descriptors, the layout of
 * tests/interop -- serves one client and, once the client has left, checks
 * what it wrote.
 *
 * The client times WARMUP + ITERATIONS (default 100 + 1000) rounds of
 *   rpma_write(64 B, RPMA_F_COMPLETION_ON_ERROR)
 *   rpma_flush(PERSISTENT, RPMA_F_COMPLETION_ALWAYS)
 *   rpma_cq_get_wc until the flush completes (busy poll; "wait" sleeps in
 *   rpma_cq_wait instead, for a guest with one CPU)
 * with CLOCK_MONOTONIC, each round into one of 64 blocks of 64 B with bytes
 * derived from its number; then it writes and flushes the number of rounds
 * into the word after the blocks, so that the target can tell which bytes
 * each block must hold.  It prints one line a script can read:
 *   wf_loop: impl=NAME iterations=N warmup=W median_us=M p99_us=P min_us=A max_us=B
 *
 * With RPMA_WF_PHASES=1 in the environment the client also reads the TSC
 * after each call of a round and prints where a round's time goes, as
 * medians (the TSC scaled by CLOCK_MONOTONIC over the whole run):
 *   wf_phases: impl=NAME write_us=W flush_us=F wait_us=C polls=P poll_us=Q
 *              csw=X
 * write_us and flush_us are the two posts (each is a doorbell, on rxe a
 * system call that may do the transfer itself), wait_us the time from the
 * flush's return to its completion, polls the rpma_cq_get_wc calls that
 * took and poll_us the median of wait over polls: one pass of the poll
 * loop.  csw is the mean of context switches per round (voluntary and
 * not, from getrusage(2) over the timed rounds; its CPU times count ticks,
 * too coarse for rounds this short).
 *
 * A request that meets no listener is REJECTED (or UNREACHABLE) without
 * the target having seen it, so the client tries again, up to 10 times a
 * second apart.  Exit status: 0, 1 on any failure, 2 for a usage error,
 * 77 when no RDMA device serves IP (the target's) or reaches it (the
 * client's).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define ticks() __rdtsc()
#else
#define ticks() now_ns()
#endif

#ifdef USE_LIBRPMA
#include <librpma.h>
#define IMPL "librpma"
#else
#include "rpma.h"
#define IMPL "ours"
#endif

#define BLOCK 64
#define BLOCKS 64
#define TOTAL_OFF (BLOCK * BLOCKS)	/* the word that says how many rounds */
#define REGION 8192
#define DAX_MAP (2u << 20)		/* device-dax maps in its alignment */
#define CONNECT_TRIES 10

#define CHECK(cond, ...) \
	do { \
		if (!(cond)) { \
			fprintf(stderr, "[%s] %s:%d: %s: ", IMPL, __FILE__, __LINE__, #cond); \
			fprintf(stderr, __VA_ARGS__); \
			fprintf(stderr, "\n"); \
			exit(1); \
		} \
	} while (0)

/* the byte J of the block that round I writes */
static unsigned char
round_byte(uint64_t i, unsigned j)
{
	return (unsigned char)(i * 0x9Du + j * 7u + 1u);
}

/* the peer of the device that serves IP: a local address or a remote one */
static struct rpma_peer *
peer_for(const char *ip, enum rpma_util_ibv_context_type type)
{
	struct ibv_context *ctx;
	struct rpma_peer *peer;
	int ret = rpma_utils_get_ibv_context(ip, type, &ctx);

	if (ret) {
		printf("SKIP: no RDMA device serves %s (%s)\n", ip, rpma_err_2str(ret));
		exit(77);
	}
	CHECK(rpma_peer_new(ctx, &peer) == 0, "rpma_peer_new");
	return peer;
}

static enum rpma_conn_event
next_event(struct rpma_conn *conn)
{
	enum rpma_conn_event ev = RPMA_CONN_UNDEFINED;
	int ret = rpma_conn_next_event(conn, &ev);

	CHECK(ret == 0, "rpma_conn_next_event: %s", rpma_err_2str(ret));
	return ev;
}

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

static int
target(const char *ip, const char *port, const char *dax)
{
	struct rpma_peer *peer = peer_for(ip, RPMA_UTIL_IBV_CONTEXT_LOCAL);
	struct rpma_peer_cfg *pcfg;
	struct rpma_mr_local *mr;
	struct rpma_ep *ep;
	struct rpma_conn_req *req;
	struct rpma_conn *conn;
	struct rpma_conn_private_data pdata;
	unsigned char data[64], *region;
	size_t mr_size, pcfg_size, map_len = REGION;
	uint64_t total;
	unsigned bad = 0;

	if (dax) {
		int fd = open(dax, O_RDWR);

		CHECK(fd >= 0, "open %s: %s", dax, strerror(errno));
		map_len = DAX_MAP;
		region = mmap(NULL, map_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		close(fd);
	} else {
		region = mmap(NULL, map_len, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	}
	CHECK(region != MAP_FAILED, "mmap: %s", strerror(errno));
	memset(region, 0, REGION);

	CHECK(rpma_mr_reg(peer, region, REGION, RPMA_MR_USAGE_WRITE_DST |
		RPMA_MR_USAGE_READ_SRC | RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY |
		RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT, &mr) == 0, "rpma_mr_reg");
	CHECK(rpma_peer_cfg_new(&pcfg) == 0, "rpma_peer_cfg_new");
	CHECK(rpma_peer_cfg_set_direct_write_to_pmem(pcfg, true) == 0, "direct write");
	CHECK(rpma_mr_get_descriptor_size(mr, &mr_size) == 0, "MR descriptor size");
	CHECK(rpma_peer_cfg_get_descriptor_size(pcfg, &pcfg_size) == 0,
		"peer cfg descriptor size");
	CHECK(2 + mr_size + pcfg_size <= sizeof(data), "descriptors of %zu + %zu bytes",
		mr_size, pcfg_size);
	data[0] = (unsigned char)mr_size;
	data[1] = (unsigned char)pcfg_size;
	CHECK(rpma_mr_get_descriptor(mr, data + 2) == 0, "MR descriptor");
	CHECK(rpma_peer_cfg_get_descriptor(pcfg, data + 2 + mr_size) == 0,
		"peer cfg descriptor");

	CHECK(rpma_ep_listen(peer, ip, port, &ep) == 0, "rpma_ep_listen %s:%s", ip, port);
	printf("[%s] target listening on %s:%s (%s)\n", IMPL, ip, port,
		dax ? dax : "anonymous memory");
	fflush(stdout);
	CHECK(rpma_ep_next_conn_req(ep, NULL, &req) == 0, "rpma_ep_next_conn_req");
	pdata.ptr = data;
	pdata.len = (uint8_t)(2 + mr_size + pcfg_size);
	CHECK(rpma_conn_req_connect(&req, &pdata, &conn) == 0, "accept");
	CHECK(next_event(conn) == RPMA_CONN_ESTABLISHED, "not established");
	CHECK(next_event(conn) == RPMA_CONN_CLOSED, "not closed");

	/* the client is gone: every block holds the last round that hit it */
	memcpy(&total, region + TOTAL_OFF, sizeof(total));
	CHECK(total > 0, "the client wrote no round count");
	for (unsigned k = 0; k < BLOCKS; k++) {
		const unsigned char *b = region + (size_t)k * BLOCK;

		for (unsigned j = 0; j < BLOCK; j++) {
			unsigned char want = 0;

			if (k < total)
				want = round_byte(k + (total - 1 - k) / BLOCKS * BLOCKS, j);
			if (b[j] != want) {
				bad++;
				break;
			}
		}
	}
	CHECK(bad == 0, "%u of %u blocks do not hold what round %" PRIu64
		" left there", bad, BLOCKS, total);
	printf("[%s] target: %" PRIu64 " rounds, all %u blocks verified\n", IMPL,
		total, BLOCKS);

	rpma_conn_delete(&conn);
	rpma_ep_shutdown(&ep);
	rpma_mr_dereg(&mr);
	rpma_peer_cfg_delete(&pcfg);
	rpma_peer_delete(&peer);
	munmap(region, map_len);
	return 0;
}

/* connects, trying again while the request meets no listener */
static struct rpma_conn *
connect_to(struct rpma_peer *peer, const char *ip, const char *port)
{
	struct rpma_conn_req *req;
	struct rpma_conn *conn;
	enum rpma_conn_event ev;
	int ret;

	for (int t = 1;; t++) {
		ret = rpma_conn_req_new(peer, ip, port, NULL, &req);
		if (ret == 0) {
			CHECK(rpma_conn_req_connect(&req, NULL, &conn) == 0,
				"rpma_conn_req_connect");
			ev = next_event(conn);
			if (ev == RPMA_CONN_ESTABLISHED)
				return conn;
			rpma_conn_delete(&conn);
			CHECK(ev == RPMA_CONN_REJECTED || ev == RPMA_CONN_UNREACHABLE,
				"connection event %s", rpma_utils_conn_event_2str(ev));
			fprintf(stderr, "[%s] connect to %s:%s, try %d: %s\n", IMPL, ip, port,
				t, rpma_utils_conn_event_2str(ev));
		} else {
			fprintf(stderr, "[%s] connect to %s:%s, try %d: rpma_conn_req_new: %s\n",
				IMPL, ip, port, t, rpma_err_2str(ret));
		}
		CHECK(t < CONNECT_TRIES, "no connection after %d tries", t);
		sleep(1);
	}
}

/* the completion of the flush that carried WR_ID; returns the polls taken */
static uint64_t
await(struct rpma_cq *cq, uint64_t wr_id, int wait)
{
	struct ibv_wc wc;
	uint64_t polls = 0;
	int ret;

	for (;;) {
		polls++;
		ret = rpma_cq_get_wc(cq, 1, &wc, NULL);
		if (ret == 0)
			break;
		CHECK(ret == RPMA_E_NO_COMPLETION, "rpma_cq_get_wc: %s", rpma_err_2str(ret));
		if (wait)
			CHECK(rpma_cq_wait(cq) == 0, "rpma_cq_wait");
	}
	CHECK(wc.status == IBV_WC_SUCCESS, "completion of %" PRIu64 ": %s", wr_id,
		ibv_wc_status_str(wc.status));
	CHECK(wc.wr_id == wr_id, "completion of %" PRIu64 ", want %" PRIu64,
		(uint64_t)wc.wr_id, wr_id);
	return polls;
}

static double
median_of(uint64_t *v, unsigned long n)
{
	qsort(v, n, sizeof(*v), cmp_u64);
	return n % 2 ? (double)v[n / 2] : ((double)v[n / 2 - 1] + (double)v[n / 2]) / 2;
}

/* the rounds' phases in TSC ticks, and the polls each took */
struct phases {
	uint64_t *write, *flush, *wait, *polls, *poll;
	uint64_t t0_ns, t0_ticks;
	struct rusage ru0;	/* at the first timed round */
};

static void
phases_print(struct phases *ph, unsigned long n)
{
	double per_us = 1e3 * (double)(ticks() - ph->t0_ticks) /
		(double)(now_ns() - ph->t0_ns);	/* ticks per microsecond */
	double polls = median_of(ph->polls, n);
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	printf("wf_phases: impl=%s write_us=%.2f flush_us=%.2f wait_us=%.2f polls=%.0f"
		" poll_us=%.3f csw=%.2f\n", IMPL,
		median_of(ph->write, n) / per_us, median_of(ph->flush, n) / per_us,
		median_of(ph->wait, n) / per_us, polls, median_of(ph->poll, n) / per_us,
		(double)(ru.ru_nvcsw - ph->ru0.ru_nvcsw + ru.ru_nivcsw - ph->ru0.ru_nivcsw) /
		(double)n);
}

static int
client(const char *ip, const char *port, unsigned long n, unsigned long warmup, int wait)
{
	struct rpma_peer *peer = peer_for(ip, RPMA_UTIL_IBV_CONTEXT_REMOTE);
	struct rpma_mr_local *mr;
	struct rpma_mr_remote *dst;
	struct rpma_peer_cfg *pcfg;
	struct rpma_conn *conn;
	struct rpma_conn_private_data pdata;
	struct rpma_cq *cq;
	static unsigned char src[BLOCK + 8];
	const unsigned char *d;
	uint64_t *lat, total = warmup + n, t0;
	size_t size;
	int flush_type;
	const char *env = getenv("RPMA_WF_PHASES");
	struct phases ph;
	int phases = env && strcmp(env, "1") == 0;
	uint64_t k0, k1, k2, k3, polls;

	lat = calloc(n, sizeof(*lat));
	CHECK(lat != NULL, "out of memory");
	memset(&ph, 0, sizeof(ph));
	if (phases) {
		ph.write = calloc(n, sizeof(uint64_t));
		ph.flush = calloc(n, sizeof(uint64_t));
		ph.wait = calloc(n, sizeof(uint64_t));
		ph.polls = calloc(n, sizeof(uint64_t));
		ph.poll = calloc(n, sizeof(uint64_t));
		CHECK(ph.write && ph.flush && ph.wait && ph.polls && ph.poll, "out of memory");
	}
	CHECK(rpma_mr_reg(peer, src, sizeof(src), RPMA_MR_USAGE_WRITE_SRC, &mr) == 0,
		"rpma_mr_reg");
	conn = connect_to(peer, ip, port);

	/* rdma_cm may pad the private data: take at least what was sent */
	CHECK(rpma_conn_get_private_data(conn, &pdata) == 0, "private data");
	d = pdata.ptr;
	CHECK(pdata.len >= 2 && pdata.len >= 2u + d[0] + d[1],
		"private data of %u bytes is shorter than its descriptors", pdata.len);
	CHECK(rpma_mr_remote_from_descriptor(d + 2, d[0], &dst) == 0, "MR descriptor");
	CHECK(rpma_peer_cfg_from_descriptor(d + 2 + d[0], d[1], &pcfg) == 0,
		"peer cfg descriptor");
	CHECK(rpma_conn_apply_remote_peer_cfg(conn, pcfg) == 0, "apply peer cfg");
	CHECK(rpma_mr_remote_get_size(dst, &size) == 0 && size >= TOTAL_OFF + 8,
		"remote region of %zu bytes", size);
	CHECK(rpma_mr_remote_get_flush_type(dst, &flush_type) == 0 &&
		(flush_type & RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT),
		"the remote region offers no persistent flush");
	CHECK(rpma_conn_get_cq(conn, &cq) == 0, "rpma_conn_get_cq");

	ph.t0_ns = now_ns();
	ph.t0_ticks = ticks();
	for (uint64_t i = 0; i < total; i++) {
		size_t off = (size_t)(i % BLOCKS) * BLOCK;

		if (phases && i == warmup)
			getrusage(RUSAGE_SELF, &ph.ru0);
		for (unsigned j = 0; j < BLOCK; j++)
			src[j] = round_byte(i, j);
		t0 = now_ns();
		k0 = phases ? ticks() : 0;
		CHECK(rpma_write(conn, dst, off, mr, 0, BLOCK, RPMA_F_COMPLETION_ON_ERROR,
			NULL) == 0, "rpma_write, round %" PRIu64, i);
		k1 = phases ? ticks() : 0;
		CHECK(rpma_flush(conn, dst, off, BLOCK, RPMA_FLUSH_TYPE_PERSISTENT,
			RPMA_F_COMPLETION_ALWAYS, (void *)(uintptr_t)(i + 1)) == 0,
			"rpma_flush, round %" PRIu64, i);
		k2 = phases ? ticks() : 0;
		polls = await(cq, i + 1, wait);
		k3 = phases ? ticks() : 0;
		if (i >= warmup) {
			lat[i - warmup] = now_ns() - t0;
			if (phases) {
				ph.write[i - warmup] = k1 - k0;
				ph.flush[i - warmup] = k2 - k1;
				ph.wait[i - warmup] = k3 - k2;
				ph.polls[i - warmup] = polls;
				ph.poll[i - warmup] = polls > 1 ? (k3 - k2) / polls : k3 - k2;
			}
		}
	}

	/* tell the target how many rounds there were */
	memcpy(src + BLOCK, &total, sizeof(total));
	CHECK(rpma_write(conn, dst, TOTAL_OFF, mr, BLOCK, sizeof(total),
		RPMA_F_COMPLETION_ON_ERROR, NULL) == 0, "rpma_write of the count");
	CHECK(rpma_flush(conn, dst, TOTAL_OFF, sizeof(total), RPMA_FLUSH_TYPE_PERSISTENT,
		RPMA_F_COMPLETION_ALWAYS, (void *)(uintptr_t)(total + 1)) == 0,
		"rpma_flush of the count");
	await(cq, total + 1, wait);

	qsort(lat, n, sizeof(*lat), cmp_u64);
	size_t p99 = (n * 99 + 99) / 100 - 1;	/* ceil(0.99 n) - 1 */
	double median = n % 2 ? (double)lat[n / 2] :
		((double)lat[n / 2 - 1] + (double)lat[n / 2]) / 2;
	printf("wf_loop: impl=%s iterations=%lu warmup=%lu median_us=%.2f p99_us=%.2f"
		" min_us=%.2f max_us=%.2f poll=%s\n", IMPL, n, warmup, median / 1e3,
		(double)lat[p99] / 1e3, (double)lat[0] / 1e3, (double)lat[n - 1] / 1e3,
		wait ? "wait" : "busy");
	if (phases)
		phases_print(&ph, n);

	CHECK(rpma_conn_disconnect(conn) == 0, "rpma_conn_disconnect");
	CHECK(next_event(conn) == RPMA_CONN_CLOSED, "not closed");
	rpma_conn_delete(&conn);
	rpma_peer_cfg_delete(&pcfg);
	rpma_mr_remote_delete(&dst);
	rpma_mr_dereg(&mr);
	rpma_peer_delete(&peer);
	free(lat);
	free(ph.write);
	free(ph.flush);
	free(ph.wait);
	free(ph.polls);
	free(ph.poll);
	return 0;
}

static unsigned long
number(const char *s, const char *what, unsigned long min)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || v < min || v > 100000000ul) {
		fprintf(stderr, "rdma_wf_loop: bad %s '%s'\n", what, s);
		exit(2);
	}
	return v;
}

int
main(int argc, char *argv[])
{
	if (argc >= 4 && argc <= 5 && strcmp(argv[1], "target") == 0)
		return target(argv[2], argv[3], argc == 5 ? argv[4] : NULL);
	if (argc >= 4 && argc <= 7 && strcmp(argv[1], "client") == 0) {
		unsigned long n = argc > 4 ? number(argv[4], "ITERATIONS", 1) : 1000;
		unsigned long w = argc > 5 ? number(argv[5], "WARMUP", 0) : 100;
		int wait = 0;

		if (argc > 6) {
			if (strcmp(argv[6], "wait") == 0)
				wait = 1;
			else if (strcmp(argv[6], "poll") != 0) {
				fprintf(stderr, "rdma_wf_loop: poll or wait, not '%s'\n", argv[6]);
				return 2;
			}
		}
		return client(argv[2], argv[3], n, w, wait);
	}
	fprintf(stderr, "usage: %s target IP PORT [DEVDAX]\n"
		"       %s client IP PORT [ITERATIONS [WARMUP [poll|wait]]]\n",
		argv[0], argv[0]);
	return 2;
}
