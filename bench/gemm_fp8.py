#!/usr/bin/env python3
"""bench/gemm_fp8.py: fp8 GEMM with scales: samples/gemm_fp8_scaled_sm90.tile against
torch._scaled_mm (cuBLASLt for per-tensor scales, its row-wise kernel for per-row/column scales)
on one GPU. docs/PERFORMANCE.md keeps the results.

    python3 bench/gemm_fp8.py [--shapes MxNxK,... | --sweep] [--reps R] [--variants "V;V"] [--fast-accum]

For each shape, A [M, K] and B [N, K] are random e4m3 tensors (uniform in [-1, 1) rounded by
torch), the row scales of A and column scales of B random in [0.5, 2) (f32), C bf16. Two
comparisons: row-wise (tilec with the vectors; torch._scaled_mm with scale_a [M, 1] and scale_b
[1, N]) and per-tensor (torch with two scalar scales; tilec with vectors of one value each, the
same kernel). Every result is checked against float32 math on the dequantized inputs first
(relative Frobenius error < 2^-7; a failure is reported and not timed). Timing is bench/gemm.py's:
each launch after an L2 flush and a spin that hides the host's launch path, contenders interleaved
over R rounds, medians; TFLOP/s = 2 M N K / time. torch._scaled_mm runs with use_fast_accum=False
(its default: partial sums promoted to f32) and, with --fast-accum, also with True (the fp8 tensor
core's own accumulation, as tilec's kernel does: docs/PERFORMANCE.md, "fp8 GEMM"). tilec variants:
-D overrides of the sample (default: the sample as written, and BN=128 STAGES=6), `splitk ...`
for the fp8 split-K form (gemm_splitk_sm90.tile, `splits=S`), `narrow ...` for the 2-CTA clusters
sharing A (gemm_fp8_narrow_sm90.tile), and `chosen` for what
tilec.gemm.scaled_mm picks itself, all launched through tilec.gemm.scaled_mm on min(tiles, SMs)
blocks; the best per shape is reported with the geometric mean over the shapes, and the chooser's
own geometric mean when it is among the variants.
"""
import argparse
import math
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
sys.path.insert(0, os.path.join(ROOT, "python"))
import gemm as G  # noqa: E402  (bench/gemm.py: timing helpers)
import tilec  # noqa: E402
import tilec.gemm  # noqa: E402

SHAPES = ("4096x4096x4096,8192x8192x8192,2048x8192x8192,8192x1024x8192,16384x4096x1024,"
          "512x6144x4096,512x14336x4096,2048x14336x4096,8192x28672x8192,128x8192x8192")


class Variant:
    """A contender: `[splitk | narrow] NAME=VALUE ...` (-D overrides of gemm_fp8_scaled_sm90.tile;
    with `splitk` of gemm_splitk_sm90.tile in its fp8 form, `splits=S` its run-time split; with
    `narrow` of gemm_fp8_narrow_sm90.tile), or `chosen` (tilec.gemm.scaled_mm's own choice),
    launched through tilec.gemm.scaled_mm."""

    def __init__(self, text):
        self.label = text.strip() or "as written"
        words = text.split()
        self.cfg = None
        if words == ["chosen"]:
            return
        kind = "fp8_scaled"
        if words and words[0] in ("splitk", "narrow"):
            kind, words = "fp8_" + words[0], words[1:]
        defines = dict(w.split("=", 1) for w in words if "=" in w)
        splits = int(defines.pop("splits")) if "splits" in defines else None
        self.cfg = tilec.gemm.Config(kind, defines, splits=splits) if kind == "fp8_splitk" else tilec.gemm.Config(kind, defines)

    def launcher(self, a, b, c, sa, sb):
        cfg = self.cfg
        if cfg is None:
            M, K = a.shape
            self.label = "chosen %r" % (tilec.gemm.choose_fp8(M, b.shape[0], K, G.SMS),)
        return lambda: tilec.gemm.scaled_mm(a, b, sa, sb, out=c, config=cfg)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shapes", default=SHAPES)
    ap.add_argument("--sweep", action="store_true",
                    help="bench/gemm.py's sweep shapes instead (those with K a multiple of 16, as fp8 TMA rows need)")
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--variants", default=";BN=128 STAGES=6")
    ap.add_argument("--fast-accum", action="store_true")
    args = ap.parse_args()
    shapes = G.parse_shapes(G.sweep_shapes() if args.sweep else args.shapes)
    if args.sweep:
        shapes = [sh for sh in shapes if sh[2] % 16 == 0]
    G.need_torch()
    torch = G.torch
    variants = [Variant(v) for v in args.variants.split(";")]
    print(f"device: {torch.cuda.get_device_name(0)}  torch {torch.__version__}  SMs {G.SMS}")
    torch.manual_seed(0)
    ratios = {"row-wise": [], "per-tensor": []}
    chosen = {k: [] for k in ("row-wise", "row-wise, fast accumulation", "per-tensor", "per-tensor, fast accumulation")}
    for M, N, K in shapes:
        a = (torch.rand(M, K, device="cuda") * 2 - 1).to(torch.float8_e4m3fn)
        b = (torch.rand(N, K, device="cuda") * 2 - 1).to(torch.float8_e4m3fn)
        sa = torch.rand(M, device="cuda") * 1.5 + 0.5
        sb = torch.rand(N, device="cuda") * 1.5 + 0.5
        ta, tb = torch.tensor(1.25, device="cuda"), torch.tensor(0.75, device="cuda")
        flop = 2.0 * M * N * K
        base = a.float() @ b.float().t()
        for mode in ("row-wise", "per-tensor"):
            if mode == "row-wise":
                ref = base * sa[:, None] * sb[None, :]
                tsa, tsb = sa[:, None].contiguous(), sb[None, :].contiguous()
                vsa, vsb = sa, sb
            else:
                ref = base * (1.25 * 0.75)
                tsa, tsb = ta, tb
                vsa, vsb = torch.full((M,), 1.25, device="cuda"), torch.full((N,), 0.75, device="cuda")
            rows = []
            for fast in ((False, True) if args.fast_accum else (False,)):
                ct = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)

                def run(fast=fast, ct=ct, tsa=tsa, tsb=tsb):
                    torch._scaled_mm(a, b.t(), scale_a=tsa, scale_b=tsb, out_dtype=torch.bfloat16,
                                     use_fast_accum=fast, out=ct)
                try:
                    run()
                    torch.cuda.synchronize()
                except Exception as ex:  # noqa: BLE001
                    print(f"{M}x{N}x{K} {mode} torch._scaled_mm(fast_accum={fast}): failed: {str(ex).splitlines()[0]}")
                    continue
                rows.append((f"torch._scaled_mm{' fast_accum' if fast else ''}", run, G.rel_fro(ct, ref)))
            for v in variants:
                c = torch.full((M, N), float("nan"), device="cuda", dtype=torch.bfloat16)
                launch = v.launcher(a, b, c, vsa, vsb)
                launch()
                torch.cuda.synchronize()
                err = G.rel_fro(c, ref)
                if not err < 2.0 ** -7:
                    print(f"{M}x{N}x{K} {mode} tilec [{v.label}]: FAIL rel. Frobenius error {err:.3g}")
                    continue
                rows.append((f"tilec [{v.label}]", launch, err))   # (the label after launcher: chosen's config)
            if not rows or not rows[0][0].startswith("torch"):
                continue
            times = G.time_interleaved([r[1] for r in rows], args.reps).medians
            print(f"== {M} x {N} x {K}, {mode} scales (median of {args.reps} interleaved rounds)")
            for (name, _, err), t in zip(rows, times):
                tf = flop / (t * 1e-3) / 1e12
                print(f"  {name:40s} {t * 1e3:9.1f} us {tf:7.1f} TFLOP/s {times[0] / t:6.3f}x torch  err {err:.2e}")
            tl = [t for (name, _, _), t in zip(rows, times) if name.startswith("tilec")]
            if tl:
                ratios[mode].append((f"{M}x{N}x{K}", times[0] / min(tl)))
            fast = [t for (name, _, _), t in zip(rows, times) if name.endswith("fast_accum")]
            ch = [t for (name, _, _), t in zip(rows, times) if name.startswith("tilec [chosen")]
            if ch:
                chosen[mode].append((f"{M}x{N}x{K}", times[0] / ch[0]))
                if fast:
                    chosen[mode + ", fast accumulation"].append((f"{M}x{N}x{K}", fast[0] / ch[0]))
            sys.stdout.flush()
    for what, table in (("best variant per shape", ratios), ("the chooser", chosen)):
        for mode, rs in table.items():
            if rs:
                gm = math.exp(sum(math.log(r) for _, r in rs) / len(rs))
                worst = min(rs, key=lambda x: x[1])
                print(f"== {mode}: tilec ({what}) geometric mean {gm:.3f}x torch._scaled_mm over "
                      f"{len(rs)} shapes, worst {worst[1]:.3f}x at {worst[0]}")


if __name__ == "__main__":
    main()
