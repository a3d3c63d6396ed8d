/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * kvstore -- a key-value store whose write-ahead log is librepl's: how a
 * database links librepl (pkg-config librepl) and uses it.
 *
 *   kvstore [-c] [-b file|pmem] [-s SIZE] [-t MS]
 *           [-r HOST:PORT]... [-q QUORUM] [-n NODE_ID] [-u UUID] LOG
 *
 * The store is a hash map in memory; the log is its only durable state.
 * At start the map is rebuilt by replaying the log (repl_iterate).  Then it
 * reads commands from stdin, one per line, and answers each on stdout:
 *
 *   set KEY VALUE   ok LSN            (VALUE: the rest of the line)
 *   get KEY         value VALUE  |  not found
 *   del KEY         ok LSN       |  not found
 *   list            KEY VALUE lines, sorted, then ok COUNT
 *
 * A bad command answers "error: ..." and the store goes on.  A set or del
 * is appended to the log and acknowledged ("ok LSN") only once
 * repl_wait_durable() returned 0 for its LSN: persisted here and flushed on
 * QUORUM replicas.  Only then does the map change, so a get never returns
 * what a crash could still take back.  EOF closes the log (repl_close).
 *
 * The record format (little-endian, self-describing and versioned):
 *
 *   0  u8   version (1)
 *   1  u8   op: 'S' (set) or 'D' (del)
 *   2  u16  key length (1..255; bytes above ' ', not DEL)
 *   4  u32  value length (set: 1..65535, no NUL or newline; del: 0)
 *   8       key, then value: the record ends exactly there
 *
 * The log is input like any file: replay checks every record in full.  A
 * malformed one (librepl's checksum only proves the bytes are the ones
 * appended, not that this program wrote them) stops the start with its
 * LSN and the reason.  Skipping it instead would serve a state no client
 * was ever acknowledged -- a skipped del brings a key back -- so the log
 * must be looked at (replctl dump) rather than guessed around.
 *
 * Nothing is ever released: a real database would checkpoint its map and
 * call repl_release(); here the log's size bounds the store's history.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <repl.h>

#define KV_VERSION	1
#define KV_OP_SET	'S'
#define KV_OP_DEL	'D'
#define KV_HDR		8
#define KV_KEY_MAX	255
#define KV_VALUE_MAX	65535
#define KV_REPLICAS_MAX	8
#define KV_HOST_MAX	55	/* librepl's limit for a replica's host */

/* replay's callback returns this (positive: not a REPL_E_* code) */
#define KV_BAD_RECORD	1

/* the in-memory map: chained hashing, doubled when it gets crowded */
struct entry {
	struct entry *next;
	char *key;
	char *value;
};

struct map {
	struct entry **buckets;
	size_t n_buckets;	/* a power of two */
	size_t count;
};

/* FNV-1a: short keys, no adversary that matters for an example */
static size_t
hash(const char *key)
{
	uint64_t h = 14695981039346656037ULL;

	for (const unsigned char *p = (const unsigned char *)key; *p; p++)
		h = (h ^ *p) * 1099511628211ULL;
	return (size_t)h;
}

static int
map_init(struct map *m)
{
	m->n_buckets = 64;
	m->count = 0;
	m->buckets = calloc(m->n_buckets, sizeof(*m->buckets));
	return m->buckets ? 0 : -1;
}

static void
map_free(struct map *m)
{
	for (size_t i = 0; i < m->n_buckets; i++) {
		struct entry *e = m->buckets[i], *next;

		for (; e; e = next) {
			next = e->next;
			free(e->key);
			free(e->value);
			free(e);
		}
	}
	free(m->buckets);
	m->buckets = NULL;
}

static struct entry **
map_slot(const struct map *m, const char *key)
{
	struct entry **slot = &m->buckets[hash(key) & (m->n_buckets - 1)];

	while (*slot && strcmp((*slot)->key, key) != 0)
		slot = &(*slot)->next;
	return slot;
}

static const char *
map_get(const struct map *m, const char *key)
{
	struct entry *e = *map_slot(m, key);

	return e ? e->value : NULL;
}

static int
map_grow(struct map *m)
{
	size_t n = m->n_buckets * 2;
	struct entry **buckets = calloc(n, sizeof(*buckets));

	if (!buckets)
		return -1;
	for (size_t i = 0; i < m->n_buckets; i++) {
		struct entry *e = m->buckets[i], *next;

		for (; e; e = next) {
			size_t b = hash(e->key) & (n - 1);

			next = e->next;
			e->next = buckets[b];
			buckets[b] = e;
		}
	}
	free(m->buckets);
	m->buckets = buckets;
	m->n_buckets = n;
	return 0;
}

/* key and value are copied; -1: out of memory, the map unchanged */
static int
map_set(struct map *m, const char *key, size_t key_len, const char *value,
		size_t value_len)
{
	char *k = strndup(key, key_len);
	char *v = strndup(value, value_len);
	struct entry **slot, *e;

	if (!k || !v)
		goto nomem;
	slot = map_slot(m, k);
	if (*slot) {
		free((*slot)->value);
		(*slot)->value = v;
		free(k);
		return 0;
	}
	if (m->count >= m->n_buckets && map_grow(m) == 0)
		slot = map_slot(m, k);	/* the chains moved */
	if (!(e = malloc(sizeof(*e))))
		goto nomem;
	*e = (struct entry){ .next = NULL, .key = k, .value = v };
	*slot = e;
	m->count++;
	return 0;
nomem:
	free(k);
	free(v);
	return -1;
}

static void
map_del(struct map *m, const char *key)
{
	struct entry **slot = map_slot(m, key), *e = *slot;

	if (!e)
		return;
	*slot = e->next;
	free(e->key);
	free(e->value);
	free(e);
	m->count--;
}

static int
cmp_entries(const void *a, const void *b)
{
	const struct entry *const *x = a, *const *y = b;

	return strcmp((*x)->key, (*y)->key);
}

/* what a record may hold: the same rules for commands and for replay */
static int
key_ok(const char *key, size_t len)
{
	if (len == 0 || len > KV_KEY_MAX)
		return 0;
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)key[i] <= ' ' || key[i] == 0x7f)
			return 0;
	return 1;
}

static int
value_ok(const char *value, size_t len)
{
	if (len == 0 || len > KV_VALUE_MAX)
		return 0;
	return memchr(value, '\0', len) == NULL &&
		memchr(value, '\n', len) == NULL;
}

/* rec must hold KV_HDR + key_len + value_len bytes */
static size_t
encode(unsigned char *rec, int op, const char *key, size_t key_len,
		const char *value, size_t value_len)
{
	rec[0] = KV_VERSION;
	rec[1] = (unsigned char)op;
	rec[2] = (unsigned char)key_len;
	rec[3] = (unsigned char)(key_len >> 8);
	for (int i = 0; i < 4; i++)
		rec[4 + i] = (unsigned char)(value_len >> (8 * i));
	memcpy(rec + KV_HDR, key, key_len);
	if (value_len)
		memcpy(rec + KV_HDR + key_len, value, value_len);
	return KV_HDR + key_len + value_len;
}

struct replay {
	struct map *map;
	uint64_t records;
	uint64_t bad_lsn;
	const char *why;
	int nomem;
};

static int
replay_bad(struct replay *r, uint64_t lsn, const char *why)
{
	r->bad_lsn = lsn;
	r->why = why;
	return KV_BAD_RECORD;
}

static int
replay_record(void *arg, uint64_t lsn, const void *data, size_t len)
{
	struct replay *r = arg;
	const unsigned char *rec = data;
	const char *key, *value;
	size_t key_len, value_len;

	if (len < KV_HDR)
		return replay_bad(r, lsn, "shorter than the record header");
	if (rec[0] != KV_VERSION)
		return replay_bad(r, lsn, "unknown record version");
	key_len = (size_t)rec[2] | (size_t)rec[3] << 8;
	value_len = (size_t)rec[4] | (size_t)rec[5] << 8 |
		(size_t)rec[6] << 16 | (size_t)rec[7] << 24;
	/* checked apart: their sum could wrap on a 32-bit size_t */
	if (key_len > len - KV_HDR || value_len != len - KV_HDR - key_len)
		return replay_bad(r, lsn, "lengths do not match the record's size");
	key = (const char *)rec + KV_HDR;
	value = key + key_len;
	if (!key_ok(key, key_len))
		return replay_bad(r, lsn, "invalid key");

	switch (rec[1]) {
	case KV_OP_SET:
		if (!value_ok(value, value_len))
			return replay_bad(r, lsn, "set with an invalid value");
		if (map_set(r->map, key, key_len, value, value_len)) {
			r->nomem = 1;
			return KV_BAD_RECORD;
		}
		break;
	case KV_OP_DEL: {
		char k[KV_KEY_MAX + 1];

		if (value_len != 0)
			return replay_bad(r, lsn, "del with a value");
		memcpy(k, key, key_len);
		k[key_len] = '\0';
		map_del(r->map, k);
		break;
	}
	default:
		return replay_bad(r, lsn, "unknown operation");
	}
	r->records++;
	return 0;
}

struct store {
	struct repl *repl;
	struct map map;
	int durable_timeout_ms;
};

/*
 * Append the record and wait until it is durable.  1: acknowledged;
 * 0: refused, nothing appended; -1: appended but not known durable (the
 * caller stops: only the log can tell what became of it).
 */
static int
log_write(struct store *s, int op, const char *key, size_t key_len,
		const char *value, size_t value_len, uint64_t *lsn)
{
	unsigned char rec[KV_HDR + KV_KEY_MAX + KV_VALUE_MAX];
	size_t len = encode(rec, op, key, key_len, value, value_len);
	int ret;

	if ((ret = repl_append(s->repl, rec, len, lsn))) {
		printf("error: repl_append: %s\n", repl_strerror(ret));
		return 0;
	}
	if ((ret = repl_wait_durable(s->repl, *lsn, s->durable_timeout_ms))) {
		printf("error: lsn %" PRIu64 " not durable: %s; "
			"its outcome is for the log to tell: restart\n",
			*lsn, repl_strerror(ret));
		return -1;
	}
	return 1;
}

static const char *
skip_blanks(const char *p)
{
	while (*p == ' ' || *p == '\t')
		p++;
	return p;
}

static size_t
word_len(const char *p)
{
	size_t n = 0;

	while (p[n] && p[n] != ' ' && p[n] != '\t')
		n++;
	return n;
}

static void
cmd_list(const struct map *m)
{
	struct entry **all = malloc((m->count ? m->count : 1) * sizeof(*all));
	size_t n = 0;

	if (!all) {
		printf("error: out of memory\n");
		return;
	}
	for (size_t i = 0; i < m->n_buckets; i++)
		for (struct entry *e = m->buckets[i]; e; e = e->next)
			all[n++] = e;
	qsort(all, n, sizeof(*all), cmp_entries);
	for (size_t i = 0; i < n; i++)
		printf("%s %s\n", all[i]->key, all[i]->value);
	printf("ok %zu\n", n);
	free(all);
}

/* one command line (no newline); -1: stop, the log's state is unknown */
static int
command(struct store *s, const char *line)
{
	const char *p = skip_blanks(line), *key, *value = "";
	size_t cmd_len = word_len(p), key_len, value_len = 0;
	char k[KV_KEY_MAX + 1];
	uint64_t lsn;
	int ret;

	if (cmd_len == 0)
		return 0;	/* a blank line */
	key = skip_blanks(p + cmd_len);
	key_len = word_len(key);
	if (key_len) {
		value = skip_blanks(key + key_len);
		value_len = strlen(value);
	}

	if (cmd_len == 4 && strncmp(p, "list", 4) == 0) {
		if (key_len)
			printf("error: usage: list\n");
		else
			cmd_list(&s->map);
		return 0;
	}

	if (!(cmd_len == 3 && (strncmp(p, "set", 3) == 0 ||
			strncmp(p, "get", 3) == 0 || strncmp(p, "del", 3) == 0))) {
		printf("error: unknown command \"%.*s\" (set, get, del, list)\n",
			(int)cmd_len, p);
		return 0;
	}
	/* set takes a value, get and del take none */
	if (key_len == 0 || (p[0] == 's') != (value_len > 0)) {
		printf("error: usage: %s\n", p[0] == 's' ? "set KEY VALUE" :
			p[0] == 'g' ? "get KEY" : "del KEY");
		return 0;
	}
	if (!key_ok(key, key_len)) {
		printf("error: a key is 1 to %d bytes, no control characters\n",
			KV_KEY_MAX);
		return 0;
	}
	memcpy(k, key, key_len);
	k[key_len] = '\0';

	switch (p[0]) {
	case 'g': {
		const char *v = map_get(&s->map, k);

		if (v)
			printf("value %s\n", v);
		else
			printf("not found\n");
		return 0;
	}
	case 's':
		if (!value_ok(value, value_len)) {
			printf("error: a value is 1 to %d bytes, no NUL\n",
				KV_VALUE_MAX);
			return 0;
		}
		ret = log_write(s, KV_OP_SET, key, key_len, value, value_len, &lsn);
		if (ret <= 0)
			return ret;
		/* durable: a restart would replay it, so the map must show it */
		if (map_set(&s->map, key, key_len, value, value_len)) {
			printf("error: out of memory after lsn %" PRIu64 "\n", lsn);
			return -1;
		}
		break;
	default:
		/* nothing to delete: no record, the answer needs no durability */
		if (!map_get(&s->map, k)) {
			printf("not found\n");
			return 0;
		}
		ret = log_write(s, KV_OP_DEL, key, key_len, NULL, 0, &lsn);
		if (ret <= 0)
			return ret;
		map_del(&s->map, k);
		break;
	}
	printf("ok %" PRIu64 "\n", lsn);
	return 0;
}

static void
usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s [-c] [-b file|pmem] [-s SIZE] [-t MS]\n"
		"       [-r HOST:PORT]... [-q QUORUM] [-n NODE_ID] [-u UUID] LOG\n"
		"  -c          create LOG (a new, empty log: what it held is lost)\n"
		"  -b BACKEND  file (default; fdatasync) or pmem (libpmem2)\n"
		"  -s SIZE     with -c: the log's size, K/M/G suffixes (default 16M)\n"
		"  -t MS       how long a write waits to be durable (default 10000)\n"
		"  -r HOST:PORT a replica's control channel (repeat; none: one node)\n"
		"  -q QUORUM   replicas that must hold a write (default: a majority\n"
		"              of all nodes with this one)\n"
		"  -n NODE_ID  with -c: this node's number (default 1)\n"
		"  -u UUID     with -c: the cluster's id (required with -r)\n"
		"commands on stdin: set KEY VALUE | get KEY | del KEY | list\n",
		prog);
}

static int
parse_number(const char *s, long long min, long long max, long long *out)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

static int
parse_size(const char *s, size_t *out)
{
	char *end;
	unsigned long long v, mult = 1;

	errno = 0;
	if (*s == '-')
		return -1;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		return -1;
	switch (*end) {
	case 'G': mult <<= 10; /* fall through */
	case 'M': mult <<= 10; /* fall through */
	case 'K': mult <<= 10; end++; break;
	default: break;
	}
	if (*end || v > SIZE_MAX / mult)
		return -1;
	*out = (size_t)(v * mult);
	return 0;
}

static int
hex_digit(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* 8-4-4-4-12 hex digits; the nil UUID names no cluster */
static int
parse_uuid(const char *s, uint8_t uuid[16])
{
	int any = 0, k = 0;

	if (strlen(s) != 36)
		return -1;
	for (int i = 0; i < 36; ) {
		int hi, lo;

		if (i == 8 || i == 13 || i == 18 || i == 23) {
			if (s[i++] != '-')
				return -1;
			continue;
		}
		if ((hi = hex_digit(s[i])) < 0 || (lo = hex_digit(s[i + 1])) < 0)
			return -1;
		uuid[k] = (uint8_t)(hi << 4 | lo);
		any |= uuid[k++];
		i += 2;
	}
	return any ? 0 : -1;
}

/* HOST:PORT or [HOST]:PORT; host and port point into buf */
static int
parse_replica(const char *arg, char *buf, size_t size,
		struct repl_replica *r)
{
	char *colon, *host = buf;
	long long port;

	if (strlen(arg) >= size)
		return -1;
	strcpy(buf, arg);
	if (!(colon = strrchr(buf, ':')))
		return -1;
	*colon = '\0';
	if (host[0] == '[') {
		size_t n = strlen(host);

		if (n < 2 || host[n - 1] != ']')
			return -1;
		host[n - 1] = '\0';
		host++;
	}
	if (!*host || strlen(host) > KV_HOST_MAX ||
			parse_number(colon + 1, 1, 65535, &port))
		return -1;
	r->host = host;
	r->port = colon + 1;
	return 0;
}

int
main(int argc, char *argv[])
{
	struct repl_cfg cfg = { .backend = REPL_BACKEND_FILE, .size = 16 << 20,
		.node_id = 1, .epoch = 1 };
	struct repl_replica replicas[KV_REPLICAS_MAX];
	char replica_args[KV_REPLICAS_MAX][KV_HOST_MAX + 16];
	struct store s = { .durable_timeout_ms = 10000 };
	struct replay r = { .map = &s.map };
	int quorum = -1, have_uuid = 0, opt, ret, status = 0;
	long long num;
	char *line = NULL;
	size_t line_size = 0;
	ssize_t n;

	while ((opt = getopt(argc, argv, "cb:s:t:r:q:n:u:h")) != -1) {
		switch (opt) {
		case 'c':
			/* a new log: the first start of its cluster */
			cfg.create = cfg.bootstrap = 1;
			break;
		case 'b':
			if (strcmp(optarg, "file") == 0)
				cfg.backend = REPL_BACKEND_FILE;
			else if (strcmp(optarg, "pmem") == 0)
				cfg.backend = REPL_BACKEND_PMEM;
			else
				goto bad_option;
			break;
		case 's':
			if (parse_size(optarg, &cfg.size))
				goto bad_option;
			break;
		case 't':
			if (parse_number(optarg, -1, 3600000, &num))
				goto bad_option;
			s.durable_timeout_ms = (int)num;
			break;
		case 'r':
			if (cfg.n_replicas == KV_REPLICAS_MAX) {
				fprintf(stderr, "%s: at most %d replicas\n",
					argv[0], KV_REPLICAS_MAX);
				return 2;
			}
			if (parse_replica(optarg, replica_args[cfg.n_replicas],
					sizeof(replica_args[0]),
					&replicas[cfg.n_replicas]))
				goto bad_option;
			cfg.n_replicas++;
			break;
		case 'q':
			if (parse_number(optarg, 0, KV_REPLICAS_MAX, &num))
				goto bad_option;
			quorum = (int)num;
			break;
		case 'n':
			if (parse_number(optarg, 1, 65535, &num))
				goto bad_option;
			cfg.node_id = (uint32_t)num;
			break;
		case 'u':
			if (parse_uuid(optarg, cfg.cluster_uuid))
				goto bad_option;
			have_uuid = 1;
			break;
		case 'h':
			usage(argv[0]);
			return 0;
		default:
			usage(argv[0]);
			return 2;
		}
	}
	if (optind != argc - 1) {
		usage(argv[0]);
		return 2;
	}
	cfg.path = argv[optind];
	cfg.replicas = replicas;
	/*
	 * n replicas and this node: a write on a majority of the n + 1 nodes
	 * survives the loss of any minority.
	 */
	cfg.quorum = quorum >= 0 ? quorum : (cfg.n_replicas + 1) / 2;
	if (cfg.quorum > cfg.n_replicas) {
		fprintf(stderr, "%s: -q %d is more than the %d replicas\n",
			argv[0], cfg.quorum, cfg.n_replicas);
		return 2;
	}
	if (cfg.create && cfg.n_replicas && !have_uuid) {
		fprintf(stderr, "%s: a cluster's log needs its -u UUID\n", argv[0]);
		return 2;
	}

	if ((ret = repl_open(&cfg, &s.repl))) {
		fprintf(stderr, "%s: repl_open %s: %s\n", argv[0], cfg.path,
			repl_strerror(ret));
		return 1;
	}
	if (map_init(&s.map)) {
		fprintf(stderr, "%s: out of memory\n", argv[0]);
		repl_close(&s.repl);
		return 1;
	}

	ret = repl_iterate(s.repl, 1, replay_record, &r);
	if (ret == KV_BAD_RECORD && r.nomem) {
		fprintf(stderr, "%s: out of memory replaying the log\n", argv[0]);
		status = 1;
		goto out;
	}
	if (ret == KV_BAD_RECORD) {
		fprintf(stderr, "%s: %s: lsn %" PRIu64 ": malformed record (%s)\n",
			argv[0], cfg.path, r.bad_lsn, r.why);
		status = 1;
		goto out;
	}
	if (ret) {
		fprintf(stderr, "%s: repl_iterate %s: %s\n", argv[0], cfg.path,
			repl_strerror(ret));
		status = 1;
		goto out;
	}
	fprintf(stderr, "%s: %s: %" PRIu64 " records replayed, %zu keys\n",
		argv[0], cfg.path, r.records, s.map.count);

	/* answers go to a pipe as often as to a terminal: one flush each */
	while ((n = getline(&line, &line_size, stdin)) != -1) {
		if (n > 0 && line[n - 1] == '\n')
			line[--n] = '\0';
		if (n > 0 && line[n - 1] == '\r')
			line[--n] = '\0';
		if ((size_t)n != strlen(line)) {
			printf("error: a NUL byte in the command\n");
		} else if (command(&s, line) < 0) {
			status = 1;
			fflush(stdout);
			break;
		}
		fflush(stdout);
	}
	free(line);

out:
	map_free(&s.map);
	if ((ret = repl_close(&s.repl))) {
		fprintf(stderr, "%s: repl_close: %s\n", argv[0], repl_strerror(ret));
		status = 1;
	}
	return status;

bad_option:
	fprintf(stderr, "%s: -%c %s: invalid\n", argv[0], opt, optarg);
	usage(argv[0]);
	return 2;
}
