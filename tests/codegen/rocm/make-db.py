#!/usr/bin/env python3
"""Writes the ROCm test databases of axpy.cu (tests/codegen/rocm.sh): times
made up from a roofline-like formula, NOT measured on any device (no AMD GPU
was available); the hardware names say so. Rerun after editing axpy.cu:

    tests/codegen/rocm/make-db.py build/aotc
"""
import json, math, os, subprocess, sys

here = os.path.dirname(os.path.abspath(__file__))
aotc = sys.argv[1]
src = os.path.join(here, "axpy.cu")
ir = json.loads(subprocess.run([aotc, "parse", src], capture_output=True, text=True, check=True).stdout)
names = subprocess.run([aotc, "configs", src], capture_output=True, text=True, check=True).stdout.split("\n")
configs = [n for n in names if "<" in n]
values = [[int(v) for v in n[n.index("<") + 1:-1].split(",")] for n in configs]
shapes = [[1 << e] for e in range(10, 27)]

for arch, cus, gbps in (("gfx90a", 104, 1.6e9), ("gfx942", 304, 5.3e9)):
    ms = []
    for c, (bs, per) in enumerate(values):
        for s, (n,) in enumerate(shapes):
            blocks = math.ceil(n / (bs * per))
            t = 0.003 + n * 12 / gbps                     # launch, then 12 bytes an element
            if blocks < 4 * cus:                           # too few blocks to fill the device
                t *= 1 + (4 * cus - blocks) / (4 * cus)
            if n > 1 << 20:                                # more elements a thread pays at size
                t *= 1 - 0.04 * math.log2(per)
            t *= 1 + 0.03 * abs(math.log2(bs / (256 if arch == "gfx90a" else 512)))
            t = round(t, 6)
            ms.append({"config": c, "shape": s, "status": "ok", "time_ms": t,
                       "samples": [t, t, t], "error": 0.0})
    db = {
        "aotc_db": 1, "kernel": "axpy", "source": "tests/codegen/rocm/axpy.cu",
        "source_hash": ir["source_hash"],
        "hardware": {"id": "rocm_made_up_" + arch, "backend": "rocm",
                     "name": "made up for tests/codegen/rocm.sh, not measured", "arch": arch,
                     "sm_count": cus},
        "method": {"note": "times from make-db.py's formula, not measurements"},
        "tunables": ["BS", "PER"], "shape_args": ["n"],
        "configs": [{"name": n, "values": v} for n, v in zip(configs, values)],
        "shapes": shapes, "measurements": ms,
    }
    with open(os.path.join(here, "axpy.rocm_made_up_%s.json" % arch), "w") as f:
        json.dump(db, f, indent=1)
        f.write("\n")
