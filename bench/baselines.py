#!/usr/bin/env python3
"""Vendor baselines for the shipped templates, timed like aotc times variants:
CUDA events around each call, L2 flushed before each timed call, median.

  sgemm:   torch.matmul on fp32 with TF32 off (cuBLAS SGEMM), C = A @ B
  softmax: torch.softmax(x, dim=-1) on fp32 rows

Usage: bench/baselines.py SGEMM_SHAPES.json SOFTMAX_SHAPES.json > baselines.json
Runs on a machine with a CUDA GPU and PyTorch."""
import json
import sys

import torch


def timed(fn, flush, reps=20, warmup=3):
    for _ in range(warmup):
        fn()
    start = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    stop = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    for i in range(reps):
        flush.zero_()
        start[i].record()
        fn()
        stop[i].record()
    torch.cuda.synchronize()
    t = sorted(s.elapsed_time(e) for s, e in zip(start, stop))
    return t[len(t) // 2]


def main():
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    dev = torch.device("cuda")
    l2 = torch.cuda.get_device_properties(dev).L2_cache_size
    flush = torch.empty(2 * l2 // 4, dtype=torch.float32, device=dev)
    out = {"device": torch.cuda.get_device_name(dev), "torch": torch.__version__,
           "sgemm": [], "softmax": []}
    for s in json.load(open(sys.argv[1])):
        m, n, k = s["M"], s["N"], s["K"]
        a = torch.rand(m, k, device=dev) * 2 - 1
        b = torch.rand(k, n, device=dev) * 2 - 1
        c = torch.empty(m, n, device=dev)
        ms = timed(lambda: torch.matmul(a, b, out=c), flush)
        out["sgemm"].append({"M": m, "N": n, "K": k, "ms": ms,
                             "tflops": 2 * m * n * k / ms / 1e9})
    for s in json.load(open(sys.argv[2])):
        r, c = s["rows"], s["cols"]
        x = torch.rand(r, c, device=dev) * 2 - 1
        y = torch.empty_like(x)
        ms = timed(lambda: torch.softmax(x, dim=-1, out=y), flush)
        out["softmax"].append({"rows": r, "cols": c, "ms": ms,
                               "gbps": 2 * 4 * r * c / ms / 1e6})
        del x, y
    json.dump(out, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
