/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * admin_ha.c -- MAINTENANCE and HISTORY answered (admin_ha.h): the
 * coordinator's answer as the reply replctl(8) documents.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>

#include "admin_ha.h"
#include "admin_req.h"
#include "admin_status.h"
#include "coordinator.h"

_Static_assert(ADMIN_REASON_MAX == COORD_REASON_MAX, "a reason the socket takes "
	"is one etcd's key holds");

json_t *
admin_maintenance_json(struct coordinator *coord, bool on, const char *reason)
{
	struct coord_maint_answer a;

	coordinator_maintenance(coord, on, reason, &a);
	if (a.error != NULL)
		return admin_error_json(a.error, 0, a.message);
	return json_pack("{s:b, s:b, s:b, s:o, s:o, s:o, s:s}", "ok", true,
		"maintenance", a.on, "was_on", a.was_on,
		"node_id", jo_u64(a.m.node_id), "at_ms", jo_u64(a.m.at_ms),
		"reason", jo_str(a.m.reason), "message", a.message);
}

/*
 * One promotion; previous_ms how long the epoch before it lasted, from
 * that one's record to this one's (null for the first listed, or when a
 * node's wall clock put this record before it)
 */
static json_t *
entry_json(const struct coord_history *h, const struct coord_history *prev)
{
	json_t *previous = prev != NULL && h->at_ms >= prev->at_ms ?
		jo_u64(h->at_ms - prev->at_ms) : json_null();

	return json_pack("{s:o, s:o, s:o, s:o, s:o}", "epoch", jo_u64(h->epoch),
		"node_id", jo_u64(h->node_id), "from_lsn", jo_u64(h->from_lsn),
		"at_ms", jo_u64(h->at_ms), "previous_ms", previous);
}

json_t *
admin_history_json(struct coordinator *coord)
{
	struct coord_history_answer *a = malloc(sizeof(*a));
	json_t *list, *o = NULL;

	if (a == NULL)
		return NULL;
	coordinator_history(coord, a);
	if (a->error != NULL) {
		o = admin_error_json(a->error, 0, a->message);
		free(a);
		return o;
	}
	list = json_array();
	for (int i = 0; list != NULL && i < a->list.n; i++)
		if (json_array_append_new(list, entry_json(&a->list.e[i],
				i > 0 ? &a->list.e[i - 1] : NULL)) != 0) {
			json_decref(list);
			list = NULL;
		}
	if (list != NULL)
		o = json_pack("{s:b, s:o, s:i, s:i}", "ok", true, "epochs", list,
			"total", a->list.total, "invalid", a->list.invalid);
	free(a);
	return o;
}
