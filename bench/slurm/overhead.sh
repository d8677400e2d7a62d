#!/bin/sh
# What a Slurm array costs over one process (docs/PERFORMANCE.md, "A Slurm
# array on this CPU"): tests/scale/sweep_host.cpp (36 configurations x 4
# shapes) tuned and emitted RUNS times each way, every run with a cold
# compile cache and a fresh database, wall seconds:
#   one process   aotc tune, then aotc emit
#   8 shards      aotc tune --shard I/8, as many at a time as there are
#                 CPUs (xargs -P), then aotc emit: the sharding without Slurm
#   Slurm array   sbatch --wait docs/examples/slurm-tune.sh on a single-node
#                 Slurm (tests/scale/slurm-cluster.sh; the machine's CPUs,
#                 one task per CPU), from sbatch to the emitted files'
#                 time (the last task's emit), and to sbatch's return (it
#                 polls every 2 s)
# then the median of each; then the array RUNS times again on a cluster
# whose scheduler starts batch jobs at once (SchedulerParameters=
# batch_sched_delay=0; by default it waits up to 3 s), medians only.
# AOTC_HOST_FLUSH_BYTES defaults to 64 KiB, as in the tests: the times are
# the tuner's and Slurm's, not the cache flush's.
# Usage: bench/slurm/overhead.sh AOTC [RUNS]
aotc=$1
runs=${2:-3}
case $aotc in /*) ;; *) aotc=$(pwd)/$aotc ;; esac
root=$(cd "$(dirname "$0")/../.." && pwd)
kernel=$root/tests/scale/sweep_host.cpp
tmp=$(mktemp -d)
. "$root/tests/scale/slurm-cluster.sh"
trap 'slurm_stop; rm -rf "$tmp"' EXIT
trap 'exit 1' INT TERM HUP PIPE
export AOTC_HOST_FLUSH_BYTES=${AOTC_HOST_FLUSH_BYTES:-65536}
cpus=$(nproc)

now() { date +%s.%N; }
# secs FROM TO: TO - FROM, in seconds with one decimal
secs() { echo "$1 $2" | awk '{ printf "%.1f", $2 - $1 }'; }
# newest FILE...: the newest modification time of FILE..., in seconds
newest() { python3 -c 'import os, sys; print(max(os.stat(f).st_mtime for f in sys.argv[1:]))' "$@"; }
# medians FILE: the median of each column of FILE
medians() {
	python3 -c '
import statistics, sys
rows = [list(map(float, l.split())) for l in open(sys.argv[1])]
print("\t".join(f"{statistics.median(c):.1f}" for c in zip(*rows)))' "$1"
}
# array DIR: the array into DIR/db and DIR/out on the running cluster; sets
# array (to the emitted files' time) and waited (to sbatch's return).
array() {
	t0=$(now)
	(cd "$tmp/job" && PATH=$tmp/bin:$PATH AOTC_DB=$1/db AOTC_OUT=$1/out AOTC_CACHE_DIR=$1/cache \
		sbatch --wait --quiet "$root/docs/examples/slurm-tune.sh" "$kernel" host) || exit 1
	waited=$(secs "$t0" "$(now)")
	array=$(secs "$t0" "$(newest "$1"/out/*)")
}

mkdir -p "$tmp/slurm" "$tmp/slurm-nodelay" "$tmp/job" "$tmp/bin"
ln -s "$aotc" "$tmp/bin/aotc"
slurm_start "$tmp/slurm" || { cat "$tmp/slurm/why"; exit 1; }

echo "$(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), $cpus CPUs; load average $(cut -d' ' -f1-3 /proc/loadavg)"
printf 'run\tone process\t8 shards (-P %s)\tSlurm array\tsbatch --wait\n' "$cpus"
: >"$tmp/figures"
r=1
while [ "$r" -le "$runs" ]; do
	d=$tmp/run$r
	t0=$(now)
	AOTC_CACHE_DIR=$d/cache-one "$aotc" tune "$kernel" --arch host --db "$d/one" --quiet &&
		AOTC_CACHE_DIR=$d/cache-one "$aotc" emit "$kernel" --arch host --db "$d/one" -o "$d/one-out" >/dev/null 2>&1 ||
		exit 1
	one=$(secs "$t0" "$(now)")

	t0=$(now)
	seq 1 8 | AOTC_CACHE_DIR=$d/cache-shards xargs -P "$cpus" -I{} \
		"$aotc" tune "$kernel" --arch host --db "$d/shards" --shard {}/8 --quiet &&
		AOTC_CACHE_DIR=$d/cache-shards "$aotc" emit "$kernel" --arch host --db "$d/shards" -o "$d/shards-out" >/dev/null 2>&1 ||
		exit 1
	shards=$(secs "$t0" "$(now)")

	array "$d/array"
	printf '%s\t%s\t%s\t%s\t%s\n' "$r" "$one" "$shards" "$array" "$waited"
	printf '%s %s %s %s\n' "$one" "$shards" "$array" "$waited" >>"$tmp/figures"
	r=$((r + 1))
done
printf 'median\t%s\n' "$(medians "$tmp/figures")"

slurm_stop
slurm_start "$tmp/slurm-nodelay" batch_sched_delay=0 || { cat "$tmp/slurm-nodelay/why"; exit 1; }
: >"$tmp/figures"
r=1
while [ "$r" -le "$runs" ]; do
	array "$tmp/nodelay$r"
	printf '%s %s\n' "$array" "$waited" >>"$tmp/figures"
	r=$((r + 1))
done
set -- $(medians "$tmp/figures")
echo "with batch_sched_delay=0, medians of $runs: the Slurm array $1 s, sbatch --wait $2 s"
echo "load average $(cut -d' ' -f1-3 /proc/loadavg)"
