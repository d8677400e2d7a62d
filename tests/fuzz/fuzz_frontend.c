/* The whole frontend (frontend/frontend.c through libclang) on a small
 * source: one input is a .cu file, written to a temporary file and parsed
 * with the embedded CUDA shim (AOTC_FRONTEND=shim: no toolkit headers). A
 * module that parses goes to JSON and back, which must give the same JSON.
 * Slow (libclang parses each input from scratch): not in the CI run, see
 * tools/fuzz.sh. */
#include <stdlib.h>
#include <string.h>

#include "frontend.h"
#include "fuzz.h"
#include "ir.h"
#include "util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	setenv("AOTC_FRONTEND", "shim", 1);
	char path[4200];
	snprintf(path, sizeof path, "%s/kernel.cu", fuzz_tmpdir());
	fuzz_write(path, data, size);
	diags d;
	fuzz_diags(&d);
	if (getenv("FUZZ_VERBOSE"))
		d.out = stderr;
	frontend_options opt = {0};
	aotc_module *m = frontend_parse(path, &opt, &d);
	if (m) {
		char *json = ir_to_json(m);
		diags quiet;
		diags_init(&quiet);
		quiet.out = getenv("FUZZ_VERBOSE") ? stderr : NULL;
		aotc_module *back = ir_from_json(json, strlen(json), "k.ir.json", &quiet);
		FUZZ_CHECK(back);
		char *again = ir_to_json(back);
		FUZZ_CHECK(strcmp(json, again) == 0);
		free(again);
		free(json);
		ir_module_destroy(back);
		diags_finish(&quiet);
		ir_module_destroy(m);
	}
	diags_finish(&d);
	return 0;
}
