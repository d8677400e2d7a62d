#!/bin/bash
# Tune one kernel as a Slurm job array, one GPU per task, then emit once.
#
#   sbatch docs/examples/slurm-tune.sh kernel.cu sm90
#
# Each task takes part I of N of the configurations (aotc tune --shard I/N)
# and writes its own database, <kernel>.<hardware id>.shard<I>of<N>.json, in
# the shared --db directory; the emit job merges them. Tasks must run on the
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
# The last task to finish emits (or run `aotc emit` yourself afterwards;
# it warns about any shard still missing).
if [ "$(ls "$db"/*.shard*of"$shards".json 2>/dev/null | wc -l)" -eq "$shards" ]; then
	aotc emit "$kernel" --arch "$arch" --db "$db" -o "${AOTC_OUT:-generated}"
fi
