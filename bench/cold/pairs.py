"""Per pair of tunes of one kernel (bench/cold/compare.sh, bench/cold/gpu.sh):
the per-cell time ratio over the cells both measured ok (median and the
10th-90th percentiles) and the winners' agreement (tests/tuner/noise_agree.py).

    python3 bench/cold/pairs.py TMP KERNEL RUN_A:RUN_B ...

TMP/RUN/KERNEL.*.json is each run's database."""
import glob
import json
import statistics
import subprocess
import sys

sys.path.insert(0, "tests/tuner")
from noise_agree import load  # noqa: E402


def db(tmp, run, kernel):
    return glob.glob("%s/%s/%s.*.json" % (tmp, run, kernel))[0]


def main():
    tmp, kernel = sys.argv[1], sys.argv[2]
    for pair in sys.argv[3:]:
        a, b = pair.split(":")
        (_, ca), (_, cb) = load(db(tmp, a, kernel)), load(db(tmp, b, kernel))
        r = sorted(cb[k]["time_ms"] / ca[k]["time_ms"] for k in ca if k in cb)
        q = lambda p: r[min(len(r) - 1, int(p * len(r)))]  # noqa: E731
        j = json.loads(subprocess.check_output(
            [sys.executable, "tests/tuner/noise_agree.py", db(tmp, a, kernel), db(tmp, b, kernel)]))
        print("%s vs %s: %d cells, time ratio %.3f (median), %.3f to %.3f (p10-p90); "
              "winners agree within noise on %d of %d shapes, the same on %d"
              % (b, a, len(r), statistics.median(r), q(0.1), q(0.9), j["agree"], j["shapes"], j["same_winner"]))


main()
