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

#include <jansson.h>

#include "arch.h"
#include "emit.h"
#include "ir.h"
#include "outdir.h"
#include "text.h"
#include "util.h"

/* ---- Platforms --------------------------------------------------------------- */

/* What the linked files say differently for CUDA and ROCm; the launcher's
 * types and status names are emit's (emit_target_of). num is the device's
 * architecture number as the generated code calls it: arch_info.order. */
typedef struct platform {
	arch_kind kind;
	const char *name;         /* "CUDA", in messages */
	const char *num;          /* "cc": arch_for(int cc) */
	const char *num_fmt;      /* how the table of numbers writes one */
	const char *device_of;    /* "a device of <this>" */
	const char *num_note;     /* what the number is, after device_of in the provenance */
	const char *num_doc;      /* the header's line on the number */
	const char *compile_with; /* "<this> per linked architecture" */
	const char *runtime_include;
	const char *api;          /* "cuda": cudaGetDevice */
	const char *query_doc;    /* the comment over the device query */
	const char *query_vars;   /* its declarations */
	const char *query;        /* from the cache miss to *num (tab-indented lines) */
} platform;

static const platform platforms[] = {
	{ARCH_CUDA, "CUDA", "cc", "%d", "compute capability cc", " (major * 10 + minor)",
	 " * cc is a compute capability as major * 10 + minor (90 for sm90). */",
	 "nvcc and one -gencode", "cuda_runtime.h", "cuda",
	 "/* The current device's compute capability, major * 10 + minor. Cached per\n"
	 " * device: a launch should not pay two attribute queries. 0 is \"not yet\". */",
	 "int dev, major, minor;",
	 "\tif ((e = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev)) != cudaSuccess ||\n"
	 "\t    (e = cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev)) != cudaSuccess)\n"
	 "\t\treturn e;\n"
	 "\t*cc = major * 10 + minor;\n"},
	{ARCH_ROCM, "ROCm", "gfx", "0x%x", "gfx number gfx", " (gfx90a: 0x90a)",
	 " * gfx is a gfx number: the digits of the gfx name read as hex (0x90a for gfx90a,\n"
	 " * 0x942 for gfx942). */",
	 "hipcc and one --offload-arch", "hip/hip_runtime.h", "hip",
	 "/* The current device's gfx number: its gcnArchName (\"gfx90a:sramecc+:xnack-\")\n"
	 " * after \"gfx\" and before ':', read as hex. Cached per device: a launch should\n"
	 " * not pay a properties query. 0 is \"not yet\", or a name not of that form,\n"
	 " * which arch_for takes as older than every architecture. */",
	 "int dev, n = 0;",
	 "\thipDeviceProp_t prop;\n"
	 "\tif ((e = hipGetDeviceProperties(&prop, dev)) != hipSuccess)\n"
	 "\t\treturn e;\n"
	 "\tif (prop.gcnArchName[0] == 'g' && prop.gcnArchName[1] == 'f' && prop.gcnArchName[2] == 'x') {\n"
	 "\t\tfor (const char *p = prop.gcnArchName + 3; *p && *p != ':'; p++) {\n"
	 "\t\t\tint d = *p >= '0' && *p <= '9' ? *p - '0' : *p >= 'a' && *p <= 'f' ? *p - 'a' + 10 : -1;\n"
	 "\t\t\tif (d < 0 || n > 0xffff) {\n"
	 "\t\t\t\tn = 0;\n"
	 "\t\t\t\tbreak;\n"
	 "\t\t\t}\n"
	 "\t\t\tn = n * 16 + d;\n"
	 "\t\t}\n"
	 "\t}\n"
	 "\t*gfx = n;\n"},
};

static const platform *platform_of(arch_kind k)
{
	for (size_t i = 0; i < sizeof platforms / sizeof *platforms; i++)
		if (platforms[i].kind == k)
			return &platforms[i];
	return NULL;
}

/* "compute capability 9.0", "gfx90a": what two entries of one order share. */
static void describe_order(const arch_info *a, char *buf, size_t n)
{
	if (a->kind == ARCH_CUDA)
		snprintf(buf, n, "compute capability %d.%d", a->order / 10, a->order % 10);
	else
		snprintf(buf, n, "gfx%x", (unsigned)a->order);
}

/* ---- What one manifest says ----------------------------------------------------- */

typedef struct sig {
	char *text;     /* the parameter list as the linked files declare it; "" for none */
	char **names;
	int n;
} sig;

/* One architecture of one kernel, from its manifest. Owns its strings. */
typedef struct entry {
	char *kernel, *arch;
	char *family;       /* one type of AOTC_TYPES: the function's name (kernel is family_tag); else NULL */
	const arch_info *ai;
	char *manifest;     /* DIR/_aot_K_T.json as given, for messages */
	char *include;      /* its header relative to the output's directory */
	char *launcher;     /* its launcher likewise */
	char *dir_rel;      /* DIR relative to the output's directory */
	char *hw;           /* the hardware id it was tuned on, or NULL */
	char *libs;         /* "-lcublas": what its kernel file's AOTC_EXTERNs link with, or NULL */
	char *source;       /* the kernel source as its launcher includes it */
	char *prefix;       /* aot_K_cuda_A: what its files' names start with */
	uint64_t set;       /* its files' set hash (outdir.h) */
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
	free(e->family);
	free(e->arch);
	free(e->manifest);
	free(e->include);
	free(e->launcher);
	free(e->dir_rel);
	free(e->hw);
	free(e->libs);
	free(e->source);
	free(e->prefix);
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

/* Reading a manifest: every problem is reported against its file, and
 * reading goes on, so one run shows them all. */
typedef struct mreader {
	const char *path;
	diags *d;
	bool ok;
} mreader;

static void merr(mreader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void merr(mreader *r, const char *fmt, ...)
{
	char msg[1200];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	diag_error(r->d, (aotc_loc){r->path, 0, 0}, "%s", msg);
	r->ok = false;
}

/* o[key] as a string; NULL (reported) when absent or not one, NULL (not
 * reported) for a JSON null when null_ok. */
static const char *mstr(mreader *r, const json_t *o, const char *key, bool null_ok)
{
	const json_t *v = json_object_get(o, key);
	if (json_is_string(v))
		return json_string_value(v);
	if (!(null_ok && json_is_null(v)))
		merr(r, "\"%s\" is %s, not a string%s", key, v ? "something else" : "missing",
		     null_ok ? " or null" : "");
	return NULL;
}

/* A parameter list: [{"type": T, "name": N}, ...]. Types reach the linked
 * files, so only what ir_type_text_ok accepts (no code) passes; select()'s
 * are int64_t; launch()'s last is the stream (stream_t aot_stream). */
static void mparams(mreader *r, const json_t *o, const char *key, sig *s, const char *stream_t)
{
	const json_t *a = json_object_get(o, key);
	if (!json_is_array(a)) {
		merr(r, "\"%s\" is %s, not an array of parameters", key, a ? "something else" : "missing");
		return;
	}
	size_t n = json_array_size(a);
	s->names = xcalloc(n + 1, sizeof *s->names);
	strbuf text;
	strbuf_init(&text);
	for (size_t i = 0; i < n; i++) {
		const json_t *p = json_array_get(a, i);
		const char *type = json_string_value(json_object_get(p, "type"));
		const char *name = json_string_value(json_object_get(p, "name"));
		bool stream = stream_t && i == n - 1;
		const char *why = NULL;
		if (!type || !name)
			why = "not an object with a \"type\" and a \"name\" string";
		else if (!is_identifier(name))
			why = "its name is not a C identifier";
		else if (stream && (strcmp(type, stream_t) || strcmp(name, "aot_stream")))
			why = "the last is not the stream (aot_stream)";
		else if (!stream && !strncmp(name, "aot_", 4))
			why = "its name starts with aot_ (the emitter's)";
		else if (!stream_t && strcmp(type, "int64_t"))
			why = "a shape argument that is not int64_t";
		else if (!ir_type_text_ok(type))
			why = "its type is not a type aotc writes into emitted code";
		for (int k = 0; !why && k < s->n; k++)
			if (!strcmp(s->names[k], name))
				why = "its name is used twice";
		if (why) {
			merr(r, "\"%s\"[%zu]: %s", key, i, why);
			continue;
		}
		/* As emit declares it: "float *C", "int64_t M". */
		size_t tl = strlen(type);
		strbuf_printf(&text, "%s%s%s%s", s->n ? ", " : "", type, tl && type[tl - 1] == '*' ? "" : " ",
		              name);
		s->names[s->n++] = xstrdup(name);
	}
	if (stream_t && n == 0)
		merr(r, "\"%s\": no parameters (the last must be the stream)", key);
	s->text = text.data;
}

/* The manifest at e->manifest, read and parsed; NULL after diagnostics,
 * and for one of a format this aotc does not read. */
static json_t *read_manifest(mreader *r, diags *d)
{
	size_t len;
	char *text = read_file_max(r->path, &len, (size_t)AOTC_INPUT_MAX_MIB << 20);
	if (!text && errno == EFBIG) {
		merr(r, "larger than %d MiB (not a manifest aotc emit wrote)", AOTC_INPUT_MAX_MIB);
		return NULL;
	}
	if (!text) {
		diag_plain_error(d, "cannot read '%s': %s", r->path, strerror(errno));
		return NULL;
	}
	diags_add_source(d, r->path, text, len);
	json_error_t jerr;
	json_t *m = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
	free(text);
	if (!m) {
		diag_error(d, (aotc_loc){r->path, jerr.line > 0 ? jerr.line : 0, jerr.column > 0 ? jerr.column : 1},
		           "not a manifest aotc emit writes: %s", jerr.text);
		return NULL;
	}
	const json_t *ver = json_object_get(m, "aotc_manifest");
	if (!json_is_object(m) || !json_is_integer(ver) || json_integer_value(ver) < 1) {
		merr(r, "not a manifest aotc emit writes (no \"aotc_manifest\" format number)");
		json_decref(m);
		return NULL;
	}
	if (json_integer_value(ver) > AOTC_MANIFEST_VERSION) {
		merr(r, "written by a newer aotc (manifest format %lld; aotc %s reads format %d): link with that aotc, or emit again with this one",
		     (long long)json_integer_value(ver), AOTC_VERSION_STRING, AOTC_MANIFEST_VERSION);
		json_decref(m);
		return NULL;
	}
	return m;
}

/* The names emit derives from kernel and arch (base: "_aot_K_T"): the
 * manifest's own file name, its "prefix" and "set"; a manifest that says
 * otherwise was not written by it, or was renamed. */
static void mnames(mreader *r, entry *e, const json_t *m, const char *name, const char *base)
{
	strbuf want;
	strbuf_init(&want);
	strbuf_printf(&want, "%s.json", base);
	if (strcmp(name, want.data) != 0)
		merr(r, "describes kernel %s for %s, whose manifest is %s: emit it again rather than renaming",
		     e->kernel, e->arch, want.data);
	strbuf_finish(&want);
	const char *prefix = mstr(r, m, "prefix", false);
	if (prefix && strcmp(prefix, base + 1) != 0)
		merr(r, "\"prefix\" '%s' is not %s", prefix, base + 1);
	e->prefix = xstrdup(base + 1);
	/* The linked files check that they are built with the emit they were
	 * linked from: its set hash goes into them. */
	const char *set = NULL;
	if (!json_object_get(m, "set"))
		merr(r, "has no \"set\" (an older aotc wrote it): emit %s for %s again", e->kernel, e->arch);
	else if ((set = mstr(r, m, "set", false)) && (strlen(set) != 16 || strspn(set, "0123456789abcdef") != 16))
		merr(r, "\"set\" '%s' is not 16 lowercase hex digits", set);
	else if (set)
		e->set = strtoull(set, NULL, 16);
}

/* "files": the dispatch, header and launcher emit named base.c, base.h
 * and base.<launcher>, each there in dir; fn[i] is the manifest's name of
 * each, NULL where it is not that. */
static void mfiles(mreader *r, const entry *e, const json_t *m, const char *dir, const char *base,
                   const char *fn[3])
{
	const json_t *files = json_object_get(m, "files");
	const char *keys[3] = {"dispatch", "header", "launcher"};
	const char *exts[3] = {"c", "h", emit_target_of(e->ai->kind)->launcher_ext};
	if (!json_is_object(files))
		merr(r, "\"files\" is missing or not an object");
	strbuf want;
	strbuf_init(&want);
	for (int i = 0; i < 3 && json_is_object(files); i++) {
		if (!(fn[i] = mstr(r, files, keys[i], false)))
			continue;
		want.len = 0;
		strbuf_printf(&want, "%s.%s", base, exts[i]);
		if (strcmp(fn[i], want.data) != 0) {
			merr(r, "\"files\".\"%s\" is '%s', not %s", keys[i], fn[i], want.data);
			fn[i] = NULL;
			continue;
		}
		/* All three must be there, or the linked files would not build. */
		strbuf other;
		strbuf_init(&other);
		strbuf_printf(&other, "%s/%s", dir, fn[i]);
		if (access(other.data, R_OK) != 0) {
			diag_plain_error(r->d, "'%s' is missing beside '%s': emit %s for %s again", other.data,
			                 e->manifest, e->kernel, e->arch);
			r->ok = false;
		}
		strbuf_finish(&other);
	}
	strbuf_finish(&want);
}

/* "libraries": what the kernel file's AOTC_EXTERNs link with, as "-lNAME"s. */
static void mlibraries(mreader *r, entry *e, const json_t *m)
{
	const json_t *libs = json_object_get(m, "libraries");
	if (!json_is_array(libs)) {
		merr(r, "\"libraries\" is missing or not an array");
		return;
	}
	if (!json_array_size(libs))
		return;
	strbuf l;
	strbuf_init(&l);
	for (size_t i = 0; i < json_array_size(libs); i++) {
		const char *lib = json_string_value(json_array_get(libs, i));
		if (!lib || !is_identifier(lib))
			merr(r, "\"libraries\"[%zu] is not a library name (a C identifier)", i);
		else
			strbuf_printf(&l, "%s-l%s", l.len ? " " : "", lib);
	}
	e->libs = l.data;
}

/* The header and the launcher (fn[1], fn[2]) as the output's directory
 * reaches them through rel; false (diagnosed) when the header's path
 * cannot be written in an #include. */
static bool entry_paths(entry *e, const char *dir, const char *rel, const char *const fn[3], diags *d)
{
	e->dir_rel = xstrdup(rel);
	for (int i = 0; i < 2; i++) {
		strbuf inc;
		strbuf_init(&inc);
		if (strcmp(rel, "."))
			strbuf_printf(&inc, "%s/", rel);
		strbuf_puts(&inc, fn[i + 1]);
		*(i ? &e->launcher : &e->include) = inc.data;
	}
	if (!path_is_plain(e->include)) {
		diag_plain_error(d, "'%s': the path from the output's directory, %s, cannot be written in an #include; use a plainer directory name",
		                 dir, e->include);
		return false;
	}
	return true;
}

/* Reads the manifest DIR/name into e (rel: DIR from the output's directory).
 * False after diagnostics, and for a host kernel's (*host set: nothing to
 * link, but emitted beside the GPU ones it is no error either). */
static bool load_manifest(entry *e, const char *dir, const char *name, const char *rel, bool *host,
                          diags *d)
{
	strbuf path;
	strbuf_init(&path);
	strbuf_printf(&path, "%s/%s", dir, name);
	e->manifest = path.data;
	mreader r = {e->manifest, d, true};
	json_t *m = read_manifest(&r, d);
	if (!m)
		return false;
	const char *kernel = mstr(&r, m, "kernel", false), *arch = mstr(&r, m, "arch", false);
	const char *plat = mstr(&r, m, "platform", false);
	if (kernel && !is_identifier(kernel))
		merr(&r, "kernel '%s' is not a C identifier", kernel);
	if (arch && !(e->ai = arch_parse(arch)))
		merr(&r, "architecture '%s' is not one this aotc knows (aotc emit -h lists them)", arch);
	if (!r.ok || !plat)
		goto out;
	const char *kind = arch_kind_name(e->ai->kind);
	if (strcmp(plat, kind) != 0) {
		merr(&r, "platform '%s' is not %s's ('%s')", plat, arch, kind);
		goto out;
	}
	if (e->ai->kind == ARCH_HOST) {
		*host = true;
		r.ok = false;
		goto out;
	}
	e->kernel = xstrdup(kernel);
	e->arch = xstrdup(arch);
	const json_t *fam = json_object_get(m, "family");
	if (fam) {
		const char *f = json_string_value(fam);
		size_t n = f ? strlen(f) : 0;
		if (!f || !is_identifier(f) || strncmp(kernel, f, n) != 0 || kernel[n] != '_') {
			merr(&r, "\"family\" is not the name that kernel '%s' starts with", kernel);
			goto out;
		}
		e->family = xstrdup(f);
	}
	char tag[64];
	emit_arch_tag(e->ai, tag, sizeof tag);
	strbuf base;
	strbuf_init(&base);
	strbuf_printf(&base, "_aot_%s_%s", kernel, tag);
	const char *fn[3] = {NULL, NULL, NULL};
	mnames(&r, e, m, name, base.data);
	mfiles(&r, e, m, dir, base.data, fn);
	strbuf_finish(&base);
	const char *hw = mstr(&r, m, "hardware_id", true);
	if (hw)
		e->hw = xstrdup(hw);
	const char *hash = mstr(&r, m, "source_hash", false);
	if (hash && !ir_source_hash_ok(hash))
		merr(&r, "\"source_hash\" is not 32 lowercase hex digits");
	mlibraries(&r, e, m);
	const char *src = mstr(&r, m, "include", false);
	if (src && !include_text_ok(src))
		merr(&r, "its kernel source '%s' cannot be written in an #include", src);
	else if (src)
		e->source = xstrdup(src);
	mparams(&r, m, "select", &e->select, NULL);
	mparams(&r, m, "launch", &e->launch, emit_target_of(e->ai->kind)->stream_t);
	const json_t *nv = json_object_get(m, "variants");
	if (!json_is_integer(nv) || json_integer_value(nv) < 0)
		merr(&r, "\"variants\" is missing or not a count");
	if (r.ok)
		r.ok = entry_paths(e, dir, rel, fn, d);
out:
	json_decref(m);
	return r.ok;
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
	if (x->ai->order != y->ai->order)
		return x->ai->order < y->ai->order ? -1 : 1;
	return strcmp(x->arch, y->arch);
}

static bool has_suffix(const char *s, const char *sfx)
{
	size_t n = strlen(s), m = strlen(sfx);
	return n >= m && !strcmp(s + n - m, sfx);
}

/* Adds the manifests of one directory; false after a diagnostic. */
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
	bool headers = false; /* emitted files without manifests: an older aotc's */
	for (struct dirent *de; (de = readdir(dp)) != NULL;) {
		if (strncmp(de->d_name, "_aot_", 5) != 0)
			continue;
		headers |= has_suffix(de->d_name, ".h");
		if (!has_suffix(de->d_name, ".json"))
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
		if (headers)
			diag_plain_error(d, "'%s' holds no emitted files with a manifest (_aot_KERNEL_PLATFORM_ARCH.json): they are an older aotc's; emit them again with this one",
			                 dir);
		else
			diag_plain_error(d, "'%s' holds no emitted files (_aot_KERNEL_PLATFORM_ARCH.json): run aotc emit --arch ARCH -o '%s' first",
			                 dir, dir);
		ok = false;
	}
	strbuf rel;
	strbuf_init(&rel);
	relative_path(&rel, out_real, real);
	size_t nhost = 0;
	const char *a_host = NULL;
	for (size_t i = 0; i < nn; i++) {
		if (es->n == es->cap)
			es->v = xrealloc(es->v, (size_t)(es->cap = es->cap ? 2 * es->cap : 8) * sizeof *es->v);
		entry *e = &es->v[es->n];
		memset(e, 0, sizeof *e);
		bool host = false;
		if (load_manifest(e, dir, names[i], rel.data, &host, d)) {
			es->n++;
		} else {
			if (host && !nhost++)
				a_host = names[i];
			else if (!host)
				ok = false;
			entry_finish(e);
		}
	}
	/* Host files beside GPU ones (one build directory) are left out. */
	if (nn && nhost == nn) {
		diag_plain_error(d, "'%s' holds only host kernels' files (%s%s): nothing to link; link joins GPU architectures, build host files as they are",
		                 dir, a_host, nhost > 1 ? ", ..." : "");
		ok = false;
	}
	strbuf_finish(&rel);
	for (size_t i = 0; i < nn; i++)
		free(names[i]);
	free(names);
	free(real);
	return ok;
}

/* One platform per link; NULL after a diagnostic. */
static const platform *check_platform(const entries *es, diags *d)
{
	for (int i = 1; i < es->n; i++)
		if (es->v[i].ai->kind != es->v[0].ai->kind) {
			const entry *a = &es->v[0], *b = &es->v[i];
			diag_plain_error(d, "link: '%s' is %s (%s) and '%s' is %s (%s): one link joins one platform; link the %s and the %s directories separately, into different outputs",
			                 a->manifest, platform_of(a->ai->kind)->name, a->arch, b->manifest,
			                 platform_of(b->ai->kind)->name, b->arch, platform_of(a->ai->kind)->name,
			                 platform_of(b->ai->kind)->name);
			return NULL;
		}
	return platform_of(es->v[0].ai->kind);
}

/* Same kernel and architecture order twice, or signatures that differ
 * between the architectures of one kernel. es is sorted. */
static bool check_groups(const entries *es, diags *d)
{
	bool ok = true;
	for (int i = 1; i < es->n; i++) {
		const entry *a = &es->v[i - 1], *b = &es->v[i];
		if (strcmp(a->kernel, b->kernel) != 0)
			continue;
		if (a->ai->order == b->ai->order) {
			char what[64];
			describe_order(a->ai, what, sizeof what);
			if (a->hw && b->hw && strcmp(a->hw, b->hw) != 0)
				diag_plain_error(d, "kernel %s: '%s' (%s, measured on %s) and '%s' (%s, measured on %s) are both for %s: "
				                 "measurements of different hardware do not mix; link only one of them",
				                 a->kernel, a->manifest, a->arch, a->hw, b->manifest, b->arch, b->hw, what);
			else
				diag_plain_error(d, "kernel %s: '%s' (%s) and '%s' (%s) are both for %s; link only one of them",
				                 a->kernel, a->manifest, a->arch, b->manifest, b->arch, what);
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
			diag_error(d, (aotc_loc){b->manifest, 0, 0},
			           "kernel %s: the %s signature for %s (%s) differs from the one for %s (%s)",
			           b->kernel, k ? "launch" : "select", b->arch, sb->text, a->arch, sa->text);
			diag_note(d, (aotc_loc){a->manifest, 0, 0}, "the one for %s is here", a->arch);
			ok = false;
		}
	}
	return ok;
}

/* ---- Generation -------------------------------------------------------------- */

typedef struct gen {
	const entries *es;
	const platform *p;
	const emit_target *t;  /* the launcher's types and statuses */
	const char *tag;       /* "cuda", "rocm": aot_K_<tag>_select */
	const char *base;     /* the output's file name without directory and .c */
	const char *guard;
	const char *include_as; /* --include-as, or NULL */
	const char *prefix;    /* aotc_link_<base as an identifier>: the set hash's names */
	uint64_t set;          /* the set hash (outdir.h); 0 while it is being computed */
} gen;

/* [first, end) of the entries of kernel at index i. */
static int group_end(const entries *es, int i)
{
	int j = i;
	while (j < es->n && !strcmp(es->v[j].kernel, es->v[i].kernel))
		j++;
	return j;
}

/* select's architecture-number parameter: "cc" ("gfx"), unless a shape
 * argument already has that name (manifests refuse aot_ names, so aot_cc
 * is free). buf holds it. */
static const char *num_param(const gen *g, const entry *e, char *buf, size_t n)
{
	snprintf(buf, n, "%s", g->p->num);
	for (int i = 0; i < e->select.n; i++)
		if (!strcmp(e->select.names[i], g->p->num))
			snprintf(buf, n, "aot_%s", g->p->num);
	return buf;
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
	strbuf_printf(sb, " * The architecture for a device of %s%s:\n"
	              " * the highest linked one not newer than %s, else the lowest.\n"
	              " *\n"
	              " * Build: the per-architecture .c files and ", g->p->device_of, g->p->num_note, g->p->num);
	strbuf_printf(sb, "%s.c with any C compiler, and %s.%s alone\n"
	              " * with %s per linked architecture (it includes every\n"
	              " * architecture's launcher, so do not compile the per-architecture .%s files too);\n"
	              " * then link them together.\n", g->base, g->base, g->t->launcher_ext, g->p->compile_with,
	              g->t->launcher_ext);
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

/* Stops the compile of FILE.ext when FILE.h is of another link. */
static void set_check(out *o, const gen *g, const char *ext)
{
	char msg[700];
	snprintf(msg, sizeof msg, "%s.h and %s.%s are of different aotc links: run aotc link anew", g->base, g->base,
	         ext);
	outdir_set_check(&o->sb, g->prefix, g->set, msg);
}

/* switch (arch_for(cc)) { case j: RET aot_K_cuda_A_FN(ARGS); ... default: DFLT } */
static void arch_switch(out *o, const gen *g, int first, int end, const char *cc, const char *fn,
                        const sig *args, const char *extra, const char *dflt)
{
	const entries *es = g->es;
	const char *k = es->v[first].kernel;
	out_line(o, "switch (aot_%s_%s_arch_for(%s)) {", k, g->tag, cc);
	for (int j = first; j < end; j++) {
		out_line(o, "case %d:", j - first);
		for (int t = 0; t <= o->indent; t++)
			strbuf_putc(&o->sb, '\t');
		strbuf_printf(&o->sb, "return aot_%s_%s_%s_%s(", k, g->tag, es->v[j].arch, fn);
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
	const char *tag = g->tag, *num = g->p->num;
	out o = {.indent = 0};
	strbuf_init(&o.sb);
	provenance(&o, g, "Multi-architecture dispatch: the architecture whose tuning fits the device, then its variant for the shape. C99, no dependencies.");
	out_line(&o, "#include <stddef.h>");
	out_line(&o, "#include <stdint.h>\n");
	includes(&o, g);
	out_raw(&o, "\n/* Which link wrote these files, and from which emits: the headers must be\n"
	           " * those, and the launcher refers to this symbol, so files of two links, or a\n"
	           " * directory emitted anew since, fail to build together. */\n");
	set_check(&o, g, "c");
	for (int i = 0; i < es->n; i++) {
		char msg[700];
		snprintf(msg, sizeof msg, "%s is not of the emit %s.c was linked with: run aotc link anew",
		         es->v[i].include, g->base);
		outdir_set_check(&o.sb, es->v[i].prefix, es->v[i].set, msg);
	}
	strbuf_puts(&o.sb, "const int ");
	outdir_set_names(g->prefix, g->set, NULL, &o.sb);
	strbuf_puts(&o.sb, " = 1;\n");
	for (int i = 0; i < es->n; i = group_end(es, i)) {
		int end = group_end(es, i), na = end - i;
		const entry *e = &es->v[i];
		const char *k = e->kernel;
		char np[16];
		num_param(g, e, np, sizeof np);
		out_line(&o, "\n/* ---- %s ---- */\n", k);
		out_line(&o, "/* Lowest first: arch_for walks down from the highest. */");
		strbuf_printf(&o.sb, "static const int aot_%s_%s_%ss[%d] = {", k, tag, num, na);
		for (int j = i; j < end; j++) {
			strbuf_puts(&o.sb, j > i ? ", " : "");
			strbuf_printf(&o.sb, g->p->num_fmt, es->v[j].ai->order);
		}
		strbuf_puts(&o.sb, "};\n");
		strbuf_printf(&o.sb, "static const char *const aot_%s_%s_archs[%d] = {", k, tag, na);
		for (int j = i; j < end; j++)
			strbuf_printf(&o.sb, "%s\"%s\"", j > i ? ", " : "", es->v[j].arch);
		strbuf_puts(&o.sb, "};\n\n");
		out_line(&o, "int aot_%s_%s_num_archs(void) { return %d; }\n", k, tag, na);
		out_line(&o, "const char *aot_%s_%s_arch_at(int i)\n{", k, tag);
		out_line(&o, "\treturn i >= 0 && i < %d ? aot_%s_%s_archs[i] : NULL;\n}\n", na, k, tag);
		out_line(&o, "int aot_%s_%s_arch_for(int %s)\n{", k, tag, num);
		out_line(&o, "\tint i = %d;", na - 1);
		out_line(&o, "\twhile (i > 0 && aot_%s_%s_%ss[i] > %s)", k, tag, num, num);
		out_line(&o, "\t\ti--;");
		out_line(&o, "\treturn i;\n}\n");
		out_line(&o, "const char *aot_%s_%s_arch_name(int %s)\n{", k, tag, num);
		out_line(&o, "\treturn aot_%s_%s_archs[aot_%s_%s_arch_for(%s)];\n}\n", k, tag, k, tag, num);
		strbuf_printf(&o.sb, "int aot_%s_%s_select(int %s%s%s)\n{\n", k, tag, np,
		              e->select.n ? ", " : "", e->select.text);
		o.indent = 1;
		arch_switch(&o, g, i, end, np, "select", &e->select, NULL, "-1");
		o.indent = 0;
		out_line(&o, "}\n");
		out_line(&o, "int aot_%s_%s_num_variants(int %s)\n{", k, tag, num);
		o.indent = 1;
		arch_switch(&o, g, i, end, num, "num_variants", NULL, NULL, "0");
		o.indent = 0;
		out_line(&o, "}\n");
		out_line(&o, "const char *aot_%s_%s_variant_name(int %s, int v)\n{", k, tag, num);
		o.indent = 1;
		arch_switch(&o, g, i, end, num, "variant_name", NULL, "v", "NULL");
		o.indent = 0;
		out_line(&o, "}");
	}
	return o.sb.data;
}

static char *gen_h(const gen *g)
{
	const entries *es = g->es;
	const char *tag = g->tag, *num = g->p->num;
	out o = {.indent = 0};
	strbuf_init(&o.sb);
	provenance(&o, g, "Declarations of the multi-architecture dispatch and launcher.");
	out_line(&o, "#ifndef %s", g->guard);
	out_line(&o, "#define %s\n", g->guard);
	out_line(&o, "#include <stddef.h>");
	out_line(&o, "#include <stdint.h>\n");
	/* Launchers of half or bfloat16 buffers: their types' C++ headers,
	 * outside the extern "C" block, as each architecture's header has them. */
	bool half = false, bf16 = false;
	for (int i = 0; i < es->n; i++) {
		half |= strstr(es->v[i].launch.text, "half") != NULL;
		bf16 |= strstr(es->v[i].launch.text, "bfloat16") != NULL;
	}
	if (emit_type_headers(&o, g->t, half, bf16))
		out_raw(&o, "\n");
	out_line(&o, "#ifdef __cplusplus\nextern \"C\" {\n#endif\n");
	out_line(&o, "/* Which link wrote these files (docs/cli.md): the C file defines the symbol,");
	out_line(&o, " * the launcher refers to it, and both check the macro. */");
	strbuf_puts(&o.sb, "#define ");
	outdir_set_names(g->prefix, g->set, &o.sb, NULL);
	strbuf_printf(&o.sb, " UINT64_C(0x%016llx)\nextern const int ", (unsigned long long)g->set);
	outdir_set_names(g->prefix, g->set, NULL, &o.sb);
	strbuf_puts(&o.sb, ";\n");
	for (int i = 0; i < es->n; i = group_end(es, i)) {
		int end = group_end(es, i);
		const entry *e = &es->v[i];
		const char *k = e->kernel;
		char np[16];
		strbuf_printf(&o.sb, "\n/* ---- %s:", k);
		for (int j = i; j < end; j++)
			strbuf_printf(&o.sb, " %s", es->v[j].arch);
		strbuf_printf(&o.sb, " ----\n%s\n\n", g->p->num_doc);
		out_line(&o, "/* The linked architectures, lowest first; NULL for an index out of range. */");
		out_line(&o, "int aot_%s_%s_num_archs(void);", k, tag);
		out_line(&o, "const char *aot_%s_%s_arch_at(int i);", k, tag);
		out_line(&o, "/* The index of the architecture used on a device of %s:", g->p->device_of);
		out_line(&o, " * the highest not newer than %s, else the lowest. */", num);
		out_line(&o, "int aot_%s_%s_arch_for(int %s);", k, tag, num);
		out_line(&o, "const char *aot_%s_%s_arch_name(int %s);", k, tag, num);
		out_line(&o, "/* That architecture's variant for a shape, or -1 when none is valid there. */");
		strbuf_printf(&o.sb, "int aot_%s_%s_select(int %s%s%s);\n", k, tag, num_param(g, e, np, sizeof np),
		              e->select.n ? ", " : "", e->select.text);
		out_line(&o, "int aot_%s_%s_num_variants(int %s);", k, tag, num);
		out_line(&o, "/* \"sgemm<64, 128, 8, 8, 4>\"; NULL for an index out of range. */");
		out_line(&o, "const char *aot_%s_%s_variant_name(int %s, int v);", k, tag, num);
		out_line(&o, "\n#if %s", g->t->have_runtime);
		out_line(&o, "/* On the current device: its architecture's launcher, which selects and");
		out_line(&o, " * launches on stream (%s when no variant is valid). */", g->t->invalid);
		out_line(&o, "%s aot_%s_%s_launch(%s);", g->t->error_t, k, tag, e->launch.text);
		out_line(&o, "#endif");
	}
	out_line(&o, "\n#ifdef __cplusplus\n}\n#endif\n");
	/* Types of AOTC_TYPES: the launcher named by the function, which the
	 * buffers' types pick among those of every type's header. */
	for (int i = 0; i < es->n; i = group_end(es, i)) {
		const entry *e = &es->v[i];
		if (!e->family)
			continue;
		char name[300], callee[300];
		snprintf(name, sizeof name, "aot_%s_%s_launch", e->family, tag);
		snprintf(callee, sizeof callee, "aot_%s_%s_launch", e->kernel, tag);
		emit_type_overload(&o, g->t, name, e->launch.text, callee, (const char *const *)e->launch.names,
		                   e->launch.n);
	}
	out_line(&o, "#endif");
	return o.sb.data;
}

/* The launcher: FILE.cu (CUDA) or FILE.hip (ROCm). */
static char *gen_launcher(const gen *g)
{
	const entries *es = g->es;
	const platform *p = g->p;
	const emit_target *t = g->t;
	out o = {.indent = 0};
	strbuf_init(&o.sb);
	provenance(&o, g, "Multi-architecture launcher: the current device's architecture, then its launcher.");
	out_line(&o, "#include <atomic>\n");
	out_line(&o, "#include <%s>\n", p->runtime_include);
	includes(&o, g);
	set_check(&o, g, t->launcher_ext);
	/* One translation unit for every architecture (nvcc with one -gencode
	 * each, hipcc with one --offload-arch): the kernel source once, then
	 * each architecture's launcher, which skips its own include of the
	 * source, so nothing the source defines is defined twice in the
	 * program. */
	/* A kernel file's own main() is not the application's (as in emit). */
	if (g->include_as) {
		out_line(&o, "#define main aot_%s_kernel_file_main", es->v[0].kernel);
		out_line(&o, "#include \"%s\"", g->include_as);
		out_line(&o, "#undef main");
	} else {
		/* Each source once: kernels of one file share it. */
		for (int i = 0; i < es->n; i = group_end(es, i)) {
			bool seen = false;
			for (int j = 0; j < i && !seen; j = group_end(es, j))
				seen = !strcmp(es->v[j].source, es->v[i].source);
			if (seen)
				continue;
			out_line(&o, "#define main aot_%s_kernel_file_main", es->v[i].kernel);
			out_line(&o, "#include \"%s\"", es->v[i].source);
			out_line(&o, "#undef main");
		}
	}
	out_line(&o, "#define AOTC_LINKED 1");
	for (int i = 0; i < es->n; i++)
		out_line(&o, "#include \"%s\"", es->v[i].launcher);
	out_line(&o, "\n%s", p->query_doc);
	out_line(&o, "static %s aot_link_device_%s(int *%s)\n{", t->error_t, p->num, p->num);
	o.indent = 1;
	out_line(&o, "enum { CACHED = 64 };");
	out_line(&o, "static std::atomic<int> cache[CACHED];");
	out_line(&o, "%s", p->query_vars);
	out_line(&o, "%s e = %sGetDevice(&dev);", t->error_t, p->api);
	out_line(&o, "if (e != %s)", t->ok);
	out_line(&o, "\treturn e;");
	out_line(&o, "if (dev >= 0 && dev < CACHED && (*%s = cache[dev].load(std::memory_order_relaxed)) != 0)", p->num);
	out_line(&o, "\treturn %s;", t->ok);
	out_raw(&o, p->query);
	out_line(&o, "if (dev >= 0 && dev < CACHED)");
	out_line(&o, "\tcache[dev].store(*%s, std::memory_order_relaxed);", p->num);
	out_line(&o, "return %s;", t->ok);
	o.indent = 0;
	out_line(&o, "}");
	for (int i = 0; i < es->n; i = group_end(es, i)) {
		const entry *e = &es->v[i];
		const char *k = e->kernel;
		char var[16];
		snprintf(var, sizeof var, "aot_%s", p->num);
		out_line(&o, "\nextern \"C\" %s aot_%s_%s_launch(%s)\n{", t->error_t, k, g->tag, e->launch.text);
		o.indent = 1;
		/* A use the compiler cannot drop: FILE.c of another link does
		 * not define it. */
		strbuf_puts(&o.sb, "\tif (");
		outdir_set_names(g->prefix, g->set, NULL, &o.sb);
		strbuf_puts(&o.sb, " != 1) /* links only with the C file of this link */\n");
		out_line(&o, "\treturn %s;", t->invalid);
		out_line(&o, "int %s;", var);
		out_line(&o, "%s aot_e = aot_link_device_%s(&%s);", t->error_t, p->num, var);
		out_line(&o, "if (aot_e != %s)", t->ok);
		out_line(&o, "\treturn aot_e;");
		arch_switch(&o, g, i, group_end(es, i), var, "launch", &e->launch, NULL, t->invalid);
		o.indent = 0;
		out_line(&o, "}");
	}
	return o.sb.data;
}

/* ---- Entry point --------------------------------------------------------------- */

aotc_status link_dirs(const char *const *dirs, int ndirs, const char *out_path, const char *include_as,
              diags *d)
{
	size_t ol = strlen(out_path);
	if (ol < 3 || strcmp(out_path + ol - 2, ".c") != 0 || out_path[ol - 3] == '/') {
		diag_plain_error(d, "link: -o '%s' must name the C file to write (e.g. aot_sgemm.c)", out_path);
		return AOTC_USAGE;
	}
	const char *slash = strrchr(out_path, '/');
	char *base = trim_dup(slash ? slash + 1 : out_path, strlen(slash ? slash + 1 : out_path) - 2);
	char *out_dir = slash ? trim_dup(out_path, slash == out_path ? 1 : (size_t)(slash - out_path))
	                      : xstrdup(".");
	char *out_real = realpath(out_dir, NULL);
	aotc_status status = AOTC_OK;
	if (!out_real) {
		diag_plain_error(d, "link: cannot use the directory of '%s': %s", out_path, strerror(errno));
		status = AOTC_USAGE;
	} else if (!path_is_plain(base) || !strncmp(base, "_aot_", 5)) {
		/* _aot_ names are emit's: linking over a per-arch file would destroy it. */
		diag_plain_error(d, "link: -o '%s': the file name must be plain (letters, digits, . _ + -) and not start with _aot_",
		                 out_path);
		status = AOTC_USAGE;
	}
	if (ndirs == 0) {
		diag_plain_error(d, "link: needs at least one directory of emitted files");
		status = AOTC_USAGE;
	}
	entries es = {0};
	const platform *plat = NULL;
	/* Every directory is scanned even after a bad one: all errors at once. */
	bool scan = status == 0;
	for (int i = 0; scan && i < ndirs; i++)
		if (!scan_dir(&es, dirs[i], out_real, d))
			status = AOTC_DIAGNOSED;
	if (status == 0 && !(plat = check_platform(&es, d)))
		status = AOTC_DIAGNOSED;
	if (status == 0) {
		qsort(es.v, (size_t)es.n, sizeof *es.v, cmp_entry);
		if (!check_groups(&es, d))
			status = AOTC_DIAGNOSED;
	}
	/* One --include-as names one file: refused for kernels from several. */
	for (int i = 1; status == 0 && include_as && i < es.n; i++)
		if (strcmp(es.v[i].source, es.v[0].source) != 0) {
			diag_plain_error(d, "link: --include-as names one kernel source, but the linked files include %s and %s",
			                 es.v[0].source, es.v[i].source);
			status = AOTC_DIAGNOSED;
		}
	if (status == 0 && include_as && !include_text_ok(include_as)) {
		diag_plain_error(d, "link: --include-as '%s' cannot be written in an #include", include_as);
		status = AOTC_DIAGNOSED;
	}
	/* aotc.h beside the output, as emit writes it; a foreign aotc.h there
	 * stops the link with nothing written. */
	char *hdr = NULL;
	size_t hdr_len = 0;
	int h = 0;
	if (status == 0 && (h = emit_header_copy(out_dir, &hdr, &hdr_len, d)) < 0)
		status = AOTC_ENVIRONMENT;
	if (status == 0) {
		strbuf guard, prefix;
		strbuf_init(&guard);
		strbuf_init(&prefix);
		strbuf_puts(&guard, "AOTC_LINK_");
		strbuf_puts(&prefix, "aotc_link_");
		for (const char *p = base; *p; p++) {
			bool id = isalnum((unsigned char)*p);
			strbuf_putc(&guard, id ? (char)toupper((unsigned char)*p) : '_');
			strbuf_putc(&prefix, id ? *p : '_');
		}
		strbuf_puts(&guard, "_H");
		gen g = {.es = &es, .p = plat, .t = emit_target_of(plat->kind), .tag = arch_kind_name(plat->kind),
		         .base = base, .guard = guard.data, .include_as = include_as, .prefix = prefix.data};
		/* All in memory first: a bad input never leaves a part written.
		 * Twice: the set hash is the hash of the files made with 0 in its
		 * place. */
		enum { NOWN = 3 };
		const char *ext[NOWN] = {"c", "h", g.t->launcher_ext};
		strbuf names[NOWN];
		char *files[NOWN] = {NULL, NULL, NULL};
		outdir_file set[NOWN + 1];
		for (int i = 0; i < NOWN; i++) {
			strbuf_init(&names[i]);
			strbuf_printf(&names[i], "%s.%s", base, ext[i]);
		}
		for (int pass = 0; pass < 2; pass++) {
			for (int i = 0; i < NOWN; i++)
				free(files[i]);
			files[0] = gen_c(&g);
			files[1] = gen_h(&g);
			files[2] = gen_launcher(&g);
			for (int i = 0; i < NOWN; i++)
				set[i] = (outdir_file){names[i].data, files[i], strlen(files[i])};
			if (pass == 0)
				g.set = outdir_set_hash(set, NOWN);
		}
		int n = NOWN;
		if (h > 0) {
			/* first, as emit does */
			memmove(set + 1, set, NOWN * sizeof *set);
			set[0] = (outdir_file){"aotc.h", hdr, hdr_len};
			n++;
		}
		if (outdir_write(out_dir, "link", set, n, d) < 0)
			status = AOTC_ENVIRONMENT;
		for (int i = 0; i < NOWN; i++) {
			free(files[i]);
			strbuf_finish(&names[i]);
		}
		strbuf_finish(&guard);
		strbuf_finish(&prefix);
		if (status == 0 && !d->quiet_warnings) {
			printf("aotc: linked");
			for (int i = 0; i < es.n; i = group_end(&es, i)) {
				printf("%s %s (", i ? ";" : "", es.v[i].kernel);
				for (int j = i; j < group_end(&es, i); j++)
					printf("%s%s", j > i ? ", " : "", es.v[j].arch);
				printf(")");
			}
			printf(" into %.*s.{c,h,%s}\n", (int)(ol - 2), out_path, g.t->launcher_ext);
		}
	}
	free(hdr);
	for (int i = 0; i < es.n; i++)
		entry_finish(&es.v[i]);
	free(es.v);
	free(out_real);
	free(out_dir);
	free(base);
	return status;
}
