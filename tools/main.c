/* The aotc driver. Each subcommand is one function that runs the pipeline
 * stages it needs, in order:
 *
 *   parse -> enumerate -> compile -> measure -> heuristic -> emit
 *
 * `aotc parse` dumps the IR after the first stage and `aotc configs` after
 * the second. */
#include <errno.h>
#include <math.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "db.h"
#include "emit.h"
#include "eval.h"
#include "frontend.h"
#include "from_db.h"
#include "heuristic.h"
#include "link.h"
#include "options.h"
#include "report.h"
#include "text.h"
#include "shapes.h"
#include "simulate.h"
#include "ir.h"
#include "tune.h"
#include "util.h"
#include "worker.h"

enum { EXIT_DIAG = 1, EXIT_USAGE = 2, EXIT_ENV = 3, EXIT_NO_VARIANT = 4 };


/* What each subcommand runs; its options and help are in tools/options.c. */
typedef struct command {
	const char *name;
	int (*run)(options *o, diags *d);
} command;

/* ---- Shared steps -------------------------------------------------------- */

static aotc_module *load_module(options *o, diags *d)
{
	size_t n = strlen(o->file);
	if (n > 5 && strcmp(o->file + n - 5, ".json") == 0) {
		size_t len;
		char *text = read_file_max(o->file, &len, (size_t)AOTC_INPUT_MAX_MIB << 20);
		if (!text && errno == EFBIG) {
			diag_error(d, (aotc_loc){o->file, 0, 0}, "larger than %d MiB (the limit on IR files)",
			           AOTC_INPUT_MAX_MIB);
			return NULL;
		}
		if (!text) {
			diag_plain_error(d, "cannot read '%s': %s", o->file, strerror(errno));
			return NULL;
		}
		aotc_module *m = ir_from_json(text, len, o->file, d);
		free(text);
		return m;
	}
	frontend_options fo = {
		.include_dirs = o->includes, .ninclude_dirs = o->nincludes,
		.defines = o->defines, .ndefines = o->ndefines, .verbose = o->verbose,
	};
	return frontend_parse(o->file, &fo, d);
}

/* Checks --kernel against the module; returns false after a message. */
static bool kernel_selected(const options *o, const aotc_module *m, diags *d)
{
	if (o->kernel && !ir_find_kernel(m, o->kernel)) {
		diag_plain_error(d, "no tuned kernel '%s' in '%s'", o->kernel, o->file);
		return false;
	}
	if (m->nkernels == 0) {
		diag_plain_error(d, "no tuned kernels in '%s' (annotate one with AOTC_TUNE)", o->file);
		return false;
	}
	return true;
}

/* ---- Subcommands --------------------------------------------------------- */

static int cmd_parse(options *o, diags *d)
{
	aotc_module *m = load_module(o, d);
	if (!m)
		return EXIT_DIAG;
	char *json = ir_to_json(m);
	fputs(json, stdout);
	free(json);
	ir_module_destroy(m);
	return 0;
}

typedef struct print_ctx {
	const kernel *k;
	arena *a;
} print_ctx;

static bool print_config(void *ctx, const int64_t *values)
{
	print_ctx *p = ctx;
	puts(ir_variant_name(p->a, p->k, values));
	return true;
}

static int cmd_configs(options *o, diags *d)
{
	aotc_module *m = load_module(o, d);
	if (!m)
		return EXIT_DIAG;
	if (!kernel_selected(o, m, d)) {
		ir_module_destroy(m);
		return EXIT_USAGE;
	}
	for (int i = 0; i < m->nkernels; i++) {
		const kernel *k = &m->kernels[i];
		if (o->kernel && strcmp(o->kernel, k->name) != 0)
			continue;
		arena scratch;
		arena_init(&scratch);
		print_ctx ctx = {k, &scratch};
		long n = ir_enumerate(k, print_config, &ctx);
		printf("%s: %ld configuration%s\n", k->name, n, n == 1 ? "" : "s");
		arena_finish(&scratch);
	}
	ir_module_destroy(m);
	return 0;
}

enum { RUN_TUNE, RUN_EVAL, RUN_EMIT, RUN_COMPILE, RUN_CHECK, RUN_SIMULATE };

static int emit_kernel(options *o, const aotc_module *m, const kernel *k, diags *d);
static int dispatch_check(options *o, const aotc_module *m, const kernel *k, diags *d);
static tune_db *find_db(const options *o, const aotc_module *m, const kernel *k, int *nmerged, diags *d);
static void heuristic_options(const options *o, hoptions *ho);

static int run_per_kernel(options *o, diags *d, int mode)
{
	aotc_module *m = load_module(o, d);
	if (!m)
		return EXIT_DIAG;
	if (!kernel_selected(o, m, d)) {
		ir_module_destroy(m);
		return EXIT_USAGE;
	}
	tune_options to = {
		.arch = o->arch, .db_dir = o->db_dir, .shapes_file = o->shapes,
		.budget_s = o->budget_s, .jobs = o->jobs, .seed = (uint64_t)o->seed,
		.search = !o->search ? SEARCH_AUTO : !strcmp(o->search, "model") ? SEARCH_MODEL : SEARCH_EXHAUSTIVE,
		.shard = o->nshards ? o->shard : 1, .nshards = o->nshards ? o->nshards : 1,
		.dump = !o->dump ? TUNE_DUMP_NONE : !strcmp(o->dump, "configs") ? TUNE_DUMP_CONFIGS
		      : !strcmp(o->dump, "compile") ? TUNE_DUMP_COMPILE : TUNE_DUMP_SCHEDULE,
		.quiet = o->quiet, .verbose = o->verbose,
		.include_dirs = o->includes, .ninclude_dirs = o->nincludes,
		.defines = o->defines, .ndefines = o->ndefines,
	};
	int status = 0, tuned = 0;
	for (int i = 0; i < m->nkernels && status == 0; i++) {
		const kernel *k = &m->kernels[i];
		if (o->kernel && strcmp(o->kernel, k->name) != 0)
			continue;
		/* Without --kernel, a file with CUDA and host kernels tunes those
		 * that fit the architecture. */
		if (!o->kernel && k->is_global != (strcmp(o->arch, "host") != 0))
			continue;
		/* The dispatch tree may split on derived features (where the
		 * kernel names none): they are computed alike when learning and
		 * in the emitted select(). */
		if (mode != RUN_TUNE)
			ir_derive_features(m, &m->kernels[i]);
		if (mode == RUN_EMIT) {
			status = emit_kernel(o, m, k, d);
		} else if (mode == RUN_SIMULATE) {
			tune_db *db = find_db(o, m, k, NULL, d);
			status = db ? tune_simulate(k, db, &to, o->out_given ? o->out_dir : NULL, d) : EXIT_ENV;
			db_close(db);
		} else if (mode == RUN_CHECK) {
			status = dispatch_check(o, m, k, d);
		} else if (mode == RUN_COMPILE) {
			/* Tune where the device is; where there is none of
			 * that architecture, re-emit from the database, saying
			 * so. Any other failure is the tune's, told once. */
			diags held;
			diags_init_buffered(&held);
			held.quiet_warnings = d->quiet_warnings;
			bool no_device = false;
			status = tune_kernel(m, k, &to, &no_device, &held);
			if (status == EXIT_ENV && no_device) {
				if (!o->quiet)
					fprintf(stderr, "aotc: no %s device here: emitting from the tuning database in %s/\n",
					        o->arch, o->db_dir);
				status = 0;
			} else {
				diags_flush(&held, stderr);
				d->errors += held.errors;
				d->warnings += held.warnings;
			}
			diags_finish(&held);
			if (status == 0)
				status = emit_kernel(o, m, k, d);
		} else if (mode == RUN_EVAL) {
			hoptions ho;
			heuristic_options(o, &ho);
			status = eval_kernel(m, k, &to, &ho, d);
		} else if (o->compile_only) {
			status = tune_compile_only(m, k, &to, d);
		} else {
			status = tune_kernel(m, k, &to, NULL, d);
		}
		tuned++;
	}
	if (tuned == 0) {
		diag_plain_error(d, "no kernel in '%s' is a %s kernel (use --kernel to name one)", o->file,
		                 strcmp(o->arch, "host") ? "__global__" : "host");
		status = EXIT_DIAG;
	}
	ir_module_destroy(m);
	return status;
}

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
static void warn_incomplete(const tune_db *db, const db_parts *p, const options *o, diags *d)
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
		if (!o->quiet)
			fprintf(stderr, "aotc: %s: the model-guided search measured %ld of %ld cells (the rest were predicted slower)\n",
			        db->path, cells - missing, cells);
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

/* The databases for kernel k on arch in --db, merged (docs/spec.md §6: shards and
 * machines merge; a cell measured in several keeps the first, in path
 * order), and how many (*nmerged, may be NULL). NULL (diagnosed) if none,
 * if one cannot be read, or if one was tuned from another version of the
 * source or names other tunables. */
static tune_db *find_db(const options *o, const aotc_module *m, const kernel *k, int *nmerged, diags *d)
{
	strbuf pat;
	strbuf_init(&pat);
	strbuf_printf(&pat, "%s/%s.*.json", o->db_dir, k->name);
	glob_t g;
	tune_db *all = NULL;
	bool bad = false;
	db_parts parts = {0};
	if (glob(pat.data, 0, NULL, &g) == 0) {
		for (size_t i = 0; i < g.gl_pathc && !bad; i++) {
			/* A database of this kernel that cannot be read is an
			 * error, never skipped: it may be this architecture's.
			 * JSON that is no database (a shapes list) is skipped;
			 * warnings are shown only for this architecture's. */
			diags held;
			diags_init_buffered(&held);
			held.quiet_warnings = d->quiet_warnings;
			bool not_db = false;
			tune_db *db = db_load_any(g.gl_pathv[i], &not_db, &held);
			const char *arch = db ? json_string_value(json_object_get(db->hardware, "arch")) : NULL;
			if (!db && not_db) {
				diags_finish(&held);
				continue;
			}
			if (!db || (arch && strcmp(arch, o->arch) == 0)) {
				if (d->out)
					diags_flush(&held, d->out);
				d->errors += held.errors;
				d->warnings += held.warnings;
			}
			diags_finish(&held);
			if (!db) {
				bad = true;
				continue;
			}
			if (!arch || strcmp(arch, o->arch) != 0) {
				db_close(db);
				continue;
			}
			if (strcmp(db->source_hash, m->source_hash) != 0) {
				diag_plain_error(d, "%s was tuned from another version of %s (source hash %s, now %s): tune it again",
				                 db->path, o->file, db->source_hash, m->source_hash);
				bad = true;
			} else if (all && (all->ntunables != db->ntunables || all->nshape_args != db->nshape_args)) {
				diag_plain_error(d, "%s and %s do not hold the same tunables and shape arguments",
				                 all->path, db->path);
				bad = true;
			} else if (!all) {
				parts_add(&parts, db);
				all = db;
				db = NULL;
			} else {
				parts_add(&parts, db);
				db_merge(all, db);
			}
			db_close(db);
		}
		globfree(&g);
	}
	strbuf_finish(&pat);
	if (bad) {
		free(parts.seen);
		db_close(all);
		return NULL;
	}
	if (all)
		warn_incomplete(all, &parts, o, d);
	if (nmerged)
		*nmerged = parts.n;
	free(parts.seen);
	if (!all) {
		/* The journal of a tune killed before its first save (an older
		 * aotc wrote no document until then) is named, not ignored. */
		strbuf_init(&pat);
		strbuf_printf(&pat, "%s/%s.*.json.journal", o->db_dir, k->name);
		if (glob(pat.data, 0, NULL, &g) == 0) {
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
		strbuf_finish(&pat);
		diag_plain_error(d, "no tuning database for '%s' on %s in %s/ (tune it on such a machine: aotc tune %s --arch %s)",
		                 k->name, o->arch, o->db_dir, o->file, o->arch);
	}
	return all;
}

static void heuristic_options(const options *o, hoptions *ho)
{
	hoptions_default(ho);
	ho->seed = (uint64_t)o->seed;
	if (o->max_variants)
		ho->max_variants = o->max_variants;
	if (o->goal > 0)
		ho->goal = o->goal;
}

/* The heuristic for kernel k from its database on --arch: the matrix and
 * the result, or NULL (diagnosed). The caller finishes both and closes the
 * database. */
static tune_db *learn(const options *o, const aotc_module *m, const kernel *k, hmatrix *hm,
                      hresult *r, int *nmerged, diags *d)
{
	tune_db *db = find_db(o, m, k, nmerged, d);
	if (!db)
		return NULL;
	if (!hmatrix_from_db(hm, db, k, d)) {
		db_close(db);
		return NULL;
	}
	hoptions ho;
	heuristic_options(o, &ho);
	h_build(r, hm, &ho);
	return db;
}

static int emit_kernel(options *o, const aotc_module *m, const kernel *k, diags *d)
{
	hmatrix hm;
	hresult r;
	int nmerged = 0;
	tune_db *db = learn(o, m, k, &hm, &r, &nmerged, d);
	if (!db)
		return EXIT_ENV;
	int status = 0;
	if (r.nsubset == 0) {
		diag_plain_error(d, "no variant of '%s' ran correctly in %s", k->name, db->path);
		status = EXIT_NO_VARIANT;
	} else {
		hstats est[SEL_COUNT];
		int neval = 0;
		tune_db *edb = NULL;
		hmatrix em;
		if (eval_matrix_for(db->path, db->source_hash, k, &edb, &em)) {
			neval = eval_selectors(&r, &hm, &em, est);
			hmatrix_from_db_finish(&em);
			db_close(edb);
		}
		dispatch dp;
		if (!dispatch_from_result(&dp, k, db, &hm, &r, neval > 0 ? &est[SEL_TREE] : NULL, neval, d)) {
			status = EXIT_ENV;
		} else {
			emit_input in = {.m = m, .k = k, .arch = o->arch, .dp = &dp,
			                 .out_dir = o->out_dir, .include_as = o->include_as};
			status = emit_files(&in, d);
			if (status == 0 && !o->quiet) {
				char tag[64];
				emit_arch_tag(o->arch, tag, sizeof tag);
				char from[64] = "";
				if (nmerged > 1)
					snprintf(from, sizeof from, " and %d more database%s", nmerged - 1, nmerged == 2 ? "" : "s");
				printf("aotc: emitted %s/_aot_%s_%s.{c,h,%s} from %s%s: %d variant%s, tree depth %d; "
				       "slowdown vs best: training %.3f (worst %.3f), held-out %.3f (worst %.3f)\n",
				       o->out_dir, k->name, tag, emit_launcher_ext(o->arch), db->path, from, dp.nvariants,
				       dp.nvariants == 1 ? "" : "s", dispatch_depth(&dp), dp.fig.train.geomean, dp.fig.train.worst,
				       dp.fig.heldout.geomean, dp.fig.heldout.worst);
			}
			dispatch_finish(&dp);
		}
	}
	hresult_finish(&r);
	hmatrix_from_db_finish(&hm);
	db_close(db);
	return status;
}

/* `aotc __dispatch-check FILE --arch A --db DB [--seed N]`: for the tests
 * that compile the emitted C, the in-memory dispatch's answers: for every
 * database shape and 2000 random ones, "select ARGS -> v", and for each
 * emitted variant "dims v INTS -> g0 g1 g2 b0 b1 b2 smem" (or "-> -1") from
 * the IR evaluator. Variants are numbered as in the emitted file (database
 * order of the chosen ones). */
static int dispatch_check(options *o, const aotc_module *m, const kernel *k, diags *d)
{
	hmatrix hm;
	hresult r;
	tune_db *db = learn(o, m, k, &hm, &r, NULL, d);
	if (!db)
		return EXIT_ENV;
	dispatch dp;
	if (!dispatch_from_result(&dp, k, db, &hm, &r, NULL, 0, d)) {
		hresult_finish(&r);
		hmatrix_from_db_finish(&hm);
		db_close(db);
		return EXIT_ENV;
	}
	int nargs = db->nshape_args;
	shape_set ss;
	shape_set_init(&ss, k);
	int64_t *row = xcalloc((size_t)nargs + 1, sizeof *row);
	int64_t *params = xcalloc((size_t)k->nparams + 1, sizeof *params);
	uint64_t seed = (uint64_t)o->seed * 0x9e3779b97f4a7c15ull + 1;
	for (int s = 0; s < db->nshapes + 2000; s++) {
		if (s < db->nshapes) {
			memcpy(row, db->shapes + (size_t)s * nargs, (size_t)nargs * sizeof *row);
		} else {
			/* Random shapes: mostly in range, some odd, some extreme. */
			for (int a = 0; a < nargs; a++) {
				seed = seed * 6364136223846793005ull + 1442695040888963407ull;
				uint64_t x = seed >> 20;
				switch (x % 8) {
				case 0: row[a] = (int64_t)(x % 3) - 1; break;
				case 1: row[a] = (int64_t)(x >> 4) * 1000003; break;
				default: row[a] = 1 + (int64_t)((x >> 4) % 8192); break;
				}
			}
		}
		/* The dispatch as emitted: the same features and validity. */
		int e = dispatch_select(&dp, k, row);
		printf("select");
		for (int a = 0; a < nargs; a++)
			printf(" %lld", (long long)row[a]);
		printf(" -> %d\n", e);
		if (!k->is_global)
			continue;
		/* launch_dims takes every integer parameter: the shape arguments
		 * here, the values computed from them */
		shape_param_values(k, &ss, row, params);
		for (int i = 0; i < dp.nvariants; i++) {
			/* ... and the per-variant values, which launch_dims computes itself */
			int64_t own[k->nparams + 1];
			memcpy(own, params, (size_t)k->nparams * sizeof *own);
			eval_env le = {.tunables = db->configs[dp.variants[i].config].values, .ntunables = k->ntunables,
			               .params = own, .nparams = k->nparams};
			int64_t dims[7];
			int which;
			bool ok = !db->configs[dp.variants[i].config].is_extern && /* a routine launches nothing */
			          ir_variant_params(k, db->configs[dp.variants[i].config].values, own) == EVAL_OK &&
			          ir_launch_dims(&k->grid, &k->block, &k->smem, &le, dims, &which) == EVAL_OK &&
			          ir_dims_launchable(dims);
			printf("dims %d", i);
			for (int j = 0; j < k->nparams; j++)
				if (ir_param_is_integer(&k->params[j]) && !ir_param_per_variant(k, j))
					printf(" %lld", (long long)params[j]);
			if (ok)
				printf(" -> %lld %lld %lld %lld %lld %lld %lld\n", (long long)dims[0],
				       (long long)dims[1], (long long)dims[2], (long long)dims[3],
				       (long long)dims[4], (long long)dims[5], (long long)dims[6]);
			else
				printf(" -> -1\n");
		}
	}
	shape_set_finish(&ss);
	free(row);
	free(params);
	dispatch_finish(&dp);
	hresult_finish(&r);
	hmatrix_from_db_finish(&hm);
	db_close(db);
	return 0;
}

static int cmd_link(options *o, diags *d)
{
	return link_dirs((const char *const *)o->inputs, o->ninputs, o->out_dir, o->include_as, d);
}

static int cmd_tune(options *o, diags *d) { return run_per_kernel(o, d, RUN_TUNE); }
static int cmd_eval(options *o, diags *d) { return run_per_kernel(o, d, RUN_EVAL); }
static int cmd_emit(options *o, diags *d) { return run_per_kernel(o, d, RUN_EMIT); }
static int cmd_compile(options *o, diags *d) { return run_per_kernel(o, d, RUN_COMPILE); }
static int cmd_check(options *o, diags *d) { return run_per_kernel(o, d, RUN_CHECK); }
static int cmd_simulate(options *o, diags *d) { return run_per_kernel(o, d, RUN_SIMULATE); }

/* The source a database names (as given to aotc tune, relative to where
 * it ran): as it stands, else relative to the database's folder or one of
 * the three above it (a database kept in <project>/templates/ that says
 * templates/k.cu). malloc'd, or NULL. */
static char *find_source(const char *source, const char *db_path)
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

static int cmd_report(options *o, diags *d)
{
	tune_db *db = db_load(o->file, d);
	if (!db)
		return EXIT_ENV;
	/* The kernel the database was tuned from, where its source is still
	 * there unchanged: then report learns what emit learns (features,
	 * validity, the cost model). */
	aotc_module *km = NULL;
	const kernel *k = NULL;
	const char *why = NULL;
	char *src = db->source ? find_source(db->source, o->file) : NULL;
	if (src) {
		diags quiet;
		diags_init_buffered(&quiet);
		options so = *o;
		so.file = src;
		km = load_module(&so, &quiet);
		diags_finish(&quiet);
		for (int i = 0; km && i < km->nkernels && !k; i++)
			if (!strcmp(km->kernels[i].name, db->kernel))
				k = &km->kernels[i];
		if (!km || !k)
			why = "does not parse or has no such kernel";
		else if (strcmp(km->source_hash, db->source_hash) != 0)
			why = "has changed since it was tuned", k = NULL;
		else
			ir_derive_features(km, &km->kernels[k - km->kernels]);
	} else {
		why = "is not there";
	}
	hmatrix m;
	if (!hmatrix_from_db(&m, db, k, d)) {
		k = NULL;
		hmatrix_from_db(&m, db, NULL, d);
	}
	if (!k)
		fprintf(stderr, "aotc: note: the source %s %s: features are the shape arguments, validity the recorded statuses, no cost model (aotc emit may learn another dispatch)\n",
		        db->source ? db->source : "(none recorded)", why ? why : "does not match");
	hoptions ho;
	heuristic_options(o, &ho);
	hresult r;
	h_build(&r, &m, &ho);
	hstats est[SEL_COUNT];
	int neval = 0;
	tune_db *edb = NULL;
	hmatrix em;
	if (k && eval_matrix_for(o->file, db->source_hash, k, &edb, &em)) {
		neval = eval_selectors(&r, &m, &em, est);
		hmatrix_from_db_finish(&em);
		db_close(edb);
	}
	report_format fmt = REPORT_TEXT;
	if (!report_format_parse(o->format, &fmt))
		die("report: unchecked --format '%s'", o->format); /* options_parse checks it */
	report_input in = {db, &m, &r, est, neval};
	strbuf sb;
	strbuf_init(&sb);
	report_write(&sb, fmt, &in);
	int status = 0;
	if (fwrite(sb.data, 1, sb.len, stdout) != sb.len || fflush(stdout) != 0) {
		fprintf(stderr, "aotc: cannot write the report: %s\n", strerror(errno));
		status = EXIT_ENV;
	}
	strbuf_finish(&sb);
	hresult_finish(&r);
	hmatrix_from_db_finish(&m);
	db_close(db);
	ir_module_destroy(km);
	free(src);
	return status;
}

static const command commands[] = {
	{"compile", cmd_compile}, {"tune", cmd_tune}, {"emit", cmd_emit}, {"eval", cmd_eval},
	{"parse", cmd_parse}, {"configs", cmd_configs}, {"report", cmd_report}, {"link", cmd_link},
	{"__dispatch-check", cmd_check}, {"__search-sim", cmd_simulate},
};

int main(int argc, char **argv)
{
	diags d;
	diags_init(&d);
	if (argc < 2) {
		options_usage(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "__worker"))
		return worker_main(); /* tuner.c starts us so */
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
		printf("aotc %s\nlibclang: %s\n", AOTC_VERSION_STRING, frontend_clang_version());
		return 0;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		options_usage(stdout);
		return 0;
	}
	const command *cmd = NULL;
	for (size_t i = 0; i < COUNTOF(commands); i++)
		if (!strcmp(commands[i].name, argv[1]))
			cmd = &commands[i];
	const options_for *known = options_command(argv[1]);
	if (!cmd || !known) {
		fprintf(stderr, "aotc: unknown command '%s'\n", argv[1]);
		options_usage(stderr);
		return EXIT_USAGE;
	}

	options o;
	options_for of = *known;
	of.err = stderr;
	int status = options_parse(&o, &of, argc - 1, argv + 1);
	if (status >= 0) {
		if (o.help) {
			options_help(stdout, known);
		} else if (o.version) {
			printf("aotc %s\nlibclang: %s\n", AOTC_VERSION_STRING, frontend_clang_version());
		}
		goto out;
	}
	d.quiet_warnings = o.quiet;
	if (!frontend_env_ok(&d)) {
		status = EXIT_ENV;
		goto out;
	}

	if (!strcmp(cmd->name, "link")) {
		status = cmd->run(&o, &d);
		goto out;
	}
	status = cmd->run(&o, &d);
	if (d.errors && status == 0)
		status = EXIT_DIAG;
	diags_print_hidden(&d);
	if (status == EXIT_DIAG && d.errors)
		fprintf(stderr, "%d error%s generated.\n", d.errors, d.errors == 1 ? "" : "s");
out:
	options_finish(&o);
	diags_finish(&d);
	return status;
}
