#!/bin/sh
# The host pipeline end to end, as CI runs it: `aotc compile` tunes
# templates/matmul_host.cpp on this CPU and emits; the emitted dispatch and
# launcher are compiled and linked into a program that runs the tuned
# kernel on shapes the tuner never saw (odd sizes, N = 100 where the
# UNROLL = 8 variants are invalid) against the naive reference. A second
# `aotc compile` measures nothing and emits byte-identical files.
# Usage: host-e2e.sh AOTC REPO_ROOT   (takes ~15 s: real tuning)
aotc=$1
root=$2
# Absolute paths: the script changes directory.
case $aotc in /*) ;; *) aotc=$(pwd)/$aotc ;; esac
case $root in /*) ;; *) root=$(pwd)/$root ;; esac
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export AOTC_CACHE_DIR="$tmp/cache"

. "$(dirname "$0")/../lib.sh"

# try NAME CMD...: CMD succeeds; its output is shown when it does not.

# A copy of the kernel, as a user's project would have it; relative paths
# from its directory, as a build would run aotc.
cp "$root/templates/matmul_host.cpp" "$tmp/mm.cpp"
mkdir -p "$tmp/out"
cd "$tmp" || exit 1
base=_aot_matmul_host_host

compile() {
	"$aotc" compile mm.cpp --arch host --db "$tmp/db" \
		--shapes "$root/tests/tuner/small_shapes.json" -o "$tmp/out" >"$tmp/$1.out" 2>"$tmp/$1.err"
}

compile run1
st=$?
if [ "$st" -eq 0 ]; then
	ok "aotc compile (tunes, then emits) exits 0"
else
	bad "aotc compile exits 0" "exit $st" "$(tail -10 "$tmp/run1.err")"
	finish
fi
for e in c h cpp; do
	if [ -f "out/$base.$e" ]; then ok "$base.$e emitted"; else bad "$base.$e emitted"; fi
done
mkdir -p first
cp out/* first/

try "$base.c: gcc -std=c99" gcc -std=c99 -Wall -Wextra -Werror -pedantic -O2 -c -o dispatch.o "out/$base.c"
try "$base.cpp: g++ -std=c++17" g++ -std=c++17 -Wall -Wextra -O2 -I . -I out \
	-c -o launcher.o "out/$base.cpp"

# The test program. matmul_host_naive is defined in the launcher object
# (which includes the kernel source), so it is declared here and linked.
cat >main.cpp <<'END'
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "_aot_matmul_host_host.h"

void matmul_host_naive(int M, int N, int K, const float *A, const float *B, float *C);

int main()
{
	static const int sizes[] = {17, 96, 100, 200};
	unsigned seed = 12345;
	int failures = 0;
	for (int M : sizes)
		for (int N : sizes)
			for (int K : sizes) {
				std::vector<float> A((size_t)M * K), B((size_t)K * N), C((size_t)M * N, NAN),
					R((size_t)M * N);
				for (float &x : A) x = (float)((seed = seed * 1103515245u + 12345u) >> 8) / (1u << 24) * 2 - 1;
				for (float &x : B) x = (float)((seed = seed * 1103515245u + 12345u) >> 8) / (1u << 24) * 2 - 1;
				int v = aot_matmul_host_host_select(M, N, K);
				const int64_t *t = aot_matmul_host_host_variant_params(v);
				const char *name = aot_matmul_host_host_variant_name(v);
				// tunables in declaration order: BM BN BK UNROLL;
				// AOTC_VALID_IF(N % UNROLL == 0)
				if (v < 0 || !t || !name || N % t[3] != 0) {
					printf("M=%d N=%d K=%d: select gives %d (%s), not a valid variant\n", M, N, K, v,
					       name ? name : "none");
					failures++;
					continue;
				}
				int st = aot_matmul_host_host_launch(M, N, K, A.data(), B.data(), C.data());
				if (st != 0) {
					printf("M=%d N=%d K=%d: launch returns %d\n", M, N, K, st);
					failures++;
					continue;
				}
				matmul_host_naive(M, N, K, A.data(), B.data(), R.data());
				// relative error, against 1 for entries near zero; a NaN
				// (an entry never written) fails the comparison
				double worst = 0;
				for (size_t i = 0; i < C.size(); i++) {
					double e = std::fabs((double)C[i] - R[i]) / std::fmax(1.0, std::fabs((double)R[i]));
					if (!(e <= worst))
						worst = std::isnan(e) ? INFINITY : e;
				}
				printf("M=%d N=%d K=%d: %s, max relative error %.2e\n", M, N, K, name, worst);
				if (!(worst < 1e-4))
					failures++;
			}
	printf("%d failures\n", failures);
	return failures != 0;
}
END
try "test program builds and links" g++ -std=c++17 -Wall -Wextra -O2 -I out -o mm_test \
	main.cpp launcher.o dispatch.o
if [ -x mm_test ]; then
	./mm_test >run.log 2>&1
	st=$?
	n=$(grep -c ': matmul_host<' run.log)
	if [ "$st" -eq 0 ] && [ "$n" -eq 64 ]; then
		ok "64 unseen shapes: a valid variant selected, C matches the reference (rel. err < 1e-4)"
	else
		bad "unseen shapes run correctly" "exit $st, $n of 64 checked" "$(grep -v 'e-0[5-9]$\|e+00$' run.log | head -20)"
	fi
	# Which variants ran (for the log: the tuning differs between machines).
	sed -n 's/.*: \(matmul_host<[^>]*>\),.*/\1/p' run.log | sort | uniq -c | sed 's/^/    /'
fi

# A second compile reuses every measurement and emits the same bytes.
compile run2
st=$?
if [ "$st" -eq 0 ]; then ok "second aotc compile exits 0"; else bad "second aotc compile exits 0" "exit $st" "$(tail -5 "$tmp/run2.err")"; fi
if grep -q ' 0 measurements to take' run2.err; then
	ok "second aotc compile measures nothing"
else
	bad "second aotc compile measures nothing" "$(grep -i measure run2.err | head -3)"
fi
for e in c h cpp; do
	if cmp -s "first/$base.$e" "out/$base.$e"; then
		ok "$base.$e: byte-identical after the second compile"
	else
		bad "$base.$e: byte-identical after the second compile" "$(diff "first/$base.$e" "out/$base.$e" | head -10)"
	fi
done

finish
