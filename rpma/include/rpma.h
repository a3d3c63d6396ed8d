/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rpma.h -- the public API of librpmacore, the embedded RPMA core of
 * rpma-repl.
 *
 * Names, signatures, constants and error codes follow librpma 1.x, so a
 * librpma program ports by recompiling against this header.  Calls and
 * constants that librpma does not have are named rpma_ext_* / RPMA_EXT_*
 * and are documented as extensions in their man pages.
 *
 * Every function returns 0 on success or a negative RPMA_E_* code (the two
 * *_2str functions and rpma_ext_errormsg return strings).  Output pointers
 * are written only on success.  Where this core deliberately behaves
 * differently from librpma 1.2, docs/librpma-differences.md lists it.
 */
#ifndef RPMA_H
#define RPMA_H 1

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>

#ifdef __cplusplus
extern "C" {
#endif

/* error codes (librpma 1.x values) */
#define RPMA_E_UNKNOWN		(-100000)
#define RPMA_E_NOSUPP		(-100001)
#define RPMA_E_PROVIDER		(-100002)
#define RPMA_E_NOMEM		(-100003)
#define RPMA_E_INVAL		(-100004)
#define RPMA_E_NO_COMPLETION	(-100005)
#define RPMA_E_NO_EVENT		(-100006)
#define RPMA_E_AGAIN		(-100007)
#define RPMA_E_SHARED_CHANNEL	(-100008)
#define RPMA_E_NOT_SHARED_CHNL	(-100009)

const char *rpma_err_2str(int ret);

/* memory-region usage bits; serialised as one byte in descriptor format 0 */
#define RPMA_MR_USAGE_READ_SRC			(1 << 0)
#define RPMA_MR_USAGE_READ_DST			(1 << 1)
#define RPMA_MR_USAGE_WRITE_SRC			(1 << 2)
#define RPMA_MR_USAGE_WRITE_DST			(1 << 3)
#define RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY	(1 << 4)
#define RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT	(1 << 5)
#define RPMA_MR_USAGE_SEND			(1 << 6)
#define RPMA_MR_USAGE_RECV			(1 << 7)

/* operation flags */
#define RPMA_F_COMPLETION_ON_ERROR	(1 << 0)
#define RPMA_F_COMPLETION_ALWAYS	((1 << 1) | RPMA_F_COMPLETION_ON_ERROR)

/* kept for source compatibility; nothing uses it (as in librpma) */
#define RPMA_W_WAIT_FOR_COMPLETION	(1 << 0)

#define RPMA_DEFAULT_TIMEOUT_MS		1000
#define RPMA_ATOMIC_WRITE_ALIGNMENT	8

enum rpma_flush_type {
	RPMA_FLUSH_TYPE_PERSISTENT = 0,
	RPMA_FLUSH_TYPE_VISIBILITY = 1,
};

enum rpma_conn_event {
	RPMA_CONN_UNDEFINED = -1,
	RPMA_CONN_ESTABLISHED = 0,
	RPMA_CONN_CLOSED = 1,
	RPMA_CONN_LOST = 2,
	RPMA_CONN_REJECTED = 3,
	RPMA_CONN_UNREACHABLE = 4,
};

const char *rpma_utils_conn_event_2str(enum rpma_conn_event conn_event);

enum rpma_util_ibv_context_type {
	RPMA_UTIL_IBV_CONTEXT_LOCAL = 0,
	RPMA_UTIL_IBV_CONTEXT_REMOTE = 1,
};

/* opaque objects */
struct rpma_peer;
struct rpma_peer_cfg;
struct rpma_mr_local;
struct rpma_mr_remote;
struct rpma_conn_cfg;
struct rpma_srq_cfg;
struct rpma_srq;
struct rpma_ep;
struct rpma_conn_req;
struct rpma_conn;
struct rpma_cq;

struct rpma_conn_private_data {
	void *ptr;
	uint8_t len;
};

/* ------------------------------------------------------------------ */
/* logging (process-wide)                                              */

enum rpma_log_level {
	RPMA_LOG_DISABLED = -1,
	RPMA_LOG_LEVEL_FATAL = 0,
	RPMA_LOG_LEVEL_ERROR = 1,
	RPMA_LOG_LEVEL_WARNING = 2,
	RPMA_LOG_LEVEL_NOTICE = 3,
	RPMA_LOG_LEVEL_INFO = 4,
	RPMA_LOG_LEVEL_DEBUG = 5,
};

enum rpma_log_threshold {
	RPMA_LOG_THRESHOLD = 0,		/* what reaches the log function */
	RPMA_LOG_THRESHOLD_AUX = 1,	/* what the default function prints on stderr */
	RPMA_LOG_THRESHOLD_MAX = 2,
};

typedef void rpma_log_function(enum rpma_log_level level, const char *file_name,
		const int line_no, const char *function_name,
		const char *message_format, ...);

#define RPMA_LOG_USE_DEFAULT_FUNCTION (NULL)

int rpma_log_set_function(rpma_log_function *log_function);
int rpma_log_set_threshold(enum rpma_log_threshold threshold,
		enum rpma_log_level level);
int rpma_log_get_threshold(enum rpma_log_threshold threshold,
		enum rpma_log_level *level);
/* extension: a message of a layer above the core, through the same hook */
__attribute__((format(printf, 5, 6)))
int rpma_ext_log(enum rpma_log_level level, const char *file_name, int line_no,
		const char *function_name, const char *message_format, ...);

/* ------------------------------------------------------------------ */
/* peer configuration (the 1-byte descriptor is librpma-compatible)    */

int rpma_peer_cfg_new(struct rpma_peer_cfg **pcfg_ptr);
int rpma_peer_cfg_delete(struct rpma_peer_cfg **pcfg_ptr);
int rpma_peer_cfg_set_direct_write_to_pmem(struct rpma_peer_cfg *pcfg,
		bool supported);
int rpma_peer_cfg_get_direct_write_to_pmem(const struct rpma_peer_cfg *pcfg,
		bool *supported);
int rpma_peer_cfg_get_descriptor(const struct rpma_peer_cfg *pcfg, void *desc);
int rpma_peer_cfg_get_descriptor_size(const struct rpma_peer_cfg *pcfg,
		size_t *desc_size);
int rpma_peer_cfg_from_descriptor(const void *desc, size_t desc_size,
		struct rpma_peer_cfg **pcfg_ptr);

/* ------------------------------------------------------------------ */
/* remote memory regions, built from a peer's descriptor              */

int rpma_mr_remote_from_descriptor(const void *desc, size_t desc_size,
		struct rpma_mr_remote **mr_ptr);
int rpma_mr_remote_delete(struct rpma_mr_remote **mr_ptr);
int rpma_mr_remote_get_size(const struct rpma_mr_remote *mr, size_t *size);
/* returns usage bits (RPMA_MR_USAGE_FLUSH_TYPE_*), not enum rpma_flush_type */
int rpma_mr_remote_get_flush_type(const struct rpma_mr_remote *mr,
		int *flush_type);

/* ------------------------------------------------------------------ */
/* connection configuration                                           */

int rpma_conn_cfg_new(struct rpma_conn_cfg **cfg_ptr);
int rpma_conn_cfg_delete(struct rpma_conn_cfg **cfg_ptr);
int rpma_conn_cfg_set_timeout(struct rpma_conn_cfg *cfg, int timeout_ms);
int rpma_conn_cfg_get_timeout(const struct rpma_conn_cfg *cfg, int *timeout_ms);
int rpma_conn_cfg_set_cq_size(struct rpma_conn_cfg *cfg, uint32_t cq_size);
int rpma_conn_cfg_get_cq_size(const struct rpma_conn_cfg *cfg, uint32_t *cq_size);
int rpma_conn_cfg_set_rcq_size(struct rpma_conn_cfg *cfg, uint32_t rcq_size);
int rpma_conn_cfg_get_rcq_size(const struct rpma_conn_cfg *cfg, uint32_t *rcq_size);
int rpma_conn_cfg_set_sq_size(struct rpma_conn_cfg *cfg, uint32_t sq_size);
int rpma_conn_cfg_get_sq_size(const struct rpma_conn_cfg *cfg, uint32_t *sq_size);
int rpma_conn_cfg_set_rq_size(struct rpma_conn_cfg *cfg, uint32_t rq_size);
int rpma_conn_cfg_get_rq_size(const struct rpma_conn_cfg *cfg, uint32_t *rq_size);
int rpma_conn_cfg_set_compl_channel(struct rpma_conn_cfg *cfg, bool shared);
int rpma_conn_cfg_get_compl_channel(const struct rpma_conn_cfg *cfg, bool *shared);
int rpma_conn_cfg_set_srq(struct rpma_conn_cfg *cfg, struct rpma_srq *srq);
int rpma_conn_cfg_get_srq(const struct rpma_conn_cfg *cfg, struct rpma_srq **srq_ptr);

/* ------------------------------------------------------------------ */
/* utilities                                                          */

int rpma_utils_get_ibv_context(const char *addr,
		enum rpma_util_ibv_context_type type,
		struct ibv_context **ibv_ctx_ptr);
int rpma_utils_ibv_context_is_odp_capable(struct ibv_context *ibv_ctx,
		int *is_odp_capable);

/* ------------------------------------------------------------------ */
/* peer: one per device (verbs) or fabric domain (ofi extension)       */

int rpma_peer_new(struct ibv_context *ibv_ctx, struct rpma_peer **peer_ptr);
int rpma_peer_delete(struct rpma_peer **peer_ptr);

/* ------------------------------------------------------------------ */
/* local memory regions                                               */

int rpma_mr_reg(struct rpma_peer *peer, void *ptr, size_t size, int usage,
		struct rpma_mr_local **mr_ptr);
int rpma_mr_dereg(struct rpma_mr_local **mr_ptr);
int rpma_mr_get_descriptor(const struct rpma_mr_local *mr, void *desc);
int rpma_mr_get_descriptor_size(const struct rpma_mr_local *mr,
		size_t *desc_size);
int rpma_mr_get_ptr(const struct rpma_mr_local *mr, void **ptr);
int rpma_mr_get_size(const struct rpma_mr_local *mr, size_t *size);
int rpma_mr_advise(struct rpma_mr_local *mr, size_t offset, size_t len,
		int advice, uint32_t flags);

/* ------------------------------------------------------------------ */
/* listening endpoint                                                 */

int rpma_ep_listen(struct rpma_peer *peer, const char *addr, const char *port,
		struct rpma_ep **ep_ptr);
int rpma_ep_shutdown(struct rpma_ep **ep_ptr);
int rpma_ep_get_fd(const struct rpma_ep *ep, int *fd);
int rpma_ep_next_conn_req(struct rpma_ep *ep, const struct rpma_conn_cfg *cfg,
		struct rpma_conn_req **req_ptr);

/* ------------------------------------------------------------------ */
/* connection requests                                                */

int rpma_conn_req_new(struct rpma_peer *peer, const char *addr,
		const char *port, const struct rpma_conn_cfg *cfg,
		struct rpma_conn_req **req_ptr);
int rpma_conn_req_delete(struct rpma_conn_req **req_ptr);
int rpma_conn_req_connect(struct rpma_conn_req **req_ptr,
		const struct rpma_conn_private_data *pdata,
		struct rpma_conn **conn_ptr);
int rpma_conn_req_recv(struct rpma_conn_req *req, struct rpma_mr_local *dst,
		size_t offset, size_t len, const void *op_context);
int rpma_conn_req_get_private_data(const struct rpma_conn_req *req,
		struct rpma_conn_private_data *pdata);

/* ------------------------------------------------------------------ */
/* connections                                                        */

int rpma_conn_get_event_fd(const struct rpma_conn *conn, int *fd);
int rpma_conn_next_event(struct rpma_conn *conn, enum rpma_conn_event *event);
int rpma_conn_get_private_data(const struct rpma_conn *conn,
		struct rpma_conn_private_data *pdata);
int rpma_conn_apply_remote_peer_cfg(struct rpma_conn *conn,
		const struct rpma_peer_cfg *pcfg);
int rpma_conn_get_qp_num(const struct rpma_conn *conn, uint32_t *qp_num);
int rpma_conn_get_cq(const struct rpma_conn *conn, struct rpma_cq **cq_ptr);
int rpma_conn_get_rcq(const struct rpma_conn *conn, struct rpma_cq **rcq_ptr);
int rpma_conn_get_compl_fd(const struct rpma_conn *conn, int *fd);
int rpma_conn_wait(struct rpma_conn *conn, int flags, struct rpma_cq **cq,
		bool *is_rcq);
int rpma_conn_disconnect(struct rpma_conn *conn);
int rpma_conn_delete(struct rpma_conn **conn_ptr);

int rpma_read(struct rpma_conn *conn, struct rpma_mr_local *dst,
		size_t dst_offset, const struct rpma_mr_remote *src,
		size_t src_offset, size_t len, int flags, const void *op_context);
int rpma_write(struct rpma_conn *conn, struct rpma_mr_remote *dst,
		size_t dst_offset, const struct rpma_mr_local *src,
		size_t src_offset, size_t len, int flags, const void *op_context);
int rpma_write_with_imm(struct rpma_conn *conn, struct rpma_mr_remote *dst,
		size_t dst_offset, const struct rpma_mr_local *src,
		size_t src_offset, size_t len, int flags, uint32_t imm,
		const void *op_context);
int rpma_atomic_write(struct rpma_conn *conn, struct rpma_mr_remote *dst,
		size_t dst_offset, const char src[8], int flags,
		const void *op_context);
int rpma_flush(struct rpma_conn *conn, struct rpma_mr_remote *dst,
		size_t dst_offset, size_t len, enum rpma_flush_type type,
		int flags, const void *op_context);
int rpma_send(struct rpma_conn *conn, const struct rpma_mr_local *src,
		size_t offset, size_t len, int flags, const void *op_context);
int rpma_send_with_imm(struct rpma_conn *conn, const struct rpma_mr_local *src,
		size_t offset, size_t len, int flags, uint32_t imm,
		const void *op_context);
int rpma_recv(struct rpma_conn *conn, struct rpma_mr_local *dst, size_t offset,
		size_t len, const void *op_context);

/* ------------------------------------------------------------------ */
/* completion queues: completions are struct ibv_wc on every provider */

int rpma_cq_get_fd(const struct rpma_cq *cq, int *fd);
int rpma_cq_wait(struct rpma_cq *cq);
int rpma_cq_get_wc(struct rpma_cq *cq, int num_entries, struct ibv_wc *wc,
		int *num_entries_got);

/* ------------------------------------------------------------------ */
/* shared receive queues                                              */

int rpma_srq_new(struct rpma_peer *peer, struct rpma_srq_cfg *cfg,
		struct rpma_srq **srq_ptr);
int rpma_srq_delete(struct rpma_srq **srq_ptr);
int rpma_srq_recv(struct rpma_srq *srq, struct rpma_mr_local *dst,
		size_t offset, size_t len, const void *op_context);
int rpma_srq_get_rcq(const struct rpma_srq *srq, struct rpma_cq **rcq_ptr);

/* ------------------------------------------------------------------ */
/* shared receive queue configuration                                 */

int rpma_srq_cfg_new(struct rpma_srq_cfg **cfg_ptr);
int rpma_srq_cfg_delete(struct rpma_srq_cfg **cfg_ptr);
int rpma_srq_cfg_set_rq_size(struct rpma_srq_cfg *cfg, uint32_t rq_size);
int rpma_srq_cfg_get_rq_size(const struct rpma_srq_cfg *cfg, uint32_t *rq_size);
int rpma_srq_cfg_set_rcq_size(struct rpma_srq_cfg *cfg, uint32_t rcq_size);
int rpma_srq_cfg_get_rcq_size(const struct rpma_srq_cfg *cfg, uint32_t *rcq_size);

/* ------------------------------------------------------------------ */
/* extensions (not in librpma)                                        */

/*
 * Why the calling thread's most recent failure that had a reason beyond its
 * error code failed: parsing, I/O, resources, e.g. "descriptor checksum
 * mismatch (stored 0x1234abcd, computed 0x...)".  A NULL or out-of-range
 * argument to a getter or setter records nothing.  Never NULL; "" when
 * nothing was recorded yet.  Read it right after the failing call.
 */
const char *rpma_ext_errormsg(void);

/* transport ids carried by descriptor format 1 (docs/wire-format.md) */
enum rpma_ext_transport {
	RPMA_EXT_TRANSPORT_VERBS = 1,
	RPMA_EXT_TRANSPORT_OFI_TCP = 2,
	RPMA_EXT_TRANSPORT_OFI_NET = 3,
	RPMA_EXT_TRANSPORT_OFI_SHM = 4,
};

/* size in bytes of each descriptor format */
#define RPMA_EXT_MR_DESC_SIZE_V0	21
#define RPMA_EXT_MR_DESC_SIZE_V1	40

/* what a remote region descriptor said, beyond size and flush type */
int rpma_ext_mr_remote_get_usage(const struct rpma_mr_remote *mr, int *usage);
int rpma_ext_mr_remote_get_transport(const struct rpma_mr_remote *mr,
		enum rpma_ext_transport *transport);

/* ------------------------------------------------------------------ */
/* extension: persistence backends                                     */
/*
 * Memory with a persist(range) operation that makes the range durable.
 * The engine keeps its log in one; a replica registers one so that a
 * flush request (GPSPM) is served by persisting the flushed range.
 */
enum rpma_ext_mem_backend {
	/* a file on a DAX filesystem or a device-dax node, via libpmem2:
	 * persist = CPU cache flush (msync where only page granularity) */
	RPMA_EXT_MEM_PMEM = 1,
	/* anonymous (memfd) memory backed by a file: persist = copy the
	 * range to the file + fdatasync; registrable, the mode without PMem */
	RPMA_EXT_MEM_FILE = 2,
	/* for tests: like FILE, the file mapped in /dev/shm and no fdatasync,
	 * so a SIGKILL loses exactly what was not persisted */
	RPMA_EXT_MEM_CRASH = 3,
};

/* rpma_ext_mem_open() flags */
#define RPMA_EXT_MEM_CREATE		(1u << 0) /* create or extend the file */
#define RPMA_EXT_MEM_EVICTION_NOISE	(1u << 1) /* CRASH: each persist also
						     writes random unpersisted
						     64-byte lines, as cache
						     eviction would */

struct rpma_ext_mem;

/* size 0 takes the existing file's size */
int rpma_ext_mem_open(enum rpma_ext_mem_backend backend, const char *path,
		size_t size, unsigned flags, struct rpma_ext_mem **mem_ptr);
int rpma_ext_mem_close(struct rpma_ext_mem **mem_ptr);
int rpma_ext_mem_get_ptr(const struct rpma_ext_mem *mem, void **ptr);
int rpma_ext_mem_get_size(const struct rpma_ext_mem *mem, size_t *size);
int rpma_ext_mem_get_backend(const struct rpma_ext_mem *mem,
		enum rpma_ext_mem_backend *backend);
/* whether a persisted range survives power loss (false for /dev/shm) */
int rpma_ext_mem_is_durable(const struct rpma_ext_mem *mem, bool *durable);
int rpma_ext_mem_persist(struct rpma_ext_mem *mem, size_t offset, size_t len);
/*
 * Copy len bytes from src (not overlapping the region) to offset without
 * making them durable, so that one rpma_ext_mem_persist() over a larger
 * range pays the flush once.  PMEM: libpmem2's memcpy with
 * PMEM2_F_MEM_NOFLUSH.  Until that persist returns, the bytes may or may
 * not survive a crash.
 */
int rpma_ext_mem_memcpy(struct rpma_ext_mem *mem, size_t offset,
		const void *src, size_t len);

/* room for the identifier of every NVDIMM of an interleave set */
#define RPMA_EXT_MEM_DEVICE_ID_MAX	256

/*
 * What libpmem2 could tell at open about the PMem behind a PMEM region;
 * nothing is known for FILE and CRASH.  A flag of 0 means the fields it
 * guards are 0 / empty.  A restarted process compares usc and device_id
 * with the values it saved to detect an unsafe shutdown (data persisted
 * before it may be lost); see libpmem2_unsafe_shutdown(7).
 *
 * The size is fixed: the library fills every byte, reserved ones with 0,
 * and a later version may define fields in reserved[] whose 0 means
 * "not known", so callers built against this header keep working.
 */
struct rpma_ext_mem_health {
	int usc_known;
	int device_id_known;
	int badblocks_known;
	int reserved0;
	/* unsafe shutdown count, summed over the NVDIMMs of the region */
	uint64_t usc;
	/* bad blocks overlapping the mapping, and their bytes inside it */
	uint64_t badblocks;
	uint64_t badblock_bytes;
	/* the NVDIMMs' identifiers, NUL-terminated */
	char device_id[RPMA_EXT_MEM_DEVICE_ID_MAX];
	uint64_t reserved[8];
};

/* the health read at open: no I/O, cheap to call */
int rpma_ext_mem_get_health(const struct rpma_ext_mem *mem,
		struct rpma_ext_mem_health *health);

/*
 * What was made durable since the open: ranges (rpma_ext_mem_persist
 * calls, and the ranges of PERSISTENT flushes served into it, adjacent
 * ones of one batch counted once) and barriers (the backend's costly
 * step: a FILE's fdatasync; CRASH counts where FILE would sync; PMEM one
 * per range).  Flushes that arrive together share one barrier, so
 * barriers below ranges show that they did.
 */
struct rpma_ext_mem_stats {
	uint64_t ranges;
	uint64_t barriers;
	uint64_t reserved[6];
};

int rpma_ext_mem_get_stats(const struct rpma_ext_mem *mem,
		struct rpma_ext_mem_stats *stats);

/* ------------------------------------------------------------------ */
/* extension: one poll over the caller's fds and completion queues     */

struct pollfd;

/*
 * poll(2) over nfds of the caller's fds and n CQs (each at most 32), for
 * at most timeout_ms (-1: no bound, 0: do not sleep).  Every CQ's pending
 * event is taken and the CQ re-armed, as rpma_cq_wait() does; fds[i].revents
 * is set.  Returns how many of the fds and CQs are ready (a ready CQ may
 * have completions: rpma_cq_get_wc() tells), 0 when the time ran out, or
 * a negative RPMA_E_* code.
 */
int rpma_ext_cq_poll(struct rpma_cq *const *cqs, int n, struct pollfd *fds,
		int nfds, int timeout_ms);

/* ------------------------------------------------------------------ */
/* extension: a write and the flush of its range in one post           */

/*
 * rpma_write() of [src_offset, +len) to dst_offset, then rpma_flush() of
 * the same remote range, posted together where the provider can (ofi: one
 * message carries the bytes and the flush request; verbs: one
 * ibv_post_send of both work requests), else one after the other.  flags
 * and op_context are the flush's: one completion (IBV_WC_RDMA_READ, as for
 * rpma_flush) says the range is written and flushed.  The write has no
 * completion of its own; its failure fails the flush, except where the two
 * were posted apart: then it may come as a write's error completion
 * (IBV_WC_RDMA_WRITE) carrying op_context.  len 0 is RPMA_E_INVAL.
 */
int rpma_ext_write_flush(struct rpma_conn *conn, struct rpma_mr_remote *dst,
		size_t dst_offset, const struct rpma_mr_local *src,
		size_t src_offset, size_t len, enum rpma_flush_type type,
		int flags, const void *op_context);

/* ------------------------------------------------------------------ */
/* extension: the libfabric provider and registering backend memory    */

/*
 * A peer on a libfabric provider instead of an RDMA device: "tcp" or
 * "net" (FI_EP_MSG over TCP).  "shm" is refused with RPMA_E_NOSUPP:
 * libfabric 1.17 offers it only as a reliable-datagram endpoint, and its
 * fast path does not check keys.  Everything else in this API then works
 * over that fabric.
 */
int rpma_ext_peer_new_ofi(const char *provider, struct rpma_peer **peer_ptr);

/* which transport a peer uses (verbs or an ofi provider) */
int rpma_ext_peer_get_transport(const struct rpma_peer *peer,
		enum rpma_ext_transport *transport);

/*
 * Register the whole of a persistence backend's memory.  A flush request
 * for PERSISTENT served on this region (GPSPM) persists the range with the
 * backend; a region registered with rpma_mr_reg() can only be made
 * persistent by a CPU cache flush, which assumes the memory is PMem.
 */
int rpma_ext_mr_reg_mem(struct rpma_peer *peer, struct rpma_ext_mem *mem,
		int usage, struct rpma_mr_local **mr_ptr);

/* how rpma_flush() reaches its guarantee on a connection */
enum rpma_ext_flush_method {
	RPMA_EXT_FLUSH_NONE = 0,	/* no flush possible */
	RPMA_EXT_FLUSH_APM = 1,		/* RDMA READ after WRITE (verbs) */
	RPMA_EXT_FLUSH_GPSPM = 2,	/* a request the target's CPU serves */
	RPMA_EXT_FLUSH_NATIVE = 3,	/* ibv_wr_flush (rdma-core >= 45) */
};

int rpma_ext_conn_get_flush_method(const struct rpma_conn *conn,
		enum rpma_flush_type type, enum rpma_ext_flush_method *method);

/*
 * Verbs: give the connection the core's flush service (GPSPM), so that a
 * PERSISTENT flush works without direct write to PMem: the target's core
 * persists the range with the region's backend, then answers.  Both sides
 * must enable it.  Such a connection's receive queue carries the service's
 * messages: rpma_recv() and rpma_conn_req_recv() refuse with NOSUPP, and
 * completions reach the application through the core (rpma_cq_get_fd() is
 * an eventfd).  libfabric connections always have the service.
 */
int rpma_ext_conn_cfg_set_gpspm(struct rpma_conn_cfg *cfg, bool enable);
int rpma_ext_conn_cfg_get_gpspm(const struct rpma_conn_cfg *cfg, bool *enable);

/*
 * The application reaps every completion of the connection itself, in the
 * thread that waits for it: rpma_cq_get_wc() (which makes the provider's
 * progress where it is software), rpma_cq_wait() or rpma_ext_cq_poll().
 * On libfabric no core thread then reads the connection's completions, so
 * a completion wakes nobody but the thread that waits for it; in exchange
 * rpma_cq_get_fd() of its CQs is RPMA_E_NOSUPP (nothing would signal
 * that fd), and requests the peer sends on the connection are served only
 * while the application reaps.  A request of ours whose peer went away is
 * failed when a waiter is about to sleep.  Verbs ignores it: its
 * completions never pass through a core thread.
 */
int rpma_ext_conn_cfg_set_polled(struct rpma_conn_cfg *cfg, bool polled);
int rpma_ext_conn_cfg_get_polled(const struct rpma_conn_cfg *cfg, bool *polled);

/*
 * Fencing a former writer off a target's regions.  An initiator stamps its
 * connection with an epoch (0 until set); every flush request the core
 * sends for it (GPSPM: every ofi flush, verbs flushes on GPSPM
 * connections) carries it.  rpma_ext_peer_fence() raises the target
 * peer's floor: from its return, flush requests of a lower epoch are
 * refused (the initiator's flush completes with IBV_WC_REM_ACCESS_ERR),
 * and none of them is still being carried out.  One-sided writes carry no
 * epoch: deregister the region (or disconnect) to stop those.
 */
int rpma_ext_conn_set_epoch(struct rpma_conn *conn, uint64_t epoch);
int rpma_ext_peer_fence(struct rpma_peer *peer, uint64_t epoch);

#ifdef __cplusplus
}
#endif

#endif /* RPMA_H */
