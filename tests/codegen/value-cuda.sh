#!/bin/sh
# The public-code CUDA kernels of tests/frontend that use AOTC_VALUE over a
# tunable and launcher-only shape arguments (matrixmul_sample.cu: NVIDIA's
# matrixMul taking wA, wB, with hA launcher-only; llmc_block_size.cu: an
# llm.c-style kernel taking `int block_size` and N = B * T): `aotc tune
# --compile-only --arch sm90` compiles every configuration without a GPU;
# then, from a made-up database (times from a formula, NOT measured), `aotc
# emit` for sm90 and gfx90a, and the emitted files compile: the dispatch with
# gcc, the CUDA launcher with nvcc, the HIP launcher with hipcc where there is one.
# Usage: value-cuda.sh AOTC REPO_ROOT
aotc=$1
root=$2
case $aotc in /*) ;; *) aotc=$(pwd)/$aotc ;; esac
case $root in /*) ;; *) root=$(pwd)/$root ;; esac
tmp=$(mktemp -d)
trap '[ -n "$KEEP" ] || rm -rf "$tmp"' EXIT
export AOTC_CACHE_DIR="$tmp/cache"
. "$(dirname "$0")/../lib.sh"
nvcc=/usr/local/cuda/bin/nvcc
[ -x "$nvcc" ] || nvcc=$(command -v nvcc || true)
if [ -z "$nvcc" ]; then
	echo "no CUDA toolkit: skipping"
	exit 77
fi
hipcc=$(command -v hipcc || true)
src=$root/tests/frontend

for k in matrixmul_sample:MatrixMulCUDA llmc_block_size:rowmax_kernel; do
	file=${k%%:*}
	kernel=${k##*:}
	"$aotc" tune "$src/$file.cu" --arch sm90 --compile-only -j 2 >"$tmp/log" 2>&1
	st=$?
	n=$("$aotc" configs "$src/$file.cu" 2>/dev/null | grep -c "^$kernel[<[]")
	if [ "$st" -eq 0 ] && grep -q "^$kernel: $n of $n configurations compiled for sm90.*reference compiled" "$tmp/log"; then
		ok "$file.cu: tune --compile-only --arch sm90 compiles all $n configurations and the reference"
	else
		bad "$file.cu: tune --compile-only" "exit $st" "$(tail -8 "$tmp/log")"
	fi

	# A made-up database for sm90 and gfx90a: every configuration on every
	# shape of AOTC_SHAPES, a smaller block winning on smaller shapes.
	mkdir -p "$tmp/db"
	python3 - "$aotc" "$src/$file.cu" "$kernel" "$tmp/db" >"$tmp/log" 2>&1 <<'END'
import itertools, json, re, subprocess, sys
aotc, src, kernel, out = sys.argv[1:]
ir = json.loads(subprocess.run([aotc, "parse", src], capture_output=True, text=True, check=True).stdout)
k = [k for k in ir["kernels"] if k["name"] == kernel][0]
names = [n for n in subprocess.run([aotc, "configs", src], capture_output=True, text=True,
                                   check=True).stdout.split("\n") if n.startswith(kernel + "<") or n.startswith(kernel + "[")]
values = [[int(v) for v in re.findall(r"(?:[<,\[ ]|=)(-?\d+)", n[len(kernel):])] for n in names]
params = [p["name"] for p in k["params"]]
dims = sorted(k["shapes"], key=lambda s: params.index(s["param"]))
shape_args = [s["param"] for s in dims]
shapes = [list(r) for r in itertools.product(*[s["values"] for s in dims])]
for backend, arch in (("cuda", "sm90"), ("rocm", "gfx90a")):
    ms = []
    for c, v in enumerate(values):
        for s, row in enumerate(shapes):
            size = 1
            for x in row:
                size *= x
            t = round(0.002 + size * 1e-9 * (1 + 0.1 * abs(c - (size > 10**7) * (len(values) - 1))), 6)
            ms.append({"config": c, "shape": s, "status": "ok", "time_ms": t, "samples": [t, t, t], "error": 0.0})
    db = {"aotc_db": 1, "kernel": kernel, "source": src, "source_hash": ir["source_hash"],
          "hardware": {"id": backend + "_made_up_" + arch, "backend": backend,
                       "name": "made up by value-cuda.sh, not measured", "arch": arch, "sm_count": 132},
          "method": {"note": "times from a formula, not measurements"},
          "tunables": [t["name"] for t in k["tunables"]], "shape_args": shape_args,
          "configs": [{"name": n, "values": v} for n, v in zip(names, values)],
          "shapes": shapes, "measurements": ms}
    with open("%s/%s.%s_made_up_%s.json" % (out, kernel, backend, arch), "w") as f:
        json.dump(db, f, indent=1)
END
	if [ $? -ne 0 ]; then bad "$file: made-up database" "$(tail -8 "$tmp/log")"; continue; fi
	for arch in sm90 gfx90a; do
		out=$tmp/out-$file-$arch
		base=_aot_${kernel}_$([ $arch = sm90 ] && echo cuda_sm90 || echo rocm_gfx90a)
		if ! "$aotc" emit "$src/$file.cu" --arch $arch --db "$tmp/db" -o "$out" >"$tmp/log" 2>&1; then
			bad "$file: emit --arch $arch" "$(tail -8 "$tmp/log")"
			continue
		fi
		ok "$file: emit --arch $arch"
		try "$file: $base.c compiles (gcc -std=c99 -Werror)" \
			gcc -std=c99 -Wall -Wextra -Werror -pedantic -O2 -c -o "$out/d.o" "$out/$base.c"
		if [ $arch = sm90 ]; then
			try "$file: $base.cu compiles (nvcc -arch=sm_90)" \
				"$nvcc" -std=c++17 -arch=sm_90 -I "$src" -I "$out" -c -o "$out/l.o" "$out/$base.cu"
		elif [ -n "$hipcc" ]; then
			try "$file: $base.hip compiles (hipcc --offload-arch=gfx90a)" \
				"$hipcc" -std=c++17 --offload-arch=gfx90a -x hip -I "$src" -I "$out" -c -o "$out/l.o" "$out/$base.hip"
		fi
	done
done
finish
