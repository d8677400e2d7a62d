#include "emit.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "arch.h"
#include "failures.h"
#include "outdir.h"
#include "text.h"

/* ---- Names ------------------------------------------------------------------- */

/* A C string literal for s: printable ASCII as is, '"' and '\\' escaped,
 * anything else as an octal escape, so no input can end the literal. */
static void put_string(strbuf *sb, const char *s)
{
	strbuf_putc(sb, '"');
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			strbuf_printf(sb, "\\%c", *p);
		else if (*p >= 0x20 && *p < 0x7f && *p != '?') /* '?' would start a trigraph */
			strbuf_putc(sb, (char)*p);
		else
			strbuf_printf(sb, "\\%03o", *p);
	}
	strbuf_putc(sb, '"');
}

void emit_arch_tag(const char *arch, char *buf, size_t n)
{
	const arch_info *a = arch_parse(arch);
	if (a)
		arch_tag(a, buf, n);
	else
		snprintf(buf, n, "%s", arch); /* options checked it: not reached */
}

/* ---- Checked arithmetic in the emitted C --------------------------------- */

/* Each returns 0 and stores the result, or 1 (division by zero, overflow,
 * shift count outside [0, 63], log2 of a non-positive value): the same
 * cases ir/expr.c reports, so the dispatch treats a shape exactly as the
 * tuner did. */
/* Checked 64-bit arithmetic for the emitted C. Each returns 0 and stores
 * the result, or 1 (division by zero, overflow, a shift count outside
 * [0, 63], log2 of a non-positive value): the cases ir/expr.c reports, so
 * the dispatch treats a shape exactly as the tuner did. Only the helpers an
 * expression uses are emitted (no unused-function warnings downstream). */
enum { H_ADD, H_SUB, H_MUL, H_DIV, H_MOD, H_ASR, H_SHL, H_SHR, H_NEG, H_CDIV, H_ALIGN, H_LOG2,
       H_COUNT };

static const char *const helpers[H_COUNT] = {
	/* aot_add */
		"static int aot_add(int64_t a, int64_t b, int64_t *r)\n"
		"{\n"
		"\tif ((b > 0 && a > INT64_MAX - b) || (b < 0 && a < INT64_MIN - b))\n"
		"\t\treturn 1;\n"
		"\t*r = a + b;\n"
		"\treturn 0;\n"
		"}\n"
		"\n",
	/* aot_sub */
		"static int aot_sub(int64_t a, int64_t b, int64_t *r)\n"
		"{\n"
		"\tif ((b < 0 && a > INT64_MAX + b) || (b > 0 && a < INT64_MIN + b))\n"
		"\t\treturn 1;\n"
		"\t*r = a - b;\n"
		"\treturn 0;\n"
		"}\n"
		"\n",
	/* aot_mul */
		"static int aot_mul(int64_t a, int64_t b, int64_t *r)\n"
		"{\n"
		"\tif (a > 0 ? (b > 0 ? a > INT64_MAX / b : b < INT64_MIN / a)\n"
		"\t          : (b > 0 ? a < INT64_MIN / b : (a != 0 && b < INT64_MAX / a)))\n"
		"\t\treturn 1;\n"
		"\t*r = a * b;\n"
		"\treturn 0;\n"
		"}\n"
		"\n",
	/* aot_div */
		"static int aot_div(int64_t a, int64_t b, int64_t *r)\n"
		"{\n"
		"\tif (b == 0 || (a == INT64_MIN && b == -1))\n"
		"\t\treturn 1;\n"
		"\t*r = a / b;\n"
		"\treturn 0;\n"
		"}\n"
		"\n",
	/* aot_mod */
		"static int aot_mod(int64_t a, int64_t b, int64_t *r)\n"
		"{\n"
		"\tif (b == 0 || (a == INT64_MIN && b == -1))\n"
		"\t\treturn 1;\n"
		"\t*r = a % b;\n"
		"\treturn 0;\n"
		"}\n"
		"\n",
	/* aot_asr */
		"static int64_t aot_asr(int64_t a, int64_t n)\n"
		"{\n"
		"\treturn a < 0 ? ~(~a >> n) : a >> n;\n"
		"}\n"
		"\n",
	/* aot_shl */
		"static int aot_shl(int64_t a, int64_t b, int64_t *r)\n"
		"{\n"
		"\tint64_t x;\n"
		"\tif (b < 0 || b > 63)\n"
		"\t\treturn 1;\n"
		"\tx = (int64_t)((uint64_t)a << b);\n"
		"\tif (aot_asr(x, b) != a)\n"
		"\t\treturn 1;\n"
		"\t*r = x;\n"
		"\treturn 0;\n"
		"}\n"
		"\n",
	/* aot_shr */
		"static int aot_shr(int64_t a, int64_t b, int64_t *r)\n"
		"{\n"
		"\tif (b < 0 || b > 63)\n"
		"\t\treturn 1;\n"
		"\t*r = aot_asr(a, b);\n"
		"\treturn 0;\n"
		"}\n"
		"\n",
	/* aot_neg */
		"static int aot_neg(int64_t a, int64_t *r)\n"
		"{\n"
		"\tif (a == INT64_MIN)\n"
		"\t\treturn 1;\n"
		"\t*r = -a;\n"
		"\treturn 0;\n"
		"}\n"
		"\n",
	/* aot_cdiv */
		"static int aot_cdiv(int64_t a, int64_t b, int64_t *r)\n"
		"{\n"
		"\tint64_t m;\n"
		"\tif (b == 0 || (a == INT64_MIN && b == -1))\n"
		"\t\treturn 1;\n"
		"\tm = a % b;\n"
		"\t*r = a / b + (m != 0 && (m < 0) == (b < 0)); /* no branch on the shape */\n"
		"\treturn 0;\n"
		"}\n"
		"\n",
	/* aot_align */
		"static int aot_align(int64_t a, int64_t b, int64_t *r)\n"
		"{\n"
		"\tint64_t q;\n"
		"\treturn aot_cdiv(a, b, &q) || aot_mul(q, b, r);\n"
		"}\n"
		"\n",
	/* aot_log2 */
		"static int aot_log2(int64_t a, int64_t *r)\n"
		"{\n"
		"\tint64_t n = 0;\n"
		"\tif (a <= 0)\n"
		"\t\treturn 1;\n"
		"\twhile (a > 1) {\n"
		"\t\ta >>= 1;\n"
		"\t\tn++;\n"
		"\t}\n"
		"\t*r = n;\n"
		"\treturn 0;\n"
		"}\n"
		"\n",
};

static void note_helpers(const expr *e, bool *used)
{
	if (!e)
		return;
	if (e->kind == EXPR_UNARY && e->op == OP_NEG)
		used[H_NEG] = true;
	if (e->kind == EXPR_BINARY) {
		switch (e->op) {
		case OP_ADD: used[H_ADD] = true; break;
		case OP_SUB: used[H_SUB] = true; break;
		case OP_MUL: used[H_MUL] = true; break;
		case OP_DIV: used[H_DIV] = true; break;
		case OP_MOD: used[H_MOD] = true; break;
		case OP_SHL: used[H_SHL] = used[H_ASR] = true; break;
		case OP_SHR: used[H_SHR] = used[H_ASR] = true; break;
		default: break;
		}
	}
	if (e->kind == EXPR_CALL) {
		if (e->func == FN_CDIV)
			used[H_CDIV] = true;
		if (e->func == FN_ALIGN)
			used[H_ALIGN] = used[H_CDIV] = used[H_MUL] = true;
		if (e->func == FN_LOG2)
			used[H_LOG2] = true;
	}
	note_helpers(e->a, used);
	note_helpers(e->b, used);
	note_helpers(e->c, used);
}

static void emit_helpers(out *o, const bool *used)
{
	for (int h = 0; h < H_COUNT; h++)
		if (used[h])
			out_raw(o, helpers[h]);
}

/* ---- Expressions as statements -------------------------------------------- */

/* Emits statements computing e into a fresh variable vN; any failure
 * returns 1 from the enclosing function. Returns N. With tv, the tunables
 * are those literal values (one variant's code); without, they are read
 * from t[]. */
static int gen(out *o, const expr *e, int *tmp, const int64_t *tv)
{
	int v = (*tmp)++;
	switch (e->kind) {
	case EXPR_INT:
		out_line(o, "v%d = INT64_C(%lld);", v, (long long)e->value);
		return v;
	case EXPR_NAME:
		if (e->name_kind == NAME_CONST)
			out_line(o, "v%d = INT64_C(%lld);", v, (long long)e->value);
		else if (e->name_kind == NAME_TUNABLE && tv)
			out_line(o, "v%d = INT64_C(%lld);", v, (long long)tv[e->index]);
		else
			out_line(o, "v%d = %s[%d];", v, e->name_kind == NAME_TUNABLE ? "t" : "p", e->index);
		return v;
	case EXPR_UNARY: {
		int a = gen(o, e->a, tmp, tv);
		if (e->op == OP_NEG) {
			out_line(o, "if (aot_neg(v%d, &v%d))", a, v);
			out_line(o, "\treturn 1;");
		} else {
			out_line(o, "v%d = %sv%d;", v, e->op == OP_NOT ? "!" : "~", a);
		}
		return v;
	}
	case EXPR_COND: {
		int c = gen(o, e->a, tmp, tv);
		out_line(o, "if (v%d) {", c);
		o->indent++;
		int b = gen(o, e->b, tmp, tv);
		out_line(o, "v%d = v%d;", v, b);
		o->indent--;
		out_line(o, "} else {");
		o->indent++;
		int d = gen(o, e->c, tmp, tv);
		out_line(o, "v%d = v%d;", v, d);
		o->indent--;
		out_line(o, "}");
		return v;
	}
	case EXPR_CALL: {
		int a = gen(o, e->a, tmp, tv);
		if (e->func == FN_LOG2) {
			out_line(o, "if (aot_log2(v%d, &v%d))", a, v);
			o->indent++;
			out_line(o, "return 1;");
			o->indent--;
			return v;
		}
		int b = gen(o, e->b, tmp, tv);
		if (e->func == FN_MIN || e->func == FN_MAX) {
			out_line(o, "v%d = v%d %s v%d ? v%d : v%d;", v, a, e->func == FN_MIN ? "<" : ">", b, a, b);
			return v;
		}
		out_line(o, "if (%s(v%d, v%d, &v%d))", e->func == FN_CDIV ? "aot_cdiv" : "aot_align", a, b, v);
		o->indent++;
		out_line(o, "return 1;");
		o->indent--;
		return v;
	}
	case EXPR_BINARY:
		break;
	}
	if (e->op == OP_AND || e->op == OP_OR) {
		int a = gen(o, e->a, tmp, tv);
		out_line(o, "if (%sv%d) {", e->op == OP_AND ? "" : "!", a);
		o->indent++;
		int b = gen(o, e->b, tmp, tv);
		out_line(o, "v%d = v%d != 0;", v, b);
		o->indent--;
		out_line(o, "} else {");
		o->indent++;
		out_line(o, "v%d = %d;", v, e->op == OP_OR);
		o->indent--;
		out_line(o, "}");
		return v;
	}
	int a = gen(o, e->a, tmp, tv), b = gen(o, e->b, tmp, tv);
	static const struct {
		expr_op op;
		const char *text;
		bool checked;
	} ops[] = {
		{OP_MUL, "aot_mul", true}, {OP_DIV, "aot_div", true}, {OP_MOD, "aot_mod", true},
		{OP_ADD, "aot_add", true}, {OP_SUB, "aot_sub", true}, {OP_SHL, "aot_shl", true},
		{OP_SHR, "aot_shr", true}, {OP_LT, "<", false}, {OP_LE, "<=", false},
		{OP_GT, ">", false}, {OP_GE, ">=", false}, {OP_EQ, "==", false},
		{OP_NE, "!=", false}, {OP_BITAND, "&", false}, {OP_XOR, "^", false},
		{OP_BITOR, "|", false},
	};
	for (size_t i = 0; i < sizeof ops / sizeof *ops; i++) {
		if (ops[i].op != e->op)
			continue;
		if (ops[i].checked) {
			out_line(o, "if (%s(v%d, v%d, &v%d))", ops[i].text, a, b, v);
			o->indent++;
			out_line(o, "return 1;");
			o->indent--;
		} else {
			out_line(o, "v%d = v%d %s v%d;", v, a, ops[i].text, b);
		}
		return v;
	}
	die("emit: bad operator %d", (int)e->op);
}

/* Whether e reads a parameter: otherwise it is fixed per variant, and the
 * emitter evaluates it once (the launch dimensions over tunables only). */
static bool uses_params(const expr *e)
{
	if (!e)
		return false;
	if (e->kind == EXPR_NAME && e->name_kind == NAME_PARAM)
		return true;
	return uses_params(e->a) || uses_params(e->b) || uses_params(e->c);
}

static int count_nodes(const expr *e)
{
	return e ? 1 + count_nodes(e->a) + count_nodes(e->b) + count_nodes(e->c) : 0;
}

/* static int NAME(const int64_t *p, const int64_t *t, int64_t *out), or
 * with tv (one variant's tunables as literals) NAME(p, out). */
static void gen_function(out *o, const char *name, const aexpr *a, const int64_t *tv)
{
	strbuf_puts(&o->sb, "/* ");
	put_comment_text(&o->sb, a->text);
	strbuf_puts(&o->sb, " */\n");
	if (tv)
		out_line(o, "static int %s(const int64_t *p, int64_t *out)", name);
	else
		out_line(o, "static int %s(const int64_t *p, const int64_t *t, int64_t *out)", name);
	out_line(o, "{");
	o->indent++;
	int n = count_nodes(a->e);
	strbuf decl;
	strbuf_init(&decl);
	for (int i = 0; i < n; i++)
		strbuf_printf(&decl, "%sv%d", i ? ", " : "", i);
	out_line(o, "int64_t %s;", decl.data);
	strbuf_finish(&decl);
	out_line(o, "(void)p;");
	if (!tv)
		out_line(o, "(void)t;");
	int tmp = 0;
	int r = gen(o, a->e, &tmp, tv);
	out_line(o, "*out = v%d;", r);
	out_line(o, "return 0;");
	o->indent--;
	out_line(o, "}");
	out_raw(o, "\n");
}

/* ---- The dispatch file ------------------------------------------------------ */

/* The codegen targets (emit.h): the dispatch (.c) is the same C for all;
 * the device targets also get launch dimensions, checked against the
 * limits of every CUDA device (which AMD's exceed: a HIP launch they
 * refuse is one an AMD device could make, never one it cannot). */
typedef emit_target target;

static const target target_cuda = {
	"cu", true, "cudaError_t", "cudaSuccess", "cudaErrorInvalidValue", "cudaStream_t",
	"cudaGetLastError()",
	"cudaFuncSetAttribute(%.*s, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)aot_smem)",
	"defined(__CUDACC__) || defined(CUDART_VERSION)", "", NULL, /* nvcc includes cuda_runtime.h */
	true, "cuda_fp16.h", "cuda_bf16.h",
};
static const target target_hip = {
	"hip", true, "hipError_t", "hipSuccess", "hipErrorInvalidValue", "hipStream_t",
	"hipGetLastError()",
	"hipFuncSetAttribute(reinterpret_cast<const void *>(&%.*s), hipFuncAttributeMaxDynamicSharedMemorySize, (int)aot_smem)",
	"defined(__HIPCC__) || defined(HIP_VERSION)", " (AMD devices allow as much or more)",
	"hip/hip_runtime.h", false, "hip/hip_fp16.h", "hip/hip_bf16.h",
};
static const target target_host = {
	"cpp", false, "int", "0", "-1", NULL, NULL, NULL, NULL, NULL, NULL, false, NULL, NULL,
};

const emit_target *emit_target_of(arch_kind kind)
{
	switch (kind) {
	case ARCH_CUDA: return &target_cuda;
	case ARCH_ROCM: return &target_hip;
	case ARCH_HOST: break;
	}
	return &target_host;
}

/* The target of --arch (options checked it: it is in runtime/arch.c). */
static const target *target_for(const char *arch)
{
	const arch_info *a = arch_parse(arch);
	return emit_target_of(a ? a->kind : ARCH_HOST);
}

const char *emit_launcher_ext(const char *arch) { return target_for(arch)->launcher_ext; }

typedef struct ctx {
	const emit_input *in;
	const target *t;
	const kernel *k;
	char prefix[256];         /* aot_sgemm_cuda_sm90 */
	char base[300];           /* _aot_sgemm_cuda_sm90 */
	int *vars;                /* emitted variant -> matrix variant */
	int nvars;
	int *emitted;             /* matrix variant -> emitted index or -1 */
	const hresult *hr;
	char *include;            /* the kernel source as the launcher's #include names it */
	char *source;             /* the kernel source as comments name it (source_name) */
	char **names;             /* per emitted variant, made from the IR and its values */
	const extern_fn **ext;    /* per emitted variant: its AOTC_EXTERN routine, or NULL */
	bool any_ext;             /* some emitted variant is a routine */
	uint64_t set;             /* the set hash (outdir.h); 0 while it is being computed */
} ctx;

/* Whether the kernel's AOTC_EXTERN routines are built for this target: a
 * __global__ kernel's are CUDA routines. */
static bool routines_built(const ctx *c)
{
	return !c->k->is_global || c->t->cuda_routines;
}

/* The libraries the launcher links with (its kernel file's AOTC_EXTERNs
 * name them; the launcher includes the file, routines and all), each once,
 * in order of appearance: *n of them (malloc'd; the names are the IR's).
 * None where a __global__ kernel's routines, CUDA's, are not built. */
static const char **libraries(const ctx *c, int *n)
{
	const kernel *k = c->k;
	int cap = 0;
	for (int i = 0; i < k->nexterns; i++)
		cap += k->externs[i].nlibs;
	const char **names = xcalloc((size_t)cap + 1, sizeof *names);
	*n = 0;
	if (!routines_built(c))
		return names;
	for (int i = 0; i < k->nexterns; i++)
		for (int l = 0; l < k->externs[i].nlibs; l++) {
			bool seen = false;
			for (int j = 0; j < *n && !seen; j++)
				seen = !strcmp(names[j], k->externs[i].libs[l]);
			if (!seen)
				names[(*n)++] = k->externs[i].libs[l];
		}
	return names;
}

static int cmp_int(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }

/* The header's account of failed measurements (heuristics/failures.h):
 * how many variants failed somewhere and how many were dropped (each
 * emitted aot_validV says where its variant may run); dispatched failures,
 * were there any. */
static void failures_comment(const ctx *c, strbuf *sb)
{
	const hmatrix *m = c->in->hm;
	const hresult *r = c->hr;
	int nfail = 0, ndropped = 0;
	for (int v = 0; m->fail && v < m->nvariants; v++) {
		nfail += m->fail[v].nfailed > 0;
		ndropped += m->fail[v].dropped;
	}
	if (nfail)
		strbuf_printf(sb, " * Measured failing: %d variant%s; %d dropped (no condition on the shape separates\n"
		              " * where it failed from where it ran), the others kept out of the shapes where they\n"
		              " * failed and of shapes like them (see each variant's aot_valid).\n",
		              nfail, nfail == 1 ? "" : "s", ndropped);
	bool first = true;
	for (int v = 0; v < c->nvars; v++) {
		const hfailure *f = m->fail ? &m->fail[c->vars[v]] : NULL;
		if (!f || !f->nfailed)
			continue;
		strbuf_puts(sb, first ? " * Dispatched only where like the shapes it passed on: " : ", ");
		put_comment_text(sb, c->names[v]);
		first = false;
	}
	if (!first)
		strbuf_puts(sb, ".\n");
	if (r->train[SEL_TREE].failed || r->heldout[SEL_TREE].failed)
		strbuf_printf(sb, " * WRONG DISPATCH: %d training and %d held-out shapes get a variant measured failing there.\n",
		              r->train[SEL_TREE].failed, r->heldout[SEL_TREE].failed);
	if (c->in->eval && c->in->eval->failed)
		strbuf_printf(sb, " * WRONG DISPATCH: %d held-out shapes of the eval database get a variant measured failing there.\n",
		              c->in->eval->failed);
}

static void provenance(out *o, const ctx *c, const char *what)
{
	const emit_input *in = c->in;
	const hresult *r = c->hr;
	const char *hw = json_string_value(json_object_get(in->db->hardware, "id"));
	strbuf *sb = &o->sb;
	strbuf_puts(sb, "/* ");
	put_comment_text(sb, what);
	strbuf_printf(sb, "\n *\n * Generated by aotc %s from ", AOTC_VERSION_STRING);
	put_comment_text(sb, c->source);
	strbuf_puts(sb, " (source hash ");
	put_comment_text(sb, in->m->source_hash);
	strbuf_puts(sb, "), kernel ");
	put_comment_text(sb, c->k->name);
	strbuf_puts(sb, ",\n");
	strbuf_puts(sb, " * tuned on ");
	put_comment_text(sb, hw ? hw : "?");
	strbuf_printf(sb, ": %d shapes x %d variants measured; %d variant%s dispatched.\n",
	              in->hm->nshapes, in->hm->nvariants, c->nvars, c->nvars == 1 ? "" : "s");
	if (r->distilled)
		strbuf_printf(sb, " * Tree learnt from a cost model's predictions on %d shapes and the measured ones.\n",
		              r->dense_shapes);
	strbuf_printf(sb, " * Slowdown against the per-shape best: training shapes geomean %.3f, worst %.3f;\n"
	              " * held-out shapes (%d-fold cross-validation%s) geomean %.3f, worst %.3f.\n",
	              r->train[SEL_TREE].geomean, r->train[SEL_TREE].worst, r->folds,
	              r->lovo ? ", each fold one value or range of one shape argument" : "",
	              r->heldout[SEL_TREE].geomean, r->heldout[SEL_TREE].worst);
	if (r->weighted)
		strbuf_printf(sb, " * Weighted by the shapes' recorded calls (AOTC_RECORD), what the tree minimises:\n"
		              " * training geomean %.3f, held-out geomean %.3f.\n",
		              r->train_w[SEL_TREE], r->heldout_w[SEL_TREE]);
	if (in->eval)
		strbuf_printf(sb, " * Measured on %d held-out shapes (aotc eval database): geomean %.3f, worst %.3f.\n",
		              in->neval, in->eval->geomean, in->eval->worst);
	failures_comment(c, sb);
	int nlibs;
	const char **libs = libraries(c, &nlibs);
	for (int i = 0; i < nlibs; i++) {
		strbuf_puts(sb, i ? " -l" : " * Link with: -l");
		put_comment_text(sb, libs[i]);
	}
	if (nlibs)
		strbuf_puts(sb, " (the kernel file's AOTC_EXTERN routines call them).\n");
	free(libs);
	strbuf_printf(sb, " * Regenerate with: aotc emit ");
	put_comment_text(sb, c->source);
	strbuf_printf(sb, " --arch %s --db DIR", in->arch);
	if (in->include_as) {
		strbuf_puts(sb, " --include-as ");
		put_comment_text(sb, in->include_as);
	}
	strbuf_puts(sb, "\n */\n");
}

static int shape_count(const kernel *k)
{
	int n = 0;
	for (int i = 0; i < k->nparams; i++)
		n += k->params[i].shape >= 0;
	return n;
}

/* The integer parameters, in parameter order, but for the per-variant
 * values: launch_dims' arguments (launcher-only shape arguments last). */
static void int_params(out *o, const kernel *k, bool shapes_only)
{
	bool first = true;
	for (int i = 0; i < k->nparams; i++) {
		const param *p = &k->params[i];
		if (!ir_param_is_integer(p) || (shapes_only && p->shape < 0) || ir_param_per_variant(k, i))
			continue; /* per-variant values are computed inside */
		strbuf_printf(&o->sb, "%sint64_t %s", first ? "" : ", ", p->name);
		first = false;
	}
	if (first && shapes_only)
		strbuf_puts(&o->sb, "void");
}

/* Whether AOTC_VALUE i is an integer computed from the shape arguments
 * alone (select() computes it; a per-variant one, aot_valuesV). */
static bool value_per_shape(const kernel *k, int i)
{
	const value *v = &k->values[i];
	return !v->is_float && ir_param_is_integer(&k->params[v->param]) &&
	       !ir_param_per_variant(k, v->param);
}

/* "return fail" unless x (C text of an int64_t) fits parameter p's type, as
 * the tuner (ir_param_fits): a shape the kernel would see truncated is one
 * no variant is valid for. Nothing for a 64-bit or launcher-only one. */
static void fits_check(out *o, const param *p, const char *x, const char *fail)
{
	static const char *const signed_range[][2] = {
		[DT_I8] = {"INT8_MIN", "INT8_MAX"}, [DT_I16] = {"INT16_MIN", "INT16_MAX"},
		[DT_I32] = {"INT32_MIN", "INT32_MAX"}};
	int64_t lo, hi;
	if (p->launcher_only || !ir_param_is_integer(p) || !dtype_range(p->dtype, &lo, &hi) || p->dtype == DT_I64)
		return;
	if (p->dtype == DT_I8 || p->dtype == DT_I16 || p->dtype == DT_I32)
		out_line(o, "if (%s < %s || %s > %s) /* the kernel takes %s */", x, signed_range[p->dtype][0], x,
		         signed_range[p->dtype][1], dtype_name(p->dtype));
	else if (hi == INT64_MAX)
		out_line(o, "if (%s < 0) /* the kernel takes %s */", x, dtype_name(p->dtype));
	else
		out_line(o, "if (%s < 0 || %s > INT64_C(%lld)) /* the kernel takes %s */", x, x, (long long)hi,
		         dtype_name(p->dtype));
	out_line(o, "\treturn %s;", fail);
}

/* p[] from the parameters: the integer ones, then (for select and
 * variant_valid, whose arguments are the shape arguments only) the
 * AOTC_VALUEs over them; a VALUE that cannot be evaluated returns fail. */
static void fill_params(out *o, const kernel *k, bool shapes_only, const char *fail)
{
	strbuf_printf(&o->sb, "\tint64_t aot_p[%d] = {", k->nparams ? k->nparams : 1);
	for (int i = 0; i < (k->nparams ? k->nparams : 1); i++) {
		const param *pp = i < k->nparams ? &k->params[i] : NULL;
		bool set = pp && ir_param_is_integer(pp) && (!shapes_only || pp->shape >= 0) &&
		           !ir_param_per_variant(k, i);
		strbuf_printf(&o->sb, "%s%s", i ? ", " : "", set ? pp->name : "0");
	}
	strbuf_puts(&o->sb, "};\n");
	if (!shapes_only)
		return; /* launch_dims: the geometry of what it is given */
	char x[32];
	for (int i = 0; i < k->nparams; i++)
		if (k->params[i].shape >= 0)
			fits_check(o, &k->params[i], k->params[i].name, fail);
	for (int i = 0; i < k->nvalues; i++) {
		if (!value_per_shape(k, i))
			continue;
		out_line(o, "if (aot_value%d(aot_p, NULL, &aot_p[%d]))", i, k->values[i].param);
		out_line(o, "\treturn %s;", fail);
		snprintf(x, sizeof x, "aot_p[%d]", k->values[i].param);
		fits_check(o, &k->params[k->values[i].param], x, fail);
	}
}

/* The region a variant measured failing is kept to (heuristics/failures.h),
 * as checks on p[] in its aot_validV: a comment says where it failed. */
static void failure_checks(out *o, const ctx *c, int v)
{
	const hfailure *f = c->in->hm->fail ? &c->in->hm->fail[c->vars[v]] : NULL;
	if (!f || !f->nfailed)
		return;
	const kernel *k = c->k;
	int pidx[HF_MAX_ARGS], na = 0;
	const char *names[HF_MAX_ARGS];
	for (int i = 0; i < k->nparams && na < HF_MAX_ARGS; i++)
		if (k->params[i].shape >= 0) {
			names[na] = k->params[i].name;
			pidx[na++] = i;
		}
	strbuf why, cond, line;
	strbuf_init(&why);
	strbuf_init(&cond);
	strbuf_init(&line);
	hf_print_why(&why, f, c->in->db);
	hf_print(&cond, f, names);
	strbuf_puts(&line, "/* measured ");
	put_comment_text(&line, why.data);
	if (f->dropped) {
		strbuf_puts(&line, ", and on shapes like those it passed: never dispatched */");
		out_line(o, "%s", line.data);
		out_line(o, "return 0;");
	} else {
		strbuf_puts(&line, ": kept to ");
		put_comment_text(&line, cond.data);
		strbuf_puts(&line, " */");
		out_line(o, "%s", line.data);
		for (int i = 0; i < f->nterms; i++) {
			const hterm *t = &f->terms[i];
			static const char *const fmt[] = {"if (p[%d] %% INT64_C(%lld) != 0)", "if (p[%d] > INT64_C(%lld))",
			                                  "if (p[%d] < INT64_C(%lld))"};
			out_line(o, fmt[t->kind], pidx[t->arg], (long long)t->bound);
			out_line(o, "\treturn 0;");
		}
	}
	strbuf_finish(&why);
	strbuf_finish(&cond);
	strbuf_finish(&line);
}

static void tree_code(out *o, const ctx *c, int node)
{
	const htree *t = &c->hr->tree;
	const hnode *n = &t->nodes[node];
	if (n->feature < 0) {
		for (int i = 0; i < n->norder; i++) {
			int e = c->emitted[n->order[i]];
			out_line(o, "if (aot_valid%d(aot_p))", e);
			for (int j = 0; j <= o->indent; j++)
				strbuf_putc(&o->sb, '\t');
			strbuf_printf(&o->sb, "return %d; /* ", e);
			put_comment_text(&o->sb, c->names[e]);
			strbuf_puts(&o->sb, " */\n");
		}
		out_line(o, "return -1;");
		return;
	}
	/* Features are int64_t: a threshold beyond their range (a shape of
	 * INT64_MAX, a double rounded up) is written as the range's end. */
	if (n->threshold >= 9223372036854775807.0) /* 2^63 as a double */
		out_line(o, "if (aot_f[%d] <= INT64_MAX) {", n->feature);
	else if (n->threshold <= -9223372036854775807.0) /* -2^63 as a double */
		out_line(o, "if (aot_f[%d] <= INT64_MIN) {", n->feature);
	else
		out_line(o, "if (aot_f[%d] <= INT64_C(%.0f)) {", n->feature, n->threshold);
	o->indent++;
	tree_code(o, c, n->left);
	o->indent--;
	out_line(o, "} else {");
	o->indent++;
	tree_code(o, c, n->right);
	o->indent--;
	out_line(o, "}");
}

/* Whether the dispatch tree splits on feature f: select() computes only
 * those (features of a kernel without AOTC_FEATURES are derived, many). */
static bool feature_used(const ctx *c, int f)
{
	const htree *t = &c->hr->tree;
	for (int i = 0; i < t->nnodes; i++)
		if (t->nodes[i].feature == f)
			return true;
	return false;
}

/* aot_valuesV(p): the AOTC_VALUEs over tunables for variant v, into p[];
 * 1 when one cannot be evaluated. One over tunables alone is a literal. */
static void variant_values(out *o, const kernel *k, int v, const int64_t *tv)
{
	eval_env env = {.tunables = tv, .ntunables = k->ntunables};
	for (int i = 0; i < k->nparams; i++) {
		const value *val = &k->values[k->params[i].value];
		if (!ir_param_per_variant(k, i) || !uses_params(val->iexpr.e))
			continue;
		char name[300];
		snprintf(name, sizeof name, "aot_value_%s_%d", k->params[i].name, v);
		gen_function(o, name, &val->iexpr, tv);
	}
	out_line(o, "static int aot_values%d(int64_t *p)", v);
	out_line(o, "{");
	o->indent++;
	for (int i = 0; i < k->nparams; i++) {
		const value *val = &k->values[k->params[i].value];
		if (!ir_param_per_variant(k, i))
			continue;
		char at[32];
		snprintf(at, sizeof at, "p[%d]", i);
		if (uses_params(val->iexpr.e)) {
			out_line(o, "if (aot_value_%s_%d(p, &p[%d]))", k->params[i].name, v, i);
			out_line(o, "\treturn 1;");
			fits_check(o, &k->params[i], at, "1");
			continue;
		}
		int64_t x;
		if (expr_eval(val->iexpr.e, &env, &x) != EVAL_OK || !ir_param_fits(&k->params[i], x)) {
			out_line(o, "return 1; /* %s cannot be evaluated */", k->params[i].name);
			break;
		}
		strbuf text;
		strbuf_init(&text);
		put_comment_text(&text, val->iexpr.text);
		out_line(o, "p[%d] = INT64_C(%lld); /* %s = %s */", i, (long long)x, k->params[i].name,
		         text.data);
		strbuf_finish(&text);
	}
	out_line(o, "return 0;");
	o->indent--;
	out_line(o, "}");
	out_raw(o, "\n");
}

/* int PREFIX_variant_values(int aot_v, shape arguments, int64_t *NAME...):
 * the per-variant values the launcher passes to variant aot_v. */
static void variant_values_decl(out *o, const ctx *c)
{
	const kernel *k = c->k;
	strbuf_printf(&o->sb, "int %s_variant_values(int aot_v", c->prefix);
	if (shape_count(k)) {
		strbuf_puts(&o->sb, ", ");
		int_params(o, k, true);
	}
	for (int i = 0; i < k->nparams; i++)
		if (ir_param_per_variant(k, i))
			strbuf_printf(&o->sb, ", int64_t *%s", k->params[i].name);
	strbuf_puts(&o->sb, ")");
}

/* Stops the compile of the file of extension ext when its header is of
 * another emit. */
static void set_check(out *o, const ctx *c, const char *ext)
{
	char msg[700];
	snprintf(msg, sizeof msg, "%s.h and %s.%s are of different aotc emits: emit again", c->base,
	         c->base, ext);
	outdir_set_check(&o->sb, c->prefix, c->set, msg);
}

/* The dispatch's side of the set hash (docs/cli.md, "How the files are
 * written"): its header must be of the same set, and it defines the symbol
 * the launcher refers to. */
static void set_definition(out *o, const ctx *c)
{
	out_raw(o, "\n/* Which emit wrote these files: the header must be of the same one, and the\n"
	           " * launcher refers to this symbol, so files of two emits fail to build together. */\n");
	set_check(o, c, "c");
	strbuf_puts(&o->sb, "const int ");
	outdir_set_names(c->prefix, c->set, NULL, &o->sb);
	strbuf_puts(&o->sb, " = 1;\n");
}

static char *dispatch_c(const ctx *c)
{
	const kernel *k = c->k;
	out o;
	strbuf_init(&o.sb);
	o.indent = 0;
	provenance(&o, c, "The dispatch: which precompiled variant to run for a shape. C99, no dependencies.");
	out_raw(&o, "#include <stddef.h>\n#include <stdint.h>\n\n");
	out_line(&o, "#include \"%s.h\"", c->base);
	set_definition(&o, c);
	out_raw(&o, "\n");

	/* Tables */
	out_line(&o, "#define AOT_NV %d", c->nvars);
	out_line(&o, "#define AOT_NT %d", k->ntunables ? k->ntunables : 1);
	out_raw(&o, "\n");
	out_line(&o, "static const char *const aot_names[AOT_NV] = {");
	for (int i = 0; i < c->nvars; i++) {
		strbuf_puts(&o.sb, "\t");
		put_string(&o.sb, c->names[i]);
		strbuf_puts(&o.sb, ",\n");
	}
	out_line(&o, "};");
	out_raw(&o, "\n");
	out_line(&o, "/* tunable values in declaration order:");
	strbuf_puts(&o.sb, " *");
	for (int i = 0; i < k->ntunables; i++) {
		strbuf_putc(&o.sb, ' ');
		put_comment_text(&o.sb, k->tunables[i].name);
	}
	strbuf_puts(&o.sb, " */\n");
	out_line(&o, "static const int64_t aot_params[AOT_NV][AOT_NT] = {");
	for (int i = 0; i < c->nvars; i++) {
		const int64_t *v = c->in->db->configs[c->vars[i]].values;
		strbuf_puts(&o.sb, "\t{");
		for (int j = 0; j < k->ntunables; j++)
			strbuf_printf(&o.sb, "%sINT64_C(%lld)", j ? ", " : "", (long long)v[j]);
		if (!k->ntunables)
			strbuf_puts(&o.sb, "0");
		strbuf_puts(&o.sb, "},\n");
	}
	out_line(&o, "};");
	out_raw(&o, "\n");

	/* Helpers and expression functions */
	bool used[H_COUNT] = {0};
	/* A per-variant value over tunables alone is folded into a literal. */
	for (int i = 0; i < k->nvalues; i++)
		if (value_per_shape(k, i) || uses_params(k->values[i].iexpr.e))
			note_helpers(k->values[i].iexpr.e, used);
	for (int i = 0; i < k->nvalid_ifs; i++)
		note_helpers(k->valid_ifs[i].e, used);
	for (int i = 0; i < k->nfeatures; i++)
		if (feature_used(c, i))
			note_helpers(k->features[i].e, used);
	const launch *ls[2] = {&k->grid, &k->block};
	/* Launch dimensions over tunables only are evaluated here, per variant
	 * (-1 when they cannot be: every dimension's range excludes it), so
	 * select() pays no arithmetic for them. */
	bool fixed[7] = {false};
	for (int l = 0; l < 2; l++)
		for (int i = 0; i < ls[l]->ndims; i++)
			fixed[3 * l + i] = !uses_params(ls[l]->dims[i].e);
	if (k->smem.e)
		fixed[6] = !uses_params(k->smem.e);
	for (int l = 0; l < 2; l++)
		for (int i = 0; i < ls[l]->ndims; i++)
			if (!fixed[3 * l + i])
				note_helpers(ls[l]->dims[i].e, used);
	if (!fixed[6])
		note_helpers(k->smem.e, used);
	emit_helpers(&o, used);
	for (int i = 0; i < k->nvalues; i++)
		if (value_per_shape(k, i)) {
			char name[32];
			snprintf(name, sizeof name, "aot_value%d", i);
			gen_function(&o, name, &k->values[i].iexpr, NULL);
		}
	for (int i = 0; i < k->nfeatures; i++) {
		if (!feature_used(c, i))
			continue;
		char name[32];
		snprintf(name, sizeof name, "aot_feature%d", i);
		gen_function(&o, name, &k->features[i], NULL);
	}

	/* Per variant, with its tunables as literals (so a division by a
	 * tunable is a division by a constant): its AOTC_VALID_IFs, its launch
	 * dimensions checked against the limits, and aot_validV, which select()
	 * asks. Dimensions over tunables only are evaluated here. */
	static const char *const limit[2][3] = {{"2147483647", "65535", "65535"},
	                                        {"1024", "1024", "64"}};
	if (c->t->device) {
		out_line(&o, "/* Launch limits of every CUDA device: grid.x < 2^31, grid.y and grid.z <= 65535,");
		out_line(&o, " * block <= 1024 x 1024 x 64 and at most 1024 threads%s. */", c->t->limits_note);
		out_raw(&o, "\n");
	}
	/* With per-variant values p[] is select()'s own array, which each
	 * variant's aot_valuesV fills in before its launch is evaluated. */
	bool pv = ir_has_per_variant(k);
	const char *ptype = pv ? "int64_t *" : "const int64_t *";
	for (int v = 0; v < c->nvars; v++) {
		const int64_t *tv = c->in->db->configs[c->vars[v]].values;
		eval_env env = {.tunables = tv, .ntunables = k->ntunables};
		strbuf_puts(&o.sb, "/* ---- variant ");
		strbuf_printf(&o.sb, "%d: ", v);
		put_comment_text(&o.sb, c->names[v]);
		strbuf_puts(&o.sb, " */\n\n");
		if (pv && !c->ext[v])
			variant_values(&o, k, v, tv);
		if (c->ext[v]) {
			/* A library routine: no launch of its own, valid everywhere. */
			if (c->t->device) {
				out_line(&o, "static int aot_dims%d(%sp, uint32_t grid[3], uint32_t block[3], uint32_t *smem)", v, ptype);
				out_line(&o, "{");
				out_line(&o, "\t(void)p, (void)grid, (void)block, (void)smem;");
				out_line(&o, "\treturn 1;");
				out_line(&o, "}");
				out_raw(&o, "\n");
			}
			out_line(&o, "static int aot_valid%d(%sp)", v, ptype);
			out_line(&o, "{");
			o.indent++;
			out_line(&o, "(void)p;");
			failure_checks(&o, c, v);
			out_line(&o, "return 1;");
			o.indent--;
			out_line(&o, "}");
			out_raw(&o, "\n");
			continue;
		}
		for (int i = 0; i < k->nvalid_ifs; i++) {
			char name[48];
			snprintf(name, sizeof name, "aot_valid_if%d_%d", i, v);
			gen_function(&o, name, &k->valid_ifs[i], tv);
		}
		if (c->t->device) {
			for (int l = 0; l < 2; l++)
				for (int i = 0; i < ls[l]->ndims; i++) {
					char name[48];
					snprintf(name, sizeof name, "aot_%s%d_%d", l ? "block" : "grid", i, v);
					if (!fixed[3 * l + i])
						gen_function(&o, name, &ls[l]->dims[i], tv);
				}
			if (k->smem.e && !fixed[6]) {
				char name[48];
				snprintf(name, sizeof name, "aot_smem_%d", v);
				gen_function(&o, name, &k->smem, tv);
			}
			/* aot_dimsV: the launch, or 1 when it cannot be evaluated or
			 * exceeds what any CUDA device launches (docs/spec.md §8). */
			out_line(&o, "static int aot_dims%d(%sp, uint32_t grid[3], uint32_t block[3], uint32_t *smem)", v, ptype);
			out_line(&o, "{");
			o.indent++;
			out_line(&o, "int64_t x;");
			if (pv) {
				out_line(&o, "if (aot_values%d(p))", v);
				out_line(&o, "\treturn 1;");
			} else {
				out_line(&o, "(void)p;");
			}
			for (int l = 0; l < 2; l++)
				for (int i = 0; i < 3; i++) {
					const char *arr = l ? "block" : "grid";
					if (i < ls[l]->ndims && fixed[3 * l + i]) {
						int64_t x = -1;
						if (expr_eval(ls[l]->dims[i].e, &env, &x) != EVAL_OK)
							x = -1;
						out_line(&o, "x = INT64_C(%lld);", (long long)x);
						out_line(&o, "if (x < 1 || x > INT64_C(%s))", limit[l][i]);
						out_line(&o, "\treturn 1;");
						out_line(&o, "%s[%d] = (uint32_t)x;", arr, i);
					} else if (i < ls[l]->ndims) {
						out_line(&o, "if (aot_%s%d_%d(p, &x) || x < 1 || x > INT64_C(%s))", arr, i, v, limit[l][i]);
						out_line(&o, "\treturn 1;");
						out_line(&o, "%s[%d] = (uint32_t)x;", arr, i);
					} else {
						out_line(&o, "%s[%d] = 1;", arr, i);
					}
				}
			out_line(&o, "if ((int64_t)block[0] * block[1] * block[2] > 1024)");
			out_line(&o, "\treturn 1;");
			if (k->smem.e) {
				if (fixed[6]) {
					int64_t x = -1;
					if (expr_eval(k->smem.e, &env, &x) != EVAL_OK)
						x = -1;
					out_line(&o, "if ((x = INT64_C(%lld)) < 0 || x > INT64_C(4294967295))", (long long)x);
				} else {
					out_line(&o, "if (aot_smem_%d(p, &x) || x < 0 || x > INT64_C(4294967295))", v);
				}
				out_line(&o, "\treturn 1;");
				out_line(&o, "*smem = (uint32_t)x;");
			} else {
				out_line(&o, "*smem = 0;");
			}
			out_line(&o, "return 0;");
			o.indent--;
			out_line(&o, "}");
			out_raw(&o, "\n");
		}
		/* aot_validV(p): every AOTC_VALID_IF holds and (CUDA) the
		 * launch fits the limits */
		out_line(&o, "static int aot_valid%d(%sp)", v, ptype);
		out_line(&o, "{");
		o.indent++;
		if (c->t->device)
			out_line(&o, "uint32_t g[3], b[3], s;");
		if (k->nvalid_ifs)
			out_line(&o, "int64_t x;");
		if (pv) {
			/* as the tuner: a value it cannot compute makes the variant invalid */
			out_line(&o, "if (aot_values%d(p))", v);
			out_line(&o, "\treturn 0;");
		} else if (!c->t->device && !k->nvalid_ifs) {
			out_line(&o, "(void)p;");
		}
		failure_checks(&o, c, v);
		for (int i = 0; i < k->nvalid_ifs; i++) {
			out_line(&o, "if (aot_valid_if%d_%d(p, &x) || !x)", i, v);
			out_line(&o, "\treturn 0;");
		}
		if (c->t->device)
			out_line(&o, "return !aot_dims%d(p, g, b, &s);", v);
		else
			out_line(&o, "return 1;");
		o.indent--;
		out_line(&o, "}");
		out_raw(&o, "\n");
	}
	out_line(&o, "static int (*const aot_valid_of[AOT_NV])(%s) = {", pv ? "int64_t *" : "const int64_t *");
	for (int v = 0; v < c->nvars; v++)
		out_line(&o, "\taot_valid%d,", v);
	out_line(&o, "};");
	out_raw(&o, "\n");
	if (c->t->device) {
		out_line(&o, "static int (*const aot_dims_of[AOT_NV])(%s, uint32_t *, uint32_t *, uint32_t *) = {",
		         pv ? "int64_t *" : "const int64_t *");
		for (int v = 0; v < c->nvars; v++)
			out_line(&o, "\taot_dims%d,", v);
		out_line(&o, "};");
		out_raw(&o, "\n");
	}
	if (pv) {
		out_line(&o, "static int (*const aot_values_of[AOT_NV])(int64_t *) = {");
		for (int v = 0; v < c->nvars; v++)
			out_line(&o, "\taot_values%d,", v);
		out_line(&o, "};");
		out_raw(&o, "\n");
	}

	/* select */
	strbuf_printf(&o.sb, "int %s_select(", c->prefix);
	int_params(&o, k, true);
	strbuf_puts(&o.sb, ")\n{\n");
	o.indent = 1;
	fill_params(&o, k, true, "-1");
	int nf = k->nfeatures ? k->nfeatures : c->in->hm->nfeatures;
	out_line(&o, "int64_t aot_f[%d];", nf ? nf : 1);
	if (k->nfeatures) {
		/* A feature that cannot be evaluated is 0, as in training; the
		 * tree reads only those it splits on. */
		for (int i = 0; i < k->nfeatures; i++) {
			if (!feature_used(c, i))
				continue;
			out_line(&o, "if (aot_feature%d(aot_p, NULL, &aot_f[%d]))", i, i);
			out_line(&o, "\taot_f[%d] = 0;", i);
		}
	} else {
		int f = 0;
		for (int i = 0; i < k->nparams; i++)
			if (k->params[i].shape >= 0)
				out_line(&o, "aot_f[%d] = aot_p[%d];", f++, i);
		if (!f)
			out_line(&o, "aot_f[0] = 0;");
	}
	out_line(&o, "(void)aot_f;");
	tree_code(&o, c, 0);
	o.indent = 0;
	out_line(&o, "}");
	out_raw(&o, "\n");

	out_line(&o, "int %s_num_variants(void)", c->prefix);
	out_line(&o, "{");
	out_line(&o, "\treturn AOT_NV;");
	out_line(&o, "}");
	out_raw(&o, "\n");
	out_line(&o, "const char *%s_variant_name(int v)", c->prefix);
	out_line(&o, "{");
	out_line(&o, "\treturn v >= 0 && v < AOT_NV ? aot_names[v] : NULL;");
	out_line(&o, "}");
	out_raw(&o, "\n");
	out_line(&o, "const int64_t *%s_variant_params(int v)", c->prefix);
	out_line(&o, "{");
	out_line(&o, "\treturn v >= 0 && v < AOT_NV ? aot_params[v] : NULL;");
	out_line(&o, "}");
	out_raw(&o, "\n");
	strbuf_printf(&o.sb, "int %s_variant_valid(int aot_v%s", c->prefix, shape_count(k) ? ", " : "");
	if (shape_count(k))
		int_params(&o, k, true);
	strbuf_puts(&o.sb, ")\n{\n");
	o.indent = 1;
	fill_params(&o, k, true, "0");
	out_line(&o, "return aot_v >= 0 && aot_v < AOT_NV && aot_valid_of[aot_v](aot_p);");
	o.indent = 0;
	out_line(&o, "}");
	if (pv) {
		out_raw(&o, "\n");
		variant_values_decl(&o, c);
		strbuf_puts(&o.sb, "\n{\n");
		o.indent = 1;
		fill_params(&o, k, true, "-1");
		out_line(&o, "if (aot_v < 0 || aot_v >= AOT_NV || aot_values_of[aot_v](aot_p))");
		out_line(&o, "\treturn -1;");
		for (int i = 0; i < k->nparams; i++)
			if (ir_param_per_variant(k, i))
				out_line(&o, "*%s = aot_p[%d];", k->params[i].name, i);
		out_line(&o, "return 0;");
		o.indent = 0;
		out_line(&o, "}");
	}

	if (c->t->device) {
		out_raw(&o, "\n");
		strbuf_printf(&o.sb, "int %s_launch_dims(int aot_v, ", c->prefix);
		int_params(&o, k, false);
		strbuf_puts(&o.sb, ", uint32_t aot_grid[3], uint32_t aot_block[3], uint32_t *aot_smem)\n{\n");
		o.indent = 1;
		fill_params(&o, k, false, "-1");
		out_line(&o, "if (aot_v < 0 || aot_v >= AOT_NV)");
		out_line(&o, "\treturn -1;");
		out_line(&o, "return aot_dims_of[aot_v](aot_p, aot_grid, aot_block, aot_smem) ? -1 : 0;");
		o.indent = 0;
		out_line(&o, "}");
	}
	return o.sb.data;
}

/* ---- Header and launcher ------------------------------------------------------ */

/* The type a parameter is declared with in the launcher: its own spelling
 * ("const float *" up to its last '*' for a pointer), unless it names a type
 * template parameter (T *), which is its default, or a typedef of the
 * kernel file (floatX *), which is the type underneath (the header is read
 * without the file). */
static void param_type(strbuf *sb, const kernel *k, const param *p)
{
	if (p->elem_canon) {
		if (p->is_pointer)
			strbuf_printf(sb, "%s%s *", p->is_const ? "const " : "", p->elem_canon);
		else
			strbuf_puts(sb, p->elem_canon);
		return;
	}
	int tp = ir_find_tparam(k, p->elem_type);
	if (tp >= 0 && k->tparams[tp].is_type && k->tparams[tp].default_text) {
		const char *def = k->tparams[tp].default_text;
		if (p->is_pointer)
			strbuf_printf(sb, "%s%s *", p->is_const ? "const " : "", def);
		else
			strbuf_puts(sb, def);
		return;
	}
	const char *star = strrchr(p->type, '*');
	if (p->is_pointer && star)
		strbuf_printf(sb, "%.*s*", (int)(star - p->type), p->type);
	else
		strbuf_puts(sb, p->type);
}

/* "TYPE NAME", with no space after a pointer's '*'. */
static void param_decl(strbuf *sb, const kernel *k, const param *p)
{
	strbuf t;
	strbuf_init(&t);
	param_type(&t, k, p);
	bool tight = p->is_pointer && t.len && t.data[t.len - 1] == '*';
	strbuf_printf(sb, "%s%s%s", t.data, tight ? "" : " ", p->name);
	strbuf_finish(&t);
}

/* What the launcher takes: the kernel's parameters but for the per-variant
 * values (it computes them), then the launcher-only shape arguments. */
static bool launcher_takes(const kernel *k, int i)
{
	return !ir_param_per_variant(k, i);
}

static void launcher_params(strbuf *sb, const kernel *k)
{
	bool first = true;
	for (int i = 0; i < k->nparams; i++) {
		if (!launcher_takes(k, i))
			continue;
		if (!first)
			strbuf_puts(sb, ", ");
		param_decl(sb, k, &k->params[i]);
		first = false;
	}
}

static char *header(const ctx *c)
{
	const kernel *k = c->k;
	out o;
	strbuf_init(&o.sb);
	o.indent = 0;
	provenance(&o, c, "Declarations of the dispatch and the launcher.");
	char guard[320];
	snprintf(guard, sizeof guard, "%s_H", c->base + 1);
	for (char *g = guard; *g; g++)
		*g = (char)toupper((unsigned char)*g);
	out_line(&o, "#ifndef %s", guard);
	out_line(&o, "#define %s", guard);
	out_raw(&o, "\n#include <stddef.h>\n#include <stdint.h>\n\n#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n");
	out_line(&o, "/* Which emit wrote these files (docs/cli.md): the dispatch defines the symbol,");
	out_line(&o, " * the launcher refers to it, and both check the macro. */");
	strbuf_puts(&o.sb, "#define ");
	outdir_set_names(c->prefix, c->set, &o.sb, NULL);
	strbuf_printf(&o.sb, " UINT64_C(0x%016llx)\nextern const int ", (unsigned long long)c->set);
	outdir_set_names(c->prefix, c->set, NULL, &o.sb);
	strbuf_puts(&o.sb, ";\n\n");
	out_line(&o, "/* The variant for a shape, or -1 when none is valid there. */");
	strbuf_printf(&o.sb, "int %s_select(", c->prefix);
	int_params(&o, k, true);
	strbuf_puts(&o.sb, ");\n");
	out_line(&o, "int %s_num_variants(void);", c->prefix);
	strbuf_puts(&o.sb, "/* The variant's name (\"");
	put_comment_text(&o.sb, k->name);
	strbuf_puts(&o.sb, "<...>\"); NULL for an index out of range. */\n");
	out_line(&o, "const char *%s_variant_name(int v);", c->prefix);
	out_line(&o, "/* Tunable values in declaration order; NULL for an index out of range. */");
	out_line(&o, "const int64_t *%s_variant_params(int v);", c->prefix);
	out_line(&o, "/* Whether variant v may run on the shape (what select() asks of each; the");
	out_line(&o, " * launcher asks it of a variant AOTC_VARIANT forces). */");
	strbuf_printf(&o.sb, "int %s_variant_valid(int v%s", c->prefix, shape_count(k) ? ", " : "");
	if (shape_count(k))
		int_params(&o, k, true);
	strbuf_puts(&o.sb, ");\n");
	if (ir_has_per_variant(k)) {
		out_line(&o, "/* The parameters whose AOTC_VALUE uses tunables, as variant v passes them");
		out_line(&o, " * at this shape: 0, or -1 if v is out of range or they cannot be evaluated. */");
		variant_values_decl(&o, c);
		strbuf_puts(&o.sb, ";\n");
	}
	const target *t = c->t;
	if (t->device) {
		out_line(&o, "/* Grid, block and dynamic shared memory of variant v: 0, or -1 if they");
		out_line(&o, " * cannot be evaluated (overflow, division by zero, out of range) or exceed");
		out_line(&o, " * what a CUDA device launches (grid.y, grid.z > 65535, grid.x >= 2^31,");
		out_line(&o, " * more than 1024 threads or 1024 x 1024 x 64 per block); select() never");
		out_line(&o, " * returns such a variant. */");
		strbuf_printf(&o.sb, "int %s_launch_dims(int v, ", c->prefix);
		int_params(&o, k, false);
		strbuf_puts(&o.sb, ", uint32_t grid[3], uint32_t block[3], uint32_t *smem);\n");
		strbuf_printf(&o.sb, "\n#if %s\n", t->have_runtime);
		bool half = false, bf16 = false;
		for (int i = 0; i < k->nparams; i++) {
			half |= k->params[i].dtype == DT_F16;
			bf16 |= k->params[i].dtype == DT_BF16;
		}
		if (half && t->half_header)
			out_line(&o, "#include <%s>", t->half_header);
		if (bf16 && t->bf16_header)
			out_line(&o, "#include <%s>", t->bf16_header);
		out_line(&o, "/* Selects, then launches on stream; %s when no variant", t->invalid);
		out_line(&o, " * is valid for the shape. */");
		strbuf_printf(&o.sb, "%s %s_launch(", t->error_t, c->prefix);
		launcher_params(&o.sb, k);
		strbuf_printf(&o.sb, ", %s aot_stream);\n#endif\n", t->stream_t);
	} else {
		out_line(&o, "/* Selects, then runs the variant: 0, or -1 when none is valid. */");
		strbuf_printf(&o.sb, "int %s_launch(", c->prefix);
		launcher_params(&o.sb, k);
		strbuf_puts(&o.sb, ");\n");
	}
	out_raw(&o, "\n#ifdef __cplusplus\n}\n#endif\n\n");
	out_line(&o, "#endif");
	return o.sb.data;
}

/* The kernel source as the launcher includes it: --include-as, else its
 * file name, found through the include path the user's build already has
 * for the kernel; nothing of this machine's directory layout. */
static char *include_path(const emit_input *in)
{
	if (in->include_as)
		return xstrdup(in->include_as);
	const char *slash = strrchr(in->m->file, '/');
	return xstrdup(slash ? slash + 1 : in->m->file);
}

/* ---- The copy of aotc.h ------------------------------------------------------ */

extern const char aotc_header_text[];
extern const size_t aotc_header_text_len;

/* The first line of the copy: how a later emit knows the file is its own. */
static const char header_mark[] =
	"/* Copied here by aotc emit (the emitted files need no installed aotc.h); the next emit or\n"
	" * link into this directory rewrites it. */\n";

int emit_header_copy(const char *dir, char **text, size_t *len, diags *d)
{
	strbuf want;
	strbuf_init(&want);
	strbuf_puts(&want, header_mark);
	strbuf_putn(&want, aotc_header_text, aotc_header_text_len);
	strbuf path;
	strbuf_init(&path);
	strbuf_printf(&path, "%s/aotc.h", dir);
	size_t have_len = 0;
	char *have = read_file(path.data, &have_len);
	int r = 1;
	if (have && ((have_len == want.len && !memcmp(have, want.data, want.len)) ||
	             (have_len == aotc_header_text_len &&
	              !memcmp(have, aotc_header_text, aotc_header_text_len)))) {
		r = 0; /* this copy, or aotc.h itself: leave it */
	} else if (have && strncmp(have, header_mark, strlen("/* Copied here by aotc emit")) != 0) {
		diag_plain_error(d, "%s exists and is not a copy aotc wrote: remove it or emit into another directory",
		                 path.data);
		r = -1;
	} else if (!have && errno != ENOENT) {
		diag_plain_error(d, "cannot read %s: %s", path.data, strerror(errno));
		r = -1;
	}
	free(have);
	strbuf_finish(&path);
	if (r == 1) {
		*text = want.data;
		*len = want.len;
	} else {
		strbuf_finish(&want);
	}
	return r;
}

/* The kernel's own parameters (not the launcher-only shape arguments). */
static void call_args(strbuf *sb, const kernel *k)
{
	for (int i = 0; i < ir_kernel_nparams(k); i++)
		strbuf_printf(sb, "%s%s", i ? ", " : "", k->params[i].name);
}

/* The shape arguments as int64_t, comma-separated: select()'s arguments. */
static void shape_args(strbuf *sb, const kernel *k)
{
	bool first = true;
	for (int i = 0; i < k->nparams; i++)
		if (k->params[i].shape >= 0) {
			strbuf_printf(sb, "%s(int64_t)%s", first ? "" : ", ", k->params[i].name);
			first = false;
		}
}

extern const char launcher_env_text[];
extern const size_t launcher_env_text_len;

/* What the launcher tells codegen/launcher_env.hpp about its kernel. */
static void launcher_info(out *o, const ctx *c)
{
	const kernel *k = c->k;
	int n = shape_count(k);
	strbuf_printf(&o->sb, "static const char *const %s_args[%d] = {", c->prefix, n ? n : 1);
	bool first = true;
	for (int i = 0; i < k->nparams; i++)
		if (k->params[i].shape >= 0) {
			strbuf_printf(&o->sb, "%s\"%s\"", first ? "" : ", ", k->params[i].name);
			first = false;
		}
	strbuf_puts(&o->sb, n ? "};\n" : "NULL};\n");
	out_line(o, "static int %s_valid_at(int v, const int64_t *s)", c->prefix);
	out_line(o, "{");
	strbuf_printf(&o->sb, "\t(void)s;\n\treturn %s_variant_valid(v", c->prefix);
	for (int a = 0; a < n; a++)
		strbuf_printf(&o->sb, ", s[%d]", a);
	strbuf_puts(&o->sb, ");\n}\n");
	char tag[64];
	emit_arch_tag(c->in->arch, tag, sizeof tag);
	out_line(o, "static const aot_kernel_info %s_info = {", c->prefix);
	out_line(o, "\t\"%s\", \"%s\", %d, %s_args,", k->name, tag, n, c->prefix);
	out_line(o, "\t%s_num_variants, %s_variant_name, %s_valid_at};", c->prefix, c->prefix, c->prefix);
	out_raw(o, "\n");
}

/* The per-variant values of the chosen variant, as the kernel's
 * parameters of the same names. */
static void launcher_values(out *o, const ctx *c)
{
	const kernel *k = c->k;
	strbuf decl;
	strbuf_init(&decl);
	for (int i = 0; i < k->nparams; i++)
		if (ir_param_per_variant(k, i))
			strbuf_printf(&decl, "%saot_%s", decl.len ? ", " : "", k->params[i].name);
	out_line(o, "/* What the chosen variant passes where an AOTC_VALUE uses its tunables. */");
	out_line(o, "int64_t %s;", decl.data);
	strbuf_finish(&decl);
	strbuf call;
	strbuf_init(&call);
	strbuf_printf(&call, "%s_variant_values(aot_v", c->prefix);
	if (shape_count(k)) {
		strbuf_puts(&call, ", ");
		shape_args(&call, k);
	}
	for (int i = 0; i < k->nparams; i++)
		if (ir_param_per_variant(k, i))
			strbuf_printf(&call, ", &aot_%s", k->params[i].name);
	out_line(o, "if (%s) != 0)", call.data);
	out_line(o, "\treturn %s;", c->t->invalid);
	strbuf_finish(&call);
	for (int i = 0; i < k->nparams; i++) {
		if (!ir_param_per_variant(k, i))
			continue;
		strbuf t;
		strbuf_init(&t);
		param_type(&t, k, &k->params[i]);
		out_line(o, "%s %s = (%s)aot_%s;", t.data, k->params[i].name, t.data, k->params[i].name);
		strbuf_finish(&t);
	}
}

static char *launcher(const ctx *c)
{
	const kernel *k = c->k;
	out o;
	strbuf_init(&o.sb);
	o.indent = 0;
	const target *t = c->t;
	provenance(&o, c, t->device ? "The selected instantiations and their launcher."
	                            : "The selected instantiations and their caller.");
	if (t->prelude)
		out_line(&o, "#include <%s>", t->prelude);
	out_line(&o, "#include \"%s.h\"", c->base);
	set_check(&o, c, t->launcher_ext);
	/* aotc link includes the source once for all architectures. */
	out_line(&o, "#ifndef AOTC_LINKED");
	/* Kernel files as people have them hold a main(): here it must not
	 * be the application's. */
	out_line(&o, "#define main %s_kernel_file_main /* the kernel file's own main(), if any */", c->prefix);
	out_line(&o, "#include \"%s\"", c->include);
	out_line(&o, "#undef main");
	out_line(&o, "#endif");
	out_raw(&o, "\n");
	strbuf_putn(&o.sb, launcher_env_text, launcher_env_text_len);
	out_raw(&o, "\n");
	launcher_info(&o, c);
	strbuf_printf(&o.sb, "extern \"C\" %s %s_launch(", t->error_t, c->prefix);
	launcher_params(&o.sb, k);
	if (t->device)
		strbuf_printf(&o.sb, ", %s aot_stream)\n{\n", t->stream_t);
	else
		strbuf_puts(&o.sb, ")\n{\n");
	o.indent = 1;
	/* A use of the dispatch's symbol, which only a .c of this set defines:
	 * a load the compiler cannot drop, so the link fails for another's. */
	strbuf_puts(&o.sb, "\tif (");
	outdir_set_names(c->prefix, c->set, NULL, &o.sb);
	strbuf_puts(&o.sb, " != 1) /* links only with the dispatch of this emit */\n");
	out_line(&o, "\treturn %s;", t->invalid);
	out_line(&o, "static aot_env aot_state(&%s_info);", c->prefix);
	strbuf_printf(&o.sb, "\tint aot_v = %s_select(", c->prefix);
	shape_args(&o.sb, k);
	strbuf_puts(&o.sb, ");\n");
	out_line(&o, "if (aot_state.active()) {");
	strbuf_printf(&o.sb, "\t\tconst int64_t aot_s[%d] = {", shape_count(k) ? shape_count(k) : 1);
	if (shape_count(k))
		shape_args(&o.sb, k);
	else
		strbuf_puts(&o.sb, "0");
	strbuf_puts(&o.sb, "};\n");
	out_line(&o, "\taot_v = aot_state.observe(aot_s, aot_v);");
	out_line(&o, "}");
	if (ir_has_per_variant(k))
		launcher_values(&o, c);
	if (c->any_ext) {
		/* AOTC_EXTERN routines: called, not launched. */
		out_line(&o, "switch (aot_v) {");
		for (int i = 0; i < c->nvars; i++) {
			if (!c->ext[i])
				continue;
			strbuf_printf(&o.sb, "\tcase %d:\n\t\t%s%s(", i, t->device ? "return " : "", c->ext[i]->name);
			call_args(&o.sb, k);
			strbuf_puts(&o.sb, t->device ? ", aot_stream);\n" : ");\n\t\treturn 0;\n");
		}
		out_line(&o, "default:");
		out_line(&o, "\tbreak;");
		out_line(&o, "}");
	}
	if (t->device) {
		out_line(&o, "uint32_t aot_g[3], aot_b[3], aot_smem;");
		out_line(&o, "if (aot_v < 0)");
		out_line(&o, "\treturn %s;", t->invalid);
		strbuf_printf(&o.sb, "\tif (%s_launch_dims(aot_v", c->prefix);
		for (int i = 0; i < k->nparams; i++)
			if (ir_param_is_integer(&k->params[i]) && !ir_param_per_variant(k, i))
				strbuf_printf(&o.sb, ", (int64_t)%s", k->params[i].name);
		strbuf_printf(&o.sb, ", aot_g, aot_b, &aot_smem) != 0)\n\t\treturn %s;\n", t->invalid);
		out_line(&o, "dim3 aot_grid(aot_g[0], aot_g[1], aot_g[2]), aot_block(aot_b[0], aot_b[1], aot_b[2]);");
	}
	out_line(&o, "switch (aot_v) {");
	for (int i = 0; i < c->nvars; i++) {
		if (c->ext[i])
			continue;
		const char *name = c->names[i];
		const char *br = strchr(name, '[');
		int n = br ? (int)(br - name) : (int)strlen(name);
		out_line(&o, "case %d:", i);
		o.indent++;
		if (t->device) {
			/* Above 48 KiB of dynamic shared memory a kernel must opt in. */
			out_line(&o, "if (aot_smem > 48 * 1024) {");
			strbuf_printf(&o.sb, "\t\t\t%s aot_e = ", t->error_t);
			strbuf_printf(&o.sb, t->smem_attr, n, name);
			strbuf_puts(&o.sb, ";\n");
			out_line(&o, "\tif (aot_e != %s)", t->ok);
			out_line(&o, "\t\treturn aot_e;");
			out_line(&o, "}");
			strbuf_printf(&o.sb, "\t\t%.*s<<<aot_grid, aot_block, aot_smem, aot_stream>>>(", n, name);
		} else {
			strbuf_printf(&o.sb, "\t\t%.*s(", n, name);
		}
		call_args(&o.sb, k);
		strbuf_puts(&o.sb, ");\n");
		if (t->device)
			out_line(&o, "return %s;", t->last_error);
		else
			out_line(&o, "return 0;");
		o.indent--;
	}
	out_line(&o, "default:");
	out_line(&o, "\treturn %s;", t->invalid);
	out_line(&o, "}");
	o.indent = 0;
	out_line(&o, "}");
	return o.sb.data;
}

/* ---- The manifest ---------------------------------------------------------- */

/* Sets o[key] to the string s; false when s is not UTF-8 (JSON cannot hold it). */
static bool set_str(json_t *o, const char *key, const char *s)
{
	json_t *v = s ? json_string(s) : json_null();
	return v && json_object_set_new(o, key, v) == 0;
}

static json_t *param_entry(const char *type, const char *name, bool *ok)
{
	json_t *p = json_object();
	*ok &= set_str(p, "type", type) && set_str(p, "name", name);
	return p;
}

/* _aot_K_T.json (docs/cli.md, "The manifest"): what aotc link needs to know
 * about the other three files, so that it never reads C back. Keys in a
 * fixed order, 2-space indent, a final newline: the same database gives the
 * same bytes. NULL after a diagnostic when a string cannot be JSON. */
static char *manifest(const ctx *c, diags *d)
{
	const kernel *k = c->k;
	const arch_info *ai = arch_parse(c->in->arch);
	bool ok = true;
	json_t *m = json_object();
	json_object_set_new(m, "aotc_manifest", json_integer(AOTC_MANIFEST_VERSION));
	ok &= set_str(m, "aotc_version", AOTC_VERSION_STRING);
	ok &= set_str(m, "kernel", k->name);
	ok &= set_str(m, "arch", c->in->arch);
	ok &= set_str(m, "platform", arch_kind_name(ai ? ai->kind : ARCH_HOST));
	ok &= set_str(m, "prefix", c->prefix);
	char set[17];
	snprintf(set, sizeof set, "%016llx", (unsigned long long)c->set);
	ok &= set_str(m, "set", set);
	json_t *files = json_object();
	strbuf name;
	strbuf_init(&name);
	const char *keys[3] = {"dispatch", "header", "launcher"};
	const char *exts[3] = {"c", "h", c->t->launcher_ext};
	for (int i = 0; i < 3; i++) {
		name.len = 0;
		strbuf_printf(&name, "%s.%s", c->base, exts[i]);
		ok &= set_str(files, keys[i], name.data);
	}
	strbuf_finish(&name);
	json_object_set_new(m, "files", files);
	ok &= set_str(m, "hardware_id", json_string_value(json_object_get(c->in->db->hardware, "id")));
	ok &= set_str(m, "source_hash", c->in->m->source_hash);
	int n;
	const char **names = libraries(c, &n);
	json_t *libs = json_array();
	for (int i = 0; i < n; i++) {
		json_t *v = json_string(names[i]);
		ok &= v && json_array_append_new(libs, v) == 0;
	}
	free(names);
	json_object_set_new(m, "libraries", libs);
	ok &= set_str(m, "include", c->include);
	json_t *sel = json_array(), *lau = json_array();
	for (int i = 0; i < k->nparams; i++) {
		const param *p = &k->params[i];
		if (ir_param_is_integer(p) && p->shape >= 0)
			json_array_append_new(sel, param_entry("int64_t", p->name, &ok));
		if (!launcher_takes(k, i))
			continue;
		strbuf t;
		strbuf_init(&t);
		param_type(&t, k, p);
		json_array_append_new(lau, param_entry(t.data, p->name, &ok));
		strbuf_finish(&t);
	}
	if (c->t->device)
		json_array_append_new(lau, param_entry(c->t->stream_t, "aot_stream", &ok));
	json_object_set_new(m, "select", sel);
	json_object_set_new(m, "launch", lau);
	json_object_set_new(m, "variants", json_integer(c->nvars));
	char *text = NULL;
	if (ok) {
		char *dump = json_dumps(m, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		if (!dump)
			die("out of memory");
		size_t n = strlen(dump);
		text = xmalloc(n + 2);
		memcpy(text, dump, n);
		memcpy(text + n, "\n", 2);
		free(dump);
	} else {
		diag_plain_error(d, "%s: a name or path of kernel %s is not UTF-8 and cannot be written into %s.json",
		                 c->in->m->file, k->name, c->base);
	}
	json_decref(m);
	return text;
}

static bool c_reserved(const char *s)
{
	static const char *const words[] = {"restrict", "inline", "_Bool", "_Complex", "_Imaginary",
	                                    "auto", "register", "signed", "unsigned", "int64_t",
	                                    "uint32_t", "int", "cudaStream_t", "cudaError_t", "dim3",
	                                    "hipStream_t", "hipError_t"};
	for (size_t i = 0; i < sizeof words / sizeof *words; i++)
		if (!strcmp(s, words[i]))
			return true;
	return !strncmp(s, "aot_", 4);
}

int emit_files(const emit_input *in, diags *d)
{
	const kernel *k = in->k;
	if (!is_identifier(k->name)) {
		diag_error(d, k->loc, "kernel name '%s' is not a C identifier", k->name);
		return 1;
	}
	for (int i = 0; i < k->nparams; i++) {
		const param *p = &k->params[i];
		if (!is_identifier(p->name) || c_reserved(p->name)) {
			diag_error(d, p->loc, "parameter name '%s' cannot be used in emitted code", p->name);
			return 1;
		}
		if (!ir_type_text_ok(p->type) || !ir_type_text_ok(p->elem_type) ||
		    (p->elem_canon && !ir_type_text_ok(p->elem_canon))) {
			diag_error(d, p->loc, "the type of parameter '%s' cannot be written into emitted code",
			           p->name);
			return 1;
		}
	}
	/* What ir_from_json checks, for modules from the frontend too:
	 * defaults go into template-ids, tunable names into comments. */
	for (int i = 0; i < k->ntparams; i++) {
		const tparam *tp = &k->tparams[i];
		if (tp->default_text && !(tp->is_type ? ir_type_text_ok(tp->default_text)
		                                      : ir_template_arg_ok(tp->default_text))) {
			diag_error(d, tp->loc, "the default of '%s' cannot be written into emitted code",
			           tp->name);
			return 1;
		}
	}
	for (int i = 0; i < k->ntunables; i++)
		if (!is_identifier(k->tunables[i].name)) {
			diag_error(d, k->tunables[i].loc, "tunable name '%s' is not a C identifier",
			           k->tunables[i].name);
			return 1;
		}
	if (!ir_source_hash_ok(in->m->source_hash)) {
		diag_plain_error(d, "%s: its source hash is not 32 lowercase hex digits", in->m->file);
		return 1;
	}
	ctx c = {.in = in, .t = target_for(in->arch), .k = k, .hr = in->hr};
	char tag[64];
	emit_arch_tag(in->arch, tag, sizeof tag);
	snprintf(c.prefix, sizeof c.prefix, "aot_%s_%s", k->name, tag);
	snprintf(c.base, sizeof c.base, "_aot_%s_%s", k->name, tag);
	/* Emitted indices in database order, so adding a shape to the database
	 * does not renumber what did not change. */
	c.vars = xmalloc((size_t)in->hr->nsubset * sizeof *c.vars + 1);
	memcpy(c.vars, in->hr->subset, (size_t)in->hr->nsubset * sizeof *c.vars);
	c.nvars = in->hr->nsubset;
	qsort(c.vars, (size_t)c.nvars, sizeof *c.vars, cmp_int);
	c.emitted = xmalloc((size_t)in->hm->nvariants * sizeof *c.emitted + 1);
	for (int v = 0; v < in->hm->nvariants; v++)
		c.emitted[v] = -1;
	for (int i = 0; i < c.nvars; i++)
		c.emitted[c.vars[i]] = i;
	int status = 0;
	/* The dispatch, the header, the launcher, the manifest and the copy
	 * of aotc.h. */
	enum { NOWN = 4, NFILES = 5 };
	char *files[NFILES] = {NULL, NULL, NULL, NULL, NULL};
	size_t lens[NFILES] = {0, 0, 0, 0, 0};
	strbuf paths[NOWN];
	int nfiles = NOWN;
	strbuf src;
	strbuf_init(&src);
	source_name(&src, in->m->file);
	c.source = src.data;

	/* Names come from the IR and the configuration's values, never from
	 * the database's text: a database that disagrees is refused. */
	arena a;
	arena_init(&a);
	c.names = arena_alloc(&a, (size_t)c.nvars * sizeof *c.names + 1);
	c.ext = arena_alloc(&a, (size_t)c.nvars * sizeof *c.ext + 1);
	for (int i = 0; i < c.nvars && !status; i++) {
		const db_entry *cf = &in->db->configs[c.vars[i]];
		c.ext[i] = NULL;
		if (cf->is_extern) {
			for (int e = 0; e < k->nexterns; e++)
				if (!strcmp(k->externs[e].name, cf->name))
					c.ext[i] = &k->externs[e];
			if (!c.ext[i]) {
				diag_plain_error(d, "%s: routine '%s' is not an AOTC_EXTERN of '%s': the database is not this kernel's",
				                 in->db->path, cf->name, k->name);
				status = 3;
			} else if (!routines_built(&c)) {
				diag_plain_error(d, "%s: routine '%s' is a CUDA routine, not built for %s (aotc tune leaves it out there): the database was not tuned for %s",
				                 in->db->path, cf->name, in->arch, in->arch);
				status = 3;
			}
			c.names[i] = arena_printf(&a, "%s", cf->name);
			c.any_ext = true;
			continue;
		}
		c.names[i] = ir_variant_name(&a, k, in->db->configs[c.vars[i]].values);
		if (strcmp(c.names[i], in->db->configs[c.vars[i]].name) != 0) {
			diag_plain_error(d, "%s: configuration '%s' does not match its values (%s): the database is not this kernel's",
			                 in->db->path, in->db->configs[c.vars[i]].name, c.names[i]);
			status = 3;
		}
	}
	if (!status && mkdir_p(in->out_dir) < 0) {
		diag_plain_error(d, "cannot create %s: %s", in->out_dir, strerror(errno));
		status = 3;
	}
	if (!status) {
		c.include = include_path(in);
		if (!include_text_ok(c.include)) {
			if (in->include_as)
				diag_plain_error(d, "--include-as '%s' cannot be written in an #include", in->include_as);
			else
				diag_plain_error(d, "the file name of %s cannot be written in an #include: give --include-as",
				                 in->m->file);
			status = 1;
		}
	}
	if (status)
		goto out;

	/* aotc.h beside the files, unless this copy (or aotc.h itself) is
	 * there already; a file of that name aotc did not write is refused
	 * before anything is written. */
	switch (emit_header_copy(in->out_dir, &files[NOWN], &lens[NOWN], d)) {
	case 1: nfiles = NFILES; break;
	case 0: break;
	default: status = 3; goto out;
	}
	const char *ext[NOWN] = {"c", "h", c.t->launcher_ext, "json"};
	for (int i = 0; i < NOWN; i++) {
		strbuf_init(&paths[i]);
		strbuf_printf(&paths[i], "%s.%s", c.base, ext[i]);
	}
	/* Twice: the set hash is the hash of the files made with 0 in its place. */
	outdir_file set[NOWN];
	for (int pass = 0; pass < 2 && !status; pass++) {
		for (int i = 0; i < NOWN; i++)
			free(files[i]);
		files[0] = dispatch_c(&c);
		files[1] = header(&c);
		files[2] = launcher(&c);
		files[3] = manifest(&c, d);
		if (!files[3]) {
			status = 1;
			break;
		}
		for (int i = 0; i < NOWN; i++)
			set[i] = (outdir_file){paths[i].data, files[i], strlen(files[i])};
		if (pass == 0)
			c.set = outdir_set_hash(set, NOWN);
	}
	/* aotc.h first and the manifest last: what says the set is complete
	 * appears when it is. */
	if (!status) {
		outdir_file order[NFILES];
		int norder = 0;
		if (nfiles == NFILES)
			order[norder++] = (outdir_file){"aotc.h", files[NOWN], lens[NOWN]};
		for (int i = 0; i < NOWN; i++)
			order[norder++] = set[i];
		if (outdir_write(in->out_dir, "emit", order, norder, d) < 0)
			status = 3;
	}
	for (int i = 0; i < NOWN; i++)
		strbuf_finish(&paths[i]);
out:
	for (int i = 0; i < NFILES; i++)
		free(files[i]);
	strbuf_finish(&src);
	free(c.include);
	arena_finish(&a);
	free(c.vars);
	free(c.emitted);
	return status;
}
