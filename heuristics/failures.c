#include "failures.h"

#include <stdlib.h>
#include <string.h>

bool hf_is_failure(meas_status status)
{
	switch (status) {
	case MS_WRONG: case MS_FAULT: case MS_TIMEOUT: case MS_RESOURCES: case MS_COMPILE_ERROR:
	case MS_OUT_OF_BOUNDS: case MS_ERROR:
		return true;
	default:
		return false;
	}
}

static uint64_t mag(int64_t v) { return v < 0 ? 0 - (uint64_t)v : (uint64_t)v; }

static uint64_t gcd(uint64_t a, uint64_t b)
{
	while (b) {
		uint64_t t = a % b;
		a = b;
		b = t;
	}
	return a;
}

static bool term_holds(const hterm *t, const int64_t *row)
{
	int64_t x = row[t->arg];
	switch (t->kind) {
	case HT_MULTIPLE: return mag(x) % (uint64_t)t->bound == 0;
	case HT_AT_MOST: return x <= t->bound;
	case HT_AT_LEAST: return x >= t->bound;
	}
	return false;
}

bool hf_holds(const hfailure *f, const int64_t *row)
{
	if (f->dropped)
		return false;
	for (int i = 0; i < f->nterms; i++)
		if (!term_holds(&f->terms[i], row))
			return false;
	return true;
}

/* One configuration: cfg's correct and failed shapes are known; picks terms
 * until no failed shape satisfies them all. */
static void learn_one(const tune_db *db, int cfg, hfailure *f)
{
	int na = db->nshape_args < HF_MAX_ARGS ? db->nshape_args : HF_MAX_ARGS;
	int *failed = xmalloc((size_t)db->nshapes * sizeof *failed + 1);
	hterm cand[3 * HF_MAX_ARGS];
	int ncand = 0;
	uint64_t g[HF_MAX_ARGS] = {0};
	int64_t lo[HF_MAX_ARGS], hi[HF_MAX_ARGS];
	for (int s = 0; s < db->nshapes; s++) {
		const measurement *me = db_get(db, cfg, s);
		if (!me)
			continue;
		const int64_t *row = db->shapes + (size_t)s * db->nshape_args;
		if (hf_is_failure(me->status)) {
			if (!f->nfailed) {
				f->first = s;
				f->status = me->status;
			}
			failed[f->nfailed++] = s;
		} else if (me->status == MS_OK) {
			for (int a = 0; a < na; a++) {
				g[a] = gcd(g[a], mag(row[a]));
				lo[a] = f->nok && lo[a] < row[a] ? lo[a] : row[a];
				hi[a] = f->nok && hi[a] > row[a] ? hi[a] : row[a];
			}
			f->nok++;
		}
	}
	if (!f->nfailed)
		goto out;
	if (!f->nok) {
		f->dropped = true;
		goto out;
	}
	for (int a = 0; a < na; a++) {
		if (g[a] > 1 && g[a] <= INT64_MAX)
			cand[ncand++] = (hterm){a, HT_MULTIPLE, (int64_t)g[a]};
		cand[ncand++] = (hterm){a, HT_AT_MOST, hi[a]};
		cand[ncand++] = (hterm){a, HT_AT_LEAST, lo[a]};
	}
	/* Greedy cover of the failed shapes by the terms that exclude them. */
	int left = f->nfailed;
	bool *used = xcalloc((size_t)ncand + 1, 1);
	char *excl = xmalloc((size_t)ncand * (size_t)left + 1);
	while (left > 0) {
		int best = -1, best_n = 0;
		for (int c = 0; c < ncand; c++) {
			int n = 0;
			for (int i = 0; i < left; i++) {
				const int64_t *row = db->shapes + (size_t)failed[i] * db->nshape_args;
				excl[(size_t)c * left + i] = !used[c] && !term_holds(&cand[c], row);
				n += excl[(size_t)c * left + i];
			}
			if (n > best_n) {
				best = c;
				best_n = n;
			}
		}
		if (best < 0) {
			f->dropped = true;
			f->nterms = 0;
			break;
		}
		/* Every term that excludes exactly the same failures is kept. */
		for (int c = 0; c < ncand; c++)
			if (c == best || (!used[c] && !memcmp(&excl[(size_t)c * left], &excl[(size_t)best * left],
			                                       (size_t)left))) {
				used[c] = true;
				f->terms[f->nterms++] = cand[c];
			}
		int keep = 0;
		for (int i = 0; i < left; i++)
			if (!excl[(size_t)best * left + i])
				failed[keep++] = failed[i];
		left = keep;
	}
	free(excl);
	free(used);
	/* In the order of the shape arguments, multiples first: the text
	 * reads the same whatever order the greedy took them in. */
	for (int i = 1; i < f->nterms; i++)
		for (int j = i; j > 0; j--) {
			hterm *x = &f->terms[j - 1], *y = &f->terms[j];
			if (x->arg < y->arg || (x->arg == y->arg && x->kind <= y->kind))
				break;
			hterm t = *x;
			*x = *y;
			*y = t;
		}
out:
	free(failed);
}

void hf_learn(const tune_db *db, hfailure *out)
{
	for (int c = 0; c < db->nconfigs; c++) {
		out[c] = (hfailure){.first = -1};
		learn_one(db, c, &out[c]);
	}
}

void hf_print_term(strbuf *sb, const hterm *t, const char *const *args)
{
	static const char *const fmt[] = {"%s %% %lld == 0", "%s <= %lld", "%s >= %lld"};
	strbuf_printf(sb, fmt[t->kind], args[t->arg], (long long)t->bound);
}

void hf_print(strbuf *sb, const hfailure *f, const char *const *args)
{
	if (f->dropped) {
		strbuf_puts(sb, "never");
		return;
	}
	for (int i = 0; i < f->nterms; i++) {
		if (i)
			strbuf_puts(sb, " && ");
		hf_print_term(sb, &f->terms[i], args);
	}
}

void hf_print_why(strbuf *sb, const hfailure *f, const tune_db *db)
{
	if (!f->nfailed)
		return;
	strbuf_printf(sb, "%s at ", meas_status_name(f->status));
	const int64_t *row = db->shapes + (size_t)f->first * db->nshape_args;
	for (int a = 0; a < db->nshape_args; a++)
		strbuf_printf(sb, "%s%s=%lld", a ? " " : "", db->shape_args[a], (long long)row[a]);
	if (f->nfailed > 1)
		strbuf_printf(sb, " (and %d more shape%s)", f->nfailed - 1, f->nfailed > 2 ? "s" : "");
}
