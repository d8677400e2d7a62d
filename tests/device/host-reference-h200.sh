#!/bin/bash
# On the GPU machine: a CUDA kernel tuned against a plain host function
# (AOTC_REFERENCE naming one; docs/annotations.md, "A host reference"), the
# run path that no test without an NVIDIA GPU reaches (hip-stand-in.sh runs
# the worker's side of it through the HIP stand-in):
#  - the file builds and runs as its author's own nvcc build does (its main()
#    checks matmul<16, 2> against matmul_host);
#  - aotc tune tests/tuner/host_reference.cu --arch sm90: exit 0, every
#    configuration ok on every shape (the worker called matmul_host on host
#    copies of the inputs and compared each variant's device output with it);
#  - the same file with matmul_host wrong in one element: every variant
#    wrong, exit 4 (the host function is the truth, not the first variant);
#  - the same with matmul_host writing past C: each shape's reference fails
#    with "the host reference writes outside its buffers".
# Run from the repository root with build/ carried:
#   tests/device/host-reference-h200.sh    (output: $OUT/host-reference-h200.txt)
set -uo pipefail
cd "$(dirname "$0")/../.."
. tools/device-libs.sh >/dev/null
out=${OUT:-out}
mkdir -p "$out"
log=$out/host-reference-h200.txt
exec > >(tee "$log") 2>&1
tmp=$(mktemp -d)
export AOTC_CACHE_DIR=$tmp/cache
src=tests/tuner/host_reference.cu
. tests/lib.sh

echo "== the user's own build"
nvcc -std=c++17 -arch=sm_90 -I runtime/include "$src" -o "$tmp/prog" && "$tmp/prog" &&
	ok "nvcc build and main()" || bad "nvcc build and main()"

# Every measurement of database $1 has status $2.
all_status() {
	python3 - "$1" "$2" <<'END'
import json, sys
db = json.load(open(sys.argv[1]))
names = [c["name"] for c in db["configs"]]
seen = {}
for m in db["measurements"]:
    seen.setdefault(names[m["config"]], set()).add(m["status"])
print(seen)
sys.exit(0 if seen and all(s == {sys.argv[2]} for s in seen.values()) and len(seen) == len(names) else 1)
END
}

echo "== tune against the host reference"
build/aotc tune "$src" --arch sm90 --db "$tmp/db" -j 8
st=$?
db=$(ls "$tmp"/db/matmul.*.json 2>/dev/null | head -1)
[ $st = 0 ] && [ -n "$db" ] && all_status "$db" ok && ok "tune: exit 0, every configuration ok" ||
	bad "tune: exit $st"

echo "== a wrong host reference"
sed 's/C\[i \* N + j\] += acc;/C[i * N + j] += acc + (i == 3 \&\& j == 5);/' "$src" >"$tmp/wrong.cu"
grep -q 'i == 3 && j == 5' "$tmp/wrong.cu" || bad "sed did not break the reference"
build/aotc tune "$tmp/wrong.cu" --arch sm90 --db "$tmp/db-wrong" -j 8
st=$?
db=$(ls "$tmp"/db-wrong/matmul.*.json 2>/dev/null | head -1)
[ $st = 4 ] && [ -n "$db" ] && all_status "$db" wrong && ok "wrong reference: every variant wrong, exit 4" ||
	bad "wrong reference: exit $st"

echo "== a host reference writing past C"
sed 's/C\[i \* N + j\] += acc;/C[i * N + j] += acc; C[M * N] = 0;/' "$src" >"$tmp/past.cu"
build/aotc tune "$tmp/past.cu" --arch sm90 --db "$tmp/db-past" -j 8 >"$tmp/past.log" 2>&1
cat "$tmp/past.log"
grep -q "the reference failed (error: the host reference writes outside its buffers: C: written past its end)" "$tmp/past.log" &&
	ok "a reference writing past C loses its shapes, with a warning" || bad "reference writing past C"

rm -rf "$tmp"
finish
