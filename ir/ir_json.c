/* IR <-> JSON. Expressions travel as their source text and position and are
 * re-parsed on the way back, so a read IR is the parsed IR: same trees,
 * same positions, same diagnostics. */
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "ir.h"
#include "util.h"

static const char *role_names[] = {"in", "out", "inout"};
static const char *init_names[] = {"default", "uniform", "zero", "const"};
static const char *gen_names[] = {"pow2", "range", "list", "geom", "logrand"};

/* ---- Writing ------------------------------------------------------------ */

static json_t *jloc(aotc_loc l)
{
	return json_sprintf("%s:%d:%d", l.file ? l.file : "", l.line, l.col);
}

static json_t *jexpr(const aexpr *a)
{
	if (!a->e)
		return json_null();
	return json_pack("{s:s, s:o}", "text", a->text, "loc", jloc(a->loc));
}

static json_t *jexprs(const aexpr *list, int n)
{
	json_t *arr = json_array();
	for (int i = 0; i < n; i++)
		json_array_append_new(arr, jexpr(&list[i]));
	return arr;
}

static json_t *jlaunch(const launch *g)
{
	if (!g->ndims)
		return json_null();
	return json_pack("{s:o, s:o}", "loc", jloc(g->loc), "dims", jexprs(g->dims, g->ndims));
}

static json_t *jints(const int64_t *v, int n)
{
	json_t *arr = json_array();
	for (int i = 0; i < n; i++)
		json_array_append_new(arr, json_integer(v[i]));
	return arr;
}

static json_t *jtparams(const kernel *k)
{
	json_t *tps = json_array();
	for (int i = 0; i < k->ntparams; i++) {
		const tparam *t = &k->tparams[i];
		json_array_append_new(tps, json_pack("{s:s, s:o, s:b, s:o, s:o, s:o}",
			"name", t->name, "loc", jloc(t->loc), "is_type", t->is_type,
			"type", t->type ? json_string(t->type) : json_null(),
			"default", t->default_text ? json_string(t->default_text) : json_null(),
			"tunable", t->tunable >= 0 ? json_integer(t->tunable) : json_null()));
	}
	return tps;
}

static json_t *jparams(const kernel *k)
{
	json_t *ps = json_array();
	for (int i = 0; i < k->nparams; i++) {
		const param *p = &k->params[i];
		const char *role = p->buffer >= 0 ? "buffer" : p->value >= 0 ? "value"
		                   : p->shape >= 0 ? "shape" : "none";
		json_t *jp = json_pack("{s:s, s:o, s:s, s:b, s:b, s:s, s:i, s:s, s:s}",
			"name", p->name, "loc", jloc(p->loc), "type", p->type,
			"pointer", p->is_pointer, "const", p->is_const,
			"dtype", dtype_name(p->dtype), "lanes", p->vec, "elem_type", p->elem_type,
			"accounted_by", role);
		if (p->elem_canon)
			json_object_set_new(jp, "elem_canon", json_string(p->elem_canon));
		if (p->launcher_only)
			json_object_set_new(jp, "launcher_only", json_true());
		json_array_append_new(ps, jp);
	}
	return ps;
}

static json_t *jtunables(const kernel *k)
{
	json_t *ts = json_array();
	for (int i = 0; i < k->ntunables; i++) {
		const tunable *t = &k->tunables[i];
		json_array_append_new(ts, json_pack("{s:s, s:o, s:o, s:b, s:o}",
			"name", t->name, "loc", jloc(t->loc),
			"template_param", t->tparam >= 0 ? json_integer(t->tparam) : json_null(),
			"bool", t->is_bool, "values", jints(t->values, t->nvalues)));
	}
	return ts;
}

static json_t *jbuffers(const kernel *k)
{
	json_t *bs = json_array();
	for (int i = 0; i < k->nbuffers; i++) {
		const buffer *b = &k->buffers[i];
		json_t *init = json_pack("{s:s}", "kind", init_names[b->init.kind]);
		if (b->init.kind == INIT_UNIFORM) {
			json_object_set_new(init, "lo", json_real(b->init.lo));
			json_object_set_new(init, "hi", json_real(b->init.hi));
		} else if (b->init.kind == INIT_CONST) {
			json_object_set_new(init, "value", json_real(b->init.value));
		}
		json_array_append_new(bs, json_pack("{s:s, s:o, s:o, s:s, s:o}",
			"param", k->params[b->param].name, "loc", jloc(b->loc),
			"count", jexpr(&b->count), "role", role_names[b->role], "init", init));
	}
	return bs;
}

static json_t *jvalues(const kernel *k)
{
	json_t *vs = json_array();
	for (int i = 0; i < k->nvalues; i++) {
		const value *v = &k->values[i];
		json_t *jv = json_pack("{s:s, s:o}", "param", k->params[v->param].name,
		                       "loc", jloc(v->loc));
		if (v->is_float)
			json_object_set_new(jv, "float", json_real(v->fvalue));
		else
			json_object_set_new(jv, "expr", jexpr(&v->iexpr));
		json_array_append_new(vs, jv);
	}
	return vs;
}

static json_t *jshapes(const kernel *k)
{
	json_t *ss = json_array();
	for (int i = 0; i < k->nshapes; i++) {
		const shape_dim *s = &k->shapes[i];
		json_t *js = json_pack("{s:s, s:o, s:s}", "param", k->params[s->param].name,
		                       "loc", jloc(s->loc), "gen", gen_names[s->gen]);
		if (s->gen == GEN_LIST) {
			json_object_set_new(js, "values", jints(s->list, s->nlist));
		} else {
			json_object_set_new(js, "lo", json_integer(s->lo));
			json_object_set_new(js, "hi", json_integer(s->hi));
			if (s->gen == GEN_RANGE)
				json_object_set_new(js, "step", json_integer(s->step));
			if (s->gen == GEN_GEOM || s->gen == GEN_LOGRAND)
				json_object_set_new(js, "n", json_integer(s->count));
		}
		json_array_append_new(ss, js);
	}
	return ss;
}

static json_t *jreference(const kernel *k)
{
	if (!k->reference)
		return json_null();
	json_t *ref = json_pack("{s:s, s:o, s:o, s:o, s:o}",
		"name", k->reference, "loc", jloc(k->reference_loc),
		"grid", jlaunch(&k->ref_grid), "block", jlaunch(&k->ref_block),
		"smem", jexpr(&k->ref_smem));
	if (k->ref_on_host)
		json_object_set_new(ref, "host", json_true());
	if (k->ref_template)
		json_object_set_new(ref, "template", json_true());
	if (k->ref_param_names) {
		json_t *names = json_array();
		for (int i = 0; i < ir_kernel_nparams(k); i++)
			json_array_append_new(names, json_string(k->ref_param_names[i]));
		json_object_set_new(ref, "param_names", names);
	}
	return ref;
}

static json_t *jexterns(const kernel *k)
{
	json_t *es = json_array();
	for (int i = 0; i < k->nexterns; i++) {
		const extern_fn *e = &k->externs[i];
		json_t *libs = json_array();
		for (int l = 0; l < e->nlibs; l++)
			json_array_append_new(libs, json_string(e->libs[l]));
		json_t *eo = json_pack("{s:s, s:o, s:o}", "name", e->name, "loc", jloc(e->loc), "libs", libs);
		if (e->code[0])
			json_object_set_new(eo, "code", json_string(e->code));
		json_array_append_new(es, eo);
	}
	return es;
}

/* A kernel's object, its fields in the order every IR file has them. */
static json_t *jkernel(const kernel *k)
{
	json_t *o = json_object();
	json_object_set_new(o, "name", json_string(k->name));
	json_object_set_new(o, "loc", jloc(k->loc));
	json_object_set_new(o, "global", json_boolean(k->is_global));
	json_object_set_new(o, "template", json_boolean(k->is_template));
	json_object_set_new(o, "template_params", jtparams(k));
	json_object_set_new(o, "params", jparams(k));
	json_object_set_new(o, "tunables", jtunables(k));
	json_object_set_new(o, "require", jexprs(k->requires, k->nrequires));
	json_object_set_new(o, "valid_if", jexprs(k->valid_ifs, k->nvalid_ifs));
	json_object_set_new(o, "grid", jlaunch(&k->grid));
	json_object_set_new(o, "block", jlaunch(&k->block));
	json_object_set_new(o, "smem", jexpr(&k->smem));
	json_object_set_new(o, "buffers", jbuffers(k));
	json_object_set_new(o, "values", jvalues(k));
	json_object_set_new(o, "shapes", jshapes(k));
	json_object_set_new(o, "features", jexprs(k->features, k->nfeatures));
	json_object_set_new(o, "reference", jreference(k));
	/* Only where there are some: IR without externs reads and writes as before. */
	if (k->nexterns)
		json_object_set_new(o, "externs", jexterns(k));
	json_object_set_new(o, "tolerance", k->has_tolerance ? json_real(k->tolerance) : json_null());
	/* Only where there is one: other IR reads and writes as before. */
	if (k->metric != METRIC_NONE)
		json_object_set_new(o, "metric", json_pack("{s:s, s:o}", "unit", metric_unit_name(k->metric),
		                                            "count", jexpr(&k->metric_count)));
	if (k->code[0])
		json_object_set_new(o, "code", json_string(k->code));
	/* Only for one type of AOTC_TYPES: other IR reads and writes as before. */
	if (k->type_tag)
		json_object_set_new(o, "type_key", json_pack("{s:s, s:s}", "param", k->tparams[k->type_tparam].name,
		                                             "tag", k->type_tag));
	/* Only where there are some: other IR reads and writes as before. */
	if (k->alt_of) {
		json_object_set_new(o, "alternative_of", json_pack("{s:s, s:o}", "name", k->alt_of, "loc",
		                                                   jloc(k->alt_loc)));
		json_object_set_new(o, "host_launcher", json_boolean(k->host_launcher));
	}
	if (k->nalts) {
		json_t *as = json_array();
		for (int i = 0; i < k->nalts; i++)
			json_array_append_new(as, jkernel(&k->alts[i]));
		json_object_set_new(o, "alternatives", as);
	}
	return o;
}

char *ir_to_json(const aotc_module *m)
{
	json_t *ks = json_array();
	for (int i = 0; i < m->nkernels; i++)
		json_array_append_new(ks, jkernel(&m->kernels[i]));
	json_t *root = json_pack("{s:i, s:s, s:s, s:s}", "aotc_ir", AOTC_IR_VERSION,
	                         "aotc_version", AOTC_VERSION_STRING, "file", m->file,
	                         "source_hash", m->source_hash);
	/* Only where expressions use some: IR without constants reads as before. */
	if (m->nconsts) {
		json_t *cs = json_array();
		for (int i = 0; i < m->nconsts; i++) {
			const source_const *c = &m->consts[i];
			json_array_append_new(cs, json_pack("{s:s, s:s, s:I, s:o}", "name", c->name,
				"kind", const_kind_name(c->kind), "value", (json_int_t)c->value,
				"loc", jloc(c->loc)));
		}
		json_object_set_new(root, "constants", cs);
	}
	/* Only where there is some: other IR reads and writes as before. */
	if (m->nhost_code) {
		json_t *hc = json_array();
		for (int i = 0; i < m->nhost_code; i++)
			json_array_append_new(hc, json_pack("[I, I]", (json_int_t)m->host_code[i][0],
			                                    (json_int_t)m->host_code[i][1]));
		json_object_set_new(root, "host_code", hc);
	}
	json_object_set_new(root, "kernels", ks);
	char *s = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17));
	json_decref(root);
	if (!s)
		die("json_dumps failed");
	/* Jansson's allocator is malloc, so callers free() it; add the newline
	 * files end with. */
	size_t n = strlen(s);
	char *r = xmalloc(n + 2);
	memcpy(r, s, n);
	r[n] = '\n';
	r[n + 1] = 0;
	free(s);
	return r;
}

/* ---- Reading ------------------------------------------------------------ */

typedef struct reader {
	aotc_module *m;
	diags *d;
	const char *path;
	const char *where;  /* "kernels[0].tunables[2]", for messages */
	int errors;
} reader;

static void bad(reader *r, const char *what)
{
	diag_error(r->d, (aotc_loc){r->path, 0, 0}, "invalid IR: %s%s%s", r->where,
	           r->where[0] ? ": " : "", what);
	r->errors++;
}

static void mistyped(reader *r, const char *key)
{
	char msg[128];
	snprintf(msg, sizeof msg, "missing or mistyped '%s'", key);
	bad(r, msg);
}

static const json_t *field(reader *r, const json_t *o, const char *key, json_type type,
                           bool nullable)
{
	const json_t *v = json_object_get(o, key);
	if ((!v || json_is_null(v)) && nullable)
		return NULL;
	if (!v || json_typeof(v) != type) {
		mistyped(r, key);
		return NULL;
	}
	return v;
}

static const char *str(reader *r, const json_t *o, const char *key, bool nullable)
{
	const json_t *v = field(r, o, key, JSON_STRING, nullable);
	return v ? arena_strdup(&r->m->arena, json_string_value(v)) : NULL;
}

/* s as a message quotes it: at most 60 bytes, control characters as '?'. */
static const char *shown(reader *r, const char *s)
{
	size_t n = strlen(s);
	char *c = arena_strndup(&r->m->arena, s, n > 60 ? 60 : n);
	for (char *p = c; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
	return n > 60 ? arena_printf(&r->m->arena, "%s...", c) : c;
}

static bool no_controls(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return false;
	return true;
}

/* Text that later stages write into code or comments (names, types,
 * template arguments): refused, naming the field, unless ok. what is the
 * field as the message names it ("params[3].type"), expect what it must
 * be. NULL (absent, or already diagnosed) passes. */
static void check_text(reader *r, const char *what, const char *s, bool ok, const char *expect)
{
	if (!s || ok)
		return;
	bad(r, arena_printf(&r->m->arena, "%s '%s' is not %s", what, shown(r, s), expect));
}

/* An optional "code" (kernel.code): 32 lowercase hex digits into out. */
static void rcode(reader *r, const json_t *o, const char *what, char out[33])
{
	const json_t *c = json_object_get(o, "code");
	if (!c)
		return;
	if (!json_is_string(c) || !ir_source_hash_ok(json_string_value(c))) {
		bad(r, arena_printf(&r->m->arena, "%s.code must be 32 lowercase hex digits", what));
		return;
	}
	memcpy(out, json_string_value(c), 33);
}

static const char type_expect[] =
	"a type aotc writes into emitted code (const/volatile, a scalar type or a name, "
	"'*' with const, volatile or __restrict)";

static bool boolean(reader *r, const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);
	if (!json_is_boolean(v))
		mistyped(r, key);
	return json_is_true(v);
}

static int64_t integer(reader *r, const json_t *o, const char *key)
{
	const json_t *v = field(r, o, key, JSON_INTEGER, false);
	return v ? json_integer_value(v) : 0;
}

static double number(reader *r, const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);
	if (!json_is_number(v)) {
		mistyped(r, key);
		return 0;
	}
	return json_number_value(v);
}

static aotc_loc rloc(reader *r, const json_t *o, const char *key)
{
	aotc_loc l = {r->m->file, 0, 0};
	const char *s = str(r, o, key, false);
	if (!s)
		return l;
	const char *c2 = strrchr(s, ':');
	const char *c1 = c2 && c2 > s ? c2 - 1 : NULL; /* ":5" has no line */
	while (c1 && c1 > s && *c1 != ':')
		c1--;
	if (!c2 || !c1 || *c1 != ':') {
		bad(r, "malformed location");
		return l;
	}
	l.line = atoi(c1 + 1);
	l.col = atoi(c2 + 1);
	size_t n = (size_t)(c1 - s);
	if (!no_controls(s)) {
		bad(r, "control character in a location");
		return l;
	}
	l.file = strlen(r->m->file) == n && !strncmp(r->m->file, s, n)
	                 ? r->m->file : arena_strndup(&r->m->arena, s, n);
	return l;
}

static void rexpr(reader *r, const json_t *v, aexpr *out)
{
	if (!v || json_is_null(v))
		return;
	if (!json_is_object(v)) {
		bad(r, "expression must be an object");
		return;
	}
	out->text = str(r, v, "text", false);
	out->loc = rloc(r, v, "loc");
	if (!out->text)
		return;
	out->e = expr_parse_string(&r->m->arena, r->d, out->text, strlen(out->text), out->loc);
	if (!out->e)
		r->errors++;
}

static aexpr *rexprs(reader *r, const json_t *o, const char *key, int *n)
{
	const json_t *arr = field(r, o, key, JSON_ARRAY, false);
	*n = arr ? (int)json_array_size(arr) : 0;
	aexpr *list = arena_alloc(&r->m->arena, (size_t)*n * sizeof *list + 1);
	for (int i = 0; i < *n; i++)
		rexpr(r, json_array_get(arr, (size_t)i), &list[i]);
	return list;
}

static void rlaunch(reader *r, const json_t *o, const char *key, launch *g)
{
	const json_t *v = field(r, o, key, JSON_OBJECT, true);
	if (!v)
		return;
	g->loc = rloc(r, v, "loc");
	int n;
	aexpr *dims = rexprs(r, v, "dims", &n);
	if (n < 1 || n > 3) {
		bad(r, "launch needs 1 to 3 dimensions");
		return;
	}
	memcpy(g->dims, dims, (size_t)n * sizeof *dims);
	g->ndims = n;
}

static int64_t *rints(reader *r, const json_t *o, const char *key, int *n)
{
	const json_t *arr = field(r, o, key, JSON_ARRAY, false);
	*n = arr ? (int)json_array_size(arr) : 0;
	int64_t *v = arena_alloc(&r->m->arena, (size_t)*n * sizeof *v + 1);
	for (int i = 0; i < *n; i++) {
		const json_t *x = json_array_get(arr, (size_t)i);
		if (!json_is_integer(x))
			bad(r, "expected integers");
		v[i] = json_integer_value(x);
	}
	return v;
}

static int lookup_name(reader *r, const char **names, int n, const char *name)
{
	for (int i = 0; name && i < n; i++)
		if (!strcmp(names[i], name))
			return i;
	bad(r, "unknown name");
	return -1;
}

static int pick(reader *r, const char *const *names, int n, const char *s)
{
	return lookup_name(r, (const char **)names, n, s);
}

static int param_index(reader *r, kernel *k, const json_t *o)
{
	const char *name = str(r, o, "param", false);
	int p = name ? ir_find_param(k, name) : -1;
	if (p < 0)
		bad(r, "unknown parameter");
	return p;
}

/* Each step below reads one part of kernel k from its object o. Those that
 * return false stopped at an error: rkernel reads no further. */

static bool rtparams(reader *r, kernel *k, const json_t *o)
{
	arena *a = &r->m->arena;
	const json_t *arr = field(r, o, "template_params", JSON_ARRAY, false);
	k->ntparams = arr ? (int)json_array_size(arr) : 0;
	k->tparams = arena_alloc(a, (size_t)k->ntparams * sizeof *k->tparams + 1);
	for (int i = 0; i < k->ntparams; i++) {
		const json_t *t = json_array_get(arr, (size_t)i);
		tparam *tp = &k->tparams[i];
		tp->name = str(r, t, "name", false);
		tp->loc = rloc(r, t, "loc");
		tp->is_type = boolean(r, t, "is_type");
		tp->type = str(r, t, "type", true);
		tp->default_text = str(r, t, "default", true);
		tp->tunable = -1;
		const char *at = arena_printf(a, "template_params[%d]", i);
		check_text(r, arena_printf(a, "%s.name", at), tp->name,
		           tp->name && (!tp->name[0] || ir_is_identifier(tp->name)), "a C identifier");
		check_text(r, arena_printf(a, "%s.type", at), tp->type,
		           tp->type && ir_type_text_ok(tp->type), type_expect);
		check_text(r, arena_printf(a, "%s.default", at), tp->default_text,
		           tp->default_text && (tp->is_type ? ir_type_text_ok(tp->default_text)
		                                            : ir_template_arg_ok(tp->default_text)),
		           tp->is_type ? type_expect
		                       : "a template argument aotc writes into emitted code (names, integers, "
		                         "parentheses, + - * / % & | ^ ~ ! <<)");
		if (r->errors)
			return false;
	}
	return true;
}

static bool rparams(reader *r, kernel *k, const json_t *o)
{
	arena *a = &r->m->arena;
	const json_t *arr = field(r, o, "params", JSON_ARRAY, false);
	k->nparams = arr ? (int)json_array_size(arr) : 0;
	k->params = arena_alloc(a, (size_t)k->nparams * sizeof *k->params + 1);
	for (int i = 0; i < k->nparams; i++) {
		const json_t *t = json_array_get(arr, (size_t)i);
		param *p = &k->params[i];
		p->name = str(r, t, "name", false);
		p->loc = rloc(r, t, "loc");
		p->type = str(r, t, "type", false);
		p->is_pointer = boolean(r, t, "pointer");
		p->is_const = boolean(r, t, "const");
		const char *dt = str(r, t, "dtype", false);
		p->dtype = dt ? dtype_from_name(dt) : DT_OTHER;
		p->elem_type = str(r, t, "elem_type", false);
		p->vec = (int)integer(r, t, "lanes");
		if (p->vec < 1 || p->vec > 4)
			bad(r, "lanes must be 1 to 4");
		p->buffer = p->value = p->shape = -1;
		const json_t *lo = json_object_get(t, "launcher_only");
		if (lo && !json_is_boolean(lo))
			mistyped(r, "launcher_only");
		p->launcher_only = json_is_true(lo);
		/* Launcher-only shape arguments: int64_t, after the kernel's own. */
		if (p->launcher_only && (p->is_pointer || p->dtype != DT_I64))
			bad(r, "a launcher_only parameter is an int64_t");
		if (!p->launcher_only && i > 0 && k->params[i - 1].launcher_only)
			bad(r, "launcher_only parameters come after the kernel's own");
		const char *at = arena_printf(a, "params[%d]", i);
		check_text(r, arena_printf(a, "%s.name", at), p->name,
		           p->name && ir_is_source_identifier(p->name), "a C++ identifier");
		check_text(r, arena_printf(a, "%s.type", at), p->type,
		           p->type && ir_type_text_ok(p->type), type_expect);
		check_text(r, arena_printf(a, "%s.elem_type", at), p->elem_type,
		           p->elem_type && ir_type_text_ok(p->elem_type), type_expect);
		if (json_object_get(t, "elem_canon")) {
			p->elem_canon = str(r, t, "elem_canon", false);
			check_text(r, arena_printf(a, "%s.elem_canon", at), p->elem_canon,
			           p->elem_canon && ir_type_text_ok(p->elem_canon), type_expect);
		}
		if (r->errors)
			return false;
	}
	return true;
}

static bool rtunables(reader *r, kernel *k, const json_t *o)
{
	arena *a = &r->m->arena;
	const json_t *arr = field(r, o, "tunables", JSON_ARRAY, false);
	k->ntunables = arr ? (int)json_array_size(arr) : 0;
	k->tunables = arena_alloc(a, (size_t)k->ntunables * sizeof *k->tunables + 1);
	for (int i = 0; i < k->ntunables; i++) {
		const json_t *t = json_array_get(arr, (size_t)i);
		tunable *tu = &k->tunables[i];
		tu->name = str(r, t, "name", false);
		tu->loc = rloc(r, t, "loc");
		tu->is_bool = boolean(r, t, "bool");
		tu->values = rints(r, t, "values", &tu->nvalues);
		tu->tparam = -1;
		check_text(r, arena_printf(a, "tunables[%d].name", i), tu->name,
		           tu->name && ir_is_source_identifier(tu->name), "a C++ identifier");
		if (tu->nvalues == 0)
			bad(r, "tunable without values");
		if (r->errors)
			return false;
	}
	return true;
}

/* The frontend and AOTC_TUNE keep these names distinct, and ir_check
 * relies on it. */
static bool rdistinct_names(reader *r, const kernel *k)
{
	for (int i = 0; i < k->ntparams; i++)
		for (int j = 0; j < i; j++)
			if (!strcmp(k->tparams[i].name, k->tparams[j].name)) {
				bad(r, "duplicate template parameter");
				return false;
			}
	for (int i = 0; i < k->nparams; i++)
		for (int j = 0; j < i; j++)
			if (!strcmp(k->params[i].name, k->params[j].name)) {
				bad(r, "duplicate parameter");
				return false;
			}
	for (int i = 0; i < k->ntunables; i++)
		for (int j = 0; j < i; j++)
			if (!strcmp(k->tunables[i].name, k->tunables[j].name)) {
				bad(r, "duplicate tunable");
				return false;
			}
	return true;
}

static void rbuffers(reader *r, kernel *k, const json_t *o)
{
	const json_t *arr = field(r, o, "buffers", JSON_ARRAY, false);
	k->nbuffers = arr ? (int)json_array_size(arr) : 0;
	k->buffers = arena_alloc(&r->m->arena, (size_t)k->nbuffers * sizeof *k->buffers + 1);
	for (int i = 0; i < k->nbuffers && !r->errors; i++) {
		const json_t *t = json_array_get(arr, (size_t)i);
		buffer *b = &k->buffers[i];
		b->param = param_index(r, k, t);
		b->loc = rloc(r, t, "loc");
		rexpr(r, json_object_get(t, "count"), &b->count);
		b->role = (buffer_role)pick(r, role_names, 3, str(r, t, "role", false));
		const json_t *init = field(r, t, "init", JSON_OBJECT, false);
		if (!init)
			break;
		b->init.kind = (init_kind)pick(r, init_names, 4, str(r, init, "kind", false));
		if (b->init.kind == INIT_UNIFORM) {
			b->init.lo = number(r, init, "lo");
			b->init.hi = number(r, init, "hi");
		} else if (b->init.kind == INIT_CONST) {
			b->init.value = number(r, init, "value");
		}
		if (b->param >= 0)
			k->params[b->param].buffer = i;
	}
}

static void rvalues(reader *r, kernel *k, const json_t *o)
{
	const json_t *arr = field(r, o, "values", JSON_ARRAY, false);
	k->nvalues = arr ? (int)json_array_size(arr) : 0;
	k->values = arena_alloc(&r->m->arena, (size_t)k->nvalues * sizeof *k->values + 1);
	for (int i = 0; i < k->nvalues && !r->errors; i++) {
		const json_t *t = json_array_get(arr, (size_t)i);
		value *v = &k->values[i];
		v->param = param_index(r, k, t);
		v->loc = rloc(r, t, "loc");
		if (json_object_get(t, "float")) {
			v->is_float = true;
			v->fvalue = number(r, t, "float");
		} else {
			rexpr(r, json_object_get(t, "expr"), &v->iexpr);
			if (!v->iexpr.e)
				bad(r, "value without expression");
		}
		if (v->param >= 0)
			k->params[v->param].value = i;
	}
}

/* One shape generator: a list, or lo..hi with its step or count. */
static void rshape(reader *r, shape_dim *s, const json_t *t)
{
	s->gen = (gen_kind)pick(r, gen_names, 5, str(r, t, "gen", false));
	if (s->gen == GEN_LIST) {
		s->list = rints(r, t, "values", &s->nlist);
		if (s->nlist == 0)
			bad(r, "empty shape list");
		return;
	}
	s->lo = integer(r, t, "lo");
	s->hi = integer(r, t, "hi");
	s->step = s->gen == GEN_RANGE ? integer(r, t, "step") : 0;
	if (s->lo <= 0 && s->gen == GEN_POW2)
		bad(r, "pow2 needs lo > 0");
	if (s->gen == GEN_RANGE && s->step <= 0)
		bad(r, "range needs step > 0");
	if (s->gen == GEN_GEOM || s->gen == GEN_LOGRAND) {
		s->count = integer(r, t, "n");
		if (s->lo <= 0 || s->hi < s->lo || s->count < 1 || s->count > GEN_MAX_COUNT ||
		    (s->gen == GEN_LOGRAND &&
		     (uint64_t)(s->hi - s->lo) < (uint64_t)(s->count - 1)))
			bad(r, "geom/logrand needs 0 < lo <= hi, 1 <= n <= 65536 and, for logrand, n integers in [lo, hi]");
	}
}

static void rshapes(reader *r, kernel *k, const json_t *o)
{
	const json_t *arr = field(r, o, "shapes", JSON_ARRAY, false);
	k->nshapes = arr ? (int)json_array_size(arr) : 0;
	k->shapes = arena_alloc(&r->m->arena, (size_t)k->nshapes * sizeof *k->shapes + 1);
	for (int i = 0; i < k->nshapes && !r->errors; i++) {
		const json_t *t = json_array_get(arr, (size_t)i);
		shape_dim *s = &k->shapes[i];
		s->param = param_index(r, k, t);
		s->loc = rloc(r, t, "loc");
		rshape(r, s, t);
		if (s->param >= 0)
			k->params[s->param].shape = i;
	}
	for (int i = 0; i < k->nparams && !r->errors; i++)
		if (k->params[i].launcher_only && k->params[i].shape < 0)
			bad(r, "a launcher_only parameter must be a shape argument");
}

/* An optional boolean field of a sub-object: false when absent. */
static bool rflag(reader *r, const json_t *o, const char *key, const char *what)
{
	const json_t *v = json_object_get(o, key);
	if (v && !json_is_boolean(v))
		mistyped(r, what);
	return json_is_true(v);
}

static void rreference(reader *r, kernel *k, const json_t *o)
{
	arena *a = &r->m->arena;
	const json_t *ref = field(r, o, "reference", JSON_OBJECT, true);
	if (!ref)
		return;
	k->reference = str(r, ref, "name", false);
	check_text(r, "reference.name", k->reference,
	           k->reference && ir_is_qualified_name(k->reference), "a C++ name");
	k->reference_loc = rloc(r, ref, "loc");
	rlaunch(r, ref, "grid", &k->ref_grid);
	rlaunch(r, ref, "block", &k->ref_block);
	rexpr(r, json_object_get(ref, "smem"), &k->ref_smem);
	k->ref_on_host = rflag(r, ref, "host", "reference.host");
	k->ref_template = rflag(r, ref, "template", "reference.template");
	if (k->ref_on_host && (!k->is_global || k->ref_grid.ndims || k->ref_block.ndims || k->ref_smem.e))
		bad(r, "a host reference (reference.host) belongs to a __global__ kernel and has no grid, block or smem");
	const json_t *names = field(r, ref, "param_names", JSON_ARRAY, true);
	int nk = ir_kernel_nparams(k);
	if (names && (int)json_array_size(names) != nk)
		bad(r, "reference param_names must name every parameter");
	for (int i = 0; names && !r->errors && i < nk; i++) {
		const json_t *n = json_array_get(names, (size_t)i);
		if (!json_is_string(n)) {
			bad(r, "reference param_names must be strings");
			break;
		}
		if (!k->ref_param_names)
			k->ref_param_names = arena_alloc(a, (size_t)nk * sizeof *k->ref_param_names);
		k->ref_param_names[i] = arena_strdup(a, json_string_value(n));
		check_text(r, arena_printf(a, "reference.param_names[%d]", i), k->ref_param_names[i],
		           ir_is_identifier(k->ref_param_names[i]), "a C identifier");
	}
}

static void rexterns(reader *r, kernel *k, const json_t *o)
{
	arena *a = &r->m->arena;
	const json_t *es = json_object_get(o, "externs");
	if (es && !json_is_array(es))
		mistyped(r, "externs");
	k->nexterns = es && json_is_array(es) ? (int)json_array_size(es) : 0;
	k->externs = arena_alloc(a, (size_t)k->nexterns * sizeof *k->externs + 1);
	for (int i = 0; i < k->nexterns && !r->errors; i++) {
		const json_t *t = json_array_get(es, (size_t)i);
		extern_fn *e = &k->externs[i];
		const char *at = arena_printf(a, "externs[%d]", i);
		if (!json_is_object(t)) {
			bad(r, arena_printf(a, "%s must be an object", at));
			break;
		}
		e->name = str(r, t, "name", false);
		e->loc = rloc(r, t, "loc");
		check_text(r, arena_printf(a, "%s.name", at), e->name,
		           e->name && ir_is_identifier(e->name), "a C identifier");
		const json_t *libs = field(r, t, "libs", JSON_ARRAY, false);
		e->nlibs = libs ? (int)json_array_size(libs) : 0;
		e->libs = arena_alloc(a, (size_t)e->nlibs * sizeof *e->libs + 1);
		for (int l = 0; l < e->nlibs && !r->errors; l++) {
			const json_t *lib = json_array_get(libs, (size_t)l);
			e->libs[l] = json_is_string(lib) ? arena_strdup(a, json_string_value(lib)) : NULL;
			if (!e->libs[l])
				bad(r, arena_printf(a, "%s.libs must be strings", at));
			check_text(r, arena_printf(a, "%s.libs[%d]", at, l), e->libs[l],
			           e->libs[l] && ir_is_identifier(e->libs[l]), "a C identifier");
		}
		rcode(r, t, at, e->code);
	}
}

/* An optional object field: NULL when absent or (reported) not an object,
 * and when an earlier error stops the reading. */
static const json_t *optional_object(reader *r, const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);
	if (v && !json_is_object(v))
		mistyped(r, key);
	return v && json_is_object(v) && !r->errors ? v : NULL;
}

static void rmetric(reader *r, kernel *k, const json_t *o)
{
	const json_t *met = optional_object(r, o, "metric");
	if (!met)
		return;
	const char *unit = str(r, met, "unit", false);
	k->metric = unit ? metric_unit_from_name(unit) : METRIC_NONE;
	rexpr(r, json_object_get(met, "count"), &k->metric_count);
	if (!r->errors && (k->metric == METRIC_NONE || !k->metric_count.e))
		bad(r, "metric needs a unit (FLOP or B) and a count");
}

static void rtype_key(reader *r, kernel *k, const json_t *o)
{
	const json_t *key = optional_object(r, o, "type_key");
	if (!key)
		return;
	const char *tp = str(r, key, "param", false), *tag = str(r, key, "tag", false);
	k->type_tparam = tp ? ir_find_tparam(k, tp) : -1;
	const tparam *t = k->type_tparam >= 0 ? &k->tparams[k->type_tparam] : NULL;
	if (!t || !t->is_type || !t->default_text || !tag ||
	    strcmp(dtype_name(dtype_of_spelling(t->default_text)), tag) != 0)
		bad(r, "type_key must name a type template parameter whose default has that tag");
	else {
		k->type_tag = dtype_name(dtype_of_spelling(t->default_text));
		k->id = arena_printf(&r->m->arena, "%s_%s", k->name, k->type_tag);
	}
}

static void ralternative_of(reader *r, kernel *k, const json_t *o)
{
	const json_t *alt = optional_object(r, o, "alternative_of");
	if (!alt)
		return;
	k->alt_of = str(r, alt, "name", false);
	k->alt_loc = rloc(r, alt, "loc");
	k->host_launcher = boolean(r, o, "host_launcher");
	check_text(r, "alternative_of.name", k->alt_of, k->alt_of && ir_is_identifier(k->alt_of),
	           "a C identifier");
	if (!r->errors && k->host_launcher && k->is_global)
		bad(r, "a host launcher is not __global__");
	else if (!r->errors && (k->reference || k->nexterns || k->metric != METRIC_NONE))
		bad(r, "an alternative has no reference, externs or metric of its own (its primary's serve it)");
}

/* kernel object o, appended to the module; its parts in the order jkernel
 * writes them, then ir_check over the whole. */
static void rkernel(reader *r, const json_t *o)
{
	const char *name = str(r, o, "name", false);
	check_text(r, "name", name, name && ir_is_source_identifier(name), "a C++ identifier");
	if (!name || r->errors)
		return;
	kernel *k = ir_add_kernel(r->m, name, rloc(r, o, "loc"));
	k->is_global = boolean(r, o, "global");
	k->is_template = boolean(r, o, "template");
	if (!rtparams(r, k, o) || !rparams(r, k, o) || !rtunables(r, k, o) || !rdistinct_names(r, k))
		return;
	k->requires = rexprs(r, o, "require", &k->nrequires);
	k->valid_ifs = rexprs(r, o, "valid_if", &k->nvalid_ifs);
	rlaunch(r, o, "grid", &k->grid);
	rlaunch(r, o, "block", &k->block);
	rexpr(r, json_object_get(o, "smem"), &k->smem);
	rbuffers(r, k, o);
	rvalues(r, k, o);
	rshapes(r, k, o);
	k->features = rexprs(r, o, "features", &k->nfeatures);
	rreference(r, k, o);
	rexterns(r, k, o);
	rcode(r, o, "kernel", k->code);
	const json_t *tol = json_object_get(o, "tolerance");
	if (tol && !json_is_null(tol)) {
		k->has_tolerance = true;
		k->tolerance = number(r, o, "tolerance");
	}
	rmetric(r, k, o);
	rtype_key(r, k, o);
	if (k->ref_template && !k->type_tag && !r->errors)
		bad(r, "a template reference (reference.template) belongs to a kernel with a type_key");
	ralternative_of(r, k, o);
	if (!r->errors)
		r->errors += ir_check(r->m, k, r->d);
}

/* kernels[i].alternatives, read as kernels and then moved from the
 * module's list into kernels[i].alts. */
static void ralternatives(reader *r, const json_t *o, int i)
{
	const json_t *as = json_object_get(o, "alternatives");
	if (!as)
		return;
	if (!json_is_array(as) || !json_array_size(as)) {
		bad(r, "'alternatives' must be a non-empty array");
		return;
	}
	const char *where = r->where;
	int n = (int)json_array_size(as);
	for (int j = 0; j < n && !r->errors; j++) {
		r->where = arena_printf(&r->m->arena, "%s.alternatives[%d]", where, j);
		const json_t *a = json_array_get(as, (size_t)j);
		if (!json_is_object(a)) {
			bad(r, "must be an object");
			break;
		}
		rkernel(r, a);
		if (r->errors)
			break;
		const kernel *p = &r->m->kernels[i], *alt = &r->m->kernels[r->m->nkernels - 1];
		if (json_object_get(a, "alternatives"))
			bad(r, "an alternative has no alternatives");
		else if (!alt->alt_of || strcmp(alt->alt_of, p->name) != 0)
			bad(r, arena_printf(&r->m->arena, "alternative_of must name '%s'", p->name));
		else if (strcmp(alt->name, p->name) == 0 || (alt->type_tag == NULL) != (p->type_tag == NULL) ||
		         (alt->type_tag && strcmp(alt->type_tag, p->type_tag) != 0))
			bad(r, "an alternative has a name of its own and its primary's type_key");
		else if (alt->host_launcher && !p->is_global)
			bad(r, "a host launcher belongs to a __global__ kernel");
		else if (!alt->host_launcher && alt->is_global != p->is_global)
			bad(r, "an alternative is __global__ where its primary is");
		else if (ir_kernel_nparams(alt) != ir_kernel_nparams(p) || alt->nparams != p->nparams)
			bad(r, "an alternative takes its primary's parameters");
		for (int q = 0; q < p->nparams && !r->errors; q++)
			if (strcmp(alt->params[q].name, p->params[q].name) != 0 || alt->params[q].dtype != p->params[q].dtype ||
			    alt->params[q].is_pointer != p->params[q].is_pointer)
				bad(r, arena_printf(&r->m->arena, "parameter %d is not its primary's '%s'", q + 1, p->params[q].name));
		for (int q = 0; q < j && !r->errors; q++)
			if (strcmp(r->m->kernels[i + 1 + q].name, alt->name) == 0)
				bad(r, arena_printf(&r->m->arena, "a second alternative '%s'", alt->name));
	}
	r->where = where;
	if (r->errors)
		return;
	kernel *p = &r->m->kernels[i];
	p->alts = arena_alloc(&r->m->arena, (size_t)n * sizeof *p->alts);
	memcpy(p->alts, p + 1, (size_t)n * sizeof *p->alts);
	p->nalts = n;
	r->m->nkernels = i + 1;
}

aotc_module *ir_from_json(const char *text, size_t len, const char *path, diags *d)
{
	json_error_t err;
	json_t *root = json_loadb(text, len, 0, &err);
	if (!root) {
		diag_error(d, (aotc_loc){path, err.line > 0 ? err.line : 0, err.column > 0 ? err.column : 1},
		           "invalid JSON: %s", err.text);
		return NULL;
	}
	aotc_module *m = NULL;
	reader r = {.d = d, .path = path, .where = ""};
	const json_t *ver = json_object_get(root, "aotc_ir");
	if (json_is_integer(ver) && json_integer_value(ver) > AOTC_IR_VERSION) {
		diag_error(d, (aotc_loc){path, 0, 0},
		           "written by a newer aotc (IR version %lld; aotc " AOTC_VERSION_STRING " reads version %d): "
		           "parse the kernel again with this aotc", (long long)json_integer_value(ver), AOTC_IR_VERSION);
		goto done;
	}
	if (!json_is_integer(ver) || json_integer_value(ver) != AOTC_IR_VERSION) {
		diag_error(d, (aotc_loc){path, 0, 0}, "not an aotc IR document of version %d",
		           AOTC_IR_VERSION);
		goto done;
	}
	const json_t *file = json_object_get(root, "file");
	const json_t *hash = json_object_get(root, "source_hash");
	const json_t *ks = json_object_get(root, "kernels");
	if (!json_is_string(file) || !json_is_string(hash) || !json_is_array(ks)) {
		diag_error(d, (aotc_loc){path, 0, 0}, "invalid IR: needs 'file', 'source_hash' and 'kernels'");
		goto done;
	}
	/* Both reach the emitted files' comments and #include. */
	if (!ir_source_hash_ok(json_string_value(hash))) {
		diag_error(d, (aotc_loc){path, 0, 0},
		           "invalid IR: 'source_hash' must be 32 lowercase hex digits, as aotc parse writes it");
		goto done;
	}
	if (!json_string_value(file)[0] || !no_controls(json_string_value(file))) {
		diag_error(d, (aotc_loc){path, 0, 0},
		           "invalid IR: 'file' must be a path without control characters");
		goto done;
	}
	m = ir_module_create(json_string_value(file));
	memcpy(m->source_hash, json_string_value(hash), 33);
	r.m = m;
	char where[64];
	const json_t *cs = json_object_get(root, "constants");
	if (cs && !json_is_array(cs)) {
		r.where = "";
		mistyped(&r, "constants");
	}
	for (size_t i = 0; cs && i < json_array_size(cs) && !r.errors; i++) {
		snprintf(where, sizeof where, "constants[%zu]", i);
		r.where = where;
		const json_t *c = json_array_get(cs, i);
		source_const k = {0};
		k.name = str(&r, c, "name", false);
		check_text(&r, "name", k.name, k.name && ir_is_qualified_name(k.name), "a C++ name");
		k.loc = rloc(&r, c, "loc");
		k.value = integer(&r, c, "value");
		const char *kind = str(&r, c, "kind", false);
		if (kind && !const_kind_from_name(kind, &k.kind))
			bad(&r, "unknown constant kind");
		if (!r.errors)
			ARENA_PUSH(&m->arena, m->consts, m->nconsts, m->consts_cap, k);
	}
	const json_t *hc = json_object_get(root, "host_code");
	if (hc && !json_is_array(hc)) {
		r.where = "";
		mistyped(&r, "host_code");
	}
	for (size_t i = 0; hc && i < json_array_size(hc) && !r.errors; i++) {
		const json_t *e = json_array_get(hc, i);
		json_int_t b = json_integer_value(json_array_get(e, 0)), n = json_integer_value(json_array_get(e, 1));
		r.where = "host_code";
		if (!json_is_array(e) || json_array_size(e) != 2 || !json_is_integer(json_array_get(e, 0)) ||
		    !json_is_integer(json_array_get(e, 1)) || b < 0 || n > UINT32_MAX ||
		    !ir_add_host_code(m, (uint32_t)b, (uint32_t)n)) {
			bad(&r, "host_code must be ordered [begin, end] byte ranges");
			break;
		}
	}
	for (size_t i = 0; i < json_array_size(ks) && !r.errors; i++) {
		snprintf(where, sizeof where, "kernels[%zu]", i);
		r.where = where;
		rkernel(&r, json_array_get(ks, i));
		if (!r.errors && m->kernels[m->nkernels - 1].alt_of)
			bad(&r, "an alternative is read inside its primary's 'alternatives'");
		if (!r.errors)
			ralternatives(&r, json_array_get(ks, i), m->nkernels - 1);
		/* databases, dispatches and emitted files go by the id */
		for (int j = 0; !r.errors && j + 1 < m->nkernels; j++)
			if (strcmp(m->kernels[j].id, m->kernels[m->nkernels - 1].id) == 0)
				bad(&r, arena_printf(&m->arena, "a second kernel '%s'", m->kernels[j].id));
	}
	if (r.errors) {
		ir_module_destroy(m);
		m = NULL;
	}
done:
	json_decref(root);
	return m;
}
