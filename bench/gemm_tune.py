#!/usr/bin/env python3
"""bench/gemm_tune.py: autotune the sm_90a GEMM samples by compiling variants (tilec compiles one in
milliseconds, so searching a space of tile shapes and ring depths costs seconds, not minutes).

For each shape M x N x K: every variant of the space below is compiled by build/tilec (PTX, then the
cubin through ptxas; both times printed and summed), checked against cuBLAS on the shape's random
bf16 inputs (relative Frobenius error < 1e-2, else dropped), and timed beside cuBLAS and Triton's
persistent TMA matmul (bench/gemm.py's contenders and timing: median of R interleaved rounds). The
table of every variant and the best one per shape are printed.

Space (samples/gemm_sm90.tile one tile per block, samples/gemm_persistent_sm90.tile one block per
SM walking the tiles, samples/gemm_cluster_sm90.tile on 2-CTA clusters, samples/gemm_pingpong_sm90.tile
with ping-pong consumers; -D overrides of their consts): BN in {256, 128} with the deepest rings
that fit 227 KiB (BN=256: STAGES 3, 4, the persistent kernel's two C piece tiles included;
BN=128: STAGES 4, 5, 6), GROUP_M in {8, 16}; BM = 128, BK = 64; and the round-6 form of the
persistent kernel (bench/gemm_variants/persistent_r6.tile: one C tile, 3 stages)
(BK = 32 lost 5-9% everywhere in bench/NOTES.md round 3). --space names another list of variants
("persistent BN=128 STAGES=6;...", bench/gemm.py's variant syntax).

    python3 bench/gemm_tune.py [--reps R] [--shapes 4096x4096x4096,...] [--space "..."]
"""
import argparse
import os
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gemm  # noqa: E402  (bench/gemm.py: Variant, the Triton kernels, the timing)


def default_space():
    # the persistent kernel keeps two BM x BN/4 bf16 C pieces in shared memory for its TMA stores
    out = []
    for kind, rings in (("", ((256, (3, 4)), (128, (4, 5, 6)))), ("persistent ", ((256, (3, 4)), (128, (4, 5, 6))))):
        for bn, stages in rings:
            for st in stages:
                for g in (8, 16):
                    out.append(f"{kind}BN={bn} STAGES={st} GROUP_M={g}")
    out += ["cluster GROUP_M=8", "cluster GROUP_M=16", "pingpong GROUP_M=8", "pingpong GROUP_M=16"]
    # the round-6 form of the persistent kernel (one C tile, 3 stages): ahead where K is small
    r6 = os.path.join(os.path.dirname(os.path.abspath(__file__)), "gemm_variants", "persistent_r6.tile")
    out += [f"persistent src={r6} GROUP_M=8", f"persistent src={r6} GROUP_M=16"]
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--shapes", default="4096x4096x4096,8192x8192x8192,8192x1024x8192,16384x4096x1024,128x8192x8192")
    ap.add_argument("--space", default=None)
    args = ap.parse_args()
    torch.cuda.init()
    torch.zeros(1, device="cuda")
    gemm.SMS = torch.cuda.get_device_properties(0).multi_processor_count
    space = args.space.split(";") if args.space else default_space()
    t0 = time.perf_counter()
    variants = []
    for v in space:
        var = gemm.Variant(v.split())
        variants.append(var)
    wall = (time.perf_counter() - t0) * 1e3
    ptx_ms = sum(v.compile_ptx_ms for v in variants)
    cubin_ms = sum(v.compile_cubin_ms for v in variants)
    print(f"device: {torch.cuda.get_device_name()}; {len(variants)} tilec variants compiled: to PTX "
          f"{ptx_ms:.0f} ms in all ({ptx_ms / len(variants):.1f} ms each), to cubin with ptxas {cubin_ms:.0f} ms "
          f"in all; {wall:.0f} ms wall for compiling and loading every variant (process starts included)")
    tp = gemm.make_triton_persistent()
    torch.manual_seed(1)
    best_rows = []
    for shape in args.shapes.split(","):
        M, N, K = (int(x) for x in shape.split("x"))
        a, b, ref, cublas = gemm.make_inputs(M, N, K)
        rows = [cublas]
        if tp:
            ct = torch.empty_like(ref)
            tp[1](a, b, ct)
            torch.cuda.synchronize()
            if gemm.rel_fro(ct, ref) < 1e-2:
                rows.append(("Triton persistent TMA", lambda: tp[1](a, b, ct), 0.0))
        t_check = time.perf_counter()
        rows += gemm.variant_rows(variants, a, b, ref, shape)
        times = gemm.time_interleaved([r[1] for r in rows], args.reps)
        tune_s = time.perf_counter() - t_check
        flop = 2.0 * M * N * K
        print(f"== {M} x {N} x {K}: {len(rows) - 1} contenders checked and timed in {tune_s:.1f} s "
              f"(median of {args.reps} interleaved rounds)")
        order = sorted(range(len(rows)), key=lambda i: times[i])
        for i in order:
            tf = flop / (times[i] * 1e-3) / 1e12
            print(f"  {rows[i][0]:55s} {times[i] * 1e3:9.1f} us {tf:7.1f} TFLOP/s {tf / gemm.PEAK:6.3f} of peak "
                  f"{times[0] / times[i]:6.3f}x cuBLAS")
        tl = [i for i in order if rows[i][0].startswith("tilec")]
        tr = [i for i in order if rows[i][0].startswith("Triton")]
        best_rows.append((shape, rows[tl[0]][0] if tl else "-", times[0] / times[tl[0]] if tl else 0.0,
                          times[0] / times[tr[0]] if tr else 0.0, flop / (times[tl[0]] * 1e-3) / 1e12 if tl else 0.0))
        sys.stdout.flush()
    print("== best tilec variant per shape (ratios to cuBLAS of the same interleaved run)")
    for shape, name, r, rt, tf in best_rows:
        print(f"  {shape:20s} {name:45s} {tf:7.1f} TFLOP/s {r:6.3f}x cuBLAS   Triton persistent {rt:6.3f}x")


if __name__ == "__main__":
    main()
