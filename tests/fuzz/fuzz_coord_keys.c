/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: the coordinator's key values (tools/repld/coord_keys.c)
 * from arbitrary bytes, as etcd may hold them (another version, an
 * operator's etcdctl, a restored backup).  Besides "no crash, no leak":
 * a value refused leaves nothing behind (node id 0), and a value accepted
 * is within its bounds and, written again, reads back the same (the
 * membership, maintenance and history keys included).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "coord_keys.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond) do { if (!(cond)) abort(); } while (0)

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *v = (const char *)data;
	char buf[COORD_VALUE_MAX];
	struct coord_leader_value lv, lv2;
	struct coord_member m, m2;
	struct coord_switchover sw, sw2;
	struct coord_maintenance mt, mt2;
	struct coord_history h, h2;
	static struct coord_membership ms, ms2;
	static char mbuf[COORD_MEMBERSHIP_VALUE_MAX];
	size_t n;

	if (coord_leader_parse(v, size, &lv)) {
		CHECK(lv.node_id >= 1 && lv.node_id <= 65535);
		CHECK(strcmp(lv.state, "primary") == 0 || strcmp(lv.state, "promoting") == 0);
		/* an address kept is one a client can split; else none */
		CHECK(lv.ctl_addr[0] == '\0' || coord_ctl_addr_split(lv.ctl_addr, NULL, NULL));
		n = coord_leader_value(lv.node_id, lv.epoch, lv.state,
			lv.ctl_addr[0] ? lv.ctl_addr : "h:1", buf, sizeof(buf));
		CHECK(n > 0 && coord_leader_parse(buf, n, &lv2));
		CHECK(lv2.node_id == lv.node_id && lv2.epoch == lv.epoch);
		CHECK(strcmp(lv2.ctl_addr, lv.ctl_addr[0] ? lv.ctl_addr : "h:1") == 0);
	} else {
		CHECK(lv.node_id == 0);
	}
	if (coord_member_parse(v, size, &m)) {
		CHECK(m.node_id >= 1 && m.node_id <= 65535);
		n = coord_member_value(&m, "h:1", buf, sizeof(buf));
		CHECK(n > 0 && coord_member_parse(buf, n, &m2));
		CHECK(coord_member_same(&m, &m2) && m.last_lsn == m2.last_lsn);
	} else {
		CHECK(m.node_id == 0);
	}
	if (coord_switchover_parse(v, size, &sw)) {
		n = coord_switchover_value(sw.from, sw.to, sw.failover, buf, sizeof(buf));
		CHECK(n > 0 && coord_switchover_parse(buf, n, &sw2));
		CHECK(sw2.from == sw.from && sw2.to == sw.to && sw2.failover == sw.failover);
	} else {
		CHECK(sw.from == 0 && sw.to == 0);
	}
	if (coord_maintenance_parse(v, size, &mt)) {
		CHECK(mt.node_id >= 1 && mt.node_id <= 65535 &&
			coord_reason_ok(mt.reason, strlen(mt.reason)));
		n = coord_maintenance_value(mt.node_id, mt.at_ms, mt.reason, buf,
			sizeof(buf));
		CHECK(n > 0 && coord_maintenance_parse(buf, n, &mt2));
		CHECK(mt2.node_id == mt.node_id && mt2.at_ms == mt.at_ms &&
			strcmp(mt2.reason, mt.reason) == 0);
	} else {
		CHECK(mt.node_id == 0 && mt.reason[0] == '\0');
	}
	{
		uint32_t ar = 99, ar2 = 0;

		if (coord_archiver_parse(v, size, &ar)) {
			CHECK(ar >= 1 && ar <= 65535);
			n = coord_archiver_value(ar, buf, sizeof(buf));
			CHECK(n > 0 && coord_archiver_parse(buf, n, &ar2) && ar2 == ar);
		} else {
			CHECK(ar == 0);
		}
	}
	if (coord_history_parse(v, size, &h)) {
		CHECK(h.node_id >= 1 && h.node_id <= 65535 && h.epoch >= 1);
		n = coord_history_value(h.node_id, h.epoch, h.from_lsn, buf, sizeof(buf));
		CHECK(n > 0 && coord_history_parse(buf, n, &h2));
		CHECK(h2.node_id == h.node_id && h2.epoch == h.epoch &&
			h2.from_lsn == h.from_lsn);
	} else {
		CHECK(h.node_id == 0 && h.epoch == 0);
	}
	if (coord_membership_parse(v, size, &ms)) {
		CHECK(ms.config_epoch >= 1 && ms.n >= 1 && ms.n <= COORD_MEMBERS_MAX &&
			ms.quorum < (uint32_t)ms.n);
		n = coord_membership_value(&ms, mbuf, sizeof(mbuf));
		CHECK(n > 0 && coord_membership_parse(mbuf, n, &ms2));
		CHECK(coord_membership_same(&ms, &ms2) && coord_membership_same(&ms2, &ms));
	} else {
		CHECK(ms.n == 0 && ms.config_epoch == 0);
	}
	return 0;
}
