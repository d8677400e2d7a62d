#include "learn.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "dbset.h"
#include "heldout.h"
#include "from_db.h"

void learnt_finish(learnt *l)
{
	if (!l)
		return;
	if (l->db) {
		hresult_finish(&l->r);
		hmatrix_from_db_finish(&l->hm);
		db_close(l->db);
	}
	memset(l, 0, sizeof *l);
}

static void put_str(XXH3_state_t *s, const char *text)
{
	XXH3_128bits_update(s, text ? text : "", text ? strlen(text) + 1 : 1);
}

static void put_num(XXH3_state_t *s, const char *name, double x)
{
	char buf[64];
	snprintf(buf, sizeof buf, "%s=%.17g", name, x);
	put_str(s, buf);
}

void dispatch_key(const aotc_module *m, const kernel *k, const learn_options *o, char key[33])
{
	XXH3_state_t *s = XXH3_createState();
	if (!s)
		die("out of memory");
	XXH3_128bits_reset(s);
	put_num(s, "dispatch", DISPATCH_VERSION);
	put_str(s, AOTC_VERSION_STRING);
	put_str(s, m->source_hash);
	put_str(s, k->id);
	put_num(s, "defines", o->ndefines);
	for (int i = 0; i < o->ndefines; i++)
		put_str(s, o->defines[i]);
	put_str(s, o->arch->name);
	char files[33];
	dbset_digest(o->db_dir, k->id, files);
	put_str(s, files);
	put_num(s, "max_variants", o->ho.max_variants);
	put_num(s, "goal", o->ho.goal);
	put_num(s, "folds", o->ho.folds);
	put_num(s, "seed", (double)o->ho.seed);
	char seed[32];
	snprintf(seed, sizeof seed, "%llu", (unsigned long long)o->ho.seed); /* every bit of it */
	put_str(s, seed);
	put_num(s, "min_gain", o->ho.min_gain);
	put_num(s, "distill", o->ho.distill);
	XXH128_hash_t h = XXH3_128bits_digest(s);
	XXH3_freeState(s);
	snprintf(key, 33, "%016llx%016llx", (unsigned long long)h.high64, (unsigned long long)h.low64);
}

aotc_status dispatch_learn(const aotc_module *m, const kernel *k, const learn_options *o, dispatch *dp, learnt *keep,
                   diags *d)
{
	memset(dp, 0, sizeof *dp);
	learnt l = {0};
	/* What finding the databases says is kept with the dispatch, so that
	 * loading it says it again. */
	diags rec;
	diag_list said;
	diags_init_list(&rec, &said);
	int nmerged = 0;
	l.db = dbset_load(o->db_dir, k, o->arch, m->source_hash, o->file, &nmerged, &rec);
	diag_list_replay(&said, d);
	diags_finish(&rec);
	if (!l.db) {
		diag_list_finish(&said);
		return AOTC_ENVIRONMENT;
	}
	if (!hmatrix_from_db(&l.hm, l.db, k, d)) {
		diag_list_finish(&said);
		db_close(l.db);
		return AOTC_ENVIRONMENT;
	}
	h_build(&l.r, &l.hm, &o->ho);
	aotc_status status = AOTC_OK;
	if (l.r.nsubset == 0) {
		diag_plain_error(d, "no variant of '%s' ran correctly in %s", k->id, l.db->path);
		status = AOTC_NO_VARIANT;
		goto out;
	}
	const char *hw = json_string_value(json_object_get(l.db->hardware, "id"));
	char *epath = hw ? dbset_eval_path(o->db_dir, k->id, hw) : NULL;
	tune_db *edb = NULL;
	hmatrix em;
	if (epath && eval_matrix_for(epath, l.db->source_hash, k, &edb, &em)) {
		l.neval = eval_selectors(&l.r, &l.hm, &em, l.eval);
		hmatrix_from_db_finish(&em);
		db_close(edb);
	}
	free(epath);
	if (!dispatch_from_result(dp, k, l.db, &l.hm, &l.r, l.neval > 0 ? &l.eval[SEL_TREE] : NULL, l.neval, d)) {
		status = AOTC_ENVIRONMENT;
		goto out;
	}
	dp->from.db = xstrdup(l.db->path);
	dp->from.merged = nmerged;
	dp->from.notes = said;
	memset(&said, 0, sizeof said);
out:
	diag_list_finish(&said);
	if (keep && status == 0)
		*keep = l;
	else
		learnt_finish(&l);
	return status;
}

aotc_status dispatch_learn_or_load(const aotc_module *m, const kernel *k, const learn_options *o, dispatch *dp,
                           bool *loaded, learnt *keep, diags *d)
{
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	char key[33];
	dispatch_key(m, k, o, key);
	char *path = dbset_dispatch_path(o->db_dir, k->id, o->arch);
	*loaded = dispatch_load(dp, k, path, key);
	aotc_status status = AOTC_OK;
	if (*loaded) {
		clock_gettime(CLOCK_MONOTONIC, &t1);
		if (o->verbose)
			fprintf(stderr, "aotc: %s is up to date: reused (key and load %.1f ms)\n", path,
			        (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6);
		diag_list_replay(&dp->from.notes, d);
	} else {
		status = dispatch_learn(m, k, o, dp, keep, d);
		if (status == 0) {
			diags quiet;
			diag_list why;
			diags_init_list(&quiet, &why);
			char *dir = dbset_dir_of(path);
			bool saved = saving_allowed() && mkdir_p(dir) == 0 && dispatch_save(dp, key, path, &quiet);
			free(dir);
			if (!saved && o->verbose && saving_allowed())
				fprintf(stderr, "aotc: note: %s (emit learns again next time)\n", why.n ? why.v[0].msg : path);
			diag_list_finish(&why);
			diags_finish(&quiet);
		}
	}
	free(path);
	return status;
}
