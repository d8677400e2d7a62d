#!/bin/sh
# The output directory is self-contained (docs/spec.md §8): emitted files moved away
# from the repository, beside a moved copy of the kernel, build with only
# `-I <kernel dir> -I <output dir>` (no installed aotc.h: emit copies it);
# files emitted from different working directories are byte-identical;
# --include-as overrides the kernel's #include and is validated; an aotc.h
# in the output directory that aotc did not write is never overwritten.
# Usage: emit-standalone.sh AOTC REPO_ROOT   (env NVCC overrides the compiler)
# Exits 77 (skipped) when everything else passed but nvcc is missing.
aotc=$1
root=$2
# Absolute paths: the script changes directory.
case $aotc in /*) ;; *) aotc=$(pwd)/$aotc ;; esac
case $root in /*) ;; *) root=$(pwd)/$root ;; esac
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

. "$(dirname "$0")/../lib.sh"

# try NAME CMD...: CMD succeeds; its output is shown when it does not.
try() {
	name=$1
	shift
	if "$@" >"$tmp/log" 2>&1; then
		ok "$name"
	else
		bad "$name" "$*" "$(head -20 "$tmp/log")"
	fi
}

# expect STATUS PATTERN NAME CMD...: CMD exits STATUS with output matching PATTERN.
expect() {
	want=$1 pattern=$2 name=$3
	shift 3
	"$@" >"$tmp/log" 2>&1 </dev/null
	got=$?
	if [ "$got" -ne "$want" ]; then
		bad "$name: exit $got, expected $want" "$(head -5 "$tmp/log")"
	elif ! grep -Eq -- "$pattern" "$tmp/log"; then
		bad "$name: output matches /$pattern/" "$(head -5 "$tmp/log")"
	else
		ok "$name"
	fi
}

if [ -z "${NVCC:-}" ]; then
	if command -v nvcc >/dev/null 2>&1; then NVCC=nvcc
	elif [ -x /usr/local/cuda/bin/nvcc ]; then NVCC=/usr/local/cuda/bin/nvcc
	fi
fi
strict_c="-std=c99 -Wall -Wextra -Werror -pedantic"

# From the repository root, relative paths.
cd "$root" || exit 1
try "emit sgemm (relative paths, from the repository root)" \
	"$aotc" emit templates/sgemm.cu --arch sm90 --db templates -o "$tmp/gen"
try "emit matmul_host (relative paths, from the repository root)" \
	"$aotc" emit templates/matmul_host.cpp --arch host --db tests/codegen -o "$tmp/hgen"
for f in _aot_sgemm_cuda_sm90.c _aot_sgemm_cuda_sm90.h _aot_sgemm_cuda_sm90.cu aotc.h; do
	if [ -f "$tmp/gen/$f" ]; then ok "$f written"; else bad "$f written"; fi
done
if grep -q '^#include "sgemm.cu"$' "$tmp/gen/_aot_sgemm_cuda_sm90.cu"; then
	ok ".cu includes the kernel by its file name"
else
	bad ".cu includes the kernel by its file name" "$(grep '^#include' "$tmp/gen/_aot_sgemm_cuda_sm90.cu")"
fi
if grep -q 'from sgemm.cu (source hash' "$tmp/gen/_aot_sgemm_cuda_sm90.c"; then
	ok "the comment names the source by its base name"
else
	bad "the comment names the source by its base name" "$(sed -n 3p "$tmp/gen/_aot_sgemm_cuda_sm90.c")"
fi

# From elsewhere, absolute paths; and from a subdirectory, relative ones:
# every file byte-identical.
cd / || exit 1
try "emit sgemm (absolute paths, from /)" \
	"$aotc" emit "$root/templates/sgemm.cu" --arch sm90 --db "$root/templates" -o "$tmp/gen2"
try "emit matmul_host (absolute paths, from /)" \
	"$aotc" emit "$root/templates/matmul_host.cpp" --arch host --db "$root/tests/codegen" -o "$tmp/hgen2"
cd "$root/tests" || exit 1
try "emit sgemm (relative paths, from tests/)" \
	"$aotc" emit ../templates/sgemm.cu --arch sm90 --db ../templates -o "$tmp/gen3"
for d in gen2 gen3; do
	if diff -r "$tmp/gen" "$tmp/$d" >"$tmp/diff" 2>&1; then
		ok "sgemm: $d byte-identical to the first emission"
	else
		bad "sgemm: $d byte-identical to the first emission" "$(head -10 "$tmp/diff")"
	fi
done
if diff -r "$tmp/hgen" "$tmp/hgen2" >"$tmp/diff" 2>&1; then
	ok "matmul_host: byte-identical from another working directory"
else
	bad "matmul_host: byte-identical from another working directory" "$(head -10 "$tmp/diff")"
fi

# Moved away from the repository: the output directory and the kernel
# alone, nothing of aotc on the include path.
m=$tmp/moved
mkdir -p "$m/kern" "$m/out" "$m/hkern" "$m/hout"
cp "$root/templates/sgemm.cu" "$m/kern/"
cp "$tmp/gen/"* "$m/out/"
cp "$root/templates/matmul_host.cpp" "$m/hkern/"
cp "$tmp/hgen/"* "$m/hout/"
cd "$m" || exit 1
try "moved: _aot_sgemm_cuda_sm90.c with gcc $strict_c" \
	gcc $strict_c -I out -c -o sgemm.o out/_aot_sgemm_cuda_sm90.c
try "moved: _aot_matmul_host_host.c with gcc $strict_c" \
	gcc $strict_c -I hout -c -o mm.o hout/_aot_matmul_host_host.c
try "moved: _aot_matmul_host_host.cpp with g++ -I hkern -I hout" \
	g++ -std=c++17 -Wall -Wextra -Werror -I hkern -I hout -c -o mml.o hout/_aot_matmul_host_host.cpp
cat >main.cpp <<'END'
#include "_aot_matmul_host_host.h"
int main() { return aot_matmul_host_host_select(64, 64, 64) < 0; }
END
try "moved: host .c + .cpp + main link and select" sh -c \
	'g++ -std=c++17 -I hout -o mm main.cpp mm.o mml.o && ./mm'
nvcc_missing=0
if [ -z "${NVCC:-}" ]; then
	echo "SKIP nvcc not found (PATH, /usr/local/cuda/bin): the moved .cu is not compiled"
	nvcc_missing=1
else
	try "moved: _aot_sgemm_cuda_sm90.cu with nvcc -std=c++17 -arch=sm_90 -I kern -I out" \
		"$NVCC" -std=c++17 -arch=sm_90 -I kern -I out -c -o sgemm.cu.o out/_aot_sgemm_cuda_sm90.cu
fi
# Outside a repository the comment names the source by its base name.
cd "$root" || exit 1
try "emit from the moved kernel (no repository)" \
	"$aotc" emit "$m/kern/sgemm.cu" --arch sm90 --db templates -o "$tmp/gen4"
if grep -q 'from sgemm.cu (source hash' "$tmp/gen4/_aot_sgemm_cuda_sm90.c"; then
	ok "outside a repository the comment names the base name"
else
	bad "outside a repository the comment names the base name" "$(sed -n 3p "$tmp/gen4/_aot_sgemm_cuda_sm90.c")"
fi

# --include-as: written as given; refused (usage, nothing written) when it
# could break the #include line; only for emit, compile and link. (This
# and the aotc.h checks below emit the host kernel: its heuristic takes
# 0.2 s, sgemm's 4 s; the launcher's include is written the same way.)
try "emit --include-as kernels/matmul_host.cpp" \
	"$aotc" emit templates/matmul_host.cpp --arch host --db tests/codegen --include-as kernels/matmul_host.cpp -o "$tmp/inc"
if grep -q '^#include "kernels/matmul_host.cpp"$' "$tmp/inc/_aot_matmul_host_host.cpp"; then
	ok "--include-as is what the launcher includes"
else
	bad "--include-as is what the launcher includes" "$(grep '^#include' "$tmp/inc/_aot_matmul_host_host.cpp")"
fi
nl='
'
for v in "a\"b.cu" 'a\b.cu' "a${nl}#define X 1" 'a*/b.cu' 'a/*b.cu' 'a//b.cu' ''; do
	expect 2 "cannot be written in an #include" "--include-as '$v' refused" \
		"$aotc" emit templates/sgemm.cu --arch sm90 --db templates --include-as "$v" -o "$tmp/badinc"
done
if [ ! -e "$tmp/badinc" ]; then ok "refused --include-as wrote nothing"; else bad "refused --include-as wrote nothing" "$(ls "$tmp/badinc")"; fi
expect 2 "include-as" "tune does not take --include-as" \
	"$aotc" tune templates/sgemm.cu --arch sm90 --include-as x.cu
if "$aotc" emit --help 2>&1 | grep -q -- '--include-as PATH' && "$aotc" link --help 2>&1 | grep -q -- '--include-as PATH' &&
	"$aotc" compile --help 2>&1 | grep -q -- '--include-as PATH'; then
	ok "--include-as in emit, compile and link --help"
else
	bad "--include-as in emit, compile and link --help"
fi

# aotc.h in the output directory: an identical copy is left alone, an older
# aotc copy is rewritten, a file aotc did not write stops emit (exit 3,
# none of the files written).
touch -d '2000-01-01' "$tmp/hgen/aotc.h"
try "re-emit over its own aotc.h" "$aotc" emit templates/matmul_host.cpp --arch host --db tests/codegen -o "$tmp/hgen"
if [ -n "$(find "$tmp/hgen/aotc.h" -newermt 2001-01-01)" ]; then
	bad "an identical aotc.h is left as it is"
else
	ok "an identical aotc.h is left as it is"
fi
mkdir -p "$tmp/old"
{ sed -n 1,2p "$tmp/gen/aotc.h"; echo '#define AOTC_OLD_COPY 1'; } >"$tmp/old/aotc.h"
try "emit over an older aotc copy" "$aotc" emit templates/matmul_host.cpp --arch host --db tests/codegen -o "$tmp/old"
if cmp -s "$tmp/old/aotc.h" "$tmp/gen/aotc.h"; then ok "an older aotc copy is rewritten"; else bad "an older aotc copy is rewritten"; fi
mkdir -p "$tmp/foreign"
echo '/* my own aotc.h */' >"$tmp/foreign/aotc.h"
expect 3 "aotc.h exists and is not a copy aotc wrote" "a foreign aotc.h stops emit" \
	"$aotc" emit templates/matmul_host.cpp --arch host --db tests/codegen -o "$tmp/foreign"
if [ "$(ls "$tmp/foreign")" = aotc.h ] && grep -q 'my own' "$tmp/foreign/aotc.h"; then
	ok "a foreign aotc.h: untouched, nothing else written"
else
	bad "a foreign aotc.h: untouched, nothing else written" "$(ls "$tmp/foreign")"
fi

# Skipped (77) when all passed but nvcc was missing for some checks.
before_finish() { [ "$fail" -ne 0 ] || [ "$nvcc_missing" -eq 0 ] || exit 77; }
finish
