/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ha_rules.h -- the failover rules as pure functions: from this node's
 * state, what it last read of etcd and the time, to the one thing its
 * coordinator does next.  No I/O, no clock, no randomness: the loop that
 * owns etcd and the node (repld's coordinator.c) gathers the input, runs
 * the step, does what it says and reports back what came of it
 * (ha_campaign_lost, ha_promotion_refused).  The unit tests
 * (tests/ha/ha_rules_test.c) drive every transition and the documented
 * timelines through these functions alone.
 *
 * The leader key decides only who may TRY to promote; whether a promotion
 * may go on is the engine's (n - k + 1 nodes fenced, the most advanced
 * log), so these rules bear on availability, never on an acknowledged
 * record (docs/replication.md, "Automatic failover").
 *
 * A step, by role (the first rule that applies):
 *
 *   any      a change of the node runs (busy), or etcd did not answer
 *            the last call --> NONE (the leases run out by themselves)
 *   primary  a switchover names it as the one to leave --> STEP_DOWN
 *            it holds the key --> KEEP (the membership key in step)
 *            the keys were not read --> NONE
 *            another node holds the key --> STEP_DOWN (its lease ran out
 *              while it was paused or cut from etcd: a new primary exists
 *              or is being made); a value that names no node --> REPORT
 *              once, then NONE
 *            the key is free (or held by an earlier run of this node)
 *              --> HOLD (campaign with "primary")
 *   replica  it holds the key (it stepped down, or was fenced) --> RESIGN
 *            another node holds the key as "primary", and the takeover
 *              rule holds --> TAKE_OVER (revoke that node's lease; the
 *              key is then free and the campaign below follows):
 *              this node is a candidate and a member, its back-off is
 *              over, no switchover is under way, it took over no sooner
 *              than lease_ms ago; its log follows the holder's epoch and
 *              it has heard nothing from a primary for down_ms (its link
 *              is down: the engine drops a primary silent that long);
 *              and the pre-vote: the membership key is read, no live
 *              replica at the holder's epoch reports its link up, and
 *              this node with the live replicas at that epoch whose link
 *              is down make a majority of the membership's replicas;
 *            any other holder --> NONE (leader)
 *            no campaign unless: the keys were read, it is a candidate,
 *              the key is free, its log is a member, its back-off is over,
 *              no switchover names another node or names it as leaving;
 *            and, unless a failover names it: its own link to the primary
 *              is down and no live replica reports one up (the link rule);
 *            and, unless a switchover names it: when the primary it
 *              last followed held no leader key (it runs without a
 *              coordinator, or etcd lost the key) -- or it has followed
 *              none since it started -- lease_ms + down_ms have passed
 *              since it last heard from that primary (or since it
 *              started) (the keyless rule: a node restarted into a
 *              cluster whose primary holds no key, the coordinator being
 *              turned on node by node, does not take over from a healthy
 *              primary it has not connected to yet, nor from one that
 *              restarts to take up its coordinator);
 *            and it is published, ranked r among the live candidates by
 *              (last epoch, last LSN) descending then node id, and r *
 *              lease_ms / 2 has passed since it became eligible (at once
 *              when a switchover names it) --> CAMPAIGN (with
 *              "promoting"; the loop promotes the node when it wins)
 *   other    (closed, stopping) --> NONE
 *
 * Maintenance (the maintenance key exists): a replica's TAKE_OVER, and,
 * unless a switchover or failover is pending (an operator's own request),
 * its CAMPAIGN and its NONE waiting for its rank, become NONE waiting for
 * "maintenance", its memory left as before the step but for eligibility
 * (the rank's delay starts anew once maintenance ends).  Nothing else changes: every step is one the rules
 * without the key could take, or a NONE, so no new way to two primaries
 * or a lost record opens (docs/replication.md, "Maintenance").
 *
 * Every NONE of a replica carries why it waits (ha_wait), which status
 * shows.
 */
#ifndef HA_RULES_H
#define HA_RULES_H

#include <stdbool.h>
#include <stdint.h>

#include "coord_keys.h"

enum ha_role {
	HA_ROLE_OTHER = 0,	/* closed, stopping: the rules do nothing */
	HA_ROLE_PRIMARY,
	HA_ROLE_REPLICA,
};

/* this node's hold on the leader key (ha/coord/leader.h's states) */
enum ha_hold {
	HA_HOLD_NONE = 0,	/* IDLE */
	HA_HOLD_HELD,
	HA_HOLD_LOST,		/* it held it, and etcd says the lease is gone */
};

struct ha_cfg {
	uint32_t node_id;
	bool candidate;		/* coordinator.candidate */
	uint64_t lease_ms;	/* coordinator.etcd.lease_ms */
	uint64_t down_ms;	/* timeouts.down_ms */
};

/* what this node is now, as the loop read it for this step */
struct ha_local {
	enum ha_role role;
	uint64_t epoch, last_lsn;
	/* a primary: a replica's link is up; a replica: it follows a primary */
	bool link_up;
	/* a replica: its log holds a membership and its promise floor */
	bool member;
	/* a replica: ms since it last heard from a primary it followed
	 * (UINT64_MAX: none since it started) */
	uint64_t silent_ms;
	uint64_t config_epoch;	/* a replica's stored membership's (0: none) */
};

struct ha_input {
	uint64_t now_ms;		/* monotonic */
	struct ha_local local;
	bool etcd_ok;			/* the last etcd call was answered */
	const struct coord_keys *keys;	/* NULL: not read (or the read failed) */
	enum ha_hold hold;
	bool busy;			/* a promotion, step-down or carry runs */
};

/* why a replica does not campaign now */
enum ha_wait {
	HA_WAIT_NONE = 0,		/* it campaigns, or it is not a replica */
	HA_WAIT_BUSY,			/* a change of the node runs */
	HA_WAIT_ETCD,			/* etcd does not answer, or was not read */
	HA_WAIT_NOT_CANDIDATE,
	HA_WAIT_LEADER,			/* a node holds the leader key */
	HA_WAIT_NOT_MEMBER,		/* its log holds no membership yet */
	HA_WAIT_BACKOFF,		/* after a refused promotion */
	HA_WAIT_SWITCHOVER,		/* a switchover names another node */
	HA_WAIT_LINK,			/* it follows a primary */
	HA_WAIT_OTHER_LINK,		/* another replica follows one */
	HA_WAIT_KEYLESS,		/* its primary holds no key: give it time */
	HA_WAIT_UNPUBLISHED,		/* etcd does not list it as live yet */
	HA_WAIT_RANK,			/* a more advanced candidate goes first */
	HA_WAIT_MAINTENANCE,		/* it would take over: maintenance holds it */
};

/* the word status and the log show ("" for HA_WAIT_NONE) */
const char *ha_wait_name(enum ha_wait w);

/* the rules' own memory between steps; ha_state_init, then only ha_* */
struct ha_state {
	/*
	 * When a primary was last followed (or this node was one; at first,
	 * when the coordinator started), and whether that primary held no
	 * leader key at the time (at first: true, nothing is known of it).
	 */
	uint64_t heard_ms;
	bool keyless;
	bool eligible;			/* eligible_since_ms is set */
	uint64_t eligible_since_ms;
	uint64_t backoff_until_ms;
	bool foreign_reported;		/* a foreign leader value was reported */
	bool took_over;			/* took_over_ms is set */
	uint64_t took_over_ms;		/* the last TAKE_OVER */
	enum ha_wait wait;		/* the last step's */
};

enum ha_action_kind {
	HA_NONE = 0,
	HA_HOLD,		/* campaign with "primary" */
	HA_KEEP,		/* hold on; keep the membership key in step */
	HA_STEP_DOWN,		/* drain, serve as a replica, then resign */
	HA_RESIGN,		/* give the key back */
	HA_CAMPAIGN,		/* campaign with "promoting"; promote when won */
	HA_REPORT_FOREIGN,	/* the key holds a value that is none of repld's */
	HA_TAKE_OVER,		/* revoke the silent holder's lease */
};

const char *ha_action_name(enum ha_action_kind k);
/* "primary", "replica", "down" (as members/<id> publishes it) */
const char *ha_role_name(enum ha_role r);

struct ha_action {
	enum ha_action_kind kind;
	/* HA_CAMPAIGN: its rank, and whether a switchover names this node */
	int rank;
	bool named;
	/* HA_STEP_DOWN: the reason (a switchover, or the key held by leader) */
	bool switchover;
	uint32_t leader;	/* HA_TAKE_OVER too: the silent holder */
	/* HA_TAKE_OVER: the holder's lease; the replicas that find it silent
	 * (this node among them), of how many the membership has */
	int64_t lease;
	int votes, replicas;
};

void ha_state_init(struct ha_state *s, uint64_t now_ms);

/* one step: the action, with s updated (s->wait says why a NONE waits) */
struct ha_action ha_step(struct ha_state *s, const struct ha_cfg *cfg,
		const struct ha_input *in);

/* a campaign lost (or failed): eligibility starts anew */
void ha_campaign_lost(struct ha_state *s);
/*
 * A promotion refused, or one that could not start: no campaign before
 * now + lease_ms + jitter_ms (the loop draws jitter_ms in [0, lease_ms]
 * so that refused candidates do not retry in step).
 */
void ha_promotion_refused(struct ha_state *s, const struct ha_cfg *cfg,
		uint64_t now_ms, uint64_t jitter_ms);

/*
 * The rank of node `me` among the live candidate replicas of keys
 * (exclude: a node that does not count, the one a switchover names as
 * leaving; 0: none); -1 when keys does not list it.
 */
int ha_rank(const struct coord_keys *keys, uint32_t me, uint32_t exclude);

/* ---- the membership key, kept by the primary that holds the leader key ---- */

enum ha_ms_action_kind {
	HA_MS_NONE = 0,
	HA_MS_PUBLISH,		/* put the log's membership into the key */
	HA_MS_CARRY,		/* carry the key's change (two epochs ahead) */
	HA_MS_NOT_NEXT,		/* the key is ahead, not by one change: report */
	HA_MS_REMOVES_ME,	/* the key's change removes this primary: report */
};

struct ha_ms_input {
	uint64_t now_ms;
	uint32_t node_id;
	const char *ctl_addr;		/* this node's "host:port" */
	/* the log's final membership; NULL while the log holds a joint one */
	const struct coord_membership *log;
	const struct coord_keys *keys;
	uint64_t carry_backoff_until_ms;
	bool busy;			/* a change of the node runs */
};

/*
 * The key against the log: HA_MS_NONE when they agree (or a change is
 * under way in the log, or a carry waits for its back-off or the worker);
 * HA_MS_PUBLISH when the key is absent, unreadable, behind the log, or the
 * same epoch with node ids the log has learned since; HA_MS_CARRY when
 * the key holds the next change (the log's configuration epoch + 2) and
 * names this node.
 */
enum ha_ms_action_kind ha_membership_step(const struct ha_ms_input *in);

/* what status shows of the key against a log at configuration epoch
 * log_ce: "applied", "pending", "behind", "changing", "absent", "invalid" */
const char *ha_membership_state(const struct coord_keys *keys, uint64_t log_ce,
		bool joint);

#endif
