/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * repl_node.h -- what repl-node's two halves share: the records a primary
 * writes (repl_node.c) are the records the verifier recomputes and hashes
 * (repl_node_check.c), so both take them from here; and the checking
 * modes main dispatches to.
 */
#ifndef REPL_NODE_H
#define REPL_NODE_H 1

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MAX_LEN 600		/* the longest payload a primary writes */
#define PAYLOAD_HDR 16		/* its epoch and LSN, ahead of the bytes */

/* FNV-1a 64: the hash an acknowledgement line carries */
uint64_t fnv1a(const unsigned char *p, size_t len);
/* the payload a primary of epoch writes as record lsn; its length */
size_t payload_make(uint64_t seed, uint64_t epoch, uint64_t lsn,
		unsigned char *buf);

/* the modes of repl_node_check.c: 0 ok, 1 failed, 2 bad arguments */
int run_status(int argc, char *argv[]);
int run_forge(int argc, char *argv[]);
/* verify (with_seed) and verify-acks */
int run_verify(int argc, char *argv[], bool with_seed);

#endif
