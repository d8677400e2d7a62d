#include "emit.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "arch.h"
#include "cexpr.h"
#include "heuristic.h"
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

void emit_arch_tag(const arch_info *arch, char *buf, size_t n) { arch_tag(arch, buf, n); }

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

/* The target of --arch. */
static const target *target_for(const arch_info *arch) { return emit_target_of(arch->kind); }

const char *emit_launcher_ext(const arch_info *arch) { return target_for(arch)->launcher_ext; }

typedef struct ctx {
	const emit_input *in;
	const target *t;
	const kernel *k;
	const dispatch *dp;
	char prefix[256];         /* aot_sgemm_cuda_sm90 (AOTC_TYPES: aot_sgemm_f32_cuda_sm90) */
	char family[256];         /* aot_sgemm_cuda_sm90: the C++ overloads' prefix */
	char base[300];           /* _aot_sgemm_cuda_sm90 */
	int nvars;                /* dp->nvariants: variants are numbered as the dispatch's */
	char *include;            /* the kernel source as the launcher's #include names it */
	char *source;             /* the kernel source as comments name it (source_name) */
	const char **names;       /* per variant: its name (the dispatch's, made from the IR) */
	const extern_fn **ext;    /* per variant: its AOTC_EXTERN routine, or NULL */
	const kernel **fn;        /* per variant: the function it is of: k, or an AOTC_ALTERNATIVE */
	bool any_ext;             /* some variant is a routine */
	bool any_alt;             /* some variant is an alternative's */
	bool any_launcher;        /* some variant is a host launcher's */
	bool any_kernel;          /* some variant is the kernel's */
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

/* The header's account of failed measurements (heuristics/failures.h):
 * how many variants failed somewhere and how many were dropped (aot_valid
 * says where each dispatched one may run); dispatched failures, were there
 * any. */
static void failures_comment(const ctx *c, strbuf *sb)
{
	const dfigures *f = &c->dp->fig;
	if (f->failing)
		strbuf_printf(sb, " * Measured failing: %d variant%s; %d dropped (no condition on the shape separates\n"
		              " * where it failed from where it ran), the others kept out of the shapes where they\n"
		              " * failed and of shapes like them (see aot_valid).\n",
		              f->failing, f->failing == 1 ? "" : "s", f->dropped);
	bool first = true;
	for (int v = 0; v < c->nvars; v++) {
		if (!c->dp->variants[v].failed)
			continue;
		strbuf_puts(sb, first ? " * Dispatched only where like the shapes it passed on: " : ", ");
		put_comment_text(sb, c->names[v]);
		first = false;
	}
	if (!first)
		strbuf_puts(sb, ".\n");
	if (f->train.failed || f->heldout.failed)
		strbuf_printf(sb, " * WRONG DISPATCH: %d training and %d held-out shapes get a variant measured failing there.\n",
		              f->train.failed, f->heldout.failed);
	if (f->eval.n && f->eval.failed)
		strbuf_printf(sb, " * WRONG DISPATCH: %d held-out shapes of the eval database get a variant measured failing there.\n",
		              f->eval.failed);
}

static void provenance(out *o, const ctx *c, const char *what)
{
	const emit_input *in = c->in;
	const dfigures *f = &c->dp->fig;
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
	put_comment_text(sb, f->hardware ? f->hardware : "?");
	strbuf_printf(sb, ": %d shapes x %d variants measured; %d variant%s dispatched.\n",
	              f->shapes, f->variants, c->nvars, c->nvars == 1 ? "" : "s");
	if (f->distilled)
		strbuf_printf(sb, " * Tree learnt from a cost model's predictions on %d shapes and the measured ones.\n",
		              f->dense_shapes);
	strbuf_printf(sb, " * Slowdown against the per-shape best: training shapes geomean %.3f, worst %.3f;\n"
	              " * held-out shapes (%d-fold cross-validation%s) geomean %.3f, worst %.3f.\n",
	              f->train.geomean, f->train.worst, f->folds,
	              f->fold_by == H_FOLDS_VALUE ? ", each fold one value or range of one shape argument"
	              : f->fold_by == H_FOLDS_SHAPE ? ", each fold one shape" : "",
	              f->heldout.geomean, f->heldout.worst);
	if (f->weighted)
		strbuf_printf(sb, " * Weighted by the shapes' recorded calls (AOTC_RECORD), what the tree minimises:\n"
		              " * training geomean %.3f, held-out geomean %.3f.\n",
		              f->train_w, f->heldout_w);
	if (f->eval.n)
		strbuf_printf(sb, " * Measured on %d held-out shapes (aotc eval database): geomean %.3f, worst %.3f.\n",
		              f->eval.n, f->eval.geomean, f->eval.worst);
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
	strbuf_printf(sb, " --arch %s --db DIR", in->arch->name);
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


/* ---- The dispatch file --------------------------------------------------------- */

/* What the dispatch file's functions share while it is written. */
typedef struct dctx {
	const ctx *c;
	bool helpers[CH_COUNT];
	ival *tun;                /* each tunable's range over the kernel's variants */
	ival *sel;                /* each parameter's range where select() has checked it fits */
	ival *any;                /* ... and where nothing is checked (launch_dims' arguments) */
	bool need_shape;          /* select() has a fits check or per-shape values (aot_shape) */
	bool need_values;         /* per-variant values (aot_values) */
	/* The function whose per-variant code (aot_values, aot_dims, aot_valid)
	 * is being written: the kernel, or with alternatives each in turn,
	 * into functions named with sfx ("_rowsum_blocked"). */
	const kernel *f;
	const char *sfx;
} dctx;

/* Whether variant v is one of x->f's (not a routine, not another function's). */
static bool of_f(const dctx *x, int v) { return !x->c->ext[v] && x->c->fn[v] == x->f; }

/* Each tunable's range over the variants of x->f. */
static void tunable_ranges(dctx *x)
{
	const ctx *c = x->c;
	for (int t = 0; t < x->f->ntunables; t++) {
		x->tun[t] = (ival){INT64_MAX, INT64_MIN};
		for (int v = 0; v < c->nvars; v++)
			if (of_f(x, v)) {
				int64_t tv = c->dp->variants[v].values[t];
				x->tun[t].lo = tv < x->tun[t].lo ? tv : x->tun[t].lo;
				x->tun[t].hi = tv > x->tun[t].hi ? tv : x->tun[t].hi;
			}
		if (x->tun[t].lo > x->tun[t].hi)
			x->tun[t] = (ival){0, 0};
	}
}

static ival type_range(const param *p)
{
	int64_t lo, hi;
	if (p->launcher_only || !dtype_range(p->dtype, &lo, &hi))
		return (ival){INT64_MIN, INT64_MAX};
	return (ival){lo, hi};
}

/* "file:line: " of an annotation, as comments name the source. */
static void put_loc(strbuf *sb, const ctx *c, aotc_loc loc)
{
	if (loc.file && loc.line > 0) {
		put_comment_text(sb, c->source);
		strbuf_printf(sb, ":%d: ", loc.line);
	}
}

/* A comment naming where an annotation is: "file:line: AOTC_KIND(text)". */
static void put_annotation(strbuf *sb, const ctx *c, const char *kind, const aexpr *a, const char *pre)
{
	strbuf_puts(sb, "/* ");
	put_loc(sb, c, a->loc);
	strbuf_printf(sb, "AOTC_%s(%s", kind, pre ? pre : "");
	put_comment_text(sb, a->text);
	strbuf_puts(sb, ") */");
}

static cx_env env_of(dctx *x, const int64_t *tv, const ival *par, bool *tun_used)
{
	return (cx_env){.k = x->f, .tv = tv, .tun = x->tun, .par = par, .tun_used = tun_used,
	                .helpers = x->helpers, .err = "aot_e"};
}

/* ", int64_t rows, int64_t cols" (typed) or ", rows, cols": the integer
 * parameters but for the per-variant values (shapes_only: the shape
 * arguments alone). */
static void args(strbuf *sb, const kernel *k, bool shapes_only, bool typed)
{
	for (int i = 0; i < k->nparams; i++) {
		const param *p = &k->params[i];
		if (!ir_param_is_integer(p) || (shapes_only && p->shape < 0) || ir_param_per_variant(k, i))
			continue;
		strbuf_printf(sb, ", %s%s", typed ? "int64_t " : "", p->name);
	}
}

/* Whether AOTC_VALUE i is an integer computed from the shape arguments
 * alone (select() computes it). */
static bool value_per_shape(const kernel *k, int i)
{
	const value *v = &k->values[i];
	return !v->is_float && ir_param_is_integer(&k->params[v->param]) && !ir_param_per_variant(k, v->param);
}

/* "if (x < INT32_MIN || x > INT32_MAX)" parts that can be true for x in r,
 * for parameter p's type; empty when x always fits. */
static void fits_cond(strbuf *sb, const param *p, const char *x, ival r)
{
	int64_t lo, hi;
	if (p->launcher_only || !ir_param_is_integer(p) || !dtype_range(p->dtype, &lo, &hi))
		return;
	static const char *const min_name[] = {[DT_I8] = "INT8_MIN", [DT_I16] = "INT16_MIN", [DT_I32] = "INT32_MIN"};
	static const char *const max_name[] = {[DT_I8] = "INT8_MAX", [DT_I16] = "INT16_MAX", [DT_I32] = "INT32_MAX",
	                                       [DT_U8] = "UINT8_MAX", [DT_U16] = "UINT16_MAX", [DT_U32] = "UINT32_MAX"};
	if (r.lo < lo) {
		if (lo == 0)
			strbuf_printf(sb, "%s%s < 0", sb->len ? " || " : "", x);
		else if ((size_t)p->dtype < sizeof min_name / sizeof *min_name && min_name[p->dtype])
			strbuf_printf(sb, "%s%s < %s", sb->len ? " || " : "", x, min_name[p->dtype]);
		else
			strbuf_printf(sb, "%s%s < %lld", sb->len ? " || " : "", x, (long long)lo);
	}
	if (r.hi > hi) {
		if ((size_t)p->dtype < sizeof max_name / sizeof *max_name && max_name[p->dtype])
			strbuf_printf(sb, "%s%s > %s", sb->len ? " || " : "", x, max_name[p->dtype]);
		else
			strbuf_printf(sb, "%s%s > %lld", sb->len ? " || " : "", x, (long long)hi);
	}
}

static void unused_args(out *o, const kernel *k, bool shapes_only, const char *body);

/* aot_shape(shape arguments, int64_t *value...): 0 when the kernel can
 * take the shape: the arguments fit their types and the AOTC_VALUEs over
 * them evaluate and fit (as the tuner: else no variant is valid). */
static void shape_function(out *o, dctx *x)
{
	const kernel *k = x->c->k;
	strbuf *sb = &o->sb;
	strbuf_puts(sb, "/* 0 when the kernel takes the shape: its arguments fit their types");
	int nvalues = 0;
	for (int i = 0; i < k->nvalues; i++)
		nvalues += value_per_shape(k, i);
	strbuf_puts(sb, nvalues ? "\n * and its AOTC_VALUEs evaluate and fit (else no variant is valid) */\n"
	                           : " (else no\n * variant is valid) */\n");
	strbuf_puts(sb, "static int aot_shape(");
	bool first = true;
	for (int i = 0; i < k->nparams; i++) {
		if (k->params[i].shape >= 0) {
			strbuf_printf(sb, "%sint64_t %s", first ? "" : ", ", k->params[i].name);
			first = false;
		}
	}
	for (int i = 0; i < k->nvalues; i++)
		if (value_per_shape(k, i))
			strbuf_printf(sb, ", int64_t *aot_%s", k->params[k->values[i].param].name);
	strbuf_puts(sb, ")\n{\n");
	size_t start = sb->len;
	o->indent = 1;
	strbuf cond;
	strbuf_init(&cond);
	for (int i = 0; i < k->nparams; i++)
		if (k->params[i].shape >= 0)
			fits_cond(&cond, &k->params[i], k->params[i].name, x->any[i]);
	if (cond.len) {
		out_line(o, "if (%s)", cond.data);
		out_line(o, "\treturn 1;");
	}
	bool err = false;
	strbuf body;
	strbuf_init(&body);
	for (int i = 0; i < k->nvalues; i++) {
		if (!value_per_shape(k, i))
			continue;
		const param *p = &k->params[k->values[i].param];
		cx_env env = env_of(x, NULL, x->sel, NULL);
		bool fail;
		body.len = 0;
		body.data[0] = 0;
		ival r = cx_expr(&body, k->values[i].iexpr.e, &env, &fail);
		if (fail && !err) {
			out_line(o, "int aot_e = 0;");
			err = true;
		}
		strbuf line;
		strbuf_init(&line);
		put_annotation(&line, x->c, "VALUE", &k->values[i].iexpr, NULL);
		out_line(o, "%s", line.data);
		strbuf_finish(&line);
		out_line(o, "const int64_t %s = %s;", p->name, body.data);
		cond.len = 0;
		cond.data[0] = 0;
		if (fail)
			strbuf_puts(&cond, "aot_e");
		fits_cond(&cond, p, p->name, r);
		if (cond.len) {
			out_line(o, "if (%s)", cond.data);
			out_line(o, "\treturn 1;");
		}
		out_line(o, "*aot_%s = %s;", p->name, p->name);
	}
	strbuf_finish(&body);
	strbuf_finish(&cond);
	char *text = xstrdup(sb->data + start);
	unused_args(o, k, true, text);
	free(text);
	out_line(o, "return 0;");
	o->indent = 0;
	out_raw(o, "}\n\n");
}

/* "const int64_t BLOCK = aot_params[aot_v][0], ...;" for the tunables used,
 * or "(void)aot_v;" where neither they nor body read it. */
static void tunable_locals(out *o, const kernel *k, const bool *used, const char *body)
{
	bool any = false;
	for (int i = 0; i < k->ntunables; i++)
		any |= used[i];
	if (!any && !strstr(body, "aot_v"))
		out_line(o, "(void)aot_v;");
	strbuf sb;
	strbuf_init(&sb);
	for (int i = 0; i < k->ntunables; i++)
		if (used[i])
			strbuf_printf(&sb, "%s%s = aot_params[aot_v][%d]", sb.len ? ", " : "const int64_t ", k->tunables[i].name, i);
	if (sb.len)
		out_line(o, "%s;", sb.data);
	strbuf_finish(&sb);
}

/* (void) for each of the arguments the body does not read. */
static void unused_args(out *o, const kernel *k, bool shapes_only, const char *body)
{
	for (int i = 0; i < k->nparams; i++) {
		const param *p = &k->params[i];
		if (!ir_param_is_integer(p) || (shapes_only && p->shape < 0) || ir_param_per_variant(k, i))
			continue;
		/* a whole-word occurrence */
		size_t n = strlen(p->name);
		bool seen = false;
		for (const char *s = strstr(body, p->name); s && !seen; s = strstr(s + 1, p->name))
			seen = (s == body || !(isalnum((unsigned char)s[-1]) || s[-1] == '_')) &&
			       !(isalnum((unsigned char)s[n]) || s[n] == '_');
		if (!seen)
			out_line(o, "(void)%s;", p->name);
	}
}

/* aot_values(aot_v, arguments, int64_t *NAME...): the per-variant
 * AOTC_VALUEs of kernel variant aot_v, 1 when one cannot be evaluated or
 * does not fit its parameter. */
static void values_function(out *o, dctx *x)
{
	const ctx *c = x->c;
	const kernel *k = x->f;
	out b = {.indent = 1};
	strbuf_init(&b.sb);
	bool used[k->ntunables + 1], err = false;
	memset(used, 0, sizeof used);
	ival par[k->nparams + 1];
	memcpy(par, x->any, (size_t)k->nparams * sizeof *par);
	strbuf text, cond;
	strbuf_init(&text);
	strbuf_init(&cond);
	for (int i = 0; i < k->nparams; i++) {
		if (!ir_param_per_variant(k, i))
			continue;
		const value *val = &k->values[k->params[i].value];
		cx_env env = env_of(x, NULL, par, used);
		bool fail;
		text.len = cond.len = 0;
		text.data[0] = cond.data[0] = 0;
		ival r = cx_expr(&text, val->iexpr.e, &env, &fail);
		err |= fail;
		strbuf_puts(&b.sb, "\t");
		put_annotation(&b.sb, c, "VALUE", &val->iexpr, NULL);
		strbuf_putc(&b.sb, '\n');
		out_line(&b, "*aot_%s = %s;", k->params[i].name, text.data);
		if (fail)
			strbuf_puts(&cond, "aot_e");
		char at[300];
		snprintf(at, sizeof at, "*aot_%s", k->params[i].name);
		fits_cond(&cond, &k->params[i], at, r);
		if (cond.len) {
			out_line(&b, "if (%s)", cond.data);
			out_line(&b, "\treturn 1;");
		}
		par[i] = type_range(&k->params[i]);
	}
	strbuf_puts(&o->sb, "/* The AOTC_VALUEs over tunables of variant aot_v: 0, or 1 when one cannot be\n"
	                    " * evaluated or does not fit its parameter. */\n");
	strbuf_printf(&o->sb, "static int aot_values%s(int aot_v", x->sfx);
	args(&o->sb, k, false, true);
	for (int i = 0; i < k->nparams; i++)
		if (ir_param_per_variant(k, i))
			strbuf_printf(&o->sb, ", int64_t *aot_%s", k->params[i].name);
	strbuf_puts(&o->sb, ")\n{\n");
	o->indent = 1;
	tunable_locals(o, k, used, b.sb.data);
	if (err)
		out_line(o, "int aot_e = 0;");
	unused_args(o, k, false, b.sb.data);
	out_raw(o, b.sb.data);
	out_line(o, "return 0;");
	o->indent = 0;
	out_raw(o, "}\n\n");
	strbuf_finish(&b.sb);
	strbuf_finish(&text);
	strbuf_finish(&cond);
}

/* "aot_grid[0] = (uint32_t)aot_gx;" for dimension d (0..6) of value val */
static void put_dim(out *b, int d, const char *val)
{
	const char *cast = isdigit((unsigned char)val[0]) ? "" : "(uint32_t)";
	if (d == 6)
		out_line(b, "*aot_smem = %s%s;", cast, val);
	else
		out_line(b, "aot_%s[%d] = %s%s;", d < 3 ? "grid" : "block", d % 3, cast, val);
}

/* aot_dims(aot_v, arguments, grid, block, smem): the launch of kernel
 * variant aot_v, 1 when it cannot be evaluated or exceeds what any CUDA
 * device launches. Checks only what can fail over the arguments' and the
 * table's ranges. */
static void dims_function(out *o, dctx *x)
{
	const ctx *c = x->c;
	const kernel *k = x->f;
	out b = {.indent = 1};
	strbuf_init(&b.sb);
	bool used[k->ntunables + 1], err = false;
	memset(used, 0, sizeof used);
	ival par[k->nparams + 1];
	memcpy(par, x->any, (size_t)k->nparams * sizeof *par);
	if (x->need_values) {
		strbuf decl, call;
		strbuf_init(&decl);
		strbuf_init(&call);
		for (int i = 0; i < k->nparams; i++)
			if (ir_param_per_variant(k, i)) {
				strbuf_printf(&decl, "%s%s", decl.len ? ", " : "int64_t ", k->params[i].name);
				strbuf_printf(&call, ", &%s", k->params[i].name);
				par[i] = type_range(&k->params[i]);
			}
		out_line(&b, "%s;", decl.data);
		strbuf_printf(&b.sb, "\tif (aot_values%s(aot_v", x->sfx);
		args(&b.sb, k, false, false);
		strbuf_printf(&b.sb, "%s))\n\t\treturn 1;\n", call.data);
		strbuf_finish(&decl);
		strbuf_finish(&call);
	}
	static const char *const names[7] = {"aot_gx", "aot_gy", "aot_gz", "aot_bx", "aot_by", "aot_bz", "aot_smem_bytes"};
	static const char *const kinds[3] = {"GRID", "BLOCK", "SMEM"};
	static const int64_t lim_lo[7] = {1, 1, 1, 1, 1, 1, 0};
	static const int64_t lim_hi[7] = {INT64_C(2147483647), 65535, 65535, 1024, 1024, 64, INT64_C(4294967295)};
	const launch *ls[2] = {&k->grid, &k->block};
	strbuf text, cond;
	strbuf_init(&text);
	strbuf_init(&cond);
	char val[7][320];
	ival rng[7];
	for (int d = 0; d < 7; d++) {
		const aexpr *a = d < 6 ? (d % 3 < ls[d / 3]->ndims ? &ls[d / 3]->dims[d % 3] : NULL) : (k->smem.e ? &k->smem : NULL);
		if (!a) {
			snprintf(val[d], sizeof val[d], "%d", d < 6 ? 1 : 0);
			rng[d] = (ival){d < 6, d < 6};
			put_dim(&b, d, val[d]);
			continue;
		}
		/* a dimension that folds to a number reads no tunable */
		bool before[k->ntunables + 1];
		memcpy(before, used, sizeof before);
		cx_env env = env_of(x, NULL, par, used);
		bool fail;
		text.len = cond.len = 0;
		text.data[0] = cond.data[0] = 0;
		ival r = cx_expr(&text, a->e, &env, &fail);
		err |= fail;
		if (d == 0 || d == 3 || d == 6) {
			/* one comment per annotation, with all its dimensions */
			strbuf_puts(&b.sb, "\t/* ");
			put_loc(&b.sb, c, a->loc);
			strbuf_printf(&b.sb, "AOTC_%s(", kinds[d / 3]);
			for (int i = 0; i < (d < 6 ? ls[d / 3]->ndims : 1); i++) {
				strbuf_puts(&b.sb, i ? ", " : "");
				put_comment_text(&b.sb, d < 6 ? ls[d / 3]->dims[i].text : k->smem.text);
			}
			strbuf_puts(&b.sb, ") */\n");
		}
		if (fail)
			strbuf_puts(&cond, "aot_e");
		if (r.lo < lim_lo[d])
			strbuf_printf(&cond, "%s%s < %lld", cond.len ? " || " : "", names[d], (long long)lim_lo[d]);
		if (r.hi > lim_hi[d])
			strbuf_printf(&cond, "%s%s > %lld", cond.len ? " || " : "", names[d], (long long)lim_hi[d]);
		bool literal = r.lo == r.hi && !fail;
		if (literal && !cond.len) {
			snprintf(val[d], sizeof val[d], "%lld", (long long)r.lo);
			memcpy(used, before, sizeof before);
		} else if (!cond.len && strlen(text.data) < 200 && strspn(text.data, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_0123456789") == strlen(text.data)) {
			snprintf(val[d], sizeof val[d], "%s", text.data); /* a name: no local */
		} else {
			out_line(&b, "const int64_t %s = %s;", names[d], text.data);
			snprintf(val[d], sizeof val[d], "%s", names[d]);
			if (cond.len) {
				out_line(&b, "if (%s)", cond.data);
				out_line(&b, "\treturn 1;");
			}
		}
		rng[d] = (ival){r.lo < lim_lo[d] ? lim_lo[d] : r.lo, r.hi > lim_hi[d] ? lim_hi[d] : r.hi};
		put_dim(&b, d, val[d]);
	}
	/* at most 1024 threads: each dimension is checked, so the product fits */
	if (rng[3].hi * rng[4].hi * rng[5].hi > 1024) {
		out_line(&b, "if (%s * %s * %s > 1024) /* threads per block */", val[3], val[4], val[5]);
		out_line(&b, "\treturn 1;");
	}
	strbuf_finish(&text);
	strbuf_finish(&cond);

	strbuf_printf(&o->sb, "/* The launch of variant aot_v: 0, or 1 when it cannot be evaluated or exceeds\n"
	                      " * what any CUDA device launches: grid.x < 2^31, grid.y and grid.z <= 65535,\n"
	                      " * block <= 1024 x 1024 x 64, at most 1024 threads%s. */\n", c->t->limits_note);
	strbuf_printf(&o->sb, "static int aot_dims%s(int aot_v", x->sfx);
	args(&o->sb, k, false, true);
	strbuf_puts(&o->sb, ", uint32_t aot_grid[3], uint32_t aot_block[3], uint32_t *aot_smem)\n{\n");
	o->indent = 1;
	if (c->any_ext && !x->sfx[0]) { /* with alternatives, aot_dims says so */
		strbuf ifs;
		strbuf_init(&ifs);
		for (int v = 0; v < c->nvars; v++)
			if (c->ext[v])
				strbuf_printf(&ifs, "%saot_v == %d", ifs.len ? " || " : "", v);
		out_line(o, "if (%s) /* a library routine: no launch of its own */", ifs.data);
		out_line(o, "\treturn 1;");
		strbuf_finish(&ifs);
	}
	tunable_locals(o, k, used, b.sb.data);
	if (err)
		out_line(o, "int aot_e = 0;");
	unused_args(o, k, false, b.sb.data);
	out_raw(o, b.sb.data);
	out_line(o, "return 0;");
	o->indent = 0;
	out_raw(o, "}\n\n");
	strbuf_finish(&b.sb);
}

/* "x % 4 != 0": a failure term that does not hold (heuristics/dispatch.h). */
static void term_fails(strbuf *sb, const kernel *k, const dterm *t)
{
	const char *name = "?";
	for (int i = 0, n = 0; i < k->nparams; i++)
		if (k->params[i].shape >= 0 && n++ == t->arg)
			name = k->params[i].name;
	char b[32];
	if (t->bound == INT64_MIN)
		snprintf(b, sizeof b, "INT64_MIN");
	else
		snprintf(b, sizeof b, "%lld", (long long)t->bound);
	switch (t->kind) {
	case DT_MULTIPLE:
		if (t->bound == 0)
			strbuf_puts(sb, "1");
		else if (t->bound == 1 || t->bound == -1)
			strbuf_puts(sb, "0");
		else
			strbuf_printf(sb, "%s %% %s != 0", name, b);
		return;
	case DT_AT_MOST: strbuf_printf(sb, "%s > %s", name, b); return;
	case DT_AT_LEAST: strbuf_printf(sb, "%s < %s", name, b); return;
	}
}

/* Whether e divides by what a tunable decides: a table-driven check would
 * divide at run time where each variant's literal lets the compiler
 * multiply, shift or mask instead. */
static bool divides_by_tunable(const expr *e)
{
	if (!e)
		return false;
	if (((e->kind == EXPR_BINARY && (e->op == OP_DIV || e->op == OP_MOD)) ||
	     (e->kind == EXPR_CALL && (e->func == FN_CDIV || e->func == FN_ALIGN))) &&
	    cx_uses_tunables(e->b))
		return true;
	return divides_by_tunable(e->a) || divides_by_tunable(e->b) || divides_by_tunable(e->c);
}

/* VALID_IF i when it reads "a % T == 0" with T a tunable that is a power of
 * two in every kernel variant: the check as a mask, table-driven (no
 * division, and no case per variant). False, with nothing written, for any
 * other VALID_IF. */
static bool valid_if_mask(out *b, dctx *x, int i, bool *used)
{
	const ctx *c = x->c;
	const kernel *k = x->f;
	const aexpr *a = &k->valid_ifs[i];
	const expr *e = a->e;
	if (e->kind != EXPR_BINARY || e->op != OP_EQ)
		return false;
	const expr *m = e->a, *z = e->b;
	if (m->kind == EXPR_INT)
		m = e->b, z = e->a;
	if (z->kind != EXPR_INT || z->value != 0 || m->kind != EXPR_BINARY || m->op != OP_MOD ||
	    m->b->kind != EXPR_NAME || m->b->name_kind != NAME_TUNABLE)
		return false;
	int t = m->b->index;
	for (int v = 0; v < c->nvars; v++) {
		int64_t d = of_f(x, v) ? c->dp->variants[v].values[t] : 1;
		if (of_f(x, v) && (d < 1 || (d & (d - 1)) != 0))
			return false;
	}
	cx_env env = env_of(x, NULL, x->sel, NULL);
	bool fail;
	cx_range(m->a, &env, &fail);
	if (fail)
		return false;
	strbuf text;
	strbuf_init(&text);
	env = env_of(x, NULL, x->sel, used);
	cx_expr(&text, m->a, &env, &fail);
	used[t] = true;
	strbuf_puts(&b->sb, "\t/* ");
	put_loc(&b->sb, c, a->loc);
	strbuf_puts(&b->sb, "AOTC_VALID_IF(");
	put_comment_text(&b->sb, a->text);
	strbuf_printf(&b->sb, "): every %s is a power of two */\n", k->tunables[t].name);
	bool plain = strspn(text.data, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_0123456789") == text.len;
	out_line(b, plain ? "if ((%s & (%s - 1)) != 0)" : "if (((%s) & (%s - 1)) != 0)", text.data, k->tunables[t].name);
	out_line(b, "\treturn 0;");
	strbuf_finish(&text);
	return true;
}

/* VALID_IF i of a check that divides by a tunable, per kernel variant with
 * its tunables as literals: one case for the variants whose check reads
 * alike, none for those where it always holds. */
static void valid_if_cases(out *b, dctx *x, int i, bool *err)
{
	const ctx *c = x->c;
	const kernel *k = x->f;
	const aexpr *a = &k->valid_ifs[i];
	char **text = xcalloc((size_t)c->nvars + 1, sizeof *text);
	int n = 0;
	for (int v = 0; v < c->nvars; v++) {
		if (!of_f(x, v))
			continue;
		cx_env env = env_of(x, c->dp->variants[v].values, x->sel, NULL);
		bool fail;
		ival r = cx_range(a->e, &env, &fail);
		if (!fail && (r.lo > 0 || r.hi < 0))
			continue; /* always holds */
		strbuf t;
		strbuf_init(&t);
		cx_negated(&t, a->e, &env, &fail);
		if (fail)
			strbuf_puts(&t, " || aot_e");
		*err |= fail;
		text[v] = t.data;
		n++;
	}
	strbuf_puts(&b->sb, "\t/* ");
	put_loc(&b->sb, c, a->loc);
	strbuf_puts(&b->sb, "AOTC_VALID_IF(");
	put_comment_text(&b->sb, a->text);
	strbuf_puts(&b->sb, n ? "), with each variant's values */\n" : "): holds for every variant */\n");
	if (n) {
		out_line(b, "switch (aot_v) {");
		for (int v = 0; v < c->nvars; v++) {
			if (!text[v])
				continue;
			strbuf cases;
			strbuf_init(&cases);
			for (int w = v; w < c->nvars; w++)
				if (text[w] && w != v && !strcmp(text[w], text[v])) {
					strbuf_printf(&cases, " case %d:", w);
					free(text[w]);
					text[w] = NULL;
				}
			out_line(b, "case %d:%s", v, cases.data ? cases.data : "");
			out_line(b, "\tif (%s)", text[v]);
			out_line(b, "\t\treturn 0;");
			out_line(b, "\tbreak;");
			strbuf_finish(&cases);
			free(text[v]);
			text[v] = NULL;
		}
		out_line(b, "}");
	}
	free(text);
}

/* The launch limits of aot_valid without computing the launch, dimension
 * by dimension over select()'s ranges: a check only where a dimension can
 * leave its limits, and cdiv(a, b) or a / b (b >= 1) below 1 checked as
 * a < 1 or a < b, with no division. False, with nothing written, where
 * some dimension needs the launch itself (aot_valid then asks aot_dims). */
static bool launch_checks(out *b, dctx *x, bool *used)
{
	const ctx *c = x->c;
	const kernel *k = x->f;
	if (x->need_values)
		return false;
	static const char *const kinds[3] = {"GRID", "BLOCK", "SMEM"};
	static const int64_t lim_lo[7] = {1, 1, 1, 1, 1, 1, 0};
	static const int64_t lim_hi[7] = {INT64_C(2147483647), 65535, 65535, 1024, 1024, 64, INT64_C(4294967295)};
	const launch *ls[2] = {&k->grid, &k->block};
	out w = {.indent = 1};
	strbuf_init(&w.sb);
	int64_t block_hi[3] = {1, 1, 1};
	bool ok = true;
	/* the tunables the checks read: the caller's only if they are written */
	bool mine[k->ntunables + 1];
	memset(mine, 0, sizeof mine);
	for (int d = 0; d < 7 && ok; d++) {
		const aexpr *a = d < 6 ? (d % 3 < ls[d / 3]->ndims ? &ls[d / 3]->dims[d % 3] : NULL) : (k->smem.e ? &k->smem : NULL);
		if (!a)
			continue;
		cx_env env = env_of(x, NULL, x->sel, NULL);
		bool fail;
		ival r = cx_range(a->e, &env, &fail);
		if (d >= 3 && d < 6)
			block_hi[d - 3] = r.hi;
		if (fail || r.hi > lim_hi[d]) {
			ok = false;
			break;
		}
		if (r.lo >= lim_lo[d])
			continue;
		const expr *e = a->e;
		bool quotient = lim_lo[d] == 1 && ((e->kind == EXPR_CALL && e->func == FN_CDIV) ||
		                                   (e->kind == EXPR_BINARY && e->op == OP_DIV));
		bool fa = true, fb = true;
		ival rb = {0, 0};
		if (quotient) {
			cx_range(e->a, &env, &fa);
			rb = cx_range(e->b, &env, &fb);
		}
		if (!quotient || fa || fb || rb.lo < 1) {
			ok = false;
			break;
		}
		strbuf ta, tb;
		strbuf_init(&ta);
		strbuf_init(&tb);
		env = env_of(x, NULL, x->sel, mine);
		cx_expr(&ta, e->a, &env, &fa);
		if (e->kind == EXPR_BINARY) /* a < b; cdiv(a, b) < 1 reads a alone */
			cx_expr(&tb, e->b, &env, &fb);
		strbuf_puts(&w.sb, "\t/* ");
		put_loc(&w.sb, c, a->loc);
		strbuf_printf(&w.sb, "AOTC_%s: ", kinds[d / 3]);
		put_comment_text(&w.sb, a->text);
		strbuf_puts(&w.sb, " >= 1 */\n");
		if (e->kind == EXPR_CALL)
			out_line(&w, "if (%s < 1)", ta.data);
		else
			out_line(&w, "if (%s < %s)", ta.data, tb.data);
		out_line(&w, "\treturn 0;");
		strbuf_finish(&ta);
		strbuf_finish(&tb);
	}
	if (ok && block_hi[0] * block_hi[1] * block_hi[2] > 1024)
		ok = false; /* each is at most 1024, 1024, 64: no overflow */
	if (ok) {
		out_raw(b, w.sb.data ? w.sb.data : "");
		for (int i = 0; i < k->ntunables; i++)
			used[i] |= mine[i];
	}
	strbuf_finish(&w.sb);
	return ok;
}

/* The part of aot_valid by variant: where one was measured failing, the
 * learnt terms that must hold; a routine is valid wherever they do. */
static void valid_terms(out *b, const dctx *x)
{
	const ctx *c = x->c;
	const dispatch *dp = c->dp;
	bool any_case = false;
	for (int v = 0; v < c->nvars; v++) {
		const dvariant *dv = &dp->variants[v];
		if (!dv->nterms && !c->ext[v] && !dv->failed)
			continue;
		if (!any_case)
			out_line(b, "switch (aot_v) {");
		any_case = true;
		strbuf_printf(&b->sb, "\tcase %d: /* ", v);
		put_comment_text(&b->sb, c->names[v]);
		if (dv->failed) {
			strbuf_puts(&b->sb, ": measured ");
			put_comment_text(&b->sb, dv->failed);
		}
		strbuf_puts(&b->sb, " */\n");
		b->indent = 2;
		for (int i = 0; i < dv->nterms; i++) {
			strbuf t;
			strbuf_init(&t);
			term_fails(&t, c->k, &dv->terms[i]);
			out_line(b, "if (%s)", t.data);
			out_line(b, "\treturn 0;");
			strbuf_finish(&t);
		}
		out_line(b, c->ext[v] ? "return 1; /* a library routine */" : "break;");
		b->indent = 1;
	}
	if (any_case)
		out_line(b, "}");
}

/* The part of aot_valid by function, for a variant of x->f: its VALID_IFs
 * hold and, for a kernel, its launch fits. *launch_vars: the body asks
 * aot_dims (and needs aot_g, aot_b, aot_s). */
static void valid_body(out *b, dctx *x, bool has_variants, bool *used, bool *err, bool *launch_vars)
{
	const ctx *c = x->c;
	const kernel *k = x->f;
	*launch_vars = false;
	if (!has_variants) {
		out_line(b, "return 0;");
		return;
	}
	strbuf text;
	strbuf_init(&text);
	for (int i = 0; i < k->nvalid_ifs; i++) {
		if (divides_by_tunable(k->valid_ifs[i].e)) {
			if (!valid_if_mask(b, x, i, used))
				valid_if_cases(b, x, i, err);
			continue;
		}
		cx_env env = env_of(x, NULL, x->sel, used);
		bool fail;
		text.len = 0;
		text.data[0] = 0;
		cx_negated(&text, k->valid_ifs[i].e, &env, &fail);
		*err |= fail;
		strbuf_puts(&b->sb, "\t");
		put_annotation(&b->sb, c, "VALID_IF", &k->valid_ifs[i], NULL);
		strbuf_putc(&b->sb, '\n');
		if (fail)
			out_line(b, "if (%s || aot_e)", text.data);
		else
			out_line(b, "if (%s)", text.data);
		out_line(b, "\treturn 0;");
	}
	strbuf_finish(&text);
	if (c->t->device && !k->host_launcher && !launch_checks(b, x, used)) {
		strbuf_printf(&b->sb, "\treturn !aot_dims%s(aot_v", x->sfx);
		args(&b->sb, k, false, false);
		strbuf_puts(&b->sb, ", aot_g, aot_b, &aot_s);\n");
		*launch_vars = true;
	} else {
		out_line(b, "return 1;");
	}
}

/* Writes "static int NAME(int aot_v, arguments) { body }", declaring what
 * the body reads: the tunables of tk (NULL: none), aot_g/aot_b/aot_s, aot_e. */
static void valid_wrap(out *o, dctx *x, const char *name, const out *b, const kernel *tk, const bool *used,
                       bool err, bool launch_vars)
{
	const kernel *k = x->c->k; /* every function takes its parameters */
	strbuf_printf(&o->sb, "static int %s(int aot_v", name);
	args(&o->sb, k, false, true);
	strbuf_puts(&o->sb, ")\n{\n");
	o->indent = 1;
	if (tk)
		tunable_locals(o, tk, used, b->sb.data);
	else if (!strstr(b->sb.data, "aot_v"))
		out_line(o, "(void)aot_v;");
	if (launch_vars)
		out_line(o, "uint32_t aot_g[3], aot_b[3], aot_s;");
	if (err)
		out_line(o, "int aot_e = 0;");
	unused_args(o, k, false, b->sb.data);
	out_raw(o, b->sb.data);
	o->indent = 0;
	out_raw(o, "}\n\n");
}

/* aot_valid(aot_v, arguments): whether variant aot_v may run on the shape:
 * where it was measured failing, its learnt terms hold; a kernel
 * variant's VALID_IFs hold and its launch fits. */
static void valid_function(out *o, dctx *x)
{
	const kernel *k = x->f;
	out b = {.indent = 1};
	strbuf_init(&b.sb);
	valid_terms(&b, x);
	bool used[k->ntunables + 1], err = false, launch_vars;
	memset(used, 0, sizeof used);
	valid_body(&b, x, x->c->any_kernel, used, &err, &launch_vars);
	strbuf_puts(&o->sb, "/* Whether variant aot_v may run on the shape (select() asks it of each variant\n"
	                    " * of the leaf's order in turn). */\n");
	valid_wrap(o, x, "aot_valid", &b, k, used, err, launch_vars);
	strbuf_finish(&b.sb);
}

/* With alternatives: aot_valid_NAME for the variants of function x->f. */
static void valid_function_of(out *o, dctx *x)
{
	const kernel *k = x->f;
	out b = {.indent = 1};
	strbuf_init(&b.sb);
	bool used[k->ntunables + 1], err = false, launch_vars;
	memset(used, 0, sizeof used);
	valid_body(&b, x, true, used, &err, &launch_vars);
	strbuf_printf(&o->sb, "/* Whether variant aot_v, one of %s%s's, may run on the shape. */\n",
	              k->host_launcher ? "host launcher " : "", k->name);
	char name[300];
	snprintf(name, sizeof name, "aot_valid%s", x->sfx);
	valid_wrap(o, x, name, &b, k, used, err, launch_vars);
	strbuf_finish(&b.sb);
}

/* Appends "aot_shape(rows, cols, &value...)" to call, after declaring the
 * per-shape AOTC_VALUEs it fills in ("int64_t value;"). */
static void shape_call(out *o, const kernel *k, strbuf *call)
{
	strbuf decl;
	strbuf_init(&decl);
	strbuf_puts(call, "aot_shape(");
	bool first = true;
	for (int i = 0; i < k->nparams; i++)
		if (k->params[i].shape >= 0) {
			strbuf_printf(call, "%s%s", first ? "" : ", ", k->params[i].name);
			first = false;
		}
	for (int i = 0; i < k->nvalues; i++)
		if (value_per_shape(k, i)) {
			const char *n = k->params[k->values[i].param].name;
			strbuf_printf(&decl, "%s%s", decl.len ? ", " : "int64_t ", n);
			strbuf_printf(call, ", &%s", n);
		}
	strbuf_putc(call, ')');
	if (decl.len)
		out_line(o, "%s;", decl.data);
	strbuf_finish(&decl);
}

/* ---- select() ---------------------------------------------------------------- */

static bool c_keyword(const char *s)
{
	static const char *const words[] = {
		"auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else", "enum",
		"extern", "float", "for", "goto", "if", "inline", "int", "long", "register", "restrict", "return",
		"short", "signed", "sizeof", "static", "struct", "switch", "typedef", "union", "unsigned", "void",
		"volatile", "while", "_Bool", "_Complex", "_Imaginary", "int64_t", "uint32_t", "size_t", "NULL",
		"main",
	};
	for (size_t i = 0; i < sizeof words / sizeof *words; i++)
		if (!strcmp(s, words[i]))
			return true;
	return !strncmp(s, "aot_", 4) || !strncmp(s, "INT", 3) || !strncmp(s, "UINT", 4);
}

/* A C identifier for a feature's text: "rows * cols" -> rows_mul_cols,
 * "K % 4 == 0" -> K_mod_4_eq_0; unique among the others, the kernel's
 * names and C's. */
static char *feature_name(const kernel *k, const char *text, char **taken, int ntaken)
{
	static const struct {
		const char *op, *word;
	} ops[] = {
		{"<<", "shl"}, {">>", "shr"}, {"<=", "le"}, {">=", "ge"}, {"==", "eq"}, {"!=", "ne"}, {"&&", "and"},
		{"||", "or"}, {"*", "mul"}, {"/", "div"}, {"%", "mod"}, {"+", "plus"}, {"-", "minus"}, {"<", "lt"},
		{">", "gt"}, {"&", "bitand"}, {"|", "bitor"}, {"^", "xor"}, {"!", "not"}, {"~", "compl"}, {"?", "then"},
		{":", "else"},
	};
	strbuf sb;
	strbuf_init(&sb);
	for (const char *p = text; *p && sb.len < 48;) {
		if (isalnum((unsigned char)*p) || *p == '_') {
			strbuf_putc(&sb, *p++);
			continue;
		}
		const char *word = NULL;
		size_t n = 1;
		for (size_t i = 0; i < sizeof ops / sizeof *ops && !word; i++)
			if (!strncmp(p, ops[i].op, strlen(ops[i].op))) {
				word = ops[i].word;
				n = strlen(ops[i].op);
			}
		if (sb.len && sb.data[sb.len - 1] != '_')
			strbuf_putc(&sb, '_');
		if (word)
			strbuf_printf(&sb, "%s_", word);
		p += n;
	}
	while (sb.len && sb.data[sb.len - 1] == '_')
		sb.data[--sb.len] = 0;
	if (!sb.len || isdigit((unsigned char)sb.data[0])) {
		strbuf t;
		strbuf_init(&t);
		strbuf_printf(&t, "f_%s", sb.data);
		strbuf_finish(&sb);
		sb = t;
	}
	size_t base = sb.len;
	for (int n = 2;; n++) {
		bool clash = c_keyword(sb.data) || ir_find_param(k, sb.data) >= 0 || ir_find_tunable(k, sb.data) >= 0;
		for (int i = 0; i < ntaken && !clash; i++)
			clash = !strcmp(taken[i], sb.data);
		if (!clash)
			return sb.data;
		sb.len = base;
		sb.data[base] = 0;
		strbuf_printf(&sb, "_%d", n);
	}
}

/* The tree: each leaf points aot_o at its order. Braces only around an
 * inner node's left side (else chains need none). */
static void tree_code(out *o, const dispatch *dp, char **fname, int i, bool chained)
{
	const dnode *n = &dp->nodes[i];
	if (n->feature < 0) {
		out_line(o, "aot_o = aot_orders[%d];", n->order);
		return;
	}
	char th[32];
	if (n->threshold == INT64_MIN)
		snprintf(th, sizeof th, "INT64_MIN");
	else
		snprintf(th, sizeof th, "%lld", (long long)n->threshold);
	const dnode *l = &dp->nodes[n->left], *r = &dp->nodes[n->right];
	bool braces = l->feature >= 0;
	if (chained)
		strbuf_printf(&o->sb, " if (%s <= %s)%s\n", fname[n->feature], th, braces ? " {" : "");
	else
		out_line(o, "if (%s <= %s)%s", fname[n->feature], th, braces ? " {" : "");
	o->indent++;
	tree_code(o, dp, fname, n->left, false);
	o->indent--;
	for (int j = 0; j < o->indent; j++)
		strbuf_putc(&o->sb, '\t');
	strbuf_puts(&o->sb, braces ? "} else" : "else");
	if (r->feature >= 0) {
		tree_code(o, dp, fname, n->right, true);
		return;
	}
	strbuf_puts(&o->sb, braces ? " {\n" : "\n");
	o->indent++;
	tree_code(o, dp, fname, n->right, false);
	o->indent--;
	if (braces)
		out_line(o, "}");
}

static void select_function(out *o, dctx *x)
{
	const ctx *c = x->c;
	const kernel *k = c->k;
	const dispatch *dp = c->dp;
	strbuf_printf(&o->sb, "int %s_select(", c->prefix);
	int_params(o, k, true);
	strbuf_puts(&o->sb, ")\n{\n");
	o->indent = 1;
	out_line(o, "const %s *aot_o;", dp->nvariants < 127 ? "signed char" : dp->nvariants < 32767 ? "short" : "int");
	strbuf call;
	strbuf_init(&call);
	if (x->need_shape) {
		shape_call(o, k, &call);
		out_line(o, "if (%s)", call.data);
		out_line(o, "\treturn -1;");
	}
	/* Features: a shape argument by its name, the others as named
	 * locals; one that cannot be evaluated is 0, as in training. */
	char **fname = xcalloc((size_t)dp->nfeatures + 1, sizeof *fname);
	strbuf text;
	strbuf_init(&text);
	bool err = false;
	for (int f = 0; f < dp->nfeatures; f++) {
		const dfeature *df = &dp->features[f];
		const aexpr *a = df->kfeature >= 0 ? &k->features[df->kfeature] : NULL;
		if (!a || (a->e->kind == EXPR_NAME && a->e->name_kind == NAME_PARAM)) {
			int p = a ? a->e->index : df->param;
			fname[f] = xstrdup(k->params[p].name);
			continue;
		}
		fname[f] = feature_name(k, a->text, fname, f);
		cx_env env = env_of(x, NULL, x->sel, NULL);
		bool fail;
		text.len = 0;
		text.data[0] = 0;
		cx_expr(&text, a->e, &env, &fail);
		strbuf cm;
		strbuf_init(&cm);
		strbuf_puts(&cm, "/* ");
		put_loc(&cm, c, a->loc);
		put_comment_text(&cm, a->text);
		if (!fail) {
			strbuf_puts(&cm, " */");
			out_line(o, "const int64_t %s = %s; %s", fname[f], text.data, cm.data);
		} else {
			strbuf_puts(&cm, ", 0 where it cannot be evaluated */");
			if (!err)
				out_line(o, "int aot_e;");
			err = true;
			out_line(o, "int64_t %s; %s", fname[f], cm.data);
			out_line(o, "aot_e = 0;");
			out_line(o, "%s = %s;", fname[f], text.data);
			out_line(o, "if (aot_e)");
			out_line(o, "\t%s = 0;", fname[f]);
		}
		strbuf_finish(&cm);
	}
	strbuf_finish(&text);
	tree_code(o, dp, fname, 0, false);
	for (int f = 0; f < dp->nfeatures; f++)
		free(fname[f]);
	free(fname);
	out_line(o, "for (; *aot_o >= 0; aot_o++)");
	strbuf_puts(&o->sb, "\t\tif (aot_valid(*aot_o");
	args(&o->sb, k, false, false);
	strbuf_puts(&o->sb, "))\n");
	out_line(o, "\t\treturn *aot_o;");
	out_line(o, "return -1;");
	o->indent = 0;
	out_raw(o, "}\n\n");
	strbuf_finish(&call);
}

/* "if (aot_v < 0 || aot_v >= AOT_NV || aot_shape(...))" for the public
 * functions over a shape: the shape's values as locals first. */
static void public_prologue(out *o, dctx *x, const char *fail)
{
	const kernel *k = x->c->k;
	strbuf cond;
	strbuf_init(&cond);
	strbuf_puts(&cond, "aot_v < 0 || aot_v >= AOT_NV");
	if (x->need_shape) {
		strbuf_puts(&cond, " || ");
		shape_call(o, k, &cond);
	}
	out_line(o, "if (%s)", cond.data);
	out_line(o, "\treturn %s;", fail);
	strbuf_finish(&cond);
}

/* The functions of a dispatch with alternatives, by index: 0 the kernel,
 * a + 1 its alternative a. */
static const kernel *function_at(const kernel *k, int i) { return i == 0 ? k : &k->alts[i - 1]; }

static int function_index(const ctx *c, int v)
{
	return c->ext[v] ? -1 : c->fn[v] == c->k ? 0 : (int)(c->fn[v] - c->k->alts) + 1;
}

/* With alternatives: which function each variant is of (aot_fn), and
 * what the rows of aot_params hold. */
static void function_table(out *o, const ctx *c)
{
	const kernel *k = c->k;
	strbuf_puts(&o->sb, "/* Which function each variant is of:");
	for (int i = 0; i <= k->nalts; i++) {
		strbuf_printf(&o->sb, "%s %d ", i ? "," : "", i);
		put_comment_text(&o->sb, function_at(k, i)->name);
	}
	strbuf_puts(&o->sb, c->any_ext ? " (-1: a library routine) */\n" : " */\n");
	out_line(o, "static const signed char aot_fn[AOT_NV] = {");
	strbuf_puts(&o->sb, "\t");
	for (int v = 0; v < c->nvars; v++)
		strbuf_printf(&o->sb, "%d%s", function_index(c, v), v + 1 < c->nvars ? ", " : "\n");
	out_line(o, "};");
	out_raw(o, "\n");
	strbuf_puts(&o->sb, "/* Tunable values, each variant's in its function's declaration order:");
	for (int i = 0; i <= k->nalts; i++) {
		const kernel *f = function_at(k, i);
		strbuf_puts(&o->sb, i ? "; " : " ");
		put_comment_text(&o->sb, f->name);
		for (int t = 0; t < f->ntunables; t++) {
			strbuf_putc(&o->sb, ' ');
			put_comment_text(&o->sb, f->tunables[t].name);
		}
		if (!f->ntunables)
			strbuf_puts(&o->sb, " (none)");
	}
	strbuf_puts(&o->sb, c->any_ext ? "; a library routine's are 0 */\n" : " */\n");
}

/* "switch (aot_fn[aot_v]) { case i: return NAME_i(aot_v, <arguments>REST);
 * ... default: return DFLT; }", one level deeper than o, for the functions
 * i that take marks (sfx: their suffixes). */
static void route(out *o, const kernel *k, const char *name, char (*sfx)[120], const bool *take,
                  const char *rest, int dflt)
{
	strbuf call;
	strbuf_init(&call);
	o->indent++;
	out_line(o, "switch (aot_fn[aot_v]) {");
	for (int i = 0; i <= k->nalts; i++) {
		if (!take[i])
			continue;
		call.len = 0;
		call.data[0] = 0;
		strbuf_printf(&call, "%s%s(aot_v", name, sfx[i]);
		args(&call, k, false, false);
		out_line(o, "case %d:", i);
		out_line(o, "\treturn %s%s);", call.data, rest);
	}
	out_line(o, "default:");
	out_line(o, "\treturn %d;", dflt);
	out_line(o, "}");
	o->indent--;
	strbuf_finish(&call);
}

/* With alternatives: aot_values, aot_dims and aot_valid for the variants of
 * each function that has some (suffixed with its name), and the three by
 * those names that pass variant aot_v on to its function's. */
static void per_function(out *o, dctx *x)
{
	const ctx *c = x->c;
	const kernel *k = c->k;
	bool device = c->t->device;
	char (*sfx)[120] = xcalloc((size_t)k->nalts + 1, sizeof *sfx);
	bool *has = xcalloc((size_t)k->nalts + 1, sizeof *has);
	for (int v = 0; v < c->nvars; v++)
		if (!c->ext[v])
			has[function_index(c, v)] = true;
	for (int i = 0; i <= k->nalts; i++) {
		const kernel *f = function_at(k, i);
		if (ir_is_identifier(f->name) && strlen(f->name) < 100)
			snprintf(sfx[i], sizeof sfx[i], "_%s", f->name);
		else
			snprintf(sfx[i], sizeof sfx[i], "_f%d", i);
		if (!has[i])
			continue;
		x->f = f;
		x->sfx = sfx[i];
		tunable_ranges(x);
		if (x->need_values)
			values_function(o, x);
		if (device && !f->host_launcher)
			dims_function(o, x);
		valid_function_of(o, x);
	}
	x->f = k;
	x->sfx = "";
	tunable_ranges(x);

	if (x->need_values) {
		strbuf_puts(&o->sb, "/* The AOTC_VALUEs over tunables of variant aot_v, by its function's. */\n");
		strbuf_puts(&o->sb, "static int aot_values(int aot_v");
		args(&o->sb, k, false, true);
		strbuf rest;
		strbuf_init(&rest);
		for (int i = 0; i < k->nparams; i++)
			if (ir_param_per_variant(k, i)) {
				strbuf_printf(&o->sb, ", int64_t *aot_%s", k->params[i].name);
				strbuf_printf(&rest, ", aot_%s", k->params[i].name);
			}
		strbuf_puts(&o->sb, ")\n{\n");
		route(o, k, "aot_values", sfx, has, rest.data, 1);
		out_raw(o, "}\n\n");
		strbuf_finish(&rest);
	}
	if (device && c->any_kernel) {
		strbuf_puts(&o->sb, "/* The launch of variant aot_v, by its function's: 1 for a library routine or a\n"
		                    " * host launcher, which launch their own work. */\n");
		strbuf_puts(&o->sb, "static int aot_dims(int aot_v");
		args(&o->sb, k, false, true);
		strbuf_puts(&o->sb, ", uint32_t aot_grid[3], uint32_t aot_block[3], uint32_t *aot_smem)\n{\n");
		bool *launches = xcalloc((size_t)k->nalts + 1, sizeof *launches);
		for (int i = 0; i <= k->nalts; i++)
			launches[i] = has[i] && !function_at(k, i)->host_launcher;
		route(o, k, "aot_dims", sfx, launches, ", aot_grid, aot_block, aot_smem", 1);
		out_raw(o, "}\n\n");
		free(launches);
	}
	out b = {.indent = 1};
	strbuf_init(&b.sb);
	valid_terms(&b, x);
	b.indent = 0;
	route(&b, k, "aot_valid", sfx, has, "", 0);
	strbuf_puts(&o->sb, "/* Whether variant aot_v may run on the shape (select() asks it of each variant\n"
	                    " * of the leaf's order in turn): its learnt terms, then its function's checks. */\n");
	valid_wrap(o, x, "aot_valid", &b, NULL, NULL, false, false);
	strbuf_finish(&b.sb);
	free(sfx);
	free(has);
}

/* aot_params has a column per tunable of the function with the most. */
static int params_width(const kernel *k)
{
	int width = k->ntunables;
	for (int a = 0; a < k->nalts; a++)
		width = k->alts[a].ntunables > width ? k->alts[a].ntunables : width;
	return width;
}

/* What the dispatch's functions know of the kernel's values: each
 * tunable's range, each parameter's where select() checks that it fits,
 * and whether per-shape (aot_shape) or per-variant values (aot_values)
 * are needed. Freed by dctx_finish. */
static void dctx_init(dctx *x, const ctx *c, int width)
{
	const kernel *k = c->k;
	*x = (dctx){.c = c, .f = k, .sfx = ""};
	x->tun = xcalloc((size_t)width + 1, sizeof *x->tun);
	x->sel = xcalloc((size_t)k->nparams + 1, sizeof *x->sel);
	x->any = xcalloc((size_t)k->nparams + 1, sizeof *x->any);
	tunable_ranges(x);
	for (int i = 0; i < k->nparams; i++) {
		x->any[i] = (ival){INT64_MIN, INT64_MAX};
		x->sel[i] = ir_param_is_integer(&k->params[i]) ? type_range(&k->params[i]) : x->any[i];
		if (k->params[i].shape >= 0 && x->sel[i].lo != INT64_MIN)
			x->need_shape = true;
	}
	for (int i = 0; i < k->nvalues; i++)
		x->need_shape |= value_per_shape(k, i);
	x->need_values = ir_has_per_variant(k) && c->any_kernel;
}

static void dctx_finish(dctx *x)
{
	free(x->tun);
	free(x->sel);
	free(x->any);
}

/* The dispatch's static functions (aot_shape, aot_values, aot_dims,
 * aot_valid, select), into fn: which helpers they use is known after. */
static void dispatch_functions(out *fn, dctx *x)
{
	const ctx *c = x->c;
	if (x->need_shape)
		shape_function(fn, x);
	if (c->any_alt) {
		per_function(fn, x);
	} else {
		if (x->need_values)
			values_function(fn, x);
		if (c->t->device && c->any_kernel)
			dims_function(fn, x);
		valid_function(fn, x);
	}
	select_function(fn, x);
}

/* The variants' tables: aot_names, which function each is of (or the
 * tunables' order) and aot_params. */
static void variant_tables(out *o, const ctx *c, int width)
{
	const kernel *k = c->k;
	out_line(o, "#define AOT_NV %d", c->nvars);
	out_raw(o, "\n");
	out_line(o, "static const char *const aot_names[AOT_NV] = {");
	for (int i = 0; i < c->nvars; i++) {
		strbuf_puts(&o->sb, "\t");
		put_string(&o->sb, c->names[i]);
		strbuf_puts(&o->sb, ",\n");
	}
	out_line(o, "};");
	out_raw(o, "\n");
	if (c->any_alt) {
		function_table(o, c);
	} else {
		strbuf_puts(&o->sb, "/* Tunable values in declaration order:");
		for (int i = 0; i < k->ntunables; i++) {
			strbuf_putc(&o->sb, ' ');
			put_comment_text(&o->sb, k->tunables[i].name);
		}
		strbuf_puts(&o->sb, c->any_ext ? " (a library routine's are 0) */\n" : " */\n");
	}
	out_line(o, "static const int64_t aot_params[AOT_NV][%d] = {", width ? width : 1);
	for (int i = 0; i < c->nvars; i++) {
		strbuf_puts(&o->sb, "\t{");
		const dvariant *dv = &c->dp->variants[i];
		for (int j = 0; j < width; j++) {
			long long v = j < dv->nvalues ? (long long)dv->values[j] : 0;
			strbuf_printf(&o->sb, v >= INT32_MIN && v <= INT32_MAX ? "%s%lld" : "%sINT64_C(%lld)", j ? ", " : "", v);
		}
		if (!width)
			strbuf_puts(&o->sb, "0");
		strbuf_puts(&o->sb, "},\n");
	}
	out_line(o, "};");
	out_raw(o, "\n");
}

/* aot_orders: each leaf's variants, best first, each row ended by -1. */
static void order_table(out *o, const dispatch *dp)
{
	int longest = 1;
	for (int i = 0; i < dp->norders; i++) {
		int n = 1;
		for (const int *p = dp->orders + dp->order_at[i]; *p >= 0; p++)
			n++;
		longest = n > longest ? n : longest;
	}
	out_line(o, "/* Each leaf's variants, best first: select() returns the first valid one (-1 ends). */");
	out_line(o, "static const %s aot_orders[%d][%d] = {",
	         dp->nvariants < 127 ? "signed char" : dp->nvariants < 32767 ? "short" : "int", dp->norders, longest);
	for (int i = 0; i < dp->norders; i++) {
		strbuf_puts(&o->sb, "\t{");
		for (const int *p = dp->orders + dp->order_at[i];; p++) {
			strbuf_printf(&o->sb, "%d", *p);
			if (*p < 0)
				break;
			strbuf_puts(&o->sb, ", ");
		}
		strbuf_puts(&o->sb, "},\n");
	}
	out_line(o, "};");
	out_raw(o, "\n");
}

/* The public functions over the variants' tables: num_variants,
 * variant_name, variant_params and variant_valid. */
static void public_variant_functions(out *o, dctx *x)
{
	const ctx *c = x->c;
	out_line(o, "int %s_num_variants(void)", c->prefix);
	out_line(o, "{");
	out_line(o, "\treturn AOT_NV;");
	out_line(o, "}");
	out_raw(o, "\n");
	out_line(o, "const char *%s_variant_name(int v)", c->prefix);
	out_line(o, "{");
	out_line(o, "\treturn v >= 0 && v < AOT_NV ? aot_names[v] : NULL;");
	out_line(o, "}");
	out_raw(o, "\n");
	out_line(o, "const int64_t *%s_variant_params(int v)", c->prefix);
	out_line(o, "{");
	out_line(o, "\treturn v >= 0 && v < AOT_NV ? aot_params[v] : NULL;");
	out_line(o, "}");
	out_raw(o, "\n");
	strbuf_printf(&o->sb, "int %s_variant_valid(int aot_v", c->prefix);
	args(&o->sb, c->k, true, true);
	strbuf_puts(&o->sb, ")\n{\n");
	o->indent = 1;
	public_prologue(o, x, "0");
	strbuf_puts(&o->sb, "\treturn aot_valid(aot_v");
	args(&o->sb, c->k, false, false);
	strbuf_puts(&o->sb, ");\n");
	o->indent = 0;
	out_line(o, "}");
}

/* variant_values: a variant's AOTC_VALUEs over tunables at a shape. */
static void public_variant_values(out *o, dctx *x)
{
	const ctx *c = x->c;
	const kernel *k = c->k;
	out_raw(o, "\n");
	variant_values_decl(o, c);
	strbuf_puts(&o->sb, "\n{\n");
	o->indent = 1;
	public_prologue(o, x, "-1");
	if (x->need_values) {
		strbuf_puts(&o->sb, "\treturn aot_values(aot_v");
		args(&o->sb, k, false, false);
		for (int i = 0; i < k->nparams; i++)
			if (ir_param_per_variant(k, i))
				strbuf_printf(&o->sb, ", %s", k->params[i].name);
		strbuf_puts(&o->sb, ") ? -1 : 0;\n");
	} else {
		for (int i = 0; i < k->nparams; i++)
			if (ir_param_per_variant(k, i))
				out_line(o, "*%s = 0;", k->params[i].name);
		out_line(o, "return 0;");
	}
	o->indent = 0;
	out_line(o, "}");
}

/* launch_dims: a kernel variant's grid, block and dynamic shared memory. */
static void public_launch_dims(out *o, const ctx *c)
{
	const kernel *k = c->k;
	out_raw(o, "\n");
	strbuf_printf(&o->sb, "int %s_launch_dims(int aot_v", c->prefix);
	args(&o->sb, k, false, true);
	strbuf_puts(&o->sb, ", uint32_t aot_grid[3], uint32_t aot_block[3], uint32_t *aot_smem)\n{\n");
	o->indent = 1;
	if (c->any_kernel) {
		strbuf_puts(&o->sb, "\treturn aot_v >= 0 && aot_v < AOT_NV && !aot_dims(aot_v");
		args(&o->sb, k, false, false);
		strbuf_puts(&o->sb, ", aot_grid, aot_block, aot_smem) ? 0 : -1;\n");
	} else {
		unused_args(o, k, false, "");
		out_line(o, "(void)aot_v, (void)aot_grid, (void)aot_block, (void)aot_smem;");
		out_line(o, "return -1;");
	}
	o->indent = 0;
	out_line(o, "}");
}

/* The dispatch's C file: the variants' tables, the static functions that
 * select from them, then the public functions. */
static char *dispatch_c(const ctx *c)
{
	out o;
	strbuf_init(&o.sb);
	o.indent = 0;
	int width = params_width(c->k);
	dctx x;
	dctx_init(&x, c, width);
	out fn = {.indent = 0};
	strbuf_init(&fn.sb);
	dispatch_functions(&fn, &x);

	provenance(&o, c, "The dispatch: which precompiled variant to run for a shape. C99, no dependencies.");
	out_raw(&o, "#include <stddef.h>\n#include <stdint.h>\n\n");
	out_line(&o, "#include \"%s.h\"", c->base);
	set_definition(&o, c);
	out_raw(&o, "\n");
	variant_tables(&o, c, width);
	order_table(&o, c->dp);
	cx_helpers(&o.sb, x.helpers);
	out_raw(&o, fn.sb.data);
	strbuf_finish(&fn.sb);

	public_variant_functions(&o, &x);
	if (ir_has_per_variant(c->k))
		public_variant_values(&o, &x);
	if (c->t->device)
		public_launch_dims(&o, c);
	dctx_finish(&x);
	return o.sb.data;
}

/* Whether kernel variant v's dynamic shared memory can exceed the 48 KiB a
 * kernel gets without opting in, on a shape select() or variant_valid()
 * passed. */
static bool smem_may_exceed_48k(const ctx *c, int v)
{
	const kernel *k = c->fn[v];
	if (!k->smem.e || c->ext[v])
		return false;
	ival *par = xcalloc((size_t)k->nparams + 1, sizeof *par);
	for (int i = 0; i < k->nparams; i++)
		par[i] = ir_param_is_integer(&k->params[i]) ? type_range(&k->params[i]) : (ival){INT64_MIN, INT64_MAX};
	bool h[CH_COUNT] = {false}, fail;
	cx_env env = {.k = k, .tv = c->dp->variants[v].values, .par = par, .helpers = h, .err = "aot_e"};
	ival r = cx_range(k->smem.e, &env, &fail);
	free(par);
	return r.hi > 48 * 1024;
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

bool emit_type_headers(out *o, const emit_target *t, bool half, bool bf16)
{
	half = half && t->half_header;
	bf16 = bf16 && t->bf16_header;
	if (!half && !bf16)
		return false;
	out_line(o, "#if %s", t->have_runtime);
	if (half)
		out_line(o, "#include <%s>", t->half_header);
	if (bf16)
		out_line(o, "#include <%s>", t->bf16_header);
	out_line(o, "#endif");
	return true;
}

void emit_type_overload(out *o, const emit_target *t, const char *name, const char *params,
                        const char *callee, const char *const *args, int nargs)
{
	if (t->device)
		out_line(o, "#if defined(__cplusplus) && (%s)", t->have_runtime);
	else
		out_line(o, "#ifdef __cplusplus");
	out_line(o, "static inline %s %s(%s)\n{", t->error_t, name, params);
	strbuf_printf(&o->sb, "\treturn %s(", callee);
	for (int i = 0; i < nargs; i++)
		strbuf_printf(&o->sb, "%s%s", i ? ", " : "", args[i]);
	out_line(o, ");\n}\n#endif\n");
}

/* One type of AOTC_TYPES: its launcher under the name without the type. */
static void type_overload(out *o, const ctx *c)
{
	const kernel *k = c->k;
	strbuf params, name, callee;
	strbuf_init(&params);
	strbuf_init(&name);
	strbuf_init(&callee);
	launcher_params(&params, k);
	const char **args = xcalloc((size_t)k->nparams + 2, sizeof *args);
	int n = 0;
	for (int i = 0; i < k->nparams; i++)
		if (launcher_takes(k, i))
			args[n++] = k->params[i].name;
	if (c->t->device) {
		strbuf_printf(&params, "%s%s aot_stream", n ? ", " : "", c->t->stream_t);
		args[n++] = "aot_stream";
	}
	strbuf_printf(&name, "%s_launch", c->family);
	strbuf_printf(&callee, "%s_launch", c->prefix);
	out_line(o, "/* For %s buffers (AOTC_TYPES); the other types' headers add their own. */",
	         k->tparams[k->type_tparam].default_text);
	emit_type_overload(o, c->t, name.data, params.data, callee.data, args, n);
	free(args);
	strbuf_finish(&params);
	strbuf_finish(&name);
	strbuf_finish(&callee);
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
	out_raw(&o, "\n#include <stddef.h>\n#include <stdint.h>\n");
	const target *t = c->t;
	bool half = false, bf16 = false;
	for (int i = 0; i < k->nparams; i++) {
		half |= k->params[i].dtype == DT_F16;
		bf16 |= k->params[i].dtype == DT_BF16;
	}
	emit_type_headers(&o, t, half, bf16);
	out_raw(&o, "\n#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n");
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
	if (c->any_alt)
		out_line(&o, "/* Tunable values of the variant's function (its name starts variant_name's) in\n"
		             " * its declaration order; NULL for an index out of range. */");
	else
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
	if (t->device) {
		out_line(&o, "/* Grid, block and dynamic shared memory of variant v: 0, or -1 if they");
		out_line(&o, " * cannot be evaluated (overflow, division by zero, out of range) or exceed");
		out_line(&o, " * what a CUDA device launches (grid.y, grid.z > 65535, grid.x >= 2^31,");
		out_line(&o, " * more than 1024 threads or 1024 x 1024 x 64 per block); select() never");
		out_line(&o, c->any_launcher ? " * returns such a variant. -1 too for a host launcher's variant, which"
		                               : " * returns such a variant. */");
		if (c->any_launcher)
			out_line(&o, " * launches its own work. */");
		strbuf_printf(&o.sb, "int %s_launch_dims(int v, ", c->prefix);
		int_params(&o, k, false);
		strbuf_puts(&o.sb, ", uint32_t grid[3], uint32_t block[3], uint32_t *smem);\n");
		strbuf_printf(&o.sb, "\n#if %s\n", t->have_runtime);
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
	if (k->type_tag)
		type_overload(&o, c);
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

aotc_status emit_header_copy(const char *dir, char **text, size_t *len, diags *d)
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
	out_line(o, "\t\"%s\", \"%s\", %d, %s_args,", k->id, tag, n, c->prefix);
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
	if (c->any_ext || c->any_launcher) {
		/* AOTC_EXTERN routines and host launchers: called, not launched. */
		out_line(&o, "switch (aot_v) {");
		for (int i = 0; i < c->nvars; i++) {
			if (!c->ext[i] && !c->fn[i]->host_launcher)
				continue;
			strbuf_printf(&o.sb, "\tcase %d:\n\t\t%s", i, t->device ? "return " : "");
			if (c->ext[i])
				strbuf_puts(&o.sb, c->ext[i]->name);
			else
				strbuf_putn(&o.sb, c->names[i], strcspn(c->names[i], "["));
			strbuf_putc(&o.sb, '(');
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
		if (c->ext[i] || c->fn[i]->host_launcher)
			continue;
		const char *name = c->names[i];
		const char *br = strchr(name, '[');
		int n = br ? (int)(br - name) : (int)strlen(name);
		out_line(&o, "case %d:", i);
		o.indent++;
		if (t->device && smem_may_exceed_48k(c, i)) {
			/* Above 48 KiB of dynamic shared memory a kernel must opt in. */
			out_line(&o, "if (aot_smem > 48 * 1024) {");
			strbuf_printf(&o.sb, "\t\t\t%s aot_e = ", t->error_t);
			strbuf_printf(&o.sb, t->smem_attr, n, name);
			strbuf_puts(&o.sb, ";\n");
			out_line(&o, "\tif (aot_e != %s)", t->ok);
			out_line(&o, "\t\treturn aot_e;");
			out_line(&o, "}");
		}
		if (t->device) {
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
	const arch_info *ai = c->in->arch;
	bool ok = true;
	json_t *m = json_object();
	json_object_set_new(m, "aotc_manifest", json_integer(AOTC_MANIFEST_VERSION));
	ok &= set_str(m, "aotc_version", AOTC_VERSION_STRING);
	ok &= set_str(m, "kernel", k->id);
	/* One type of AOTC_TYPES: aotc link declares the overload named by the
	 * function (family) for the linked launcher too. */
	if (k->type_tag)
		ok &= set_str(m, "family", k->name);
	ok &= set_str(m, "arch", ai->name);
	ok &= set_str(m, "platform", arch_kind_name(ai->kind));
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
	ok &= set_str(m, "hardware_id", c->dp->fig.hardware);
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

/* What ir_from_json checks, for modules from the frontend too: the names
 * and types emitted code is written with. */
static aotc_status check_emittable(const emit_input *in, diags *d)
{
	const kernel *k = in->k;
	if (!is_identifier(k->name)) {
		diag_error(d, k->loc, "kernel name '%s' is not a C identifier", k->name);
		return AOTC_DIAGNOSED;
	}
	for (int i = 0; i < k->nparams; i++) {
		const param *p = &k->params[i];
		if (!is_identifier(p->name) || c_reserved(p->name)) {
			diag_error(d, p->loc, "parameter name '%s' cannot be used in emitted code", p->name);
			return AOTC_DIAGNOSED;
		}
		if (!ir_type_text_ok(p->type) || !ir_type_text_ok(p->elem_type) ||
		    (p->elem_canon && !ir_type_text_ok(p->elem_canon))) {
			diag_error(d, p->loc, "the type of parameter '%s' cannot be written into emitted code",
			           p->name);
			return AOTC_DIAGNOSED;
		}
	}
	/* Defaults go into template-ids, tunable names into comments. */
	for (int i = 0; i < k->ntparams; i++) {
		const tparam *tp = &k->tparams[i];
		if (tp->default_text && !(tp->is_type ? ir_type_text_ok(tp->default_text)
		                                      : ir_template_arg_ok(tp->default_text))) {
			diag_error(d, tp->loc, "the default of '%s' cannot be written into emitted code",
			           tp->name);
			return AOTC_DIAGNOSED;
		}
	}
	for (int i = 0; i < k->ntunables; i++)
		if (!is_identifier(k->tunables[i].name) || c_reserved(k->tunables[i].name)) {
			diag_error(d, k->tunables[i].loc, "tunable name '%s' cannot be used in emitted code",
			           k->tunables[i].name);
			return AOTC_DIAGNOSED;
		}
	if (!ir_source_hash_ok(in->m->source_hash)) {
		diag_plain_error(d, "%s: its source hash is not 32 lowercase hex digits", in->m->file);
		return AOTC_DIAGNOSED;
	}
	return AOTC_OK;
}

/* The dispatch, the header, the launcher and the manifest, made twice (the
 * set hash is the hash of the files made with 0 in its place), then
 * written with aotc.h beside them unless this copy (or aotc.h itself) is
 * there already; a file of that name aotc did not write is refused before
 * anything is written. */
static aotc_status write_files(ctx *c, diags *d)
{
	const emit_input *in = c->in;
	aotc_status status = AOTC_OK;
	enum { NOWN = 4, NFILES = 5 };
	char *files[NFILES] = {NULL, NULL, NULL, NULL, NULL};
	size_t lens[NFILES] = {0, 0, 0, 0, 0};
	strbuf paths[NOWN];
	int nfiles = NOWN;
	switch (emit_header_copy(in->out_dir, &files[NOWN], &lens[NOWN], d)) {
	case 1: nfiles = NFILES; break;
	case 0: break;
	default: return AOTC_ENVIRONMENT;
	}
	const char *ext[NOWN] = {"c", "h", c->t->launcher_ext, "json"};
	for (int i = 0; i < NOWN; i++) {
		strbuf_init(&paths[i]);
		strbuf_printf(&paths[i], "%s.%s", c->base, ext[i]);
	}
	outdir_file set[NOWN];
	for (int pass = 0; pass < 2 && !status; pass++) {
		for (int i = 0; i < NOWN; i++)
			free(files[i]);
		files[0] = dispatch_c(c);
		files[1] = header(c);
		files[2] = launcher(c);
		files[3] = manifest(c, d);
		if (!files[3]) {
			status = AOTC_DIAGNOSED;
			break;
		}
		for (int i = 0; i < NOWN; i++)
			set[i] = (outdir_file){paths[i].data, files[i], strlen(files[i])};
		if (pass == 0)
			c->set = outdir_set_hash(set, NOWN);
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
			status = AOTC_ENVIRONMENT;
	}
	for (int i = 0; i < NOWN; i++)
		strbuf_finish(&paths[i]);
	for (int i = 0; i < NFILES; i++)
		free(files[i]);
	return status;
}

aotc_status emit_files(const emit_input *in, diags *d)
{
	const kernel *k = in->k;
	aotc_status status = check_emittable(in, d);
	if (status)
		return status;
	ctx c = {.in = in, .t = target_for(in->arch), .k = k, .dp = in->dp, .nvars = in->dp->nvariants};
	char tag[64];
	emit_arch_tag(in->arch, tag, sizeof tag);
	snprintf(c.prefix, sizeof c.prefix, "aot_%s_%s", k->id, tag);
	snprintf(c.family, sizeof c.family, "aot_%s_%s", k->name, tag);
	snprintf(c.base, sizeof c.base, "_aot_%s_%s", k->id, tag);
	strbuf src;
	strbuf_init(&src);
	source_name(&src, in->m->file);
	c.source = src.data;

	/* Variants as the dispatch numbers them (database order); their names
	 * and routines were checked against the IR when it was made. */
	c.names = xcalloc((size_t)c.nvars + 1, sizeof *c.names);
	c.ext = xcalloc((size_t)c.nvars + 1, sizeof *c.ext);
	c.fn = xcalloc((size_t)c.nvars + 1, sizeof *c.fn);
	for (int i = 0; i < c.nvars && !status; i++) {
		const dvariant *dv = &in->dp->variants[i];
		c.names[i] = dv->name;
		c.fn[i] = dispatch_function(k, dv);
		if (dv->routine < 0 || dv->routine >= k->nexterns) {
			c.any_kernel = true;
			c.any_alt |= c.fn[i] != k;
			c.any_launcher |= c.fn[i]->host_launcher;
			if (c.fn[i]->host_launcher && !routines_built(&c)) {
				diag_plain_error(d, "%s: '%s' is a variant of a CUDA host launcher, not built for %s (aotc tune leaves it out there): the database was not tuned for %s",
				                 in->m->file, dv->name, in->arch->name, in->arch->name);
				status = AOTC_ENVIRONMENT;
			}
			continue;
		}
		c.ext[i] = &k->externs[dv->routine];
		c.any_ext = true;
		if (!routines_built(&c)) {
			diag_plain_error(d, "%s: routine '%s' is a CUDA routine, not built for %s (aotc tune leaves it out there): the database was not tuned for %s",
			                 in->m->file, dv->name, in->arch->name, in->arch->name);
			status = AOTC_ENVIRONMENT;
		}
	}
	if (!status && mkdir_p(in->out_dir) < 0) {
		diag_plain_error(d, "cannot create %s: %s", in->out_dir, strerror(errno));
		status = AOTC_ENVIRONMENT;
	}
	if (!status) {
		c.include = include_path(in);
		if (!include_text_ok(c.include)) {
			if (in->include_as)
				diag_plain_error(d, "--include-as '%s' cannot be written in an #include", in->include_as);
			else
				diag_plain_error(d, "the file name of %s cannot be written in an #include: give --include-as",
				                 in->m->file);
			status = AOTC_DIAGNOSED;
		}
	}
	if (!status)
		status = write_files(&c, d);
	strbuf_finish(&src);
	free(c.include);
	free(c.names);
	free(c.ext);
	free(c.fn);
	return status;
}
