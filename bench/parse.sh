#!/bin/sh
# Wall time and peak memory of `aotc parse` on the shipped templates, with the
# real CUDA headers and with the embedded shim. Usage: bench/parse.sh [AOTC]
set -eu
cd "$(dirname "$0")/.."
aotc=${1:-build/aotc}
command -v hyperfine >/dev/null || { echo "bench/parse.sh needs hyperfine (apt-get install hyperfine)"; exit 1; }
for t in templates/sgemm.cu templates/softmax.cu templates/matmul_host.cpp; do
	hyperfine -N --warmup 2 --runs 20 --export-markdown /dev/stdout \
		"$aotc parse $t" "env AOTC_FRONTEND=shim $aotc parse $t" 2>/dev/null | grep -v '^|:\|^| Command'
	for mode in real shim; do
		env=""
		[ $mode = shim ] && env="AOTC_FRONTEND=shim"
		kb=$(env $env /usr/bin/time -f %M "$aotc" parse "$t" 2>&1 >/dev/null | tail -1)
		echo "peak RSS ($mode headers) $t: $kb KiB"
	done
done
