/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ms_show.c -- a log's stored membership as dump and status show it,
 * offline: one summary and one line per node, or a JSON object
 * (replctl(8) lists the fields).
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>

#include "replctl.h"

void
ms_summary(const struct repl_membership *ms, char *buf, size_t len)
{
	uint32_t n = ms->n_new;

	if (ms->config_epoch == 0)
		snprintf(buf, len, "none stored");
	else if (ms->version == 1)
		snprintf(buf, len, "config epoch %" PRIu64 ", version 1 (no node "
			"ids): k %" PRIu32 " of %" PRIu32 " replicas of the node that "
			"wrote it", ms->config_epoch, ms->k, ms->count);
	else if (ms->flags & REPL_MEMBERSHIP_JOINT)
		snprintf(buf, len, "config epoch %" PRIu64 ", joint (a change in "
			"progress): new k %" PRIu32 " of %" PRIu32 " nodes, old k %"
			PRIu32 " of %" PRIu32 " nodes", ms->config_epoch, ms->k, n,
			ms->k_old, ms->n_old);
	else
		snprintf(buf, len, "config epoch %" PRIu64 ", k %" PRIu32 " of %"
			PRIu32 " nodes%s", ms->config_epoch, ms->k, n,
			(ms->flags & REPL_MEMBERSHIP_FROM_JOINT) ? " (ended a change)" : "");
}

void
ms_nodes_text(FILE *f, const struct repl_membership *ms, const char *indent)
{
	for (uint32_t i = 0; i < ms->count && i < REPL_MEMBERS_MAX; i++) {
		const struct repl_member *m = &ms->nodes[i];
		char addr[64];

		if (m->port)
			snprintf(addr, sizeof(addr), "%s:%u", m->host, m->port);
		else
			snprintf(addr, sizeof(addr), "(no address)");
		fprintf(f, "%snode %-5" PRIu32 " %-24s incarnation %016" PRIx64 " %s%s\n",
			indent, m->node_id, addr, m->incarnation,
			(m->flags & REPL_MEMBER_NEW) ? "new" : "",
			(m->flags & REPL_MEMBER_OLD) ?
				((m->flags & REPL_MEMBER_NEW) ? ",old" : "old") : "");
	}
}

void
ms_json(FILE *f, const struct repl_membership *ms)
{
	fprintf(f, "{\"config_epoch\":%" PRIu64 ",\"version\":%d,\"k\":%" PRIu32
		",\"k_old\":%" PRIu32 ",\"joint\":%s,\"from_joint\":%s,\"nodes\":[",
		ms->config_epoch, ms->version, ms->k,
		ms->k_old, (ms->flags & REPL_MEMBERSHIP_JOINT) ? "true" : "false",
		(ms->flags & REPL_MEMBERSHIP_FROM_JOINT) ? "true" : "false");
	for (uint32_t i = 0; i < ms->count && i < REPL_MEMBERS_MAX; i++) {
		const struct repl_member *m = &ms->nodes[i];

		fprintf(f, "%s{\"node_id\":%" PRIu32 ",\"host\":", i ? "," : "",
			m->node_id);
		json_str(f, m->host);
		fprintf(f, ",\"port\":%u,\"incarnation\":\"%016" PRIx64 "\","
			"\"new\":%s,\"old\":%s}", m->port, m->incarnation,
			(m->flags & REPL_MEMBER_NEW) ? "true" : "false",
			(m->flags & REPL_MEMBER_OLD) ? "true" : "false");
	}
	fprintf(f, "]}");
}
