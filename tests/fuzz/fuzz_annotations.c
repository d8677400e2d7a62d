/* The annotation parser and checks (ir/annotations.c, through ir_annotate
 * and ir_check) on a fixed kernel, as the frontend calls them. One input is
 * a list of annotations, one a line (a line ending in '\' continues):
 *
 *   AOTC_TUNE(BM, 64, 128)      as in a kernel file, or
 *   tune BM, 64, 128            kind and argument text
 *   host                        (alone) the kernel is a host kernel
 *
 * The kernel is template <int BM, int BN, int BK, int TM, int TN, bool FLAG,
 * typename T = float, int PAD = 1, int W = TILE * 2> __global__ void
 * k(int M, int N, int K, long S, float alpha, float beta, const float *A,
 * const float *B, float *C, float4 *V); the source's constants are TILE
 * (16), cfg::N (3), BIG (INT64_MAX) and FLT (not an integer). A kernel that
 * checks is then used as the later stages use it: its configurations, their
 * names and launches at a few shapes, its shape set, and its IR through
 * JSON and back, which must give the same JSON. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "ir.h"
#include "shapes.h"
#include "util.h"

static const char *const file = "kernel.cu";

static const_found find_const(void *ctx, const char *name, source_const *out, const char **why)
{
	(void)ctx;
	static const struct {
		const char *name;
		int64_t value;
	} consts[] = {{"TILE", 16}, {"cfg::N", 3}, {"BIG", INT64_MAX}};
	for (size_t i = 0; i < COUNTOF(consts); i++)
		if (!strcmp(name, consts[i].name)) {
			*out = (source_const){consts[i].name, {file, 1, 11}, CONST_VARIABLE,
			                      consts[i].value};
			return CONST_FOUND;
		}
	if (!strcmp(name, "FLT")) {
		*out = (source_const){"FLT", {file, 2, 17}, CONST_VARIABLE, 0};
		*why = "is a constant of type 'const float'";
		return CONST_NOT_INTEGER;
	}
	return CONST_UNKNOWN;
}

static void add_tparam(aotc_module *m, kernel *k, const char *name, const char *type,
                       const char *dflt)
{
	tparam *tp = &k->tparams[k->ntparams];
	tp->name = arena_strdup(&m->arena, name);
	tp->loc = (aotc_loc){file, 3, 11 + 8 * k->ntparams};
	tp->is_type = type == NULL;
	tp->type = type;
	tp->default_text = dflt;
	tp->tunable = -1;
	k->ntparams++;
}

static void add_param(aotc_module *m, kernel *k, const char *name, const char *type,
                      aotc_dtype dt, bool pointer, bool is_const, int vec)
{
	param *p = &k->params[k->nparams];
	p->name = arena_strdup(&m->arena, name);
	p->loc = (aotc_loc){file, 4, 5 + 6 * k->nparams};
	p->type = type;
	p->is_pointer = pointer;
	p->is_const = is_const;
	p->dtype = dt;
	p->vec = vec;
	p->elem_type = dtype_name(dt);
	p->buffer = p->value = p->shape = -1;
	k->nparams++;
}

static kernel *make_kernel(aotc_module *m)
{
	kernel *k = ir_add_kernel(m, "k", (aotc_loc){file, 4, 17});
	k->is_global = k->is_template = true;
	k->tparams = arena_alloc(&m->arena, 9 * sizeof *k->tparams);
	static const char *const tuned[] = {"BM", "BN", "BK", "TM", "TN"};
	for (size_t i = 0; i < COUNTOF(tuned); i++)
		add_tparam(m, k, tuned[i], "int", NULL);
	add_tparam(m, k, "FLAG", "bool", NULL);
	add_tparam(m, k, "T", NULL, "float");
	add_tparam(m, k, "PAD", "int", "1");
	add_tparam(m, k, "W", "int", "TILE * 2");
	k->params = arena_alloc(&m->arena, 10 * sizeof *k->params);
	add_param(m, k, "M", "int", DT_I32, false, false, 1);
	add_param(m, k, "N", "int", DT_I32, false, false, 1);
	add_param(m, k, "K", "int", DT_I32, false, false, 1);
	add_param(m, k, "S", "long", DT_I64, false, false, 1);
	add_param(m, k, "alpha", "float", DT_F32, false, false, 1);
	add_param(m, k, "beta", "float", DT_F32, false, false, 1);
	add_param(m, k, "A", "const float *", DT_F32, true, true, 1);
	add_param(m, k, "B", "const float *", DT_F32, true, true, 1);
	add_param(m, k, "C", "float *", DT_F32, true, false, 1);
	add_param(m, k, "V", "float4 *", DT_F32, true, false, 4);
	return k;
}

/* One record: "AOTC_KIND(text)" or "kind text". */
static void annotate(aotc_module *m, kernel *k, const char *s, size_t n, int line, diags *d)
{
	char kind[32];
	size_t i = 0, j = 0;
	if (n >= 5 && !memcmp(s, "AOTC_", 5)) {
		for (i = 5; i < n && s[i] != '(' && j + 1 < sizeof kind; i++)
			kind[j++] = (char)tolower((unsigned char)s[i]);
		kind[j] = 0;
		size_t end = n;
		while (end > i && s[end - 1] != ')')
			end--;
		if (end > i + 1) /* text between the '(' at i and the last ')' */
			ir_annotate(m, k, kind, s + i + 1, end - i - 2, (aotc_loc){file, line, (int)i + 2}, d);
		return;
	}
	for (; i < n && s[i] != ' ' && j + 1 < sizeof kind; i++)
		kind[j++] = s[i];
	kind[j] = 0;
	if (!strcmp(kind, "host") && i == n) {
		k->is_global = false;
		return;
	}
	if (i < n)
		i++;
	ir_annotate(m, k, kind, s + i, n - i, (aotc_loc){file, line, (int)i + 1}, d);
}

static bool visit(void *ctx, const int64_t *values)
{
	void **c = ctx;
	const kernel *k = c[0];
	aotc_module *m = c[1];
	long *n = c[2];
	static const int64_t shapes[][10] = {
		{128, 256, 64, 1, 0, 0, 0, 0, 0, 0},
		{1, 1, 1, 1, 0, 0, 0, 0, 0, 0},
		{INT32_MAX, INT32_MAX, 3, INT64_MAX, 0, 0, 0, 0, 0, 0},
		{0, -1, 0, -7, 0, 0, 0, 0, 0, 0},
	};
	ir_variant_name(&m->arena, k, values);
	for (size_t i = 0; i < COUNTOF(shapes); i++) {
		int64_t feats[64], dims[7];
		int which;
		ir_first_invalid(k, values, shapes[i], NULL);
		ir_dispatchable(k, values, shapes[i]);
		if (k->nfeatures <= (int)COUNTOF(feats))
			ir_features(k, shapes[i], feats);
		eval_env env = {values, k->ntunables, shapes[i], k->nparams};
		if (k->is_global)
			ir_launch_dims(&k->grid, &k->block, &k->smem, &env, dims, &which);
	}
	return ++*n < 64;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data;
	diags d;
	fuzz_diags(&d);
	diags_add_source(&d, file, text, size);
	aotc_module *m = ir_module_create(file);
	m->source = (const_source){find_const, NULL, NULL};
	memcpy(m->source_hash, "0123456789abcdef0123456789abcdef", 33);
	kernel *k = make_kernel(m);
	int line = 1;
	for (size_t start = 0; start < size;) {
		/* A record ends at a newline not preceded by '\'. */
		size_t end = start;
		int lines = 0;
		while (end < size && !(text[end] == '\n' && (end == start || text[end - 1] != '\\'))) {
			lines += text[end] == '\n';
			end++;
		}
		annotate(m, k, text + start, end - start, line, &d);
		line += lines + 1;
		start = end + 1;
	}
	if (ir_check(m, k, &d) == 0 && d.errors == 0) {
		long n = 0;
		void *ctx[] = {k, m, &n};
		ir_enumerate(k, visit, ctx);

		shape_set s;
		shape_set_init(&s, k);
		if (k->nshapes)
			shapes_from_ir(k, &s, 1, &d);
		shape_set_finish(&s);

		char *json = ir_to_json(m);
		diags quiet;
		diags_init(&quiet);
		quiet.out = getenv("FUZZ_VERBOSE") ? stderr : NULL;
		aotc_module *back = ir_from_json(json, strlen(json), "k.ir.json", &quiet);
		if (!back)
			fprintf(stderr, "%s\n", json);
		FUZZ_CHECK(back);
		char *again = ir_to_json(back);
		FUZZ_CHECK(strcmp(json, again) == 0);
		free(again);
		ir_module_destroy(back);
		diags_finish(&quiet);
		free(json);
	}
	ir_module_destroy(m);
	diags_finish(&d);
	return 0;
}
