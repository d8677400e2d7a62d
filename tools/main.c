/* The aotc driver. Each subcommand is one function that runs the pipeline
 * stages it needs, in order:
 *
 *   parse -> enumerate -> compile -> measure -> heuristic -> emit
 *
 * `aotc parse` dumps the IR after the first stage and `aotc configs` after
 * the second. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "db.h"
#include "dbset.h"
#include "emit.h"
#include "eval.h"
#include "frontend.h"
#include "from_db.h"
#include "heldout.h"
#include "heuristic.h"
#include "learn.h"
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



/* What each subcommand runs; its options and help are in tools/options.c. */
typedef struct command {
	const char *name;
	int (*run)(options *o, diags *d);
} command;

/* ---- Shared steps -------------------------------------------------------- */

/* The module of --file: an IR file read, or the source parsed. With
 * saved_ir (emit, where the speed matters), through the IR saved under --db
 * (frontend_parse_saved): no libclang when nothing changed. */
static aotc_module *load_module(options *o, bool saved_ir, diags *d)
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
	if (!saved_ir)
		return frontend_parse(o->file, &fo, d);
	char *saved = dbset_ir_path(o->db_dir, o->file);
	bool reused;
	aotc_module *m = frontend_parse_saved(o->file, &fo, saved, &reused, d);
	free(saved);
	return m;
}

/* Checks --kernel against the module; returns false after a message. */
static bool kernel_selected(const options *o, const aotc_module *m, diags *d)
{
	bool found = false;
	for (int i = 0; i < m->nkernels; i++)
		found |= ir_kernel_selected(&m->kernels[i], o->kernel);
	if (o->kernel && !found) {
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
	aotc_module *m = load_module(o, false, d);
	if (!m)
		return AOTC_DIAGNOSED;
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
	aotc_module *m = load_module(o, false, d);
	if (!m)
		return AOTC_DIAGNOSED;
	if (!kernel_selected(o, m, d)) {
		ir_module_destroy(m);
		return AOTC_USAGE;
	}
	for (int i = 0; i < m->nkernels; i++) {
		const kernel *k = &m->kernels[i];
		if (!ir_kernel_selected(k, o->kernel))
			continue;
		arena scratch;
		arena_init(&scratch);
		long n = 0;
		for (int a = -1; a < k->nalts; a++) {
			print_ctx ctx = {a < 0 ? k : &k->alts[a], &scratch};
			n += ir_enumerate(ctx.k, print_config, &ctx);
		}
		printf("%s: %ld configuration%s\n", k->id, n, n == 1 ? "" : "s");
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
	aotc_module *m = load_module(o, mode == RUN_EMIT, d);
	if (!m)
		return AOTC_DIAGNOSED;
	if (!kernel_selected(o, m, d)) {
		ir_module_destroy(m);
		return AOTC_USAGE;
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
		if (!ir_kernel_selected(k, o->kernel))
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
			status = db ? tune_simulate(k, db, &to, o->out_given ? o->out_dir : NULL, d) : AOTC_ENVIRONMENT;
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
			if (status == AOTC_ENVIRONMENT && no_device) {
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
		status = AOTC_DIAGNOSED;
	}
	ir_module_destroy(m);
	return status;
}

/* The databases for kernel k on --arch (tuner/dbset.h). */
static tune_db *find_db(const options *o, const aotc_module *m, const kernel *k, int *nmerged, diags *d)
{
	return dbset_load(o->db_dir, k, o->arch, m->source_hash, o->file, nmerged, d);
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

static learn_options learning(const options *o)
{
	learn_options lo = {.db_dir = o->db_dir, .arch = o->arch, .file = o->file,
	                    .defines = o->defines, .ndefines = o->ndefines, .verbose = o->verbose};
	heuristic_options(o, &lo.ho);
	return lo;
}

static int emit_kernel(options *o, const aotc_module *m, const kernel *k, diags *d)
{
	learn_options lo = learning(o);
	dispatch dp;
	bool loaded = false;
	int status = dispatch_learn_or_load(m, k, &lo, &dp, &loaded, NULL, d);
	if (status)
		return status;
	emit_input in = {.m = m, .k = k, .arch = o->arch, .dp = &dp, .out_dir = o->out_dir,
	                 .include_as = o->include_as};
	status = emit_files(&in, d);
	if (status == 0 && !o->quiet) {
		char tag[64];
		emit_arch_tag(o->arch, tag, sizeof tag);
		char from[64] = "";
		if (dp.from.merged > 1)
			snprintf(from, sizeof from, " and %d more database%s", dp.from.merged - 1,
			         dp.from.merged == 2 ? "" : "s");
		printf("aotc: emitted %s/_aot_%s_%s.{c,h,%s} from %s%s%s: %d variant%s, tree depth %d; "
		       "slowdown vs best: training %.3f (worst %.3f), held-out %.3f (worst %.3f)\n",
		       o->out_dir, k->id, tag, emit_launcher_ext(o->arch), dp.from.db ? dp.from.db : "?", from,
		       loaded ? " (the saved dispatch)" : "", dp.nvariants, dp.nvariants == 1 ? "" : "s",
		       dispatch_depth(&dp), dp.fig.train.geomean, dp.fig.train.worst, dp.fig.heldout.geomean,
		       dp.fig.heldout.worst);
	}
	dispatch_finish(&dp);
	return status;
}

/* `aotc __dispatch-check FILE --arch A --db DB [--seed N]`: for the tests
 * that compile the emitted C, the dispatch's answers (heuristics/dispatch.h,
 * dispatch_select): for every database shape, 2000 random ones and the
 * extremes (INT64_MIN, around 2^31, 2^53 + 1, INT64_MAX, ...),
 * "select ARGS -> v", and for each emitted variant
 * "dims v INTS -> g0 g1 g2 b0 b1 b2 smem" (or "-> -1") from the IR
 * evaluator. Variants are numbered as in the emitted file (the dispatch's). */
static int dispatch_check(options *o, const aotc_module *m, const kernel *k, diags *d)
{
	learn_options lo = learning(o);
	dispatch dp;
	bool loaded;
	int status = dispatch_learn_or_load(m, k, &lo, &dp, &loaded, NULL, d);
	if (status)
		return status;
	/* the database's shapes to ask it about (not how it was learnt) */
	diags quiet;
	diags_init_buffered(&quiet);
	tune_db *db = find_db(o, m, k, NULL, &quiet);
	diags_finish(&quiet);
	if (!db) {
		dispatch_finish(&dp);
		return AOTC_ENVIRONMENT;
	}
	int nargs = db->nshape_args;
	shape_set ss;
	shape_set_init(&ss, k);
	int64_t *row = xcalloc((size_t)nargs + 1, sizeof *row);
	int64_t *params = xcalloc((size_t)k->nparams + 1, sizeof *params);
	uint64_t seed = (uint64_t)o->seed * 0x9e3779b97f4a7c15ull + 1;
	/* The extremes: every combination of these where there are few (else
	 * each argument through them, the others 1000). */
	static const int64_t extreme[] = {INT64_MIN, INT64_MIN + 1, -(INT64_C(1) << 31) - 1, -(INT64_C(1) << 31), -1, 0,
	                                  1, (INT64_C(1) << 31) - 1, INT64_C(1) << 31, INT64_C(1) << 32,
	                                  (INT64_C(1) << 53) + 1, INT64_MAX};
	const int ne = (int)(sizeof extreme / sizeof *extreme);
	long nx = 1;
	for (int a = 0; a < nargs && nx <= 5000; a++)
		nx *= ne;
	bool product = nx <= 5000;
	if (!product)
		nx = (long)nargs * ne;
	for (long s = 0; s < db->nshapes + 2000 + nx; s++) {
		if (s < db->nshapes) {
			memcpy(row, db->shapes + (size_t)s * nargs, (size_t)nargs * sizeof *row);
		} else if (s >= db->nshapes + 2000) {
			long x = s - db->nshapes - 2000;
			for (int a = 0; a < nargs; a++) {
				if (product) {
					row[a] = extreme[x % ne];
					x /= ne;
				} else {
					row[a] = x / ne == a ? extreme[x % ne] : 1000;
				}
			}
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
			const kernel *f = dispatch_function(k, &dp.variants[i]);
			int64_t own[k->nparams + 1];
			memcpy(own, params, (size_t)k->nparams * sizeof *own);
			eval_env le = {.tunables = dp.variants[i].values, .ntunables = f->ntunables,
			               .params = own, .nparams = k->nparams};
			int64_t dims[7];
			int which;
			/* a routine, a host launcher launches nothing itself */
			bool ok = dp.variants[i].routine < 0 && !f->host_launcher &&
			          ir_variant_params(f, dp.variants[i].values, own) == EVAL_OK &&
			          ir_launch_dims(&f->grid, &f->block, &f->smem, &le, dims, &which) == EVAL_OK &&
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
		return AOTC_ENVIRONMENT;
	/* The kernel the database was tuned from, where its source is still
	 * there unchanged: then report learns what emit learns (features,
	 * validity, the cost model). */
	aotc_module *km = NULL;
	const kernel *k = NULL;
	db_key key;
	const char *why = NULL;
	char *src = db->source ? find_source(db->source, o->file) : NULL;
	if (src) {
		diags quiet;
		diags_init_buffered(&quiet);
		options so = *o;
		so.file = src;
		km = load_module(&so, false, &quiet);
		diags_finish(&quiet);
		for (int i = 0; km && i < km->nkernels && !k; i++)
			if (!strcmp(km->kernels[i].id, db->kernel))
				k = &km->kernels[i];
		if (!km || !k)
			why = "does not parse or has no such kernel";
		else if ((key = dbset_key(k), db_count_stale(db, &key, km->source_hash)) != 0)
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
	const char *hw = json_string_value(json_object_get(db->hardware, "id"));
	char *dir = dbset_dir_of(o->file), *epath = hw ? dbset_eval_path(dir, db->kernel, hw) : NULL;
	if (k && epath && eval_matrix_for(epath, db->source_hash, k, &edb, &em)) {
		neval = eval_selectors(&r, &m, &em, est);
		hmatrix_from_db_finish(&em);
		db_close(edb);
	}
	free(dir);
	free(epath);
	report_format fmt = REPORT_TEXT;
	if (!report_format_parse(o->format, &fmt))
		die("report: unchecked --format '%s'", o->format); /* options_parse checks it */
	/* The dispatch select() would run: what report says is dispatched. */
	dispatch dp;
	int status = 0;
	if (!dispatch_from_result(&dp, k, db, &m, &r, neval > 0 ? &est[SEL_TREE] : NULL, neval, d)) {
		hresult_finish(&r);
		hmatrix_from_db_finish(&m);
		db_close(db);
		ir_module_destroy(km);
		free(src);
		return AOTC_ENVIRONMENT;
	}
	report_input in = {db, &m, &r, est, neval, &dp, k};
	strbuf sb;
	strbuf_init(&sb);
	report_write(&sb, fmt, &in);
	if (fwrite(sb.data, 1, sb.len, stdout) != sb.len || fflush(stdout) != 0) {
		fprintf(stderr, "aotc: cannot write the report: %s\n", strerror(errno));
		status = AOTC_ENVIRONMENT;
	}
	strbuf_finish(&sb);
	dispatch_finish(&dp);
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
		return AOTC_USAGE;
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
		return AOTC_USAGE;
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
		status = AOTC_ENVIRONMENT;
		goto out;
	}

	if (!strcmp(cmd->name, "link")) {
		status = cmd->run(&o, &d);
		goto out;
	}
	status = cmd->run(&o, &d);
	if (d.errors && status == 0)
		status = AOTC_DIAGNOSED;
	diags_print_hidden(&d);
	if (status == AOTC_DIAGNOSED && d.errors)
		fprintf(stderr, "%d error%s generated.\n", d.errors, d.errors == 1 ? "" : "s");
out:
	options_finish(&o);
	diags_finish(&d);
	return status;
}
