/* The kernel IR: what aotc knows about one annotated kernel, independent of
 * libclang. frontend/ builds it from source; ir_json.c writes it as JSON and
 * reads it back (how a kernel travels to a machine without libclang); every
 * later stage (enumerate, tune, heuristic, emit) reads only this.
 *
 * Ownership: an aotc_module and everything reachable from it live in the
 * module's arena; ir_module_destroy() frees it all. */
#ifndef AOTC_IR_H
#define AOTC_IR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arena.h"
#include "diag.h"
#include "expr.h"

#define AOTC_IR_VERSION 1

/* Element types of buffers and scalar parameters. */
typedef enum aotc_dtype {
	DT_OTHER,      /* a type aotc cannot fill or compare (structs, ...) */
	DT_BOOL,
	DT_I8, DT_U8, DT_I16, DT_U16, DT_I32, DT_U32, DT_I64, DT_U64,
	DT_F16, DT_BF16, DT_F32, DT_F64,
} aotc_dtype;

const char *dtype_name(aotc_dtype t);            /* "f32", "i32", ... */
aotc_dtype dtype_from_name(const char *name);     /* DT_OTHER if unknown */
bool dtype_is_integer(aotc_dtype t);              /* includes bool */
bool dtype_is_floating(aotc_dtype t);
size_t dtype_size(aotc_dtype t);                  /* 0 for DT_OTHER */
/* The values an integer type holds, as int64_t (u64: 0..INT64_MAX, all a
 * shape can be); false for a type that is not an integer. */
bool dtype_range(aotc_dtype t, int64_t *lo, int64_t *hi);

typedef struct tparam {
	const char *name;
	aotc_loc loc;
	bool is_type;          /* typename/class parameter */
	const char *type;      /* spelling of a non-type parameter's type */
	const char *default_text; /* as written, or NULL */
	int tunable;           /* index into tunables, or -1 */
} tparam;

typedef struct param {
	const char *name;
	aotc_loc loc;
	const char *type;      /* full spelling, e.g. "const float *__restrict" */
	bool is_pointer;
	bool is_const;         /* pointee const for pointers */
	aotc_dtype dtype;      /* the scalar type, or the pointee's */
	int vec;               /* lanes of a vector type (float4: 4), else 1 */
	const char *elem_type; /* spelling of the scalar or pointee type */
	/* The type elem_type names when that is a typedef or alias of the
	 * file's ("floatX" -> "__nv_bfloat16"): emitted headers spell this,
	 * since they are read without the file's declarations; else NULL. */
	const char *elem_canon;
	/* What accounts for it (docs/spec.md §2): at most one is set. */
	int buffer;            /* index into buffers, or -1 */
	int value;             /* index into values, or -1 */
	int shape;             /* index into shapes, or -1 */
	/* A launcher-only shape argument: a name of AOTC_SHAPES that is not a
	 * parameter of the kernel (int64_t, never passed to it). Such params
	 * come after all of the kernel's own, in AOTC_SHAPES order, so that
	 * params[0..ir_kernel_nparams(k)) are what a launch passes. */
	bool launcher_only;
} param;

typedef struct tunable {
	const char *name;
	aotc_loc loc;          /* of the AOTC_TUNE */
	int tparam;            /* template parameter index, or -1: launch-only */
	bool is_bool;          /* values were written true/false */
	int64_t *values;
	int nvalues;
} tunable;

/* An expression with the text it was parsed from, so that JSON can carry the
 * text and re-parse it at the same position. */
typedef struct aexpr {
	expr *e;
	const char *text;
	aotc_loc loc;          /* where text starts */
} aexpr;

typedef enum buffer_role { ROLE_IN, ROLE_OUT, ROLE_INOUT } buffer_role;
typedef enum init_kind { INIT_DEFAULT, INIT_UNIFORM, INIT_ZERO, INIT_CONST } init_kind;

typedef struct buffer_init {
	init_kind kind;        /* INIT_DEFAULT: uniform(-1, 1) / uniform(0, 16) */
	double lo, hi;         /* INIT_UNIFORM */
	double value;          /* INIT_CONST */
} buffer_init;

typedef struct buffer {
	int param;
	aotc_loc loc;
	aexpr count;           /* elements */
	buffer_role role;
	buffer_init init;
} buffer;

typedef struct value {
	int param;
	aotc_loc loc;
	bool is_float;         /* a floating literal for a floating parameter */
	double fvalue;
	aexpr iexpr;           /* otherwise: over shape arguments and tunables */
} value;

/* pow2(lo, hi), range(lo, hi, step), {list}, geom(lo, hi, n): n values
 * evenly spaced in log, rounded; logrand(lo, hi, n): n distinct log-uniform
 * random integers, drawn from the tuner's seed. */
typedef enum gen_kind { GEN_POW2, GEN_RANGE, GEN_LIST, GEN_GEOM, GEN_LOGRAND } gen_kind;

/* The most values geom() and logrand() may ask for. */
#define GEN_MAX_COUNT 65536

typedef struct shape_dim {
	int param;             /* the shape argument */
	aotc_loc loc;
	gen_kind gen;
	int64_t lo, hi;        /* all but GEN_LIST */
	int64_t step;          /* GEN_RANGE */
	int64_t count;         /* GEN_GEOM, GEN_LOGRAND */
	int64_t *list;         /* GEN_LIST */
	int nlist;
} shape_dim;

typedef struct launch {
	aexpr dims[3];         /* e == NULL: absent (1) */
	int ndims;             /* 0: no AOTC_GRID/AOTC_BLOCK given */
	aotc_loc loc;
} launch;

/* AOTC_EXTERN(fn [, lib, ...]): a library routine with the kernel's
 * parameters (CUDA: and a trailing cudaStream_t, returning cudaError_t),
 * measured and checked beside the variants, named fn in the database. */
typedef struct extern_fn {
	const char *name;      /* a C identifier, neither the kernel's nor the reference's */
	aotc_loc loc;          /* of the name in the annotation */
	const char **libs;     /* C identifiers: libraries it links with ("cublas": -lcublas) */
	int nlibs;
	char code[33];         /* what it is checked from (kernel.code); "" if unknown */
} extern_fn;

/* AOTC_METRIC's unit: what its count counts. */
typedef enum metric_unit { METRIC_NONE, METRIC_FLOP, METRIC_BYTES } metric_unit;

const char *metric_unit_name(metric_unit u);          /* "FLOP", "B"; NULL for none */
metric_unit metric_unit_from_name(const char *name); /* METRIC_NONE if unknown */

typedef struct kernel {
	const char *name;      /* the function, as the source names it */
	/* What databases, dispatches, records and emitted symbols call it:
	 * name, or name_tag for one type of AOTC_TYPES ("sgemm_f32"). */
	const char *id;
	aotc_loc loc;
	/* AOTC_TYPES(T, t1, ...): T is a dispatch key. The frontend builds one
	 * kernel per type (ir_key_type): T defaults to the type there, the
	 * parameters spelt with T have it, and type_tag is its tag ("f32"). */
	int type_tparam;       /* the keyed type parameter, or -1 */
	const char *type_tag;  /* dtype_name of the type, or NULL */
	const char **types;    /* as written in AOTC_TYPES (the frontend's) */
	int ntypes;
	bool is_global;        /* __global__ (CUDA/HIP); false: host kernel */
	bool is_template;
	tparam *tparams;
	int ntparams;
	param *params;
	int nparams;
	tunable *tunables;
	int ntunables;
	aexpr *requires;
	int nrequires;
	aexpr *valid_ifs;
	int nvalid_ifs;
	launch grid, block;
	aexpr smem;            /* e == NULL: 0 */
	buffer *buffers;
	int nbuffers;
	value *values;
	int nvalues;
	shape_dim *shapes;
	int nshapes;
	aexpr *features;       /* nfeatures == 0: the shape arguments */
	int nfeatures;
	const char *reference; /* NULL: first variant that runs */
	aotc_loc reference_loc;
	/* The reference is a function template, instantiated with the type of
	 * AOTC_TYPES (ir_reference_instance): only for a kernel of AOTC_TYPES. */
	bool ref_template;
	/* A __global__ kernel's reference is a plain host function, called once
	 * per input set on host copies of the buffers (no geometry then); a host
	 * kernel's reference is called like its variants and this is false. */
	bool ref_on_host;
	launch ref_grid, ref_block; /* the reference's own geometry */
	/* The reference's parameter names (nparams of them; its geometry may use
	 * them, position by position), or NULL where they are the kernel's. */
	const char **ref_param_names;
	aexpr ref_smem;
	extern_fn *externs;    /* in annotation order */
	int nexterns;
	bool has_tolerance;
	double tolerance;
	/* AOTC_METRIC(unit, count): what one launch does, for throughput
	 * (count / time); METRIC_NONE: none. Like the tolerance, the primary's
	 * serves its alternatives and externs (ir_metric_count). */
	metric_unit metric;
	aexpr metric_count;
	/* AOTC_ALTERNATIVE(primary): other functions that compete with this
	 * kernel in its one dispatch, each a kernel of its own (its tunables,
	 * constraints and launch) with the primary's AOTC_BUFFER, AOTC_VALUE and
	 * AOTC_SHAPES applied to it too, so that its parameters line up with the
	 * primary's one by one. The primary's reference, tolerance, features and
	 * externs serve them all; an alternative has none of its own. */
	struct kernel *alts;   /* on the primary */
	int nalts;
	const char *alt_of;    /* on an alternative: the primary's name; else NULL */
	aotc_loc alt_loc;      /* of the name in the annotation */
	/* A tuned host launcher: an alternative of a __global__ kernel that is a
	 * host function (template) taking the kernel's parameters and a trailing
	 * cudaStream_t and returning cudaError_t; it launches what it needs on the
	 * stream (a split-K pass and its reduction). Called like an AOTC_EXTERN
	 * routine: no launch geometry. */
	bool host_launcher;
	/* What a variant of it compiles and is checked from: a hash of the
	 * tokens of the function, its reference and everything they use, with
	 * the -D definitions (frontend/frontend.c, "Code identity";
	 * docs/database.md). A database keys each variant's measurements by it.
	 * 32 lowercase hex digits, or "" for IR that has none. */
	char code[33];
	/* Names, and annotation kinds as "#grid", that a failed annotation was
	 * about: checks pile no further errors on them. Not part of the IR. */
	const char **claimed;
	int nclaimed;
	size_t claimed_cap;
} kernel;

/* A named integer constant of the source file that an annotation
 * expression uses: a namespace-scope const/constexpr integer variable, an
 * enumerator or an object-like macro. Only the constants some expression
 * names are recorded, in the order of first use. */
typedef enum const_kind { CONST_VARIABLE, CONST_ENUMERATOR, CONST_MACRO } const_kind;

typedef struct source_const {
	const char *name;      /* as the annotations spell it: "TILE", "cfg::TILE" */
	aotc_loc loc;          /* of its definition */
	const_kind kind;
	int64_t value;
} source_const;

const char *const_kind_name(const_kind k);           /* "variable", ... */
bool const_kind_from_name(const char *name, const_kind *out);

/* What a constant lookup found for a name. */
typedef enum const_found {
	CONST_UNKNOWN,        /* no such constant */
	CONST_FOUND,          /* *out holds it */
	CONST_NOT_INTEGER,    /* a constant, but not an integer: *why says what it
	                         is ("is a constant of type 'const float'"), out->loc
	                         where (line 0 if nowhere) */
} const_found;

/* Where constants not yet recorded come from while the frontend builds a
 * module (the source file, through libclang); a module read from JSON has
 * none, so only its recorded constants resolve. */
typedef struct const_source {
	const_found (*find)(void *ctx, const char *name, source_const *out, const char **why);
	void *ctx;
	/* Offers the names of the user's constants (not the system headers')
	 * for "did you mean"; may be NULL. */
	void (*offer)(void *ctx, nearest *n);
} const_source;

typedef struct aotc_module {
	arena arena;
	const char *file;      /* as given on the command line */
	char source_hash[33];  /* over the file and its non-system includes */
	kernel *kernels;
	int nkernels;
	size_t kernels_cap;
	source_const *consts;  /* recorded constants, in order of first use */
	int nconsts;
	size_t consts_cap;
	/* The host functions the file defines (byte ranges [begin, end) of
	 * their definitions in the file, in order): a compiler of device code
	 * only (NVRTC) can take the file with them blanked out, where it
	 * cannot take it whole (ir_device_source). */
	uint32_t (*host_code)[2];
	int nhost_code;
	size_t host_code_cap;
	const_source source;   /* find == NULL: none; not part of the IR */
} aotc_module;

aotc_module *ir_module_create(const char *file);
void ir_module_destroy(aotc_module *m);      /* accepts NULL */

/* The text of the file (len bytes) with m's host code blanked out: each
 * byte of a host function's definition a space, its newlines kept (so
 * lines and columns stay). malloc'd; NULL when a range lies outside the
 * text (the file changed since it was parsed). */
char *ir_device_source(const aotc_module *m, const char *text, size_t len);

/* Appends [begin, end) to m->host_code; false (nothing added) unless
 * begin <= end and it starts where or after the last one ends. */
bool ir_add_host_code(aotc_module *m, uint32_t begin, uint32_t end);

/* Appends a zeroed kernel (all indices -1 where that means "none"). */
kernel *ir_add_kernel(aotc_module *m, const char *name, aotc_loc loc);

/* Appends a copy of kernels[i] with tparams and params of its own (what
 * the frontend has built before annotations: one per type of AOTC_TYPES).
 * Returns the copy; kernels may move. */
kernel *ir_copy_kernel(aotc_module *m, int i);

/* Makes k the instance of its AOTC_TYPES for types[t]: T defaults to the
 * type, parameters spelt with T get it (type, element type and dtype),
 * type_tag and id are set. The type must be one dtype_of_spelling knows
 * (AOTC_TYPES's parse checks). */
void ir_key_type(aotc_module *m, kernel *k, int t);

/* The element type a C/C++ spelling names ("float", "__nv_bfloat16",
 * "unsigned int", "int64_t"), or DT_OTHER. */
aotc_dtype dtype_of_spelling(const char *s);

int ir_find_param(const kernel *k, const char *name);   /* -1 if none */
int ir_find_tunable(const kernel *k, const char *name); /* -1 if none */
int ir_find_tparam(const kernel *k, const char *name);  /* -1 if none */
/* The function of k's dispatch called name: k itself for NULL or k's own
 * name, else the alternative of that name, or NULL. */
const kernel *ir_member(const kernel *k, const char *name);

/* The kernel of that id (kernel.id), or NULL. */
const kernel *ir_find_kernel(const aotc_module *m, const char *id);
/* What compiles and calls the reference: its name, or name<type> for a
 * template reference (ref_template); malloc'd, NULL without a reference. */
char *ir_reference_instance(const kernel *k);

/* Whether --kernel sel picks k: its id, or its name (every type of
 * AOTC_TYPES); a NULL sel picks every kernel. */
bool ir_kernel_selected(const kernel *k, const char *sel);

/* The constant spelt name: a recorded one, else one m->source finds (it is
 * recorded then, so the IR keeps what its expressions use). On
 * CONST_NOT_INTEGER *why and out->loc describe it. out may be NULL. */
const_found ir_find_const(aotc_module *m, const char *name, source_const *out,
                          const char **why);

/* Offers the recorded constants' names and the source's (for "did you
 * mean"). */
void ir_offer_consts(const aotc_module *m, nearest *n);

/* True for a scalar parameter of integer type (a possible shape argument). */
bool ir_param_is_integer(const param *p);
/* Whether v is a value of integer parameter p's type (a launcher-only or
 * non-integer parameter: always); a shape argument or AOTC_VALUE that does
 * not fit would reach the kernel truncated. */
bool ir_param_fits(const param *p, int64_t v);

/* How many parameters the kernel itself takes: params[0..n) are passed to
 * it, params[n..nparams) are launcher-only shape arguments. */
int ir_kernel_nparams(const kernel *k);

/* Whether parameter i gets an AOTC_VALUE whose expression names a tunable
 * (AOTC_VALUE(block_size, BLOCK)): its value depends on the variant, so
 * only what is evaluated per variant (GRID, BLOCK, SMEM and the kernel's
 * arguments) may use it; what is evaluated per shape alone (VALID_IF,
 * FEATURES, BUFFER counts, the reference's geometry) may not. */
bool ir_param_per_variant(const kernel *k, int i);

/* True when some parameter is per variant (ir_param_per_variant). */
bool ir_has_per_variant(const kernel *k);

/* Evaluates the per-variant AOTC_VALUEs for these tunable values into
 * params[] (which holds the shape arguments and the other values, as
 * shape_param_values leaves them). Returns the first failure. */
eval_status ir_variant_params(const kernel *k, const int64_t *values, int64_t *params);

/* The tunable values that callers without tunables of their own (the
 * reference) compute per-variant AOTC_VALUEs with: the first configuration
 * ir_enumerate gives. False (values untouched) when there is none. */
bool ir_reference_values(const kernel *k, int64_t *values);

/* Scalar type of a CUDA vector type name ("float4" -> f32, *lanes 4;
 * "__half2" -> f16, 2); DT_OTHER if name is none. */
aotc_dtype dtype_of_vector(const char *name, int *lanes);

/* ---- Annotations ------------------------------------------------------- */

/* Parses one annotation (kind is "tune", "require", ...; text is its
 * argument list as written, starting at loc) into k. Errors are diagnosed;
 * returns the number of errors. Call ir_check() once all are in. */
int ir_annotate(aotc_module *m, kernel *k, const char *kind, const char *text,
                size_t len, aotc_loc loc, diags *d);

/* Checks the whole kernel against docs/spec.md §2 once all annotations are added:
 * every template parameter tuned or defaulted, every parameter accounted
 * for, launch-only tunables used, names resolved, at least one tunable.
 * Returns the number of errors. */
int ir_check(aotc_module *m, kernel *k, diags *d);

/* ---- Configurations ----------------------------------------------------- */

/* Calls fn with each combination of tunable values (in declaration order,
 * last tunable fastest) that satisfies every REQUIRE; division by zero or
 * overflow in a REQUIRE rejects the combination; a kernel without tunables
 * (an alternative may be one) has one, of no values. Returns the count.
 * fn may be NULL (count only) and returns false to stop early. */
long ir_enumerate(const kernel *k,
                  bool (*fn)(void *ctx, const int64_t *values), void *ctx);

/* ---- Evaluation for one configuration and shape -------------------------- */

/* The first AOTC_VALID_IF that is false or cannot be evaluated for these
 * tunable values and parameter values, or -1 when all hold; *st (may be
 * NULL) gets the failing one's evaluation status (EVAL_OK when false). */
int ir_first_invalid(const kernel *k, const int64_t *values, const int64_t *params,
                     eval_status *st);

/* The feature values the dispatch splits on: AOTC_FEATURES, or the shape
 * arguments in parameter order. A feature that cannot be evaluated is 0
 * (the emitted dispatch does the same). Returns how many. */
int ir_features(const kernel *k, const int64_t *params, int64_t *out);

/* The most divisibility flags ir_derive_features adds. */
#define IR_DERIVED_FLAGS 12

/* Where a kernel has no AOTC_FEATURES, gives it the features the dispatch
 * tree is offered instead (issue 10): the shape arguments, the products of
 * shape arguments that are buffer sizes (M * N), and divisibility flags
 * (x % d == 0, 1 or 0) of the shape expressions that a VALID_IF tests for
 * divisibility or that the launch geometry divides with cdiv, for the
 * literal divisor or each value of the tunable divisor. Allocated in m's
 * arena. Nothing changes for a kernel with AOTC_FEATURES. */
void ir_derive_features(aotc_module *m, kernel *k);

/* grid[0..2], block[0..2], smem into dims[7] (absent ones 1, smem 0). On
 * failure returns the status and *which (0..6) the dimension: an
 * evaluation error, or EVAL_DOMAIN for a dimension outside [1, 2^32) (smem
 * outside [0, 2^32)). */
eval_status ir_launch_dims(const launch *grid, const launch *block, const aexpr *smem,
                           const eval_env *env, int64_t dims[7], int *which);

/* Whether dims (from ir_launch_dims) are within what every CUDA device
 * launches: grid.x <= 2^31-1, grid.y and grid.z <= 65535, block at most
 * 1024 x 1024 x 64 and 1024 threads. The emitted launch_dims refuses, and
 * its select() passes over, what this refuses. */
bool ir_dims_launchable(const int64_t dims[7]);

/* Whether the dispatch may choose the variant with these tunable values
 * at these parameter values: every AOTC_VALID_IF holds and, for a
 * __global__ kernel, its launch evaluates and is launchable. */
bool ir_dispatchable(const kernel *k, const int64_t *values, const int64_t *params);

/* "sgemm<64, 128, 8, 8, 4>" (template arguments in order, defaults as
 * written) or, for launch-only tunables, "name<...>[LX=1, ...]". */
char *ir_variant_name(arena *a, const kernel *k, const int64_t *values);

/* ---- Throughput (AOTC_METRIC) ---------------------------------------------- */

/* AOTC_METRIC's count for one contender of k's dispatch at parameter values
 * params (shape_param_values' output: per-variant AOTC_VALUEs not yet
 * applied): f is k or one of its alternatives with its tunable values, or
 * NULL for an AOTC_EXTERN routine. False when there is none: k has no
 * metric, the count uses k's tunables (or a per-variant value) and f is
 * not k, it does not evaluate, or it is not positive. */
bool ir_metric_count(const kernel *k, const kernel *f, const int64_t *values, const int64_t *params,
                     double *count);

/* How throughputs of unit u are shown in one column or table whose
 * largest is max (per second): the decimal prefix (none, k, M, G, T, P)
 * that puts max in [1, 1000) (P above), as *scale (1e9 for G), and its
 * name ("GFLOP/s", "TB/s"), static. */
const char *ir_throughput_scale(metric_unit u, double max, double *scale);

/* ---- Text that later stages write into generated code -------------------- */

/* Checked where the IR is read (ir_from_json) and again where code is
 * emitted: what passes can be pasted into C/C++ without ending a
 * declaration, a template argument list, a string or a comment. */

/* A C identifier: [A-Za-z_][A-Za-z0-9_]*. */
bool ir_is_identifier(const char *s);

/* What a host routine of the tuner is called by: a C identifier, or an
 * instance "name<args>": a template reference's "ref<float>"
 * (ir_reference_instance) or a host launcher's variant "splitk<float, 4>",
 * each argument a type ir_type_text_ok accepts (without '<') or a template
 * argument ir_template_arg_ok accepts. */
bool ir_is_routine_name(const char *s);

/* A C++ identifier as the frontend may record one: a C identifier or one
 * with UTF-8 letters ("mätmul"). Such names are harmless in the IR (no byte
 * of them can end a comment, string or declaration); emit refuses them where
 * they would reach C code, which wants C identifiers. */
bool ir_is_source_identifier(const char *s);

/* An identifier, possibly namespace-qualified: "TILE", "cfg::TILE", "::x". */
bool ir_is_qualified_name(const char *s);

/* A type as the frontend spells one (libclang's type spelling), by the
 * grammar
 *   type  := cv* base cv* ptr* ref?
 *   cv    := const | volatile
 *   base  := builtin+ | [struct|class|union|enum] qname
 *   qname := [::] id targs? (:: id targs?)*     targs := < (arg (, arg)*)? >
 *   arg   := type | -? digit alnum*
 *   ptr   := * (const | volatile | __restrict | __restrict__ | restrict)*
 *   ref   := & | &&
 * with builtin the words of C's arithmetic types (unsigned, long, int,
 * char, float, ...) and tokens separated by single spaces or nothing.
 * Function pointers, arrays, attributes and expressions are refused. */
bool ir_type_text_ok(const char *s);

/* A non-type template argument as written for a default ("128", "TILE",
 * "cfg::TILE", "2 * TILE", "(1 << 8)", "sizeof(float)"): names, integer
 * literals, spaces, balanced parentheses and the operators + - * / % & | ^
 * ~ ! <<; no '>' (it would close the argument list), no ',' (it would
 * start another argument). */
bool ir_template_arg_ok(const char *s);

/* A source hash as hash_hex writes it: 32 lowercase hex digits. */
bool ir_source_hash_ok(const char *s);

/* ---- JSON --------------------------------------------------------------- */

/* The IR as a JSON document (pretty, keys in a fixed order); malloc'd. */
char *ir_to_json(const aotc_module *m);

/* Reads ir_to_json's output back. Errors are diagnosed against path.
 * Returns NULL on error. */
aotc_module *ir_from_json(const char *text, size_t len, const char *path, diags *d);

#endif
