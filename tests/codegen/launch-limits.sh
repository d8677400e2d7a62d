#!/bin/sh
# CUDA launch limits in the emitted dispatch (docs/spec.md §8): launch_dims returns
# -1 for a launch no device accepts (grid.y or grid.z > 65535, grid.x >
# 2^31-1, more than 1024 threads per block), select() passes over such a
# variant along its leaf's fallback list (-1 when none fits), the launcher
# answers cudaErrorInvalidValue then; ordinary shapes are unaffected. On
# sgemm from the committed H200 database less its cuBLAS routine (grid = cdiv(N, BN), cdiv(M, BM);
# block = BM * BN / (TM * TN)), through a C driver compiled with the
# emitted .c.
# Usage: launch-limits.sh AOTC REPO_ROOT
aotc=$1
root=$2
case $aotc in /*) ;; *) aotc=$(pwd)/$aotc ;; esac
case $root in /*) ;; *) root=$(pwd)/$root ;; esac
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

. "$(dirname "$0")/../lib.sh"

cd "$root" || exit 1
# Without the cuBLAS routine, which the H200 dispatch runs everywhere and
# which has no launch of its own: the variants' limits are the subject.
mkdir -p "$tmp/db"
python3 - templates/sgemm.cuda_NVIDIA_H200_13.0.json "$tmp/db/sgemm.cuda_NVIDIA_H200_13.0.json" <<'END'
import json, sys
d = json.load(open(sys.argv[1]))
keep = [i for i, c in enumerate(d["configs"]) if not c.get("extern")]
new = {old: i for i, old in enumerate(keep)}
d["configs"] = [d["configs"][i] for i in keep]
d["measurements"] = [dict(m, config=new[m["config"]]) for m in d["measurements"] if m["config"] in new]
json.dump(d, open(sys.argv[2], "w"))
END
if ! "$aotc" emit templates/sgemm.cu --arch sm90 --db "$tmp/db" -o "$tmp" >"$tmp/log" 2>&1; then
	bad "emit sgemm" "$(tail -5 "$tmp/log")"
	finish
fi
ok "emit sgemm"

cat >"$tmp/driver.c" <<'END'
#include <stdint.h>
#include <stdio.h>

#include "_aot_sgemm_cuda_sm90.h"

#define P(v, i) (aot_sgemm_cuda_sm90_variant_params(v)[i]) /* BM BN BK TM TN VEC */

static int errors;

static void check(int cond, const char *what, long long m, long long n, long long k, int v)
{
	if (!cond) {
		printf("FAIL %s (M=%lld N=%lld K=%lld, variant %d)\n", what, m, n, k, v);
		errors++;
	}
}

static int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* select's answer at a shape: -1, or a variant whose launch fits. */
static int selected_fits(int64_t m, int64_t n, int64_t k)
{
	uint32_t g[3], b[3], s;
	int v = aot_sgemm_cuda_sm90_select(m, n, k);
	if (v < 0)
		return v;
	check(aot_sgemm_cuda_sm90_launch_dims(v, m, n, k, g, b, &s) == 0,
	      "select returns a variant whose launch_dims fails", m, n, k, v);
	check(g[1] <= 65535 && g[2] <= 65535 && g[0] <= 2147483647u && b[0] * b[1] * b[2] <= 1024,
	      "select returns a variant beyond the launch limits", m, n, k, v);
	return v;
}

int main(void)
{
	int nv = aot_sgemm_cuda_sm90_num_variants(), v, fits = 0, exceeds = 0, chosen_large = 0;
	int64_t m;
	uint32_t g[3], b[3], s;

	/* The issue's shape: every variant's grid.y is cdiv(M, BM) > 65535. */
	v = selected_fits(8388608, 64, 64);
	printf("select(8388608, 64, 64) = %d\n", v);

	/* launch_dims against the rule, variant by variant, around the
	 * grid.y limit and the grid.x one. */
	for (v = 0; v < nv; v++) {
		int64_t bm = P(v, 0), bn = P(v, 1);
		int64_t ms[] = {65535 * bm, 65535 * bm + 1, 8388608, 1024};
		int64_t ns[] = {2147483647 * bn, 2147483647 * bn + 1};
		size_t i;
		for (i = 0; i < sizeof ms / sizeof *ms; i++) {
			int r = aot_sgemm_cuda_sm90_launch_dims(v, ms[i], 64, 64, g, b, &s);
			int want = cdiv(ms[i], bm) <= 65535 ? 0 : -1;
			check(r == want, "launch_dims and the grid.y limit", (long long)ms[i], 64, 64, v);
			if (r == 0)
				check(g[0] == cdiv(64, bn) && g[1] == cdiv(ms[i], bm) && g[2] == 1 &&
				      b[0] == bm * bn / (P(v, 3) * P(v, 4)) && b[1] == 1 && b[2] == 1 && s == 0,
				      "launch_dims values", (long long)ms[i], 64, 64, v);
			fits += r == 0;
			exceeds += r != 0;
		}
		for (i = 0; i < sizeof ns / sizeof *ns; i++) {
			int r = aot_sgemm_cuda_sm90_launch_dims(v, 64, ns[i], 64, g, b, &s);
			check(r == (i == 0 ? 0 : -1), "launch_dims and the grid.x limit", 64, (long long)ns[i], 64, v);
		}
	}
	check(fits > 0 && exceeds > 0, "both answers seen", 0, 0, 0, -1);

	/* select() over tall shapes: never a variant beyond the limits; where
	 * the widest-BM variant still fits, something is chosen somewhere. */
	for (m = 1 << 20; m <= (int64_t)1 << 25; m += m / 16) {
		int64_t n, k;
		for (n = 16; n <= 4096; n *= 4)
			for (k = 64; k <= 4096; k *= 8) {
				v = selected_fits(m, n, k);
				chosen_large += v >= 0 && m > 65535 * 64;
			}
	}
	printf("tall shapes beyond 65535 * 64 rows given a variant: %d\n", chosen_large);

	/* Ordinary shapes: a variant, launched with its usual geometry. */
	for (m = 128; m <= 4096; m *= 2) {
		v = selected_fits(m, m, 1024);
		check(v >= 0, "an ordinary shape gets a variant", (long long)m, (long long)m, 1024, v);
		if (v >= 0) {
			aot_sgemm_cuda_sm90_launch_dims(v, m, m, 1024, g, b, &s);
			check(g[0] == cdiv(m, P(v, 1)) && g[1] == cdiv(m, P(v, 0)),
			      "an ordinary shape's grid", (long long)m, (long long)m, 1024, v);
		}
	}
	return errors != 0;
}
END
if gcc -std=c99 -Wall -Wextra -Werror -pedantic -I "$tmp" -o "$tmp/driver" "$tmp/driver.c" \
	"$tmp/_aot_sgemm_cuda_sm90.c" >"$tmp/cc.log" 2>&1; then
	ok "driver compiles with the emitted .c (gcc -std=c99 -pedantic -Werror)"
	if "$tmp/driver" >"$tmp/run.log" 2>&1; then
		ok "select() never returns a variant beyond the limits; launch_dims refuses exactly those; ordinary shapes unaffected"
	else
		bad "launch limits" "$(grep FAIL "$tmp/run.log" | sort | uniq -c | head -10)"
	fi
	sed 's/^/    /' "$tmp/run.log" | grep -v FAIL
	if grep -q '^select(8388608, 64, 64) = -1$' "$tmp/run.log"; then
		ok "select(8388608, 64, 64) is -1: every variant's grid.y exceeds 65535"
	else
		bad "select(8388608, 64, 64) is -1" "$(head -1 "$tmp/run.log")"
	fi
else
	bad "driver compiles" "$(head -20 "$tmp/cc.log")"
fi

# The launcher: no launch when select or launch_dims refuses.
cu=$tmp/_aot_sgemm_cuda_sm90.cu
if grep -A1 '^	if (aot_v < 0)$' "$cu" | grep -q 'return cudaErrorInvalidValue;' &&
	grep -A1 '_launch_dims(aot_v,' "$cu" | grep -q 'return cudaErrorInvalidValue;'; then
	ok "launcher returns cudaErrorInvalidValue when select or launch_dims refuses"
else
	bad "launcher returns cudaErrorInvalidValue when select or launch_dims refuses" "$(sed -n '/_launch(/,/switch/p' "$cu")"
fi

finish
