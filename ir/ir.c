#include "ir.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

static const struct {
	const char *name;
	size_t size;
} dtypes[] = {
	[DT_OTHER] = {"other", 0}, [DT_BOOL] = {"bool", 1},
	[DT_I8] = {"i8", 1},       [DT_U8] = {"u8", 1},
	[DT_I16] = {"i16", 2},     [DT_U16] = {"u16", 2},
	[DT_I32] = {"i32", 4},     [DT_U32] = {"u32", 4},
	[DT_I64] = {"i64", 8},     [DT_U64] = {"u64", 8},
	[DT_F16] = {"f16", 2},     [DT_BF16] = {"bf16", 2},
	[DT_F32] = {"f32", 4},     [DT_F64] = {"f64", 8},
};

const char *dtype_name(aotc_dtype t) { return dtypes[t].name; }
size_t dtype_size(aotc_dtype t) { return dtypes[t].size; }

aotc_dtype dtype_from_name(const char *name)
{
	for (size_t i = 0; i < COUNTOF(dtypes); i++)
		if (strcmp(dtypes[i].name, name) == 0)
			return (aotc_dtype)i;
	return DT_OTHER;
}

bool dtype_is_integer(aotc_dtype t) { return t >= DT_BOOL && t <= DT_U64; }
bool dtype_is_floating(aotc_dtype t) { return t >= DT_F16 && t <= DT_F64; }

aotc_dtype dtype_of_vector(const char *name, int *lanes)
{
	static const struct {
		const char *prefix;
		aotc_dtype t;
	} bases[] = {
		/* longest prefixes first: "longlong" before "long", "uchar" before "char" */
		{"ulonglong", DT_U64}, {"longlong", DT_I64}, {"ulong", DT_U64}, {"long", DT_I64},
		{"uchar", DT_U8}, {"char", DT_I8}, {"ushort", DT_U16}, {"short", DT_I16},
		{"uint", DT_U32}, {"int", DT_I32}, {"float", DT_F32}, {"double", DT_F64},
		{"__half", DT_F16}, {"__nv_bfloat16", DT_BF16}, {"half", DT_F16},
	};
	for (size_t i = 0; i < COUNTOF(bases); i++) {
		size_t n = strlen(bases[i].prefix);
		if (strncmp(name, bases[i].prefix, n) != 0)
			continue;
		const char *d = name + n;
		bool half = bases[i].t == DT_F16 || bases[i].t == DT_BF16;
		if (d[0] >= (half ? '2' : '1') && d[0] <= (half ? '2' : '4') && d[1] == 0) {
			*lanes = d[0] - '0';
			return bases[i].t;
		}
		return DT_OTHER;
	}
	return DT_OTHER;
}

bool ir_param_is_integer(const param *p)
{
	return !p->is_pointer && dtype_is_integer(p->dtype);
}

bool dtype_range(aotc_dtype t, int64_t *lo, int64_t *hi)
{
	switch (t) {
	case DT_BOOL: *lo = 0; *hi = 1; return true;
	case DT_I8: *lo = INT8_MIN; *hi = INT8_MAX; return true;
	case DT_U8: *lo = 0; *hi = UINT8_MAX; return true;
	case DT_I16: *lo = INT16_MIN; *hi = INT16_MAX; return true;
	case DT_U16: *lo = 0; *hi = UINT16_MAX; return true;
	case DT_I32: *lo = INT32_MIN; *hi = INT32_MAX; return true;
	case DT_U32: *lo = 0; *hi = UINT32_MAX; return true;
	case DT_U64: *lo = 0; *hi = INT64_MAX; return true;
	default: *lo = INT64_MIN; *hi = INT64_MAX; return t == DT_I64;
	}
}

bool ir_param_fits(const param *p, int64_t v)
{
	int64_t lo, hi;
	if (p->launcher_only || !ir_param_is_integer(p) || !dtype_range(p->dtype, &lo, &hi))
		return true;
	return v >= lo && v <= hi;
}

int ir_kernel_nparams(const kernel *k)
{
	int n = k->nparams;
	while (n > 0 && k->params[n - 1].launcher_only)
		n--;
	return n;
}

static void note_tunable(void *ctx, const expr *name)
{
	if (name->name_kind == NAME_TUNABLE)
		*(bool *)ctx = true;
}

bool ir_param_per_variant(const kernel *k, int i)
{
	const param *p = &k->params[i];
	if (p->value < 0 || k->values[p->value].is_float || !k->values[p->value].iexpr.e)
		return false;
	bool uses = false;
	expr_visit_names(k->values[p->value].iexpr.e, note_tunable, &uses);
	return uses;
}

bool ir_has_per_variant(const kernel *k)
{
	for (int i = 0; i < k->nparams; i++)
		if (ir_param_per_variant(k, i))
			return true;
	return false;
}

eval_status ir_variant_params(const kernel *k, const int64_t *values, int64_t *params)
{
	eval_env env = {.tunables = values, .ntunables = values ? k->ntunables : 0,
	                .params = params, .nparams = k->nparams};
	for (int i = 0; i < k->nparams; i++) {
		if (!ir_param_per_variant(k, i))
			continue;
		eval_status st = expr_eval(k->values[k->params[i].value].iexpr.e, &env, &params[i]);
		if (st != EVAL_OK)
			return st;
		if (!ir_param_fits(&k->params[i], params[i]))
			return EVAL_OVERFLOW;
	}
	return EVAL_OK;
}

typedef struct first_config {
	int ntunables;
	int64_t *values;
} first_config;

static bool take_first(void *ctx, const int64_t *values)
{
	first_config *f = ctx;
	memcpy(f->values, values, (size_t)f->ntunables * sizeof *values);
	return false;
}

bool ir_reference_values(const kernel *k, int64_t *values)
{
	first_config f = {k->ntunables, values};
	return ir_enumerate(k, take_first, &f) > 0;
}

aotc_module *ir_module_create(const char *file)
{
	arena a;
	arena_init(&a);
	aotc_module *m = arena_alloc(&a, sizeof *m);
	m->arena = a;
	m->file = arena_strdup(&m->arena, file);
	return m;
}

void ir_module_destroy(aotc_module *m)
{
	if (!m)
		return;
	arena a = m->arena; /* m itself lives in the arena */
	arena_finish(&a);
}

kernel *ir_add_kernel(aotc_module *m, const char *name, aotc_loc loc)
{
	arena_grow(&m->arena, (void **)&m->kernels, &m->kernels_cap,
	           (size_t)m->nkernels + 1, sizeof *m->kernels);
	kernel *k = &m->kernels[m->nkernels++];
	memset(k, 0, sizeof *k);
	k->name = arena_strdup(&m->arena, name);
	k->id = k->name;
	k->loc = loc;
	k->type_tparam = -1;
	return k;
}

kernel *ir_copy_kernel(aotc_module *m, int i)
{
	kernel *c = ir_add_kernel(m, m->kernels[i].name, m->kernels[i].loc);
	const kernel *k = &m->kernels[i];
	*c = *k;
	c->tparams = arena_alloc(&m->arena, (size_t)k->ntparams * sizeof *c->tparams + 1);
	memcpy(c->tparams, k->tparams, (size_t)k->ntparams * sizeof *c->tparams);
	c->params = arena_alloc(&m->arena, (size_t)k->nparams * sizeof *c->params + 1);
	memcpy(c->params, k->params, (size_t)k->nparams * sizeof *c->params);
	c->claimed = arena_alloc(&m->arena, k->claimed_cap * sizeof *c->claimed + 1);
	memcpy(c->claimed, k->claimed, (size_t)k->nclaimed * sizeof *c->claimed);
	return c;
}

aotc_dtype dtype_of_spelling(const char *s)
{
	static const struct {
		const char *name;
		aotc_dtype t;
	} names[] = {
		{"float", DT_F32}, {"double", DT_F64}, {"__half", DT_F16}, {"half", DT_F16},
		{"_Float16", DT_F16}, {"__nv_bfloat16", DT_BF16}, {"nv_bfloat16", DT_BF16},
		{"__hip_bfloat16", DT_BF16}, {"__bf16", DT_BF16}, {"bool", DT_BOOL}, {"char", DT_I8},
		{"signed char", DT_I8}, {"int8_t", DT_I8}, {"unsigned char", DT_U8}, {"uint8_t", DT_U8},
		{"short", DT_I16}, {"int16_t", DT_I16}, {"unsigned short", DT_U16},
		{"uint16_t", DT_U16}, {"int", DT_I32}, {"int32_t", DT_I32},
		{"unsigned", DT_U32}, {"unsigned int", DT_U32}, {"uint32_t", DT_U32},
		{"long", DT_I64}, {"long long", DT_I64}, {"int64_t", DT_I64},
		{"ptrdiff_t", DT_I64}, {"unsigned long", DT_U64},
		{"unsigned long long", DT_U64}, {"uint64_t", DT_U64}, {"size_t", DT_U64},
	};
	for (size_t i = 0; i < COUNTOF(names); i++)
		if (strcmp(names[i].name, s) == 0)
			return names[i].t;
	return DT_OTHER;
}

/* text with every identifier token equal to name replaced by with. */
static const char *replace_ident(arena *a, const char *text, const char *name, const char *with)
{
	strbuf sb;
	strbuf_init(&sb);
	size_t n = strlen(name);
	for (const char *s = text; *s;) {
		if (isalpha((unsigned char)*s) || *s == '_') {
			const char *e = s;
			while (isalnum((unsigned char)*e) || *e == '_')
				e++;
			if ((size_t)(e - s) == n && strncmp(s, name, n) == 0)
				strbuf_puts(&sb, with);
			else
				strbuf_putn(&sb, s, (size_t)(e - s));
			s = e;
		} else {
			strbuf_putc(&sb, *s++);
		}
	}
	const char *r = arena_strdup(a, sb.data ? sb.data : "");
	strbuf_finish(&sb);
	return r;
}

void ir_key_type(aotc_module *m, kernel *k, int t)
{
	tparam *tp = &k->tparams[k->type_tparam];
	const char *type = k->types[t];
	aotc_dtype dt = dtype_of_spelling(type);
	tp->default_text = type;
	k->type_tag = dtype_name(dt);
	k->id = arena_printf(&m->arena, "%s_%s", k->name, k->type_tag);
	for (int i = 0; i < k->nparams; i++) {
		param *p = &k->params[i];
		p->type = replace_ident(&m->arena, p->type, tp->name, type);
		if (strcmp(p->elem_type, tp->name) != 0)
			continue;
		p->elem_type = type;
		p->elem_canon = NULL;
		p->dtype = dt;
		p->vec = 1;
	}
}

static const char *const metric_unit_names[] = {NULL, "FLOP", "B"};

const char *metric_unit_name(metric_unit u) { return metric_unit_names[u]; }

metric_unit metric_unit_from_name(const char *name)
{
	for (size_t i = 1; i < COUNTOF(metric_unit_names); i++)
		if (strcmp(metric_unit_names[i], name) == 0)
			return (metric_unit)i;
	return METRIC_NONE;
}

typedef struct metric_uses {
	const kernel *k;
	bool tunables, per_variant;
} metric_uses;

static void note_metric_use(void *ctx, const expr *name)
{
	metric_uses *u = ctx;
	if (name->name_kind == NAME_TUNABLE)
		u->tunables = true;
	else if (name->name_kind == NAME_PARAM && ir_param_per_variant(u->k, name->index))
		u->per_variant = true;
}

bool ir_metric_count(const kernel *k, const kernel *f, const int64_t *values, const int64_t *params,
                     double *count)
{
	if (k->metric == METRIC_NONE || !k->metric_count.e)
		return false;
	metric_uses u = {.k = k};
	expr_visit_names(k->metric_count.e, note_metric_use, &u);
	/* Another function's tunables are not k's; a routine has no values. */
	if ((f != k && u.tunables) || (!f && u.per_variant))
		return false;
	int64_t own[k->nparams + 1];
	memcpy(own, params, (size_t)k->nparams * sizeof *own);
	if (f && u.per_variant && ir_variant_params(f, values, own) != EVAL_OK)
		return false;
	eval_env env = {.tunables = f == k ? values : NULL, .ntunables = f == k ? k->ntunables : 0,
	                .params = own, .nparams = k->nparams};
	int64_t n;
	if (expr_eval(k->metric_count.e, &env, &n) != EVAL_OK || n <= 0)
		return false;
	*count = (double)n;
	return true;
}

const char *ir_throughput_scale(metric_unit u, double max, double *scale)
{
	static const char *const names[][6] = {
		{"FLOP/s", "kFLOP/s", "MFLOP/s", "GFLOP/s", "TFLOP/s", "PFLOP/s"},
		{"B/s", "kB/s", "MB/s", "GB/s", "TB/s", "PB/s"},
	};
	int p = 0;
	double s = 1;
	while (p < 5 && max >= s * 1000) {
		s *= 1000;
		p++;
	}
	*scale = s;
	return names[u == METRIC_BYTES][p];
}

static const char *const const_kind_names[] = {"variable", "enumerator", "macro"};

const char *const_kind_name(const_kind k) { return const_kind_names[k]; }

bool const_kind_from_name(const char *name, const_kind *out)
{
	for (size_t i = 0; i < COUNTOF(const_kind_names); i++)
		if (strcmp(const_kind_names[i], name) == 0) {
			*out = (const_kind)i;
			return true;
		}
	return false;
}

const_found ir_find_const(aotc_module *m, const char *name, source_const *out,
                          const char **why)
{
	source_const scratch;
	const char *no_why;
	if (!out)
		out = &scratch;
	if (!why)
		why = &no_why;
	for (int i = 0; i < m->nconsts; i++)
		if (strcmp(m->consts[i].name, name) == 0) {
			*out = m->consts[i];
			return CONST_FOUND;
		}
	if (!m->source.find)
		return CONST_UNKNOWN;
	memset(out, 0, sizeof *out);
	const_found f = m->source.find(m->source.ctx, name, out, why);
	if (f == CONST_FOUND) {
		/* The source may have found it under its qualified name; record
		 * the spelling the expression used, which is what re-resolves. */
		out->name = arena_strdup(&m->arena, name);
		ARENA_PUSH(&m->arena, m->consts, m->nconsts, m->consts_cap, *out);
	}
	return f;
}

void ir_offer_consts(const aotc_module *m, nearest *n)
{
	for (int i = 0; i < m->nconsts; i++)
		nearest_offer(n, m->consts[i].name);
	if (m->source.offer)
		m->source.offer(m->source.ctx, n);
}

int ir_find_param(const kernel *k, const char *name)
{
	for (int i = 0; i < k->nparams; i++)
		if (strcmp(k->params[i].name, name) == 0)
			return i;
	return -1;
}

int ir_find_tunable(const kernel *k, const char *name)
{
	for (int i = 0; i < k->ntunables; i++)
		if (strcmp(k->tunables[i].name, name) == 0)
			return i;
	return -1;
}

int ir_find_tparam(const kernel *k, const char *name)
{
	for (int i = 0; i < k->ntparams; i++)
		if (strcmp(k->tparams[i].name, name) == 0)
			return i;
	return -1;
}

char *ir_device_source(const aotc_module *m, const char *text, size_t len)
{
	char *out = xmalloc(len + 1);
	memcpy(out, text, len);
	out[len] = 0;
	for (int i = 0; i < m->nhost_code; i++) {
		uint32_t b = m->host_code[i][0], e = m->host_code[i][1];
		if (b > e || e > len) {
			free(out);
			return NULL;
		}
		for (uint32_t j = b; j < e; j++)
			if (out[j] != '\n')
				out[j] = ' ';
	}
	return out;
}

bool ir_add_host_code(aotc_module *m, uint32_t begin, uint32_t end)
{
	if (begin > end || (m->nhost_code && m->host_code[m->nhost_code - 1][1] > begin))
		return false;
	arena_grow(&m->arena, (void **)&m->host_code, &m->host_code_cap, (size_t)m->nhost_code + 1,
	           sizeof *m->host_code);
	m->host_code[m->nhost_code][0] = begin;
	m->host_code[m->nhost_code++][1] = end;
	return true;
}

const kernel *ir_member(const kernel *k, const char *name)
{
	if (!name || strcmp(name, k->name) == 0)
		return k;
	for (int i = 0; i < k->nalts; i++)
		if (strcmp(k->alts[i].name, name) == 0)
			return &k->alts[i];
	return NULL;
}

const kernel *ir_find_kernel(const aotc_module *m, const char *id)
{
	for (int i = 0; i < m->nkernels; i++)
		if (strcmp(m->kernels[i].id, id) == 0)
			return &m->kernels[i];
	return NULL;
}

char *ir_reference_instance(const kernel *k)
{
	if (!k->reference)
		return NULL;
	if (!k->ref_template || !k->type_tag)
		return xstrdup(k->reference);
	strbuf sb;
	strbuf_init(&sb);
	strbuf_printf(&sb, "%s<%s>", k->reference, k->tparams[k->type_tparam].default_text);
	return sb.data;
}

bool ir_is_routine_name(const char *s)
{
	const char *lt = strchr(s, '<');
	if (!lt)
		return ir_is_identifier(s);
	size_t n = strlen(s);
	if (n < 3 || s[n - 1] != '>')
		return false;
	char *name = xstrdup(s), *args = name + (lt - s) + 1;
	name[lt - s] = 0;
	name[n - 1] = 0;
	bool ok = ir_is_identifier(name);
	/* the arguments: types without '<' or template arguments, by commas */
	for (char *a = args; ok;) {
		char *comma = strchr(a, ',');
		if (comma)
			*comma = 0;
		while (*a == ' ')
			a++;
		ok = *a && (ir_template_arg_ok(a) || (ir_type_text_ok(a) && !strchr(a, '<')));
		if (!comma)
			break;
		a = comma + 1;
	}
	free(name);
	return ok;
}

bool ir_kernel_selected(const kernel *k, const char *sel)
{
	return !sel || strcmp(k->id, sel) == 0 || strcmp(k->name, sel) == 0;
}

/* ---- Configurations ---------------------------------------------------- */

static bool satisfies_requires(const kernel *k, const int64_t *values)
{
	eval_env env = {.tunables = values, .ntunables = k->ntunables};
	for (int i = 0; i < k->nrequires; i++) {
		int64_t v;
		if (expr_eval(k->requires[i].e, &env, &v) != EVAL_OK || v == 0)
			return false;
	}
	return true;
}

long ir_enumerate(const kernel *k, bool (*fn)(void *ctx, const int64_t *values),
                  void *ctx)
{
	int n = k->ntunables;
	if (n == 0) {
		static const int64_t none[1];
		if (fn)
			fn(ctx, none);
		return 1;
	}
	int *pos = xcalloc((size_t)n, sizeof *pos);
	int64_t *values = xcalloc((size_t)n, sizeof *values);
	long count = 0;
	for (;;) {
		for (int i = 0; i < n; i++)
			values[i] = k->tunables[i].values[pos[i]];
		if (satisfies_requires(k, values)) {
			count++;
			if (fn && !fn(ctx, values))
				break;
		}
		/* Odometer: the last tunable turns fastest. */
		int i = n - 1;
		while (i >= 0 && ++pos[i] == k->tunables[i].nvalues)
			pos[i--] = 0;
		if (i < 0)
			break;
	}
	free(pos);
	free(values);
	return count;
}

int ir_first_invalid(const kernel *k, const int64_t *values, const int64_t *params,
                     eval_status *st)
{
	eval_env env = {.tunables = values, .ntunables = k->ntunables, .params = params,
	                .nparams = k->nparams};
	for (int i = 0; i < k->nvalid_ifs; i++) {
		int64_t v = 0;
		eval_status s = expr_eval(k->valid_ifs[i].e, &env, &v);
		if (s != EVAL_OK || v == 0) {
			if (st)
				*st = s;
			return i;
		}
	}
	return -1;
}

int ir_features(const kernel *k, const int64_t *params, int64_t *out)
{
	eval_env env = {.params = params, .nparams = k->nparams};
	int n = 0;
	if (k->nfeatures) {
		for (int f = 0; f < k->nfeatures; f++, n++)
			if (expr_eval(k->features[f].e, &env, &out[n]) != EVAL_OK)
				out[n] = 0;
		return n;
	}
	for (int i = 0; i < k->nparams; i++)
		if (k->params[i].shape >= 0)
			out[n++] = params[i];
	return n;
}

eval_status ir_launch_dims(const launch *grid, const launch *block, const aexpr *smem,
                           const eval_env *env, int64_t dims[7], int *which)
{
	const launch *ls[2] = {grid, block};
	for (int i = 0; i < 6; i++)
		dims[i] = 1;
	dims[6] = 0;
	for (int l = 0; l < 2; l++)
		for (int i = 0; i < ls[l]->ndims; i++) {
			int64_t *d = &dims[3 * l + i];
			eval_status st = expr_eval(ls[l]->dims[i].e, env, d);
			if (st == EVAL_OK && (*d < 1 || *d > UINT32_MAX))
				st = EVAL_DOMAIN;
			if (st != EVAL_OK) {
				*which = 3 * l + i;
				return st;
			}
		}
	if (smem->e) {
		eval_status st = expr_eval(smem->e, env, &dims[6]);
		if (st == EVAL_OK && (dims[6] < 0 || dims[6] > UINT32_MAX))
			st = EVAL_DOMAIN;
		if (st != EVAL_OK) {
			*which = 6;
			return st;
		}
	}
	return EVAL_OK;
}

bool ir_dims_launchable(const int64_t dims[7])
{
	static const int64_t max[6] = {INT64_C(2147483647), 65535, 65535, 1024, 1024, 64};
	for (int i = 0; i < 6; i++)
		if (dims[i] > max[i])
			return false;
	return dims[3] * dims[4] * dims[5] <= 1024;
}

bool ir_dispatchable(const kernel *k, const int64_t *values, const int64_t *params)
{
	if (ir_first_invalid(k, values, params, NULL) >= 0)
		return false;
	if (!k->is_global)
		return true;
	/* The launch may use per-variant values: this variant's. */
	int64_t own[k->nparams + 1];
	memcpy(own, params, (size_t)k->nparams * sizeof *own);
	if (ir_variant_params(k, values, own) != EVAL_OK)
		return false;
	eval_env env = {.tunables = values, .ntunables = k->ntunables, .params = own,
	                .nparams = k->nparams};
	int64_t dims[7];
	int which;
	return ir_launch_dims(&k->grid, &k->block, &k->smem, &env, dims, &which) == EVAL_OK &&
	       ir_dims_launchable(dims);
}

static void put_value(strbuf *sb, const tunable *t, int64_t v)
{
	if (t->is_bool)
		strbuf_puts(sb, v ? "true" : "false");
	else
		strbuf_printf(sb, "%lld", (long long)v);
}

char *ir_variant_name(arena *a, const kernel *k, const int64_t *values)
{
	strbuf sb;
	strbuf_init(&sb);
	strbuf_puts(&sb, k->name);
	if (k->is_template) {
		strbuf_putc(&sb, '<');
		for (int i = 0; i < k->ntparams; i++) {
			const tparam *tp = &k->tparams[i];
			if (i)
				strbuf_puts(&sb, ", ");
			if (tp->tunable >= 0)
				put_value(&sb, &k->tunables[tp->tunable], values[tp->tunable]);
			else
				strbuf_puts(&sb, tp->default_text ? tp->default_text : "?");
		}
		strbuf_putc(&sb, '>');
	}
	bool first = true;
	for (int i = 0; i < k->ntunables; i++) {
		const tunable *t = &k->tunables[i];
		if (t->tparam >= 0)
			continue;
		strbuf_puts(&sb, first ? "[" : ", ");
		strbuf_printf(&sb, "%s=", t->name);
		put_value(&sb, t, values[i]);
		first = false;
	}
	if (!first)
		strbuf_putc(&sb, ']');
	char *s = arena_strdup(a, sb.data);
	strbuf_finish(&sb);
	return s;
}

/* ---- Text that later stages write into generated code -------------------- */

static bool id_start(char c) { return isalpha((unsigned char)c) || c == '_'; }
static bool id_char(char c) { return isalnum((unsigned char)c) || c == '_'; }

/* Length of the identifier at p, 0 if none starts there. */
static size_t word_len(const char *p)
{
	size_t n = 0;
	if (!id_start(p[0]))
		return 0;
	while (id_char(p[n]))
		n++;
	return n;
}

static bool word_is(const char *p, size_t n, const char *w)
{
	return strlen(w) == n && !strncmp(p, w, n);
}

static bool word_in(const char *p, size_t n, const char *const *words, size_t nwords)
{
	for (size_t i = 0; i < nwords; i++)
		if (word_is(p, n, words[i]))
			return true;
	return false;
}

bool ir_is_identifier(const char *s)
{
	size_t n = word_len(s);
	return n && !s[n];
}

bool ir_is_source_identifier(const char *s)
{
	size_t n = 0;
	while (s[n] && ((unsigned char)s[n] >= 0x80 || id_char(s[n])))
		n++;
	return n && !s[n] && !isdigit((unsigned char)s[0]);
}

bool ir_is_qualified_name(const char *s)
{
	if (s[0] == ':' && s[1] == ':')
		s += 2;
	for (;;) {
		size_t n = word_len(s);
		if (!n)
			return false;
		s += n;
		if (!*s)
			return true;
		if (s[0] != ':' || s[1] != ':')
			return false;
		s += 2;
	}
}

typedef struct tscan {
	const char *p;
	int depth;             /* of template argument lists */
} tscan;

static void skip_space(tscan *t)
{
	if (*t->p == ' ')
		t->p++;
}

static bool scan_type(tscan *t);

/* targs := < (arg (, arg)*)? >     arg := type | -? digit alnum* */
static bool scan_targs(tscan *t)
{
	if (*t->p != '<' || ++t->depth > 8)
		return false;
	t->p++;
	skip_space(t);
	if (*t->p == '>') {
		t->p++;
		t->depth--;
		return true;
	}
	for (;;) {
		skip_space(t);
		if (*t->p == '-' || isdigit((unsigned char)*t->p)) {
			if (*t->p == '-')
				t->p++;
			if (!isdigit((unsigned char)*t->p))
				return false;
			while (isalnum((unsigned char)*t->p))
				t->p++;
		} else if (!scan_type(t)) {
			return false;
		}
		skip_space(t);
		if (*t->p == ',') {
			t->p++;
			continue;
		}
		if (*t->p != '>')
			return false;
		t->p++;
		t->depth--;
		return true;
	}
}

/* qname := [::] id targs? (:: id targs?)* */
static bool scan_qname(tscan *t)
{
	if (t->p[0] == ':' && t->p[1] == ':')
		t->p += 2;
	for (;;) {
		size_t n = word_len(t->p);
		if (!n)
			return false;
		t->p += n;
		if (*t->p == '<' || (t->p[0] == ' ' && t->p[1] == '<')) {
			skip_space(t);
			if (!scan_targs(t))
				return false;
		}
		if (t->p[0] != ':' || t->p[1] != ':')
			return true;
		t->p += 2;
	}
}

/* type := cv* base cv* ptr* ref?  (ir.h has the whole grammar) */
static bool scan_type(tscan *t)
{
	static const char *const cv[] = {"const", "volatile"};
	static const char *const builtin[] = {
		"void", "bool", "_Bool", "char", "wchar_t", "char8_t", "char16_t", "char32_t",
		"short", "int", "long", "signed", "unsigned", "float", "double", "__int128",
	};
	static const char *const elaborated[] = {"struct", "class", "union", "enum", "typename"};
	static const char *const ptrq[] = {"const", "volatile", "__restrict", "__restrict__", "restrict"};
	enum { NONE, BUILTIN, NAMED } base = NONE;
	for (;;) {
		const char *save = t->p;
		skip_space(t);
		size_t n = word_len(t->p);
		if (!n && (t->p[0] != ':' || t->p[1] != ':')) {
			t->p = save;
			break;
		}
		if (n && word_in(t->p, n, cv, COUNTOF(cv))) {
			t->p += n;
		} else if (n && word_in(t->p, n, builtin, COUNTOF(builtin))) {
			if (base == NAMED)
				return false;
			base = BUILTIN;
			t->p += n;
		} else if (base != NONE) {
			return false;
		} else {
			if (n && word_in(t->p, n, elaborated, COUNTOF(elaborated))) {
				t->p += n;
				if (*t->p != ' ')
					return false;
				t->p++;
			}
			if (!scan_qname(t))
				return false;
			base = NAMED;
		}
	}
	if (base == NONE)
		return false;
	for (;;) {
		const char *save = t->p;
		skip_space(t);
		if (*t->p != '*') {
			t->p = save;
			break;
		}
		t->p++;
		for (;;) {
			const char *q = t->p;
			skip_space(t);
			size_t n = word_len(t->p);
			if (!n || !word_in(t->p, n, ptrq, COUNTOF(ptrq))) {
				t->p = q;
				break;
			}
			t->p += n;
		}
	}
	const char *save = t->p;
	skip_space(t);
	if (*t->p == '&') {
		t->p++;
		if (*t->p == '&')
			t->p++;
	} else {
		t->p = save;
	}
	return true;
}

bool ir_type_text_ok(const char *s)
{
	tscan t = {s, 0};
	return scan_type(&t) && *t.p == '\0';
}

bool ir_template_arg_ok(const char *s)
{
	int depth = 0;
	bool any = false;
	for (const char *p = s; *p; p++) {
		unsigned char c = (unsigned char)*p;
		if (isalnum(c) || c == '_') {
			any = true;
		} else if (c == ':' && p[1] == ':') {
			p++;
		} else if (c == '<' && p[1] == '<') {
			p++;
		} else if (c == '/' && (p[1] == '/' || p[1] == '*')) {
			return false;
		} else if (c == '(') {
			depth++;
		} else if (c == ')') {
			if (--depth < 0)
				return false;
		} else if (!strchr(" +-*/%&|^~!", c)) {
			return false;
		}
	}
	return any && depth == 0;
}

bool ir_source_hash_ok(const char *s)
{
	size_t n = 0;
	for (; s[n]; n++)
		if (!isdigit((unsigned char)s[n]) && !(s[n] >= 'a' && s[n] <= 'f'))
			return false;
	return n == 32;
}

/* ---- Derived features ---------------------------------------------------- */

/* Whether e uses shape arguments only (and literals), and at least one. */
static bool shape_only(const kernel *k, const expr *e, bool *any)
{
	if (!e)
		return true;
	if (e->kind == EXPR_NAME) {
		if (e->name_kind == NAME_PARAM && k->params[e->index].shape >= 0) {
			*any = true;
			return true;
		}
		return e->name_kind == NAME_CONST;
	}
	return shape_only(k, e->a, any) && shape_only(k, e->b, any) && shape_only(k, e->c, any);
}

/* A product of two or more shape arguments (literal factors allowed). */
static int product_factors(const kernel *k, const expr *e)
{
	if (e->kind == EXPR_NAME)
		return e->name_kind == NAME_PARAM && k->params[e->index].shape >= 0 ? 1 : -1000;
	if (e->kind == EXPR_INT)
		return 0;
	if (e->kind == EXPR_BINARY && e->op == OP_MUL)
		return product_factors(k, e->a) + product_factors(k, e->b);
	return -1000;
}

typedef struct derive_ctx {
	aotc_module *m;
	kernel *k;
	aexpr *out;
	int n, cap;
	int flags;             /* divisibility flags added */
} derive_ctx;

static expr *new_expr(derive_ctx *c, expr_kind kind, aotc_loc loc)
{
	expr *e = arena_alloc(&c->m->arena, sizeof *e);
	memset(e, 0, sizeof *e);
	e->kind = kind;
	e->loc = loc;
	return e;
}

static void add_feature(derive_ctx *c, expr *e)
{
	strbuf sb;
	strbuf_init(&sb);
	expr_print(&sb, e);
	for (int i = 0; i < c->n; i++)
		if (!strcmp(c->out[i].text, sb.data)) {
			strbuf_finish(&sb);
			return;
		}
	if (c->n < c->cap) {
		c->out[c->n++] = (aexpr){e, arena_strdup(&c->m->arena, sb.data), e->loc};
	}
	strbuf_finish(&sb);
}

/* x % d == 0 */
static void add_flag(derive_ctx *c, expr *x, int64_t d)
{
	if (d < 2 || c->flags >= IR_DERIVED_FLAGS)
		return;
	expr *lit = new_expr(c, EXPR_INT, x->loc), *zero = new_expr(c, EXPR_INT, x->loc);
	lit->value = d;
	expr *mod = new_expr(c, EXPR_BINARY, x->loc);
	mod->op = OP_MOD;
	mod->a = x;
	mod->b = lit;
	expr *eq = new_expr(c, EXPR_BINARY, x->loc);
	eq->op = OP_EQ;
	eq->a = mod;
	eq->b = zero;
	int before = c->n;
	add_feature(c, eq);
	c->flags += c->n > before;
}

/* divisor: a literal, or each value of a tunable */
static void add_flags(derive_ctx *c, expr *x, const expr *d)
{
	bool any = false;
	if (!shape_only(c->k, x, &any) || !any)
		return;
	if (d->kind == EXPR_INT)
		add_flag(c, x, d->value);
	else if (d->kind == EXPR_NAME && d->name_kind == NAME_TUNABLE)
		for (int i = 0; i < c->k->tunables[d->index].nvalues; i++)
			add_flag(c, x, c->k->tunables[d->index].values[i]);
}

/* x % d == 0 in a VALID_IF */
static void flags_in_valid_if(derive_ctx *c, expr *e)
{
	if (!e)
		return;
	if (e->kind == EXPR_BINARY && e->op == OP_EQ && e->a->kind == EXPR_BINARY && e->a->op == OP_MOD &&
	    e->b->kind == EXPR_INT && e->b->value == 0)
		add_flags(c, e->a->a, e->a->b);
	flags_in_valid_if(c, e->a);
	flags_in_valid_if(c, e->b);
	flags_in_valid_if(c, e->c);
}

/* cdiv(x, d) in a launch expression */
static void flags_in_launch(derive_ctx *c, expr *e)
{
	if (!e)
		return;
	if (e->kind == EXPR_CALL && e->func == FN_CDIV)
		add_flags(c, e->a, e->b);
	flags_in_launch(c, e->a);
	flags_in_launch(c, e->b);
	flags_in_launch(c, e->c);
}

void ir_derive_features(aotc_module *m, kernel *k)
{
	if (k->nfeatures)
		return;
	derive_ctx c = {m, k, NULL, 0, k->nparams + k->nbuffers + IR_DERIVED_FLAGS, 0};
	c.out = arena_alloc(&m->arena, (size_t)c.cap * sizeof *c.out + 1);
	for (int i = 0; i < k->nparams; i++)
		if (k->params[i].shape >= 0) {
			expr *e = new_expr(&c, EXPR_NAME, k->params[i].loc);
			e->name = k->params[i].name;
			e->name_kind = NAME_PARAM;
			e->index = i;
			add_feature(&c, e);
		}
	for (int b = 0; b < k->nbuffers; b++)
		if (k->buffers[b].count.e && product_factors(k, k->buffers[b].count.e) >= 2)
			add_feature(&c, k->buffers[b].count.e);
	for (int i = 0; i < k->nvalid_ifs; i++)
		flags_in_valid_if(&c, k->valid_ifs[i].e);
	const launch *ls[2] = {&k->grid, &k->block};
	for (int l = 0; l < 2; l++)
		for (int i = 0; i < ls[l]->ndims; i++)
			flags_in_launch(&c, ls[l]->dims[i].e);
	k->features = c.out;
	k->nfeatures = c.n;
}
