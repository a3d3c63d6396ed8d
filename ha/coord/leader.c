/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * leader.c -- the leader key under a lease, and the epochs counter
 * (leader.h; docs/design.md, "The leader lease").
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "coord/leader.h"

/* lost compare-and-swap races before coord_epoch_take gives up */
#define EPOCH_TRIES 32

struct coord_leader {
	struct etcd_client *c;
	char *leader_key, *epochs_key;
	int64_t ttl_s;
	uint64_t node_id;
	enum coord_leader_state state;
	int64_t lease;		/* HELD, LOST: the lease the key was put with */
	int64_t granted;	/* its TTL as etcd granted it */
	uint64_t valid_until;	/* CLOCK_MONOTONIC ns; 0 unless HELD */
	char err[512];
};

const char *
coord_leader_state_name(enum coord_leader_state s)
{
	switch (s) {
	case COORD_LEADER_IDLE: return "idle";
	case COORD_LEADER_HELD: return "held";
	case COORD_LEADER_LOST: return "lost";
	}
	return "unknown";
}

static enum etcd_rc
fail(struct coord_leader *l, enum etcd_rc rc, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(l->err, sizeof(l->err), "leader (node %" PRIu64 "): ",
		l->node_id);

	va_start(ap, fmt);
	if (n > 0 && (size_t)n < sizeof(l->err))
		vsnprintf(l->err + n, sizeof(l->err) - (size_t)n, fmt, ap);
	va_end(ap);
	return rc;
}

/* the client's failure as this call's */
static enum etcd_rc
fail_etcd(struct coord_leader *l, enum etcd_rc rc, const char *what)
{
	return fail(l, rc, "%s: %s: %s", what, etcd_rc_name(rc),
		etcd_client_error(l->c));
}

static char *
join(const char *a, const char *b)
{
	size_t na = strlen(a), nb = strlen(b);
	char *s = malloc(na + nb + 1);

	if (s != NULL) {
		memcpy(s, a, na);
		memcpy(s + na, b, nb + 1);
	}
	return s;
}

struct coord_leader *
coord_leader_new(const struct coord_leader_cfg *cfg, char *err, size_t err_size)
{
	struct coord_leader *l;

	if (cfg == NULL || cfg->etcd == NULL || cfg->prefix == NULL ||
	    cfg->prefix[0] == '\0' || cfg->ttl_s < 1) {
		snprintf(err, err_size, "leader: %s", cfg == NULL || cfg->etcd == NULL ?
			"no etcd configuration" : cfg->prefix == NULL || !cfg->prefix[0] ?
			"no key prefix" : "ttl_s below 1");
		return NULL;
	}
	l = calloc(1, sizeof(*l));
	if (l == NULL) {
		snprintf(err, err_size, "leader: out of memory");
		return NULL;
	}
	l->ttl_s = cfg->ttl_s;
	l->node_id = cfg->node_id;
	l->leader_key = join(cfg->prefix, "leader");
	l->epochs_key = join(cfg->prefix, "epochs");
	if (l->leader_key == NULL || l->epochs_key == NULL) {
		snprintf(err, err_size, "leader: out of memory");
		coord_leader_free(l);
		return NULL;
	}
	l->c = etcd_client_new(cfg->etcd, err, err_size);
	if (l->c == NULL) {
		coord_leader_free(l);
		return NULL;
	}
	return l;
}

void
coord_leader_free(struct coord_leader *l)
{
	if (l == NULL)
		return;
	etcd_client_free(l->c);
	free(l->leader_key);
	free(l->epochs_key);
	free(l);
}

const char *
coord_leader_error(const struct coord_leader *l)
{
	return l->err;
}

enum coord_leader_state
coord_leader_state(const struct coord_leader *l)
{
	return l->state;
}

int64_t
coord_leader_lease(const struct coord_leader *l)
{
	return l->lease;
}

int64_t
coord_leader_ttl(const struct coord_leader *l)
{
	return l->granted;
}

uint64_t
coord_leader_valid_until(const struct coord_leader *l)
{
	return l->valid_until;
}

bool
coord_leader_valid(const struct coord_leader *l, uint64_t now_ns)
{
	return l->state == COORD_LEADER_HELD && now_ns < l->valid_until;
}

/*
 * The end of validity of a lease of ttl seconds whose request was sent at
 * sent_ns.  The margin covers our clock running slower than etcd's
 * (clocks' rates differ by parts per million, NTP slews by up to 0.05%),
 * 100 ms at least for a short TTL.
 */
static uint64_t
valid_end(uint64_t sent_ns, int64_t ttl)
{
	uint64_t t = (uint64_t)ttl * 1000000000ull;
	uint64_t margin = t / 20;

	if (margin < 100000000ull)
		margin = 100000000ull;
	return t > margin ? sent_ns + t - margin : sent_ns;
}

static void
set_lost(struct coord_leader *l)
{
	l->state = COORD_LEADER_LOST;
	l->valid_until = 0;
}

void
coord_holder_free(struct coord_holder *h)
{
	free(h->value);
	memset(h, 0, sizeof(*h));
}

/* the holder from a range's answer (no kvs: absent) */
static enum etcd_rc
holder_from(struct coord_leader *l, const struct etcd_range *r,
	struct coord_holder *h)
{
	const struct etcd_kv *kv;

	memset(h, 0, sizeof(*h));
	if (r->n_kvs == 0)
		return ETCD_OK;
	kv = &r->kvs[0];
	h->value = malloc(kv->value.len + 1);
	if (h->value == NULL)
		return fail(l, ETCD_E_NOMEM, "out of memory");
	if (kv->value.len)
		memcpy(h->value, kv->value.p, kv->value.len);
	h->value[kv->value.len] = '\0';
	h->value_len = kv->value.len;
	h->lease = kv->lease;
	h->mod_revision = kv->mod_revision;
	h->present = true;
	return ETCD_OK;
}

/* the create-if-absent txn: ETCD_OK with out->outcome WON or HELD */
static enum etcd_rc
campaign_txn(struct coord_leader *l, const char *value, int64_t lease,
	struct coord_campaign *out)
{
	const uint8_t *k = (const uint8_t *)l->leader_key;
	size_t kl = strlen(l->leader_key);
	struct etcd_compare cmp = {
		.target = ETCD_CMP_CREATE, .result = ETCD_CMP_EQUAL,
		.key = k, .key_len = kl, .number = 0,
	};
	struct etcd_op put = {
		.kind = ETCD_OP_PUT, .key = k, .key_len = kl,
		.value = (const uint8_t *)value, .value_len = strlen(value),
		.lease = lease,
	};
	struct etcd_op get = { .kind = ETCD_OP_RANGE, .key = k, .key_len = kl };
	struct etcd_txn t = { &cmp, 1, &put, 1, &get, 1 };
	struct etcd_txn_result res;
	enum etcd_rc rc = etcd_txn(l->c, &t, &res);

	if (rc != ETCD_OK)
		return rc;
	if (res.succeeded) {
		out->outcome = COORD_CAMPAIGN_WON;
	} else if (res.n_responses != 1 || res.responses[0].kind != ETCD_OP_RANGE) {
		rc = fail(l, ETCD_E_PROTO, "campaign: a failed txn without the range");
	} else {
		rc = holder_from(l, &res.responses[0].r, &out->holder);
		out->outcome = COORD_CAMPAIGN_HELD;
	}
	etcd_txn_result_free(&res);
	return rc;
}

static enum etcd_rc
grant(struct coord_leader *l, int64_t *lease, int64_t *ttl, uint64_t *sent_ns)
{
	enum etcd_rc rc;

	*sent_ns = clock_now_ns();
	rc = etcd_lease_grant(l->c, l->ttl_s, lease, ttl);
	if (rc == ETCD_OK && *ttl < 1)
		rc = fail(l, ETCD_E_PROTO, "grant: TTL %" PRId64, *ttl);
	return rc;
}

enum etcd_rc
coord_leader_campaign_lease(struct coord_leader *l, const char *value,
	int64_t lease, int64_t granted_ttl, uint64_t sent_ns,
	struct coord_campaign *out)
{
	enum etcd_rc rc;

	l->err[0] = '\0';
	memset(out, 0, sizeof(*out));
	if (value == NULL || l->state == COORD_LEADER_HELD)
		return fail(l, ETCD_E_INVAL, "campaign: %s", value == NULL ?
			"no value" : "the key is held already");
	/* a put with lease 0 would be a key no lease takes away */
	if (lease == 0 || granted_ttl < 1)
		return fail(l, ETCD_E_INVAL, "campaign: lease %" PRId64 ", TTL %"
			PRId64, lease, granted_ttl);
	rc = campaign_txn(l, value, lease, out);
	if (rc == ETCD_E_LEASE_NOT_FOUND) {
		/* expired between its grant and now: once more, fresh */
		rc = grant(l, &lease, &granted_ttl, &sent_ns);
		if (rc != ETCD_OK)
			return rc == ETCD_E_PROTO ? rc : fail_etcd(l, rc, "grant");
		rc = campaign_txn(l, value, lease, out);
	}
	if (rc == ETCD_OK && out->outcome == COORD_CAMPAIGN_WON) {
		l->state = COORD_LEADER_HELD;
		l->lease = lease;
		l->granted = granted_ttl;
		l->valid_until = valid_end(sent_ns, granted_ttl);
		return ETCD_OK;
	}
	if (rc != ETCD_OK) {
		if (l->err[0] == '\0')
			fail_etcd(l, rc, "campaign");
		out->outcome = COORD_CAMPAIGN_ERROR;
		coord_holder_free(&out->holder);
	}
	/*
	 * Lost, or not known: revoked, so the lease does not linger and a key
	 * an unanswered txn may have put goes with it.  Best effort: if etcd
	 * does not take it, the lease runs out by itself.
	 */
	(void)etcd_lease_revoke(l->c, lease);
	return rc;
}

enum etcd_rc
coord_leader_campaign(struct coord_leader *l, const char *value,
	struct coord_campaign *out)
{
	int64_t lease, ttl;
	uint64_t sent;
	enum etcd_rc rc;

	l->err[0] = '\0';
	memset(out, 0, sizeof(*out));
	if (value == NULL || l->state == COORD_LEADER_HELD)
		return fail(l, ETCD_E_INVAL, "campaign: %s", value == NULL ?
			"no value" : "the key is held already");
	/* fresh, right before the txn: an older lease may have expired */
	rc = grant(l, &lease, &ttl, &sent);
	if (rc != ETCD_OK)
		return rc == ETCD_E_PROTO ? rc : fail_etcd(l, rc, "grant");
	return coord_leader_campaign_lease(l, value, lease, ttl, sent, out);
}

enum etcd_rc
coord_leader_renew(struct coord_leader *l)
{
	int64_t ttl;
	uint64_t sent;
	enum etcd_rc rc;

	l->err[0] = '\0';
	if (l->state != COORD_LEADER_HELD)
		return fail(l, ETCD_E_INVAL, "renew: %s",
			coord_leader_state_name(l->state));
	rc = etcd_lease_keepalive(l->c, l->lease, &ttl, &sent);
	if (rc == ETCD_OK && ttl <= 0)
		rc = ETCD_E_LEASE_NOT_FOUND;
	if (rc == ETCD_E_LEASE_NOT_FOUND) {
		/* expired: whatever our clock says, the key is gone */
		set_lost(l);
		return fail(l, rc, "renew: lease %" PRId64 " expired", l->lease);
	}
	if (rc != ETCD_OK)
		return fail_etcd(l, rc, "renew");
	uint64_t end = valid_end(sent, ttl);

	/* an answer never shortens what an earlier one gave */
	if (end > l->valid_until)
		l->valid_until = end;
	return ETCD_OK;
}

enum etcd_rc
coord_leader_update(struct coord_leader *l, const char *value, bool *ours)
{
	const uint8_t *k = (const uint8_t *)l->leader_key;
	size_t kl = strlen(l->leader_key);
	struct etcd_txn_result res;
	enum etcd_rc rc;

	l->err[0] = '\0';
	*ours = false;
	if (value == NULL)
		return fail(l, ETCD_E_INVAL, "update: no value");
	if (l->state != COORD_LEADER_HELD)
		return ETCD_OK;

	struct etcd_compare cmp = {
		.target = ETCD_CMP_LEASE, .result = ETCD_CMP_EQUAL,
		.key = k, .key_len = kl, .number = l->lease,
	};
	struct etcd_op put = {
		.kind = ETCD_OP_PUT, .key = k, .key_len = kl,
		.value = (const uint8_t *)value, .value_len = strlen(value),
		.lease = l->lease,
	};
	struct etcd_txn t = { &cmp, 1, &put, 1, NULL, 0 };

	rc = etcd_txn(l->c, &t, &res);
	if (rc == ETCD_E_LEASE_NOT_FOUND) {
		set_lost(l);
		return ETCD_OK;
	}
	if (rc != ETCD_OK)
		return fail_etcd(l, rc, "update");
	*ours = res.succeeded;
	etcd_txn_result_free(&res);
	if (!*ours)
		set_lost(l);
	return ETCD_OK;
}

enum etcd_rc
coord_leader_resign(struct coord_leader *l)
{
	enum etcd_rc rc = ETCD_OK;

	l->err[0] = '\0';
	if (l->state != COORD_LEADER_IDLE) {
		rc = etcd_lease_revoke(l->c, l->lease);
		if (rc == ETCD_E_LEASE_NOT_FOUND)
			rc = ETCD_OK;	/* gone already: the key with it */
		if (rc != ETCD_OK)
			fail_etcd(l, rc, "resign");
	}
	l->state = COORD_LEADER_IDLE;
	l->lease = 0;
	l->granted = 0;
	l->valid_until = 0;
	return rc;
}

enum etcd_rc
coord_leader_get(struct coord_leader *l, struct coord_holder *holder)
{
	struct etcd_range r;
	enum etcd_rc rc;

	l->err[0] = '\0';
	memset(holder, 0, sizeof(*holder));
	rc = etcd_get(l->c, l->leader_key, strlen(l->leader_key), &r);
	if (rc != ETCD_OK)
		return fail_etcd(l, rc, "get");
	rc = holder_from(l, &r, holder);
	etcd_range_free(&r);
	return rc;
}

/* the counter's text: decimal digits, no sign, no leading zero */
static bool
parse_epoch(const struct etcd_bytes *b, uint64_t *v)
{
	uint64_t n = 0;

	if (b->len == 0 || b->len > 20 || (b->len > 1 && b->p[0] == '0'))
		return false;
	for (size_t i = 0; i < b->len; i++) {
		unsigned d = (unsigned)b->p[i] - '0';

		if (d > 9 || n > (UINT64_MAX - d) / 10)
			return false;
		n = n * 10 + d;
	}
	*v = n;
	return true;
}

struct etcd_client *
coord_leader_client(struct coord_leader *l)
{
	return l->c;
}

/*
 * The epochs counter's compare-and-swap: take (next = max(cur + 1, epoch))
 * or raise (next = max(cur, epoch), no write when cur is already there).
 */
static enum etcd_rc
epoch_cas(struct coord_leader *l, uint64_t min_epoch, bool take, uint64_t *epoch);

enum etcd_rc
coord_epoch_take(struct coord_leader *l, uint64_t min_epoch, uint64_t *epoch)
{
	return epoch_cas(l, min_epoch, true, epoch);
}

enum etcd_rc
coord_epoch_raise(struct coord_leader *l, uint64_t epoch, uint64_t *stored)
{
	return epoch_cas(l, epoch, false, stored);
}

static enum etcd_rc
epoch_cas(struct coord_leader *l, uint64_t min_epoch, bool take, uint64_t *epoch)
{
	const uint8_t *k = (const uint8_t *)l->epochs_key;
	size_t kl = strlen(l->epochs_key);

	l->err[0] = '\0';
	for (int i = 0; i < EPOCH_TRIES; i++) {
		struct etcd_range r;
		uint64_t cur = 0, next;
		int64_t rev = 0;
		enum etcd_rc rc = etcd_get(l->c, k, kl, &r);

		if (rc != ETCD_OK)
			return fail_etcd(l, rc, "epochs: get");
		if (r.n_kvs > 0) {
			rev = r.kvs[0].mod_revision;
			if (!parse_epoch(&r.kvs[0].value, &cur) || cur == UINT64_MAX) {
				etcd_range_free(&r);
				return fail(l, ETCD_E_PROTO,
					"epochs: %s holds no epoch", l->epochs_key);
			}
		}
		etcd_range_free(&r);
		if (!take && cur >= min_epoch) {
			*epoch = cur;
			return ETCD_OK;
		}
		next = take && cur + 1 > min_epoch ? cur + 1 : min_epoch;

		char text[24];
		int n = snprintf(text, sizeof(text), "%" PRIu64, next);
		/* absent: it must still be (VERSION 0); else unchanged since read */
		struct etcd_compare cmp = {
			.target = rev ? ETCD_CMP_MOD : ETCD_CMP_VERSION,
			.result = ETCD_CMP_EQUAL, .key = k, .key_len = kl,
			.number = rev,
		};
		struct etcd_op put = {
			.kind = ETCD_OP_PUT, .key = k, .key_len = kl,
			.value = (const uint8_t *)text, .value_len = (size_t)n,
		};
		struct etcd_txn t = { &cmp, 1, &put, 1, NULL, 0 };
		struct etcd_txn_result res;

		rc = etcd_txn(l->c, &t, &res);
		if (rc != ETCD_OK)
			return fail_etcd(l, rc, "epochs: txn");
		bool won = res.succeeded;

		etcd_txn_result_free(&res);
		if (won) {
			*epoch = next;
			return ETCD_OK;
		}
	}
	return fail(l, ETCD_E_CONTENDED, "epochs: lost %d races in a row",
		EPOCH_TRIES);
}
