#include "link.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "emit.h"
#include "arch.h"
#include "text.h"
#include "util.h"

/* ---- Names ------------------------------------------------------------------- */

/* "sm90" -> 90, "sm120" -> 120, "sm90a" -> 90 (runtime/arch.c's order);
 * -1 when not a CUDA architecture aotc knows. */
static int arch_cc(const char *a)
{
	const arch_info *ai = arch_parse(a);
	return ai && ai->kind == ARCH_CUDA ? ai->order : -1;
}


/* ---- What one per-architecture header declares ------------------------------ */

typedef struct sig {
	char *text;     /* the parameter list, whitespace normalised */
	char **names;
	int n;
	int line;       /* in the header, for diagnostics */
} sig;

typedef struct entry {
	char *kernel, *arch;
	int cc;
	char *header;   /* DIR/_aot_K_cuda_A.h as given, for messages */
	char *include;  /* the header relative to the output's directory */
	char *dir_rel;  /* DIR relative to the output's directory */
	char *hw;       /* the hardware id it was tuned on, or NULL */
	char *libs;     /* "-lcublas": what its kernel file's AOTC_EXTERNs link with, or NULL */
	char *source;   /* the kernel source as its .cu includes it (found through the include path) */
	sig select, launch;
} entry;

static void sig_finish(sig *s)
{
	for (int i = 0; i < s->n; i++)
		free(s->names[i]);
	free(s->names);
	free(s->text);
}

static void entry_finish(entry *e)
{
	free(e->kernel);
	free(e->arch);
	free(e->header);
	free(e->include);
	free(e->dir_rel);
	free(e->source);
	free(e->hw);
	free(e->libs);
	sig_finish(&e->select);
	sig_finish(&e->launch);
}

static char *trim_dup(const char *s, size_t n)
{
	while (n && isspace((unsigned char)*s))
		s++, n--;
	while (n && isspace((unsigned char)s[n - 1]))
		n--;
	char *r = xmalloc(n + 1);
	memcpy(r, s, n);
	r[n] = '\0';
	return r;
}

/* Parses "int64_t M, int64_t N" (or "void"). Types may be C++ ones
 * ("const __half *", "ns::T<int, 2>"), but only characters that cannot end
 * a declaration reach the output: the list is copied into emitted code.
 * Returns NULL, or why the list is not acceptable. */
static const char *parse_params(sig *s, const char *p, size_t n)
{
	s->text = NULL;
	s->names = NULL;
	s->n = 0;
	for (size_t i = 0; i < n; i++)
		if (!(isalnum((unsigned char)p[i]) || strchr("_*,:<> \t", p[i])))
			return "unexpected character in the parameter list";
	strbuf norm;
	strbuf_init(&norm);
	for (size_t i = 0; i < n; i++) {
		if (isspace((unsigned char)p[i])) {
			if (norm.len && i + 1 < n && !isspace((unsigned char)p[i + 1]))
				strbuf_putc(&norm, ' ');
		} else {
			strbuf_putc(&norm, p[i]);
		}
	}
	s->text = norm.data;
	if (!strcmp(s->text, "void") || !*s->text) {
		s->text[0] = '\0';
		return NULL;
	}
	s->names = xcalloc(strlen(s->text) / 2 + 2, sizeof *s->names);
	const char *q = s->text;
	for (;;) {
		/* Up to the next comma outside template arguments. */
		int depth = 0;
		const char *e = q;
		for (; *e && !(*e == ',' && depth == 0); e++)
			depth += *e == '<' ? 1 : *e == '>' ? -1 : 0;
		char *param = trim_dup(q, (size_t)(e - q));
		size_t len = strlen(param), k = len;
		while (k && (isalnum((unsigned char)param[k - 1]) || param[k - 1] == '_'))
			k--;
		bool ok = k > 0 && is_identifier(param + k) && strspn(param, " *") < k;
		/* aot_ names are the emitter's (the launcher's last parameter,
		 * cudaStream_t aot_stream); a kernel's own never start so. */
		bool emitters = ok && !*e && !strcmp(param + k, "aot_stream") &&
		                !strncmp(param, "cudaStream_t", 12);
		if (ok)
			s->names[s->n++] = xstrdup(param + k);
		free(param);
		if (!ok)
			return "a parameter without a type and a name";
		if (!strncmp(s->names[s->n - 1], "aot_", 4) && !emitters)
			return "a parameter name starting with aot_";
		for (int i = 0; i < s->n - 1; i++)
			if (!strcmp(s->names[i], s->names[s->n - 1]))
				return "a parameter name used twice";
		if (!*e)
			break;
		q = e + 1;
	}
	return NULL;
}

/* Whether parameter i of s is exactly "TYPE NAME". */
static bool param_type_is(const sig *s, int i, const char *type)
{
	const char *q = s->text;
	for (int k = 0; k < i; k++) {
		int depth = 0;
		for (; *q && !(*q == ',' && depth == 0); q++)
			depth += *q == '<' ? 1 : *q == '>' ? -1 : 0;
		if (*q)
			q++;
	}
	while (*q == ' ')
		q++;
	size_t tl = strlen(type), nl = strlen(s->names[i]);
	return !strncmp(q, type, tl) && q[tl] == ' ' && !strncmp(q + tl + 1, s->names[i], nl) &&
	       (q[tl + 1 + nl] == ',' || q[tl + 1 + nl] == '\0');
}

/* A declaration "RET PREFIX_FN(PARAMS);" alone on a line: the parameter
 * text, or NULL. */
static const char *match_decl(const char *ln, size_t n, const char *head, size_t *plen)
{
	size_t hl = strlen(head);
	if (n < hl + 2 || strncmp(ln, head, hl) != 0)
		return NULL;
	while (n && isspace((unsigned char)ln[n - 1]))
		n--;
	if (n < hl + 2 || ln[n - 1] != ';' || ln[n - 2] != ')')
		return NULL;
	*plen = n - 2 - hl;
	return ln + hl;
}

/* Reads DIR/name (an emitted header) into e. */
static bool read_header(entry *e, diags *d)
{
	size_t len;
	char *text = read_file_max(e->header, &len, (size_t)AOTC_INPUT_MAX_MIB << 20);
	if (!text && errno == EFBIG) {
		diag_error(d, (aotc_loc){e->header, 0, 0}, "larger than %d MiB (not a header aotc emit wrote)",
		           AOTC_INPUT_MAX_MIB);
		return false;
	}
	if (!text) {
		diag_plain_error(d, "cannot read '%s': %s", e->header, strerror(errno));
		return false;
	}
	diags_add_source(d, e->header, text, len);
	char prefix[400], sel[450], lau[450], nv[450], vn[450];
	snprintf(prefix, sizeof prefix, "aot_%s_cuda_%s", e->kernel, e->arch);
	snprintf(sel, sizeof sel, "int %s_select(", prefix);
	snprintf(lau, sizeof lau, "cudaError_t %s_launch(", prefix);
	snprintf(nv, sizeof nv, "int %s_num_variants(void);", prefix);
	snprintf(vn, sizeof vn, "const char *%s_variant_name(int v);", prefix);
	bool have_sel = false, have_lau = false, have_nv = false, have_vn = false, ok = true;
	int lineno = 0;
	for (const char *ln = text; *ln && ok;) {
		const char *eol = strchr(ln, '\n');
		size_t n = eol ? (size_t)(eol - ln) : strlen(ln);
		lineno++;
		const char *params;
		size_t plen;
		const char *why = NULL;
		if (!have_sel && (params = match_decl(ln, n, sel, &plen))) {
			have_sel = true;
			e->select.line = lineno;
			why = parse_params(&e->select, params, plen);
			for (int i = 0; !why && i < e->select.n; i++)
				if (!param_type_is(&e->select, i, "int64_t"))
					why = "a shape argument that is not int64_t";
		} else if (!have_lau && (params = match_decl(ln, n, lau, &plen))) {
			have_lau = true;
			e->launch.line = lineno;
			why = parse_params(&e->launch, params, plen);
			if (!why && (e->launch.n == 0 ||
			             !param_type_is(&e->launch, e->launch.n - 1, "cudaStream_t")))
				why = "no cudaStream_t as the last parameter";
		} else if (!strncmp(ln, nv, strlen(nv))) {
			have_nv = true;
		} else if (!strncmp(ln, vn, strlen(vn))) {
			have_vn = true;
		} else if (!e->libs && n > 15 && !strncmp(ln, " * Link with: ", 14)) {
			const char *paren = memchr(ln + 14, '(', n - 14);
			e->libs = trim_dup(ln + 14, (size_t)((paren ? paren : ln + n) - ln - 14));
		} else if (!e->hw && n > 12 && !strncmp(ln, " * tuned on ", 12)) {
			const char *colon = memchr(ln + 12, ':', n - 12);
			if (colon)
				e->hw = trim_dup(ln + 12, (size_t)(colon - ln - 12));
		}
		if (why) {
			diag_error(d, (aotc_loc){e->header, lineno, 1}, "cannot link this declaration: %s", why);
			ok = false;
		}
		ln = eol ? eol + 1 : ln + n;
	}
	free(text);
	if (ok && !(have_sel && have_lau && have_nv && have_vn)) {
		diag_error(d, (aotc_loc){e->header, 0, 0},
		           "does not declare %s_%s as aotc emit writes it; re-emit it with this aotc",
		           prefix, !have_sel ? "select" : !have_lau ? "launch"
		                   : !have_nv ? "num_variants" : "variant_name");
		ok = false;
	}
	return ok;
}

/* ---- Collecting the inputs --------------------------------------------------- */

typedef struct entries {
	entry *v;
	int n, cap;
} entries;

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int cmp_entry(const void *a, const void *b)
{
	const entry *x = a, *y = b;
	int c = strcmp(x->kernel, y->kernel);
	if (c)
		return c;
	if (x->cc != y->cc)
		return x->cc < y->cc ? -1 : 1;
	return strcmp(x->arch, y->arch);
}

/* "_aot_K_cuda_A.h" -> K, A. The last "_cuda_" splits: an architecture
 * never contains one, a kernel name may. */
static bool split_name(const char *name, char **kernel, char **arch)
{
	size_t n = strlen(name);
	if (n < 5 + 6 + 2 || strncmp(name, "_aot_", 5) != 0 || strcmp(name + n - 2, ".h") != 0)
		return false;
	const char *sep = NULL;
	for (const char *p = name + 5; (p = strstr(p, "_cuda_")) != NULL && p < name + n - 2; p++)
		sep = p;
	if (!sep)
		return false;
	*kernel = strndup(name + 5, (size_t)(sep - name - 5)); /* untrimmed: " k" is no identifier */
	*arch = strndup(sep + 6, (size_t)(name + n - 2 - sep - 6));
	if (!*kernel || !*arch)
		die("out of memory");
	return true;
}

/* Adds the emitted headers of one directory; false after a diagnostic. */
static bool scan_dir(entries *es, const char *dir, const char *out_real, diags *d)
{
	char *real = realpath(dir, NULL);
	DIR *dp = real ? opendir(real) : NULL;
	if (!dp) {
		diag_plain_error(d, "cannot read directory '%s': %s", dir, strerror(errno));
		free(real);
		return false;
	}
	char **names = NULL;
	size_t nn = 0, cap = 0;
	for (struct dirent *de; (de = readdir(dp)) != NULL;) {
		size_t l = strlen(de->d_name);
		if (strncmp(de->d_name, "_aot_", 5) != 0 || l < 2 || strcmp(de->d_name + l - 2, ".h") != 0 ||
		    !strstr(de->d_name, "_cuda_"))
			continue;
		if (nn == cap)
			names = xrealloc(names, (cap = cap ? 2 * cap : 8) * sizeof *names);
		names[nn++] = xstrdup(de->d_name);
	}
	closedir(dp);
	if (nn)
		qsort(names, nn, sizeof *names, cmp_str); /* messages in a stable order */
	bool ok = true;
	if (nn == 0) {
		diag_plain_error(d, "'%s' holds no emitted CUDA files (_aot_KERNEL_cuda_ARCH.h): run aotc emit --arch smXX -o '%s' first",
		                 dir, dir);
		ok = false;
	}
	strbuf rel;
	strbuf_init(&rel);
	relative_path(&rel, out_real, real);
	for (size_t i = 0; i < nn; i++) {
		char *kernel = NULL, *arch = NULL;
		strbuf path;
		strbuf_init(&path);
		strbuf_printf(&path, "%s/%s", dir, names[i]);
		if (!split_name(names[i], &kernel, &arch) || !is_identifier(kernel) || arch_cc(arch) < 0) {
			diag_plain_error(d, "'%s': not a name aotc emit writes (_aot_KERNEL_cuda_smXX.h with KERNEL a C identifier)",
			                 path.data);
			ok = false;
			free(kernel);
			free(arch);
			strbuf_finish(&path);
			continue;
		}
		/* The .c and .cu must be there too, or the linked files would not build. */
		bool files = true;
		for (int k = 0; k < 2 && files; k++) {
			strbuf other;
			strbuf_init(&other);
			strbuf_printf(&other, "%.*s.%s", (int)(path.len - 2), path.data, k ? "cu" : "c");
			if (access(other.data, R_OK) != 0) {
				diag_plain_error(d, "'%s' is missing beside '%s': re-emit %s for %s", other.data,
				                 path.data, kernel, arch);
				files = ok = false;
			}
			strbuf_finish(&other);
		}
		if (!files) {
			free(kernel);
			free(arch);
			strbuf_finish(&path);
			continue;
		}
		if (es->n == es->cap)
			es->v = xrealloc(es->v, (size_t)(es->cap = es->cap ? 2 * es->cap : 8) * sizeof *es->v);
		entry *e = &es->v[es->n++];
		memset(e, 0, sizeof *e);
		e->kernel = kernel;
		e->arch = arch;
		e->cc = arch_cc(arch);
		e->header = path.data;
		e->dir_rel = xstrdup(rel.data);
		strbuf inc;
		strbuf_init(&inc);
		if (strcmp(rel.data, "."))
			strbuf_printf(&inc, "%s/", rel.data);
		strbuf_puts(&inc, names[i]);
		e->include = inc.data;
		/* The kernel source, from the .cu's guarded include: the linked
		 * .cu includes it once and every architecture's launcher after it. */
		{
			strbuf cu;
			strbuf_init(&cu);
			strbuf_printf(&cu, "%.*s.cu", (int)(path.len - 2), path.data);
			char *text = read_file_max(cu.data, NULL, (size_t)AOTC_INPUT_MAX_MIB << 20);
			const char *at = text ? strstr(text, "#ifndef AOTC_LINKED") : NULL;
			const char *q1 = at ? strstr(at, "#include \"") : NULL;
			const char *q2 = q1 ? strchr(q1 + 10, '"') : NULL;
			if (!q2) {
				diag_plain_error(d, "'%s' was not written by this aotc emit (no guarded kernel include): re-emit it",
				                 cu.data);
				ok = false;
			} else {
				/* As written: the include path that finds it for
				 * the per-architecture .cu finds it for the linked one. */
				strbuf src;
				strbuf_init(&src);
				strbuf_putn(&src, q1 + 10, (size_t)(q2 - q1 - 10));
				e->source = src.data;
				if (!include_text_ok(e->source)) {
					diag_plain_error(d, "'%s': its kernel source path %s cannot be written in an #include",
					                 cu.data, e->source);
					ok = false;
				}
			}
			free(text);
			strbuf_finish(&cu);
		}
		if (!path_is_plain(e->include)) {
			diag_plain_error(d, "'%s': the path from the output's directory, %s, cannot be written in an #include; use a plainer directory name",
			                 dir, e->include);
			ok = false;
		} else if (!read_header(e, d)) {
			ok = false;
		}
	}
	strbuf_finish(&rel);
	for (size_t i = 0; i < nn; i++)
		free(names[i]);
	free(names);
	free(real);
	return ok;
}

/* Same kernel and architecture twice, or signatures that differ between the
 * architectures of one kernel. es is sorted. */
static bool check_groups(const entries *es, diags *d)
{
	bool ok = true;
	for (int i = 1; i < es->n; i++) {
		const entry *a = &es->v[i - 1], *b = &es->v[i];
		if (strcmp(a->kernel, b->kernel) != 0)
			continue;
		if (a->cc == b->cc) {
			diag_plain_error(d, "kernel %s: '%s' (%s) and '%s' (%s) are both for compute capability %d.%d; link only one of them",
			                 a->kernel, a->header, a->arch, b->header, b->arch, a->cc / 10, a->cc % 10);
			ok = false;
		}
	}
	for (int i = 1; i < es->n; i++) {
		const entry *b = &es->v[i];
		int f = i;
		while (f > 0 && !strcmp(es->v[f - 1].kernel, b->kernel))
			f--;
		if (f == i)
			continue;
		const entry *a = &es->v[f]; /* the group's first: compare all against it */
		for (int k = 0; k < 2; k++) {
			const sig *sa = k ? &a->launch : &a->select, *sb = k ? &b->launch : &b->select;
			if (!strcmp(sa->text, sb->text))
				continue;
			diag_error(d, (aotc_loc){b->header, sb->line, 1},
			           "kernel %s: the %s signature for %s differs from the one for %s", b->kernel,
			           k ? "launch" : "select", b->arch, a->arch);
			diag_note(d, (aotc_loc){a->header, sa->line, 1}, "the one for %s is here", a->arch);
			ok = false;
		}
	}
	return ok;
}

/* ---- Generation -------------------------------------------------------------- */

typedef struct gen {
	const entries *es;
	const char *base;     /* the output's file name without directory and .c */
	const char *guard;
	const char *include_as; /* --include-as, or NULL */
} gen;

/* [first, end) of the entries of kernel at index i. */
static int group_end(const entries *es, int i)
{
	int j = i;
	while (j < es->n && !strcmp(es->v[j].kernel, es->v[i].kernel))
		j++;
	return j;
}

/* select's compute-capability parameter: "cc", unless a shape argument
 * already has that name (emit rejects aot_ names, so aot_cc is free). */
static const char *cc_param(const entry *e)
{
	for (int i = 0; i < e->select.n; i++)
		if (!strcmp(e->select.names[i], "cc"))
			return "aot_cc";
	return "cc";
}

static void provenance(out *o, const gen *g, const char *what)
{
	const entries *es = g->es;
	strbuf *sb = &o->sb;
	strbuf_puts(sb, "/* ");
	put_comment_text(sb, what);
	strbuf_printf(sb, "\n *\n * Generated by aotc %s (aotc link) from:\n", AOTC_VERSION_STRING);
	for (int i = 0; i < es->n; i = group_end(es, i)) {
		strbuf_puts(sb, " *   ");
		put_comment_text(sb, es->v[i].kernel);
		strbuf_puts(sb, ":\n");
		for (int j = i; j < group_end(es, i); j++) {
			const entry *e = &es->v[j];
			strbuf_printf(sb, " *     %-6s ", e->arch);
			put_comment_text(sb, e->include);
			if (e->hw) {
				strbuf_puts(sb, ", tuned on ");
				put_comment_text(sb, e->hw);
			}
			strbuf_putc(sb, '\n');
		}
	}
	strbuf_puts(sb, " * The architecture for a device of compute capability cc (major * 10 + minor):\n"
	                " * the highest linked one not newer than cc, else the lowest.\n"
	                " *\n"
	                " * Build: the per-architecture .c files and ");
	strbuf_printf(sb, "%s.c with any C compiler, and %s.cu alone\n"
	              " * with nvcc and one -gencode per linked architecture (it includes every\n"
	              " * architecture's launcher, so do not compile the per-architecture .cu files too);\n"
	              " * then link them together.\n", g->base, g->base);
	for (int i = 0; i < es->n; i++)
		if (es->v[i].libs) {
			/* each kernel file's once: a kernel's entries share the file */
			bool seen = false;
			for (int j = 0; j < i; j++)
				seen |= es->v[j].libs && !strcmp(es->v[j].libs, es->v[i].libs);
			if (seen)
				continue;
			strbuf_puts(sb, " * Link with: ");
			put_comment_text(sb, es->v[i].libs);
			strbuf_puts(sb, " (");
			put_comment_text(sb, es->v[i].kernel);
			strbuf_puts(sb, "'s AOTC_EXTERN routines call them).\n");
		}
	strbuf_puts(sb, " * On a device older than every linked architecture the lowest is chosen and\n"
	                " * its launch fails (no kernel image): tune for that architecture to support it.\n"
	                " *\n * Regenerate with, from this file's directory: aotc link");
	/* Each directory once, in the sorted entries' order: the order given
	 * does not change the output, so it must not change this line either. */
	for (int i = 0; i < es->n; i++) {
		bool seen = false;
		for (int j = 0; j < i; j++)
			seen |= !strcmp(es->v[j].dir_rel, es->v[i].dir_rel);
		if (!seen) {
			strbuf_putc(sb, ' ');
			put_comment_text(sb, es->v[i].dir_rel);
		}
	}
	strbuf_puts(sb, " -o ");
	put_comment_text(sb, g->base);
	strbuf_puts(sb, ".c");
	if (g->include_as) {
		strbuf_puts(sb, " --include-as ");
		put_comment_text(sb, g->include_as);
	}
	strbuf_puts(sb, "\n */\n");
}

static void includes(out *o, const gen *g)
{
	out_line(o, "#include \"%s.h\"", g->base);
	for (int i = 0; i < g->es->n; i++)
		out_line(o, "#include \"%s\"", g->es->v[i].include);
}

/* switch (arch_for(cc)) { case j: RET aot_K_cuda_A_FN(ARGS); ... default: DFLT } */
static void arch_switch(out *o, const entries *es, int first, int end, const char *cc,
                        const char *fn, const sig *args, const char *extra, const char *dflt)
{
	const char *k = es->v[first].kernel;
	out_line(o, "switch (aot_%s_cuda_arch_for(%s)) {", k, cc);
	for (int j = first; j < end; j++) {
		out_line(o, "case %d:", j - first);
		for (int t = 0; t <= o->indent; t++)
			strbuf_putc(&o->sb, '\t');
		strbuf_printf(&o->sb, "return aot_%s_cuda_%s_%s(", k, es->v[j].arch, fn);
		for (int i = 0; args && i < args->n; i++)
			strbuf_printf(&o->sb, "%s%s", i ? ", " : "", args->names[i]);
		if (extra)
			strbuf_printf(&o->sb, "%s%s", args && args->n ? ", " : "", extra);
		strbuf_puts(&o->sb, ");\n");
	}
	out_line(o, "default:");
	out_line(o, "\treturn %s;", dflt);
	out_line(o, "}");
}

static char *gen_c(const gen *g)
{
	const entries *es = g->es;
	out o = {.indent = 0};
	strbuf_init(&o.sb);
	provenance(&o, g, "Multi-architecture dispatch: the architecture whose tuning fits the device, then its variant for the shape. C99, no dependencies.");
	out_line(&o, "#include <stddef.h>");
	out_line(&o, "#include <stdint.h>\n");
	includes(&o, g);
	for (int i = 0; i < es->n; i = group_end(es, i)) {
		int end = group_end(es, i), na = end - i;
		const entry *e = &es->v[i];
		const char *k = e->kernel, *cc = cc_param(e);
		out_line(&o, "\n/* ---- %s ---- */\n", k);
		out_line(&o, "/* Lowest first: arch_for walks down from the highest. */");
		strbuf_printf(&o.sb, "static const int aot_%s_cuda_ccs[%d] = {", k, na);
		for (int j = i; j < end; j++)
			strbuf_printf(&o.sb, "%s%d", j > i ? ", " : "", es->v[j].cc);
		strbuf_puts(&o.sb, "};\n");
		strbuf_printf(&o.sb, "static const char *const aot_%s_cuda_archs[%d] = {", k, na);
		for (int j = i; j < end; j++)
			strbuf_printf(&o.sb, "%s\"%s\"", j > i ? ", " : "", es->v[j].arch);
		strbuf_puts(&o.sb, "};\n\n");
		out_line(&o, "int aot_%s_cuda_num_archs(void) { return %d; }\n", k, na);
		out_line(&o, "const char *aot_%s_cuda_arch_at(int i)\n{", k);
		out_line(&o, "\treturn i >= 0 && i < %d ? aot_%s_cuda_archs[i] : NULL;\n}\n", na, k);
		out_line(&o, "int aot_%s_cuda_arch_for(int cc)\n{", k);
		out_line(&o, "\tint i = %d;", na - 1);
		out_line(&o, "\twhile (i > 0 && aot_%s_cuda_ccs[i] > cc)", k);
		out_line(&o, "\t\ti--;");
		out_line(&o, "\treturn i;\n}\n");
		out_line(&o, "const char *aot_%s_cuda_arch_name(int cc)\n{", k);
		out_line(&o, "\treturn aot_%s_cuda_archs[aot_%s_cuda_arch_for(cc)];\n}\n", k, k);
		strbuf_printf(&o.sb, "int aot_%s_cuda_select(int %s%s%s)\n{\n", k, cc,
		              e->select.n ? ", " : "", e->select.text);
		o.indent = 1;
		arch_switch(&o, es, i, end, cc, "select", &e->select, NULL, "-1");
		o.indent = 0;
		out_line(&o, "}\n");
		out_line(&o, "int aot_%s_cuda_num_variants(int cc)\n{", k);
		o.indent = 1;
		arch_switch(&o, es, i, end, "cc", "num_variants", NULL, NULL, "0");
		o.indent = 0;
		out_line(&o, "}\n");
		out_line(&o, "const char *aot_%s_cuda_variant_name(int cc, int v)\n{", k);
		o.indent = 1;
		arch_switch(&o, es, i, end, "cc", "variant_name", NULL, "v", "NULL");
		o.indent = 0;
		out_line(&o, "}");
	}
	return o.sb.data;
}

static char *gen_h(const gen *g)
{
	const entries *es = g->es;
	out o = {.indent = 0};
	strbuf_init(&o.sb);
	provenance(&o, g, "Declarations of the multi-architecture dispatch and launcher.");
	out_line(&o, "#ifndef %s", g->guard);
	out_line(&o, "#define %s\n", g->guard);
	out_line(&o, "#include <stddef.h>");
	out_line(&o, "#include <stdint.h>\n");
	out_line(&o, "#ifdef __cplusplus\nextern \"C\" {\n#endif");
	for (int i = 0; i < es->n; i = group_end(es, i)) {
		int end = group_end(es, i);
		const entry *e = &es->v[i];
		const char *k = e->kernel;
		strbuf_printf(&o.sb, "\n/* ---- %s:", k);
		for (int j = i; j < end; j++)
			strbuf_printf(&o.sb, " %s", es->v[j].arch);
		strbuf_puts(&o.sb, " ----\n * cc is a compute capability as major * 10 + minor (90 for sm90). */\n\n");
		out_line(&o, "/* The linked architectures, lowest first; NULL for an index out of range. */");
		out_line(&o, "int aot_%s_cuda_num_archs(void);", k);
		out_line(&o, "const char *aot_%s_cuda_arch_at(int i);", k);
		out_line(&o, "/* The index of the architecture used on a device of compute capability cc:");
		out_line(&o, " * the highest not newer than cc, else the lowest. */");
		out_line(&o, "int aot_%s_cuda_arch_for(int cc);", k);
		out_line(&o, "const char *aot_%s_cuda_arch_name(int cc);", k);
		out_line(&o, "/* That architecture's variant for a shape, or -1 when none is valid there. */");
		strbuf_printf(&o.sb, "int aot_%s_cuda_select(int %s%s%s);\n", k, cc_param(e),
		              e->select.n ? ", " : "", e->select.text);
		out_line(&o, "int aot_%s_cuda_num_variants(int cc);", k);
		out_line(&o, "/* \"sgemm<64, 128, 8, 8, 4>\"; NULL for an index out of range. */");
		out_line(&o, "const char *aot_%s_cuda_variant_name(int cc, int v);", k);
		out_line(&o, "\n#if defined(__CUDACC__) || defined(CUDART_VERSION)");
		out_line(&o, "/* On the current device: its architecture's launcher, which selects and");
		out_line(&o, " * launches on stream (cudaErrorInvalidValue when no variant is valid). */");
		out_line(&o, "cudaError_t aot_%s_cuda_launch(%s);", k, e->launch.text);
		out_line(&o, "#endif");
	}
	out_line(&o, "\n#ifdef __cplusplus\n}\n#endif\n");
	out_line(&o, "#endif");
	return o.sb.data;
}

static char *gen_cu(const gen *g)
{
	const entries *es = g->es;
	out o = {.indent = 0};
	strbuf_init(&o.sb);
	provenance(&o, g, "Multi-architecture launcher: the current device's architecture, then its launcher.");
	out_line(&o, "#include <atomic>\n");
	out_line(&o, "#include <cuda_runtime.h>\n");
	includes(&o, g);
	/* One translation unit for every architecture (nvcc with one -gencode
	 * each): the kernel source once, then each architecture's launcher,
	 * which skips its own include of the source, so nothing the source
	 * defines is defined twice in the program. */
	if (g->include_as) {
		out_line(&o, "#include \"%s\"", g->include_as);
	} else {
		/* Each source once: kernels of one file share it. */
		for (int i = 0; i < es->n; i = group_end(es, i)) {
			bool seen = false;
			for (int j = 0; j < i && !seen; j = group_end(es, j))
				seen = !strcmp(es->v[j].source, es->v[i].source);
			if (!seen)
				out_line(&o, "#include \"%s\"", es->v[i].source);
		}
	}
	out_line(&o, "#define AOTC_LINKED 1");
	for (int i = 0; i < es->n; i++)
		out_line(&o, "#include \"%.*s.cu\"", (int)strlen(es->v[i].include) - 2, es->v[i].include);
	out_line(&o, "\n/* The current device's compute capability, major * 10 + minor. Cached per");
	out_line(&o, " * device: a launch should not pay two attribute queries. 0 is \"not yet\". */");
	out_line(&o, "static cudaError_t aot_link_device_cc(int *cc)\n{");
	o.indent = 1;
	out_line(&o, "enum { CACHED = 64 };");
	out_line(&o, "static std::atomic<int> cache[CACHED];");
	out_line(&o, "int dev, major, minor;");
	out_line(&o, "cudaError_t e = cudaGetDevice(&dev);");
	out_line(&o, "if (e != cudaSuccess)");
	out_line(&o, "\treturn e;");
	out_line(&o, "if (dev >= 0 && dev < CACHED && (*cc = cache[dev].load(std::memory_order_relaxed)) != 0)");
	out_line(&o, "\treturn cudaSuccess;");
	out_line(&o, "if ((e = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev)) != cudaSuccess ||");
	out_line(&o, "    (e = cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev)) != cudaSuccess)");
	out_line(&o, "\treturn e;");
	out_line(&o, "*cc = major * 10 + minor;");
	out_line(&o, "if (dev >= 0 && dev < CACHED)");
	out_line(&o, "\tcache[dev].store(*cc, std::memory_order_relaxed);");
	out_line(&o, "return cudaSuccess;");
	o.indent = 0;
	out_line(&o, "}");
	for (int i = 0; i < es->n; i = group_end(es, i)) {
		const entry *e = &es->v[i];
		const char *k = e->kernel;
		out_line(&o, "\nextern \"C\" cudaError_t aot_%s_cuda_launch(%s)\n{", k, e->launch.text);
		o.indent = 1;
		out_line(&o, "int aot_cc;");
		out_line(&o, "cudaError_t aot_e = aot_link_device_cc(&aot_cc);");
		out_line(&o, "if (aot_e != cudaSuccess)");
		out_line(&o, "\treturn aot_e;");
		arch_switch(&o, es, i, group_end(es, i), "aot_cc", "launch", &e->launch, NULL,
		            "cudaErrorInvalidValue");
		o.indent = 0;
		out_line(&o, "}");
	}
	return o.sb.data;
}

/* ---- Entry point --------------------------------------------------------------- */

int link_dirs(const char *const *dirs, int ndirs, const char *out_path, const char *include_as,
              diags *d)
{
	size_t ol = strlen(out_path);
	if (ol < 3 || strcmp(out_path + ol - 2, ".c") != 0 || out_path[ol - 3] == '/') {
		diag_plain_error(d, "link: -o '%s' must name the C file to write (e.g. aot_sgemm.c)", out_path);
		return 2;
	}
	const char *slash = strrchr(out_path, '/');
	char *base = trim_dup(slash ? slash + 1 : out_path, strlen(slash ? slash + 1 : out_path) - 2);
	char *out_dir = slash ? trim_dup(out_path, slash == out_path ? 1 : (size_t)(slash - out_path))
	                      : xstrdup(".");
	char *out_real = realpath(out_dir, NULL);
	int status = 0;
	if (!out_real) {
		diag_plain_error(d, "link: cannot use the directory of '%s': %s", out_path, strerror(errno));
		status = 2;
	} else if (!path_is_plain(base) || !strncmp(base, "_aot_", 5)) {
		/* _aot_ names are emit's: linking over a per-arch file would destroy it. */
		diag_plain_error(d, "link: -o '%s': the file name must be plain (letters, digits, . _ + -) and not start with _aot_",
		                 out_path);
		status = 2;
	}
	if (ndirs == 0) {
		diag_plain_error(d, "link: needs at least one directory of emitted files");
		status = 2;
	}
	entries es = {0};
	/* Every directory is scanned even after a bad one: all errors at once. */
	bool scan = status == 0;
	for (int i = 0; scan && i < ndirs; i++)
		if (!scan_dir(&es, dirs[i], out_real, d))
			status = 1;
	if (status == 0) {
		qsort(es.v, (size_t)es.n, sizeof *es.v, cmp_entry);
		if (!check_groups(&es, d))
			status = 1;
	}
	/* One --include-as names one file: refused for kernels from several. */
	for (int i = 1; status == 0 && include_as && i < es.n; i++)
		if (strcmp(es.v[i].source, es.v[0].source) != 0) {
			diag_plain_error(d, "link: --include-as names one kernel source, but the linked files include %s and %s",
			                 es.v[0].source, es.v[i].source);
			status = 1;
		}
	if (status == 0 && include_as && !include_text_ok(include_as)) {
		diag_plain_error(d, "link: --include-as '%s' cannot be written in an #include", include_as);
		status = 1;
	}
	/* aotc.h beside the output, as emit writes it, before the three files:
	 * a foreign aotc.h there stops the link with nothing written. */
	char *hdr = NULL;
	size_t hdr_len = 0;
	if (status == 0) {
		int h = emit_header_copy(out_dir, &hdr, &hdr_len, d);
		if (h < 0) {
			status = 3;
		} else if (h > 0) {
			strbuf path;
			strbuf_init(&path);
			strbuf_printf(&path, "%s/aotc.h", out_dir);
			if (write_file_atomic(path.data, hdr, hdr_len) < 0) {
				diag_plain_error(d, "cannot write %s: %s", path.data, strerror(errno));
				status = 3;
			}
			strbuf_finish(&path);
		}
		free(hdr);
	}
	if (status == 0) {
		strbuf guard;
		strbuf_init(&guard);
		strbuf_puts(&guard, "AOTC_LINK_");
		for (const char *p = base; *p; p++)
			strbuf_putc(&guard, isalnum((unsigned char)*p) ? (char)toupper((unsigned char)*p) : '_');
		strbuf_puts(&guard, "_H");
		gen g = {.es = &es, .base = base, .guard = guard.data, .include_as = include_as};
		/* All three in memory first: a bad input never leaves a part written. */
		char *files[3] = {gen_c(&g), gen_h(&g), gen_cu(&g)};
		const char *ext[3] = {"c", "h", "cu"};
		for (int i = 0; i < 3 && status == 0; i++) {
			strbuf path;
			strbuf_init(&path);
			strbuf_printf(&path, "%.*s.%s", (int)(ol - 2), out_path, ext[i]);
			if (write_file_atomic(path.data, files[i], strlen(files[i])) < 0) {
				diag_plain_error(d, "cannot write %s: %s", path.data, strerror(errno));
				status = 3;
			}
			strbuf_finish(&path);
		}
		for (int i = 0; i < 3; i++)
			free(files[i]);
		strbuf_finish(&guard);
		if (status == 0 && !d->quiet_warnings) {
			printf("aotc: linked");
			for (int i = 0; i < es.n; i = group_end(&es, i)) {
				printf("%s %s (", i ? ";" : "", es.v[i].kernel);
				for (int j = i; j < group_end(&es, i); j++)
					printf("%s%s", j > i ? ", " : "", es.v[j].arch);
				printf(")");
			}
			printf(" into %.*s.{c,h,cu}\n", (int)(ol - 2), out_path);
		}
	}
	for (int i = 0; i < es.n; i++)
		entry_finish(&es.v[i]);
	free(es.v);
	free(out_real);
	free(out_dir);
	free(base);
	return status;
}
