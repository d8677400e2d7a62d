/* Annotation expressions as C expressions for the emitted dispatch, with
 * exactly ir/expr.c's checked semantics and no more checking than needed.
 *
 * Each operand's possible values are kept as an interval: a shape
 * argument's come from its type (after the fits check select() does), a
 * tunable is a literal (one variant) or ranges over the variants' table.
 * An operation that cannot overflow, divide by zero or leave log2's domain
 * there is written as plain C (`rows * cols`, `cols % VEC != 0`); one that
 * can goes through a checked helper (aot_mul(a, b, &aot_e)) that returns 0
 * and sets the error flag, as ir/expr.c reports the failure. Operands of
 * '&&', '||' and '?:' short-circuit in both. Sub-expressions that do not
 * read a shape argument are folded with expr_eval where the tunables are
 * known. */
#ifndef AOTC_CEXPR_H
#define AOTC_CEXPR_H

#include <stdbool.h>
#include <stdint.h>

#include "ir.h"
#include "util.h"

typedef struct ival {
	int64_t lo, hi;
} ival;

/* The helpers an expression may need, emitted only when used. */
enum {
	CH_ADD, CH_SUB, CH_MUL, CH_DIV, CH_MOD, CH_NEG, CH_CDIV, CH_ALIGN, CH_LOG2, CH_SHL, CH_SHR,
	CH_CEIL, CH_FLOORLOG2, CH_ASR, CH_COUNT
};

typedef struct cx_env {
	const kernel *k;
	const int64_t *tv;      /* one variant's tunable values, or NULL: ... */
	const ival *tun;        /* ... each tunable's range, read from a local of its name */
	const ival *par;        /* each parameter's range (k->nparams), read by its name */
	bool *tun_used;         /* set for each tunable the text reads (may be NULL) */
	bool *helpers;          /* CH_COUNT: set for each helper the text calls */
	const char *err;        /* the error flag a checked helper sets ("aot_e") */
} cx_env;

/* Appends e as a C expression; returns its range. *may_fail is set when
 * the text may set the error flag (then the range includes 0, what a
 * failed helper returns). */
ival cx_expr(strbuf *sb, const expr *e, cx_env *env, bool *may_fail);

/* The same as a condition that holds when e is 0 (a VALID_IF that fails):
 * "cols % VEC != 0" rather than "!(cols % VEC == 0)". */
void cx_negated(strbuf *sb, const expr *e, cx_env *env, bool *may_fail);

/* The range of e alone (nothing written). */
ival cx_range(const expr *e, cx_env *env, bool *may_fail);

/* Whether e reads a parameter; a tunable. */
bool cx_uses_params(const expr *e);
bool cx_uses_tunables(const expr *e);

/* The helpers' definitions, in a fixed order, for those used. */
void cx_helpers(strbuf *sb, const bool *used);

#endif
