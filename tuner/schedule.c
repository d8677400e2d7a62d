#include "schedule.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

/* The model is fitted to at most this many ok cells (evenly strided). */
enum { MODEL_MAX_ROWS = 20000, MODEL_MIN_ROWS = 16 };

const char *search_name(search_kind k)
{
	return k == SEARCH_MODEL ? "model" : k == SEARCH_EXHAUSTIVE ? "exhaustive" : "auto";
}

static uint64_t fnv1a(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

static uint64_t splitmix(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

typedef struct keyed {
	uint64_t key;
	int index;
} keyed;

static int cmp_keyed(const void *a, const void *b)
{
	const keyed *x = a, *y = b;
	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->index - y->index;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

/* ---- Configurations as points ------------------------------------------ */

/* Per tunable its distinct values, sorted; per configuration the rank of
 * each of its values; a hash from values to configuration. */
typedef struct space {
	int nt, nc;
	int64_t **vals;
	int *nvals;
	int *rank;      /* nc rows of nt */
	int *map;       /* open addressing: configuration or -1 */
	size_t mapcap;
} space;

static uint64_t hash_values(const int64_t *v, int n)
{
	uint64_t h = 1469598103934665603ull;
	for (int i = 0; i < n; i++)
		h = (h ^ (uint64_t)v[i]) * 1099511628211ull;
	return h ^ (h >> 29);
}

static bool is_always(const schedule_params *p, int c) { return p->always && p->always[c]; }

/* The space of the configurations the search ranks: those not always. */
static void space_init(space *sp, const schedule_params *p, const unsigned char *mine)
{
	int nt = p->ntunables, nc = p->nconfigs;
	*sp = (space){.nt = nt, .nc = nc};
	sp->vals = xcalloc((size_t)nt + 1, sizeof *sp->vals);
	sp->nvals = xcalloc((size_t)nt + 1, sizeof *sp->nvals);
	sp->rank = xcalloc((size_t)nc * (size_t)nt + 1, sizeof *sp->rank);
	int64_t *col = xmalloc((size_t)nc * sizeof *col + 1);
	for (int t = 0; t < nt; t++) {
		int m = 0;
		for (int c = 0; c < nc; c++)
			if (!is_always(p, c))
				col[m++] = p->values[(size_t)c * nt + t];
		qsort(col, (size_t)m, sizeof *col, cmp_i64);
		int n = 0;
		for (int c = 0; c < m; c++)
			if (n == 0 || col[c] != col[n - 1])
				col[n++] = col[c];
		sp->vals[t] = xmalloc((size_t)n * sizeof **sp->vals + 1);
		memcpy(sp->vals[t], col, (size_t)n * sizeof *col);
		sp->nvals[t] = n;
		for (int c = 0; c < nc; c++) {
			if (is_always(p, c))
				continue; /* rank 0, never read */
			int64_t v = p->values[(size_t)c * nt + t];
			const int64_t *at = bsearch(&v, sp->vals[t], (size_t)n, sizeof v, cmp_i64);
			sp->rank[(size_t)c * nt + t] = (int)(at - sp->vals[t]);
		}
	}
	free(col);
	sp->mapcap = 16;
	while (sp->mapcap < 2 * (size_t)nc)
		sp->mapcap *= 2;
	sp->map = xmalloc(sp->mapcap * sizeof *sp->map);
	for (size_t i = 0; i < sp->mapcap; i++)
		sp->map[i] = -1;
	for (int c = 0; c < nc; c++) {
		if (!mine[c] || is_always(p, c) || mine[c] == SHARD_ANCHOR)
			continue;
		size_t h = hash_values(p->values + (size_t)c * nt, nt) & (sp->mapcap - 1);
		while (sp->map[h] >= 0)
			h = (h + 1) & (sp->mapcap - 1);
		sp->map[h] = c;
	}
}

static int space_find(const space *sp, const schedule_params *p, const int64_t *v)
{
	size_t h = hash_values(v, sp->nt) & (sp->mapcap - 1);
	for (; sp->map[h] >= 0; h = (h + 1) & (sp->mapcap - 1))
		if (!memcmp(p->values + (size_t)sp->map[h] * sp->nt, v, (size_t)sp->nt * sizeof *v))
			return sp->map[h];
	return -1;
}

static void space_finish(space *sp)
{
	for (int t = 0; t < sp->nt; t++)
		free(sp->vals[t]);
	free(sp->vals);
	free(sp->nvals);
	free(sp->rank);
	free(sp->map);
}

/* The order: the always configurations, then farthest-point sampling over
 * the tunable ranks (each scaled to [0, 1]) for the first nsample, from a
 * seeded start; then the rest in a seeded shuffle. mine holds the others. */
static void sample_order(schedule *sc, const space *sp, const int *mine, int nmine,
                         const int *always, int nalways)
{
	uint64_t rng = sc->p.seed * 0x2545f4914f6cdd1dull + 17;
	keyed *k = xmalloc((size_t)nmine * sizeof *k + 1);
	for (int i = 0; i < nmine; i++)
		k[i] = (keyed){splitmix(&rng), mine[i]};
	qsort(k, (size_t)nmine, sizeof *k, cmp_keyed);
	int nt = sp->nt;
	double *pt = xmalloc((size_t)nmine * (size_t)nt * sizeof *pt + 1);
	for (int i = 0; i < nmine; i++)
		for (int t = 0; t < nt; t++)
			pt[(size_t)i * nt + t] = sp->nvals[t] > 1
				? (double)sp->rank[(size_t)k[i].index * nt + t] / (sp->nvals[t] - 1) : 0;
	double *mind = xmalloc((size_t)nmine * sizeof *mind + 1);
	bool *taken = xcalloc((size_t)nmine + 1, 1);
	for (int i = 0; i < nmine; i++)
		mind[i] = INFINITY;
	int n = 0, at = 0;
	for (int i = 0; i < nalways; i++)
		sc->order[n++] = always[i];
	while (n < sc->nsample && nmine > 0) {
		taken[at] = true;
		sc->order[n++] = k[at].index;
		int next = -1;
		for (int i = 0; i < nmine; i++) {
			if (taken[i])
				continue;
			double d = 0;
			for (int t = 0; t < nt; t++) {
				double x = pt[(size_t)i * nt + t] - pt[(size_t)at * nt + t];
				d += x * x;
			}
			if (d < mind[i])
				mind[i] = d;
			if (next < 0 || mind[i] > mind[next])
				next = i;
		}
		if (next < 0)
			break;
		at = next;
	}
	for (int i = 0; i < nmine; i++)
		if (!taken[i])
			sc->order[n++] = k[i].index;
	free(k);
	free(pt);
	free(mind);
	free(taken);
}

/* ---- Life cycle ------------------------------------------------------------ */

struct schedule_priv {
	space sp;
	gbm model;
	int nfeat;
};

void shard_members(const char *const *names, int n, int shard, int nshards, unsigned char *mine)
{
	if (nshards < 1)
		shard = nshards = 1;
	/* Ranked by name hash, every Nth; the first SHARD_ANCHORS in every
	 * shard of several. */
	keyed *k = xmalloc((size_t)n * sizeof *k + 1);
	for (int c = 0; c < n; c++)
		k[c] = (keyed){fnv1a(names[c]), c};
	qsort(k, (size_t)n, sizeof *k, cmp_keyed);
	for (int r = 0; r < n; r++)
		mine[k[r].index] = nshards > 1 && r < SHARD_ANCHORS ? SHARD_ANCHOR : r % nshards == shard - 1;
	free(k);
}

void schedule_init(schedule *sc, const schedule_params *p)
{
	int nc = p->nconfigs, ns = p->nshapes;
	size_t cells = (size_t)nc * (size_t)ns;
	*sc = (schedule){.p = *p};
	if (sc->p.nshards < 1) {
		sc->p.shard = 1;
		sc->p.nshards = 1;
	}
	sc->priv = xcalloc(1, sizeof *sc->priv);
	unsigned char *mine = xcalloc((size_t)nc + 1, 1);
	shard_members(p->names, nc, sc->p.shard, sc->p.nshards, mine);
	int *list = xmalloc((size_t)nc * sizeof *list + 1), nmine = 0;
	int *always = xmalloc((size_t)nc * sizeof *always + 1), nalways = 0;
	for (int c = 0; c < nc; c++) {
		if (mine[c] && (is_always(p, c) || mine[c] == SHARD_ANCHOR))
			always[nalways++] = c;
		else if (mine[c])
			list[nmine++] = c;
	}
	sc->kind = p->kind != SEARCH_AUTO ? p->kind
	         : nmine > SEARCH_MODEL_ABOVE ? SEARCH_MODEL : SEARCH_EXHAUSTIVE;
	sc->state = xmalloc(cells + 1);
	sc->time = xmalloc(cells * sizeof *sc->time + 1);
	sc->pred = xmalloc(cells * sizeof *sc->pred + 1);
	for (int s = 0; s < ns; s++)
		for (int c = 0; c < nc; c++) {
			size_t i = (size_t)s * nc + c;
			sc->state[i] = mine[c] ? CELL_PENDING : CELL_OTHER;
			sc->time[i] = sc->pred[i] = NAN;
		}
	sc->order = xmalloc((size_t)(nmine + nalways) * sizeof *sc->order + 1);
	sc->norder = nmine + nalways;
	int per32 = nmine / 32;
	sc->nsample = nalways + (nmine <= 64 ? nmine : per32 < 32 ? 32 : per32 > 96 ? 96 : per32);
	space_init(&sc->priv->sp, p, mine);
	sample_order(sc, &sc->priv->sp, list, nmine, always, nalways);
	free(list);
	free(always);
	free(mine);
	sc->fails = xcalloc((size_t)nc + 1, sizeof *sc->fails);
	sc->best = xmalloc((size_t)ns * sizeof *sc->best + 1);
	sc->best_before = xmalloc((size_t)ns * sizeof *sc->best_before + 1);
	for (int s = 0; s < ns; s++)
		sc->best[s] = sc->best_before[s] = INFINITY;
	sc->stale = xcalloc((size_t)ns + 1, sizeof *sc->stale);
	sc->rounds = xcalloc((size_t)ns + 1, sizeof *sc->rounds);
	sc->closed = xcalloc((size_t)ns + 1, sizeof *sc->closed);
	sc->dead = xcalloc((size_t)ns + 1, sizeof *sc->dead);
	sc->refined = xcalloc((size_t)ns + 1, sizeof *sc->refined);
	sc->priv->nfeat = p->features ? p->features->count : p->ntunables;
}

void schedule_finish(schedule *sc)
{
	if (sc->priv) {
		space_finish(&sc->priv->sp);
		if (sc->have_model)
			gbm_finish(&sc->priv->model);
		free(sc->priv);
	}
	free(sc->state);
	free(sc->time);
	free(sc->pred);
	free(sc->order);
	free(sc->fails);
	free(sc->best);
	free(sc->best_before);
	free(sc->stale);
	free(sc->rounds);
	free(sc->closed);
	free(sc->dead);
	free(sc->refined);
	memset(sc, 0, sizeof *sc);
}

static bool is_failure(meas_status st)
{
	return st == MS_WRONG || st == MS_FAULT || st == MS_TIMEOUT || st == MS_OUT_OF_BOUNDS;
}

void schedule_mark(schedule *sc, int c, int s, meas_status st, double time_ms)
{
	size_t i = (size_t)schedule_cell(sc, c, s);
	if (sc->state[i] == CELL_DONE)
		return;
	sc->state[i] = CELL_DONE;
	if (st == MS_OK) {
		sc->time[i] = time_ms;
		if (time_ms < sc->best[s])
			sc->best[s] = time_ms;
	}
	if (is_failure(st) && !is_always(&sc->p, c))
		sc->fails[c]++;
}

void schedule_retime(schedule *sc, int c, int s, meas_status st, double time_ms)
{
	size_t i = (size_t)schedule_cell(sc, c, s);
	if (sc->state[i] != CELL_DONE) {
		schedule_mark(sc, c, s, st, time_ms);
		return;
	}
	sc->time[i] = st == MS_OK ? time_ms : NAN;
	if (is_failure(st) && !is_always(&sc->p, c))
		sc->fails[c]++;
	sc->best[s] = INFINITY;
	for (int k = 0; k < sc->p.nconfigs; k++) {
		double t = sc->time[schedule_cell(sc, k, s)];
		if (sc->state[schedule_cell(sc, k, s)] == CELL_DONE && t < sc->best[s])
			sc->best[s] = t;
	}
}

void schedule_close_shape(schedule *sc, int s) { sc->closed[s] = sc->dead[s] = true; }

bool schedule_deprioritised(const schedule *sc, int c)
{
	return sc->kind == SEARCH_MODEL && sc->fails[c] >= SEARCH_FAIL_LIMIT && !is_always(&sc->p, c);
}

static bool open_cell(const schedule *sc, int c, int s)
{
	return sc->state[schedule_cell(sc, c, s)] == CELL_PENDING && !schedule_deprioritised(sc, c);
}

schedule_counts schedule_count(const schedule *sc)
{
	schedule_counts n = {0};
	for (int s = 0; s < sc->p.nshapes; s++) {
		bool ok = false;
		for (int c = 0; c < sc->p.nconfigs; c++) {
			size_t i = (size_t)schedule_cell(sc, c, s);
			if (sc->state[i] == CELL_OTHER)
				continue;
			n.mine++;
			if (sc->state[i] == CELL_DONE)
				n.done++;
			else if (!sc->closed[s] && !schedule_deprioritised(sc, c))
				n.pending++;
			ok |= !isnan(sc->time[i]);
		}
		n.shapes_ok += ok;
		n.shapes_closed += sc->closed[s];
	}
	return n;
}

/* ---- The model ------------------------------------------------------------- */

static void features_of(const schedule *sc, int s, const int *cs, int n, double *out)
{
	const schedule_params *p = &sc->p;
	if (p->features) {
		const int64_t *tv[n + 1];
		for (int i = 0; i < n; i++)
			tv[i] = p->values + (size_t)cs[i] * p->ntunables;
		cost_features_row(p->features, p->rows + (size_t)s * p->features->nargs, tv, NULL, n, out);
		return;
	}
	/* Without the IR: the tunables' ranks and the shape's index. */
	int nf = sc->priv->nfeat;
	for (int i = 0; i < n; i++)
		for (int t = 0; t < p->ntunables; t++)
			out[(size_t)i * nf + t] = (double)p->values[(size_t)cs[i] * p->ntunables + t];
	(void)s;
}

/* Refits to every ok cell and predicts every open cell of the open shapes. */
static void refit(schedule *sc)
{
	const schedule_params *p = &sc->p;
	int nc = p->nconfigs, ns = p->nshapes, nf = sc->priv->nfeat;
	int nok = 0;
	for (size_t i = 0; i < (size_t)nc * ns; i++)
		nok += !isnan(sc->time[i]) && !is_always(p, (int)(i % (size_t)nc));
	if (nok < MODEL_MIN_ROWS || nok == sc->model_rows)
		return;
	int stride = nok > MODEL_MAX_ROWS ? (nok + MODEL_MAX_ROWS - 1) / MODEL_MAX_ROWS : 1;
	int cap = nok / stride + 1, n = 0, seen = 0;
	double *x = xmalloc((size_t)cap * nf * sizeof *x + 1), *y = xmalloc((size_t)cap * sizeof *y + 1);
	int *cs = xmalloc((size_t)nc * sizeof *cs + 1);
	double *fx = xmalloc((size_t)nc * nf * sizeof *fx + 1);
	for (int s = 0; s < ns; s++) {
		int m = 0;
		for (int c = 0; c < nc; c++) {
			double t = sc->time[schedule_cell(sc, c, s)];
			if (!isnan(t) && !is_always(p, c) && seen++ % stride == 0 && n + m < cap)
				cs[m++] = c;
		}
		features_of(sc, s, cs, m, fx);
		for (int i = 0; i < m; i++) {
			memcpy(x + (size_t)n * nf, fx + (size_t)i * nf, (size_t)nf * sizeof *x);
			y[n++] = log(sc->time[schedule_cell(sc, cs[i], s)]);
		}
	}
	if (sc->have_model)
		gbm_finish(&sc->priv->model);
	gbm_params gp;
	gbm_params_default(&gp);
	gp.max_depth = 4;
	gp.min_leaf = 4;
	gp.rounds = 200;
	gbm_fit(&sc->priv->model, x, y, n, nf, &gp);
	sc->have_model = true;
	sc->model_rows = nok;
	for (int s = 0; s < ns; s++) {
		if (sc->closed[s])
			continue;
		int m = 0;
		for (int c = 0; c < nc; c++)
			if (open_cell(sc, c, s) && !is_always(p, c))
				cs[m++] = c;
		features_of(sc, s, cs, m, fx);
		for (int i = 0; i < m; i++)
			sc->pred[schedule_cell(sc, cs[i], s)] = gbm_predict(&sc->priv->model, fx + (size_t)i * nf);
	}
	free(x);
	free(y);
	free(cs);
	free(fx);
}

/* ---- Rounds ---------------------------------------------------------------- */

typedef struct picker {
	schedule *sc;
	int s;
	bool *picked;   /* per configuration, this batch */
	int *out, n, want;
} picker;

static bool take(picker *pk, int c)
{
	if (c < 0 || pk->picked[c] || !open_cell(pk->sc, c, pk->s) || pk->n >= pk->want)
		return false;
	pk->picked[c] = true;
	pk->out[pk->n++] = schedule_cell(pk->sc, c, pk->s);
	return true;
}

/* The open configuration predicted fastest at the shape, not yet picked. */
static int best_predicted(const picker *pk)
{
	const schedule *sc = pk->sc;
	int best = -1;
	double bp = INFINITY;
	for (int c = 0; c < sc->p.nconfigs; c++) {
		double v = sc->pred[schedule_cell(sc, c, pk->s)];
		if (!pk->picked[c] && open_cell(sc, c, pk->s) && !isnan(v) && v < bp) {
			bp = v;
			best = c;
		}
	}
	return best;
}

/* The next in the sample order, open and not picked. */
static int next_in_order(const picker *pk, int from, int to)
{
	for (int i = from; i < to; i++)
		if (!pk->picked[pk->sc->order[i]] && open_cell(pk->sc, pk->sc->order[i], pk->s))
			return pk->sc->order[i];
	return -1;
}

/* An open neighbour (one tunable one value away) of the fastest measured
 * configurations at the shape, nearest the best first. */
static int best_neighbour(const picker *pk)
{
	const schedule *sc = pk->sc;
	const space *sp = &sc->priv->sp;
	int nt = sp->nt, nc = sc->p.nconfigs;
	enum { TOP = 3 };
	int top[TOP], ntop = 0;
	for (int c = 0; c < nc; c++) {
		double t = sc->time[schedule_cell(sc, c, pk->s)];
		if (isnan(t) || is_always(&sc->p, c))
			continue;
		int at = ntop < TOP ? ntop++ : TOP;
		while (at > 0 && sc->time[schedule_cell(sc, top[at - 1], pk->s)] > t) {
			if (at < TOP)
				top[at] = top[at - 1];
			at--;
		}
		if (at < TOP)
			top[at] = c;
	}
	int64_t v[nt + 1];
	for (int i = 0; i < ntop; i++) {
		const int64_t *base = sc->p.values + (size_t)top[i] * nt;
		for (int t = 0; t < nt; t++)
			for (int d = -1; d <= 1; d += 2) {
				int r = sp->rank[(size_t)top[i] * nt + t] + d;
				if (r < 0 || r >= sp->nvals[t])
					continue;
				memcpy(v, base, (size_t)nt * sizeof *v);
				v[t] = sp->vals[t][r];
				int c = space_find(sp, &sc->p, v);
				if (c >= 0 && !pk->picked[c] && open_cell(sc, c, pk->s))
					return c;
			}
	}
	return -1;
}

/* How many cells a batch of kind sample or exhaustive refinement gets:
 * everything, or with a budget 8, 16, 32, ... per round so that every
 * shape gets its first cells before any gets many. */
static int grow(const schedule *sc, int round)
{
	if (!sc->p.budgeted)
		return sc->p.nconfigs;
	int shift = round < 12 ? round : 12;
	return SEARCH_BATCH << shift;
}

/* The model search's last round: the contenders of every shape on every
 * shape that can be measured. */
static int contender_round(schedule *sc, int *out)
{
	int nc = sc->p.nconfigs, ns = sc->p.nshapes, n = 0;
	bool *want = xcalloc((size_t)nc + 1, 1);
	int *rank = xmalloc((size_t)nc * sizeof *rank + 1);
	for (int s = 0; s < ns; s++) {
		int m = 0;
		for (int c = 0; c < nc; c++)
			if (!isnan(sc->time[schedule_cell(sc, c, s)]) && !is_always(&sc->p, c))
				rank[m++] = c;
		/* insertion sort by time: m is small (what the search measured) */
		for (int i = 1; i < m; i++)
			for (int j = i; j > 0 && sc->time[schedule_cell(sc, rank[j], s)] <
			                          sc->time[schedule_cell(sc, rank[j - 1], s)]; j--) {
				int t = rank[j];
				rank[j] = rank[j - 1];
				rank[j - 1] = t;
			}
		for (int i = 0; i < m && i < SEARCH_CONTEND_MAX; i++)
			if (i < SEARCH_CONTEND_RANK ||
			    sc->time[schedule_cell(sc, rank[i], s)] <= SEARCH_CONTEND * sc->best[s])
				want[rank[i]] = true;
	}
	for (int s = 0; s < ns; s++) {
		if (sc->dead[s])
			continue;
		for (int c = 0; c < nc; c++)
			if (want[c] && open_cell(sc, c, s))
				out[n++] = schedule_cell(sc, c, s);
	}
	free(want);
	free(rank);
	return n;
}

int schedule_next_round(schedule *sc, int *out)
{
	int nc = sc->p.nconfigs, ns = sc->p.nshapes, total = 0;
	/* The last round's refinement batches: did they improve? */
	for (int s = 0; s < ns; s++) {
		if (!sc->refined[s] || sc->closed[s])
			continue;
		sc->stale[s] = sc->best[s] < sc->best_before[s] * (1 - SEARCH_IMPROVE) ? 0 : sc->stale[s] + 1;
		if (sc->kind == SEARCH_MODEL && sc->stale[s] >= SEARCH_PATIENCE)
			sc->closed[s] = true;
	}
	bool sampling_done = true;
	for (int s = 0; s < ns && sampling_done; s++)
		for (int i = 0; i < sc->nsample && sampling_done; i++)
			sampling_done = sc->closed[s] || !open_cell(sc, sc->order[i], s);
	if (sampling_done || sc->kind == SEARCH_MODEL)
		refit(sc);
	bool *picked = xcalloc((size_t)nc + 1, 1);
	for (int s = 0; s < ns; s++) {
		sc->refined[s] = false;
		sc->best_before[s] = sc->best[s];
		if (sc->closed[s])
			continue;
		memset(picked, 0, (size_t)nc);
		picker pk = {sc, s, picked, out + total, 0, 0};
		if (next_in_order(&pk, 0, sc->nsample) >= 0) {
			pk.want = grow(sc, sc->rounds[s]);
			while (take(&pk, next_in_order(&pk, 0, sc->nsample)))
				;
		} else if (sc->kind == SEARCH_EXHAUSTIVE) {
			pk.want = grow(sc, sc->rounds[s] + 1);
			while (take(&pk, sc->have_model ? best_predicted(&pk) : -1) ||
			       take(&pk, next_in_order(&pk, 0, sc->norder)))
				;
		} else {
			/* model: the predicted best, the neighbours of the
			 * measured best, and every fourth an unexplored one */
			pk.want = SEARCH_BATCH;
			for (int i = 0; pk.n < pk.want; i++) {
				int before = pk.n;
				if (i % 4 == 3)
					take(&pk, next_in_order(&pk, sc->nsample, sc->norder));
				else if (i % 2 == 0)
					take(&pk, best_predicted(&pk));
				else
					take(&pk, best_neighbour(&pk));
				if (pk.n == before && i >= 4 &&
				    !take(&pk, best_predicted(&pk)) && !take(&pk, best_neighbour(&pk)) &&
				    !take(&pk, next_in_order(&pk, 0, sc->norder)))
					break;
			}
			sc->refined[s] = true;
		}
		if (pk.n == 0) {
			sc->closed[s] = true; /* nothing open is left */
			sc->refined[s] = false;
			continue;
		}
		sc->rounds[s]++;
		total += pk.n;
	}
	free(picked);
	if (total == 0 && sc->kind == SEARCH_MODEL && !sc->completed) {
		sc->completed = true;
		total = contender_round(sc, out);
	}
	sc->round++;
	return total;
}
