/* Tuning databases (tuner/db.c): the document loader and the journal
 * replay, through db_load, which takes a path. One input is a document,
 * optionally followed by a line "#journal" and the journal's lines; both
 * are written to temporary files. A database that loads is then read cell
 * by cell, saved (folding the journal in) and loaded again: that must
 * succeed with the same configurations, shapes and measurements. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "db.h"
#include "fuzz.h"
#include "util.h"

static const char separator[] = "\n#journal\n";

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
	fuzz_write(path, text, doc_len);
	if (sep) {
		const char *j = sep + sizeof separator - 1;
		fuzz_write(journal, j, size - (size_t)(j - text));
	} else {
		unlink(journal);
	}

	diags d;
	fuzz_diags(&d);
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
