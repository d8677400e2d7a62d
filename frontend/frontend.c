/* libclang stays here. The walk: parse the translation unit (clang's own
 * errors in the user's files are reported as ours; those inside system
 * headers are not), collect every function with its aotc annotations, then
 * hand each annotated function of the main file to ir/ as a kernel.
 * Annotation arguments are re-read from the source text at the macro's
 * expansion position, so diagnostics point into the argument. Names the
 * annotations use that are no tunable or parameter are looked up, lazily,
 * among the file's constants (find_const). All of it runs in a child
 * process (frontend_parse, at the end). */
#include "frontend.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <clang-c/Index.h>
#include <jansson.h>

#include "util.h"

/* Embedded at build time (tools/embed.c). */
extern const char aotc_header_text[];
extern const size_t aotc_header_text_len;
extern const char cuda_shim_text[];
extern const size_t cuda_shim_text_len;
extern const char cuda_extras_text[];
extern const size_t cuda_extras_text_len;

#define VDIR "/__aotc__"

/* ---- CXString at the border --------------------------------------------- */

/* Copies a CXString into the arena and disposes it. */
static char *take(arena *a, CXString s)
{
	const char *c = clang_getCString(s);
	char *r = arena_strdup(a, c ? c : "");
	clang_disposeString(s);
	return r;
}

void frontend_clang_version(char buf[FRONTEND_VERSION_MAX])
{
	CXString s = clang_getClangVersion();
	snprintf(buf, FRONTEND_VERSION_MAX, "%s", clang_getCString(s));
	clang_disposeString(s);
}

static int clang_major(void)
{
	char version[FRONTEND_VERSION_MAX];
	frontend_clang_version(version);
	const char *v = strstr(version, "version ");
	return v ? atoi(v + 8) : 0;
}

/* ---- Source positions --------------------------------------------------- */

typedef struct walk {
	aotc_module *m;
	diags *d;
	CXTranslationUnit tu;
	const char *main_path;  /* as the user gave it */
	CXFile main_file;
	struct fn *fns;
	int nfns;
	size_t fns_cap;
	CXCursor *seen;         /* canonical cursors already taken */
	int nseen;
	size_t seen_cap;
	arena index_arena;      /* the constants' index, for the walk's lifetime */
	struct cand *cands;     /* the source's constants, indexed on first lookup */
	int ncands;
	size_t cands_cap;
	bool indexed;
	bool found_system_include;
	struct closure *used;   /* the code aotc reads (mark_used) */
	struct named *names;    /* top-level declarations and macros by name (code_hashes) */
	int nnames;
	int unused_errors;      /* clang's errors outside it, ignored */
} walk;

/* The file name to print for f: the user's spelling for the main file. */
static const char *file_name(walk *w, CXFile f)
{
	if (!f)
		return w->main_path;
	if (clang_File_isEqual(f, w->main_file))
		return w->main_path;
	return take(&w->m->arena, clang_getFileName(f));
}

static aotc_loc loc_of(walk *w, CXSourceLocation sl, unsigned *offset, CXFile *file)
{
	CXFile f;
	unsigned line, col, off;
	clang_getExpansionLocation(sl, &f, &line, &col, &off);
	if (offset)
		*offset = off;
	if (file)
		*file = f;
	return (aotc_loc){file_name(w, f), (int)line, (int)col};
}

static aotc_loc cursor_loc(walk *w, CXCursor c)
{
	return loc_of(w, clang_getCursorLocation(c), NULL, NULL);
}

/* The text of c's extent, from the file buffer (macro uses stay as
 * written). */
static char *extent_text(walk *w, CXCursor c)
{
	CXSourceRange r = clang_getCursorExtent(c);
	CXFile f1, f2;
	unsigned b, e;
	clang_getExpansionLocation(clang_getRangeStart(r), &f1, NULL, NULL, &b);
	clang_getExpansionLocation(clang_getRangeEnd(r), &f2, NULL, NULL, &e);
	size_t size;
	const char *buf = f1 ? clang_getFileContents(w->tu, f1, &size) : NULL;
	if (!buf || !clang_File_isEqual(f1, f2) || e < b || e > size)
		return NULL;
	return arena_strndup(&w->m->arena, buf + b, e - b);
}

static char *trim(char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	size_t n = strlen(s);
	while (n && isspace((unsigned char)s[n - 1]))
		s[--n] = 0;
	return s;
}

/* ---- Source constants ---------------------------------------------------- */

/* Annotation expressions may name the file's integer constants (docs/spec.md §2).
 * The first lookup indexes the candidates by name without evaluating any:
 * namespace-scope variables and enumerators (those of namespaces in system
 * headers are skipped) and macro definitions. A candidate is evaluated when
 * a name matches it, at most once. */
typedef struct cand {
	const char *qname;      /* fully qualified: "cfg::TILE", "Dir::X", "TILE" */
	size_t min_len;         /* shortest spelling: "X", or "Dir::X" for a scoped enum */
	CXCursor cursor;
	const_kind kind;
	bool user;              /* defined in the main file or a user header */
	int ndefs;              /* macros: definitions seen (#undef and #define again) */
	enum { CAND_NEW, CAND_BUSY, CAND_DONE } state;
	const_found found;
	int64_t value;
	const char *why;
	aotc_loc loc;
} cand;

typedef struct index_ctx {
	walk *w;
	const char *prefix;     /* "" or "ns::" */
} index_ctx;

static void add_cand(walk *w, CXCursor c, const_kind kind, const char *prefix,
                     const char *scope, const char *name)
{
	arena *a = &w->index_arena;
	const char *q = arena_printf(a, "%s%s%s%s", prefix, scope, scope[0] ? "::" : "", name);
	CXSourceLocation sl = clang_getCursorLocation(c);
	CXFile f;
	clang_getExpansionLocation(sl, &f, NULL, NULL, NULL);
	bool user = f && !clang_Location_isInSystemHeader(sl);
	for (int i = 0; i < w->ncands; i++) {
		cand *o = &w->cands[i];
		if (o->kind != kind || strcmp(o->qname, q) != 0)
			continue;
		/* A redeclaration (extern const int X; ... = 4) or a redefined
		 * macro: the definition, the last macro definition. */
		if (kind == CONST_MACRO || clang_isCursorDefinition(c)) {
			o->cursor = c;
			o->user = user;
		}
		o->ndefs++;
		return;
	}
	cand k = {.qname = q, .cursor = c, .kind = kind, .user = user, .ndefs = 1};
	k.min_len = strlen(name) + (scope[0] ? strlen(scope) + 2 : 0);
	ARENA_PUSH(a, w->cands, w->ncands, w->cands_cap, k);
}

static enum CXChildVisitResult visit_enum(CXCursor c, CXCursor parent, CXClientData data)
{
	index_ctx *ix = data;
	if (clang_getCursorKind(c) != CXCursor_EnumConstantDecl)
		return CXChildVisit_Continue;
	arena *a = &ix->w->index_arena;
	const char *name = take(a, clang_getCursorSpelling(c));
	const char *ename = take(a, clang_getCursorSpelling(parent));
	bool scoped = clang_EnumDecl_isScoped(parent);
	if (!scoped)
		add_cand(ix->w, c, CONST_ENUMERATOR, ix->prefix, "", name);
	/* E::X for scoped enums, and for plain ones as C++11 allows; an
	 * anonymous enum's spelling is "(unnamed enum at ...)" or empty. */
	if (ename[0] && !strchr(ename, ' ') && !strchr(ename, '('))
		add_cand(ix->w, c, CONST_ENUMERATOR, ix->prefix, ename, name);
	return CXChildVisit_Continue;
}

static enum CXChildVisitResult visit_index(CXCursor c, CXCursor parent, CXClientData data)
{
	(void)parent;
	index_ctx *ix = data;
	walk *w = ix->w;
	arena *a = &w->index_arena;
	enum CXCursorKind kind = clang_getCursorKind(c);
	bool nested = ix->prefix[0] != 0;
	switch (kind) {
	case CXCursor_MacroDefinition:
		if (!nested && !clang_Cursor_isMacroBuiltin(c))
			add_cand(w, c, CONST_MACRO, "", "", take(a, clang_getCursorSpelling(c)));
		break;
	case CXCursor_VarDecl:
		add_cand(w, c, CONST_VARIABLE, ix->prefix, "", take(a, clang_getCursorSpelling(c)));
		break;
	case CXCursor_EnumDecl: {
		index_ctx inner = *ix;
		clang_visitChildren(c, visit_enum, &inner);
		break;
	}
	case CXCursor_Namespace: {
		if (clang_Location_isInSystemHeader(clang_getCursorLocation(c)))
			break;
		const char *ns = take(a, clang_getCursorSpelling(c));
		index_ctx inner = {w, ns[0] ? arena_printf(a, "%s%s::", ix->prefix, ns) : ix->prefix};
		clang_visitChildren(c, visit_index, &inner);
		break;
	}
	case CXCursor_LinkageSpec:
		return CXChildVisit_Recurse;
	default:
		break;
	}
	return CXChildVisit_Continue;
}

static bool is_integral(CXType t)
{
	switch (clang_getCanonicalType(t).kind) {
	case CXType_Bool: case CXType_Char_U: case CXType_UChar: case CXType_Char16:
	case CXType_Char32: case CXType_UShort: case CXType_UInt: case CXType_ULong:
	case CXType_ULongLong: case CXType_Char_S: case CXType_SChar: case CXType_WChar:
	case CXType_Short: case CXType_Int: case CXType_Long: case CXType_LongLong:
	case CXType_Enum:
		return true;
	default:
		return false;
	}
}

static const_found find_const(void *ctx, const char *name, source_const *out, const char **why);

/* A macro body's names: the source's other constants. */
static bool lookup_in_macro(void *ctx, const char *name, aotc_loc loc, name_kind *kind,
                            int *index, int64_t *value, bool *diagnosed)
{
	(void)loc;
	(void)index;
	(void)diagnosed;
	source_const c;
	const char *why;
	if (find_const(ctx, name, &c, &why) != CONST_FOUND)
		return false;
	*kind = NAME_CONST;
	*value = c.value;
	return true;
}

/* Whether a macro body is one operand wherever it is expanded: one token,
 * a parenthesized whole, or a unary operator applied to such. */
static bool one_operand(const char **t, unsigned n)
{
	if (n == 1)
		return true;
	if (n >= 2 && (!strcmp(t[0], "-") || !strcmp(t[0], "+") || !strcmp(t[0], "~") ||
	               !strcmp(t[0], "!")))
		return one_operand(t + 1, n - 1);
	if (n < 2 || strcmp(t[0], "(") != 0)
		return false;
	int depth = 0;
	for (unsigned i = 0; i < n; i++) {
		depth += !strcmp(t[i], "(") - !strcmp(t[i], ")");
		if (depth == 0)
			return i == n - 1;
	}
	return false;
}

static void eval_macro(walk *w, cand *k)
{
	arena *a = &w->index_arena;
	if (clang_Cursor_isMacroFunctionLike(k->cursor)) {
		k->why = "is a function-like macro, not an integer constant";
		return;
	}
	CXToken *toks;
	unsigned n;
	clang_tokenize(w->tu, clang_getCursorExtent(k->cursor), &toks, &n);
	strbuf sb;
	strbuf_init(&sb);
	const char **body = arena_alloc(a, (n + 1) * sizeof *body);
	for (unsigned i = 1; i < n; i++) { /* toks[0] is the name */
		body[i - 1] = take(a, clang_getTokenSpelling(w->tu, toks[i]));
		strbuf_puts(&sb, i > 1 ? " " : "");
		strbuf_puts(&sb, body[i - 1]);
	}
	clang_disposeTokens(w->tu, toks, n);
	if (!sb.len) {
		k->why = "is a macro without a value, not an integer constant";
		strbuf_finish(&sb);
		return;
	}
	if (!one_operand(body, n - 1)) {
		/* `#define A 2 + 3` makes A * 2 eight in C; a value would make it ten. */
		k->why = arena_printf(a, "is a macro whose value '%s' is not parenthesized; write '#define %s (%s)' to use it as a constant",
		                      sb.data, k->qname, sb.data);
		strbuf_finish(&sb);
		return;
	}
	/* Parsed quietly: what fails is reported at the use, as one error. */
	diags quiet;
	diags_init(&quiet);
	quiet.out = NULL;
	arena scratch;
	arena_init(&scratch);
	expr *e = expr_parse_string(&scratch, &quiet, sb.data, sb.len, k->loc);
	expr_scope scope = {lookup_in_macro, w, NULL};
	int64_t v;
	if (e && expr_resolve(e, &scope, &quiet) == 0 &&
	    expr_eval(e, &(eval_env){0}, &v) == EVAL_OK) {
		k->found = CONST_FOUND;
		k->value = v;
	} else {
		k->why = arena_printf(a, "is a macro whose value '%s' is not an integer constant expression",
		                      sb.data);
	}
	arena_finish(&scratch);
	diags_finish(&quiet);
	strbuf_finish(&sb);
}

static void eval_cand(walk *w, cand *k)
{
	arena *a = &w->index_arena;
	k->found = CONST_NOT_INTEGER;
	CXFile f;
	unsigned line, col;
	clang_getExpansionLocation(clang_getCursorLocation(k->cursor), &f, &line, &col, NULL);
	k->loc = f ? (aotc_loc){file_name(w, f), (int)line, (int)col}
	           : (aotc_loc){"<command line>", 0, 0};
	if (k->kind == CONST_ENUMERATOR) {
		k->found = CONST_FOUND;
		k->value = clang_getEnumConstantDeclValue(k->cursor);
		return;
	}
	if (k->kind == CONST_MACRO) {
		eval_macro(w, k);
		return;
	}
	CXType t = clang_getCursorType(k->cursor);
	const char *type = take(a, clang_getTypeSpelling(t));
	if (!is_integral(t)) {
		k->why = arena_printf(a, "is a constant of type '%s', not an integer", type);
		if (!clang_isConstQualifiedType(t))
			k->why = arena_printf(a, "is a variable of type '%s', not an integer constant",
			                      type);
		return;
	}
	if (!clang_isConstQualifiedType(t)) {
		k->why = arena_printf(a, "is a variable of type '%s', not a constant (declare it const or constexpr)",
		                      type);
		return;
	}
	CXEvalResult r = clang_Cursor_Evaluate(k->cursor);
	if (!r || clang_EvalResult_getKind(r) != CXEval_Int) {
		k->why = "has no value known at compile time (its initializer is not a constant expression)";
	} else if (clang_EvalResult_isUnsignedInt(r) &&
	           clang_EvalResult_getAsUnsigned(r) > (unsigned long long)INT64_MAX) {
		k->why = "does not fit in a 64-bit signed integer";
	} else {
		k->found = CONST_FOUND;
		k->value = clang_EvalResult_getAsLongLong(r);
	}
	if (r)
		clang_EvalResult_dispose(r);
}

/* Whether name spells q: q itself, or a tail of it after a '::' that keeps
 * at least min_len characters (a scoped enumerator needs its enum). */
static bool spells(const char *name, const cand *k)
{
	size_t n = strlen(name), qn = strlen(k->qname);
	if (n < k->min_len || n > qn || strcmp(k->qname + qn - n, name) != 0)
		return false;
	return n == qn || (k->qname[qn - n - 1] == ':' && k->qname[qn - n - 2] == ':');
}

static cand *match_cand(walk *w, const char *name, const char **why)
{
	if (!w->indexed) {
		index_ctx ix = {w, ""};
		clang_visitChildren(clang_getTranslationUnitCursor(w->tu), visit_index, &ix);
		w->indexed = true;
	}
	/* The exact qualified name, else the one match of the user's files,
	 * else the one match of the system headers. */
	cand *exact[2] = {NULL, NULL}, *best[2] = {NULL, NULL}, *second[2] = {NULL, NULL};
	for (int i = 0; i < w->ncands; i++) {
		cand *k = &w->cands[i];
		if (strcmp(k->qname, name) == 0 && !exact[k->user ? 0 : 1])
			exact[k->user ? 0 : 1] = k;
		if (!spells(name, k))
			continue;
		int u = k->user ? 0 : 1;
		if (!best[u])
			best[u] = k;
		else if (!second[u])
			second[u] = k;
	}
	*why = NULL;
	if (exact[0] || exact[1])
		return exact[0] ? exact[0] : exact[1];
	int u = best[0] ? 0 : 1;
	if (best[u] && second[u]) {
		*why = arena_printf(&w->index_arena, "is ambiguous: '%s' or '%s' (write the qualified name)",
		                    best[u]->qname, second[u]->qname);
		return NULL;
	}
	return best[u];
}

/* A class's static constant as the user's code spells it (x128::size,
 * with x128 a typedef of Packed128<floatX>): not in the index, which holds
 * namespace-scope names only, and its value may need the class template
 * instantiated, which only the code that uses it does. So the name is
 * looked for where the user's files use it: a DeclRefExpr spelt so whose
 * declaration is a variable (the instantiated member, which clang can
 * evaluate). Found, it joins the index under that spelling. */
typedef struct member_search {
	walk *w;
	const char *name;
	CXCursor found;
} member_search;

static bool same_spelling(const char *text, const char *name)
{
	for (;; text++, name++) {
		while (isspace((unsigned char)*text))
			text++;
		if (*text != *name)
			return false;
		if (!*text)
			return true;
	}
}

static enum CXChildVisitResult visit_members(CXCursor c, CXCursor parent, CXClientData data)
{
	(void)parent;
	member_search *ms = data;
	if (clang_Location_isInSystemHeader(clang_getCursorLocation(c)))
		return CXChildVisit_Continue;
	if (clang_getCursorKind(c) == CXCursor_DeclRefExpr) {
		CXCursor r = clang_getCursorReferenced(c);
		char *text;
		if (clang_getCursorKind(r) == CXCursor_VarDecl &&
		    clang_getCursorKind(clang_getCursorSemanticParent(r)) != CXCursor_TranslationUnit &&
		    (text = extent_text(ms->w, c)) && same_spelling(text, ms->name)) {
			ms->found = r;
			return CXChildVisit_Break;
		}
	}
	return CXChildVisit_Recurse;
}

static cand *find_member_const(walk *w, const char *name)
{
	member_search ms = {w, name, clang_getNullCursor()};
	clang_visitChildren(clang_getTranslationUnitCursor(w->tu), visit_members, &ms);
	if (clang_Cursor_isNull(ms.found))
		return NULL;
	cand k = {.qname = arena_strdup(&w->index_arena, name), .min_len = strlen(name),
	          .cursor = ms.found, .kind = CONST_VARIABLE, .user = true, .ndefs = 1};
	ARENA_PUSH(&w->index_arena, w->cands, w->ncands, w->cands_cap, k);
	return &w->cands[w->ncands - 1];
}

static const_found find_const(void *ctx, const char *name, source_const *out, const char **why)
{
	walk *w = ctx;
	const char *amb;
	cand *k = match_cand(w, name, &amb);
	if (!k && !amb && strstr(name, "::"))
		k = find_member_const(w, name);
	if (!k) {
		if (!amb)
			return CONST_UNKNOWN;
		*why = amb;
		out->loc = (aotc_loc){w->main_path, 0, 0};
		return CONST_NOT_INTEGER;
	}
	if (k->state == CAND_BUSY) {
		*why = "is defined in terms of itself";
		out->loc = k->loc;
		return CONST_NOT_INTEGER;
	}
	if (k->state == CAND_NEW) {
		k->state = CAND_BUSY;
		eval_cand(w, k);
		k->state = CAND_DONE;
	}
	out->name = k->qname;
	out->loc = k->loc;
	out->kind = k->kind;
	out->value = k->value;
	*why = k->why;
	return k->found;
}

/* The user's constants for "did you mean": qualified names and their
 * shortest spelling. */
static void offer_consts(void *ctx, nearest *n)
{
	walk *w = ctx;
	const char *why;
	match_cand(w, "", &why); /* indexes the source once */
	for (int i = 0; i < w->ncands; i++) {
		const cand *k = &w->cands[i];
		if (!k->user)
			continue;
		nearest_offer(n, k->qname);
		nearest_offer(n, k->qname + strlen(k->qname) - k->min_len);
	}
}

/* Whether raw annotation text that differs from the preprocessor's only
 * by macros may be used as written: every macro in it is an object-like
 * macro of the user's files, defined once, with an integer value (so that
 * the IR keeps the names and diagnostics point into the argument). */
static bool macros_are_constants(walk *w, const char *raw, size_t len)
{
	diags quiet;
	diags_init(&quiet);
	quiet.out = NULL;
	arena scratch;
	arena_init(&scratch);
	lexer l;
	lexer_init(&l, &scratch, &quiet, raw, len, (aotc_loc){w->main_path, 1, 1});
	int macros = 0;
	bool ok = true;
	for (; ok && l.tok.kind != TOK_EOF; lexer_next(&l)) {
		if (l.tok.kind == TOK_ERROR) {
			ok = false;
			break;
		}
		if (l.tok.kind != TOK_IDENT)
			continue;
		char *name = lexer_text(&l);
		const char *why;
		cand *k = match_cand(w, name, &why);
		if (!k || k->kind != CONST_MACRO)
			continue;
		source_const c;
		macros++;
		ok = k->user && k->ndefs == 1 && find_const(w, name, &c, &why) == CONST_FOUND;
	}
	arena_finish(&scratch);
	diags_finish(&quiet);
	return ok && macros > 0;
}

/* ---- Collecting functions ---------------------------------------------- */

typedef struct annotation {
	const char *kind;       /* "tune", ... */
	const char *text;
	size_t len;
	aotc_loc loc;
} annotation;

typedef struct fn {
	CXCursor cursor;
	const char *name;
	aotc_loc loc;
	bool in_main, is_global, is_template;
	bool is_device, is_host; /* __device__, __host__ written (either may be) */
	bool in_namespace;      /* declared inside a namespace */
	annotation *annots;
	int nannots;
	size_t annots_cap;
	const char **param_types; /* keys to compare with the reference (parameter_type_key) */
	const char **param_spellings; /* as declared, for messages */
	const char **param_names;
	int nparams;
	size_t params_cap, spellings_cap, names_cap;
	const char *result_type;  /* canonical, for AOTC_EXTERN's cudaError_t */
	const char *result_spelling; /* as declared, for messages */
	bool used_as_reference;
} fn;

/* Finds the argument list of the macro use at offset in the file buffer:
 * "AOTC_TUNE ( args )". Returns false if the text there is not a call of
 * macro (the annotation came through another macro). */
static bool macro_args(const char *buf, size_t size, unsigned offset, const char *macro,
                       aotc_loc at, const char **text, size_t *len, aotc_loc *loc)
{
	size_t n = strlen(macro);
	if (offset + n > size || memcmp(buf + offset, macro, n) != 0)
		return false;
	size_t i = offset + n;
	aotc_loc l = at;
	l.col += (int)n;
	while (i < size && isspace((unsigned char)buf[i])) {
		if (buf[i] == '\n') {
			l.line++;
			l.col = 1;
		} else {
			l.col++;
		}
		i++;
	}
	if (i >= size || buf[i] != '(')
		return false;
	i++;
	l.col++;
	size_t start = i;
	int depth = 0;
	char quote = 0;
	for (; i < size; i++) {
		char c = buf[i];
		if (quote) {
			if (c == '\\')
				i++;
			else if (c == quote)
				quote = 0;
		} else if (c == '"' || c == '\'') {
			quote = c;
		} else if (c == '(') {
			depth++;
		} else if (c == ')') {
			if (depth-- == 0)
				break;
		}
	}
	if (i >= size)
		return false;
	*text = buf + start;
	*len = i - start;
	*loc = l;
	return true;
}

/* Whether raw source text and the preprocessor's stringification of it
 * hold the same tokens: comments and whitespace runs count as one space. */
static bool same_tokens(const char *raw, size_t len, const char *str)
{
	strbuf sb;
	strbuf_init(&sb);
	bool space = false;
	for (size_t i = 0; i < len; i++) {
		if (raw[i] == '/' && i + 1 < len && raw[i + 1] == '/') {
			while (i < len && raw[i] != '\n')
				i++;
			space = true;
		} else if (raw[i] == '/' && i + 1 < len && raw[i + 1] == '*') {
			for (i += 2; i + 1 < len && !(raw[i] == '*' && raw[i + 1] == '/'); i++)
				;
			i++;
			space = true;
		} else if (isspace((unsigned char)raw[i]) || raw[i] == '\\') {
			space = true;
		} else {
			if (space && sb.len)
				strbuf_putc(&sb, ' ');
			space = false;
			strbuf_putc(&sb, raw[i]);
		}
	}
	bool same = strcmp(sb.data, str) == 0;
	strbuf_finish(&sb);
	return same;
}

/* "AOTC_VALID_IF" for the annotation kind "valid_if". */
static const char *macro_name(arena *a, const char *kind)
{
	char *s = arena_printf(a, "AOTC_%s", kind);
	for (char *p = s; *p; p++)
		*p = (char)toupper((unsigned char)*p);
	return s;
}

static void add_annotation(walk *w, fn *f, CXCursor attr)
{
	CXString s = clang_getCursorSpelling(attr);
	const char *spelling = clang_getCString(s);
	if (!spelling || strncmp(spelling, "aotc.", 5) != 0) {
		clang_disposeString(s);
		return;
	}
	const char *colon = strchr(spelling, ':');
	size_t klen = colon ? (size_t)(colon - spelling - 5) : strlen(spelling + 5);
	annotation a;
	a.kind = arena_strndup(&w->m->arena, spelling + 5, klen);
	unsigned offset;
	CXFile file;
	a.loc = loc_of(w, clang_getCursorLocation(attr), &offset, &file);

	const char *macro = macro_name(&w->m->arena, a.kind);
	/* The preprocessor's text of the arguments (macros in them expanded)
	 * decides; the source text is used when it holds the same tokens, so
	 * that positions point into the argument. */
	const char *args = colon ? colon + 1 : "";
	size_t size = 0;
	const char *buf = file ? clang_getFileContents(w->tu, file, &size) : NULL;
	const char *raw;
	size_t rawlen;
	aotc_loc rawloc;
	if (buf && macro_args(buf, size, offset, macro, a.loc, &raw, &rawlen, &rawloc)) {
		a.loc = rawloc;
		if (same_tokens(raw, rawlen, args) || macros_are_constants(w, raw, rawlen)) {
			a.text = raw;
			a.len = rawlen;
		} else {
			a.text = arena_strdup(&w->m->arena, args);
			a.len = strlen(args);
		}
	} else {
		a.text = arena_strdup(&w->m->arena, args);
		a.len = strlen(args);
	}
	clang_disposeString(s);
	ARENA_PUSH(&w->m->arena, f->annots, f->nannots, f->annots_cap, a);
}

static const char *unqualified(arena *a, const char *s);

/* A parameter's type as a caller sees it, for comparing a kernel with its
 * reference: qualifiers of the parameter itself (`float *__restrict`,
 * `const int`) do not change the signature, and neither does `const` or
 * `volatile` on a pointer's pointee (the reference reads the same buffers,
 * usually through `const float *`). */
static const char *parameter_type_key(arena *a, CXType t)
{
	CXType c = clang_getCanonicalType(t);
	if (c.kind == CXType_Pointer) {
		const char *pointee = unqualified(a, take(a, clang_getTypeSpelling(clang_getPointeeType(c))));
		return arena_printf(a, "%s *", pointee);
	}
	return unqualified(a, take(a, clang_getTypeSpelling(c)));
}

static enum CXChildVisitResult visit_fn_child(CXCursor c, CXCursor parent, CXClientData data)
{
	(void)parent;
	void **ctx = data;
	walk *w = ctx[0];
	fn *f = ctx[1];
	switch (clang_getCursorKind(c)) {
	case CXCursor_AnnotateAttr:
		add_annotation(w, f, c);
		break;
	case CXCursor_CUDAGlobalAttr:
		f->is_global = true;
		break;
	case CXCursor_CUDADeviceAttr:
		f->is_device = true;
		break;
	case CXCursor_CUDAHostAttr:
		f->is_host = true;
		break;
	case CXCursor_ParmDecl: {
		arena *a = &w->m->arena;
		CXType t = clang_getCursorType(c);
		int n = f->nparams;
		ARENA_PUSH(a, f->param_spellings, n, f->spellings_cap, take(a, clang_getTypeSpelling(t)));
		n = f->nparams;
		ARENA_PUSH(a, f->param_names, n, f->names_cap, take(a, clang_getCursorSpelling(c)));
		ARENA_PUSH(a, f->param_types, f->nparams, f->params_cap, parameter_type_key(a, t));
		break;
	}
	default:
		break;
	}
	return CXChildVisit_Continue;
}

static bool seen_before(walk *w, CXCursor c)
{
	CXCursor canon = clang_getCanonicalCursor(c);
	for (int i = 0; i < w->nseen; i++)
		if (clang_equalCursors(w->seen[i], canon))
			return true;
	ARENA_PUSH(&w->m->arena, w->seen, w->nseen, w->seen_cap, canon);
	return false;
}

static void collect_fn(walk *w, CXCursor c, bool is_template)
{
	CXFile file;
	loc_of(w, clang_getCursorLocation(c), NULL, &file);
	if (!file || clang_Location_isInSystemHeader(clang_getCursorLocation(c)))
		return;
	fn f = {.cursor = c, .is_template = is_template};
	f.name = take(&w->m->arena, clang_getCursorSpelling(c));
	f.loc = cursor_loc(w, c);
	f.in_main = clang_File_isEqual(file, w->main_file);
	f.in_namespace = clang_getCursorKind(clang_getCursorSemanticParent(c)) == CXCursor_Namespace;
	CXType result = clang_getCursorResultType(c);
	f.result_type = parameter_type_key(&w->m->arena, result);
	f.result_spelling = take(&w->m->arena, clang_getTypeSpelling(result));
	void *ctx[2] = {w, &f};
	clang_visitChildren(c, visit_fn_child, ctx);
	/* A redeclaration repeats (or inherits) the annotations of the first
	 * declaration; only the first annotated one counts. */
	if (f.nannots && seen_before(w, c))
		return;
	ARENA_PUSH(&w->m->arena, w->fns, w->nfns, w->fns_cap, f);
}

static enum CXChildVisitResult visit_top(CXCursor c, CXCursor parent, CXClientData data)
{
	(void)parent;
	walk *w = data;
	switch (clang_getCursorKind(c)) {
	case CXCursor_FunctionDecl:
		collect_fn(w, c, false);
		break;
	case CXCursor_FunctionTemplate:
		collect_fn(w, c, true);
		break;
	case CXCursor_Namespace:
	case CXCursor_LinkageSpec:
		return CXChildVisit_Recurse;
	default:
		break;
	}
	return CXChildVisit_Continue;
}

/* ---- The code aotc reads -------------------------------------------------- */

/* Files like the ones people have hold host code, main() and helpers that
 * clang cannot parse as nvcc does (an intrinsic clang lacks, host overloads
 * nvcc's headers add). aotc reads only the annotated kernels, their
 * references and library routines, and what those use: the
 * declarations they reference (functions, templates, types, variables),
 * transitively, in the user's files. A clang error inside that code is the
 * user's to fix; one outside it cannot change what aotc reads, so it is
 * counted and ignored (report_clang_diagnostics). A whole class counts as
 * used when any member is. */
typedef struct span {
	CXFile file;
	unsigned begin, end;    /* offsets of the expansion range */
	CXCursor cursor;        /* the declaration */
} span;

/* A set of declarations closed under "references": the spans of the
 * declarations taken, and the hash set that keeps each once. Its memory is
 * the arena's. */
typedef struct closure {
	arena *a;
	span *spans;
	int nspans;
	size_t spans_cap;
	CXCursor *pending;      /* declarations whose references are still to follow */
	int npending;
	size_t pending_cap;
	CXCursor *marked;       /* declarations already taken: a hash set (mark) */
	size_t nmarked, marked_cap;
} closure;

static bool span_of(CXCursor c, span *out)
{
	CXSourceRange r = clang_getCursorExtent(c);
	CXFile f2;
	clang_getExpansionLocation(clang_getRangeStart(r), &out->file, NULL, NULL, &out->begin);
	clang_getExpansionLocation(clang_getRangeEnd(r), &f2, NULL, NULL, &out->end);
	out->cursor = c;
	return out->file && clang_File_isEqual(out->file, f2) && out->begin <= out->end;
}

static bool in_used(const walk *w, CXFile f, unsigned offset)
{
	for (int i = 0; i < w->used->nspans; i++)
		if (offset >= w->used->spans[i].begin && offset <= w->used->spans[i].end &&
		    clang_File_isEqual(f, w->used->spans[i].file))
			return true;
	return false;
}

static void use_decl(closure *cl, CXCursor c);

/* Adds c to the set of declarations already taken; false if it was there. */
static bool mark(closure *cl, CXCursor c)
{
	if (2 * (cl->nmarked + 1) > cl->marked_cap) {
		size_t cap = cl->marked_cap ? 2 * cl->marked_cap : 1024;
		CXCursor *t = arena_alloc(cl->a, cap * sizeof *t);
		for (size_t i = 0; i < cap; i++)
			t[i] = clang_getNullCursor();
		for (size_t i = 0; i < cl->marked_cap; i++) {
			if (clang_Cursor_isNull(cl->marked[i]))
				continue;
			size_t j = clang_hashCursor(cl->marked[i]) & (cap - 1);
			while (!clang_Cursor_isNull(t[j]))
				j = (j + 1) & (cap - 1);
			t[j] = cl->marked[i];
		}
		cl->marked = t;
		cl->marked_cap = cap;
	}
	size_t j = clang_hashCursor(c) & (cl->marked_cap - 1);
	for (; !clang_Cursor_isNull(cl->marked[j]); j = (j + 1) & (cl->marked_cap - 1))
		if (clang_equalCursors(cl->marked[j], c))
			return false;
	cl->marked[j] = c;
	cl->nmarked++;
	return true;
}

/* A declaration inside a function (a local, a parameter, a template
 * parameter): visiting the function covers it. */
static bool is_local(CXCursor c)
{
	switch (clang_getCursorKind(clang_getCursorSemanticParent(c))) {
	case CXCursor_FunctionDecl: case CXCursor_FunctionTemplate: case CXCursor_CXXMethod:
	case CXCursor_Constructor: case CXCursor_Destructor: case CXCursor_ConversionFunction:
		return true;
	default:
		return false;
	}
}

static enum CXChildVisitResult visit_used(CXCursor c, CXCursor parent, CXClientData data)
{
	(void)parent;
	closure *cl = data;
	enum CXCursorKind kind = clang_getCursorKind(c);
	if (kind == CXCursor_OverloadedDeclRef) {
		/* A dependent call in a template: any overload may be the one. */
		unsigned n = clang_getNumOverloadedDecls(c);
		for (unsigned i = 0; i < n; i++)
			use_decl(cl, clang_getOverloadedDecl(c, i));
	} else if (clang_isReference(kind) || clang_isExpression(kind)) {
		CXCursor r = clang_getCursorReferenced(c);
		if (!clang_Cursor_isNull(r) && clang_isDeclaration(clang_getCursorKind(r)))
			use_decl(cl, r);
	}
	return CXChildVisit_Recurse;
}

static bool is_virtual(CXFile f);

/* Takes c's span and queues c, so that what it references is taken too;
 * false if it was taken already. aotc's own headers (the shim, aotc.h) are
 * not the user's code, and neither is a declaration clang made up where a
 * builtin (__syncthreads) is first used: its extent is its name alone. */
static bool take_decl(closure *cl, CXCursor c)
{
	span sp;
	if (!mark(cl, c) || !span_of(c, &sp) || is_virtual(sp.file))
		return false;
	CXString name = clang_getCursorSpelling(c);
	bool implicit = clang_getCursorKind(c) == CXCursor_FunctionDecl &&
	                sp.end - sp.begin == strlen(clang_getCString(name));
	clang_disposeString(name);
	if (implicit)
		return false;
	ARENA_PUSH(cl->a, cl->spans, cl->nspans, cl->spans_cap, sp);
	/* Visited by close_over's loop, not here: a chain of a million
	 * calls must not be a million nested visits. */
	ARENA_PUSH(cl->a, cl->pending, cl->npending, cl->pending_cap, c);
	return true;
}

/* Takes declaration c (its definition, its template, its outermost class):
 * a whole class counts when any member does. */
static void use_decl(closure *cl, CXCursor c)
{
	if (clang_Location_isInSystemHeader(clang_getCursorLocation(c)))
		return;
	CXCursor def = clang_getCursorDefinition(c);
	if (!clang_Cursor_isNull(def))
		c = def;
	CXCursor tmpl = clang_getSpecializedCursorTemplate(c);
	if (!clang_Cursor_isNull(tmpl))
		c = tmpl;
	for (CXCursor p = clang_getCursorSemanticParent(c); !clang_Cursor_isNull(p) &&
	     !clang_isInvalid(clang_getCursorKind(p)); p = clang_getCursorSemanticParent(p)) {
		enum CXCursorKind k = clang_getCursorKind(p);
		if (k != CXCursor_StructDecl && k != CXCursor_ClassDecl && k != CXCursor_UnionDecl &&
		    k != CXCursor_ClassTemplate && k != CXCursor_ClassTemplatePartialSpecialization)
			break;
		c = p;
	}
	/* A namespace is not one declaration: what is used of it is taken
	 * member by member. */
	if (clang_Location_isInSystemHeader(clang_getCursorLocation(c)) || is_local(c) ||
	    clang_getCursorKind(c) == CXCursor_Namespace)
		return;
	take_decl(cl, c);
}

/* Follows the references of everything queued. */
static void close_over(closure *cl)
{
	while (cl->npending > 0)
		clang_visitChildren(cl->pending[--cl->npending], visit_used, cl);
}

/* Whether name is one of the identifiers of an annotation's text. */
static bool names_in(const char *text, size_t len, const char *name)
{
	size_t n = strlen(name);
	for (size_t i = 0; i + n <= len; i++) {
		if (memcmp(text + i, name, n) != 0)
			continue;
		bool before = i > 0 && (isalnum((unsigned char)text[i - 1]) || text[i - 1] == '_');
		bool after = i + n < len && (isalnum((unsigned char)text[i + n]) || text[i + n] == '_');
		if (!before && !after)
			return true;
	}
	return false;
}

/* The roots: the main file's annotated functions and every function an
 * AOTC_REFERENCE or AOTC_EXTERN names. */
static void mark_used(walk *w)
{
	const annotation **naming = NULL;   /* the annotations that name functions */
	int nnaming = 0;
	size_t naming_cap = 0;
	w->used = arena_alloc(&w->index_arena, sizeof *w->used);
	*w->used = (closure){.a = &w->index_arena};
	for (int j = 0; j < w->nfns; j++)
		for (int a = 0; a < w->fns[j].nannots; a++) {
			const annotation *an = &w->fns[j].annots[a];
			if (!strcmp(an->kind, "reference") || !strcmp(an->kind, "extern"))
				ARENA_PUSH(&w->index_arena, naming, nnaming, naming_cap, an);
		}
	for (int i = 0; i < w->nfns; i++) {
		fn *f = &w->fns[i];
		bool root = f->in_main && f->nannots;
		for (int a = 0; !root && a < nnaming; a++)
			root = names_in(naming[a]->text, naming[a]->len, f->name);
		if (!root)
			continue;
		/* The annotated declaration, then (use_decl) its definition,
		 * which is taken already where they are one. */
		take_decl(w->used, f->cursor);
		use_decl(w->used, f->cursor);
	}
	close_over(w->used);
}

/* ---- Code identity -------------------------------------------------------- */

/* A measurement belongs to what was compiled and checked (docs/database.md,
 * "The key"): kernel.code and extern_fn.code hash the tokens of the function,
 * of its reference and of everything they use in the user's files (the
 * closure of their references, widened by name to macros and to every
 * namespace-scope declaration an identifier names: overloads, explicit
 * specialisations, what a dependent call may find), comments and
 * whitespace ignored, with the -D definitions. The annotations that only
 * choose what is tried (TUNE, REQUIRE, SHAPES, FEATURES, METRIC,
 * ALTERNATIVE, EXTERN) are left out; those that change a measurement
 * (VALID_IF, GRID, BLOCK, SMEM, BUFFER, VALUE, TOLERANCE, REFERENCE, TYPES)
 * are in. An alternative or a routine is checked against the primary's
 * buffers, values and reference, so their annotations are in its code too. */
typedef struct named {
	const char *name;
	CXCursor cursor;
} named;

static fn *find_fn(walk *w, const char *name);

static int named_cmp(const void *a, const void *b)
{
	return strcmp(((const named *)a)->name, ((const named *)b)->name);
}

static enum CXChildVisitResult visit_names(CXCursor c, CXCursor parent, CXClientData data)
{
	(void)parent;
	void **ctx = data;
	walk *w = ctx[0];
	size_t *cap = ctx[1];
	enum CXCursorKind kind = clang_getCursorKind(c);
	if (kind == CXCursor_Namespace || kind == CXCursor_LinkageSpec)
		return CXChildVisit_Recurse;
	CXSourceLocation at = clang_getCursorLocation(c);
	CXFile f;
	clang_getExpansionLocation(at, &f, NULL, NULL, NULL);
	if (!f || clang_Location_isInSystemHeader(at) || is_virtual(f))
		return CXChildVisit_Continue;
	if (kind != CXCursor_MacroDefinition && !clang_isDeclaration(kind))
		return CXChildVisit_Continue;
	const char *name = take(&w->index_arena, clang_getCursorSpelling(c));
	if (*name)
		ARENA_PUSH(&w->index_arena, w->names, w->nnames, *cap, ((named){name, c}));
	return CXChildVisit_Continue;
}

static void index_names(walk *w)
{
	size_t cap = 0;
	void *ctx[2] = {w, &cap};
	clang_visitChildren(clang_getTranslationUnitCursor(w->tu), visit_names, ctx);
	if (w->nnames)
		qsort(w->names, (size_t)w->nnames, sizeof *w->names, named_cmp);
}

/* Takes every declaration and macro named name (a macro's definition as it
 * is: no definition, template or class to go up to). */
static void take_named(walk *w, closure *cl, const char *name)
{
	named key = {.name = name};
	const named *hit = w->nnames ? bsearch(&key, w->names, (size_t)w->nnames, sizeof key, named_cmp) : NULL;
	if (!hit)
		return;
	while (hit > w->names && strcmp(hit[-1].name, name) == 0)
		hit--;
	for (; hit < w->names + w->nnames && strcmp(hit->name, name) == 0; hit++)
		if (clang_getCursorKind(hit->cursor) == CXCursor_MacroDefinition)
			take_decl(cl, hit->cursor);
		else
			use_decl(cl, hit->cursor);
}

typedef enum { TOKENS_CODE, TOKENS_CONTRACT } token_mode;

/* Whether an annotation macro's invocation stays in a code hash: in
 * TOKENS_CODE those that change a measurement, in TOKENS_CONTRACT only the
 * primary's checks, which its alternatives and routines share. */
static bool annotation_kept(const char *macro, token_mode mode)
{
	static const char *const code[] = {"VALID_IF", "GRID", "BLOCK", "SMEM", "BUFFER", "VALUE",
	                                   "TOLERANCE", "REFERENCE", "TYPES"};
	static const char *const contract[] = {"BUFFER", "VALUE", "TOLERANCE", "REFERENCE", "TYPES"};
	const char *const *set = mode == TOKENS_CODE ? code : contract;
	size_t n = mode == TOKENS_CODE ? COUNTOF(code) : COUNTOF(contract);
	for (size_t i = 0; i < n; i++)
		if (strcmp(macro + 5, set[i]) == 0)
			return true;
	return false;
}

/* Appends the tokens of c's extent to sb (each, then a NUL), and names the
 * identifiers to the closure. TOKENS_CONTRACT: only the kept annotations. */
static void put_tokens(walk *w, closure *cl, strbuf *sb, const span *sp, token_mode mode)
{
	CXToken *toks;
	unsigned n;
	/* By the expansion range: an extent that starts inside a macro
	 * (__global__, __launch_bounds__) would tokenize to nothing. */
	CXSourceRange range = clang_getRange(clang_getLocationForOffset(w->tu, sp->file, sp->begin),
	                                     clang_getLocationForOffset(w->tu, sp->file, sp->end));
	clang_tokenize(w->tu, range, &toks, &n);
	for (unsigned i = 0; i < n; i++) {
		CXTokenKind kind = clang_getTokenKind(toks[i]);
		if (kind == CXToken_Comment)
			continue;
		CXString s = clang_getTokenSpelling(w->tu, toks[i]);
		const char *t = clang_getCString(s);
		bool annotation = kind == CXToken_Identifier && t && strncmp(t, "AOTC_", 5) == 0 && i + 1 < n &&
		                  clang_getTokenKind(toks[i + 1]) == CXToken_Punctuation;
		unsigned end = i;
		if (annotation) {
			CXString p = clang_getTokenSpelling(w->tu, toks[i + 1]);
			annotation = strcmp(clang_getCString(p), "(") == 0;
			clang_disposeString(p);
		}
		if (annotation) {
			/* through the matching parenthesis */
			int depth = 0;
			for (end = i + 1; end < n; end++) {
				CXString p = clang_getTokenSpelling(w->tu, toks[end]);
				const char *q = clang_getCString(p);
				depth += strcmp(q, "(") == 0 ? 1 : strcmp(q, ")") == 0 ? -1 : 0;
				clang_disposeString(p);
				if (depth == 0)
					break;
			}
		}
		bool keep = annotation ? annotation_kept(t, mode) : mode == TOKENS_CODE;
		clang_disposeString(s);
		if (!keep) {
			i = end;
			continue;
		}
		for (unsigned j = i; j <= end && j < n; j++) {
			CXString p = clang_getTokenSpelling(w->tu, toks[j]);
			const char *q = clang_getCString(p);
			strbuf_puts(sb, q);
			strbuf_putc(sb, 0);
			if (clang_getTokenKind(toks[j]) == CXToken_Identifier)
				take_named(w, cl, q);
			clang_disposeString(p);
		}
		i = end;
	}
	clang_disposeTokens(w->tu, toks, n);
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

typedef struct span_key {
	const char *file;       /* base name: the order must not depend on where the tree is */
	unsigned begin;
	int i;
} span_key;

static int span_key_cmp(const void *a, const void *b)
{
	const span_key *x = a, *y = b;
	int c = strcmp(x->file, y->file);
	return c ? c : x->begin != y->begin ? (x->begin < y->begin ? -1 : 1) : (x->i > y->i) - (x->i < y->i);
}

/* The code of function f, checked against the primary p's buffers and
 * values (NULL: f is the primary) and reference ref (NULL: none), into
 * out[33]. */
static void code_hash(walk *w, const fn *f, const fn *p, const fn *ref, const char *type_tag,
                      const frontend_options *opt, char out[33])
{
	arena a;
	arena_init(&a);
	closure cl = {.a = &a};
	strbuf sb;
	strbuf_init(&sb);
	strbuf_puts(&sb, "aotc code 1");
	strbuf_putc(&sb, 0);
	strbuf_puts(&sb, type_tag ? type_tag : "");
	strbuf_putc(&sb, 0);
	for (int i = 0; i < opt->ndefines; i++) {
		strbuf_printf(&sb, "-D%s", opt->defines[i]);
		strbuf_putc(&sb, 0);
	}
	if (p) {
		strbuf_puts(&sb, "contract");
		strbuf_putc(&sb, 0);
		span sp;
		if (span_of(p->cursor, &sp))
			put_tokens(w, &cl, &sb, &sp, TOKENS_CONTRACT);
	}
	take_decl(&cl, f->cursor);
	use_decl(&cl, f->cursor);
	if (ref) {
		take_decl(&cl, ref->cursor);
		use_decl(&cl, ref->cursor);
	}
	/* The closure grows as the tokens name more: hash each span once, in a
	 * fixed order, after it stops growing. */
	strbuf scratch;
	strbuf_init(&scratch);
	for (int done = 0; done < cl.nspans || cl.npending;) {
		close_over(&cl);
		for (; done < cl.nspans; done++) {
			scratch.len = 0;
			put_tokens(w, &cl, &scratch, &cl.spans[done], TOKENS_CODE);
		}
	}
	strbuf_finish(&scratch);
	span_key *keys = arena_alloc(&a, ((size_t)cl.nspans + 1) * sizeof *keys);
	for (int i = 0; i < cl.nspans; i++) {
		CXString name = clang_getFileName(cl.spans[i].file);
		keys[i] = (span_key){arena_strdup(&a, base_name(clang_getCString(name) ? clang_getCString(name) : "")),
		                     cl.spans[i].begin, i};
		clang_disposeString(name);
	}
	qsort(keys, (size_t)cl.nspans, sizeof *keys, span_key_cmp);
	for (int i = 0, kept = -1; i < cl.nspans; i++) {
		/* one inside another (a member, a nested declaration) is in its tokens */
		if (kept >= 0 && strcmp(keys[i].file, keys[kept].file) == 0 &&
		    cl.spans[keys[i].i].end <= cl.spans[keys[kept].i].end)
			continue;
		kept = i;
		strbuf_puts(&sb, "decl");
		strbuf_putc(&sb, 0);
		put_tokens(w, &cl, &sb, &cl.spans[keys[i].i], TOKENS_CODE);
	}
	hash_hex(sb.data, sb.len, out);
	strbuf_finish(&sb);
	arena_finish(&a);
}

/* Sets the code of every kernel, alternative and routine of the module. */
static void code_hashes(walk *w, const frontend_options *opt)
{
	index_names(w);
	for (int i = 0; i < w->m->nkernels; i++) {
		kernel *k = &w->m->kernels[i];
		const fn *f = find_fn(w, k->name);
		if (!f)
			continue;
		const fn *ref = k->reference ? find_fn(w, k->reference) : NULL;
		code_hash(w, f, NULL, ref, k->type_tag, opt, k->code);
		for (int j = 0; j < k->nalts; j++) {
			const fn *g = find_fn(w, k->alts[j].name);
			if (g)
				code_hash(w, g, f, ref, k->type_tag, opt, k->alts[j].code);
		}
		for (int j = 0; j < k->nexterns; j++) {
			const fn *g = find_fn(w, k->externs[j].name);
			if (g)
				code_hash(w, g, f, ref, k->type_tag, opt, k->externs[j].code);
		}
	}
}

/* The host functions the main file defines (neither __global__ nor
 * __device__), as byte ranges in source order: what a compiler of device
 * code only cannot take and never needs (aotc_module.host_code). */
static void find_host_code(walk *w)
{
	for (int i = 0; i < w->nfns; i++) {
		const fn *f = &w->fns[i];
		span sp;
		if (!f->in_main || f->is_global || f->is_device || !clang_isCursorDefinition(f->cursor) ||
		    !span_of(f->cursor, &sp) || !clang_File_isEqual(sp.file, w->main_file))
			continue;
		ir_add_host_code(w->m, sp.begin, sp.end); /* one out of order: a range told twice, left */
	}
}

/* ---- Building kernels --------------------------------------------------- */

static aotc_dtype dtype_of(CXType t)
{
	CXType c = clang_getCanonicalType(t);
	long long size = clang_Type_getSizeOf(c);
	switch (c.kind) {
	case CXType_Bool: return DT_BOOL;
	case CXType_Char_S: case CXType_SChar: return DT_I8;
	case CXType_Char_U: case CXType_UChar: return DT_U8;
	case CXType_Short: return DT_I16;
	case CXType_UShort: return DT_U16;
	case CXType_Int: return DT_I32;
	case CXType_UInt: return DT_U32;
	case CXType_Long: return size == 4 ? DT_I32 : DT_I64;
	case CXType_ULong: return size == 4 ? DT_U32 : DT_U64;
	case CXType_LongLong: return DT_I64;
	case CXType_ULongLong: return DT_U64;
	case CXType_Float: return DT_F32;
	case CXType_Double: return DT_F64;
	case CXType_Half: case CXType_Float16: return DT_F16;
	case CXType_BFloat16: return DT_BF16;
	default: break;
	}
	return DT_OTHER;
}

/* The element kind of t through typedefs, aliases and `using`: the
 * builtin type underneath, else the first name on the chain that aotc
 * knows (floatX -> nv_bfloat16 -> __nv_bfloat16; a pointer's float4),
 * vector types only where vectors is set. *lanes gets a vector type's. */
static aotc_dtype dtype_through(CXType t, bool vectors, int *lanes)
{
	aotc_dtype d = dtype_of(t);
	for (int depth = 0; d == DT_OTHER && depth < 64; depth++) {
		CXCursor decl = clang_getTypeDeclaration(t);
		enum CXCursorKind kind = clang_getCursorKind(decl);
		if (clang_isInvalid(kind))
			break;
		CXString s = clang_getCursorSpelling(decl);
		const char *name = clang_getCString(s);
		d = dtype_of_spelling(name ? name : "");
		if (d == DT_OTHER && vectors)
			d = dtype_of_vector(name ? name : "", lanes);
		clang_disposeString(s);
		if (kind != CXCursor_TypedefDecl && kind != CXCursor_TypeAliasDecl)
			break;
		t = clang_getTypedefDeclUnderlyingType(decl);
	}
	return d;
}

/* "const float" -> "float" */
static const char *unqualified(arena *a, const char *s)
{
	for (;;) {
		if (strncmp(s, "const ", 6) == 0)
			s += 6;
		else if (strncmp(s, "volatile ", 9) == 0)
			s += 9;
		else
			break;
	}
	char *r = arena_strdup(a, s);
	size_t n = strlen(r);
	while (n > 6 && strcmp(r + n - 6, " const") == 0)
		r[n -= 6] = 0;
	return r;
}

static void add_tparam(walk *w, kernel *k, CXCursor c, size_t *cap)
{
	tparam tp = {.tunable = -1};
	tp.name = take(&w->m->arena, clang_getCursorSpelling(c));
	tp.loc = cursor_loc(w, c);
	tp.is_type = clang_getCursorKind(c) == CXCursor_TemplateTypeParameter;
	if (!tp.is_type)
		tp.type = take(&w->m->arena, clang_getTypeSpelling(clang_getCursorType(c)));
	char *text = extent_text(w, c);
	char *eq = text ? strchr(text, '=') : NULL;
	if (eq)
		tp.default_text = trim(eq + 1);
	ARENA_PUSH(&w->m->arena, k->tparams, k->ntparams, *cap, tp);
}

static void add_param(walk *w, kernel *k, CXCursor c, size_t *cap)
{
	param p = {.buffer = -1, .value = -1, .shape = -1, .vec = 1};
	arena *a = &w->m->arena;
	p.name = take(a, clang_getCursorSpelling(c));
	p.loc = cursor_loc(w, c);
	CXType t = clang_getCursorType(c);
	p.type = take(a, clang_getTypeSpelling(t));
	CXType canon = clang_getCanonicalType(t);
	CXType elem = t;
	if (canon.kind == CXType_Pointer || t.kind == CXType_Pointer) {
		p.is_pointer = true;
		elem = clang_getPointeeType(t);
		p.is_const = clang_isConstQualifiedType(elem);
	}
	p.elem_type = unqualified(a, take(a, clang_getTypeSpelling(elem)));
	const char *spelt = unqualified(a, take(a, clang_getTypeSpelling(clang_getCanonicalType(elem))));
	if (strcmp(spelt, p.elem_type) != 0 && dtype_of_spelling(p.elem_type) == DT_OTHER &&
	    !strstr(spelt, "type-parameter") && ir_type_text_ok(spelt))
		p.elem_canon = spelt;
	p.dtype = dtype_through(elem, p.is_pointer, &p.vec);
	if (p.dtype == DT_OTHER) {
		/* Template type parameters (T = float) and names the shim's
		 * parse leaves unresolved. */
		const char *name = p.elem_type;
		int tp = ir_find_tparam(k, name);
		if (tp >= 0 && k->tparams[tp].is_type && k->tparams[tp].default_text)
			name = k->tparams[tp].default_text;
		p.dtype = dtype_of_spelling(name);
		if (p.dtype == DT_OTHER && p.is_pointer)
			p.dtype = dtype_of_vector(name, &p.vec);
	}
	if (!p.name[0]) {
		diag_error(w->d, p.loc, "parameter %d of '%s' needs a name", k->nparams + 1, k->name);
		p.name = arena_printf(a, "$%d", k->nparams);
	}
	ARENA_PUSH(a, k->params, k->nparams, *cap, p);
}

static enum CXChildVisitResult visit_decl(CXCursor c, CXCursor parent, CXClientData data)
{
	(void)parent;
	void **ctx = data;
	walk *w = ctx[0];
	kernel *k = ctx[1];
	size_t *caps = ctx[2];
	switch (clang_getCursorKind(c)) {
	case CXCursor_TemplateTypeParameter:
	case CXCursor_NonTypeTemplateParameter:
		add_tparam(w, k, c, &caps[0]);
		break;
	case CXCursor_TemplateTemplateParameter:
		diag_error(w->d, cursor_loc(w, c), "template template parameters are not supported");
		break;
	case CXCursor_ParmDecl:
		add_param(w, k, c, &caps[1]);
		break;
	default:
		break;
	}
	return CXChildVisit_Continue;
}

static fn *find_fn(walk *w, const char *name)
{
	for (int i = 0; i < w->nfns; i++)
		if (strcmp(w->fns[i].name, name) == 0)
			return &w->fns[i];
	return NULL;
}

static bool only_launch_annotations(const fn *f)
{
	for (int i = 0; i < f->nannots; i++) {
		const char *k = f->annots[i].kind;
		if (strcmp(k, "grid") && strcmp(k, "block") && strcmp(k, "smem"))
			return false;
	}
	return true;
}

/* Whether g's first parameters have the types of kernel k's (kf is its
 * declaration), position by position: names may differ, types up to const
 * and restrict on pointers. Diagnoses the first that differs at loc (the
 * annotation naming g), with a note at g. */
static bool same_params(walk *w, const kernel *k, const fn *kf, const fn *g, const char *macro,
                        aotc_loc loc)
{
	for (int i = 0; i < kf->nparams && i < g->nparams; i++) {
		/* A dependent type (T *) cannot be compared by spelling; its
		 * element kind must then agree. */
		const param *p = &k->params[i];
		bool same;
		if (strstr(kf->param_types[i], "type-parameter"))
			same = p->is_pointer == (strchr(g->param_types[i], '*') != NULL);
		else
			same = strcmp(g->param_types[i], kf->param_types[i]) == 0;
		if (!same) {
			diag_error(w->d, loc, "%s: parameter %d ('%s') of '%s' is '%s', '%s' takes '%s'",
			           macro, i + 1, g->param_names[i], g->name, g->param_spellings[i],
			           k->name, kf->param_spellings[i]);
			diag_note(w->d, g->loc, "'%s' declared here", g->name);
			return false;
		}
	}
	return true;
}

/* "; did you mean 'f'?" with the file's function nearest to name, or "". */
static const char *fn_hint(walk *w, const char *name)
{
	nearest near;
	nearest_init(&near, name);
	for (int i = 0; i < w->nfns; i++)
		nearest_offer(&near, w->fns[i].name);
	return near.best ? arena_printf(&w->m->arena, "; did you mean '%s'?", near.best) : "";
}

/* Checks the reference named by k and copies its launch geometry. */
static void attach_reference(walk *w, kernel *k)
{
	fn *r = find_fn(w, k->reference);
	if (!r) {
		diag_error(w->d, k->reference_loc, "AOTC_REFERENCE: no function '%s' in this file%s",
		           k->reference, fn_hint(w, k->reference));
		return;
	}
	r->used_as_reference = true;
	if (r->in_namespace) {
		diag_error(w->d, k->reference_loc, "AOTC_REFERENCE: '%s' is inside a namespace; the reference must be at global scope",
		           k->reference);
		diag_note(w->d, r->loc, "'%s' declared here", k->reference);
		return;
	}
	if (r->is_template && k->type_tag) {
		k->ref_template = true; /* instantiated with the type: ref<float> */
	} else if (r->is_template) {
		diag_error(w->d, k->reference_loc, "AOTC_REFERENCE: '%s' is a template; the reference must be a plain function (or a template over the type of AOTC_TYPES)",
		           k->reference);
		diag_note(w->d, r->loc, "'%s' declared here", k->reference);
		return;
	}
	if (r->is_global && !k->is_global) {
		diag_error(w->d, k->reference_loc, "AOTC_REFERENCE: '%s' must not be __global__ like '%s'",
		           k->reference, k->name);
		return;
	}
	/* A __global__ kernel's reference may be a host function instead,
	 * called on host copies of the inputs (docs/annotations.md). */
	bool on_host = k->is_global && !r->is_global;
	if (on_host && (r->is_device && !r->is_host)) {
		diag_error(w->d, k->reference_loc, "AOTC_REFERENCE: '%s' is a __device__ function; a reference is a __global__ kernel or a host function",
		           k->reference);
		diag_note(w->d, r->loc, "'%s' declared here", k->reference);
		return;
	}
	if (on_host && strcmp(r->result_type, "void") != 0) {
		diag_error(w->d, k->reference_loc, "AOTC_REFERENCE: '%s' returns '%s'; a host reference returns void (its outputs are its buffers)",
		           k->reference, r->result_spelling);
		diag_note(w->d, r->loc, "'%s' declared here", k->reference);
		return;
	}
	/* The tuner passes the reference the kernel's arguments by position;
	 * names may differ, types up to const and restrict on pointers. */
	fn *kf = find_fn(w, k->name);
	if (kf && r->nparams != kf->nparams) {
		diag_error(w->d, k->reference_loc, "AOTC_REFERENCE: '%s' takes %d parameter%s, '%s' takes %d",
		           k->reference, r->nparams, r->nparams == 1 ? "" : "s", k->name, kf->nparams);
		diag_note(w->d, r->loc, "'%s' declared here", k->reference);
		return;
	}
	if (kf && !same_params(w, k, kf, r, "AOTC_REFERENCE", k->reference_loc))
		return;
	/* The reference's own AOTC_GRID/BLOCK/SMEM, over its own parameter
	 * names (by position the kernel's parameters). */
	for (int i = 0; kf && i < r->nparams; i++)
		if (strcmp(r->param_names[i], k->params[i].name) != 0) {
			k->ref_param_names = arena_alloc(&w->m->arena, (size_t)r->nparams * sizeof *k->ref_param_names);
			memcpy(k->ref_param_names, r->param_names, (size_t)r->nparams * sizeof *r->param_names);
			break;
		}
	kernel scratch = *k;
	scratch.grid = scratch.block = (launch){0};
	scratch.smem = (aexpr){0};
	int errors = 0;
	for (int i = 0; i < r->nannots; i++) {
		const annotation *a = &r->annots[i];
		if (strcmp(a->kind, "grid") && strcmp(a->kind, "block") && strcmp(a->kind, "smem"))
			continue;
		if (on_host) {
			/* Ignoring it would hide a reference that is not the
			 * function its author meant. */
			diag_error(w->d, a->loc, "AOTC_%s on host reference '%s': it runs on the host and takes no launch geometry",
			           !strcmp(a->kind, "grid") ? "GRID" : !strcmp(a->kind, "block") ? "BLOCK" : "SMEM",
			           r->name);
			continue;
		}
		errors += ir_annotate(w->m, &scratch, a->kind, a->text, a->len, a->loc, w->d);
	}
	k->ref_on_host = on_host;
	if (on_host || errors)
		return;
	if (k->is_global && (!scratch.grid.ndims || !scratch.block.ndims)) {
		diag_error(w->d, r->loc, "reference '%s' needs its own AOTC_GRID and AOTC_BLOCK",
		           r->name);
		return;
	}
	k->ref_grid = scratch.grid;
	k->ref_block = scratch.block;
	k->ref_smem = scratch.smem;
}

/* Checks each AOTC_EXTERN routine: a plain host function of the file at
 * global scope (the generated caller names it unqualified) taking the
 * kernel's parameters (as the reference does) and, for a __global__ kernel,
 * a trailing cudaStream_t and returning cudaError_t (docs/annotations.md). */
static void check_externs(walk *w, kernel *k)
{
	fn *kf = find_fn(w, k->name);
	for (int i = 0; i < k->nexterns; i++) {
		const extern_fn *e = &k->externs[i];
		bool repeated = !strcmp(e->name, k->name) || (k->reference && !strcmp(e->name, k->reference));
		for (int j = 0; j < i; j++)
			repeated |= !strcmp(e->name, k->externs[j].name);
		if (repeated)
			continue; /* ir_check says so */
		fn *g = find_fn(w, e->name);
		if (!g) {
			diag_error(w->d, e->loc, "AOTC_EXTERN: no function '%s' in this file%s", e->name,
			           fn_hint(w, e->name));
			continue;
		}
		const char *why = g->in_namespace ? "is inside a namespace; the routine must be at global scope"
		                : g->is_template ? "is a template; name a plain function (one that calls the instance you mean)"
		                : g->is_global ? "is a __global__ kernel; name a host function that launches it (or calls the library) on the stream it is given"
		                : NULL;
		if (why) {
			diag_error(w->d, e->loc, "AOTC_EXTERN: '%s' %s", e->name, why);
			diag_note(w->d, g->loc, "'%s' declared here", e->name);
			continue;
		}
		if (!kf)
			continue;
		int want = kf->nparams + (k->is_global ? 1 : 0);
		if (g->nparams != want) {
			if (k->is_global)
				diag_error(w->d, e->loc, "AOTC_EXTERN: '%s' takes %d parameter%s; it needs the %d of '%s' and a trailing cudaStream_t",
				           e->name, g->nparams, g->nparams == 1 ? "" : "s", kf->nparams, k->name);
			else
				diag_error(w->d, e->loc, "AOTC_EXTERN: '%s' takes %d parameter%s, '%s' takes %d",
				           e->name, g->nparams, g->nparams == 1 ? "" : "s", k->name, kf->nparams);
			diag_note(w->d, g->loc, "'%s' declared here", e->name);
			continue;
		}
		if (!same_params(w, k, kf, g, "AOTC_EXTERN", e->loc) || !k->is_global)
			continue;
		int last = kf->nparams;
		if (strcmp(g->param_types[last], "CUstream_st *") != 0) {
			diag_error(w->d, e->loc, "AOTC_EXTERN: parameter %d ('%s') of '%s' is '%s'; the last must be a cudaStream_t",
			           last + 1, g->param_names[last], e->name, g->param_spellings[last]);
			diag_note(w->d, g->loc, "'%s' declared here", e->name);
		} else if (strcmp(g->result_type, "cudaError") != 0) {
			diag_error(w->d, e->loc, "AOTC_EXTERN: '%s' returns '%s'; it must return cudaError_t",
			           e->name, g->result_spelling);
			diag_note(w->d, g->loc, "'%s' declared here", e->name);
		}
	}
}

/* One kernel of the IR per function, or per type of its AOTC_TYPES: each
 * is built from the function's parameters with its type, then annotated
 * and checked as a kernel of its own. Annotation errors are told once,
 * by the first type's. */
static void build_kernel(walk *w, fn *f)
{
	kernel *k = ir_add_kernel(w->m, f->name, f->loc);
	int first = w->m->nkernels - 1;
	k->is_global = f->is_global;
	k->is_template = f->is_template;
	size_t caps[2] = {0, 0};
	void *ctx[3] = {w, k, caps};
	clang_visitChildren(f->cursor, visit_decl, ctx);
	int ntypes = 1, errors = 0;
	for (int i = 0; i < f->nannots; i++) {
		const annotation *a = &f->annots[i];
		if (strcmp(a->kind, "types") == 0) {
			errors += ir_annotate(w->m, k, a->kind, a->text, a->len, a->loc, w->d);
			ntypes = k->ntypes ? k->ntypes : 1;
		}
	}
	for (int t = 1; t < ntypes; t++)
		ir_copy_kernel(w->m, first);
	for (int t = 0; t < ntypes && errors == 0; t++) {
		k = &w->m->kernels[first + t];
		if (k->ntypes)
			ir_key_type(w->m, k, t);
		for (int i = 0; i < f->nannots; i++) {
			const annotation *a = &f->annots[i];
			if (strcmp(a->kind, "types") != 0)
				errors += ir_annotate(w->m, k, a->kind, a->text, a->len, a->loc, w->d);
		}
		if (k->reference)
			attach_reference(w, k);
		check_externs(w, k);
		errors += ir_check(w->m, k, w->d);
	}
	if (errors)
		w->m->nkernels = first + 1; /* the other types' kernels are not built */
}

/* ---- Alternatives ------------------------------------------------------------ */

static bool is_alternative(const fn *f)
{
	for (int i = 0; i < f->nannots; i++)
		if (strcmp(f->annots[i].kind, "alternative") == 0)
			return true;
	return false;
}

/* What an alternative writes itself; the rest of a kernel's annotations it
 * shares with its primary (docs/annotations.md). */
static bool alternative_own(const char *kind)
{
	static const char *const own[] = {"tune", "require", "valid_if", "grid", "block", "smem", "alternative"};
	for (size_t i = 0; i < COUNTOF(own); i++)
		if (strcmp(own[i], kind) == 0)
			return true;
	return false;
}

/* The primary's annotations applied to each alternative too: what accounts
 * for the parameters, so that the alternative's line up with the primary's. */
static bool shared_with_alternatives(const char *kind)
{
	return !strcmp(kind, "buffer") || !strcmp(kind, "value") || !strcmp(kind, "shapes");
}

/* Checks alternative f against its primary's declaration pf (kernel k):
 * the kind of function, and the parameters: the primary's names and types
 * (up to const and restrict), and for a host launcher a trailing
 * cudaStream_t and a cudaError_t result. Sets *launcher. */
static bool alternative_fits(walk *w, const fn *f, const fn *pf, const kernel *k, aotc_loc at, bool *launcher)
{
	*launcher = k->is_global && !f->is_global;
	if (f->in_namespace) {
		diag_error(w->d, f->loc, "alternative '%s' is inside a namespace; aotc needs it at global scope", f->name);
		return false;
	}
	if (f->is_global && !k->is_global) {
		diag_error(w->d, at, "AOTC_ALTERNATIVE: '%s' is __global__ and '%s' a host kernel; an alternative runs where its primary does",
		           f->name, k->name);
		return false;
	}
	if (*launcher && f->is_device && !f->is_host) {
		diag_error(w->d, at, "AOTC_ALTERNATIVE: '%s' is a __device__ function; an alternative of a __global__ kernel is a __global__ kernel or a host launcher",
		           f->name);
		return false;
	}
	int want = pf->nparams + (*launcher ? 1 : 0);
	if (f->nparams != want) {
		if (*launcher)
			diag_error(w->d, at, "AOTC_ALTERNATIVE: host launcher '%s' takes %d parameter%s; it needs the %d of '%s' and a trailing cudaStream_t",
			           f->name, f->nparams, f->nparams == 1 ? "" : "s", pf->nparams, k->name);
		else
			diag_error(w->d, at, "AOTC_ALTERNATIVE: '%s' takes %d parameter%s, '%s' takes %d", f->name,
			           f->nparams, f->nparams == 1 ? "" : "s", k->name, pf->nparams);
		diag_note(w->d, f->loc, "'%s' declared here", f->name);
		return false;
	}
	/* The primary's AOTC_BUFFER/VALUE/SHAPES name its parameters, and
	 * apply to the alternative's by name. */
	for (int i = 0; i < pf->nparams; i++)
		if (strcmp(f->param_names[i], pf->param_names[i]) != 0) {
			diag_error(w->d, at, "AOTC_ALTERNATIVE: parameter %d of '%s' is '%s', of '%s' '%s'; an alternative's parameters have its primary's names",
			           i + 1, f->name, f->param_names[i], k->name, pf->param_names[i]);
			diag_note(w->d, f->loc, "'%s' declared here", f->name);
			return false;
		}
	if (!same_params(w, k, pf, f, "AOTC_ALTERNATIVE", at))
		return false;
	if (!*launcher)
		return true;
	int last = pf->nparams;
	if (strcmp(f->param_types[last], "CUstream_st *") != 0) {
		diag_error(w->d, at, "AOTC_ALTERNATIVE: parameter %d ('%s') of host launcher '%s' is '%s'; the last must be a cudaStream_t",
		           last + 1, f->param_names[last], f->name, f->param_spellings[last]);
	} else if (strcmp(f->result_type, "cudaError") != 0) {
		diag_error(w->d, at, "AOTC_ALTERNATIVE: host launcher '%s' returns '%s'; it must return cudaError_t",
		           f->name, f->result_spelling);
	} else {
		return true;
	}
	diag_note(w->d, f->loc, "'%s' declared here", f->name);
	return false;
}

/* One alternative of kernels[pi] built from f: its own declaration and
 * annotations, the primary's shared ones applied to it, checked as a kernel
 * of its own, then moved into the primary's alts. Returns the errors. */
static int add_alternative(walk *w, fn *f, const fn *pf, int pi, bool launcher)
{
	aotc_module *m = w->m;
	kernel *a = ir_add_kernel(m, f->name, f->loc);
	int ai = m->nkernels - 1;
	a->is_global = f->is_global;
	a->is_template = f->is_template;
	a->host_launcher = launcher;
	size_t caps[2] = {0, 0};
	void *ctx[3] = {w, a, caps};
	clang_visitChildren(f->cursor, visit_decl, ctx);
	if (launcher)
		a->nparams--; /* the stream: the launcher's own, never a kernel parameter */
	const kernel *p = &m->kernels[pi];
	int errors = 0;
	if (p->type_tag) {
		const char *tname = p->tparams[p->type_tparam].name;
		int tp = ir_find_tparam(a, tname);
		if (tp < 0 || !a->tparams[tp].is_type) {
			diag_error(w->d, f->loc, "alternative '%s' of '%s' needs the type parameter '%s' of its AOTC_TYPES",
			           f->name, p->name, tname);
			m->nkernels = ai;
			return 1;
		}
		a->type_tparam = tp;
		a->types = p->types;
		a->ntypes = p->ntypes;
		int t = 0;
		while (t + 1 < p->ntypes && strcmp(dtype_name(dtype_of_spelling(p->types[t])), p->type_tag) != 0)
			t++;
		ir_key_type(m, a, t);
	}
	for (int i = 0; i < f->nannots; i++)
		errors += ir_annotate(m, a, f->annots[i].kind, f->annots[i].text, f->annots[i].len, f->annots[i].loc, w->d);
	int before = w->d->errors;
	for (int i = 0; i < pf->nannots; i++)
		if (shared_with_alternatives(pf->annots[i].kind))
			errors += ir_annotate(m, a, pf->annots[i].kind, pf->annots[i].text, pf->annots[i].len,
			                      pf->annots[i].loc, w->d);
	errors += ir_check(m, a, w->d);
	/* The dispatch computes a per-variant AOTC_VALUE for every function
	 * alike: over tunables in each or in none. */
	for (int i = 0; i < a->nparams && !errors; i++)
		if (ir_param_per_variant(a, i) != ir_param_per_variant(&m->kernels[pi], i)) {
			const value *v = &a->values[a->params[i].value];
			diag_error(w->d, v->loc, "AOTC_VALUE of '%s' uses tunables in '%s' and none in '%s'; it must use them in every function of the dispatch or in none",
			           a->params[i].name, ir_param_per_variant(a, i) ? a->name : p->name,
			           ir_param_per_variant(a, i) ? p->name : a->name);
			errors++;
		}
	if (w->d->errors > before)
		diag_note(w->d, f->loc, "in alternative '%s' of '%s', which shares the primary's AOTC_BUFFER, AOTC_VALUE and AOTC_SHAPES",
		          f->name, p->name);
	if (errors) {
		m->nkernels = ai;
		return errors;
	}
	kernel *pk = &m->kernels[pi];
	size_t cap = (size_t)pk->nalts;
	kernel copy = m->kernels[ai];
	m->nkernels = ai;
	ARENA_PUSH(&m->arena, pk->alts, pk->nalts, cap, copy);
	return 0;
}

/* Builds alternative f into every kernel of its primary (one per type of
 * AOTC_TYPES), after the primaries are built. */
static void build_alternative(walk *w, fn *f)
{
	arena *ar = &w->m->arena;
	int errors = 0;
	kernel scratch = {.type_tparam = -1};
	scratch.name = f->name;
	for (int i = 0; i < f->nannots; i++) {
		const annotation *an = &f->annots[i];
		if (strcmp(an->kind, "alternative") == 0) {
			errors += ir_annotate(w->m, &scratch, an->kind, an->text, an->len, an->loc, w->d);
		} else if (!alternative_own(an->kind)) {
			diag_error(w->d, an->loc, "%s on alternative '%s': an alternative has its own AOTC_TUNE, AOTC_REQUIRE, AOTC_VALID_IF, AOTC_GRID, AOTC_BLOCK and AOTC_SMEM and shares the rest with its primary",
			           macro_name(ar, an->kind), f->name);
			errors++;
		}
	}
	if (errors || !scratch.alt_of)
		return;
	const char *pname = scratch.alt_of;
	aotc_loc at = scratch.alt_loc;
	fn *pf = find_fn(w, pname);
	if (!strcmp(pname, f->name)) {
		diag_error(w->d, at, "AOTC_ALTERNATIVE: '%s' names itself; name the primary kernel it competes with", pname);
		return;
	}
	if (!pf) {
		diag_error(w->d, at, "AOTC_ALTERNATIVE: no function '%s' in this file%s", pname, fn_hint(w, pname));
		return;
	}
	if (is_alternative(pf)) {
		diag_error(w->d, at, "AOTC_ALTERNATIVE: '%s' is itself an alternative; name its primary", pname);
		diag_note(w->d, pf->loc, "'%s' declared here", pname);
		return;
	}
	int first = -1;
	for (int i = 0; i < w->m->nkernels && first < 0; i++)
		if (strcmp(w->m->kernels[i].name, pname) == 0)
			first = i;
	if (first < 0) {
		/* a primary with errors of its own has said so */
		if (!pf->in_main || !pf->nannots || only_launch_annotations(pf)) {
			diag_error(w->d, at, "AOTC_ALTERNATIVE: '%s' is not a tuned kernel of this file", pname);
			diag_note(w->d, pf->loc, "'%s' declared here", pname);
		}
		return;
	}
	for (int i = 0; i < w->m->nkernels; i++)
		for (int j = 0; j < w->m->kernels[i].nalts; j++)
			if (!strcmp(w->m->kernels[i].name, pname) && !strcmp(w->m->kernels[i].alts[j].name, f->name))
				return; /* an overload of the same name: taken once */
	bool launcher;
	if (!alternative_fits(w, f, pf, &w->m->kernels[first], at, &launcher))
		return;
	for (int i = first; i < w->m->nkernels; i++)
		if (strcmp(w->m->kernels[i].name, pname) == 0 && add_alternative(w, f, pf, i, launcher))
			return; /* told once, by the first type's */
}

/* ---- Source hash --------------------------------------------------------- */

typedef struct hash_ctx {
	walk *w;
	strbuf sb;
	json_t *files;          /* the included files' names, or NULL */
} hash_ctx;

static void visit_inclusion(CXFile f, CXSourceLocation *stack, unsigned depth,
                            CXClientData data)
{
	(void)stack;
	hash_ctx *h = data;
	if (depth == 0)
		return; /* the main file, hashed first */
	CXSourceLocation at = clang_getLocationForOffset(h->w->tu, f, 0);
	if (clang_Location_isInSystemHeader(at))
		return;
	CXString name = clang_getFileName(f);
	const char *n = clang_getCString(name);
	bool virtual = n && strncmp(n, VDIR "/", sizeof VDIR) == 0;
	/* A name that is not UTF-8 (JSON holds only that) is null: the list
	 * cannot be kept (frontend_parse_files) */
	if (!virtual && h->files)
		json_array_append_new(h->files, n ? json_string(n) : json_null());
	clang_disposeString(name);
	if (virtual)
		return;
	size_t size;
	const char *buf = clang_getFileContents(h->w->tu, f, &size);
	if (buf)
		strbuf_putn(&h->sb, buf, size);
	strbuf_putc(&h->sb, 0);
}

static void hash_sources(walk *w, json_t *files)
{
	hash_ctx h = {w, {0}, files};
	strbuf_init(&h.sb);
	size_t size;
	const char *buf = clang_getFileContents(w->tu, w->main_file, &size);
	if (buf)
		strbuf_putn(&h.sb, buf, size);
	strbuf_putc(&h.sb, 0);
	clang_getInclusions(w->tu, visit_inclusion, &h);
	hash_hex(h.sb.data, h.sb.len, w->m->source_hash);
	strbuf_finish(&h.sb);
}

/* ---- Parsing ------------------------------------------------------------- */

static void visit_system_inclusion(CXFile f, CXSourceLocation *stack, unsigned depth,
                                   CXClientData data)
{
	(void)stack;
	walk *w = data;
	if (depth == 0 || w->found_system_include)
		return;
	CXString name = clang_getFileName(f);
	const char *n = clang_getCString(name);
	bool virtual = n && strncmp(n, VDIR "/", sizeof VDIR) == 0;
	clang_disposeString(name);
	if (!virtual && clang_Location_isInSystemHeader(clang_getLocationForOffset(w->tu, f, 0)))
		w->found_system_include = true;
}

/* Whether the file includes headers other than aotc's own. */
static bool includes_system_headers(walk *w)
{
	clang_getInclusions(w->tu, visit_system_inclusion, w);
	return w->found_system_include;
}

static bool has_suffix(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n >= m && strcmp(s + n - m, suffix) == 0;
}

static const char *find_cuda(const frontend_options *opt);

static bool is_host_source(const char *path)
{
	return has_suffix(path, ".cpp") || has_suffix(path, ".cc") || has_suffix(path, ".cxx") ||
	       has_suffix(path, ".C");
}

const char *frontend_cuda_root(const char *path, const frontend_options *opt)
{
	bool host = is_host_source(path);
	return host ? NULL : find_cuda(opt);
}

static const char *find_cuda(const frontend_options *opt)
{
	const char *cands[] = {opt->cuda_path, getenv("CUDA_PATH"), getenv("CUDA_HOME"),
	                       "/usr/local/cuda"};
	char buf[4096];
	for (size_t i = 0; i < COUNTOF(cands); i++) {
		struct stat st;
		if (!cands[i] || !cands[i][0])
			continue;
		snprintf(buf, sizeof buf, "%s/include/cuda_runtime.h", cands[i]);
		if (stat(buf, &st) == 0)
			return cands[i];
	}
	return NULL;
}

/* The host compiler's own include directories, as nvcc's host pass sees
 * them (it asks the compiler too): each line between "#include <...>
 * search starts here:" and "End of search list." of `$CXX -E -v`. They go
 * last (-idirafter), so clang's own headers win and only what clang lacks
 * (gcc's <omp.h>, <quadmath.h>) comes from there. None when the compiler
 * cannot be run. The parser process's own child; the parser's timeout
 * bounds it too. */
static int host_include_dirs(arena *a, const char ***out)
{
	/* $CXX split into words, as the host backend runs it (no shell). */
	const char *cxx = getenv("CXX");
	char *words = arena_strdup(a, cxx && cxx[0] ? cxx : "c++");
	char *argv[40];
	int argc = 0;
	for (char *w = strtok(words, " \t"); w && argc < 32; w = strtok(NULL, " \t"))
		argv[argc++] = w;
	if (argc == 0)
		return 0;
	char *fixed[] = {"-E", "-x", "c++", "-v", "-"};
	for (size_t i = 0; i < COUNTOF(fixed); i++)
		argv[argc++] = fixed[i];
	argv[argc] = NULL;
	int fds[2];
	if (pipe(fds) < 0)
		return 0;
	pid_t pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return 0;
	}
	if (pid == 0) {
		int null = open("/dev/null", O_RDONLY);
		if (null >= 0)
			dup2(null, 0);
		dup2(fds[1], 1);
		dup2(fds[1], 2);
		close(fds[0]);
		execvp(argv[0], argv);
		_exit(127);
	}
	close(fds[1]);
	FILE *p = fdopen(fds[0], "r");
	const char **dirs = NULL;
	int n = 0;
	size_t cap = 0;
	char line[4096];
	bool in_list = false;
	for (int lines = 0; p && lines < 1000 && fgets(line, sizeof line, p); lines++) {
		char *t = trim(line);
		if (strncmp(t, "#include <...> search starts here", 33) == 0)
			in_list = true;
		else if (strncmp(t, "End of search list", 18) == 0)
			in_list = false;
		else if (in_list && t[0] == '/' && n < 64)
			ARENA_PUSH(a, dirs, n, cap, (const char *)arena_strdup(a, t));
	}
	if (p)
		fclose(p);
	else
		close(fds[0]);
	kill(pid, SIGKILL); /* done reading: it has nothing more to say */
	waitpid(pid, NULL, 0);
	*out = dirs;
	return n;
}

/* clang stops after this many errors (-ferror-limit), system headers' too. */
#define CLANG_ERROR_LIMIT 1000
#define STR_(x) #x
#define STR(x) STR_(x)

/* Whether f is one of aotc's own files (VDIR): its errors are a system
 * header's. */
static bool is_virtual(CXFile f)
{
	CXString name = clang_getFileName(f);
	const char *n = clang_getCString(name);
	bool v = n && strncmp(n, VDIR "/", sizeof VDIR) == 0;
	clang_disposeString(name);
	return v;
}

/* clang's errors in the code aotc reads (mark_used) are ours. Errors
 * inside system headers (libclang parsing CCCL or glibc in ways nvcc does
 * not) and in code aotc does not read do not fail the parse: the kernels
 * are what aotc reads, and nvcc compiles the variants; the latter are
 * counted in w->unused_errors, and --verbose shows both as warnings. A
 * file without annotated kernels has no such code: all its errors count. */
static int report_clang_diagnostics(walk *w, bool verbose)
{
	int errors = 0, all = 0;
	unsigned n = clang_getNumDiagnostics(w->tu);
	for (unsigned i = 0; i < n; i++) {
		CXDiagnostic dg = clang_getDiagnostic(w->tu, i);
		enum CXDiagnosticSeverity sev = clang_getDiagnosticSeverity(dg);
		if (sev >= CXDiagnostic_Error) {
			all++;
			CXSourceLocation sl = clang_getDiagnosticLocation(dg);
			unsigned offset;
			CXFile file;
			aotc_loc loc = loc_of(w, sl, &offset, &file);
			CXString msg = clang_getDiagnosticSpelling(dg);
			if (clang_Location_isInSystemHeader(sl) || (file && is_virtual(file))) {
				if (verbose)
					diag_warning(w->d, loc, "%s (in a system header; ignored)",
					             clang_getCString(msg));
			} else if (w->used->nspans && file && !in_used(w, file, offset)) {
				w->unused_errors++;
				if (verbose)
					diag_warning(w->d, loc, "%s (in code aotc does not use; ignored)",
					             clang_getCString(msg));
			} else {
				diag_error(w->d, loc, "%s", clang_getCString(msg));
				errors++;
			}
			clang_disposeString(msg);
		}
		clang_disposeDiagnostic(dg);
	}
	/* Past its limit clang stops parsing: what it read is incomplete. */
	if (!errors && all > CLANG_ERROR_LIMIT) {
		diag_error(w->d, (aotc_loc){w->main_path, 0, 0},
		           "the C++ parser stopped after %d errors in system headers or unused code (--verbose shows them)",
		           CLANG_ERROR_LIMIT);
		errors++;
	}
	if (!errors && w->unused_errors && !verbose)
		diag_note(w->d, (aotc_loc){w->main_path, 0, 0},
		          "%d error%s in code aotc does not use %s ignored; --verbose shows them",
		          w->unused_errors, w->unused_errors == 1 ? "" : "s",
		          w->unused_errors == 1 ? "was" : "were");
	return errors;
}

/* How clang reads a file: as C++ (a host source) or as CUDA, with the
 * toolkit's headers or with aotc's shim. */
typedef struct parse_mode {
	bool host;
	const char *env;    /* $AOTC_FRONTEND: "shim" forces the shim */
	const char *cuda;   /* the toolkit, or NULL */
	bool real_headers;
} parse_mode;

static parse_mode parse_mode_of(const char *path, const frontend_options *opt)
{
	parse_mode pm = {.host = is_host_source(path), .env = getenv("AOTC_FRONTEND")};
	pm.cuda = pm.host ? NULL : find_cuda(opt);
	pm.real_headers = !pm.host && pm.cuda && clang_major() >= 16 &&
	                  !(pm.env && strcmp(pm.env, "shim") == 0);
	return pm;
}

/* clang's command line for a file read as pm says: *argc arguments, in a. */
static const char **clang_args(const parse_mode *pm, const frontend_options *opt, arena *a, int *argc)
{
	struct stat st;
	const char **host_dirs;
	int nhost_dirs = host_include_dirs(a, &host_dirs);
	const char **argv = arena_alloc(a, (size_t)(32 + 2 * (opt->ninclude_dirs + opt->ndefines + nhost_dirs)) * sizeof *argv);
	int n = 0;
	if (pm->host) {
		argv[n++] = "-x";
		argv[n++] = "c++";
	} else {
		argv[n++] = "-x";
		argv[n++] = "cuda";
		argv[n++] = "--cuda-host-only";
		argv[n++] = "-nocudalib";
		if (pm->real_headers) {
			argv[n++] = arena_printf(a, "--cuda-path=%s", pm->cuda);
			argv[n++] = "-Wno-unknown-cuda-version";
			/* CUDA 13 dropped a header clang's wrapper still includes. */
			argv[n++] = "-isystem";
			argv[n++] = VDIR "/compat";
			/* CUDA 13 keeps CCCL (libcu++, CUB, Thrust) there; nvcc adds it. */
			char *cccl = arena_printf(a, "%s/include/cccl", pm->cuda);
			if (stat(cccl, &st) == 0 && S_ISDIR(st.st_mode)) {
				argv[n++] = "-isystem";
				argv[n++] = cccl;
			}
			/* libcu++'s SFINAE helpers are variadic __host__ __device__
			 * functions, which clang's CUDA mode rejects and nvcc takes. */
			argv[n++] = "-Xclang";
			argv[n++] = "-fcuda-allow-variadic-functions";
		} else {
			argv[n++] = "-nocudainc";
			argv[n++] = "--cuda-path=/nonexistent";
			argv[n++] = "-include";
			argv[n++] = VDIR "/cuda_shim.h";
		}
		argv[n++] = "-include";
		argv[n++] = VDIR "/cuda_extras.h";
	}
	argv[n++] = "-std=c++17";
	/* Bounds clang's work on a file of errors; high, because ignored
	 * system-header errors count too (report_clang_diagnostics). */
	argv[n++] = "-ferror-limit=" STR(CLANG_ERROR_LIMIT);
	argv[n++] = "-D__AOTC__";
	argv[n++] = "-I" VDIR "/include";
	for (int i = 0; i < opt->ninclude_dirs; i++)
		argv[n++] = arena_printf(a, "-I%s", opt->include_dirs[i]);
	for (int i = 0; i < opt->ndefines; i++)
		argv[n++] = arena_printf(a, "-D%s", opt->defines[i]);
	for (int i = 0; i < nhost_dirs; i++) {
		argv[n++] = "-idirafter";
		argv[n++] = host_dirs[i];
	}
	*argc = n;
	return argv;
}

/* The kernels of the main file's annotated functions, then their
 * alternatives. */
static void build_kernels(walk *w)
{
	aotc_module *m = w->m;
	/* References first, so that a function used only as a reference (its
	 * own GRID/BLOCK, no TUNE) is not taken for a kernel without tunables. */
	for (int i = 0; i < w->nfns; i++) {
		fn *f = &w->fns[i];
		for (int j = 0; j < f->nannots; j++) {
			if (strcmp(f->annots[j].kind, "reference") != 0)
				continue;
			char *name = trim(arena_strndup(&m->arena, f->annots[j].text,
			                                f->annots[j].len));
			fn *r = find_fn(w, name);
			if (r)
				r->used_as_reference = true;
		}
	}
	for (int i = 0; i < w->nfns; i++) {
		fn *f = &w->fns[i];
		if (!f->in_main || !f->nannots || is_alternative(f))
			continue;
		if (f->used_as_reference && only_launch_annotations(f))
			continue;
		if (only_launch_annotations(f)) {
			/* A reference nothing names (misspelt in AOTC_REFERENCE, which
			 * says so): one error, not a tunable-less kernel's four. */
			diag_error(w->d, f->loc, "'%s' has only launch annotations (AOTC_GRID, AOTC_BLOCK, AOTC_SMEM): a reference no AOTC_REFERENCE names, or a kernel without AOTC_TUNE",
			           f->name);
			continue;
		}
		if (f->in_namespace) {
			/* Instantiations and emitted code name the kernel unqualified. */
			diag_error(w->d, f->loc, "tuned kernel '%s' is inside a namespace; aotc needs tuned kernels at global scope",
			           f->name);
			continue;
		}
		build_kernel(w, f);
	}
	/* Alternatives once their primaries are built. */
	for (int i = 0; i < w->nfns; i++)
		if (w->fns[i].in_main && is_alternative(&w->fns[i]))
			build_alternative(w, &w->fns[i]);
}

/* A type of AOTC_TYPES is named name_tag downstream: no other kernel may
 * be. */
static void check_type_ids(const aotc_module *m, diags *d)
{
	for (int i = 0; i < m->nkernels; i++)
		for (int j = 0; j < i; j++)
			if ((m->kernels[i].type_tag || m->kernels[j].type_tag) && strcmp(m->kernels[i].id, m->kernels[j].id) == 0) {
				const kernel *typed = m->kernels[i].type_tag ? &m->kernels[i] : &m->kernels[j];
				const kernel *other = typed == &m->kernels[i] ? &m->kernels[j] : &m->kernels[i];
				diag_error(d, other->loc, "kernel '%s' has the name of type %s of '%s' (AOTC_TYPES); rename one",
				           other->id, typed->type_tag, typed->name);
				diag_note(d, typed->loc, "'%s' declared here", typed->name);
			}
}

/* The parse itself, in the parser process: clang reads the file, the walk
 * collects the annotated functions, and the kernels are built from them. */
static aotc_module *parse_here(const char *path, const frontend_options *opt, json_t *files, diags *d)
{
	parse_mode pm = parse_mode_of(path, opt);
	arena args_arena;
	arena_init(&args_arena);
	int argc;
	const char **argv = clang_args(&pm, opt, &args_arena, &argc);

	struct CXUnsavedFile unsaved[] = {
		{VDIR "/include/aotc.h", aotc_header_text, aotc_header_text_len},
		{VDIR "/cuda_shim.h", cuda_shim_text, cuda_shim_text_len},
		{VDIR "/cuda_extras.h", cuda_extras_text, cuda_extras_text_len},
		{VDIR "/compat/texture_fetch_functions.h", "", 0},
	};

	aotc_module *m = ir_module_create(path);
	walk w = {.m = m, .d = d, .main_path = m->file};
	arena_init(&w.index_arena);
	int errors_before = d->errors;
	CXIndex index = clang_createIndex(0, 0);
	/* The detailed preprocessing record gives macro definitions as cursors,
	 * for macros used as constants (about 8% more parse time). */
	enum CXErrorCode rc = clang_parseTranslationUnit2(
		index, path, argv, argc, unsaved, COUNTOF(unsaved),
		CXTranslationUnit_KeepGoing | CXTranslationUnit_DetailedPreprocessingRecord, &w.tu);
	arena_finish(&args_arena);
	if (rc == CXError_Crashed) {
		/* libclang's own crash recovery caught it. */
		diag_error(d, (aotc_loc){m->file, 0, 0}, "the C++ parser (libclang %d) crashed on this file",
		           clang_major());
		goto fail;
	}
	if (rc != CXError_Success) {
		diag_plain_error(d, "libclang could not parse '%s' (error %d)", path, (int)rc);
		goto fail;
	}
	w.main_file = clang_getFile(w.tu, path);
	clang_visitChildren(clang_getTranslationUnitCursor(w.tu), visit_top, &w);
	mark_used(&w);
	if (!pm.host)
		find_host_code(&w);
	if (report_clang_diagnostics(&w, opt->verbose) > 0) {
		if (!pm.host && !pm.real_headers && includes_system_headers(&w))
			diag_note(d, (aotc_loc){m->file, 0, 0},
			          "parsed with aotc's CUDA shim instead of the toolkit's headers (%s); CUDA library and host headers may not parse with it",
			          pm.env && strcmp(pm.env, "shim") == 0 ? "AOTC_FRONTEND=shim"
			          : !pm.cuda ? "no CUDA toolkit found; set CUDA_PATH"
			                     : "libclang is older than 16");
		goto fail;
	}
	m->source = (const_source){find_const, &w, offer_consts};
	hash_sources(&w, files);
	build_kernels(&w);
	check_type_ids(m, d);
	if (d->errors == errors_before)
		code_hashes(&w, opt);
	m->source = (const_source){0}; /* w and the translation unit end here */
	if (d->errors > errors_before)
		goto fail;
	clang_disposeTranslationUnit(w.tu);
	clang_disposeIndex(index);
	arena_finish(&w.index_arena);
	return m;
fail:
	if (w.tu)
		clang_disposeTranslationUnit(w.tu);
	clang_disposeIndex(index);
	arena_finish(&w.index_arena);
	ir_module_destroy(m);
	return NULL;
}

/* ---- The parser process ---------------------------------------------------- */

/* libclang runs in a child process. Some sources crash it (100,000 nested
 * braces or a 260,000-term comma expression overflow its recursive descent)
 * or could keep it busy for ever, and that code is not ours to fix. A thread
 * with a large stack and a nesting limit would cover the crashes we know of,
 * not the next one (an assertion, an allocation failure, a new libclang's
 * bug); it could not be stopped after a time limit, and a crash would leave
 * libclang's state in our process. A forked child gives all three for the
 * cost of a fork and a JSON round trip of the IR (ir_json.c): it parses,
 * writes its diagnostics (unformatted, with their locations) and the IR to a
 * pipe and _exits; aotc prints the diagnostics as if it had parsed itself
 * (so the error limit and the source lines are aotc's), and a child that
 * dies or runs out of time is one error naming the file. runtime/proc.c
 * spawns programs (exec); here the child runs our own code, and its wait
 * status must keep the signal. Message: diagnostics JSON, NUL, the hashed
 * files' names (a JSON array), NUL, IR JSON (absent when the parse
 * failed). */

#define PARSE_TIMEOUT_DEFAULT 300 /* seconds; $AOTC_PARSE_TIMEOUT, 0: none */

/* A JSON string of s; bytes that are not UTF-8 (Jansson takes only that)
 * become '?'. */
static json_t *jtext(const char *s)
{
	json_t *j = json_string(s);
	if (j)
		return j;
	char *c = xstrdup(s);
	for (char *p = c; *p; p++)
		if ((unsigned char)*p >= 0x80)
			*p = '?';
	j = json_string(c);
	free(c);
	return j;
}

typedef struct recorder {
	json_t *list;
	const char *path;
} recorder;

/* The source file itself is "file": true, so that its name need not be
 * UTF-8. */
static void record_diag(void *ctx, const char *kind, aotc_loc loc, const char *msg)
{
	recorder *r = ctx;
	json_t *o = json_pack("{s:s, s:i, s:i}", "kind", kind, "line", loc.line, "col", loc.col);
	json_object_set_new(o, "file", !loc.file ? json_null()
	                               : !strcmp(loc.file, r->path) ? json_true() : jtext(loc.file));
	json_object_set_new(o, "message", jtext(msg));
	json_array_append_new(r->list, o);
}

static bool write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t k = write(fd, p, n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return false;
		p += k;
		n -= (size_t)k;
	}
	return true;
}

static _Noreturn void parse_child(const char *path, const frontend_options *opt, int fd)
{
	json_t *list = json_array();
	recorder rec = {list, path};
	diags d;
	diags_init(&d);
	d.record = record_diag;
	d.record_ctx = &rec;
	json_t *files = json_array();
	aotc_module *m = parse_here(path, opt, files, &d);
	/* JSON holds only UTF-8: a file name that is not travels as '?'s, byte
	 * for byte, and take_result puts it back. Its locations share the
	 * string. */
	json_t *name = m ? json_string(m->file) : NULL;
	if (m && !name)
		for (char *p = (char *)m->file; *p; p++)
			if ((unsigned char)*p >= 0x80)
				*p = '?';
	json_decref(name);
	char *ir = m ? ir_to_json(m) : NULL;
	char *text = json_dumps(list, JSON_COMPACT);
	char *names = json_dumps(files, JSON_COMPACT);
	bool ok = text && names && write_all(fd, text, strlen(text) + 1) &&
	          write_all(fd, names, strlen(names) + 1) && (!ir || write_all(fd, ir, strlen(ir)));
	free(text);
	free(names);
	json_decref(files);
	free(ir);
	ir_module_destroy(m);
	diags_finish(&d);
	json_decref(list);
	close(fd);
	_exit(ok ? 0 : 3); /* no atexit handlers or stdio of the parent's */
}

static int parse_timeout(void)
{
	const char *s = getenv("AOTC_PARSE_TIMEOUT");
	char *end = "";
	long v = s && *s ? strtol(s, &end, 10) : -1;
	return v >= 0 && v <= INT_MAX / 1000 && !*end ? (int)v : PARSE_TIMEOUT_DEFAULT;
}

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Reads fd to its end into sb; false if timeout seconds (0: none) pass
 * first. */
static bool read_child(int fd, int timeout, strbuf *sb)
{
	double deadline = now_s() + timeout;
	char buf[65536];
	for (;;) {
		int ms = -1;
		if (timeout) {
			double left = deadline - now_s();
			if (left <= 0)
				return false;
			ms = (int)(left * 1000) + 1;
		}
		struct pollfd p = {fd, POLLIN, 0};
		int r = poll(&p, 1, ms);
		if (r < 0 && errno == EINTR)
			continue;
		if (r == 0)
			continue; /* the deadline is checked above */
		ssize_t n = r < 0 ? -1 : read(fd, buf, sizeof buf);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return true;
		strbuf_putn(sb, buf, (size_t)n);
	}
}

/* Prints the child's diagnostics through d and reads its IR (and where
 * files is non-NULL, the hashed files' names: frontend_parse_files); NULL
 * when the parse failed. */
static aotc_module *take_result(const char *path, const char *msg, size_t len, char ***files, diags *d)
{
	size_t dlen = strnlen(msg, len);
	json_t *list = json_loadb(msg, dlen, 0, NULL);
	size_t flen = dlen < len ? strnlen(msg + dlen + 1, len - dlen - 1) : 0;
	json_t *names = dlen < len ? json_loadb(msg + dlen + 1, flen, 0, NULL) : NULL;
	if (!json_is_array(list) || !json_is_array(names) || dlen + 1 + flen == len) {
		json_decref(list);
		json_decref(names);
		diag_error(d, (aotc_loc){path, 0, 0}, "the C++ parser's result is malformed (internal error)");
		return NULL;
	}
	size_t i;
	json_t *v;
	json_array_foreach(list, i, v) {
		const char *kind = json_string_value(json_object_get(v, "kind"));
		const char *text = json_string_value(json_object_get(v, "message"));
		const json_t *f = json_object_get(v, "file");
		aotc_loc loc = {json_is_true(f) ? path : json_string_value(f),
		                (int)json_integer_value(json_object_get(v, "line")),
		                (int)json_integer_value(json_object_get(v, "col"))};
		if (!kind || !text)
			continue;
		if (!strcmp(kind, "error"))
			diag_error(d, loc, "%s", text);
		else if (!strcmp(kind, "warning"))
			diag_warning(d, loc, "%s", text);
		else
			diag_note(d, loc, "%s", text);
	}
	json_decref(list);
	const char *ir = msg + dlen + 1 + flen + 1;
	size_t irlen = len - dlen - 1 - flen - 1;
	if (!irlen) {
		json_decref(names);
		return NULL;
	}
	/* Read quietly: the child checked the IR and reported what it found. */
	diags held;
	diags_init_buffered(&held);
	aotc_module *m = ir_from_json(ir, irlen, path, &held);
	if (m && strcmp(m->file, path) != 0 && strlen(m->file) == strlen(path))
		memcpy((char *)m->file, path, strlen(path)); /* see parse_child */
	if (!m) {
		diag_error(d, (aotc_loc){path, 0, 0},
		           "the C++ parser's IR could not be read back (internal error):");
		diags_flush(&held, d->out ? d->out : stderr);
	}
	diags_finish(&held);
	if (m && files) {
		size_t n = json_array_size(names);
		char **v = xcalloc(n + 1, sizeof *v);
		bool all = true;
		for (size_t i = 0; i < n && all; i++) {
			const char *s = json_string_value(json_array_get(names, i));
			all = s != NULL;
			v[i] = s ? xstrdup(s) : NULL;
		}
		if (all)
			*files = v;
		else
			frontend_free_files(v);
	}
	json_decref(names);
	return m;
}

void frontend_free_files(char **files)
{
	for (char **p = files; p && *p; p++)
		free(*p);
	free(files);
}

bool frontend_env_ok(diags *d)
{
	const char *mode = getenv("AOTC_FRONTEND");
	if (!mode || !*mode || !strcmp(mode, "shim") || !strcmp(mode, "auto"))
		return true;
	diag_plain_error(d, "AOTC_FRONTEND='%s' is not a front-end mode: 'shim' (aotc's CUDA shim) or 'auto' (the toolkit's headers where libclang >= 16 reads them; the default)",
	                 mode);
	return false;
}

aotc_module *frontend_parse(const char *path, const frontend_options *opt, diags *d)
{
	return frontend_parse_files(path, opt, NULL, d);
}

aotc_module *frontend_parse_files(const char *path, const frontend_options *opt, char ***files, diags *d)
{
	if (files)
		*files = NULL;
	struct stat st;
	if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) {
		diag_plain_error(d, "cannot read '%s'", path);
		return NULL;
	}
	aotc_loc file = {path, 0, 0};
	int fds[2];
	if (pipe(fds) != 0) {
		diag_error(d, file, "cannot start the C++ parser: %s", strerror(errno));
		return NULL;
	}
	fcntl(fds[0], F_SETFD, FD_CLOEXEC);
	fcntl(fds[1], F_SETFD, FD_CLOEXEC);
	fflush(NULL); /* nothing buffered is written twice */
	pid_t pid = fork();
	if (pid < 0) {
		diag_error(d, file, "cannot start the C++ parser: %s", strerror(errno));
		close(fds[0]);
		close(fds[1]);
		return NULL;
	}
	if (pid == 0) {
		close(fds[0]);
		parse_child(path, opt, fds[1]);
	}
	close(fds[1]);
	strbuf msg;
	strbuf_init(&msg);
	int timeout = parse_timeout();
	bool finished = read_child(fds[0], timeout, &msg);
	close(fds[0]);
	if (!finished)
		kill(pid, SIGKILL);
	int status;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	aotc_module *m = NULL;
	int major = clang_major();
	if (!finished)
		diag_error(d, file, "the C++ parser (libclang %d) did not finish within %d s on this file (AOTC_PARSE_TIMEOUT)",
		           major, timeout);
	else if (WIFSIGNALED(status))
		diag_error(d, file, "the C++ parser (libclang %d) crashed (signal %d: %s) on this file",
		           major, WTERMSIG(status), strsignal(WTERMSIG(status)));
	else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		diag_error(d, file, "the C++ parser (libclang %d) failed (exit status %d) on this file",
		           major, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	else
		m = take_result(path, msg.data, msg.len, files, d);
	strbuf_finish(&msg);
	return m;
}
