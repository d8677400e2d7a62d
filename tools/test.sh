#!/bin/sh
# Builds aotc twice, normally and under AddressSanitizer + UBSan, and runs the
# whole test suite on both, then builds a `git archive` of HEAD elsewhere and
# runs a few suites there (tools/tarball-check.sh), then fuzzes each input surface for a fixed time
# (tools/fuzz.sh; AOTC_FUZZ_SECONDS per target, default 12, 0 skips it).
# Exits non-zero if anything fails. The timeouts in
# tests/meson.build fit a loaded 2-core machine; the sanitized run gets three
# times as long. The sanitized run leaves out the suites that only run
# aotc's commands as a user would (docs: the commands in README and docs/;
# integration: downstream CMake and meson builds against the installed
# aotc; templates: the shipped templates through nvcc, and through hipcc for
# every variant): the code they run is the sanitized suites' already, and
# nvcc, hipcc and cmake take most of their time. hipcc compiles a fixed
# sample of the variants (templates-rocm, rocm); AOTC_TEST_ROCM_FULL=1
# compiles every one. A failing test prints the command that reruns it alone.
set -eu
cd "$(dirname "$0")/.."

[ -f build/build.ninja ] || meson setup build
meson compile -C build
meson test -C build --print-errorlogs

[ -f build-asan/build.ninja ] || meson setup build-asan -Db_sanitize=address,undefined -Db_lundef=false
meson compile -C build-asan
# AOTC_TEST_SANITIZED=1: what differs only in what a tool other than aotc
# does runs in the normal run alone (frontend-golden: the real CUDA headers
# only for the cases that need them, the shim run has the rest; rocm: the
# hipcc builds of the emitted launchers, the same bytes in both runs).
AOTC_TEST_SANITIZED=1 \
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
LSAN_OPTIONS=suppressions=$(pwd)/tests/lsan.supp \
	meson test -C build-asan --print-errorlogs --timeout-multiplier 3 --no-suite docs --no-suite integration --no-suite templates

# From a `git archive` of HEAD (a release tarball: no .git, another place):
# it builds, the suites that would catch a path or a repository root leaking
# into output pass there, and softmax emitted from it is byte-identical to
# softmax emitted from this checkout (tools/tarball-check.sh).
tools/tarball-check.sh

# About two minutes on 2 cores with its build (the ir library and the five
# targets only).
fuzz_secs=${AOTC_FUZZ_SECONDS:-12}
if [ "$fuzz_secs" -gt 0 ]; then
	tools/fuzz.sh "$fuzz_secs"
fi
