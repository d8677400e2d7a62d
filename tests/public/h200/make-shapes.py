#!/usr/bin/env python3
# The training and held-out shape lists of run-on-h200.sh, one pair per
# kernel in shapes/ (the JSON that `aotc tune --shapes` takes). Sizes are
# those these kernels run at on an H200: LLM activations of B*T = 1 to
# 32768 rows by C = 768 to 8192 channels (GELU on the MLP's 4C), rows of a
# 32000- to 128256-word vocabulary for the row max, matrixMul up to 4096.
# Held out per kernel: 8 shapes drawn at random between the training values
# and beyond them (none a training shape), then 2 beyond the training range,
# one smaller and one larger. A shape's input stays under about 270M
# elements: the tuner fills every input twice on the host (about 3 ns an
# element), which is what a large shape costs, more than its launches.
# Run from anywhere: python3 tests/public/h200/make-shapes.py
import json, math, os, random

here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "shapes")
rnd = random.Random(90)


def logu(lo, hi):
    return math.exp(rnd.uniform(math.log(lo), math.log(hi)))


def held_out(train, draw, n, keys):
    seen, out = {tuple(s[k] for k in keys) for s in train}, []
    while len(out) < n:
        s = draw()
        if tuple(s[k] for k in keys) not in seen:
            seen.add(tuple(s[k] for k in keys))
            out.append(s)
    return out


def write(kernel, train, held):
    for name, shapes in (("train", train), ("heldout", held)):
        with open(os.path.join(here, "%s.%s.json" % (kernel, name)), "w") as f:
            f.write("[\n" + ",\n".join(" " + json.dumps(s) for s in shapes) + "\n]\n")


# gelu_forward_kernel2: N elements, a multiple of x128::size (4). Training:
# 16 sizes evenly spaced in log from 2^14 to 2^28; held out: B*T tokens
# times an MLP width (4 * 768, 4 * 1600, 4 * 2048, 11008, 14336, 4 * 4096),
# and two beyond the training range.
train = [{"N": int(round(2 ** (14 + 14 * i / 15) / 64)) * 64} for i in range(16)]
widths = [3072, 6400, 8192, 11008, 14336, 16384]
held = held_out(train, lambda: {"N": int(round(logu(8, 16384))) * rnd.choice(widths)}, 8, ["N"])
held += [{"N": 3 * 3072}, {"N": 24576 * 14336}]
write("gelu_forward_kernel2", train, held)

# layernorm_forward_kernel3: B, T, C (N = B * T rows).
bt = [(1, 64), (4, 256), (8, 1024), (16, 1024), (32, 1024)]
train = [{"B": b, "T": t, "C": c} for b, t in bt for c in [768, 1600, 3072, 6144]]
def ln():
    while True:
        s = {"B": rnd.choice([1, 2, 3, 6, 12, 24, 48]), "T": rnd.choice([77, 128, 512, 1000, 2048]),
             "C": rnd.choice([1024, 2048, 2560, 4096, 5120, 8192])}
        if s["B"] * s["T"] * s["C"] <= 270 * 2 ** 20:
            return s
held = held_out(train, ln, 8, ["B", "T", "C"])
held += [{"B": 1, "T": 16, "C": 768}, {"B": 48, "T": 1024, "C": 4096}]
write("layernorm_forward_kernel3", train, held)

# rmsnorm_cub: rows (tokens, 1 for decoding) by cols (hidden size).
train = [{"rows": r, "cols": c} for r in [1, 16, 128, 1024, 4096, 16384] for c in [768, 2048, 4096, 8192]]
def rms():
    while True:
        s = {"rows": int(round(logu(1, 40000))),
             "cols": rnd.choice([1024, 1536, 2560, 3072, 5120, 6144, 7168, 12288])}
        if s["rows"] * s["cols"] <= 270 * 2 ** 20:
            return s
held = held_out(train, rms, 8, ["rows", "cols"])
held += [{"rows": 2, "cols": 16384}, {"rows": 32768, "cols": 5120}]
write("rmsnorm_cub", train, held)

# MatrixMulCUDA: wA (K), wB (N), hA (M), multiples of 32, so that both
# block sizes are valid and the sample's fixed one runs on every shape.
train = [{"wA": k, "wB": n, "hA": m} for m in [256, 1024, 4096] for n in [256, 1024, 4096]
         for k in [256, 1024, 4096]]
def mm():
    return {d: int(round(logu(96, 4608) / 32)) * 32 for d in ["wA", "wB", "hA"]}
held = held_out(train, mm, 8, ["wA", "wB", "hA"])
held += [{"wA": 64, "wB": 96, "hA": 64}, {"wA": 4608, "wB": 4608, "hA": 4608}]
write("MatrixMulCUDA", train, held)

# rowmax_kernel: B, T, C; rows of channels, and rows of a vocabulary.
train = [{"B": b, "T": t, "C": c} for b, t in [(1, 64), (1, 1024), (8, 1024), (32, 1024)]
         for c in [768, 2048, 6144]]
train += [{"B": b, "T": t, "C": c} for b, t in [(1, 64), (4, 128), (2, 1024)] for c in [32000, 50257]]
def rowmax():
    while True:
        s = {"B": rnd.choice([1, 2, 4, 8, 16, 24]), "T": rnd.choice([64, 256, 1000, 1024]),
             "C": rnd.choice([1024, 1600, 4096, 5120, 32768, 50304, 128256])}
        if s["B"] * s["T"] * s["C"] <= 270 * 2 ** 20:
            return s
held = held_out(train, rowmax, 8, ["B", "T", "C"])
held += [{"B": 1, "T": 16, "C": 128256}, {"B": 48, "T": 1024, "C": 4096}]
write("rowmax_kernel", train, held)
