#!/usr/bin/env python3
"""Compares a fresh database with the committed one on the shapes both hold:
per-shape winner (same, or how much slower the committed winner is in the
fresh measurements), and the ratio fresh/committed of every configuration's
time (geomean, and the spread), for bench/portable/recheck-h200.sh.

    compare.py COMMITTED.json FRESH.json
"""
import json, math, sys

def load(path):
    db = json.load(open(path))
    names = [c["name"] for c in db["configs"]]
    t = {}
    for m in db["measurements"]:
        if m["status"] == "ok":
            t[(tuple(db["shapes"][m["shape"]]), names[m["config"]])] = m["time_ms"]
    return db["source_hash"], t

h_old, old = load(sys.argv[1])
h_new, new = load(sys.argv[2])
print("source hash: committed %s, fresh %s%s" % (h_old, h_new, " (same)" if h_old == h_new else " (DIFFERENT)"))
shapes = sorted({s for s, _ in new} & {s for s, _ in old})
ratios, same, slow = [], 0, []
for s in shapes:
    cells = {c: t for (sh, c), t in new.items() if sh == s and (sh, c) in old}
    ratios += [t / old[(s, c)] for c, t in cells.items()]
    best_new = min(cells, key=cells.get)
    best_old = min(cells, key=lambda c: old[(s, c)])
    same += best_new == best_old
    slow.append(cells[best_old] / cells[best_new])
    print("  %-22s committed best %-28s fresh best %-28s committed best in fresh times: %.3fx"
          % ("x".join(map(str, s)), best_old, best_new, cells[best_old] / cells[best_new]))
ratios.sort()
g = math.exp(sum(map(math.log, ratios)) / len(ratios))
q = lambda p: ratios[min(len(ratios) - 1, int(p * len(ratios)))]
print("%d shapes, %d cells: same winner on %d; committed winner's slowdown in fresh times geomean %.3f, worst %.3f"
      % (len(shapes), len(ratios), same, math.exp(sum(map(math.log, slow)) / len(slow)), max(slow)))
print("fresh/committed time per cell: geomean %.3f, 5%% %.3f, median %.3f, 95%% %.3f"
      % (g, q(0.05), q(0.5), q(0.95)))
