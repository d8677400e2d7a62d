/* What the emitted softmax dispatch buys, from measured H200 times: for a set
 * of shapes, the variant select() picks and its time, beside the best single
 * variant (the one a tuner without a dispatch would ship) and the per-shape
 * best; then the geometric-mean slowdowns against the per-shape best.
 *
 *   demo [--tsv] [--all] TRAIN_DB HELDOUT_DB [BASELINES]
 *
 * TRAIN_DB is the database the dispatch was learnt from, HELDOUT_DB one of
 * shapes it never saw (aotc eval's), BASELINES bench/baselines.py's output
 * (torch.softmax on the same GPU; shown for the shapes it has). The table
 * shows a fixed subset of the shapes (--all: every one); the summary is over
 * every shape of each set. Built by tools/demo.sh against the emitted
 * build/gen/_aot_softmax_cuda_sm90.c, of whose API it uses select(),
 * variant_name() and num_variants() only.
 *
 * --tsv writes the same as tab-separated rows for tests:
 *   row  SET ROWS COLS DISPATCH DISPATCH_MS SINGLE_MS BEST BEST_MS TORCH_MS DISPATCH_X SINGLE_X
 *   summary SET SHAPES COMPARED DISPATCH_GEOMEAN SINGLE_GEOMEAN DISTINCT_VARIANTS
 *   single NAME
 * with "-" for a figure that does not exist (a cell missing or not ok). */
#include <jansson.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "_aot_softmax_cuda_sm90.h"

/* One tuning database, reduced to what the demo needs: time[c * nshapes + s]
 * is the median of an ok measurement, NAN for a cell missing or not ok.
 * Owns everything it points to. */
typedef struct {
	const char *path;
	char *hardware, *hardware_name;
	int nconfigs, nshapes;
	char **names;
	int64_t (*shape)[2];
	double *time;
} db;

static void db_finish(db *d)
{
	free(d->hardware);
	free(d->hardware_name);
	for (int c = 0; c < d->nconfigs; c++)
		free(d->names[c]);
	free(d->names);
	free(d->shape);
	free(d->time);
}

static char *xstrdup(const char *s)
{
	char *p = malloc(strlen(s) + 1);
	if (!p) {
		perror("demo");
		exit(1);
	}
	return strcpy(p, s);
}

static void *alloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size);
	if (!p) {
		perror("demo");
		exit(1);
	}
	return p;
}

static bool is_str(const json_t *j, const char *s)
{
	const char *v = json_string_value(j);
	return v && !strcmp(v, s);
}

/* Reads the fields docs/database.md describes; 0, or -1 with a message. */
static int db_load(db *d, const char *path)
{
	memset(d, 0, sizeof *d);
	d->path = path;
	json_error_t err;
	json_t *root = json_load_file(path, 0, &err);
	if (!root) {
		fprintf(stderr, "demo: %s:%d: %s\n", path, err.line, err.text);
		return -1;
	}
	int rc = -1;
	json_t *args = json_object_get(root, "shape_args");
	json_t *configs = json_object_get(root, "configs");
	json_t *shapes = json_object_get(root, "shapes");
	json_t *ms = json_object_get(root, "measurements");
	const char *hw = json_string_value(json_object_get(json_object_get(root, "hardware"), "id"));
	const char *hw_name = json_string_value(json_object_get(json_object_get(root, "hardware"), "name"));
	if (json_array_size(args) != 2 || !is_str(json_array_get(args, 0), "rows") ||
	    !is_str(json_array_get(args, 1), "cols") || !json_is_array(configs) ||
	    !json_is_array(shapes) || !json_is_array(ms) || !hw) {
		fprintf(stderr, "demo: %s: not a softmax tuning database (shape_args rows, cols)\n", path);
		goto out;
	}
	d->hardware = xstrdup(hw);
	d->hardware_name = xstrdup(hw_name ? hw_name : hw);
	d->nconfigs = (int)json_array_size(configs);
	d->nshapes = (int)json_array_size(shapes);
	d->names = alloc((size_t)d->nconfigs, sizeof *d->names);
	for (int c = 0; c < d->nconfigs; c++) {
		const char *name = json_string_value(json_object_get(json_array_get(configs, (size_t)c), "name"));
		d->names[c] = xstrdup(name ? name : "");
	}
	d->shape = alloc((size_t)d->nshapes, sizeof *d->shape);
	for (int s = 0; s < d->nshapes; s++)
		for (int a = 0; a < 2; a++)
			d->shape[s][a] = json_integer_value(json_array_get(json_array_get(shapes, (size_t)s), (size_t)a));
	d->time = alloc((size_t)d->nconfigs * (size_t)d->nshapes, sizeof *d->time);
	for (size_t i = 0; i < (size_t)d->nconfigs * (size_t)d->nshapes; i++)
		d->time[i] = NAN;
	size_t i;
	json_t *m;
	json_array_foreach(ms, i, m) {
		json_int_t c = json_integer_value(json_object_get(m, "config"));
		json_int_t s = json_integer_value(json_object_get(m, "shape"));
		const char *status = json_string_value(json_object_get(m, "status"));
		double t = json_number_value(json_object_get(m, "time_ms"));
		if (c < 0 || c >= d->nconfigs || s < 0 || s >= d->nshapes || !status)
			continue;
		if (!strcmp(status, "ok") && t > 0)
			d->time[c * d->nshapes + s] = t;
	}
	rc = 0;
out:
	json_decref(root);
	return rc;
}

static int db_config(const db *d, const char *name)
{
	for (int c = 0; name && c < d->nconfigs; c++)
		if (!strcmp(d->names[c], name))
			return c;
	return -1;
}

static double db_time(const db *d, int c, int s) { return c < 0 ? NAN : d->time[c * d->nshapes + s]; }

/* The per-shape best: its time, the config through *best (-1 if none ran). */
static double db_best(const db *d, int s, int *best)
{
	*best = -1;
	for (int c = 0; c < d->nconfigs; c++)
		if (!isnan(db_time(d, c, s)) && (*best < 0 || db_time(d, c, s) < db_time(d, *best, s)))
			*best = c;
	return db_time(d, *best, s);
}

/* The best single variant: lowest geometric mean of its times over the
 * training shapes, among the configs ok on every one of them (a library
 * shipping one variant needs it to run everywhere). */
static const char *single_variant(const db *d)
{
	int best = -1;
	double best_log = 0;
	for (int c = 0; c < d->nconfigs; c++) {
		double sum = 0;
		bool all = true;
		for (int s = 0; s < d->nshapes && all; s++) {
			double t = db_time(d, c, s);
			all = !isnan(t);
			sum += all ? log(t) : 0;
		}
		if (all && (best < 0 || sum < best_log))
			best = c, best_log = sum;
	}
	return best < 0 ? NULL : d->names[best];
}

/* torch.softmax's time at the shape, NAN where the baselines have none. */
static double torch_ms(json_t *baselines, int64_t rows, int64_t cols)
{
	size_t i;
	json_t *b;
	json_array_foreach(json_object_get(baselines, "softmax"), i, b) {
		if (json_integer_value(json_object_get(b, "rows")) == rows &&
		    json_integer_value(json_object_get(b, "cols")) == cols)
			return json_number_value(json_object_get(b, "ms"));
	}
	return NAN;
}

/* The table's shapes when not --all, for the committed H200 data: training
 * rows 700, 7483, 80000 by cols 96, 675, 4742, 17400 (both ends of each
 * axis), held-out all but rows 8192 and cols 768. A set none of whose
 * shapes is among them is shown whole. */
static bool shown(const db *d, int s, bool heldout)
{
	int64_t rows = d->shape[s][0], cols = d->shape[s][1];
	if (heldout)
		return rows != 8192 && cols != 768;
	return (rows == 700 || rows == 7483 || rows == 80000) && (cols == 96 || cols == 675 || cols == 4742 || cols == 17400);
}

/* One set's figures over all its shapes; used[v]: select() returned v. */
typedef struct {
	int shapes, compared;
	double log_dispatch, log_single;
	bool *used;
} tally;

static void fmt_ms(char *buf, size_t n, double t)
{
	if (isnan(t))
		snprintf(buf, n, "-");
	else
		snprintf(buf, n, "%.4f", t);
}

static void fmt_x(char *buf, size_t n, double x)
{
	if (isnan(x))
		snprintf(buf, n, "-");
	else
		snprintf(buf, n, "%.2fx", x);
}

static int distinct(const tally *t)
{
	int n = 0;
	for (int v = 0; v < aot_softmax_cuda_sm90_num_variants(); v++)
		n += t->used[v];
	return n;
}

/* Rows of one set (training or held-out) and its tally over every shape. */
static void run_set(const db *d, const char *set, const char *single, json_t *baselines, bool tsv, bool all,
                    bool with_torch, tally *t)
{
	memset(t, 0, sizeof *t);
	t->used = alloc((size_t)aot_softmax_cuda_sm90_num_variants(), sizeof *t->used);
	int sc = db_config(d, single);
	bool heldout = !strcmp(set, "held-out");
	bool any_shown = false;
	for (int s = 0; s < d->nshapes; s++)
		any_shown |= shown(d, s, heldout);
	all |= !any_shown; /* other data than the subset was picked for */
	for (int s = 0; s < d->nshapes; s++) {
		int64_t rows = d->shape[s][0], cols = d->shape[s][1];
		int v = aot_softmax_cuda_sm90_select(rows, cols);
		const char *name = v >= 0 ? aot_softmax_cuda_sm90_variant_name(v) : NULL;
		int best;
		double best_ms = db_best(d, s, &best);
		double disp_ms = db_time(d, db_config(d, name), s);
		double single_ms = db_time(d, sc, s);
		double tms = torch_ms(baselines, rows, cols);
		double dx = disp_ms / best_ms, sx = single_ms / best_ms;
		t->shapes++;
		if (v >= 0 && v < aot_softmax_cuda_sm90_num_variants())
			t->used[v] = true;
		if (!isnan(dx) && !isnan(sx)) {
			t->compared++;
			t->log_dispatch += log(dx);
			t->log_single += log(sx);
		}
		if (!all && !tsv && !shown(d, s, heldout))
			continue;
		char a[32], b[32], c[32], e[32], f[32], g[32];
		fmt_ms(a, sizeof a, disp_ms);
		fmt_ms(b, sizeof b, single_ms);
		fmt_ms(c, sizeof c, best_ms);
		fmt_ms(e, sizeof e, tms);
		fmt_x(f, sizeof f, dx);
		fmt_x(g, sizeof g, sx);
		if (tsv) {
			double fig[6] = {disp_ms, single_ms, best_ms, tms, dx, sx};
			printf("row\t%s\t%lld\t%lld\t%s", set, (long long)rows, (long long)cols, name ? name : "-");
			for (int k = 0; k < 6; k++) {
				if (k == 2)
					printf("\t%s", best >= 0 ? d->names[best] : "-");
				if (isnan(fig[k]))
					printf("\t-");
				else
					printf("\t%.6g", fig[k]);
			}
			printf("\n");
			continue;
		}
		printf("%-8s %6lld %6lld  %-20s %8s  %9s  %-20s %8s", set, (long long)rows, (long long)cols,
		       name ? name : "(none valid)", a, b, best >= 0 ? d->names[best] : "-", c);
		if (with_torch)
			printf("  %8s", e);
		printf("  %11s %11s\n", f, g);
	}
}

static void summary(const char *set, const tally *t, bool tsv)
{
	double gd = exp(t->log_dispatch / (t->compared ? t->compared : 1));
	double gs = exp(t->log_single / (t->compared ? t->compared : 1));
	if (tsv) {
		printf("summary\t%s\t%d\t%d\t%.4f\t%.4f\t%d\n", set, t->shapes, t->compared, gd, gs, distinct(t));
		return;
	}
	printf("%-8s %2d shapes: dispatch %.3fx, single %.3fx the per-shape best (geomean%s):\n"
	       "%-8s %2s         the dispatch is %.2fx faster than the single variant, with %d distinct variants\n",
	       set, t->shapes, gd, gs, t->compared == t->shapes ? "" : ", shapes where both have a time",
	       "", "", gs / gd, distinct(t));
}

int main(int argc, char **argv)
{
	bool tsv = false, all = false;
	int i = 1;
	for (; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "--tsv"))
			tsv = true;
		else if (!strcmp(argv[i], "--all"))
			all = true;
		else
			break;
	}
	if (argc - i < 2 || argc - i > 3) {
		fprintf(stderr, "usage: demo [--tsv] [--all] TRAIN_DB HELDOUT_DB [BASELINES]\n");
		return 2;
	}
	db train, held;
	if (db_load(&train, argv[i]) != 0)
		return 1;
	if (db_load(&held, argv[i + 1]) != 0) {
		db_finish(&train);
		return 1;
	}
	json_t *baselines = NULL;
	if (argc - i == 3) {
		json_error_t err;
		baselines = json_load_file(argv[i + 2], 0, &err);
		if (!baselines) {
			fprintf(stderr, "demo: %s:%d: %s\n", argv[i + 2], err.line, err.text);
			db_finish(&train);
			db_finish(&held);
			return 1;
		}
	}
	int rc = 1;
	const char *single = single_variant(&train);
	if (!single) {
		fprintf(stderr, "demo: %s: no variant ran on every training shape\n", train.path);
		goto out;
	}

	/* Does any shape of the table have a torch time? */
	bool with_torch = false;
	for (int s = 0; s < train.nshapes; s++)
		with_torch |= !isnan(torch_ms(baselines, train.shape[s][0], train.shape[s][1]));
	for (int s = 0; s < held.nshapes; s++)
		with_torch |= !isnan(torch_ms(baselines, held.shape[s][0], held.shape[s][1]));

	if (tsv) {
		printf("single\t%s\n", single);
	} else {
		printf("softmax, median times measured on %s (%s); no GPU needed here:\n"
		       "  training  %s: %d shapes (aotc tune), the dispatch learnt from them\n"
		       "  held-out  %s: %d shapes (aotc eval) it never saw\n"
		       "select() is the emitted dispatch (%d of %d variants); single is %s,\n"
		       "the one variant with the best geomean over the training shapes.\n\n",
		       train.hardware_name, train.hardware, train.path, train.nshapes, held.path, held.nshapes,
		       aot_softmax_cuda_sm90_num_variants(), train.nconfigs, single);
		printf("%-8s %6s %6s  %-20s %8s  %9s  %-20s %8s", "set", "rows", "cols", "select() picks", "ms",
		       "single ms", "per-shape best", "ms");
		if (with_torch)
			printf("  %8s", "torch ms");
		printf("  %11s %11s\n", "picked/best", "single/best");
	}
	tally t_train, t_held;
	run_set(&train, "training", single, baselines, tsv, all, with_torch, &t_train);
	run_set(&held, "held-out", single, baselines, tsv, all, with_torch, &t_held);
	if (!tsv)
		printf("\n");
	summary("training", &t_train, tsv);
	summary("held-out", &t_held, tsv);
	free(t_train.used);
	free(t_held.used);
	if (!tsv && !all)
		printf("(the table shows %s; --all shows every shape)\n", "a subset, the summary is over every shape");
	if (!tsv && baselines && !with_torch) {
		size_t n = json_array_size(json_object_get(baselines, "softmax"));
		printf("torch.softmax on the same GPU (%s) was timed on %zu other shapes, none of these:\n"
		       "docs/PERFORMANCE.md compares it with the per-shape best there.\n",
		       argv[i + 2], n);
	}
	rc = 0;
out:
	json_decref(baselines);
	db_finish(&train);
	db_finish(&held);
	return rc;
}
