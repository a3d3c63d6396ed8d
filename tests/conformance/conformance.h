/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * conformance.h -- the conformance program's own parts: the corpus and the
 * classifiers of docs/librpma-differences.md.  Linked with our core only.
 */
#ifndef CONFORMANCE_H
#define CONFORMANCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "shared.h"

struct conf_case {
	uint8_t kind;		/* enum conf_kind */
	uint32_t size;
	unsigned char *bytes;
	const char *origin;	/* which generator made it, for reports */
};

struct conf_corpus {
	struct conf_case *cases;
	size_t count, cap;
	size_t per_kind[4];	/* indexed by enum conf_kind */
};

/* builds the whole corpus from the seed; 0, or -1 on an internal error */
int conf_corpus_build(struct conf_corpus *corpus, uint64_t seed);
void conf_corpus_free(struct conf_corpus *corpus);

/*
 * One row of docs/librpma-differences.md: classify() says whether the
 * disagreement between our result line and librpma's for this case is the
 * deliberate difference the row describes.
 */
struct conf_row {
	const char *id;
	bool (*classify)(const struct conf_case *c, const char *ours,
			const char *theirs);
};

extern const struct conf_row conf_rows[];
extern const size_t conf_rows_count;

#endif
