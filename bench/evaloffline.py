"""`aotc eval` on copies of a training and a held-out database, evaluating
their stored measurements: no device is visible to it (CUDA_VISIBLE_DEVICES
and HIP_VISIBLE_DEVICES empty), so it runs the same on this CPU and on the
GPU machine. For bench/alternatives/gain.py and bench/noise/compare.py; its
figures are read from `aotc eval --format json`. For --arch host eval tunes whatever the copies lack, on this machine."""
import json
import os
import shutil
import subprocess
import tempfile


class EvalError(Exception):
    pass


def _db(x):
    return json.load(open(x)) if isinstance(x, str) else x


def eval_offline(aotc, source, kernel, arch, train, held, what="eval"):
    """train, held: database paths or dicts (held: the shapes evaluated,
    with their measurements). Returns {"rows": {shape label: (chosen name
    or None where the chosen variant failed, its slowdown or None)}, "order":
    [labels as printed], "stats": {selector: {"geomean", "p90", "worst",
    "misses", "failed"}}}; EvalError when eval fails or prints no table."""
    train, held = _db(train), _db(held)
    tmp = tempfile.mkdtemp(prefix="evaloffline-")
    try:
        os.makedirs(os.path.join(tmp, "db", "eval"))
        for db, where in ((train, "db"), (held, os.path.join("db", "eval"))):
            with open(os.path.join(tmp, where, "%s.%s.json" % (db["kernel"], db["hardware"]["id"])), "w") as f:
                json.dump(db, f)
        shapes = os.path.join(tmp, "shapes.json")
        with open(shapes, "w") as f:
            json.dump([dict(zip(held["shape_args"], row)) for row in held["shapes"]], f)
        cmd = [aotc, "eval", source, "--kernel", kernel, "--arch", arch, "--db", os.path.join(tmp, "db"),
               "--shapes", shapes, "--format", "json"]
        env = dict(os.environ, AOTC_NO_SAVE="1", CUDA_VISIBLE_DEVICES="", HIP_VISIBLE_DEVICES="")
        p = subprocess.run(cmd, capture_output=True, text=True, env=env)
        if p.returncode != 0:
            raise EvalError("%s: aotc eval exited %d:\n%s" % (what, p.returncode, p.stderr.replace(tmp, "TMP")[-3000:]))
        try:
            ev = json.loads(p.stdout)
        except ValueError:
            raise EvalError("%s: aotc eval --format json printed no JSON:\n%s" % (what, p.stdout[-2000:]))
        out = {"rows": {}, "order": [], "stats": {}}
        for row in ev["shapes"]:
            failed = row["status"] == "failed"
            out["rows"][row["label"]] = (None if failed else row["chosen"] or "(none valid)",
                                         None if failed else row["slowdown"])
            out["order"].append(row["label"])
        out["stats"] = {s["name"]: {k: s[k] for k in ("geomean", "p90", "worst", "misses", "failed")}
                        for s in ev["selectors"]}
        if not out["rows"] or "aotc decision tree" not in out["stats"]:
            raise EvalError("%s: no shapes or no summary in aotc eval's JSON:\n%s" % (what, p.stdout[-2000:]))
        return out
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
