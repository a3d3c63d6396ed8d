/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * shared.c -- one evaluation of every case and probe, compiled once against
 * our core and once against Debian's librpma (see shared.h).  Nothing here
 * may use anything but the librpma 1.x API both libraries share.
 */
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef CONFORMANCE_ORACLE
#include <librpma.h>
#else
#include "rpma.h"
#endif

#include "shared.h"

/* a pointer value no allocator returns: shows an output was not written */
#define SENTINEL ((void *)(uintptr_t)0xDEADBEEF)

/* a pointer the configuration objects only store, never dereference */
#define FAKE_SRQ ((struct rpma_srq *)(uintptr_t)0x5A5A5A50)

static int default_main_threshold = 99;
static int default_aux_threshold = 99;
static int default_main_ret = 1;
static int default_aux_ret = 1;

void
conf_init_library(void)
{
	enum rpma_log_level level;

	default_main_ret = rpma_log_get_threshold(RPMA_LOG_THRESHOLD, &level);
	if (default_main_ret == 0)
		default_main_threshold = (int)level;
	default_aux_ret = rpma_log_get_threshold(RPMA_LOG_THRESHOLD_AUX, &level);
	if (default_aux_ret == 0)
		default_aux_threshold = (int)level;

	/* expected failures must not reach syslog or stderr */
	(void) rpma_log_set_threshold(RPMA_LOG_THRESHOLD, RPMA_LOG_DISABLED);
	(void) rpma_log_set_threshold(RPMA_LOG_THRESHOLD_AUX, RPMA_LOG_DISABLED);
}

/*
 * The bytes are copied into a heap buffer of exactly their size so that a
 * read past the end is caught by AddressSanitizer (our side).
 */
static unsigned char *
exact_copy(const unsigned char *bytes, size_t size)
{
	unsigned char *copy = malloc(size ? size : 1);

	if (copy == NULL) {
		perror("malloc");
		exit(99);
	}
	if (size)
		memcpy(copy, bytes, size);
	return copy;
}

static void
eval_mr(const unsigned char *bytes, size_t size, char *line)
{
	unsigned char *copy = exact_copy(bytes, size);
	struct rpma_mr_remote *mr = SENTINEL;
	size_t region = 0;
	int flush = -1, gs, gf, del;
	int ret = rpma_mr_remote_from_descriptor(copy, size, &mr);

	free(copy);	/* the remote region must not keep a pointer into it */
	if (ret) {
		snprintf(line, CONF_LINE_MAX, "ret=%d kept=%d", ret,
			mr == SENTINEL);
		return;
	}
	gs = rpma_mr_remote_get_size(mr, &region);
	gf = rpma_mr_remote_get_flush_type(mr, &flush);
	del = rpma_mr_remote_delete(&mr);
	snprintf(line, CONF_LINE_MAX,
		"ret=0 gs=%d size=%llu gf=%d flush=%d del=%d null=%d",
		gs, (unsigned long long)region, gf, flush, del, mr == NULL);
}

static void
eval_pcfg(const unsigned char *bytes, size_t size, char *line)
{
	unsigned char *copy = exact_copy(bytes, size);
	struct rpma_peer_cfg *pcfg = SENTINEL;
	unsigned char out[8];
	size_t dsize = 0;
	bool dw = false;
	int gdw, gds, gd, del;
	int ret = rpma_peer_cfg_from_descriptor(copy, size, &pcfg);

	free(copy);
	if (ret) {
		snprintf(line, CONF_LINE_MAX, "ret=%d kept=%d", ret,
			pcfg == SENTINEL);
		return;
	}
	memset(out, 0xAA, sizeof(out));
	gdw = rpma_peer_cfg_get_direct_write_to_pmem(pcfg, &dw);
	gds = rpma_peer_cfg_get_descriptor_size(pcfg, &dsize);
	gd = rpma_peer_cfg_get_descriptor(pcfg, out);
	del = rpma_peer_cfg_delete(&pcfg);
	snprintf(line, CONF_LINE_MAX,
		"ret=0 gdw=%d dw=%d gds=%d dsize=%zu gd=%d desc=%u tail=%u del=%d null=%d",
		gdw, (int)dw, gds, dsize, gd, out[0], out[1], del, pcfg == NULL);
}

/* ------------------------------------------------------------------ */
/* behaviour probes                                                    */

struct probe {
	const char *name;
	void (*fn)(char *line, int a, int b);
	int a, b;
};

#define OUT(...) snprintf(line, CONF_LINE_MAX, __VA_ARGS__)

static void
probe_err_2str(char *line, int code, int unused)
{
	(void) unused;
	OUT("%s", rpma_err_2str(code));
}

static void
probe_conn_event_2str(char *line, int event, int unused)
{
	(void) unused;
	OUT("%s", rpma_utils_conn_event_2str((enum rpma_conn_event)event));
}

static void
probe_log_defaults(char *line, int a, int b)
{
	(void) a;
	(void) b;
	OUT("main_ret=%d main=%d aux_ret=%d aux=%d", default_main_ret,
		default_main_threshold, default_aux_ret, default_aux_threshold);
}

/* set, read back, restore DISABLED */
static void
probe_log_set_threshold(char *line, int threshold, int level)
{
	enum rpma_log_level got = (enum rpma_log_level)99;
	int ret = rpma_log_set_threshold((enum rpma_log_threshold)threshold,
			(enum rpma_log_level)level);
	int gret = rpma_log_get_threshold((enum rpma_log_threshold)threshold,
			&got);

	OUT("ret=%d get_ret=%d get=%d", ret, gret, gret ? 99 : (int)got);
	(void) rpma_log_set_threshold(RPMA_LOG_THRESHOLD, RPMA_LOG_DISABLED);
	(void) rpma_log_set_threshold(RPMA_LOG_THRESHOLD_AUX, RPMA_LOG_DISABLED);
}

static void
probe_log_get_threshold_null(char *line, int threshold, int b)
{
	(void) b;
	OUT("ret=%d", rpma_log_get_threshold(
		(enum rpma_log_threshold)threshold, NULL));
}

static void
probe_log_set_function_default(char *line, int a, int b)
{
	(void) a;
	(void) b;
	OUT("ret=%d", rpma_log_set_function(RPMA_LOG_USE_DEFAULT_FUNCTION));
}

static void
probe_mr_remote_null_args(char *line, int a, int b)
{
	static const unsigned char desc[21] = { [8] = 1, [20] = 0x11 };
	struct rpma_mr_remote *mr = SENTINEL;
	struct rpma_mr_remote *none = NULL;
	size_t size = 7;
	int flush = 7;
	int r1, r2, r3, r4, r5, r6, r7;

	(void) a;
	(void) b;
	r1 = rpma_mr_remote_from_descriptor(NULL, sizeof(desc), &mr);
	r2 = rpma_mr_remote_from_descriptor(desc, sizeof(desc), NULL);
	r3 = rpma_mr_remote_delete(NULL);
	r4 = rpma_mr_remote_delete(&none);
	r5 = rpma_mr_remote_get_size(NULL, &size);
	r6 = rpma_mr_remote_get_flush_type(NULL, &flush);
	r7 = 1;
	if (rpma_mr_remote_from_descriptor(desc, sizeof(desc), &mr) == 0) {
		r7 = rpma_mr_remote_get_size(mr, NULL) == RPMA_E_INVAL &&
			rpma_mr_remote_get_flush_type(mr, NULL) == RPMA_E_INVAL;
		(void) rpma_mr_remote_delete(&mr);
	}
	OUT("from(NULL desc)=%d from(NULL ptr)=%d delete(NULL)=%d delete(&NULL)=%d,%s "
		"get_size(NULL)=%d get_flush(NULL)=%d getters(NULL out)_inval=%d",
		r1, r2, r3, r4, none == NULL ? "null" : "set", r5, r6, r7);
}

static void
probe_peer_cfg_defaults(char *line, int a, int b)
{
	struct rpma_peer_cfg *pcfg = NULL;
	unsigned char desc[2] = { 0xAA, 0xAA };
	size_t dsize = 0;
	bool dw = true;
	int ret;

	(void) a;
	(void) b;
	ret = rpma_peer_cfg_new(&pcfg);
	if (ret) {
		OUT("new=%d", ret);
		return;
	}
	int gdw = rpma_peer_cfg_get_direct_write_to_pmem(pcfg, &dw);
	int gds = rpma_peer_cfg_get_descriptor_size(pcfg, &dsize);
	int gd = rpma_peer_cfg_get_descriptor(pcfg, desc);
	int del = rpma_peer_cfg_delete(&pcfg);
	OUT("new=0 gdw=%d dw=%d gds=%d dsize=%zu gd=%d desc=%u,%u del=%d",
		gdw, (int)dw, gds, dsize, gd, desc[0], desc[1], del);
}

/* set direct_write_to_pmem, serialise, parse back */
static void
probe_peer_cfg_roundtrip(char *line, int value, int b)
{
	struct rpma_peer_cfg *pcfg = NULL, *back = NULL;
	unsigned char desc = 0xAA;
	bool dw = !value, dw_back = !value;

	(void) b;
	if (rpma_peer_cfg_new(&pcfg)) {
		OUT("new failed");
		return;
	}
	int set = rpma_peer_cfg_set_direct_write_to_pmem(pcfg, value != 0);
	int get = rpma_peer_cfg_get_direct_write_to_pmem(pcfg, &dw);
	int gd = rpma_peer_cfg_get_descriptor(pcfg, &desc);
	int from = rpma_peer_cfg_from_descriptor(&desc, 1, &back);
	int get_back = from ? 1 :
		rpma_peer_cfg_get_direct_write_to_pmem(back, &dw_back);
	(void) rpma_peer_cfg_delete(&back);
	(void) rpma_peer_cfg_delete(&pcfg);
	OUT("set=%d get=%d dw=%d gd=%d desc=%u from=%d get_back=%d dw_back=%d",
		set, get, (int)dw, gd, desc, from, get_back, (int)dw_back);
}

static void
probe_peer_cfg_null_args(char *line, int a, int b)
{
	static const unsigned char desc = 1;
	struct rpma_peer_cfg *pcfg = SENTINEL, *none = NULL;
	unsigned char out = 0;
	size_t dsize = 0;
	bool dw = false;

	(void) a;
	(void) b;
	/* the argument order of OUT() is unspecified: call this one first */
	int from_null = rpma_peer_cfg_from_descriptor(NULL, 1, &pcfg);
	OUT("new(NULL)=%d from(NULL desc)=%d,%s from(NULL ptr)=%d delete(NULL)=%d "
		"delete(&NULL)=%d set(NULL)=%d get(NULL)=%d get_descriptor(NULL)=%d "
		"get_descriptor_size(NULL)=%d",
		rpma_peer_cfg_new(NULL), from_null,
		pcfg == SENTINEL ? "kept" : "set",
		rpma_peer_cfg_from_descriptor(&desc, 1, NULL),
		rpma_peer_cfg_delete(NULL),
		rpma_peer_cfg_delete(&none),
		rpma_peer_cfg_set_direct_write_to_pmem(NULL, true),
		rpma_peer_cfg_get_direct_write_to_pmem(NULL, &dw),
		rpma_peer_cfg_get_descriptor(NULL, &out),
		rpma_peer_cfg_get_descriptor_size(NULL, &dsize));
}

static void
probe_conn_cfg_defaults(char *line, int a, int b)
{
	struct rpma_conn_cfg *cfg = NULL;
	struct rpma_srq *srq = SENTINEL;
	uint32_t cq = 7, rcq = 7, sq = 7, rq = 7;
	int timeout = 7;
	bool shared = true;

	(void) a;
	(void) b;
	int ret = rpma_conn_cfg_new(&cfg);
	if (ret) {
		OUT("new=%d", ret);
		return;
	}
	int r = rpma_conn_cfg_get_timeout(cfg, &timeout) |
		rpma_conn_cfg_get_cq_size(cfg, &cq) |
		rpma_conn_cfg_get_rcq_size(cfg, &rcq) |
		rpma_conn_cfg_get_sq_size(cfg, &sq) |
		rpma_conn_cfg_get_rq_size(cfg, &rq) |
		rpma_conn_cfg_get_compl_channel(cfg, &shared) |
		rpma_conn_cfg_get_srq(cfg, &srq);
	int del = rpma_conn_cfg_delete(&cfg);
	OUT("getters=%d timeout=%d cq=%u rcq=%u sq=%u rq=%u shared=%d srq=%s del=%d",
		r, timeout, cq, rcq, sq, rq, (int)shared,
		srq == NULL ? "null" : "set", del);
}

/* what a setter accepted, and what the getter then shows */
static void
probe_conn_cfg_set_timeout(char *line, int value, int b)
{
	struct rpma_conn_cfg *cfg = NULL;
	int got = 7;

	(void) b;
	if (rpma_conn_cfg_new(&cfg)) {
		OUT("new failed");
		return;
	}
	int set = rpma_conn_cfg_set_timeout(cfg, value);
	int get = rpma_conn_cfg_get_timeout(cfg, &got);
	(void) rpma_conn_cfg_delete(&cfg);
	OUT("set=%d get=%d timeout=%d", set, get, got);
}

static void
probe_conn_cfg_queue_sizes(char *line, int which, int b)
{
	static const uint32_t values[] = { 0, 1, 10, 0x7FFFFFFF, 0x80000000u,
		UINT32_MAX };
	struct rpma_conn_cfg *cfg = NULL;
	char *p = line;
	size_t left = CONF_LINE_MAX;

	(void) b;
	line[0] = '\0';
	if (rpma_conn_cfg_new(&cfg)) {
		OUT("new failed");
		return;
	}
	for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
		uint32_t got = 7;
		int set, get;

		switch (which) {
		case 0:
			set = rpma_conn_cfg_set_cq_size(cfg, values[i]);
			get = rpma_conn_cfg_get_cq_size(cfg, &got);
			break;
		case 1:
			set = rpma_conn_cfg_set_rcq_size(cfg, values[i]);
			get = rpma_conn_cfg_get_rcq_size(cfg, &got);
			break;
		case 2:
			set = rpma_conn_cfg_set_sq_size(cfg, values[i]);
			get = rpma_conn_cfg_get_sq_size(cfg, &got);
			break;
		default:
			set = rpma_conn_cfg_set_rq_size(cfg, values[i]);
			get = rpma_conn_cfg_get_rq_size(cfg, &got);
			break;
		}
		int n = snprintf(p, left, "%s%d/%d/%u", i ? " " : "", set, get,
				got);
		if (n < 0 || (size_t)n >= left)
			break;
		p += n;
		left -= (size_t)n;
	}
	(void) rpma_conn_cfg_delete(&cfg);
}

static void
probe_conn_cfg_compl_channel(char *line, int a, int b)
{
	struct rpma_conn_cfg *cfg = NULL;
	bool on = false, off = true;

	(void) a;
	(void) b;
	if (rpma_conn_cfg_new(&cfg)) {
		OUT("new failed");
		return;
	}
	int s1 = rpma_conn_cfg_set_compl_channel(cfg, true);
	int g1 = rpma_conn_cfg_get_compl_channel(cfg, &on);
	int s2 = rpma_conn_cfg_set_compl_channel(cfg, false);
	int g2 = rpma_conn_cfg_get_compl_channel(cfg, &off);
	(void) rpma_conn_cfg_delete(&cfg);
	OUT("%d/%d/%d %d/%d/%d", s1, g1, (int)on, s2, g2, (int)off);
}

/* attach a (never dereferenced) SRQ pointer, then try to detach it */
static void
probe_conn_cfg_set_srq_null(char *line, int a, int b)
{
	struct rpma_conn_cfg *cfg = NULL;
	struct rpma_srq *srq = SENTINEL;

	(void) a;
	(void) b;
	if (rpma_conn_cfg_new(&cfg)) {
		OUT("new failed");
		return;
	}
	int set = rpma_conn_cfg_set_srq(cfg, FAKE_SRQ);
	int unset = rpma_conn_cfg_set_srq(cfg, NULL);
	int get = rpma_conn_cfg_get_srq(cfg, &srq);
	(void) rpma_conn_cfg_delete(&cfg);
	OUT("set=%d set(NULL)=%d get=%d srq=%s", set, unset, get,
		srq == NULL ? "null" : srq == FAKE_SRQ ? "kept" : "other");
}

static void
probe_conn_cfg_set_srq(char *line, int a, int b)
{
	struct rpma_conn_cfg *cfg = NULL;
	struct rpma_srq *srq = SENTINEL;

	(void) a;
	(void) b;
	if (rpma_conn_cfg_new(&cfg)) {
		OUT("new failed");
		return;
	}
	int set = rpma_conn_cfg_set_srq(cfg, FAKE_SRQ);
	int get = rpma_conn_cfg_get_srq(cfg, &srq);
	(void) rpma_conn_cfg_delete(&cfg);
	OUT("set=%d get=%d srq=%s", set, get,
		srq == FAKE_SRQ ? "same" : srq == NULL ? "null" : "other");
}

static void
probe_conn_cfg_null_args(char *line, int a, int b)
{
	struct rpma_conn_cfg *cfg = NULL, *none = NULL;
	struct rpma_srq *srq = NULL;
	uint32_t u = 0;
	int t = 0;
	bool s = false;

	(void) a;
	(void) b;
	if (rpma_conn_cfg_new(&cfg)) {
		OUT("new failed");
		return;
	}
	OUT("new(NULL)=%d delete(NULL)=%d delete(&NULL)=%d "
		"set(NULL cfg)=%d,%d,%d,%d,%d,%d,%d get(NULL cfg)=%d,%d,%d,%d,%d,%d,%d "
		"get(NULL out)=%d,%d,%d,%d,%d,%d,%d",
		rpma_conn_cfg_new(NULL), rpma_conn_cfg_delete(NULL),
		rpma_conn_cfg_delete(&none),
		rpma_conn_cfg_set_timeout(NULL, 1),
		rpma_conn_cfg_set_cq_size(NULL, 1),
		rpma_conn_cfg_set_rcq_size(NULL, 1),
		rpma_conn_cfg_set_sq_size(NULL, 1),
		rpma_conn_cfg_set_rq_size(NULL, 1),
		rpma_conn_cfg_set_compl_channel(NULL, true),
		rpma_conn_cfg_set_srq(NULL, FAKE_SRQ),
		rpma_conn_cfg_get_timeout(NULL, &t),
		rpma_conn_cfg_get_cq_size(NULL, &u),
		rpma_conn_cfg_get_rcq_size(NULL, &u),
		rpma_conn_cfg_get_sq_size(NULL, &u),
		rpma_conn_cfg_get_rq_size(NULL, &u),
		rpma_conn_cfg_get_compl_channel(NULL, &s),
		rpma_conn_cfg_get_srq(NULL, &srq),
		rpma_conn_cfg_get_timeout(cfg, NULL),
		rpma_conn_cfg_get_cq_size(cfg, NULL),
		rpma_conn_cfg_get_rcq_size(cfg, NULL),
		rpma_conn_cfg_get_sq_size(cfg, NULL),
		rpma_conn_cfg_get_rq_size(cfg, NULL),
		rpma_conn_cfg_get_compl_channel(cfg, NULL),
		rpma_conn_cfg_get_srq(cfg, NULL));
	(void) rpma_conn_cfg_delete(&cfg);
}

static void
probe_srq_cfg_defaults(char *line, int a, int b)
{
	struct rpma_srq_cfg *cfg = NULL;
	uint32_t rq = 7, rcq = 7;

	(void) a;
	(void) b;
	int ret = rpma_srq_cfg_new(&cfg);
	if (ret) {
		OUT("new=%d", ret);
		return;
	}
	int g1 = rpma_srq_cfg_get_rq_size(cfg, &rq);
	int g2 = rpma_srq_cfg_get_rcq_size(cfg, &rcq);
	int del = rpma_srq_cfg_delete(&cfg);
	OUT("get=%d,%d rq=%u rcq=%u del=%d", g1, g2, rq, rcq, del);
}

static void
probe_srq_cfg_sizes(char *line, int a, int b)
{
	struct rpma_srq_cfg *cfg = NULL;
	uint32_t rq = 7, rcq = 7, rq2 = 7, rcq2 = 7;

	(void) a;
	(void) b;
	if (rpma_srq_cfg_new(&cfg)) {
		OUT("new failed");
		return;
	}
	int s1 = rpma_srq_cfg_set_rq_size(cfg, 0);
	int s2 = rpma_srq_cfg_set_rcq_size(cfg, UINT32_MAX);
	int g1 = rpma_srq_cfg_get_rq_size(cfg, &rq);
	int g2 = rpma_srq_cfg_get_rcq_size(cfg, &rcq);
	int s3 = rpma_srq_cfg_set_rq_size(cfg, UINT32_MAX);
	int s4 = rpma_srq_cfg_set_rcq_size(cfg, 0);
	int g3 = rpma_srq_cfg_get_rq_size(cfg, &rq2);
	int g4 = rpma_srq_cfg_get_rcq_size(cfg, &rcq2);
	(void) rpma_srq_cfg_delete(&cfg);
	OUT("%d,%d,%d,%d rq=%u rcq=%u %d,%d,%d,%d rq=%u rcq=%u",
		s1, s2, g1, g2, rq, rcq, s3, s4, g3, g4, rq2, rcq2);
}

static void
probe_srq_cfg_null_args(char *line, int a, int b)
{
	struct rpma_srq_cfg *cfg = NULL, *none = NULL;
	uint32_t u = 0;

	(void) a;
	(void) b;
	if (rpma_srq_cfg_new(&cfg)) {
		OUT("new failed");
		return;
	}
	OUT("new(NULL)=%d delete(NULL)=%d delete(&NULL)=%d set(NULL)=%d,%d "
		"get(NULL)=%d,%d get(NULL out)=%d,%d",
		rpma_srq_cfg_new(NULL), rpma_srq_cfg_delete(NULL),
		rpma_srq_cfg_delete(&none),
		rpma_srq_cfg_set_rq_size(NULL, 1),
		rpma_srq_cfg_set_rcq_size(NULL, 1),
		rpma_srq_cfg_get_rq_size(NULL, &u),
		rpma_srq_cfg_get_rcq_size(NULL, &u),
		rpma_srq_cfg_get_rq_size(cfg, NULL),
		rpma_srq_cfg_get_rcq_size(cfg, NULL));
	(void) rpma_srq_cfg_delete(&cfg);
}

#define P0(name, fn) { name, fn, 0, 0 }
#define P1(fn, name, a) { name, fn, a, 0 }
#define ERR(code) P1(probe_err_2str, "rpma_err_2str(" #code ")", code)
#define EVT(ev) P1(probe_conn_event_2str, "rpma_utils_conn_event_2str(" #ev ")", ev)
#define LOG(t, l) { "rpma_log_set_threshold(" #t "," #l ")", \
		probe_log_set_threshold, t, l }
#define LOG_ROW(t) LOG(t, -2), LOG(t, -1), LOG(t, 0), LOG(t, 1), LOG(t, 2), \
		LOG(t, 3), LOG(t, 4), LOG(t, 5), LOG(t, 6)

static const struct probe probes[] = {
	P0("log_defaults", probe_log_defaults),
	LOG_ROW(0), LOG_ROW(1), LOG_ROW(2),
	P1(probe_log_get_threshold_null, "rpma_log_get_threshold(0,NULL)", 0),
	P1(probe_log_get_threshold_null, "rpma_log_get_threshold(2,NULL)", 2),
	P0("rpma_log_set_function(default)", probe_log_set_function_default),

	ERR(0), ERR(-100000), ERR(-100001), ERR(-100002), ERR(-100003),
	ERR(-100004), ERR(-100005), ERR(-100006), ERR(-100007), ERR(-100008),
	ERR(-100009), ERR(-100010), ERR(-99999), ERR(-1), ERR(1), ERR(-22),
	ERR(INT_MIN), ERR(INT_MAX),

	EVT(-2), EVT(-1), EVT(0), EVT(1), EVT(2), EVT(3), EVT(4), EVT(5),
	EVT(1000), EVT(INT_MAX),

	P0("mr_remote_null_args", probe_mr_remote_null_args),

	P0("peer_cfg_defaults", probe_peer_cfg_defaults),
	P1(probe_peer_cfg_roundtrip, "peer_cfg_roundtrip(false)", 0),
	P1(probe_peer_cfg_roundtrip, "peer_cfg_roundtrip(true)", 1),
	P0("peer_cfg_null_args", probe_peer_cfg_null_args),

	P0("conn_cfg_defaults", probe_conn_cfg_defaults),
	P1(probe_conn_cfg_set_timeout, "rpma_conn_cfg_set_timeout(-1)", -1),
	P1(probe_conn_cfg_set_timeout, "rpma_conn_cfg_set_timeout(INT_MIN)", INT_MIN),
	P1(probe_conn_cfg_set_timeout, "rpma_conn_cfg_set_timeout(0)", 0),
	P1(probe_conn_cfg_set_timeout, "rpma_conn_cfg_set_timeout(INT_MAX)", INT_MAX),
	P1(probe_conn_cfg_queue_sizes, "rpma_conn_cfg_set_cq_size(...)", 0),
	P1(probe_conn_cfg_queue_sizes, "rpma_conn_cfg_set_rcq_size(...)", 1),
	P1(probe_conn_cfg_queue_sizes, "rpma_conn_cfg_set_sq_size(...)", 2),
	P1(probe_conn_cfg_queue_sizes, "rpma_conn_cfg_set_rq_size(...)", 3),
	P0("rpma_conn_cfg_set_compl_channel(true/false)", probe_conn_cfg_compl_channel),
	P0("rpma_conn_cfg_set_srq(cfg,srq)", probe_conn_cfg_set_srq),
	P0("rpma_conn_cfg_set_srq(cfg,NULL)", probe_conn_cfg_set_srq_null),
	P0("conn_cfg_null_args", probe_conn_cfg_null_args),

	P0("srq_cfg_defaults", probe_srq_cfg_defaults),
	P0("srq_cfg_sizes", probe_srq_cfg_sizes),
	P0("srq_cfg_null_args", probe_srq_cfg_null_args),
};

size_t
conf_probe_count(void)
{
	return sizeof(probes) / sizeof(probes[0]);
}

const char *
conf_probe_name(size_t i)
{
	return i < conf_probe_count() ? probes[i].name : NULL;
}

int
conf_eval(int kind, const unsigned char *bytes, size_t size, char *line)
{
	line[0] = '\0';
	switch (kind) {
	case CONF_KIND_MR:
		eval_mr(bytes, size, line);
		return 0;
	case CONF_KIND_PCFG:
		eval_pcfg(bytes, size, line);
		return 0;
	case CONF_KIND_PROBE:
		for (size_t i = 0; i < conf_probe_count(); i++) {
			if (strlen(probes[i].name) == size &&
			    memcmp(probes[i].name, bytes, size) == 0) {
				probes[i].fn(line, probes[i].a, probes[i].b);
				return 0;
			}
		}
		snprintf(line, CONF_LINE_MAX, "unknown probe");
		return -1;
	default:
		snprintf(line, CONF_LINE_MAX, "unknown kind %d", kind);
		return -1;
	}
}
