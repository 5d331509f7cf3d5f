#!/usr/bin/env python3
"""bench/fit_gemm_model.py: fits the constants of tilec.gemm's cost model (SPLITK, which
estimate_us reads) to the times of a ranked bench/gemm.py log (the splitk or tune preset).

    python3 bench/fit_gemm_model.py LOG [--skip 'SHAPE:WORD' ...] [--sms 132]

Every `tilec [variant]` row of the log whose variant is one of the package's kinds (plain,
persistent, pingpong, splitk) as written in samples/ becomes a point: its configuration (dp=waves
as the tiles of the whole waves), its shape, its median time. --skip leaves out the rows of a shape
whose label holds a word (`128x4096x4096:splitk`: rows timed while the host, not the GPU, was the
bound; `*:CW=32`: every shape). The fit minimises the sum over the points of log(estimate / time)^2
by coordinate search from the package's constants (each constant scaled up or down by a step that
grows on success and shrinks on failure), then prints the constants, the root-mean-square error
before and after, and each point's time beside its estimate. Nothing is written: copy the
constants into python/tilec/gemm.py by hand (docs/PERFORMANCE.md, "Split-K").
"""
import argparse
import math
import os
import random
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "python"))
import tilec.gemm as tgemm  # noqa: E402

FITTED = ("unit_us", "kernel_us", "launch_us", "reduce_gbs", "dram_gbs")   # with sm_tflops[256, 128, 64]


def config_of(label, M, N, sms):
    """The tilec.gemm.Config of a variant label, or None (another kernel, a rewritten source)."""
    words = label.split()
    if any(w.startswith(("src=", "rewrite=", "clusters=")) or w in ("cluster", "racy") for w in words):
        return None
    kind = next((w for w in words if w in ("plain", "persistent", "pingpong", "splitk")), "plain")
    kv = dict(w.split("=", 1) for w in words if "=" in w)
    splits, dp = int(kv.pop("splits", 2)), kv.pop("dp", "0")
    defines = {k: int(v) if v.isdigit() else v for k, v in kv.items()}
    if kind != "splitk":
        return tgemm.Config(kind, defines)
    if dp == "waves":
        bn = int(defines.get("BN", 128))
        tiles = -(-M // 128) * -(-N // bn)
        dp = tiles // sms * sms
    return tgemm.Config("splitk", defines, splits=splits, dp=int(dp))


def read_points(path, skip, sms):
    points, shape = [], None
    with open(path) as f:
        for line in f:
            m = re.match(r"== (\d+) x (\d+) x (\d+):", line)
            if m:
                shape = tuple(int(x) for x in m.groups())
                continue
            m = re.match(r"\s+tilec \[(.*?)\]\s+([\d.]+) us", line)
            if not m or shape is None:
                continue
            label, us = m.group(1), float(m.group(2))
            key = "%dx%dx%d" % shape
            if any((s == "*" or s == key) and w in label.split() for s, w in skip):
                continue
            cfg = config_of(label, shape[0], shape[1], sms)
            if cfg is not None:
                points.append((label, shape, us, cfg))
    return points


def get(name):
    return tgemm.SPLITK["sm_tflops"][int(name[3:])] if name.startswith("tf_") else tgemm.SPLITK[name]


def put(name, v):
    if name.startswith("tf_"):
        tgemm.SPLITK["sm_tflops"][int(name[3:])] = v
    else:
        tgemm.SPLITK[name] = v


def loss(points, sms):
    return sum(math.log(tgemm.estimate_us(cfg, *shape, sms) / us) ** 2 for _, shape, us, cfg in points)


def main():
    ap = argparse.ArgumentParser(description="Fit tilec.gemm's cost model to a ranked bench/gemm.py log.")
    ap.add_argument("log")
    ap.add_argument("--skip", action="append", default=[], help="SHAPE:WORD (SHAPE may be *), repeatable")
    ap.add_argument("--sms", type=int, default=132)
    ap.add_argument("--rounds", type=int, default=3000)
    args = ap.parse_args()
    try:
        skip = [tuple(s.split(":", 1)) for s in args.skip]
        if any(len(s) != 2 for s in skip):
            raise ValueError
    except ValueError:
        sys.exit("bench/fit_gemm_model.py: --skip takes SHAPE:WORD")
    points = read_points(args.log, skip, args.sms)
    if not points:
        sys.exit(f"bench/fit_gemm_model.py: no tilec rows of the package's kinds in {args.log}")
    names = ["tf_256", "tf_128", "tf_64"] + list(FITTED)
    rng = random.Random(1)
    before = best = loss(points, args.sms)
    step = {n: 0.2 for n in names}
    for _ in range(args.rounds):
        n = rng.choice(names)
        old = get(n)
        for sign in (1, -1):
            put(n, max(1e-3, old * (1 + sign * step[n])))
            trial = loss(points, args.sms)
            if trial < best:
                best = trial
                step[n] *= 1.2
                break
            put(n, old)
        else:
            step[n] *= 0.7
    rms = lambda total: math.exp(math.sqrt(total / len(points))) - 1   # noqa: E731
    print(f"{len(points)} points; root-mean-square error of the estimate {rms(before):.1%} before, {rms(best):.1%} after")
    print("sm_tflops: {256: %.2f, 128: %.2f, 64: %.2f}" % tuple(get(n) for n in names[:3]))
    for n in FITTED:
        print(f"{n}: {get(n):.2f}")
    for label, shape, us, cfg in points:
        est = tgemm.estimate_us(cfg, *shape, args.sms)
        print(f"  {'%dx%dx%d' % shape:18s} {label:55s} {us:8.1f} us  model {est:8.1f} us  {est / us:5.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
