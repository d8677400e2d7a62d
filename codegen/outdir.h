/* Writing a set of generated files into one directory so that they change
 * together (docs/spec.md §8, docs/cli.md "How the files are written"): aotc
 * emit's per-architecture files and aotc link's.
 *
 * A set carries its identity, the set hash, in every file (the generators
 * write it; outdir_set_hash computes it), so files of two sets never build
 * together; outdir_write makes a mixture unlikely to exist at all. */
#ifndef AOTC_OUTDIR_H
#define AOTC_OUTDIR_H

#include <stddef.h>
#include <stdint.h>

#include "diag.h"
#include "util.h"

/* One file of a set; the strings are the caller's. */
typedef struct outdir_file {
	const char *name;   /* a plain file name in the directory (no '/') */
	const char *data;   /* its content, len bytes */
	size_t len;
} outdir_file;

/* The set hash: XXH3-64 of the files' names and contents, the same on every
 * machine. A generator renders its files with 0 in the hash's place, hashes
 * them, and renders them again with the result, so the hash changes whenever
 * any byte of the set would (the variants, their order, the tree, a name). */
uint64_t outdir_set_hash(const outdir_file *files, int n);

/* The names the set hash goes by in the files of prefix (aot_sgemm_cuda_sm90):
 * the header's macro PREFIX_SET (prefix in capitals), which is
 * UINT64_C(0x<hash>), and the dispatch's symbol prefix_set_<hash>, a const
 * int the launcher refers to; <hash> is 16 lowercase hex digits. Appended
 * to macro and symbol (either may be NULL). */
void outdir_set_names(const char *prefix, uint64_t set, strbuf *macro, strbuf *symbol);

/* Lines that stop a compile, with message (an #error's text: no '"' or
 * '\\'), unless the header of prefix's files that was included is of set:
 * #if PREFIX_SET != UINT64_C(0x<hash>) / #error "message" / #endif. */
void outdir_set_check(strbuf *sb, const char *prefix, uint64_t set, const char *message);

/* How long a temporary directory of a live aotc may be kept before another
 * removes it anyway (outdir_write): an emit or link writes files it already
 * holds in memory, so its temporary directory lives for well under a second. */
#define OUTDIR_STALE_S 600

/* Writes files[0..n) into the existing directory dir, as one set:
 *
 * 1. Removes what an emit or link killed earlier left in dir: a directory
 *    .aotc-emit-PID-XXXXXX or .aotc-link-PID-XXXXXX of this user whose
 *    process PID is gone or is another program, or that is older than
 *    OUTDIR_STALE_S; and the temporaries of an older aotc (N.tmp,
 *    N.tmp.tmpXXXXXX, N.tmpXXXXXX for N "aotc.h", one of files[] or a
 *    name starting with _aot_).
 * 2. Leaves alone every file whose bytes dir already holds (its mtime too,
 *    so a build does not recompile it).
 * 3. Writes the others into a new directory dir/.aotc-TAG-PID-XXXXXX (tag
 *    "emit" or "link"), fsyncs them, and only when every one is written
 *    moves them into place in the order given: put the file whose presence
 *    says the set is complete (the manifest) last. A child process in a
 *    session of its own, with every signal blocked, makes the moves, so a
 *    kill of aotc or of its process group (^C, timeout, make) once they
 *    have begun does not stop them half way. Then dir is fsync'd and the
 *    temporary directory removed.
 *
 * Two runs writing into one directory take turns (flock on dir, where the
 * file system has it) from step 1 to the last move.
 *
 * Returns 0, or -1 after a diagnostic; dir then holds what it held, but for
 * a move that failed (an I/O error), after which the files already moved
 * stay and the message says so. */
int outdir_write(const char *dir, const char *tag, const outdir_file *files, int n, diags *d);

#endif
