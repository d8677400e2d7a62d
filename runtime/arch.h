/* The architectures aotc knows (--arch): one table, parsed in one place.
 * Each says which backend and codegen target it belongs to, the tag the
 * emitted files carry, and the order aotc link falls back along.
 *
 * --arch is parsed once (tools/options.c); the stages take the entry
 * (const arch_info *) and ask its kind, never compare names. Only what
 * crosses a process or a file (a compile request, the worker's init, a
 * manifest, a database's hardware) carries the name, read back here. */
#ifndef AOTC_ARCH_H
#define AOTC_ARCH_H

#include <stdbool.h>
#include <stddef.h>

typedef enum arch_kind { ARCH_HOST, ARCH_CUDA, ARCH_ROCM } arch_kind;

typedef struct arch_info {
	arch_kind kind;
	const char *name;   /* as --arch spells it: "sm90", "sm90a", "gfx90a", "host" */
	int order;          /* newer is larger within a kind: CUDA major * 10 + minor
	                     * (sm90a: 90), ROCm the gfx number read in hex (gfx90a:
	                     * 0x90a, gfx942: 0x942), host 0 */
	int major, minor;   /* CUDA's compute capability; 0 otherwise */
} arch_info;

/* The table's entry named name (exactly), or NULL. */
const arch_info *arch_parse(const char *name);

/* The table in order (CUDA oldest first, then ROCm, then host), for help
 * and the nearest-name suggestion. */
int arch_count(void);
const arch_info *arch_at(int i);

/* "cuda", "rocm" or "host": the first part of the files' tag. */
const char *arch_kind_name(arch_kind k);

/* The tag in emitted file names and prefixes: "cuda_sm90", "rocm_gfx90a",
 * "host". */
void arch_tag(const arch_info *a, char *buf, size_t n);

#endif
