/* The IR's JSON form (ir/ir_json.c: ir_from_json) and what the later stages
 * do with an IR that loads: enumerate its configurations and name them, set
 * up its shapes from AOTC_SHAPES, evaluate launches and features, and write
 * it back to JSON, which must load again to the same JSON. */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "ir.h"
#include "shapes.h"
#include "util.h"

typedef struct visit_ctx {
	const kernel *k;
	aotc_module *m;
	const shape_set *s;
	long n;
} visit_ctx;

static bool visit(void *ctx, const int64_t *values)
{
	visit_ctx *c = ctx;
	const kernel *k = c->k;
	ir_variant_name(&c->m->arena, k, values);
	int64_t *params = xcalloc((size_t)k->nparams + 1, sizeof *params);
	int64_t *feats = xcalloc((size_t)(k->nfeatures > k->nparams ? k->nfeatures : k->nparams) + 1,
	                         sizeof *feats);
	for (int i = 0; i < c->s->count && i < 8; i++) {
		if (shape_param_values(k, c->s, shape_row(c->s, i), params) != EVAL_OK)
			continue;
		ir_first_invalid(k, values, params, NULL);
		ir_dispatchable(k, values, params);
		ir_features(k, params, feats);
		int64_t dims[7];
		int which;
		eval_env env = {values, k->ntunables, params, k->nparams};
		ir_launch_dims(&k->grid, &k->block, &k->smem, &env, dims, &which);
		ir_launch_dims(&k->ref_grid, &k->ref_block, &k->ref_smem, &env, dims, &which);
	}
	free(params);
	free(feats);
	return ++c->n < 64;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	diags d;
	diags_init(&d);
	d.out = NULL; /* locations name arbitrary files: do not read them */
	aotc_module *m = ir_from_json((const char *)data, size, "k.ir.json", &d);
	if (m) {
		for (int i = 0; i < m->nkernels; i++) {
			const kernel *k = &m->kernels[i];
			shape_set s;
			shape_set_init(&s, k);
			if (k->nshapes)
				shapes_from_ir(k, &s, 1, &d);
			visit_ctx c = {k, m, &s, 0};
			ir_enumerate(k, visit, &c);
			/* alternatives take the kernel's shapes and parameters */
			for (int a = 0; a < k->nalts; a++) {
				visit_ctx ca = {&k->alts[a], m, &s, 0};
				ir_enumerate(&k->alts[a], visit, &ca);
			}
			shape_set_finish(&s);
		}
		char *json = ir_to_json(m);
		aotc_module *back = ir_from_json(json, strlen(json), "again.ir.json", &d);
		FUZZ_CHECK(back);
		char *again = ir_to_json(back);
		FUZZ_CHECK(strcmp(json, again) == 0);
		free(again);
		free(json);
		ir_module_destroy(back);
		ir_module_destroy(m);
	}
	diags_finish(&d);
	return 0;
}
