#!/bin/sh
# The launcher's environment (docs/cli.md): a program built from emitted
# host files, run with AOTC_RECORD, AOTC_VARIANT and AOTC_LOG.
#  - AOTC_RECORD counts every call exactly: 4 threads at once, a second
#    process adding to the file, two processes at once; the file is written
#    every 2 s while the program runs and at exit; a file that is not a
#    record is left alone; `aotc tune --shapes` takes the file, the database
#    keeps the counts, and report and emit show the weighted figures.
#  - AOTC_VARIANT by index and by name runs that variant; a name the build
#    lacks refuses every launch; AOTC_LOG prints kernel, shape and variant
#    (launcher-env-hostile.sh: malformed values, record files that are no
#    regular files).
#  - With nvcc: the CUDA launcher (sgemm, no GPU needed) refuses a forced
#    variant invalid for the shape with cudaErrorInvalidValue before
#    touching the device, and records like the host one.
# Usage: launcher-env.sh AOTC REPO_ROOT
aotc=$1
root=$2
case $aotc in /*) ;; *) aotc=$(pwd)/$aotc ;; esac
case $root in /*) ;; *) root=$(pwd)/$root ;; esac
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export AOTC_CACHE_DIR="$tmp/cache"
unset AOTC_RECORD AOTC_VARIANT AOTC_LOG

. "$(dirname "$0")/../lib.sh"
check() { # NAME EXPECTED ACTUAL
	if [ "$2" = "$3" ]; then ok "$1"; else bad "$1" "expected: $2" "got:      $3"; fi
}

cd "$tmp" || exit 1
cp "$root/templates/matmul_host.cpp" mm.cpp
if ! "$aotc" emit mm.cpp --arch host --db "$root/tests/codegen" -o out >emit.log 2>&1; then
	bad "aotc emit" "$(cat emit.log)"
	finish
fi
base=_aot_matmul_host_host
# rec THREADS [--pause] M,N,K:CALLS...: each thread makes every call; prints
# each shape's launch status once. --pause: after the first round of calls
# waits 2.5 s, calls each shape's count again (the first call writes),
# says "written" and sleeps 3 s.
cat >rec.cpp <<'END'
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>
#include <chrono>

#include "_aot_matmul_host_host.h"

struct call { int m, n, k, count; };

int main(int argc, char **argv)
{
	int threads = std::atoi(argv[1]);
	bool pause = argc > 2 && !std::strcmp(argv[2], "--pause");
	std::vector<call> calls;
	for (int i = pause ? 3 : 2; i < argc; i++) {
		call c;
		if (std::sscanf(argv[i], "%d,%d,%d:%d", &c.m, &c.n, &c.k, &c.count) != 4)
			return 2;
		calls.push_back(c);
	}
	std::vector<int> status(calls.size());
	auto work = [&](int t) {
		for (size_t i = 0; i < calls.size(); i++) {
			const call &c = calls[i];
			std::vector<float> A((size_t)c.m * c.k, 1), B((size_t)c.k * c.n, 1), C((size_t)c.m * c.n);
			for (int j = 0; j < c.count; j++) {
				int st = aot_matmul_host_host_launch(c.m, c.n, c.k, A.data(), B.data(), C.data());
				if (t == 0 && j == 0)
					status[i] = st;
			}
		}
	};
	std::vector<std::thread> pool;
	for (int t = 0; t < threads; t++)
		pool.emplace_back(work, t);
	for (auto &t : pool)
		t.join();
	for (size_t i = 0; i < calls.size(); i++)
		std::printf("%d,%d,%d: %d\n", calls[i].m, calls[i].n, calls[i].k, status[i]);
	if (pause) {
		std::this_thread::sleep_for(std::chrono::milliseconds(2500));
		work(1);
		std::printf("written\n");
		std::fflush(stdout);
		std::this_thread::sleep_for(std::chrono::seconds(3));
	}
	return 0;
}
END
# The launcher's threads and merges under the sanitizers, where g++ has them.
san="-fsanitize=address,undefined -fno-sanitize-recover=all"
echo 'int main() { return 0; }' >san.cpp
g++ $san san.cpp -o san >/dev/null 2>&1 || san=
if ! g++ -std=c++17 -Wall -Wextra -Werror -Wshadow -O1 $san -I . -I out -pthread -o rec rec.cpp \
	"out/$base.cpp" "out/$base.c" >build.log 2>&1; then
	bad "the test program builds (launcher with -Wall -Wextra -Werror -Wshadow${san:+, sanitizers})" "$(head -30 build.log)"
	finish
fi
ok "the test program builds (launcher with -Wall -Wextra -Werror -Wshadow${san:+, sanitizers})"

# The record as "kernel M N K calls" lines, sorted.
rows() {
	python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["aotc_record"] == 1
for k, rows in d["kernels"].items():
    for r in rows:
        print(k, " ".join(str(v) for v in r["shape"].values()), r["calls"])
' "$1" | sort
}

# ---- AOTC_RECORD ----
AOTC_RECORD=rec.json ./rec 4 32,32,32:10 64,100,32:3 >run1.log 2>&1
check "4 threads: every call counted" "matmul_host 32 32 32 40
matmul_host 64 100 32 12" "$(rows rec.json)"
AOTC_RECORD=rec.json ./rec 1 32,32,32:1 17,5,9:2 >run2.log 2>&1
check "a second process adds to the file" "matmul_host 17 5 9 2
matmul_host 32 32 32 41
matmul_host 64 100 32 12" "$(rows rec.json)"
AOTC_RECORD=rec.json ./rec 2 17,5,9:50 >/dev/null 2>&1 &
p1=$!
AOTC_RECORD=rec.json ./rec 3 17,5,9:50 >/dev/null 2>&1
wait $p1
check "two processes at once: both counted (flock)" "matmul_host 17 5 9 252
matmul_host 32 32 32 41
matmul_host 64 100 32 12" "$(rows rec.json)"
if grep -q '"matmul_host": \[' rec.json && [ "$(sed -n 2p rec.json)" = '  "aotc_record": 1,' ]; then
	ok "the record file: one shape a line, hottest first"
else
	bad "the record file's layout" "$(head -8 rec.json)"
fi
check "no temporary file left" "" "$(ls | grep 'rec.json.tmp')"

# Written while the program runs, not only at exit.
AOTC_RECORD=live.json ./rec 1 --pause 40,40,40:3 >live.log 2>&1 &
p=$!
i=0
while ! grep -q written live.log 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
check "written every 2 s while the program runs (the first call after 2 s writes)" "matmul_host 40 40 40 4" "$(rows live.json 2>&1)"
wait $p
check "and at exit" "matmul_host 40 40 40 6" "$(rows live.json 2>&1)"

printf '[{"M": 1, "N": 2, "K": 3}]\n' >shapes.json
cp shapes.json before.json
AOTC_RECORD=shapes.json ./rec 1 32,32,32:1 >foreign.log 2>&1
if cmp -s shapes.json before.json && grep -q 'not a record file aotc wrote' foreign.log; then
	ok "a file that is not a record is left as it is, with a message"
else
	bad "a foreign file is left alone" "$(cat foreign.log)" "$(cat shapes.json)"
fi
check "the program still runs" "32,32,32: 0" "$(grep '^32' foreign.log)"
AOTC_RECORD=nodir/rec.json ./rec 1 32,32,32:1 >nodir.log 2>&1
if grep -q 'AOTC_RECORD: cannot' nodir.log && grep -q '^32,32,32: 0' nodir.log; then
	ok "an unwritable record file: a message, launches go on"
else
	bad "an unwritable record file" "$(cat nodir.log)"
fi

# ---- AOTC_LOG and AOTC_VARIANT ----
AOTC_LOG=1 ./rec 1 17,5,9:2 >log.log 2>&1
check "AOTC_LOG: one line a launch" "2" "$(grep -c '^aotc: matmul_host host M=17 N=5 K=9 -> [01] matmul_host<' log.log)"
AOTC_LOG=0 ./rec 1 17,5,9:2 >log0.log 2>&1
check "AOTC_LOG=0 prints nothing" "17,5,9: 0" "$(cat log0.log)"
AOTC_LOG=1 AOTC_VARIANT=matmul_host=1 ./rec 1 17,5,9:1 >v1.log 2>&1
if grep -q '^aotc: matmul_host host M=17 N=5 K=9 -> 1 matmul_host<64, 256, 32, 1> (AOTC_VARIANT' v1.log &&
	grep -q '^17,5,9: 0' v1.log; then
	ok "AOTC_VARIANT=matmul_host=1 runs variant 1"
else
	bad "AOTC_VARIANT by index" "$(cat v1.log)"
fi
AOTC_LOG=1 AOTC_VARIANT='other=3, matmul_host = matmul_host<16,256,32,1>' ./rec 1 64,64,64:1 >v0.log 2>&1
if grep -q -- '-> 0 matmul_host<16, 256, 32, 1> (AOTC_VARIANT' v0.log && grep -q '^64,64,64: 0' v0.log; then
	ok "AOTC_VARIANT by name (spaces ignored), other kernels' items skipped"
else
	bad "AOTC_VARIANT by name" "$(cat v0.log)"
fi
AOTC_VARIANT='matmul_host=matmul_host<1, 2, 3, 4>' ./rec 1 64,64,64:1 >vx.log 2>&1
if grep -q "has no variant 'matmul_host<1, 2, 3, 4>'; its variants: 0 matmul_host<16, 256, 32, 1>, 1 matmul_host<64, 256, 32, 1>" vx.log &&
	grep -q '^64,64,64: -1' vx.log; then
	ok "AOTC_VARIANT naming no variant: the list, and every launch refused (-1)"
else
	bad "AOTC_VARIANT naming no variant" "$(cat vx.log)"
fi
AOTC_VARIANT='matmul_host=7' ./rec 1 64,64,64:1 >v7.log 2>&1
if grep -q "has no variant '7'" v7.log && grep -q '^64,64,64: -1' v7.log; then
	ok "AOTC_VARIANT index out of range: refused"
else
	bad "AOTC_VARIANT index out of range" "$(cat v7.log)"
fi
AOTC_VARIANT='nonsense' ./rec 1 64,64,64:1 >vn.log 2>&1
if grep -q "'nonsense': no '='" vn.log && grep -q '^64,64,64: 0' vn.log; then
	ok "a malformed AOTC_VARIANT item naming no kernel of the program: said, launches go on"
else
	bad "a malformed AOTC_VARIANT item" "$(cat vn.log)"
fi

# ---- The record file back into the tuner ----
export AOTC_HOST_FLUSH_BYTES=65536
if "$aotc" tune mm.cpp --arch host --db db --shapes rec.json >tune.log 2>&1; then
	ok "aotc tune --shapes takes the record file"
else
	bad "aotc tune --shapes takes the record file" "$(tail -5 tune.log)"
fi
calls=$(python3 -c '
import json, glob
d = json.load(open(glob.glob("db/matmul_host.host_*.json")[0]))
print(" ".join("%s:%d" % (",".join(map(str, s)), c) for s, c in sorted(zip(d["shapes"], d["shape_calls"]))))
' 2>&1)
check "the database keeps each shape's calls" "17,5,9:252 32,32,32:41 64,100,32:12" "$calls"
"$aotc" report db/matmul_host.host_*.json >report.txt 2>&1
if grep -q "weighted by each shape's recorded calls" report.txt; then
	ok "report shows the weighted figures"
else
	bad "report shows the weighted figures" "$(head -30 report.txt)"
fi
"$aotc" report db/matmul_host.host_*.json --format json >report.json 2>&1
if python3 -c '
import json, sys
d = json.load(open("report.json"))
s = [x for x in d["selectors"] if x["key"] == "tree"][0]
sys.exit(0 if "train_weighted_geomean" in s and "heldout_weighted_geomean" in s else 1)'; then
	ok "the JSON report has the weighted geomeans"
else
	bad "the JSON report has the weighted geomeans" "$(head -c 600 report.json)"
fi
"$aotc" emit mm.cpp --arch host --db db -o out2 >emit2.log 2>&1
if grep -q "Weighted by the shapes' recorded calls" "out2/$base.c"; then
	ok "the emitted header comment states the weighted figures"
else
	bad "the emitted header comment states the weighted figures" "$(head -20 "out2/$base.c")"
fi
printf '{"aotc_record": 1, "kernels": {"sgemm": [{"shape": {"M": 1, "N": 1, "K": 1}, "calls": 1}]}}\n' >other.json
"$aotc" tune mm.cpp --arch host --db db --shapes other.json >other.log 2>&1
st=$?
if [ $st -eq 1 ] && grep -q "other.json: error: record file: no shapes of kernel 'matmul_host' (it records sgemm)" other.log; then
	ok "a record without the kernel: exit 1, says which kernels it has"
else
	bad "a record without the kernel" "exit $st" "$(cat other.log)"
fi

# ---- The CUDA launcher, without a GPU ----
nvcc=${NVCC:-nvcc}
command -v "$nvcc" >/dev/null 2>&1 || nvcc=/usr/local/cuda/bin/nvcc
if [ -x "$nvcc" ] || command -v "$nvcc" >/dev/null 2>&1; then
	cp "$root/templates/sgemm.cu" sgemm.cu
	"$aotc" emit sgemm.cu --arch sm90 --db "$root/templates" -o cu >cuemit.log 2>&1
	cat >cu.cu <<'END'
#include <cstdio>
#include <cuda_runtime.h>
#include "_aot_sgemm_cuda_sm90.h"
int main()
{
	// No buffers: a refused launch never touches them, and without a GPU
	// a launch fails before reading them.
	cudaError_t e = aot_sgemm_cuda_sm90_launch(128, 102, 64, 1.0f, nullptr, nullptr, 0.0f, nullptr, 0);
	std::printf("N=102: %d\n", (int)e);
	e = aot_sgemm_cuda_sm90_launch(128, 128, 64, 1.0f, nullptr, nullptr, 0.0f, nullptr, 0);
	std::printf("N=128: %s\n", e == cudaErrorInvalidValue ? "refused" : "tried");
	return 0;
}
END
	if "$nvcc" -arch=sm_90 -std=c++17 -Xcompiler -Wall,-Wextra,-Wshadow -I . -I cu -o cu_test cu.cu \
		cu/_aot_sgemm_cuda_sm90.cu cu/_aot_sgemm_cuda_sm90.c -lcublas >nvcc.log 2>&1; then
		ok "the CUDA launcher builds with nvcc"
		# a VEC = 4 variant needs N % 4 == 0
		v=$(grep -n '"sgemm<' cu/_aot_sgemm_cuda_sm90.c | grep -n ', 4>"' | head -1 | cut -d: -f1)
		# The dispatch holds only what select() can return: on the committed
		# database cuBLAS alone (it ends every leaf's order), no VEC = 4 one.
		if [ -z "$v" ]; then
			AOTC_LOG=1 AOTC_RECORD=cu.json ./cu_test >cu.log 2>&1
			echo "SKIP CUDA: forced variant (the dispatch has no VEC = 4 variant)"
		else
			AOTC_VARIANT="sgemm=$((v - 1))" AOTC_LOG=1 AOTC_RECORD=cu.json ./cu_test >cu.log 2>&1
			if grep -q '^N=102: 1$' cu.log && grep -q 'is not valid for this shape: not launched' cu.log &&
				grep -q '^N=128: tried$' cu.log; then
				ok "CUDA: a forced variant invalid for the shape is cudaErrorInvalidValue; a valid one is launched"
			else
				bad "CUDA: forced variant" "$(cat cu.log)"
			fi
		fi
		check "CUDA: both shapes recorded" "sgemm 128 102 64 1
sgemm 128 128 64 1" "$(rows cu.json 2>&1)"
	else
		bad "the CUDA launcher builds with nvcc" "$(head -20 nvcc.log)"
	fi
else
	echo "SKIP the CUDA launcher: no nvcc"
fi

finish
