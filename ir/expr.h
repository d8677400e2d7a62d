/* The expression language of the annotations (docs/spec.md §2): C integer
 * expressions over tunables and integer parameters, evaluated in 64-bit
 * signed arithmetic with division by zero and overflow reported.
 *
 *   cond    -> lor ('?' expr ':' cond)?
 *   lor     -> land ('||' land)*
 *   land    -> bor ('&&' bor)*
 *   bor     -> bxor ('|' bxor)*
 *   bxor    -> band ('^' band)*
 *   band    -> eq ('&' eq)*
 *   eq      -> rel (('==' | '!=') rel)*
 *   rel     -> shift (('<' | '<=' | '>' | '>=') shift)*
 *   shift   -> add (('<<' | '>>') add)*
 *   add     -> mul (('+' | '-') mul)*
 *   mul     -> unary (('*' | '/' | '%') unary)*
 *   unary   -> ('-' | '!' | '~' | '+') unary | primary
 *   primary -> INT | 'true' | 'false' | NAME | FUNC '(' args ')' | '(' cond ')'
 *   FUNC    -> cdiv | min | max | align | log2
 *   NAME    -> IDENT ('::' IDENT)*   (no space around '::')
 *
 * Nodes live in the arena handed to the parser. */
#ifndef AOTC_EXPR_H
#define AOTC_EXPR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arena.h"
#include "diag.h"
#include "util.h"

/* ---- Lexer, shared with the annotation parser -------------------------- */

typedef enum tok_kind {
	TOK_EOF,
	TOK_INT,    /* ival; decimal or 0x hex, no suffix */
	TOK_FLOAT,  /* fval; has '.' or an exponent */
	TOK_IDENT,  /* start/len; a qualified name (ns::NAME) is one */
	TOK_PUNCT,  /* start/len: one of ( ) { } , = ? : and the operators */
	TOK_ERROR,  /* a bad character or literal; already diagnosed */
} tok_kind;

typedef struct token {
	tok_kind kind;
	aotc_loc loc;
	const char *start;
	size_t len;
	int64_t ival;
	double fval;
} token;

/* Tokenises text[0..len), which starts at loc in its file; newlines in the
 * text advance the line. Errors are reported to d and counted in errors. */
typedef struct lexer {
	arena *arena;
	diags *d;
	const char *p, *end;
	aotc_loc loc;  /* position of p */
	token tok;     /* current token */
	int errors;
} lexer;

void lexer_init(lexer *l, arena *a, diags *d, const char *text, size_t len,
                aotc_loc loc);
void lexer_next(lexer *l);
/* True when the current token is punctuation s (e.g. "(" or "<=").*/
bool lexer_is(const lexer *l, const char *s);
/* True when the current token is identifier s. */
bool lexer_is_ident(const lexer *l, const char *s);
/* If the current token is punctuation s, consumes it and returns true. */
bool lexer_accept(lexer *l, const char *s);
/* Like lexer_accept, but diagnoses "expected 's'" when absent. */
bool lexer_expect(lexer *l, const char *s);
/* Copies the current token's text into the arena. */
char *lexer_text(const lexer *l);

/* ---- Trees ------------------------------------------------------------- */

typedef enum expr_kind {
	EXPR_INT,
	EXPR_NAME,
	EXPR_UNARY,
	EXPR_BINARY,
	EXPR_COND,
	EXPR_CALL,
} expr_kind;

typedef enum expr_op {
	/* unary */
	OP_NEG, OP_NOT, OP_BITNOT,
	/* binary */
	OP_MUL, OP_DIV, OP_MOD, OP_ADD, OP_SUB, OP_SHL, OP_SHR,
	OP_LT, OP_LE, OP_GT, OP_GE, OP_EQ, OP_NE,
	OP_BITAND, OP_XOR, OP_BITOR, OP_AND, OP_OR,
} expr_op;

typedef enum expr_func { FN_CDIV, FN_MIN, FN_MAX, FN_ALIGN, FN_LOG2 } expr_func;

typedef enum name_kind {
	NAME_UNRESOLVED,
	NAME_TUNABLE, /* index into the kernel's tunables */
	NAME_PARAM,   /* index into the kernel's function parameters */
	NAME_CONST,   /* a fixed value (a defaulted template parameter), in value */
} name_kind;

typedef struct expr {
	expr_kind kind;
	aotc_loc loc;        /* of the operator, name, literal or function */
	int64_t value;       /* EXPR_INT; EXPR_NAME bound to NAME_CONST */
	const char *name;    /* EXPR_NAME */
	name_kind name_kind; /* EXPR_NAME, set by expr_resolve */
	int index;           /* EXPR_NAME, set by expr_resolve */
	expr_op op;          /* EXPR_UNARY, EXPR_BINARY */
	expr_func func;      /* EXPR_CALL */
	struct expr *a, *b, *c; /* operands / arguments / cond ? b : c */
} expr;

/* Parses one conditional expression at the lexer's current token and stops
 * before the first token that cannot continue it (typically ',' or ')').
 * Returns NULL after diagnosing a malformed expression. */
expr *expr_parse(lexer *l);

/* Parses text as exactly one expression (trailing tokens are an error). */
expr *expr_parse_string(arena *a, diags *d, const char *text, size_t len,
                        aotc_loc loc);

/* ---- Names ------------------------------------------------------------- */

/* Maps a name to a tunable, a parameter (*index) or a constant (*index is
 * *value). Returns false for an unknown name; may
 * also reject a known name by returning false after its own diagnostic
 * (then it sets *diagnosed). */
typedef struct expr_scope {
	bool (*lookup)(void *ctx, const char *name, aotc_loc loc,
	               name_kind *kind, int *index, int64_t *value, bool *diagnosed);
	void *ctx;
	/* Optional: offers the names in scope (nearest_offer) for "did you
	 * mean" after an unknown name. */
	void (*suggest)(void *ctx, struct nearest *n);
} expr_scope;

/* Resolves every name in e; each unknown name is diagnosed as
 * "unknown name 'X'" at its position, with the scope's nearest name if
 * one is near. Returns the number of errors. */
int expr_resolve(expr *e, const expr_scope *scope, diags *d);

/* Calls fn for every EXPR_NAME node (in source order). */
void expr_visit_names(const expr *e, void (*fn)(void *ctx, const expr *name), void *ctx);

/* ---- Evaluation -------------------------------------------------------- */

typedef enum eval_status {
	EVAL_OK,
	EVAL_DIV_ZERO,  /* x / 0, x % 0, cdiv(x, 0), align(x, 0) */
	EVAL_OVERFLOW,  /* result outside int64, INT64_MIN / -1, shift count
	                   outside [0, 63], a << b that loses bits */
	EVAL_DOMAIN,    /* log2 of a value <= 0 */
	EVAL_UNBOUND,   /* a name the environment has no value for */
} eval_status;

const char *eval_status_name(eval_status s);

/* Values by index; a NULL array, or an index >= its count, is unbound. */
typedef struct eval_env {
	const int64_t *tunables;
	int ntunables;
	const int64_t *params;
	int nparams;
} eval_env;

/* Semantics: C's for literals, names and operators on int64_t ('/' and '%'
 * truncate toward zero, '>>' is arithmetic, comparisons and logical
 * operators give 0 or 1, '&&' '||' '?:' short-circuit); cdiv(a, b) is the
 * ceiling of a / b, align(a, b) = cdiv(a, b) * b, log2(a) the floor. */
eval_status expr_eval(const expr *e, const eval_env *env, int64_t *out);

/* ---- Printing ---------------------------------------------------------- */

/* Canonical source form with minimal parentheses: re-parsing it gives the
 * same tree (positions aside). Names print as written. */
void expr_print(strbuf *sb, const expr *e);

/* A C expression for emitted code: every operator application fully
 * parenthesised, each name through name() (e.g. to "p_M" or "t[2]"), and
 * functions as <prefix>cdiv(...) etc. so that the emitted file can supply
 * checked helpers. Literals print as INT64_C(n). */
typedef struct expr_c_style {
	void (*name)(void *ctx, strbuf *sb, const expr *name);
	void *ctx;
	const char *func_prefix;
} expr_c_style;

void expr_print_c(strbuf *sb, const expr *e, const expr_c_style *style);

#endif
