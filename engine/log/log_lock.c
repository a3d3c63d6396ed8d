/* SPDX-License-Identifier: BSD-3-Clause */
/* log_lock.c -- one process at a time on a log (see log_lock.h) */
#include "config.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <unistd.h>

#include "common/elog.h"
#include "common/fault.h"
#include "log/log_lock.h"
#include "repl.h"

/* the whole file, for writing; an OFD lock needs l_pid 0 */
static int
try_lock(int fd)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };

	return fcntl(fd, F_OFD_SETLK, &fl);
}

int
log_lock(const char *path, bool create, int *fd, bool *created)
{
	char holder[96];
	int e;

	*created = false;
	*fd = open(path, O_RDWR | O_CLOEXEC);
	if (*fd < 0 && errno == ENOENT && create) {
		/* O_EXCL: only a file this call made is its open's to remove */
		*fd = open(path, O_RDWR | O_CLOEXEC | O_CREAT | O_EXCL, 0600);
		if (*fd >= 0)
			*created = true;
		else if (errno == EEXIST)
			*fd = open(path, O_RDWR | O_CLOEXEC | O_CREAT, 0600);
	}
	if (*fd < 0)
		return 0;	/* the log's own open names the reason */
	REPL_FAULT(REPL_E_LOCKED, log_lock_abandon(path, fd, *created));
	if (try_lock(*fd) == 0)
		return 0;
	e = errno;
	if (e != EAGAIN && e != EACCES) {
		/* e.g. a filesystem without locks: the log still opens */
		REPL_LOG_WARNING("the log %s cannot be locked against a second "
			"process: %s", path, strerror(e));
		log_unlock(fd);
		return 0;
	}
	log_unlock(fd);
	log_lock_holder(path, holder, sizeof(holder));
	REPL_LOG_ERROR("refused: the log %s is in use: %s holds its lock",
		path, holder);
	return REPL_E_LOCKED;
}

int
log_lock_fd(const char *path, int fd)
{
	if (try_lock(fd) == 0)
		return 0;
	if (errno == EAGAIN || errno == EACCES)
		return REPL_E_LOCKED;
	REPL_LOG_WARNING("the log %s cannot be locked against a second process: %s",
		path, strerror(errno));
	return 0;
}

void
log_lock_abandon(const char *path, int *fd, bool created)
{
	/* under the lock: no other process opened it meanwhile */
	if (created && *fd >= 0) {
		if (unlink(path) == 0)
			REPL_LOG_WARNING("the log %s made by this start is removed again "
				"(it holds nothing)", path);
		else
			REPL_LOG_WARNING("the log %s, made by an open that failed, cannot "
				"be removed: %s", path, strerror(errno));
	}
	log_unlock(fd);
}

void
log_unlock(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* does fdinfo text hold an OFD write lock on the file dev:ino names? */
static bool
holds_lock(const char *info, const char *devino)
{
	for (const char *l = strstr(info, "lock:"); l; l = strstr(l + 5, "lock:")) {
		const char *end = strchr(l, '\n');
		size_t len = end ? (size_t)(end - l) : strlen(l);
		char line[160];

		if (len >= sizeof(line))
			continue;
		memcpy(line, l, len);
		line[len] = '\0';
		if (strstr(line, "OFDLCK") && strstr(line, " WRITE ") &&
		    strstr(line, devino))
			return true;
	}
	return false;
}

/* the process pid's name, from /proc/PID/comm ("?" if unknown) */
static void
comm_of(const char *pid, char *buf, size_t n)
{
	char p[300];
	FILE *f;

	snprintf(p, sizeof(p), "/proc/%s/comm", pid);
	snprintf(buf, n, "?");
	if ((f = fopen(p, "re")) == NULL)
		return;
	if (fgets(buf, (int)n, f))
		buf[strcspn(buf, "\n")] = '\0';
	fclose(f);
}

/* the first descriptor of process pid that holds the lock: true */
static bool
pid_holds(const char *pid, const char *devino)
{
	char dir[300], p[600], info[2048];
	struct dirent *fe;
	bool found = false;
	DIR *fds;

	snprintf(dir, sizeof(dir), "/proc/%s/fdinfo", pid);
	if ((fds = opendir(dir)) == NULL)
		return false;
	while (!found && (fe = readdir(fds)) != NULL) {
		FILE *f;
		size_t got;

		if (!isdigit((unsigned char)fe->d_name[0]))
			continue;
		snprintf(p, sizeof(p), "%s/%s", dir, fe->d_name);
		if ((f = fopen(p, "re")) == NULL)
			continue;
		got = fread(info, 1, sizeof(info) - 1, f);
		fclose(f);
		info[got] = '\0';
		found = holds_lock(info, devino);
	}
	closedir(fds);
	return found;
}

void
log_lock_holder(const char *path, char *buf, size_t n)
{
	struct dirent *pe;
	struct stat st;
	char devino[64];
	DIR *proc;

	snprintf(buf, n, "another process");
	if (stat(path, &st) != 0 || (proc = opendir("/proc")) == NULL)
		return;
	/* as /proc/locks and fdinfo name a file: MAJ:MIN:INODE, in hex:hex:dec */
	snprintf(devino, sizeof(devino), " %02x:%02x:%llu ", major(st.st_dev),
		minor(st.st_dev), (unsigned long long)st.st_ino);
	while ((pe = readdir(proc)) != NULL) {
		char name[32];

		if (!isdigit((unsigned char)pe->d_name[0]) ||
		    !pid_holds(pe->d_name, devino))
			continue;
		comm_of(pe->d_name, name, sizeof(name));
		snprintf(buf, n, "process %s (%s%s)", pe->d_name, name,
			atol(pe->d_name) == (long)getpid() ? ", this one" : "");
		break;
	}
	closedir(proc);
}
