#!/usr/bin/env python3
"""A dispatch over AOTC_ALTERNATIVEs against the best single alternative.

    bench/alternatives/gain.py [--aotc build/aotc] --source FILE --kernel K --arch ARCH
                               [--json OUT.json] TRAIN_DB [HELDOUT_DB]

Run from the repository root. A *function* is the kernel itself, one of its
AOTC_ALTERNATIVEs or an AOTC_EXTERN routine; its time at a shape is the
fastest of its variants measured there (so each function gets its own
per-shape best: the comparison is generous to the single function). The
*best single alternative* of a set of shapes is the function, among those
with a time on every shape of the set, whose times are closest to the
per-shape best of all (geomean of time / best). The dispatch's time at a
shape is that of the variant the emitted select() chooses there, as
`aotc eval` prints it; the gain there is the best single alternative's time
over the dispatch's (above 1: the dispatch is faster).

Two sets: the training shapes (eval given the training database as its
held-out one) and, with HELDOUT_DB (what `aotc eval` measured into
<db>/eval/ on the device), the held-out shapes. Each eval runs on copies in
a temporary folder with no CUDA device visible (CUDA_VISIBLE_DEVICES=''),
so it evaluates the stored measurements, on the GPU machine too (for
--arch host eval re-tunes whatever the copies lack on this machine).

Exits 0 whatever the figures, 1 when a set cannot be computed, 2 on bad
arguments."""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from evaloffline import EvalError, eval_offline  # noqa: E402
from heldout import cells, geomean  # noqa: E402


def functions(db):
    """{configuration name: its function}"""
    out = {}
    for c in db["configs"]:
        out[c["name"]] = c.get("function") or (c["name"] if c.get("extern") else db["kernel"])
    return out


def analyse(held, chosen, tag):
    """The figures of one set (chosen: eval's rows, {label: (name or None,
    printed slowdown)}): per shape each function's best, the dispatch's
    choice and time; the best single alternative; the gains."""
    fn_of = functions(held)
    fns = sorted(set(fn_of.values()))
    rows = []
    for lab, c in cells(held).items():
        ok = {n: t for n, (st, t) in c.items() if st == "ok" and t}
        if not ok:
            continue  # no variant ran: eval leaves the shape out too
        best = {f: min((t for n, t in ok.items() if fn_of[n] == f), default=None) for f in fns}
        pick, printed = chosen.get(lab, ("?", None))
        oracle = min(ok.values())
        if pick in ok and printed is not None and abs(ok[pick] / oracle - printed) > 0.0006:
            raise EvalError("%s, %s: slowdown %.4f from the database, %.3f printed by eval"
                            % (tag, lab, ok[pick] / oracle, printed))
        rows.append({"shape": lab, "oracle": oracle, "best": best, "chosen": pick,
                     "chosen_function": fn_of.get(pick), "dispatch": ok.get(pick) if pick else None})
    missing = [r["shape"] for r in rows if r["shape"] not in chosen]
    if missing:
        raise EvalError("%s: eval printed no line for %s" % (tag, ", ".join(missing[:4])))
    full = [f for f in fns if all(r["best"][f] is not None for r in rows)]
    score = {f: geomean([r["best"][f] / r["oracle"] for r in rows if r["best"][f] is not None]) for f in fns}
    single = min(full, key=lambda f: score[f]) if full else None
    timed = [r for r in rows if r["dispatch"] is not None]
    gains = [(r["best"][single] / r["dispatch"], r["shape"]) for r in timed] if single else []
    sd = [(r["dispatch"] / r["oracle"], r["shape"]) for r in timed]
    wins = {f: sum(1 for r in rows if r["best"][f] == r["oracle"]) for f in fns}
    picks = {f: sum(1 for r in rows if r["chosen_function"] == f) for f in fns}
    return {"set": tag, "shapes": len(rows), "functions": fns, "single": single, "score": score,
            "covers_all": full, "wins": wins, "picks": picks, "rows": rows,
            "misses": [r["shape"] for r in rows if r["dispatch"] is None],
            "gain": summary(gains), "dispatch_vs_best": summary(sd)}


def summary(pairs):
    if not pairs:
        return None
    lo, hi = min(pairs), max(pairs)
    return {"geomean": geomean([x for x, _ in pairs]), "min": lo[0], "min_at": lo[1], "max": hi[0],
            "max_at": hi[1], "n": len(pairs)}


def report(f):
    print("== %s: %d shapes" % (f["set"], f["shapes"]))
    w = max(len(x) for x in f["functions"])
    print("   %-*s %12s %6s %8s  %s" % (w, "function", "geomean/best", "wins", "chosen", ""))
    for fn in f["functions"]:
        print("   %-*s %12.3f %6d %8d  %s" % (w, fn, f["score"][fn], f["wins"][fn], f["picks"][fn],
                                            "" if fn in f["covers_all"] else "(no time on some shapes)"))
    d = f["dispatch_vs_best"]
    if d:
        print("   dispatch / per-shape best: geomean %.3f, worst %.3f (%s)" % (d["geomean"], d["max"], d["max_at"]))
    if f["misses"]:
        print("   the dispatch's choice has no time (failed or not measured) on: %s" % ", ".join(f["misses"][:6]))
    if not f["single"]:
        print("   no function has a time on every shape: no best single alternative")
        return
    g = f["gain"]
    print("   best single alternative: %s (geomean %.3f of the per-shape best)" % (f["single"], f["score"][f["single"]]))
    if g:
        print("   gain = %s / dispatch: geomean %.3f, least %.3f (%s), most %.3f (%s), %d shapes"
              % (f["single"], g["geomean"], g["min"], g["min_at"], g["max"], g["max_at"], g["n"]))
    print("   %-26s %-30s %10s %10s %10s %7s" % ("shape", "chosen", "dispatch", "single", "best", "gain"))
    for r in f["rows"]:
        disp = "%10.4f" % r["dispatch"] if r["dispatch"] is not None else "%10s" % "-"
        gain = "%7.3f" % (r["best"][f["single"]] / r["dispatch"]) if r["dispatch"] else "%7s" % "-"
        print("   %-26s %-30s %s %10.4f %10.4f %s" % (r["shape"], (r["chosen"] or "FAILED")[:30], disp,
                                                     r["best"][f["single"]], r["oracle"], gain))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--aotc", default="build/aotc")
    ap.add_argument("--source", required=True)
    ap.add_argument("--kernel", required=True)
    ap.add_argument("--arch", required=True)
    ap.add_argument("--json", help="write the figures here too")
    ap.add_argument("train")
    ap.add_argument("heldout", nargs="?")
    a = ap.parse_args()
    aotc = os.path.abspath(a.aotc) if os.sep in a.aotc else a.aotc
    sets = [("training", a.train)] + ([("held-out", a.heldout)] if a.heldout else [])
    out, failed = [], False
    for tag, path in sets:
        try:
            held = json.load(open(path))
            ev = eval_offline(aotc, a.source, a.kernel, a.arch, a.train, held, tag)
            out.append(analyse(held, ev["rows"], tag))
            report(out[-1])
        except (EvalError, OSError, ValueError, KeyError) as e:
            print("== %s: error: %s" % (tag, e))
            failed = True
        print()
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=1)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
