#!/usr/bin/env python3
"""The cuBLAS extern on the H200 (issue 13): the dispatch learnt from the
database with sgemm_cublas, set against the per-shape best of (variants and
cuBLAS), cuBLAS alone, and the dispatch learnt from the same database without
the routine (the template alone), on held-out shapes.

    bench/extern/compare.py AOTC TRAIN_DB HELDOUT_DB SHAPES.json

Runs `aotc eval` twice without a GPU (it evaluates the measurements in the
held-out database): once as tuned, once on copies of both databases with the
routine's configuration and measurements taken out. Prints one table."""
import json, math, os, re, shutil, subprocess, sys, tempfile

aotc, train, heldout, shapes = sys.argv[1:5]
EXT = "sgemm_cublas"


def strip(src, dst):
    db = json.load(open(src))
    drop = {i for i, c in enumerate(db["configs"]) if c.get("extern")}
    keep = [i for i in range(len(db["configs"])) if i not in drop]
    new = {old: n for n, old in enumerate(keep)}
    db["configs"] = [db["configs"][i] for i in keep]
    db["measurements"] = [dict(m, config=new[m["config"]]) for m in db["measurements"]
                          if m["config"] not in drop]
    json.dump(db, open(dst, "w"))


def run_eval(tdb, hdb):
    d = tempfile.mkdtemp()
    os.makedirs(d + "/eval")
    name = os.path.basename(train)
    shutil.copy(tdb, d + "/" + name)
    shutil.copy(hdb, d + "/eval/" + name)
    out = subprocess.run([aotc, "eval", "templates/sgemm.cu", "--arch", "sm90", "--db", d,
                          "--shapes", shapes], capture_output=True, text=True, check=True).stdout
    shutil.rmtree(d)
    chosen = {}
    for line in out.splitlines():
        m = re.match(r"\s+(M=\d+ N=\d+ K=\d+)\s+(.*?)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)$", line)
        if m:
            chosen[m.group(1)] = m.group(2)
    return chosen


db = json.load(open(heldout))
names = [c["name"] for c in db["configs"]]
times = {}
for m in db["measurements"]:
    if m["status"] == "ok":
        s = db["shapes"][m["shape"]]
        times.setdefault("M=%d N=%d K=%d" % tuple(s), {})[names[m["config"]]] = m["time_ms"]

with_ext = run_eval(train, heldout)
tmp = tempfile.mkdtemp()
strip(train, tmp + "/t.json")
strip(heldout, tmp + "/h.json")
without = run_eval(tmp + "/t.json", tmp + "/h.json")
shutil.rmtree(tmp)

rows = []
for shape in with_ext:
    t = times[shape]
    best = min(t.values())
    best_tpl = min(v for k, v in t.items() if k != EXT)
    rows.append((shape, t[with_ext[shape]] / best, t[EXT] / t[with_ext[shape]],
                 t[without[shape]] / t[with_ext[shape]], t[EXT] / best_tpl, with_ext[shape]))
g = lambda xs: math.exp(sum(map(math.log, xs)) / len(xs))
print("%-22s %9s %9s %9s %12s  %s" % ("shape", "dispatch/", "cuBLAS/", "template/", "cuBLAS/best", "chosen"))
print("%-22s %9s %9s %9s %12s" % ("", "best", "dispatch", "dispatch", "variant"))
for r in rows:
    print("%-22s %9.3f %9.3f %9.3f %12.3f  %s" % r)
print("%-22s %9.3f %9.3f %9.3f %12.3f" % ("geomean", *(g([r[i] for r in rows]) for i in range(1, 5))))
print("%-22s %9.3f %9.3f %9.3f %12.3f" % ("worst / max", max(r[1] for r in rows), max(r[2] for r in rows),
                                          max(r[3] for r in rows), max(r[4] for r in rows)))
print("%-22s %9s %9.3f %9.3f %12.3f" % ("min", "", min(r[2] for r in rows), min(r[3] for r in rows),
                                        min(r[4] for r in rows)))
