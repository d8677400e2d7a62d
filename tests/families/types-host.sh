#!/bin/sh
# AOTC_TYPES (docs/annotations.md), tuned for real on the host:
#   tests/families/axpy_types.cpp for float and double (a planted MODE makes
#   the float dispatch choose MODE 0 and the double one MODE 1), emitted, and
#   called from C (both typed launchers) and from C++ (the overload named
#   without the type); a second compile is byte-identical; AOTC_RECORD, tune
#   --shapes, report and eval go by each type's id. The planted answer is
#   timed: the test has the machine to itself (tests/meson.build).
#   types-built.sh: the errors, and CUDA and HIP builds from made-up databases.
# Usage: types-host.sh AOTC REPO_ROOT
. "$(dirname "$0")/setup.sh"

# ---- host: tuned for real -------------------------------------------------
cd "$tmp" || exit 1
cp "$src/axpy_types.cpp" .
if "$aotc" compile axpy_types.cpp --arch host --db db -o out >run1.log 2>&1; then
	ok "host: aotc compile tunes and emits both types"
else
	bad "host: aotc compile" "$(tail -15 run1.log)"
	finish
fi
for t in f32 f64; do
	n=$(ls db/axpy_$t.host_*.json 2>/dev/null | wc -l)
	[ "$n" -eq 1 ] && ok "host: database axpy_$t.<hardware>.json" || bad "host: database axpy_$t" "$(ls db)"
	for e in c h cpp json; do
		[ -f out/_aot_axpy_${t}_host.$e ] || bad "host: out/_aot_axpy_${t}_host.$e emitted" "$(ls out)"
	done
done

cat >sel.c <<'END'
#include <stdio.h>
#include "_aot_axpy_f32_host.h"
#include "_aot_axpy_f64_host.h"
int main(void)
{
	/* tunables in declaration order: MODE, UNROLL */
	static const int64_t ns[] = {4096, 65536, 262144, 100000, 5000};
	int bad = 0;
	for (int i = 0; i < 5; i++) {
		int v32 = aot_axpy_f32_host_select(ns[i]), v64 = aot_axpy_f64_host_select(ns[i]);
		const int64_t *p32 = aot_axpy_f32_host_variant_params(v32), *p64 = aot_axpy_f64_host_variant_params(v64);
		printf("n=%lld float %s double %s\n", (long long)ns[i], aot_axpy_f32_host_variant_name(v32),
		       aot_axpy_f64_host_variant_name(v64));
		bad += !p32 || !p64 || p32[0] != 0 || p64[0] != 1;
	}
	return bad != 0;
}
END
if gcc -std=c99 -Wall -Wextra -Werror -I out -o sel sel.c out/_aot_axpy_f32_host.c out/_aot_axpy_f64_host.c >log 2>&1 &&
	./sel >sel.out 2>&1; then
	ok "host: float dispatch chooses MODE 0, double MODE 1 (the planted answer), on unseen shapes too"
else
	bad "host: per-type dispatch" "$(cat log sel.out 2>/dev/null | tail -8)"
fi

cat >run.c <<'END'
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "_aot_axpy_f32_host.h"
#include "_aot_axpy_f64_host.h"
int main(void)
{
	int n = 3000, bad = 0;
	float *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
	double *xd = malloc(n * sizeof *xd), *yd = malloc(n * sizeof *yd);
	for (int i = 0; i < n; i++) {
		x[i] = (float)i;
		y[i] = 1.0f;
		xd[i] = i * 0.25;
		yd[i] = 2.0;
	}
	bad |= aot_axpy_f32_host_launch(n, 0.5f, x, y) != 0;
	bad |= aot_axpy_f64_host_launch(n, 0.5, xd, yd) != 0;
	for (int i = 0; i < n; i++)
		bad |= y[i] != 1.0f + 0.5f * (float)i || fabs(yd[i] - (2.0 + 0.125 * i)) > 1e-12;
	printf("%s\n", bad ? "wrong" : "right");
	return bad;
}
END
cat >run.cpp <<'END'
#include <cstdio>
#include <vector>
#include "_aot_axpy_f32_host.h"
#include "_aot_axpy_f64_host.h"
int main()
{
	std::vector<float> x(777, 2.0f), y(777, 1.0f);
	std::vector<double> xd(777, 4.0), yd(777, 1.0);
	// one name, the buffers' type picks the dispatch
	int st = aot_axpy_host_launch(777, 0.5f, x.data(), y.data()) | aot_axpy_host_launch(777, 0.25, xd.data(), yd.data());
	bool right = st == 0 && y[776] == 2.0f && yd[776] == 2.0;
	std::printf("%s\n", right ? "right" : "wrong");
	return right ? 0 : 1;
}
END
g++ -std=c++17 -O2 -I out -I . -c -o l32.o out/_aot_axpy_f32_host.cpp >log 2>&1 &&
	g++ -std=c++17 -O2 -I out -I . -c -o l64.o out/_aot_axpy_f64_host.cpp >>log 2>&1 &&
	gcc -std=c99 -O2 -c -o d32.o out/_aot_axpy_f32_host.c >>log 2>&1 &&
	gcc -std=c99 -O2 -c -o d64.o out/_aot_axpy_f64_host.c >>log 2>&1
built=$?
if [ $built -eq 0 ] && gcc -std=c99 -Wall -Werror -I out -c run.c -o run.o >>log 2>&1 &&
	g++ -o run run.o l32.o l64.o d32.o d64.o -lm >>log 2>&1 && ./run >run.out 2>&1; then
	ok "host: a C program calls both typed launchers, right results"
else
	bad "host: C program with both launchers" "$(tail -10 log; cat run.out 2>/dev/null)"
fi
if [ $built -eq 0 ] && g++ -std=c++17 -Wall -Werror -I out -o runpp run.cpp l32.o l64.o d32.o d64.o >>log 2>&1 &&
	./runpp >runpp.out 2>&1; then
	ok "host: a C++ program calls aot_axpy_host_launch for float and double (overloads)"
else
	bad "host: C++ overloads" "$(tail -10 log; cat runpp.out 2>/dev/null)"
fi
cp -r out out1
"$aotc" compile axpy_types.cpp --arch host --db db -o out >run2.log 2>&1
if [ $? -eq 0 ] && diff -r out out1 >/dev/null && [ "$(grep -c '^0 measurements taken' run2.log)" -eq 2 ]; then
	ok "host: a second compile measures nothing and emits byte-identical files"
else
	bad "host: second compile" "$(diff -r out out1 | head -5; tail -5 run2.log)"
fi

# AOTC_RECORD: one program, both types: the record keeps each under its id,
# and tune --shapes takes the type's own rows.
rm -f rec.json
if [ -x run ] && AOTC_RECORD=rec.json ./run >/dev/null 2>&1 && python3 -c '
import json, sys
k = json.load(open("rec.json"))["kernels"]
sys.exit(sorted(k) != ["axpy_f32", "axpy_f64"] or k["axpy_f64"][0]["shape"] != {"n": 3000})' &&
	"$aotc" tune axpy_types.cpp --arch host --db db --kernel axpy_f64 --shapes rec.json >rec.log 2>&1 &&
	grep -q "^AUTOTUNE axpy_f64: 4 configurations x 1 shapes" rec.log; then
	ok "host: AOTC_RECORD keeps each type under its id; tune --kernel axpy_f64 --shapes takes its rows"
else
	bad "host: AOTC_RECORD per type" "$(cat rec.json 2>/dev/null | head -12; tail -5 rec.log 2>/dev/null)"
fi
# report and eval go by the id
if "$aotc" report db/axpy_f64.*.json >rep.out 2>&1 && head -1 rep.out | grep -q "^axpy_f64 on host_" &&
	printf '[{"n": 5000}, {"n": 70000}]' >held.json &&
	"$aotc" eval axpy_types.cpp --arch host --db db --kernel axpy_f32 --shapes held.json >eval.out 2>&1 &&
	grep -q "^EVAL axpy_f32: " eval.out && ! grep -q "EVAL axpy_f64" eval.out; then
	ok "host: report and eval (--kernel axpy_f32) name the type"
else
	bad "host: report/eval per type" "$(head -2 rep.out; tail -5 eval.out)"
fi

"$aotc" configs axpy_types.cpp --kernel axpy_f64 >c64 2>&1
"$aotc" configs axpy_types.cpp --kernel axpy >call 2>&1
if [ "$(grep -c '^axpy<double' c64)" -eq 4 ] && ! grep -q '^axpy<float' c64 && [ "$(grep -c '^axpy<' call)" -eq 8 ]; then
	ok "host: --kernel axpy_f64 picks one type, --kernel axpy both"
else
	bad "host: --kernel by id and by name" "$(cat c64 call)"
fi
"$aotc" parse axpy_types.cpp >ir.json 2>log && "$aotc" configs ir.json >cir 2>>log
if [ $? -eq 0 ] && diff call cir >/dev/null && grep -q '"type_key"' ir.json; then
	ok "host: the IR as JSON keeps both types (type_key), configs from it agree"
else
	bad "host: IR JSON round trip" "$(tail -5 log; diff call cir | head -5)"
fi

# AOTC_TOLERANCE per type: one for every type, another for double
sed 's/^AOTC_TYPES(T, float, double)$/&\nAOTC_TOLERANCE(1e-6, double = 1e-12)/' axpy_types.cpp >tol.cpp
if "$aotc" parse tol.cpp >tol.json 2>log && python3 -c '
import json, sys
t = {k["type_key"]["tag"]: k["tolerance"] for k in json.load(open("tol.json"))["kernels"]}
sys.exit(t != {"f32": 1e-6, "f64": 1e-12})'; then
	ok "host: AOTC_TOLERANCE(1e-6, double = 1e-12): float 1e-6, double 1e-12"
else
	bad "host: AOTC_TOLERANCE per type" "$(cat log; grep -o '"tolerance": [^,]*' tol.json)"
fi

# IR JSON that lies about the types is refused, with what is wrong
if python3 - "$aotc" >irbad.log 2>&1 <<'END'
import copy, json, subprocess, sys
base = json.load(open("ir.json"))
cases = [
    ("a tag the default does not have", lambda d: d["kernels"][0]["type_key"].update(tag="f64"),
     "type_key must name a type template parameter whose default has that tag"),
    ("a non-type parameter as the key", lambda d: d["kernels"][0]["type_key"].update(param="MODE"),
     "type_key must name a type template parameter"),
    ("a template reference without a key", lambda d: d["kernels"][0].pop("type_key"),
     "a template reference (reference.template) belongs to a kernel with a type_key"),
    ("the same type twice", lambda d: d["kernels"].__setitem__(1, copy.deepcopy(d["kernels"][0])),
     "kernels[1]: a second kernel 'axpy_f32'"),
]
fails = 0
for name, change, want in cases:
    d = copy.deepcopy(base)
    change(d)
    json.dump(d, open("irbad.json", "w"))
    r = subprocess.run([sys.argv[1], "configs", "irbad.json"], capture_output=True, text=True)
    if r.returncode != 1 or want not in r.stderr:
        fails += 1
        print("%s: exit %d, %s" % (name, r.returncode, r.stderr[:200]))
sys.exit(fails != 0)
END
then
	ok "host: IR JSON with a wrong type_key, a stray template reference or a type twice is refused"
else
	bad "host: hostile IR JSON" "$(cat irbad.log)"
fi

finish
