"""An aotc database and kt.py's times for one kernel: per shape, whether the
two tools agree on the winner (the same configuration, or either's winner
within 5 % of the other's best in that tool's own times), and the per-cell
time ratio (Kernel Tuner's over aotc's, both medians) over the cells both
measured.

    agree.py AOTC_DB.json KT.json"""
import json, statistics, sys

db, kt = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
params, tunables = db["shape_args"], db["tunables"]
configs = [c["name"] for c in db["configs"]]


def config_key(name):
    """matmul_host<16, 32, 32, 1> -> BM=16,BN=32,BK=32,UNROLL=1 (kt.py's key)."""
    values = name[name.index("<") + 1:name.rindex(">")].split(",")
    return ",".join("%s=%d" % (t, int(v)) for t, v in zip(tunables, values))


aotc = {}
for m in db["measurements"]:
    if m["status"] == "ok":
        shape = ",".join("%s=%d" % (p, v) for p, v in zip(params, db["shapes"][m["shape"]]))
        aotc.setdefault(shape, {})[config_key(configs[m["config"]])] = m["time_ms"]

same = close = 0
ratios, off = [], []
for shape in sorted(set(aotc) & set(kt)):
    a, k = aotc[shape], kt[shape]
    wa, wk = min(a, key=a.get), min(k, key=k.get)
    ratios += [k[c] / a[c] for c in a if c in k]
    same += wa == wk
    if wa == wk or (wk in a and a[wk] <= 1.05 * a[wa]) or (wa in k and k[wa] <= 1.05 * k[wk]):
        close += 1
    else:
        off.append("%s: aotc %s, Kernel Tuner %s (%.0f %% slower in aotc's times, %.0f %% in Kernel Tuner's)"
                   % (shape, wa, wk, 100 * (a.get(wk, float("nan")) / a[wa] - 1), 100 * (k.get(wa, float("nan")) / k[wk] - 1)))
ratios.sort()
print("winners: the same on %d of %d shapes, within 5 %% on %d; per-cell time, Kernel Tuner's over aotc's: "
      "median %.3f (p10-p90 %.3f-%.3f, %d cells)" % (same, len(set(aotc) & set(kt)), close, statistics.median(ratios),
                                                    ratios[len(ratios) // 10], ratios[9 * len(ratios) // 10], len(ratios)))
for line in off:
    print("  " + line)
