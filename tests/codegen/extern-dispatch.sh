#!/bin/sh
# AOTC_EXTERN from tuning to the launcher, on the CPU (docs/annotations.md):
# extern_spin.cpp's routine (memcpy after a fixed spin) is slower than the
# variants on small copies and faster on large ones. Tuned for real here,
# the database must say so; the emitted dispatch then calls the routine on
# large sizes (between and beyond the tuned ones too) and a variant on small
# ones, every result right; AOTC_VARIANT forces the routine on any size
# (it is valid everywhere) and AOTC_LOG names it; the header says what to
# link with. With nvcc: a CUDA launcher with a cuBLAS routine compiles and
# links (-lcublas), from a database made up for the test.
# Usage: extern-dispatch.sh AOTC REPO_ROOT
aotc=$1
root=$2
case $aotc in /*) ;; *) aotc=$(pwd)/$aotc ;; esac
case $root in /*) ;; *) root=$(pwd)/$root ;; esac
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export AOTC_CACHE_DIR="$tmp/cache" AOTC_HOST_FLUSH_BYTES=65536
unset AOTC_RECORD AOTC_VARIANT AOTC_LOG
. "$(dirname "$0")/../lib.sh"
cd "$tmp" || exit 1
cp "$root/tests/codegen/extern_spin.cpp" spin.cpp

if "$aotc" tune spin.cpp --arch host --db db >tune.log 2>&1; then ok "tune: exit 0"
else bad "tune" "$(tail -8 tune.log)"; finish; fi
# The per-shape winners, measured: the routine on the three large shapes,
# a variant on the three small ones.
winners=$(python3 -c '
import glob, json
db = json.load(open(glob.glob("db/spin.host_*.json")[0]))
best = {}
for m in db["measurements"]:
    if m["status"] == "ok" and (m["shape"] not in best or m["time_ms"] < best[m["shape"]][0]):
        best[m["shape"]] = (m["time_ms"], db["configs"][m["config"]]["name"])
print(" ".join("%d:%s" % (db["shapes"][s][0], "extern" if best[s][1] == "spin_memcpy" else "variant")
               for s in sorted(best)))
')
want="512:variant 1024:variant 2048:variant 262144:extern 524288:extern 1048576:extern"
if [ "$winners" = "$want" ]; then ok "tune: the routine measured, fastest on the large shapes only"
else bad "tune: per-shape winners" "expected: $want" "got:      $winners" "$(cat tune.log)"; fi

if "$aotc" emit spin.cpp --arch host --db db -o out >emit.log 2>&1; then ok "emit: exit 0"
else bad "emit" "$(cat emit.log)"; finish; fi
grep -q '"spin_memcpy",' out/_aot_spin_host.c && ok "dispatch: the routine is a variant by its name" ||
	bad "dispatch: no spin_memcpy in the names" "$(grep -A4 aot_names out/_aot_spin_host.c)"
grep -q '^ \* Link with: -lm (the kernel file' out/_aot_spin_host.h &&
	ok "header: the routine's libraries to link with" || bad "header: no Link with line" "$(head -12 out/_aot_spin_host.h)"
grep -q '^		spin_memcpy(n, x, y);$' out/_aot_spin_host.cpp && ok "launcher: calls the routine" ||
	bad "launcher: no call of spin_memcpy" "$(grep -n -B2 -A12 'switch' out/_aot_spin_host.cpp | head -30)"

cat >main.cpp <<'END'
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "_aot_spin_host.h"

/* Copies n floats through the launcher for each n given; prints n and
 * "ok", "wrong" or the launcher's status. */
int main(int argc, char **argv)
{
	for (int a = 1; a < argc; a++) {
		int n = std::atoi(argv[a]);
		std::vector<float> x(n), y(n, -1.0f);
		for (int i = 0; i < n; i++)
			x[i] = (float)(i % 1000) * 0.5f;
		int st = aot_spin_host_launch(n, x.data(), y.data());
		bool same = true;
		for (int i = 0; i < n && st == 0; i++)
			same &= x[i] == y[i];
		if (st)
			std::printf("%d status %d\n", n, st);
		else
			std::printf("%d %s\n", n, same ? "ok" : "wrong");
	}
	return 0;
}
END
if cc -std=c99 -O2 -Wall -Werror -c out/_aot_spin_host.c -o dispatch.o >build.log 2>&1 &&
	c++ -std=c++17 -O2 -Wall -Werror -I out -I "$root/runtime/include" -I . -pthread main.cpp \
		out/_aot_spin_host.cpp dispatch.o -lm -o prog >>build.log 2>&1; then
	ok "build: the program from the emitted files, -lm"
else
	bad "build" "$(cat build.log)"
	finish
fi

# Tuned sizes, sizes between them and beyond the largest.
sizes="512 1024 2048 3000 262144 300000 524288 1048576 4000000"
AOTC_LOG=1 ./prog $sizes >run.out 2>run.log
res=$(tr '\n' ' ' <run.out)
want="512 ok 1024 ok 2048 ok 3000 ok 262144 ok 300000 ok 524288 ok 1048576 ok 4000000 ok "
if [ "$res" = "$want" ]; then ok "run: every copy right"; else bad "run: results" "$res"; fi
chosen=$(sed -n 's/^aotc: spin host n=\([0-9]*\) -> [0-9]* \(.*\)$/\1:\2/p' run.log |
	sed 's/:spin<[0-9]*>$/:variant/; s/:spin_memcpy$/:extern/' | tr '\n' ' ')
want="512:variant 1024:variant 2048:variant 3000:variant 262144:extern 300000:extern 524288:extern 1048576:extern 4000000:extern "
if [ "$chosen" = "$want" ]; then ok "dispatch: the routine where it is fastest, a variant elsewhere"
else bad "dispatch: choices" "expected: $want" "got:      $chosen" "$(cat run.log)"; fi

# Forced: valid on every size, odd ones too (spin<2> is not).
AOTC_LOG=1 AOTC_VARIANT=spin=spin_memcpy ./prog 7 512 >run.out 2>run.log
if [ "$(tr '\n' ' ' <run.out)" = "7 ok 512 ok " ] &&
	grep -q '^aotc: spin host n=512 -> [0-9]* spin_memcpy (AOTC_VARIANT)$' run.log; then
	ok "AOTC_VARIANT: the routine forced on any size, logged"
else
	bad "AOTC_VARIANT=spin=spin_memcpy" "$(cat run.out run.log)"
fi
# and the other way: a variant by index where the routine would run
v=$(grep '^	"spin<' out/_aot_spin_host.c | head -1 | sed 's/^	"\(.*\)",$/\1/')
i=$(grep '^	"spin' out/_aot_spin_host.c | grep -n -F "\"$v\"" | cut -d: -f1)
AOTC_LOG=1 AOTC_VARIANT="spin=$((i - 1))" ./prog 1048576 >run.out 2>run.log
if [ "$(cat run.out)" = "1048576 ok" ] &&
	grep -q -F "aotc: spin host n=1048576 -> $((i - 1)) $v (AOTC_VARIANT)" run.log; then
	ok "AOTC_VARIANT: a variant by index where the routine would run"
else
	bad "AOTC_VARIANT=spin=$((i - 1))" "$(cat run.out run.log)"
fi

# Deterministic: the same database emits the same bytes.
"$aotc" emit spin.cpp --arch host --db db -o out2 >/dev/null 2>&1
if cmp -s out/_aot_spin_host.c out2/_aot_spin_host.c && cmp -s out/_aot_spin_host.cpp out2/_aot_spin_host.cpp; then
	ok "emit: byte-identical again"
else
	bad "emit: not deterministic"
fi

# --- CUDA: a launcher calling cuBLAS compiles and links ---------------------
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
if [ ! -x "$nvcc" ]; then
	echo "no nvcc: CUDA part skipped"
	finish
fi
cp "$root/tests/tuner/extern_cublas.cu" saxpy.cu
"$aotc" parse saxpy.cu >ir.json 2>parse.log || { bad "parse saxpy.cu" "$(cat parse.log)"; finish; }
# A database made up here (no GPU): the routine fastest on the largest shape.
python3 - <<'END'
import json
ir = json.load(open("ir.json"))
configs = [{"name": "saxpy<%d, %d>" % (bs, per), "values": [bs, per]}
           for bs in (128, 256) for per in (1, 2, 4) if bs * per <= 512]
configs.append({"name": "saxpy_cublas", "extern": True, "values": []})
shapes = [[4096], [1 << 20], [1 << 24]]
ms = []
for c in range(len(configs)):
    for s in range(3):
        t = (0.004 + 0.001 * c) * (1 + 100 * s) if c < len(configs) - 1 else [0.05, 0.5, 0.3][s]
        ms.append({"config": c, "shape": s, "status": "ok", "time_ms": t, "samples": [t] * 3, "error": 0})
db = {"aotc_db": 1, "kernel": "saxpy", "source": "saxpy.cu", "source_hash": ir["source_hash"],
      "hardware": {"id": "made up for tests/codegen/extern-dispatch.sh", "arch": "sm90", "sm_count": 132},
      "method": {"note": "not measured: made up for a compile test"},
      "tunables": ["BS", "PER"], "shape_args": ["n"], "configs": configs, "shapes": shapes,
      "measurements": ms}
import os
os.makedirs("cdb", exist_ok=True)
json.dump(db, open("cdb/saxpy.cuda_test.json", "w"))
END
if "$aotc" emit saxpy.cu --arch sm90 --db cdb -o cout >cemit.log 2>&1; then ok "CUDA emit from the made-up database"
else bad "CUDA emit" "$(cat cemit.log)"; finish; fi
grep -q '^		return saxpy_cublas(n, a, x, y, aot_stream);$' cout/_aot_saxpy_cuda_sm90.cu &&
	ok "CUDA launcher: returns the routine's status" ||
	bad "CUDA launcher: no call of saxpy_cublas" "$(grep -n -A10 'switch' cout/_aot_saxpy_cuda_sm90.cu | head -20)"
grep -q '^ \* Link with: -lcublas' cout/_aot_saxpy_cuda_sm90.h && ok "CUDA header: -lcublas" ||
	bad "CUDA header" "$(head -12 cout/_aot_saxpy_cuda_sm90.h)"
cat >cmain.cu <<'END'
#include <cstdio>
#include "_aot_saxpy_cuda_sm90.h"
int main()
{
	/* No GPU needed to link; the dispatch's choice is plain C. */
	std::printf("%d %d\n", aot_saxpy_cuda_sm90_select(4096), aot_saxpy_cuda_sm90_select(1 << 24));
	return 0;
}
END
if cc -std=c99 -Wall -Werror -c cout/_aot_saxpy_cuda_sm90.c -I cout -o cdispatch.o >cbuild.log 2>&1 &&
	"$nvcc" -std=c++17 -arch=sm_90 -I cout -I . cmain.cu cout/_aot_saxpy_cuda_sm90.cu cdispatch.o \
		-lcublas -o cprog >>cbuild.log 2>&1; then
	ok "CUDA: the launcher builds and links with -lcublas"
	nv=$(grep -c '^	"saxpy' cout/_aot_saxpy_cuda_sm90.c)
	sel=$(./cprog 2>/dev/null)
	last=$(grep '^	"saxpy' cout/_aot_saxpy_cuda_sm90.c | grep -n saxpy_cublas | cut -d: -f1)
	if [ -n "$last" ] && [ "${sel#* }" = "$((last - 1))" ] && [ "${sel% *}" != "$((last - 1))" ]; then
		ok "CUDA dispatch: the routine on the large shape only ($nv variants)"
	else
		bad "CUDA dispatch" "select: '$sel', routine index $((last - 1))"
	fi
else
	bad "CUDA build" "$(tail -20 cbuild.log)"
fi
finish
