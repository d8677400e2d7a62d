/* Tuning databases (tuner/db.c): the document loader and the journal
 * replay, which take a path. One input is a document, optionally followed
 * by a line "#journal" and the journal's lines; both are written to
 * temporary files. First db_open, as `aotc tune` opens it for kernel
 * "twice" (tunable MODE, shape argument n; the stale check drops another
 * kernel's measurements), then one measurement recorded and saved. Then, on
 * the input again, db_load as emit and report use it: a database that loads
 * is read cell by cell, saved (folding the journal in) and loaded again,
 * which must succeed with the same configurations, shapes and measurements. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "db.h"
#include "fuzz.h"
#include "util.h"

static const char separator[] = "\n#journal\n";

static void open_record_save(const char *path, diags *d)
{
	static const char *const tunables[] = {"MODE"}, *const shape_args[] = {"n"};
	json_t *hw = json_pack("{s:s}", "id", "cuda_NVIDIA_H200_13.0");
	json_t *method = json_pack("{s:s}", "timer", "fuzz");
	int invalidated;
	tune_db *db = db_open(path, "twice", "tests/tuner/faulty.cu",
	                      "68f72ced4d99ff198a44461de2756770", tunables, 1, shape_args, 1, hw,
	                      method, NULL, &invalidated, d);
	if (db) {
		double samples[] = {0.5, 0.25};
		measurement m = {.status = MS_OK, .time_ms = 0.5, .samples = samples, .nsamples = 2,
		                 .error = 0, .note = "fuzz"};
		m.config = db_config(db, "twice<9>", (int64_t[]){9});
		m.shape = db_shape(db, (int64_t[]){5});
		FUZZ_CHECK(db_record(db, &m) == 0);
		FUZZ_CHECK(db_get(db, m.config, m.shape));
		FUZZ_CHECK(db_save(db) == 0);
	}
	db_close(db);
	json_decref(hw);
	json_decref(method);
}

static const char *find_separator(const char *s, size_t n)
{
	size_t k = sizeof separator - 1;
	for (size_t i = 0; i + k <= n; i++)
		if (!memcmp(s + i, separator, k))
			return s + i;
	return NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data;
	const char *sep = find_separator(text, size);
	size_t doc_len = sep ? (size_t)(sep - text) + 1 : size;
	char path[4200], journal[4300];
	snprintf(path, sizeof path, "%s/db.json", fuzz_tmpdir());
	snprintf(journal, sizeof journal, "%s.journal", path);
	diags d;
	fuzz_diags(&d);
	for (int pass = 0; pass < 2; pass++) {
		fuzz_write(path, text, doc_len);
		if (sep) {
			const char *j = sep + sizeof separator - 1;
			fuzz_write(journal, j, size - (size_t)(j - text));
		} else {
			unlink(journal);
		}
		if (pass == 0)
			open_record_save(path, &d);
	}

	tune_db *db = db_load(path, &d);
	if (db) {
		for (int c = 0; c < db->nconfigs; c++) {
			FUZZ_CHECK(db_find_config(db, db->configs[c].name) >= 0);
			for (int s = 0; s < db->nshapes; s++)
				db_get(db, c, s);
		}
		FUZZ_CHECK(db_save(db) == 0);
		tune_db *again = db_load(path, &d);
		FUZZ_CHECK(again);
		FUZZ_CHECK(again->nconfigs == db->nconfigs && again->nshapes == db->nshapes &&
		           again->nmeas == db->nmeas);
		db_close(again);
	}
	db_close(db);
	diags_finish(&d);
	return 0;
}
