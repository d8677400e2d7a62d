"""The cells of a set of tuning databases as emit merges them (docs/database.md,
"Several machines, several shards": a cell measured in more than one file keeps
the first, in path order), one line each, sorted: configuration, shape, status.
Times are left out: two tunes of one kernel agree on these lines, not on times.
Usage: db_cells.py DB.json..."""
import json
import sys

cells = {}
for path in sorted(sys.argv[1:]):
    with open(path) as f:
        d = json.load(f)
    for m in d["measurements"]:
        shape = " ".join(f"{a}={v}" for a, v in zip(d["shape_args"], d["shapes"][m["shape"]]))
        cells.setdefault((d["configs"][m["config"]]["name"], shape), m["status"])
for (config, shape), status in sorted(cells.items()):
    print(f"{config}\t{shape}\t{status}")
