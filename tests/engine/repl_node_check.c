/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * repl_node_check.c -- the modes of repl-node (see repl_node.c) that work
 * on a log image left behind rather than on a running cluster: show it,
 * forge an old primary's leftovers into it, and check that the images of a
 * primary and its replicas kept every acknowledged record.
 *
 *   repl-node forge PATH N
 *	append N records of junk to the log at PATH (a replica's) in the
 *	previous epoch, as a primary deposed before committing them would
 *	have left them.
 *
 *   repl-node status PATH
 *	"first F last L epoch E tail_epoch T config_epoch C incarnation I"
 *	of a log image (C: of the membership it holds, 0: none; I in hex).
 *
 *   repl-node verify-acks ACKED_FILE PRIMARY REPLICA...
 *	every line of ACKED_FILE is well formed and no LSN was acknowledged
 *	twice differently; every acknowledged LSN the primary still keeps is
 *	in its log with the acknowledged epoch and hash, and no acknowledged
 *	LSN is past its end; every record the primary keeps names its own LSN
 *	and the epoch its header carries, epochs never going down; every
 *	replica's ring is byte-identical to the primary's over the LSNs both
 *	hold, and holds the newest acknowledged LSN.
 *
 *   repl-node verify SEED ACKED_FILE PRIMARY REPLICA...
 *	the same, and every record the primary keeps is byte-exact what a
 *	primary of its epoch under SEED appended.
 *
 * Every image is opened with the crash backend, as the nodes wrote it.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/membership.h"
#include "repl_node.h"
#include "log/wal.h"

#define REC_EPOCH_OFF 24	/* the record header's epoch (wal.c) */
#define REC_HDR_SIZE 40

static uint64_t
get_le64(const unsigned char *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static struct wal *
open_image(const char *path, struct rpma_ext_mem **mem)
{
	struct wal *wal = NULL;

	if (rpma_ext_mem_open(RPMA_EXT_MEM_CRASH, path, 0, 0, mem) ||
	    wal_open(*mem, &wal)) {
		fprintf(stderr, "verify: cannot open %s\n", path);
		exit(1);
	}
	return wal;
}

int
run_status(int argc, char *argv[])
{
	struct rpma_ext_mem *mem = NULL;
	struct wal *wal;
	struct wal_status st;
	struct wal_identity id;
	struct membership ms = { 0 };
	uint64_t ring;

	if (argc != 3)
		return 2;
	wal = open_image(argv[2], &mem);
	wal_status(wal, &st);
	wal_identity(wal, &id, &ring);
	if (membership_load(mem, &ms))
		ms.config_epoch = 0;
	printf("first %llu last %llu epoch %llu tail_epoch %llu config_epoch %llu "
		"incarnation %016llx\n",
		(unsigned long long)st.first_lsn, (unsigned long long)st.last_lsn,
		(unsigned long long)st.epoch, (unsigned long long)wal_tail_epoch(wal),
		(unsigned long long)ms.config_epoch,
		(unsigned long long)id.incarnation);
	wal_close(&wal);
	rpma_ext_mem_close(&mem);
	return 0;
}

struct ack {
	uint64_t epoch, lsn, hash;
};

static int
ack_cmp(const void *a, const void *b)
{
	const struct ack *x = a, *y = b;

	return x->lsn < y->lsn ? -1 : x->lsn > y->lsn;
}

/*
 * The acknowledgements, sorted by LSN, one per LSN; *bad counts the
 * malformed lines and the LSNs acknowledged twice differently.
 */
static struct ack *
read_acks(const char *path, size_t *n_lines, size_t *n_lsns, int *bad)
{
	FILE *f = fopen(path, "r");
	struct ack *a = NULL;
	size_t n = 0, cap = 0, k = 0, lineno = 0;
	char line[256];

	*n_lines = *n_lsns = 0;
	if (f == NULL)
		return NULL;	/* nothing acknowledged yet */
	char cut[256] = "";
	size_t cut_at = 0;

	while (fgets(line, sizeof(line), f)) {
		unsigned long long e, l, h;
		int hat = 0, end = 0;

		lineno++;
		/* exactly as written: "%llu %llu %016llx\n" (a cut hash is short) */
		if (sscanf(line, "%llu %llu %n%llx%n", &e, &l, &hat, &h, &end) != 3 ||
		    end - hat != 16 || line[end] != '\n' || l == 0 || e == 0 ||
		    end != (int)strlen(line) - 1) {
			/* at most one line left pending: it may be a cut one */
			if (cut_at) {
				printf("verify: FAIL: %s line %zu is malformed: %s", path,
					cut_at, cut);
				(*bad)++;
			}
			snprintf(cut, sizeof(cut), "%s", line);
			cut_at = lineno;
			continue;
		}
		if (cut_at) {
			/*
			 * A short line that a newer epoch's follow: its writer was
			 * killed inside a write (the next one ended the line); what
			 * it did not write it never reported.
			 */
			if (n > 0 && e > a[n - 1].epoch) {
				printf("verify: %s line %zu cut off by a kill, skipped: %s",
					path, cut_at, cut);
			} else {
				printf("verify: FAIL: %s line %zu is malformed: %s", path,
					cut_at, cut);
				(*bad)++;
			}
			cut_at = 0;
		}
		if (n == cap) {
			cap = cap ? 2 * cap : 4096;
			a = realloc(a, cap * sizeof(*a));
			if (a == NULL)
				exit(1);
		}
		a[n++] = (struct ack){ e, l, h };
	}
	fclose(f);
	if (cut_at) {
		/* the last line: cut if its writer was killed, else malformed */
		if (strchr(cut, '\n') == NULL) {
			printf("verify: %s line %zu cut off by a kill, skipped: %s\n",
				path, cut_at, cut);
		} else {
			printf("verify: FAIL: %s line %zu is malformed: %s", path,
				cut_at, cut);
			(*bad)++;
		}
	}
	*n_lines = n;
	if (n == 0)
		return a;
	qsort(a, n, sizeof(*a), ack_cmp);
	for (size_t i = 1; i <= n; i++) {
		if (i < n && a[i].lsn == a[k].lsn) {
			if (a[i].epoch != a[k].epoch || a[i].hash != a[k].hash) {
				printf("verify: FAIL: LSN %llu acknowledged twice: epoch "
					"%llu hash %016llx and epoch %llu hash %016llx\n",
					(unsigned long long)a[k].lsn,
					(unsigned long long)a[k].epoch,
					(unsigned long long)a[k].hash,
					(unsigned long long)a[i].epoch,
					(unsigned long long)a[i].hash);
				(*bad)++;
			}
			continue;
		}
		if (i < n)
			a[++k] = a[i];
	}
	*n_lsns = k + 1;
	return a;
}

/* the epoch in the header of record lsn (low 32 bits), 0 if not found */
static uint64_t
header_epoch(struct rpma_ext_mem *m, struct wal *w, uint64_t lsn)
{
	struct wal_identity id;
	struct log_pos p;
	uint64_t ring, off;
	unsigned char *x;

	if (wal_pos_after(w, lsn - 1, &p))
		return 0;
	wal_identity(w, &id, &ring);
	rpma_ext_mem_get_ptr(m, (void **)&x);
	x += WAL_RING_OFF;
	off = p.off;
	/* a WRAP record (flags 1), or no room for a header: it starts at 0 */
	if (ring - off < REC_HDR_SIZE || (get_le64(x + off + 24) >> 32 & 1))
		off = 0;
	if (get_le64(x + off) != lsn)
		return 0;
	return get_le64(x + off + REC_EPOCH_OFF) & 0xffffffffu;
}

/* ring bytes of the records [from, to] */
static int
same_bytes(struct rpma_ext_mem *ma, struct wal *a, struct rpma_ext_mem *mb,
		struct wal *b, uint64_t from, uint64_t to)
{
	struct log_pos pa, pb, ea, eb;
	char *xa, *xb;
	struct wal_identity id;
	uint64_t ring;

	if (wal_pos_after(a, from - 1, &pa) || wal_pos_after(b, from - 1, &pb) ||
	    wal_pos_after(a, to, &ea) || wal_pos_after(b, to, &eb))
		return 0;
	if (memcmp(&pa, &pb, sizeof(pa)) || memcmp(&ea, &eb, sizeof(ea)))
		return 0;
	wal_identity(a, &id, &ring);
	rpma_ext_mem_get_ptr(ma, (void **)&xa);
	rpma_ext_mem_get_ptr(mb, (void **)&xb);
	xa += WAL_RING_OFF;
	xb += WAL_RING_OFF;
	if (pa.lap == ea.lap)
		return memcmp(xa + pa.off, xb + pa.off, ea.off - pa.off) == 0;
	return memcmp(xa + pa.off, xb + pa.off, ring - pa.off) == 0 &&
		memcmp(xa, xb, ea.off) == 0;
}

int
run_forge(int argc, char *argv[])
{
	struct rpma_ext_mem *mem = NULL;
	struct wal *wal;
	unsigned char junk[100];
	struct iovec iov = { junk, sizeof(junk) };
	struct wal_identity id;
	uint64_t lsn = 0, ring;

	if (argc != 4)
		return 2;
	memset(junk, 0xEE, sizeof(junk));
	wal = open_image(argv[2], &mem);
	wal_identity(wal, &id, &ring);
	/* written by the primary of the term before the one it follows */
	if (id.epoch < 0x20000 || wal_set_epoch(wal, id.epoch - 0x10000, id.epoch_inc))
		return 1;
	for (long i = 0; i < atol(argv[3]); i++)
		if (wal_append(wal, &iov, 1, 0, 0, &lsn))
			return 1;
	if (wal_sync(wal, lsn) || wal_set_epoch(wal, id.epoch, id.epoch_inc))
		return 1;
	printf("forge: %s now ends at LSN %llu\n", argv[2], (unsigned long long)lsn);
	wal_close(&wal);
	rpma_ext_mem_close(&mem);
	return 0;
}

/* verify (with_seed) and verify-acks: argv[first] is ACKED_FILE */
int
run_verify(int argc, char *argv[], bool with_seed)
{
	struct rpma_ext_mem *pm = NULL;
	struct wal *pw;
	struct wal_status ps;
	unsigned char got[MAX_LEN], want[MAX_LEN];
	struct ack *acks;
	size_t n_lines, n_lsns, ai = 0, checked = 0, released = 0, exact = 0;
	uint64_t seed = 0, acked = 0, prev_epoch = 0;
	int first = with_seed ? 3 : 2, bad = 0;

	if (argc < first + 2)
		return 2;
	if (with_seed)
		seed = strtoull(argv[2], NULL, 0);
	acks = read_acks(argv[first], &n_lines, &n_lsns, &bad);
	if (n_lsns)
		acked = acks[n_lsns - 1].lsn;
	pw = open_image(argv[first + 1], &pm);
	wal_status(pw, &ps);
	printf("verify: %zu acknowledgements of %zu LSNs, the newest %llu; primary "
		"holds %llu..%llu\n", n_lines, n_lsns, (unsigned long long)acked,
		(unsigned long long)ps.first_lsn, (unsigned long long)ps.last_lsn);
	if (ps.last_lsn < acked) {
		printf("verify: FAIL: the primary lost acknowledged LSNs %llu..%llu\n",
			(unsigned long long)ps.last_lsn + 1, (unsigned long long)acked);
		bad++;
	}
	while (ai < n_lsns && ps.first_lsn && acks[ai].lsn < ps.first_lsn) {
		ai++;
		released++;
	}
	for (uint64_t l = ps.first_lsn; l && l <= ps.last_lsn; l++) {
		size_t len = 0;
		uint64_t e, h;
		int ret;

		if (wal_is_epoch_start(pw, l)) {
			/* a primary's first record: no payload, a newer epoch */
			if (header_epoch(pm, pw, l) < (prev_epoch & 0xffffffffu)) {
				printf("verify: FAIL: LSN %llu starts epoch %llu after "
					"records of epoch %llu\n", (unsigned long long)l,
					(unsigned long long)header_epoch(pm, pw, l),
					(unsigned long long)prev_epoch);
				bad++;
				break;
			}
			exact++;
			continue;
		}
		ret = wal_read(pw, l, got, sizeof(got), &len);
		if (ret || len < PAYLOAD_HDR || len > MAX_LEN) {
			printf("verify: FAIL: primary LSN %llu cannot be read (%d, %zu "
				"bytes)\n", (unsigned long long)l, ret, len);
			bad++;
			break;
		}
		e = get_le64(got);
		h = fnv1a(got, len);
		if (get_le64(got + 8) != l || (e & 0xffffffffu) != header_epoch(pm, pw, l) ||
		    e < prev_epoch) {
			printf("verify: FAIL: primary LSN %llu says it is LSN %llu of "
				"epoch %llu; its header says epoch %llu; the record "
				"before is of epoch %llu\n", (unsigned long long)l,
				(unsigned long long)get_le64(got + 8),
				(unsigned long long)e,
				(unsigned long long)header_epoch(pm, pw, l),
				(unsigned long long)prev_epoch);
			bad++;
			break;
		}
		prev_epoch = e;
		if (with_seed) {
			size_t wl = payload_make(seed, e, l, want);

			if (len != wl || memcmp(got, want, wl)) {
				printf("verify: FAIL: primary LSN %llu is not what the "
					"primary of epoch %llu appended\n",
					(unsigned long long)l, (unsigned long long)e);
				bad++;
				break;
			}
			exact++;
		}
		if (ai < n_lsns && acks[ai].lsn == l) {
			if (acks[ai].epoch != e || acks[ai].hash != h) {
				printf("verify: FAIL: LSN %llu was acknowledged as epoch "
					"%llu hash %016llx; the primary holds epoch %llu "
					"hash %016llx\n", (unsigned long long)l,
					(unsigned long long)acks[ai].epoch,
					(unsigned long long)acks[ai].hash,
					(unsigned long long)e, (unsigned long long)h);
				bad++;
			}
			checked++;
			ai++;
		}
	}
	printf("verify: %zu acknowledged LSNs checked on the primary (%zu released "
		"before its checkpoint)%s\n", checked, released,
		with_seed ? "; every record it keeps byte-exact" : "");
	if (with_seed && ps.first_lsn && exact != ps.last_lsn - ps.first_lsn + 1)
		bad++;
	for (int i = first + 2; i < argc; i++) {
		struct rpma_ext_mem *rm = NULL;
		struct wal *rw = open_image(argv[i], &rm);
		struct wal_status rs;
		uint64_t from, to;

		wal_status(rw, &rs);
		from = rs.first_lsn > ps.first_lsn ? rs.first_lsn : ps.first_lsn;
		to = rs.last_lsn < ps.last_lsn ? rs.last_lsn : ps.last_lsn;
		printf("verify: replica %s holds %llu..%llu; identical over %llu..%llu "
			"(%llu records): ", argv[i], (unsigned long long)rs.first_lsn,
			(unsigned long long)rs.last_lsn, (unsigned long long)from,
			(unsigned long long)to,
			(unsigned long long)(to >= from ? to - from + 1 : 0));
		if (rs.last_lsn < acked || from > to ||
		    !same_bytes(pm, pw, rm, rw, from, to)) {
			printf("NO\n");
			bad++;
		} else {
			printf("yes\n");
		}
		if (rs.last_lsn > ps.last_lsn) {
			printf("verify: FAIL: replica %s holds LSNs the primary does not\n",
				argv[i]);
			bad++;
		}
		wal_close(&rw);
		rpma_ext_mem_close(&rm);
	}
	free(acks);
	wal_close(&pw);
	rpma_ext_mem_close(&pm);
	printf("verify: %s\n", bad ? "FAIL" : "ok");
	return bad ? 1 : 0;
}
