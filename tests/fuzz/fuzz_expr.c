/* The expression language (ir/expr.c): one input is one expression's text.
 * Parses it (diagnostics formatted against the input as its source file),
 * resolves every name, evaluates it at a few environments, prints it both
 * ways, and checks that the canonical print re-parses to the same
 * expression: same print, same value (expr.h promises this). */
#include <stdlib.h>
#include <string.h>

#include "expr.h"
#include "fuzz.h"

/* Every name resolves, by its length: a tunable, a parameter or a
 * constant, so that most inputs evaluate. */
static bool lookup(void *ctx, const char *name, aotc_loc loc, name_kind *kind, int *index,
                   int64_t *value, bool *diagnosed)
{
	(void)ctx;
	(void)loc;
	(void)diagnosed;
	size_t n = strlen(name);
	switch (n % 3) {
	case 0: *kind = NAME_TUNABLE; *index = (int)(n / 3 % 4); break;
	case 1: *kind = NAME_PARAM; *index = (int)(n / 3 % 4); break;
	default: *kind = NAME_CONST; *value = n > 8 ? INT64_MAX : (int64_t)n - 4; break;
	}
	return true;
}

static void c_name(void *ctx, strbuf *sb, const expr *name)
{
	(void)ctx;
	strbuf_printf(sb, "%c[%d]", name->name_kind == NAME_TUNABLE ? 't' : 'p', name->index);
}

static const int64_t tunables[][4] = {
	{64, 8, 1, 0}, {-1, INT64_MAX, INT64_MIN, 3}, {0, 0, 0, 0},
};
static const int64_t params[][4] = {
	{4096, 128, 7, 1}, {INT64_MIN, -1, 63, 64}, {0, 0, 0, 0},
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	arena a;
	arena_init(&a);
	diags d;
	fuzz_diags(&d);
	diags_add_source(&d, "expr", (const char *)data, size);
	expr_scope scope = {lookup, NULL, NULL};
	expr *e = expr_parse_string(&a, &d, (const char *)data, size, (aotc_loc){"expr", 1, 1});
	if (e && expr_resolve(e, &scope, &d) == 0) {
		int64_t v[COUNTOF(tunables)];
		eval_status st[COUNTOF(tunables)];
		for (size_t i = 0; i < COUNTOF(tunables); i++)
			st[i] = expr_eval(e, &(eval_env){tunables[i], 4, params[i], 4}, &v[i]);

		strbuf sb, sb2, c;
		strbuf_init(&sb);
		strbuf_init(&sb2);
		strbuf_init(&c);
		expr_print(&sb, e);
		expr_print_c(&c, e, &(expr_c_style){c_name, NULL, "aotc_"});
		expr_print_c(&c, e, NULL);

		diags quiet;
		diags_init(&quiet);
		quiet.out = NULL;
		expr *again = expr_parse_string(&a, &quiet, sb.data, sb.len, (aotc_loc){"print", 1, 1});
		if (!again)
			fprintf(stderr, "input: %.*s\nprinted: %s\n", (int)size, (const char *)data, sb.data);
		FUZZ_CHECK(again);
		FUZZ_CHECK(expr_resolve(again, &scope, &quiet) == 0);
		expr_print(&sb2, again);
		FUZZ_CHECK(strcmp(sb.data, sb2.data) == 0);
		for (size_t i = 0; i < COUNTOF(tunables); i++) {
			int64_t w;
			eval_status s = expr_eval(again, &(eval_env){tunables[i], 4, params[i], 4}, &w);
			FUZZ_CHECK(s == st[i]);
			FUZZ_CHECK(s != EVAL_OK || w == v[i]);
		}
		diags_finish(&quiet);
		strbuf_finish(&sb);
		strbuf_finish(&sb2);
		strbuf_finish(&c);
	}
	diags_finish(&d);
	arena_finish(&a);
	return 0;
}
