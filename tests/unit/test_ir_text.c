/* Unit tests for the checks on IR text that reaches emitted code (ir/ir.c):
 * what the frontend writes passes, anything that could end a declaration,
 * an argument list or a comment does not. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "ir.h"

#define expect(got, want, what, s) expect_at(__LINE__, (got), (want), (what), (s))

static void expect_at(int line, bool got, bool want, const char *what, const char *s)
{
	check_at(got == want, __FILE__, line, "%s(\"%s\"): got %s", what, s, got ? "true" : "false");
}

int main(void)
{
	static const char *const types_ok[] = {
		"int", "unsigned int", "unsigned long long", "long double", "signed char", "bool",
		"float *", "const float *", "const float *__restrict", "__half *__restrict",
		"const __nv_bfloat16 *__restrict", "float *const *", "float *__restrict__",
		"const volatile int *const volatile", "float const *", "float4 *", "const int2 *",
		"T", "const T *", "size_t", "std::size_t", "::ns::T *", "cuda::std::complex<float> *",
		"Foo<Bar<int>, 3> *", "Foo<Bar<int> > *", "Foo<-1, 0x10u>", "Foo<>", "struct S *",
		"enum E", "typename Traits<T>::type *", "const std::vector<float> &", "float &&",
	};
	static const char *const types_bad[] = {
		"", " ", "const", "*", "int (*)(int)", "int (*evil)(int) = exit, const float *__restrict",
		"float [4]", "int x", "float; int", "const float /* c */ *", "float  *", "int\n*",
		"Foo<1 > 2>", "Foo<(1)>", "Foo<int", "Foo<int>>", "int unsigned T", "T int",
		"struct", "struct  S", "float *&&&", "float ** restrict_", "int = 3",
		"__attribute__((x)) int", "a::", "a:b", "Foo<\"x\">", "float *A) { f(); } void g(float *",
	};
	for (size_t i = 0; i < COUNTOF(types_ok); i++)
		expect(ir_type_text_ok(types_ok[i]), true, "ir_type_text_ok", types_ok[i]);
	for (size_t i = 0; i < COUNTOF(types_bad); i++)
		expect(ir_type_text_ok(types_bad[i]), false, "ir_type_text_ok", types_bad[i]);

	static const char *const args_ok[] = {
		"1", "128", "TILE", "cfg::TILE", "2 * TILE", "(1 << 8)", "sizeof(float)", "-1",
		"true", "~0u", "(A + B) % 4",
	};
	static const char *const args_bad[] = {
		"", " ", "1>(), evil(), k<1", "a, b", "a > b", "a >> 2", "(1", "1)", "a < b",
		"1 // c", "1 /* c */", "\"s\"", "'c'", "a; b", "{1}", "a[1]", "a.b", "a ? b : c",
		"x\n", "#x",
	};
	for (size_t i = 0; i < COUNTOF(args_ok); i++)
		expect(ir_template_arg_ok(args_ok[i]), true, "ir_template_arg_ok", args_ok[i]);
	for (size_t i = 0; i < COUNTOF(args_bad); i++)
		expect(ir_template_arg_ok(args_bad[i]), false, "ir_template_arg_ok", args_bad[i]);

	expect(ir_is_identifier("_a1"), true, "ir_is_identifier", "_a1");
	expect(ir_is_identifier("1a"), false, "ir_is_identifier", "1a");
	expect(ir_is_identifier(""), false, "ir_is_identifier", "");
	expect(ir_is_identifier("a b"), false, "ir_is_identifier", "a b");
	expect(ir_is_qualified_name("a::b::c"), true, "ir_is_qualified_name", "a::b::c");
	expect(ir_is_qualified_name("::a"), true, "ir_is_qualified_name", "::a");
	expect(ir_is_qualified_name("a::"), false, "ir_is_qualified_name", "a::");
	expect(ir_is_qualified_name("a:::b"), false, "ir_is_qualified_name", "a:::b");
	expect(ir_source_hash_ok("3c82c834ec3651c2c4b4458429cb54e1"), true, "ir_source_hash_ok", "hex");
	expect(ir_source_hash_ok("3C82C834EC3651C2C4B4458429CB54E1"), false, "ir_source_hash_ok", "HEX");
	expect(ir_source_hash_ok("3c82c834ec3651c2c4b4458429cb54e"), false, "ir_source_hash_ok", "31");
	expect(ir_source_hash_ok("*/\n#include </etc/shadow>\n/*xxxx"), false, "ir_source_hash_ok",
	       "payload");
	/* A template reference's instance (AOTC_TYPES): name<type>, nothing more. */
	static const char *const routines_ok[] = {"ref", "ref<float>", "ref<__nv_bfloat16>", "ref<unsigned int>"};
	static const char *const routines_bad[] = {
		"", "ref<>", "ref<float", "ref float>", "<float>", "ref<float>>", "ref<Foo<int>>", "ref<float>x",
		"ref<float); system(\"x\"); (void)(0>", "ns::ref<float>", "ref<float *>(x)",
	};
	for (size_t i = 0; i < COUNTOF(routines_ok); i++)
		expect(ir_is_routine_name(routines_ok[i]), true, "ir_is_routine_name", routines_ok[i]);
	for (size_t i = 0; i < COUNTOF(routines_bad); i++)
		expect(ir_is_routine_name(routines_bad[i]), false, "ir_is_routine_name", routines_bad[i]);
	/* The spellings AOTC_TYPES takes, by tag. */
	static const struct {
		const char *spelling, *tag;
	} spellings[] = {
		{"float", "f32"}, {"double", "f64"}, {"__half", "f16"}, {"half", "f16"}, {"__nv_bfloat16", "bf16"},
		{"nv_bfloat16", "bf16"}, {"int", "i32"}, {"unsigned int", "u32"}, {"unsigned", "u32"},
		{"long long", "i64"}, {"uint8_t", "u8"}, {"size_t", "u64"},
	};
	for (size_t i = 0; i < COUNTOF(spellings); i++)
		expect(strcmp(dtype_name(dtype_of_spelling(spellings[i].spelling)), spellings[i].tag) == 0, true,
		       "dtype_of_spelling", spellings[i].spelling);
	expect(dtype_of_spelling("floatX") == DT_OTHER, true, "dtype_of_spelling", "floatX");
	expect(dtype_of_spelling("float4") == DT_OTHER, true, "dtype_of_spelling", "float4");
	/* AOTC_METRIC's units and the prefix that puts the largest in [1, 1000) */
	static const struct {
		metric_unit u;
		double max, scale;
		const char *name;
	} scales[] = {
		{METRIC_FLOP, 0, 1, "FLOP/s"}, {METRIC_FLOP, 999.9, 1, "FLOP/s"}, {METRIC_FLOP, 1000, 1e3, "kFLOP/s"},
		{METRIC_FLOP, 3.2e12, 1e12, "TFLOP/s"}, {METRIC_FLOP, 5e18, 1e15, "PFLOP/s"}, {METRIC_BYTES, 4.1e12, 1e12, "TB/s"},
		{METRIC_BYTES, 8.77e9, 1e9, "GB/s"}, {METRIC_BYTES, 2.5e7, 1e6, "MB/s"}, {METRIC_BYTES, NAN, 1, "B/s"},
	};
	for (size_t i = 0; i < COUNTOF(scales); i++) {
		double scale = 0;
		const char *name = ir_throughput_scale(scales[i].u, scales[i].max, &scale);
		expect(strcmp(name, scales[i].name) == 0 && scale == scales[i].scale, true, "ir_throughput_scale",
		       scales[i].name);
	}
	expect(metric_unit_from_name("FLOP") == METRIC_FLOP && metric_unit_from_name("B") == METRIC_BYTES &&
	               metric_unit_from_name("FLOPS") == METRIC_NONE && metric_unit_from_name("") == METRIC_NONE,
	       true, "metric_unit_from_name", "FLOP, B, FLOPS, ''");
	return check_done();
}
