/* The aotc driver: the commands, and for each the pipeline stages it runs,
 * in order:
 *
 *   parse -> enumerate -> compile -> measure -> heuristic -> emit
 *
 * `aotc parse` dumps the IR after the first stage and `aotc configs` after
 * the second; `aotc tune --dump STAGE` the tuner's stages. Every command
 * returns an aotc_status; main() alone makes it the exit status. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "dbset.h"
#include "dispatch_check.h"
#include "driver.h"
#include "emit.h"
#include "eval.h"
#include "frontend.h"
#include "ir.h"
#include "learn.h"
#include "link.h"
#include "options.h"
#include "simulate.h"
#include "tune.h"
#include "util.h"
#include "worker.h"

/* What each subcommand runs; its options and help are in tools/options.c. */
typedef struct command {
	const char *name;
	aotc_status (*run)(options *o, diags *d);
	bool own_summary;   /* tells its errors itself (link): no "N errors generated." */
} command;

/* ---- Running a stage on each kernel ------------------------------------- */

/* A stage run on each kernel a command works on. */
typedef aotc_status (*kernel_stage)(const options *o, const aotc_module *m, const kernel *k, diags *d);

/* Runs stage on each kernel of --file that --kernel selects (without
 * --kernel, those that fit --arch: a file with CUDA and host kernels tunes
 * those of the architecture), until one fails. With derive, each kernel
 * gets its derived features first: the dispatch tree may split on them
 * (where the kernel names none), computed alike when learning and in the
 * emitted select(). saved_ir: as driver_load_module. */
static aotc_status per_kernel(const options *o, diags *d, bool saved_ir, bool derive, kernel_stage stage)
{
	aotc_module *m = driver_load_module(o, saved_ir, d);
	if (!m)
		return AOTC_DIAGNOSED;
	if (!driver_kernel_selected(o, m, d)) {
		ir_module_destroy(m);
		return AOTC_USAGE;
	}
	bool host = o->arch->kind == ARCH_HOST;
	aotc_status status = AOTC_OK;
	int tuned = 0;
	for (int i = 0; i < m->nkernels && status == AOTC_OK; i++) {
		kernel *k = &m->kernels[i];
		if (!ir_kernel_selected(k, o->kernel) || (!o->kernel && k->is_global == host))
			continue;
		if (derive)
			ir_derive_features(m, k);
		status = stage(o, m, k, d);
		tuned++;
	}
	if (tuned == 0) {
		diag_plain_error(d, "no kernel in '%s' is a %s kernel (use --kernel to name one)", o->file,
		                 host ? "host" : "__global__");
		status = AOTC_DIAGNOSED;
	}
	ir_module_destroy(m);
	return status;
}

/* ---- The stages, per kernel ------------------------------------------------ */

/* tune: compile, measure, record (or, --compile-only, compile alone). */
static aotc_status tune_stage(const options *o, const aotc_module *m, const kernel *k, diags *d)
{
	tune_options to = driver_tune_options(o);
	return o->compile_only ? tune_compile_only(m, k, &to, d) : tune_kernel(m, k, &to, NULL, d);
}

/* Where there is a device of --arch, tune; where there is none, the
 * database is reused, saying so. Any other failure is the tune's, told
 * once. */
static aotc_status tune_or_reuse(const options *o, const aotc_module *m, const kernel *k, diags *d)
{
	tune_options to = driver_tune_options(o);
	diags held;
	diags_init_buffered(&held);
	held.quiet_warnings = d->quiet_warnings;
	bool no_device = false;
	aotc_status status = tune_kernel(m, k, &to, &no_device, &held);
	if (status == AOTC_ENVIRONMENT && no_device) {
		if (!o->quiet)
			fprintf(stderr, "aotc: no %s device here: emitting from the tuning database in %s/\n",
			        o->arch->name, o->db_dir);
		status = AOTC_OK;
	} else {
		diags_flush(&held, stderr);
		d->errors += held.errors;
		d->warnings += held.warnings;
	}
	diags_finish(&held);
	return status;
}

/* heuristic -> emit: the dispatch learnt (or the saved one), then the
 * files, and a line saying what was emitted. */
static aotc_status emit_stage(const options *o, const aotc_module *m, const kernel *k, diags *d)
{
	learn_options lo = driver_learn_options(o);
	dispatch dp;
	bool loaded = false;
	aotc_status status = dispatch_learn_or_load(m, k, &lo, &dp, &loaded, NULL, d);
	if (status)
		return status;
	emit_input in = {.m = m, .k = k, .arch = o->arch, .dp = &dp, .out_dir = o->out_dir,
	                 .include_as = o->include_as};
	status = emit_files(&in, d);
	if (status == AOTC_OK && !o->quiet) {
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

/* compile: tune (or reuse the database), then emit. */
static aotc_status compile_stage(const options *o, const aotc_module *m, const kernel *k, diags *d)
{
	aotc_status status = tune_or_reuse(o, m, k, d);
	return status ? status : emit_stage(o, m, k, d);
}

/* eval: the emitted choice against every variant on held-out shapes. */
static aotc_status eval_stage(const options *o, const aotc_module *m, const kernel *k, diags *d)
{
	tune_options to = driver_tune_options(o);
	bool json = o->format == OPTIONS_FORMAT_JSON;
	to.stdout_taken = json;
	hoptions ho;
	driver_hoptions(o, &ho);
	return eval_kernel(m, k, &to, &ho, json, d);
}

/* __dispatch-check: the dispatch's answers (heuristics/dispatch_check.h)
 * on the database's shapes and many others. */
static aotc_status check_stage(const options *o, const aotc_module *m, const kernel *k, diags *d)
{
	learn_options lo = driver_learn_options(o);
	dispatch dp;
	bool loaded;
	aotc_status status = dispatch_learn_or_load(m, k, &lo, &dp, &loaded, NULL, d);
	if (status)
		return status;
	/* the database's shapes to ask it about (not how it was learnt) */
	diags quiet;
	diags_init_buffered(&quiet);
	tune_db *db = dbset_load(o->db_dir, k, o->arch, m->source_hash, o->file, NULL, &quiet);
	diags_finish(&quiet);
	if (db)
		dispatch_check_write(stdout, &dp, k, db, o->seed);
	dispatch_finish(&dp);
	db_close(db);
	return db ? AOTC_OK : AOTC_ENVIRONMENT;
}

/* __search-sim: the search replayed on an exhaustive database. */
static aotc_status simulate_stage(const options *o, const aotc_module *m, const kernel *k, diags *d)
{
	tune_options to = driver_tune_options(o);
	tune_db *db = dbset_load(o->db_dir, k, o->arch, m->source_hash, o->file, NULL, d);
	aotc_status status = db ? tune_simulate(k, db, &to, o->out_given ? o->out_dir : NULL, d) : AOTC_ENVIRONMENT;
	db_close(db);
	return status;
}

/* ---- The commands -------------------------------------------------------- */

static aotc_status cmd_parse(options *o, diags *d)
{
	aotc_module *m = driver_load_module(o, false, d);
	if (!m)
		return AOTC_DIAGNOSED;
	char *json = ir_to_json(m);
	fputs(json, stdout);
	free(json);
	ir_module_destroy(m);
	return AOTC_OK;
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

static aotc_status cmd_configs(options *o, diags *d)
{
	aotc_module *m = driver_load_module(o, false, d);
	if (!m)
		return AOTC_DIAGNOSED;
	if (!driver_kernel_selected(o, m, d)) {
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
	return AOTC_OK;
}

static aotc_status cmd_tune(options *o, diags *d) { return per_kernel(o, d, false, false, tune_stage); }
static aotc_status cmd_compile(options *o, diags *d) { return per_kernel(o, d, false, true, compile_stage); }
static aotc_status cmd_emit(options *o, diags *d) { return per_kernel(o, d, true, true, emit_stage); }
static aotc_status cmd_eval(options *o, diags *d) { return per_kernel(o, d, false, true, eval_stage); }
static aotc_status cmd_check(options *o, diags *d) { return per_kernel(o, d, false, true, check_stage); }
static aotc_status cmd_simulate(options *o, diags *d) { return per_kernel(o, d, false, true, simulate_stage); }

static aotc_status cmd_link(options *o, diags *d)
{
	return link_dirs((const char *const *)o->inputs, o->ninputs, o->out_dir, o->include_as, d);
}

static aotc_status cmd_report(options *o, diags *d) { return report_command(o, d); }

/* ---- The commands' table and main ------------------------------------------ */

static const command commands[] = {
	{"compile", cmd_compile, false}, {"tune", cmd_tune, false}, {"emit", cmd_emit, false},
	{"eval", cmd_eval, false}, {"parse", cmd_parse, false}, {"configs", cmd_configs, false},
	{"report", cmd_report, false}, {"link", cmd_link, true},
	{"__dispatch-check", cmd_check, false}, {"__search-sim", cmd_simulate, false},
};

/* aotc --version: aotc's and the loaded libclang's. */
static void print_version(void)
{
	char clang_version[FRONTEND_VERSION_MAX];
	frontend_clang_version(clang_version);
	printf("aotc %s\nlibclang: %s\n", AOTC_VERSION_STRING, clang_version);
}

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
		print_version();
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
			print_version();
		}
		goto out;
	}
	d.quiet_warnings = o.quiet;
	if (!frontend_env_ok(&d)) {
		status = AOTC_ENVIRONMENT;
		goto out;
	}

	status = cmd->run(&o, &d);
	if (cmd->own_summary)
		goto out;
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
