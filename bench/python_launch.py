#!/usr/bin/env python3
"""bench/python_launch.py: the host cost of a launch from Python. tilec's package launching
samples/vector_add.tile on CUDA torch tensors (4 arguments: three tensors by address, one i32)
against a Triton kernel of the same arguments and torch.add(out=), each launched R times back to
back (asynchronously, on torch's current stream) and timed on the host: the wall time of the loop
divided by R, after a warm-up. The kernels are tiny (1024 elements), so the GPU keeps up and the
time is the host's per launch. Median of 5 such loops.

    TILEC_LIB=build-gpu/libtile.so python3 bench/python_launch.py [--launches R]
"""
import argparse
import os
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))
import tilec  # noqa: E402


def per_launch_us(fn, launches, torch):
    for _ in range(50):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(launches):
            fn()
        t1 = time.perf_counter()
        torch.cuda.synchronize()
        times.append((t1 - t0) / launches * 1e6)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--launches", type=int, default=2000)
    args = ap.parse_args()
    try:
        import torch
    except ImportError:
        sys.exit("bench/python_launch.py: needs PyTorch with CUDA")
    n = 1024
    a, b, c = (torch.rand(n, device="cuda") for _ in range(3))
    add = tilec.compile(os.path.join(ROOT, "samples", "vector_add.tile"), target="sm_90a")["vector_add"]
    rows = [("tilec (package, torch tensors)", lambda: add(a, b, c, n, grid=(n + 255) // 256, device="cuda")),
            ("torch.add(out=)", lambda: torch.add(a, b, out=c))]
    try:
        import triton
        import triton.language as tl

        @triton.jit
        def tadd(x, y, z, n, BLOCK: tl.constexpr):
            i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            tl.store(z + i, tl.load(x + i, mask=i < n) + tl.load(y + i, mask=i < n), mask=i < n)

        rows.append(("triton %s (jit launcher)" % triton.__version__,
                     lambda: tadd[((n + 255) // 256,)](a, b, c, n, BLOCK=256)))
    except ImportError as ex:
        print("triton: not available (%s)" % ex)
    print("device: %s  torch %s  tilec %s" % (torch.cuda.get_device_name(), torch.__version__, tilec.version()))
    for name, fn in rows:
        print("%-40s %7.2f us per launch (host, median of 5 x %d)" % (name, per_launch_us(fn, args.launches, torch),
                                                                     args.launches))
    add(a, b, c, n, grid=(n + 255) // 256, device="cuda")
    torch.cuda.synchronize()
    print("check: tilec's result %s torch's" % ("equals" if torch.equal(c, a + b) else "DIFFERS FROM"))


if __name__ == "__main__":
    main()
