#!/bin/sh
# AOTC_VALUE over tunables and launcher-only shape arguments on the host
# backend, for real: tunes a kernel of tests/codegen/value/ on this CPU on a
# few small shapes, emits, builds the emitted dispatch and launcher into a
# program that calls the launcher on shapes the tuner never saw and checks
# the result against the reference (and, for scale_tile, that the launcher
# passed the chosen variant's tile).
# Usage: value-host.sh AOTC REPO_ROOT CASE   (CASE: scale_tile or rows_bt; ~10 s)
aotc=$1
root=$2
case=$3
case $aotc in /*) ;; *) aotc=$(pwd)/$aotc ;; esac
case $root in /*) ;; *) root=$(pwd)/$root ;; esac
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export AOTC_CACHE_DIR="$tmp/cache"
. "$(dirname "$0")/../lib.sh"

cp "$root/tests/codegen/value/$case.cpp" "$tmp/$case.cpp"
cd "$tmp" || exit 1
case $case in
scale_tile) kernel=scale ;;
rows_bt) kernel=rows ;;
*) echo "unknown case $case"; exit 2 ;;
esac
base=_aot_${kernel}_host
prefix=aot_${kernel}_host

"$aotc" compile "$case.cpp" --arch host --db db -o out >compile.out 2>compile.err
st=$?
if [ "$st" -eq 0 ]; then
	ok "aotc compile $case.cpp --arch host (tunes, then emits) exits 0"
else
	bad "aotc compile exits 0" "exit $st" "$(tail -10 compile.err)"
	finish
fi
# Every configuration measured ok on every shape: the per-variant values
# (scale_tile) and the launcher-only arguments (rows_bt) reached the kernel.
python3 - db/*.host_*.json >dbcheck.log 2>&1 <<'END'
import json, sys
d = json.load(open(sys.argv[1]))
# invalid: AOTC_VALID_IF excludes the variant there (rows_bt: C % UNROLL)
bad = [m for m in d["measurements"] if m["status"] not in ("ok", "invalid")]
print(len(d["measurements"]), "measurements,", len(bad), "not ok:", bad[:3])
print("shape_args", d["shape_args"])
sys.exit(1 if bad or not d["measurements"] else 0)
END
if [ $? -eq 0 ]; then ok "every measurement ok or invalid by AOTC_VALID_IF"; else bad "every measurement ok" "$(cat dbcheck.log)"; fi

try "$base.c: gcc -std=c99" gcc -std=c99 -Wall -Wextra -Werror -pedantic -O2 -c -o dispatch.o "out/$base.c"
try "$base.cpp: g++ -std=c++17" g++ -std=c++17 -Wall -Wextra -Werror -O2 -I . -I out -c -o launcher.o "out/$base.cpp"

if [ "$case" = scale_tile ]; then
	grep -q "^int $prefix_launch(float \*out, const float \*in, int n);" "out/$base.h" 2>/dev/null ||
		grep -q "int ${prefix}_launch(float \*out, const float \*in, int n);" "out/$base.h"
	if [ $? -eq 0 ]; then ok "the launcher does not take tile, chunk, nchunks"; else bad "launcher signature" "$(grep _launch "out/$base.h")"; fi
	cat >main.cpp <<END
#include <cmath>
#include <cstdio>
#include <vector>
#include "$base.h"

int main()
{
	static const int sizes[] = {1, 7, 255, 256, 3000, 5001};
	int failures = 0;
	for (int n : sizes) {
		std::vector<float> in(n), out(n, NAN);
		for (int i = 0; i < n; i++)
			in[i] = (float)(i % 13) - 6.5f;
		int v = ${prefix}_select(n);
		int64_t tile = -1, chunk = -1, nchunks = -1;
		const int64_t *t = ${prefix}_variant_params(v);
		// tunables in declaration order: TILE CHUNK
		if (v < 0 || ${prefix}_variant_values(v, n, &tile, &chunk, &nchunks) != 0 || !t ||
		    tile != t[0] || chunk != t[1] || nchunks != (n + chunk - 1) / chunk) {
			printf("n=%d: variant %d, values %lld %lld %lld disagree\n", n, v, (long long)tile,
			       (long long)chunk, (long long)nchunks);
			failures++;
			continue;
		}
		int st = ${prefix}_launch(out.data(), in.data(), n);
		int wrong = 0;
		for (int i = 0; i < n; i++)
			wrong += !(out[i] == 2.0f * in[i]);
		printf("n=%d: %s (tile %lld, chunk %lld, nchunks %lld): launch %d, %d wrong\n", n,
		       ${prefix}_variant_name(v), (long long)tile, (long long)chunk, (long long)nchunks, st, wrong);
		failures += st != 0 || wrong != 0;
	}
	printf("%d failures\n", failures);
	return failures != 0;
}
END
else
	if grep -q "int ${prefix}_launch(float \*out, const float \*inp, int N, int C, int64_t B, int64_t T);" "out/$base.h" &&
	   grep -q "int ${prefix}_select(int64_t C, int64_t B, int64_t T);" "out/$base.h"; then
		ok "select() and the launcher take B and T after the kernel's own arguments"
	else
		bad "select/launcher signatures" "$(grep '_select\|_launch' "out/$base.h")"
	fi
	cat >main.cpp <<END
#include <cstdio>
#include <vector>
#include "$base.h"

int main()
{
	int failures = 0;
	for (int B : {1, 2, 5})
		for (int T : {1, 17, 100})
			for (int C : {8, 10, 12, 40}) {
				int N = B * T;
				std::vector<float> inp((size_t)N * C), out((size_t)N * C, -1.0f);
				for (size_t i = 0; i < inp.size(); i++)
					inp[i] = (float)(i % 7) - 3.0f;
				int v = ${prefix}_select(C, B, T);
				int st = ${prefix}_launch(out.data(), inp.data(), N, C, B, T);
				int wrong = 0;
				for (int i = 0; i < N; i++)
					for (int j = 0; j < C; j++)
						wrong += out[(size_t)i * C + j] != inp[(size_t)i * C + j] * (float)(j + 1);
				printf("B=%d T=%d C=%d: %s, launch %d, %d wrong\n", B, T, C,
				       v >= 0 ? ${prefix}_variant_name(v) : "none", st, wrong);
				failures += v < 0 || st != 0 || wrong != 0;
			}
	printf("%d failures\n", failures);
	return failures != 0;
}
END
fi
try "test program builds and links" g++ -std=c++17 -Wall -Wextra -O2 -I out -o value_test main.cpp launcher.o dispatch.o
if [ -x value_test ]; then
	if ./value_test >run.log 2>&1; then
		ok "unseen shapes: the launcher runs the selected variant correctly"
	else
		bad "unseen shapes run correctly" "$(grep -v ' 0 wrong' run.log | head -20)"
	fi
	sed 's/^/    /' run.log | head -30
fi
if [ "$case" = rows_bt ] && [ -x value_test ]; then
	# The launcher records the launcher-only arguments like any shape
	# argument, and tune takes the record back.
	AOTC_RECORD=rec.json ./value_test >/dev/null 2>&1
	got=$(python3 -c '
import json, sys
r = json.load(open("rec.json"))["kernels"]["rows"]
print(len(r), sorted(r[0]["shape"]))' 2>&1)
	if [ "$got" = "36 ['B', 'C', 'T']" ]; then
		ok "AOTC_RECORD: 36 shapes of C, B and T"
	else
		bad "AOTC_RECORD records launcher-only arguments" "$got"
	fi
	try "tune --shapes on the record" "$aotc" tune "$case.cpp" --arch host --db db --shapes rec.json
fi
finish
