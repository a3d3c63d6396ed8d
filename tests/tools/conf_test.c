/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * conf_test.c -- repld's configuration file: every example in conf/ loads,
 * and every file in tests/tools/conf-bad/ is refused with exactly the
 * message its first line gives:
 *
 *   # expect: conf-bad/NAME.conf:LINE: reason
 *
 * ("# expect-no-native-flush:" marks a fault only where rdma-core lacks
 * ibv_wr_flush: with it the file loads).  Defaults, sizes, relative paths
 * and @include are checked on files written to a temporary directory.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#include "unit.h"
#include "repld_conf.h"

#ifndef CONF_DIR
#error "CONF_DIR: the source tree's conf/"
#endif
#ifndef BAD_DIR
#error "BAD_DIR: the source tree's tests/tools/conf-bad"
#endif

#define BAD_MIN 30	/* fewer files: some went missing from the tree */

#define UUID_TEXT "1b530fb6-2073-4af6-9cf3-b6bff6c372e3"
#define BASE \
	"node_id = 7;\n" \
	"cluster_uuid = \"" UUID_TEXT "\";\n" \
	"listen = { address = \"127.0.0.1\"; };\n"

static char tmp_dir[PATH_MAX];

static int
by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool
ends_with(const char *s, const char *suffix)
{
	size_t ls = strlen(s), lx = strlen(suffix);

	return ls >= lx && strcmp(s + ls - lx, suffix) == 0;
}

/* dir's *.conf (and, with sub, those one directory down), sorted */
static int
list_confs(const char *dir, bool sub, char **out, int max)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	CU_ASSERT_PTR_NOT_NULL_FATAL(d);
	while ((e = readdir(d)) != NULL && n < max) {
		char *p;
		struct stat st;

		if (e->d_name[0] == '.' || asprintf(&p, "%s/%s", dir, e->d_name) < 0)
			continue;
		if (sub && stat(p, &st) == 0 && S_ISDIR(st.st_mode)) {
			n += list_confs(p, false, out + n, max - n);
			free(p);
		} else if (ends_with(p, ".conf")) {
			out[n++] = p;
		} else {
			free(p);
		}
	}
	closedir(d);
	qsort(out, (size_t)n, sizeof(*out), by_name);
	return n;
}

static void
write_file(const char *name, const char *text)
{
	char path[PATH_MAX * 2];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tmp_dir, name);
	f = fopen(path, "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fputs(text, f);
	CU_ASSERT_EQUAL(fclose(f), 0);
}

/* load tmp_dir/name: 0 expected (err empty) or the message */
static int
load_tmp(const char *name, struct repld_conf *conf, char *err, size_t errlen)
{
	char path[PATH_MAX * 2];

	snprintf(path, sizeof(path), "%s/%s", tmp_dir, name);
	return repld_conf_load(path, conf, err, errlen);
}

static int
setup(void)
{
	snprintf(tmp_dir, sizeof(tmp_dir), "%s/conf_test.XXXXXX",
			getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	return mkdtemp(tmp_dir) != NULL ? 0 : -1;
}

static void
teardown(void)
{
	DIR *d = opendir(tmp_dir);
	struct dirent *e;
	char path[PATH_MAX * 2];

	while (d != NULL && (e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", tmp_dir, e->d_name);
		unlink(path);
	}
	if (d != NULL)
		closedir(d);
	rmdir(tmp_dir);
}

/* every example ships valid */
static void
examples_load(void)
{
	char *files[64];
	int n = list_confs(CONF_DIR, true, files, 64);

	CU_ASSERT(n >= 5);
	for (int i = 0; i < n; i++) {
		struct repld_conf conf;
		char err[512];
		int ret = repld_conf_load(files[i], &conf, err, sizeof(err));

		printf("\n  %s %s%s%s", ret == 0 ? "ok  " : "FAIL", files[i],
				ret == 0 ? "" : ": ", ret == 0 ? "" : err);
		CU_ASSERT_EQUAL(ret, 0);
		repld_conf_free(&conf);
		free(files[i]);
	}
	printf("\n");
}

/* the cluster on one host is what its comments say */
static void
example_localhost_cluster(void)
{
	struct repld_conf conf;
	char err[512];

	CU_ASSERT_EQUAL_FATAL(repld_conf_load(CONF_DIR "/localhost-3node/node1.conf",
			&conf, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(conf.node_id, 1);
	CU_ASSERT_EQUAL(conf.role, REPLD_ROLE_PRIMARY);
	CU_ASSERT_EQUAL(conf.transport, REPLD_TRANSPORT_OFI_TCP);
	CU_ASSERT_EQUAL(conf.log.backend, REPLD_BACKEND_FILE);
	CU_ASSERT_EQUAL(conf.n_peers, 2);
	CU_ASSERT_EQUAL(conf.quorum, 1);
	CU_ASSERT_STRING_EQUAL(conf.listen.address, "127.0.0.1");
	CU_ASSERT_STRING_EQUAL(conf.peers[0].address, "127.0.0.1");
	CU_ASSERT_NOT_EQUAL(conf.peers[0].control_port, conf.listen.control_port);
	CU_ASSERT_NOT_EQUAL(conf.peers[1].control_port, conf.listen.control_port);
	repld_conf_free(&conf);

	for (int i = 2; i <= 3; i++) {
		char path[PATH_MAX];

		snprintf(path, sizeof(path), CONF_DIR "/localhost-3node/node%d.conf", i);
		CU_ASSERT_EQUAL_FATAL(repld_conf_load(path, &conf, err, sizeof(err)), 0);
		CU_ASSERT_EQUAL(conf.node_id, i);
		CU_ASSERT_EQUAL(conf.role, REPLD_ROLE_REPLICA);
		repld_conf_free(&conf);
	}
}

/*
 * One bad file: its first line "# TAG: conf-bad/...: reason" is the message
 * expected from loading it (paths under BAD_DIR's parent).
 */
static bool
check_bad(const char *path)
{
	static const char expect[] = "# expect: ";
	static const char no_native[] = "# expect-no-native-flush: ";
	char first[1024], want[PATH_MAX + 1024], err[1024];
	const char *base = strrchr(path, '/') + 1;
	const char *msg;
	struct repld_conf conf;
	bool loads = false;
	FILE *f = fopen(path, "r");
	int ret;

	if (f == NULL || fgets(first, sizeof(first), f) == NULL) {
		printf("\n  FAIL %s: unreadable", base);
		if (f != NULL)
			fclose(f);
		return false;
	}
	fclose(f);
	first[strcspn(first, "\n")] = '\0';
	if (strncmp(first, expect, strlen(expect)) == 0) {
		msg = first + strlen(expect);
	} else if (strncmp(first, no_native, strlen(no_native)) == 0) {
		msg = first + strlen(no_native);
		loads = HAVE_DECL_IBV_WR_FLUSH;
	} else {
		printf("\n  FAIL %s: no \"# expect: ...\" on its first line", base);
		return false;
	}
	if (strncmp(msg, "conf-bad/", 9) != 0) {
		printf("\n  FAIL %s: the expected message names no conf-bad/ file", base);
		return false;
	}
	snprintf(want, sizeof(want), "%.*s/%s", (int)(strrchr(BAD_DIR, '/') - BAD_DIR),
			BAD_DIR, msg);

	ret = repld_conf_load(path, &conf, err, sizeof(err));
	if (loads) {
		printf("\n  %s %s: loads (rdma-core has ibv_wr_flush)",
				ret == 0 ? "ok  " : "FAIL", base);
		repld_conf_free(&conf);
		return ret == 0;
	}
	if (ret == 0) {
		printf("\n  FAIL %s: loaded; expected %s", base, msg);
		repld_conf_free(&conf);
		return false;
	}
	if (strcmp(err, want) != 0) {
		printf("\n  FAIL %s\n       expected: %s\n       got:      %s", base, want, err);
		return false;
	}
	/* a failed load leaves nothing behind */
	if (conf.listen.address != NULL || conf.log.path != NULL ||
	    conf.admin_socket != NULL || conf.n_peers != 0) {
		printf("\n  FAIL %s: the struct was not cleared", base);
		return false;
	}
	printf("\n  ok   %s", msg);
	return true;
}

static void
bad_files_refused(void)
{
	char *files[128];
	int n = list_confs(BAD_DIR, false, files, 128);

	CU_ASSERT(n >= BAD_MIN);
	for (int i = 0; i < n; i++) {
		CU_ASSERT(check_bad(files[i]));
		free(files[i]);
	}
	printf("\n  %d bad files\n", n);
}

/* what a minimal file gets */
static void
defaults(void)
{
	struct repld_conf conf;
	char err[512], want[PATH_MAX * 2];
	static const uint8_t uuid[16] = {
		0x1b, 0x53, 0x0f, 0xb6, 0x20, 0x73, 0x4a, 0xf6,
		0x9c, 0xf3, 0xb6, 0xbf, 0xf6, 0xc3, 0x72, 0xe3,
	};

	write_file("min.conf", BASE "log = { path = \"log/ring\"; };\n");
	CU_ASSERT_EQUAL_FATAL(load_tmp("min.conf", &conf, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(conf.node_id, 7);
	CU_ASSERT_EQUAL(conf.role, REPLD_ROLE_REPLICA);
	CU_ASSERT_STRING_EQUAL(conf.cluster_uuid_text, UUID_TEXT);
	CU_ASSERT_EQUAL(memcmp(conf.cluster_uuid, uuid, 16), 0);
	CU_ASSERT_EQUAL(conf.listen.control_port, REPLD_CONTROL_PORT_DEFAULT);
	CU_ASSERT_EQUAL(conf.listen.data_port, REPLD_DATA_PORT_DEFAULT);
	CU_ASSERT_EQUAL(conf.transport, REPLD_TRANSPORT_AUTO);
	CU_ASSERT_EQUAL(conf.flush_method, REPLD_FLUSH_AUTO);
	CU_ASSERT_EQUAL(conf.log.backend, REPLD_BACKEND_PMEM);
	CU_ASSERT_EQUAL(conf.log.size, 256u << 20);
	CU_ASSERT_EQUAL(conf.full_timeout_ms, 1000);
	CU_ASSERT_EQUAL(conf.busy_poll_us, -1);	/* adaptive */
	CU_ASSERT_EQUAL(conf.n_peers, 0);
	CU_ASSERT_EQUAL(conf.quorum, 0);
	CU_ASSERT_PTR_NULL(conf.tls.ca);
	CU_ASSERT_PTR_NULL(conf.tls.cert);
	CU_ASSERT_PTR_NULL(conf.tls.key);
	CU_ASSERT_EQUAL(conf.timeouts.heartbeat_ms, 100);
	CU_ASSERT_EQUAL(conf.timeouts.down_ms, 2000);
	CU_ASSERT_EQUAL(conf.timeouts.promote_wait_ms, 4000);
	CU_ASSERT_STRING_EQUAL(conf.admin_socket, REPLD_ADMIN_SOCKET_DEFAULT);
	CU_ASSERT_EQUAL(conf.log_level, REPLD_LOG_NOTICE);
	CU_ASSERT_EQUAL(conf.retention.mode, REPLD_RETENTION_AUTO);
	CU_ASSERT_EQUAL(conf.retention.keep, (256u << 20) / 4);
	CU_ASSERT_EQUAL(conf.retention.keep_records, 0);
	CU_ASSERT_EQUAL(conf.retention.keep_seconds, 0);
	CU_ASSERT_EQUAL(conf.retention.alarm_percent, 90);
	CU_ASSERT_EQUAL(conf.retention.reader_max_lag, (256u << 20) / 2);
	CU_ASSERT_EQUAL(conf.retention.replica_max_hold, (256u << 20) / 2);
	CU_ASSERT_PTR_NULL(conf.metrics.host);	/* no HTTP endpoints */
	CU_ASSERT_EQUAL(conf.metrics.port, 0);
	/* relative: from the file's directory, whatever the working one */
	snprintf(want, sizeof(want), "%s/log/ring", tmp_dir);
	CU_ASSERT_STRING_EQUAL(conf.log.path, want);
	repld_conf_free(&conf);
	CU_ASSERT_PTR_NULL(conf.log.path);
	repld_conf_free(&conf);		/* twice: harmless */

	/* promote_wait_ms follows down_ms */
	write_file("down.conf", BASE "log = { path = \"/x\"; };\n"
			"timeouts = { down_ms = 3000; };\n");
	CU_ASSERT_EQUAL_FATAL(load_tmp("down.conf", &conf, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(conf.timeouts.promote_wait_ms, 6000);
	repld_conf_free(&conf);

	/* retention: each setting read; keep follows log.size when not given */
	write_file("ret.conf", BASE "log = { path = \"/x\"; size = \"64M\"; };\n"
			"retention = { mode = \"checkpointer\"; keep_records = 5000000000L; "
			"keep_seconds = 3600; alarm_percent = 75; "
			"reader_max_lag = \"20M\"; replica_max_hold = 30000000; };\n");
	CU_ASSERT_EQUAL_FATAL(load_tmp("ret.conf", &conf, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(conf.retention.mode, REPLD_RETENTION_CHECKPOINTER);
	CU_ASSERT_EQUAL(conf.retention.keep, 16u << 20);
	CU_ASSERT_EQUAL(conf.retention.keep_records, 5000000000ull);
	CU_ASSERT_EQUAL(conf.retention.keep_seconds, 3600);
	CU_ASSERT_EQUAL(conf.retention.alarm_percent, 75);
	CU_ASSERT_EQUAL(conf.retention.reader_max_lag, 20u << 20);
	CU_ASSERT_EQUAL(conf.retention.replica_max_hold, 30000000u);
	repld_conf_free(&conf);
	write_file("keep.conf", BASE "log = { path = \"/x\"; size = \"64M\"; };\n"
			"retention = { keep = \"48M\"; };\n");
	CU_ASSERT_EQUAL_FATAL(load_tmp("keep.conf", &conf, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(conf.retention.keep, 48u << 20);	/* three quarters: the most */
	repld_conf_free(&conf);

	/* metrics_listen: an IPv4 address, a bracketed IPv6 one, a name */
	write_file("m4.conf", BASE "log = { path = \"/x\"; };\n"
			"metrics_listen = \"0.0.0.0:9100\";\n");
	CU_ASSERT_EQUAL_FATAL(load_tmp("m4.conf", &conf, err, sizeof(err)), 0);
	CU_ASSERT_STRING_EQUAL(conf.metrics.host, "0.0.0.0");
	CU_ASSERT_EQUAL(conf.metrics.port, 9100);
	repld_conf_free(&conf);
	CU_ASSERT_PTR_NULL(conf.metrics.host);
	write_file("m6.conf", BASE "log = { path = \"/x\"; };\n"
			"metrics_listen = \"[::1]:9101\";\n");
	CU_ASSERT_EQUAL_FATAL(load_tmp("m6.conf", &conf, err, sizeof(err)), 0);
	CU_ASSERT_STRING_EQUAL(conf.metrics.host, "::1");
	CU_ASSERT_EQUAL(conf.metrics.port, 9101);
	repld_conf_free(&conf);
	write_file("mn.conf", BASE "log = { path = \"/x\"; };\n"
			"metrics_listen = \"localhost:1\";\n");
	CU_ASSERT_EQUAL_FATAL(load_tmp("mn.conf", &conf, err, sizeof(err)), 0);
	CU_ASSERT_STRING_EQUAL(conf.metrics.host, "localhost");
	CU_ASSERT_EQUAL(conf.metrics.port, 1);
	repld_conf_free(&conf);

	/* coordinator: none by default; the defaults; every setting given */
	write_file("c0.conf", BASE "log = { path = \"/x\"; };\n");
	CU_ASSERT_EQUAL_FATAL(load_tmp("c0.conf", &conf, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(conf.coordinator.n_endpoints, 0);
	repld_conf_free(&conf);
	write_file("c1.conf", BASE "log = { path = \"/x\"; };\n"
			"coordinator = { etcd = { endpoints = [ \"http://10.0.0.1:2379\", "
			"\"https://[::1]:2379/\", \"http://etcd\" ]; }; };\n");
	CU_ASSERT_EQUAL_FATAL(load_tmp("c1.conf", &conf, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(conf.coordinator.n_endpoints, 3);
	CU_ASSERT_STRING_EQUAL(conf.coordinator.endpoints[1], "https://[::1]:2379/");
	CU_ASSERT_STRING_EQUAL(conf.coordinator.prefix, "/rpma-repl/");
	CU_ASSERT_EQUAL(conf.coordinator.lease_ms, 6000);
	CU_ASSERT_EQUAL(conf.coordinator.timeout_ms, 1000);
	CU_ASSERT_EQUAL(conf.coordinator.candidate, 1);
	CU_ASSERT_PTR_NULL(conf.coordinator.ca);
	repld_conf_free(&conf);
	write_file("c2.conf", BASE "log = { path = \"/x\"; };\n"
			"coordinator = { etcd = { endpoints = [ \"http://a:1\" ]; "
			"prefix = \"/x/y/\"; lease_ms = 1000; }; candidate = false; };\n");
	CU_ASSERT_EQUAL_FATAL(load_tmp("c2.conf", &conf, err, sizeof(err)), 0);
	CU_ASSERT_STRING_EQUAL(conf.coordinator.prefix, "/x/y/");
	CU_ASSERT_EQUAL(conf.coordinator.lease_ms, 1000);
	/* a third of a 1 s lease, not the 1 s default */
	CU_ASSERT_EQUAL(conf.coordinator.timeout_ms, 333);
	CU_ASSERT_EQUAL(conf.coordinator.candidate, 0);
	repld_conf_free(&conf);
}

static void
sizes(void)
{
	static const struct {
		const char *text;
		uint64_t bytes;
	} cases[] = {
		{ "1048576", 1u << 20 },
		{ "\"1048576\"", 1u << 20 },
		{ "\"64M\"", 64u << 20 },
		{ "\"64MiB\"", 64u << 20 },
		{ "\"64 M\"", 64u << 20 },
		{ "\"2048k\"", 2u << 20 },
		{ "\"1G\"", 1u << 30 },
		{ "\"1T\"", 1ull << 40 },
		{ "0x200000", 2u << 20 },
		{ "4294967296L", 4ull << 30 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct repld_conf conf;
		char text[512], err[512];

		snprintf(text, sizeof(text), BASE "log = { path = \"/x\"; size = %s; };\n",
				cases[i].text);
		write_file("size.conf", text);
		CU_ASSERT_EQUAL_FATAL(load_tmp("size.conf", &conf, err, sizeof(err)), 0);
		CU_ASSERT_EQUAL(conf.log.size, cases[i].bytes);
		repld_conf_free(&conf);
	}
}

/* all three TLS files, relative, readable: taken as they are */
static void
tls_complete(void)
{
	struct repld_conf conf;
	char err[512], want[PATH_MAX * 2];

	write_file("ca.pem", "ca\n");
	write_file("node.pem", "cert\n");
	write_file("node.key", "key\n");
	write_file("tls.conf", BASE "log = { path = \"/x\"; };\n"
			"tls = { ca = \"ca.pem\"; cert = \"node.pem\"; key = \"node.key\"; };\n");
	CU_ASSERT_EQUAL_FATAL(load_tmp("tls.conf", &conf, err, sizeof(err)), 0);
	snprintf(want, sizeof(want), "%s/node.key", tmp_dir);
	CU_ASSERT_STRING_EQUAL(conf.tls.key, want);
	repld_conf_free(&conf);

	/* a directory is no key */
	write_file("tls-dir.conf", BASE "log = { path = \"/x\"; };\n"
			"tls = { ca = \"ca.pem\"; cert = \"node.pem\"; key = \"/\"; };\n");
	CU_ASSERT_EQUAL(load_tmp("tls-dir.conf", &conf, err, sizeof(err)), -1);
	CU_ASSERT(ends_with(err, "tls-dir.conf:5: tls.key / is not a regular file"));
}

/* @include: relative to the file; a fault there names the included file */
static void
include(void)
{
	struct repld_conf conf;
	char err[512], want[PATH_MAX * 2];

	write_file("common.inc", "log_level = \"debug\";\n");
	write_file("inc.conf", BASE "log = { path = \"/x\"; };\n@include \"common.inc\"\n");
	CU_ASSERT_EQUAL_FATAL(load_tmp("inc.conf", &conf, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(conf.log_level, REPLD_LOG_DEBUG);
	repld_conf_free(&conf);

	/* libconfig 1.5 would read it as 3000000000 - 2^32 */
	write_file("wide.inc", "# a file included\nfull_timeout_ms = 3000000000;\n");
	write_file("wide.conf", BASE "log = { path = \"/x\"; };\n@include \"wide.inc\"\n");
	CU_ASSERT_EQUAL(load_tmp("wide.conf", &conf, err, sizeof(err)), -1);
	snprintf(want, sizeof(want), "%s/wide.inc:2: integer 3000000000 does not fit "
			"in 32 bits: write 3000000000L", tmp_dir);
	CU_ASSERT_STRING_EQUAL(err, want);

	/* a syntax error in it too */
	write_file("syntax.inc", "\n\nlog_level = ;\n");
	write_file("syntax.conf", BASE "log = { path = \"/x\"; };\n@include \"syntax.inc\"\n");
	CU_ASSERT_EQUAL(load_tmp("syntax.conf", &conf, err, sizeof(err)), -1);
	snprintf(want, sizeof(want), "%s/syntax.inc:3: syntax error", tmp_dir);
	CU_ASSERT_STRING_EQUAL(err, want);
}

/* no file, a directory, no room for the message: still one clear answer */
static void
unreadable(void)
{
	struct repld_conf conf;
	char err[512], want[PATH_MAX * 2];

	snprintf(want, sizeof(want), "%s/none.conf: cannot read it: %s", tmp_dir,
			strerror(ENOENT));
	CU_ASSERT_EQUAL(load_tmp("none.conf", &conf, err, sizeof(err)), -1);
	CU_ASSERT_STRING_EQUAL(err, want);

	CU_ASSERT_EQUAL(repld_conf_load(tmp_dir, &conf, err, sizeof(err)), -1);
	CU_ASSERT(ends_with(err, ": is a directory"));

	CU_ASSERT_EQUAL(repld_conf_load(BAD_DIR "/quorum-more.conf", &conf, NULL, 0), -1);
	CU_ASSERT_EQUAL(repld_conf_load(BAD_DIR "/quorum-more.conf", &conf, err, 8), -1);
	CU_ASSERT_EQUAL(strlen(err), 7);
}

int
main(void)
{
	static CU_TestInfo cases[] = {
		UNIT_CASE(examples_load),
		UNIT_CASE(example_localhost_cluster),
		UNIT_CASE(bad_files_refused),
		UNIT_CASE(defaults),
		UNIT_CASE(sizes),
		UNIT_CASE(tls_complete),
		UNIT_CASE(include),
		UNIT_CASE(unreadable),
		CU_TEST_INFO_NULL,
	};
	int ret;

	if (setup() != 0) {
		perror("conf_test: mkdtemp");
		return 99;
	}
	ret = unit_run("repld_conf", cases);
	teardown();
	return ret;
}
