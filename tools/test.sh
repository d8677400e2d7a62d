#!/bin/sh
# What CI runs (.ci/run, after tools/setup.sh): every test once, then a
# release tarball's build, then fuzzing. Exits non-zero if anything fails.
#
#   1. The normal build (build/): the suites that run aotc as a user would
#      (docs: the commands of README and docs/; integration: downstream CMake
#      and meson builds against the installed aotc, and the Slurm example on
#      a single-node Slurm; templates: the shipped templates and the
#      tutorial's file through nvcc and hipcc; toolchains:
#      frontend-golden with the real CUDA headers for every case, rocm with
#      hipcc builds of the emitted launchers) and the figures (report-h200,
#      tuner-search-h200: what is learnt from committed H200 measurements).
#      nvcc, hipcc, libclang and cmake take most of their time, or learning
#      that report-formats, emit-golden and eval-heldout run under the
#      sanitizers in step 2; there they would take twice as long.
#   2. The AddressSanitizer + UBSan build (build-asan/): every other suite,
#      with timeouts x3 (AOTC_TEST_SANITIZED=1: frontend-golden and rocm
#      leave to step 1 what only the toolchains would repeat). Each test runs
#      once, where it checks the most: aotc's own code under the sanitizers.
#      (`meson test -C build` still runs every suite on the normal build.)
#   3. tools/tarball-check.sh: a `git archive` of HEAD builds elsewhere, a few
#      suites pass there and softmax emitted from it is byte-identical;
#      tools/deb-check.sh: the Debian package built from it, installed, and
#      the downstream projects built against it (about a minute).
#   4. tools/fuzz.sh: each input surface under libFuzzer for
#      AOTC_FUZZ_SECONDS (default 8: that the targets run and find nothing
#      quickly; tools/fuzz.sh 600 searches; 0 skips it), on every core.
#
# The timeouts in tests/meson.build fit a loaded 2-core machine.
set -eu
cd "$(dirname "$0")/.."
user_suites="--suite docs --suite integration --suite templates --suite toolchains --suite figures"

[ -f build/build.ninja ] || meson setup build
meson compile -C build
# shellcheck disable=SC2086
meson test -C build --print-errorlogs $user_suites

[ -f build-asan/build.ninja ] || meson setup build-asan -Dbuildtype=debugoptimized -Db_sanitize=address,undefined -Db_lundef=false
meson compile -C build-asan
# asan_test [nice] ARGS: meson test on the sanitized build, every suite
# step 1 did not run.
asan_test() {
	prio=0
	[ "$1" = nice ] && { prio=19; shift; }
	AOTC_TEST_SANITIZED=1 \
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	LSAN_OPTIONS=suppressions=$(pwd)/tests/lsan.supp \
		nice -n "$prio" meson test -C build-asan --no-rebuild --print-errorlogs --timeout-multiplier 3 \
			--no-suite docs --no-suite integration --no-suite templates --no-suite figures "$@"
}
# The suite 'alone' (is_parallel: false: what they check is timed) runs its
# tests one after another beside the others at nice 19: the scheduler gives
# the timed test its core whenever it wants it and the rest the cycles it
# leaves (one after another on an otherwise idle machine, one core would
# idle for two and a half minutes).
mkdir -p build-asan/meson-logs
asan_test --suite alone --logbase alone >build-asan/meson-logs/alone.txt 2>&1 &
alone=$!
shared_status=0
asan_test nice --no-suite alone --logbase shared || shared_status=$?
alone_status=0
wait "$alone" || alone_status=$?
echo "== the suite 'alone' (timed tests, at normal priority beside the rest):"
cat build-asan/meson-logs/alone.txt
# (an `a && b` list whose first command fails would not stop set -e)
if [ "$shared_status" -ne 0 ] || [ "$alone_status" -ne 0 ]; then
	exit 1
fi

tools/tarball-check.sh
tools/deb-check.sh

fuzz_secs=${AOTC_FUZZ_SECONDS:-8}
if [ "$fuzz_secs" -gt 0 ]; then
	tools/fuzz.sh "$fuzz_secs"
fi
