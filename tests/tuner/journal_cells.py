"""The distinct (configuration, shape) cells of a tuning journal: what a
resumed tune reuses (tests/tuner/host-tune.sh, extern.sh). A cell is
journalled again when its shape's close contenders are alternated; a torn
last line is skipped."""
import json
import sys

seen = set()
for line in open(sys.argv[1]).read().splitlines():
    try:
        j = json.loads(line)
    except ValueError:
        continue
    seen.add((j["config"], tuple(j["shape"])))
print(len(seen))
