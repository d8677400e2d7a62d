#!/usr/bin/env python3
"""Tunes with and without the alternation of close contenders, compared.

    bench/noise/compare.py [--aotc build/aotc] [-j N] [--source templates/softmax.cu]
                           [--reference DB] [--json OUT.json] [--heldout NAME=DB]...
                           WITH1 WITH2 WITHOUT1 WITHOUT2

Run from the repository root, on this CPU, after tools/device-families.sh
noise saved the four databases (two back-to-back tunes of softmax with the
default alternation, two with --alternate 0). Prints:

  1. each database: hardware, method.alternation, shapes, cells, alternated
     cells and shapes, the winners' median spread;
  2. per pair (within each setting, and across), on how many shapes the two
     agree on the winner within the recorded noise (tests/tuner/noise_agree.py)
     or name the same one, and what a tune's winner costs by the other's
     times: per shape the time the other tune measured for this winner over
     the other's own winner (geomean and worst, both directions pooled);
  3. the held-out speed of each database's dispatch (and of --reference,
     default the committed templates/ database): `aotc eval` without a
     device on the committed held-out measurements, the slowdown of the
     emitted select()'s choice against the per-shape best of those
     measurements, geomean / p90 / worst, for the held-out set between grid
     points (templates/eval/) and the off-grid one (bench/offgrid/).

Exits 0 whatever the figures; 1 when something cannot be computed; 2 on bad
arguments. `bench/noise/compare.sh` runs it."""
import argparse
import concurrent.futures
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
from evaloffline import EvalError, eval_offline  # noqa: E402
from heldout import geomean  # noqa: E402
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "tuner"))
from noise_agree import spread  # noqa: E402  (tuner/db.c's meas_spread, once)

AGREE = os.path.join(HERE, "..", "..", "tests", "tuner", "noise_agree.py")
HELDOUT = [("between grid points", "templates/eval/softmax.cuda_NVIDIA_H200_13.0.json"),
           ("off-grid", "bench/offgrid/softmax.offgrid.heldout.json")]
REFERENCE = "templates/softmax.cuda_NVIDIA_H200_13.0.json"


def times(db):
    """{shape row: {configuration name: (time_ms, measurement)}} of the ok cells"""
    names = [c["name"] for c in db["configs"]]
    out = {}
    for m in db["measurements"]:
        if m["status"] == "ok":
            out.setdefault(tuple(db["shapes"][m["shape"]]), {})[names[m["config"]]] = (m["time_ms"], m)
    return out


def describe(tag, path, db):
    t = times(db)
    winners = [min(c.values(), key=lambda x: x[0])[1] for c in t.values()]
    alt = [m for m in db["measurements"] if m.get("alternated")]
    alt_shapes = {m["shape"] for m in alt}
    a = db["method"].get("alternation")
    print("   %-9s %s: %s, alternation %s, %d shapes, %d cells, %d alternated on %d shapes, winners' median spread %.1f %%"
          % (tag, path, db["hardware"]["id"], json.dumps(a) if a else "not recorded", len(db["shapes"]),
             len(db["measurements"]), len(alt), len(alt_shapes),
             100 * statistics.median(spread(w) for w in winners) if winners else float("nan")))
    return {"tag": tag, "path": path, "hardware": db["hardware"]["id"], "alternation": a,
            "shapes": len(db["shapes"]), "alternated_cells": len(alt), "alternated_shapes": len(alt_shapes)}


def pair(a_path, b_path, da, db):
    """noise_agree.py's verdict and the cost of one tune's winners by the
    other's times."""
    p = subprocess.run([sys.executable, AGREE, a_path, b_path], capture_output=True, text=True)
    if p.returncode != 0:
        raise EvalError("noise_agree.py %s %s: %s" % (a_path, b_path, p.stderr[-500:]))
    verdict = json.loads(p.stdout)
    ta, tb = times(da), times(db)
    cost = []
    for x, y in ((ta, tb), (tb, ta)):
        for row, cx in x.items():
            cy = y.get(row)
            if not cy:
                continue
            wx = min(cx, key=lambda n: cx[n][0])
            wy = min(cy, key=lambda n: cy[n][0])
            if wx in cy:
                cost.append((cy[wx][0] / cy[wy][0], row))
    verdict["cost_geomean"] = geomean([c for c, _ in cost]) if cost else float("nan")
    verdict["cost_worst"], worst_row = max(cost) if cost else (float("nan"), ())
    verdict["cost_worst_at"] = list(worst_row)
    return verdict


def heldout(aotc, source, train_path, held_path):
    ev = eval_offline(aotc, source, "softmax", "sm90", train_path, held_path, "%s on %s" % (train_path, held_path))
    return {k: ev["stats"].get(k) for k in ("aotc decision tree", "best it can return", "best single variant")}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--aotc", default="build/aotc")
    ap.add_argument("-j", type=int, default=os.cpu_count() or 1, help="aotc evals at once")
    ap.add_argument("--source", default="templates/softmax.cu")
    ap.add_argument("--reference", default=REFERENCE, help="a database evaluated beside them ('' for none)")
    ap.add_argument("--json", help="write the figures here too")
    ap.add_argument("--heldout", action="append", metavar="NAME=DB",
                    help="a held-out database (the shapes and measurements eval reads) instead of the committed "
                         "H200 ones; repeatable")
    ap.add_argument("dbs", nargs=4, metavar="DB", help="WITH1 WITH2 WITHOUT1 WITHOUT2")
    a = ap.parse_args()
    if not os.path.isfile(a.source):
        ap.error("no %s: run from the repository root" % a.source)
    if a.j < 1:
        ap.error("-j needs a positive number")
    if a.heldout and any("=" not in h for h in a.heldout):
        ap.error("--heldout takes NAME=DB")
    aotc = os.path.abspath(a.aotc) if os.sep in a.aotc else a.aotc
    tags = ["with 1", "with 2", "without 1", "without 2"]
    entries = list(zip(tags, a.dbs)) + ([("reference", a.reference)] if a.reference else [])
    failed = False
    try:
        dbs = {tag: json.load(open(path)) for tag, path in entries}
    except (OSError, ValueError) as e:
        print("error: %s" % e)
        return 1
    out = {"databases": [], "pairs": [], "heldout": []}

    print("== the databases")
    hashes = {d["source_hash"] for d in dbs.values()}
    for tag, path in entries:
        out["databases"].append(describe(tag, path, dbs[tag]))
    if len(hashes) > 1:
        print("   warning: the databases are of %d versions of the source (%s)" % (len(hashes), ", ".join(sorted(hashes))))
    print()

    print("== winners: two tunes agree (same winner, or within the recorded noise, at least 3 %)")
    print("   %-24s %7s %7s %12s %16s  %s" % ("pair", "shapes", "agree", "same winner", "cost geomean", "cost worst"))
    for x, y in (("with 1", "with 2"), ("without 1", "without 2"), ("with 1", "without 1"), ("with 2", "without 2"),
                 ("with 1", "without 2"), ("with 2", "without 1")):
        if sorted(map(tuple, dbs[x]["shapes"])) != sorted(map(tuple, dbs[y]["shapes"])):
            print("   %-24s not compared: the two tuned different shapes" % (x + " / " + y))
            continue
        try:
            v = pair(dict(entries)[x], dict(entries)[y], dbs[x], dbs[y])
        except EvalError as e:
            print("   %s / %s: error: %s" % (x, y, e))
            failed = True
            continue
        v["pair"] = [x, y]
        out["pairs"].append(v)
        print("   %-24s %7d %7d %12d %16.4f  %.4f (%s)" % (x + " / " + y, v["shapes"], v["agree"], v["same_winner"],
                                                        v["cost_geomean"], v["cost_worst"],
                                                        " ".join(map(str, v["cost_worst_at"]))))
        for err in v["errors"][:3]:
            print("      %s" % err)
    print("   (cost: a tune's winner timed by the other tune, over the other's winner; both directions pooled)")
    print()

    sets = HELDOUT
    if a.heldout:
        sets = [tuple(h.split("=", 1)) for h in a.heldout]
    print("== held-out speed of each dispatch (aotc eval on %s)"
          % ("the committed H200 held-out measurements" if not a.heldout else ", ".join(h for _, h in sets)))
    jobs = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=a.j) as pool:
        for tag, path in entries:
            for set_name, held in sets:
                jobs.append((tag, set_name, held, pool.submit(heldout, aotc, a.source, path, held)))
        results = []
        for tag, set_name, held, fut in jobs:
            try:
                results.append((tag, set_name, held, fut.result()))
            except (EvalError, OSError) as e:
                print("   %s, %s: error: %s" % (tag, set_name, e))
                failed = True
    hw = {tag: d["hardware"]["id"] for tag, d in dbs.items()}
    print("   %-10s %-20s %8s %8s %8s %7s %10s %12s" % ("database", "held-out set", "geomean", "p90", "worst", "misses",
                                                      "bound", "best single"))
    for tag, set_name, held, st in results:
        t, cap, single = st["aotc decision tree"], st["best it can return"], st["best single variant"]
        print("   %-10s %-20s %8.3f %8.3f %8.3f %7d %10.3f %12.3f" % (
            tag, set_name, t["geomean"], t["p90"], t["worst"], int(t["misses"] + t["failed"]),
            cap["geomean"] if cap else float("nan"), single["geomean"] if single else float("nan")))
        out["heldout"].append({"database": tag, "set": set_name, "heldout_db": held, **st})
    held_hw = {json.load(open(h))["hardware"]["id"] for _, h in sets}
    other = sorted({h for h in hw.values() if h not in held_hw})
    if other:
        print("   warning: %s tuned on %s, the held-out measurements on %s: the held-out figures compare "
              "choices made on one GPU with times of another" % (", ".join(t for t in hw if hw[t] in other),
                                                                 ", ".join(other), ", ".join(sorted(held_hw))))
    print("   (bound: the best variant select() can return at each shape; best single: one variant everywhere)")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=1)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
