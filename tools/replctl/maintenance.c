/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * maintenance.c -- replctl maintenance on|off: ask a node with a
 * coordinator (repld.conf(5), coordinator) to write or delete the
 * cluster's maintenance key in etcd.  While it exists no node takes over
 * or campaigns by itself; switchover and failover still work.  Any node
 * of the cluster will do: the key is the cluster's, not the node's.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "admin_proto.h"
#include "admin_req.h"
#include "client.h"
#include "replctl.h"

static int
usage(void)
{
	fprintf(stderr, "usage: replctl maintenance on [--reason TEXT] | off [--json]\n");
	return EXIT_USAGE;
}

/* a reason the daemon takes: at most ADMIN_REASON_MAX bytes, one line */
static bool
reason_ok(const char *s)
{
	if (strlen(s) > ADMIN_REASON_MAX) {
		fprintf(stderr, "replctl: maintenance: the reason is %zu bytes, more "
			"than %d\n", strlen(s), ADMIN_REASON_MAX);
		return false;
	}
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if (*p < 0x20 || *p == 0x7f) {
			fprintf(stderr, "replctl: maintenance: a control character "
				"in the reason (it is shown on one line)\n");
			return false;
		}
	return true;
}

int
cmd_maintenance(int argc, char *argv[], struct live_opts *o)
{
	enum { OPT_REASON = 1 };
	static const struct option opts[] = {
		{ "reason", required_argument, NULL, OPT_REASON },
		{ NULL, 0, NULL, 0 },
	};
	const char *reason = NULL, *word;
	char line[ADMIN_LINE_MAX], when[40];
	json_t *d;
	char *reply;
	int c, ret;
	bool on;

	optind = 0;
	while ((c = live_getopt(argc, argv, false, NULL, opts, o)) != -1) {
		if (c != OPT_REASON)
			return usage();		/* '?': said already */
		reason = optarg;
	}
	if ((ret = live_opts_resolve(o)) != 0)
		return ret;
	if (argc - optind != 1) {
		fprintf(stderr, "replctl: maintenance takes one operand: on or off\n");
		return usage();
	}
	word = argv[optind];
	if (strcmp(word, "on") != 0 && strcmp(word, "off") != 0) {
		fprintf(stderr, "replctl: maintenance: \"%s\" is neither on nor off\n",
			word);
		return usage();
	}
	on = strcmp(word, "on") == 0;
	if (!on && reason != NULL) {
		fprintf(stderr, "replctl: maintenance off takes no --reason\n");
		return usage();
	}
	if (reason != NULL && !reason_ok(reason))
		return usage();
	if (on && reason != NULL && reason[0] != '\0')
		snprintf(line, sizeof(line), "MAINTENANCE on %s", reason);
	else
		snprintf(line, sizeof(line), "MAINTENANCE %s", word);
	if ((ret = client_call(o, line, &d, &reply)) != 0)
		return ret;
	if (o->json)
		printf("%s\n", reply);
	if (!jin_bool(d, "ok", false)) {
		ret = client_failed(d, "maintenance");
	} else if (!o->json && on) {
		const char *why = jin_str(d, "reason");

		printf("maintenance on (set by node %" PRIu64 " at %s%s%s): no node "
			"takes over by itself until \"replctl maintenance off\"; "
			"switchover and failover still work\n", jin_u64(d, "node_id", 0),
			utc_text(jin_u64(d, "at_ms", 0), when, sizeof(when)),
			why[0] ? ": " : "", why);
	} else if (!o->json) {
		printf("%s\n", jin_str(d, "message"));
	}
	json_decref(d);
	free(reply);
	if (ret == 0 && fflush(stdout) != 0)
		ret = EXIT_FAILED;
	return ret;
}
