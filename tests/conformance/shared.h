/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * shared.h -- what the conformance test (linked with our core) and the
 * librpma oracle (linked with Debian's librpma only) have in common.
 *
 * shared.c is compiled twice: once against "rpma.h" into the conformance
 * program and once against <librpma.h> (with CONFORMANCE_ORACLE defined)
 * into the oracle.  Both libraries keep librpma 1.x's API, so one source
 * evaluates a case the same way on either side and prints one result line.
 *
 * Framing of a case, oracle's stdin:
 *
 *   off size field
 *     0    1 kind   CONF_KIND_*
 *     1    4 size   payload length, little-endian
 *     5 size bytes  payload (descriptor bytes, or a probe name)
 *
 * The oracle answers each case with exactly one line on stdout.
 */
#ifndef CONFORMANCE_SHARED_H
#define CONFORMANCE_SHARED_H

#include <stddef.h>
#include <stdint.h>

enum conf_kind {
	CONF_KIND_MR = 1,	/* rpma_mr_remote_from_descriptor(bytes) */
	CONF_KIND_PCFG = 2,	/* rpma_peer_cfg_from_descriptor(bytes) */
	CONF_KIND_PROBE = 3,	/* a named behaviour probe */
};

/* longest payload either program accepts */
#define CONF_MAX_PAYLOAD 65536
/* longest result line (without the newline) */
#define CONF_LINE_MAX 1024

/*
 * Called first thing in main(), before anything touches the log
 * thresholds: records the library's default thresholds for the
 * "log_defaults" probe, then disables logging on both thresholds.
 */
void conf_init_library(void);

/* evaluate one case into line (CONF_LINE_MAX bytes); 0, or -1: unknown */
int conf_eval(int kind, const unsigned char *bytes, size_t size, char *line);

/* the probes, in the order the conformance program runs them */
size_t conf_probe_count(void);
const char *conf_probe_name(size_t i);

#endif
