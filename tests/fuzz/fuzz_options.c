/* Command-line options (tools/options.c: options_parse, what `aotc CMD ...`
 * does before running anything). One input is a command line: the first byte
 * picks the subcommand, the rest is split at NUL bytes into its arguments. */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "options.h"
#include "util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0 || size > 4096)
		return 0;
	options_for c = options_commands[data[0] % options_ncommands];
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
		FUZZ_CHECK(!o.arch == !o.arch_name && (!o.arch || !strcmp(o.arch->name, o.arch_name)));
		FUZZ_CHECK(o.budget_s >= 0);
		for (int i = 0; i < o.nincludes; i++)
			FUZZ_CHECK(*o.includes[i]);
		FUZZ_CHECK(strcmp(cmd->name, "link") == 0 || o.file == o.inputs[0]);
	}
	options_finish(&o);
	free(argv);
	free(text);
	return 0;
}
