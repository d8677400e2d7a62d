#!/usr/bin/env python3
"""Per-shape best found by a search against an exhaustive database's oracle.

    bench/search/compare.py EXHAUSTIVE.json SEARCH.json

For each shape: the best configuration the search found, its time in the
exhaustive run over the exhaustive best (so both are timed in one run), and
its own time over the exhaustive best; then the geomean and worst of each.
"""
import json
import math
import sys


def ok_times(db):
    t = {}
    for m in db["measurements"]:
        if m["status"] == "ok":
            t[(db["configs"][m["config"]]["name"], tuple(db["shapes"][m["shape"]]))] = m["time_ms"]
    return t


def main():
    ex, se = (json.load(open(p)) for p in sys.argv[1:3])
    te, ts = ok_times(ex), ok_times(se)
    ran = sum(m["status"] not in ("invalid", "skipped") for m in se["measurements"])
    cells = len(ex["configs"]) * len(ex["shapes"])
    print("search measured %d of %d cells (%.1f%%)" % (ran, cells, 100.0 * ran / cells))
    same, own = [], []
    for s in (tuple(r) for r in ex["shapes"]):
        oracle = min(v for (c, ss), v in te.items() if ss == s)
        t, c = min((v, c) for (c, ss), v in ts.items() if ss == s)
        same.append(te[(c, s)] / oracle)
        own.append(t / oracle)
        print("  %-18s %-48s %.4f  %.4f" % ("x".join(map(str, s)), c, same[-1], own[-1]))
    g = lambda r: math.exp(sum(map(math.log, r)) / len(r))
    print("best found, timed in the exhaustive run: geomean %.4f, worst %.4f" % (g(same), max(same)))
    print("best found, its own time:                geomean %.4f, worst %.4f" % (g(own), max(own)))


main()
