#!/bin/sh
# Compile speed of files with host code (docs/PERFORMANCE.md, "Compiling
# files with host code"): for each template, a copy with host code added (a
# <cstdio> include and a main(), as sample files have), which NVRTC cannot
# take whole; beside it the template itself, guarded as shipped, through
# NVRTC. `aotc tune --compile-only` of the same shard of variants, cold
# caches, on THREADS threads: NVRTC on the guarded file; the host-code copy
# as aotc now takes it (NVRTC, its host code set aside); nvcc forced, one
# variant a run (AOTC_COMPILE_BATCH=1, as before batching) and in batches.
# Then hipcc on the template, one a run and in batches.
# Usage: bench/compile-batch.sh [AOTC] [THREADS]   (default build/aotc 2)
set -e
root=$(cd "$(dirname "$0")/.." && pwd)
aotc=${1:-$root/build/aotc}
threads=${2:-2}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# run LABEL FILE ARCH SHARD [ENV...]: wall seconds of a cold compile-only
run() {
	label=$1 file=$2 arch=$3 shard=$4
	shift 4
	rm -rf "$tmp/cache"
	start=$(date +%s.%N)
	env AOTC_CACHE_DIR="$tmp/cache" "$@" "$aotc" tune "$file" --arch "$arch" --compile-only \
		--shard "$shard" -j "$threads" --db "$tmp/db" >"$tmp/log" 2>&1 || true
	end=$(date +%s.%N)
	line=$(grep "configurations compiled" "$tmp/log" | head -1)
	n=$(echo "$line" | sed -n 's/^[a-z_]*: \([0-9]*\) of \([0-9]*\) .*/\1 of \2/p')
	printf '  %-34s %7.1f s  (%s variants + reference%s)\n' "$label" "$(echo "$end - $start" | bc)" \
		"${n:-?}" "$(grep -o '[0-9]* compiler runs\{0,1\} of several' "$tmp/log" | sed 's/^/; /')"
}
for t in softmax:1/4 sgemm:1/16; do
	name=${t%%:*} shard=${t#*:}
	cp "$root/templates/$name.cu" "$tmp/$name.cu"
	{ echo '#include <cstdio>'; cat "$root/templates/$name.cu"; printf '%s\n' 'int main() { std::puts("host code"); }'; } \
		>"$tmp/${name}_host.cu"
	echo "$name, shard $shard, sm90, $threads threads:"
	run "NVRTC, the template" "$tmp/$name.cu" sm90 "$shard" AOTC_CUDA_COMPILER=nvrtc
	run "NVRTC, host code set aside" "$tmp/${name}_host.cu" sm90 "$shard"
	run "nvcc, host code, one a run" "$tmp/${name}_host.cu" sm90 "$shard" AOTC_CUDA_COMPILER=nvcc AOTC_COMPILE_BATCH=1
	run "nvcc, host code, batched" "$tmp/${name}_host.cu" sm90 "$shard" AOTC_CUDA_COMPILER=nvcc
done
if command -v hipcc >/dev/null 2>&1; then
	echo "softmax, shard 1/4, gfx90a, $threads threads:"
	run "hipcc, one a run" "$tmp/softmax.cu" gfx90a 1/4 AOTC_COMPILE_BATCH=1
	run "hipcc, batched" "$tmp/softmax.cu" gfx90a 1/4
fi
