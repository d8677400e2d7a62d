#include "options.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "text.h"
#include "util.h"

enum { EXIT_USAGE = 2 };

static const char *known_arches[] = {
	"sm70", "sm75", "sm80", "sm86", "sm87", "sm89", "sm90", "sm90a", "sm100", "sm100a",
	"sm103", "sm110", "sm120", "gfx908", "gfx90a", "gfx940", "gfx941", "gfx942",
	"gfx1030", "gfx1100", "host",
};

static bool arch_known(const char *a)
{
	for (size_t i = 0; i < COUNTOF(known_arches); i++)
		if (strcmp(known_arches[i], a) == 0)
			return true;
	return false;
}

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

int options_parse(options *o, const options_for *f, int argc, char **argv)
{
	const char *cmd = f->name;
	enum { OPT_KERNEL = 256, OPT_ARCH, OPT_DB, OPT_SHAPES, OPT_BUDGET, OPT_SEED,
	       OPT_QUIET, OPT_VERBOSE, OPT_HELP, OPT_VERSION, OPT_MAX_VARIANTS, OPT_GOAL,
	       OPT_COMPILE_ONLY, OPT_INCLUDE_AS, OPT_SEARCH, OPT_SHARD, OPT_DUMP };
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
		{0},
	};
	*o = (options){.out_dir = ".", .db_dir = "aotc-db", .seed = 1};
	o->includes = xcalloc((size_t)argc + 1, sizeof *o->includes);
	o->defines = xcalloc((size_t)argc + 1, sizeof *o->defines);
	o->inputs = xcalloc((size_t)argc + 1, sizeof *o->inputs);
	long n;
	int c;
	optind = 0; /* glibc: start afresh (at argv[1]), whatever an earlier parse left */
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":I:D:o:j:", longopts, NULL)) != -1) {
		switch (c) {
		case 'I':
			if (!path_given(f, "-I", optarg))
				return EXIT_USAGE;
			o->includes[o->nincludes++] = optarg;
			break;
		case 'D': o->defines[o->ndefines++] = optarg; break;
		case 'o':
			if (!path_given(f, "-o", optarg))
				return EXIT_USAGE;
			o->out_dir = optarg;
			o->out_given = true;
			break;
		case 'j':
			if (!parse_int(optarg, 1, 1024, &n)) {
				fprintf(f->err, "aotc: -j needs a number from 1 to 1024, not '%s'\n", optarg);
				return EXIT_USAGE;
			}
			o->jobs = (int)n;
			break;
		case OPT_KERNEL: o->kernel = optarg; break;
		case OPT_ARCH: o->arch = optarg; break;
		case OPT_DB:
			if (!path_given(f, "--db", optarg))
				return EXIT_USAGE;
			o->db_dir = optarg;
			break;
		case OPT_SHAPES:
			if (!path_given(f, "--shapes", optarg))
				return EXIT_USAGE;
			o->shapes = optarg;
			break;
		case OPT_BUDGET: o->budget = optarg; break;
		case OPT_SEED:
			if (!parse_int(optarg, 0, 2147483647L, &o->seed)) {
				fprintf(f->err, "aotc: --seed needs a non-negative number, not '%s'\n", optarg);
				return EXIT_USAGE;
			}
			break;
		case OPT_MAX_VARIANTS:
			if (!parse_int(optarg, 1, 64, &n)) {
				fprintf(f->err, "aotc: --max-variants needs a number from 1 to 64, not '%s'\n", optarg);
				return EXIT_USAGE;
			}
			o->max_variants = (int)n;
			break;
		case OPT_GOAL: {
			char *end;
			o->goal = strtod(optarg, &end);
			if (end == optarg || *end || !(o->goal >= 1)) {
				fprintf(f->err, "aotc: --goal needs a slowdown of at least 1 (e.g. 1.02), not '%s'\n", optarg);
				return EXIT_USAGE;
			}
			break;
		}
		case OPT_INCLUDE_AS:
			if (!f->takes_include_as) {
				fprintf(f->err, "aotc %s: unknown option '--include-as' (emit, compile and link take it)\n",
				        cmd);
				return EXIT_USAGE;
			}
			/* It is written between the quotes of an #include: nothing
			 * that ends the line, the string or opens a comment. */
			if (!include_text_ok(optarg)) {
				fprintf(f->err, "aotc %s: --include-as '%s' cannot be written in an #include "
				        "(no control character, \", \\, /*, */, // or two question marks)\n", cmd, optarg);
				return EXIT_USAGE;
			}
			o->include_as = optarg;
			break;
		case OPT_SEARCH:
			if (strcmp(optarg, "exhaustive") != 0 && strcmp(optarg, "model") != 0) {
				fprintf(f->err, "aotc %s: --search is 'exhaustive' or 'model', not '%s'\n", cmd, optarg);
				return EXIT_USAGE;
			}
			o->search = optarg;
			break;
		case OPT_SHARD: {
			const char *slash = strchr(optarg, '/');
			char part[24];
			long i = 0, n2 = 0;
			bool ok = slash && (size_t)(slash - optarg) < sizeof part;
			if (ok) {
				memcpy(part, optarg, (size_t)(slash - optarg));
				part[slash - optarg] = 0;
				ok = parse_int(part, 1, 65536, &i) && parse_int(slash + 1, 1, 65536, &n2) && i <= n2;
			}
			if (!ok) {
				fprintf(f->err, "aotc %s: --shard needs I/N with 1 <= I <= N (e.g. 2/8), not '%s'\n",
				        cmd, optarg);
				return EXIT_USAGE;
			}
			o->shard = (int)i;
			o->nshards = (int)n2;
			break;
		}
		case OPT_DUMP:
			if (strcmp(optarg, "configs") && strcmp(optarg, "compile") && strcmp(optarg, "schedule")) {
				fprintf(f->err, "aotc %s: --dump is configs, compile or schedule, not '%s'\n", cmd, optarg);
				return EXIT_USAGE;
			}
			o->dump = optarg;
			break;
		case OPT_QUIET: o->quiet = true; break;
		case OPT_COMPILE_ONLY: o->compile_only = true; break;
		case OPT_VERBOSE: o->verbose = true; break;
		case OPT_HELP:
			o->help = true;
			return 0;
		case OPT_VERSION:
			o->version = true;
			return 0;
		case ':':
			fprintf(f->err, "aotc %s: option '%s' needs an argument\n", cmd, argv[optind - 1]);
			return EXIT_USAGE;
		default:
			fprintf(f->err, "aotc %s: unknown option '%s'\n", cmd, argv[optind - 1]);
			return EXIT_USAGE;
		}
	}
	bool link = !strcmp(cmd, "link");
	const char *input = link ? "DIR" : !strcmp(cmd, "report") ? "DB" : "FILE";
	for (int i = optind; i < argc; i++) {
		if (!path_given(f, input, argv[i]))
			return EXIT_USAGE;
		o->inputs[o->ninputs++] = argv[i];
	}
	if (link) {
		if (o->ninputs == 0 || !o->out_given) {
			fprintf(f->err, "aotc link: %s\nusage: aotc %s\n",
			        o->ninputs ? "needs -o FILE" : "needs a DIR", f->synopsis);
			return EXIT_USAGE;
		}
		return -1;
	}
	if (o->ninputs != 1) {
		fprintf(f->err, "aotc %s: %s\nusage: aotc %s\n", cmd,
		        o->ninputs ? "takes one FILE" : "needs a FILE", f->synopsis);
		return EXIT_USAGE;
	}
	o->file = o->inputs[0];
	if (o->compile_only && strcmp(cmd, "tune") != 0) {
		fprintf(f->err, "aotc %s: --compile-only is an option of 'aotc tune'\n", cmd);
		return EXIT_USAGE;
	}
	bool tunes = !strcmp(cmd, "tune") || !strcmp(cmd, "compile") || !strcmp(cmd, "__search-sim");
	if ((o->search || o->nshards) && !tunes) {
		fprintf(f->err, "aotc %s: --%s is an option of 'aotc tune' and 'aotc compile'\n", cmd,
		        o->search ? "search" : "shard");
		return EXIT_USAGE;
	}
	if (o->dump && strcmp(cmd, "tune") != 0) {
		fprintf(f->err, "aotc %s: --dump is an option of 'aotc tune'\n", cmd);
		return EXIT_USAGE;
	}
	if (o->dump && o->compile_only) {
		fprintf(f->err, "aotc tune: --dump and --compile-only do not go together\n");
		return EXIT_USAGE;
	}
	if (f->needs_arch && !o->arch) {
		fprintf(f->err, "aotc %s: needs --arch (e.g. --arch sm90 or --arch host)\n", cmd);
		return EXIT_USAGE;
	}
	if (o->arch && !arch_known(o->arch)) {
		fprintf(f->err, "aotc %s: unknown architecture '%s'\n", cmd, o->arch);
		return EXIT_USAGE;
	}
	return -1;
}
