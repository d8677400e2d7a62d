/* The dispatch's selectors measured on a held-out database (heldout.h). */
#include "heldout.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "db.h"
#include "dbset.h"
#include "failures.h"
#include "from_db.h"

void eval_trained_valid(const hmatrix *mt, const hmatrix *me, int s, const int *map, bool *valid)
{
	double feat[mt->nfeatures + 1];
	if (mt->row_info && me->rows && me->nargs == mt->nargs) {
		hmatrix_row(mt, me->rows + (size_t)s * me->nargs, feat, valid);
		for (int v = 0; v < mt->nvariants; v++)
			valid[v] = valid[v] && map[v] >= 0;
		return;
	}
	/* no kernel: me's "invalid" statuses and mt's learnt regions */
	for (int v = 0; v < mt->nvariants; v++) {
		int u = map[v];
		valid[v] = u >= 0 && (h_valid(me, s, u) || (me->failed && me->failed[(size_t)s * me->nvariants + u]));
		if (valid[v] && mt->fail && me->rows && me->nargs == mt->nargs)
			valid[v] = hf_holds(&mt->fail[v], me->rows + (size_t)s * me->nargs);
	}
}

int eval_selectors(const hresult *r, const hmatrix *mt, const hmatrix *me, hstats st[SEL_COUNT])
{
	int *map = xmalloc((size_t)mt->nvariants * sizeof *map + 1);
	bool *valid = xmalloc((size_t)mt->nvariants * sizeof *valid + 1);
	for (int v = 0; v < mt->nvariants; v++) {
		map[v] = -1;
		for (int u = 0; u < me->nvariants && map[v] < 0; u++)
			if (!strcmp(mt->variant_names[v], me->variant_names[u]))
				map[v] = u;
	}
	double *sd[SEL_COUNT];
	for (int sel = 0; sel < SEL_COUNT; sel++)
		sd[sel] = xmalloc((size_t)me->nshapes * sizeof *sd[sel] + 1);
	int n = 0;
	for (int s = 0; s < me->nshapes; s++) {
		if (!isfinite(me->oracle[s]))
			continue;
		eval_trained_valid(mt, me, s, map, valid);
		for (int sel = 0; sel < SEL_COUNT; sel++) {
			int c = h_choose(r, mt, (hselector)sel, &me->feat[(size_t)s * me->nfeatures], valid);
			sd[sel][n] = c >= 0 ? h_slowdown(me, s, map[c]) : H_MISS_SLOWDOWN;
		}
		n++;
	}
	for (int sel = 0; sel < SEL_COUNT && n > 0; sel++)
		st[sel] = h_stats(sd[sel], n);
	for (int sel = 0; sel < SEL_COUNT; sel++)
		free(sd[sel]);
	free(map);
	free(valid);
	return n;
}

bool eval_matrix_for(const char *eval_path, const char *source_hash, const kernel *k, tune_db **db,
                     hmatrix *me)
{
	*db = NULL;
	if (access(eval_path, R_OK) == 0) {
		diags quiet;
		diags_init_buffered(&quiet);
		*db = db_load(eval_path, &quiet);
		db_key key = dbset_key(k);
		int before = *db ? (*db)->nmeas : 0;
		if (*db && ((before && db_drop_stale(*db, &key, source_hash, NULL) == before) ||
		            !hmatrix_from_db(me, *db, k, &quiet))) {
			db_close(*db);
			*db = NULL;
		}
		diags_finish(&quiet);
	}
	return *db != NULL;
}
