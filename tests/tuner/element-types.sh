#!/bin/sh
# Element types on the host backend, tuned for real (docs/annotations.md,
# "How aotc reads the source"): buffers of float4 (CUDA's vector_types.h),
# _Float16, int8_t, uint16_t, int64_t and double, each behind a typedef or
# `using`, resolve to their kind and lanes (the IR keeps the type underneath)
# and are filled and compared per component with their type's tolerance:
# a wrong .w of float4 alone, one int8 element off by one, halves 2.5 % off
# are `wrong`; halves 0.2 % off (tolerance 1 %) are `ok`.
# Usage: element-types.sh AOTC REPO_ROOT
aotc=$1
root=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export AOTC_CACHE_DIR="$tmp/cache" AOTC_HOST_FLUSH_BYTES=65536
src=$root/tests/tuner/element_types_host.cpp
cuda_inc=/usr/local/cuda/include
[ -f "$cuda_inc/vector_types.h" ] || { echo "no CUDA toolkit headers: skipping"; exit 77; }
. "$(dirname "$0")/../lib.sh"
same() { if [ "$2" = "$3" ]; then ok "$1"; else bad "$1" "got  '$2'" "want '$3'"; fi; }

got=$("$aotc" parse -I "$cuda_inc" "$src" 2>"$tmp/log" | python3 -c '
import json, sys
m = json.load(sys.stdin)
print(" ".join("%s=%s/%d/%s" % (p["name"], p["dtype"], p["lanes"], p.get("elem_canon"))
               for p in m["kernels"][0]["params"]))')
same "parse: kinds, lanes and the types underneath" "$got" \
	"v=f32/4/float4 h=f16/1/_Float16 s=i8/1/signed char u=u16/1/unsigned short w=i64/1/long r=f64/1/double n=i32/1/None"

if "$aotc" tune "$src" --arch host -I "$cuda_inc" --db "$tmp/db" >"$tmp/log" 2>&1; then
	ok "tune on this CPU"
else
	bad "tune on this CPU" "$(tail -8 "$tmp/log")"
fi
got=$(python3 - "$tmp"/db/scale_all.*.json <<'PY'
import json, sys
db = json.load(open(sys.argv[1]))
names = [c["name"] for c in db["configs"]]
st = {}
for m in db["measurements"]:
    broken = names[m["config"]].split(",")[1].strip(" >")
    st.setdefault(broken, set()).add(m["status"])
print(" ".join("%s:%s" % (b, "/".join(sorted(st[b]))) for b in sorted(st)))
PY
)
same "per component, per type's tolerance" "$got" "0:ok 1:wrong 2:wrong 3:wrong 4:ok"

finish
