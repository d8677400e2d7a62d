#!/bin/sh
# Meson test: the shipped CUDA templates compile for AMD GPUs. `aotc tune
# --compile-only --arch gfx90a` builds the variants of templates/softmax.cu
# and templates/sgemm.cu (and their references) with hipcc into AMDGPU code
# objects, without a GPU; sgemm's cuBLAS routine (AOTC_EXTERN) is a CUDA
# routine and is left out with a note. gfx942: Debian's hipcc 5.2 does not
# know it, and aotc must say so once, before compiling anything (exit 3);
# with a hipcc that knows it (AOTC_HIPCC), the templates must compile for it
# too. Exit 77 (skip) when there is no hipcc.
#
# hipcc takes about 0.4 s a variant on 2 cores in batches, so CI compiles a
# fixed sample of each template, the same every day (the shard hash spreads
# it over the whole space): softmax --shard 1/4 (of 81), sgemm --shard 1/16
# (of 340), about 40 variants. Every variant, by hand (about 3 minutes):
#   AOTC_TEST_ROCM_FULL=1 meson test -C build templates-rocm
# (AOTC_TEST_SGEMM_SHARD and AOTC_TEST_SOFTMAX_SHARD pick other samples).
# (docs/PERFORMANCE.md has the figures of a whole run).
#
# usage: check-rocm-templates.sh AOTC REPO_ROOT
set -eu
aotc=${1:?usage: check-rocm-templates.sh AOTC REPO_ROOT}
root=${2:?usage: check-rocm-templates.sh AOTC REPO_ROOT}
command -v "${AOTC_HIPCC:-hipcc}" >/dev/null 2>&1 || { echo "no hipcc: skipping"; exit 77; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/aotc-rocm-templates.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' HUP INT TERM
export AOTC_CACHE_DIR="$tmp/cache"
. "$(dirname "$0")/../lib.sh"

if [ "${AOTC_TEST_ROCM_FULL:-0}" = 1 ]; then
	softmax_shard=1/1 sgemm_shard=1/1
else
	softmax_shard=${AOTC_TEST_SOFTMAX_SHARD:-1/4} sgemm_shard=${AOTC_TEST_SGEMM_SHARD:-1/16}
fi

# compile ARCH TEMPLATE [SHARD]: every variant (of the shard) and the
# reference compile; adds the number of code objects to objects.
objects=0
compile() {
	log="$tmp/$1-$2.log"
	"$aotc" tune "$root/templates/$2.cu" --arch "$1" --compile-only --db "$tmp/db" \
		${3:+--shard "$3"} >"$log" 2>&1 || true
	line=$(grep "^$2: [0-9]* of [0-9]* configurations compiled for $1 with hipcc .*; reference compiled" "$log" || true)
	n=$(echo "$line" | sed -n 's/^[a-z]*: \([0-9]*\) of \([0-9]*\) .*/\1 \2/p')
	if [ -n "$n" ] && [ "${n% *}" = "${n#* }" ] && [ "${n% *}" -gt 0 ]; then
		ok "$1: all ${n% *} variants of $2${3:+ (shard $3)} and its reference compile"
		objects=$((objects + ${n% *} + 1))
	else
		bad "$1: $2 with --compile-only${3:+ --shard $3}" "$(tail -8 "$log")"
	fi
}

# AMDGPU code objects in the compile cache: ELF files of machine 224 (EM_AMDGPU).
amdgpu_objects() {
	n=0
	for f in "$AOTC_CACHE_DIR"/*.bin; do
		[ -e "$f" ] || continue
		[ "$(od -An -tu2 -j18 -N2 "$f" | tr -d ' ')" = 224 ] && n=$((n + 1))
	done
	echo $n
}

compile gfx90a softmax "$softmax_shard"
compile gfx90a sgemm "$sgemm_shard"
grep -q "note: sgemm: AOTC_EXTERN(sgemm_cublas) is a CUDA routine; not tuned for gfx90a" "$tmp/gfx90a-sgemm.log" &&
	! grep -q "sgemm_cublas: compile_error" "$tmp/gfx90a-sgemm.log" &&
	ok "gfx90a: sgemm's cuBLAS routine is left out with a note" ||
	bad "gfx90a: the cuBLAS routine" "$(grep cublas "$tmp/gfx90a-sgemm.log")"
n=$(amdgpu_objects)
[ "$n" -eq "$objects" ] && ok "gfx90a: the cache holds $n AMDGPU code objects, one per variant and reference" ||
	bad "gfx90a: $n AMDGPU code objects in the cache, not $objects"

# Emission for gfx90a from the H200 databases relabelled as ROCm ones (their
# times are the H200's: made for this test, not measured on an AMD GPU):
# the HIP launchers of both templates build with hipcc and link with the C
# dispatch; sgemm's header names no cuBLAS. The relabelled sgemm database
# with its cuBLAS routine still in it is refused: tune never puts a CUDA
# routine in a ROCm database.
relabel() { # TEMPLATE KEEP_EXTERNS OUT_DIR
	mkdir -p "$3"
	python3 - "$root/templates/$1.cuda_NVIDIA_H200_13.0.json" "$2" "$3/$1.rocm_made_up_gfx90a.json" <<'PY'
import json, sys
db = json.load(open(sys.argv[1]))
db["hardware"] = {"id": "rocm_made_up_gfx90a", "backend": "rocm", "arch": "gfx90a",
                  "name": "H200 times relabelled for check-rocm-templates.sh, not measured"}
if sys.argv[2] == "no":
    keep = [i for i, c in enumerate(db["configs"]) if not c.get("extern")]
    index = {old: new for new, old in enumerate(keep)}
    db["configs"] = [db["configs"][i] for i in keep]
    db["measurements"] = [dict(m, config=index[m["config"]]) for m in db["measurements"]
                          if m["config"] in index]
json.dump(db, open(sys.argv[3], "w"))
PY
}
for t in softmax sgemm; do
	relabel $t no "$tmp/rdb"
	if "$aotc" emit "$root/templates/$t.cu" --arch gfx90a --db "$tmp/rdb" -o "$tmp/emit" >"$tmp/log" 2>&1 &&
		"${AOTC_HIPCC:-hipcc}" --offload-arch=gfx90a -fPIC -I"$root/templates" -I"$tmp/emit" \
			-c "$tmp/emit/_aot_${t}_rocm_gfx90a.hip" -o "$tmp/$t.o" >>"$tmp/log" 2>&1 &&
		cc -std=c99 -Wall -Wextra -Werror -fPIC -c "$tmp/emit/_aot_${t}_rocm_gfx90a.c" -o "$tmp/$t.c.o" >>"$tmp/log" 2>&1 &&
		"${AOTC_HIPCC:-hipcc}" --offload-arch=gfx90a -shared "$tmp/$t.o" "$tmp/$t.c.o" -o "$tmp/lib$t.so" >>"$tmp/log" 2>&1; then
		ok "gfx90a: $t's emitted HIP launcher builds with hipcc and links with its dispatch"
	else
		bad "gfx90a: $t's emission and build" "$(tail -8 "$tmp/log")"
	fi
done
grep -q "Link with" "$tmp/emit/_aot_sgemm_rocm_gfx90a.h" || grep -q cublas "$tmp/emit/_aot_sgemm_rocm_gfx90a.json" &&
	bad "gfx90a: sgemm's files name cuBLAS" "$(grep -n "Link with\|cublas" "$tmp/emit/_aot_sgemm_rocm_gfx90a."*)" ||
	ok "gfx90a: sgemm's header and manifest link no cuBLAS"
relabel sgemm yes "$tmp/rdb-cublas"
st=0
"$aotc" emit "$root/templates/sgemm.cu" --arch gfx90a --db "$tmp/rdb-cublas" -o "$tmp/emit-cublas" >"$tmp/log" 2>&1 || st=$?
[ $st = 3 ] && grep -q "routine 'sgemm_cublas' is a CUDA routine, not built for gfx90a" "$tmp/log" &&
	[ ! -e "$tmp/emit-cublas/_aot_sgemm_rocm_gfx90a.c" ] &&
	ok "gfx90a: a database holding the cuBLAS routine is refused (exit 3), nothing written" ||
	bad "gfx90a: a database holding the cuBLAS routine: exit $st" "$(cat "$tmp/log")"

# gfx942: compiled where hipcc knows it, refused once where it does not.
echo '__global__ void k() {}' >"$tmp/probe.hip"
if "${AOTC_HIPCC:-hipcc}" --genco --offload-arch=gfx942 "$tmp/probe.hip" -o "$tmp/probe.co" >/dev/null 2>&1; then
	compile gfx942 softmax "$softmax_shard"
	compile gfx942 sgemm "$sgemm_shard"
else
	st=0
	"$aotc" tune "$root/templates/softmax.cu" --arch gfx942 --compile-only --db "$tmp/db" >"$tmp/log" 2>&1 || st=$?
	if [ $st = 3 ] && grep -q "^aotc: error: hipcc .* cannot build code for gfx942: .*gfx942" "$tmp/log" &&
		[ "$(wc -l <"$tmp/log")" -le 2 ] && ! grep -q compile_error "$tmp/log"; then
		ok "gfx942: this hipcc does not know it: one clear error, exit 3, nothing compiled"
	else
		bad "gfx942 with a hipcc that does not know it: exit $st" "$(head -5 "$tmp/log")"
	fi
fi
finish
