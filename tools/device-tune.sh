#!/bin/bash
# The H200 tuning job: run from the repository root on the GPU machine with
# a build of aotc made on Debian (build/ carried along). Writes the databases
# and logs to $OUT (default ./device-out). Phases: "smoke" (planted faults,
# softmax, vendor baselines) and "sgemm" (the SGEMM template); default both.
#
#   tools/device-tune.sh [smoke|sgemm|all|eval|guards] [BUDGET]
#
# "offgrid" (issue 10) tunes softmax on bench/offgrid/softmax.train.json into a database
# of its own and measures the off-grid held-out sets (aotc eval: softmax against that
# database, sgemm against the committed one); "offgrid-sgemm" tunes sgemm on
# bench/offgrid/sgemm.train.json. Results: $OUT/<kernel>.offgrid*.json.
#
# "guards" runs the planted faults and retunes softmax from scratch into a
# database of its own (softmax.guarded.json), to compare with the committed
# one: same winners, and what the guard zones and the second checked launch
# cost.
# "eval" measures the dispatch learnt from the committed databases on the
# held-out shapes templates/*.heldout.json (aotc eval).
set -u
phase=${1:-all}
budget=${2:-8m}
out=${OUT:-device-out}
mkdir -p "$out"
exec > >(tee -a "$out/log.txt") 2>&1
db=/tmp/aotc-db
mkdir -p "$db"
export AOTC_CACHE_DIR=/tmp/aotc-cache
# Databases of an earlier call are resumed from unless FRESH=1.
if [ "${FRESH:-0}" != 1 ]; then
	for f in templates/*.cuda_*.json; do [ -f "$f" ] && cp "$f" "$db/"; done
fi

echo "== environment"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
nproc
. tools/device-libs.sh
ldd build/aotc | grep -E 'clang|jansson'
build/aotc --version || exit 1

tune() { /usr/bin/time -f "wall %e s, max RSS %M KiB" build/aotc tune "$@" --arch sm90 --db "$db" -j 16; }

if [ "$phase" = smoke ] || [ "$phase" = all ]; then
	echo "== planted faults"
	AOTC_MEASURE_TIMEOUT=5 tune tests/tuner/faulty.cu --verbose
	cp "$db"/twice.*.json "$out/faulty.json"
	echo "== softmax"
	tune templates/softmax.cu --budget "$budget"
	cp "$db"/softmax.*.json "$out/softmax.json"
	echo "== baselines"
	python3 bench/baselines.py templates/sgemm.shapes.json templates/softmax.shapes.json >"$out/baselines.json"
fi
if [ "$phase" = faults ] || [ "$phase" = sgemm ]; then
	: # (all runs the faults in the smoke phase)
	echo "== planted faults"
	AOTC_MEASURE_TIMEOUT=5 tune tests/tuner/faulty.cu --verbose
	cp "$db"/twice.*.json "$out/faulty.json"
fi
if [ "$phase" = sgemm ] || [ "$phase" = all ]; then
	echo "== sgemm"
	tune templates/sgemm.cu --shapes templates/sgemm.shapes.json --budget "$budget"
	cp "$db"/sgemm.*.json "$out/sgemm.json"
fi
if [ "$phase" = guards ]; then
	echo "== planted faults"
	AOTC_MEASURE_TIMEOUT=5 tune tests/tuner/faulty.cu --verbose
	cp "$db"/twice.*.json "$out/faulty.json"
	echo "== softmax, from scratch"
	mkdir -p /tmp/aotc-db-guarded
	/usr/bin/time -f "wall %e s, max RSS %M KiB" build/aotc tune templates/softmax.cu --arch sm90 \
		--db /tmp/aotc-db-guarded -j 16 --budget "$budget"
	cp /tmp/aotc-db-guarded/softmax.*.json "$out/softmax.guarded.json"
fi
if [ "$phase" = offgrid ] || [ "$phase" = offgrid-sgemm ]; then
	og=/tmp/aotc-db-offgrid
	mkdir -p "$og"
	run() { /usr/bin/time -f "wall %e s, max RSS %M KiB" build/aotc "$@" --arch sm90 -j 16; }
	if [ "$phase" = offgrid ]; then
		echo "== softmax on the off-grid training set"
		run tune templates/softmax.cu --db "$og" --shapes bench/offgrid/softmax.train.json --budget "$budget"
		cp "$og"/softmax.*.json "$out/softmax.offgrid.json"
		echo "== eval softmax on the off-grid held-out set"
		run eval templates/softmax.cu --db "$og" --shapes bench/offgrid/softmax.heldout.json
		cp "$og"/eval/softmax.*.json "$out/softmax.offgrid.heldout.json"
		echo "== eval sgemm (committed grid database) on the off-grid held-out set"
		run eval templates/sgemm.cu --db "$db" --shapes bench/offgrid/sgemm.heldout.json
		cp "$db"/eval/sgemm.*.json "$out/sgemm.offgrid.heldout.json"
	else
		echo "== sgemm on the off-grid training set"
		run tune templates/sgemm.cu --db "$og" --shapes bench/offgrid/sgemm.train.json --budget "$budget"
		cp "$og"/sgemm.*.json "$out/sgemm.offgrid.json"
	fi
fi
# "retune-sgemm" and "retune-softmax" (issue 10) tune the templates on their own
# AOTC_SHAPES (off-grid geom() sets) from scratch; "heldout" then measures every
# configuration on the off-grid held-out sets (bench/offgrid/*.heldout.json) and on the
# older held-out sets (templates/*.heldout.json), each against the committed database:
# $OUT/<kernel>.json, $OUT/<kernel>.offgrid.heldout.json, $OUT/<kernel>.heldout.json.
if [ "$phase" = retune-sgemm ] || [ "$phase" = retune-softmax ]; then
	kernel=${phase#retune-}
	rm -f "$db/$kernel".*
	echo "== $kernel on its AOTC_SHAPES, from scratch"
	tune templates/$kernel.cu --budget "$budget"
	cp "$db/$kernel".cuda_*.json "$out/$kernel.json"
fi
if [ "$phase" = heldout ]; then
	for kernel in ${KERNELS:-sgemm softmax}; do
		for set in bench/offgrid/$kernel.heldout.json templates/$kernel.heldout.json; do
			name=$kernel.heldout.json
			case $set in bench/*) name=$kernel.offgrid.heldout.json ;; esac
			ev=/tmp/aotc-eval-$name
			mkdir -p "$ev"
			cp templates/$kernel.cuda_*.json "$ev/"
			echo "== eval $kernel on $set"
			/usr/bin/time -f "wall %e s, max RSS %M KiB" build/aotc eval templates/$kernel.cu \
				--arch sm90 --db "$ev" -j 16 --shapes "$set"
			cp "$ev"/eval/$kernel.cuda_*.json "$out/$name"
		done
	done
fi
if [ "$phase" = eval ]; then
	echo "== eval: the heuristic from the committed databases, on held-out shapes"
	build/aotc eval templates/sgemm.cu --arch sm90 --db "$db" -j 16 --shapes templates/sgemm.heldout.json
	cp "$db"/eval/sgemm.*.json "$out/sgemm.heldout.json"
	build/aotc eval templates/softmax.cu --arch sm90 --db "$db" -j 16 --shapes templates/softmax.heldout.json
	cp "$db"/eval/softmax.*.json "$out/softmax.heldout.json"
fi
ls -la "$out" "$db"
