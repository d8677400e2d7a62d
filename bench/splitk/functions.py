#!/usr/bin/env python3
"""Per shape of an SGEMM tuning database: the best time of the template
(sgemm), of its split-K host launcher (sgemm_splitk) and of cuBLAS, and the
best split-K variant; then on how many shapes split-K beats the template's
best and the best of all. Usage: functions.py DB.json"""
import json
import sys

d = json.load(open(sys.argv[1]))
cfg = d["configs"]
best = {}
for m in d["measurements"]:
    if m["status"] != "ok":
        continue
    c = cfg[m["config"]]
    fn = "cuBLAS" if c.get("extern") else c.get("function", "sgemm")
    key = (m["shape"], fn)
    if key not in best or m["time_ms"] < best[key][0]:
        best[key] = (m["time_ms"], c["name"])
nan = (float("nan"), "-")
print("%-20s %12s %12s %12s  %s" % ("M x N x K", "sgemm ms", "splitk ms", "cuBLAS ms", "best split-K"))
beats_sgemm = beats_all = timed = 0
for s, row in enumerate(d["shapes"]):
    g = lambda f: best.get((s, f), nan)
    print("%-20s %12.4f %12.4f %12.4f  %s" % ("x".join(map(str, row)), g("sgemm")[0], g("sgemm_splitk")[0],
                                            g("cuBLAS")[0], g("sgemm_splitk")[1]))
    if (s, "sgemm_splitk") in best:
        timed += 1
        k = best[(s, "sgemm_splitk")][0]
        beats_sgemm += (s, "sgemm") not in best or k < best[(s, "sgemm")][0]
        beats_all += all(k <= best[(s, f)][0] for f in ("sgemm", "cuBLAS") if (s, f) in best)
print("split-K timed on %d of %d shapes: faster than the template's best on %d, the best of all on %d"
      % (timed, len(d["shapes"]), beats_sgemm, beats_all))
