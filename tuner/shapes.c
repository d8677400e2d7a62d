#include "shapes.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "util.h"

void shape_set_init(shape_set *s, const kernel *k)
{
	memset(s, 0, sizeof *s);
	s->params = xcalloc((size_t)k->nparams + 1, sizeof *s->params);
	for (int i = 0; i < k->nparams; i++)
		if (k->params[i].shape >= 0)
			s->params[s->nargs++] = i;
}

void shape_set_finish(shape_set *s)
{
	free(s->params);
	free(s->values);
	free(s->calls);
	memset(s, 0, sizeof *s);
}

const int64_t *shape_row(const shape_set *s, int i) { return s->values + (size_t)i * s->nargs; }

static int push_row(shape_set *s, const int64_t *row)
{
	size_t w = (size_t)s->nargs;
	if ((size_t)s->count == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 64;
		s->values = xrealloc(s->values, s->cap * (w ? w : 1) * sizeof *row);
		if (s->calls)
			s->calls = xrealloc(s->calls, s->cap * sizeof *s->calls);
	}
	if (s->calls)
		s->calls[s->count] = 0;
	memcpy(s->values + (size_t)s->count * w, row, w * sizeof *row);
	return s->count++;
}

int shape_set_add(shape_set *s, const int64_t *row)
{
	size_t w = (size_t)s->nargs;
	for (int i = 0; i < s->count; i++)
		if (memcmp(shape_row(s, i), row, w * sizeof *row) == 0)
			return i;
	return push_row(s, row);
}

static uint64_t splitmix(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

/* Sorts v[0..n) and drops repeats; returns the new count. */
static int sort_unique(int64_t *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, cmp_i64);
	int m = 0;
	for (int i = 0; i < n; i++)
		if (m == 0 || v[m - 1] != v[i])
			v[m++] = v[i];
	return m;
}

/* geom(lo, hi, n): lo * (hi / lo)^(i / (n - 1)) rounded, i = 0..n-1 (values
 * that round alike are one); logrand(lo, hi, n): n distinct integers whose
 * logarithms are uniform in [log lo, log(hi + 1)), from seed. Both sorted. */
static int64_t *spaced_values(const shape_dim *g, uint64_t seed, int *n)
{
	int want = (int)g->count;
	int64_t *v = xmalloc((size_t)want * sizeof *v + 1);
	double llo = log((double)g->lo), lhi = log((double)g->hi);
	if (g->gen == GEN_GEOM) {
		for (int i = 0; i < want; i++) {
			double x = want == 1 ? (double)g->lo : exp(llo + (lhi - llo) * i / (want - 1));
			int64_t r = x >= (double)g->hi ? g->hi : (int64_t)llround(x);
			v[i] = r < g->lo ? g->lo : r > g->hi ? g->hi : r;
		}
		*n = sort_unique(v, want);
		return v;
	}
	/* logrand: draw until n distinct (gen_check made sure there are). */
	double ltop = log((double)g->hi + 1);
	int have = 0;
	uint64_t state = seed;
	while (have < want) {
		for (int i = have; i < want; i++) {
			double u = (double)(splitmix(&state) >> 11) * 0x1.0p-53;
			double x = floor(exp(llo + (ltop - llo) * u));
			v[i] = x <= (double)g->lo ? g->lo : x >= (double)g->hi ? g->hi : (int64_t)x;
		}
		have = sort_unique(v, want);
	}
	*n = have;
	return v;
}

/* The values one generator produces, each once, malloc'd; NULL when there
 * would be more than SHAPES_MAX. seed draws logrand's values. */
static int64_t *gen_values(const shape_dim *g, uint64_t seed, int *n)
{
	*n = 0;
	if (g->gen == GEN_GEOM || g->gen == GEN_LOGRAND) {
		if (g->count < 1 || g->count > SHAPES_MAX || g->lo <= 0 || g->hi < g->lo)
			return NULL;
		return spaced_values(g, seed, n);
	}
	if (g->gen == GEN_LIST) {
		if (g->nlist > SHAPES_MAX)
			return NULL;
		int64_t *v = xmalloc((size_t)g->nlist * sizeof *v + 1);
		for (int i = 0; i < g->nlist; i++) {
			int j = 0;
			while (j < *n && v[j] != g->list[i])
				j++;
			if (j == *n)
				v[(*n)++] = g->list[i];
		}
		return v;
	}
	/* Counted first: lo and hi may be anything a JSON IR holds. */
	int64_t x = 1;
	uint64_t count = 0;
	if (g->gen == GEN_POW2) {
		while (x < g->lo && x <= INT64_MAX / 2)
			x *= 2;
		for (int64_t y = x; y >= g->lo && y <= g->hi; y *= 2) {
			count++;
			if (y > INT64_MAX / 2)
				break;
		}
	} else {
		x = g->lo;
		if (g->step > 0 && g->hi >= g->lo)
			count = ((uint64_t)g->hi - (uint64_t)g->lo) / (uint64_t)g->step + 1;
	}
	if (count > SHAPES_MAX)
		return NULL;
	int64_t *v = xmalloc((size_t)count * sizeof *v + 1);
	for (uint64_t i = 0; i < count; i++) {
		v[i] = x;
		if (i + 1 < count) /* no step past hi: it may not fit */
			x = g->gen == GEN_POW2 ? x * 2 : x + g->step;
	}
	*n = (int)count;
	return v;
}

bool shapes_from_ir(const kernel *k, shape_set *s, uint64_t seed, diags *d)
{
	if (k->nshapes == 0) {
		diag_error(d, k->loc, "kernel '%s' has no AOTC_SHAPES; give --shapes FILE", k->name);
		return false;
	}
	/* Generators by shape argument, in parameter order. */
	int n = s->nargs;
	int64_t **vals = xcalloc((size_t)n + 1, sizeof *vals);
	int *counts = xcalloc((size_t)n + 1, sizeof *counts);
	int *pos = xcalloc((size_t)n + 1, sizeof *pos);
	int64_t *row = xcalloc((size_t)n + 1, sizeof *row);
	bool empty = false, ok = true;
	int64_t total = 1;
	for (int a = 0; a < n && ok; a++) {
		const shape_dim *g = &k->shapes[k->params[s->params[a]].shape];
		/* Each shape argument draws its own logrand() values. */
		uint64_t h = seed * 0x9e3779b97f4a7c15ull;
		for (const char *c = k->params[s->params[a]].name; *c; c++)
			h = (h ^ (unsigned char)*c) * 0x100000001b3ull;
		vals[a] = gen_values(g, h, &counts[a]);
		empty |= counts[a] == 0;
		for (int i = 0; vals[a] && i < counts[a] && ok; i++)
			if (!ir_param_fits(&k->params[s->params[a]], vals[a][i])) {
				diag_error(d, g->loc, "AOTC_SHAPES: %s = %lld does not fit the parameter's type (%s)",
				           k->params[s->params[a]].name, (long long)vals[a][i], k->params[s->params[a]].type);
				ok = false;
			}
		if (!vals[a] || (counts[a] && total > SHAPES_MAX / counts[a])) {
			diag_error(d, g->loc, "AOTC_SHAPES: more than %d shapes", SHAPES_MAX);
			ok = false;
		}
		total *= counts[a] ? counts[a] : 1;
	}
	/* Rows of distinct values are distinct: no need to search for each. */
	bool fresh = s->count == 0;
	while (ok && !empty) {
		for (int a = 0; a < n; a++)
			row[a] = vals[a][pos[a]];
		if (fresh)
			push_row(s, row);
		else
			shape_set_add(s, row);
		int a = n - 1;
		while (a >= 0 && ++pos[a] == counts[a])
			pos[a--] = 0;
		if (a < 0)
			break;
	}
	for (int a = 0; a < n; a++)
		free(vals[a]);
	free(vals);
	free(counts);
	free(pos);
	free(row);
	return ok;
}

/* Reads one shape object into row: exactly the shape arguments, integers.
 * what names it in messages ("shape 3", "kernels.sgemm[3].shape"). */
static bool read_shape(const kernel *k, const shape_set *s, json_t *o, aotc_loc at, const char *what,
                       int64_t *row, diags *d)
{
	if (!json_is_object(o)) {
		diag_error(d, at, "%s is not an object", what);
		return false;
	}
	for (int a = 0; a < s->nargs; a++) {
		const char *name = k->params[s->params[a]].name;
		json_t *v = json_object_get(o, name);
		if (!json_is_integer(v)) {
			diag_error(d, at, "%s: '%s' is %s", what, name, v ? "not an integer" : "missing");
			return false;
		}
		row[a] = json_integer_value(v);
		if (!ir_param_fits(&k->params[s->params[a]], row[a])) {
			diag_error(d, at, "%s: '%s' = %lld does not fit the parameter's type (%s)", what, name,
			           (long long)row[a], k->params[s->params[a]].type);
			return false;
		}
	}
	if (json_object_size(o) != (size_t)s->nargs) {
		const char *key;
		json_t *v;
		json_object_foreach(o, key, v) {
			int p = ir_find_param(k, key);
			if (p < 0 || k->params[p].shape < 0) {
				diag_error(d, at, "%s: '%s' is not a shape argument of '%s'", what, key, k->name);
				return false;
			}
		}
	}
	return true;
}

/* The rows of kernel k in a record file (see shapes_from_file), each
 * shape once with its calls summed. */
static bool read_record(const kernel *k, json_t *root, aotc_loc at, shape_set *s, int64_t *row, diags *d)
{
	json_t *version = json_object_get(root, "aotc_record");
	json_t *kernels = json_object_get(root, "kernels");
	if (json_is_integer(version) && json_integer_value(version) > 1) {
		diag_error(d, at, "record file: written by a newer aotc (\"aotc_record\" %lld; aotc " AOTC_VERSION_STRING
		           " reads version 1)", (long long)json_integer_value(version));
		return false;
	}
	if (!json_is_integer(version) || json_integer_value(version) != 1) {
		diag_error(d, at, "record file: \"aotc_record\" must be 1 (this aotc reads version 1)");
		return false;
	}
	if (!json_is_object(kernels)) {
		diag_error(d, at, "record file: \"kernels\" must be an object of kernel names");
		return false;
	}
	json_t *rows = json_object_get(kernels, k->id);
	if (!json_is_array(rows) || json_array_size(rows) == 0) {
		strbuf names;
		strbuf_init(&names);
		const char *key;
		json_t *v;
		json_object_foreach(kernels, key, v)
			strbuf_printf(&names, "%s%s", names.len ? ", " : "", key);
		diag_error(d, at, "record file: no shapes of kernel '%s' (it records %s)", k->id,
		           names.len ? names.data : "none");
		strbuf_finish(&names);
		return false;
	}
	if (!s->calls)
		s->calls = xcalloc(s->cap ? s->cap : 1, sizeof *s->calls);
	for (size_t i = 0; i < json_array_size(rows); i++) {
		json_t *r = json_array_get(rows, i);
		char what[96];
		snprintf(what, sizeof what, "kernels.%s[%zu]", k->id, i);
		json_t *calls = json_object_get(r, "calls");
		if (!json_is_object(r) || !json_is_integer(calls) || json_integer_value(calls) < 1) {
			diag_error(d, at, "%s must be {\"shape\": {...}, \"calls\": N} with N >= 1", what);
			return false;
		}
		snprintf(what, sizeof what, "kernels.%s[%zu].shape", k->id, i);
		if (!read_shape(k, s, json_object_get(r, "shape"), at, what, row, d))
			return false;
		int at_row = shape_set_add(s, row);
		uint64_t c = (uint64_t)json_integer_value(calls);
		s->calls[at_row] = s->calls[at_row] > UINT64_MAX - c ? UINT64_MAX : s->calls[at_row] + c;
	}
	return true;
}

bool shapes_from_file(const kernel *k, const char *path, shape_set *s, diags *d)
{
	json_error_t err;
	aotc_loc at = {path, 0, 0};
	size_t len;
	char *text = read_file_max(path, &len, (size_t)AOTC_INPUT_MAX_MIB << 20);
	if (!text) {
		if (errno == EFBIG)
			diag_error(d, at, "larger than %d MiB (the limit on shapes files)", AOTC_INPUT_MAX_MIB);
		else
			diag_error(d, at, "cannot read shapes: %s", strerror(errno));
		return false;
	}
	json_t *root = json_loadb(text, len, 0, &err);
	free(text);
	if (!root) {
		if (err.line > 0)
			at = (aotc_loc){path, err.line, err.column > 0 ? err.column : 1};
		diag_error(d, at, "cannot read shapes: %s", err.text);
		return false;
	}
	bool ok = false;
	int64_t *row = xcalloc((size_t)s->nargs + 1, sizeof *row);
	if (json_is_object(root) && json_object_get(root, "aotc_record")) {
		ok = read_record(k, root, at, s, row, d);
		goto done;
	}
	if (!json_is_array(root) || json_array_size(root) == 0) {
		diag_error(d, at, "shapes file must be a non-empty JSON array of objects, or a record file (AOTC_RECORD)");
		goto done;
	}
	for (size_t i = 0; i < json_array_size(root); i++) {
		char what[32];
		snprintf(what, sizeof what, "shape %zu", i);
		if (!read_shape(k, s, json_array_get(root, i), at, what, row, d))
			goto done;
		shape_set_add(s, row);
	}
	ok = true;
done:
	free(row);
	json_decref(root);
	return ok;
}

void shape_format(strbuf *sb, const kernel *k, const shape_set *s, int i)
{
	const int64_t *row = shape_row(s, i);
	for (int a = 0; a < s->nargs; a++)
		strbuf_printf(sb, "%s%s=%lld", a ? " " : "", k->params[s->params[a]].name,
		              (long long)row[a]);
}

eval_status shape_param_values(const kernel *k, const shape_set *s, const int64_t *row,
                               int64_t *params)
{
	memset(params, 0, (size_t)k->nparams * sizeof *params);
	/* A value the parameter's type cannot hold: every value is still
	 * computed (launch_dims takes them as they are), then OVERFLOW. */
	bool fits = true;
	for (int a = 0; a < s->nargs; a++) {
		params[s->params[a]] = row[a];
		fits = fits && ir_param_fits(&k->params[s->params[a]], row[a]);
	}
	eval_env env = {.params = params, .nparams = k->nparams};
	for (int i = 0; i < k->nvalues; i++) {
		const value *v = &k->values[i];
		if (v->is_float || ir_param_per_variant(k, v->param))
			continue; /* per variant: ir_variant_params */
		eval_status st = expr_eval(v->iexpr.e, &env, &params[v->param]);
		if (st != EVAL_OK)
			return st;
		fits = fits && ir_param_fits(&k->params[v->param], params[v->param]);
	}
	return fits ? EVAL_OK : EVAL_OVERFLOW;
}
