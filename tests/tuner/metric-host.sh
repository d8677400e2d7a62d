#!/bin/sh
# AOTC_METRIC on the CPU: the AUTOTUNE table and aotc report (text, json,
# markdown, html) show count / time, checked against the database with the
# count computed here: scale (8 bytes per element, known for every variant,
# the alternative and the routine) and reps (n * REPS FLOP: unknown, "-",
# for its alternative, which wins). A report whose kernel source is not
# there has no throughput. The IR JSON carries the metric and refuses bad ones.
# Usage: metric-host.sh AOTC REPO_ROOT
aotc=$1
root=$2
case $aotc in /*) ;; *) aotc=$(pwd)/$aotc ;; esac
case $root in /*) ;; *) root=$(pwd)/$root ;; esac
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export AOTC_CACHE_DIR="$tmp/cache"
. "$(dirname "$0")/../lib.sh"

cp "$root/tests/tuner/metric_host.cpp" "$tmp/metric_host.cpp"
if "$aotc" tune "$tmp/metric_host.cpp" --arch host --db "$tmp/db" >"$tmp/tune.log" 2>&1; then
	ok "tune"
else
	bad "tune" "$tmp/tune.log"
	finish
fi

for k in scale reps; do
	db=$(ls "$tmp"/db/$k.*.json)
	for f in text json markdown html; do
		"$aotc" report "$db" --format $f >"$tmp/$k.$f" 2>"$tmp/$k.$f.err" || bad "$k: report --format $f" "$tmp/$k.$f.err"
	done
	if python3 - "$k" "$db" "$tmp" >"$tmp/why" 2>&1 <<'PY'
import html, json, re, sys
kernel, dbp, tmp = sys.argv[1:4]
db = json.load(open(dbp))
cfgs = db["configs"]
ns = [row[0] for row in db["shapes"]]
unit = "B" if kernel == "scale" else "FLOP"
errs = []

def count(c, n):
    """AOTC_METRIC's count of configuration c at n, None where unknown."""
    if kernel == "scale":
        return 8 * n
    return None if "function" in c or c.get("extern") else n * c["values"][0]

time = {}
for m in db["measurements"]:
    if m["status"] == "ok":
        time[m["config"], m["shape"]] = m["time_ms"]
def tp(c, s):
    t = time.get((c, s))
    n = count(cfgs[c], ns[s])
    return None if t is None or n is None else n / (t * 1e-3)
best = [min((time[c, s], c) for c in range(len(cfgs)) if (c, s) in time)[1] for s in range(len(ns))]
want = [tp(best[s], s) for s in range(len(ns))]
top = max([x for x in want if x is not None] or [0])
p, scale = 0, 1.0
while p < 5 and top >= scale * 1000:
    scale, p = scale * 1000, p + 1
sname = ["", "k", "M", "G", "T", "P"][p] + unit + "/s"

def close(shown, x, what, rel=1e-3):
    if x is None:
        if shown not in ("-", None):
            errs.append("%s: %r, expected none" % (what, shown))
    elif shown in ("-", None) or abs(float(shown) - x) > rel * x:
        errs.append("%s: %r, expected %.6g" % (what, shown, x))

if kernel == "reps" and all(w is not None for w in want):
    errs.append("the alternative won nowhere: no '-' to check")
if kernel == "scale" and any(w is None for w in want):
    errs.append("scale: a shape without throughput")

# AUTOTUNE table
log = open(tmp + "/tune.log").read()
sec = log[log.index("AUTOTUNE %s:" % kernel):].split("\n")[1:1 + len(ns)]
for s, line in enumerate(sec):
    m = re.match(r"\s+n=(\d+)\s+best (\S+) [0-9.]+ ms \((\S+) (\S+)\)", line)
    if not m or int(m.group(1)) != ns[s] or m.group(2) != cfgs[best[s]]["name"] or m.group(4) != sname:
        errs.append("AUTOTUNE line %r (best %s, %s)" % (line, cfgs[best[s]]["name"], sname))
        continue
    close(m.group(3), None if want[s] is None else want[s] / scale, "AUTOTUNE n=%d" % ns[s])

# json: throughputs in unit per second
r = json.load(open(tmp + "/%s.json" % kernel))
met = r.get("metric", {})
if met.get("unit") != unit or met.get("scale") != sname:
    errs.append("json metric %r" % met)
names = [c["name"] for c in cfgs]
for s, row in enumerate(r["shapes"]):
    close(row.get("throughput", "missing"), want[s], "json n=%d" % ns[s], 1e-6)
    d = row["dispatch"]
    close(d.get("throughput", "missing"), tp(names.index(d["variant"]), s), "json n=%d dispatch" % ns[s], 1e-6)

# text: n, best ms, best <unit>, dispatch ms, dispatch <unit>, ...
txt = open(tmp + "/%s.text" % kernel).read().split("\n")
i = txt.index("per shape, by n:")
if txt[i + 1].split()[:3] != ["n", "best", "ms"] or "best " + sname not in txt[i + 1]:
    errs.append("text header %r" % txt[i + 1])
rows = {int(l.split()[0]): l.split() for l in txt[i + 2:i + 2 + len(ns)]}
for s, n in enumerate(ns):
    close(rows.get(n, [0, 0, "missing"])[2], None if want[s] is None else want[s] / scale, "text n=%d" % n)

# markdown: the per-shape table
md = [l for l in open(tmp + "/%s.markdown" % kernel).read().split("\n") if l.startswith("| ")]
head = [l for l in md if l.startswith("| `n` | best ms |")]
if not head or "| best %s |" % sname not in head[0]:
    errs.append("markdown header %r" % head[:1])
rows = {int(c[1]): c for c in (l.split("|") for l in md) if c[1].strip().isdigit()}
for s, n in enumerate(ns):
    cell = rows.get(n, [0, 0, 0, "missing"])[3].strip()
    close(cell, None if want[s] is None else want[s] / scale, "markdown n=%d" % n)

# html: the per-shape table and plot (e)
h = open(tmp + "/%s.html" % kernel).read()
if "<th>best ms</th><th>best %s</th>" % html.escape(sname) not in h or 'id="plot-throughput"' not in h:
    errs.append("html: no throughput column or plot")
for s, n in enumerate(ns):
    m = re.search(r"<tr><td>%d</td><td[^>]*>[^<]*</td><td[^>]*>([^<]*)</td>" % n, h)
    close(m.group(1) if m else "missing", None if want[s] is None else want[s] / scale, "html n=%d" % n)
for e in errs[:12]:
    print(e)
sys.exit(1 if errs else 0)
PY
	then ok "$k: throughput in the AUTOTUNE table and every report format"
	else bad "$k: throughput (rerun: meson test metric-host)" "$tmp/why"; fi
done

# Without its source the database has no metric: no throughput anywhere.
mkdir "$tmp/alone"
sed 's|"source": "[^"]*"|"source": "gone/metric_host.cpp"|' "$(ls "$tmp"/db/scale.*.json)" >"$tmp/alone/scale.json"
"$aotc" report "$tmp/alone/scale.json" --format json >"$tmp/alone.json" 2>"$tmp/alone.err"
"$aotc" report "$tmp/alone/scale.json" >"$tmp/alone.txt" 2>>"$tmp/alone.err"
if ! grep -q '"metric"\|"throughput"' "$tmp/alone.json" && ! grep -q "metric:\|/s" "$tmp/alone.txt" &&
   grep -q "note: the source" "$tmp/alone.err"; then
	ok "no source: no throughput"
else
	bad "no source: no throughput" "$tmp/alone.err" "$tmp/alone.txt"
fi

# The IR carries the metric (aotc parse of its own JSON) and refuses a bad one.
"$aotc" parse "$tmp/metric_host.cpp" >"$tmp/ir.json" 2>"$tmp/ir.err"
if python3 - "$aotc" "$tmp" >"$tmp/why" 2>&1 <<'PY'
import json, subprocess, sys
aotc, tmp = sys.argv[1:3]
ir = json.load(open(tmp + "/ir.json"))
errs = []
k = ir["kernels"][0]
if k.get("metric", {}).get("unit") != "B" or k["metric"]["count"]["text"] != "2 * 4 * n":
    errs.append("kernels[0].metric %r" % k.get("metric"))
if any("metric" in a for a in k.get("alternatives", [])):
    errs.append("an alternative with a metric of its own")
def parse(mutate, want):
    d = json.loads(json.dumps(ir))
    mutate(d["kernels"][0])
    json.dump(d, open(tmp + "/bad.ir.json", "w"))
    p = subprocess.run([aotc, "parse", tmp + "/bad.ir.json"], capture_output=True, text=True)
    if want is None and p.returncode != 0 or want and (p.returncode != 1 or want not in p.stderr):
        errs.append("IR with %s: exit %d %s" % (want or "its metric", p.returncode, p.stderr[:200]))
parse(lambda k: None, None)
parse(lambda k: k["metric"].__setitem__("unit", "FLOPS"), "metric needs a unit (FLOP or B) and a count")
parse(lambda k: k["metric"].pop("count"), "metric needs a unit (FLOP or B) and a count")
parse(lambda k: k["metric"]["count"].__setitem__("text", "2 * m"), "unknown name 'm'")
parse(lambda k: k["alternatives"][0].__setitem__("metric", k["metric"]), "no reference, externs or metric of its own")
for e in errs:
    print(e)
sys.exit(1 if errs else 0)
PY
then ok "IR JSON: the metric read back, bad ones refused"
else bad "IR JSON: metric" "$tmp/why" "$tmp/ir.err"; fi

finish
