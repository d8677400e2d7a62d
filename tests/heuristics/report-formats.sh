#!/bin/sh
# aotc report --format json|markdown|html on the committed H200 databases:
# the JSON parses and has every shape; the Markdown has its tables; the
# HTML is deterministic, self-contained (nothing fetched, no scripts) and
# has its four plots; names from a hostile database are escaped in every
# format; and headless Chromium renders the HTML (its DOM has the plots
# with their marks, its screenshot is a real picture). --format pdf is a
# usage error. Exit 77 (skip) only when everything else passed and there is
# no Chromium.
# Usage: report-formats.sh AOTC REPO_ROOT
aotc=$1
root=$2
case $aotc in /*) ;; *) aotc=$(pwd)/$aotc ;; esac
case $root in /*) ;; *) root=$(pwd)/$root ;; esac
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/../lib.sh"

# report KERNEL FORMAT OUT: aotc report on the committed database of KERNEL
# (or a path) into OUT, stderr into OUT.err; false on a non-zero exit.
report() {
	case $1 in /*) db=$1 ;; *) db=$root/templates/$1.cuda_NVIDIA_H200_13.0.json ;; esac
	"$aotc" report "$db" --format "$2" >"$3" 2>"$3.err"
}

"$aotc" report "$root/templates/softmax.cuda_NVIDIA_H200_13.0.json" --format pdf >"$tmp/pdf" 2>&1
st=$?
if [ $st -eq 2 ] && grep -q -- "--format" "$tmp/pdf"; then ok; else bad "--format pdf: exit $st, not 2 with a message" "$tmp/pdf"; fi

# The checks of one kernel's reports (also run on the hostile database).
check_json() { # DB JSON
	python3 - "$1" "$2" <<'PY'
import json, sys
db = json.load(open(sys.argv[1]))
r = json.load(open(sys.argv[2]))
errs = []
def need(cond, what):
    if not cond:
        errs.append(what)
for k in ("aotc_report", "kernel", "hardware", "counts", "heuristic", "shape_args", "variants_chosen",
          "best_single_variant", "winners", "selectors", "tree", "shapes"):
    need(k in r, "no key " + k)
need(r.get("kernel") == db["kernel"], "kernel %r" % r.get("kernel"))
need(r.get("hardware") == db["hardware"]["id"], "hardware")
need(r.get("shape_args") == db["shape_args"], "shape_args")
c = r.get("counts", {})
need(c.get("shapes") == len(db["shapes"]), "counts.shapes")
need(c.get("variants") == len(db["configs"]), "counts.variants")
need(c.get("measurements") == len(db["measurements"]), "counts.measurements")
need(c.get("chosen") == len(r.get("variants_chosen", [])) > 0, "counts.chosen")
names = {cf["name"] for cf in db["configs"]}
need(all(v in names for v in r.get("variants_chosen", [])), "a chosen variant not in the database")
rows = r.get("shapes", [])
need(len(rows) == len(db["shapes"]), "%d shape rows for %d shapes" % (len(rows), len(db["shapes"])))
for i, row in enumerate(rows):
    need(row["index"] == i and [row["args"][a] for a in db["shape_args"]] == db["shapes"][i], "row %d args" % i)
    for key in ("oracle_ms", "best_variant", "dispatch", "single", "label", "size"):
        need(key in row, "row %d has no %s" % (i, key))
    d = row["dispatch"]
    need(d["slowdown"] is None or (d["slowdown"] >= 1 and abs(d["time_ms"] / row["oracle_ms"] - d["slowdown"]) < 1e-6),
         "row %d: dispatch slowdown %r" % (i, d["slowdown"]))
sels = r.get("selectors", [])
need([s["key"] for s in sels] == ["single", "nearest", "helion", "measured", "tree"], "selectors")
for s in sels:
    for part in ("train", "heldout"):
        need(set(s[part]) >= {"geomean", "p90", "worst", "misses", "shapes"}, "selector %s %s" % (s["key"], part))
# The per-shape rows agree with the training figures.
import math
sd = [row["dispatch"]["slowdown"] for row in rows if row["dispatch"]["slowdown"] is not None]
tree = [s for s in sels if s["key"] == "tree"][0]["train"]
if sd:
    gm = math.exp(sum(math.log(x) for x in sd) / len(sd))
    need(abs(gm - tree["geomean"]) < 1e-6, "rows' geomean %g, training geomean %g" % (gm, tree["geomean"]))
def walk(n, depth):
    if "feature" in n:
        need(set(n) >= {"threshold", "left", "right", "training_shapes"}, "tree node keys %s" % sorted(n))
        return max(walk(n["left"], depth + 1), walk(n["right"], depth + 1))
    need(n.get("variant") in names and n["order"][0] == n["variant"], "tree leaf %r" % n.get("variant"))
    return depth
t = r.get("tree")
if t:
    need(walk(t, 0) == r["heuristic"]["tree_depth"], "tree depth")
for e in errs[:10]:
    print(e)
sys.exit(1 if errs else 0)
PY
}

check_markdown() { # DB MD
	python3 - "$1" "$2" <<'PY'
import json, re, sys
db = json.load(open(sys.argv[1]))
md = open(sys.argv[2]).read().split("\n")
errs = []
for h in ("# aotc report: ", "## Slowdown against the per-shape best", "## Chosen variants", "## Decision tree",
          "## Per shape"):
    if not any(l.startswith(h) for l in md):
        errs.append("no heading " + h)
# every table: a header, a delimiter row, rows with as many cells
tables, cur = [], []
for l in md + [""]:
    if l.startswith("|"):
        cur.append(l)
    elif cur:
        tables.append(cur)
        cur = []
def cells(l):
    return len(re.findall(r"(?<!\\)\|", l)) - 1
for t in tables:
    if len(t) < 2 or not re.fullmatch(r"\|(:?-+:?\|)+", t[1]):
        errs.append("a table without a delimiter row: " + t[0][:60])
    elif any(cells(l) != cells(t[0]) for l in t):
        errs.append("a table with ragged rows: " + t[0][:60])
if len(tables) < 4:
    errs.append("%d tables" % len(tables))
else:
    per = tables[-1]
    if len(per) - 2 != len(db["shapes"]):
        errs.append("%d per-shape rows for %d shapes" % (len(per) - 2, len(db["shapes"])))
sel = [t for t in tables if t[0].startswith("| selector |")]
if not sel or len(sel[0]) != 2 + 5:
    errs.append("no selector table of 5 rows")
for e in errs:
    print(e)
sys.exit(1 if errs else 0)
PY
}

# HTML checks that need no browser: the four plots, each with marks; tags
# balanced; only the elements and attributes aotc writes (no scripts, no
# event handlers, nothing that loads a resource). With "strict", also none
# of the strings that would fetch something (the hostile names have some,
# escaped, in text).
check_html() { # HTML [strict]
	python3 - "$1" "${2:-}" <<'PY'
import re, sys
from html.parser import HTMLParser
s = open(sys.argv[1]).read()
errs = []
if sys.argv[2] == "strict":
    low = s.lower()
    for bad in ("http://", "https://", "src=", "<link", "<script", "@import", "url("):
        if bad in low:
            errs.append("has " + bad)
ELEMENTS = {"html", "head", "meta", "title", "style", "body", "h1", "h2", "p", "table", "tr", "th", "td", "code",
            "span", "details", "summary", "pre", "figure", "figcaption", "div", "svg", "g", "rect", "path", "text",
            "circle"}
ATTRS = {"lang", "charset", "name", "content", "class", "style", "colspan", "rowspan", "id", "width", "height",
         "viewbox", "role", "aria-label", "x", "y", "rx", "d", "fill", "fill-opacity", "stroke", "stroke-width",
         "stroke-dasharray", "text-anchor", "transform", "cx", "cy", "r"}
VOID = {"meta"}
class P(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack, self.svgs, self.cur = [], {}, None
    def handle_starttag(self, tag, attrs):
        if tag not in ELEMENTS:
            errs.append("element <%s>" % tag)
        for k, v in attrs:
            if k not in ATTRS:
                errs.append("attribute %s on <%s>" % (k, tag))
        if tag == "svg":
            self.cur = dict(attrs).get("id")
            self.svgs[self.cur] = {}
        elif self.cur:
            self.svgs[self.cur][tag] = self.svgs[self.cur].get(tag, 0) + 1
        if tag not in VOID:
            self.stack.append(tag)
    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        if tag not in VOID:
            self.handle_endtag(tag)
    def handle_endtag(self, tag):
        if not self.stack or self.stack[-1] != tag:
            errs.append("</%s> closes <%s>" % (tag, self.stack[-1] if self.stack else "nothing"))
        else:
            self.stack.pop()
        if tag == "svg":
            self.cur = None
p = P()
p.feed(s)
p.close()
if p.stack:
    errs.append("unclosed: %s" % p.stack[-5:])
need = {"plot-slowdown": ("rect",), "plot-tree": ("rect",), "plot-times": ("path",),
        "plot-heatmap": ("rect",)}
for id, tags in need.items():
    if id not in p.svgs:
        errs.append("no svg " + id)
        continue
    for t in tags + ("text", "title"):
        if p.svgs[id].get(t, 0) == 0:
            errs.append("svg %s has no <%s>" % (id, t))
# a node a box, and (a tree with splits) an edge a path: n nodes, n - 1 edges
tree = p.svgs.get("plot-tree", {})
if tree.get("path", 0) != tree.get("rect", 0) - 1:
    errs.append("svg plot-tree: %d nodes, %d edges" % (tree.get("rect", 0), tree.get("path", 0)))
for e in errs[:10]:
    print(e)
sys.exit(1 if errs else 0)
PY
}

# Every format of softmax's (81 variants x 45 shapes); sgemm's (341 x 100,
# a larger heuristic; its tree one leaf, cuBLAS) as HTML for Chromium below.
if report sgemm html "$tmp/sgemm.html" && check_html "$tmp/sgemm.html" strict >"$tmp/why" 2>&1; then ok; else bad "sgemm: html" "$tmp/why" "$tmp/sgemm.html.err"; fi
k=softmax
db=$root/templates/$k.cuda_NVIDIA_H200_13.0.json
if report $k json "$tmp/$k.json" && check_json "$db" "$tmp/$k.json" >"$tmp/why" 2>&1; then ok; else bad "$k: json" "$tmp/why" "$tmp/$k.json.err"; fi
if report $k markdown "$tmp/$k.md" && check_markdown "$db" "$tmp/$k.md" >"$tmp/why" 2>&1; then ok; else bad "$k: markdown" "$tmp/why" "$tmp/$k.md.err"; fi
if report $k html "$tmp/$k.html" && check_html "$tmp/$k.html" strict >"$tmp/why" 2>&1; then ok; else bad "$k: html" "$tmp/why" "$tmp/$k.html.err"; fi
report $k html "$tmp/$k.2.html"
if cmp -s "$tmp/$k.html" "$tmp/$k.2.html"; then ok; else bad "$k: two html reports differ"; fi
# text keeps report.sh's lines, every line but the selector table's
# wrapped within 100 columns (winners, chosen variants, fallbacks), and a
# per-shape table of at most 40 rows
report $k text "$tmp/$k.txt"
n=$(python3 -c 'import json, sys; print(len(json.load(open(sys.argv[1]))["shapes"]))' "$db")
want=$((n > 40 ? 43 : n + 2))
long=$(sed '/^slowdown vs oracle/,/^$/d' "$tmp/$k.txt" | awk 'length($0) > 100' | wc -l)
rows=$(sed -n '/^per shape, by /,$p' "$tmp/$k.txt" | wc -l)
if grep -q "^aotc decision tree " "$tmp/$k.txt" && grep -q "^  if (" "$tmp/$k.txt" &&
   grep -q "variants; [0-9]* chosen for the dispatch" "$tmp/$k.txt" && [ "$long" -eq 0 ] && [ "$rows" -eq "$want" ]; then
	ok
else
	bad "$k: text report ($long lines over 100 columns, $rows table lines for $want)" "$tmp/$k.txt"
fi

# A hostile database: kernel, variant, shape argument and hardware names
# carry markup; its source is not there, so report falls back to the
# database alone.
payload='<script>alert(1)</script>'
mkdir -p "$tmp/evil"
python3 - "$root/templates/softmax.cuda_NVIDIA_H200_13.0.json" "$tmp/evil/evil.json" "$payload" <<'PY'
import json, sys
db = json.load(open(sys.argv[1]))
p = sys.argv[3]
db["kernel"] = "soft" + p + "max"
db["source"] = "no-such-dir/" + p + ".cu"
db["hardware"]["id"] = "hw" + p
db["hardware"]["name"] = "dev\"'&" + p
db["shape_args"] = [a + p for a in db["shape_args"]]
for i, c in enumerate(db["configs"]):
    c["name"] = "v%d%s|`x`|" % (i, p) if i % 2 else "v%d<img src=x onerror=alert(1)>" % i
json.dump(db, open(sys.argv[2], "w"))
PY
evil=$tmp/evil/evil.json
if report "$evil" text "$tmp/evil.txt" && grep -q "note: the source" "$tmp/evil.txt.err"; then ok; else bad "hostile: text report" "$tmp/evil.txt.err"; fi
if report "$evil" json "$tmp/evil.json" && check_json "$evil" "$tmp/evil.json" >"$tmp/why" 2>&1; then ok; else bad "hostile: json" "$tmp/why"; fi
if report "$evil" markdown "$tmp/evil.md" && check_markdown "$evil" "$tmp/evil.md" >"$tmp/why" 2>&1 &&
   python3 - "$tmp/evil.md" >"$tmp/why" 2>&1 <<'PY'
import re, sys
# outside code spans and fences there is no markup
text = open(sys.argv[1]).read()
text = re.sub(r"^```+text\n.*?^```+$", "", text, flags=re.S | re.M)
text = re.sub(r"(`+)(?!`).*?(?<!`)\1(?!`)", "", text)
for bad in ("<script", "<img", "onerror"):
    if bad in text:
        print("raw " + bad + " outside code")
        sys.exit(1)
PY
then ok; else bad "hostile: markdown" "$tmp/why"; fi
if report "$evil" html "$tmp/evil.html" && check_html "$tmp/evil.html" >"$tmp/why" 2>&1 &&
   grep -q "&lt;script&gt;alert(1)&lt;/script&gt;" "$tmp/evil.html" && ! grep -qi "<img\|<script" "$tmp/evil.html"; then
	ok
else
	bad "hostile: html not escaped" "$tmp/why"
fi

# Headless Chromium: the DOM it built has the plots and their marks, and
# its screenshot is a picture (PNG of the window's size, many colours).
chrome=
for c in chromium chromium-browser google-chrome; do
	command -v $c >/dev/null 2>&1 && { chrome=$(command -v $c); break; }
done
if [ -z "$chrome" ]; then
	skip "chromium: no chromium binary (apt-get install chromium)"
fi
run_chrome() {
	HOME=$tmp timeout 60 "$chrome" --headless --no-sandbox --disable-gpu --disable-dev-shm-usage \
		--no-first-run --user-data-dir="$tmp/chrome" "$@"
}
for k in sgemm evil; do
	if run_chrome --dump-dom "file://$tmp/$k.html" >"$tmp/$k.dom" 2>"$tmp/$k.dom.err" &&
	   python3 - "$tmp/$k.dom" >"$tmp/why" 2>&1 <<'PY'
import re, sys
dom = open(sys.argv[1]).read()
errs = []
for id in ("plot-slowdown", "plot-tree", "plot-times", "plot-heatmap"):
    m = re.search(r'<svg id="%s".*?</svg>' % id, dom, re.S)
    if not m:
        errs.append("no svg " + id + " in the DOM")
        continue
    svg = m.group(0)
    marks = svg.count("<rect") + svg.count("<path") + svg.count("<polyline")
    if marks == 0 or svg.count("<text") == 0:
        errs.append("svg %s: %d marks" % (id, marks))
if "<script" in dom.lower():
    errs.append("a script element in the DOM")
for e in errs:
    print(e)
sys.exit(1 if errs else 0)
PY
	then ok; else bad "chromium: $k's DOM" "$tmp/why" "$tmp/$k.dom.err"; fi
done
rm -f "$tmp/shot.png"
run_chrome --screenshot="$tmp/shot.png" --window-size=1400,2400 --hide-scrollbars "file://$tmp/sgemm.html" \
	>"$tmp/shot.err" 2>&1
if python3 - "$tmp/shot.png" >"$tmp/why" 2>&1 <<'PY'
import struct, sys
# a PNG of the window's size whose pixels are far from uniform: a blank
# page of that size compresses to about 10 KB
data = open(sys.argv[1], "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
w, h = struct.unpack(">II", data[16:24])
assert (w, h) == (1400, 2400), "size %dx%d" % (w, h)
assert len(data) > 60000, "%d bytes: a blank page?" % len(data)
PY
then ok; else bad "chromium: screenshot" "$tmp/why" "$tmp/shot.err"; fi

finish
