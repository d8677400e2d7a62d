#include "db.h"
#include "dbset.h"

#include "ir.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

static const char *status_names[MS_COUNT] = {
	[MS_OK] = "ok",           [MS_WRONG] = "wrong",
	[MS_FAULT] = "fault",     [MS_TIMEOUT] = "timeout",
	[MS_RESOURCES] = "resources", [MS_COMPILE_ERROR] = "compile_error",
	[MS_INVALID] = "invalid", [MS_SKIPPED] = "skipped",
	[MS_OUT_OF_BOUNDS] = "out_of_bounds", [MS_ERROR] = "error",
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

/* The p-th percentile (0..1) of the n sorted values v, interpolated. */
static double percentile(const double *v, int n, double p)
{
	double x = p * (n - 1);
	int i = (int)x;
	return i + 1 < n ? v[i] + (x - i) * (v[i + 1] - v[i]) : v[n - 1];
}

double meas_spread(const measurement *m)
{
	int n = m->nsamples;
	if (n < 2)
		return 0;
	double *v = xmalloc((size_t)n * sizeof *v);
	for (int i = 0; i < n; i++) { /* few samples: an insertion sort */
		int j = i;
		for (; j > 0 && v[j - 1] > m->samples[i]; j--)
			v[j] = v[j - 1];
		v[j] = m->samples[i];
	}
	double mid = percentile(v, n, 0.5), spread = mid > 0 ? (percentile(v, n, 0.9) - percentile(v, n, 0.1)) / mid : 0;
	free(v);
	return spread;
}

bool db_hash_valid(const char *h)
{
	size_t n = 0;
	for (; h[n]; n++)
		if (!((h[n] >= '0' && h[n] <= '9') || (h[n] >= 'a' && h[n] <= 'f')))
			return false;
	return n == AOTC_HASH_LEN;
}

/* ---- Tables ------------------------------------------------------------- */

/* Grows the config and shape tables and the cell grid to these capacities. */
static void grow_cells(tune_db *db, int configs_cap, int shapes_cap)
{
	db->configs = xrealloc(db->configs, (size_t)configs_cap * sizeof *db->configs);
	db->shapes = xrealloc(db->shapes, (size_t)shapes_cap * (size_t)(db->nshape_args + 1) *
	                                      sizeof *db->shapes);
	db->shape_calls = xrealloc(db->shape_calls, (size_t)shapes_cap * sizeof *db->shape_calls + 1);
	size_t cells = (size_t)configs_cap * (size_t)shapes_cap;
	int *cell = xmalloc(cells * sizeof *cell);
	for (size_t i = 0; i < cells; i++)
		cell[i] = -1;
	for (int c = 0; c < db->nconfigs; c++)
		memcpy(cell + (size_t)c * (size_t)shapes_cap, db->cell + (size_t)c * (size_t)db->shapes_cap,
		       (size_t)db->nshapes * sizeof *cell);
	free(db->cell);
	db->cell = cell;
	db->configs_cap = configs_cap;
	db->shapes_cap = shapes_cap;
}

static size_t cell_at(const tune_db *db, int config, int shape)
{
	return (size_t)config * (size_t)db->shapes_cap + (size_t)shape;
}

/* Configurations by name and shapes by row, so that loading, replaying and
 * merging stay linear: open addressing, at most half full, each slot an
 * index or -1. A lookup returns the slot holding the key, or the empty slot
 * where it would go. */
static size_t config_slot(const tune_db *db, const char *name)
{
	size_t mask = db->config_map_cap - 1;
	for (size_t i = XXH3_64bits(name, strlen(name)) & mask;; i = (i + 1) & mask) {
		int c = db->config_map[i];
		if (c < 0 || strcmp(db->configs[c].name, name) == 0)
			return i;
	}
}

static size_t shape_slot(const tune_db *db, const int64_t *row)
{
	size_t w = (size_t)db->nshape_args * sizeof *row;
	size_t mask = db->shape_map_cap - 1;
	for (size_t i = XXH3_64bits(row, w) & mask;; i = (i + 1) & mask) {
		int s = db->shape_map[i];
		if (s < 0 || memcmp(db->shapes + (size_t)s * (size_t)db->nshape_args, row, w) == 0)
			return i;
	}
}

/* Rebuilds both maps with room for the entries there are. */
static void rehash(tune_db *db)
{
	size_t cap = 16;
	while (cap < 2 * (size_t)db->nconfigs + 2)
		cap *= 2;
	free(db->config_map);
	db->config_map = xmalloc(cap * sizeof *db->config_map);
	db->config_map_cap = cap;
	for (size_t i = 0; i < cap; i++)
		db->config_map[i] = -1;
	for (int c = 0; c < db->nconfigs; c++)
		db->config_map[config_slot(db, db->configs[c].name)] = c;
	cap = 16;
	while (cap < 2 * (size_t)db->nshapes + 2)
		cap *= 2;
	free(db->shape_map);
	db->shape_map = xmalloc(cap * sizeof *db->shape_map);
	db->shape_map_cap = cap;
	for (size_t i = 0; i < cap; i++)
		db->shape_map[i] = -1;
	for (int s = 0; s < db->nshapes; s++)
		db->shape_map[shape_slot(db, db->shapes + (size_t)s * (size_t)db->nshape_args)] = s;
}

int db_find_config(const tune_db *db, const char *name)
{
	return db->config_map[config_slot(db, name)];
}

/* The configuration name, found or added with nvalues values (none: NULL),
 * stored zero-padded to at least ntunables, so that readers of the kernel's
 * columns never read past an alternative's or a routine's. */
static int entry(tune_db *db, const char *name, const int64_t *values, int nvalues)
{
	size_t slot = config_slot(db, name);
	if (db->config_map[slot] >= 0)
		return db->config_map[slot];
	if (db->nconfigs == db->configs_cap)
		grow_cells(db, db->configs_cap * 2, db->shapes_cap);
	db_entry *c = &db->configs[db->nconfigs];
	c->name = xstrdup(name);
	c->values = xcalloc((size_t)(nvalues > db->ntunables ? nvalues : db->ntunables) + 1, sizeof *c->values);
	if (nvalues)
		memcpy(c->values, values, (size_t)nvalues * sizeof *values);
	c->nvalues = nvalues;
	c->is_extern = false;
	c->function = NULL;
	c->code = NULL;
	db->config_map[slot] = db->nconfigs++;
	if (2 * (size_t)db->nconfigs + 2 > db->config_map_cap)
		rehash(db);
	return db->nconfigs - 1;
}

int db_config(tune_db *db, const char *name, const int64_t *values)
{
	return entry(db, name, values, db->ntunables);
}

int db_alt_config(tune_db *db, const char *name, const char *function, const int64_t *values,
                  int nvalues)
{
	int n = db->nconfigs, c = entry(db, name, values, nvalues);
	if (c == n)
		db->configs[c].function = xstrdup(function);
	return c;
}

int db_extern(tune_db *db, const char *name)
{
	int c = entry(db, name, NULL, 0);
	db->configs[c].is_extern = true;
	db->configs[c].nvalues = db->ntunables; /* zeros, as the kernel's */
	return c;
}

int db_find_shape(const tune_db *db, const int64_t *row)
{
	return db->shape_map[shape_slot(db, row)];
}

int db_shape(tune_db *db, const int64_t *row)
{
	size_t slot = shape_slot(db, row);
	if (db->shape_map[slot] >= 0)
		return db->shape_map[slot];
	if (db->nshapes == db->shapes_cap) {
		grow_cells(db, db->configs_cap, db->shapes_cap * 2);
	}
	memcpy(db->shapes + (size_t)db->nshapes * (size_t)db->nshape_args, row,
	       (size_t)db->nshape_args * sizeof *row);
	db->shape_calls[db->nshapes] = 0;
	db->shape_map[slot] = db->nshapes++;
	if (2 * (size_t)db->nshapes + 2 > db->shape_map_cap)
		rehash(db);
	return db->nshapes - 1;
}

bool db_has_calls(const tune_db *db)
{
	for (int s = 0; s < db->nshapes; s++)
		if (db->shape_calls[s])
			return true;
	return false;
}

const measurement *db_get(const tune_db *db, int config, int shape)
{
	if (config < 0 || config >= db->nconfigs || shape < 0 || shape >= db->nshapes)
		return NULL;
	int m = db->cell[cell_at(db, config, shape)];
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
	int *slot = &db->cell[cell_at(db, m->config, m->shape)];
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

/* ---- The key: code and compiler ------------------------------------------- */

static json_t *jmeas(const tune_db *db, const measurement *m, bool self_contained);
static void put_field(strbuf *sb, const char *key, json_t *v, bool list);

static const char *key_code(const db_key *key, const char *function, bool is_extern, const char *name)
{
	const char *c = key && key->code ? key->code(key->ctx, function, is_extern, name) : NULL;
	return c && *c ? c : NULL;
}

static bool same_str(const char *a, const char *b) { return a == b || (a && b && strcmp(a, b) == 0); }

/* Whether name is one of the items of list ("a, b, c"). */
static bool names_in_list(const char *list, const char *name)
{
	size_t n = strlen(name);
	for (const char *p = list; p && *p;) {
		const char *end = strstr(p, ", ");
		size_t len = end ? (size_t)(end - p) : strlen(p);
		if (len == n && strncmp(p, name, n) == 0)
			return true;
		p = end ? end + 2 : NULL;
	}
	return false;
}

/* The superseded document's key of a line: config, function, code,
 * compiler and shape. */
static char *superseded_key(const json_t *o)
{
	char *shape = json_dumps(json_object_get(o, "shape"), JSON_COMPACT | JSON_SORT_KEYS);
	const char *f = json_string_value(json_object_get(o, "function"));
	const char *comp = json_string_value(json_object_get(o, "compiler"));
	strbuf sb;
	strbuf_init(&sb);
	strbuf_printf(&sb, "%s|%s|%s|%s|%s", json_string_value(json_object_get(o, "config")), f ? f : "",
	              json_string_value(json_object_get(o, "code")), comp ? comp : "", shape ? shape : "");
	free(shape);
	return sb.data;
}

/* Adds line o (taken; its shape an array in db's shape_args order) to the
 * superseded measurements, the newest of one key kept. */
static void supersede_line(tune_db *db, json_t *o)
{
	const json_t *row = json_object_get(o, "shape");
	if (!db->superseded || !json_is_string(json_object_get(o, "code")) || !json_is_array(row) ||
	    (int)json_array_size(row) != db->nshape_args) {
		json_decref(o);
		return;
	}
	json_t *shape = json_object();
	for (int i = 0; i < db->nshape_args; i++)
		json_object_set(shape, db->shape_args[i], json_array_get(row, (size_t)i));
	json_object_set_new(o, "shape", shape);
	json_object_del(o, "source_hash");
	char *k = superseded_key(o);
	json_object_set_new(db->superseded, k, o);
	free(k);
	db->superseded_changed = true;
	db->moved++;
}

/* Drops every measurement of configuration c, into the superseded ones
 * when it has a code (and those would be kept). */
static int drop_config(tune_db *db, int c, bool keep)
{
	int n = 0;
	for (int s = 0; s < db->nshapes; s++) {
		int *slot = &db->cell[cell_at(db, c, s)];
		if (*slot < 0)
			continue;
		measurement *m = &db->meas[*slot];
		if (keep && db->configs[c].code)
			supersede_line(db, jmeas(db, m, true));
		free_meas(m);
		memset(m, 0, sizeof *m);
		m->config = -1;
		*slot = -1;
		n++;
	}
	return n;
}

/* Closes the gaps drop_config left in db->meas. */
static void compact(tune_db *db)
{
	int n = 0;
	for (int i = 0; i < db->nmeas; i++) {
		if (db->meas[i].config < 0)
			continue;
		db->meas[n] = db->meas[i];
		db->cell[cell_at(db, db->meas[n].config, db->meas[n].shape)] = n;
		n++;
	}
	db->nmeas = n;
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
		json_object_set_new(o, "source_hash", json_string(db->source_hash));
		const db_entry *c = &db->configs[m->config];
		json_object_set_new(o, "config", json_string(c->name));
		if (c->is_extern)
			json_object_set_new(o, "extern", json_true());
		if (c->function)
			json_object_set_new(o, "function", json_string(c->function));
		if (c->code)
			json_object_set_new(o, "code", json_string(c->code));
		if (db->compiler)
			json_object_set_new(o, "compiler", json_string(db->compiler));
		json_object_set_new(o, "values", c->is_extern ? json_array() : jints(c->values, c->nvalues));
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
	if (m->alternated > 0)
		json_object_set_new(o, "alternated", json_integer(m->alternated));
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

static void bad(reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void bad(reader *r, const char *fmt, ...)
{
	if (!r->failed) {
		strbuf sb;
		strbuf_init(&sb);
		va_list ap;
		va_start(ap, fmt);
		strbuf_vprintf(&sb, fmt, ap);
		va_end(ap);
		diag_error(r->d, (aotc_loc){r->path, r->line, r->line ? 1 : 0},
		           "invalid tuning database: %s", sb.data);
		strbuf_finish(&sb);
	}
	r->failed = true;
}

/* A name from the file, for a message: printable ASCII, at most 80 bytes. */
static void put_plain(strbuf *sb, const char *s)
{
	for (int i = 0; s[i]; i++) {
		if (i == 80) {
			strbuf_puts(sb, "...");
			break;
		}
		strbuf_putc(sb, s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '?');
	}
}

/* "config 3 'k<1, 2>', shape 7 (M=128 N=64 K=32)"; without the shape if
 * it is negative. */
static char *cell_name(const tune_db *db, int config, int shape)
{
	strbuf sb;
	strbuf_init(&sb);
	strbuf_printf(&sb, "config %d '", config);
	put_plain(&sb, db->configs[config].name);
	strbuf_putc(&sb, '\'');
	if (shape < 0)
		return sb.data;
	strbuf_printf(&sb, ", shape %d (", shape);
	for (int a = 0; a < db->nshape_args; a++) {
		strbuf_puts(&sb, a ? " " : "");
		put_plain(&sb, db->shape_args[a]);
		strbuf_printf(&sb, "=%lld", (long long)db->shapes[(size_t)shape * (size_t)db->nshape_args + (size_t)a]);
	}
	strbuf_putc(&sb, ')');
	return sb.data;
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
	if (m->status == MS_OK && !(m->time_ms > 0 && isfinite(m->time_ms))) {
		bad(r, "ok measurement with time_ms %g: a time is positive", m->time_ms);
		return false;
	}
	const json_t *s = json_object_get(o, "samples");
	if (s && !json_is_array(s)) {
		bad(r, "samples must be an array");
		return false;
	}
	m->nsamples = s ? (int)json_array_size(s) : 0;
	m->samples = xmalloc((size_t)m->nsamples * sizeof *m->samples + 1);
	for (int i = 0; i < m->nsamples; i++) {
		const json_t *v = json_array_get(s, (size_t)i);
		if (!json_is_number(v) || !(json_number_value(v) >= 0)) {
			free(m->samples);
			bad(r, "samples must be numbers of milliseconds, not negative");
			return false;
		}
		m->samples[i] = json_number_value(v);
	}
	const json_t *e = json_object_get(o, "error");
	m->error = json_is_number(e) ? json_number_value(e) : NAN;
	m->screened = json_is_true(json_object_get(o, "screened"));
	const json_t *alt = json_object_get(o, "alternated");
	m->alternated = json_is_integer(alt) && json_integer_value(alt) > 0 && json_integer_value(alt) < INT_MAX
	                ? (int)json_integer_value(alt) : 0;
	const char *note = json_string_value(json_object_get(o, "note"));
	m->note = note ? xstrdup(note) : NULL;
	return true;
}

static bool same_function(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

/* A configuration's "function" (document entry or journal line): NULL
 * when absent; else the alternative's name, its values (any number, up to
 * DB_MAX_VALUES) in vals and *nv. *ok false after bad(). */
static const char *read_function(reader *r, const json_t *o, const char *name, int64_t *vals, int *nv,
                                 bool *ok)
{
	*ok = true;
	const json_t *f = json_object_get(o, "function");
	if (!f)
		return NULL;
	strbuf sb;
	strbuf_init(&sb);
	put_plain(&sb, name);
	const json_t *v = json_object_get(o, "values");
	const char *fn = json_string_value(f);
	if (!fn || !ir_is_identifier(fn))
		bad(r, "config '%s': \"function\" must be a C identifier (an alternative's name)", sb.data);
	else if (json_object_get(o, "extern"))
		bad(r, "config '%s' is an alternative's variant and an extern", sb.data);
	else if (!json_is_array(v) || json_array_size(v) > DB_MAX_VALUES)
		bad(r, "config '%s': \"values\" must be an array of at most %d integers", sb.data, DB_MAX_VALUES);
	else if (read_ints(r, v, vals, (int)json_array_size(v)))
		*nv = (int)json_array_size(v);
	strbuf_finish(&sb);
	*ok = !r->failed;
	return *ok ? fn : NULL;
}

/* A configuration's "extern" (document entry or journal line): 0 when
 * absent or false, 1 when true (an AOTC_EXTERN routine: its name a C
 * identifier, its values []), -1 after bad(). */
static int read_extern(reader *r, const json_t *o, const char *name)
{
	const json_t *x = json_object_get(o, "extern");
	if (!x || json_is_false(x))
		return 0;
	strbuf sb;
	strbuf_init(&sb);
	put_plain(&sb, name);
	const json_t *v = json_object_get(o, "values");
	if (!json_is_true(x))
		bad(r, "config '%s': \"extern\" must be true or false", sb.data);
	else if (!ir_is_identifier(name))
		bad(r, "extern config '%s': the name is not a C identifier", sb.data);
	else if (!json_is_array(v) || json_array_size(v) != 0)
		bad(r, "extern config '%s' must have \"values\": []", sb.data);
	strbuf_finish(&sb);
	return r->failed ? -1 : 1;
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
	rehash(db);
	db->lock_fd = -1;
	db->path = xstrdup(path);
	db->journal_path = dbset_journal_path(path);
	db->lock_path = dbset_lock_path(path);
	return db;
}

/* Reads the document at db->path into db (which has only its paths).
 * Returns 1 loaded, 0 absent, -1 error (diagnosed; with not_db, *not_db
 * says whether the file is JSON but no aotc database at all). */
static int load_document(tune_db *db, bool *not_db, diags *d)
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
	if (not_db)
		*not_db = !ver;
	if (json_is_integer(ver) && json_integer_value(ver) > AOTC_DB_VERSION) {
		/* docs/database.md, "Versions": a newer schema is never guessed at */
		bad(&r, "written by a newer aotc (database schema %lld; aotc " AOTC_VERSION_STRING
		        " reads schema %d): tune again, or use the aotc that wrote it",
		    (long long)json_integer_value(ver), AOTC_DB_VERSION);
		goto done;
	}
	if (!json_is_integer(ver) || json_integer_value(ver) != AOTC_DB_VERSION) {
		bad(&r, "not an aotc database of schema version %d", AOTC_DB_VERSION);
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
	if (!db_hash_valid(hash)) {
		bad(&r, "source_hash is not %d lowercase hex digits", AOTC_HASH_LEN);
		goto done;
	}
	db->kernel = xstrdup(kernel);
	db->source = xstrdup(source);
	db->source_hash = xstrdup(hash);
	db->hardware = json_deep_copy(hw);
	db->method = json_deep_copy(method);
	const char *compiler = json_string_value(json_object_get(root, "compiler"));
	const char *machine = json_string_value(json_object_get(root, "machine"));
	db->compiler = compiler ? xstrdup(compiler) : NULL;
	db->machine = machine ? xstrdup(machine) : NULL;
	json_t *search = json_object_get(root, "search");
	db->search = json_is_object(search) ? json_deep_copy(search) : NULL;
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
	int64_t alt_row[DB_MAX_VALUES];
	/* Each configuration, shape and cell once: a repeat is a damaged or
	 * hand-merged file, and which copy holds would be an accident. */
	for (size_t i = 0; i < json_array_size(configs) && !r.failed; i++) {
		const json_t *c = json_array_get(configs, i);
		const char *name = json_string_value(json_object_get(c, "name"));
		if (!name) {
			bad(&r, "config without a name");
			break;
		}
		int seen = db_find_config(db, name);
		int ext = seen >= 0 ? 0 : read_extern(&r, c, name);
		int nv = 0;
		bool fok = true;
		const char *fn = seen >= 0 || ext ? NULL : read_function(&r, c, name, alt_row, &nv, &fok);
		if (seen >= 0) {
			char *what = cell_name(db, seen, -1);
			bad(&r, "configs[%zu] repeats %s", i, what);
			free(what);
		} else if (ext > 0) {
			db_extern(db, name);
		} else if (fn) {
			db_alt_config(db, name, fn, alt_row, nv);
		} else if (ext == 0 && fok && read_ints(&r, json_object_get(c, "values"), row, db->ntunables)) {
			db_config(db, name, row);
		}
		const json_t *code = json_object_get(c, "code");
		if (!r.failed && code && !(json_is_string(code) && db_hash_valid(json_string_value(code))))
			bad(&r, "configs[%zu]: code is not %d lowercase hex digits", i, AOTC_HASH_LEN);
		else if (!r.failed && code)
			db->configs[db->nconfigs - 1].code = xstrdup(json_string_value(code));
	}
	for (size_t i = 0; i < json_array_size(shapes) && !r.failed; i++)
		if (read_ints(&r, json_array_get(shapes, i), row, db->nshape_args)) {
			int seen = db_find_shape(db, row);
			if (seen >= 0)
				bad(&r, "shapes[%zu] repeats shapes[%d]", i, seen);
			else
				db_shape(db, row);
		}
	free(row);
	/* Optional: the calls an AOTC_RECORD file counted, one per shape. */
	const json_t *calls = json_object_get(root, "shape_calls");
	if (calls && !r.failed) {
		if (!json_is_array(calls) || (int)json_array_size(calls) != db->nshapes)
			bad(&r, "shape_calls must have one count per shape");
		for (int i = 0; !r.failed && i < db->nshapes; i++) {
			const json_t *c = json_array_get(calls, (size_t)i);
			if (!json_is_integer(c) || json_integer_value(c) < 0)
				bad(&r, "shape_calls[%d] is not a count", i);
			else
				db->shape_calls[i] = (uint64_t)json_integer_value(c);
		}
	}
	for (size_t i = 0; i < json_array_size(meas) && !r.failed; i++) {
		const json_t *o = json_array_get(meas, i);
		const json_t *c = json_object_get(o, "config"), *s = json_object_get(o, "shape");
		if (!json_is_integer(c) || !json_is_integer(s) || json_integer_value(c) < 0 ||
		    json_integer_value(c) >= db->nconfigs || json_integer_value(s) < 0 ||
		    json_integer_value(s) >= db->nshapes) {
			bad(&r, "measurement refers to no config or shape");
			break;
		}
		int ci = (int)json_integer_value(c), si = (int)json_integer_value(s);
		int seen = db->cell[cell_at(db, ci, si)];
		if (seen >= 0) {
			char *what = cell_name(db, ci, si);
			bad(&r, "measurements[%zu] repeats measurements[%d]: %s", i, seen, what);
			free(what);
			break;
		}
		measurement m;
		if (!read_meas(&r, o, &m))
			break;
		m.config = ci;
		m.shape = si;
		put(db, &m);
		free_meas(&m);
	}
done:
	json_decref(root);
	return r.failed ? -1 : 1;
}

/* Replays the journal lines measured from source hash; a torn last line
 * (the kill came mid-write) is dropped, lines of another source hash (or
 * none: an older aotc) are skipped and counted in db->journal_ignored,
 * anything else malformed is an error. With keep, the lines replayed are
 * appended to it and *dropped says whether any line was not (the journal
 * should then be rewritten before more is appended to it). Returns entries
 * replayed or -1. */
static int replay_journal(tune_db *db, const char *hash, const db_key *key, strbuf *keep, bool *dropped,
                          diags *d)
{
	FILE *f = fopen(db->journal_path, "r");
	if (!f) {
		if (errno == ENOENT)
			return 0;
		diag_error(d, (aotc_loc){db->journal_path, 0, 0}, "cannot read the journal: %s",
		           strerror(errno));
		return -1;
	}
	reader r = {d, db->journal_path, 0, false};
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	int count = 0;
	int64_t *row = xmalloc((size_t)(db->ntunables + db->nshape_args + 1) * sizeof *row);
	int64_t alt_row[DB_MAX_VALUES];
	while (!r.failed && (n = getline(&line, &cap, f)) > 0) {
		r.line++;
		bool complete = line[n - 1] == '\n';
		json_t *o = json_loadb(line, (size_t)n, 0, NULL);
		if (!o) {
			if (!complete && fgetc(f) == EOF) {
				if (dropped)
					*dropped = true;
				break; /* torn tail */
			}
			bad(&r, "malformed journal line");
			break;
		}
		const json_t *jh = json_object_get(o, "source_hash");
		const json_t *jc = json_object_get(o, "code");
		const char *name = json_string_value(json_object_get(o, "config"));
		measurement m;
		int ext, nv = 0;
		bool fok = true;
		const char *fn = NULL;
		/* Keyed by code where the line has one: of the configuration's
		 * code in the document, else (a tuner) the current one. */
		const char *lf = json_string_value(json_object_get(o, "function"));
		int have = name ? db_find_config(db, name) : -1;
		const char *cur = have >= 0 && db->configs[have].code ? db->configs[have].code
		                  : key_code(key, lf, json_is_true(json_object_get(o, "extern")), name ? name : "");
		bool other_compiler = key && key->compiler &&
		                      !same_str(json_string_value(json_object_get(o, "compiler")), key->compiler);
		if (jh && !(json_is_string(jh) && db_hash_valid(json_string_value(jh)))) {
			bad(&r, "source_hash is not %d lowercase hex digits", AOTC_HASH_LEN);
		} else if (jc && !(json_is_string(jc) && db_hash_valid(json_string_value(jc)))) {
			bad(&r, "code is not %d lowercase hex digits", AOTC_HASH_LEN);
		} else if (jc && ((cur && strcmp(cur, json_string_value(jc)) != 0) || other_compiler)) {
			/* measured from other code: a tuner keeps it aside */
			if (key)
				supersede_line(db, json_incref(o));
			else
				db->journal_ignored++;
			if (dropped)
				*dropped = true;
		} else if (!jc && (!jh || strcmp(json_string_value(jh), hash) != 0)) {
			db->journal_ignored++;
			if (dropped)
				*dropped = true;
		} else if (!name) {
			bad(&r, "journal entry without a config");
		} else if ((ext = read_extern(&r, o, name)) < 0) {
			/* diagnosed */
		} else if (!ext && ((fn = read_function(&r, o, name, alt_row, &nv, &fok)), !fok)) {
			/* diagnosed */
		} else if (!ext && !fn && !read_ints(&r, json_object_get(o, "values"), row, db->ntunables)) {
			bad(&r, "journal entry without a config");
		} else if (db_find_config(db, name) >= 0 &&
		           db->configs[db_find_config(db, name)].is_extern != (ext > 0)) {
			bad(&r, "config %d is %san extern here and not in the document",
			    db_find_config(db, name), ext ? "" : "not ");
		} else if (db_find_config(db, name) >= 0 &&
		           !same_function(db->configs[db_find_config(db, name)].function, fn)) {
			bad(&r, "config %d is of another function here than in the document", db_find_config(db, name));
		} else {
			int c = ext ? db_extern(db, name) : fn ? db_alt_config(db, name, fn, alt_row, nv) : db_config(db, name, row);
			if (read_ints(&r, json_object_get(o, "shape"), row, db->nshape_args)) {
				int s = db_shape(db, row);
				if (read_meas(&r, o, &m)) {
					m.config = c;
					m.shape = s;
					put(db, &m);
					free_meas(&m);
					count++;
					if (keep) {
						strbuf_putn(keep, line, (size_t)n);
						if (!complete)
							strbuf_putc(keep, '\n');
					}
					if (!complete && dropped)
						*dropped = true; /* appending would extend this line */
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
		free(db->configs[i].function);
		free(db->configs[i].code);
		free(db->configs[i].values);
	}
	db->nmeas = db->nconfigs = db->nshapes = 0;
	for (size_t i = 0; i < (size_t)db->configs_cap * (size_t)db->shapes_cap; i++)
		db->cell[i] = -1;
	rehash(db);
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

/* Takes the tuner's lock, <path>.lock: flock, so the kernel releases it
 * when the holder dies however it dies. The file holds the holder's pid for
 * the next one's message. db_close removes it while still holding it, so a
 * tuner that opened the file just before checks that the file it locked is
 * still the one at that path. Refusing rather than waiting: two tuners on
 * one database are a mistake (a job started twice, shards given one --db),
 * and one queued behind the other would find nothing left to measure. */
static int take_lock(tune_db *db, diags *d)
{
	for (int attempt = 0; attempt < 100; attempt++) {
		int fd = open(db->lock_path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
		if (fd < 0) {
			diag_error(d, (aotc_loc){db->lock_path, 0, 0}, "cannot create the lock file: %s",
			           strerror(errno));
			return -1;
		}
		if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
			int e = errno;
			char buf[32] = {0};
			ssize_t n = e == EWOULDBLOCK ? pread(fd, buf, sizeof buf - 1, 0) : 0;
			long pid = n > 0 ? strtol(buf, NULL, 10) : 0;
			close(fd);
			if (e != EWOULDBLOCK) {
				diag_error(d, (aotc_loc){db->lock_path, 0, 0}, "cannot lock: %s", strerror(e));
				return -1;
			}
			if (pid > 0)
				diag_error(d, (aotc_loc){db->path, 0, 0},
				           "another aotc (pid %ld) is tuning this database: wait for it to finish, or stop it (it holds %s)",
				           pid, db->lock_path);
			else
				diag_error(d, (aotc_loc){db->path, 0, 0},
				           "another aotc is tuning this database: wait for it to finish, or stop it (it holds %s)",
				           db->lock_path);
			return -1;
		}
		struct stat held, there;
		if (fstat(fd, &held) == 0 && stat(db->lock_path, &there) == 0 &&
		    held.st_dev == there.st_dev && held.st_ino == there.st_ino) {
			char pid[32];
			int n = snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
			if (ftruncate(fd, 0) < 0 || pwrite(fd, pid, (size_t)n, 0) != n) {
				diag_error(d, (aotc_loc){db->lock_path, 0, 0}, "cannot write: %s", strerror(errno));
				close(fd);
				return -1;
			}
			db->lock_fd = fd;
			return 0;
		}
		close(fd); /* its holder removed it in between: take the new one */
	}
	diag_error(d, (aotc_loc){db->lock_path, 0, 0}, "cannot lock: the file keeps changing");
	return -1;
}

/* Whether name is a temporary file write_file_atomic makes for the
 * document or the journal of base: "<base>[.journal].tmpXXXXXX". */
static bool temp_of(const char *name, const char *base)
{
	size_t n = strlen(base);
	if (strncmp(name, base, n) != 0)
		return false;
	name += n;
	if (strncmp(name, ".journal", 8) == 0)
		name += 8;
	if (strncmp(name, ".tmp", 4) != 0 || strlen(name + 4) != 6)
		return false;
	for (name += 4; *name; name++)
		if (!isalnum((unsigned char)*name))
			return false;
	return true;
}

/* Removes what a kill during db_save left (under the lock, so no one else
 * is writing them); returns how many. */
static int remove_stale_temps(const char *path)
{
	char *dir = xstrdup(path);
	char *slash = strrchr(dir, '/');
	const char *base = slash ? path + (slash - dir) + 1 : path;
	if (slash)
		slash[slash == dir] = 0;
	DIR *dd = opendir(slash ? dir : ".");
	int removed = 0;
	if (dd) {
		struct dirent *e;
		strbuf sb;
		strbuf_init(&sb);
		while ((e = readdir(dd)))
			if (temp_of(e->d_name, base)) {
				sb.len = 0;
				strbuf_printf(&sb, "%s/%s", slash ? dir : ".", e->d_name);
				removed += unlink(sb.data) == 0;
			}
		strbuf_finish(&sb);
		closedir(dd);
	}
	free(dir);
	return removed;
}

/* ---- The superseded measurements --------------------------------------------- */

/* Reads the superseded document at path (none: empty). */
static int load_superseded(tune_db *db, const char *path, diags *d)
{
	db->superseded = json_object();
	db->superseded_path = xstrdup(path);
	size_t len;
	char *text = read_file(path, &len);
	if (!text)
		return errno == ENOENT ? 0 : (diag_error(d, (aotc_loc){path, 0, 0}, "cannot read: %s", strerror(errno)), -1);
	json_error_t err;
	json_t *root = json_loadb(text, len, 0, &err);
	free(text);
	const json_t *cells = json_object_get(root, "cells");
	if (!root || !json_is_integer(json_object_get(root, "aotc_superseded")) || !json_is_array(cells)) {
		diag_error(d, (aotc_loc){path, root ? 0 : err.line, 0},
		           "invalid superseded measurements (aotc_superseded, cells): remove the file to start afresh");
		json_decref(root);
		return -1;
	}
	for (size_t i = 0; i < json_array_size(cells); i++) {
		json_t *o = json_array_get(cells, i);
		if (!json_is_object(o) || !json_is_string(json_object_get(o, "config")) ||
		    !json_is_string(json_object_get(o, "code")) || !json_is_object(json_object_get(o, "shape")))
			continue;
		char *k = superseded_key(o);
		json_object_set(db->superseded, k, o);
		free(k);
	}
	json_decref(root);
	return 0;
}

static int key_cmp(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static int save_superseded(tune_db *db)
{
	size_t n = json_object_size(db->superseded);
	const char **keys = xmalloc((n + 1) * sizeof *keys);
	size_t i = 0;
	const char *k;
	json_t *v;
	json_object_foreach(db->superseded, k, v)
		keys[i++] = k;
	qsort(keys, n, sizeof *keys, key_cmp);
	json_t *cells = json_array();
	for (i = 0; i < n; i++)
		json_array_append(cells, json_object_get(db->superseded, keys[i]));
	free(keys);
	strbuf sb;
	strbuf_init(&sb);
	strbuf_puts(&sb, "{\n \"aotc_superseded\": 1,\n");
	put_field(&sb, "kernel", json_string(db->kernel), false);
	put_field(&sb, "cells", cells, true);
	sb.len -= 2;
	strbuf_puts(&sb, "\n}\n");
	int rc = mkdir_parent(db->superseded_path) < 0 ? -1 : write_file_atomic(db->superseded_path, sb.data, sb.len);
	strbuf_finish(&sb);
	return rc;
}

int db_settle(tune_db *db, const db_key *key)
{
	bool changed = false;
	for (int c = 0; c < db->nconfigs; c++) {
		db_entry *e = &db->configs[c];
		const char *cur = key_code(key, e->function, e->is_extern, e->name);
		if (!e->code && cur) {
			e->code = xstrdup(cur);
			changed = true;
		}
	}
	/* What a revert brings back: cells of the current code and compiler
	 * not measured now. */
	const char *k;
	void *tmp;
	json_t *o;
	int64_t *row = xmalloc(((size_t)db->nshape_args + 1) * sizeof *row);
	json_object_foreach_safe(db->superseded, tmp, k, o) {
		int c = db_find_config(db, json_string_value(json_object_get(o, "config")));
		if (c < 0 || !same_str(db->configs[c].code, json_string_value(json_object_get(o, "code"))) ||
		    !same_str(db->compiler, json_string_value(json_object_get(o, "compiler"))) ||
		    !same_str(db->configs[c].function, json_string_value(json_object_get(o, "function"))))
			continue;
		const json_t *shape = json_object_get(o, "shape");
		bool fits = (int)json_object_size(shape) == db->nshape_args;
		for (int i = 0; fits && i < db->nshape_args; i++) {
			const json_t *v = json_object_get(shape, db->shape_args[i]);
			fits = json_is_integer(v);
			row[i] = fits ? json_integer_value(v) : 0;
		}
		if (!fits)
			continue;
		int s = db_shape(db, row);
		measurement m;
		reader r = {NULL, db->superseded_path, 0, true}; /* quiet: a bad line stays where it is */
		if (db_get(db, c, s) || !read_meas(&r, o, &m))
			continue;
		m.config = c;
		m.shape = s;
		put(db, &m);
		free_meas(&m);
		json_object_del(db->superseded, k);
		db->superseded_changed = true;
		db->restored++;
		changed = true;
	}
	free(row);
	if (db->superseded_changed && save_superseded(db) < 0)
		return -1;
	db->superseded_changed = false;
	return changed || db->moved ? db_save(db) : 0;
}

static bool is_stale(const tune_db *db, int c, const db_key *key, const char *source_hash)
{
	const db_entry *e = &db->configs[c];
	const char *cur = key_code(key, e->function, e->is_extern, e->name);
	return e->code && cur ? strcmp(e->code, cur) != 0 : strcmp(db->source_hash, source_hash) != 0;
}

int db_count_stale(const tune_db *db, const db_key *key, const char *source_hash)
{
	int n = 0;
	for (int i = 0; i < db->nmeas; i++)
		n += is_stale(db, db->meas[i].config, key, source_hash);
	return n;
}

int db_drop_stale(tune_db *db, const db_key *key, const char *source_hash, strbuf *what)
{
	int dropped = 0;
	for (int c = 0; c < db->nconfigs; c++) {
		db_entry *e = &db->configs[c];
		if (!is_stale(db, c, key, source_hash))
			continue;
		int n = drop_config(db, c, false);
		dropped += n;
		const char *fn = e->is_extern ? e->name : e->function ? e->function : db->kernel;
		if (n && what && !names_in_list(what->data, fn)) {
			if (what->len)
				strbuf_puts(what, ", ");
			strbuf_puts(what, fn);
		}
	}
	compact(db);
	free(db->source_hash);
	db->source_hash = xstrdup(source_hash);
	return dropped;
}

tune_db *db_open(const char *path, const char *kernel, const char *source,
                 const char *source_hash, const char *const *tunables, int ntunables,
                 const char *const *shape_args, int nshape_args, json_t *hardware,
                 json_t *method, const db_key *key, int *invalidated, diags *d)
{
	*invalidated = 0;
	tune_db *db = db_new(path);
	strbuf keep;
	strbuf_init(&keep);
	if (mkdir_parent(path) < 0) {
		diag_error(d, (aotc_loc){path, 0, 0}, "cannot create the database directory: %s",
		           strerror(errno));
		goto fail;
	}
	if (take_lock(db, d) < 0)
		goto fail;
	db->stale_temps = remove_stale_temps(path);
	int loaded = load_document(db, NULL, d);
	if (loaded < 0)
		goto fail;
	if (loaded && strcmp(db->kernel, kernel) != 0) {
		diag_error(d, (aotc_loc){path, 0, 0}, "this database is for kernel '%s', not '%s'",
		           db->kernel, kernel);
		goto fail;
	}
	if (key && key->superseded_path && load_superseded(db, key->superseded_path, d) < 0)
		goto fail;
	bool stale = loaded && (!same_names(db->tunables, db->ntunables, tunables, ntunables) ||
	                        !same_names(db->shape_args, db->nshape_args, shape_args, nshape_args));
	if (loaded) {
		/* Each configuration's measurements count while its code and the
		 * compiler are the same (a document older than codes: while the
		 * source is); the others are set aside. */
		bool other_compiler = key && key->compiler && db->compiler && strcmp(db->compiler, key->compiler) != 0;
		for (int c = 0; c < db->nconfigs; c++) {
			db_entry *e = &db->configs[c];
			const char *cur = key_code(key, e->function, e->is_extern, e->name);
			if (!e->code || !cur) {
				if (stale || strcmp(db->source_hash, source_hash) != 0)
					*invalidated += drop_config(db, c, false);
				else if (cur)
					e->code = xstrdup(cur);
			} else if (stale || other_compiler || strcmp(e->code, cur) != 0) {
				drop_config(db, c, true);
				free(e->code);
				e->code = xstrdup(cur);
			}
		}
		compact(db);
	}
	if (key && key->compiler) {
		free(db->compiler);
		db->compiler = xstrdup(key->compiler);
	}
	if (stale) {
		clear_contents(db);
		for (int i = 0; i < db->ntunables; i++)
			free(db->tunables[i]);
		free(db->tunables);
		for (int i = 0; i < db->nshape_args; i++)
			free(db->shape_args[i]);
		free(db->shape_args);
	}
	if (!loaded || stale) {
		set_names(&db->tunables, &db->ntunables, tunables, ntunables);
		set_names(&db->shape_args, &db->nshape_args, shape_args, nshape_args);
		grow_cells(db, db->configs_cap, db->shapes_cap); /* rows now have nshape_args */
		rehash(db);
	}
	/* Only what was measured from this source: a journal left by a killed
	 * tune of an edited source must not pass for this one. What is not
	 * replayed is removed from the journal before anything is appended. */
	bool dropped = false;
	if (replay_journal(db, source_hash, key, &keep, &dropped, d) < 0)
		goto fail;
	/* What the journal held of other code is written aside before the
	 * journal loses it. */
	if (!db->kernel)
		db->kernel = xstrdup(kernel);
	if (db->superseded_changed && save_superseded(db) < 0) {
		diag_error(d, (aotc_loc){db->superseded_path, 0, 0}, "cannot write: %s", strerror(errno));
		goto fail;
	}
	if (dropped && write_file_atomic(db->journal_path, keep.data, keep.len) < 0) {
		diag_error(d, (aotc_loc){db->journal_path, 0, 0}, "cannot write: %s", strerror(errno));
		goto fail;
	}
	strbuf_finish(&keep);
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
	char host[256] = {0};
	if (gethostname(host, sizeof host - 1) == 0 && host[0]) {
		free(db->machine);
		db->machine = xstrdup(host);
	}
	db->journal = fopen(db->journal_path, "a");
	if (!db->journal) {
		diag_error(d, (aotc_loc){db->journal_path, 0, 0}, "cannot write: %s", strerror(errno));
		goto fail;
	}
	/* A new database gets its document at once, so that the journal of a
	 * tune killed before its first save is never all there is (readers
	 * find documents). An invalidated one keeps its old document until
	 * the first save: reverting the edit reuses it. */
	if (!loaded && db_save(db) < 0) {
		diag_error(d, (aotc_loc){path, 0, 0}, "cannot write: %s", strerror(errno));
		goto fail;
	}
	return db;
fail:
	strbuf_finish(&keep);
	db_close(db);
	return NULL;
}

tune_db *db_load(const char *path, diags *d) { return db_load_any(path, NULL, d); }

tune_db *db_load_any(const char *path, bool *not_db, diags *d)
{
	if (not_db)
		*not_db = false;
	tune_db *db = db_new(path);
	int loaded = load_document(db, not_db, d);
	if (loaded == 0 && access(db->journal_path, F_OK) == 0)
		diag_error(d, (aotc_loc){path, 0, 0},
		           "no tuning database here, only the journal of a tune killed before its first save "
		           "(an older aotc): run aotc tune again, which resumes from it");
	else if (loaded == 0)
		diag_error(d, (aotc_loc){path, 0, 0}, "no tuning database here");
	if (loaded <= 0 || replay_journal(db, db->source_hash, NULL, NULL, NULL, d) < 0) {
		db_close(db);
		return NULL;
	}
	if (db->journal_ignored)
		diag_warning(d, (aotc_loc){db->journal_path, 0, 0},
		             "skipped %d line%s measured from another version of the source (not the document's source hash)",
		             db->journal_ignored, db->journal_ignored == 1 ? "" : "s");
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
	free(db->shape_calls);
	free(db->meas);
	free(db->cell);
	free(db->config_map);
	free(db->shape_map);
	for (int i = 0; i < db->ntunables; i++)
		free(db->tunables[i]);
	free(db->tunables);
	for (int i = 0; i < db->nshape_args; i++)
		free(db->shape_args[i]);
	free(db->shape_args);
	json_decref(db->hardware);
	json_decref(db->method);
	json_decref(db->search);
	free(db->kernel);
	free(db->source);
	free(db->source_hash);
	free(db->compiler);
	free(db->machine);
	json_decref(db->superseded);
	free(db->superseded_path);
	if (db->lock_fd >= 0) {
		unlink(db->lock_path); /* while still holding it: see take_lock */
		close(db->lock_fd);
	}
	free(db->path);
	free(db->journal_path);
	free(db->lock_path);
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
		const db_entry *fc = &from->configs[m->config];
		int c = fc->is_extern  ? db_extern(db, fc->name)
		        : fc->function ? db_alt_config(db, fc->name, fc->function, fc->values, fc->nvalues)
		                       : db_config(db, fc->name, fc->values);
		int s = db_shape(db, from->shapes + (size_t)m->shape * from->nshape_args);
		if (db_get(db, c, s))
			continue;
		measurement copy = *m;
		copy.config = c;
		copy.shape = s;
		put(db, &copy);
		added++;
	}
	for (int i = 0; i < from->nshapes; i++)
		if (from->shape_calls[i]) {
			int s = db_shape(db, from->shapes + (size_t)i * from->nshape_args);
			if (from->shape_calls[i] > db->shape_calls[s])
				db->shape_calls[s] = from->shape_calls[i];
		}
	return added;
}

int db_save(tune_db *db)
{
	json_t *configs = json_array();
	for (int i = 0; i < db->nconfigs; i++) {
		json_t *c = db->configs[i].is_extern
			? json_pack("{s:s, s:b, s:[]}", "name", db->configs[i].name, "extern", 1, "values")
			: db->configs[i].function
			? json_pack("{s:s, s:s, s:o}", "name", db->configs[i].name, "function", db->configs[i].function,
			            "values", jints(db->configs[i].values, db->configs[i].nvalues))
			: json_pack("{s:s, s:o}", "name", db->configs[i].name,
			            "values", jints(db->configs[i].values, db->ntunables));
		if (db->configs[i].code)
			json_object_set_new(c, "code", json_string(db->configs[i].code));
		json_array_append_new(configs, c);
	}
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
	if (db->machine)
		put_field(&sb, "machine", json_string(db->machine), false);
	if (db->compiler)
		put_field(&sb, "compiler", json_string(db->compiler), false);
	put_field(&sb, "method", json_incref(db->method), false);
	if (db->search)
		put_field(&sb, "search", json_incref(db->search), false);
	put_field(&sb, "tunables", jstrings(db->tunables, db->ntunables), false);
	put_field(&sb, "shape_args", jstrings(db->shape_args, db->nshape_args), false);
	put_field(&sb, "configs", configs, true);
	put_field(&sb, "shapes", shapes, true);
	if (db_has_calls(db)) {
		json_t *calls = json_array();
		for (int i = 0; i < db->nshapes; i++)
			json_array_append_new(calls, json_integer(db->shape_calls[i] > INT64_MAX ? INT64_MAX
			                                                              : (json_int_t)db->shape_calls[i]));
		put_field(&sb, "shape_calls", calls, false);
	}
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
