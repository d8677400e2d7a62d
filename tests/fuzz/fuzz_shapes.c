/* Shapes files (tuner/shapes.c: shapes_from_file, which takes a path: the
 * input is written to a temporary file) for a kernel with three shape
 * arguments M, N, K and an AOTC_VALUE over them, then what the tuner does
 * with each row: its parameter values and its printed form. */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "ir.h"
#include "shapes.h"
#include "util.h"

/* The IR of a small kernel, as `aotc parse` writes it (trimmed). */
static const char kernel_ir[] =
	"{\"aotc_ir\": 1, \"file\": \"k.cu\", \"source_hash\": \"0123456789abcdef0123456789abcdef\","
	" \"kernels\": [{\"name\": \"k\", \"loc\": \"k.cu:3:17\", \"global\": true, \"template\": true,"
	" \"template_params\": [{\"name\": \"BM\", \"loc\": \"k.cu:1:15\", \"is_type\": false, \"type\": \"int\"}],"
	" \"params\": ["
	"  {\"name\": \"M\", \"loc\": \"k.cu:3:23\", \"type\": \"int\", \"pointer\": false, \"const\": false, \"dtype\": \"i32\", \"elem_type\": \"int\", \"lanes\": 1},"
	"  {\"name\": \"N\", \"loc\": \"k.cu:3:30\", \"type\": \"int\", \"pointer\": false, \"const\": false, \"dtype\": \"i32\", \"elem_type\": \"int\", \"lanes\": 1},"
	"  {\"name\": \"K\", \"loc\": \"k.cu:3:37\", \"type\": \"long\", \"pointer\": false, \"const\": false, \"dtype\": \"i64\", \"elem_type\": \"long\", \"lanes\": 1},"
	"  {\"name\": \"ld\", \"loc\": \"k.cu:3:44\", \"type\": \"int\", \"pointer\": false, \"const\": false, \"dtype\": \"i32\", \"elem_type\": \"int\", \"lanes\": 1},"
	"  {\"name\": \"C\", \"loc\": \"k.cu:3:51\", \"type\": \"float *\", \"pointer\": true, \"const\": false, \"dtype\": \"f32\", \"elem_type\": \"float\", \"lanes\": 1}],"
	" \"tunables\": [{\"name\": \"BM\", \"loc\": \"k.cu:2:11\", \"bool\": false, \"values\": [32, 64]}],"
	" \"require\": [], \"valid_if\": [],"
	" \"grid\": {\"loc\": \"k.cu:2:1\", \"dims\": [{\"text\": \"cdiv(M, BM)\", \"loc\": \"k.cu:2:11\"}]},"
	" \"block\": {\"loc\": \"k.cu:2:1\", \"dims\": [{\"text\": \"BM\", \"loc\": \"k.cu:2:11\"}]},"
	" \"smem\": null,"
	" \"buffers\": [{\"param\": \"C\", \"loc\": \"k.cu:2:1\", \"count\": {\"text\": \"M * N + K\", \"loc\": \"k.cu:2:15\"}, \"role\": \"out\", \"init\": {\"kind\": \"default\"}}],"
	" \"values\": [{\"param\": \"ld\", \"loc\": \"k.cu:2:1\", \"expr\": {\"text\": \"N * K / M\", \"loc\": \"k.cu:2:15\"}}],"
	" \"shapes\": ["
	"  {\"param\": \"M\", \"loc\": \"k.cu:2:1\", \"gen\": \"pow2\", \"lo\": 1, \"hi\": 4},"
	"  {\"param\": \"N\", \"loc\": \"k.cu:2:1\", \"gen\": \"list\", \"values\": [3]},"
	"  {\"param\": \"K\", \"loc\": \"k.cu:2:1\", \"gen\": \"range\", \"lo\": 1, \"hi\": 2, \"step\": 1}],"
	" \"features\": [], \"reference\": null, \"tolerance\": null}]}";

static aotc_module *module(void)
{
	static aotc_module *m;
	if (!m) {
		diags d;
		diags_init(&d);
		m = ir_from_json(kernel_ir, sizeof kernel_ir - 1, "fuzz_shapes.c", &d);
		diags_finish(&d);
		if (!m)
			die("fuzz_shapes: the built-in IR does not load");
	}
	return m;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const kernel *k = &module()->kernels[0];
	char path[4200];
	snprintf(path, sizeof path, "%s/shapes.json", fuzz_tmpdir());
	fuzz_write(path, data, size);
	diags d;
	fuzz_diags(&d);
	shape_set s;
	shape_set_init(&s, k);
	if (shapes_from_file(k, path, &s, &d)) {
		FUZZ_CHECK(s.count > 0);
		int64_t params[8];
		strbuf sb;
		strbuf_init(&sb);
		for (int i = 0; i < s.count; i++) {
			shape_param_values(k, &s, shape_row(&s, i), params);
			shape_format(&sb, k, &s, i);
		}
		strbuf_finish(&sb);
	}
	shape_set_finish(&s);
	diags_finish(&d);
	return 0;
}
