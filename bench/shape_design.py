#!/usr/bin/env python3
"""Off-grid shape sets for the shipped templates (issue 10): shapes drawn
log-uniformly per argument, stratified so that every argument's range is
covered evenly (a Latin hypercube in log space), about a fifth of the values
moved off multiples of 4, and the corners of the range added. Deterministic
for a seed. Writes a JSON array of objects, as `aotc tune --shapes` takes.

    bench/shape_design.py sgemm 64 1 >bench/offgrid/sgemm.train.json
"""
import json, math, random, sys

RANGES = {
    "sgemm": [("M", 128, 4096), ("N", 128, 4096), ("K", 256, 4096)],
    "softmax": [("rows", 1024, 65536), ("cols", 128, 16384)],
}


def design(kernel, n, seed, corners=True):
    rng = random.Random(seed)
    dims = RANGES[kernel]
    cols = []
    for name, lo, hi in dims:
        strata = list(range(n))
        rng.shuffle(strata)
        vals = []
        for s in strata:
            u = (s + rng.random()) / n
            v = int(round(math.exp(math.log(lo) + u * (math.log(hi) - math.log(lo)))))
            if v % 4 == 0 and rng.random() < 0.2:
                v += rng.choice([-3, -1, 1, 3])
            elif v % 4 != 0 and rng.random() < 0.8:
                v = max(lo, v - v % 4)
            vals.append(min(max(v, lo), hi))
        cols.append(vals)
    shapes = [dict(zip([d[0] for d in dims], row)) for row in zip(*cols)]
    if corners:
        for mask in range(1 << len(dims)):
            shapes.append({d[0]: (d[2] if mask >> i & 1 else d[1]) for i, d in enumerate(dims)})
    out, seen = [], set()
    for s in shapes:
        key = tuple(s.values())
        if key not in seen:
            seen.add(key)
            out.append(s)
    return out


if __name__ == "__main__":
    kernel, n, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    corners = len(sys.argv) < 5 or sys.argv[4] != "nocorners"
    print(json.dumps(design(kernel, n, seed, corners), indent=0).replace("\n", "").replace("}, {", "},\n{"))
