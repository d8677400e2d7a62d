/* The command line of one subcommand (SPEC §3), parsed and checked apart
 * from running it, so that every way of getting it wrong is a usage error
 * with a message, never a crash (tests/fuzz/fuzz_options.c feeds it). */
#ifndef AOTC_OPTIONS_H
#define AOTC_OPTIONS_H

#include <stdbool.h>
#include <stdio.h>

typedef struct options {
	const char *file;
	const char *arch;
	const char *kernel;
	const char *out_dir;
	const char *db_dir;
	const char *shapes;
	const char *budget;
	const char *include_as;  /* --include-as (emit, compile, link) */
	int jobs;
	long seed;
	int max_variants;
	double goal;
	bool quiet, verbose;
	bool compile_only;     /* tune --compile-only */
	const char *search;    /* tune, compile: "exhaustive" | "model" (NULL: by size) */
	int shard, nshards;    /* tune, compile: --shard I/N (0/0: none) */
	const char *dump;      /* tune: "configs" | "compile" | "schedule" */
	const char **includes;
	int nincludes;
	const char **defines;
	int ndefines;
	bool out_given;        /* -o was given */
	const char **inputs;   /* positional arguments after the first */
	int ninputs;
	bool help, version;    /* --help / --version: print that and stop */
} options;

/* What the parser needs to know of a subcommand. */
typedef struct options_for {
	const char *name;       /* "tune" */
	const char *synopsis;   /* "tune FILE --arch ARCH [options]" */
	bool needs_arch;
	bool takes_include_as;
	FILE *err;              /* where usage errors go (stderr) */
} options_for;

/* Parses argv[1..argc) (argv[0] is the subcommand's name) into o: the
 * common options, the positional FILE (DB for report, DIR... for link) and
 * the checks that need no file (an option cmd does not take, empty paths,
 * numbers out of range, --arch for a command that needs one, a known
 * architecture). Returns -1 when cmd should run, 0 when --help or --version
 * was asked for (o->help, o->version; the caller prints), or 2 after a usage
 * error, told on cmd->err. The strings in o point into argv. o needs
 * options_finish in every case. */
int options_parse(options *o, const options_for *cmd, int argc, char **argv);
void options_finish(options *o);

#endif
