#!/usr/bin/env python3
"""Every held-out figure of issue 30, offline from the committed H200 data.

    bench/heldout.py [--aotc build/aotc] [--only NAME[,NAME]] [-j N] [-v]

Run from the repository root. For each set below it copies a training
database and a held-out one into a temporary `--db` folder (the held-out one
under eval/), runs `aotc eval` there (without a GPU eval evaluates the
measurements in the held-out database) and reads its per-shape lines, which
are the emitted select()'s choices: the figures are those of the dispatch a
program would run, against the per-shape best of every variant the held-out
database measured. The cross-validated sets (LOVO, LOSO) make one such
folder per fold, the held-out database cut from the training database's
own measurements, and pool the (fold, shape) pairs.

Exits 0 whatever the figures (a benchmark); 1 when a set cannot be computed
(an eval that fails, databases of different source hashes, output it cannot
read), 2 on bad arguments. `bench/heldout.sh [AOTC]` runs this script."""
import argparse
import concurrent.futures
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time

ARCH = "sm90"
HW = "cuda_NVIDIA_H200_13.0"
EXT = "sgemm_cublas"
GOAL_GEOMEAN, GOAL_WORST = 1.020, 1.100
GOAL_CUBLAS_WORST, GOAL_LOVO_CUBLAS = 1.01, 1.015
GOAL = ("goal: geomean ≤ %.3f, worst ≤ %.3f on every set; with cuBLAS: dispatch/cuBLAS ≤ %.2f on every "
        "held-out shape, LOVO cuBLAS/dispatch geomean ≥ %.3f" % (GOAL_GEOMEAN, GOAL_WORST, GOAL_CUBLAS_WORST,
                                                                  GOAL_LOVO_CUBLAS))

SGEMM_DB = "templates/sgemm.cuda_NVIDIA_H200_13.0.json"


class Spec:
    """One held-out set: what is trained on, what is evaluated, how."""

    def __init__(self, name, kernel, source, train, heldout=None, shapes=None, strip=False, cublas=False,
                 folds=None):
        self.name, self.kernel, self.source = name, kernel, source
        self.train, self.heldout, self.shapes = train, heldout, shapes
        self.strip = strip    # both databases without the extern routine
        self.cublas = cublas  # print the dispatch against sgemm_cublas
        self.folds = folds    # None (one eval), "lovo" or "loso" on the training database


SETS = [
    Spec("sgemm-grid", "sgemm", "templates/sgemm.cu", SGEMM_DB, "bench/extern/sgemm.heldout.json",
         "templates/sgemm.heldout.json", strip=True),
    Spec("sgemm-offgrid", "sgemm", "templates/sgemm.cu", SGEMM_DB, "bench/extern/sgemm.offgrid.heldout.json",
         "bench/offgrid/sgemm.heldout.json", strip=True),
    Spec("sgemm-grid+cublas", "sgemm", "templates/sgemm.cu", SGEMM_DB, "bench/extern/sgemm.heldout.json",
         "templates/sgemm.heldout.json", cublas=True),
    Spec("sgemm-offgrid+cublas", "sgemm", "templates/sgemm.cu", SGEMM_DB,
         "bench/extern/sgemm.offgrid.heldout.json", "bench/offgrid/sgemm.heldout.json", cublas=True),
    Spec("sgemm+cublas-lovo", "sgemm", "templates/sgemm.cu", SGEMM_DB, cublas=True, folds="lovo"),
    Spec("softmax-grid", "softmax", "templates/softmax.cu", "templates/softmax.cuda_NVIDIA_H200_13.0.json",
         "templates/eval/softmax.cuda_NVIDIA_H200_13.0.json", "templates/softmax.heldout.json"),
    Spec("softmax-offgrid", "softmax", "templates/softmax.cu", "templates/softmax.cuda_NVIDIA_H200_13.0.json",
         "bench/offgrid/softmax.offgrid.heldout.json", "bench/offgrid/softmax.heldout.json"),
    Spec("tutorial", "sgemm_2d", "tests/tutorial/sgemm_tutorial.cu",
         "tests/tutorial/sgemm_2d.cuda_NVIDIA_H200_13.0.json",
         "tests/tutorial/eval/sgemm_2d.cuda_NVIDIA_H200_13.0.json", "tests/tutorial/sgemm_tutorial.heldout.json"),
    Spec("warptile-loso", "sgemm_warptile", "templates/warptile_sgemm.cu",
         "bench/search/exhaustive/sgemm_warptile.cuda_NVIDIA_H200_13.0.json", folds="loso"),
]


class SetError(Exception):
    pass


# ---- databases -------------------------------------------------------------

_loaded = {}


def load(path):
    if path not in _loaded:
        _loaded[path] = json.load(open(path))
    return _loaded[path]


def label(db, row):
    """The shape as aotc eval prints it: `M=384 N=384 K=512`."""
    return " ".join("%s=%d" % (a, v) for a, v in zip(db["shape_args"], row))


def strip_extern(db):
    """db without its extern configurations and their measurements, the
    configurations renumbered."""
    drop = {i for i, c in enumerate(db["configs"]) if c.get("extern")}
    keep = [i for i in range(len(db["configs"])) if i not in drop]
    new = {old: n for n, old in enumerate(keep)}
    return dict(db, configs=[db["configs"][i] for i in keep],
                measurements=[dict(m, config=new[m["config"]]) for m in db["measurements"]
                              if m["config"] not in drop])


def keep_shapes(db, keep):
    """db with only the shapes keep (indices, in this order), renumbered."""
    new = {old: n for n, old in enumerate(keep)}
    d = dict(db, shapes=[db["shapes"][i] for i in keep],
             measurements=[dict(m, shape=new[m["shape"]]) for m in db["measurements"] if m["shape"] in new])
    if isinstance(db.get("shape_calls"), list):
        d["shape_calls"] = [db["shape_calls"][i] for i in keep]
    return d


def shapes_file(db):
    return [dict(zip(db["shape_args"], row)) for row in db["shapes"]]


def cells(db):
    """{shape label: {configuration name: (status, time_ms)}}"""
    names = [c["name"] for c in db["configs"]]
    out = {label(db, row): {} for row in db["shapes"]}
    for m in db["measurements"]:
        out[label(db, db["shapes"][m["shape"]])][names[m["config"]]] = (m["status"], m.get("time_ms"))
    return out


# ---- one aotc eval ---------------------------------------------------------

class Fold:
    """What one aotc eval --format json said: rows[label] = (chosen, its
    slowdown or None, 'FAILED' / 'not measured' / ''), and stats[selector
    name] = {"geomean", "p90", "worst", "misses", "failed"}."""

    def __init__(self):
        self.rows, self.order, self.stats, self.warnings = {}, [], {}, []


def run_eval(aotc, spec, fold, train_db, held_db, shapes):
    """One temporary --db folder, one aotc eval; train_db and held_db are
    paths (copied) or dicts (written)."""
    tmp = tempfile.mkdtemp(prefix="heldout-")
    try:
        name = "%s.%s.json" % (spec.kernel, HW)
        os.makedirs(os.path.join(tmp, "db", "eval"))
        for db, dst in ((train_db, os.path.join(tmp, "db", name)), (held_db, os.path.join(tmp, "db", "eval", name))):
            if isinstance(db, str):
                shutil.copy(db, dst)
            else:
                with open(dst, "w") as f:
                    json.dump(db, f)
        if isinstance(shapes, str):
            shapes_path = shapes
        else:
            shapes_path = os.path.join(tmp, "shapes.json")
            with open(shapes_path, "w") as f:
                json.dump(shapes, f)
        cmd = [aotc, "eval", spec.source, "--kernel", spec.kernel, "--arch", ARCH, "--db", os.path.join(tmp, "db"),
               "--shapes", shapes_path, "--format", "json"]
        env = dict(os.environ, AOTC_NO_SAVE="1")
        p = subprocess.run(cmd, capture_output=True, text=True, env=env)
        where = spec.name + (" fold " + fold if fold else "")
        if p.returncode != 0:
            raise SetError("%s: aotc eval exited %d:\n%s" % (where, p.returncode, indent(p.stderr.replace(tmp, "TMP"))))
        if "evaluating the measurements in" not in p.stderr:
            raise SetError("%s: aotc eval did not evaluate the committed measurements (a %s device here?)"
                           % (where, ARCH))
        r = Fold()
        try:
            ev = json.loads(p.stdout)
        except ValueError:
            raise SetError("%s: aotc eval --format json printed no JSON:\n%s" % (where, indent(p.stdout[-2000:])))
        flags = {"ok": "", "failed": "FAILED", "not measured": "not measured", "none valid": ""}
        for row in ev["shapes"]:
            sd = row["slowdown"] if row["status"] == "ok" else None
            r.rows[row["label"]] = (row["chosen"] or "(none valid)", sd, flags[row["status"]])
            r.order.append(row["label"])
        r.stats = {s["name"]: s for s in ev["selectors"]}
        for line in p.stderr.splitlines():
            if "warning:" in line:
                r.warnings.append(line.replace(os.path.join(tmp, "db") + "/", "<db>/").replace(tmp + "/", ""))
        if not r.rows or "aotc decision tree" not in r.stats:
            raise SetError("%s: no shapes or no summary in aotc eval's JSON:\n%s"
                           % (where, indent(p.stdout[-2000:])))
        return r
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def indent(text):
    return "\n".join("    " + l for l in text.rstrip().splitlines())


# ---- the sets --------------------------------------------------------------

def folds_of(spec):
    """[(fold name, training db (path or dict), held-out db, shapes, held-out
    db dict for the times)] for spec."""
    train = load(spec.train)
    if spec.folds is None:
        held = load(spec.heldout)
        if train["source_hash"] != held["source_hash"]:
            raise SetError("%s: %s (source hash %.8s) and %s (%.8s) are of different versions of %s"
                           % (spec.name, spec.train, train["source_hash"], spec.heldout, held["source_hash"],
                              spec.source))
        if spec.strip:
            held = strip_extern(held)
            return [("", strip_extern(train), held, spec.shapes, held)]
        return [("", spec.train, spec.heldout, spec.shapes, held)]
    base = strip_extern(train) if spec.strip else train
    groups = []
    if spec.folds == "lovo":
        for a, arg in enumerate(base["shape_args"]):
            for v in sorted({row[a] for row in base["shapes"]}):
                groups.append(("%s=%d" % (arg, v), [i for i, row in enumerate(base["shapes"]) if row[a] == v]))
    else:
        groups = [(label(base, row), [i]) for i, row in enumerate(base["shapes"])]
    out = []
    for name, held_idx in groups:
        out_idx = set(held_idx)
        rest = [i for i in range(len(base["shapes"])) if i not in out_idx]
        held = keep_shapes(base, held_idx)
        out.append((name, keep_shapes(base, rest), held, shapes_file(held), held))
    return out


def geomean(xs):
    return math.exp(sum(map(math.log, xs)) / len(xs)) if xs else float("nan")


class Figures:
    """The pooled figures of one set."""

    def __init__(self, spec):
        self.spec = spec
        self.n = 0
        self.sd = []          # (slowdown, where) of the dispatched, measured choices
        self.misses, self.failed = [], []
        self.ratio = []       # (dispatch / cuBLAS, where)
        self.cublas_best = []  # cuBLAS / per-shape best: what a dispatch can gain over cuBLAS
        self.no_cublas = 0
        self.cap = []         # (geomean, worst, k) of "best it can return" per fold
        self.tree = []        # eval's own "aotc decision tree" lines
        self.warnings = []
        self.chosen = {}
        self.mismatch = []


def figures(spec, results):
    """results: [(fold name, held-out db dict, Fold)]"""
    f = Figures(spec)
    for fold, held, r in results:
        times = cells(held)
        where_of = lambda lab: lab + (" (fold %s)" % fold if fold and spec.folds == "lovo" else "")
        printed_n = len(r.order)
        measurable = [lab for lab, c in times.items()
                      if any(st == "ok" and t is not None for st, t in c.values())]
        if sorted(measurable) != sorted(r.order):
            f.mismatch.append("%s: eval printed %d shapes, the held-out database has %d with a variant that ran"
                              % (fold or spec.name, printed_n, len(measurable)))
        for lab in r.order:
            chosen, printed, flag = r.rows[lab]
            c = times.get(lab, {})
            best = min(t for st, t in c.values() if st == "ok" and t is not None)
            f.n += 1
            f.chosen[chosen] = f.chosen.get(chosen, 0) + 1
            st, t = c.get(chosen, (None, None))
            if flag == "FAILED":
                f.failed.append(where_of(lab))
                continue
            if st != "ok" or t is None:
                f.misses.append(where_of(lab))
                continue
            sd = t / best
            if printed is None or abs(sd - printed) > 0.0006:
                f.mismatch.append("%s: slowdown %.4f from the database, %s printed by eval"
                                  % (where_of(lab), sd, printed))
            f.sd.append((sd, where_of(lab)))
            if spec.cublas:
                cst, ct = c.get(EXT, (None, None))
                if cst == "ok" and ct:
                    f.ratio.append((t / ct, where_of(lab)))
                    f.cublas_best.append(ct / best)
                else:
                    f.no_cublas += 1
        cap = r.stats.get("best it can return")
        if cap:
            k = printed_n - cap["misses"] - cap["failed"]
            f.cap.append((cap["geomean"], cap["worst"], k))
        f.tree.append(r.stats["aotc decision tree"])
        for w in r.warnings:
            if w not in f.warnings:
                f.warnings.append(w)
    # one eval: its own summary must be ours (same rows, 3 decimals)
    if spec.folds is None and f.tree:
        t = f.tree[0]
        mine = (geomean([x for x, _ in f.sd]) if f.sd else 1.0, max([x for x, _ in f.sd], default=1.0))
        if (abs(mine[0] - t["geomean"]) > 0.0006 or abs(mine[1] - t["worst"]) > 0.0006
                or len(f.misses) != t["misses"] or len(f.failed) != t["failed"]):
            f.mismatch.append("figures %.3f / %.3f, %d misses, %d failed; eval said %.3f / %.3f, %d misses, %d failed"
                              % (mine[0], mine[1], len(f.misses), len(f.failed), t["geomean"],
                                 t["worst"], t["misses"], t["failed"]))
    return f


def describe(spec):
    how = {None: "", "lovo": "leave-one-value-out on ", "loso": "leave-one-shape-out on "}[spec.folds]
    what = how + spec.train + ("" if spec.folds else " -> " + spec.heldout)
    return what + (", without %s" % EXT if spec.strip else "")


def goal_notes(f):
    notes = []
    if f.sd and geomean([x for x, _ in f.sd]) > GOAL_GEOMEAN:
        notes.append("geomean")
    if f.sd and max(x for x, _ in f.sd) > GOAL_WORST:
        notes.append("worst")
    if f.misses or f.failed:
        notes.append("misses")
    if f.spec.cublas and f.ratio:
        if f.spec.folds == "lovo":
            if 1 / geomean([x for x, _ in f.ratio]) < GOAL_LOVO_CUBLAS:
                notes.append("cuBLAS/d geomean")
        elif max(x for x, _ in f.ratio) > GOAL_CUBLAS_WORST:
            notes.append("d/cuBLAS worst")
    return "met" if not notes else "missed: " + ", ".join(notes)


def report(f, verbose):
    spec = f.spec
    nf = len(f.tree)
    print("== %s: %s (%s, kernel %s)%s" % (spec.name, describe(spec), spec.source, spec.kernel,
                                           ", %d folds, pooled" % nf if spec.folds else ""))
    if f.sd:
        worst, where = max(f.sd)
        print("   dispatch vs per-shape best: %d shapes, geomean %.3f, worst %.3f (%s), misses %d, failed %d"
              % (f.n, geomean([x for x, _ in f.sd]), worst, where, len(f.misses), len(f.failed)))
    else:
        print("   dispatch vs per-shape best: %d shapes, none measured: misses %d, failed %d"
              % (f.n, len(f.misses), len(f.failed)))
    for what, lst in (("misses", f.misses), ("failed", f.failed)):
        if lst:
            print("   %s: %s%s" % (what, ", ".join(lst[:4]), ", ..." if len(lst) > 4 else ""))
    if f.cap:
        k = sum(c[2] for c in f.cap)
        g = math.exp(sum(c[2] * math.log(c[0]) for c in f.cap) / k) if k else float("nan")
        print("   best it can return (over the variants select() can return): geomean %.3f, worst %.3f%s"
              % (g, max(c[1] for c in f.cap), " (pooled from the folds' 3-decimal lines)" if nf > 1 else ""))
    if spec.cublas:
        if f.ratio:
            worst, where = max(f.ratio)
            g = geomean([x for x, _ in f.ratio])
            print("   dispatch / %s: geomean %.3f, worst %.3f (%s); %s / dispatch geomean %.3f "
                  "(%s / per-shape best: geomean %.3f, the most a dispatch can reach)"
                  % (EXT, g, worst, where, EXT, 1 / g, EXT, geomean(f.cublas_best)))
        if f.no_cublas:
            print("   %d shapes without a %s time (left out of the ratio)" % (f.no_cublas, EXT))
    top = sorted(f.chosen.items(), key=lambda x: (-x[1], x[0]))
    print("   chosen: %s%s" % (", ".join("%s ×%d" % x for x in top[:4]), ", ..." if len(top) > 4 else ""))
    for w in f.warnings:
        print("   aotc: " + w.split(": warning: ", 1)[-1] if ": warning: " in w else "   " + w)
    if verbose:
        for sd, where in sorted(f.sd, key=lambda x: x[1]):
            print("     %-40s %.3f" % (where, sd))
    print()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("aotc_pos", nargs="?", metavar="AOTC", help=argparse.SUPPRESS)
    ap.add_argument("--aotc", default=None, help="the aotc to run (default build/aotc)")
    ap.add_argument("--only", default=None, help="NAME[,NAME]: only these sets (%s)" % ", ".join(s.name for s in SETS))
    ap.add_argument("-j", type=int, default=os.cpu_count() or 1, help="aotc evals at once (default: CPU count)")
    ap.add_argument("-v", action="store_true", help="every shape's slowdown")
    a = ap.parse_args()
    aotc = a.aotc or a.aotc_pos or "build/aotc"
    if a.aotc and a.aotc_pos:
        ap.error("AOTC given twice")
    if a.j < 1:
        ap.error("-j needs a positive number")
    specs = SETS
    if a.only:
        want = [n for n in a.only.split(",") if n]
        unknown = [n for n in want if n not in {s.name for s in SETS}]
        if unknown or not want:
            ap.error("--only: unknown set %s (sets: %s)" % (", ".join(unknown) or "''",
                                                           ", ".join(s.name for s in SETS)))
        specs = [s for s in SETS if s.name in want]
    if not os.path.isfile("templates/sgemm.cu"):
        ap.error("run from the repository root")
    if not (os.path.isfile(aotc) and os.access(aotc, os.X_OK)) and not shutil.which(aotc):
        ap.error("no aotc at %s (build it: meson setup build && ninja -C build)" % aotc)
    if os.sep in aotc:
        aotc = os.path.abspath(aotc)

    start = time.monotonic()
    errors = []
    jobs = []  # (spec index, fold name, held-out db dict, future)
    with concurrent.futures.ThreadPoolExecutor(max_workers=a.j) as pool:
        for i, spec in enumerate(specs):
            try:
                for fold, tdb, hdb, shapes, held in folds_of(spec):
                    jobs.append((i, fold, held, pool.submit(run_eval, aotc, spec, fold, tdb, hdb, shapes)))
            except (SetError, OSError, ValueError, KeyError) as e:
                errors.append((i, str(e)))
        results = {i: [] for i in range(len(specs))}
        for i, fold, held, fut in jobs:
            try:
                results[i].append((fold, held, fut.result()))
            except (SetError, OSError) as e:
                errors.append((i, str(e)))

    failed_sets = {i for i, _ in errors}
    rows = []  # Figures, or None for a set that failed
    for i, spec in enumerate(specs):
        if i in failed_sets:
            print("== %s" % spec.name)
            for j, msg in errors:
                if j == i:
                    print("   error: %s" % msg)
            print()
            rows.append(None)
            continue
        f = figures(spec, results[i])
        report(f, a.v)
        for msg in f.mismatch:
            print("   error: aotc eval's output and the database disagree: " + msg)
            failed_sets.add(i)
        if f.mismatch:
            print()
        rows.append(f)

    print("%-22s %6s %8s %8s %6s %6s %8s %10s %10s %10s  %s" % (
        "set", "shapes", "geomean", "worst", "misses", "failed", "bound", "d/cuBLAS", "d/cuBLAS", "cuBLAS/d", "goal"))
    print("%-22s %6s %8s %8s %6s %6s %8s %10s %10s %10s" % ("", "", "", "", "", "", "geomean", "geomean", "worst",
                                                           "geomean"))
    for spec, f in zip(specs, rows):
        if f is None:
            print("%-22s  error (above)" % spec.name)
            continue
        sd = [x for x, _ in f.sd]
        k = sum(c[2] for c in f.cap)
        bound = "%8.3f" % math.exp(sum(c[2] * math.log(c[0]) for c in f.cap) / k) if k else "%8s" % "-"
        if f.spec.cublas and f.ratio:
            g = geomean([x for x, _ in f.ratio])
            cub = "%10.3f %10.3f %10.3f" % (g, max(x for x, _ in f.ratio), 1 / g)
        else:
            cub = "%10s %10s %10s" % ("", "", "")
        print("%-22s %6d %8.3f %8.3f %6d %6d %s %s  %s" % (
            f.spec.name, f.n, geomean(sd) if sd else float("nan"), max(sd) if sd else float("nan"),
            len(f.misses), len(f.failed), bound, cub, goal_notes(f)))
    print(GOAL)
    print("(bound: geomean of 'best it can return', the best variant select() can return at each shape)")
    print("wall time %.1f s (-j %d)" % (time.monotonic() - start, a.j))
    return 1 if failed_sets else 0


if __name__ == "__main__":
    sys.exit(main())
