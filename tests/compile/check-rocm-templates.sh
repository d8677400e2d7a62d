#!/bin/sh
# Meson test: the shipped CUDA templates compile for AMD GPUs. `aotc tune
# --compile-only --arch gfx90a` builds every variant of templates/sgemm.cu and
# templates/softmax.cu (and their references) with hipcc into AMDGPU code
# objects, without a GPU; sgemm's cuBLAS routine (AOTC_EXTERN) is a CUDA
# routine and is left out with a note. gfx942: Debian's hipcc 5.2 does not
# know it, and aotc must say so once, before compiling anything (exit 3);
# with a hipcc that knows it (AOTC_HIPCC), the templates must compile for it
# too. Exit 77 (skip) when there is no hipcc.
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
status=0
ok() { echo "ok   $1"; }
bad() { echo "FAIL $1"; [ -z "${2:-}" ] || printf '%s\n' "$2" | sed 's/^/     /'; status=1; }

# compile ARCH TEMPLATE COUNT: every variant and the reference compile.
compile() {
	log="$tmp/$1-$2.log"
	if "$aotc" tune "$root/templates/$2.cu" --arch "$1" --compile-only --db "$tmp/db" >"$log" 2>&1 &&
		grep -q "^$2: $3 of $3 configurations compiled for $1 with hipcc .*; reference compiled$" "$log"; then
		ok "$1: all $3 variants of $2 and its reference compile"
	else
		bad "$1: $2 with --compile-only" "$(tail -8 "$log")"
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

compile gfx90a softmax 81
compile gfx90a sgemm 340
grep -q "note: sgemm: AOTC_EXTERN(sgemm_cublas) is a CUDA routine; not tuned for gfx90a" "$tmp/gfx90a-sgemm.log" &&
	! grep -q "sgemm_cublas: compile_error" "$tmp/gfx90a-sgemm.log" &&
	ok "gfx90a: sgemm's cuBLAS routine is left out with a note" ||
	bad "gfx90a: the cuBLAS routine" "$(grep cublas "$tmp/gfx90a-sgemm.log")"
n=$(amdgpu_objects)
[ "$n" -eq 423 ] && ok "gfx90a: the cache holds 423 AMDGPU code objects (81 + 340 + 2 references)" ||
	bad "gfx90a: $n AMDGPU code objects in the cache, not 423"

# gfx942: compiled where hipcc knows it, refused once where it does not.
echo '__global__ void k() {}' >"$tmp/probe.hip"
if "${AOTC_HIPCC:-hipcc}" --genco --offload-arch=gfx942 "$tmp/probe.hip" -o "$tmp/probe.co" >/dev/null 2>&1; then
	compile gfx942 softmax 81
	compile gfx942 sgemm 340
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
exit $status
