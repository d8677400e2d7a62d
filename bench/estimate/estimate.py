#!/usr/bin/env python3
"""How well `aotc tune`'s time-left figure predicts the end of a tune.

    bench/estimate/estimate.py [--aotc build/aotc] [--shapes FILE] [--cold] SOURCE [TUNE OPTIONS...]

Run from the repository root, on this CPU. Tunes SOURCE for --arch host into a
fresh database with the progress line printed every 0.2 s
(AOTC_PROGRESS_SECONDS) and timestamps each line as it arrives; --cold uses
a fresh compile cache, so that compiling competes with measuring as in a
first tune. Prints, at 5, 10, 25, 50 and 75 % of the tune's measuring time,
the time left the line said and the time that was actually left (from that
line to the summary), and their ratio, then the range of the ratio over every
line from 10 % to 90 %: within 0.7 to 1.3 is the 30 % the estimate should
hold to from the first 10 % of a tune on."""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

LEFT = re.compile(r"measured (\d+) .*, (?:(\d+)h(\d+)m|(\d+)m(\d+)s|(\d+)s) left")


def seconds(m):
    if m.group(2):
        return int(m.group(2)) * 3600 + int(m.group(3)) * 60
    if m.group(4):
        return int(m.group(4)) * 60 + int(m.group(5))
    return int(m.group(6))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--aotc", default="build/aotc")
    ap.add_argument("--cold", action="store_true")
    ap.add_argument("--trace", help="write every progress line with its time and the time left to this file")
    ap.add_argument("source")
    ap.add_argument("rest", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    tmp = tempfile.mkdtemp()
    env = dict(os.environ, AOTC_PROGRESS_SECONDS="0.2")
    if a.cold:
        env["AOTC_CACHE_DIR"] = os.path.join(tmp, "cache")
    cmd = [a.aotc, "tune", a.source, "--arch", "host", "--db", os.path.join(tmp, "db")] + a.rest
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, env=env, stderr=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    lines = []
    for line in p.stderr:
        lines.append((time.monotonic() - t0, line.rstrip("\n")))
    out = p.stdout.read()
    p.wait()
    end = time.monotonic() - t0
    est = [(t, seconds(m)) for t, l in lines for m in [LEFT.search(l)] if m]
    took = re.search(r"in ([0-9.]+) s", out)
    if p.returncode or not est or not took:
        sys.exit("estimate: the tune failed or printed no estimate (exit %d)" % p.returncode)
    measuring = float(took.group(1))
    if a.trace:
        with open(a.trace, "w") as f:
            for t, l in lines:
                f.write("%.2f %.2f %s\n" % (t, end - t, l))
    start = end - measuring  # the measuring started here (compiling the first ones before)
    print("%s: %s; measuring %.1f s of %.1f s" % (" ".join(cmd[1:3]), out.strip().splitlines()[-3][:80], measuring, end))
    for share in (0.05, 0.10, 0.25, 0.50, 0.75):
        at = start + share * measuring
        t, left = next(((t, l) for t, l in est if t >= at), est[-1])
        truth = end - t
        print("  at %3d %% (%.1f s in): said %d s left, %.1f s were; ratio %.2f"
              % (100 * share, t - start, left, truth, left / truth if truth > 0 else float("nan")))
    # Every line from 10 % to 90 % of the measuring (past that, a second of
    # rounding is more than 30 % of what is left).
    ratios = [left / (end - t) for t, left in est
              if start + 0.10 * measuring <= t <= start + 0.90 * measuring and end - t > 0]
    if ratios:
        print("  every line from 10 %% to 90 %% (%d): ratio %.2f to %.2f, %d outside 0.7-1.3"
              % (len(ratios), min(ratios), max(ratios), sum(1 for r in ratios if not 0.7 <= r <= 1.3)))


main()
