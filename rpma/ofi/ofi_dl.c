/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ofi_dl.c -- libfabric, loaded when the ofi provider is first used rather
 * than linked: Debian's libfabric pulls in the PSM libraries, whose
 * constructors sleep to time the CPU (about 0.2 s), so every process
 * linked against it -- each `replctl status` too -- would pay that at
 * start whether or not it ever opens a fabric.  Only the five functions
 * libfabric exports are looked up; everything else goes through the
 * objects' operation tables.
 *
 * The same constructors install signal handlers (SIGTERM, SIGINT, SIGSEGV
 * and more, that exit the process): linked, they ran before main() set its
 * own; loaded later they would replace the application's.  load() puts
 * every disposition back as it found it.
 */
#include "config.h"

#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>

#include "ofi.h"

/* the ABI the headers describe: FI_MAJOR_VERSION 1 */
#define OFI_DL_SONAME "libfabric.so.1"

static struct {
	int (*getinfo)(uint32_t, const char *, const char *, uint64_t,
		const struct fi_info *, struct fi_info **);
	void (*freeinfo)(struct fi_info *);
	struct fi_info *(*dupinfo)(const struct fi_info *);
	int (*fabric)(struct fi_fabric_attr *, struct fid_fabric **, void *);
	const char *(*strerror)(int);
} fns;

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static int loaded;		/* 1 loaded, -1 failed (why in load_why) */
static char load_why[256];

static void
load(void)
{
	static struct sigaction before[NSIG];
	bool had[NSIG] = { false };
	const char *e;
	void *h;

	for (int sig = 1; sig < NSIG; sig++)
		had[sig] = sigaction(sig, NULL, &before[sig]) == 0;
	h = dlopen(OFI_DL_SONAME, RTLD_NOW | RTLD_LOCAL);
	for (int sig = 1; sig < NSIG; sig++)
		if (had[sig] && sig != SIGKILL && sig != SIGSTOP)
			(void)sigaction(sig, &before[sig], NULL);

	if (h == NULL) {
		e = dlerror();
		snprintf(load_why, sizeof(load_why), "the ofi provider needs %s, "
			"which cannot be loaded: %s (Debian: libfabric1)",
			OFI_DL_SONAME, e ? e : "?");
		loaded = -1;
		return;
	}
	/* POSIX: a data pointer converts to a function pointer via dlsym */
	*(void **)&fns.getinfo = dlsym(h, "fi_getinfo");
	*(void **)&fns.freeinfo = dlsym(h, "fi_freeinfo");
	*(void **)&fns.dupinfo = dlsym(h, "fi_dupinfo");
	*(void **)&fns.fabric = dlsym(h, "fi_fabric");
	*(void **)&fns.strerror = dlsym(h, "fi_strerror");
	if (!fns.getinfo || !fns.freeinfo || !fns.dupinfo || !fns.fabric ||
	    !fns.strerror) {
		snprintf(load_why, sizeof(load_why), "%s lacks a function of its "
			"API (fi_getinfo, fi_freeinfo, fi_dupinfo, fi_fabric, "
			"fi_strerror)", OFI_DL_SONAME);
		loaded = -1;
		return;	/* the handle stays: nothing else unloads either */
	}
	loaded = 1;
}

static bool
ready(void)
{
	pthread_once(&load_once, load);
	return loaded == 1;
}

int
rpma_fi_getinfo(uint32_t version, const char *node, const char *service,
		uint64_t flags, const struct fi_info *hints, struct fi_info **info)
{
	if (!ready()) {
		*info = NULL;
		return -FI_ENOSYS;
	}
	return fns.getinfo(version, node, service, flags, hints, info);
}

void
rpma_fi_freeinfo(struct fi_info *info)
{
	/* nothing was allocated without the library */
	if (info != NULL && ready())
		fns.freeinfo(info);
}

struct fi_info *
rpma_fi_dupinfo(const struct fi_info *info)
{
	return ready() ? fns.dupinfo(info) : NULL;
}

int
rpma_fi_fabric(struct fi_fabric_attr *attr, struct fid_fabric **fabric,
		void *context)
{
	return ready() ? fns.fabric(attr, fabric, context) : -FI_ENOSYS;
}

const char *
rpma_fi_strerror(int errnum)
{
	/* a failure to load is what every call then fails with */
	if (!ready())
		return load_why;
	return fns.strerror(errnum);
}
