"""The (configuration, shape) cells of tuning databases and their statuses,
for tests/scale/: a tune on several devices (or shards) must have exactly a
single tune's cells, each with the same status (times differ). Files are
merged as emit merges them (docs/database.md, "Several machines, several
shards"): a cell in several keeps the first, in path order.

  cells.py list DB.json...         one line per cell of the files merged,
                                   sorted: configuration, shape, status
  cells.py same A.json B.json...   prints nothing when the cells and statuses
                                   of A equal those of the B files merged,
                                   else the differences
  cells.py known DB.json           prints one line per cell the document and
                                   its journal hold (what a resumed tune
                                   must not measure again): "NAME|SHAPE"
  cells.py measured LOG            the same for the cells a --verbose tune's
                                   log says it measured, one line per
                                   measurement (a repeated line: measured
                                   twice)"""
import json
import os
import re
import sys


def shape_label(db, row):
    return ",".join("%s=%d" % (a, v) for a, v in zip(db["shape_args"], row))


def document_cells(path):
    db = json.load(open(path))
    names = [c["name"] for c in db["configs"]]
    cells = {}
    for m in db["measurements"]:
        cells[(names[m["config"]], shape_label(db, db["shapes"][m["shape"]]))] = m["status"]
    return db, cells


def journal_cells(db, path):
    cells = {}
    if not os.path.exists(path):
        return cells
    for line in open(path).read().splitlines():
        try:
            j = json.loads(line)
        except ValueError:
            continue  # a torn last line
        cells[(j["config"], shape_label(db, j["shape"]))] = j["status"]
    return cells


def merged(paths):
    got = {}
    for p in sorted(paths):
        for k, v in document_cells(p)[1].items():
            got.setdefault(k, v)
    return got


def main():
    what = sys.argv[1]
    if what == "list":
        for (config, shape), status in sorted(merged(sys.argv[2:]).items()):
            print("%s\t%s\t%s" % (config, shape, status))
    elif what == "same":
        _, want = document_cells(sys.argv[2])
        got = merged(sys.argv[3:])
        for k in sorted(set(want) | set(got)):
            if want.get(k) != got.get(k):
                print("%s at %s: %s, merged %s" % (k[0], k[1], want.get(k, "missing"), got.get(k, "missing")))
    elif what == "known":
        db, cells = document_cells(sys.argv[2])
        cells.update(journal_cells(db, sys.argv[2] + ".journal"))
        for name, shape in sorted(cells):
            print("%s|%s" % (name, shape))
    elif what == "measured":
        # "aotc: device 1: n=64 twice<1, 2>: ok 0.0123 ms"
        line = re.compile(r"^aotc: (?:device \d+: )?(\w+=\d+(?:, \w+=\d+)*) (\S[^:]*): [a-z_]+")
        for l in open(sys.argv[2]).read().splitlines():
            m = line.match(l.replace("\r\033[K", ""))
            if m and ": alternated" not in l:
                print("%s|%s" % (m.group(2), m.group(1).replace(" ", "")))
    else:
        sys.exit("cells.py: list, same, known or measured")


main()
