#include "cexpr.h"

#include <string.h>

/* ---- Intervals --------------------------------------------------------------- */

static const ival FULL = {INT64_MIN, INT64_MAX};

static int64_t sat_add(int64_t a, int64_t b, bool *ovf)
{
	int64_t r;
	if (!__builtin_add_overflow(a, b, &r))
		return r;
	*ovf = true;
	return b > 0 ? INT64_MAX : INT64_MIN;
}

static int64_t sat_sub(int64_t a, int64_t b, bool *ovf)
{
	int64_t r;
	if (!__builtin_sub_overflow(a, b, &r))
		return r;
	*ovf = true;
	return b < 0 ? INT64_MAX : INT64_MIN;
}

static int64_t sat_mul(int64_t a, int64_t b, bool *ovf)
{
	int64_t r;
	if (!__builtin_mul_overflow(a, b, &r))
		return r;
	*ovf = true;
	return (a < 0) != (b < 0) ? INT64_MIN : INT64_MAX;
}

/* a / b (b != 0), or ceil(a / b); INT64_MIN / -1 saturates */
static int64_t sat_div(int64_t a, int64_t b, bool ceil)
{
	if (a == INT64_MIN && b == -1)
		return INT64_MAX;
	int64_t q = a / b, r = a % b;
	if (ceil && r != 0 && (r < 0) == (b < 0))
		q++;
	return q;
}

static int64_t mag(ival a)
{
	int64_t l = a.lo == INT64_MIN ? INT64_MAX : a.lo < 0 ? -a.lo : a.lo;
	int64_t h = a.hi == INT64_MIN ? INT64_MAX : a.hi < 0 ? -a.hi : a.hi;
	return l > h ? l : h;
}

static ival hull4(int64_t w, int64_t x, int64_t y, int64_t z)
{
	ival r = {w, w};
	int64_t v[3] = {x, y, z};
	for (int i = 0; i < 3; i++) {
		r.lo = v[i] < r.lo ? v[i] : r.lo;
		r.hi = v[i] > r.hi ? v[i] : r.hi;
	}
	return r;
}

static ival with_zero(ival r)
{
	if (r.lo > 0)
		r.lo = 0;
	if (r.hi < 0)
		r.hi = 0;
	return r;
}

static bool has(ival r, int64_t x) { return r.lo <= x && x <= r.hi; }

static int64_t floor_log2(int64_t a) { return a <= 1 ? 0 : 63 - __builtin_clzll((unsigned long long)a); }

static int64_t mask_of(int64_t a)
{
	int64_t m = 0;
	while (m < a)
		m = m * 2 + 1;
	return m;
}

/* division, modulo, cdiv by b fail somewhere in the ranges */
static bool div_fails(ival a, ival b) { return has(b, 0) || (a.lo == INT64_MIN && has(b, -1)); }

/* ---- Text ---------------------------------------------------------------------- */

/* What a node's text is: its precedence (grammar level, 12 for a primary
 * or call, 0 for ?:) and, for a binary operator, which. */
typedef struct piece {
	strbuf sb;
	int prec;
	expr_op op;
	bool neg_literal;
	ival r;
	bool fail;
} piece;

static int prec_of(expr_op op)
{
	switch (op) {
	case OP_OR: return 1;
	case OP_AND: return 2;
	case OP_BITOR: return 3;
	case OP_XOR: return 4;
	case OP_BITAND: return 5;
	case OP_EQ: case OP_NE: return 6;
	case OP_LT: case OP_LE: case OP_GT: case OP_GE: return 7;
	case OP_SHL: case OP_SHR: return 8;
	case OP_ADD: case OP_SUB: return 9;
	default: return 10;
	}
}

static const char *op_text(expr_op op)
{
	static const char *const t[] = {
		[OP_MUL] = "*", [OP_DIV] = "/", [OP_MOD] = "%", [OP_ADD] = "+", [OP_SUB] = "-",
		[OP_SHL] = "<<", [OP_SHR] = ">>", [OP_LT] = "<", [OP_LE] = "<=", [OP_GT] = ">",
		[OP_GE] = ">=", [OP_EQ] = "==", [OP_NE] = "!=", [OP_BITAND] = "&", [OP_XOR] = "^",
		[OP_BITOR] = "|", [OP_AND] = "&&", [OP_OR] = "||",
	};
	return t[op];
}

/* Whether child c of an operator of precedence p needs parentheses: where
 * C needs them, and wherever gcc's -Wparentheses would ask for them. */
static bool needs_parens(int p, const piece *c, bool right)
{
	if (c->prec >= 11)
		return c->neg_literal;
	if (c->prec == 0)
		return true;
	if (c->prec < p)
		return true;
	if (c->prec == p)
		return right || p == 6 || p == 7 || p <= 5;
	return !(p >= 9 || ((p == 6 || p == 7) && c->prec >= 9) ||
	         (p <= 2 && c->prec >= 6 && !(p == 1 && c->prec == 2)));
}

static void put_operand(strbuf *sb, int p, const piece *c, bool right)
{
	bool par = needs_parens(p, c, right);
	strbuf_printf(sb, par ? "(%s)" : "%s", c->sb.data);
}

static void put_literal(piece *o, int64_t v)
{
	if (v == INT64_MIN)
		strbuf_puts(&o->sb, "INT64_MIN");
	else
		strbuf_printf(&o->sb, "%lld", (long long)v);
	o->prec = 12;
	o->neg_literal = v < 0;
	o->r = (ival){v, v};
}

bool cx_uses_tunables(const expr *e)
{
	if (!e)
		return false;
	if (e->kind == EXPR_NAME && e->name_kind == NAME_TUNABLE)
		return true;
	return cx_uses_tunables(e->a) || cx_uses_tunables(e->b) || cx_uses_tunables(e->c);
}

bool cx_uses_params(const expr *e)
{
	if (!e)
		return false;
	if (e->kind == EXPR_NAME && e->name_kind == NAME_PARAM)
		return true;
	return cx_uses_params(e->a) || cx_uses_params(e->b) || cx_uses_params(e->c);
}

/* The range of a comparison or logical operator over operands in x and y:
 * [1, 1] or [0, 0] where the ranges decide it (cols % 1 == 0 always holds). */
static ival compare_range(expr_op op, ival x, ival y)
{
	int t = -1; /* -1: either */
	switch (op) {
	case OP_LT: t = x.hi < y.lo ? 1 : x.lo >= y.hi ? 0 : -1; break;
	case OP_LE: t = x.hi <= y.lo ? 1 : x.lo > y.hi ? 0 : -1; break;
	case OP_GT: t = x.lo > y.hi ? 1 : x.hi <= y.lo ? 0 : -1; break;
	case OP_GE: t = x.lo >= y.hi ? 1 : x.hi < y.lo ? 0 : -1; break;
	case OP_EQ: case OP_NE:
		t = x.lo == x.hi && y.lo == y.hi && x.lo == y.lo ? 1 : x.hi < y.lo || y.hi < x.lo ? 0 : -1;
		if (op == OP_NE && t >= 0)
			t = !t;
		break;
	case OP_AND: t = (x.lo > 0 || x.hi < 0) && (y.lo > 0 || y.hi < 0) ? 1 : (x.lo == 0 && x.hi == 0) || (y.lo == 0 && y.hi == 0) ? 0 : -1; break;
	case OP_OR: t = (x.lo > 0 || x.hi < 0) || (y.lo > 0 || y.hi < 0) ? 1 : x.lo == 0 && x.hi == 0 && y.lo == 0 && y.hi == 0 ? 0 : -1; break;
	default: break;
	}
	return t < 0 ? (ival){0, 1} : (ival){t, t};
}

static void gen(piece *o, const expr *e, cx_env *env);

/* A call of a helper with the children's text as arguments. */
static void call(piece *o, cx_env *env, int helper, const char *name, const piece *a, const piece *b, bool checked)
{
	env->helpers[helper] = true;
	strbuf_printf(&o->sb, "%s(%s", name, a->sb.data);
	if (b)
		strbuf_printf(&o->sb, ", %s", b->sb.data);
	if (checked)
		strbuf_printf(&o->sb, ", &%s", env->err);
	strbuf_putc(&o->sb, ')');
	o->prec = 12;
	o->fail |= checked;
}

static void binary_op(piece *o, expr_op op, const piece *a, const piece *b)
{
	o->prec = prec_of(op);
	put_operand(&o->sb, o->prec, a, false);
	strbuf_printf(&o->sb, " %s ", op_text(op));
	put_operand(&o->sb, o->prec, b, true);
}

static void gen_binary(piece *o, const expr *e, cx_env *env, const piece *a, const piece *b)
{
	ival x = a->r, y = b->r;
	bool ovf = false;
	static const struct {
		expr_op op;
		int helper;
		const char *name;
	} checked[] = {
		{OP_ADD, CH_ADD, "aot_add"}, {OP_SUB, CH_SUB, "aot_sub"}, {OP_MUL, CH_MUL, "aot_mul"},
		{OP_DIV, CH_DIV, "aot_div"}, {OP_MOD, CH_MOD, "aot_mod"}, {OP_SHL, CH_SHL, "aot_shl"},
		{OP_SHR, CH_SHR, "aot_shr"},
	};
	switch (e->op) {
	case OP_ADD:
		o->r = (ival){sat_add(x.lo, y.lo, &ovf), sat_add(x.hi, y.hi, &ovf)};
		break;
	case OP_SUB:
		o->r = (ival){sat_sub(x.lo, y.hi, &ovf), sat_sub(x.hi, y.lo, &ovf)};
		break;
	case OP_MUL:
		o->r = hull4(sat_mul(x.lo, y.lo, &ovf), sat_mul(x.lo, y.hi, &ovf), sat_mul(x.hi, y.lo, &ovf),
		             sat_mul(x.hi, y.hi, &ovf));
		break;
	case OP_DIV:
		ovf = div_fails(x, y);
		if (has(y, 0))
			o->r = (ival){-mag(x), mag(x)};
		else
			o->r = hull4(sat_div(x.lo, y.lo, false), sat_div(x.lo, y.hi, false), sat_div(x.hi, y.lo, false),
			             sat_div(x.hi, y.hi, false));
		break;
	case OP_MOD: {
		ovf = div_fails(x, y);
		int64_t m = mag(y) - 1;
		o->r = (ival){x.lo < 0 ? (x.lo > -m ? x.lo : -m) : 0, x.hi > 0 ? (x.hi < m ? x.hi : m) : 0};
		break;
	}
	case OP_SHL:
		ovf = true;
		if (x.lo >= 0 && y.lo >= 0 && y.hi <= 62) {
			bool o2 = false;
			int64_t hi = sat_mul(x.hi, INT64_C(1) << y.hi, &o2);
			ovf = o2;
			o->r = (ival){0, hi};
		} else {
			o->r = FULL;
		}
		break;
	case OP_SHR:
		if (y.lo >= 0 && y.hi <= 63) {
			o->r = (ival){x.lo < 0 ? x.lo : x.lo >> y.hi, x.hi < 0 ? -1 : x.hi >> y.lo};
			if (x.lo < 0 && x.hi >= 0)
				o->r.hi = x.hi >> y.lo;
			if (x.lo >= 0) {
				binary_op(o, e->op, a, b);
			} else {
				call(o, env, CH_ASR, "aot_asr", a, b, false);
			}
			return;
		}
		ovf = true;
		o->r = FULL;
		break;
	case OP_LT: case OP_LE: case OP_GT: case OP_GE: case OP_EQ: case OP_NE: case OP_AND: case OP_OR:
		o->r = compare_range(e->op, x, y);
		binary_op(o, e->op, a, b);
		return;
	case OP_BITAND:
		if (x.lo >= 0 && y.lo >= 0)
			o->r = (ival){0, x.hi < y.hi ? x.hi : y.hi};
		else if (x.lo >= 0 || y.lo >= 0)
			o->r = (ival){0, x.lo >= 0 ? x.hi : y.hi};
		else
			o->r = FULL;
		binary_op(o, e->op, a, b);
		return;
	case OP_XOR: case OP_BITOR:
		o->r = x.lo >= 0 && y.lo >= 0 ? (ival){0, mask_of(x.hi > y.hi ? x.hi : y.hi)} : FULL;
		binary_op(o, e->op, a, b);
		return;
	default:
		die("emit: bad operator %d", (int)e->op);
	}
	if (!ovf) {
		binary_op(o, e->op, a, b);
		return;
	}
	o->r = with_zero(o->r);
	for (size_t i = 0; i < sizeof checked / sizeof *checked; i++)
		if (checked[i].op == e->op)
			call(o, env, checked[i].helper, checked[i].name, a, b, true);
}

static void gen_call(piece *o, const expr *e, cx_env *env, const piece *a, const piece *b)
{
	ival x = a->r, y = b ? b->r : FULL;
	switch (e->func) {
	case FN_MIN: case FN_MAX: {
		bool mn = e->func == FN_MIN;
		o->r.lo = mn ? (x.lo < y.lo ? x.lo : y.lo) : (x.lo > y.lo ? x.lo : y.lo);
		o->r.hi = mn ? (x.hi < y.hi ? x.hi : y.hi) : (x.hi > y.hi ? x.hi : y.hi);
		/* a < b ? a : b: both operands are free of side effects */
		piece c = {.prec = 0};
		strbuf_init(&c.sb);
		put_operand(&c.sb, 7, a, false);
		strbuf_printf(&c.sb, " %s ", mn ? "<" : ">");
		put_operand(&c.sb, 7, b, true);
		strbuf_printf(&c.sb, " ? %s : %s", a->sb.data, b->sb.data);
		strbuf_puts(&o->sb, c.sb.data);
		o->prec = 0;
		strbuf_finish(&c.sb);
		return;
	}
	case FN_LOG2: {
		bool fails = x.lo <= 0;
		o->r = (ival){floor_log2(x.lo), floor_log2(x.hi)};
		if (fails)
			o->r = with_zero(o->r);
		call(o, env, fails ? CH_LOG2 : CH_FLOORLOG2, fails ? "aot_log2" : "aot_floor_log2", a, NULL, fails);
		return;
	}
	case FN_CDIV: case FN_ALIGN: {
		bool fails = div_fails(x, y), ovf = false;
		ival q = has(y, 0) ? (ival){-mag(x), mag(x)}
		                   : hull4(sat_div(x.lo, y.lo, true), sat_div(x.lo, y.hi, true), sat_div(x.hi, y.lo, true),
		                           sat_div(x.hi, y.hi, true));
		if (e->func == FN_CDIV) {
			o->r = fails ? with_zero(q) : q;
			call(o, env, fails ? CH_CDIV : CH_CEIL, fails ? "aot_cdiv" : "aot_ceil", a, b, fails);
			return;
		}
		o->r = hull4(sat_mul(q.lo, y.lo, &ovf), sat_mul(q.lo, y.hi, &ovf), sat_mul(q.hi, y.lo, &ovf),
		             sat_mul(q.hi, y.hi, &ovf));
		if (fails || ovf) {
			o->r = with_zero(o->r);
			env->helpers[CH_CDIV] = env->helpers[CH_MUL] = true;
			call(o, env, CH_ALIGN, "aot_align", a, b, true);
			return;
		}
		piece c = {.prec = 12};
		strbuf_init(&c.sb);
		call(&c, env, CH_CEIL, "aot_ceil", a, b, false);
		binary_op(o, OP_MUL, &c, b);
		strbuf_finish(&c.sb);
		return;
	}
	}
	die("emit: bad function %d", (int)e->func);
}

static void gen(piece *o, const expr *e, cx_env *env)
{
	strbuf_init(&o->sb);
	o->prec = 12;
	o->fail = false;
	o->neg_literal = false;
	/* Constant where the tunables are known: folded, unless it fails
	 * (then written out, failing as it would). */
	if (e->kind != EXPR_INT && !cx_uses_params(e) && (env->tv || !cx_uses_tunables(e))) {
		eval_env ee = {.tunables = env->tv, .ntunables = env->tv ? env->k->ntunables : 0};
		int64_t v;
		if (expr_eval(e, &ee, &v) == EVAL_OK) {
			put_literal(o, v);
			return;
		}
	}
	switch (e->kind) {
	case EXPR_INT:
		put_literal(o, e->value);
		return;
	case EXPR_NAME:
		if (e->name_kind == NAME_PARAM) {
			strbuf_puts(&o->sb, env->k->params[e->index].name);
			o->r = env->par[e->index];
		} else if (e->name_kind == NAME_TUNABLE) {
			strbuf_puts(&o->sb, env->k->tunables[e->index].name);
			o->r = env->tun[e->index];
			if (env->tun_used)
				env->tun_used[e->index] = true;
		} else {
			put_literal(o, e->value);
		}
		return;
	case EXPR_UNARY: {
		piece a;
		gen(&a, e->a, env);
		o->fail = a.fail;
		o->prec = 11;
		if (e->op == OP_NEG && a.r.lo == INT64_MIN) {
			o->r = with_zero((ival){a.r.hi == INT64_MIN ? INT64_MAX : -a.r.hi, INT64_MAX});
			call(o, env, CH_NEG, "aot_neg", &a, NULL, true);
		} else {
			if (e->op == OP_NEG)
				o->r = (ival){-a.r.hi, -a.r.lo};
			else if (e->op == OP_NOT)
				o->r = (ival){0, 1};
			else
				o->r = (ival){~a.r.hi, ~a.r.lo};
			strbuf_puts(&o->sb, e->op == OP_NEG ? "-" : e->op == OP_NOT ? "!" : "~");
			bool par = a.prec < 11 || a.neg_literal;
			strbuf_printf(&o->sb, par ? "(%s)" : "%s", a.sb.data);
		}
		strbuf_finish(&a.sb);
		return;
	}
	case EXPR_COND: {
		piece a, b, c;
		gen(&a, e->a, env);
		gen(&b, e->b, env);
		gen(&c, e->c, env);
		put_operand(&o->sb, 1, &a, false);
		strbuf_puts(&o->sb, " ? ");
		strbuf_puts(&o->sb, b.sb.data);
		strbuf_puts(&o->sb, " : ");
		strbuf_puts(&o->sb, c.sb.data);
		o->prec = 0;
		o->fail = a.fail || b.fail || c.fail;
		o->r = (ival){b.r.lo < c.r.lo ? b.r.lo : c.r.lo, b.r.hi > c.r.hi ? b.r.hi : c.r.hi};
		strbuf_finish(&a.sb);
		strbuf_finish(&b.sb);
		strbuf_finish(&c.sb);
		return;
	}
	case EXPR_CALL: {
		piece a, b;
		gen(&a, e->a, env);
		if (e->b)
			gen(&b, e->b, env);
		o->fail = a.fail || (e->b && b.fail);
		gen_call(o, e, env, &a, e->b ? &b : NULL);
		strbuf_finish(&a.sb);
		if (e->b)
			strbuf_finish(&b.sb);
		return;
	}
	case EXPR_BINARY: {
		piece a, b;
		gen(&a, e->a, env);
		gen(&b, e->b, env);
		o->fail = a.fail || b.fail;
		gen_binary(o, e, env, &a, &b);
		strbuf_finish(&a.sb);
		strbuf_finish(&b.sb);
		return;
	}
	}
}

ival cx_expr(strbuf *sb, const expr *e, cx_env *env, bool *may_fail)
{
	piece p;
	gen(&p, e, env);
	strbuf_puts(sb, p.sb.data);
	*may_fail = p.fail;
	strbuf_finish(&p.sb);
	return p.r;
}

ival cx_range(const expr *e, cx_env *env, bool *may_fail)
{
	bool h[CH_COUNT] = {false};
	cx_env quiet = *env;
	quiet.helpers = h;
	quiet.tun_used = NULL;
	strbuf sb;
	strbuf_init(&sb);
	ival r = cx_expr(&sb, e, &quiet, may_fail);
	strbuf_finish(&sb);
	return r;
}

void cx_negated(strbuf *sb, const expr *e, cx_env *env, bool *may_fail)
{
	piece p;
	gen(&p, e, env);
	*may_fail = p.fail;
	static const expr_op flip[][2] = {{OP_EQ, OP_NE}, {OP_NE, OP_EQ}, {OP_LT, OP_GE},
	                                  {OP_GE, OP_LT}, {OP_LE, OP_GT}, {OP_GT, OP_LE}};
	if (e->kind == EXPR_BINARY && (p.prec == 6 || p.prec == 7)) {
		/* the operands again, the operator turned round */
		piece a, b;
		gen(&a, e->a, env);
		gen(&b, e->b, env);
		piece n;
		strbuf_init(&n.sb);
		for (size_t i = 0; i < sizeof flip / sizeof *flip; i++)
			if (flip[i][0] == e->op)
				binary_op(&n, flip[i][1], &a, &b);
		strbuf_puts(sb, n.sb.data);
		strbuf_finish(&n.sb);
		strbuf_finish(&a.sb);
		strbuf_finish(&b.sb);
	} else if (e->kind == EXPR_UNARY && e->op == OP_NOT && p.prec == 11) {
		piece a;
		gen(&a, e->a, env);
		strbuf_puts(sb, a.sb.data);
		strbuf_finish(&a.sb);
	} else {
		strbuf_printf(sb, p.prec >= 11 ? "!%s" : "!(%s)", p.sb.data);
	}
	strbuf_finish(&p.sb);
}

/* ---- The helpers ------------------------------------------------------------- */

/* The checked ones return the result, or 0 after setting *e: division by
 * zero, overflow, a shift count outside [0, 63], log2 of a value <= 0, the
 * failures ir/expr.c reports. The others are what C lacks. Order matters:
 * a helper comes after those it calls. */
static const char *const helper_text[CH_COUNT] = {
	[CH_ASR] =
		"static int64_t aot_asr(int64_t a, int64_t n) /* a >> n, arithmetic */\n"
		"{\n"
		"\treturn a < 0 ? ~(~a >> n) : a >> n;\n"
		"}\n",
	[CH_CEIL] =
		"static int64_t aot_ceil(int64_t a, int64_t b) /* cdiv(a, b) where it cannot fail */\n"
		"{\n"
		"\treturn a / b + (a % b != 0 && (a % b < 0) == (b < 0));\n"
		"}\n",
	[CH_FLOORLOG2] =
		"static int64_t aot_floor_log2(int64_t a) /* log2(a) for a >= 1 */\n"
		"{\n"
		"\tint64_t n = 0;\n"
		"\twhile (a > 1)\n"
		"\t\ta >>= 1, n++;\n"
		"\treturn n;\n"
		"}\n",
	[CH_ADD] =
		"static int64_t aot_add(int64_t a, int64_t b, int *e)\n"
		"{\n"
		"\tif ((b > 0 && a > INT64_MAX - b) || (b < 0 && a < INT64_MIN - b))\n"
		"\t\treturn *e = 1, 0;\n"
		"\treturn a + b;\n"
		"}\n",
	[CH_SUB] =
		"static int64_t aot_sub(int64_t a, int64_t b, int *e)\n"
		"{\n"
		"\tif ((b < 0 && a > INT64_MAX + b) || (b > 0 && a < INT64_MIN + b))\n"
		"\t\treturn *e = 1, 0;\n"
		"\treturn a - b;\n"
		"}\n",
	[CH_MUL] =
		"static int64_t aot_mul(int64_t a, int64_t b, int *e)\n"
		"{\n"
		"\tif (a > 0 ? (b > 0 ? a > INT64_MAX / b : b < INT64_MIN / a)\n"
		"\t          : (b > 0 ? a < INT64_MIN / b : (a != 0 && b < INT64_MAX / a)))\n"
		"\t\treturn *e = 1, 0;\n"
		"\treturn a * b;\n"
		"}\n",
	[CH_DIV] =
		"static int64_t aot_div(int64_t a, int64_t b, int *e)\n"
		"{\n"
		"\tif (b == 0 || (a == INT64_MIN && b == -1))\n"
		"\t\treturn *e = 1, 0;\n"
		"\treturn a / b;\n"
		"}\n",
	[CH_MOD] =
		"static int64_t aot_mod(int64_t a, int64_t b, int *e)\n"
		"{\n"
		"\tif (b == 0 || (a == INT64_MIN && b == -1))\n"
		"\t\treturn *e = 1, 0;\n"
		"\treturn a % b;\n"
		"}\n",
	[CH_NEG] =
		"static int64_t aot_neg(int64_t a, int *e)\n"
		"{\n"
		"\tif (a == INT64_MIN)\n"
		"\t\treturn *e = 1, 0;\n"
		"\treturn -a;\n"
		"}\n",
	[CH_CDIV] =
		"static int64_t aot_cdiv(int64_t a, int64_t b, int *e)\n"
		"{\n"
		"\tif (b == 0 || (a == INT64_MIN && b == -1))\n"
		"\t\treturn *e = 1, 0;\n"
		"\treturn a / b + (a % b != 0 && (a % b < 0) == (b < 0));\n"
		"}\n",
	[CH_ALIGN] =
		"static int64_t aot_align(int64_t a, int64_t b, int *e)\n"
		"{\n"
		"\tint f = 0;\n"
		"\tint64_t q = aot_cdiv(a, b, &f);\n"
		"\treturn f ? (*e = 1, 0) : aot_mul(q, b, e);\n"
		"}\n",
	[CH_LOG2] =
		"static int64_t aot_log2(int64_t a, int *e)\n"
		"{\n"
		"\tint64_t n = 0;\n"
		"\tif (a <= 0)\n"
		"\t\treturn *e = 1, 0;\n"
		"\twhile (a > 1)\n"
		"\t\ta >>= 1, n++;\n"
		"\treturn n;\n"
		"}\n",
	[CH_SHL] =
		"static int64_t aot_shl(int64_t a, int64_t b, int *e)\n"
		"{\n"
		"\tint64_t x;\n"
		"\tif (b < 0 || b > 63)\n"
		"\t\treturn *e = 1, 0;\n"
		"\tx = (int64_t)((uint64_t)a << b);\n"
		"\tif (aot_asr(x, b) != a)\n"
		"\t\treturn *e = 1, 0;\n"
		"\treturn x;\n"
		"}\n",
	[CH_SHR] =
		"static int64_t aot_shr(int64_t a, int64_t b, int *e)\n"
		"{\n"
		"\tif (b < 0 || b > 63)\n"
		"\t\treturn *e = 1, 0;\n"
		"\treturn aot_asr(a, b);\n"
		"}\n",
};

void cx_helpers(strbuf *sb, const bool *used)
{
	static const int order[CH_COUNT] = {CH_ASR, CH_CEIL, CH_FLOORLOG2, CH_ADD, CH_SUB, CH_MUL, CH_DIV,
	                                    CH_MOD, CH_NEG, CH_CDIV, CH_ALIGN, CH_LOG2, CH_SHL, CH_SHR};
	bool u[CH_COUNT];
	memcpy(u, used, sizeof u);
	if (u[CH_SHL] || u[CH_SHR])
		u[CH_ASR] = true;
	if (u[CH_ALIGN])
		u[CH_CDIV] = u[CH_MUL] = true;
	for (int i = 0; i < CH_COUNT; i++)
		if (u[order[i]]) {
			strbuf_puts(sb, helper_text[order[i]]);
			strbuf_putc(sb, '\n');
		}
}
