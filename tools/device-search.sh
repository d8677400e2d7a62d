#!/bin/bash
# Issue 11's H200 measurement: one large space (templates/warptile_sgemm.cu)
# tuned exhaustively, then with the model-guided search given a quarter of
# the exhaustive run's wall time, then with the model search left to
# converge. Each run has its own database and compile cache, so each pays
# its own compiles. Run from the repository root on the GPU machine with a
# Debian build of aotc (build/ carried); writes to $OUT.
#
#   tools/device-search.sh [KERNEL_FILE]   (default templates/warptile_sgemm.cu)
set -u
src=${1:-templates/warptile_sgemm.cu}
out=${OUT:-device-out}
mkdir -p "$out"
exec > >(tee -a "$out/search-log.txt") 2>&1
. tools/device-libs.sh
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
build/aotc --version || exit 1
build/aotc configs "$src" | tail -1

run() { # NAME ARGS...: one tune, its own database and cache; prints its wall time
	name=$1
	shift
	rm -rf "/tmp/db-$name" "/tmp/cache-$name"
	start=$(date +%s.%N)
	AOTC_CACHE_DIR="/tmp/cache-$name" build/aotc tune "$src" --arch sm90 --db "/tmp/db-$name" -j 16 "$@"
	end=$(date +%s.%N)
	wall=$(python3 -c "print(round($end - $start, 1))")
	echo "== $name: wall $wall s"
	mkdir -p "$out/$name"
	cp /tmp/db-"$name"/*.json "$out/$name/"
}

echo "== exhaustive"
run exhaustive --search exhaustive
budget=$(python3 -c "print(int($wall / 4))")
echo "== model, --budget ${budget}s (a quarter of the exhaustive run)"
run model25 --search model --budget "${budget}s"
echo "== model, to convergence"
run model --search model
