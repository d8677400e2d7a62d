#!/usr/bin/env python3
"""Writes a large synthetic tuning database (docs/database.md's format) for
timing `aotc report`, `aotc emit` and the shard merge on many shapes.

The header (kernel, source hash, hardware, method, tunables, shape arguments,
configurations) comes from a real database, by default the committed host
one of templates/matmul_host.cpp, so `aotc emit templates/matmul_host.cpp
--arch host` accepts the result. Shapes are distinct (M, N, K) rows; times
follow a smooth model of the configuration against the shape, so different
variants win in different regions, and N % UNROLL != 0 is "invalid" as the
kernel's AOTC_VALID_IF says.

    bench/big-db.py --shapes 300000 -o /tmp/big/matmul_host.host_AMD_EPYC_12.2.0.json
    bench/big-db.py --shapes 300000 --shards 2 -o DIR/matmul_host.host_X.json
        (DIR/matmul_host.host_X.shard1.json, .shard2.json: shapes split between them)
"""
import argparse
import json
import math
import os

here = os.path.dirname(os.path.abspath(__file__))
default_template = os.path.join(here, "..", "tests", "codegen", "matmul_host.host_AMD_EPYC_12.2.0.json")


def shape(i):
    # Mixed radix: distinct rows for i < 97 * 101 * 1000.
    return [32 + (i % 97) * 8, 32 + (i // 97 % 101) * 4, 32 + (i // (97 * 101)) * 4]


def time_ms(values, row, i, c):
    bm, bn, bk, unroll = values
    m, n, k = row
    base = m * n * k * 2e-9
    fit = (1 + 0.3 * abs(math.log2(m / (4.0 * bm))) + 0.2 * abs(math.log2(n / float(bn)))
           + 0.1 * (k % bk != 0) + 0.05 * (4 - min(unroll, 4)))
    noise = 1 + ((i * 2654435761 + c * 40503) % 1000) / 20000.0
    return base * fit * noise


def write(path, head, configs, rows, first, samples, duplicates):
    with open(path, "w") as f:
        f.write('{\n "aotc_db": 1,\n')
        for key in ("kernel", "source", "source_hash", "hardware", "method", "tunables", "shape_args"):
            f.write(' "%s": %s,\n' % (key, json.dumps(head[key], separators=(",", ":"))))
        f.write(' "configs": [\n')
        f.write(",\n".join("  " + json.dumps(c, separators=(",", ":")) for c in configs))
        f.write('\n ],\n "shapes": [\n')
        f.write(",\n".join("  [%d,%d,%d]" % tuple(r) for r in rows))
        f.write('\n ],\n "measurements": [\n')
        lines = []
        for c, cfg in enumerate(configs):
            unroll = cfg["values"][3]
            for s, row in enumerate(rows):
                if row[1] % unroll:
                    lines.append('  {"config":%d,"shape":%d,"status":"invalid","note":"AOTC_VALID_IF(N %% UNROLL == 0) is false"}'
                                 % (c, s))
                    continue
                t = time_ms(cfg["values"], row, first + s, c)
                smp = ",".join("%.7g" % (t * (1 + 0.01 * j)) for j in range(samples))
                lines.append('  {"config":%d,"shape":%d,"status":"ok","time_ms":%.7g%s}'
                             % (c, s, t, ',"samples":[%s]' % smp if samples else ""))
        lines += lines[:duplicates]
        f.write(",\n".join(lines))
        f.write("\n ]\n}\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shapes", type=int, default=300000)
    ap.add_argument("--configs", type=int, default=4, help="N configurations spread over the template's")
    ap.add_argument("--samples", type=int, default=3, help="samples per ok measurement")
    ap.add_argument("--shards", type=int, default=1)
    ap.add_argument("--duplicates", type=int, default=0, help="repeat the first N measurements")
    ap.add_argument("--template", default=default_template)
    ap.add_argument("-o", "--output", required=True)
    a = ap.parse_args()
    head = json.load(open(a.template))
    step = max(1, len(head["configs"]) // a.configs)
    configs = head["configs"][::step][:a.configs]
    os.makedirs(os.path.dirname(os.path.abspath(a.output)), exist_ok=True)
    per = -(-a.shapes // a.shards)
    for sh in range(a.shards):
        lo, hi = sh * per, min(a.shapes, (sh + 1) * per)
        path = a.output if a.shards == 1 else a.output[:-len(".json")] + ".shard%d.json" % (sh + 1)
        write(path, head, configs, [shape(i) for i in range(lo, hi)], lo, a.samples, a.duplicates)


if __name__ == "__main__":
    main()
