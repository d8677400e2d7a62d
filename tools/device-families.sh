#!/bin/bash
# Kernel families and the alternation of close contenders on the H200, in one
# device call of at most 9 minutes, from the repository root with the Debian
# build carried along (carry: ["build"]):
#
#   tools/device-families.sh [types|alternatives|splitk|noise|all]...   (default all)
#
# Sections (expected device time on the H200, from the committed logs):
#   types         tests/families/types-sm90.sh as is: scale_types.cu tuned for
#                 float, __half and bf16, emitted, built with nvcc and run (~45 s)
#   alternatives  tests/families/rowsum_alt.cu (a kernel, an alternative kernel,
#                 a host launcher of two kernels) tuned on the 16 shapes of
#                 bench/alternatives/rowsum.train.json, `aotc eval` on the 10 of
#                 rowsum.heldout.json, then bench/alternatives/gain.py: the
#                 dispatch's gain over the best single alternative (~40 s)
#   splitk        bench/splitk/splitk-h200.sh: the split-K cells beside the
#                 committed SGEMM database (~1.5 min)
#   noise         templates/softmax.cu tuned twice with the default alternation
#                 and twice with --alternate 0, each into its own database, on
#                 the 36 of its 45 AOTC_SHAPES with rows <= 24468 (NOISE_MAX_ROWS;
#                 80000 takes all 45, about 100 s a tune instead of about 50);
#                 the winners' agreement of each pair here, the rest on the CPU
#                 afterwards: bench/noise/compare.sh (~3.5 min)
#
# Every step runs under `timeout`, and none past the job's limit (LIMIT_S,
# default 520 s from the start; a step that would start with less than 5 s
# left is skipped): a hang costs its step, never the call. Everything is
# tee'd into $OUT/device-families.txt (OUT, default out); each section's
# logs and databases go to $OUT/SECTION/. Each section's time is printed.
set -uo pipefail
OUT=${OUT:-out}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
exec > >(tee -a "$OUT/device-families.txt") 2>&1
LIMIT_S=${LIMIT_S:-520}
T0=$(date +%s)
export AOTC_CACHE_DIR=/tmp/aotc-cache

# step SECONDS CMD...: CMD under timeout, for SECONDS at most and never past
# LIMIT_S (10 s kept for the end); 124 when it timed out or was skipped.
step() {
	local want=$1 left
	shift
	left=$((LIMIT_S - ($(date +%s) - T0) - 10))
	((left < want)) && want=$left
	if ((want < 5)); then
		echo "SKIPPED (the job's ${LIMIT_S} s are spent): $*"
		return 124
	fi
	timeout -k 5 "$want" "$@"
	local st=$?
	((st == 124 || st == 137)) && echo "TIMED OUT after $want s: $*"
	return $st
}

sec_types() {
	step 240 env OUT="$OUT/types" bash tests/families/types-sm90.sh
}

sec_alternatives() {
	local o="$OUT/alternatives" db=/tmp/families-alt-db src=tests/families/rowsum_alt.cu st
	mkdir -p "$o"
	rm -rf "$db"
	echo "-- tune on bench/alternatives/rowsum.train.json"
	step 180 build/aotc tune "$src" --arch sm90 --db "$db" --shapes bench/alternatives/rowsum.train.json -j 16 \
		>"$o/tune.log" 2>&1
	st=$?
	grep -v '^aotc: compiled' "$o/tune.log" | tail -24
	((st == 0)) || return $st
	echo "-- aotc eval on bench/alternatives/rowsum.heldout.json"
	step 150 build/aotc eval "$src" --arch sm90 --db "$db" --shapes bench/alternatives/rowsum.heldout.json -j 16 \
		>"$o/eval.log" 2>&1
	st=$?
	sed -n '/^EVAL/,$p' "$o/eval.log"
	cp "$db"/rowsum_kernel1.cuda_*.json "$o/rowsum_kernel1.train.json"
	cp "$db"/eval/rowsum_kernel1.cuda_*.json "$o/rowsum_kernel1.heldout.json" 2>/dev/null
	((st == 0)) || return $st
	echo "-- the dispatch against the best single alternative (bench/alternatives/gain.py)"
	step 90 python3 bench/alternatives/gain.py --aotc build/aotc --source "$src" --kernel rowsum_kernel1 --arch sm90 \
		--json "$o/gain.json" "$o/rowsum_kernel1.train.json" "$o/rowsum_kernel1.heldout.json" | tee "$o/gain.txt"
}

sec_splitk() {
	step 300 env OUT="$OUT/splitk" bash bench/splitk/splitk-h200.sh
}

sec_noise() {
	local o="$OUT/noise" shapes="$OUT/noise/softmax.shapes.json" run db st=0 a t
	local -a alt
	mkdir -p "$o"
	# AOTC_SHAPES as the committed database expanded them
	python3 - "$shapes" "${NOISE_MAX_ROWS:-24468}" <<'PY' || return 1
import json, sys
d = json.load(open("templates/softmax.cuda_NVIDIA_H200_13.0.json"))
r = d["shape_args"].index("rows")
keep = [dict(zip(d["shape_args"], s)) for s in d["shapes"] if s[r] <= int(sys.argv[2])]
json.dump(keep, open(sys.argv[1], "w"))
print("softmax on %d of its %d AOTC_SHAPES (rows <= %s): %s" % (len(keep), len(d["shapes"]), sys.argv[2], sys.argv[1]))
PY
	for run in with1 with2 without1 without2; do
		db=/tmp/noise-$run
		alt=()
		[[ $run == without* ]] && alt=(--alternate 0)
		rm -rf "$db"
		echo "-- softmax, $run (${alt[*]:-default alternation})"
		t=$(date +%s)
		step 180 build/aotc tune templates/softmax.cu --arch sm90 --db "$db" \
			--shapes "$shapes" -j 16 "${alt[@]}" >"$o/$run.log" 2>&1 || st=$?
		grep -v '^aotc: compiled' "$o/$run.log" | tail -6
		echo "$run: $(($(date +%s) - t)) s"
		cp "$db"/softmax.cuda_*.json "$o/softmax.$run.json" || st=1
	done
	for a in with without; do
		echo "-- agreement, ${a}1 / ${a}2 (tests/tuner/noise_agree.py)"
		python3 tests/tuner/noise_agree.py "$o/softmax.${a}1.json" "$o/softmax.${a}2.json"
	done
	echo "-- the rest on the CPU: bench/noise/compare.sh OUT/noise/softmax.{with1,with2,without1,without2}.json"
	return $st
}

sections=("$@")
((${#sections[@]})) || sections=(all)
run=()
for s in "${sections[@]}"; do
	case $s in
	all) run+=(types alternatives splitk noise) ;;
	types | alternatives | splitk | noise) run+=("$s") ;;
	*)
		echo "usage: tools/device-families.sh [types|alternatives|splitk|noise|all]..." >&2
		exit 2
		;;
	esac
done

echo "== environment"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem --format=csv,noheader
nproc
. tools/device-libs.sh
build/aotc --version | head -1 || exit 2
git log -1 --format='%h %s' 2>/dev/null | cut -c1-100

summary=()
for s in "${run[@]}"; do
	echo
	echo "== $s"
	t=$(date +%s)
	"sec_$s"
	st=$?
	line=$(printf '%-13s %4d s  exit %d' "$s" $(($(date +%s) - t)) "$st")
	echo "== $line"
	summary+=("$line")
done
echo
echo "== times (limit ${LIMIT_S} s)"
printf '%s\n' "${summary[@]}"
echo "total $(($(date +%s) - T0)) s"
nvidia-smi --query-gpu=clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
