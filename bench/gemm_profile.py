#!/usr/bin/env python3
"""bench/gemm_profile.py: one GEMM shape launched a few times with one configuration, for a profiler
to measure (ncu): cuBLAS (torch.matmul) or a tilec.gemm configuration, C = A B^T on random bf16
A [M, K] and B [N, K]. The result is checked against float32 math (relative Frobenius error, which
must stay below 2^-7); the timing and the counters are the profiler's. docs/PERFORMANCE.md uses it
for the L2 requests of TMA loads:

    ncu -k regex:gemm --launch-skip 3 --launch-count 1 --metrics gpu__time_duration.sum,\\
        lts__t_requests_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read.sum,\\
        lts__throughput.avg.pct_of_peak_sustained_elapsed \\
        python3 bench/gemm_profile.py 3000x5000x1064 persistent GROUP_M=16
    ncu -k regex:nvjet ... python3 bench/gemm_profile.py 3000x5000x1064 cublas

(ncu refuses the whole command when a metric, or a `regex:` of metrics, names none this GPU has.)

The configuration is `cublas`, `chosen` (what tilec.gemm.matmul picks), or a kind of
tilec.gemm.Config followed by NAME=VALUE -D overrides (and splits=S, dp=D for the split-K kinds):
`cluster`, `persistent BN=192 CW=32 STAGES=5 GROUP_M=16`, `splitk BN=256 splits=4 dp=3564`.
--device sim launches a tilec configuration once on the simulator with NumPy arrays instead (a
check of the configuration at small shapes; nothing to profile).
"""
import argparse
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))
import tilec  # noqa: E402
import tilec.gemm  # noqa: E402

MAX_ERROR = 2.0 ** -7


def parse_config(words):
    """None for cublas, "chosen", or a tilec.gemm.Config from its kind and NAME=VALUE words."""
    if words == ["cublas"]:
        return None
    if words == ["chosen"]:
        return "chosen"
    kind, defines, split = words[0], {}, {}
    if kind not in ("plain", "persistent", "pingpong", "cluster", "splitk"):
        raise SystemExit("gemm_profile: %r is not cublas, chosen or a bf16 kind of tilec.gemm.Config (plain, persistent, "
                         "pingpong, cluster, splitk)" % kind)
    for w in words[1:]:
        name, eq, value = w.partition("=")
        if not eq or not name or not value:
            raise SystemExit("gemm_profile: %r is not NAME=VALUE" % w)
        if name in ("splits", "dp"):
            if not value.isdigit():
                raise SystemExit("gemm_profile: %s must be a non-negative integer, not %r" % (name, value))
            split[name] = int(value)
        else:
            defines[name] = int(value) if value.lstrip("-").isdigit() else value
    try:
        return tilec.gemm.Config(kind, defines, **split)
    except ValueError as e:
        raise SystemExit("gemm_profile: %s" % e)


def run_sim(M, N, K, cfg, launches):
    import numpy as np
    rng = np.random.default_rng(1)
    # bf16 bits: the high halves of random float32 values (what the bits say is the input)
    a, b = ((rng.uniform(-1, 1, s).astype(np.float32).view(np.uint32) >> 16).astype(np.uint16) for s in ((M, K), (N, K)))
    c = np.full((M, N), 0x7FC0, np.uint16)   # NaN: an element never written fails the check
    for _ in range(launches):
        tilec.gemm.matmul(a, b, out=c, config=None if cfg == "chosen" else cfg, device="sim")
    value = lambda bits: (bits.astype(np.uint32) << 16).view(np.float32).astype(np.float64)  # noqa: E731
    want = value(a) @ value(b).T
    got = value(c)
    return float(np.linalg.norm(got - want) / np.linalg.norm(want))


def run_cuda(M, N, K, cfg, launches):
    import torch
    torch.manual_seed(1)
    a = (torch.rand(M, K, device="cuda") * 2 - 1).to(torch.bfloat16)
    b = (torch.rand(N, K, device="cuda") * 2 - 1).to(torch.bfloat16)
    c = torch.full((M, N), float("nan"), device="cuda", dtype=torch.bfloat16)
    for _ in range(launches):
        if cfg is None:
            torch.matmul(a, b.t(), out=c)
        else:
            tilec.gemm.matmul(a, b, out=c, config=None if cfg == "chosen" else cfg)
    torch.cuda.synchronize()
    want = a.float() @ b.float().t()
    return float((c.float() - want).norm() / want.norm())


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("shape", help="MxNxK")
    ap.add_argument("config", nargs="+", help="cublas | chosen | KIND [NAME=VALUE ...]")
    ap.add_argument("--launches", type=int, default=5, help="launches (default 5: profile the 4th with --launch-skip 3)")
    ap.add_argument("--device", choices=("cuda", "sim"), default="cuda")
    args = ap.parse_args()
    try:
        M, N, K = (int(x) for x in args.shape.lower().split("x"))
    except ValueError:
        raise SystemExit("gemm_profile: the shape is MxNxK, not %r" % args.shape)
    if min(M, N, K) < 1 or args.launches < 1:
        raise SystemExit("gemm_profile: M, N, K and --launches must be positive")
    cfg = parse_config(args.config)
    if cfg is None and args.device == "sim":
        raise SystemExit("gemm_profile: cublas runs on CUDA only")
    shown = "cuBLAS (torch.matmul)" if cfg is None else repr(tilec.gemm.choose(M, N, K)) + " (chosen)" \
        if cfg == "chosen" else repr(cfg)
    err = (run_sim if args.device == "sim" else run_cuda)(M, N, K, cfg, args.launches)
    print("%dx%dx%d %s on %s, %d launches: relative Frobenius error %.3g" % (M, N, K, shown, args.device, args.launches, err))
    if not err <= MAX_ERROR:
        print("gemm_profile: the result is wrong (error above %g)" % MAX_ERROR)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
