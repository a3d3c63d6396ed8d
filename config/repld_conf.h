/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * repld_conf.h -- repld's configuration file: read (libconfig syntax),
 * checked whole, and turned into a struct with every default filled in.
 *
 * The file's settings are described in conf/repld-primary.conf and
 * conf/repld-replica.conf.  Relative paths in it are taken from the
 * file's own directory (a daemon's working directory is "/"), so every
 * path in the struct is absolute when the file's directory could be
 * resolved.
 */
#ifndef REPLD_CONF_H
#define REPLD_CONF_H 1

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define REPLD_PEERS_MAX 8		/* the membership record's room */
#define REPLD_ADDRESS_MAX 55		/* a member's host in that record */

#define REPLD_CONTROL_PORT_DEFAULT 7400
#define REPLD_DATA_PORT_DEFAULT 7401
#define REPLD_ADMIN_SOCKET_DEFAULT "/run/repld/repld.sock"
#define REPLD_ETCD_ENDPOINTS_MAX 8
#define REPLD_ETCD_PREFIX_DEFAULT "/rpma-repl/"

enum repld_role {
	REPLD_ROLE_REPLICA = 0,		/* the default: it waits for a primary */
	REPLD_ROLE_PRIMARY = 1,
};

enum repld_transport {
	REPLD_TRANSPORT_AUTO = 0,	/* verbs if an RDMA device serves the
					   listen address, else ofi:tcp */
	REPLD_TRANSPORT_VERBS = 1,
	REPLD_TRANSPORT_OFI_TCP = 2,
	REPLD_TRANSPORT_OFI_NET = 3,
};

/* the log's medium (repl.h: enum repl_backend, mapped by primary_cfg.c) */
enum repld_backend {
	REPLD_BACKEND_PMEM = 1,
	REPLD_BACKEND_FILE = 2,
	REPLD_BACKEND_CRASH = 3,
};

enum repld_flush_method {
	REPLD_FLUSH_AUTO = 0,
	REPLD_FLUSH_APM = 1,
	REPLD_FLUSH_GPSPM = 2,
	REPLD_FLUSH_NATIVE = 3,		/* only where rdma-core has ibv_wr_flush */
};

/* retention.mode: who says which records may go */
enum repld_retention_mode {
	REPLD_RETENTION_AUTO = 0,	/* the daemon, once committed */
	REPLD_RETENTION_CHECKPOINTER = 1, /* also an external RELEASE */
};

/* the levels of log_level (repl.h: enum repl_log_level, mapped by repld.c) */
enum repld_log_level {
	REPLD_LOG_ERROR = 1,
	REPLD_LOG_WARNING = 2,
	REPLD_LOG_NOTICE = 3,
	REPLD_LOG_INFO = 4,
	REPLD_LOG_DEBUG = 5,
};

/* a replica this node replicates to (as a primary, or once promoted) */
struct repld_peer {
	char *address;
	uint16_t control_port;
};

struct repld_conf {
	uint16_t node_id;			/* 1..65535 */
	enum repld_role role;
	char cluster_uuid_text[37];		/* lower case, 8-4-4-4-12 */
	uint8_t cluster_uuid[16];

	/* where this node listens; also its place in the membership */
	struct {
		char *address;
		uint16_t control_port;
		uint16_t data_port;
	} listen;

	enum repld_transport transport;
	enum repld_flush_method flush_method;

	struct {
		enum repld_backend backend;
		char *path;
		uint64_t size;			/* bytes, a multiple of 4 KiB */
	} log;
	/* what the primary keeps of its log (retention.h) */
	struct {
		enum repld_retention_mode mode;
		uint64_t keep;			/* bytes of the newest records */
		uint64_t keep_records;		/* the newest records (0: none) */
		int keep_seconds;		/* records younger (0: none) */
		int alarm_percent;		/* log use that raises the alarm */
		uint64_t reader_max_lag;	/* bytes a reader holds at most */
		uint64_t replica_max_hold;	/* bytes the holds of replicas
						   away (down, not seen) keep */
	} retention;
	int full_timeout_ms;			/* an append waits this long for
						   log space (0: fails at once) */
	int busy_poll_us;			/* repl_cfg's: -1 adaptive (the
						   default), 0 never, else at most */

	struct repld_peer peers[REPLD_PEERS_MAX];
	int n_peers;
	int quorum;				/* 0..n_peers */

	/* all NULL: the control channel runs without TLS */
	struct {
		char *ca;
		char *cert;
		char *key;
	} tls;

	struct {
		int heartbeat_ms;
		int down_ms;			/* > heartbeat_ms */
		int promote_wait_ms;
	} timeouts;

	char *admin_socket;
	/*
	 * sqlite_copy: on a replica, the database file it keeps of a replvfs
	 * log (sqlite/rv_copy.h); NULL: none
	 */
	char *sqlite_copy;
	enum repld_log_level log_level;

	/*
	 * coordinator.etcd: automatic failover (tools/repld/coordinator.h);
	 * n_endpoints 0: none, promotion is the operator's (replctl promote)
	 */
	struct {
		char *endpoints[REPLD_ETCD_ENDPOINTS_MAX];	/* "http://host:port" */
		int n_endpoints;
		char *prefix;			/* keys under PREFIX<cluster_uuid>/ */
		int lease_ms;			/* the leases' TTL, whole seconds */
		int timeout_ms;			/* one request */
		char *ca, *cert, *key;		/* https: NULL the system's CAs,
						   no client certificate */
		int candidate;			/* may take over by itself */
	} coordinator;

	/*
	 * archive: the continuous backup of the committed records
	 * (tools/repld/archiver.h); target NULL: none
	 */
	struct {
		char *target;			/* a directory */
		bool any;			/* archive.on = "any": also while
						   the primary */
		uint64_t segment_bytes;
		int publish_ms;			/* a segment is published at least
						   this often */
		int compress;			/* zstd level; 0: none */
		uint64_t max_hold;		/* bytes it keeps the log from
						   releasing at most */
		int base_every_ms;		/* with sqlite_copy: a base of the
						   copy at most this often */
	} archive;

	/* metrics_listen "HOST:PORT": the HTTP endpoints; host NULL: none */
	struct {
		char *host;			/* as written, without [ ] */
		uint16_t port;
	} metrics;
};

/*
 * Read and check the file at path into *out.  Returns 0, or -1 with *out
 * zeroed and a one-line "FILE:LINE: reason" in err (just "FILE: reason"
 * when the file cannot be read at all).  Settings not in the file get
 * their defaults; unknown ones, wrong types and out-of-range values are
 * errors.
 */
int repld_conf_load(const char *path, struct repld_conf *out, char *err,
		size_t errlen);

/* free the strings *conf owns and zero it; a zeroed struct is fine too */
void repld_conf_free(struct repld_conf *conf);

/* "8-4-4-4-12" hexadecimal digits (either case) into out: false if not */
bool repld_uuid_parse(const char *text, uint8_t out[16]);

/* a value as the file spells it */
const char *repld_backend_name(enum repld_backend b);
/* "host:port" into buf, an IPv6 address in brackets */
void repld_host_port(char *buf, size_t size, const char *host, unsigned port);
/* ms as an operator reads it: "850ms", "42s", "28m41s" or "3h05m"; buf */
const char *repld_duration_text(uint64_t ms, char *buf, size_t size);
const char *repld_flush_name(enum repld_flush_method f);

#endif
