#!/usr/bin/env python3
# A made-up sm90 database for one kernel, so that `aotc emit` writes the
# files run-on-h200.sh builds its drivers against without a GPU: every
# configuration on every shape of a --shapes file, with times from a
# formula (NOT measured) in which larger configurations win on larger
# shapes, so that the dispatch holds several variants.
# Usage: fake-db.py AOTC SOURCE KERNEL SHAPES.json DB_DIR
import json, math, re, subprocess, sys

aotc, src, kernel, shapes_file, out = sys.argv[1:]
ir = json.loads(subprocess.run([aotc, "parse", src], capture_output=True, text=True,
                               check=True).stdout)
k = [k for k in ir["kernels"] if k["name"] == kernel][0]
names = [n for n in subprocess.run([aotc, "configs", src, "--kernel", kernel], capture_output=True,
                                   text=True, check=True).stdout.split("\n")
         if n.startswith(kernel + "<") or n.startswith(kernel + "[")]
values = [[int(v) for v in re.findall(r"(?:[<,\[ ]|=)(-?\d+)", n[len(kernel):])] for n in names]
params = [p["name"] for p in k["params"]]
shape_args = sorted((s["param"] for s in k["shapes"]), key=params.index)  # as the tuner orders them
rows = json.load(open(shapes_file))
shapes = [[s[a] for a in shape_args] for s in rows]
sizes = [math.prod(s) for s in shapes]
lo, hi = math.log(min(sizes)), math.log(max(sizes))
ms = []
for c in range(len(names)):
    for i, size in enumerate(sizes):
        best = round((len(names) - 1) * (math.log(size) - lo) / max(hi - lo, 1e-9))
        t = round(0.002 + size * 1e-9 * (1 + 0.1 * abs(c - best)), 6)
        ms.append({"config": c, "shape": i, "status": "ok", "time_ms": t, "samples": [t, t, t],
                   "error": 0.0})
db = {"aotc_db": 1, "kernel": kernel, "source": src, "source_hash": ir["source_hash"],
      "hardware": {"id": "cuda_made_up_sm90", "backend": "cuda",
                   "name": "made up by fake-db.py, not measured", "arch": "sm90", "sm_count": 132},
      "method": {"note": "times from a formula, not measurements"},
      "tunables": [t["name"] for t in k["tunables"]], "shape_args": shape_args,
      "configs": [{"name": n, "values": v} for n, v in zip(names, values)],
      "shapes": shapes, "measurements": ms}
with open("%s/%s.cuda_made_up_sm90.json" % (out, kernel), "w") as f:
    json.dump(db, f, indent=1)
