#!/bin/sh
# AOTC_ALTERNATIVE (docs/annotations.md) without timing anything:
#   errors: each misuse told once, at its line, exit 1;
#   CUDA: tests/families/rowsum_alt.cu (a kernel, an alternative kernel and
#   a host launcher of two kernels) compiles for sm90 with --compile-only;
#   from a made-up database (times from a formula, NOT measured) it emits,
#   and the dispatch (gcc) and the launcher (nvcc) compile; the launcher
#   launches each kernel with its own geometry and calls the host launcher;
#   for gfx90a the host launcher is left out and the rest emits and builds
#   with hipcc. alternatives-host.sh: tuned for real on the host.
# Usage: alternatives-built.sh AOTC REPO_ROOT
. "$(dirname "$0")/setup.sh"

cd "$tmp" || exit 1
cp "$src/rowsum_alt.cpp" .

# ---- errors -----------------------------------------------------------------
# bad_alt FILE MESSAGE AT: exit 1, MESSAGE once, at line:column AT
bad_alt() {
	"$aotc" configs "$1" >bad.out 2>bad.err
	st=$?
	n=$(grep -c "error: .*$2" bad.err)
	if [ $st -eq 1 ] && [ "$n" -eq 1 ] && grep -q "^$1:$3: error: .*$2" bad.err; then
		ok "error once, at line $3: $2"
	else
		bad "error: $2" "exit $st, $n errors" "$(head -8 bad.err)"
	fi
}
# the first AOTC_ALTERNATIVE (rowsum_setup's, line 38) replaced
first() { sed "0,/^AOTC_ALTERNATIVE(rowsum)\$/s//$1/" rowsum_alt.cpp >"$2"; }
first "AOTC_ALTERNATIVE(rowsum_x)" e1.cpp
bad_alt e1.cpp "AOTC_ALTERNATIVE: no function 'rowsum_x' in this file; did you mean 'rowsum'" "38:18"
first "AOTC_ALTERNATIVE(rowsum) AOTC_BUFFER(out, rows, out)" e3.cpp
bad_alt e3.cpp "AOTC_BUFFER on alternative 'rowsum_setup'" "38:38"
first "AOTC_ALTERNATIVE(rowsum) AOTC_ALTERNATIVE(rowsum)" e4.cpp
bad_alt e4.cpp "AOTC_ALTERNATIVE given twice" "38:43"
first "AOTC_ALTERNATIVE(rowsum_setup)" e5.cpp
bad_alt e5.cpp "'rowsum_setup' names itself" "38:18"
# an alternative added at the end (line n + 2), wrong as told
added() {
	cp rowsum_alt.cpp "$2"
	printf '\nAOTC_ALTERNATIVE(rowsum)\n%s\n' "$1" >>"$2"
	echo "$(($(wc -l <rowsum_alt.cpp) + 2))"
}
at=$(added "void rowsum_o(float *o, const float *inp, int rows, int cols) { rowsum_ref(o, inp, rows, cols); }" e2.cpp)
bad_alt e2.cpp "parameter 1 of 'rowsum_o' is 'o', of 'rowsum' 'out'" "$at:18"
at=$(added "void rowsum_l(float *out, const float *inp, int rows, long cols) { rowsum_ref(out, inp, rows, (int)cols); }" e6.cpp)
bad_alt e6.cpp "AOTC_ALTERNATIVE: parameter 4 ('cols') of 'rowsum_l' is 'long', 'rowsum' takes 'int'" "$at:18"
at=$(added "void rowsum_3(float *out, const float *inp, int rows) { rowsum_ref(out, inp, rows, 1); }" e7.cpp)
bad_alt e7.cpp "AOTC_ALTERNATIVE: 'rowsum_3' takes 3 parameters, 'rowsum' takes 4" "$at:18"

# ---- CUDA: compile-only and emit from a made-up database ------------------------
nvcc=/usr/local/cuda/bin/nvcc
[ -x "$nvcc" ] || nvcc=$(command -v nvcc || true)
if [ -z "$nvcc" ]; then
	echo "no CUDA toolkit: CUDA part skipped"
	finish
fi
cp "$src/rowsum_alt.cu" .
"$aotc" tune rowsum_alt.cu --arch sm90 --compile-only -j 2 >tune.log 2>&1
st=$?
if [ $st -eq 0 ] && grep -q "^rowsum_kernel1: 7 of 7 configurations compiled for sm90.*reference compiled" tune.log; then
	ok "cuda: the kernel, its alternative kernel and its host launcher compile for sm90 (7 variants)"
else
	bad "cuda: compile-only" "exit $st" "$(tail -6 tune.log)"
fi
# made_up ARCH BACKEND: a database of every configuration tune would
# measure for ARCH, times from a formula (not measured) that make each
# function best somewhere
made_up() {
	"$aotc" tune rowsum_alt.cu --arch "$1" --dump=configs >cfg_$1.jsonl 2>/dev/null
	python3 - "$aotc" cfg_$1.jsonl "$1" "$2" >>log 2>&1 <<'END'
import json, subprocess, sys
aotc, cfgs, arch, backend = sys.argv[1:]
ir = json.loads(subprocess.run([aotc, "parse", "rowsum_alt.cu"], capture_output=True, text=True, check=True).stdout)
configs = [json.loads(l) for l in open(cfgs)]
shapes = [[n, c] for n in (64, 1024, 16384) for c in (64, 1024, 8192)]
fns = sorted({c.get("function", "rowsum_kernel1") for c in configs})
ms = []
for i, c in enumerate(configs):
    f = fns.index(c.get("function", "rowsum_kernel1"))
    for s, (n, cc) in enumerate(shapes):
        best = {64: 0, 1024: 1, 8192: 2}[cc]  # made best here: by the row's length
        t = round((0.01 + n * cc * 1e-9) * (1 + (f != best)) * (1 + 0.01 * i), 6)
        ms.append({"config": i, "shape": s, "status": "ok", "time_ms": t, "samples": [t, t, t], "error": 0.0})
entries = []
for c in configs:
    e = {"name": c["name"], "values": c["values"]}
    if "function" in c:
        e["function"] = c["function"]
    entries.append(e)
db = {"aotc_db": 1, "kernel": "rowsum_kernel1", "source": "rowsum_alt.cu", "source_hash": ir["source_hash"],
      "hardware": {"id": backend + "_made_up_" + arch, "backend": backend,
                   "name": "made up by alternatives.sh, not measured", "arch": arch, "sm_count": 132},
      "method": {"note": "times from a formula, not measurements"},
      "tunables": ["BLOCK"], "shape_args": ["N", "C"], "configs": entries, "shapes": shapes, "measurements": ms}
json.dump(db, open("cdb/rowsum_kernel1.%s_made_up_%s.json" % (backend, arch), "w"), indent=1)
END
}
mkdir -p cdb
: >log
made_up sm90 cuda
if "$aotc" emit rowsum_alt.cu --arch sm90 --db cdb -o cout >>log 2>&1; then
	ok "cuda: emit --arch sm90 from a database of the three functions"
else
	bad "cuda: emit --arch sm90" "$(tail -8 log)"
fi
lf=cout/_aot_rowsum_kernel1_cuda_sm90.cu
if grep -q "rowsum_kernel2<[0-9]*><<<aot_grid, aot_block, aot_smem, aot_stream>>>" $lf &&
	grep -q "rowsum_kernel1<<<aot_grid" $lf && grep -q "return rowsum_twopass<[0-9]*>(out, inp, N, C, aot_stream);" $lf &&
	grep -q "static int aot_dims_rowsum_kernel2(" cout/_aot_rowsum_kernel1_cuda_sm90.c &&
	! grep -q "aot_dims_rowsum_twopass" cout/_aot_rowsum_kernel1_cuda_sm90.c; then
	ok "cuda: the launcher launches each kernel and calls the host launcher; the dispatch has each function's launch"
else
	bad "cuda: launcher per function" "$(grep -n "rowsum_" $lf | tail -12)"
fi
try "cuda: the dispatch compiles (gcc -std=c99 -Werror)" \
	gcc -std=c99 -Wall -Wextra -Werror -pedantic -O2 -c -o cout/d.o cout/_aot_rowsum_kernel1_cuda_sm90.c
try "cuda: the launcher compiles (nvcc -arch=sm_90)" \
	"$nvcc" -std=c++17 -arch=sm_90 -I . -I cout -c -o cout/l.o $lf
# The compiled dispatch agrees with aotc's own (as emit-agree.sh checks
# kernels without alternatives): select() on every database shape and 2000
# random ones, launch_dims() per variant with each function's own geometry
# (-1 for the host launcher's), as `aotc __dispatch-check` prints them.
"$aotc" __dispatch-check rowsum_alt.cu --arch sm90 --db cdb >want 2>>log
cat >agree.c <<'END'
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "_aot_rowsum_kernel1_cuda_sm90.h"
int main(void)
{
	char buf[4096];
	while (fgets(buf, sizeof buf, stdin)) {
		int64_t a[2];
		char *p = buf, *end;
		int v = 0, dims = !strncmp(p, "dims ", 5);
		p += dims ? 5 : 7;
		if (dims) {
			v = (int)strtol(p, &end, 10);
			p = end;
		}
		for (int i = 0; i < 2; i++) {
			a[i] = strtoll(p, &end, 10);
			p = end;
		}
		if (!dims) {
			printf("select %" PRId64 " %" PRId64 " -> %d\n", a[0], a[1], aot_rowsum_kernel1_cuda_sm90_select(a[0], a[1]));
			continue;
		}
		uint32_t g[3], b[3], smem;
		printf("dims %d %" PRId64 " %" PRId64, v, a[0], a[1]);
		if (aot_rowsum_kernel1_cuda_sm90_launch_dims(v, a[0], a[1], g, b, &smem) == 0)
			printf(" -> %u %u %u %u %u %u %u\n", g[0], g[1], g[2], b[0], b[1], b[2], smem);
		else
			printf(" -> -1\n");
	}
	return 0;
}
END
if gcc -std=c99 -Wall -Wextra -Werror -I cout -o agree agree.c cout/_aot_rowsum_kernel1_cuda_sm90.c >>log 2>&1 &&
	./agree <want >got && [ "$(grep -c '^select ' want)" -ge 2000 ] && cmp -s want got &&
	grep -q '^dims [0-9]* 64 64 -> -1$' want && grep -q '^dims [0-9]* 64 64 -> 1 1 1 [0-9]' want; then
	ok "cuda: the compiled dispatch agrees with aotc's on $(grep -c '^select ' want) shapes and every function's launch"
else
	bad "cuda: dispatch with alternatives agrees" "$(diff want got | head -6; tail -3 log)"
fi

# aotc link: sm80 from the same made-up database relabelled
sed 's/"sm90"/"sm80"/; s/cuda_made_up_sm90/cuda_made_up_sm80/' cdb/rowsum_kernel1.cuda_made_up_sm90.json \
	>cdb/rowsum_kernel1.cuda_made_up_sm80.json
if "$aotc" emit rowsum_alt.cu --arch sm80 --db cdb -o c80 >>log 2>&1 && mkdir -p lout &&
	"$aotc" link cout c80 -o lout/aot_rowsum.c >>log 2>&1; then
	try "cuda: aotc link of sm80 and sm90 with alternatives compiles (nvcc, sm_80 and sm_90)" \
		"$nvcc" -std=c++17 -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90 \
		-I . -I lout -I cout -I c80 -c -o lout/l.o lout/aot_rowsum.cu
else
	bad "cuda: link with alternatives" "$(tail -5 log)"
fi

# templates/sgemm.cu's split-K host launcher: its 8 variants (and the
# template's, its lists cut to one value each) compile for sm90
sed -e 's/^AOTC_TUNE(BM, .*/AOTC_TUNE(BM, 64)/; s/^AOTC_TUNE(BN, .*/AOTC_TUNE(BN, 64)/; s/^AOTC_TUNE(BK, .*/AOTC_TUNE(BK, 8)/' \
	-e 's/^AOTC_TUNE(TM, .*/AOTC_TUNE(TM, 4)/; s/^AOTC_TUNE(TN, .*/AOTC_TUNE(TN, 4)/' "$root/templates/sgemm.cu" >sgemm_cut.cu
"$aotc" tune sgemm_cut.cu --arch sm90 --compile-only -j 2 >sk.log 2>&1
st=$?
if [ $st -eq 0 ] && grep -q "^sgemm: 9 of 9 configurations compiled for sm90.*reference compiled; externs: 1 of 1 compiled" sk.log &&
	[ "$("$aotc" configs sgemm_cut.cu | grep -c '^sgemm_splitk<')" -eq 8 ]; then
	ok "cuda: templates/sgemm.cu's split-K host launcher (8 variants) compiles for sm90 with --compile-only"
else
	bad "cuda: sgemm split-K compile-only" "exit $st" "$(tail -6 sk.log)"
fi

# ROCm: the host launcher is CUDA's; the kernels are emitted for gfx90a
sed '/^template <int SPLIT>$/,$d; s/^#include <cuda_runtime.h>$//' rowsum_alt.cu >rowsum_alt_hip.cu
cat >>rowsum_alt_hip.cu <<'END'
void rowsum_ref(float *out, const float *inp, int N, int C)
{
    for (int r = 0; r < N; ++r) {
        double s = 0;
        for (int c = 0; c < C; ++c)
            s += inp[(long)r * C + c];
        out[r] = (float)s;
    }
}
END
"$aotc" tune rowsum_alt.cu --arch gfx90a --dump=configs >/dev/null 2>note.log
if grep -q "note: rowsum_kernel1: host launcher rowsum_twopass is a CUDA routine; not tuned for gfx90a" note.log; then
	ok "rocm: tune leaves the host launcher out for gfx90a, with a note"
else
	bad "rocm: host launcher for gfx90a" "$(tail -3 note.log)"
fi
cp rowsum_alt_hip.cu rowsum_alt.cu
made_up gfx90a rocm
hipcc=$(command -v hipcc || true)
if "$aotc" emit rowsum_alt.cu --arch gfx90a --db cdb -o hout >>log 2>&1 &&
	grep -q "rowsum_kernel2<[0-9]*><<<" hout/_aot_rowsum_kernel1_rocm_gfx90a.hip; then
	ok "rocm: emit --arch gfx90a launches the alternative kernel"
	if [ -n "$hipcc" ]; then
		try "rocm: the launcher compiles (hipcc --offload-arch=gfx90a)" \
			"$hipcc" -std=c++17 --offload-arch=gfx90a -x hip -I . -I hout -c -o hout/l.o hout/_aot_rowsum_kernel1_rocm_gfx90a.hip
	fi
else
	bad "rocm: emit --arch gfx90a" "$(tail -8 log)"
fi
finish
