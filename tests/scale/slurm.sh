#!/bin/sh
# docs/examples/slurm-tune.sh as committed, on a single-node Slurm started
# here from Debian's packages (tests/scale/slurm-cluster.sh; issue 35): sbatch
# --wait of its 8-task array for a host kernel, every task completed, 8 shard
# databases, one emit once the last tune ended, and the merged shards hold
# the cells and statuses of one process's tune (times differ). A cluster that
# does not start is a failure, with the daemons' last log lines.
# Usage: slurm.sh AOTC REPO_ROOT
# The saved dispatch says how many shards emit merged: this test saves it.
unset AOTC_NO_SAVE
aotc=$1
root=$2
case $aotc in /*) ;; *) aotc=$(pwd)/$aotc ;; esac
case $root in /*) ;; *) root=$(pwd)/$root ;; esac
here=$root/tests/scale
tmp=$(mktemp -d)
. "$here/slurm-cluster.sh"
trap 'slurm_stop; rm -rf "$tmp"' EXIT
trap 'exit 1' INT TERM HUP PIPE
export AOTC_HOST_FLUSH_BYTES=65536
. "$root/tests/lib.sh"
kernel=$here/sweep_host.cpp
shards=8

mkdir "$tmp/slurm"
if slurm_start "$tmp/slurm"; then
	ok "a single-node Slurm starts and its node is idle"
else
	bad "a single-node Slurm starts and its node is idle" "$(cat "$tmp/slurm/why")"
	finish
fi

# As a user submits it: aotc on PATH (lib.sh's wrapper is named aotc), the
# database and the output directory in the environment sbatch passes on
# (--export=ALL), the task outputs (slurm-JOB_TASK.out) in the submit
# directory.
mkdir "$tmp/job"
cd "$tmp/job" || exit 1
start=$(date +%s)
PATH=$(dirname "$aotc"):$PATH AOTC_DB=$tmp/array-db AOTC_OUT=$tmp/generated \
	AOTC_CACHE_DIR=$tmp/cache-array \
	timeout 240 sbatch --wait "$root/docs/examples/slurm-tune.sh" "$kernel" host >"$tmp/sbatch.log" 2>&1
st=$?
echo "the array: $(($(date +%s) - start)) s from sbatch to its end"
job=$(sed -n 's/^Submitted batch job \([0-9][0-9]*\)$/\1/p' "$tmp/sbatch.log")
# tasks: the last lines of each task's output
tasks() { for f in slurm-*.out; do [ -f "$f" ] && printf '%s:\n%s\n' "$f" "$(tail -5 "$f")"; done; }
if [ "$st" -eq 0 ] && [ -n "$job" ]; then
	ok "sbatch --wait of the array exits 0"
else
	bad "sbatch --wait of the array exits 0" "exit $st$( [ "$st" -eq 124 ] && echo ' (timed out after 240 s)')" \
		"$tmp/sbatch.log" "$(squeue -h 2>&1)" "$(tasks)"
	finish
fi

# Every task, as the job completion log has it (the cluster keeps no
# accounting database for sacct).
grep "ArrayJobId=$job " "$tmp/slurm/jobcomp.log" >"$tmp/tasks" 2>&1
n=$(grep -c 'JobState=COMPLETED .*ExitCode=0:0' "$tmp/tasks")
if [ "$n" -eq "$shards" ] && [ "$(ls slurm-"$job"_*.out | wc -l)" -eq "$shards" ]; then
	ok "all $shards tasks completed, exit 0, each with its output"
else
	bad "all $shards tasks completed, exit 0, each with its output" "$n completed:" \
		"$(sed 's/.*\(ArrayTaskId=[^ ]*\).*\(JobState=[^ ]*\).*\(ExitCode=[^ ]*\).*/\1 \2 \3/' "$tmp/tasks")" \
		"$(ls)"
fi

n=$(ls "$tmp"/array-db/sweep.*.shard[1-8]of$shards.json 2>/dev/null | wc -l)
if [ "$n" -eq "$shards" ]; then ok "$shards shard databases"; else bad "$shards shard databases" "$(ls "$tmp/array-db")"; fi

# One emit, after the last tune: the saved dispatch merged every shard,
# none unfinished (a note would say so), and the task that emitted removed
# the marks.
n=$(grep -l '^aotc: emitted ' slurm-*.out | wc -l)
from=$(json "$tmp/array-db/dispatch/sweep.host.json" 'd["from"]["merged"], d["from"]["notes"]' 2>&1)
if [ "$n" -eq 1 ] && [ "$from" = "[$shards, []]" ] && [ ! -e "$tmp/array-db/slurm-$job" ]; then
	ok "one task emitted, from all $shards shards"
else
	bad "one task emitted, from all $shards shards" "$n tasks emitted; merged, notes: $from" \
		"$(ls -R "$tmp/array-db")" "$(tasks)"
fi
manifest=$tmp/generated/_aot_sweep_host.json
missing=$(cd "$tmp/generated" 2>/dev/null &&
	for f in $(json "$manifest" '" ".join(d["files"].values())'); do [ -s "$f" ] || echo "$f"; done)
if [ -f "$manifest" ] && [ -z "$missing" ]; then
	ok "the emitted files exist"
else
	bad "the emitted files exist" "missing: ${missing:-$manifest}" "$(ls "$tmp/generated" 2>&1)"
fi

# One process's tune of the same file: the same cells, the same statuses.
AOTC_CACHE_DIR=$tmp/cache-single "$aotc" tune "$kernel" --arch host --db "$tmp/single-db" --quiet >"$tmp/log" 2>&1 ||
	bad "the single-process tune exits 0" "$tmp/log"
python3 "$here/cells.py" list "$tmp"/single-db/sweep.*.json >"$tmp/single.cells"
python3 "$here/cells.py" list "$tmp"/array-db/sweep.*.json >"$tmp/array.cells"
n=$(wc -l <"$tmp/single.cells")
if [ "$n" -eq 144 ] && diff -u "$tmp/single.cells" "$tmp/array.cells" >"$tmp/cells.diff"; then
	ok "the merged shards have one process's 144 cells and statuses"
else
	bad "the merged shards have one process's 144 cells and statuses" "$n cells in one process's tune" \
		"$tmp/cells.diff"
fi
finish
