#!/usr/bin/env python3
"""Gives a database written before code keys (docs/database.md, "The key") the
code of each configuration, so that later edits keep its measurements.

Usage: tools/db-add-codes.py AOTC SOURCE DB.json...

Only a database whose source_hash is SOURCE's as it is now is changed: its
measurements are then known to be of the code SOURCE has. Each configuration
line gets "code" (its function's kernel.code from `AOTC parse SOURCE`); every
other byte stays as it was. A database that has codes already is left alone.
"""
import json
import subprocess
import sys


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__.strip().splitlines()[-7])
    aotc, source, dbs = sys.argv[1], sys.argv[2], sys.argv[3:]
    ir = json.loads(subprocess.run([aotc, "parse", source], check=True, capture_output=True, text=True).stdout)
    status = 0
    for path in dbs:
        db = json.load(open(path))
        kernel = next((k for k in ir["kernels"] if k.get("id", k["name"]) == db["kernel"] or
                       k["name"] == db["kernel"]), None)
        if db["source_hash"] != ir["source_hash"] or kernel is None or "code" not in kernel:
            print(f"{path}: not tuned from {source} as it is now (or no such kernel): left alone", file=sys.stderr)
            status = 1
            continue
        alts = {a["name"]: a["code"] for a in kernel.get("alternatives", [])}
        externs = {e["name"]: e["code"] for e in kernel.get("externs", [])}
        lines = open(path).read().split("\n")
        out, in_configs, changed = [], False, 0
        for line in lines:
            if line == ' "configs": [':
                in_configs = True
            elif in_configs and line.startswith(" ]"):
                in_configs = False
            elif in_configs and line.startswith("  {"):
                body = line.rstrip(",")
                c = json.loads(body)
                if "code" not in c:
                    code = externs[c["name"]] if c.get("extern") else alts[c["function"]] if "function" in c \
                        else kernel["code"]
                    line = body[:-1] + ',"code":"' + code + '"}' + ("," if line.endswith(",") else "")
                    changed += 1
            out.append(line)
        if changed:
            with open(path + ".tmp", "w") as f:
                f.write("\n".join(out))
            import os
            os.replace(path + ".tmp", path)
        print(f"{path}: {changed} configurations given their code")
    sys.exit(status)


main()
