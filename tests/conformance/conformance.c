/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * conformance.c -- our core against Debian's librpma 1.2, case by case.
 *
 * The corpus (corpus.c) is written to a temporary file that becomes the
 * stdin of tests/conformance/librpma-oracle, a separate program linked
 * only with librpma (both libraries export the same symbols, so they never
 * share a process).  The same cases run here through our core, with the
 * same evaluation code (shared.c).  Then:
 *
 *   - every disagreement must be explained by at least one row of
 *     docs/librpma-differences.md (its classifier, classify.c); an
 *     unexplained one is printed in hex with both results: FAIL;
 *   - every row must explain at least one case of the run, else the table
 *     is stale: FAIL;
 *   - the IDs of the table and of the classifiers must be the same set.
 *
 * Environment: CONFORMANCE_SEED (decimal or 0x hex) replaces the default
 * seed; CONFORMANCE_VERBOSE=1 prints every probe with both results, =all
 * every case.  Exit status: 0 pass, 1 fail, 77 skip (no librpma-dev).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "conformance.h"
#include "fault_injection.h"
#include "rpma.h"

#ifndef HAVE_LIBRPMA_ORACLE
#define HAVE_LIBRPMA_ORACLE 0
#endif

#if HAVE_LIBRPMA_ORACLE

#ifndef ORACLE_PATH
#error "ORACLE_PATH must name the librpma-oracle program"
#endif
#ifndef DIFFERENCES_PATH
#error "DIFFERENCES_PATH must name docs/librpma-differences.md"
#endif

/* the release date of librpma 1.2.0 */
#define DEFAULT_SEED 0x20230110ull

/* how many unexplained disagreements are printed in full */
#define MAX_PRINTED 25

static const char *const kind_names[] = { "?", "mr", "pcfg", "probe" };

static int
put_frame(FILE *f, const struct conf_case *c)
{
	unsigned char header[5] = {
		c->kind, (unsigned char)c->size, (unsigned char)(c->size >> 8),
		(unsigned char)(c->size >> 16), (unsigned char)(c->size >> 24),
	};
	if (fwrite(header, 1, sizeof(header), f) != sizeof(header))
		return -1;
	if (c->size && fwrite(c->bytes, 1, c->size, f) != c->size)
		return -1;
	return 0;
}

/*
 * Run the oracle over the whole corpus; theirs[i] gets case i's line.
 * 0, or -1 with the reason printed.
 */
static int
run_oracle(const struct conf_corpus *corpus, char **theirs)
{
	FILE *in = tmpfile();
	int out[2];
	pid_t pid;
	int status;

	if (in == NULL) {
		perror("tmpfile");
		return -1;
	}
	for (size_t i = 0; i < corpus->count; i++) {
		if (put_frame(in, &corpus->cases[i])) {
			perror("writing the corpus");
			fclose(in);
			return -1;
		}
	}
	if (fflush(in) != 0 || fseek(in, 0, SEEK_SET) != 0) {
		perror("writing the corpus");
		fclose(in);
		return -1;
	}
	if (pipe(out) != 0) {
		perror("pipe");
		fclose(in);
		return -1;
	}
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		perror("fork");
		fclose(in);
		close(out[0]);
		close(out[1]);
		return -1;
	}
	if (pid == 0) {
		if (dup2(fileno(in), STDIN_FILENO) < 0 ||
		    lseek(STDIN_FILENO, 0, SEEK_SET) != 0 ||
		    dup2(out[1], STDOUT_FILENO) < 0)
			_exit(126);
		close(out[0]);
		close(out[1]);
		execl(ORACLE_PATH, ORACLE_PATH, (char *)NULL);
		fprintf(stderr, "cannot run %s: %s\n", ORACLE_PATH,
			strerror(errno));
		_exit(127);
	}
	fclose(in);
	close(out[1]);

	FILE *from = fdopen(out[0], "r");
	if (from == NULL) {
		perror("fdopen");
		close(out[0]);
		waitpid(pid, &status, 0);
		return -1;
	}
	size_t got = 0;
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	while ((len = getline(&line, &cap, from)) >= 0) {
		if (len > 0 && line[len - 1] == '\n')
			line[--len] = '\0';
		if (got < corpus->count)
			theirs[got] = strdup(line);
		got++;
	}
	free(line);
	fclose(from);
	if (waitpid(pid, &status, 0) != pid) {
		perror("waitpid");
		return -1;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "FAIL: %s ended with %s %d\n", ORACLE_PATH,
			WIFEXITED(status) ? "exit status" : "signal",
			WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
		return -1;
	}
	if (got != corpus->count) {
		fprintf(stderr, "FAIL: the oracle answered %zu of %zu cases\n",
			got, corpus->count);
		return -1;
	}
	for (size_t i = 0; i < got; i++) {
		if (theirs[i] == NULL) {
			perror("strdup");
			return -1;
		}
	}
	return 0;
}

static void
print_case(const struct conf_case *c)
{
	printf("  case: kind=%s origin=%s size=%u\n  bytes:",
		kind_names[c->kind], c->origin, (unsigned)c->size);
	if (c->kind == CONF_KIND_PROBE) {
		printf(" \"%.*s\"\n", (int)c->size, (const char *)c->bytes);
		return;
	}
	for (uint32_t i = 0; i < c->size && i < 96; i++)
		printf("%s%02x", i % 32 == 0 ? "\n    " : " ", c->bytes[i]);
	printf("%s\n", c->size > 96 ? " ..." : "");
}

/* ------------------------------------------------------------------ */
/* the table of docs/librpma-differences.md                            */

/* "| ABC-12 | ..." -> "ABC-12"; NULL when the line is no such row */
static const char *
row_id(const char *line, char *id, size_t size)
{
	const char *p = line;
	size_t n = 0;

	if (*p++ != '|')
		return NULL;
	while (*p == ' ')
		p++;
	while (p[n] >= 'A' && p[n] <= 'Z')
		n++;
	if (n == 0 || p[n] != '-')
		return NULL;
	n++;
	size_t digits = 0;
	while (p[n + digits] >= '0' && p[n + digits] <= '9')
		digits++;
	if (digits == 0)
		return NULL;
	n += digits;
	const char *q = p + n;
	while (*q == ' ')
		q++;
	if (*q != '|' || n >= size)
		return NULL;
	memcpy(id, p, n);
	id[n] = '\0';
	return id;
}

static int
check_table_ids(void)
{
	FILE *f = fopen(DIFFERENCES_PATH, "r");
	bool seen[64] = { false };
	char *line = NULL;
	size_t cap = 0;
	int failed = 0;
	char id[32];

	if (conf_rows_count > sizeof(seen) / sizeof(seen[0])) {
		printf("FAIL: too many rows for this check\n");
		return 1;
	}
	if (f == NULL) {
		printf("FAIL: cannot open %s: %s\n", DIFFERENCES_PATH,
			strerror(errno));
		return 1;
	}
	while (getline(&line, &cap, f) >= 0) {
		if (row_id(line, id, sizeof(id)) == NULL)
			continue;
		size_t r;
		for (r = 0; r < conf_rows_count; r++)
			if (strcmp(conf_rows[r].id, id) == 0)
				break;
		if (r == conf_rows_count) {
			printf("FAIL: row %s of the table has no classifier\n", id);
			failed = 1;
		} else if (seen[r]) {
			printf("FAIL: row %s appears twice in the table\n", id);
			failed = 1;
		} else {
			seen[r] = true;
		}
	}
	free(line);
	fclose(f);
	for (size_t r = 0; r < conf_rows_count; r++) {
		if (!seen[r]) {
			printf("FAIL: classifier %s has no row in %s\n",
				conf_rows[r].id, DIFFERENCES_PATH);
			failed = 1;
		}
	}
	return failed;
}

/* ------------------------------------------------------------------ */
/* the classifiers themselves: near misses must stay unexplained        */

struct self_case {
	const char *what;
	uint8_t kind;
	unsigned char bytes[48];
	uint32_t size;
	const char *ours, *theirs;
	const char *expect;	/* the one row that explains it, or NULL */
};

static int
check_classifiers(void)
{
	/* format 0: raddr 0, size 1, rkey 0, usage 0x31; padded to 22 */
	static const struct self_case cases[] = {
		{ "padded format 0", CONF_KIND_MR, { [8] = 1, [20] = 0x31 }, 22,
		  "ret=-100004 kept=1",
		  "ret=0 gs=0 size=1 gf=0 flush=48 del=0 null=1", "MRD-1" },
		{ "padded format 0, NOSUPP instead", CONF_KIND_MR,
		  { [8] = 1, [20] = 0x31 }, 22,
		  "ret=-100001 kept=1",
		  "ret=0 gs=0 size=1 gf=0 flush=48 del=0 null=1", NULL },
		{ "padded format 0, wrong flush type from librpma", CONF_KIND_MR,
		  { [8] = 1, [20] = 0x31 }, 22,
		  "ret=-100004 kept=1",
		  "ret=0 gs=0 size=1 gf=0 flush=16 del=0 null=1", NULL },
		{ "rejection that wrote *mr_ptr", CONF_KIND_MR,
		  { [8] = 1, [20] = 0x31 }, 22,
		  "ret=-100004 kept=0",
		  "ret=0 gs=0 size=1 gf=0 flush=48 del=0 null=1", NULL },
		{ "usage 0", CONF_KIND_MR, { [8] = 1 }, 21,
		  "ret=-100001 kept=1", "ret=-100004 kept=1", "MRD-2" },
		{ "usage 0, librpma accepting", CONF_KIND_MR, { [8] = 1 }, 21,
		  "ret=-100001 kept=1",
		  "ret=0 gs=0 size=1 gf=0 flush=0 del=0 null=1", NULL },
		{ "size 0", CONF_KIND_MR, { [20] = 1 }, 21,
		  "ret=-100001 kept=1",
		  "ret=0 gs=0 size=0 gf=0 flush=0 del=0 null=1", "MRD-3" },
		{ "size 0, our INVAL", CONF_KIND_MR, { [20] = 1 }, 21,
		  "ret=-100004 kept=1",
		  "ret=0 gs=0 size=0 gf=0 flush=0 del=0 null=1", NULL },
		{ "valid region rejected", CONF_KIND_MR, { [8] = 1, [20] = 1 }, 21,
		  "ret=-100001 kept=1",
		  "ret=0 gs=0 size=1 gf=0 flush=0 del=0 null=1", NULL },
		{ "wrap", CONF_KIND_MR, { [0] = 0xFF, [1] = 0xFF, [2] = 0xFF,
		  [3] = 0xFF, [4] = 0xFF, [5] = 0xFF, [6] = 0xFF, [7] = 0xFF,
		  [8] = 2, [20] = 1 }, 21,
		  "ret=-100001 kept=1",
		  "ret=0 gs=0 size=2 gf=0 flush=0 del=0 null=1", "MRD-4" },
		{ "end exactly at 2^64 rejected", CONF_KIND_MR, { [0] = 0xFF,
		  [1] = 0xFF, [2] = 0xFF, [3] = 0xFF, [4] = 0xFF, [5] = 0xFF,
		  [6] = 0xFF, [7] = 0xFF, [8] = 1, [20] = 1 }, 21,
		  "ret=-100001 kept=1",
		  "ret=0 gs=0 size=1 gf=0 flush=0 del=0 null=1", NULL },
		{ "40 random bytes", CONF_KIND_MR, { [8] = 5, [20] = 0x10 }, 40,
		  "ret=-100001 kept=1",
		  "ret=0 gs=0 size=5 gf=0 flush=16 del=0 null=1", "MRD-5" },
		{ "40 random bytes accepted by us", CONF_KIND_MR,
		  { [8] = 5, [20] = 0x10 }, 40,
		  "ret=0 gs=0 size=5 gf=0 flush=16 del=0 null=1",
		  "ret=0 gs=0 size=5 gf=0 flush=0 del=0 null=1", NULL },
		{ "40 bytes, INVAL from us", CONF_KIND_MR,
		  { [8] = 5, [20] = 0x10 }, 40,
		  "ret=-100004 kept=1",
		  "ret=0 gs=0 size=5 gf=0 flush=16 del=0 null=1", NULL },
		{ "peer cfg 2 bytes", CONF_KIND_PCFG, { 1, 7 }, 2,
		  "ret=-100004 kept=1",
		  "ret=0 gdw=0 dw=1 gds=0 dsize=1 gd=0 desc=1 tail=170 del=0 null=1",
		  "PCD-1" },
		{ "peer cfg byte 2", CONF_KIND_PCFG, { 2 }, 1,
		  "ret=-100004 kept=1",
		  "ret=0 gdw=0 dw=1 gds=0 dsize=1 gd=0 desc=1 tail=170 del=0 null=1",
		  "PCD-2" },
		{ "peer cfg byte 1 rejected", CONF_KIND_PCFG, { 1 }, 1,
		  "ret=-100004 kept=1",
		  "ret=0 gdw=0 dw=1 gds=0 dsize=1 gd=0 desc=1 tail=170 del=0 null=1",
		  NULL },
		{ "peer cfg byte 2 re-serialised as 2", CONF_KIND_PCFG, { 2 }, 1,
		  "ret=-100004 kept=1",
		  "ret=0 gdw=0 dw=1 gds=0 dsize=1 gd=0 desc=2 tail=170 del=0 null=1",
		  NULL },
		{ "srq defaults", CONF_KIND_PROBE, "srq_cfg_defaults", 16,
		  "get=0,0 rq=100 rcq=100 del=0", "get=0,0 rq=20 rcq=20 del=0",
		  "SRQ-1" },
		{ "srq defaults swapped", CONF_KIND_PROBE, "srq_cfg_defaults", 16,
		  "get=0,0 rq=20 rcq=20 del=0", "get=0,0 rq=100 rcq=100 del=0",
		  NULL },
		{ "set_srq(NULL)", CONF_KIND_PROBE,
		  "rpma_conn_cfg_set_srq(cfg,NULL)", 31,
		  "set=0 set(NULL)=0 get=0 srq=null",
		  "set=0 set(NULL)=-100004 get=0 srq=kept", "CFG-1" },
		{ "set_srq(NULL) returning 0 but keeping", CONF_KIND_PROBE,
		  "rpma_conn_cfg_set_srq(cfg,NULL)", 31,
		  "set=0 set(NULL)=0 get=0 srq=kept",
		  "set=0 set(NULL)=-100004 get=0 srq=kept", NULL },
	};
	int failed = 0;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct self_case *s = &cases[i];
		struct conf_case c = {
			.kind = s->kind, .size = s->size,
			.bytes = (unsigned char *)s->bytes, .origin = "self-check",
		};
		for (size_t r = 0; r < conf_rows_count; r++) {
			bool want = s->expect != NULL &&
				strcmp(s->expect, conf_rows[r].id) == 0;
			if (conf_rows[r].classify(&c, s->ours, s->theirs) != want) {
				printf("FAIL: classifier %s %s \"%s\"\n",
					conf_rows[r].id,
					want ? "does not explain" : "wrongly explains",
					s->what);
				failed = 1;
			}
		}
	}
	return failed;
}

int
main(void)
{
	struct conf_corpus corpus;
	uint64_t seed = DEFAULT_SEED;
	const char *env = getenv("CONFORMANCE_SEED");
	char line[CONF_LINE_MAX];
	unsigned long hits[64] = { 0 };
	size_t agree[4] = { 0 }, differ[4] = { 0 };
	size_t unexplained = 0, ambiguous = 0;
	int failed = 0;
	const char *v = getenv("CONFORMANCE_VERBOSE");
	bool verbose = v != NULL && strcmp(v, "all") == 0;
	bool verbose_probes = v != NULL && *v != '\0';

	conf_init_library();
#ifdef RPMA_DEBUG_FAULT_INJECTION
	rpma_fault_injection_set(0);	/* no injected NOMEM in this test */
#endif

	if (env != NULL && *env != '\0') {
		char *end;
		errno = 0;
		seed = strtoull(env, &end, 0);
		if (errno != 0 || *end != '\0') {
			printf("FAIL: CONFORMANCE_SEED=%s is not a number\n", env);
			return 1;
		}
	}
	printf("conformance: seed 0x%llx (set CONFORMANCE_SEED to repeat or vary)\n",
		(unsigned long long)seed);

	if (check_table_ids() || check_classifiers())
		failed = 1;

	if (conf_corpus_build(&corpus, seed)) {
		printf("FAIL: cannot build the corpus\n");
		return 1;
	}
	if (corpus.per_kind[CONF_KIND_MR] < 10000) {
		printf("FAIL: only %zu descriptor cases (want >= 10000)\n",
			corpus.per_kind[CONF_KIND_MR]);
		failed = 1;
	}

	char **theirs = calloc(corpus.count, sizeof(*theirs));
	if (theirs == NULL || run_oracle(&corpus, theirs)) {
		printf("FAIL: the librpma oracle did not answer\n");
		failed = 1;
		goto out;
	}

	for (size_t i = 0; i < corpus.count; i++) {
		const struct conf_case *c = &corpus.cases[i];

		if (conf_eval(c->kind, c->bytes, c->size, line) != 0 ||
		    strncmp(theirs[i], "unknown", 7) == 0) {
			printf("FAIL: case %zu not understood: ours \"%s\", librpma \"%s\"\n",
				i, line, theirs[i]);
			failed = 1;
			continue;
		}
		if (verbose || (verbose_probes && c->kind == CONF_KIND_PROBE))
			printf("%s %s %.*s\n  ours:    %s\n  librpma: %s\n",
				strcmp(line, theirs[i]) ? "DIFF " : "same ",
				kind_names[c->kind],
				c->kind == CONF_KIND_PROBE ? (int)c->size : 0,
				(const char *)c->bytes, line, theirs[i]);
		if (strcmp(line, theirs[i]) == 0) {
			agree[c->kind]++;
			continue;
		}
		differ[c->kind]++;

		size_t matched = 0;
		for (size_t r = 0; r < conf_rows_count; r++) {
			if (conf_rows[r].classify(c, line, theirs[i])) {
				hits[r]++;
				matched++;
			}
		}
		if (matched > 1)
			ambiguous++;
		if (matched == 0) {
			if (unexplained++ < MAX_PRINTED) {
				printf("FAIL: unexplained disagreement, case %zu\n", i);
				print_case(c);
				printf("  ours:    %s\n  librpma: %s\n", line, theirs[i]);
			}
			failed = 1;
		}
	}
	if (unexplained > MAX_PRINTED)
		printf("FAIL: ... %zu more unexplained disagreements\n",
			unexplained - MAX_PRINTED);

	printf("\n%-8s %10s %10s %12s\n", "kind", "cases", "agree", "disagree");
	for (int k = CONF_KIND_MR; k <= CONF_KIND_PROBE; k++)
		printf("%-8s %10zu %10zu %12zu\n", kind_names[k],
			corpus.per_kind[k], agree[k], differ[k]);
	printf("%-8s %10zu %10zu %12zu\n", "total", corpus.count,
		agree[1] + agree[2] + agree[3], differ[1] + differ[2] + differ[3]);
	printf("\n%-8s %12s\n", "row", "explains");
	for (size_t r = 0; r < conf_rows_count; r++)
		printf("%-8s %12lu\n", conf_rows[r].id, hits[r]);
	printf("%-8s %12zu\n", "none", unexplained);
	if (ambiguous)
		printf("(%zu disagreements are explained by more than one row)\n",
			ambiguous);

	for (size_t r = 0; r < conf_rows_count; r++) {
		if (hits[r] == 0) {
			printf("FAIL: row %s never hit: stale table?\n",
				conf_rows[r].id);
			failed = 1;
		}
	}

out:
	if (theirs != NULL)
		for (size_t i = 0; i < corpus.count; i++)
			free(theirs[i]);
	free(theirs);
	conf_corpus_free(&corpus);
	printf("%s\n", failed ? "FAIL" : "PASS");
	return failed ? 1 : 0;
}

#else /* !HAVE_LIBRPMA_ORACLE */

int
main(void)
{
	printf("SKIP: Debian's librpma-dev is not installed\n");
	return 77;
}

#endif
