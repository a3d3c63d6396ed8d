/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: the local log's recovery on arbitrary media bytes.
 * The first byte picks the mode: the input as the whole region; the input as
 * the ring behind a valid header; or a log built by appending records whose
 * sizes come from the input, with some released, then bytes flipped at
 * offsets from the input -- near-valid media, where the checks matter; or
 * a valid header whose checkpoint fields (and CRC) come from the input.
 * Whatever the bytes, opening must not crash or read outside the region,
 * and what it recovers must be consistent and readable.  The peer floors
 * in the header copies (peer_floor.h) are read from the same bytes: a
 * table is accepted only if it has one encoding.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "crc32c.h"
#include "mem.h"
#include "log/peer_floor.h"
#include "log/wal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond) do { if (!(cond)) abort(); } while (0)
#define REGION (8192 + 4096)

static int
no_persist(struct rpma_ext_mem *mem, char *addr, size_t len)
{
	(void)mem;
	(void)addr;
	(void)len;
	return 0;
}

static void
no_close(struct rpma_ext_mem *mem)
{
	(void)mem;
}

static void
plain_memcpy(struct rpma_ext_mem *mem, char *dst, const void *src, size_t len)
{
	(void)mem;
	memcpy(dst, src, len);
}

static const struct rpma_mem_ops fuzz_ops = {
	.persist = no_persist, .memcpy = plain_memcpy, .close = no_close,
};

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char region[REGION];
	struct rpma_ext_mem mem = { .ops = &fuzz_ops, .addr = region, .size = REGION };
	struct wal *wal = NULL;
	struct wal_status st;

	if (size < 1)
		return 0;
	memset(region, 0, REGION);
	if ((data[0] & 3) == 2) {
		/* build a log, then damage it */
		struct wal_identity id = { .node_id = 1, .epoch = 1 };
		size_t i = 1;
		uint64_t lsn = 0;

		CHECK(wal_format(&mem, &id) == 0);
		CHECK(wal_open(&mem, &wal) == 0);
		while (i + 2 <= size && data[i] != 0xFF) {
			static char payload[1500];
			struct iovec iov = { payload, (size_t)data[i] * 5 };
			memset(payload, data[i + 1], sizeof(payload));
			if (wal_append(wal, &iov, 1, i, 0, &lsn) == 0 && (data[i + 1] & 1)) {
				CHECK(wal_sync(wal, lsn) == 0);
				if (data[i + 1] & 2)
					CHECK(wal_release(wal, lsn > 2 ? lsn - 2 : 0) == 0);
			}
			i += 2;
		}
		CHECK(wal_sync(wal, lsn) == 0);
		wal_close(&wal);
		for (i++; i + 3 <= size; i += 3) {
			size_t off = ((size_t)data[i] << 8 | data[i + 1]) % REGION;
			region[off] ^= (char)(data[i + 2] | 1);
		}
	} else if ((data[0] & 3) == 3) {
		/* a checkpoint anywhere, with a correct header CRC */
		struct wal_identity id = { .node_id = 1, .epoch = 1 };
		uint32_t crc;

		CHECK(wal_format(&mem, &id) == 0);
		memcpy(region + 64, data + 1, size - 1 < 24 ? size - 1 : 24);
		if (size > 25)
			memcpy(region + 8192, data + 25,
				size - 25 < REGION - 8192 ? size - 25 : REGION - 8192);
		crc = rpma_crc32c(0, region, 108);
		memcpy(region + 108, &crc, 4);
	} else if (data[0] & 1) {
		/* a valid header, then the input as the ring */
		struct wal_identity id = { .node_id = 1, .epoch = 1 };
		CHECK(wal_format(&mem, &id) == 0);
		memcpy(region + 8192, data + 1,
			size - 1 < REGION - 8192 ? size - 1 : REGION - 8192);
	} else {
		memcpy(region, data + 1, size - 1 < REGION ? size - 1 : REGION);
	}
	{
		struct peer_floors t;
		static uint8_t again[PEER_FLOORS_SIZE];
		const char *why;

		CHECK(peer_floors_load(&mem, &t) == 0);
		CHECK(t.count <= PEER_FLOORS_MAX);
		if (t.gen) {
			CHECK(peer_floors_encode(&t, again, &why) == 0);
			CHECK(memcmp(again, region + PEER_FLOORS_OFF, PEER_FLOORS_SIZE) == 0 ||
				memcmp(again, region + 4096 + PEER_FLOORS_OFF,
					PEER_FLOORS_SIZE) == 0);
		}
	}
	if (wal_open(&mem, &wal) != 0)
		return 0;
	wal_status(wal, &st);
	CHECK(st.used <= st.size);
	CHECK(st.durable_lsn == st.last_lsn);
	for (uint64_t l = st.first_lsn; l && l <= st.last_lsn; l++) {
		static char buf[4096];
		size_t len;
		CHECK(wal_read(wal, l, buf, sizeof(buf), &len) == 0);
		CHECK(len <= st.size);
	}
	wal_close(&wal);
	return 0;
}
