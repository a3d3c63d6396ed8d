/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * membership_codec.c -- the membership's encoding (engine/common/membership.h):
 * round trips at the edges, one refusal per rule, each met by the decoder
 * (bytes with a valid checksum) and by the encoder (the same struct), the
 * version 1 reader, the comparison a restart makes (a replaced address is
 * a change), the memberships of a change (J and F), and the log's two
 * copies (a torn store keeps the previous one, a version 1 copy is read).
 */
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "crc32c.h"
#include "common/membership.h"
#include "repl.h"
#include "unit.h"

#define SIZE (1u << 20)

static void
put_le(uint8_t *p, uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* the checksum made right again after a change of the bytes */
static void
restamp(uint8_t *b)
{
	put_le(b + 804, rpma_crc32c(0, b, 804), 4);
}

static struct member
node(uint32_t id, uint16_t flags, const char *host, uint16_t port)
{
	struct member m = { .node_id = id, .flags = flags, .port = port,
		.incarnation = id ? 0x1000 + id : 0 };

	snprintf(m.host, sizeof(m.host), "%s", host);
	return m;
}

/* {1, 2, 3} at 10.0.0.1..3:7000, k 1, epoch 5 */
static struct membership
final3(void)
{
	struct membership ms = { .config_epoch = 5, .k = 1, .count = 3 };

	ms.m[0] = node(1, MEMBER_F_NEW, "10.0.0.1", 7000);
	ms.m[1] = node(2, MEMBER_F_NEW, "10.0.0.2", 7000);
	ms.m[2] = node(3, MEMBER_F_NEW, "10.0.0.3", 7000);
	return ms;
}

static void
round_trip(void)
{
	struct membership ms = final3(), back, j;
	uint8_t a[MEMBERSHIP_SIZE], b[MEMBERSHIP_SIZE];
	const char *why = NULL;

	CU_ASSERT_EQUAL_FATAL(membership_encode(&ms, a, &why), 0);
	CU_ASSERT_EQUAL_FATAL(membership_decode(a, sizeof(a), &back, &why), 0);
	CU_ASSERT_EQUAL(memcmp(&back, &ms, sizeof(ms)), 0);
	CU_ASSERT_EQUAL(membership_encode(&back, b, &why), 0);
	CU_ASSERT_EQUAL(memcmp(a, b, sizeof(a)), 0);
	/* the layout of membership.h */
	CU_ASSERT_EQUAL(memcmp(a, "RPLMEMB\002", 8), 0);
	CU_ASSERT_EQUAL(a[8], 5);
	CU_ASSERT_EQUAL(a[16], 1);
	CU_ASSERT_EQUAL(a[28], 3);
	CU_ASSERT_EQUAL(a[32 + 64 + 0], 2);		/* entry 1: node id */
	CU_ASSERT_EQUAL(a[32 + 64 + 4], MEMBER_F_NEW);
	CU_ASSERT_EQUAL(a[32 + 64 + 6] | a[32 + 64 + 7] << 8, 7000);
	CU_ASSERT_EQUAL(a[32 + 64 + 8], 0x02);		/* incarnation 0x1002 */
	CU_ASSERT_EQUAL(a[32 + 64 + 9], 0x10);
	CU_ASSERT_STRING_EQUAL((char *)a + 32 + 64 + 16, "10.0.0.2");
	/* a node without a control address: by node id only */
	ms.m[2].host[0] = '\0';
	ms.m[2].port = 0;
	CU_ASSERT_EQUAL(membership_encode(&ms, a, &why), 0);
	CU_ASSERT_EQUAL(membership_decode(a, sizeof(a), &back, &why), 0);
	CU_ASSERT_EQUAL(back.m[2].port, 0);
	/* a joint one */
	ms = final3();
	j = ms;
	j.flags = MEMBERSHIP_F_JOINT;
	j.k_old = 1;
	j.m[0].flags = MEMBER_F_NEW | MEMBER_F_OLD;
	j.m[1].flags = MEMBER_F_OLD;
	j.m[2].flags = MEMBER_F_NEW | MEMBER_F_OLD;
	j.m[3] = node(0, MEMBER_F_NEW, "10.0.0.4", 7000);
	j.count = 4;
	CU_ASSERT_EQUAL(membership_encode(&j, a, &why), 0);
	CU_ASSERT_EQUAL(membership_decode(a, sizeof(a), &back, &why), 0);
	CU_ASSERT_EQUAL(memcmp(&back, &j, sizeof(j)), 0);
	CU_ASSERT_EQUAL(membership_nodes(&back, MEMBER_F_NEW), 3);
	CU_ASSERT_EQUAL(membership_nodes(&back, MEMBER_F_OLD), 3);
	/* F names the J it ended by its crc, at offset 800 */
	{
		struct membership f, j2 = j;
		uint32_t jc = membership_crc(&j);

		CU_ASSERT_NOT_EQUAL(jc, 0);
		membership_final(&j, &f);
		CU_ASSERT_EQUAL(f.from_crc, jc);
		CU_ASSERT_EQUAL(membership_encode(&f, b, &why), 0);
		CU_ASSERT_EQUAL((uint32_t)(b[800] | b[801] << 8 | b[802] << 16 |
			(uint32_t)b[803] << 24), jc);
		CU_ASSERT_EQUAL(membership_decode(b, sizeof(b), &back, &why), 0);
		CU_ASSERT_EQUAL(back.from_crc, jc);
		CU_ASSERT_EQUAL(membership_crc(&back), membership_crc(&f));
		/* another J of the same configuration epoch is another one */
		j2.k = 2;
		CU_ASSERT_EQUAL(j2.config_epoch, j.config_epoch);
		CU_ASSERT_NOT_EQUAL(membership_crc(&j2), jc);
		/* none has crc 0 */
		memset(&back, 0, sizeof(back));
		CU_ASSERT_EQUAL(membership_crc(&back), 0);
	}
}

/* the decoder must refuse b (restamped) naming want */
static void
reject(uint8_t *b, const char *want)
{
	struct membership back;
	const char *why = NULL;

	restamp(b);
	CU_ASSERT_EQUAL(membership_decode(b, MEMBERSHIP_SIZE, &back, &why), -1);
	CU_ASSERT_PTR_NOT_NULL_FATAL(why);
	if (strstr(why, want) == NULL) {
		printf("\n  decoder said \"%s\", want \"%s\"\n", why, want);
		CU_FAIL("wrong reason");
	}
}

/* the encoder must refuse ms naming want, and check() agree */
static void
refuse(const struct membership *ms, const char *want)
{
	uint8_t b[MEMBERSHIP_SIZE];
	const char *why = NULL;

	CU_ASSERT_EQUAL(membership_encode(ms, b, &why), -1);
	CU_ASSERT_PTR_NOT_NULL_FATAL(why);
	if (strstr(why, want) == NULL) {
		printf("\n  encoder said \"%s\", want \"%s\"\n", why, want);
		CU_FAIL("wrong reason");
	}
	why = NULL;
	CU_ASSERT_EQUAL(membership_check(ms, &why), -1);
	CU_ASSERT_PTR_NOT_NULL(why);
}

/* a valid encoding of final3() to corrupt */
static void
good(uint8_t *b)
{
	struct membership ms = final3();
	const char *why;

	CU_ASSERT_EQUAL_FATAL(membership_encode(&ms, b, &why), 0);
}

#define E(i, off) (32 + 64 * (i) + (off))

static void
refusals(void)
{
	struct membership ms, back;
	uint8_t b[MEMBERSHIP_SIZE];
	const char *why;

	/* a node id listed twice, whatever its address */
	good(b);
	put_le(b + E(2, 0), 2, 4);
	reject(b, "a node id is listed twice");
	ms = final3();
	ms.m[2].node_id = 2;
	refuse(&ms, "a node id is listed twice");
	/* one address listed twice, whatever the node ids */
	good(b);
	memcpy(b + E(2, 16), "10.0.0.2", 8);
	reject(b, "an address is listed twice");
	ms = final3();
	strcpy(ms.m[2].host, "10.0.0.2");
	refuse(&ms, "an address is listed twice");
	/* OLD only with JOINT */
	good(b);
	put_le(b + E(1, 4), MEMBER_F_NEW | MEMBER_F_OLD, 2);
	reject(b, "in OLD without JOINT");
	ms = final3();
	ms.m[1].flags |= MEMBER_F_OLD;
	refuse(&ms, "in OLD without JOINT");
	/* and NEW on every entry without it */
	ms.m[1].flags = MEMBER_F_OLD;
	refuse(&ms, "OLD without JOINT");
	ms = final3();
	ms.flags = MEMBERSHIP_F_JOINT;
	ms.m[1].flags = MEMBER_F_OLD;
	/* joint: an entry may be in OLD alone; OLD has 1 node, so k_old 0 */
	CU_ASSERT_EQUAL(membership_check(&ms, &why), 0);
	ms.k_old = 1;
	refuse(&ms, "k_old is not below the nodes of OLD");
	/* k below the nodes of NEW, k_old below those of OLD */
	good(b);
	put_le(b + 16, 3, 4);
	reject(b, "k is not below the nodes of NEW");
	ms = final3();
	ms.k = 3;
	refuse(&ms, "k is not below the nodes of NEW");
	ms = final3();
	ms.flags = MEMBERSHIP_F_JOINT;
	ms.m[0].flags = ms.m[1].flags = MEMBER_F_NEW | MEMBER_F_OLD;
	ms.k_old = 2;
	refuse(&ms, "k_old is not below the nodes of OLD");
	ms.k_old = 1;
	CU_ASSERT_EQUAL(membership_check(&ms, &why), 0);
	/* k_old without JOINT */
	good(b);
	put_le(b + 20, 1, 4);
	reject(b, "k_old is not 0 without JOINT");
	/* count 1..12 */
	good(b);
	put_le(b + 28, 0, 4);
	reject(b, "count is not 1 to 12");
	put_le(b + 28, 13, 4);
	reject(b, "count is not 1 to 12");
	ms = final3();
	ms.count = 0;
	refuse(&ms, "count is not 1 to 12");
	ms.count = 13;
	refuse(&ms, "count is not 1 to 12");
	/* hosts: printable, no space, NUL-padded, at most 47 */
	good(b);
	b[E(0, 16 + 2)] = ' ';
	reject(b, "host is not printable");
	good(b);
	b[E(0, 16 + 2)] = 0x7f;
	reject(b, "host is not printable");
	good(b);
	b[E(0, 16 + 20)] = 'x';		/* after the NUL */
	reject(b, "host is not NUL-padded");
	good(b);
	memset(b + E(0, 16), 'h', 48);
	reject(b, "longer than 47");
	good(b);
	memset(b + E(0, 16), 0, 48);	/* no host, port 7000 */
	reject(b, "host is empty but its port is not 0");
	ms = final3();
	strcpy(ms.m[0].host, "a\tb");
	refuse(&ms, "host is not printable");
	memset(ms.m[0].host, 'h', sizeof(ms.m[0].host));
	refuse(&ms, "longer than 47");
	/* a port 0 with a host; no address and no node id */
	good(b);
	put_le(b + E(1, 6), 0, 2);
	reject(b, "port is 0");
	ms = final3();
	ms.m[2].node_id = 0;
	ms.m[2].host[0] = '\0';
	ms.m[2].port = 0;
	refuse(&ms, "neither an address nor a node id");
	/* node ids are epochs' low 16 bits */
	good(b);
	put_le(b + E(0, 0), 65536, 4);
	reject(b, "node_id is above 65535");
	/* entry flags */
	good(b);
	put_le(b + E(0, 4), 0, 2);
	reject(b, "flags are 0");
	put_le(b + E(0, 4), 4 | MEMBER_F_NEW, 2);
	reject(b, "unknown flags");
	/* membership flags */
	good(b);
	put_le(b + 24, MEMBERSHIP_F_JOINT | MEMBERSHIP_F_FROM_JOINT, 4);
	reject(b, "JOINT and FROM_JOINT together");
	put_le(b + 24, 4, 4);
	reject(b, "unknown flags");
	/* config epoch, reserved, padding past count, magic, checksum */
	good(b);
	put_le(b + 8, 0, 8);
	reject(b, "config_epoch is 0");
	good(b);
	b[800] = 1;	/* from_crc without FROM_JOINT */
	reject(b, "from_crc is not 0 without FROM_JOINT");
	good(b);
	b[E(3, 40)] = 1;
	reject(b, "past the last entry");
	good(b);
	b[7] = 1;
	reject(b, "bad magic");
	good(b);
	b[E(1, 17)] ^= 1;	/* not restamped */
	CU_ASSERT_EQUAL(membership_decode(b, sizeof(b), &back, &why), -1);
	CU_ASSERT_PTR_NOT_NULL_FATAL(why);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "checksum mismatch"));
	CU_ASSERT_EQUAL(membership_decode(b, sizeof(b) - 1, &back, &why), -1);
	/* a version 1 struct is never written */
	ms = final3();
	ms.v1 = true;
	refuse(&ms, "version 1");
}

/* a version 1 copy, as the old encoder wrote it */
static void
v1_image(uint8_t *b, uint64_t epoch, uint32_t k, int n)
{
	memset(b, 0, MEMBERSHIP_SIZE);
	memcpy(b, "RPLMEMB\001", 8);
	put_le(b + 8, epoch, 8);
	put_le(b + 16, k, 4);
	put_le(b + 20, (uint64_t)n, 4);
	for (int i = 0; i < n; i++) {
		put_le(b + 24 + 64 * i + 4, 7000 + (uint64_t)i, 2);
		snprintf((char *)b + 24 + 64 * i + 8, 56, "replica-%d", i);
	}
	put_le(b + 540, rpma_crc32c(0, b, 540), 4);
}

static void
version1(void)
{
	struct membership ms;
	uint8_t b[MEMBERSHIP_SIZE];
	const char *why = NULL;

	v1_image(b, 7, 1, 2);
	CU_ASSERT_EQUAL_FATAL(membership_decode_v1(b, sizeof(b), &ms, &why), 0);
	CU_ASSERT(ms.v1);
	CU_ASSERT_EQUAL(ms.config_epoch, 7);
	CU_ASSERT_EQUAL(ms.k, 1);
	CU_ASSERT_EQUAL(ms.count, 2);
	CU_ASSERT_EQUAL(ms.m[1].node_id, 0);
	CU_ASSERT_EQUAL(ms.m[1].port, 7001);
	CU_ASSERT_STRING_EQUAL(ms.m[1].host, "replica-1");
	CU_ASSERT_EQUAL(ms.m[1].flags, MEMBER_F_NEW);
	/* the version 2 decoder does not take it */
	CU_ASSERT_EQUAL(membership_decode(b, sizeof(b), &ms, &why), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "bad magic"));
	/* its own checks */
	v1_image(b, 7, 3, 2);
	CU_ASSERT_EQUAL(membership_decode_v1(b, sizeof(b), &ms, &why), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "quorum above the members"));
	v1_image(b, 7, 1, 2);
	b[24 + 8] = ' ';
	put_le(b + 540, rpma_crc32c(0, b, 540), 4);
	CU_ASSERT_EQUAL(membership_decode_v1(b, sizeof(b), &ms, &why), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "not printable"));
	v1_image(b, 7, 1, 2);
	b[100] ^= 1;
	CU_ASSERT_EQUAL(membership_decode_v1(b, sizeof(b), &ms, &why), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "checksum"));
}

static void
same(void)
{
	struct membership a = final3(), b = final3();

	CU_ASSERT(membership_same(&a, &b, 1));
	/* another order, other incarnations, another epoch: the same */
	b.m[1] = a.m[2];
	b.m[2] = a.m[1];
	b.m[2].incarnation = 99;
	b.config_epoch = 9;
	b.flags = MEMBERSHIP_F_FROM_JOINT;
	CU_ASSERT(membership_same(&a, &b, 1));
	/* node ids not known on one side: by address */
	b = final3();
	b.m[1].node_id = b.m[2].node_id = 0;
	CU_ASSERT(membership_same(&a, &b, 1));
	/* C5: node 3 replaced by another address, n and k unchanged */
	strcpy(b.m[2].host, "10.0.0.4");
	CU_ASSERT(!membership_same(&a, &b, 1));
	/* where both know the node id, the address must agree too */
	b = final3();
	b.m[2].port = 7001;
	CU_ASSERT(!membership_same(&a, &b, 1));
	/* but this node's own entry matches by node id alone */
	b = final3();
	b.m[0].port = 7009;
	CU_ASSERT(membership_same(&a, &b, 1));
	CU_ASSERT(!membership_same(&a, &b, 2));
	/* k, one node more, joint: changes */
	b = final3();
	b.k = 2;
	CU_ASSERT(!membership_same(&a, &b, 1));
	b = final3();
	b.m[3] = node(4, MEMBER_F_NEW, "10.0.0.4", 7000);
	b.count = 4;
	CU_ASSERT(!membership_same(&a, &b, 1));
	/* membership_find: by node id where the entry has one, else address */
	b.m[3].node_id = 0;
	CU_ASSERT_EQUAL(membership_find(&b, 2, "elsewhere", 1), 1);
	CU_ASSERT_EQUAL(membership_find(&b, 9, "10.0.0.2", 7000), -1);
	CU_ASSERT_EQUAL(membership_find(&b, 9, "10.0.0.4", 7000), 3);
	CU_ASSERT_EQUAL(membership_find(&b, 0, "10.0.0.4", 7001), -1);
}

static void
change(void)
{
	struct membership s = final3(), t = final3(), j, f;
	const char *why = NULL;

	/* T: node 3 replaced by a node at 10.0.0.4 (id not known yet) */
	t.m[2] = node(0, MEMBER_F_NEW, "10.0.0.4", 7000);
	t.k = 1;
	CU_ASSERT_EQUAL_FATAL(membership_joint(&s, &t, 1, &j, &why), 0);
	CU_ASSERT_EQUAL(j.config_epoch, 6);
	CU_ASSERT_EQUAL(j.flags, MEMBERSHIP_F_JOINT);
	CU_ASSERT_EQUAL(j.count, 4);
	CU_ASSERT_EQUAL(j.k, 1);
	CU_ASSERT_EQUAL(j.k_old, 1);
	CU_ASSERT_EQUAL(j.m[0].flags, MEMBER_F_NEW | MEMBER_F_OLD);
	CU_ASSERT_EQUAL(j.m[1].flags, MEMBER_F_NEW | MEMBER_F_OLD);
	CU_ASSERT_EQUAL(j.m[2].flags, MEMBER_F_OLD);
	CU_ASSERT_EQUAL(j.m[2].node_id, 3);
	CU_ASSERT_EQUAL(j.m[3].flags, MEMBER_F_NEW);
	CU_ASSERT_STRING_EQUAL(j.m[3].host, "10.0.0.4");
	CU_ASSERT_EQUAL(membership_check(&j, &why), 0);
	/* J leaves node 3 out (old only); the new node's id is not known
	 * yet, so a node not named by id may be it: not left out */
	CU_ASSERT(membership_leaves_out(&j, 3));
	CU_ASSERT(!membership_leaves_out(&j, 1));
	CU_ASSERT(!membership_leaves_out(&j, 9));
	CU_ASSERT(!membership_leaves_out(&j, 0));
	membership_final(&j, &f);
	/* F names every node by id but 10.0.0.4: 3 may be it */
	CU_ASSERT(!membership_leaves_out(&f, 3));
	f.m[2].node_id = 4;
	CU_ASSERT(membership_leaves_out(&f, 3));
	CU_ASSERT(!membership_leaves_out(&f, 4));
	f.m[2].node_id = 0;
	CU_ASSERT_EQUAL(f.config_epoch, 7);
	CU_ASSERT_EQUAL(f.flags, MEMBERSHIP_F_FROM_JOINT);
	CU_ASSERT_EQUAL(f.count, 3);
	CU_ASSERT_EQUAL(f.k_old, 0);
	CU_ASSERT(membership_same(&f, &t, 1));
	CU_ASSERT_EQUAL(membership_check(&f, &why), 0);
	/* a node that moved (same node id, new address) is one entry */
	t = final3();
	t.m[2].port = 7100;
	CU_ASSERT_EQUAL_FATAL(membership_joint(&s, &t, 1, &j, &why), 0);
	CU_ASSERT_EQUAL(j.count, 3);
	CU_ASSERT_EQUAL(j.m[2].port, 7100);
	/* another node where an old one was: the old one loses the address */
	t = final3();
	t.m[2].node_id = 4;
	CU_ASSERT_EQUAL_FATAL(membership_joint(&s, &t, 1, &j, &why), 0);
	CU_ASSERT_EQUAL(j.count, 4);
	CU_ASSERT_EQUAL(j.m[2].node_id, 3);
	CU_ASSERT_EQUAL(j.m[2].port, 0);
	CU_ASSERT_EQUAL(j.m[3].port, 7000);
	/* more than 12 nodes together */
	s.count = 7;
	t.count = 7;
	for (uint32_t i = 0; i < 7; i++) {
		char h[16];

		snprintf(h, sizeof(h), "s%u", i);
		s.m[i] = node(10 + i, MEMBER_F_NEW, h, 7000);
		snprintf(h, sizeof(h), "t%u", i);
		t.m[i] = node(i ? 20 + i : 10, MEMBER_F_NEW, h, 7000);
	}
	CU_ASSERT_EQUAL(membership_joint(&s, &t, 10, &j, &why), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "more than 12"));
}

/* the log's copies: the newer valid one wins; a version 1 one is read */
static void
log_copies(void)
{
	char path[128];
	struct rpma_ext_mem *mem = NULL;
	struct membership a = final3(), got;
	uint8_t *base, v1[MEMBERSHIP_SIZE];

	snprintf(path, sizeof(path), "/dev/shm/rpma-memb-codec-%d", (int)getpid());
	CU_ASSERT_FATAL(rpma_ext_mem_open(RPMA_EXT_MEM_CRASH, path, SIZE,
		RPMA_EXT_MEM_CREATE, &mem) == 0);
	rpma_ext_mem_get_ptr(mem, (void **)&base);
	membership_load(mem, &got);
	CU_ASSERT_EQUAL(got.config_epoch, 0);
	/* a version 1 copy in copy A, epoch 4 */
	v1_image(v1, 4, 1, 2);
	memcpy(base + MEMBERSHIP_OFF, v1, MEMBERSHIP_SIZE);
	membership_load(mem, &got);
	CU_ASSERT(got.v1 && got.config_epoch == 4 && got.count == 2);
	/* a version 2 store goes to copy B and wins */
	CU_ASSERT_EQUAL(membership_store(mem, &a), 0);
	membership_load(mem, &got);
	CU_ASSERT(!got.v1 && got.config_epoch == 5);
	CU_ASSERT_EQUAL(memcmp(base + MEMBERSHIP_OFF, v1, MEMBERSHIP_SIZE), 0);
	/* the next goes over the version 1 copy; torn, epoch 5 stays */
	a.config_epoch = 6;
	CU_ASSERT_EQUAL(membership_store(mem, &a), 0);
	CU_ASSERT_EQUAL(base[MEMBERSHIP_OFF + 8], 6);
	base[MEMBERSHIP_OFF + 804] ^= 0x5a;
	membership_load(mem, &got);
	CU_ASSERT_EQUAL(got.config_epoch, 5);
	/* an invalid membership is not stored */
	a.k = 3;
	CU_ASSERT_EQUAL(membership_store(mem, &a), REPL_E_INVAL);
	membership_load(mem, &got);
	CU_ASSERT_EQUAL(got.config_epoch, 5);
	rpma_ext_mem_close(&mem);
	unlink(path);
}

UNIT_MAIN("membership_codec",
	UNIT_CASE(round_trip),
	UNIT_CASE(refusals),
	UNIT_CASE(version1),
	UNIT_CASE(same),
	UNIT_CASE(change),
	UNIT_CASE(log_copies))
