#include "db.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char *status_names[MS_COUNT] = {
	[MS_OK] = "ok",           [MS_WRONG] = "wrong",
	[MS_FAULT] = "fault",     [MS_TIMEOUT] = "timeout",
	[MS_RESOURCES] = "resources", [MS_COMPILE_ERROR] = "compile_error",
	[MS_INVALID] = "invalid", [MS_SKIPPED] = "skipped",
	[MS_OUT_OF_BOUNDS] = "out_of_bounds",
};

const char *meas_status_name(meas_status s) { return status_names[s]; }

bool meas_status_parse(const char *name, meas_status *out)
{
	for (int i = 0; i < MS_COUNT; i++)
		if (strcmp(status_names[i], name) == 0) {
			*out = (meas_status)i;
			return true;
		}
	return false;
}

char *db_path(const char *dir, const char *kernel, const char *hardware_id)
{
	strbuf sb;
	strbuf_init(&sb);
	strbuf_printf(&sb, "%s/%s.%s.json", dir, kernel, hardware_id);
	return sb.data;
}

/* ---- Tables ------------------------------------------------------------- */

/* Grows the config and shape tables and the cell grid to these capacities. */
static void grow_cells(tune_db *db, int configs_cap, int shapes_cap)
{
	db->configs = xrealloc(db->configs, (size_t)configs_cap * sizeof *db->configs);
	db->shapes = xrealloc(db->shapes, (size_t)shapes_cap * (size_t)(db->nshape_args + 1) *
	                                      sizeof *db->shapes);
	int *cell = xmalloc((size_t)configs_cap * (size_t)shapes_cap * sizeof *cell);
	for (int i = 0; i < configs_cap * shapes_cap; i++)
		cell[i] = -1;
	for (int c = 0; c < db->nconfigs; c++)
		for (int s = 0; s < db->nshapes; s++)
			cell[c * shapes_cap + s] = db->cell[c * db->shapes_cap + s];
	free(db->cell);
	db->cell = cell;
	db->configs_cap = configs_cap;
	db->shapes_cap = shapes_cap;
}

int db_find_config(const tune_db *db, const char *name)
{
	for (int i = 0; i < db->nconfigs; i++)
		if (strcmp(db->configs[i].name, name) == 0)
			return i;
	return -1;
}

int db_config(tune_db *db, const char *name, const int64_t *values)
{
	int i = db_find_config(db, name);
	if (i >= 0)
		return i;
	if (db->nconfigs == db->configs_cap) {
		grow_cells(db, db->configs_cap * 2, db->shapes_cap);
	}
	db_entry *c = &db->configs[db->nconfigs];
	c->name = xstrdup(name);
	c->values = xmalloc((size_t)db->ntunables * sizeof *c->values + 1);
	memcpy(c->values, values, (size_t)db->ntunables * sizeof *values);
	return db->nconfigs++;
}

int db_find_shape(const tune_db *db, const int64_t *row)
{
	size_t w = (size_t)db->nshape_args;
	for (int i = 0; i < db->nshapes; i++)
		if (memcmp(db->shapes + (size_t)i * w, row, w * sizeof *row) == 0)
			return i;
	return -1;
}

int db_shape(tune_db *db, const int64_t *row)
{
	int i = db_find_shape(db, row);
	if (i >= 0)
		return i;
	if (db->nshapes == db->shapes_cap) {
		grow_cells(db, db->configs_cap, db->shapes_cap * 2);
	}
	memcpy(db->shapes + (size_t)db->nshapes * (size_t)db->nshape_args, row,
	       (size_t)db->nshape_args * sizeof *row);
	return db->nshapes++;
}

const measurement *db_get(const tune_db *db, int config, int shape)
{
	if (config < 0 || config >= db->nconfigs || shape < 0 || shape >= db->nshapes)
		return NULL;
	int m = db->cell[config * db->shapes_cap + shape];
	return m >= 0 ? &db->meas[m] : NULL;
}

static void free_meas(measurement *m)
{
	free(m->samples);
	free(m->note);
}

/* Stores a copy of m, replacing an earlier one for the same cell. */
static void put(tune_db *db, const measurement *m)
{
	int *slot = &db->cell[m->config * db->shapes_cap + m->shape];
	measurement copy = *m;
	copy.samples = xmalloc((size_t)m->nsamples * sizeof *m->samples + 1);
	if (m->nsamples)
		memcpy(copy.samples, m->samples, (size_t)m->nsamples * sizeof *m->samples);
	copy.note = m->note ? xstrdup(m->note) : NULL;
	if (*slot >= 0) {
		free_meas(&db->meas[*slot]);
		db->meas[*slot] = copy;
		return;
	}
	if (db->nmeas == db->meas_cap) {
		db->meas_cap = db->meas_cap ? db->meas_cap * 2 : 256;
		db->meas = xrealloc(db->meas, (size_t)db->meas_cap * sizeof *db->meas);
	}
	*slot = db->nmeas;
	db->meas[db->nmeas++] = copy;
}

/* ---- JSON form ---------------------------------------------------------- */

static json_t *jints(const int64_t *v, int n)
{
	json_t *a = json_array();
	for (int i = 0; i < n; i++)
		json_array_append_new(a, json_integer(v[i]));
	return a;
}

static json_t *jstrings(char *const *v, int n)
{
	json_t *a = json_array();
	for (int i = 0; i < n; i++)
		json_array_append_new(a, json_string(v[i]));
	return a;
}

/* A measurement; with names (journal) it stands on its own, without
 * (document) it refers to the config and shape lists by index. */
static json_t *jmeas(const tune_db *db, const measurement *m, bool self_contained)
{
	json_t *o = json_object();
	if (self_contained) {
		json_object_set_new(o, "config", json_string(db->configs[m->config].name));
		json_object_set_new(o, "values", jints(db->configs[m->config].values, db->ntunables));
		json_object_set_new(o, "shape", jints(db->shapes + (size_t)m->shape * db->nshape_args,
		                                      db->nshape_args));
	} else {
		json_object_set_new(o, "config", json_integer(m->config));
		json_object_set_new(o, "shape", json_integer(m->shape));
	}
	json_object_set_new(o, "status", json_string(meas_status_name(m->status)));
	if (m->status == MS_OK)
		json_object_set_new(o, "time_ms", json_real(m->time_ms));
	if (m->nsamples) {
		json_t *s = json_array();
		for (int i = 0; i < m->nsamples; i++)
			json_array_append_new(s, json_real(m->samples[i]));
		json_object_set_new(o, "samples", s);
	}
	if (!isnan(m->error))
		json_object_set_new(o, "error", json_real(m->error));
	if (m->screened)
		json_object_set_new(o, "screened", json_true());
	if (m->note)
		json_object_set_new(o, "note", json_string(m->note));
	return o;
}

typedef struct reader {
	diags *d;
	const char *path;
	int line;          /* journal line, or 0 */
	bool failed;
} reader;

static void bad(reader *r, const char *what)
{
	if (!r->failed)
		diag_error(r->d, (aotc_loc){r->path, r->line, r->line ? 1 : 0},
		           "invalid tuning database: %s", what);
	r->failed = true;
}

static bool read_ints(reader *r, const json_t *a, int64_t *out, int n)
{
	if (!json_is_array(a) || (int)json_array_size(a) != n) {
		bad(r, "wrong number of values");
		return false;
	}
	for (int i = 0; i < n; i++) {
		const json_t *v = json_array_get(a, (size_t)i);
		if (!json_is_integer(v)) {
			bad(r, "expected integers");
			return false;
		}
		out[i] = json_integer_value(v);
	}
	return true;
}

/* Fills m from o (config/shape already resolved by the caller). */
static bool read_meas(reader *r, const json_t *o, measurement *m)
{
	memset(m, 0, sizeof *m);
	m->error = NAN;
	const char *st = json_string_value(json_object_get(o, "status"));
	if (!st || !meas_status_parse(st, &m->status)) {
		bad(r, "measurement without a known status");
		return false;
	}
	const json_t *t = json_object_get(o, "time_ms");
	if (m->status == MS_OK && !json_is_number(t)) {
		bad(r, "ok measurement without time_ms");
		return false;
	}
	m->time_ms = json_is_number(t) ? json_number_value(t) : NAN;
	const json_t *s = json_object_get(o, "samples");
	if (s && !json_is_array(s)) {
		bad(r, "samples must be an array");
		return false;
	}
	m->nsamples = s ? (int)json_array_size(s) : 0;
	m->samples = xmalloc((size_t)m->nsamples * sizeof *m->samples + 1);
	for (int i = 0; i < m->nsamples; i++) {
		const json_t *v = json_array_get(s, (size_t)i);
		if (!json_is_number(v)) {
			free(m->samples);
			bad(r, "samples must be numbers");
			return false;
		}
		m->samples[i] = json_number_value(v);
	}
	const json_t *e = json_object_get(o, "error");
	m->error = json_is_number(e) ? json_number_value(e) : NAN;
	m->screened = json_is_true(json_object_get(o, "screened"));
	const char *note = json_string_value(json_object_get(o, "note"));
	m->note = note ? xstrdup(note) : NULL;
	return true;
}

static char **read_names(reader *r, const json_t *a, int *n)
{
	if (!json_is_array(a)) {
		bad(r, "expected a list of names");
		*n = 0;
		return NULL;
	}
	*n = (int)json_array_size(a);
	char **v = xcalloc((size_t)*n + 1, sizeof *v);
	for (int i = 0; i < *n; i++) {
		const char *s = json_string_value(json_array_get(a, (size_t)i));
		if (!s) {
			bad(r, "names must be strings");
			s = "?";
		}
		v[i] = xstrdup(s);
	}
	return v;
}

static tune_db *db_new(const char *path)
{
	tune_db *db = xcalloc(1, sizeof *db);
	grow_cells(db, 64, 64);
	db->path = xstrdup(path);
	strbuf sb;
	strbuf_init(&sb);
	strbuf_printf(&sb, "%s.journal", path);
	db->journal_path = sb.data;
	return db;
}

/* Reads the document at db->path into db (which has only its paths).
 * Returns 1 loaded, 0 absent, -1 error (diagnosed). */
static int load_document(tune_db *db, diags *d)
{
	size_t len;
	char *text = read_file(db->path, &len);
	if (!text) {
		if (errno == ENOENT)
			return 0;
		diag_error(d, (aotc_loc){db->path, 0, 0}, "cannot read tuning database: %s",
		           strerror(errno));
		return -1;
	}
	json_error_t err;
	json_t *root = json_loadb(text, len, 0, &err);
	free(text);
	reader r = {d, db->path, 0, false};
	if (!root) {
		diag_error(d, (aotc_loc){db->path, err.line > 0 ? err.line : 0, err.column > 0 ? err.column : 1},
		           "invalid tuning database: %s", err.text);
		return -1;
	}
	const json_t *ver = json_object_get(root, "aotc_db");
	if (!json_is_integer(ver) || json_integer_value(ver) != AOTC_DB_VERSION) {
		bad(&r, "not an aotc database of schema version 1");
		goto done;
	}
	const char *kernel = json_string_value(json_object_get(root, "kernel"));
	const char *source = json_string_value(json_object_get(root, "source"));
	const char *hash = json_string_value(json_object_get(root, "source_hash"));
	json_t *hw = json_object_get(root, "hardware");
	json_t *method = json_object_get(root, "method");
	if (!kernel || !source || !hash || !json_is_object(hw) || !json_is_object(method)) {
		bad(&r, "needs kernel, source, source_hash, hardware and method");
		goto done;
	}
	db->kernel = xstrdup(kernel);
	db->source = xstrdup(source);
	db->source_hash = xstrdup(hash);
	db->hardware = json_deep_copy(hw);
	db->method = json_deep_copy(method);
	db->tunables = read_names(&r, json_object_get(root, "tunables"), &db->ntunables);
	db->shape_args = read_names(&r, json_object_get(root, "shape_args"), &db->nshape_args);
	if (r.failed)
		goto done;
	grow_cells(db, db->configs_cap, db->shapes_cap); /* rows now have nshape_args */

	const json_t *configs = json_object_get(root, "configs");
	const json_t *shapes = json_object_get(root, "shapes");
	const json_t *meas = json_object_get(root, "measurements");
	if (!json_is_array(configs) || !json_is_array(shapes) || !json_is_array(meas)) {
		bad(&r, "needs configs, shapes and measurements arrays");
		goto done;
	}
	int64_t *row = xmalloc((size_t)(db->ntunables + db->nshape_args + 1) * sizeof *row);
	for (size_t i = 0; i < json_array_size(configs) && !r.failed; i++) {
		const json_t *c = json_array_get(configs, i);
		const char *name = json_string_value(json_object_get(c, "name"));
		if (!name) {
			bad(&r, "config without a name");
			break;
		}
		if (read_ints(&r, json_object_get(c, "values"), row, db->ntunables))
			db_config(db, name, row);
	}
	for (size_t i = 0; i < json_array_size(shapes) && !r.failed; i++)
		if (read_ints(&r, json_array_get(shapes, i), row, db->nshape_args))
			db_shape(db, row);
	free(row);
	for (size_t i = 0; i < json_array_size(meas) && !r.failed; i++) {
		const json_t *o = json_array_get(meas, i);
		const json_t *c = json_object_get(o, "config"), *s = json_object_get(o, "shape");
		if (!json_is_integer(c) || !json_is_integer(s) || json_integer_value(c) < 0 ||
		    json_integer_value(c) >= db->nconfigs || json_integer_value(s) < 0 ||
		    json_integer_value(s) >= db->nshapes) {
			bad(&r, "measurement refers to no config or shape");
			break;
		}
		measurement m;
		if (!read_meas(&r, o, &m))
			break;
		m.config = (int)json_integer_value(c);
		m.shape = (int)json_integer_value(s);
		put(db, &m);
		free_meas(&m);
	}
done:
	json_decref(root);
	return r.failed ? -1 : 1;
}

/* Replays the journal; a torn last line (the kill came mid-write) is
 * dropped, anything else malformed is an error. Returns entries read or -1. */
static int replay_journal(tune_db *db, diags *d)
{
	FILE *f = fopen(db->journal_path, "r");
	if (!f)
		return errno == ENOENT ? 0 : -1;
	reader r = {d, db->journal_path, 0, false};
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	int count = 0;
	int64_t *row = xmalloc((size_t)(db->ntunables + db->nshape_args + 1) * sizeof *row);
	while (!r.failed && (n = getline(&line, &cap, f)) > 0) {
		r.line++;
		bool complete = line[n - 1] == '\n';
		json_t *o = json_loadb(line, (size_t)n, 0, NULL);
		if (!o) {
			if (!complete && fgetc(f) == EOF)
				break; /* torn tail */
			bad(&r, "malformed journal line");
			break;
		}
		const char *name = json_string_value(json_object_get(o, "config"));
		measurement m;
		if (!name || !read_ints(&r, json_object_get(o, "values"), row, db->ntunables)) {
			bad(&r, "journal entry without a config");
		} else {
			int c = db_config(db, name, row);
			if (read_ints(&r, json_object_get(o, "shape"), row, db->nshape_args)) {
				int s = db_shape(db, row);
				if (read_meas(&r, o, &m)) {
					m.config = c;
					m.shape = s;
					put(db, &m);
					free_meas(&m);
					count++;
				}
			}
		}
		json_decref(o);
	}
	free(row);
	free(line);
	fclose(f);
	db->unsaved = count;
	return r.failed ? -1 : count;
}

static void set_names(char ***dst, int *n, const char *const *src, int count)
{
	*dst = xcalloc((size_t)count + 1, sizeof **dst);
	for (int i = 0; i < count; i++)
		(*dst)[i] = xstrdup(src[i]);
	*n = count;
}

static void clear_contents(tune_db *db)
{
	for (int i = 0; i < db->nmeas; i++)
		free_meas(&db->meas[i]);
	for (int i = 0; i < db->nconfigs; i++) {
		free(db->configs[i].name);
		free(db->configs[i].values);
	}
	db->nmeas = db->nconfigs = db->nshapes = 0;
	for (int i = 0; i < db->configs_cap * db->shapes_cap; i++)
		db->cell[i] = -1;
}

static bool same_names(char **a, int na, const char *const *b, int nb)
{
	if (na != nb)
		return false;
	for (int i = 0; i < na; i++)
		if (strcmp(a[i], b[i]) != 0)
			return false;
	return true;
}

/* The directory of a file path, created with its parents. */
static int mkdir_parent(const char *path)
{
	char *dir = xstrdup(path);
	char *slash = strrchr(dir, '/');
	int rc = 0;
	if (slash && slash != dir) {
		*slash = 0;
		rc = mkdir_p(dir);
	}
	free(dir);
	return rc;
}

tune_db *db_open(const char *path, const char *kernel, const char *source,
                 const char *source_hash, const char *const *tunables, int ntunables,
                 const char *const *shape_args, int nshape_args, json_t *hardware,
                 json_t *method, int *invalidated, diags *d)
{
	*invalidated = 0;
	tune_db *db = db_new(path);
	int loaded = load_document(db, d);
	if (loaded < 0)
		goto fail;
	if (loaded && strcmp(db->kernel, kernel) != 0) {
		diag_error(d, (aotc_loc){path, 0, 0}, "this database is for kernel '%s', not '%s'",
		           db->kernel, kernel);
		goto fail;
	}
	if (!loaded) {
		set_names(&db->tunables, &db->ntunables, tunables, ntunables);
		set_names(&db->shape_args, &db->nshape_args, shape_args, nshape_args);
		grow_cells(db, db->configs_cap, db->shapes_cap); /* rows now have nshape_args */
	}
	/* The journal was written against the same kernel; replay it before
	 * deciding whether the measurements still hold. */
	if (replay_journal(db, d) < 0)
		goto fail;
	bool stale = loaded && (strcmp(db->source_hash, source_hash) != 0 ||
	                        !same_names(db->tunables, db->ntunables, tunables, ntunables) ||
	                        !same_names(db->shape_args, db->nshape_args, shape_args, nshape_args));
	if (stale) {
		*invalidated = db->nmeas;
		clear_contents(db);
		for (int i = 0; i < db->ntunables; i++)
			free(db->tunables[i]);
		free(db->tunables);
		for (int i = 0; i < db->nshape_args; i++)
			free(db->shape_args[i]);
		free(db->shape_args);
		set_names(&db->tunables, &db->ntunables, tunables, ntunables);
		set_names(&db->shape_args, &db->nshape_args, shape_args, nshape_args);
		unlink(db->journal_path);
		db->unsaved = 0;
	}
	free(db->kernel);
	free(db->source);
	free(db->source_hash);
	db->kernel = xstrdup(kernel);
	db->source = xstrdup(source);
	db->source_hash = xstrdup(source_hash);
	json_decref(db->hardware);
	json_decref(db->method);
	db->hardware = json_deep_copy(hardware);
	db->method = json_deep_copy(method);
	if (mkdir_parent(path) < 0) {
		diag_error(d, (aotc_loc){path, 0, 0}, "cannot create the database directory: %s",
		           strerror(errno));
		goto fail;
	}
	db->journal = fopen(db->journal_path, "a");
	if (!db->journal) {
		diag_error(d, (aotc_loc){db->journal_path, 0, 0}, "cannot write: %s", strerror(errno));
		goto fail;
	}
	return db;
fail:
	db_close(db);
	return NULL;
}

tune_db *db_load(const char *path, diags *d)
{
	tune_db *db = db_new(path);
	int loaded = load_document(db, d);
	if (loaded == 0)
		diag_error(d, (aotc_loc){path, 0, 0}, "no tuning database here");
	if (loaded <= 0 || replay_journal(db, d) < 0) {
		db_close(db);
		return NULL;
	}
	return db;
}

void db_close(tune_db *db)
{
	if (!db)
		return;
	if (db->journal) {
		fclose(db->journal);
		if (db->unsaved == 0)
			unlink(db->journal_path); /* empty: everything is in the document */
	}
	clear_contents(db);
	free(db->configs);
	free(db->shapes);
	free(db->meas);
	free(db->cell);
	for (int i = 0; i < db->ntunables; i++)
		free(db->tunables[i]);
	free(db->tunables);
	for (int i = 0; i < db->nshape_args; i++)
		free(db->shape_args[i]);
	free(db->shape_args);
	json_decref(db->hardware);
	json_decref(db->method);
	free(db->kernel);
	free(db->source);
	free(db->source_hash);
	free(db->path);
	free(db->journal_path);
	free(db);
}

int db_record(tune_db *db, const measurement *m)
{
	put(db, m);
	json_t *o = jmeas(db, m, true);
	char *line = json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(7));
	json_decref(o);
	/* Written through to the kernel at once, so a kill of aotc loses
	 * nothing recorded; fsync'd at most once a second, so a power loss
	 * loses at most a second of measurements without an fsync per line. */
	int rc = 0;
	if (fputs(line, db->journal) < 0 || fputc('\n', db->journal) < 0 ||
	    fflush(db->journal) != 0)
		rc = -1;
	time_t now = time(NULL);
	if (rc == 0 && now != db->synced_at) {
		if (fdatasync(fileno(db->journal)) != 0)
			rc = -1;
		db->synced_at = now;
	}
	free(line);
	db->unsaved++;
	return rc;
}

/* ' "key": value,\n' with value compact, or for a list one item a line;
 * takes the reference to v. */
static void put_field(strbuf *sb, const char *key, json_t *v, bool list)
{
	const size_t flags = JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(7);
	strbuf_printf(sb, " \"%s\": ", key);
	if (list && json_array_size(v) > 0) {
		strbuf_puts(sb, "[\n");
		for (size_t i = 0; i < json_array_size(v); i++) {
			char *item = json_dumps(json_array_get(v, i), flags | JSON_ENCODE_ANY);
			strbuf_printf(sb, "  %s%s\n", item, i + 1 < json_array_size(v) ? "," : "");
			free(item);
		}
		strbuf_puts(sb, " ]");
	} else {
		char *text = json_dumps(v, flags | JSON_ENCODE_ANY);
		strbuf_puts(sb, text);
		free(text);
	}
	strbuf_puts(sb, ",\n");
	json_decref(v);
}

int db_merge(tune_db *db, const tune_db *from)
{
	int added = 0;
	for (int i = 0; i < from->nmeas; i++) {
		const measurement *m = &from->meas[i];
		int c = db_config(db, from->configs[m->config].name, from->configs[m->config].values);
		int s = db_shape(db, from->shapes + (size_t)m->shape * from->nshape_args);
		if (db_get(db, c, s))
			continue;
		measurement copy = *m;
		copy.config = c;
		copy.shape = s;
		put(db, &copy);
		added++;
	}
	return added;
}

int db_save(tune_db *db)
{
	json_t *configs = json_array();
	for (int i = 0; i < db->nconfigs; i++)
		json_array_append_new(configs, json_pack("{s:s, s:o}", "name", db->configs[i].name,
			"values", jints(db->configs[i].values, db->ntunables)));
	json_t *shapes = json_array();
	for (int i = 0; i < db->nshapes; i++)
		json_array_append_new(shapes, jints(db->shapes + (size_t)i * db->nshape_args,
		                                    db->nshape_args));
	/* Measurements in (config, shape) order, so the same data gives the
	 * same bytes whatever order it was measured in. */
	json_t *meas = json_array();
	for (int c = 0; c < db->nconfigs; c++)
		for (int s = 0; s < db->nshapes; s++) {
			const measurement *m = db_get(db, c, s);
			if (m)
				json_array_append_new(meas, jmeas(db, m, false));
		}
	/* Written by hand rather than json_dumps(root): one config, shape or
	 * measurement a line keeps the file small and its diffs readable. */
	strbuf sb;
	strbuf_init(&sb);
	strbuf_printf(&sb, "{\n \"aotc_db\": %d,\n", AOTC_DB_VERSION);
	put_field(&sb, "kernel", json_string(db->kernel), false);
	put_field(&sb, "source", json_string(db->source), false);
	put_field(&sb, "source_hash", json_string(db->source_hash), false);
	put_field(&sb, "hardware", json_incref(db->hardware), false);
	put_field(&sb, "method", json_incref(db->method), false);
	put_field(&sb, "tunables", jstrings(db->tunables, db->ntunables), false);
	put_field(&sb, "shape_args", jstrings(db->shape_args, db->nshape_args), false);
	put_field(&sb, "configs", configs, true);
	put_field(&sb, "shapes", shapes, true);
	put_field(&sb, "measurements", meas, true);
	sb.len -= 2; /* the last ",\n" */
	strbuf_puts(&sb, "\n}\n");
	char *text = sb.data;
	size_t n = sb.len - 1;
	int rc = write_file_atomic(db->path, text, n + 1);
	free(text);
	if (rc < 0)
		return -1;
	/* The document now holds everything the journal did. */
	if (db->journal) {
		fclose(db->journal);
		db->journal = fopen(db->journal_path, "w");
		if (!db->journal)
			return -1;
	} else {
		unlink(db->journal_path);
	}
	db->unsaved = 0;
	return 0;
}
