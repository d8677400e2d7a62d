/* Shared by the fuzz targets (tests/fuzz/README.md). Each target defines
 * LLVMFuzzerTestOneInput; under -Dfuzz=true libFuzzer drives it, otherwise
 * replay.c runs the seed and crash corpora through it once as a test. */
#ifndef AOTC_FUZZ_H
#define AOTC_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "diag.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A stream that discards what is written to it, so diagnostics are
 * formatted (their code runs) without filling the fuzzer's output. */
FILE *fuzz_sink(void);

/* diags printing to fuzz_sink(). */
void fuzz_diags(diags *d);

/* A private directory for targets whose API takes paths, created on first
 * use under $TMPDIR (or /tmp) and removed at exit. */
const char *fuzz_tmpdir(void);

/* Writes data to path; aborts on failure (the harness, not the target). */
void fuzz_write(const char *path, const void *data, size_t size);

/* Stops the run on a broken invariant, so libFuzzer keeps the input. */
#define FUZZ_CHECK(cond)                                                         \
	do {                                                                     \
		if (!(cond)) {                                                   \
			fprintf(stderr, "%s:%d: invariant failed: %s\n", __FILE__, \
			        __LINE__, #cond);                                 \
			abort();                                                 \
		}                                                                \
	} while (0)

#endif
