/* aotc report DB: read the database, find the kernel it was tuned from,
 * learn, figure the selectors on the held-out shapes, write the report. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "dbset.h"
#include "dispatch.h"
#include "driver.h"
#include "heldout.h"
#include "from_db.h"
#include "report.h"
#include "util.h"

/* The kernel db was tuned from, where its source is still there unchanged
 * (then report learns what emit learns: features, validity, the cost
 * model), with its module in *km and the source's path in *src; else NULL
 * and *why says what is wrong with the source. */
static const kernel *tuned_kernel(const options *o, const tune_db *db, aotc_module **km, char **src,
                                  const char **why)
{
	*km = NULL;
	*src = db->source ? dbset_find_source(db->source, o->file) : NULL;
	if (!*src) {
		*why = "is not there";
		return NULL;
	}
	diags quiet;
	diags_init_buffered(&quiet);
	options so = *o;
	so.file = *src;
	*km = driver_load_module(&so, false, &quiet);
	diags_finish(&quiet);
	kernel *k = NULL;
	for (int i = 0; *km && i < (*km)->nkernels && !k; i++)
		if (!strcmp((*km)->kernels[i].id, db->kernel))
			k = &(*km)->kernels[i];
	db_key key;
	if (!*km || !k) {
		*why = "does not parse or has no such kernel";
		return NULL;
	}
	if ((key = dbset_key(k), db_count_stale(db, &key, (*km)->source_hash)) != 0) {
		*why = "has changed since it was tuned";
		return NULL;
	}
	ir_derive_features(*km, k);
	return k;
}

/* The selectors' figures on the aotc eval database beside db (none without
 * k): how many shapes, into est. */
static int held_out(const options *o, const tune_db *db, const kernel *k, const hresult *r,
                    const hmatrix *m, hstats est[SEL_COUNT])
{
	int neval = 0;
	tune_db *edb = NULL;
	hmatrix em;
	const char *hw = json_string_value(json_object_get(db->hardware, "id"));
	char *dir = dbset_dir_of(o->file), *epath = hw ? dbset_eval_path(dir, db->kernel, hw) : NULL;
	if (k && epath && eval_matrix_for(epath, db->source_hash, k, &edb, &em)) {
		neval = eval_selectors(r, m, &em, est);
		hmatrix_from_db_finish(&em);
		db_close(edb);
	}
	free(dir);
	free(epath);
	return neval;
}

aotc_status report_command(const options *o, diags *d)
{
	static const report_format formats[] = {
		[OPTIONS_FORMAT_TEXT] = REPORT_TEXT, [OPTIONS_FORMAT_JSON] = REPORT_JSON,
		[OPTIONS_FORMAT_MARKDOWN] = REPORT_MARKDOWN, [OPTIONS_FORMAT_HTML] = REPORT_HTML,
	};
	tune_db *db = db_load(o->file, d);
	if (!db)
		return AOTC_ENVIRONMENT;
	aotc_module *km;
	char *src;
	const char *why = NULL;
	const kernel *k = tuned_kernel(o, db, &km, &src, &why);
	hmatrix m;
	if (!hmatrix_from_db(&m, db, k, d)) {
		k = NULL;
		hmatrix_from_db(&m, db, NULL, d);
	}
	if (!k)
		fprintf(stderr, "aotc: note: the source %s %s: features are the shape arguments, validity the recorded statuses, no cost model (aotc emit may learn another dispatch)\n",
		        db->source ? db->source : "(none recorded)", why ? why : "does not match");
	hoptions ho;
	driver_hoptions(o, &ho);
	hresult r;
	h_build(&r, &m, &ho);
	hstats est[SEL_COUNT];
	int neval = held_out(o, db, k, &r, &m, est);
	/* The dispatch select() would run: what report says is dispatched. */
	dispatch dp;
	aotc_status status = AOTC_OK;
	if (!dispatch_from_result(&dp, k, db, &m, &r, neval > 0 ? &est[SEL_TREE] : NULL, neval, d)) {
		status = AOTC_ENVIRONMENT;
		goto out;
	}
	report_input in = {db, &m, &r, est, neval, &dp, k};
	strbuf sb;
	strbuf_init(&sb);
	report_write(&sb, formats[o->format], &in);
	if (fwrite(sb.data, 1, sb.len, stdout) != sb.len || fflush(stdout) != 0) {
		fprintf(stderr, "aotc: cannot write the report: %s\n", strerror(errno));
		status = AOTC_ENVIRONMENT;
	}
	strbuf_finish(&sb);
	dispatch_finish(&dp);
out:
	hresult_finish(&r);
	hmatrix_from_db_finish(&m);
	db_close(db);
	ir_module_destroy(km);
	free(src);
	return status;
}
