/* The shape space of a kernel: its shape arguments (the integer parameters
 * AOTC_SHAPES names, in parameter order) and a list of value tuples, from the
 * annotation or from a --shapes file. */
#ifndef AOTC_SHAPES_H
#define AOTC_SHAPES_H

#include "ir.h"

typedef struct shape_set {
	int nargs;
	int *params;       /* parameter index of each shape argument */
	int64_t *values;   /* count rows of nargs */
	uint64_t *calls;   /* per row: calls a record file counted (0: none), or NULL */
	int count;
	size_t cap;
} shape_set;

void shape_set_init(shape_set *s, const kernel *k);
void shape_set_finish(shape_set *s);
/* Appends a row unless an equal one is there; returns its index. */
int shape_set_add(shape_set *s, const int64_t *row);
const int64_t *shape_row(const shape_set *s, int i);

/* The most shapes AOTC_SHAPES may give: each is measured with every
 * configuration, so range(1, 1 << 40, 1) is a mistake to report, not an
 * allocation that never ends. */
#define SHAPES_MAX 65536

/* The cartesian product of the AOTC_SHAPES generators, first argument
 * slowest, each generator's values once; logrand() draws from seed (and the
 * shape argument's name). Returns false (diagnosed) when the kernel has no
 * AOTC_SHAPES or they give more than SHAPES_MAX shapes. */
bool shapes_from_ir(const kernel *k, shape_set *s, uint64_t seed, diags *d);

/* Reads a JSON array of objects ({"M": 128, ...}, each with exactly the
 * shape arguments), or a record file an emitted launcher wrote under
 * AOTC_RECORD ({"aotc_record": 1, "kernels": {"K": [{"shape": {...},
 * "calls": N}, ...]}}), whose rows of kernel k give the shapes and their
 * calls (s->calls). Returns false after diagnosing the file. */
bool shapes_from_file(const kernel *k, const char *path, shape_set *s, diags *d);

/* "M=128 N=256 K=64" into sb. */
void shape_format(strbuf *sb, const kernel *k, const shape_set *s, int i);

/* Values of all integer parameters for shape row: the shape arguments, then
 * AOTC_VALUEs over them. params[] has k->nparams slots (non-integers left
 * 0). AOTC_VALUEs over tunables are left 0: ir_variant_params fills them in
 * for a variant. Returns EVAL_OK, or why a VALUE could not be evaluated, or
 * EVAL_OVERFLOW (every value filled in) when a shape argument or VALUE does
 * not fit its parameter's type (ir_param_fits). */
eval_status shape_param_values(const kernel *k, const shape_set *s, const int64_t *row,
                               int64_t *params);

#endif
