#!/bin/bash
# Wall time of `aotc parse` on kernel files as people write them (issue 27:
# host code, a shared header, CUB, errors in code aotc does not use), and on
# a generated 5000-function call chain the frontend follows, for one or
# more aotc binaries (to compare two builds). Prints one line per file and
# binary: mean ± sigma of 15 runs after 2 warm-ups, and the exit status (an
# older frontend fails on some of these files; its time is shown anyway).
# Usage: bench/parse-files.sh [AOTC...]   (default build/aotc)
set -eu
cd "$(dirname "$0")/.."
command -v hyperfine >/dev/null || { echo "bench/parse-files.sh needs hyperfine (apt-get install hyperfine)"; exit 1; }
binaries=("$@")
[ ${#binaries[@]} -gt 0 ] || binaries=(build/aotc)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
awk 'BEGIN { print "#include <aotc.h>"; print "__device__ float f0(float x) { return x; }";
	for (i = 1; i < 5000; i++) printf "__device__ float f%d(float x) { return f%d(x) + 1; }\n", i, i - 1;
	print "template <int B>\nAOTC_TUNE(B, 128)\nAOTC_GRID(cdiv(n, B))\nAOTC_BLOCK(B)\nAOTC_BUFFER(x, n, inout)\nAOTC_SHAPES(n = {1024})";
	print "__global__ void k(float *x, int n) { x[0] = f4999(x[0]); }" }' >"$tmp/chain5000.cu"
printf '%-36s %-28s %8s %8s %s\n' file aotc "mean ms" "sigma" exit
for f in templates/sgemm.cu templates/matmul_host.cpp tests/tutorial/sgemm_tutorial.cu \
	tests/public/gelu_forward.cu tests/public/rmsnorm_cub.cu "$tmp/chain5000.cu"; do
	for a in "${binaries[@]}"; do
		"$a" parse "$f" >/dev/null 2>&1 && st=0 || st=$?
		hyperfine -N -i --warmup 2 --runs 15 --export-json "$tmp/r.json" "$a parse $f" >/dev/null 2>&1
		python3 - "$tmp/r.json" "${f#$tmp/}" "$a" "$st" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["results"][0]
print("%-36s %-28s %8.1f %8.1f %s" % (sys.argv[2], sys.argv[3], r["mean"] * 1e3, r["stddev"] * 1e3, sys.argv[4]))
PY
	done
done
