/* SPDX-License-Identifier: BSD-3-Clause */
/* rv_admin_sock.c -- a replvfs primary's admin socket (rv_admin_sock.h) */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <sqlite3ext.h>
SQLITE_EXTENSION_INIT3

#include "admin_proto.h"
#include "admin_req.h"
#include "repl.h"
#include "rv_admin.h"
#include "rv_admin_sock.h"

#define IDLE_MS 10000		/* a client that sends nothing is let go */

struct rv_admin_sock {
	struct rv_db *d;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	int fd;				/* listening */
	int stop[2];			/* a pipe: its write end closed at stop */
	pthread_t thread;
};

/* the REPL_E_* names of repld's replies (admin_status.c) */
static const char *
error_name(int code)
{
	static const struct {
		int code;
		const char *name;
	} names[] = {
		{ REPL_E_INVAL, "REPL_E_INVAL" }, { REPL_E_NOMEM, "REPL_E_NOMEM" },
		{ REPL_E_IO, "REPL_E_IO" }, { REPL_E_CORRUPT, "REPL_E_CORRUPT" },
		{ REPL_E_FULL, "REPL_E_FULL" }, { REPL_E_TOO_BIG, "REPL_E_TOO_BIG" },
		{ REPL_E_NOT_FOUND, "REPL_E_NOT_FOUND" },
		{ REPL_E_TIMEDOUT, "REPL_E_TIMEDOUT" }, { REPL_E_FENCED, "REPL_E_FENCED" },
		{ REPL_E_UNKNOWN, "REPL_E_UNKNOWN" }, { REPL_E_NO_QUORUM, "REPL_E_NO_QUORUM" },
		{ REPL_E_MEMBERSHIP, "REPL_E_MEMBERSHIP" }, { REPL_E_LOCKED, "REPL_E_LOCKED" },
		{ REPL_E_NOT_MEMBER, "REPL_E_NOT_MEMBER" },
		{ REPL_E_SUPERSEDED, "REPL_E_SUPERSEDED" },
		{ REPL_E_TRANSPORT, "REPL_E_TRANSPORT" }, { REPL_E_BLANK, "REPL_E_BLANK" },
		{ REPL_E_NO_PEERS, "REPL_E_NO_PEERS" },
		{ REPL_E_OTHER_CLUSTER, "REPL_E_OTHER_CLUSTER" },
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].code == code)
			return names[i].name;
	return "ERROR";
}

/* the whole line, or false (the client went, or stopped reading) */
static bool
send_all(int fd, const char *buf, size_t len)
{
	while (len > 0) {
		ssize_t n = send(fd, buf, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;
		buf += n;
		len -= (size_t)n;
	}
	return true;
}

/* {"ok":true,"message":...} (name NULL), or an error reply */
static bool
reply(int fd, const char *name, int code, const char *msg)
{
	sqlite3_str *s = sqlite3_str_new(NULL);
	char *line;
	bool ok;

	if (name == NULL)
		sqlite3_str_appendall(s, "{\"ok\":true,\"message\":\"");
	else
		/* REPL_E_* codes are repl.h's; the protocol's own names have 0 */
		sqlite3_str_appendf(s, "{\"ok\":false,\"error\":\"%s\",\"code\":%d,"
			"\"message\":\"", name, code);
	rv_admin_json_text(s, msg);
	sqlite3_str_appendall(s, "\"}\n");
	if ((line = sqlite3_str_finish(s)) == NULL)
		return false;
	ok = send_all(fd, line, strlen(line));
	sqlite3_free(line);
	return ok;
}

static bool
serve(struct rv_admin_sock *a, int fd, const struct admin_req *req)
{
	char msg[1024], *json;
	int ret;
	bool ok;

	switch (req->verb) {
	case ADMIN_STATUS:
		if ((json = rv_admin_status(a->d, true, msg, sizeof(msg))) == NULL)
			return reply(fd, "REPL_E_IO", REPL_E_IO, msg);
		ok = send_all(fd, json, strlen(json)) && send_all(fd, "\n", 1);
		sqlite3_free(json);
		return ok;
	case ADMIN_ADD:
	case ADMIN_REMOVE:
		ret = rv_admin_change(a->d, req->verb == ADMIN_ADD, req->host, req->port,
			req->quorum, msg, sizeof(msg));
		sqlite3_log(ret == 0 ? SQLITE_NOTICE : SQLITE_WARNING, "replvfs: admin "
			"socket %s: %s %s:%u: %s", a->path, admin_verb_name(req->verb),
			req->host, req->port, msg);
		return ret == 0 ? reply(fd, NULL, 0, msg) :
			reply(fd, error_name(ret), ret, msg);
	default:
		snprintf(msg, sizeof(msg), "%s: a replvfs primary (the application's "
			"process) serves STATUS, ADD and REMOVE only",
			admin_verb_name(req->verb));
		return reply(fd, "WRONG_ROLE", 0, msg);
	}
}

/* one client's requests until it goes, idles or the socket stops */
static void
client(struct rv_admin_sock *a, int fd)
{
	char buf[2 * ADMIN_LINE_MAX], why[256];
	size_t have = 0, used;
	struct admin_req req;
	enum admin_parse p;

	for (;;) {
		struct pollfd pf[2] = { { fd, POLLIN, 0 }, { a->stop[0], POLLIN, 0 } };
		ssize_t n;

		if (poll(pf, 2, IDLE_MS) <= 0 || pf[1].revents != 0)
			return;
		if ((n = recv(fd, buf + have, sizeof(buf) - have, 0)) <= 0)
			return;
		have += (size_t)n;
		/* an APPEND's record follows its line: refused, then let go */
		if (have >= 6 && memcmp(buf, "APPEND", 6) == 0) {
			(void)reply(fd, "WRONG_ROLE", 0, "APPEND: a replvfs database's "
				"records are its SQLite commits");
			return;
		}
		while ((p = admin_req_parse(buf, have, &req, &used, why,
				sizeof(why))) != ADMIN_PARSE_MORE) {
			if (p == ADMIN_PARSE_FATAL) {
				(void)reply(fd, "BAD_REQUEST", 0, why);
				return;
			}
			if (!(p == ADMIN_PARSE_OK ? serve(a, fd, &req) :
					reply(fd, "BAD_REQUEST", 0, why)))
				return;
			memmove(buf, buf + used, have - used);
			have -= used;
			if (have >= 6 && memcmp(buf, "APPEND", 6) == 0)
				break;
		}
	}
}

/* this process's user, or root: the socket file's mode aside */
static bool
same_user(int fd)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);

	return getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0 &&
		(cred.uid == geteuid() || cred.uid == 0);
}

static void *
run(void *arg)
{
	struct rv_admin_sock *a = arg;

	(void)pthread_setname_np(pthread_self(), "replvfs-admin");
	for (;;) {
		struct pollfd pf[2] = { { a->fd, POLLIN, 0 }, { a->stop[0], POLLIN, 0 } };
		int fd;

		if (poll(pf, 2, -1) < 0 && errno != EINTR)
			break;
		if (pf[1].revents != 0)
			break;
		if (!(pf[0].revents & POLLIN) ||
		    (fd = accept4(a->fd, NULL, NULL, SOCK_CLOEXEC)) < 0)
			continue;
		if (same_user(fd))
			client(a, fd);
		else
			(void)reply(fd, "BAD_REQUEST", 0, "served to the application's "
				"user only");
		close(fd);
	}
	return NULL;
}

/* a socket file at path that someone answers on */
static bool
in_use(const struct sockaddr_un *sun)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	bool live;

	if (fd < 0)
		return false;
	live = connect(fd, (const struct sockaddr *)sun, sizeof(*sun)) == 0;
	close(fd);
	return live;
}

int
rv_admin_sock_start(struct rv_db *d, const char *path, struct rv_admin_sock **out,
		char *why, size_t whylen)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct rv_admin_sock *a;
	struct stat sb;

	if (strlen(path) >= sizeof(sun.sun_path)) {
		snprintf(why, whylen, "the admin socket path %s is too long", path);
		return -1;
	}
	strcpy(sun.sun_path, path);
	if (lstat(path, &sb) == 0) {
		if (!S_ISSOCK(sb.st_mode)) {
			snprintf(why, whylen, "the admin socket path %s exists and is not "
				"a socket", path);
			return -1;
		}
		if (in_use(&sun)) {
			snprintf(why, whylen, "another process answers on the admin socket "
				"%s (a repld of this node must not run while the "
				"application is its primary)", path);
			return -1;
		}
		unlink(path);	/* a process's that is gone */
	}
	if ((a = calloc(1, sizeof(*a))) == NULL) {
		snprintf(why, whylen, "out of memory");
		return -1;
	}
	a->d = d;
	snprintf(a->path, sizeof(a->path), "%s", path);
	a->stop[0] = a->stop[1] = -1;
	if ((a->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0 ||
	    pipe2(a->stop, O_CLOEXEC) != 0) {
		snprintf(why, whylen, "the admin socket %s: %s", path, strerror(errno));
		goto fail;
	}
	/*
	 * No umask here (it is the whole process's): the file is made 0600
	 * at once, and same_user refuses other users in the moment between
	 */
	if (bind(a->fd, (struct sockaddr *)&sun, sizeof(sun)) != 0) {
		snprintf(why, whylen, "the admin socket %s: %s", path, strerror(errno));
		goto fail;
	}
	if (chmod(path, 0600) != 0 || listen(a->fd, 16) != 0) {
		snprintf(why, whylen, "the admin socket %s: %s", path, strerror(errno));
		unlink(path);
		goto fail;
	}
	if (pthread_create(&a->thread, NULL, run, a) != 0) {
		snprintf(why, whylen, "the admin socket %s: cannot start its thread", path);
		unlink(path);
		goto fail;
	}
	*out = a;
	return 0;
fail:
	if (a->fd >= 0)
		close(a->fd);
	if (a->stop[0] >= 0) {
		close(a->stop[0]);
		close(a->stop[1]);
	}
	free(a);
	return -1;
}

void
rv_admin_sock_stop(struct rv_admin_sock **ap)
{
	struct rv_admin_sock *a = *ap;

	if (a == NULL)
		return;
	/* the read end sees the hang-up: the thread and a client it serves end */
	close(a->stop[1]);
	pthread_join(a->thread, NULL);
	close(a->stop[0]);
	close(a->fd);
	unlink(a->path);
	free(a);
	*ap = NULL;
}
