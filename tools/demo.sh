#!/bin/sh
# The main job on a machine without a GPU: `aotc compile` the shipped SGEMM
# template for sm90, which re-emits from the committed H200 database, then
# build the emitted C dispatch into a small program and ask it which variant
# it picks for a few shapes. Run after tools/setup.sh.
set -eu
cd "$(dirname "$0")/.."
mkdir -p build/gen
build/aotc compile templates/sgemm.cu --arch sm90 --db templates -o build/gen
cc -std=c99 -Wall -Wextra -Werror -pedantic -O2 -I build/gen tools/pick.c \
	build/gen/_aot_sgemm_cuda_sm90.c -o build/gen/pick
build/gen/pick 256 256 256  1024 1024 1024  4096 4096 4096  4096 256 4096  999 777 555  1 1 1
