/* The saved dispatch (heuristics/dispatch_json.c: dispatch_load), read for
 * the softmax kernel (tests/fuzz/dispatch_kernel.ir.json). One input is a
 * saved dispatch file, written where emit looks for it; its own "key" is
 * the key asked for, so that every check after the key's runs. A dispatch
 * that loads must answer select() for a few shapes without fault (indices
 * in range), save, and load again to the same saved bytes. */
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "dispatch.h"
#include "fuzz.h"
#include "ir.h"
#include "util.h"

#ifndef FUZZ_KERNEL_IR
#error "build with -DFUZZ_KERNEL_IR=path/to/dispatch_kernel.ir.json"
#endif

static aotc_module *module(void)
{
	static aotc_module *m;
	if (!m) {
		size_t len;
		char *text = read_file(FUZZ_KERNEL_IR, &len);
		FUZZ_CHECK(text);
		diags d;
		fuzz_diags(&d);
		m = ir_from_json(text, len, FUZZ_KERNEL_IR, &d);
		free(text);
		FUZZ_CHECK(m && m->nkernels == 1);
		ir_derive_features(m, &m->kernels[0]); /* as emit does before it loads */
	}
	return m;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const kernel *k = &module()->kernels[0];
	char dir[4200], path[4300], again[4300];
	snprintf(dir, sizeof dir, "%s/db/dispatch", fuzz_tmpdir());
	FUZZ_CHECK(mkdir_p(dir) == 0);
	snprintf(path, sizeof path, "%s/softmax.sm90.json", dir);
	snprintf(again, sizeof again, "%s/again.sm90.json", dir);
	fuzz_write(path, data, size);
	char key[64] = "none";
	json_t *root = json_loadb((const char *)data, size, 0, NULL);
	const char *jk = json_string_value(json_object_get(root, "key"));
	if (jk && strlen(jk) < sizeof key)
		strcpy(key, jk);
	json_decref(root);

	dispatch d;
	if (!dispatch_load(&d, k, path, key))
		return 0;
	static const int64_t rows[][2] = {{1, 1}, {700, 96}, {80000, 17400}, {0, 5}, {-1, 4}, {INT64_MAX, 2}};
	for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
		int v = dispatch_select(&d, k, rows[i]);
		FUZZ_CHECK(v >= -1 && v < d.nvariants);
	}
	diags dg;
	fuzz_diags(&dg);
	FUZZ_CHECK(dispatch_save(&d, key, again, &dg));
	dispatch e;
	FUZZ_CHECK(dispatch_load(&e, k, again, key));
	FUZZ_CHECK(e.nvariants == d.nvariants && e.nnodes == d.nnodes && e.norders == d.norders &&
	           e.nfeatures == d.nfeatures);
	dispatch_finish(&e);
	dispatch_finish(&d);
	return 0;
}
