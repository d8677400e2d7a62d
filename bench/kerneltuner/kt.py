"""Kernel Tuner (C backend) on templates/matmul_host.cpp: the space of its
AOTC_TUNE/AOTC_REQUIRE/AOTC_VALID_IF, one tune_kernel per shape (Kernel Tuner
tunes one problem size at a time, so it compiles every configuration again
for every shape), the answer checked against the naive triple loop's as aotc
does it (normwise relative error at most 1e-5), `iterations` timed runs.

    kt.py SHAPES.json ITERATIONS EVICT OUT.json

EVICT 1: the harness evicts the buffers' lines before each timed run (as
aotc's default); 0: it does not. Prints the time's parts and
writes per shape the configurations' median times (ms) to OUT.json."""
import json, os, sys, time

import numpy as np
import kernel_tuner

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.dirname(os.path.dirname(here))
shapes_file, iterations, evict, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
shapes = json.load(open(shapes_file))

tune_params = {"BM": [16, 64], "BN": [32, 128, 256], "BK": [32, 128], "UNROLL": [1, 4, 8]}
options = ["-std=c++17", "-O3", "-march=native", "-w", "-DKT_EVICT=%d" % evict,
           "-I" + os.path.join(root, "templates"), "-I" + os.path.join(root, "runtime", "include")]
rng = np.random.default_rng(1)


def normwise(answer, result, atol=None):
    """aotc's check: ||out - ref|| / ||ref|| <= 1e-5 over every output."""
    for ref, got in zip(answer, result):
        if ref is None:
            continue
        ref, got = ref.astype(np.float64), got.astype(np.float64)
        if not np.all(np.isfinite(got)) or np.linalg.norm(got - ref) > 1e-5 * np.linalg.norm(ref):
            return False
    return True


start = time.perf_counter()
parts = {"compile": 0.0, "verify": 0.0, "benchmark": 0.0}
best = {}
for s in shapes:
    M, N, K = s["M"], s["N"], s["K"]
    A = rng.uniform(-1, 1, M * K).astype(np.float32)
    B = rng.uniform(-1, 1, K * N).astype(np.float32)
    C = np.zeros(M * N, dtype=np.float32)
    # The naive reference, as aotc's AOTC_REFERENCE(matmul_host_naive), in double.
    ref = (A.reshape(M, K).astype(np.float64) @ B.reshape(K, N).astype(np.float64)).astype(np.float32).ravel()
    restrictions = ["BN % UNROLL == 0", "(BM * BK + BK * BN) * 4 <= 128 * 1024", "%d %% UNROLL == 0" % N]
    results, _ = kernel_tuner.tune_kernel(
        "matmul_kt", os.path.join(here, "harness.cpp"), (M, N), [np.int32(M), np.int32(N), np.int32(K), A, B, C],
        tune_params, lang="C", compiler_options=options, restrictions=restrictions,
        answer=[None, None, None, None, None, ref], verify=normwise, iterations=iterations, quiet=True,
        verbose=False)
    cells = {}
    for r in results:
        parts["compile"] += r["compile_time"] / 1e3
        parts["verify"] += r["verification_time"] / 1e3
        parts["benchmark"] += r["benchmark_time"] / 1e3
        key = "BM=%d,BN=%d,BK=%d,UNROLL=%d" % (r["BM"], r["BN"], r["BK"], r["UNROLL"])
        cells[key] = float(np.median(r["times"]))
    best["M=%d,N=%d,K=%d" % (M, N, K)] = cells
wall = time.perf_counter() - start
json.dump(best, open(out, "w"), indent=1, sort_keys=True)
print("%d cells; compile %.1f s, check %.1f s, timed runs %.1f s, the rest (Kernel Tuner, inputs, answers) %.1f s" %
      (sum(len(c) for c in best.values()), parts["compile"], parts["verify"], parts["benchmark"], wall - sum(parts.values())))
