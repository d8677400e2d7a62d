#!/usr/bin/env python3
# The summary of run-on-h200.sh: per kernel, from its driver's RESULT lines
# (driver.h) and its held-out shape list, the speed-up of aotc's dispatch
# over each fixed configuration of the kernel file (fixed ms / dispatch ms:
# above 1 the dispatch is faster), its geometric mean and its worst (least)
# value over the held-out shapes; the same over the best single fixed
# configuration (the one with the least geometric-mean time over those
# shapes) and over each shape's fastest fixed configuration; and the failed
# checks, a held-out shape without a RESULT line (the driver stopped)
# counting as failed. Writes the figures as JSON too.
# Exit status: 0 when every shape of every kernel has a RESULT line and
# passed both checks, 1 otherwise.
# Usage: summary.py SUMMARY.json RESULTS.txt HELDOUT.json [RESULTS.txt HELDOUT.json ...]
import json, math, re, sys


def gm(xs):
    return math.exp(sum(map(math.log, xs)) / len(xs))


def kernel_summary(results, heldout):
    want = json.load(open(heldout))
    keys = list(want[0])
    rows = []
    for line in open(results, errors="replace"):
        if line.startswith("RESULT "):
            rows.append(dict((k, v.strip('"')) for k, v in re.findall(r'(\w+)=("[^"]*"|\S+)', line)))
    shape = lambda r: " ".join("%s=%s" % (k, r[k]) for k in keys)
    seen = {shape(r) for r in rows}
    missing = [shape(s) for s in want if shape(s) not in seen]
    s = {"kernel": rows[0]["kernel"] if rows else None, "expected": len(want), "shapes": len(rows),
         "missing": missing,
         "failed_launcher": [shape(r) for r in rows if r.get("ok") != "1"],
         "failed_fixed": [shape(r) for r in rows if r.get("fixed_ok") != "1"],
         "variants": {}, "fixed": {}}
    for r in rows:
        s["variants"][r["variant"]] = s["variants"].get(r["variant"], 0) + 1
    timed = [r for r in rows if math.isfinite(float(r["aot_ms"])) and float(r["aot_ms"]) > 0]
    s["timed"] = len(timed)
    labels = [m.group(1) for m in (re.fullmatch(r"fixed_(\w+)_ms", k) for k in (rows[0] if rows else {}))
              if m]
    for label in labels:
        pairs = [(float(r["fixed_%s_ms" % label]) / float(r["aot_ms"]), shape(r), float(r["fixed_%s_ms" % label]))
                 for r in timed]
        pairs = [p for p in pairs if math.isfinite(p[0]) and p[0] > 0]
        if not pairs:
            continue
        worst = min(pairs)
        s["fixed"][label] = {"geomean_speedup": gm([p[0] for p in pairs]), "worst_speedup": worst[0],
                             "worst_shape": worst[1], "best_speedup": max(pairs)[0],
                             "geomean_ms": gm([p[2] for p in pairs]), "shapes": len(pairs)}
    if s["fixed"]:
        s["best_fixed"] = min(s["fixed"], key=lambda l: s["fixed"][l]["geomean_ms"])
        # Against the fastest fixed configuration of each shape: what
        # choosing among the file's own configurations could gain at most.
        pairs = [(min(float(r["fixed_%s_ms" % l]) for l in s["fixed"]) / float(r["aot_ms"]), shape(r))
                 for r in timed]
        pairs = [p for p in pairs if math.isfinite(p[0]) and p[0] > 0]
        if pairs:
            s["per_shape_best_fixed"] = {"geomean_speedup": gm([p[0] for p in pairs]),
                                         "worst_speedup": min(pairs)[0], "worst_shape": min(pairs)[1],
                                         "best_speedup": max(pairs)[0], "shapes": len(pairs)}
    return s


def main():
    if len(sys.argv) < 4 or len(sys.argv) % 2:
        sys.exit("usage: summary.py SUMMARY.json RESULTS.txt HELDOUT.json [RESULTS.txt HELDOUT.json ...]")
    out, bad, total = [], 0, 0
    for results, heldout in zip(sys.argv[2::2], sys.argv[3::2]):
        try:
            s = kernel_summary(results, heldout)
        except (OSError, ValueError, KeyError, IndexError) as e:
            print("%s: no summary (%s: %s)" % (results, type(e).__name__, e))
            bad += 1
            continue
        out.append(s)
        failed = len(set(s["failed_launcher"]) | set(s["failed_fixed"])) + len(s["missing"])
        bad += failed
        total += s["expected"]
        print("%s: %d of %d held-out shapes run, %d failed checks (launcher %d, fixed configurations %d), "
              "%d shapes missing" % (s["kernel"] or results, s["shapes"], s["expected"],
                                     len(set(s["failed_launcher"]) | set(s["failed_fixed"])),
                                     len(s["failed_launcher"]), len(s["failed_fixed"]), len(s["missing"])))
        for what in ("failed_launcher", "failed_fixed", "missing"):
            for shape in s[what]:
                print("  %s: %s" % (what.replace("_", " "), shape))
        if s["fixed"]:
            print("  speed-up of the dispatch over each fixed configuration (fixed ms / dispatch ms; "
                  "above 1: the dispatch is faster), over %d timed shapes:" % s["timed"])
            print("    %-22s %8s %8s %8s  %s" % ("fixed", "geomean", "worst", "best", "worst at"))
            for label, f in s["fixed"].items():
                print("    %-22s %8.3f %8.3f %8.3f  %s" % (label, f["geomean_speedup"], f["worst_speedup"],
                                                       f["best_speedup"], f["worst_shape"]))
            b = s["fixed"][s["best_fixed"]]
            print("    %-22s %8.3f %8.3f %8.3f  %s" % ("best single: " + s["best_fixed"], b["geomean_speedup"],
                                                   b["worst_speedup"], b["best_speedup"], b["worst_shape"]))
            b = s.get("per_shape_best_fixed")
            if b:
                print("    %-22s %8.3f %8.3f %8.3f  %s" % ("each shape's fastest", b["geomean_speedup"],
                                                       b["worst_speedup"], b["best_speedup"], b["worst_shape"]))
        print("  variants the dispatch ran: " +
              ", ".join("%s x%d" % (v, n) for v, n in sorted(s["variants"].items(), key=lambda x: -x[1])))
    with open(sys.argv[1], "w") as f:
        json.dump(out, f, indent=1)
    print("all kernels: %d held-out shapes, %d failed or missing" % (total, bad))
    sys.exit(1 if bad else 0)


main()
