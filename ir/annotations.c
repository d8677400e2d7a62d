/* The annotation language (docs/spec.md §2): one parser per macro, then ir_check()
 * for the rules that need the whole kernel (accounting for parameters,
 * resolving names, launch-only tunables). Annotations may come in any
 * order, so parsing records text and positions and checking resolves. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ir.h"
#include "util.h"

typedef struct aparser {
	lexer l;
	aotc_module *m;
	kernel *k;
	diags *d;
	const char *macro;  /* "AOTC_TUNE", for messages */
	aotc_loc loc;       /* of the annotation */
	const char *text;   /* whole argument text, for aexpr slices */
	int errors;
} aparser;

static int nerrors(aparser *p) { return p->errors + p->l.errors; }

/* "; did you mean 'x'?" with k's parameter nearest to name, or "". */
static const char *param_hint(aotc_module *m, const kernel *k, const char *name)
{
	nearest near;
	nearest_init(&near, name);
	for (int i = 0; i < k->nparams; i++)
		nearest_offer(&near, k->params[i].name);
	return near.best ? arena_printf(&m->arena, "; did you mean '%s'?", near.best) : "";
}

static void claim(aotc_module *m, kernel *k, const char *name)
{
	ARENA_PUSH(&m->arena, k->claimed, k->nclaimed, k->claimed_cap, name);
}

static bool claimed(const kernel *k, const char *name)
{
	for (int i = 0; i < k->nclaimed; i++)
		if (strcmp(k->claimed[i], name) == 0)
			return true;
	return false;
}

static void error_at(aparser *p, aotc_loc loc, const char *fmt, const char *arg)
{
	diag_error(p->d, loc, fmt, arg);
	p->errors++;
}

static bool at_end(aparser *p) { return p->l.tok.kind == TOK_EOF; }

/* ident -> NAME; diagnoses anything else. */
static const char *parse_ident(aparser *p, const char *what)
{
	if (p->l.tok.kind != TOK_IDENT) {
		if (p->l.tok.kind != TOK_ERROR)
			diag_error(p->d, p->l.tok.loc, "%s: expected %s", p->macro, what);
		p->errors++;
		return NULL;
	}
	char *s = lexer_text(&p->l);
	lexer_next(&p->l);
	return s;
}

/* An expression, keeping the source text it spans. */
static bool parse_aexpr(aparser *p, aexpr *out)
{
	const char *start = p->l.tok.start;
	aotc_loc loc = p->l.tok.loc;
	int before = p->l.errors;
	expr *e = expr_parse(&p->l);
	if (!e || p->l.errors != before)
		return false;
	/* The expression ends where the next token starts; trim the space. */
	const char *end = p->l.tok.kind == TOK_EOF ? p->l.end : p->l.tok.start;
	while (end > start && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\n' ||
	                       end[-1] == '\r' || end[-1] == '\\'))
		end--;
	out->e = e;
	out->text = arena_strndup(&p->m->arena, start, (size_t)(end - start));
	out->loc = loc;
	return true;
}

/* Resolves a name of the source's constants (ir_find_const) and diagnoses
 * one that is not an integer at the use. */
static bool lookup_source_const(aotc_module *m, diags *d, const char *what,
                                const char *name, aotc_loc loc, int64_t *value,
                                bool *diagnosed)
{
	source_const c;
	const char *why = "";
	switch (ir_find_const(m, name, &c, &why)) {
	case CONST_FOUND:
		*value = c.value;
		return true;
	case CONST_NOT_INTEGER:
		diag_error(d, loc, "%s: '%s' %s", what, name, why);
		if (c.loc.line > 0)
			diag_note(d, c.loc, "'%s' defined here", name);
		*diagnosed = true;
		return false;
	case CONST_UNKNOWN:
		break;
	}
	return false;
}

typedef struct const_scope_ctx {
	aotc_module *m;
	const kernel *k;    /* may be NULL */
	diags *d;
	const char *what;
} const_scope_ctx;

/* Names in a constant (a TUNE value, a SHAPES bound): the source's
 * constants only. */
static bool lookup_const_only(void *ctx, const char *name, aotc_loc loc, name_kind *kind,
                              int *index, int64_t *value, bool *diagnosed)
{
	(void)index;
	const_scope_ctx *s = ctx;
	if (s->k && (ir_find_param(s->k, name) >= 0 || ir_find_tunable(s->k, name) >= 0)) {
		diag_error(s->d, loc, "%s: '%s' is a %s of '%s'; this must be a constant",
		           s->what, name, ir_find_param(s->k, name) >= 0 ? "parameter" : "tunable",
		           s->k->name);
		*diagnosed = true;
		return false;
	}
	if (!lookup_source_const(s->m, s->d, s->what, name, loc, value, diagnosed))
		return false;
	*kind = NAME_CONST;
	return true;
}

static void suggest_const(void *ctx, nearest *n)
{
	const_scope_ctx *s = ctx;
	ir_offer_consts(s->m, n);
}

/* A constant integer expression: literals and the source's constants. */
static bool parse_const(aparser *p, int64_t *out, bool *is_bool)
{
	aotc_loc loc = p->l.tok.loc;
	if (is_bool)
		*is_bool = lexer_is_ident(&p->l, "true") || lexer_is_ident(&p->l, "false");
	aexpr a;
	if (!parse_aexpr(p, &a))
		return false;
	const_scope_ctx cs = {p->m, p->k, p->d, p->macro};
	expr_scope consts = {lookup_const_only, &cs, suggest_const};
	if (expr_resolve(a.e, &consts, p->d) > 0) {
		p->errors++;
		return false;
	}
	eval_status st = expr_eval(a.e, &(eval_env){0}, out);
	if (st != EVAL_OK) {
		diag_error(p->d, loc, "%s: %s in constant", p->macro, eval_status_name(st));
		p->errors++;
		return false;
	}
	return true;
}

/* A number: ['-'|'+'] INT | FLOAT. */
static bool parse_number(aparser *p, double *out)
{
	double sign = 1;
	if (lexer_accept(&p->l, "-"))
		sign = -1;
	else
		lexer_accept(&p->l, "+");
	if (p->l.tok.kind == TOK_INT)
		*out = sign * (double)p->l.tok.ival;
	else if (p->l.tok.kind == TOK_FLOAT)
		*out = sign * p->l.tok.fval;
	else {
		if (p->l.tok.kind != TOK_ERROR)
			diag_error(p->d, p->l.tok.loc, "%s: expected a number", p->macro);
		p->errors++;
		return false;
	}
	lexer_next(&p->l);
	return true;
}

static bool expect(aparser *p, const char *s)
{
	if (lexer_expect(&p->l, s))
		return true;
	return false;
}

static bool expect_end(aparser *p)
{
	if (at_end(p))
		return true;
	if (p->l.tok.kind != TOK_ERROR)
		diag_error(p->d, p->l.tok.loc, "%s: unexpected '%.*s'", p->macro,
		           (int)p->l.tok.len, p->l.tok.start);
	p->errors++;
	return false;
}

/* tune -> NAME (',' const)+ */
static void parse_tune(aparser *p)
{
	aotc_loc nloc = p->l.tok.loc;
	const char *name = parse_ident(p, "a tunable name");
	if (!name)
		return;
	claim(p->m, p->k, name);
	tunable t = {.name = name, .loc = p->loc, .tparam = -1};
	size_t cap = 0;
	bool all_bool = true;
	while (lexer_accept(&p->l, ",")) {
		int64_t v;
		bool b;
		aotc_loc vloc = p->l.tok.loc;
		if (!parse_const(p, &v, &b))
			return;
		for (int i = 0; i < t.nvalues; i++)
			if (t.values[i] == v) {
				diag_error(p->d, vloc, "AOTC_TUNE: value %lld of '%s' given twice",
				           (long long)v, name);
				p->errors++;
				return;
			}
		all_bool &= b;
		ARENA_PUSH(&p->m->arena, t.values, t.nvalues, cap, v);
	}
	if (!expect_end(p))
		return;
	if (t.nvalues == 0) {
		error_at(p, nloc, "AOTC_TUNE: '%s' has no values", name);
		return;
	}
	t.is_bool = all_bool;
	if (ir_find_tunable(p->k, name) >= 0) {
		error_at(p, nloc, "AOTC_TUNE: '%s' is tuned twice", name);
		return;
	}
	size_t tcap = (size_t)p->k->ntunables;
	ARENA_PUSH(&p->m->arena, p->k->tunables, p->k->ntunables, tcap, t);
}

/* require/valid_if -> expr */
static void parse_constraint(aparser *p, aexpr **list, int *n)
{
	aexpr a;
	if (!parse_aexpr(p, &a) || !expect_end(p))
		return;
	size_t cap = (size_t)*n;
	ARENA_PUSH(&p->m->arena, *list, *n, cap, a);
}

/* grid/block -> expr (',' expr (',' expr)?)? */
static void parse_launch(aparser *p, launch *g)
{
	if (g->ndims) {
		diag_error(p->d, p->loc, "%s given twice", p->macro);
		p->errors++;
		return;
	}
	launch out = {.loc = p->loc};
	do {
		if (out.ndims == 3) {
			diag_error(p->d, p->l.tok.loc, "%s takes at most 3 dimensions", p->macro);
			p->errors++;
			return;
		}
		if (!parse_aexpr(p, &out.dims[out.ndims]))
			return;
		out.ndims++;
	} while (lexer_accept(&p->l, ","));
	if (expect_end(p))
		*g = out;
}

static void parse_smem(aparser *p, aexpr *smem)
{
	if (smem->e) {
		diag_error(p->d, p->loc, "AOTC_SMEM given twice");
		p->errors++;
		return;
	}
	aexpr a;
	if (parse_aexpr(p, &a) && expect_end(p))
		*smem = a;
}

/* init -> 'uniform' '(' number ',' number ')' | 'zero' | 'const' '(' number ')' */
static bool parse_init(aparser *p, buffer_init *init)
{
	aotc_loc loc = p->l.tok.loc;
	const char *kind = parse_ident(p, "an initialiser (uniform(lo, hi), zero or const(v))");
	if (!kind)
		return false;
	if (strcmp(kind, "zero") == 0) {
		init->kind = INIT_ZERO;
		return true;
	}
	if (strcmp(kind, "uniform") == 0) {
		init->kind = INIT_UNIFORM;
		if (!expect(p, "(") || !parse_number(p, &init->lo) || !expect(p, ",") ||
		    !parse_number(p, &init->hi) || !expect(p, ")"))
			return false;
		if (!(init->lo <= init->hi)) {
			diag_error(p->d, loc, "AOTC_BUFFER: uniform(lo, hi) needs lo <= hi");
			p->errors++;
			return false;
		}
		return true;
	}
	if (strcmp(kind, "const") == 0) {
		init->kind = INIT_CONST;
		return expect(p, "(") && parse_number(p, &init->value) && expect(p, ")");
	}
	error_at(p, loc, "AOTC_BUFFER: unknown initialiser '%s' (uniform(lo, hi), zero or const(v))",
	         kind);
	return false;
}

/* buffer -> NAME ',' expr ',' ROLE (',' init)? */
static void parse_buffer(aparser *p)
{
	buffer b = {.param = -1, .loc = p->loc};
	aotc_loc nloc = p->l.tok.loc;
	const char *name = parse_ident(p, "a parameter name");
	if (!name)
		return;
	claim(p->m, p->k, name);
	if (!expect(p, ",") || !parse_aexpr(p, &b.count) || !expect(p, ","))
		return;
	aotc_loc rloc = p->l.tok.loc;
	const char *role = parse_ident(p, "a role (in, out or inout)");
	if (!role)
		return;
	if (strcmp(role, "in") == 0)
		b.role = ROLE_IN;
	else if (strcmp(role, "out") == 0)
		b.role = ROLE_OUT;
	else if (strcmp(role, "inout") == 0)
		b.role = ROLE_INOUT;
	else {
		error_at(p, rloc, "AOTC_BUFFER: unknown role '%s' (in, out or inout)", role);
		return;
	}
	if (lexer_accept(&p->l, ",") && !parse_init(p, &b.init))
		return;
	if (!expect_end(p))
		return;
	b.param = ir_find_param(p->k, name);
	if (b.param < 0) {
		diag_error(p->d, nloc, "AOTC_BUFFER: '%s' is not a parameter of '%s'%s", name,
		           p->k->name, param_hint(p->m, p->k, name));
		p->errors++;
		return;
	}
	param *pp = &p->k->params[b.param];
	if (!pp->is_pointer) {
		diag_error(p->d, nloc, "AOTC_BUFFER: parameter '%s' is not a pointer", name);
		p->errors++;
		return;
	}
	if (pp->buffer >= 0) {
		error_at(p, nloc, "AOTC_BUFFER: '%s' already has a buffer", name);
		return;
	}
	if (pp->dtype == DT_OTHER) {
		/* A type parameter without default has its own diagnostic. */
		int tp = ir_find_tparam(p->k, pp->elem_type);
		if (tp < 0 || !p->k->tparams[tp].is_type)
			diag_error(p->d, nloc, "AOTC_BUFFER: aotc cannot fill elements of type '%s'",
			           pp->elem_type);
		p->errors++;
		return;
	}
	if (pp->is_const && b.role != ROLE_IN) {
		diag_error(p->d, rloc, "AOTC_BUFFER: '%s' points to const, so its role must be 'in'",
		           name);
		p->errors++;
		return;
	}
	pp->buffer = p->k->nbuffers;
	size_t cap = (size_t)p->k->nbuffers;
	ARENA_PUSH(&p->m->arena, p->k->buffers, p->k->nbuffers, cap, b);
}

/* value -> NAME ',' (number | expr) */
static void parse_value(aparser *p)
{
	value v = {.param = -1, .loc = p->loc};
	aotc_loc nloc = p->l.tok.loc;
	const char *name = parse_ident(p, "a parameter name");
	if (!name)
		return;
	claim(p->m, p->k, name);
	if (!expect(p, ","))
		return;
	v.param = ir_find_param(p->k, name);
	param *pp = v.param >= 0 ? &p->k->params[v.param] : NULL;
	if (!pp) {
		diag_error(p->d, nloc, "AOTC_VALUE: '%s' is not a parameter of '%s'%s", name,
		           p->k->name, param_hint(p->m, p->k, name));
		p->errors++;
		return;
	}
	bool floating = pp && !pp->is_pointer && dtype_is_floating(pp->dtype);
	bool literal = p->l.tok.kind == TOK_INT || p->l.tok.kind == TOK_FLOAT ||
	               lexer_is(&p->l, "-") || lexer_is(&p->l, "+");
	if (floating && literal) {
		v.is_float = true;
		if (!parse_number(p, &v.fvalue))
			return;
	} else if (p->l.tok.kind == TOK_FLOAT) {
		diag_error(p->d, p->l.tok.loc, "AOTC_VALUE: '%s' is not a floating parameter; its value must be an integer expression",
		           name);
		p->errors++;
		return;
	} else if (!parse_aexpr(p, &v.iexpr)) {
		return;
	}
	if (!expect_end(p))
		return;
	if (pp->is_pointer) {
		diag_error(p->d, nloc, "AOTC_VALUE: '%s' is a pointer; use AOTC_BUFFER", name);
		p->errors++;
		return;
	}
	if (!floating && !dtype_is_integer(pp->dtype)) {
		diag_error(p->d, nloc, "AOTC_VALUE: aotc cannot pass a value of type '%s'",
		           pp->type);
		p->errors++;
		return;
	}
	if (pp->value >= 0) {
		error_at(p, nloc, "AOTC_VALUE: '%s' already has a value", name);
		return;
	}
	pp->value = p->k->nvalues;
	size_t cap = (size_t)p->k->nvalues;
	ARENA_PUSH(&p->m->arena, p->k->values, p->k->nvalues, cap, v);
}

/* What a geom()/logrand() generator breaks, or NULL. */
static const char *gen_check(const shape_dim *s)
{
	if (s->lo <= 0 || s->hi < s->lo)
		return "0 < lo <= hi";
	if (s->count < 1 || s->count > GEN_MAX_COUNT)
		return "1 <= n <= 65536";
	if (s->gen == GEN_LOGRAND && (uint64_t)(s->hi - s->lo) < (uint64_t)(s->count - 1))
		return "at least n integers between lo and hi";
	return NULL;
}

/* gen -> 'pow2' '(' const ',' const ')' | 'range' '(' const ',' const ',' const ')'
 *      | ('geom' | 'logrand') '(' const ',' const ',' const ')'
 *      | '{' const (',' const)* '}' */
static bool parse_gen(aparser *p, shape_dim *s)
{
	aotc_loc loc = p->l.tok.loc;
	if (lexer_accept(&p->l, "{")) {
		s->gen = GEN_LIST;
		size_t cap = 0;
		if (lexer_is(&p->l, "}")) {
			diag_error(p->d, loc, "AOTC_SHAPES: empty list");
			p->errors++;
			return false;
		}
		do {
			int64_t v;
			if (!parse_const(p, &v, NULL))
				return false;
			ARENA_PUSH(&p->m->arena, s->list, s->nlist, cap, v);
		} while (lexer_accept(&p->l, ","));
		return expect(p, "}");
	}
	const char *gen = parse_ident(p, "a generator (pow2(lo, hi), range(lo, hi, step), geom(lo, hi, n), "
	                                 "logrand(lo, hi, n) or {a, b, ...})");
	if (!gen)
		return false;
	if (strcmp(gen, "pow2") == 0) {
		s->gen = GEN_POW2;
		if (!expect(p, "(") || !parse_const(p, &s->lo, NULL) || !expect(p, ",") ||
		    !parse_const(p, &s->hi, NULL) || !expect(p, ")"))
			return false;
		if (s->lo <= 0 || s->hi < s->lo) {
			diag_error(p->d, loc, "AOTC_SHAPES: pow2(lo, hi) needs 0 < lo <= hi");
			p->errors++;
			return false;
		}
		int64_t v = 1;
		while (v < s->lo && v <= INT64_MAX / 2)
			v *= 2;
		if (v < s->lo || v > s->hi) {
			diag_error(p->d, loc, "AOTC_SHAPES: no power of two in pow2(%lld, %lld)",
			           (long long)s->lo, (long long)s->hi);
			p->errors++;
			return false;
		}
		return true;
	}
	if (strcmp(gen, "range") == 0) {
		s->gen = GEN_RANGE;
		if (!expect(p, "(") || !parse_const(p, &s->lo, NULL) || !expect(p, ",") ||
		    !parse_const(p, &s->hi, NULL) || !expect(p, ",") ||
		    !parse_const(p, &s->step, NULL) || !expect(p, ")"))
			return false;
		if (s->step <= 0 || s->hi < s->lo) {
			diag_error(p->d, loc, "AOTC_SHAPES: range(lo, hi, step) needs lo <= hi and step > 0");
			p->errors++;
			return false;
		}
		return true;
	}
	if (strcmp(gen, "geom") == 0 || strcmp(gen, "logrand") == 0) {
		s->gen = gen[0] == 'g' ? GEN_GEOM : GEN_LOGRAND;
		if (!expect(p, "(") || !parse_const(p, &s->lo, NULL) || !expect(p, ",") ||
		    !parse_const(p, &s->hi, NULL) || !expect(p, ",") ||
		    !parse_const(p, &s->count, NULL) || !expect(p, ")"))
			return false;
		const char *why = gen_check(s);
		if (why) {
			diag_error(p->d, loc, "AOTC_SHAPES: %s(lo, hi, n) needs %s", gen, why);
			p->errors++;
			return false;
		}
		return true;
	}
	error_at(p, loc, "AOTC_SHAPES: unknown generator '%s' (pow2, range, geom, logrand or {list})",
	         gen);
	return false;
}

/* Appends a launcher-only shape argument (an int64_t the launcher and
 * select() take after the kernel's own parameters); returns its index. */
static int add_launcher_only(aotc_module *m, kernel *k, const char *name, aotc_loc loc, int shape)
{
	param *ps = arena_alloc(&m->arena, (size_t)(k->nparams + 1) * sizeof *ps);
	if (k->nparams)
		memcpy(ps, k->params, (size_t)k->nparams * sizeof *ps);
	ps[k->nparams] = (param){.name = name, .loc = loc, .type = "int64_t", .dtype = DT_I64,
	                         .vec = 1, .elem_type = "int64_t", .buffer = -1, .value = -1,
	                         .shape = shape, .launcher_only = true};
	k->params = ps;
	return k->nparams++;
}

/* shapes -> NAME '=' gen (',' NAME '=' gen)* */
static void parse_shapes(aparser *p)
{
	if (p->k->nshapes) {
		diag_error(p->d, p->loc, "AOTC_SHAPES given twice");
		p->errors++;
		return;
	}
	shape_dim *dims = NULL;
	int n = 0;
	size_t cap = 0;
	do {
		shape_dim s = {.param = -1, .loc = p->l.tok.loc};
		const char *name = parse_ident(p, "a shape argument");
		if (name)
			claim(p->m, p->k, name);
		if (!name || !expect(p, "=") || !parse_gen(p, &s)) {
			/* Skip to the next dimension so that its errors show too. */
			int depth = 0;
			while (!at_end(p) && !(depth == 0 && lexer_is(&p->l, ","))) {
				if (lexer_is(&p->l, "(") || lexer_is(&p->l, "{"))
					depth++;
				else if ((lexer_is(&p->l, ")") || lexer_is(&p->l, "}")) && depth > 0)
					depth--;
				lexer_next(&p->l);
			}
			continue;
		}
		s.param = ir_find_param(p->k, name);
		if (s.param < 0 && (ir_find_tunable(p->k, name) >= 0 || ir_find_tparam(p->k, name) >= 0)) {
			diag_error(p->d, s.loc, "AOTC_SHAPES: '%s' is a template parameter or tunable, not a shape argument",
			           name);
			p->errors++;
		} else if (s.param < 0) {
			/* Not a parameter: a launcher-only shape argument (ir_check
			 * refuses it if nothing uses it). */
			s.param = add_launcher_only(p->m, p->k, name, s.loc, n);
		} else if (!ir_param_is_integer(&p->k->params[s.param])) {
			diag_error(p->d, s.loc, "AOTC_SHAPES: shape argument '%s' must be an integer parameter",
			           name);
			p->errors++;
		} else if (p->k->params[s.param].shape >= 0) {
			error_at(p, s.loc, "AOTC_SHAPES: '%s' appears twice", name);
		} else {
			p->k->params[s.param].shape = n;
		}
		ARENA_PUSH(&p->m->arena, dims, n, cap, s);
	} while (lexer_accept(&p->l, ","));
	if (nerrors(p))
		return;
	if (!expect_end(p))
		return;
	p->k->shapes = dims;
	p->k->nshapes = n;
}

/* features -> expr (',' expr)* */
static void parse_features(aparser *p)
{
	size_t cap = (size_t)p->k->nfeatures;
	do {
		aexpr a;
		if (!parse_aexpr(p, &a))
			return;
		ARENA_PUSH(&p->m->arena, p->k->features, p->k->nfeatures, cap, a);
	} while (lexer_accept(&p->l, ","));
	expect_end(p);
}

static void parse_reference(aparser *p)
{
	if (p->k->reference) {
		diag_error(p->d, p->loc, "AOTC_REFERENCE given twice");
		p->errors++;
		return;
	}
	aotc_loc loc = p->l.tok.loc;
	const char *name = parse_ident(p, "a function name");
	if (name && expect_end(p)) {
		p->k->reference = name;
		p->k->reference_loc = loc;
	}
}

/* extern -> NAME (',' NAME)*: the routine, then the libraries it links with */
static void parse_extern(aparser *p)
{
	extern_fn e = {.loc = p->l.tok.loc};
	e.name = parse_ident(p, "a function name");
	if (!e.name)
		return;
	size_t cap = 0;
	while (lexer_accept(&p->l, ",")) {
		const char *lib = parse_ident(p, "a library name (cublas links -lcublas)");
		if (!lib)
			return;
		ARENA_PUSH(&p->m->arena, e.libs, e.nlibs, cap, lib);
	}
	if (!expect_end(p))
		return;
	size_t ecap = (size_t)p->k->nexterns;
	ARENA_PUSH(&p->m->arena, p->k->externs, p->k->nexterns, ecap, e);
}

/* alternative -> NAME: the primary kernel it competes with */
static void parse_alternative(aparser *p)
{
	if (p->k->alt_of) {
		diag_error(p->d, p->loc, "AOTC_ALTERNATIVE given twice");
		p->errors++;
		return;
	}
	aotc_loc loc = p->l.tok.loc;
	const char *name = parse_ident(p, "the primary kernel's name");
	if (name && expect_end(p)) {
		p->k->alt_of = name;
		p->k->alt_loc = loc;
	}
}

/* type -> IDENT+ ("float", "unsigned int"): the words joined by one space,
 * in the arena; NULL (nothing consumed) when the token is no identifier. */
static const char *parse_type_words(aparser *p)
{
	if (p->l.tok.kind != TOK_IDENT)
		return NULL;
	strbuf sb;
	strbuf_init(&sb);
	while (p->l.tok.kind == TOK_IDENT) {
		if (sb.len)
			strbuf_putc(&sb, ' ');
		strbuf_putn(&sb, p->l.tok.start, p->l.tok.len);
		lexer_next(&p->l);
	}
	const char *type = arena_strdup(&p->m->arena, sb.data);
	strbuf_finish(&sb);
	return type;
}

/* types -> TPARAM (',' TYPE)+, TYPE one or more identifiers ("unsigned int"):
 * the kernel's type parameter and the types it is tuned and dispatched for. */
static void parse_types(aparser *p)
{
	kernel *k = p->k;
	if (k->ntypes) {
		diag_error(p->d, p->loc, "AOTC_TYPES given twice");
		p->errors++;
		return;
	}
	aotc_loc ploc = p->l.tok.loc;
	const char *name = parse_ident(p, "a type template parameter");
	if (!name)
		return;
	int tp = ir_find_tparam(k, name);
	if (tp < 0 || !k->tparams[tp].is_type) {
		diag_error(p->d, ploc, "AOTC_TYPES: '%s' is not a type template parameter of '%s'", name, k->name);
		p->errors++;
		return;
	}
	if (!lexer_is(&p->l, ",")) {
		diag_error(p->d, ploc, "AOTC_TYPES: give '%s' and at least one type (AOTC_TYPES(%s, float, double))",
		           name, name);
		p->errors++;
		return;
	}
	const char **types = NULL;
	int n = 0;
	size_t cap = 0;
	while (lexer_accept(&p->l, ",")) {
		aotc_loc loc = p->l.tok.loc;
		const char *type = parse_type_words(p);
		if (!type) {
			parse_ident(p, "a type");
			return;
		}
		aotc_dtype dt = dtype_of_spelling(type);
		if (dt == DT_OTHER || dt == DT_BOOL) {
			diag_error(p->d, loc, "AOTC_TYPES: '%s' is not a type aotc fills and compares (float, double, __half, __nv_bfloat16, int8_t ... uint64_t, int, unsigned, ...)",
			           type);
			p->errors++;
			continue;
		}
		for (int i = 0; i < n; i++)
			if (dtype_of_spelling(types[i]) == dt) {
				diag_error(p->d, loc, "AOTC_TYPES: '%s' is the type of '%s' (%s) again", type, types[i],
				           dtype_name(dt));
				p->errors++;
			}
		ARENA_PUSH(&p->m->arena, types, n, cap, type);
	}
	if (!expect_end(p) || nerrors(p))
		return;
	k->type_tparam = tp;
	k->types = types;
	k->ntypes = n;
	claim(p->m, k, name);
}

/* A tolerance as AOTC_TOLERANCE takes it: a finite number >= 0. */
static bool parse_tolerance_value(aparser *p, double *t)
{
	aotc_loc loc = p->l.tok.loc;
	if (!parse_number(p, t))
		return false;
	if (!(*t >= 0) || isinf(*t)) {
		diag_error(p->d, loc, "AOTC_TOLERANCE must be a finite number >= 0");
		p->errors++;
		return false;
	}
	return true;
}

/* tolerance -> NUMBER | [NUMBER ','] TYPE '=' NUMBER (',' TYPE '=' NUMBER)*:
 * one tolerance for every type, and with AOTC_TYPES one per type (TYPE one
 * of them, spelt any way that names its tag). The kernel of one type keeps
 * its own, else the one for every type, else none (the element type's
 * default). */
static void parse_tolerance(aparser *p)
{
	kernel *k = p->k;
	bool have_all = false, have_mine = false;
	double all = 0, mine = 0;
	bool seen[DT_F64 + 1] = {false}; /* per element type: given as TYPE = value */
	do {
		aotc_loc loc = p->l.tok.loc;
		if (p->l.tok.kind != TOK_IDENT) {
			if (have_all) {
				diag_error(p->d, loc, "AOTC_TOLERANCE: one tolerance for every type at most; give the others as TYPE = value");
				p->errors++;
				return;
			}
			if (!parse_tolerance_value(p, &all))
				return;
			have_all = true;
			continue;
		}
		const char *type = parse_type_words(p);
		double t;
		if (!expect(p, "=") || !parse_tolerance_value(p, &t))
			return;
		if (!k->ntypes) {
			diag_error(p->d, loc, "AOTC_TOLERANCE: '%s = ...' is for a kernel with AOTC_TYPES; give one number", type);
			p->errors++;
			return;
		}
		aotc_dtype dt = dtype_of_spelling(type);
		bool listed = false;
		for (int i = 0; i < k->ntypes && dt != DT_OTHER; i++)
			listed |= dtype_of_spelling(k->types[i]) == dt;
		if (!listed) {
			diag_error(p->d, loc, "AOTC_TOLERANCE: '%s' is not one of the types of AOTC_TYPES", type);
			p->errors++;
			return;
		}
		if (seen[dt]) {
			diag_error(p->d, loc, "AOTC_TOLERANCE: '%s' given twice", type);
			p->errors++;
			return;
		}
		seen[dt] = true;
		if (k->type_tag && strcmp(dtype_name(dt), k->type_tag) == 0) {
			have_mine = true;
			mine = t;
		}
	} while (lexer_accept(&p->l, ","));
	if (!expect_end(p) || nerrors(p))
		return;
	if (k->has_tolerance) {
		diag_error(p->d, p->loc, "AOTC_TOLERANCE given twice");
		p->errors++;
		return;
	}
	k->has_tolerance = have_mine || have_all;
	k->tolerance = have_mine ? mine : all;
}

/* metric -> UNIT ',' expr: UNIT is FLOP or B, the count of one launch */
static void parse_metric(aparser *p)
{
	kernel *k = p->k;
	aotc_loc uloc = p->l.tok.loc;
	const char *unit = parse_ident(p, "a unit (FLOP or B)");
	if (!unit)
		return;
	metric_unit u = metric_unit_from_name(unit);
	if (u == METRIC_NONE) {
		error_at(p, uloc, "AOTC_METRIC: unknown unit '%s' (FLOP or B)", unit);
		return;
	}
	aexpr a;
	if (!expect(p, ",") || !parse_aexpr(p, &a) || !expect_end(p))
		return;
	if (k->metric != METRIC_NONE) {
		diag_error(p->d, p->loc, "AOTC_METRIC given twice");
		p->errors++;
		return;
	}
	k->metric = u;
	k->metric_count = a;
}

int ir_annotate(aotc_module *m, kernel *k, const char *kind, const char *text,
                size_t len, aotc_loc loc, diags *d)
{
	static const struct {
		const char *kind, *macro;
	} kinds[] = {
		{"tune", "AOTC_TUNE"},         {"require", "AOTC_REQUIRE"},
		{"valid_if", "AOTC_VALID_IF"}, {"grid", "AOTC_GRID"},
		{"block", "AOTC_BLOCK"},       {"smem", "AOTC_SMEM"},
		{"buffer", "AOTC_BUFFER"},     {"value", "AOTC_VALUE"},
		{"shapes", "AOTC_SHAPES"},     {"features", "AOTC_FEATURES"},
		{"reference", "AOTC_REFERENCE"}, {"tolerance", "AOTC_TOLERANCE"},
		{"extern", "AOTC_EXTERN"},     {"types", "AOTC_TYPES"},
		{"alternative", "AOTC_ALTERNATIVE"}, {"metric", "AOTC_METRIC"},
	};
	size_t i = 0;
	while (i < COUNTOF(kinds) && strcmp(kinds[i].kind, kind) != 0)
		i++;
	if (i == COUNTOF(kinds)) {
		diag_error(d, loc, "unknown annotation 'aotc.%s'", kind);
		return 1;
	}
	aparser p = {.m = m, .k = k, .d = d, .macro = kinds[i].macro, .loc = loc, .text = text};
	lexer_init(&p.l, &m->arena, d, text, len, loc);
	if (at_end(&p)) {
		diag_error(d, loc, "%s needs arguments", p.macro);
		claim(m, k, arena_printf(&m->arena, "#%s", kind));
		return 1;
	}
	switch (i) {
	case 0: parse_tune(&p); break;
	case 1: parse_constraint(&p, &k->requires, &k->nrequires); break;
	case 2: parse_constraint(&p, &k->valid_ifs, &k->nvalid_ifs); break;
	case 3: parse_launch(&p, &k->grid); break;
	case 4: parse_launch(&p, &k->block); break;
	case 5: parse_smem(&p, &k->smem); break;
	case 6: parse_buffer(&p); break;
	case 7: parse_value(&p); break;
	case 8: parse_shapes(&p); break;
	case 9: parse_features(&p); break;
	case 10: parse_reference(&p); break;
	case 11: parse_tolerance(&p); break;
	case 12: parse_extern(&p); break;
	case 13: parse_types(&p); break;
	case 14: parse_alternative(&p); break;
	case 15: parse_metric(&p); break;
	}
	if (nerrors(&p))
		claim(m, k, arena_printf(&m->arena, "#%s", kind));
	return nerrors(&p);
}

/* ---- Whole-kernel checks ------------------------------------------------ */

typedef struct scope_ctx {
	aotc_module *m;
	kernel *k;
	diags *d;
	const char *what;   /* "AOTC_REQUIRE", for messages */
	bool tunables, params, shapes_only;
	bool reference;     /* the reference's own annotations: its parameter names */
	bool per_variant;   /* evaluated per variant: may use per-variant values */
} scope_ctx;

/* A defaulted, untuned template parameter whose default is a constant
 * (`int PAD = 1`) may be used in expressions. */
static bool tparam_constant(aotc_module *m, const tparam *tp, int64_t *value)
{
	if (tp->is_type || tp->tunable >= 0 || !tp->default_text)
		return false;
	arena a;
	arena_init(&a);
	diags quiet;
	diags_init(&quiet);
	quiet.out = NULL; /* a default like `TILE * 2` is simply not a constant */
	expr *e = expr_parse_string(&a, &quiet, tp->default_text, strlen(tp->default_text),
	                            tp->loc);
	const_scope_ctx cs = {m, NULL, &quiet, "default"};
	expr_scope consts = {lookup_const_only, &cs, suggest_const};
	bool ok = e && expr_resolve(e, &consts, &quiet) == 0 &&
	          expr_eval(e, &(eval_env){0}, value) == EVAL_OK;
	diags_finish(&quiet);
	arena_finish(&a);
	return ok;
}

static bool lookup(void *ctx, const char *name, aotc_loc loc, name_kind *kind,
                   int *index, int64_t *value, bool *diagnosed)
{
	scope_ctx *s = ctx;
	int t = ir_find_tunable(s->k, name);
	if (t >= 0) {
		if (!s->tunables) {
			diag_error(s->d, loc, "%s cannot use tunable '%s'", s->what, name);
			*diagnosed = true;
			return false;
		}
		*kind = NAME_TUNABLE;
		*index = t;
		return true;
	}
	int p = -1;
	for (int i = 0; s->reference && s->k->ref_param_names && i < ir_kernel_nparams(s->k); i++)
		if (strcmp(s->k->ref_param_names[i], name) == 0)
			p = i;
	if (p < 0)
		p = ir_find_param(s->k, name);
	if (p >= 0) {
		const param *pp = &s->k->params[p];
		if (!ir_param_is_integer(pp)) {
			diag_error(s->d, loc, "%s: parameter '%s' is not an integer", s->what, name);
		} else if (!s->params) {
			diag_error(s->d, loc, "%s is over tunables only; '%s' is a parameter (use AOTC_VALID_IF for shape conditions)",
			           s->what, name);
		} else if (s->shapes_only && pp->shape < 0) {
			diag_error(s->d, loc, "%s: '%s' is not a shape argument (see AOTC_SHAPES)",
			           s->what, name);
		} else if (!s->per_variant && ir_param_per_variant(s->k, p)) {
			strbuf e;
			strbuf_init(&e);
			expr_print(&e, s->k->values[pp->value].iexpr.e);
			diag_error(s->d, loc, "%s: '%s' differs per variant (its AOTC_VALUE uses a tunable) and this expression is evaluated per shape; write '%s' instead",
			           s->what, name, e.data);
			strbuf_finish(&e);
		} else {
			*kind = NAME_PARAM;
			*index = p;
			return true;
		}
		*diagnosed = true;
		return false;
	}
	int tp = ir_find_tparam(s->k, name);
	if (tp >= 0 && tparam_constant(s->m, &s->k->tparams[tp], value)) {
		*kind = NAME_CONST;
		return true;
	}
	/* Tunables, parameters and template parameters shadow the source's
	 * constants of the same name. */
	if (tp < 0 && !claimed(s->k, name)) {
		if (lookup_source_const(s->m, s->d, s->what, name, loc, value, diagnosed)) {
			*kind = NAME_CONST;
			return true;
		}
		if (*diagnosed)
			return false;
	}
	if (claimed(s->k, name)) {
		*diagnosed = true; /* its annotation already failed */
		return false;
	}
	if (tp >= 0) {
		/* Without a default it has its own error already. */
		if (s->k->tparams[tp].default_text)
			diag_error(s->d, loc, "%s: template parameter '%s' is not tuned and its default is not a constant",
			           s->what, name);
		*diagnosed = true;
	}
	return false;
}

/* The names lookup() takes, for "did you mean". */
static void suggest(void *ctx, nearest *n)
{
	scope_ctx *s = ctx;
	if (s->tunables)
		for (int i = 0; i < s->k->ntunables; i++)
			nearest_offer(n, s->k->tunables[i].name);
	if (s->params)
		for (int i = 0; i < s->k->nparams; i++)
			if (ir_param_is_integer(&s->k->params[i]))
				nearest_offer(n, s->reference && s->k->ref_param_names && i < ir_kernel_nparams(s->k)
				                 ? s->k->ref_param_names[i] : s->k->params[i].name);
	for (int i = 0; i < s->k->ntparams; i++)
		nearest_offer(n, s->k->tparams[i].name);
	ir_offer_consts(s->m, n);
}

/* per_variant: a is evaluated with the variant's tunables and per-variant
 * values (the kernel's own launch); everything else is per shape. */
static int resolve(aotc_module *m, kernel *k, diags *d, aexpr *a, const char *what,
                   bool tunables, bool params, bool shapes_only, bool reference,
                   bool per_variant)
{
	if (!a->e)
		return 0;
	scope_ctx ctx = {m, k, d, what, tunables, params, shapes_only, reference, per_variant};
	expr_scope scope = {lookup, &ctx, suggest};
	return expr_resolve(a->e, &scope, d);
}

static void mark_used(void *ctx, const expr *name)
{
	bool *used = ctx;
	if (name->name_kind == NAME_TUNABLE)
		used[name->index] = true;
}

/* Template tunables in template-parameter order, then launch-only ones in
 * annotation order: the "declaration order" of variant_params. */
static void order_tunables(aotc_module *m, kernel *k)
{
	if (k->ntunables == 0)
		return;
	tunable *sorted = arena_alloc(&m->arena, (size_t)k->ntunables * sizeof *sorted);
	int n = 0;
	for (int i = 0; i < k->ntparams; i++) {
		k->tparams[i].tunable = -1;
		int t = ir_find_tunable(k, k->tparams[i].name);
		if (t >= 0 && !k->tparams[i].is_type) {
			sorted[n] = k->tunables[t];
			sorted[n].tparam = i;
			k->tparams[i].tunable = n++;
		}
	}
	for (int t = 0; t < k->ntunables; t++) {
		int tp = ir_find_tparam(k, k->tunables[t].name);
		if (tp < 0 || k->tparams[tp].is_type) {
			sorted[n] = k->tunables[t];
			sorted[n++].tparam = -1;
		}
	}
	k->tunables = sorted;
}

static int check_launch(aotc_module *m, kernel *k, diags *d, launch *g, const char *what,
                        bool tunables, bool reference)
{
	int errors = 0;
	for (int i = 0; i < g->ndims; i++)
		errors += resolve(m, k, d, &g->dims[i], what, tunables, true, false, reference, !reference);
	return errors;
}

/* An extern's name is a C identifier (it reaches the database and
 * generated callers), once per kernel, and neither the kernel nor the
 * reference: each is a separate contender, checked against the reference. */
static int check_externs(const kernel *k, diags *d)
{
	int errors = 0;
	for (int i = 0; i < k->nexterns; i++) {
		const extern_fn *e = &k->externs[i];
		const char *why = NULL;
		if (!ir_is_identifier(e->name))
			why = "is not a C identifier";
		else if (strcmp(e->name, k->name) == 0)
			why = "is the kernel itself; name a routine that computes the same";
		else if (k->reference && strcmp(e->name, k->reference) == 0)
			why = "is the reference; an extern is checked against the reference, so it must be another function";
		for (int j = 0; j < i && !why; j++)
			if (strcmp(k->externs[j].name, e->name) == 0)
				why = "is given twice";
		for (int l = 0; l < e->nlibs && !why; l++)
			if (!ir_is_identifier(e->libs[l]))
				why = "has a library that is not a C identifier";
		if (why) {
			diag_error(d, e->loc, "AOTC_EXTERN: '%s' %s", e->name, why);
			errors++;
		}
	}
	return errors;
}

static void mark_param(void *ctx, const expr *name)
{
	bool *used = ctx;
	if (name->name_kind == NAME_PARAM)
		used[name->index] = true;
}

/* A launcher-only shape argument that no expression uses is nearly always a
 * misspelt parameter name. */
static int check_launcher_only(const kernel *k, diags *d)
{
	int errors = 0;
	if (ir_kernel_nparams(k) == k->nparams)
		return 0;
	bool used[k->nparams + 1];
	memset(used, 0, sizeof used);
	const launch *ls[] = {&k->grid, &k->block, &k->ref_grid, &k->ref_block};
	for (size_t g = 0; g < COUNTOF(ls); g++)
		for (int i = 0; i < ls[g]->ndims; i++)
			expr_visit_names(ls[g]->dims[i].e, mark_param, used);
	const aexpr *lists[] = {k->valid_ifs, k->features};
	const int counts[] = {k->nvalid_ifs, k->nfeatures};
	for (size_t l = 0; l < COUNTOF(lists); l++)
		for (int i = 0; i < counts[l]; i++)
			expr_visit_names(lists[l][i].e, mark_param, used);
	if (k->smem.e)
		expr_visit_names(k->smem.e, mark_param, used);
	if (k->ref_smem.e)
		expr_visit_names(k->ref_smem.e, mark_param, used);
	for (int i = 0; i < k->nbuffers; i++)
		expr_visit_names(k->buffers[i].count.e, mark_param, used);
	for (int i = 0; i < k->nvalues; i++)
		if (k->values[i].iexpr.e)
			expr_visit_names(k->values[i].iexpr.e, mark_param, used);
	for (int i = ir_kernel_nparams(k); i < k->nparams; i++)
		if (!used[i]) {
			diag_error(d, k->params[i].loc, "AOTC_SHAPES: '%s' is not a parameter of '%s' and no annotation uses it (a launcher-only shape argument must size the grid, a buffer or an AOTC_VALUE)",
			           k->params[i].name, k->name);
			errors++;
		}
	return errors;
}

int ir_check(aotc_module *m, kernel *k, diags *d)
{
	int errors = 0;
	order_tunables(m, k);

	for (int i = 0; i < k->ntparams; i++) {
		tparam *tp = &k->tparams[i];
		int t = ir_find_tunable(k, tp->name);
		if (tp->is_type && t >= 0) {
			diag_error(d, k->tunables[t].loc, "AOTC_TUNE: '%s' is a type parameter; aotc tunes integer and bool parameters",
			           tp->name);
			errors++;
		} else if (tp->is_type && !tp->default_text && !claimed(k, tp->name)) {
			diag_error(d, tp->loc, "type template parameter '%s' needs a default or AOTC_TYPES (aotc tunes integer and bool parameters)",
			           tp->name);
			errors++;
		} else if (!tp->is_type && t < 0 && !tp->default_text && !claimed(k, tp->name)) {
			diag_error(d, tp->loc, "template parameter '%s' has no AOTC_TUNE and no default",
			           tp->name);
			errors++;
		}
	}

	/* An alternative may be one plain kernel (kernel2 of kernel1...N). */
	if (k->ntunables == 0 && !claimed(k, "#tune") && !k->alt_of) {
		diag_error(d, k->loc, "kernel '%s' has no tunables (add AOTC_TUNE)", k->name);
		errors++;
	}

	/* Values first: whether a parameter is per variant (its AOTC_VALUE
	 * uses a tunable) decides where else it may be used. */
	for (int i = 0; i < k->nvalues; i++)
		errors += resolve(m, k, d, &k->values[i].iexpr, "AOTC_VALUE", true, true, true, false, false);
	for (int i = 0; i < k->nrequires; i++)
		errors += resolve(m, k, d, &k->requires[i], "AOTC_REQUIRE", true, false, false, false, false);
	for (int i = 0; i < k->nvalid_ifs; i++)
		errors += resolve(m, k, d, &k->valid_ifs[i], "AOTC_VALID_IF", true, true, false, false, false);
	errors += check_launch(m, k, d, &k->grid, "AOTC_GRID", true, false);
	errors += check_launch(m, k, d, &k->block, "AOTC_BLOCK", true, false);
	errors += resolve(m, k, d, &k->smem, "AOTC_SMEM", true, true, false, false, true);
	errors += check_launch(m, k, d, &k->ref_grid, "AOTC_GRID of the reference", false, true);
	errors += check_launch(m, k, d, &k->ref_block, "AOTC_BLOCK of the reference", false, true);
	errors += resolve(m, k, d, &k->ref_smem, "AOTC_SMEM of the reference", false, true, false, true, false);
	/* Outputs are compared with the reference element by element, so their
	 * size cannot depend on the variant; inputs (per-block tables) may. */
	for (int i = 0; i < k->nbuffers; i++)
		errors += resolve(m, k, d, &k->buffers[i].count,
		                  k->buffers[i].role == ROLE_IN ? "AOTC_BUFFER"
		                                                : "AOTC_BUFFER of an output",
		                  k->buffers[i].role == ROLE_IN, true, false, false, false);
	for (int i = 0; i < k->nfeatures; i++)
		errors += resolve(m, k, d, &k->features[i], "AOTC_FEATURES", false, true, true, false, false);
	/* Per variant: a count over the tunables is the kernel's own variants'
	 * (ir_metric_count). */
	errors += resolve(m, k, d, &k->metric_count, "AOTC_METRIC", true, true, false, false, true);
	errors += check_externs(k, d);

	/* A launch-only tunable nothing launches with is almost always a
	 * misspelt template parameter. */
	bool *used = arena_alloc(&m->arena, (size_t)k->ntunables + 1);
	const launch *launches[] = {&k->grid, &k->block};
	for (size_t g = 0; g < COUNTOF(launches); g++)
		for (int i = 0; i < launches[g]->ndims; i++)
			expr_visit_names(launches[g]->dims[i].e, mark_used, used);
	if (k->smem.e)
		expr_visit_names(k->smem.e, mark_used, used);
	/* ... or passes to the kernel as an argument (AOTC_VALUE(block_size, BLOCK)). */
	for (int i = 0; i < k->nvalues; i++)
		if (k->values[i].iexpr.e)
			expr_visit_names(k->values[i].iexpr.e, mark_used, used);
	for (int t = 0; t < k->ntunables; t++) {
		if (k->tunables[t].tparam >= 0 || used[t])
			continue;
		if (!k->is_template && !k->is_global)
			diag_error(d, k->tunables[t].loc, "'%s' is not a template parameter of '%s' and no AOTC_VALUE passes it (a host kernel has no launch expressions)",
			           k->tunables[t].name, k->name);
		else
			diag_error(d, k->tunables[t].loc, "'%s' is not a template parameter of '%s' and no launch expression or AOTC_VALUE uses it",
			           k->tunables[t].name, k->name);
		errors++;
	}
	errors += check_launcher_only(k, d);

	/* A routine has no tunables to compute a per-variant value with. */
	for (int i = 0; i < k->nexterns && ir_has_per_variant(k); i++) {
		for (int j = 0; j < k->nparams; j++)
			if (ir_param_per_variant(k, j)) {
				diag_error(d, k->externs[i].loc, "AOTC_EXTERN: '%s' would take '%s', whose AOTC_VALUE uses a tunable; a routine has no tunables",
				           k->externs[i].name, k->params[j].name);
				break;
			}
		errors++;
	}

	if (k->is_global) {
		if (!k->grid.ndims && !claimed(k, "#grid")) {
			diag_error(d, k->loc, "kernel '%s' needs AOTC_GRID", k->name);
			errors++;
		}
		if (!k->block.ndims && !claimed(k, "#block")) {
			diag_error(d, k->loc, "kernel '%s' needs AOTC_BLOCK", k->name);
			errors++;
		}
	} else {
		const launch *gs[] = {&k->grid, &k->block};
		for (size_t g = 0; g < COUNTOF(gs); g++)
			if (gs[g]->ndims) {
				diag_error(d, gs[g]->loc, "%s does not apply to a host %s",
				           g ? "AOTC_BLOCK" : "AOTC_GRID", k->host_launcher ? "launcher" : "kernel");
				errors++;
			}
		if (k->smem.e) {
			diag_error(d, k->smem.loc, "AOTC_SMEM does not apply to a host %s",
			           k->host_launcher ? "launcher" : "kernel");
			errors++;
		}
	}

	for (int i = 0; i < k->nparams; i++) {
		param *p = &k->params[i];
		if (claimed(k, p->name) && p->buffer < 0 && p->value < 0 && p->shape < 0)
			continue;
		if (p->shape >= 0 && p->value >= 0) {
			diag_error(d, k->values[p->value].loc, "AOTC_VALUE: '%s' is already a shape argument",
			           p->name);
			errors++;
		} else if (p->is_pointer && p->buffer < 0) {
			diag_error(d, p->loc, "pointer parameter '%s' needs AOTC_BUFFER", p->name);
			errors++;
		} else if (!p->is_pointer && dtype_is_integer(p->dtype) && p->shape < 0 &&
		           p->value < 0) {
			diag_error(d, p->loc, "integer parameter '%s' needs AOTC_SHAPES or AOTC_VALUE",
			           p->name);
			errors++;
		} else if (!p->is_pointer && !dtype_is_integer(p->dtype) && p->value < 0) {
			diag_error(d, p->loc, "parameter '%s' needs AOTC_VALUE", p->name);
			errors++;
		}
	}
	return errors;
}
