#include "dbset.h"

#include <errno.h>
#include <glob.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

static char *fmt_path(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *fmt_path(const char *fmt, ...)
{
	strbuf sb;
	strbuf_init(&sb);
	va_list ap;
	va_start(ap, fmt);
	strbuf_vprintf(&sb, fmt, ap);
	va_end(ap);
	return sb.data;
}

char *dbset_db_path(const char *dir, const char *kernel, const char *hardware_id, int shard, int nshards)
{
	if (nshards > 1)
		return fmt_path("%s/%s.%s.shard%dof%d.json", dir, kernel, hardware_id, shard, nshards);
	return fmt_path("%s/%s.%s.json", dir, kernel, hardware_id);
}

char *dbset_superseded_path(const char *db_path)
{
	const char *slash = strrchr(db_path, '/');
	if (!slash)
		return fmt_path("superseded/%s", db_path);
	return fmt_path("%.*s/superseded/%s", (int)(slash - db_path), db_path, slash + 1);
}

static const char *kernel_code(const void *ctx, const char *function, bool is_extern, const char *name)
{
	const kernel *k = ctx;
	if (is_extern) {
		for (int i = 0; i < k->nexterns; i++)
			if (strcmp(k->externs[i].name, name) == 0)
				return k->externs[i].code;
		return NULL;
	}
	if (!function)
		return k->code;
	for (int i = 0; i < k->nalts; i++)
		if (strcmp(k->alts[i].name, function) == 0)
			return k->alts[i].code;
	return NULL;
}

db_key dbset_key(const kernel *k) { return (db_key){.code = kernel_code, .ctx = k}; }

char *dbset_journal_path(const char *db_path) { return fmt_path("%s.journal", db_path); }
char *dbset_lock_path(const char *db_path) { return fmt_path("%s.lock", db_path); }
char *dbset_eval_dir(const char *dir) { return fmt_path("%s/eval", dir); }

char *dbset_eval_path(const char *dir, const char *kernel, const char *hardware_id)
{
	return fmt_path("%s/eval/%s.%s.json", dir, kernel, hardware_id);
}

char *dbset_dir_of(const char *db_path)
{
	const char *slash = strrchr(db_path, '/');
	if (!slash)
		return xstrdup(".");
	return fmt_path("%.*s", slash == db_path ? 1 : (int)(slash - db_path), db_path);
}

char *dbset_dispatch_path(const char *dir, const char *kernel, const arch_info *arch)
{
	return fmt_path("%s/dispatch/%s.%s.json", dir, kernel, arch->name);
}

char *dbset_ir_path(const char *dir, const char *source)
{
	const char *slash = strrchr(source, '/');
	return fmt_path("%s/dispatch/%s.ir.json", dir, slash ? slash + 1 : source);
}

char *dbset_find_source(const char *source, const char *db_path)
{
	if (access(source, R_OK) == 0)
		return xstrdup(source);
	if (source[0] == '/')
		return NULL;
	char *dir = xstrdup(db_path);
	for (int up = 0; up < 4; up++) {
		char *slash = strrchr(dir, '/');
		if (slash)
			*slash = 0;
		else if (!strcmp(dir, "."))
			break;
		else
			strcpy(dir, ".");
		strbuf sb;
		strbuf_init(&sb);
		strbuf_printf(&sb, "%s/%s", dir[0] ? dir : "/", source);
		if (access(sb.data, R_OK) == 0) {
			free(dir);
			return sb.data;
		}
		strbuf_finish(&sb);
	}
	free(dir);
	return NULL;
}

char *dbset_db_dir_of_dispatch(const char *dispatch_path)
{
	char *folder = dbset_dir_of(dispatch_path);
	char *dir = dbset_dir_of(folder);
	/* "dispatch/k.json" (--db .): its folder is "dispatch", whose folder is "." */
	free(folder);
	return dir;
}

int dbset_list(const char *dir, const char *kernel, char ***paths)
{
	char *pat = fmt_path("%s/%s.*.json", dir, kernel);
	glob_t g;
	int n = 0;
	*paths = NULL;
	if (glob(pat, 0, NULL, &g) == 0) { /* sorted */
		*paths = xcalloc(g.gl_pathc + 1, sizeof **paths);
		for (size_t i = 0; i < g.gl_pathc; i++)
			(*paths)[n++] = xstrdup(g.gl_pathv[i]);
		globfree(&g);
	}
	free(pat);
	if (!*paths)
		*paths = xcalloc(1, sizeof **paths);
	return n;
}

void dbset_free_paths(char **paths)
{
	for (char **p = paths; p && *p; p++)
		free(*p);
	free(paths);
}

/* ---- Finding and merging ------------------------------------------------- */

/* How the databases merged into one were searched (their "search"). */
typedef struct db_parts {
	int n, unfinished, model;
	int nshards;            /* N of the shards seen (0: none) */
	unsigned char *seen;    /* shard I seen, 1..nshards */
	bool mixed;             /* shards of different N */
} db_parts;

static void parts_add(db_parts *p, const tune_db *db)
{
	p->n++;
	const json_t *s = db->search;
	if (!s)
		return;
	p->unfinished += !json_is_true(json_object_get(s, "finished"));
	const char *st = json_string_value(json_object_get(s, "strategy"));
	p->model += st && !strcmp(st, "model");
	const json_t *sh = json_object_get(s, "shard");
	int i = (int)json_integer_value(json_array_get(sh, 0)), n = (int)json_integer_value(json_array_get(sh, 1));
	if (n <= 1 || i < 1 || i > n || n > 65536)
		return;
	if (p->nshards && p->nshards != n) {
		p->mixed = true;
		return;
	}
	if (!p->nshards) {
		p->nshards = n;
		p->seen = xcalloc((size_t)n + 1, 1);
	}
	p->seen[i] = 1;
}

/* Says how much of the (configuration, shape) matrix the database lacks,
 * and why where aotc can tell: a warning when a tune stopped early or a
 * shard is missing, a note when a finished model search left the cells it
 * predicted slower. */
static void warn_incomplete(const tune_db *db, const db_parts *p, diags *d)
{
	long cells = (long)db->nconfigs * db->nshapes, missing = cells;
	int shapes_none = 0;
	for (int s = 0; s < db->nshapes; s++) {
		bool ok = false;
		for (int c = 0; c < db->nconfigs; c++) {
			const measurement *m = db_get(db, c, s);
			missing -= m != NULL;
			ok |= m && m->status == MS_OK;
		}
		shapes_none += !ok;
	}
	int absent = 0, first_absent = 0;
	for (int i = 1; i <= p->nshards; i++)
		if (!p->seen[i] && !absent++)
			first_absent = i;
	if (missing == 0 && shapes_none == 0)
		return;
	if (!p->unfinished && !absent && !p->mixed && p->model == p->n && shapes_none == 0) {
		diag_note(d, (aotc_loc){db->path, 0, 0},
		          "the model-guided search measured %ld of %ld cells (the rest were predicted slower)",
		          cells - missing, cells);
		return;
	}
	strbuf why;
	strbuf_init(&why);
	if (p->unfinished)
		strbuf_printf(&why, "; %d tune%s stopped early (--budget): 'aotc tune' again goes on", p->unfinished,
		              p->unfinished == 1 ? "" : "s");
	if (absent)
		strbuf_printf(&why, "; %d of %d shards missing (shard %d first)", absent, p->nshards, first_absent);
	if (p->mixed)
		strbuf_puts(&why, "; shards of different splits");
	diag_warning(d, (aotc_loc){db->path, 0, 0},
	             "the database is incomplete: %ld of %ld cells not measured, %d of %d shapes with no correct variant%s",
	             missing, cells, shapes_none, db->nshapes, why.data);
	strbuf_finish(&why);
}

/* The cells two files (machines or shards) both measured: anchors every
 * shard measures (tuner/schedule.h). Their times disagree when the median
 * relative difference exceeds the median of their noises added (each the
 * p10-p90 spread over the median), and at least 10 %: a machine slower or
 * faster throughout, not one noisy cell. */
typedef struct anchors {
	int compared;
	double diff;            /* the median relative difference */
	double noise;           /* the median of the two cells' noises added */
} anchors;

/* Per machine (a database's "machine"), what its files' cells measured
 * in the files merged before them too said: emit's note on how machines
 * agree (docs/database.md, "Tuning at scale"). */
typedef struct machine_cells {
	const char *name;       /* borrowed from the machines' names */
	int files;
	double *diff, *noise;   /* per compared cell */
	int n;
} machine_cells;

typedef struct machines {
	machine_cells *m;
	int n;
	char **names;           /* owned */
} machines;

static machine_cells *machine_of(machines *ms, const char *name)
{
	name = name ? name : "unknown";
	for (int i = 0; i < ms->n; i++)
		if (!strcmp(ms->m[i].name, name))
			return &ms->m[i];
	ms->m = xrealloc(ms->m, (size_t)(ms->n + 1) * sizeof *ms->m);
	ms->names = xrealloc(ms->names, (size_t)(ms->n + 1) * sizeof *ms->names);
	ms->names[ms->n] = xstrdup(name);
	ms->m[ms->n] = (machine_cells){.name = ms->names[ms->n]};
	return &ms->m[ms->n++];
}

static void machines_finish(machines *ms)
{
	for (int i = 0; i < ms->n; i++) {
		free(ms->m[i].diff);
		free(ms->m[i].noise);
		free(ms->names[i]);
	}
	free(ms->m);
	free(ms->names);
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median_of(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, cmp_dbl);
	return v[n / 2];
}

/* The cells of db that all holds too, into an; their differences and
 * noises added to mc's. */
static void compare_cells(const tune_db *all, const tune_db *db, anchors *an, machine_cells *mc)
{
	double *diff = xmalloc(((size_t)db->nmeas + 1) * sizeof *diff);
	double *noise = xmalloc(((size_t)db->nmeas + 1) * sizeof *noise);
	int n = 0;
	for (int i = 0; i < db->nmeas; i++) {
		const measurement *m = &db->meas[i];
		if (m->status != MS_OK)
			continue;
		int c = db_find_config(all, db->configs[m->config].name);
		int s = db_find_shape(all, db->shapes + (size_t)m->shape * db->nshape_args);
		const measurement *o = c >= 0 && s >= 0 ? db_get(all, c, s) : NULL;
		if (!o || o->status != MS_OK)
			continue;
		noise[n] = meas_spread(m) + meas_spread(o);
		diff[n++] = fabs(m->time_ms - o->time_ms) / fmin(m->time_ms, o->time_ms);
	}
	an->compared = n;
	mc->diff = xrealloc(mc->diff, ((size_t)(mc->n + n) + 1) * sizeof *mc->diff);
	mc->noise = xrealloc(mc->noise, ((size_t)(mc->n + n) + 1) * sizeof *mc->noise);
	memcpy(mc->diff + mc->n, diff, (size_t)n * sizeof *diff);
	memcpy(mc->noise + mc->n, noise, (size_t)n * sizeof *noise);
	mc->n += n;
	if (n) {
		an->diff = median_of(diff, n);
		an->noise = median_of(noise, n);
	}
	free(diff);
	free(noise);
}

/* Where the merged files came from two machines or more: one note, per
 * machine, on how its cells agree with those of the files merged before
 * its (the anchors every shard measures, and any other cell measured
 * twice); a disagreement was warned about file by file. */
static void note_machines(const machines *ms, const tune_db *all, diags *d)
{
	if (ms->n < 2)
		return;
	strbuf sb;
	strbuf_init(&sb);
	for (int i = 0; i < ms->n; i++) {
		machine_cells *mc = &ms->m[i];
		strbuf_printf(&sb, "%s%s (%d file%s", i ? "; " : "", mc->name, mc->files, mc->files == 1 ? "" : "s");
		if (!mc->n) {
			strbuf_puts(&sb, ", merged first)");
			continue;
		}
		strbuf_putc(&sb, ')');
		double diff = median_of(mc->diff, mc->n), noise = median_of(mc->noise, mc->n);
		strbuf_printf(&sb, " %d cell%s, %.1f %% apart (median; noise %.1f %%)%s", mc->n, mc->n == 1 ? "" : "s",
		              100 * diff, 100 * noise, diff > fmax(0.10, noise) ? ": NOT comparable" : "");
	}
	diag_note(d, (aotc_loc){all->path, 0, 0},
	          "merged from %d machines; the cells each measured that files before it measured too: %s", ms->n,
	          sb.data);
	strbuf_finish(&sb);
}

static const char *hw_id(const tune_db *db)
{
	const char *id = json_string_value(json_object_get(db->hardware, "id"));
	return id ? id : "(none)";
}

tune_db *dbset_load(const char *dir, const kernel *k, const arch_info *arch, const char *source_hash,
                    const char *file, int *nmerged, diags *d)
{
	const char *kernel = k->id;
	db_key key = dbset_key(k);
	strbuf what;
	strbuf_init(&what);
	char **paths;
	int npaths = dbset_list(dir, kernel, &paths);
	tune_db *all = NULL;
	bool bad = false;
	db_parts parts = {0};
	machines ms = {0};
	for (int i = 0; i < npaths && !bad; i++) {
		/* A database of this kernel that cannot be read is an error,
		 * never skipped: it may be this architecture's. JSON that is
		 * no database (a shapes list) is skipped; warnings are shown
		 * only for this architecture's. */
		diags held;
		diag_list said;
		diags_init_list(&held, &said);
		bool not_db = false;
		/* a regular file only: opening a pipe found by the glob would block */
		struct stat st;
		tune_db *db = NULL;
		if (stat(paths[i], &st) == 0 && !S_ISREG(st.st_mode))
			diag_plain_error(&held, "%s: not a regular file", paths[i]);
		else
			db = db_load_any(paths[i], &not_db, &held);
		const char *a = db ? json_string_value(json_object_get(db->hardware, "arch")) : NULL;
		if (!(!db && not_db) && (!db || (a && strcmp(a, arch->name) == 0)))
			diag_list_replay(&said, d);
		diag_list_finish(&said);
		diags_finish(&held);
		if (!db && not_db)
			continue;
		if (!db) {
			bad = true;
			continue;
		}
		if (!a || strcmp(a, arch->name) != 0) {
			db_close(db);
			continue;
		}
		/* Only what was measured from the code there is now (tuner/db.h). */
		int before = db->nmeas;
		char *old_hash = xstrdup(db->source_hash);
		what.len = 0;
		what.data[0] = 0;
		int stale = db_drop_stale(db, &key, source_hash, &what);
		if (stale && stale == before) {
			diag_plain_error(d, "%s was tuned from another version of %s (source hash %s, now %s; the code of %s changed): tune it again",
			                 db->path, file, old_hash, source_hash, what.data);
			bad = true;
		} else if (stale) {
			diag_warning(d, (aotc_loc){db->path, 0, 0},
			             "%d measurement%s of %s %s taken from another version of its code: left out ('aotc tune' measures them again)",
			             stale, stale == 1 ? "" : "s", what.data, stale == 1 ? "was" : "were");
		}
		free(old_hash);
		if (bad) {
			/* said */
		} else if (all && strcmp(hw_id(all), hw_id(db)) != 0) {
			diag_plain_error(d, "%s (%s) and %s (%s) were measured on different hardware: one dispatch cannot pick "
			                 "across them; keep one hardware id's databases of '%s' for %s in %s/",
			                 all->path, hw_id(all), db->path, hw_id(db), kernel, arch->name, dir);
			bad = true;
		} else if (all && (all->ntunables != db->ntunables || all->nshape_args != db->nshape_args)) {
			diag_plain_error(d, "%s and %s do not hold the same tunables and shape arguments", all->path,
			                 db->path);
			bad = true;
		} else if (!all) {
			parts_add(&parts, db);
			machine_of(&ms, db->machine)->files++;
			all = db;
			db = NULL;
		} else {
			parts_add(&parts, db);
			anchors an = {0};
			machine_cells *mc = machine_of(&ms, db->machine);
			mc->files++;
			compare_cells(all, db, &an, mc);
			if (an.compared && an.diff > fmax(0.10, an.noise))
				diag_warning(d, (aotc_loc){db->path, 0, 0},
				             "the %d cells measured here and in %s (machines %s and %s, both %s) differ by %.0f %% (the median), more than their noise (%.0f %%): their times are not comparable; check clocks and load, or tune on one machine",
				             an.compared, all->path, db->machine ? db->machine : "unknown",
				             all->machine ? all->machine : "unknown", hw_id(db), 100 * an.diff, 100 * an.noise);
			db_merge(all, db);
		}
		db_close(db);
	}
	dbset_free_paths(paths);
	strbuf_finish(&what);
	if (bad) {
		free(parts.seen);
		machines_finish(&ms);
		db_close(all);
		return NULL;
	}
	if (all) {
		warn_incomplete(all, &parts, d);
		note_machines(&ms, all, d);
	}
	machines_finish(&ms);
	if (nmerged)
		*nmerged = parts.n;
	free(parts.seen);
	if (all)
		return all;
	/* The journal of a tune killed before its first save (an older aotc
	 * wrote no document until then) is named, not ignored. */
	char *pat = fmt_path("%s/%s.*.json.journal", dir, kernel);
	glob_t g;
	if (glob(pat, 0, NULL, &g) == 0) {
		for (size_t i = 0; i < g.gl_pathc; i++) {
			size_t n = strlen(g.gl_pathv[i]) - strlen(".journal");
			char *doc = xstrdup(g.gl_pathv[i]);
			doc[n] = 0;
			if (access(doc, F_OK) != 0)
				diag_plain_error(d, "%s: only the journal of a tune killed before its first save, no database: "
				                 "run aotc tune again, which resumes from it", g.gl_pathv[i]);
			free(doc);
		}
		globfree(&g);
	}
	free(pat);
	diag_plain_error(d, "no tuning database for '%s' on %s in %s/ (tune it on such a machine: aotc tune %s --arch %s)",
	                 kernel, arch->name, dir, file, arch->name);
	return NULL;
}

/* ---- The digest ------------------------------------------------------------ */

static void digest_file(XXH3_state_t *s, const char *path)
{
	/* by name in its folder: the key must not depend on how --db is spelt */
	const char *slash = strrchr(path, '/'), *name = slash ? slash + 1 : path;
	uint64_t len = 0;
	XXH3_128bits_update(s, name, strlen(name) + 1);
	size_t n;
	/* a regular file only: a pipe would block the key (dbset_load then says why) */
	struct stat st;
	char *text = stat(path, &st) == 0 && S_ISREG(st.st_mode) ? read_file(path, &n) : NULL;
	if (text) {
		len = n;
		XXH3_128bits_update(s, &len, sizeof len);
		XXH3_128bits_update(s, text, n);
		free(text);
	} else {
		len = UINT64_MAX; /* absent or unreadable */
		XXH3_128bits_update(s, &len, sizeof len);
	}
}

static void digest_dir(XXH3_state_t *s, const char *dir, const char *kernel)
{
	char **paths;
	int n = dbset_list(dir, kernel, &paths);
	for (int i = 0; i < n; i++) {
		digest_file(s, paths[i]);
		char *j = dbset_journal_path(paths[i]);
		if (access(j, F_OK) == 0)
			digest_file(s, j);
		free(j);
	}
	dbset_free_paths(paths);
	/* journals alone (dbset_load names them) */
	char *pat = fmt_path("%s/%s.*.json.journal", dir, kernel);
	glob_t g;
	if (glob(pat, 0, NULL, &g) == 0) {
		XXH3_128bits_update(s, "journals", 9);
		for (size_t i = 0; i < g.gl_pathc; i++) {
			const char *slash = strrchr(g.gl_pathv[i], '/'), *name = slash ? slash + 1 : g.gl_pathv[i];
			XXH3_128bits_update(s, name, strlen(name) + 1);
		}
		globfree(&g);
	}
	free(pat);
}

void dbset_digest(const char *dir, const char *kernel, char out[33])
{
	XXH3_state_t *s = XXH3_createState();
	if (!s)
		die("out of memory");
	XXH3_128bits_reset(s);
	digest_dir(s, dir, kernel);
	XXH3_128bits_update(s, "eval", 5);
	char *edir = dbset_eval_dir(dir);
	digest_dir(s, edir, kernel);
	free(edir);
	XXH128_hash_t h = XXH3_128bits_digest(s);
	XXH3_freeState(s);
	snprintf(out, 33, "%016llx%016llx", (unsigned long long)h.high64, (unsigned long long)h.low64);
}
