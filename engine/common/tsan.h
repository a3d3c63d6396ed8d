/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tsan.h -- what ThreadSanitizer must not watch.  A replica's ring is
 * written by the transport (one-sided writes: a NIC, or libfabric's tcp
 * provider in its own thread) while the replica scans it; no lock can
 * order a NIC's writes, and the records validate themselves by their
 * chained CRCs.  Suppressing that race still costs a report's work on
 * every byte read, which slows a replica's scan by orders of magnitude;
 * its reads are ignored instead.  Nothing outside a ThreadSanitizer build.
 */
#ifndef REPL_TSAN_H
#define REPL_TSAN_H

#if defined(__SANITIZE_THREAD__)
/* ThreadSanitizer's dynamic annotations (its runtime defines them) */
void AnnotateIgnoreReadsBegin(const char *file, int line);
void AnnotateIgnoreReadsEnd(const char *file, int line);
#define RING_READS_BEGIN() AnnotateIgnoreReadsBegin(__FILE__, __LINE__)
#define RING_READS_END() AnnotateIgnoreReadsEnd(__FILE__, __LINE__)
#else
#define RING_READS_BEGIN() do {} while (0)
#define RING_READS_END() do {} while (0)
#endif

#endif
