#!/bin/sh
# The point of aotc in under a minute, without a GPU: `aotc compile` the
# shipped softmax template for sm90, which re-emits from the committed H200
# database (no device here), then build the emitted C dispatch into
# tools/demo.c and print, from the times measured on the H200, what the
# variant select() picks costs for each shape against the best single
# variant and the per-shape best, on training shapes and on held-out ones
# the dispatch never saw. Run after tools/setup.sh. Options go to the
# program: --all shows every shape, --tsv writes rows for tests
# (tests/docs/demo.sh). The environment's AOTC (default build/aotc) and
# AOTC_DEMO_DIR (default build/gen; absolute paths) let a test run it with
# the aotc under test, writing elsewhere.
set -eu
cd "$(dirname "$0")/.."
aotc=${AOTC:-build/aotc}
gen=${AOTC_DEMO_DIR:-build/gen}
mkdir -p "$gen"
# aotc's own report goes to stderr, so that stdout is the table alone. The
# demo shows the committed H200 data: on a machine with an sm90 GPU it hides
# the GPU rather than retune into templates/ (plain `aotc compile` tunes).
CUDA_VISIBLE_DEVICES=-1 "$aotc" compile templates/softmax.cu --arch sm90 --db templates -o "$gen" >&2
# shellcheck disable=SC2046 # pkg-config's flags are words
cc -std=c99 -Wall -Wextra -Werror -pedantic -O2 -I "$gen" tools/demo.c \
	"$gen/_aot_softmax_cuda_sm90.c" $(pkg-config --cflags --libs jansson) -lm -o "$gen/demo"
"$gen/demo" "$@" templates/softmax.cuda_NVIDIA_H200_13.0.json \
	templates/eval/softmax.cuda_NVIDIA_H200_13.0.json bench/baselines-h200.json
