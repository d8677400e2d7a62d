#!/bin/sh
# Runs every fuzz target of tests/fuzz under libFuzzer with AddressSanitizer
# and UBSan for a fixed time each: tools/fuzz.sh [SECONDS] [TARGET...]
# (default 20 s; the targets of aotc's own parsers, or those named, e.g. the
# slower 'frontend', which goes through libclang). Builds only the targets, with clang, in
# build-fuzz/. Each run starts from the target's seeds and reproducers, plus
# what earlier runs here found (build-fuzz/corpus/TARGET); a crash, leak,
# timeout or OOM leaves its input in build-fuzz/artifacts/TARGET/ and makes
# the script exit non-zero. Targets run side by side, one per core
# (AOTC_FUZZ_JOBS overrides). Prints per target the executions and corpus size.
set -eu
cd "$(dirname "$0")/.."
secs=${1:-20}
[ $# -gt 0 ] && shift
targets=${*:-expr annotations ir_json shapes db options dispatch}

if [ ! -f build-fuzz/build.ninja ]; then
	CC=${FUZZ_CC:-clang} meson setup build-fuzz -Dfuzz=true -Db_sanitize=address,undefined \
		-Db_lundef=false -Dbuildtype=debugoptimized >build-fuzz.log 2>&1 ||
		{ cat build-fuzz.log; exit 1; }
	rm -f build-fuzz.log
fi
names=
for t in $targets; do names="$names tests/fuzz/fuzz_$t"; done
# ninja rather than meson compile: it reconfigures first when a meson.build
# changed, where meson compile rejects a target it does not know yet.
# shellcheck disable=SC2086
ninja -C build-fuzz $names

# Largest input per surface: well above its seeds, small enough to stay fast.
max_len() {
	case $1 in
	expr | options) echo 4096 ;;
	frontend) echo 8192 ;;
	annotations) echo 16384 ;;
	shapes) echo 16384 ;;
	*) echo 65536 ;;
	esac
}

# One target's run: its log, and its exit status in a file beside it.
fuzz_one() {
	t=$1
	corpus=build-fuzz/corpus/$t
	artifacts=build-fuzz/artifacts/$t
	mkdir -p "$corpus" "$artifacts"
	rc=0
	ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 \
	UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
		build-fuzz/tests/fuzz/fuzz_$t -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
		-max_len="$(max_len "$t")" -print_final_stats=1 -artifact_prefix="$artifacts/" \
		"$corpus" tests/fuzz/seeds/$t tests/fuzz/crashes/$t >"build-fuzz/fuzz-$t.log" 2>&1 || rc=$?
	echo "$rc" >"build-fuzz/fuzz-$t.rc"
}

# The targets run side by side, one per core (each is single-threaded).
jobs=${AOTC_FUZZ_JOBS:-$(nproc 2>/dev/null || echo 1)}
running=0
for t in $targets; do
	fuzz_one "$t" &
	running=$((running + 1))
	if [ "$running" -ge "$jobs" ]; then
		wait
		running=0
	fi
done
wait

failed=0
summary=
for t in $targets; do
	log=build-fuzz/fuzz-$t.log
	rc=$(cat "build-fuzz/fuzz-$t.rc" 2>/dev/null || echo 1)
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
	done_line=$(grep -E '^#[0-9]+[[:space:]]+DONE' "$log" | tail -1)
	corp=$(echo "$done_line" | sed -n 's/.* corp: \([^ ]*\).*/\1/p')
	cov=$(echo "$done_line" | sed -n 's/.* cov: \([0-9]*\).*/\1/p')
	line=$(printf '%-12s %9s execs in %ss, corpus %s inputs/bytes, coverage %s edges, exit %s' \
		"$t" "${execs:-?}" "$secs" "${corp:-?}" "${cov:-?}" "$rc")
	echo "fuzz: $line"
	summary="$summary
$line"
	if [ "$rc" -ne 0 ]; then
		failed=1
		grep -E 'ERROR: |runtime error|SUMMARY|Test unit written' "$log" | head -20 || true
		echo "fuzz: $t failed; log in $log, input in build-fuzz/artifacts/$t/"
	fi
done
echo "fuzz: per target:$summary"
exit $failed
