#!/bin/sh
# The H200 run of the planted-fault template (tests/tuner/faulty.cu, committed
# by tools/device-tune.sh): each failure got its status on the real device,
# and the committed template databases are complete (sgemm's cuBLAS routine
# measured and correct everywhere). CI has no GPU, so it
# checks the data the GPU produced. Usage: device-results.sh REPO_ROOT
root=$1
exec python3 - "$root" <<'PY'
import json, sys
root = sys.argv[1]
fails = []
db = json.load(open(root + "/tests/tuner/faulty.cuda_NVIDIA_H200_13.0.json"))
want = {0: "ok", 1: "wrong", 2: "fault", 3: "fault", 4: "timeout", 5: "wrong", 6: "resources",
        7: "out_of_bounds", 8: "out_of_bounds", 9: "out_of_bounds", 10: "wrong", 11: "wrong"}
names = [c["name"] for c in db["configs"]]
for m in db["measurements"]:
    mode = int(names[m["config"]][len("twice<"):-1])
    if m["status"] != want[mode]:
        fails.append("%s: %s, expected %s" % (names[m["config"]], m["status"], want[mode]))
if len(db["measurements"]) != 24:
    fails.append("faulty: %d measurements, expected 24" % len(db["measurements"]))
# sgemm: 340 instantiations and the cuBLAS routine (AOTC_EXTERN), which
# must be correct on every shape.
for name, configs, shapes in (("sgemm", 341, 100), ("softmax", 81, 45)):
    d = json.load(open("%s/templates/%s.cuda_NVIDIA_H200_13.0.json" % (root, name)))
    if d["hardware"]["name"] != "NVIDIA H200" or d["hardware"]["arch"] != "sm90":
        fails.append(name + ": not an H200 database")
    if len(d["configs"]) != configs or len(d["shapes"]) != shapes:
        fails.append("%s: %d configs x %d shapes" % (name, len(d["configs"]), len(d["shapes"])))
    if len(d["measurements"]) != configs * shapes:
        fails.append("%s: %d measurements" % (name, len(d["measurements"])))
    ext = [i for i, c in enumerate(d["configs"]) if c.get("extern")]
    if ext != ([340] if name == "sgemm" else []):
        fails.append("%s: routines at %s" % (name, ext))
    bad = [m for m in d["measurements"] if m["config"] in ext and m["status"] != "ok"]
    if bad:
        fails.append("%s: the routine %s on shape %d" % (name, bad[0]["status"], bad[0]["shape"]))
    ok = [m for m in d["measurements"] if m["status"] == "ok"]
    if any(not (m["time_ms"] > 0) or len(m["samples"]) < 3 for m in ok):
        fails.append(name + ": an ok measurement without samples")
for f in fails:
    print("FAIL " + f)
print("%d passed, %d failed" % (1 if not fails else 0, len(fails)))
sys.exit(1 if fails else 0)
PY
