#!/bin/sh
# Meson test: every templates/*.cu compiles with nvcc for sm_90, as written and
# with a few explicit instantiations (so the template bodies are really
# compiled, not just parsed).  The instantiated configurations satisfy the
# templates' AOTC_REQUIREs.  Exit 77 (skip) when there is no nvcc.
#
# usage: check-cuda-templates.sh REPO_ROOT      (env NVCC overrides the compiler)
set -eu
root=${1:?usage: check-cuda-templates.sh REPO_ROOT}

if [ -z "${NVCC:-}" ]; then
    if command -v nvcc >/dev/null 2>&1; then NVCC=nvcc
    elif [ -x /usr/local/cuda/bin/nvcc ]; then NVCC=/usr/local/cuda/bin/nvcc
    else echo "nvcc not found (PATH, /usr/local/cuda/bin): skipping"; exit 77
    fi
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/aotc-cuda-templates.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' HUP INT TERM
. "$(dirname "$0")/../lib.sh"

# check NAME SOURCE: compile SOURCE to an object, warnings are errors.
check() {
    if "$NVCC" -std=c++17 -arch=sm_90 -Werror all-warnings -I"$root/runtime/include" \
            -c -o "$tmp/$1.o" "$2" >"$tmp/nvcc.log" 2>&1; then
        ok "$1"
    else
        bad "$1" "$NVCC -std=c++17 -arch=sm_90 -Werror all-warnings -I$root/runtime/include -c $2" "$tmp/nvcc.log"
    fi
}

for f in "$root"/templates/*.cu; do
    [ -e "$f" ] || continue
    check "$(basename "$f" .cu)" "$f"
done

cat >"$tmp/inst_sgemm.cu" <<END
#include "$root/templates/sgemm.cu"
#define I(BM, BN, BK, TM, TN, VEC) template __global__ void sgemm<BM, BN, BK, TM, TN, VEC>( \\
    int, int, int, float, const float *, const float *, float, float *);
I(64, 64, 8, 4, 4, 1)
I(128, 128, 8, 8, 8, 4)
I(128, 64, 16, 8, 4, 4)
I(32, 32, 32, 2, 4, 1)
I(256, 128, 16, 8, 8, 4)
I(64, 256, 32, 8, 8, 1)
END
cat >>"$tmp/inst_sgemm.cu" <<END
// the split-K host launcher (AOTC_ALTERNATIVE), which NVRTC never sees
#define S(SPLIT, TILE) template cudaError_t sgemm_splitk<SPLIT, TILE>( \\
    int, int, int, float, const float *, const float *, float, float *, cudaStream_t);
S(2, 32)
S(16, 64)
END
check inst_sgemm "$tmp/inst_sgemm.cu"

cat >"$tmp/inst_softmax.cu" <<END
#include "$root/templates/softmax.cu"
#define I(BLOCK, VEC, ROWS) template __global__ void softmax<BLOCK, VEC, ROWS>( \\
    int, int, const float *, float *);
I(64, 1, 8)
I(128, 2, 4)
I(256, 4, 1)
I(1024, 4, 2)
I(512, 2, 32)
END
check inst_softmax "$tmp/inst_softmax.cu"

finish
