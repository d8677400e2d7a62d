/* Command-line options (tools/options.c: options_parse, what `aotc CMD ...`
 * does before running anything). One input is a command line: the first byte
 * picks the subcommand, the rest is split at NUL bytes into its arguments. */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "options.h"
#include "util.h"

static const options_for commands[] = {
	{"compile", "compile FILE --arch ARCH [options]", true, true, NULL},
	{"tune", "tune FILE --arch ARCH [options]", true, false, NULL},
	{"emit", "emit FILE --arch ARCH [options]", true, true, NULL},
	{"eval", "eval FILE --arch ARCH --shapes HELD_OUT.json [options]", true, false, NULL},
	{"parse", "parse FILE [options]", false, false, NULL},
	{"configs", "configs FILE [--kernel K] [options]", false, false, NULL},
	{"report", "report DB [--max-variants N] [--goal G]", false, false, NULL},
	{"link", "link DIR... -o FILE", false, true, NULL},
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0 || size > 4096)
		return 0;
	options_for c = commands[data[0] % COUNTOF(commands)];
	c.err = fuzz_sink(); /* usage errors are the expected answer */
	const options_for *cmd = &c;
	/* A private, NUL-terminated copy: argv strings point into it. */
	char *text = xmalloc(size + 1);
	memcpy(text, data + 1, size - 1);
	text[size - 1] = 0;
	char **argv = xcalloc(size + 2, sizeof *argv);
	int argc = 0;
	argv[argc++] = (char *)cmd->name;
	for (size_t i = 0; i < size - 1; i += strlen(text + i) + 1)
		argv[argc++] = text + i;
	options o;
	int st = options_parse(&o, cmd, argc, argv);
	FUZZ_CHECK(st == -1 || st == 0 || st == 2);
	if (st == -1) {
		/* What a command may rely on once parsing said run. */
		FUZZ_CHECK(o.ninputs >= 1);
		FUZZ_CHECK(*o.out_dir && *o.db_dir);
		FUZZ_CHECK(!cmd->needs_arch || o.arch);
		for (int i = 0; i < o.nincludes; i++)
			FUZZ_CHECK(*o.includes[i]);
		FUZZ_CHECK(strcmp(cmd->name, "link") == 0 || o.file == o.inputs[0]);
	}
	options_finish(&o);
	free(argv);
	free(text);
	return 0;
}
