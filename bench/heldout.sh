#!/bin/sh
# The dispatch against the per-shape best on held-out shapes measured on the
# H200, offline (aotc eval without a GPU evaluates committed measurements):
# every selector aotc eval prints, for each committed held-out set.
#   bench/heldout.sh [AOTC]     (default build/aotc; run from the repository root)
aotc=${1:-build/aotc}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
run() { # name source training-db-dir held-out-db shapes kernel
	mkdir -p "$tmp/$1/eval"
	cp "$3"/*.cuda_NVIDIA_H200_13.0.json "$tmp/$1/" 2>/dev/null
	cp "$4" "$tmp/$1/eval/$6.cuda_NVIDIA_H200_13.0.json"
	echo "== $1 ($5)"
	"$aotc" eval "$2" --arch sm90 --db "$tmp/$1" --shapes "$5" 2>/dev/null | sed -n '/^slowdown vs oracle/,$p'
}
run sgemm-offgrid templates/sgemm.cu templates bench/offgrid/sgemm.offgrid.heldout.json bench/offgrid/sgemm.heldout.json sgemm
run sgemm-grid templates/sgemm.cu templates templates/eval/sgemm.cuda_NVIDIA_H200_13.0.json templates/sgemm.heldout.json sgemm
run softmax-offgrid templates/softmax.cu templates bench/offgrid/softmax.offgrid.heldout.json bench/offgrid/softmax.heldout.json softmax
run softmax-grid templates/softmax.cu templates templates/eval/softmax.cuda_NVIDIA_H200_13.0.json templates/softmax.heldout.json softmax
run tutorial tests/tutorial/sgemm_tutorial.cu tests/tutorial tests/tutorial/eval/sgemm_2d.cuda_NVIDIA_H200_13.0.json tests/tutorial/sgemm_tutorial.heldout.json sgemm_2d
