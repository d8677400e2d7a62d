"""Two tuning databases of one kernel (tests/tuner/noise.sh, bench/noise/agree.sh):
per shape, whether the two agree on the winner, or the one's winner is within
the other's recorded noise of the other's (its p10-p90 spread over the median,
as tuner/db.c meas_spread, at least 3 %). Prints one JSON object: shapes,
agree, the disagreements, and each database's median and largest winner
spread and alternated winners."""
import json
import statistics
import sys


def load(path):
    db = json.load(open(path))
    names = [c["name"] for c in db["configs"]]
    cells = {}
    for m in db["measurements"]:
        if m["status"] == "ok":
            cells[(tuple(db["shapes"][m["shape"]]), names[m["config"]])] = m
    return db, cells


def spread(m):
    s = sorted(m.get("samples", []))
    n = len(s)
    if n < 2:
        return 0.0

    def q(p):
        x = p * (n - 1)
        i = int(x)
        return s[i] + (x - i) * (s[i + 1] - s[i]) if i + 1 < n else s[-1]

    return (q(0.9) - q(0.1)) / q(0.5) if q(0.5) > 0 else 0.0


def winner(cells, shape):
    got = [(m["time_ms"], name) for (sh, name), m in cells.items() if sh == shape]
    return min(got)[1] if got else None


def close(cells, shape, w, other):
    a, b = cells[(shape, w)], cells.get((shape, other))
    return b is not None and b["time_ms"] <= a["time_ms"] * (1 + max(spread(a), spread(b), 0.03))


def main():
    (da, ca), (db, cb) = load(sys.argv[1]), load(sys.argv[2])
    shapes = sorted({sh for sh, _ in ca} | {sh for sh, _ in cb})
    out = {"shapes": len(shapes), "agree": 0, "same_winner": 0, "errors": []}
    for sh in shapes:
        wa, wb = winner(ca, sh), winner(cb, sh)
        if wa is None or wb is None:
            out["errors"].append("%s: no winner in %s" % (list(sh), "a" if wa is None else "b"))
            continue
        out["same_winner"] += wa == wb
        if wa == wb or close(ca, sh, wa, wb) or close(cb, sh, wb, wa):
            out["agree"] += 1
        else:
            out["errors"].append("%s: %s %.4f ms in a, %s %.4f ms in b" % (
                list(sh), wa, ca[(sh, wa)]["time_ms"], wb, cb[(sh, wb)]["time_ms"]))
    for name, cells in (("a", ca), ("b", cb)):
        wins = [cells[(sh, winner(cells, sh))] for sh in shapes if winner(cells, sh)]
        sp = [spread(m) for m in wins] or [0.0]
        out[name] = {"median_spread": statistics.median(sp), "max_spread": max(sp),
                     "alternated_winners": sum(1 for m in wins if m.get("alternated")),
                     "alternated_cells": sum(1 for m in cells.values() if m.get("alternated"))}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
