#include "expr.h"

#include <float.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Bounds that keep the recursive parser, evaluator and printers well inside
 * the stack on any input; no real annotation comes near them. */
enum { MAX_DEPTH = 256, MAX_NODES = 4096 };

/* ---- Lexer ------------------------------------------------------------- */

static void error_at(lexer *l, aotc_loc loc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void error_at(lexer *l, aotc_loc loc, const char *fmt, ...)
{
	va_list ap, ap2;
	va_start(ap, fmt);
	va_copy(ap2, ap);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	char *msg = arena_alloc(l->arena, n > 0 ? (size_t)n + 1 : 1);
	vsnprintf(msg, n > 0 ? (size_t)n + 1 : 1, fmt, ap2);
	va_end(ap2);
	diag_error(l->d, loc, "%s", msg);
	l->errors++;
}

void lexer_init(lexer *l, arena *a, diags *d, const char *text, size_t len,
                aotc_loc loc)
{
	memset(l, 0, sizeof *l);
	l->arena = a;
	l->d = d;
	l->p = text;
	l->end = text + len;
	l->loc = loc;
	lexer_next(l);
}

static bool is_alpha(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static bool is_digit(int c) { return c >= '0' && c <= '9'; }
static bool is_alnum(int c) { return is_alpha(c) || is_digit(c); }

static int hex_value(int c)
{
	if (is_digit(c))
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static int peek(const lexer *l, size_t i)
{
	return l->p + i < l->end ? (unsigned char)l->p[i] : -1;
}

/* Advances over n bytes that contain no newline. */
static void advance(lexer *l, size_t n)
{
	l->p += n;
	l->loc.col += (int)n;
}

static void lex_number(lexer *l, token *t)
{
	const char *s = l->p;
	size_t n = 0;
	bool is_float = false, overflow = false, octal = false;
	uint64_t v = 0;

	if (peek(l, 0) == '0' && (peek(l, 1) == 'x' || peek(l, 1) == 'X')
	    && hex_value(peek(l, 2)) >= 0) {
		for (n = 2; hex_value(peek(l, n)) >= 0; n++) {
			if (v > (uint64_t)INT64_MAX >> 4)
				overflow = true;
			v = v << 4 | (uint64_t)hex_value(peek(l, n));
		}
		if (v > (uint64_t)INT64_MAX)
			overflow = true;
	} else {
		for (; is_digit(peek(l, n)); n++) {
			uint64_t dv = (uint64_t)(peek(l, n) - '0');
			if (v > ((uint64_t)INT64_MAX - dv) / 10)
				overflow = true;
			v = v * 10 + dv;
		}
		if (peek(l, n) == '.') {
			is_float = true;
			for (n++; is_digit(peek(l, n)); n++)
				;
		}
		if ((peek(l, n) == 'e' || peek(l, n) == 'E')) {
			size_t m = n + 1;
			if (peek(l, m) == '+' || peek(l, m) == '-')
				m++;
			if (is_digit(peek(l, m))) {
				is_float = true;
				for (n = m; is_digit(peek(l, n)); n++)
					;
			}
		}
		octal = !is_float && n > 1 && s[0] == '0';
	}

	if (is_alnum(peek(l, n)) || peek(l, n) == '.') {
		while (is_alnum(peek(l, n)) || peek(l, n) == '.')
			n++;
		advance(l, n);
		t->kind = TOK_ERROR;
		t->len = n;
		error_at(l, t->loc, "invalid numeric literal '%.*s'", (int)n, s);
		return;
	}
	advance(l, n);
	t->len = n;
	if (is_float) {
		char *text = arena_strndup(l->arena, s, n);
		t->kind = TOK_FLOAT;
		t->fval = strtod(text, NULL);
		if (t->fval > DBL_MAX) {
			t->kind = TOK_ERROR;
			error_at(l, t->loc, "floating literal out of range");
		}
	} else if (octal) {
		t->kind = TOK_ERROR;
		error_at(l, t->loc, "octal literal '%.*s' is not supported",
		         (int)n, s);
	} else if (overflow) {
		t->kind = TOK_ERROR;
		error_at(l, t->loc, "integer literal out of range");
	} else {
		t->kind = TOK_INT;
		t->ival = (int64_t)v;
	}
}

static const char *const puncts[] = {
	"<<", ">>", "<=", ">=", "==", "!=", "&&", "||",
	"(", ")", "{", "}", ",", "=", "?", ":", "+", "-", "*", "/", "%",
	"<", ">", "&", "^", "|", "!", "~",
};

void lexer_next(lexer *l)
{
	for (;;) {
		int c = peek(l, 0);
		if (c == '\n') {
			l->p++;
			l->loc.line++;
			l->loc.col = 1;
		} else if (c == ' ' || c == '\t' || c == '\r' || c == '\f'
		           || c == '\v') {
			advance(l, 1);
		} else {
			break;
		}
	}

	token *t = &l->tok;
	memset(t, 0, sizeof *t);
	t->loc = l->loc;
	t->start = l->p;
	int c = peek(l, 0);
	if (c < 0) {
		t->kind = TOK_EOF;
		return;
	}
	if (is_alpha(c)) {
		/* A qualified name (cfg::TILE, Dir::X) is one identifier. */
		size_t n = 1;
		for (;;) {
			while (is_alnum(peek(l, n)))
				n++;
			if (peek(l, n) != ':' || peek(l, n + 1) != ':' || !is_alpha(peek(l, n + 2)))
				break;
			n += 3;
		}
		advance(l, n);
		t->kind = TOK_IDENT;
		t->len = n;
		return;
	}
	if (is_digit(c) || (c == '.' && is_digit(peek(l, 1)))) {
		lex_number(l, t);
		return;
	}
	for (size_t i = 0; i < COUNTOF(puncts); i++) {
		size_t n = strlen(puncts[i]);
		if ((size_t)(l->end - l->p) >= n && memcmp(l->p, puncts[i], n) == 0) {
			advance(l, n);
			t->kind = TOK_PUNCT;
			t->len = n;
			return;
		}
	}

	/* A stray UTF-8 character is one error, not one per byte. */
	size_t n = 1;
	if (c >= 0xc0)
		while (n < 4 && (peek(l, n) & 0xc0) == 0x80)
			n++;
	advance(l, n);
	t->kind = TOK_ERROR;
	t->len = n;
	if (c >= 0x20 && c != 0x7f)
		error_at(l, t->loc, "unexpected character '%.*s'", (int)n, t->start);
	else
		error_at(l, t->loc, "unexpected character '\\x%02x'", c);
}

bool lexer_is(const lexer *l, const char *s)
{
	return l->tok.kind == TOK_PUNCT && strlen(s) == l->tok.len
	       && memcmp(l->tok.start, s, l->tok.len) == 0;
}

bool lexer_is_ident(const lexer *l, const char *s)
{
	return l->tok.kind == TOK_IDENT && strlen(s) == l->tok.len
	       && memcmp(l->tok.start, s, l->tok.len) == 0;
}

bool lexer_accept(lexer *l, const char *s)
{
	if (!lexer_is(l, s))
		return false;
	lexer_next(l);
	return true;
}

bool lexer_expect(lexer *l, const char *s)
{
	if (lexer_accept(l, s))
		return true;
	if (l->tok.kind != TOK_ERROR)
		error_at(l, l->tok.loc, "expected '%s'", s);
	return false;
}

char *lexer_text(const lexer *l)
{
	return arena_strndup(l->arena, l->tok.start, l->tok.len);
}

/* ---- Parser ------------------------------------------------------------ */

/* Every parse function returns NULL right after the first diagnostic and
 * its callers pass the NULL up without reporting more. */
typedef struct parser {
	lexer *l;
	int depth, nodes;
} parser;

static const char *const func_names[] = {
	[FN_CDIV] = "cdiv", [FN_MIN] = "min", [FN_MAX] = "max",
	[FN_ALIGN] = "align", [FN_LOG2] = "log2",
};

static int func_arity(expr_func f) { return f == FN_LOG2 ? 1 : 2; }

/* What kernel files and their host code call these (cuda::ceil_div,
 * NVIDIA samples' iDivUp, Triton's cdiv, std::min): named in "did you
 * mean" for an unknown function. */
static const struct {
	const char *name;
	expr_func f;
} func_aliases[] = {
	{"ceil_div", FN_CDIV}, {"ceildiv", FN_CDIV}, {"div_up", FN_CDIV}, {"divup", FN_CDIV},
	{"iDivUp", FN_CDIV}, {"div_round_up", FN_CDIV}, {"DIV_ROUND_UP", FN_CDIV},
	{"round_up", FN_ALIGN}, {"align_up", FN_ALIGN}, {"roundup", FN_ALIGN},
	{"ilog2", FN_LOG2}, {"log2i", FN_LOG2},
};

static void unknown_function(lexer *l, token t)
{
	char name[64];
	snprintf(name, sizeof name, "%.*s", (int)(t.len < 63 ? t.len : 63), t.start);
	nearest near;
	nearest_init(&near, name);
	for (size_t f = 0; f < COUNTOF(func_names); f++)
		nearest_offer(&near, func_names[f]);
	/* A known alias wins over spelling. */
	for (size_t i = 0; i < COUNTOF(func_aliases); i++)
		if (strcmp(func_aliases[i].name, name) == 0)
			near.best = func_names[func_aliases[i].f];
	if (near.best)
		error_at(l, t.loc, "unknown function '%.*s'; did you mean '%s'?",
		         (int)t.len, t.start, near.best);
	else
		error_at(l, t.loc, "unknown function '%.*s' (the functions are cdiv, min, max, align and log2)",
		         (int)t.len, t.start);
}

/* Binary operator levels, loosest first. */
static const struct binop {
	const char *s;
	expr_op op;
} levels[][4] = {
	{ { "||", OP_OR } },
	{ { "&&", OP_AND } },
	{ { "|", OP_BITOR } },
	{ { "^", OP_XOR } },
	{ { "&", OP_BITAND } },
	{ { "==", OP_EQ }, { "!=", OP_NE } },
	{ { "<", OP_LT }, { "<=", OP_LE }, { ">", OP_GT }, { ">=", OP_GE } },
	{ { "<<", OP_SHL }, { ">>", OP_SHR } },
	{ { "+", OP_ADD }, { "-", OP_SUB } },
	{ { "*", OP_MUL }, { "/", OP_DIV }, { "%", OP_MOD } },
};

enum { NLEVELS = (int)COUNTOF(levels) };

static expr *parse_cond(parser *p);

static expr *new_node(parser *p, expr_kind kind, aotc_loc loc)
{
	if (++p->nodes > MAX_NODES) {
		error_at(p->l, loc, "expression is too long");
		return NULL;
	}
	expr *e = arena_alloc(p->l->arena, sizeof *e);
	e->kind = kind;
	e->loc = loc;
	return e;
}

static bool enter(parser *p)
{
	if (++p->depth > MAX_DEPTH) {
		error_at(p->l, p->l->tok.loc, "expression is nested too deeply");
		return false;
	}
	return true;
}

static expr *parse_call(parser *p, expr_func f, aotc_loc loc)
{
	lexer *l = p->l;
	expr *args[3] = { NULL, NULL, NULL };
	int n = 0;

	lexer_next(l); /* '(' */
	if (!lexer_is(l, ")")) {
		do {
			expr *a = parse_cond(p);
			if (!a)
				return NULL;
			if (n < 3)
				args[n] = a;
			n++;
		} while (lexer_accept(l, ","));
	}
	if (!lexer_expect(l, ")"))
		return NULL;
	int want = func_arity(f);
	if (n != want) {
		error_at(l, loc, "'%s' takes %d argument%s", func_names[f], want,
		         want == 1 ? "" : "s");
		return NULL;
	}
	expr *e = new_node(p, EXPR_CALL, loc);
	if (!e)
		return NULL;
	e->func = f;
	e->a = args[0];
	e->b = args[1];
	return e;
}

/* primary -> INT | 'true' | 'false' | NAME | FUNC '(' args ')' | '(' cond ')' */
static expr *parse_primary(parser *p)
{
	lexer *l = p->l;
	token t = l->tok;
	expr *e;

	switch (t.kind) {
	case TOK_INT:
		lexer_next(l);
		if (!(e = new_node(p, EXPR_INT, t.loc)))
			return NULL;
		e->value = t.ival;
		return e;
	case TOK_IDENT:
		if (lexer_is_ident(l, "true") || lexer_is_ident(l, "false")) {
			bool truth = lexer_is_ident(l, "true");
			lexer_next(l);
			if (!(e = new_node(p, EXPR_INT, t.loc)))
				return NULL;
			e->value = truth;
			return e;
		}
		lexer_next(l);
		if (lexer_is(l, "(")) {
			for (size_t f = 0; f < COUNTOF(func_names); f++)
				if (strlen(func_names[f]) == t.len
				    && memcmp(func_names[f], t.start, t.len) == 0)
					return parse_call(p, (expr_func)f, t.loc);
			unknown_function(l, t);
			return NULL;
		}
		if (!(e = new_node(p, EXPR_NAME, t.loc)))
			return NULL;
		e->name = arena_strndup(l->arena, t.start, t.len);
		return e;
	case TOK_PUNCT:
		if (lexer_is(l, "(")) {
			lexer_next(l);
			e = parse_cond(p);
			if (!e || !lexer_expect(l, ")"))
				return NULL;
			return e;
		}
		break;
	case TOK_FLOAT:
		error_at(l, t.loc, "floating literal in an integer expression");
		return NULL;
	case TOK_ERROR:
		return NULL;
	case TOK_EOF:
		break;
	}
	error_at(l, t.loc, "expected expression");
	return NULL;
}

/* unary -> ('-' | '!' | '~' | '+') unary | primary */
static expr *parse_unary(parser *p)
{
	lexer *l = p->l;
	expr_op op = OP_NEG;
	bool plus = false;

	if (lexer_is(l, "+"))
		plus = true;
	else if (lexer_is(l, "!"))
		op = OP_NOT;
	else if (lexer_is(l, "~"))
		op = OP_BITNOT;
	else if (!lexer_is(l, "-"))
		return parse_primary(p);

	aotc_loc loc = l->tok.loc;
	lexer_next(l);
	if (!enter(p))
		return NULL;
	expr *a = parse_unary(p);
	p->depth--;
	if (!a || plus)
		return a;
	expr *e = new_node(p, EXPR_UNARY, loc);
	if (!e)
		return NULL;
	e->op = op;
	e->a = a;
	return e;
}

static expr *parse_binary(parser *p, int level)
{
	if (level == NLEVELS)
		return parse_unary(p);
	lexer *l = p->l;
	expr *lhs = parse_binary(p, level + 1);
	while (lhs) {
		const struct binop *b = NULL;
		for (size_t i = 0; i < COUNTOF(levels[level]) && levels[level][i].s; i++)
			if (lexer_is(l, levels[level][i].s))
				b = &levels[level][i];
		if (!b)
			break;
		aotc_loc loc = l->tok.loc;
		lexer_next(l);
		expr *rhs = parse_binary(p, level + 1);
		if (!rhs)
			return NULL;
		expr *e = new_node(p, EXPR_BINARY, loc);
		if (!e)
			return NULL;
		e->op = b->op;
		e->a = lhs;
		e->b = rhs;
		lhs = e;
	}
	return lhs;
}

/* cond -> lor ('?' expr ':' cond)? */
static expr *parse_cond(parser *p)
{
	lexer *l = p->l;
	if (!enter(p))
		return NULL;
	expr *e = parse_binary(p, 0);
	if (e && lexer_is(l, "?")) {
		aotc_loc loc = l->tok.loc;
		lexer_next(l);
		expr *b = parse_cond(p);
		if (!b || !lexer_expect(l, ":"))
			return NULL;
		expr *c = parse_cond(p);
		if (!c)
			return NULL;
		expr *q = new_node(p, EXPR_COND, loc);
		if (!q)
			return NULL;
		q->a = e;
		q->b = b;
		q->c = c;
		e = q;
	}
	p->depth--;
	return e;
}

expr *expr_parse(lexer *l)
{
	parser p = { .l = l };
	return parse_cond(&p);
}

expr *expr_parse_string(arena *a, diags *d, const char *text, size_t len,
                        aotc_loc loc)
{
	lexer l;
	lexer_init(&l, a, d, text, len, loc);
	expr *e = expr_parse(&l);
	if (e && l.tok.kind != TOK_EOF) {
		if (l.tok.kind != TOK_ERROR)
			error_at(&l, l.tok.loc, "expected end of expression");
		return NULL;
	}
	return e;
}

/* ---- Names ------------------------------------------------------------- */

int expr_resolve(expr *e, const expr_scope *scope, diags *d)
{
	if (!e)
		return 0;
	if (e->kind == EXPR_NAME) {
		name_kind kind = NAME_UNRESOLVED;
		int index = -1;
		int64_t value = 0;
		bool diagnosed = false;
		if (scope && scope->lookup
		    && scope->lookup(scope->ctx, e->name, e->loc, &kind, &index,
		                     &value, &diagnosed)) {
			e->name_kind = kind;
			e->index = index;
			e->value = value;
			return 0;
		}
		e->name_kind = NAME_UNRESOLVED;
		if (diagnosed)
			return 1;
		nearest near;
		nearest_init(&near, e->name);
		if (scope && scope->suggest)
			scope->suggest(scope->ctx, &near);
		if (near.best)
			diag_error(d, e->loc, "unknown name '%s'; did you mean '%s'?", e->name, near.best);
		else
			diag_error(d, e->loc, "unknown name '%s'", e->name);
		return 1;
	}
	int n = expr_resolve(e->a, scope, d);
	n += expr_resolve(e->b, scope, d);
	n += expr_resolve(e->c, scope, d);
	return n;
}

void expr_visit_names(const expr *e, void (*fn)(void *ctx, const expr *name), void *ctx)
{
	if (!e)
		return;
	if (e->kind == EXPR_NAME) {
		fn(ctx, e);
		return;
	}
	expr_visit_names(e->a, fn, ctx);
	expr_visit_names(e->b, fn, ctx);
	expr_visit_names(e->c, fn, ctx);
}

/* ---- Evaluation -------------------------------------------------------- */

const char *eval_status_name(eval_status s)
{
	switch (s) {
	case EVAL_OK: return "ok";
	case EVAL_DIV_ZERO: return "division by zero";
	case EVAL_OVERFLOW: return "overflow";
	case EVAL_DOMAIN: return "domain error";
	case EVAL_UNBOUND: return "unbound name";
	}
	return "unknown status";
}

/* Arithmetic shift right whatever the compiler does with negative >>. */
static int64_t asr(int64_t a, int64_t n)
{
	return a < 0 ? ~(~a >> n) : a >> n;
}

static eval_status cdiv(int64_t a, int64_t b, int64_t *out)
{
	if (b == 0)
		return EVAL_DIV_ZERO;
	if (a == INT64_MIN && b == -1)
		return EVAL_OVERFLOW;
	int64_t q = a / b, r = a % b;
	if (r != 0 && (r < 0) == (b < 0))
		q++;
	*out = q;
	return EVAL_OK;
}

static eval_status eval_binary(expr_op op, int64_t a, int64_t b, int64_t *out)
{
	switch (op) {
	case OP_MUL:
		return __builtin_mul_overflow(a, b, out) ? EVAL_OVERFLOW : EVAL_OK;
	case OP_ADD:
		return __builtin_add_overflow(a, b, out) ? EVAL_OVERFLOW : EVAL_OK;
	case OP_SUB:
		return __builtin_sub_overflow(a, b, out) ? EVAL_OVERFLOW : EVAL_OK;
	case OP_DIV:
	case OP_MOD:
		if (b == 0)
			return EVAL_DIV_ZERO;
		if (a == INT64_MIN && b == -1)
			return EVAL_OVERFLOW;
		*out = op == OP_DIV ? a / b : a % b;
		return EVAL_OK;
	case OP_SHL: {
		if (b < 0 || b > 63)
			return EVAL_OVERFLOW;
		int64_t r = (int64_t)((uint64_t)a << b);
		if (asr(r, b) != a)
			return EVAL_OVERFLOW;
		*out = r;
		return EVAL_OK;
	}
	case OP_SHR:
		if (b < 0 || b > 63)
			return EVAL_OVERFLOW;
		*out = asr(a, b);
		return EVAL_OK;
	case OP_LT: *out = a < b; return EVAL_OK;
	case OP_LE: *out = a <= b; return EVAL_OK;
	case OP_GT: *out = a > b; return EVAL_OK;
	case OP_GE: *out = a >= b; return EVAL_OK;
	case OP_EQ: *out = a == b; return EVAL_OK;
	case OP_NE: *out = a != b; return EVAL_OK;
	case OP_BITAND: *out = a & b; return EVAL_OK;
	case OP_XOR: *out = a ^ b; return EVAL_OK;
	case OP_BITOR: *out = a | b; return EVAL_OK;
	default:
		die("eval: bad binary operator %d", (int)op);
	}
}

static eval_status eval_call(expr_func f, int64_t a, int64_t b, int64_t *out)
{
	eval_status s;
	switch (f) {
	case FN_CDIV:
		return cdiv(a, b, out);
	case FN_MIN:
		*out = a < b ? a : b;
		return EVAL_OK;
	case FN_MAX:
		*out = a > b ? a : b;
		return EVAL_OK;
	case FN_ALIGN:
		if ((s = cdiv(a, b, &a)) != EVAL_OK)
			return s;
		return __builtin_mul_overflow(a, b, out) ? EVAL_OVERFLOW : EVAL_OK;
	case FN_LOG2:
		if (a <= 0)
			return EVAL_DOMAIN;
		*out = 63 - __builtin_clzll((unsigned long long)a);
		return EVAL_OK;
	}
	die("eval: bad function %d", (int)f);
}

eval_status expr_eval(const expr *e, const eval_env *env, int64_t *out)
{
	int64_t a, b = 0;
	eval_status s;

	switch (e->kind) {
	case EXPR_INT:
		*out = e->value;
		return EVAL_OK;
	case EXPR_NAME: {
		const int64_t *vals = NULL;
		int n = 0;
		if (e->name_kind == NAME_CONST) {
			*out = e->value;
			return EVAL_OK;
		}
		if (env && e->name_kind == NAME_TUNABLE) {
			vals = env->tunables;
			n = env->ntunables;
		} else if (env && e->name_kind == NAME_PARAM) {
			vals = env->params;
			n = env->nparams;
		}
		if (!vals || e->index < 0 || e->index >= n)
			return EVAL_UNBOUND;
		*out = vals[e->index];
		return EVAL_OK;
	}
	case EXPR_UNARY:
		if ((s = expr_eval(e->a, env, &a)) != EVAL_OK)
			return s;
		switch (e->op) {
		case OP_NEG:
			return __builtin_sub_overflow((int64_t)0, a, out)
			       ? EVAL_OVERFLOW : EVAL_OK;
		case OP_NOT:
			*out = !a;
			return EVAL_OK;
		case OP_BITNOT:
			*out = ~a;
			return EVAL_OK;
		default:
			die("eval: bad unary operator %d", (int)e->op);
		}
	case EXPR_BINARY:
		if ((s = expr_eval(e->a, env, &a)) != EVAL_OK)
			return s;
		if (e->op == OP_AND || e->op == OP_OR) {
			if ((e->op == OP_AND) != (a != 0)) {
				*out = a != 0;
				return EVAL_OK;
			}
			if ((s = expr_eval(e->b, env, &b)) != EVAL_OK)
				return s;
			*out = b != 0;
			return EVAL_OK;
		}
		if ((s = expr_eval(e->b, env, &b)) != EVAL_OK)
			return s;
		return eval_binary(e->op, a, b, out);
	case EXPR_COND:
		if ((s = expr_eval(e->a, env, &a)) != EVAL_OK)
			return s;
		return expr_eval(a ? e->b : e->c, env, out);
	case EXPR_CALL:
		if ((s = expr_eval(e->a, env, &a)) != EVAL_OK)
			return s;
		if (e->b && (s = expr_eval(e->b, env, &b)) != EVAL_OK)
			return s;
		return eval_call(e->func, a, b, out);
	}
	die("eval: bad expression kind %d", (int)e->kind);
}

/* ---- Printing ---------------------------------------------------------- */

enum { PREC_COND = 1, PREC_UNARY = 12, PREC_PRIMARY = 13 };

static const char *const op_names[] = {
	[OP_NEG] = "-", [OP_NOT] = "!", [OP_BITNOT] = "~",
	[OP_MUL] = "*", [OP_DIV] = "/", [OP_MOD] = "%",
	[OP_ADD] = "+", [OP_SUB] = "-", [OP_SHL] = "<<", [OP_SHR] = ">>",
	[OP_LT] = "<", [OP_LE] = "<=", [OP_GT] = ">", [OP_GE] = ">=",
	[OP_EQ] = "==", [OP_NE] = "!=",
	[OP_BITAND] = "&", [OP_XOR] = "^", [OP_BITOR] = "|",
	[OP_AND] = "&&", [OP_OR] = "||",
};

/* cond is 1, '||' 2, ... '*' 11, as in the levels table. */
static int binary_prec(expr_op op)
{
	for (int i = 0; i < NLEVELS; i++)
		for (size_t j = 0; j < COUNTOF(levels[i]) && levels[i][j].s; j++)
			if (levels[i][j].op == op)
				return i + 2;
	die("print: bad binary operator %d", (int)op);
}

static int prec(const expr *e)
{
	switch (e->kind) {
	case EXPR_COND:
		return PREC_COND;
	case EXPR_BINARY:
		return binary_prec(e->op);
	case EXPR_UNARY:
		return PREC_UNARY;
	case EXPR_INT:
		if (e->value == INT64_MIN)
			return binary_prec(OP_SUB);
		return e->value < 0 ? PREC_UNARY : PREC_PRIMARY;
	default:
		return PREC_PRIMARY;
	}
}

static void print(strbuf *sb, const expr *e, int min_prec)
{
	int p = prec(e);
	if (p < min_prec)
		strbuf_putc(sb, '(');
	switch (e->kind) {
	case EXPR_INT:
		/* Only built trees hold INT64_MIN; it has no literal. */
		if (e->value == INT64_MIN)
			strbuf_puts(sb, "-9223372036854775807 - 1");
		else
			strbuf_printf(sb, "%" PRId64, e->value);
		break;
	case EXPR_NAME:
		strbuf_puts(sb, e->name);
		break;
	case EXPR_UNARY:
		strbuf_puts(sb, op_names[e->op]);
		/* "- -x", since "--x" reads as a decrement to C eyes */
		if (e->op == OP_NEG
		    && ((e->a->kind == EXPR_UNARY && e->a->op == OP_NEG)
		        || (e->a->kind == EXPR_INT && e->a->value < 0)))
			strbuf_putc(sb, ' ');
		print(sb, e->a, PREC_UNARY);
		break;
	case EXPR_BINARY:
		print(sb, e->a, p);
		strbuf_printf(sb, " %s ", op_names[e->op]);
		print(sb, e->b, p + 1);
		break;
	case EXPR_COND:
		print(sb, e->a, PREC_COND + 1);
		strbuf_puts(sb, " ? ");
		print(sb, e->b, PREC_COND);
		strbuf_puts(sb, " : ");
		print(sb, e->c, PREC_COND);
		break;
	case EXPR_CALL:
		strbuf_printf(sb, "%s(", func_names[e->func]);
		print(sb, e->a, PREC_COND);
		if (e->b) {
			strbuf_puts(sb, ", ");
			print(sb, e->b, PREC_COND);
		}
		strbuf_putc(sb, ')');
		break;
	}
	if (p < min_prec)
		strbuf_putc(sb, ')');
}

void expr_print(strbuf *sb, const expr *e)
{
	print(sb, e, PREC_COND);
}

static bool is_logical(expr_op op)
{
	return (op >= OP_LT && op <= OP_NE) || op == OP_AND || op == OP_OR
	       || op == OP_NOT;
}

/* Whether e has C type int rather than int64_t: comparisons and logical
 * operators, and what only passes such a value through. */
static bool c_int_typed(const expr *e)
{
	switch (e->kind) {
	case EXPR_UNARY:
		return e->op == OP_NOT || c_int_typed(e->a);
	case EXPR_BINARY:
		return is_logical(e->op);
	case EXPR_COND:
		return c_int_typed(e->b) && c_int_typed(e->c);
	default:
		return false;
	}
}

static void print_c(strbuf *sb, const expr *e, const expr_c_style *st);

/* An int operand of arithmetic is widened first, so that e.g.
 * (a < b) << 40 shifts an int64_t as the evaluator does. */
static void print_c_operand(strbuf *sb, const expr *e, const expr_c_style *st)
{
	if (c_int_typed(e)) {
		strbuf_puts(sb, "((int64_t)");
		print_c(sb, e, st);
		strbuf_putc(sb, ')');
	} else {
		print_c(sb, e, st);
	}
}

static void print_c(strbuf *sb, const expr *e, const expr_c_style *st)
{
	switch (e->kind) {
	case EXPR_INT:
		if (e->value == INT64_MIN)
			strbuf_puts(sb, "INT64_MIN");
		else if (e->value < 0)
			strbuf_printf(sb, "(-INT64_C(%" PRId64 "))", -e->value);
		else
			strbuf_printf(sb, "INT64_C(%" PRId64 ")", e->value);
		break;
	case EXPR_NAME:
		if (e->name_kind == NAME_CONST)
			strbuf_printf(sb, "INT64_C(%" PRId64 ")", e->value);
		else if (st && st->name)
			st->name(st->ctx, sb, e);
		else
			strbuf_puts(sb, e->name);
		break;
	case EXPR_UNARY:
		strbuf_printf(sb, "(%s", op_names[e->op]);
		print_c(sb, e->a, st);
		strbuf_putc(sb, ')');
		break;
	case EXPR_BINARY:
		strbuf_putc(sb, '(');
		if (is_logical(e->op))
			print_c(sb, e->a, st);
		else
			print_c_operand(sb, e->a, st);
		strbuf_printf(sb, " %s ", op_names[e->op]);
		if (is_logical(e->op))
			print_c(sb, e->b, st);
		else
			print_c_operand(sb, e->b, st);
		strbuf_putc(sb, ')');
		break;
	case EXPR_COND:
		strbuf_putc(sb, '(');
		print_c(sb, e->a, st);
		strbuf_puts(sb, " ? ");
		print_c(sb, e->b, st);
		strbuf_puts(sb, " : ");
		print_c(sb, e->c, st);
		strbuf_putc(sb, ')');
		break;
	case EXPR_CALL:
		strbuf_printf(sb, "%s%s(", st && st->func_prefix ? st->func_prefix : "",
		              func_names[e->func]);
		print_c(sb, e->a, st);
		if (e->b) {
			strbuf_puts(sb, ", ");
			print_c(sb, e->b, st);
		}
		strbuf_putc(sb, ')');
		break;
	}
}

void expr_print_c(strbuf *sb, const expr *e, const expr_c_style *st)
{
	print_c(sb, e, st);
}
