/* Unit tests for the AOTC_SHAPES generators geom() and logrand()
 * (tuner/shapes.c), on the IR of tests/frontend/shapes_geom_logrand.cu:
 * known values, determinism, the seed, distinctness, the range and a
 * rough log-uniformity. Usage: test_shapes IR_JSON */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "diag.h"
#include "ir.h"
#include "shapes.h"
#include "util.h"

#define check(ok, what) CHECKF((ok), "%s", (what))

/* The distinct values of shape argument a, ascending, into out; the count. */
static int values_of(const shape_set *s, int a, int64_t *out)
{
	int n = 0;
	for (int i = 0; i < s->count; i++) {
		int64_t v = shape_row(s, i)[a];
		int j = 0;
		while (j < n && out[j] != v)
			j++;
		if (j == n)
			out[n++] = v;
	}
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 && out[j - 1] > out[j]; j--) {
			int64_t t = out[j];
			out[j] = out[j - 1];
			out[j - 1] = t;
		}
	return n;
}

int main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	size_t size;
	char *text = read_file(argv[1], &size);
	if (!text)
		return 2;
	diags d;
	diags_init(&d);
	aotc_module *m = ir_from_json(text, size, argv[1], &d);
	free(text);
	const kernel *k = m ? ir_find_kernel(m, "k") : NULL;
	if (!k) {
		printf("FAIL cannot read %s\n", argv[1]);
		return 1;
	}

	shape_set a, b, c;
	shape_set_init(&a, k);
	shape_set_init(&b, k);
	shape_set_init(&c, k);
	check(shapes_from_ir(k, &a, 1, &d) && shapes_from_ir(k, &b, 1, &d) && shapes_from_ir(k, &c, 2, &d),
	      "shapes from geom(128, 8192, 9) x logrand(1, 100000, 12)");
	check(a.count == 9 * 12, "9 x 12 shapes");

	int64_t v[64], w[64];
	int n = values_of(&a, 0, v);
	int same;
	/* geom: 128 * 64^(i/8), rounded. */
	static const int64_t want[] = {128, 215, 362, 609, 1024, 1722, 2896, 4871, 8192};
	same = n == 9;
	for (int i = 0; i < n && same; i++)
		same = v[i] == want[i];
	check(same, "geom(128, 8192, 9) gives 128 215 362 609 1024 1722 2896 4871 8192");

	/* logrand: 12 distinct values in range, the same for the same seed, others for another. */
	n = values_of(&a, 1, v);
	check(n == 12, "logrand(1, 100000, 12) gives 12 distinct values");
	int in = 1;
	for (int i = 0; i < n; i++)
		in &= v[i] >= 1 && v[i] <= 100000;
	check(in, "logrand values are in [1, 100000]");
	int nb = values_of(&b, 1, w);
	check(nb == n && memcmp(v, w, (size_t)n * sizeof *v) == 0, "logrand: same seed, same values");
	int nc = values_of(&c, 1, w);
	check(nc == 12 && memcmp(v, w, (size_t)n * sizeof *v) != 0, "logrand: another seed, other values");

	/* Log-uniform: over many seeds, about half the draws fall below sqrt(1e5) ~ 316. */
	int below = 0, total = 0;
	for (uint64_t seed = 10; seed < 60; seed++) {
		shape_set t;
		shape_set_init(&t, k);
		if (shapes_from_ir(k, &t, seed, &d)) {
			int nt = values_of(&t, 1, w);
			for (int i = 0; i < nt; i++)
				below += w[i] <= 316;
			total += nt;
		}
		shape_set_finish(&t);
	}
	check(total == 50 * 12 && below > total * 0.4 && below < total * 0.6,
	      "logrand draws are log-uniform (half below the geometric middle)");

	shape_set_finish(&a);
	shape_set_finish(&b);
	shape_set_finish(&c);
	ir_module_destroy(m);
	diags_finish(&d);
	return check_done();
}
