/* Unit tests for ir/expr.c: lexer, parser, names, evaluation, printing. */
#define _POSIX_C_SOURCE 200809L

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "expr.h"

static arena A;

/* ---- A scope and environments ------------------------------------------ */

static const char *const tunable_names[] = {
	"BM", "BN", "TM", "TN", "a", "b", "c", "d", "e", "x", "y",
};
static const char *const param_names[] = { "M", "N", "K", "MIN", "MAX" };

static bool lookup(void *ctx, const char *name, aotc_loc loc, name_kind *kind,
                   int *index, int64_t *value, bool *diagnosed)
{
	(void)ctx;
	(void)loc;
	(void)value;
	(void)diagnosed;
	for (size_t i = 0; i < COUNTOF(tunable_names); i++)
		if (strcmp(name, tunable_names[i]) == 0) {
			*kind = NAME_TUNABLE;
			*index = (int)i;
			return true;
		}
	for (size_t i = 0; i < COUNTOF(param_names); i++)
		if (strcmp(name, param_names[i]) == 0) {
			*kind = NAME_PARAM;
			*index = (int)i;
			return true;
		}
	return false;
}

static const expr_scope scope = { lookup, NULL, NULL };

static const int64_t tun1[] = { 128, 64, 8, 4, 0, 1, 2, 3, 4, -7, 5 };
static const int64_t tun2[] = { 64, 128, 4, 8, 5, 0, -3, 7, 0, 3, -2 };
static const int64_t tun3[] = { 32, 32, 2, 2, -1, 63, 1, 0, 1, 0, 1 };
static const int64_t par1[] = { 1024, 512, 256, INT64_MIN, INT64_MAX };
static const int64_t par2[] = { 4096, 100, 7, INT64_MIN, INT64_MAX };
static const int64_t par3[] = { 1, 0, -5, INT64_MIN, INT64_MAX };

static const eval_env envs[] = {
	{ tun1, (int)COUNTOF(tun1), par1, (int)COUNTOF(par1) },
	{ tun2, (int)COUNTOF(tun2), par2, (int)COUNTOF(par2) },
	{ tun3, (int)COUNTOF(tun3), par3, (int)COUNTOF(par3) },
};

/* ---- Parsing with captured diagnostics --------------------------------- */

typedef struct parsed {
	expr *e;
	int errors;
	char *out; /* diagnostics text */
} parsed;

/* Parses src at loc (resolving names when it parses), with file_text (or
 * src itself) as the text of "t.cu" for the source line in diagnostics. */
static parsed parse_at(const char *src, aotc_loc loc, const char *file_text,
                       bool resolve)
{
	parsed r = { 0 };
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	diags d;
	diags_init(&d);
	d.out = f;
	if (!file_text)
		file_text = src;
	diags_add_source(&d, "t.cu", file_text, strlen(file_text));
	r.e = expr_parse_string(&A, &d, src, strlen(src), loc);
	if (r.e && resolve)
		expr_resolve(r.e, &scope, &d);
	fclose(f);
	r.errors = d.errors;
	r.out = arena_strndup(&A, buf, len);
	free(buf);
	diags_finish(&d);
	return r;
}

static parsed parse(const char *src)
{
	return parse_at(src, (aotc_loc){ "t.cu", 1, 1 }, NULL, true);
}

static int count_errors(const char *out)
{
	int n = 0;
	for (const char *p = out; (p = strstr(p, ": error: ")); p++)
		n++;
	return n;
}

/* Checks that src parses without diagnostics and evaluates (in envs[0]) to
 * want with status st. */
static void check_eval(const char *file, int line, const char *src,
                       eval_status st, int64_t want)
{
	parsed p = parse(src);
	if (!p.e || p.errors) {
		check_at(0, file, line, "'%s' does not parse:\n%s", src, p.out);
		return;
	}
	int64_t v = 0;
	eval_status s = expr_eval(p.e, &envs[0], &v);
	if (s != st)
		check_at(0, file, line, "'%s': status %s, want %s", src,
		      eval_status_name(s), eval_status_name(st));
	else if (st == EVAL_OK && v != want)
		check_at(0, file, line, "'%s' = %" PRId64 ", want %" PRId64, src, v,
		      want);
	else
		check_at(1, file, line, "%s", "");
}

#define EV(src, want) check_eval(__FILE__, __LINE__, (src), EVAL_OK, (want))
#define EV_ERR(src, st) check_eval(__FILE__, __LINE__, (src), (st), 0)

/* Checks that src fails with exactly nerr errors, the first of which is
 * "t.cu:<first>". */
static void check_diag(const char *file, int line, const char *src, int nerr,
                       const char *first)
{
	parsed p = parse(src);
	char *want = arena_printf(&A, "t.cu:%s\n", first);
	bool ok = p.e == NULL && p.errors == nerr && count_errors(p.out) == nerr
	          && strncmp(p.out, want, strlen(want)) == 0;
	check_at(ok, file, line, "'%s': want %d error(s) starting \"%s\", got %d%s:\n%s",
	      src, nerr, first, p.errors, p.e ? " and a tree" : "", p.out);
}

#define DIAG(src, first) check_diag(__FILE__, __LINE__, (src), 1, (first))

static char *print_str(const expr *e)
{
	strbuf sb;
	strbuf_init(&sb);
	expr_print(&sb, e);
	char *s = arena_strdup(&A, sb.data ? sb.data : "");
	strbuf_finish(&sb);
	return s;
}

/* ---- Tests ------------------------------------------------------------- */

static void test_lexer(void)
{
	diags d;
	diags_init(&d);
	lexer l;
	const char *src = "a<=b<<c 0x1F 2.5e3 .5 1e-5 -0.5 {}=,?:\n  _z9 ~!";
	lexer_init(&l, &A, &d, src, strlen(src), (aotc_loc){ "t.cu", 10, 5 });

	CHECK(l.tok.kind == TOK_IDENT && lexer_is_ident(&l, "a"));
	CHECK_INT(l.tok.loc.line, 10);
	CHECK_INT(l.tok.loc.col, 5);
	lexer_next(&l);
	CHECK(lexer_is(&l, "<="));
	CHECK(!lexer_is(&l, "<"));
	CHECK_INT(l.tok.loc.col, 6);
	lexer_next(&l);
	CHECK(lexer_is_ident(&l, "b"));
	lexer_next(&l);
	CHECK(lexer_is(&l, "<<"));
	lexer_next(&l);
	CHECK_STR(lexer_text(&l), "c");
	lexer_next(&l);
	CHECK(l.tok.kind == TOK_INT);
	CHECK_INT(l.tok.ival, 31);
	CHECK_INT(l.tok.loc.col, 13);
	lexer_next(&l);
	CHECK(l.tok.kind == TOK_FLOAT && l.tok.fval == 2500.0);
	lexer_next(&l);
	CHECK(l.tok.kind == TOK_FLOAT && l.tok.fval == 0.5);
	lexer_next(&l);
	CHECK(l.tok.kind == TOK_FLOAT && l.tok.fval == 1e-5);
	lexer_next(&l);
	CHECK(lexer_is(&l, "-"));
	lexer_next(&l);
	CHECK(l.tok.kind == TOK_FLOAT && l.tok.fval == 0.5);
	CHECK_STR(lexer_text(&l), "0.5");
	lexer_next(&l);
	CHECK(lexer_accept(&l, "{"));
	CHECK(lexer_accept(&l, "}"));
	CHECK(!lexer_accept(&l, "}"));
	CHECK(lexer_accept(&l, "="));
	CHECK(lexer_expect(&l, ","));
	CHECK(lexer_accept(&l, "?"));
	CHECK(lexer_accept(&l, ":"));
	CHECK(lexer_is_ident(&l, "_z9"));
	CHECK_INT(l.tok.loc.line, 11);
	CHECK_INT(l.tok.loc.col, 3);
	lexer_next(&l);
	CHECK(lexer_accept(&l, "~"));
	CHECK(lexer_accept(&l, "!"));
	CHECK(l.tok.kind == TOK_EOF);
	CHECK_INT(l.tok.loc.col, 9);
	lexer_next(&l);
	CHECK(l.tok.kind == TOK_EOF);
	CHECK_INT(l.errors, 0);
	CHECK_INT(d.errors, 0);
	diags_finish(&d);

	/* Literal limits and bad characters. */
	const struct {
		const char *src;
		tok_kind kind;
		int64_t ival;
		const char *msg;
	} lits[] = {
		{ "9223372036854775807", TOK_INT, INT64_MAX, NULL },
		{ "0x7fffffffffffffff", TOK_INT, INT64_MAX, NULL },
		{ "0X10", TOK_INT, 16, NULL },
		{ "0", TOK_INT, 0, NULL },
		{ "9223372036854775808", TOK_ERROR, 0, "integer literal out of range" },
		{ "99999999999999999999999", TOK_ERROR, 0, "integer literal out of range" },
		{ "0x8000000000000000", TOK_ERROR, 0, "integer literal out of range" },
		{ "12abc", TOK_ERROR, 0, "invalid numeric literal '12abc'" },
		{ "1e", TOK_ERROR, 0, "invalid numeric literal '1e'" },
		{ "0x", TOK_ERROR, 0, "invalid numeric literal '0x'" },
		{ "10u", TOK_ERROR, 0, "invalid numeric literal '10u'" },
		{ "012", TOK_ERROR, 0, "octal literal '012' is not supported" },
		{ "$", TOK_ERROR, 0, "unexpected character '$'" },
		{ "@", TOK_ERROR, 0, "unexpected character '@'" },
		{ "\x01", TOK_ERROR, 0, "unexpected character '\\x01'" },
		{ "\xc3\x97", TOK_ERROR, 0, "unexpected character '\xc3\x97'" },
	};
	for (size_t i = 0; i < COUNTOF(lits); i++) {
		char *buf = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&buf, &len);
		diags_init(&d);
		d.out = f;
		diags_add_source(&d, "t.cu", lits[i].src, strlen(lits[i].src));
		lexer_init(&l, &A, &d, lits[i].src, strlen(lits[i].src),
		           (aotc_loc){ "t.cu", 1, 1 });
		token t = l.tok;
		lexer_next(&l);
		fclose(f);
		CHECK(t.kind == lits[i].kind);
		CHECK(l.tok.kind == TOK_EOF);
		if (t.kind == TOK_INT)
			CHECK_INT(t.ival, lits[i].ival);
		CHECK_INT(l.errors, lits[i].msg ? 1 : 0);
		CHECK_INT(d.errors, lits[i].msg ? 1 : 0);
		if (lits[i].msg) {
			char *want = arena_printf(&A, "t.cu:1:1: error: %s\n",
			                          lits[i].msg);
			check_at(strncmp(buf, want, strlen(want)) == 0, __FILE__,
			      __LINE__, "'%s' gives:\n%s", lits[i].src, buf);
		}
		free(buf);
		diags_finish(&d);
	}
}

static void test_precedence(void)
{
	EV("1 - 2 - 3", -4);
	EV("2 + 3 * 4", 14);
	EV("2 * 3 + 4", 10);
	EV("1 << 2 + 1", 8);
	EV("1 | 2 ^ 3 & 4", 3);
	EV("(1 | 2) ^ 3 & 4", 3);
	EV("((1 | 2) ^ 3) & 4", 0);
	EV("100 / 10 / 5", 2);
	EV("100 / 10 * 5", 50);
	EV("7 % 4 * 3", 9);
	EV("2 * 7 % 4", 2);
	EV("10 - 2 + 3", 11);
	EV("1 << 3 >> 1", 4);
	EV("64 >> 2 >> 1", 8);
	EV("1 << 1 < 3", 1);
	EV("4 < 8 >> 1", 0);
	EV("1 + 2 < 4", 1);
	EV("3 > 2 > 1", 0);
	EV("1 < 2 == 1", 1);
	EV("2 == 2 != 0", 1);
	EV("0 == 1 == 0", 1);
	EV("1 == 1 & 0", 0);
	EV("2 & 3 == 3", 0);
	EV("6 & 3 ^ 1", 3);
	EV("1 ^ 3 | 4", 6);
	EV("4 | 1 ^ 1", 4);
	EV("1 | 0 && 0", 0);
	EV("0 && 0 || 1", 1);
	EV("1 || 0 && 0", 1);
	EV("0 || 1 && 0", 0);
	EV("1 || 0 ? 5 : 6", 5);
	EV("0 ? 1 : 2 + 3", 5);
	EV("0 ? 10 : 1 ? 20 : 30", 20);
	EV("1 ? 10 : 0 ? 20 : 30", 10);
	EV("0 ? 1 : 0 ? 2 : 3", 3);
	EV("1 ? 0 ? 5 : 6 : 7", 6);
	EV("(1 ? 0 : 1) ? 5 : 6", 6);
	/* a ? b : c ? d : e with a = 0, c = 2, d = 3 */
	EV("a ? b : c ? d : e", 3);
	EV("-2 * 3", -6);
	EV("-2 + 3", 1);
	EV("- 2 - -3", 1);
	EV("-(2 + 3) * 2", -10);
	EV("!0 + 1", 2);
	EV("!1 == 0", 1);
	EV("!(1 == 0)", 1);
	EV("~0", -1);
	EV("~0 << 1", -2);
	EV("-~0", 1);
	EV("~-1", 0);
	EV("!!5", 1);
	EV("+5", 5);
	EV("+-5", -5);
	EV("--5", 5);
	EV("-x * y", 35);
	EV("2 * -3 * -1", 6);
	EV("((((7))))", 7);
	EV("BM * BN / (TM * TN) <= 1024", 1);
	EV("BM * BN / TM * TN", 4096);
}

static void test_operators(void)
{
	EV("3 < 3", 0);
	EV("3 <= 3", 1);
	EV("4 > 3", 1);
	EV("3 >= 4", 0);
	EV("3 == 3", 1);
	EV("3 != 3", 0);
	EV("5 && 7", 1);
	EV("5 && 0", 0);
	EV("0 || 9", 1);
	EV("0 || 0", 0);
	EV("!7", 0);
	EV("!0", 1);
	EV("~5", -6);
	EV("-7 / 2", -3);
	EV("-7 % 2", -1);
	EV("7 / -2", -3);
	EV("7 % -2", 1);
	EV("x / 2", -3);
	EV("x % 2", -1);
	EV("12 & 10", 8);
	EV("12 ^ 10", 6);
	EV("12 | 10", 14);
	EV("-8 >> 1", -4);
	EV("-7 >> 1", -4);
	EV("-1 >> 63", -1);
	EV("MIN >> 63", -1);
	EV("MAX >> 62", 1);
	EV("1 << 62", (int64_t)1 << 62);
	EV("-1 << 63", INT64_MIN);
	EV("x << 2", -28);
	EV("MAX + MIN", -1);
	EV("MIN + 0", INT64_MIN);
	EV("MAX - 1 + 1", INT64_MAX);
	EV("MIN / 1", INT64_MIN);
	EV("MIN % 2", 0);
	EV("MIN / -2", (int64_t)1 << 62);
	EV("true + true", 2);
	EV("false", 0);
	EV("true ? 3 : 4", 3);
	EV("0x10 + 0XfF", 271);
	EV("9223372036854775807", INT64_MAX);
	EV("-9223372036854775807 - 1", INT64_MIN);
	EV("M * N * K", 1024 * 512 * 256);
}

static void test_functions(void)
{
	EV("cdiv(7, 2)", 4);
	EV("cdiv(8, 2)", 4);
	EV("cdiv(0, 5)", 0);
	EV("cdiv(-7, 2)", -3);
	EV("cdiv(7, -2)", -3);
	EV("cdiv(-7, -2)", 4);
	EV("cdiv(-8, 2)", -4);
	EV("cdiv(MAX, 1)", INT64_MAX);
	EV("cdiv(MIN, 1)", INT64_MIN);
	EV("cdiv(MIN, 2)", -((int64_t)1 << 62));
	EV("cdiv(MAX, 2)", (int64_t)1 << 62);
	EV("cdiv(N, BN)", 8);
	EV("align(7, 4)", 8);
	EV("align(8, 4)", 8);
	EV("align(0, 4)", 0);
	EV("align(-7, 4)", -4);
	EV("align(-8, 4)", -8);
	EV("align(7, -4)", 4);
	EV("align(-7, -4)", -8);
	EV("align(1000, BM)", 1024);
	EV("min(3, -5)", -5);
	EV("max(3, -5)", 3);
	EV("min(MIN, MAX)", INT64_MIN);
	EV("max(MIN, MAX)", INT64_MAX);
	EV("min(2, 2)", 2);
	EV("log2(1)", 0);
	EV("log2(2)", 1);
	EV("log2(3)", 1);
	EV("log2(1024)", 10);
	EV("log2(1023)", 9);
	EV("log2(MAX)", 62);
	EV("max(min(1, 2), cdiv(9, 2)) + log2(8)", 8);
	EV("cdiv(1 ? 5 : 6, 2)", 3);
	/* Function names are names unless followed by '(' */
	parsed p = parse_at("min + log2", (aotc_loc){ "t.cu", 1, 1 }, NULL, false);
	CHECK(p.e && p.e->kind == EXPR_BINARY && p.e->a->kind == EXPR_NAME
	      && strcmp(p.e->a->name, "min") == 0
	      && strcmp(p.e->b->name, "log2") == 0);
	p = parse_at("cdiv (a, b)", (aotc_loc){ "t.cu", 1, 1 }, NULL, false);
	CHECK(p.e && p.e->kind == EXPR_CALL && p.e->func == FN_CDIV);
	CHECK_INT(p.e ? p.e->loc.col : 0, 1);
}

static void test_eval_errors(void)
{
	EV_ERR("1 / 0", EVAL_DIV_ZERO);
	EV_ERR("1 % 0", EVAL_DIV_ZERO);
	EV_ERR("a / a", EVAL_DIV_ZERO);
	EV_ERR("cdiv(1, 0)", EVAL_DIV_ZERO);
	EV_ERR("cdiv(0, 0)", EVAL_DIV_ZERO);
	EV_ERR("align(1, 0)", EVAL_DIV_ZERO);
	EV_ERR("align(1, a)", EVAL_DIV_ZERO);
	EV_ERR("MAX + 1", EVAL_OVERFLOW);
	EV_ERR("MIN + -1", EVAL_OVERFLOW);
	EV_ERR("MIN - 1", EVAL_OVERFLOW);
	EV_ERR("0 - MIN", EVAL_OVERFLOW);
	EV_ERR("MAX * 2", EVAL_OVERFLOW);
	EV_ERR("MIN * -1", EVAL_OVERFLOW);
	EV_ERR("4294967296 * 4294967296", EVAL_OVERFLOW);
	EV_ERR("-MIN", EVAL_OVERFLOW);
	EV_ERR("-(-9223372036854775807 - 1)", EVAL_OVERFLOW);
	EV_ERR("MIN / -1", EVAL_OVERFLOW);
	EV_ERR("MIN % -1", EVAL_OVERFLOW);
	EV_ERR("cdiv(MIN, -1)", EVAL_OVERFLOW);
	EV_ERR("align(MAX, 2)", EVAL_OVERFLOW);
	EV_ERR("align(MIN, -1)", EVAL_OVERFLOW);
	EV_ERR("1 << 63", EVAL_OVERFLOW);
	EV_ERR("3 << 62", EVAL_OVERFLOW);
	EV_ERR("-3 << 62", EVAL_OVERFLOW);
	EV_ERR("MAX << 1", EVAL_OVERFLOW);
	EV_ERR("MIN << 1", EVAL_OVERFLOW);
	EV_ERR("1 << 64", EVAL_OVERFLOW);
	EV_ERR("1 << -1", EVAL_OVERFLOW);
	EV_ERR("0 << 64", EVAL_OVERFLOW);
	EV_ERR("1 >> 64", EVAL_OVERFLOW);
	EV_ERR("1 >> -1", EVAL_OVERFLOW);
	EV_ERR("log2(0)", EVAL_DOMAIN);
	EV_ERR("log2(-1)", EVAL_DOMAIN);
	EV_ERR("log2(MIN)", EVAL_DOMAIN);
	/* the first failing operand decides */
	EV_ERR("1 / 0 + log2(0)", EVAL_DIV_ZERO);
	EV_ERR("log2(0) + 1 / 0", EVAL_DOMAIN);
	EV_ERR("min(1 / 0, 1)", EVAL_DIV_ZERO);
	EV_ERR("max(1, MAX + 1)", EVAL_OVERFLOW);
	EV_ERR("(1 / 0) ? 1 : 2", EVAL_DIV_ZERO);

	/* short-circuit */
	EV("0 && (1 / 0)", 0);
	EV("0 && 1 / 0", 0);
	EV("1 || 1 / 0", 1);
	EV("a && log2(a)", 0);
	EV("1 ? 2 : 1 / 0", 2);
	EV("0 ? 1 / 0 : 3", 3);
	EV("a ? MAX + 1 : 4", 4);
	EV_ERR("1 && 1 / 0", EVAL_DIV_ZERO);
	EV_ERR("0 || 1 / 0", EVAL_DIV_ZERO);
	EV_ERR("1 ? 1 / 0 : 3", EVAL_DIV_ZERO);

	/* unbound names */
	parsed p = parse_at("BM + M", (aotc_loc){ "t.cu", 1, 1 }, NULL, false);
	int64_t v = 0;
	CHECK(p.e && expr_eval(p.e, &envs[0], &v) == EVAL_UNBOUND);
	p = parse("BM + 1");
	CHECK(expr_eval(p.e, NULL, &v) == EVAL_UNBOUND);
	eval_env only_params = { NULL, 0, par1, (int)COUNTOF(par1) };
	CHECK(expr_eval(p.e, &only_params, &v) == EVAL_UNBOUND);
	p = parse("M + 1");
	CHECK(expr_eval(p.e, &only_params, &v) == EVAL_OK && v == 1025);
	p = parse("y");
	eval_env short_env = { tun1, 10, par1, 5 }; /* y is tunable 10 */
	CHECK(expr_eval(p.e, &short_env, &v) == EVAL_UNBOUND);
	p = parse("0 && y");
	CHECK(expr_eval(p.e, &short_env, &v) == EVAL_OK && v == 0);
	p = parse("K");
	eval_env two_params = { tun1, 11, par1, 2 };
	CHECK(expr_eval(p.e, &two_params, &v) == EVAL_UNBOUND);

	const eval_status all[] = { EVAL_OK, EVAL_DIV_ZERO, EVAL_OVERFLOW,
	                            EVAL_DOMAIN, EVAL_UNBOUND };
	for (size_t i = 0; i < COUNTOF(all); i++) {
		CHECK(eval_status_name(all[i]) && *eval_status_name(all[i]));
		for (size_t j = 0; j < i; j++)
			CHECK(strcmp(eval_status_name(all[i]),
			             eval_status_name(all[j])) != 0);
	}
}

/* A scope with BM, BN (tunables) and M, N, K (parameters) that rejects K
 * itself, with its own diagnostic. */
static bool small_lookup(void *ctx, const char *name, aotc_loc loc,
                         name_kind *kind, int *index, int64_t *value, bool *diagnosed)
{
	diags *d = ctx;
	(void)value;
	const char *names[] = { "BM", "BN", "M", "N", "K" };
	for (int i = 0; i < 5; i++) {
		if (strcmp(name, names[i]) != 0)
			continue;
		if (i == 4 && d) {
			diag_error(d, loc, "'K' is not a shape argument");
			*diagnosed = true;
			return false;
		}
		*kind = i < 2 ? NAME_TUNABLE : NAME_PARAM;
		*index = i < 2 ? i : i - 2;
		return true;
	}
	return false;
}

static void collect(void *ctx, const expr *name)
{
	strbuf *sb = ctx;
	strbuf_printf(sb, "%s@%d ", name->name, name->loc.col);
}

static void test_names(void)
{
	const char *file = "// 1\n// 2\n// 3\n// 4\n// 5\n// 6\nAOTC_GRID(BM * BX, cdiv(M, BN))\n";
	const char *src = "BM * BX, cdiv(M, BN)";
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	diags d;
	diags_init(&d);
	d.out = f;
	diags_add_source(&d, "t.cu", file, strlen(file));
	lexer l;
	lexer_init(&l, &A, &d, src, strlen(src), (aotc_loc){ "t.cu", 7, 11 });
	expr_scope small = { small_lookup, NULL, NULL };
	expr *e1 = expr_parse(&l);
	CHECK(e1 && lexer_is(&l, ","));
	CHECK(lexer_accept(&l, ","));
	expr *e2 = expr_parse(&l);
	CHECK(e2 && l.tok.kind == TOK_EOF);
	CHECK_INT(l.errors, 0);
	CHECK_INT(expr_resolve(e1, &small, &d), 1);
	CHECK_INT(expr_resolve(e2, &small, &d), 0);
	fflush(f);
	CHECK_STR(buf, "t.cu:7:16: error: unknown name 'BX'\n"
	               "    7 | AOTC_GRID(BM * BX, cdiv(M, BN))\n"
	               "      |                ^\n");
	CHECK_INT(d.errors, 1);
	CHECK(e1->a->name_kind == NAME_TUNABLE && e1->a->index == 0);
	CHECK(e1->b->name_kind == NAME_UNRESOLVED);
	CHECK(e2->a->name_kind == NAME_PARAM && e2->a->index == 0);
	CHECK(e2->b->name_kind == NAME_TUNABLE && e2->b->index == 1);
	CHECK_INT(e1->loc.col, 14); /* the '*' */
	CHECK_INT(e2->loc.col, 20); /* "cdiv" */
	int64_t tv[] = { 64, 32 }, pv[] = { 1000, 1, 1 };
	eval_env env = { tv, 2, pv, 3 };
	int64_t v = 0;
	CHECK(expr_eval(e2, &env, &v) == EVAL_OK && v == 32);
	CHECK(expr_eval(e1, &env, &v) == EVAL_UNBOUND);

	/* a lookup that diagnoses itself; unknown names each reported */
	fclose(f);
	free(buf);
	f = open_memstream(&buf, &len);
	d.out = f;
	d.errors = 0;
	small.ctx = &d;
	parsed p = parse_at("K + Q * N - Z", (aotc_loc){ "t.cu", 1, 1 }, NULL, false);
	CHECK_INT(expr_resolve(p.e, &small, &d), 3);
	fclose(f);
	CHECK_INT(d.errors, 3);
	CHECK_INT(count_errors(buf), 3);
	CHECK(strstr(buf, "t.cu:1:1: error: 'K' is not a shape argument\n") == buf);
	CHECK(strstr(buf, "t.cu:1:5: error: unknown name 'Q'\n") != NULL);
	CHECK(strstr(buf, "t.cu:1:13: error: unknown name 'Z'\n") != NULL);
	CHECK(strstr(buf, "unknown name 'K'") == NULL);
	CHECK(strstr(buf, "'Q'") < strstr(buf, "'Z'"));
	free(buf);
	diags_finish(&d);

	/* visiting in source order */
	p = parse("a + cdiv(BM, M) * (K ? N : BN) - -x");
	strbuf sb;
	strbuf_init(&sb);
	expr_visit_names(p.e, collect, &sb);
	CHECK_STR(sb.data, "a@1 BM@10 M@14 K@20 N@24 BN@28 x@35 ");
	strbuf_finish(&sb);
}

static void test_parse_errors(void)
{
	DIAG("1 +", "1:4: error: expected expression");
	DIAG("", "1:1: error: expected expression");
	DIAG(")", "1:1: error: expected expression");
	DIAG("(1 + 2", "1:7: error: expected ')'");
	DIAG("(1 + 2 3", "1:8: error: expected ')'");
	DIAG("1 + * 2", "1:5: error: expected expression");
	DIAG("1 + + + ", "1:9: error: expected expression");
	DIAG("((((", "1:5: error: expected expression");
	DIAG("a ? b", "1:6: error: expected ':'");
	DIAG("a ? : b", "1:5: error: expected expression");
	DIAG("1 2", "1:3: error: expected end of expression");
	DIAG("a b c d e", "1:3: error: expected end of expression");
	DIAG("(1))", "1:4: error: expected end of expression");
	DIAG("1, 2", "1:2: error: expected end of expression");
	DIAG("cdiv(1)", "1:1: error: 'cdiv' takes 2 arguments");
	DIAG("1 + align(1, 2, 3)", "1:5: error: 'align' takes 2 arguments");
	DIAG("min()", "1:1: error: 'min' takes 2 arguments");
	DIAG("max(1,)", "1:7: error: expected expression");
	DIAG("log2(1, 2)", "1:1: error: 'log2' takes 1 argument");
	DIAG("log2()", "1:1: error: 'log2' takes 1 argument");
	DIAG("cdiv(1, 2", "1:10: error: expected ')'");
	DIAG("cdiv(1 2)", "1:8: error: expected ')'");
	DIAG("foo(1)", "1:1: error: unknown function 'foo' (the functions are cdiv, min, max, align and log2)");
	DIAG("ceil_div(7, 2)", "1:1: error: unknown function 'ceil_div'; did you mean 'cdiv'?");
	DIAG("maxx(7, 2)", "1:1: error: unknown function 'maxx'; did you mean 'max'?");
	DIAG("0.5 + 1", "1:1: error: floating literal in an integer expression");
	DIAG("1 $ 2", "1:3: error: unexpected character '$'");
	DIAG("1 + $$$ + @", "1:5: error: unexpected character '$'");
	DIAG("(1 + #)", "1:6: error: unexpected character '#'");
	DIAG("a $", "1:3: error: unexpected character '$'");
	DIAG("(1 $", "1:4: error: unexpected character '$'");
	DIAG("1 + 99999999999999999999", "1:5: error: integer literal out of range");
	DIAG("{1}", "1:1: error: expected expression");
	DIAG("a = 1", "1:3: error: expected end of expression");
	DIAG("1 + 2 +\n  * 3", "2:3: error: expected expression");
	DIAG("!", "1:2: error: expected expression");
	DIAG("true(1)", "1:5: error: expected end of expression");

	/* the caret under the offending token */
	parsed p = parse("BM * (BN + )");
	CHECK_STR(p.out, "t.cu:1:12: error: expected expression\n"
	                 "    1 | BM * (BN + )\n"
	                 "      |            ^\n");

	/* expr_parse stops before what cannot continue; errors counted */
	diags d;
	diags_init(&d);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	d.out = f;
	lexer l;
	const char *src = "a + (b, c) d";
	lexer_init(&l, &A, &d, src, strlen(src), (aotc_loc){ "t.cu", 1, 1 });
	CHECK(expr_parse(&l) == NULL);
	CHECK_INT(l.errors, 1);
	CHECK(lexer_is(&l, ","));
	lexer_init(&l, &A, &d, "x y", 3, (aotc_loc){ "t.cu", 1, 1 });
	CHECK(expr_parse(&l) != NULL);
	CHECK(lexer_is_ident(&l, "y"));
	CHECK_INT(l.errors, 0);
	CHECK(!lexer_expect(&l, ")"));
	CHECK_INT(l.errors, 1);
	fclose(f);
	CHECK_INT(d.errors, 2);
	CHECK(strstr(buf, "t.cu:1:3: error: expected ')'\n") != NULL);
	free(buf);
	diags_finish(&d);

	/* no crash, no cascade on deep or long input */
	size_t n = 100000;
	char *s = arena_alloc(&A, 2 * n + 2);
	memset(s, '(', n);
	p = parse(s);
	CHECK(!p.e && p.errors == 1);
	memset(s, '-', n);
	p = parse(s);
	CHECK(!p.e && p.errors == 1);
	for (size_t i = 0; i < n; i++)
		memcpy(s + 2 * i, "1+", 2);
	s[2 * n - 1] = 0;
	p = parse(s);
	CHECK(!p.e && p.errors == 1);
	memset(s, 0, 2 * n + 2);
	for (size_t i = 0; i < 100; i++)
		memcpy(s + 2 * i, "1+", 2);
	s[199] = 0;
	p = parse(s);
	int64_t v = 0;
	CHECK(p.e && expr_eval(p.e, &envs[0], &v) == EVAL_OK && v == 100);
	memset(s, 0, 2 * n + 2);
	for (size_t i = 0; i < 2000; i++)
		memcpy(s + 2 * i, "1-", 2);
	s[3999] = 0;
	p = parse(s);
	CHECK(p.e && expr_eval(p.e, &envs[0], &v) == EVAL_OK && v == -1998);
	CHECK(p.e && strlen(print_str(p.e)) == 4 * 1999 + 1);
	memset(s, 0, 2 * n + 2);
	for (size_t i = 0; i < 100; i++)
		s[i] = '(', s[100 + i + 1] = ')';
	s[100] = '7';
	p = parse(s);
	CHECK(p.e && p.e->kind == EXPR_INT && p.e->value == 7);
	/* every byte value at every place of a short expression */
	const char *base = "cdiv(a, 2) ? -b : c";
	size_t blen = strlen(base);
	char *t = arena_alloc(&A, blen + 1);
	for (size_t i = 0; i < blen; i++)
		for (int c = 1; c < 256; c++) {
			memcpy(t, base, blen + 1);
			t[i] = (char)c;
			p = parse(t);
			if (!p.e && p.errors != 1)
				CHECK_INT(p.errors, 1);
		}
	/* and every truncation */
	for (size_t i = 0; i < blen; i++) {
		memcpy(t, base, i);
		t[i] = 0;
		p = parse(t);
		CHECK(p.e || p.errors == 1);
	}
}

static bool same_tree(const expr *a, const expr *b)
{
	if (!a || !b)
		return a == b;
	if (a->kind != b->kind)
		return false;
	switch (a->kind) {
	case EXPR_INT:
		return a->value == b->value;
	case EXPR_NAME:
		return strcmp(a->name, b->name) == 0;
	case EXPR_UNARY:
	case EXPR_BINARY:
		if (a->op != b->op)
			return false;
		break;
	case EXPR_CALL:
		if (a->func != b->func)
			return false;
		break;
	case EXPR_COND:
		break;
	}
	return same_tree(a->a, b->a) && same_tree(a->b, b->b)
	       && same_tree(a->c, b->c);
}

static void test_print(void)
{
	const struct {
		const char *src, *want;
	} canon[] = {
		{ "(BM * BN) / (TM * TN) <= 1024", "BM * BN / (TM * TN) <= 1024" },
		{ "cdiv(N,BN)", "cdiv(N, BN)" },
		{ "-a", "-a" },
		{ "!a", "!a" },
		{ "~a", "~a" },
		{ "+a", "a" },
		{ "((a))", "a" },
		{ "-(-a)", "- -a" },
		{ "--a", "- -a" },
		{ "-~-a", "-~-a" },
		{ "a - (b - c)", "a - (b - c)" },
		{ "(a - b) - c", "a - b - c" },
		{ "a - (b + c)", "a - (b + c)" },
		{ "(a * b) + c", "a * b + c" },
		{ "a * (b + c)", "a * (b + c)" },
		{ "-(a + b)", "-(a + b)" },
		{ "(-a) * b", "-a * b" },
		{ "(a ? b : c) ? d : e", "(a ? b : c) ? d : e" },
		{ "a ? b : (c ? d : e)", "a ? b : c ? d : e" },
		{ "a ? (b ? c : d) : e", "a ? b ? c : d : e" },
		{ "(a ? b : c) + 1", "(a ? b : c) + 1" },
		{ "(a < b) == (c < d)", "a < b == c < d" },
		{ "a < (b == c)", "a < (b == c)" },
		{ "a << (b + c)", "a << b + c" },
		{ "(a << b) + c", "(a << b) + c" },
		{ "(a | b) ^ (c & d)", "(a | b) ^ c & d" },
		{ "(a && b) || c", "a && b || c" },
		{ "a && (b || c)", "a && (b || c)" },
		{ "cdiv(a ? b : c, (d, e))", NULL },
		{ "min(a ? b : c, d || e)", "min(a ? b : c, d || e)" },
		{ "true", "1" },
		{ "false || 0x10", "0 || 16" },
		{ "log2( M )", "log2(M)" },
		{ "K%4==0&&M>=N", "K % 4 == 0 && M >= N" },
		{ "a>>b>>c", "a >> b >> c" },
		{ "a>>(b>>c)", "a >> (b >> c)" },
		{ "!(a && b)", "!(a && b)" },
		{ "min(a, b) * max(c, d) % align(e, 8)", "min(a, b) * max(c, d) % align(e, 8)" },
	};
	for (size_t i = 0; i < COUNTOF(canon); i++) {
		parsed p = parse(canon[i].src);
		if (!canon[i].want) {
			CHECK(!p.e);
			continue;
		}
		CHECK(p.e != NULL);
		if (p.e)
			CHECK_STR(print_str(p.e), canon[i].want);
	}

	/* round trip: print, parse again, same tree, string and values */
	static const char *const trips[] = {
		"1 - 2 - 3", "1 - (2 - 3)", "2 + 3 * 4", "(2 + 3) * 4",
		"1 << 2 + 1", "(1 << 2) + 1", "1 | 2 ^ 3 & 4", "((1 | 2) ^ 3) & 4",
		"a ? b : c ? d : e", "(a ? b : c) ? d : e", "a ? b ? c : d : e",
		"-a * -b", "-(a * b)", "- -a", "!a == !b", "!(a == b)", "~a & ~b",
		"~(a & b)", "a < b < c", "a < (b < c)", "a == b != c",
		"a == (b != c)", "a && b || c && d", "a && (b || c) && d",
		"a || b ? c : d", "a || (b ? c : d)", "cdiv(M, BM) * cdiv(N, BN)",
		"align(K, 8) / 8 - 1", "min(max(a, b), c)", "log2(M * N) % 3",
		"BM * BN / (TM * TN) <= 1024", "K % 4 == 0", "x / y / b",
		"x / (y / b)", "x % y * d", "x * (y % d)", "a - b + c - d",
		"a - (b + c) - d", "a >> b << c", "a >> (b << c)", "x << 2 >> 1",
		"(a | b) & (c | d)", "a | b & c | d", "a ^ b ^ c", "a ^ (b ^ c)",
		"-x / y", "-(x / y)", "!!a", "-~a", "~-a", "M > N ? M : N",
		"cdiv(a ? b : c, d ? e : 1)", "max(a || b, c && d) + min(-a, ~b)",
		"1 + 2 * 3 - 4 / 2 % 3 << 1 < 20 == 1 & 3 ^ 1 | 4 && 1 || 0 ? 7 : 8",
		"(((((1 + 2) * 3 - 4) / 2 % 3) << 1) < 20) == 1",
		"0 && 1 / 0", "b ? 1 / b : 0", "y * y * y * y * y",
	};
	for (size_t i = 0; i < COUNTOF(trips); i++) {
		parsed p = parse(trips[i]);
		CHECK(p.e && p.errors == 0);
		if (!p.e)
			continue;
		char *s1 = print_str(p.e);
		parsed q = parse(s1);
		CHECK(q.e && q.errors == 0);
		if (!q.e)
			continue;
		check_at(same_tree(p.e, q.e), __FILE__, __LINE__,
		      "'%s' printed as '%s' parses differently", trips[i], s1);
		CHECK_STR(print_str(q.e), s1);
		for (size_t k = 0; k < COUNTOF(envs); k++) {
			int64_t v1 = 0, v2 = 0;
			eval_status s1s = expr_eval(p.e, &envs[k], &v1);
			eval_status s2s = expr_eval(q.e, &envs[k], &v2);
			check_at(s1s == s2s && (s1s != EVAL_OK || v1 == v2), __FILE__,
			      __LINE__, "'%s' vs '%s' in env %zu", trips[i], s1, k);
		}
	}

	/* built trees: negative literals and INT64_MIN still print validly */
	expr lit = { .kind = EXPR_INT, .value = -5 };
	expr mn = { .kind = EXPR_INT, .value = INT64_MIN };
	expr neg = { .kind = EXPR_UNARY, .op = OP_NEG, .a = &lit };
	expr mul = { .kind = EXPR_BINARY, .op = OP_MUL, .a = &neg, .b = &mn };
	CHECK_STR(print_str(&mul), "- -5 * (-9223372036854775807 - 1)");
	parsed p = parse(print_str(&mul));
	int64_t v = 0;
	CHECK(p.e && expr_eval(p.e, &envs[0], &v) == EVAL_OVERFLOW);
}

static void c_name(void *ctx, strbuf *sb, const expr *name)
{
	(void)ctx;
	if (name->name_kind == NAME_TUNABLE)
		strbuf_printf(sb, "t[%d]", name->index);
	else
		strbuf_printf(sb, "p_%s", name->name);
}

static char *print_c_str(const char *src)
{
	parsed p = parse(src);
	if (!p.e)
		return NULL;
	expr_c_style st = { c_name, NULL, "aotc_" };
	strbuf sb;
	strbuf_init(&sb);
	expr_print_c(&sb, p.e, &st);
	char *s = arena_strdup(&A, sb.data ? sb.data : "");
	strbuf_finish(&sb);
	return s;
}

static void test_print_c(void)
{
	CHECK_STR(print_c_str("cdiv(N, BN) * 2"),
	          "(aotc_cdiv(p_N, t[1]) * INT64_C(2))");
	CHECK_STR(print_c_str("BM * BN / (TM * TN) <= 1024"),
	          "(((t[0] * t[1]) / (t[2] * t[3])) <= INT64_C(1024))");
	CHECK_STR(print_c_str("K % 4 == 0 && M > 0"),
	          "(((p_K % INT64_C(4)) == INT64_C(0)) && (p_M > INT64_C(0)))");
	CHECK_STR(print_c_str("-a"), "(-t[4])");
	CHECK_STR(print_c_str("- -a"), "(-(-t[4]))");
	CHECK_STR(print_c_str("!a || ~b"), "((!t[4]) || (~t[5]))");
	CHECK_STR(print_c_str("a ? b : c ? d : e"),
	          "(t[4] ? t[5] : (t[6] ? t[7] : t[8]))");
	CHECK_STR(print_c_str("log2(M) + min(a, b) - max(c, align(d, 8))"),
	          "((aotc_log2(p_M) + aotc_min(t[4], t[5])) - "
	          "aotc_max(t[6], aotc_align(t[7], INT64_C(8))))");
	CHECK_STR(print_c_str("1 - 2 - 3"),
	          "((INT64_C(1) - INT64_C(2)) - INT64_C(3))");
	CHECK_STR(print_c_str("true"), "INT64_C(1)");
	CHECK_STR(print_c_str("9223372036854775807"),
	          "INT64_C(9223372036854775807)");
	/* int-typed C results are widened before arithmetic */
	CHECK_STR(print_c_str("(a < b) << 40"),
	          "(((int64_t)(t[4] < t[5])) << INT64_C(40))");
	CHECK_STR(print_c_str("M * !N"), "(p_M * ((int64_t)(!p_N)))");
	CHECK_STR(print_c_str("(a == b) == !c"), "((t[4] == t[5]) == (!t[6]))");

	/* no style: names as written, no prefix */
	parsed p = parse("cdiv(M, BM)");
	strbuf sb;
	strbuf_init(&sb);
	expr_c_style plain = { NULL, NULL, NULL };
	expr_print_c(&sb, p.e, &plain);
	CHECK_STR(sb.data, "cdiv(M, BM)");
	strbuf_finish(&sb);
}

int main(void)
{
	arena_init(&A);
	test_lexer();
	test_precedence();
	test_operators();
	test_functions();
	test_eval_errors();
	test_names();
	test_parse_errors();
	test_print();
	test_print_c();
	arena_finish(&A);
	return check_done();
}
