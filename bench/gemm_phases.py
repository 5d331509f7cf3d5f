#!/usr/bin/env python3
"""bench/gemm_phases.py: where the time of samples/gemm_persistent_sm90.tile (or, with --kernel cluster,
gemm_cluster_sm90.tile: a row per CTA of each tile pair) goes, tile by tile, read from inside the
kernel with clock() and global_time() (docs/LANGUAGE.md section 28).

A copy of the sample gets a `times` parameter and four timestamps: the block's start (after its
set-up, before the roles split), the consumers' first full stage of each tile (k = 0's wait
returned), the tile's last mma done (mma_wait(0)) and its epilogue's last store issued; the first
consumer thread stores them per tile with the block and the GPU time of the block's start. The
copy is compiled with the given -D overrides, launched once to warm up and once measured, on
random bf16 operands (C checked against float64 math first), and the per-tile phases are printed
in SM cycles: min / median / max over the tiles, then the spread of the blocks' start times.

    python3 bench/gemm_phases.py 1000x1496x1000 BN=192 CW=32 STAGES=5 GROUP_M=16
    python3 bench/gemm_phases.py 1000x1496x1000 --kernel cluster BN=96 CW=16 SC=3 STAGES=7
    python3 bench/gemm_phases.py 300x520x200 --device sim        (a check of the copy: steps, not cycles)

The operands go in as NumPy arrays (copied to the device before each launch), so some of them may
still be in L2 when the measured launch starts; with --flush they are torch tensors in GPU memory
and L2 is flushed before each launch, as bench/gemm.py times.
"""
import argparse
import os
import statistics
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))
import tilec  # noqa: E402

FIELDS = 9   # per tile: block, start, first stage, last mma, epilogue, start (ns), tile, 1, epilogue (ns)


def sub(text, old, new):
    if old not in text:
        raise SystemExit("gemm_phases: the sample no longer has %r: update the rewrite" % old.strip())
    return text.replace(old, new, 1)


# Per sample: the text each timestamp goes after, and the tile's index (a row of `times`).
KERNELS = {
    "persistent": dict(
        sample="gemm_persistent_sm90.tile",
        params="c: tma bf16[M, N] box[BM, CW], M: i32, N: i32, K: i32) block(384) {",
        loop="            var acc: f32[BM, BN] = 0.0;\n            for k in 0 .. nk {\n                wait(st);\n",
        last="                elect { tma.store(c[m, n + q * CW], sc[q % SC]); tma.commit(); }\n            }\n",
        index="t", tile=lambda bm, bn: (bm, bn)),
    # 2-CTA clusters: tile pair p, rank r of the pair is row 2 p + r; the C tile of one CTA is BM x BN
    "cluster": dict(
        sample="gemm_cluster_sm90.tile",
        params="c: tma bf16[M, N] box[BM, CW], M: i32, N: i32, K: i32) block(384) cluster(2) {",
        loop="            var acc1: f32[BM, BH] = 0.0;\n            for k in 0 .. nk {\n                wait(st);\n",
        last="                elect { tma.store(c[m, n + BH + q * CW], sc[q % SC]); tma.commit(); }\n            }\n",
        index="p * 2 + rank", tile=lambda bm, bh: (bm, 2 * bh)),
}


def instrument(text, kind="persistent"):
    """The sample with the timestamps and the `times` parameter."""
    k = KERNELS[kind]
    text = sub(text, k["params"], k["params"].replace("M: i32, N: i32", "times: u64*, M: i32, N: i32"))
    text = sub(text, "    let nk = (K + BK - 1) / BK;\n",
               "    let nk = (K + BK - 1) / BK;\n    let t_start = clock();\n    let g_start = global_time();\n")
    loop = k["loop"]
    text = sub(text, loop, loop.replace("            for k in 0 .. nk {\n                wait(st);\n",
                                        "            var t_first = clock();\n"
                                        "            for k in 0 .. nk {\n                wait(st);\n"
                                        "                if k == 0 { t_first = clock(); }\n"))
    text = sub(text, "            mma_wait(0);\n            // the tile's last stage",
               "            mma_wait(0);\n            let t_mma = clock();\n            // the tile's last stage")
    text = sub(text, k["last"], k["last"] +
               "            let t_epi = clock();\n"
               "            let g_epi = global_time();\n"
               "            if thread_id.x == 128 {\n"
               "                let r = times + (%s) * %d;\n"
               "                r[0] = block_id.x as u64;\n"
               "                r[1] = t_start;\n"
               "                r[2] = t_first;\n"
               "                r[3] = t_mma;\n"
               "                r[4] = t_epi;\n"
               "                r[5] = g_start;\n"
               "                r[6] = (%s) as u64;\n"
               "                r[7] = 1 as u64;\n"
               "                r[8] = g_epi;\n"
               "            }\n" % (k["index"], FIELDS, k["index"]))
    return text


def stats(xs):
    xs = sorted(xs)
    return "%8d %8d %8d" % (xs[0], statistics.median(xs), xs[-1]) if xs else "       -        -        -"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("shape", help="MxNxK")
    ap.add_argument("defines", nargs="*", help="NAME=VALUE -D overrides of the sample")
    ap.add_argument("--device", choices=("cuda", "sim"), default="cuda")
    ap.add_argument("--grid", type=int, default=0, help="blocks (default: min(tiles, SMs); cluster: 2 x min(pairs, SMs / 2))")
    ap.add_argument("--flush", action="store_true",
                    help="operands in GPU memory (torch tensors) and L2 flushed before the measured launch, as "
                         "bench/gemm.py times (cuda only)")
    ap.add_argument("--kernel", choices=sorted(KERNELS), default="persistent",
                    help="the sample: gemm_persistent_sm90 (default) or gemm_cluster_sm90")
    args = ap.parse_intermixed_args()
    try:
        M, N, K = (int(x) for x in args.shape.lower().split("x"))
    except ValueError:
        raise SystemExit("gemm_phases: the shape is MxNxK, not %r" % args.shape)
    defines = {}
    for d in args.defines:
        name, eq, value = d.partition("=")
        if not eq or not name or not value:
            raise SystemExit("gemm_phases: %r is not NAME=VALUE" % d)
        defines[name] = value
    import numpy as np
    k = KERNELS[args.kernel]
    with open(os.path.join(ROOT, "samples", k["sample"])) as f:
        text = instrument(f.read(), args.kernel)
    prog = tilec.compile(text, target="sm_90a", defines=defines, filename="gemm_phases.tile")
    kern = prog[k["sample"][:-len(".tile")]]
    bm, bn = k["tile"](kern.params[0].box[0], kern.params[1].box[0])
    dev = tilec.Device(args.device)
    sms = dev.info["sm_count"] or 132
    if args.kernel == "cluster":   # pairs of tiles along M; an odd count of M tiles leaves one past M
        tiles = 2 * -(-M // (2 * bm)) * -(-N // bn)
        grid = args.grid or 2 * min(tiles // 2, sms // 2)
    else:
        tiles = -(-M // bm) * -(-N // bn)
        grid = args.grid or min(tiles, sms)
    rng = np.random.default_rng(1)
    a, b = ((rng.uniform(-1, 1, s).astype(np.float32).view(np.uint32) >> 16).astype(np.uint16) for s in ((M, K), (N, K)))
    c = np.full((M, N), 0x7FC0, np.uint16)
    times = np.zeros((tiles, FIELDS), np.uint64)
    if args.flush and args.device != "cuda":
        raise SystemExit("gemm_phases: --flush needs --device cuda")
    if args.flush:   # as bench/gemm.py: the operands in GPU memory, L2 (50 MiB) emptied by 256 MiB of writes
        import torch
        gpu = lambda x, t: torch.from_numpy(x.view(np.int16)).cuda().view(t)   # noqa: E731
        ta, tb, tc = gpu(a, torch.bfloat16), gpu(b, torch.bfloat16), gpu(c, torch.bfloat16)
        tt = torch.zeros((tiles, FIELDS), dtype=torch.uint64, device="cuda")
        flush = torch.empty(64 << 20, dtype=torch.int32, device="cuda")
        for _ in range(2):
            tt.zero_()
            flush.zero_()
            torch.cuda.synchronize()
            kern(ta, tb, tc, tt, M, N, K, grid=grid, device=dev)
            torch.cuda.synchronize()
        c = tc.view(torch.int16).cpu().numpy().view(np.uint16)
        times = tt.cpu().numpy()
    for _ in range(0 if args.flush else 1 if args.device == "sim" else 2):   # a warm-up, then the measured one
        times[:] = 0
        kern(a, b, c, times, M, N, K, grid=grid, device=dev)
    value = lambda bits: (bits.astype(np.uint32) << 16).view(np.float32).astype(np.float64)  # noqa: E731
    want = value(a) @ value(b).T
    err = float(np.linalg.norm(value(c) - want) / np.linalg.norm(want))
    unit = "cycles" if args.device == "cuda" else "simulator steps"
    print("%dx%dx%d, %d x %d tiles (%d), grid %d, %s on %s%s: relative Frobenius error %.3g" %
          (M, N, K, bm, bn, tiles, grid, " ".join(args.defines) or "as written", args.device,
           ", L2 flushed" if args.flush else "", err))
    if not err <= 2.0 ** -7 or not (times[:, 7] == 1).all():
        print("gemm_phases: the result is wrong or a tile was not recorded")
        return 1
    rows = [tuple(int(x) for x in r) for r in times]
    first = {}
    for r in rows:   # each block's first tile: the one with the smallest first-stage time
        if r[0] not in first or r[2] < first[r[0]][2]:
            first[r[0]] = r
    print("per tile, %s:                        min   median      max" % unit)
    print("  start to first stage (first tiles)  %s" % stats([r[2] - r[1] for r in first.values()]))
    later = [r for r in rows if first[r[0]] is not r]
    if later:
        print("  previous tile's end to first stage  %s" % stats(
            [r[2] - max(q[4] for q in rows if q[0] == r[0] and q[4] <= r[2]) for r in later]))
    print("  main loop (first stage to last mma) %s" % stats([r[3] - r[2] for r in rows]))
    print("  epilogue (last mma to last store)   %s" % stats([r[4] - r[3] for r in rows]))
    print("  block start to last store           %s" % stats([max(q[4] for q in rows if q[0] == blk) - first[blk][1]
                                                           for blk in first]))
    g = [r[5] for r in first.values()]
    ns = "ns" if args.device == "cuda" else "steps"
    print("blocks' start times (%s): spread %d" % (ns, max(g) - min(g)))
    print("first block's start to last store (%s, the GPU's global timer): %d" % (ns, max(r[8] for r in rows) - min(g)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
