/* The command line of one subcommand (docs/cli.md), parsed and checked apart
 * from running it, so that every way of getting it wrong is a usage error
 * with a message, never a crash (tests/fuzz/fuzz_options.c feeds it).
 *
 * One table says which options each subcommand takes; the parser refuses
 * the others and `aotc CMD --help` lists exactly those. */
#ifndef AOTC_OPTIONS_H
#define AOTC_OPTIONS_H

#include <stdbool.h>
#include <stdio.h>
#include "arch.h"
#include "status.h"

/* The closed choices, parsed once: what the stages take is mapped from
 * these in tools/main.c (the tuner's search_kind and tune_dump, the
 * report's format). */
typedef enum options_search {
	OPTIONS_SEARCH_AUTO,          /* by the size of the space */
	OPTIONS_SEARCH_EXHAUSTIVE,
	OPTIONS_SEARCH_MODEL,
} options_search;
typedef enum options_dump {
	OPTIONS_DUMP_NONE, OPTIONS_DUMP_CONFIGS, OPTIONS_DUMP_COMPILE, OPTIONS_DUMP_SCHEDULE,
} options_dump;
typedef enum options_format {
	OPTIONS_FORMAT_TEXT, OPTIONS_FORMAT_JSON, OPTIONS_FORMAT_MARKDOWN, OPTIONS_FORMAT_HTML,
} options_format;

/* The most devices --devices takes. */
#define OPTIONS_MAX_DEVICES 64

typedef struct options {
	const char *file;
	const arch_info *arch;   /* --arch, a runtime/arch.c entry (NULL: not given) */
	const char *arch_name;   /* --arch as written */
	const char *kernel;
	const char *out_dir;
	const char *db_dir;
	const char *shapes;
	double budget_s;       /* --budget, in seconds (0: none) */
	const char *include_as;  /* --include-as (emit, compile, link) */
	int jobs;
	long seed;
	int max_variants;
	double goal;
	bool quiet, verbose;
	bool compile_only;     /* tune --compile-only */
	options_search search; /* tune, compile: --search */
	int shard, nshards;    /* tune, compile: --shard I/N (0/0: none) */
	int alternate;         /* tune, compile, eval: --alternate N (-1: not given) */
	/* tune, compile, eval: how each cell is timed (-1: not given) */
	int samples;           /* --samples N */
	int checks;            /* --checks N */
	int warmup;            /* --warmup N */
	double cell_time_s;    /* --cell-time DURATION */
	double screen;         /* --screen F (0: off) */
	bool quick;            /* --quick: the preset for a first look */
	/* tune, compile, eval: --devices N (ndevices N of one model) or
	 * I,J,... (devices_listed: devices[ndevices]); ndevices 0: not given */
	int devices[OPTIONS_MAX_DEVICES];
	int ndevices;
	bool devices_listed;
	options_dump dump;     /* tune: --dump */
	options_format format; /* report: --format */
	const char **includes;
	int nincludes;
	const char **defines;
	int ndefines;
	bool out_given;        /* -o was given */
	const char **inputs;   /* positional arguments after the first */
	int ninputs;
	bool help, version;    /* --help / --version: print that and stop */
} options;

/* The options, one bit each, for options_for.takes. */
enum {
	OPTB_INCLUDE = 1u << 0,      /* -I */
	OPTB_DEFINE = 1u << 1,       /* -D */
	OPTB_KERNEL = 1u << 2,
	OPTB_ARCH = 1u << 3,
	OPTB_OUT = 1u << 4,          /* -o */
	OPTB_DB = 1u << 5,
	OPTB_SHAPES = 1u << 6,
	OPTB_BUDGET = 1u << 7,
	OPTB_JOBS = 1u << 8,         /* -j */
	OPTB_SEED = 1u << 9,
	OPTB_COMPILE_ONLY = 1u << 10,
	OPTB_SEARCH = 1u << 11,
	OPTB_SHARD = 1u << 12,
	OPTB_DUMP = 1u << 13,
	OPTB_MAX_VARIANTS = 1u << 14,
	OPTB_GOAL = 1u << 15,
	OPTB_INCLUDE_AS = 1u << 16,
	OPTB_FORMAT = 1u << 17,
	OPTB_QUIET = 1u << 18,       /* --quiet, --verbose */
	OPTB_ALTERNATE = 1u << 19,
	OPTB_DEVICES = 1u << 20,
	OPTB_SAMPLING = 1u << 21,    /* --samples, --checks, --warmup, --cell-time, --screen, --quick */
};

/* A subcommand as the parser and the help see it. */
typedef struct options_for {
	const char *name;       /* "tune" */
	const char *synopsis;   /* "tune FILE --arch ARCH [options]" */
	const char *summary;    /* one line, for `aotc --help` */
	unsigned takes;         /* OPTB_* */
	bool needs_arch;
	FILE *err;              /* where usage errors go (stderr) */
} options_for;

/* The subcommands, in the order `aotc --help` lists them; names starting
 * with "__" are for tests and bench/ and are not listed. */
extern const options_for options_commands[];
extern const int options_ncommands;

/* The subcommand called name, or NULL. */
const options_for *options_command(const char *name);

/* `aotc --help`: the subcommands. */
void options_usage(FILE *f);

/* `aotc CMD --help`: its synopsis, summary and the options it takes. */
void options_help(FILE *f, const options_for *cmd);

/* Parses argv[1..argc) (argv[0] is the subcommand's name) into o: the
 * options cmd takes, the positional FILE (DB for report, DIR... for link)
 * and the checks that need no file (an option cmd does not take, empty
 * paths, numbers out of range, durations without a unit, --arch for a
 * command that needs one, a known architecture). Returns -1 when cmd should
 * run, 0 when --help or --version was asked for (o->help, o->version; the
 * caller prints), or 2 after a usage error, told on cmd->err. The strings in
 * o point into argv. o needs options_finish in every case. */
int options_parse(options *o, const options_for *cmd, int argc, char **argv);
void options_finish(options *o);

/* A duration with units ("90s", "10m", "1h30m", "1.5h", "100ms"), in seconds; -1
 * when s is no such duration (a bare number has no unit). */
double options_duration(const char *s);

/* The architecture nearest to a (typed as sm_90, SM90, compute_90, sm09…)
 * among those aotc takes, or NULL when none is near. */
const char *options_nearest_arch(const char *a);

#endif
