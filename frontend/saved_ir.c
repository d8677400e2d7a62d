/* The saved IR (frontend.h): a parse kept beside the saved dispatch, so
 * that `aotc emit` with nothing changed starts no libclang. It is used only
 * when every input of the parse matches, checked without parsing: the
 * listed files are re-read and hashed as hash_sources hashes them. What it
 * cannot see is what the source hash never covered: system headers beyond
 * the CUDA root and libclang versions it names, and a header that would now
 * be found earlier on the include path than the one listed (a new file, as
 * ccache's direct mode cannot see either). No libclang here.
 *
 *   {"aotc_saved_ir": 1, "aotc": VERSION, "libclang": "clang version ...",
 *    "frontend": "auto" | "shim", "cuda": ROOT | null, "source": PATH,
 *    "defines": [...], "include_dirs": [...], "files": [...],
 *    "source_hash": HEX, "said": [{"kind", "file", "line", "col", "message"}],
 *    "ir": {aotc parse's document}} */
#include "frontend.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>

#include "util.h"

#define SAVED_IR_VERSION 1

bool frontend_hash_files(const char *path, const char *const *files, int n, char out[33])
{
	strbuf sb;
	strbuf_init(&sb);
	bool ok = true;
	for (int i = -1; i < n && ok; i++) {
		const char *f = i < 0 ? path : files[i];
		struct stat st;
		size_t len;
		char *text = NULL;
		/* never a pipe or a device a hostile list names */
		ok = stat(f, &st) == 0 && S_ISREG(st.st_mode) &&
		     (text = read_file_max(f, &len, (size_t)AOTC_INPUT_MAX_MIB << 20)) != NULL;
		if (ok) {
			strbuf_putn(&sb, text, len);
			strbuf_putc(&sb, 0);
		}
		free(text);
	}
	if (ok)
		hash_hex(sb.data, sb.len, out);
	strbuf_finish(&sb);
	return ok;
}

static const char *frontend_mode(void)
{
	const char *mode = getenv("AOTC_FRONTEND"); /* checked by frontend_env_ok */
	return mode && !strcmp(mode, "shim") ? "shim" : "auto";
}

static json_t *string_array(const char *const *v, int n)
{
	json_t *a = json_array();
	for (int i = 0; i < n; i++)
		json_array_append_new(a, json_string(v[i]));
	return a;
}

/* Whether a is exactly the n strings of v, in order. */
static bool same_strings(const json_t *a, const char *const *v, int n)
{
	if (!json_is_array(a) || json_array_size(a) != (size_t)n)
		return false;
	for (int i = 0; i < n; i++) {
		const char *s = json_string_value(json_array_get(a, (size_t)i));
		if (!s || strcmp(s, v[i]) != 0)
			return false;
	}
	return true;
}

static bool same_string(const json_t *j, const char *s)
{
	return s ? json_is_string(j) && !strcmp(json_string_value(j), s) : json_is_null(j);
}

/* The saved IR's module when every input matches; its diagnostics into
 * said. NULL otherwise, quietly. */
static aotc_module *load_saved(const char *path, const frontend_options *opt, const char *saved, diag_list *said)
{
	struct stat st;
	if (stat(saved, &st) != 0 || !S_ISREG(st.st_mode))
		return NULL;
	size_t len;
	char *text = read_file_max(saved, &len, (size_t)AOTC_INPUT_MAX_MIB << 20);
	json_t *root = text ? json_loadb(text, len, 0, NULL) : NULL;
	free(text);
	aotc_module *m = NULL;
	const char **files = NULL;
	char *ir = NULL;
	const json_t *ver = json_object_get(root, "aotc_saved_ir");
	char clang_version[FRONTEND_VERSION_MAX];
	frontend_clang_version(clang_version);
	if (!json_is_integer(ver) || json_integer_value(ver) != SAVED_IR_VERSION ||
	    !same_string(json_object_get(root, "aotc"), AOTC_VERSION_STRING) ||
	    !same_string(json_object_get(root, "libclang"), clang_version) ||
	    !same_string(json_object_get(root, "frontend"), frontend_mode()) ||
	    !same_string(json_object_get(root, "cuda"), frontend_cuda_root(path, opt)) ||
	    !same_string(json_object_get(root, "source"), path) ||
	    !same_strings(json_object_get(root, "defines"), opt->defines, opt->ndefines) ||
	    !same_strings(json_object_get(root, "include_dirs"), opt->include_dirs, opt->ninclude_dirs))
		goto out;
	/* The files the hash covers, as the parse hashed them. */
	const json_t *list = json_object_get(root, "files");
	const char *hash = json_string_value(json_object_get(root, "source_hash"));
	if (!json_is_array(list) || !hash || json_array_size(list) > 100000)
		goto out;
	int nfiles = (int)json_array_size(list);
	files = xcalloc((size_t)nfiles + 1, sizeof *files);
	for (int i = 0; i < nfiles; i++)
		if (!(files[i] = json_string_value(json_array_get(list, (size_t)i))))
			goto out;
	char now[33];
	if (!frontend_hash_files(path, files, nfiles, now) || strcmp(now, hash) != 0)
		goto out;
	/* What the parse said: warnings and notes (a parse with an error has
	 * no IR), about the source or a listed file (no other file is read to
	 * show a line). */
	const json_t *notes = json_object_get(root, "said");
	if (!json_is_array(notes))
		goto out;
	size_t i;
	const json_t *e;
	json_array_foreach(notes, i, e) {
		const char *kind = json_string_value(json_object_get(e, "kind"));
		const json_t *f = json_object_get(e, "file");
		const json_t *line = json_object_get(e, "line"), *col = json_object_get(e, "col");
		const char *msg = json_string_value(json_object_get(e, "message"));
		const char *file = json_string_value(f);
		bool known = !file || !strcmp(file, path);
		for (int j = 0; j < nfiles && !known; j++)
			known = !strcmp(file, files[j]);
		if (!kind || (strcmp(kind, "warning") && strcmp(kind, "note")) || !msg || !known ||
		    (f && !json_is_null(f) && !file) || !json_is_integer(line) || !json_is_integer(col) ||
		    json_integer_value(line) < 0 || json_integer_value(line) > 1 << 30 ||
		    json_integer_value(col) < 0 || json_integer_value(col) > 1 << 30)
			goto out;
		diag_list_add(said, kind, (aotc_loc){file, (int)json_integer_value(line), (int)json_integer_value(col)},
		              msg);
	}
	/* The IR itself, checked as any IR file is; the name in it is the one
	 * the parse sets (the source as named), which emitted files print. */
	const json_t *doc = json_object_get(root, "ir");
	ir = json_is_object(doc) ? json_dumps(doc, JSON_COMPACT | JSON_REAL_PRECISION(17)) : NULL;
	if (!ir)
		goto out;
	diags quiet;
	diags_init_buffered(&quiet);
	m = ir_from_json(ir, strlen(ir), saved, &quiet);
	diags_finish(&quiet);
	if (m && (strcmp(m->file, path) != 0 || strcmp(m->source_hash, hash) != 0)) {
		ir_module_destroy(m);
		m = NULL;
	}
out:
	if (!m)
		diag_list_finish(said);
	free(ir);
	free(files);
	json_decref(root);
	return m;
}

/* Writes the saved IR; false (errno set) when it cannot. */
static bool save(const char *path, const frontend_options *opt, const char *saved, const aotc_module *m,
                 char **files, const diag_list *said)
{
	char *ir = ir_to_json(m);
	json_t *doc = json_loads(ir, 0, NULL);
	free(ir);
	json_t *list = json_array(), *notes = json_array();
	for (char **f = files; *f; f++)
		json_array_append_new(list, json_string(*f));
	for (int i = 0; i < said->n; i++) {
		const diag_entry *e = &said->v[i];
		json_array_append_new(notes, json_pack("{s:s, s:o, s:i, s:i, s:s}", "kind", e->kind, "file",
		                                       e->file ? json_string(e->file) : json_null(), "line",
		                                       e->line, "col", e->col, "message", e->msg));
	}
	const char *cuda = frontend_cuda_root(path, opt);
	char clang_version[FRONTEND_VERSION_MAX];
	frontend_clang_version(clang_version);
	json_t *root = json_pack("{s:i, s:s, s:s, s:s, s:o, s:s, s:o, s:o, s:o, s:s, s:o, s:o}",
	                         "aotc_saved_ir", SAVED_IR_VERSION, "aotc", AOTC_VERSION_STRING,
	                         "libclang", clang_version, "frontend", frontend_mode(),
	                         "cuda", cuda ? json_string(cuda) : json_null(), "source", path,
	                         "defines", string_array(opt->defines, opt->ndefines),
	                         "include_dirs", string_array(opt->include_dirs, opt->ninclude_dirs),
	                         "files", list, "source_hash", m->source_hash, "said", notes, "ir", doc);
	/* json_pack fails on a name that is not UTF-8 (and steals the rest) */
	char *text = root ? json_dumps(root, JSON_INDENT(1) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17)) : NULL;
	json_decref(root);
	bool ok = false;
	if (!text) {
		errno = EILSEQ;
	} else {
		strbuf sb;
		strbuf_init(&sb);
		strbuf_puts(&sb, text);
		strbuf_putc(&sb, '\n');
		free(text);
		char *dir = xstrdup(saved), *slash = strrchr(dir, '/');
		if (slash)
			*slash = 0;
		ok = (!slash || mkdir_p(dir) == 0) && write_file_atomic(saved, sb.data, sb.len) == 0;
		free(dir);
		strbuf_finish(&sb);
	}
	return ok;
}

aotc_module *frontend_parse_saved(const char *path, const frontend_options *opt, const char *saved, bool *reused,
                                  diags *d)
{
	double t0 = monotonic_s();
	diag_list said;
	memset(&said, 0, sizeof said);
	aotc_module *m = load_saved(path, opt, saved, &said);
	*reused = m != NULL;
	if (m) {
		if (opt->verbose)
			fprintf(stderr, "aotc: reused the saved IR %s: %s and its includes are unchanged (%.1f ms)\n",
			        saved, path, (monotonic_s() - t0) * 1e3);
		diag_list_replay(&said, d);
		diag_list_finish(&said);
		return m;
	}
	diags rec;
	diags_init_list(&rec, &said);
	char **files = NULL;
	m = frontend_parse_files(path, opt, &files, &rec);
	diags_finish(&rec);
	diag_list_replay(&said, d);
	if (m && opt->verbose)
		fprintf(stderr, "aotc: parsed %s (%.0f ms)\n", path, (monotonic_s() - t0) * 1e3);
	/* --verbose adds clang's ignored errors: a parse that said something
	 * then is not what a plain one says. */
	if (m && files && (!opt->verbose || said.n == 0) && saving_allowed()) {
		if (save(path, opt, saved, m, files, &said)) {
			if (opt->verbose)
				fprintf(stderr, "aotc: saved its IR to %s\n", saved);
		} else if (opt->verbose) {
			fprintf(stderr, "aotc: note: cannot save the IR to %s: %s (emit parses again next time)\n", saved,
			        strerror(errno));
		}
	}
	frontend_free_files(files);
	diag_list_finish(&said);
	return m;
}
