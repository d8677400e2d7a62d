#!/bin/bash
# Tune one kernel as a Slurm job array, one GPU per task, then emit once.
#
#   sbatch docs/examples/slurm-tune.sh kernel.cu sm90
#
# Each task takes part I of N of the configurations (aotc tune --shard I/N)
# and writes its own database, <kernel>.<hardware id>.shard<I>of<N>.json, in
# the shared --db directory; the task that finishes last merges them and
# emits (docs/database.md, tests/scale/slurm.sh). Tasks must run on the
# same kind of GPU (the hardware id is part of the file name; emit merges
# the databases of the requested architecture).
#SBATCH --job-name=aotc-tune
#SBATCH --array=1-8
#SBATCH --gres=gpu:1
#SBATCH --time=02:00:00
set -eu
kernel=${1:?kernel file}
arch=${2:-sm90}
shards=8            # = the --array size
db=${AOTC_DB:-$PWD/aotc-db}
# A budget per task keeps a stuck node from holding the array; a rerun of a
# task resumes where it stopped.
aotc tune "$kernel" --arch "$arch" --db "$db" --shard "$SLURM_ARRAY_TASK_ID/$shards" \
	--budget "${AOTC_BUDGET:-90m}" --quiet
# The task that ends the last tune emits, once: each task marks its tune
# done, and the one that sees all the marks takes the lock (mkdir is atomic)
# and removes them when it has emitted. A shard file is no mark: it exists
# from the tune's start. Where a task failed, nobody emits: rerun the task
# (scontrol requeue) or run `aotc emit` yourself; it names missing shards.
marks=$db/slurm-$SLURM_ARRAY_JOB_ID
mkdir -p "$marks"
touch "$marks/tuned.$SLURM_ARRAY_TASK_ID"
set -- "$marks"/tuned.*
if [ $# -eq "$shards" ] && mkdir "$marks/emit" 2>/dev/null; then
	aotc emit "$kernel" --arch "$arch" --db "$db" -o "${AOTC_OUT:-generated}"
	rm -r "$marks"
fi
