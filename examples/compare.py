#!/usr/bin/env python3
"""Compare the demo's launcher times with the per-shape best variant.

    python3 compare.py demo.txt [--db-dir ../templates/eval]

Reads the demo's RESULT lines and, for every held-out shape, the committed
held-out database (templates/eval/<kernel>.<hardware>.json, where `aotc eval`
timed every variant on those shapes on an H200).  Per shape it prints

  launcher ms   what the demo measured for the emitted launcher;
  db chosen     the database's time for the variant the launcher chose;
  db best       the fastest variant in the database for that shape;
  launch/best   launcher ms / db best (this run against aotc's earlier run);
  chosen/best   db chosen / db best (the dispatch's loss, both from one run).

The two ratios differ by how well this run's timing matches the database's
(same method: CUDA events, median, L2 flushed; different process and day).
Shapes not in the database (the demo's own edge shapes) show '-'.
"""
import argparse
import glob
import json
import math
import os
import shlex
import sys

SHAPE_ARGS = {"sgemm": ["M", "N", "K"], "softmax": ["rows", "cols"]}


def parse_results(path):
    out = []
    with open(path) as f:
        for line in f:
            if not line.startswith("RESULT "):
                continue
            kv = {}
            for tok in shlex.split(line[len("RESULT "):]):
                k, _, v = tok.partition("=")
                kv[k] = v
            out.append(kv)
    return out


def load_db(db_dir, kernel):
    paths = sorted(glob.glob(os.path.join(db_dir, kernel + ".*.json")))
    if not paths:
        return None, None
    with open(paths[0]) as f:
        db = json.load(f)
    names = [c["name"] for c in db["configs"]]
    shapes = [tuple(s) for s in db["shapes"]]
    per_shape = {s: {} for s in shapes}   # shape -> {variant name: ms}
    for m in db["measurements"]:
        if m.get("status") == "ok" and m.get("time_ms") is not None:
            per_shape[shapes[m["shape"]]][names[m["config"]]] = m["time_ms"]
    return per_shape, paths[0]


def fnum(x, fmt="%.4f"):
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else fmt % x


def geomean(xs):
    xs = [x for x in xs if x is not None and x > 0 and math.isfinite(x)]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("demo_output")
    ap.add_argument("--db-dir", default=os.path.join(here, "..", "templates", "eval"))
    a = ap.parse_args()

    results = parse_results(a.demo_output)
    if not results:
        print("compare.py: no RESULT lines in %s (did the demo run?)" % a.demo_output)
        return 1

    for kernel in ("sgemm", "softmax"):
        rows = [r for r in results if r.get("kernel") == kernel]
        if not rows:
            continue
        per_shape, path = load_db(a.db_dir, kernel)
        print("\n%s: launcher against the per-shape best of %s" % (
            kernel, os.path.relpath(path) if path else "(no database found in %s)" % a.db_dir))
        args = SHAPE_ARGS[kernel]
        hdr = "%-18s %-28s %3s %11s %11s %11s %-28s %11s %11s" % (
            "shape", "chosen variant", "ok", "launcher ms", "db chosen", "db best",
            "best variant", "launch/best", "chosen/best")
        print(hdr)
        print("-" * len(hdr))
        r_launch, r_chosen = [], []
        for r in rows:
            shape = tuple(int(r[k]) for k in args)
            ms = float(r["ms"]) if r.get("ms") not in (None, "", "nan") else None
            entry = per_shape.get(shape) if per_shape else None
            chosen = best = best_name = None
            if entry:
                chosen = entry.get(r["variant"])
                best_name = min(entry, key=entry.get)
                best = entry[best_name]
            lb = ms / best if ms is not None and best else None
            cb = chosen / best if chosen is not None and best else None
            if entry:
                r_launch.append(lb)
                r_chosen.append(cb)
            print("%-18s %-28s %3s %11s %11s %11s %-28s %11s %11s" % (
                "x".join(str(s) for s in shape), r["variant"], r.get("ok", "?"),
                fnum(ms), fnum(chosen), fnum(best), best_name or "-",
                fnum(lb, "%.3f"), fnum(cb, "%.3f")))
        n = sum(1 for x in r_launch if x is not None)
        print("geomean over %d held-out shapes: launch/best %s, chosen/best %s; worst launch/best %s" % (
            n, fnum(geomean(r_launch), "%.3f"), fnum(geomean(r_chosen), "%.3f"),
            fnum(max([x for x in r_launch if x is not None], default=None), "%.3f")))
    fails = [r for r in results if r.get("ok") != "1"]
    if fails:
        print("\n%d result(s) did not pass their check (ok=0)" % len(fails))
    return 0


if __name__ == "__main__":
    sys.exit(main())
