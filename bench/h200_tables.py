#!/usr/bin/env python3
"""Markdown tables for docs/PERFORMANCE.md from the committed H200 databases
and the vendor baselines measured beside them:

  bench/h200_tables.py templates/sgemm.cuda_NVIDIA_H200_13.0.json \
      templates/softmax.cuda_NVIDIA_H200_13.0.json bench/baselines-h200.json
"""
import json
import sys


def best_per_shape(db):
    names = [c["name"] for c in db["configs"]]
    best = {}
    status = {}
    for m in db["measurements"]:
        s = m["shape"]
        status.setdefault(s, {}).setdefault(m["status"], 0)
        status[s][m["status"]] += 1
        if m["status"] == "ok" and (s not in best or m["time_ms"] < best[s][1]):
            best[s] = (names[m["config"]], m["time_ms"])
    return best, status


def main():
    sgemm, softmax, base = (json.load(open(p)) for p in sys.argv[1:4])
    cublas = {(b["M"], b["N"], b["K"]): b for b in base["sgemm"]}
    best, _ = best_per_shape(sgemm)
    print("| M | N | K | best variant | ms | TFLOP/s | cuBLAS ms | cuBLAS TFLOP/s | aotc / cuBLAS |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    ratios = []
    for i, (m, n, k) in enumerate(sgemm["shapes"]):
        name, ms = best[i]
        tf = 2 * m * n * k / ms / 1e9
        c = cublas[(m, n, k)]
        ratios.append(c["ms"] / ms)
        print(f"| {m} | {n} | {k} | `{name}` | {ms:.4f} | {tf:.1f} | {c['ms']:.4f} | {c['tflops']:.1f} | {c['ms'] / ms:.2f} |")
    g = 1
    for r in ratios:
        g *= r
    print(f"\nGeometric mean of cuBLAS time / aotc time over {len(ratios)} shapes: {g ** (1 / len(ratios)):.2f}\n")
    torch = {(b["rows"], b["cols"]): b for b in base["softmax"]}
    best, _ = best_per_shape(softmax)
    print("| rows | cols | best variant | ms | GB/s | torch ms | torch GB/s | aotc / torch |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    ratios = []
    for i, (r, c) in enumerate(softmax["shapes"]):
        name, ms = best[i]
        gb = 2 * 4 * r * c / ms / 1e6
        t = torch[(r, c)]
        ratios.append(t["ms"] / ms)
        print(f"| {r} | {c} | `{name}` | {ms:.4f} | {gb:.0f} | {t['ms']:.4f} | {t['gbps']:.0f} | {t['ms'] / ms:.2f} |")
    g = 1
    for x in ratios:
        g *= x
    print(f"\nGeometric mean of torch time / aotc time over {len(ratios)} shapes: {g ** (1 / len(ratios)):.2f}")


if __name__ == "__main__":
    main()
