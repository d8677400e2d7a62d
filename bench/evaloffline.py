"""`aotc eval` on copies of a training and a held-out database, evaluating
their stored measurements: no device is visible to it (CUDA_VISIBLE_DEVICES
and HIP_VISIBLE_DEVICES empty), so it runs the same on this CPU and on the
GPU machine. For bench/alternatives/gain.py and bench/noise/compare.py; the
lines are read with bench/heldout.py's patterns (one parser of eval's table).
For --arch host eval tunes whatever the copies lack, on this machine."""
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from heldout import FAILED, ROW, STATS  # noqa: E402


class EvalError(Exception):
    pass


def _db(x):
    return json.load(open(x)) if isinstance(x, str) else x


def eval_offline(aotc, source, kernel, arch, train, held, what="eval"):
    """train, held: database paths or dicts (held: the shapes evaluated,
    with their measurements). Returns {"rows": {shape label: (chosen name
    or None where eval printed FAILED, printed slowdown or None)}, "order":
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
               "--shapes", shapes]
        env = dict(os.environ, AOTC_NO_SAVE="1", CUDA_VISIBLE_DEVICES="", HIP_VISIBLE_DEVICES="")
        p = subprocess.run(cmd, capture_output=True, text=True, env=env)
        if p.returncode != 0:
            raise EvalError("%s: aotc eval exited %d:\n%s" % (what, p.returncode, p.stderr.replace(tmp, "TMP")[-3000:]))
        out = {"rows": {}, "order": [], "stats": {}}
        for line in p.stdout.splitlines():
            m = ROW.match(line) or FAILED.match(line)
            if m:
                row = (m.group("chosen"), float(m.group("sd"))) if m.re is ROW else (None, None)
                out["rows"][m.group("label")] = row
                out["order"].append(m.group("label"))
                continue
            m = STATS.match(line)
            if m:
                out["stats"][m.group("name")] = {k: float(m.group(g)) for k, g in (
                    ("geomean", "geo"), ("p90", "p90"), ("worst", "worst"), ("misses", "misses"), ("failed", "failed"))}
        if not out["rows"] or "aotc decision tree" not in out["stats"]:
            raise EvalError("%s: no per-shape lines or no summary in aotc eval's output:\n%s" % (what, p.stdout[-2000:]))
        return out
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
