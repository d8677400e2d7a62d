#!/bin/sh
# Meson test: the host side of the annotation contract.
#  - aotc.h is valid C99 (gcc -pedantic) and C++, with and without __AOTC__;
#  - under __AOTC__ each macro becomes annotate("aotc.<kind>:<args as written>")
#    with macros in the arguments expanded;
#  - every templates/*.cpp compiles with g++ -Wall -Wextra -Werror, as written
#    and with explicit instantiations, and again with -D__AOTC__ (the attribute
#    form on a function template; g++ ignores 'annotate', hence -Wno-attributes).
# Exit 77 (skip) when there is no C/C++ compiler.
#
# usage: check-host-templates.sh REPO_ROOT      (env CC, CXX override gcc, g++)
set -eu
root=${1:?usage: check-host-templates.sh REPO_ROOT}
CC=${CC:-gcc}
CXX=${CXX:-g++}
command -v "$CC" >/dev/null 2>&1 || { echo "$CC not found: skipping"; exit 77; }
command -v "$CXX" >/dev/null 2>&1 || { echo "$CXX not found: skipping"; exit 77; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/aotc-host-templates.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' HUP INT TERM
inc=$root/runtime/include

. "$(dirname "$0")/../lib.sh"
# run NAME COMMAND...: run a compile step and report it.
run() {
    name=$1; shift
    if "$@" >"$tmp/run.log" 2>&1; then ok "$name"; else bad "$name" "$*" "$tmp/run.log"; fi
}

# --- the header, in C and C++ -------------------------------------------------
cat >"$tmp/header.c" <<'END'
#include <aotc.h>
#include <aotc.h> /* include guard */
#if AOTC_VERSION_MAJOR != 0 || AOTC_VERSION_MINOR != 1
#error "unexpected aotc version"
#endif
#define WIDE 32 /* macros in arguments are expanded */
AOTC_TUNE(BM, 16, WIDE)
AOTC_REQUIRE(BM % 16 == 0)
AOTC_VALID_IF(n % BM == 0)
AOTC_GRID(cdiv(n, BM))
AOTC_BLOCK(BM)
AOTC_SMEM(BM * 4)
AOTC_BUFFER(x, n, inout, uniform(-1, 1))
AOTC_VALUE(scale, 0.5)
AOTC_SHAPES(n = {64, 128, 256})
AOTC_FEATURES(n, n % 64 == 0)
AOTC_REFERENCE(scale_ref)
AOTC_TOLERANCE(1e-5)
void scale_kernel(int n, float scale, float *x);
void scale_kernel(int n, float scale, float *x)
{
    int i;
    for (i = 0; i < n; ++i) x[i] *= scale;
}
END
c_flags="-std=c99 -Wall -Wextra -Werror -pedantic"
run "aotc.h C99" "$CC" $c_flags -I"$inc" -c -o "$tmp/h1.o" "$tmp/header.c"
run "aotc.h C99 __AOTC__" "$CC" $c_flags -Wno-attributes -D__AOTC__ -I"$inc" -c -o "$tmp/h2.o" "$tmp/header.c"
run "aotc.h C++" "$CXX" -x c++ -std=c++11 -Wall -Wextra -Werror -pedantic -I"$inc" -c -o "$tmp/h3.o" "$tmp/header.c"

# The exact expansion the frontend depends on.
if "$CC" -E -P -D__AOTC__ -I"$inc" "$tmp/header.c" >"$tmp/header.i"; then
    for want in '"aotc.tune:" "BM, 16, 32"' '"aotc.require:" "BM % 16 == 0"' \
                '"aotc.valid_if:" "n % BM == 0"' '"aotc.grid:" "cdiv(n, BM)"' \
                '"aotc.block:" "BM"' '"aotc.smem:" "BM * 4"' \
                '"aotc.buffer:" "x, n, inout, uniform(-1, 1)"' '"aotc.value:" "scale, 0.5"' \
                '"aotc.shapes:" "n = {64, 128, 256}"' '"aotc.features:" "n, n % 64 == 0"' \
                '"aotc.reference:" "scale_ref"' '"aotc.tolerance:" "1e-5"'; do
        if grep -F "__attribute__((annotate($want)))" "$tmp/header.i" >/dev/null; then
            ok "expansion $want"
        else
            bad "expansion $want"
        fi
    done
else
    bad "preprocess header.c"
fi
"$CC" -E -P -I"$inc" "$tmp/header.c" >"$tmp/plain.i" && ! grep -F annotate "$tmp/plain.i" >/dev/null ||
    { bad "macros must expand to nothing without __AOTC__"; }

# --- host kernel templates ----------------------------------------------------
cxx_flags="-std=c++17 -Wall -Wextra -Werror"
for f in "$root"/templates/*.cpp; do
    [ -e "$f" ] || continue
    b=$(basename "$f" .cpp)
    run "$b" "$CXX" $cxx_flags -I"$inc" -c -o "$tmp/$b.o" "$f"
done

cat >"$tmp/inst_matmul_host.cpp" <<END
#include "$root/templates/matmul_host.cpp"
template void matmul_host<16, 32, 32, 1>(int, int, int, const float *, const float *, float *);
template void matmul_host<16, 128, 32, 4>(int, int, int, const float *, const float *, float *);
template void matmul_host<64, 256, 32, 8>(int, int, int, const float *, const float *, float *);
template void matmul_host<64, 128, 128, 4>(int, int, int, const float *, const float *, float *);
END
run inst_matmul_host "$CXX" $cxx_flags -I"$inc" -c -o "$tmp/i1.o" "$tmp/inst_matmul_host.cpp"
run "inst_matmul_host __AOTC__" "$CXX" $cxx_flags -Wno-attributes -D__AOTC__ -I"$inc" \
    -c -o "$tmp/i2.o" "$tmp/inst_matmul_host.cpp"

finish
