#!/usr/bin/env python3
"""A smaller copy of a tuning database, for tests where its size is not the
point: cut-db.py SRC DST [--configs N] [--externs] [--shapes N]

--configs N keeps every N-th configuration (with --externs, every AOTC_EXTERN
routine too); --shapes N keeps every N-th shape. The measurements of what is
dropped go, the rest are renumbered. SRC and DST may be the same file."""
import argparse
import json


def every(items, n, also=lambda item: False):
    """Old index -> new index of every n-th item and those also() keeps."""
    kept = [i for i, item in enumerate(items) if i % n == 0 or also(item)]
    return {old: new for new, old in enumerate(kept)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("src")
    ap.add_argument("dst")
    ap.add_argument("--configs", type=int, default=1)
    ap.add_argument("--externs", action="store_true")
    ap.add_argument("--shapes", type=int, default=1)
    a = ap.parse_args()
    d = json.load(open(a.src))
    configs = every(d["configs"], a.configs, lambda c: a.externs and c.get("extern"))
    shapes = every(d["shapes"], a.shapes)
    d["configs"] = [d["configs"][i] for i in configs]
    d["shapes"] = [d["shapes"][i] for i in shapes]
    d["measurements"] = [dict(m, config=configs[m["config"]], shape=shapes[m["shape"]])
                         for m in d["measurements"] if m["config"] in configs and m["shape"] in shapes]
    json.dump(d, open(a.dst, "w"))


main()
