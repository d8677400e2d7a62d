#include "options.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "arch.h"
#include "text.h"
#include "util.h"

/* What every command that reads a kernel source takes. */
#define SOURCE_OPTS (OPTB_INCLUDE | OPTB_DEFINE | OPTB_KERNEL | OPTB_QUIET)
#define HEURISTIC_OPTS (OPTB_MAX_VARIANTS | OPTB_GOAL | OPTB_SEED)

const options_for options_commands[] = {
	{"compile", "compile FILE --arch ARCH [options]",
	 "parse, tune (or reuse the database), build the heuristic, emit",
	 SOURCE_OPTS | OPTB_ARCH | OPTB_OUT | OPTB_DB | OPTB_SHAPES | OPTB_BUDGET | OPTB_JOBS |
	 OPTB_SEARCH | OPTB_SHARD | OPTB_ALTERNATE | OPTB_DEVICES | OPTB_SAMPLING | HEURISTIC_OPTS | OPTB_INCLUDE_AS,
	 true, NULL},
	{"tune", "tune FILE --arch ARCH [options]", "parse and tune only: fill the database",
	 SOURCE_OPTS | OPTB_ARCH | OPTB_DB | OPTB_SHAPES | OPTB_BUDGET | OPTB_JOBS | OPTB_SEED |
	 OPTB_COMPILE_ONLY | OPTB_SEARCH | OPTB_SHARD | OPTB_ALTERNATE | OPTB_DEVICES | OPTB_SAMPLING | OPTB_DUMP,
	 true, NULL},
	{"emit", "emit FILE --arch ARCH [options]",
	 "build the heuristic and emit from the database; needs no GPU",
	 SOURCE_OPTS | OPTB_ARCH | OPTB_OUT | OPTB_DB | HEURISTIC_OPTS | OPTB_INCLUDE_AS, true, NULL},
	{"eval", "eval FILE --arch ARCH --shapes HELD_OUT.json [options]",
	 "measure the emitted choice against every variant on held-out shapes",
	 SOURCE_OPTS | OPTB_ARCH | OPTB_DB | OPTB_SHAPES | OPTB_JOBS | OPTB_ALTERNATE | OPTB_DEVICES |
	 OPTB_SAMPLING | HEURISTIC_OPTS | OPTB_FORMAT, true, NULL},
	{"parse", "parse FILE [options]", "print the IR as JSON (FILE may also be IR JSON)",
	 OPTB_INCLUDE | OPTB_DEFINE | OPTB_QUIET, false, NULL},
	{"configs", "configs FILE [options]", "list the valid configurations", SOURCE_OPTS, false, NULL},
	{"report", "report DB [options]", "summarise a database: winners, slowdowns, the tree, plots",
	 OPTB_INCLUDE | OPTB_DEFINE | OPTB_QUIET | HEURISTIC_OPTS | OPTB_FORMAT, false, NULL},
	{"link", "link DIR... -o FILE.c [options]", "one dispatch across architectures, with fallback",
	 OPTB_OUT | OPTB_INCLUDE_AS | OPTB_QUIET, false, NULL},
	{"__dispatch-check", "__dispatch-check FILE --arch ARCH [options]",
	 "(for tests) the in-memory dispatch's answers on many shapes",
	 SOURCE_OPTS | OPTB_ARCH | OPTB_DB | HEURISTIC_OPTS, true, NULL},
	{"__search-sim", "__search-sim FILE --arch ARCH [options]",
	 "(for bench/) the search replayed on an exhaustive database",
	 SOURCE_OPTS | OPTB_ARCH | OPTB_DB | OPTB_OUT | OPTB_BUDGET | OPTB_SEED | OPTB_SEARCH |
	 OPTB_SHARD, true, NULL},
};
const int options_ncommands = (int)COUNTOF(options_commands);

/* Every option: its bit, its names and its line in --help. */
typedef struct option_doc {
	unsigned bit;
	const char *name;   /* as written: "-I DIR", "--budget DURATION" */
	const char *help;   /* continuation lines start with '\n' */
} option_doc;

static const option_doc option_docs[] = {
	{OPTB_INCLUDE, "-I DIR", "add DIR to the include path (parser and every compiler)"},
	{OPTB_DEFINE, "-D NAME[=VALUE]", "define a macro (parser and every compiler)"},
	{OPTB_KERNEL, "--kernel NAME", "only this kernel (default: every tuned kernel in FILE)"},
	{OPTB_ARCH, "--arch ARCH", "sm80, sm90, sm100... (CUDA), gfx90a, gfx942... (ROCm) or host"},
	{OPTB_OUT, "-o DIR", "output directory (default .); for link the C file to write"},
	{OPTB_DB, "--db DIR", "tuning database directory (default ./aotc-db)"},
	{OPTB_SHAPES, "--shapes FILE", "JSON array of shape objects, replacing AOTC_SHAPES"},
	{OPTB_BUDGET, "--budget DURATION", "cap on tuning time, with a unit: 90s, 10m, 1h"},
	{OPTB_JOBS, "-j N", "compile workers (default: all cores)"},
	{OPTB_SEED, "--seed N", "seed for buffer contents, shape sampling and folds"},
	{OPTB_COMPILE_ONLY, "--compile-only", "compile the reference and every variant; no device needed"},
	{OPTB_SEARCH, "--search S", "exhaustive, or model: a model-guided search\n"
	                            "(default: model above 512 configurations)"},
	{OPTB_SHARD, "--shard I/N", "take part I of N of the work; the databases merge"},
	{OPTB_ALTERNATE, "--alternate N", "rounds the close contenders are timed again in alternation\n"
	                                  "(default 15; 0: not at all)"},
	{OPTB_DEVICES, "--devices N|I,J,...", "measure on N devices of one model, or on these, a worker each\n"
	                                      "(default: every device of the first device's model;\n"
	                                      "host: N workers standing in for devices, default 1)"},
	{OPTB_SAMPLING, "--samples N", "timed launches per cell, at most (default 25; at least 5 or N)"},
	{OPTB_SAMPLING, "--warmup N", "untimed launches before a cell's timing (default 1)"},
	{OPTB_SAMPLING, "--cell-time T", "a cell's timing stops past T, after 5 samples (default 100ms)"},
	{OPTB_SAMPLING, "--screen F", "stop a variant after 3 samples when F x slower than the best (default 3; 0: never)"},
	{OPTB_SAMPLING, "--checks N", "checked launches per cell, at least (default 20; 1: the first only, as Kernel Tuner)"},
	{OPTB_SAMPLING, "--quick", "a first look: 5 samples, 20ms a cell, screen at 2x, no alternation"},
	{OPTB_DUMP, "--dump STAGE", "print configs (search order), compile or schedule as JSON lines"},
	{OPTB_MAX_VARIANTS, "--max-variants N", "variants the dispatch may choose among (default 16; how many of them, cross-validation decides)"},
	{OPTB_GOAL, "--goal G", "stop the greedy choice of variants at this training geomean slowdown (default 1: never)"},
	{OPTB_INCLUDE_AS, "--include-as PATH", "what the emitted launcher's #include names the kernel\n"
	                                       "source (default: its file name, on the include path)"},
	{OPTB_FORMAT, "--format F", "text (default) or json; report also markdown or html (one file with plots)"},
	{OPTB_QUIET, "--quiet, --verbose", "less or more output"},
};

const options_for *options_command(const char *name)
{
	for (int i = 0; i < options_ncommands; i++)
		if (!strcmp(options_commands[i].name, name))
			return &options_commands[i];
	return NULL;
}

void options_usage(FILE *f)
{
	fputs("usage: aotc COMMAND FILE [options]\n\nCommands:\n", f);
	for (int i = 0; i < options_ncommands; i++)
		if (options_commands[i].name[0] != '_')
			fprintf(f, "  aotc %-38s %s\n", options_commands[i].synopsis, options_commands[i].summary);
	fputs("\nRun 'aotc COMMAND --help' for a command's options.\n", f);
}

void options_help(FILE *f, const options_for *cmd)
{
	fprintf(f, "usage: aotc %s\n\n%s.\n\nOptions:\n", cmd->synopsis, cmd->summary);
	for (size_t i = 0; i < COUNTOF(option_docs); i++) {
		const option_doc *od = &option_docs[i];
		if (!(cmd->takes & od->bit))
			continue;
		fprintf(f, "  %-19s", od->name);
		for (const char *p = od->help; *p;) {
			const char *nl = strchr(p, '\n');
			size_t n = nl ? (size_t)(nl - p) : strlen(p);
			fprintf(f, "%.*s\n", (int)n, p);
			p += n;
			if (*p) {
				p++;
				fprintf(f, "  %-19s", "");
			}
		}
	}
	fprintf(f, "  %-19s%s\n", "-h, --help", "this help");
	fprintf(f, "  %-19s%s\n", "--version", "aotc's version and the libclang it parses with");
}

/* ---- Values -------------------------------------------------------------- */

double options_duration(const char *s)
{
	double total = 0;
	bool any = false;
	while (*s) {
		char *end;
		errno = 0;
		if (!isdigit((unsigned char)*s) && *s != '.')
			return -1;
		double v = strtod(s, &end);
		if (end == s || errno || !(v >= 0))
			return -1;
		double unit;
		if (end[0] == 'm' && end[1] == 's') {
			unit = 1e-3;
			end += 2;
		} else {
			switch (*end++) {
			case 'h': unit = 3600; break;
			case 'm': unit = 60; break;
			case 's': unit = 1; break;
			default: return -1;   /* no unit, or another */
			}
		}
		total += v * unit;
		any = true;
		s = end;
	}
	return any && total > 0 ? total : -1;
}

/* The name of runtime/arch.c's entry for a, or NULL. */
static const char *arch_lookup(const char *a)
{
	const arch_info *ai = arch_parse(a);
	return ai ? ai->name : NULL;
}

const char *options_nearest_arch(const char *a)
{
	/* The spellings of other tools first: sm_90, SM90, compute_90, 9.0 */
	char norm[32];
	size_t n = 0;
	const char *p = a;
	if (!strncasecmp(p, "compute_", 8) || !strncasecmp(p, "compute", 7))
		p += p[7] == '_' ? 8 : 7, norm[n++] = 's', norm[n++] = 'm';
	for (; *p && n + 1 < sizeof norm; p++)
		if (*p != '_' && *p != '-' && *p != '.')
			norm[n++] = (char)tolower((unsigned char)*p);
	norm[n] = 0;
	if (n && isdigit((unsigned char)norm[0]) && n + 3 < sizeof norm) {
		memmove(norm + 2, norm, n + 1);   /* "90" -> "sm90" */
		norm[0] = 's', norm[1] = 'm';
	}
	if (arch_lookup(norm))
		return arch_lookup(norm);
	const char *best = NULL;
	int best_d = 3;   /* farther than two edits is no suggestion */
	for (int i = 0; i < arch_count(); i++) {
		int d = edit_distance(norm, arch_at(i)->name);
		if (d < best_d)
			best_d = d, best = arch_at(i)->name;
	}
	return best;
}

/* ---- Parsing ------------------------------------------------------------- */

/* A path option's argument: "" is a usage error, not a directory (--db ''
 * would put the database in /). */
static bool path_given(const options_for *f, const char *option, const char *arg)
{
	if (*arg)
		return true;
	fprintf(f->err, "aotc %s: %s needs a path, not an empty string\n", f->name, option);
	return false;
}

static bool parse_int(const char *s, long lo, long hi, long *out)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi)
		return false;
	*out = v;
	return true;
}

void options_finish(options *o)
{
	free(o->includes);
	free(o->defines);
	free(o->inputs);
	o->includes = o->defines = o->inputs = NULL;
}

/* The commands that take bit, for "--x is an option of ..." */
static void list_takers(FILE *f, unsigned bit)
{
	int n = 0, shown = 0;
	for (int i = 0; i < options_ncommands; i++)
		n += options_commands[i].name[0] != '_' && (options_commands[i].takes & bit);
	for (int i = 0; i < options_ncommands; i++) {
		const options_for *c = &options_commands[i];
		if (c->name[0] == '_' || !(c->takes & bit))
			continue;
		fprintf(f, "%s'aotc %s'", shown == 0 ? "" : shown == n - 1 ? " and " : ", ", c->name);
		shown++;
	}
}

/* The index of arg among names (NULL entries are no name), or -1. */
static int choice(const char *arg, const char *const *names, int n)
{
	for (int i = 0; i < n; i++)
		if (names[i] && !strcmp(arg, names[i]))
			return i;
	return -1;
}

static const char *const search_names[] = {
	[OPTIONS_SEARCH_EXHAUSTIVE] = "exhaustive", [OPTIONS_SEARCH_MODEL] = "model",
};
static const char *const dump_names[] = {
	[OPTIONS_DUMP_CONFIGS] = "configs", [OPTIONS_DUMP_COMPILE] = "compile",
	[OPTIONS_DUMP_SCHEDULE] = "schedule",
};
static const char *const format_names[] = {
	[OPTIONS_FORMAT_TEXT] = "text", [OPTIONS_FORMAT_JSON] = "json",
	[OPTIONS_FORMAT_MARKDOWN] = "markdown", [OPTIONS_FORMAT_HTML] = "html",
};

static int bad_arch(const options_for *f, const char *arch)
{
	fprintf(f->err, "aotc %s: unknown architecture '%s'", f->name, arch);
	const char *near = options_nearest_arch(arch);
	if (near)
		fprintf(f->err, "; did you mean '%s'?", near);
	fputs("\n  --arch takes:", f->err);
	for (int i = 0; i < arch_count(); i++)
		fprintf(f->err, " %s", arch_at(i)->name);
	fputc('\n', f->err);
	return AOTC_USAGE;
}

enum { OPT_KERNEL = 256, OPT_ARCH, OPT_DB, OPT_SHAPES, OPT_BUDGET, OPT_SEED,
       OPT_QUIET, OPT_VERBOSE, OPT_HELP, OPT_VERSION, OPT_MAX_VARIANTS, OPT_GOAL,
       OPT_COMPILE_ONLY, OPT_INCLUDE_AS, OPT_SEARCH, OPT_SHARD, OPT_DUMP, OPT_FORMAT,
       OPT_ALTERNATE, OPT_DEVICES, OPT_SAMPLES, OPT_WARMUP, OPT_CELL_TIME, OPT_SCREEN, OPT_QUICK, OPT_CHECKS };

static const struct option longopts[] = {
	{"kernel", required_argument, NULL, OPT_KERNEL},
	{"arch", required_argument, NULL, OPT_ARCH},
	{"db", required_argument, NULL, OPT_DB},
	{"shapes", required_argument, NULL, OPT_SHAPES},
	{"budget", required_argument, NULL, OPT_BUDGET},
	{"seed", required_argument, NULL, OPT_SEED},
	{"quiet", no_argument, NULL, OPT_QUIET},
	{"verbose", no_argument, NULL, OPT_VERBOSE},
	{"help", no_argument, NULL, OPT_HELP},
	{"version", no_argument, NULL, OPT_VERSION},
	{"max-variants", required_argument, NULL, OPT_MAX_VARIANTS},
	{"goal", required_argument, NULL, OPT_GOAL},
	{"compile-only", no_argument, NULL, OPT_COMPILE_ONLY},
	{"include-as", required_argument, NULL, OPT_INCLUDE_AS},
	{"search", required_argument, NULL, OPT_SEARCH},
	{"shard", required_argument, NULL, OPT_SHARD},
	{"dump", required_argument, NULL, OPT_DUMP},
	{"format", required_argument, NULL, OPT_FORMAT},
	{"alternate", required_argument, NULL, OPT_ALTERNATE},
	{"devices", required_argument, NULL, OPT_DEVICES},
	{"samples", required_argument, NULL, OPT_SAMPLES},
	{"checks", required_argument, NULL, OPT_CHECKS},
	{"warmup", required_argument, NULL, OPT_WARMUP},
	{"cell-time", required_argument, NULL, OPT_CELL_TIME},
	{"screen", required_argument, NULL, OPT_SCREEN},
	{"quick", no_argument, NULL, OPT_QUICK},
	{0},
};

/* Each option's bit, for the check that the command takes it. */
static const struct { int c; unsigned bit; const char *name; } option_bits[] = {
	{'I', OPTB_INCLUDE, "-I"}, {'D', OPTB_DEFINE, "-D"}, {'o', OPTB_OUT, "-o"},
	{'j', OPTB_JOBS, "-j"}, {OPT_KERNEL, OPTB_KERNEL, "--kernel"},
	{OPT_ARCH, OPTB_ARCH, "--arch"}, {OPT_DB, OPTB_DB, "--db"},
	{OPT_SHAPES, OPTB_SHAPES, "--shapes"}, {OPT_BUDGET, OPTB_BUDGET, "--budget"},
	{OPT_SEED, OPTB_SEED, "--seed"}, {OPT_QUIET, OPTB_QUIET, "--quiet"},
	{OPT_VERBOSE, OPTB_QUIET, "--verbose"}, {OPT_MAX_VARIANTS, OPTB_MAX_VARIANTS, "--max-variants"},
	{OPT_GOAL, OPTB_GOAL, "--goal"}, {OPT_COMPILE_ONLY, OPTB_COMPILE_ONLY, "--compile-only"},
	{OPT_INCLUDE_AS, OPTB_INCLUDE_AS, "--include-as"}, {OPT_SEARCH, OPTB_SEARCH, "--search"},
	{OPT_SHARD, OPTB_SHARD, "--shard"}, {OPT_DUMP, OPTB_DUMP, "--dump"},
	{OPT_FORMAT, OPTB_FORMAT, "--format"}, {OPT_ALTERNATE, OPTB_ALTERNATE, "--alternate"},
	{OPT_DEVICES, OPTB_DEVICES, "--devices"}, {OPT_SAMPLES, OPTB_SAMPLING, "--samples"},
	{OPT_CHECKS, OPTB_SAMPLING, "--checks"},
	{OPT_WARMUP, OPTB_SAMPLING, "--warmup"}, {OPT_CELL_TIME, OPTB_SAMPLING, "--cell-time"},
	{OPT_SCREEN, OPTB_SAMPLING, "--screen"}, {OPT_QUICK, OPTB_SAMPLING, "--quick"},
};

/* Whether the command takes option c; false after a usage error. */
static bool option_taken(const options_for *f, int c)
{
	for (size_t i = 0; i < COUNTOF(option_bits); i++)
		if (option_bits[i].c == c && !(f->takes & option_bits[i].bit)) {
			fprintf(f->err, "aotc %s: %s is not an option of 'aotc %s' (it is one of ", f->name,
			        option_bits[i].name, f->name);
			list_takers(f->err, option_bits[i].bit);
			fprintf(f->err, "); see 'aotc %s --help'\n", f->name);
			return false;
		}
	return true;
}

/* --shard I/N into o; false after a usage error. */
static bool parse_shard(options *o, const options_for *f, const char *arg)
{
	const char *slash = strchr(arg, '/');
	char part[24];
	long i = 0, n = 0;
	bool ok = slash && (size_t)(slash - arg) < sizeof part;
	if (ok) {
		memcpy(part, arg, (size_t)(slash - arg));
		part[slash - arg] = 0;
		ok = parse_int(part, 1, 65536, &i) && parse_int(slash + 1, 1, 65536, &n) && i <= n;
	}
	if (!ok) {
		fprintf(f->err, "aotc %s: --shard needs I/N with 1 <= I <= N (e.g. 2/8), not '%s'\n",
		        f->name, arg);
		return false;
	}
	o->shard = (int)i;
	o->nshards = (int)n;
	return true;
}

/* --devices N (N devices of one model) or I,J,... (those, each once)
 * into o; false after a usage error. */
static bool parse_devices(options *o, const options_for *f, const char *arg)
{
	bool listed = strchr(arg, ',') != NULL, ok = arg[0] != 0;
	int n = 0;
	for (const char *p = arg; ok && *p; n++) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);
		char part[16];
		long v = 0;
		ok = len > 0 && len < sizeof part && n < OPTIONS_MAX_DEVICES;
		if (ok) {
			memcpy(part, p, len);
			part[len] = 0;
			ok = listed ? parse_int(part, 0, 1023, &v) : parse_int(part, 1, OPTIONS_MAX_DEVICES, &v);
		}
		for (int i = 0; ok && listed && i < n; i++)
			ok = o->devices[i] != v;
		if (ok)
			o->devices[n] = (int)v;
		p += len;
		if (ok && *p == ',' && !*++p)
			ok = false; /* a trailing comma */
	}
	if (!ok) {
		fprintf(f->err, "aotc %s: --devices needs a number of devices from 1 to %d or a list of distinct device indices (0,1,3), not '%s'\n",
		        f->name, OPTIONS_MAX_DEVICES, arg);
		return false;
	}
	o->devices_listed = listed;
	o->ndevices = listed ? n : o->devices[0];
	return true;
}

/* The options that take a number or a choice, into o; false after a usage
 * error. */
static bool parse_value(options *o, const options_for *f, int c, const char *arg)
{
	const char *cmd = f->name;
	long n;
	int i;
	char *end;
	switch (c) {
	case 'j':
		if (!parse_int(arg, 1, 1024, &n)) {
			fprintf(f->err, "aotc %s: -j needs a number from 1 to 1024, not '%s'\n", cmd, arg);
			return false;
		}
		o->jobs = (int)n;
		return true;
	case OPT_BUDGET:
		if ((o->budget_s = options_duration(arg)) <= 0) {
			fprintf(f->err, "aotc %s: --budget needs a duration with a unit, like 90s, 10m, 1h or 1h30m, not '%s'\n",
			        cmd, arg);
			return false;
		}
		return true;
	case OPT_SEED:
		if (!parse_int(arg, 0, 2147483647L, &o->seed)) {
			fprintf(f->err, "aotc %s: --seed needs a non-negative number, not '%s'\n", cmd, arg);
			return false;
		}
		return true;
	case OPT_MAX_VARIANTS:
		if (!parse_int(arg, 1, 64, &n)) {
			fprintf(f->err, "aotc %s: --max-variants needs a number from 1 to 64, not '%s'\n", cmd, arg);
			return false;
		}
		o->max_variants = (int)n;
		return true;
	case OPT_GOAL:
		o->goal = strtod(arg, &end);
		if (end == arg || *end || !(o->goal >= 1)) {
			fprintf(f->err, "aotc %s: --goal needs a slowdown of at least 1 (e.g. 1.02), not '%s'\n", cmd, arg);
			return false;
		}
		return true;
	case OPT_SHARD:
		return parse_shard(o, f, arg);
	case OPT_DEVICES:
		return parse_devices(o, f, arg);
	case OPT_SAMPLES:
		if (!parse_int(arg, 1, 1000, &n)) {
			fprintf(f->err, "aotc %s: --samples needs a number of timed launches from 1 to 1000, not '%s'\n", cmd, arg);
			return false;
		}
		o->samples = (int)n;
		return true;
	case OPT_CHECKS:
		if (!parse_int(arg, 1, 100, &n)) {
			fprintf(f->err, "aotc %s: --checks needs a number of checked launches from 1 to 100, not '%s'\n", cmd, arg);
			return false;
		}
		o->checks = (int)n;
		return true;
	case OPT_WARMUP:
		if (!parse_int(arg, 0, 100, &n)) {
			fprintf(f->err, "aotc %s: --warmup needs a number of launches from 0 to 100, not '%s'\n", cmd, arg);
			return false;
		}
		o->warmup = (int)n;
		return true;
	case OPT_CELL_TIME:
		if ((o->cell_time_s = options_duration(arg)) <= 0 || o->cell_time_s > 60) {
			fprintf(f->err, "aotc %s: --cell-time needs a duration with a unit up to 60s, like 100ms or 1s, not '%s'\n",
			        cmd, arg);
			return false;
		}
		return true;
	case OPT_SCREEN:
		o->screen = strtod(arg, &end);
		if (end == arg || *end || !(o->screen == 0 || (o->screen >= 1 && o->screen <= 1000))) {
			fprintf(f->err, "aotc %s: --screen needs a factor from 1 to 1000, or 0 for no screening, not '%s'\n",
			        cmd, arg);
			return false;
		}
		return true;
	case OPT_ALTERNATE:
		/* 1000: the most the worker's "alternate" takes (tuner/worker.c) */
		if (!parse_int(arg, 0, 1000, &n)) {
			fprintf(f->err, "aotc %s: --alternate needs a number of rounds from 0 (no alternation) to 1000, not '%s'\n",
			        cmd, arg);
			return false;
		}
		o->alternate = (int)n;
		return true;
	case OPT_SEARCH:
		if ((i = choice(arg, search_names, (int)COUNTOF(search_names))) < 0) {
			fprintf(f->err, "aotc %s: --search is 'exhaustive' or 'model', not '%s'\n", cmd, arg);
			return false;
		}
		o->search = (options_search)i;
		return true;
	case OPT_DUMP:
		if ((i = choice(arg, dump_names, (int)COUNTOF(dump_names))) < 0) {
			fprintf(f->err, "aotc %s: --dump is configs, compile or schedule, not '%s'\n", cmd, arg);
			return false;
		}
		o->dump = (options_dump)i;
		return true;
	case OPT_FORMAT:
		if ((i = choice(arg, format_names, (int)COUNTOF(format_names))) < 0) {
			fprintf(f->err, "aotc %s: --format is text, json, markdown or html, not '%s'\n", cmd, arg);
			return false;
		}
		/* eval's figures are a table or JSON; report has every format */
		if (i > OPTIONS_FORMAT_JSON && !strcmp(cmd, "eval")) {
			fprintf(f->err, "aotc eval: --format is text or json, not '%s'\n", arg);
			return false;
		}
		o->format = (options_format)i;
		return true;
	}
	die("options: parse_value: option %d", c); /* take_option sends only these */
}

/* One option c (getopt_long's answer) with its argument arg into o: -1 to
 * go on, 0 for --help or --version, AOTC_USAGE after a usage error. */
static int take_option(options *o, const options_for *f, int c, const char *arg, char **argv)
{
	const char *cmd = f->name;
	if (!option_taken(f, c))
		return AOTC_USAGE;
	switch (c) {
	case 'I':
		if (!path_given(f, "-I", arg))
			return AOTC_USAGE;
		o->includes[o->nincludes++] = arg;
		return -1;
	case 'D': o->defines[o->ndefines++] = arg; return -1;
	case 'o':
		if (!path_given(f, "-o", arg))
			return AOTC_USAGE;
		o->out_dir = arg;
		o->out_given = true;
		return -1;
	case OPT_KERNEL: o->kernel = arg; return -1;
	case OPT_ARCH:
		/* checked after the loop: --arch's absence is told before a bad name */
		o->arch_name = arg;
		return -1;
	case OPT_DB:
		if (!path_given(f, "--db", arg))
			return AOTC_USAGE;
		o->db_dir = arg;
		return -1;
	case OPT_SHAPES:
		if (!path_given(f, "--shapes", arg))
			return AOTC_USAGE;
		o->shapes = arg;
		return -1;
	case 'j': case OPT_BUDGET: case OPT_SEED: case OPT_MAX_VARIANTS: case OPT_GOAL:
	case OPT_SHARD: case OPT_SEARCH: case OPT_DUMP: case OPT_FORMAT: case OPT_ALTERNATE: case OPT_DEVICES:
	case OPT_SAMPLES: case OPT_WARMUP: case OPT_CELL_TIME: case OPT_SCREEN: case OPT_CHECKS:
		return parse_value(o, f, c, arg) ? -1 : AOTC_USAGE;
	case OPT_INCLUDE_AS:
		/* It is written between the quotes of an #include: nothing
		 * that ends the line, the string or opens a comment. */
		if (!include_text_ok(arg)) {
			fprintf(f->err, "aotc %s: --include-as '%s' cannot be written in an #include "
			        "(no control character, \", \\, /*, */, // or two question marks)\n", cmd, arg);
			return AOTC_USAGE;
		}
		o->include_as = arg;
		return -1;
	case OPT_QUIET: o->quiet = true; return -1;
	case OPT_COMPILE_ONLY: o->compile_only = true; return -1;
	case OPT_QUICK: o->quick = true; return -1;
	case OPT_VERBOSE: o->verbose = true; return -1;
	case 'h':
	case OPT_HELP:
		o->help = true;
		return 0;
	case OPT_VERSION:
		o->version = true;
		return 0;
	case ':':
		fprintf(f->err, "aotc %s: option '%s' needs an argument\n", cmd, argv[optind - 1]);
		return AOTC_USAGE;
	default:
		fprintf(f->err, "aotc %s: unknown option '%s'; see 'aotc %s --help'\n", cmd, argv[optind - 1], cmd);
		return AOTC_USAGE;
	}
}

/* After the options: the positional arguments and the checks across
 * options. -1 to run, or AOTC_USAGE after a usage error. */
static int take_inputs(options *o, const options_for *f, int argc, char **argv)
{
	const char *cmd = f->name;
	bool link = !strcmp(cmd, "link");
	const char *input = link ? "DIR" : !strcmp(cmd, "report") ? "DB" : "FILE";
	for (int i = optind; i < argc; i++) {
		if (!path_given(f, input, argv[i]))
			return AOTC_USAGE;
		o->inputs[o->ninputs++] = argv[i];
	}
	if (link) {
		if (o->ninputs == 0 || !o->out_given) {
			fprintf(f->err, "aotc link: %s\nusage: aotc %s\n",
			        o->ninputs ? "needs -o FILE.c" : "needs a DIR", f->synopsis);
			return AOTC_USAGE;
		}
		return -1;
	}
	if (o->ninputs != 1) {
		fprintf(f->err, "aotc %s: %s\nusage: aotc %s\n", cmd,
		        o->ninputs ? (input[0] == 'D' ? "takes one DB" : "takes one FILE")
		                   : (input[0] == 'D' ? "needs a DB" : "needs a FILE"), f->synopsis);
		return AOTC_USAGE;
	}
	o->file = o->inputs[0];
	if (o->dump && o->compile_only) {
		fprintf(f->err, "aotc tune: --dump and --compile-only do not go together\n");
		return AOTC_USAGE;
	}
	if (f->needs_arch && !o->arch_name) {
		fprintf(f->err, "aotc %s: needs --arch (e.g. --arch sm90 or --arch host)\n", cmd);
		return AOTC_USAGE;
	}
	if (o->arch_name && !(o->arch = arch_parse(o->arch_name)))
		return bad_arch(f, o->arch_name);
	const char *cold = getenv("AOTC_COLD_CACHE");
	if ((f->takes & OPTB_SAMPLING) && cold && strcmp(cold, "flush") && strcmp(cold, "evict") && strcmp(cold, "rotate")) {
		fprintf(f->err, "aotc %s: AOTC_COLD_CACHE is flush, evict or rotate, not '%s'\n", cmd, cold);
		return AOTC_USAGE;
	}
	return -1;
}

int options_parse(options *o, const options_for *f, int argc, char **argv)
{
	*o = (options){.out_dir = ".", .db_dir = "aotc-db", .seed = 1, .alternate = -1, .samples = -1, .checks = -1, .warmup = -1,
	               .cell_time_s = -1, .screen = -1};
	o->includes = xcalloc((size_t)argc + 1, sizeof *o->includes);
	o->defines = xcalloc((size_t)argc + 1, sizeof *o->defines);
	o->inputs = xcalloc((size_t)argc + 1, sizeof *o->inputs);
	int c;
	optind = 0; /* glibc: start afresh (at argv[1]), whatever an earlier parse left */
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":I:D:o:j:h", longopts, NULL)) != -1) {
		int st = take_option(o, f, c, optarg, argv);
		if (st >= 0)
			return st;
	}
	return take_inputs(o, f, argc, argv);
}
