/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ofi_checks.c -- the checks librpma lacks, on a live ofi tcp connection:
 * each bad call fails with RPMA_E_INVAL (NOSUPP where stated) before
 * anything is posted -- no completion ever arrives for it, the target's
 * memory is untouched and the connection keeps working.  Regions lacking a
 * usage bit, a misaligned remote address or a 64-bit size are described by
 * re-encoding the target's descriptor (rpma/descriptor.h).  Also:
 * rpma_mr_dereg of a region with a read in flight is refused (AGAIN) and
 * succeeds after the completion (the target is stopped meanwhile).
 */
#include <sys/mman.h>

#include "descriptor.h"
#include "ofi_target.h"

#define REGION 65536
#define BIG ((size_t)5 << 30)	/* local, reserved only: > UINT32_MAX */

static int cases;

#define EXPECT(call, want) \
	do { \
		int ret_ = (call); \
		H_CHECK(ret_ == (want), "%s: %s, expected %s", #call, \
			rpma_err_2str(ret_), rpma_err_2str(want)); \
		cases++; \
	} while (0)

static struct rpma_mr_remote *
forge(const struct rpma_mr_desc *orig, int usage, uint64_t raddr_add, uint64_t size,
		enum rpma_mr_desc_format format, enum rpma_ext_transport tr)
{
	struct rpma_mr_desc d = *orig;
	struct rpma_mr_remote *mr = NULL;
	unsigned char buf[64];

	d.usage = usage;
	d.raddr += raddr_add;
	d.size = size;
	d.transport = tr;
	if (format == RPMA_MR_DESC_FORMAT_0)
		d.key &= 0xffffffffu;
	H_CHECK(rpma_mr_desc_encode(&d, format, buf) == 0, "encode");
	H_CHECK(rpma_mr_remote_from_descriptor(buf, rpma_mr_desc_size(format), &mr) == 0,
		"forged descriptor");
	return mr;
}

int
main(void)
{
	struct h_target_cfg tc = {
		.size = REGION,
		.usage = RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_READ_SRC |
			RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY,
	};
	static unsigned char lbuf[3][4096];
	const int I = RPMA_E_INVAL, F = RPMA_F_COMPLETION_ALWAYS;
	struct h_target t;
	struct rpma_peer *peer = NULL;
	struct rpma_mr_local *lw = NULL, *lr = NULL, *ls = NULL, *lbig = NULL;
	struct rpma_mr_remote *rem = NULL, *rem_ro, *rem_wo, *rem_odd, *rem_big,
		*rem_verbs;
	struct rpma_conn_private_data in;
	struct rpma_mr_desc d;
	struct rpma_conn *conn;
	struct rpma_cq *cq;
	struct h_rep r;
	char v[8] = "atomic!";
	void *big;
	unsigned seed = h_seed();
	uint64_t zero_hash;

	(void)seed;
	rpma_log_set_threshold(RPMA_LOG_THRESHOLD_AUX, RPMA_LOG_LEVEL_FATAL);
	h_target_start(&t, &tc);
	H_CHECK(rpma_ext_peer_new_ofi("tcp", &peer) == 0, "peer");
	H_CHECK(rpma_mr_reg(peer, lbuf[0], 4096, RPMA_MR_USAGE_WRITE_SRC, &lw) == 0 &&
		rpma_mr_reg(peer, lbuf[1], 4096, RPMA_MR_USAGE_READ_DST, &lr) == 0 &&
		rpma_mr_reg(peer, lbuf[2], 4096, RPMA_MR_USAGE_SEND | RPMA_MR_USAGE_RECV,
			&ls) == 0, "reg");
	big = mmap(NULL, BIG, PROT_READ | PROT_WRITE,
		MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	H_CHECK(big != MAP_FAILED, "mmap 5 GiB");
	H_CHECK(rpma_mr_reg(peer, big, BIG, RPMA_MR_USAGE_WRITE_SRC | RPMA_MR_USAGE_READ_DST,
		&lbig) == 0, "reg 5 GiB");

	conn = h_connect(peer, t.port, NULL, NULL, &rem);
	H_CHECK(rpma_conn_get_cq(conn, &cq) == 0, "cq");
	H_CHECK(rpma_conn_get_private_data(conn, &in) == 0 &&
		rpma_mr_desc_decode(in.ptr, H_DESC_SIZE, &d) == 0, "decode");
	rem_ro = forge(&d, RPMA_MR_USAGE_READ_SRC | RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY, 0,
		REGION, RPMA_MR_DESC_FORMAT_1, d.transport);
	rem_wo = forge(&d, RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY, 0,
		REGION, RPMA_MR_DESC_FORMAT_1, d.transport);
	rem_odd = forge(&d, d.usage, 4, REGION - 8, RPMA_MR_DESC_FORMAT_1, d.transport);
	rem_big = forge(&d, d.usage, 0, (uint64_t)8 << 30, RPMA_MR_DESC_FORMAT_1,
		d.transport);
	rem_verbs = forge(&d, d.usage, 0, REGION, RPMA_MR_DESC_FORMAT_0,
		RPMA_EXT_TRANSPORT_VERBS);
	zero_hash = h_cmd(&t, H_CMD_HASH, 0, REGION, 0).v[0];

	/* bounds: the local region */
	EXPECT(rpma_write(conn, rem, 0, lw, 4000, 200, F, NULL), I);
	EXPECT(rpma_write(conn, rem, 0, lw, 4097, 0, F, NULL), I);
	EXPECT(rpma_read(conn, lr, 4095, rem, 0, 2, F, NULL), I);
	EXPECT(rpma_send(conn, ls, 4000, 100, F, NULL), I);
	EXPECT(rpma_recv(conn, ls, 4096, 1, NULL), I);
	/* bounds: the remote region, overflow included */
	EXPECT(rpma_write(conn, rem, REGION - 100, lw, 0, 200, F, NULL), I);
	EXPECT(rpma_write(conn, rem, SIZE_MAX - 10, lw, 0, 100, F, NULL), I);
	EXPECT(rpma_read(conn, lr, 0, rem, REGION, 1, F, NULL), I);
	EXPECT(rpma_write_with_imm(conn, rem, REGION - 1, lw, 0, 2, F, 7, NULL), I);
	/* usage bits, local and remote */
	EXPECT(rpma_write(conn, rem_ro, 0, lw, 0, 8, F, NULL), I);	/* no WRITE_DST */
	EXPECT(rpma_write(conn, rem, 0, lr, 0, 8, F, NULL), I);		/* no WRITE_SRC */
	EXPECT(rpma_read(conn, lr, 0, rem_wo, 0, 8, F, NULL), I);	/* no READ_SRC */
	EXPECT(rpma_read(conn, lw, 0, rem, 0, 8, F, NULL), I);		/* no READ_DST */
	EXPECT(rpma_send(conn, lw, 0, 8, F, NULL), I);			/* no SEND */
	EXPECT(rpma_send_with_imm(conn, lw, 0, 8, F, 1, NULL), I);
	EXPECT(rpma_recv(conn, lw, 0, 8, NULL), I);			/* no RECV */
	EXPECT(rpma_write_with_imm(conn, rem_ro, 0, lw, 0, 8, F, 1, NULL), I);
	/* atomic write: alignment of the address, bounds, usage */
	EXPECT(rpma_atomic_write(conn, rem, 4, v, F, NULL), I);
	EXPECT(rpma_atomic_write(conn, rem_odd, 0, v, F, NULL), I);	/* raddr + 0 odd */
	EXPECT(rpma_atomic_write(conn, rem_odd, 8, v, F, NULL), I);
	EXPECT(rpma_atomic_write(conn, rem, REGION, v, F, NULL), I);
	EXPECT(rpma_atomic_write(conn, rem, REGION - 4, v, F, NULL), I);
	EXPECT(rpma_atomic_write(conn, rem_ro, 0, v, F, NULL), I);
	/* flush */
	EXPECT(rpma_flush(conn, rem, 0, 8, (enum rpma_flush_type)2, F, NULL), I);
	EXPECT(rpma_flush(conn, rem, 0, 8, (enum rpma_flush_type)-1, F, NULL), I);
	EXPECT(rpma_flush(conn, rem, 0, 8, RPMA_FLUSH_TYPE_PERSISTENT, F, NULL),
		RPMA_E_NOSUPP);
	EXPECT(rpma_flush(conn, rem, REGION - 8, 16, RPMA_FLUSH_TYPE_VISIBILITY, F, NULL), I);
	/* len > UINT32_MAX, with both regions large enough for it */
	EXPECT(rpma_write(conn, rem_big, 0, lbig, 0, (size_t)1 << 32, F, NULL), I);
	H_CHECK(strstr(rpma_ext_errormsg(), "2^32") != NULL, "why: %s", rpma_ext_errormsg());
	EXPECT(rpma_read(conn, lbig, 0, rem_big, 0, ((size_t)1 << 32) + 8, F, NULL), I);
	EXPECT(rpma_write_with_imm(conn, rem_big, 0, lbig, 0, (size_t)1 << 32, F, 1, NULL), I);
	EXPECT(rpma_flush(conn, rem_big, 0, ((size_t)1 << 32) + 8, RPMA_FLUSH_TYPE_VISIBILITY,
		F, NULL), I);
	/* flags: 0 or unknown bits */
	EXPECT(rpma_write(conn, rem, 0, lw, 0, 8, 0, NULL), I);
	EXPECT(rpma_write(conn, rem, 0, lw, 0, 8, 1 << 5, NULL), I);
	EXPECT(rpma_read(conn, lr, 0, rem, 0, 8, 0, NULL), I);
	EXPECT(rpma_read(conn, lr, 0, rem, 0, 8, F | (1 << 8), NULL), I);
	EXPECT(rpma_send(conn, ls, 0, 8, 0, NULL), I);
	EXPECT(rpma_atomic_write(conn, rem, 0, v, 0, NULL), I);
	EXPECT(rpma_atomic_write(conn, rem, 0, v, 1 << 4, NULL), I);
	EXPECT(rpma_flush(conn, rem, 0, 8, RPMA_FLUSH_TYPE_VISIBILITY, 0, NULL), I);
	EXPECT(rpma_flush(conn, rem, 0, 8, RPMA_FLUSH_TYPE_VISIBILITY, 1 << 2, NULL), I);
	/* a verbs (format 0, 21-byte) descriptor on an ofi connection */
	EXPECT(rpma_write(conn, rem_verbs, 0, lw, 0, 8, F, NULL), I);
	EXPECT(rpma_read(conn, lr, 0, rem_verbs, 0, 8, F, NULL), I);
	EXPECT(rpma_atomic_write(conn, rem_verbs, 0, v, F, NULL), I);
	EXPECT(rpma_flush(conn, rem_verbs, 0, 8, RPMA_FLUSH_TYPE_VISIBILITY, F, NULL), I);
	/* half a 0-byte form */
	EXPECT(rpma_write(conn, NULL, 0, lw, 0, 0, F, NULL), I);
	EXPECT(rpma_read(conn, lr, 0, NULL, 0, 0, F, NULL), I);

	/* nothing was posted: no completion, the target's memory untouched */
	usleep(50000);
	h_expect_empty(cq);
	r = h_cmd(&t, H_CMD_HASH, 0, REGION, 0);
	H_CHECK(r.v[0] == zero_hash, "a refused operation reached the target");
	/* and the connection still works */
	memcpy(lbuf[0], "payload!", 8);
	H_CHECK(rpma_write(conn, rem, REGION - 8, lw, 0, 8, RPMA_F_COMPLETION_ON_ERROR,
		NULL) == 0, "write");
	H_CHECK(rpma_flush(conn, rem, REGION - 8, 8, RPMA_FLUSH_TYPE_VISIBILITY, F,
		(void *)0xF) == 0, "flush");
	h_expect_wc(cq, 0xF, IBV_WC_SUCCESS);
	r = h_cmd(&t, H_CMD_GET8, REGION - 8, 0, 0);
	H_CHECK(memcmp(&r.v[0], "payload!", 8) == 0, "the valid write");
	cases++;

	/* dereg with a read in flight: refused until it completes */
	h_freeze(t.pid);
	H_CHECK(rpma_read(conn, lr, 0, rem, REGION - 8, 8, F, (void *)0xD) == 0, "read");
	EXPECT(rpma_mr_dereg(&lr), RPMA_E_AGAIN);
	H_CHECK(lr != NULL, "dereg cleared the pointer");
	H_CHECK(kill(t.pid, SIGCONT) == 0, "SIGCONT");
	h_expect_wc(cq, 0xD, IBV_WC_SUCCESS);
	H_CHECK(memcmp(lbuf[1], "payload!", 8) == 0, "read bytes");
	EXPECT(rpma_mr_dereg(&lr), 0);

	h_close(&conn);
	rpma_mr_remote_delete(&rem);
	rpma_mr_remote_delete(&rem_ro);
	rpma_mr_remote_delete(&rem_wo);
	rpma_mr_remote_delete(&rem_odd);
	rpma_mr_remote_delete(&rem_big);
	rpma_mr_remote_delete(&rem_verbs);
	H_CHECK(rpma_mr_dereg(&lw) == 0 && rpma_mr_dereg(&ls) == 0 &&
		rpma_mr_dereg(&lbig) == 0, "dereg");
	munmap(big, BIG);
	H_CHECK(rpma_peer_delete(&peer) == 0, "peer delete");
	h_target_stop(&t);
	printf("PASS: %d cases\n", cases);
	return 0;
}
