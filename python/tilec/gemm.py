"""tilec.gemm: C = A B^T in bf16 on sm_90a with the configuration chosen from the shape.

    import tilec.gemm
    c = tilec.gemm.matmul(a, b)            # a [M, K], b [N, K] (a weight matrix as stored), c [M, N]
    c = tilec.gemm.scaled_mm(a8, b8, sa, sb)   # fp8 inputs, f32 scales per row of A and column of B
    cfg = tilec.gemm.choose(M, N, K)       # what matmul would run: Config(kind, defines)
    tilec.gemm.matmul(a, b, out=c, config=tilec.gemm.Config("persistent", {"BN": 128, "STAGES": 6}))

The kernels are the GEMM samples (samples/gemm_sm90.tile, gemm_persistent_sm90.tile,
gemm_pingpong_sm90.tile, gemm_cluster_sm90.tile, gemm_quad_sm90.tile, gemm_splitk_sm90.tile,
gemm_fp8_scaled_sm90.tile), compiled once per
configuration and kept. `choose` is a rule measured on an H100 (docs/PERFORMANCE.md, "GEMM: the
chooser"): it counts the output tiles each tile shape gives against the device's SMs, in waves.

- At most 256 rows (M <= 256): the plain kernel with one consumer warpgroup, one block per tile, with
  the narrowest of 64 x 64, 64 x 96, 64 x 128 and 64 x 160 tiles (SMALL_M) that fit one wave (tiles
  <= SMs: the fullest wave); past that, the ping-pong kernel for wide N (N >= 14336) and the
  persistent kernel with 128 x 128 tiles otherwise.
- More rows: the persistent kernel, with 128 x 256 tiles (GROUP_M = 16 raster) unless 128 x 128
  tiles take less time counted in waves: waves(128 x 128) x 0.56 < waves(128 x 256), a wave of
  128 x 128 tiles costing 0.56 of one of 128 x 256 tiles (M = 512 against N = 4096: one wave of 64
  tiles or one of 128 smaller ones; N = 10240: 2 waves or 3 smaller ones; N = 28672: 4 waves or 7
  smaller ones). Where that is one partial wave of 128 x 128 tiles: with rows of A and B that are a
  multiple of 128 bytes the narrowest of 128 x 64, 96 and 128 tiles that fits the wave (ONE_WAVE:
  the most SMs); with misaligned rows, 128 x 128 tiles where they number at most MISALIGNED_FILL
  (0.65) of the SMs, else the quad kernel (kind "quad", samples/gemm_quad_sm90.tile: 2 x 2 clusters
  sharing A along N and B along M by multicast) with 128 x 128 tiles where its quads number at most
  QUAD_FILL (0.92) of the clusters of 4 the SMs make, else 128 x 192 tiles (fewer, one wave too).
- More rows, then: the persistent kernel with a tile width that is not a power of two (WIDE: 128 x
  224, 192 or 160) where the cost model puts it below WIDE_GAIN of that choice (fuller waves:
  512 x 6144 is one wave of 128 tiles of 128 x 192 instead of 96 of 128 x 256; 512 x 10240 is 2
  waves of 256 tiles of 128 x 160 instead of 3 of 128 x 128; 512 x 28672 is 3.9 waves of 128 x 224
  instead of 6.8 of 128 x 128).
- More rows with rows of A and B that are not a multiple of 128 bytes (K % 64 != 0) and at least
  half a wave of 128 x 256 tiles: the cluster kernel (kind "cluster", samples/gemm_cluster_sm90.tile:
  2-CTA clusters sharing B by TMA multicast) in place of any of those: misaligned rows make TMA ask
  the L2 for about 2.6 times the pieces, and multicast halves B's. Its tile pairs are 128 x 224, 192
  or 160 (CLUSTER_WIDE) instead of 128 x 256 where the cost model puts them below WIDE_GAIN (a
  fuller last wave).
- Then split-K (kind "splitk", samples/gemm_splitk_sm90.tile: the first `dp` tiles whole, the others
  in `splits` slices of K, a second kernel adding the slices in order), where the cost model of
  SPLITK estimates it below SPLITK["gain"] of the choice above: few tiles for the SMs, or a last
  partial wave of long-K tiles (`dp` = the whole waves, the rest split). `estimate_us` is that model,
  its constants fitted to the H100's times of bench/gemm.py --preset splitk.
- And where 128 x 256 tiles make at least 8 waves with the last at most half full (K >= 4096): the
  whole waves whole and the last wave's tiles in 2-4 slices (TAIL), so that the last round costs a
  fraction of a tile.

matmul works out what a shape runs once (the choice, the kernels, their grids, a split-K workspace)
and keeps it, so that a repeated shape costs its launches alone; `forget` drops what it kept.

Arguments are CUDA torch tensors (device="cuda", the default; queued on torch's current stream)
or NumPy uint16 arrays of bf16 bits (any device; copied in and out, e.g. on the simulator). K must
be a multiple of 8 (16-byte rows for the tensor maps), N too for the persistent kernels (C is
stored through TMA); otherwise `choose` falls back to the plain kernel with pointer stores.
"""
import os
import types

import tilec

_SAMPLE = {"plain": ("gemm_sm90.tile", "gemm_sm90"), "persistent": ("gemm_persistent_sm90.tile", "gemm_persistent_sm90"),
           "pingpong": ("gemm_pingpong_sm90.tile", "gemm_pingpong_sm90"),
           "cluster": ("gemm_cluster_sm90.tile", "gemm_cluster_sm90"),
           "quad": ("gemm_quad_sm90.tile", "gemm_quad_sm90"),
           "splitk": ("gemm_splitk_sm90.tile", "gemm_splitk_sm90"),
           "fp8_scaled": ("gemm_fp8_scaled_sm90.tile", "gemm_fp8_scaled_sm90"),
           "fp8_splitk": ("gemm_splitk_sm90.tile", "gemm_splitk_sm90"),
           "fp8_narrow": ("gemm_fp8_narrow_sm90.tile", "gemm_fp8_narrow_sm90")}
# the splitk sample's second kernel, per kind (fp8: the one that applies the scales)
_REDUCE = {"splitk": "gemm_splitk_reduce_sm90", "fp8_splitk": "gemm_splitk_reduce_scaled_sm90"}
_SPLIT = ("splitk", "fp8_splitk")


class Config(tilec._ValueConfig):
    """A GEMM configuration: the kernel kind (plain, persistent, pingpong, cluster, quad, splitk; fp8_scaled,
    fp8_narrow and fp8_splitk for scaled_mm) and -D overrides; for splitk also the run-time split:
    `splits` (slices of K per split tile, default 2) and `dp` (tiles computed whole before the split
    ones, default 0); fp8_splitk splits every tile (dp = 0: its reduction applies the scales). A
    value: its fields do not change once made (defines is a read-only mapping)."""

    _WHAT = ("tilec.gemm.Config", "matmul")

    def __init__(self, kind="persistent", defines=None, splits=None, dp=None):
        if kind not in _SAMPLE:
            raise ValueError("tilec.gemm: kind %r is not one of %s" % (kind, ", ".join(_SAMPLE)))
        if kind not in _SPLIT and (splits is not None or dp is not None):
            raise ValueError("tilec.gemm: splits and dp are settings of the splitk kinds, not of %s" % kind)
        if kind == "fp8_splitk" and dp not in (None, 0):
            raise ValueError("tilec.gemm: fp8_splitk splits every tile (its reduction applies the scales): dp must be 0, "
                             "not %r" % (dp,))
        if kind in _SPLIT:
            splits = 2 if splits is None else splits
            dp = 0 if dp is None else dp
            if not isinstance(splits, int) or not 1 <= splits <= 1024 or not isinstance(dp, int) or dp < 0:
                raise ValueError("tilec.gemm: splits must be an int in 1..1024 and dp an int >= 0, not %r and %r" %
                                 (splits, dp))
        defines = types.MappingProxyType(dict(defines or {}))
        key = (kind, tuple(sorted((k, str(v)) for k, v in defines.items())), splits, dp)
        for name, v in (("kind", kind), ("defines", defines), ("splits", splits), ("dp", dp), ("_key", key)):
            object.__setattr__(self, name, v)

    def __repr__(self):
        d = " ".join("%s=%s" % kv for kv in sorted(self.defines.items()))
        if self.kind in _SPLIT:
            d = (d + " " if d else "") + "splits=%d dp=%d" % (self.splits, self.dp)
        return "Config(%s%s)" % (self.kind, " " + d if d else "")


def _tiles(M, N, bm, bn):
    return -(-M // bm) * -(-N // bn)


def _pairs(M, N, bm, bn):
    """The cluster kernel's tile pairs of bm x bn tiles: two along M (an odd count of M tiles leaves
    the last pair's second tile past M)."""
    return -(-M // (2 * bm)) * -(-N // bn)


def _quads(M, N, bm, bn):
    """The quad kernel's 2 x 2 groups of bm x bn tiles (those past M or N included)."""
    return (-(-M // bm) + 1) // 2 * ((-(-N // bn) + 1) // 2)


def _quad_clusters(k, device, sms):
    """The clusters of 4 of the quad kernel `k` the device holds at once (the driver's count; sms // 4
    where it cannot tell, as on the simulator)."""
    try:
        return max(1, k.max_resident(device=device))
    except tilec.TileError:
        return max(1, sms // 4)


# A wave of 128 x 128 tiles takes about this fraction of a wave of 128 x 256 tiles in the persistent
# kernel (half the work at about 0.9 of the throughput: M = 512 on the H100, 512 x 6144 x 4096 and
# 512 x 10240 x 8192 both gave 0.56, docs/PERFORMANCE.md).
_BN128_COST = 0.56


def _waves(tiles, sms):
    return -(-tiles // sms)


# Where 128 x 128 tiles are one partial wave, every SM runs at most one tile and the time is one
# tile's. With rows of A and B that are a multiple of 128 bytes the narrowest of ONE_WAVE's widths
# whose tiles fit the wave is taken, whatever K (the most SMs, the least work each). With misaligned
# rows each row costs TMA about 2.6 L2 requests, and more SMs loading at once stop paying at about
# two thirds of them: 128 x 128 tiles where they number at most MISALIGNED_FILL of the SMs, else
# 128 x 192 (fewer, wider tiles: fewer rows per MAC), whatever K. H100, `bench/gemm.py --preset
# onewave` (docs/PERFORMANCE.md, "One wave of narrow tiles"): over its 25 shapes 0.955x cuBLAS
# geometric mean against 0.824x for the rule before (128 x 192 tiles for every K <= 2048; 0.927x
# against 0.799x without 504x2504x1000, where cuBLAS ran slow in that run), e.g.
# 1024x1024x1024 0.919x with 128 tiles of 128 x 64 against 0.683x, 1024x1536x1024 0.921x with 128 x 96
# against 0.709x, 2048x1024x2048 0.992x with 128 x 128 against 0.768x, 512x2048x8192 1.014x with 128 x
# 64 against 0.939x for split-K; misaligned 1200x1000x1200 0.898x with 80 tiles of 128 x 128 against
# 0.689x, 1000x1496x1000 0.877x with 64 of 128 x 192 (96 of 128 x 128: 0.882x here, 0.785x in
# another run), 900x1800x1000 1.001x with 128 x 192 against 0.872x for 120 of 128 x 128. 128 x 96
# tiles with misaligned rows were behind 128 x 128 in two runs of three at 1000x1000x1000. At 91 tiles
# of 128 x 128 (800x1600x1000, 1600x800x1000, 800x1600x5000) 128 x 192 was ahead in three runs of five
# and level in one, so the line lies below 91/132; with K > 2048 it picked the best of 128 x 64, 96,
# 128 and 192 at all six shapes measured (1000x1496x3000 and 800x1600x5000: 0.804x and 0.838x with
# 128 x 192 against 0.745x and 0.786x for 128 x 128; 1000x1000x4000, 1024x1024x3000, 600x2000x6000,
# 1200x1000x2504: 128 x 128 ahead). The ping-pong kernel measured behind. scaled_mm keeps 128 x 192
# tiles for one partial wave with K <= PINGPONG_MAX_K.
PINGPONG_MAX_K = 2048
ONE_WAVE = {64: {"BN": 64, "STAGES": 8}, 96: {"BN": 96, "CW": 16, "STAGES": 7}, 128: {"BN": 128, "STAGES": 6}}
MISALIGNED_FILL = 0.65
# Where that rule takes 128 x 192 tiles (misaligned rows, more 128 x 128 tiles than MISALIGNED_FILL
# of the SMs, one wave), the quad kernel (kind "quad", samples/gemm_quad_sm90.tile: 2 x 2 clusters,
# each CTA loading half of its A rows and half of its B rows and multicasting them, so that the L2
# sees half the row requests of the persistent kernel) with 128 x 128 tiles, where its quads number
# at most QUAD_FILL of the clusters of 4 the SMs make: 30 on 132 SMs, which is what the H100 holds
# at once (its driver's count for the kernel; 32 quads take two rounds: 0.63-0.73x cuBLAS). H100
# SXM (docs/PERFORMANCE.md, "Four CTAs sharing both operands"): 1000x1496x1000 (24 quads) 0.876x to
# 1.005x cuBLAS over eleven timings, median 0.940x, against 0.83-0.93x for the 128 x 192 tiles,
# 1000x1496x3000 1.02x against 0.81x, 700x2400x1000 (30 quads) 1.02-1.12x against 0.96-0.98x.
# Where 128 x 128 tiles number at most MISALIGNED_FILL of the SMs the quad kernel was ahead at four
# shapes of six and 9% behind at 1200x1000x1200 (one run): that rule stays.
QUAD_FILL = 0.92

# The cost model (estimate_us), in microseconds on one device, fitted to the H100 SXM: the 80
# kernel-bound times of bench/gemm.py --preset splitk, to a root-mean-square error of about 11%
# (bench/fit_gemm_model.py fits them to such a log; docs/PERFORMANCE.md, "Split-K", says how).
SPLITK = {
    # TFLOP/s one SM sustains in the main loop, by tile width (BN); what a unit costs beyond its
    # boxes (filling the ring, the epilogue's stores) is unit_us. 256, 128 and 64 are fitted; 192, 160
    # and 96 are interpolated from them by the shared-memory bytes a wgmma reads per MAC, which go as
    # 1 / BN + 1 / 64 (0.0195 at 256, 0.0234 at 128: 6.1 and 5.8, so 6.05 at 224, 6.0 at 192, 5.9 at
    # 160 and 5.6 at 96). The H100 agreed within 3% where the new widths ran long enough to be kernel-bound:
    # 512x6144x4096 with 128 x 192 tiles 41.1 us (model 42.4), 512x10240x8192 with 128 x 160 tiles
    # 125.7 us (model 126.0; docs/PERFORMANCE.md, "GEMM: the chooser")
    "sm_tflops": {256: 6.1, 224: 6.05, 192: 6.0, 160: 5.9, 128: 5.8, 96: 5.6, 64: 4.0},
    "unit_us": 3.7,
    "kernel_us": 5.2,     # a GEMM launch's fixed cost: the launch, the first loads' latency, the last epilogue
    "launch_us": 7.4,     # the reduction's launch behind the GEMM and its ramp
    "reduce_gbs": 2770.0, # GB/s the reduction reads the slots and writes C at
    "dram_gbs": 2500.0,   # GB/s of reading A and B once and writing the slots: no configuration is faster
    "gain": 0.9,          # split only where the estimate is below this fraction of the choice without it
    "max_splits": 8,
    # the splitk sample's -D overrides per tile width: the deepest ring that fits 227 KiB; for 128 x 256
    # tiles with 64-byte epilogue pieces, which leave room for a fourth stage (2-5% ahead where measured)
    "defines": {256: {"STAGES": 4, "CW": 32, "PW": 16}, 128: {"STAGES": 5}, 64: {"STAGES": 6}},
}


_DEFAULT_BN = {"plain": 256, "persistent": 256, "pingpong": 128, "cluster": 256, "quad": 128, "splitk": 128}   # the samples' BN


def _unit_us(bn, boxes, bm=128):
    """A unit of `boxes` column boxes (BK = 64) of a bm x bn tile on one SM."""
    return 2.0 * bm * bn * 64 * boxes / (SPLITK["sm_tflops"][bn] * 1e6) + SPLITK["unit_us"]


def estimate_us(cfg, M, N, K, sms=132):
    """The cost model's time of configuration cfg for C[M, N] = A[M, K] B[N, K]^T, in microseconds:
    a launch's fixed cost plus the rounds of units each SM runs (a unit: a whole tile, or a slice of
    one, at the tile width's rate plus a fixed cost), at least the time to read A and B once (and
    write the slots); for splitk also the reduction (its launch, the slots read and C written). Only
    as good as SPLITK's constants; used to compare configurations."""
    bn = int(cfg.defines.get("BN", _DEFAULT_BN.get(cfg.kind, 256)))
    bn = min(SPLITK["sm_tflops"], key=lambda x: abs(x - bn))   # the rates the model has
    bm = int(cfg.defines.get("BM", 128))
    nk = -(-K // 64)
    tiles = _tiles(M, N, bm, bn)
    if cfg.kind == "cluster":   # a CTA for each tile of each pair, those past M included
        tiles = 2 * _pairs(M, N, bm, bn)
    if cfg.kind == "quad":      # a CTA for each tile of each quad, those past M or N included
        tiles = 4 * _quads(M, N, bm, bn)
    dram = SPLITK["dram_gbs"] * 1e3   # bytes per microsecond
    operands_us = 2.0 * K * (M + N) / dram
    if cfg.kind != "splitk":
        return SPLITK["kernel_us"] + max(_waves(tiles, sms) * _unit_us(bn, nk, bm), operands_us)
    dp, S = min(cfg.dp, tiles), cfg.splits
    split = (tiles - dp) * S
    t = _waves(dp, sms) * _unit_us(bn, nk) if dp else 0.0
    if split:
        t += _waves(split, sms) * _unit_us(bn, -(-nk // S))
    slots_bytes = split * 128 * bn * 4
    t = SPLITK["kernel_us"] + max(t, operands_us + slots_bytes / dram)
    if split:
        t += SPLITK["launch_us"] + (slots_bytes + (tiles - dp) * 128 * bn * 2) / (SPLITK["reduce_gbs"] * 1e3)
    return t


def _split_candidates(M, N, K, sms):
    """The split-K configurations worth estimating: per tile width, every tile split (dp = 0) and,
    where the tiles fill whole waves with a partial one left, those waves whole (dp) and the rest
    split; 2 .. max_splits slices, never more than the column boxes."""
    nk = -(-K // 64)
    for bn in (256, 128, 64):
        tiles = _tiles(M, N, 128, bn)
        full = tiles // sms * sms
        for dp in sorted({0, full if full < tiles else 0}):
            for S in range(2, min(SPLITK["max_splits"], nk) + 1):
                yield Config("splitk", dict(SPLITK["defines"][bn], BN=bn), splits=S, dp=dp)


# The persistent kernel's tile widths that are not powers of two (an accumulator's N is any multiple of
# 8), with their -D overrides: an even number of epilogue pieces of power-of-two width (the sample's
# rule), the deepest ring that fits 227 KiB. They fill the SMs where the power-of-two widths leave a
# wave partly idle: 512 x 6144 is 96 tiles of 128 x 256 but 128 of 128 x 192; 512 x 10240 is 160
# tiles of 128 x 256 (2 waves, the second a fifth full) or 320 of 128 x 128 (3 waves) but 256 of
# 128 x 160 (2 full waves). 128 x 96 tiles are not among them: at 1000 x 1496 x 1000 (128 of them)
# they ran at 0.837x cuBLAS against 0.883x for 128 x 192 (64 of them) in the same H100 run.
# 128 x 224 fills the waves at M = 512 against wide N: 512 x 28672 is 512 tiles (3.9 waves) where 128 x
# 128 tiles made 6.8, 512 x 14336 256 tiles (1.9 waves) where 128 x 256 made 224 (1.7): H100, one run,
# 0.976x cuBLAS against 0.935x and 1.055x against 0.983x (docs/PERFORMANCE.md, "Tile widths that fill
# the waves").
WIDE = {224: {"BN": 224, "CW": 16, "STAGES": 4, "GROUP_M": 16}, 192: {"BN": 192, "CW": 32, "STAGES": 5, "GROUP_M": 16},
        160: {"BN": 160, "CW": 16, "STAGES": 5, "GROUP_M": 16}}
# A WIDE tile replaces the choice below where the cost model (estimate_us) puts it below this fraction
# of it: the model's rates for 192 and 160 are interpolated, so only a clear gain (a fuller last wave)
# counts. Measured: 512x6144x4096 0.999x cuBLAS with 128 x 192 tiles (model 0.80 of 128 x 256 tiles;
# those ran at 0.837x), 512x10240x8192 0.966x with 128 x 160 tiles (model 0.81 of 128 x 128 tiles;
# the split-K form chosen before ran at 0.922x). At 3000x5000x1064 the model keeps 128 x 256 tiles
# (128 x 192: 1.02 of it), and 128 x 192 and 128 x 160 did not beat them there.
WIDE_GAIN = 0.95
# M > 256 with rows of A and B that are not a multiple of 128 bytes (K % 64 != 0 in bf16) and at
# least half a wave of 128 x 256 tiles: the cluster kernel (2-CTA clusters sharing B by multicast)
# whatever the rules above chose. A misaligned row straddles two L2 lines in 7 of every 8 box rows,
# and TMA then asks the L2 for about 2.6 pieces per 128-byte row instead of one: the loads become
# bound by the L2's request rate (ncu at 3000x5000x1064: 7.4 M read requests against 2.0 M at K =
# 1088, 79 us against 66). Multicast halves B's requests (4.7 M). H100, one run (docs/PERFORMANCE.md,
# "Rows that are not a multiple of 128 bytes"): 3000x5000x1064 0.955x cuBLAS against the persistent
# kernel's 0.747x, 8192x8192x2008 0.985x against 0.705x, 1024x4096x1000 (128 tiles) 0.889x against
# 0.832x, 2048x5000x3000 0.857x against 0.560x for the 128 x 128 tiles the rules above chose; with
# fewer tiles (1000x1496x1000: 48) the 128 x 192 tiles stay ahead (0.855x against 0.666x). At
# aligned shapes the persistent kernel stays 1-3% ahead of the cluster one.
CLUSTER_PITCH = 64
# The cluster kernel's tile widths below 256 (each CTA loads BN / 2 of B's rows and stores its C tile
# in pieces of CW columns, a power of two dividing BN / 2, SC pieces in flight; the deepest ring that
# fits 227 KiB), taken as WIDE's are: where the cost model puts one below WIDE_GAIN of 128 x 256
# tiles (a fuller last wave). With misaligned rows a partial last wave of 128 x 256 pairs costs more
# than the loads they save: H100, `bench/gemm.py --preset misaligned` (docs/PERFORMANCE.md, "Cluster
# tiles that fill the waves"), 128 x 192 pairs at 2000x1496x1000 0.937x cuBLAS against 0.866x for
# 128 x 256, 1536x4000x2000 1.115x against 0.899x, 3000x3000x3000 0.865x against 0.657x for the
# split-K form chosen before; 128 x 224 at 2048x5000x3000 0.902x against 0.867x (but 1.042x against
# 1.071x at 1100x5000x1000); 128 x 160 at 1500x3000x1000 0.745x against 0.656x; 0.865x to 0.928x over
# the preset's 14 shapes. At 3000x5000x1064 the model keeps 128 x 256 (0.968x; 128 x 192 0.910x).
CLUSTER_WIDE = {224: {"BN": 224, "CW": 16, "SC": 7, "STAGES": 4}, 192: {"BN": 192, "CW": 32, "SC": 3, "STAGES": 5},
                160: {"BN": 160, "CW": 16, "SC": 5, "STAGES": 5}}
# M <= 256: the plain kernel with one consumer warpgroup (BM = 64) where its tiles fit one wave, the
# narrowest of these widths whose tiles do (the fullest wave), each with the deepest ring that fits.
# 64 x 64 and 64 x 128 make the same tile counts as the 128 x 32 and 128 x 64 tiles that came before
# them, with half the bytes per MAC of 128 x 32. H100, one run (docs/PERFORMANCE.md, "One consumer
# warpgroup for few rows"): 128x4096x4096 1.010x cuBLAS against 0.953x for 128 x 32 tiles,
# 128x4096x14336 1.059x against 1.013x, 128x8192x8192 0.995x against 0.966x for 128 x 64 tiles,
# 128x8192x28672 1.039x against 1.004x. 64 x 96 and 64 x 160 fill the SMs where 64 x 64 and 64 x 128
# tiles overflow a wave or leave it part empty
# (128x6144x4096: 128 tiles of 64 x 96, 1.011x cuBLAS against 0.985x for 96 of 64 x 128; 256x3000x2000:
# 128 of 64 x 96, 1.023x against 1.000x; 128x10240x8192: 128 of 64 x 160, 0.992x against 0.979x for
# the persistent kernel's 80 of 128 x 128; H100, one run).
SMALL_M = {64: {"BM": 64, "BN": 64, "STAGES": 12}, 96: {"BM": 64, "BN": 96, "STAGES": 10},
           128: {"BM": 64, "BN": 128, "STAGES": 8}, 160: {"BM": 64, "BN": 160, "STAGES": 8}}


def choose(M, N, K, sms=132):
    """The configuration for C[M, N] = A[M, K] B[N, K]^T on a device of `sms` SMs."""
    base = _choose_tiles(M, N, K, sms)
    if K % 8 or N % 8:
        return base
    best = min(_split_candidates(M, N, K, sms), key=lambda c: estimate_us(c, M, N, K, sms), default=None)
    if best is not None and estimate_us(best, M, N, K, sms) < SPLITK["gain"] * estimate_us(base, M, N, K, sms):
        return best
    tail = _tail_split(base, M, N, K, sms)
    return tail or base


# Many waves of 128 x 256 tiles whose last wave is at most half full: that wave costs a whole round
# of tiles for a few SMs. The split-K sample computes the whole waves' tiles whole and the last
# wave's in as many slices as fill the SMs (2 to TAIL["max_splits"]), so that round takes a
# fraction of a tile, for a reduction of a few tiles. H100, one run (docs/PERFORMANCE.md, "The last
# wave"): 8192x14336x4096 (27.2 waves, 20 tiles left) 1205 us with 4 slices against 1219 us,
# 8192x10240x8192 (19.4 waves, 52 left) 1693 us with 2 slices against 1726 us; at 8192x4096x4096
# (7.8 waves, the last 76% full) splitting lost 6%.
# Only from K = 4096 (the shapes measured; with short K a slice is a few boxes and the reduction
# weighs more).
TAIL = {"min_waves": 8, "max_fill": 0.5, "max_splits": 4, "min_k": 4096,
        "defines": {"BN": 256, "CW": 32, "PW": 16, "STAGES": 4, "GROUP_M": 16}}


def _tail_split(base, M, N, K, sms):
    """choose's split of the last wave (TAIL), or None where it does not apply."""
    if base.kind != "persistent" or "BN" in base.defines or K < TAIL["min_k"]:
        return None
    tiles = _tiles(M, N, 128, 256)
    left = tiles % sms
    if tiles < TAIL["min_waves"] * sms or left == 0 or left > TAIL["max_fill"] * sms:
        return None
    return Config("splitk", TAIL["defines"], splits=max(2, min(TAIL["max_splits"], sms // left)), dp=tiles - left)


def _choose_tiles(M, N, K, sms, small=None, wide=None, cluster_wide=None, one_wave=None):
    """choose's tile shape and kernel before split-K is weighed (scaled_mm's choice follows it, with
    its own lists of 64-row widths `small`, wide widths `wide`, cluster widths `cluster_wide` and
    widths for one partial wave `one_wave`: keys of SMALL_M, WIDE, CLUSTER_WIDE and ONE_WAVE; an
    empty `one_wave` keeps 128 x 192 tiles there)."""
    small = sorted(SMALL_M) if small is None else small
    wide = sorted(WIDE) if wide is None else wide
    cluster_wide = sorted(CLUSTER_WIDE) if cluster_wide is None else cluster_wide
    one_wave = sorted(ONE_WAVE) if one_wave is None else one_wave
    for v, what in ((M, "M"), (N, "N"), (K, "K"), (sms, "sms")):
        if not isinstance(v, int) or v < 1:
            raise ValueError("tilec.gemm.choose: %s must be a positive int, not %r" % (what, v))
    if N % 8:   # the persistent kernels store C through TMA: 16-byte rows
        return Config("plain", {"BN": 64, "STAGES": 8} if M <= 256 else {})
    if M <= 256:
        fits = [bn for bn in small if _tiles(M, N, 64, bn) <= sms]
        if fits:
            base = Config("plain", SMALL_M[fits[0]])
        elif N >= 14336:
            base = Config("pingpong")
        else:
            base = Config("persistent", {"BN": 128, "STAGES": 6})
    else:
        t256, t128 = _tiles(M, N, 128, 256), _tiles(M, N, 128, 128)
        partial = False   # one partial wave of 128 x 128 tiles
        if _waves(t128, sms) * _BN128_COST < _waves(t256, sms):
            base = Config("persistent", {"BN": 128, "STAGES": 6})
            partial = t128 <= sms
        else:
            base = Config("persistent", {"GROUP_M": 16})
        widest = min((Config("persistent", WIDE[w]) for w in wide), key=lambda c: estimate_us(c, M, N, K, sms))
        if partial and one_wave and K % CLUSTER_PITCH == 0:
            # aligned rows: the narrowest tiles that fit the wave
            bn = min(w for w in one_wave if _tiles(M, N, 128, w) <= sms)
            base = Config("persistent", ONE_WAVE[bn])
        elif partial and one_wave:
            # misaligned rows: 128 x 128 tiles where they number at most MISALIGNED_FILL of the SMs,
            # else 128 x 192 tiles, fewer still
            fill = _tiles(M, N, 128, 128) <= MISALIGNED_FILL * sms
            base = Config("persistent", ONE_WAVE[128] if fill else WIDE[192])
            if not fill and _quads(M, N, 128, 128) <= QUAD_FILL * (sms // 4):
                base = Config("quad")
        elif partial and K <= PINGPONG_MAX_K:
            base = Config("persistent", WIDE[192])   # scaled_mm's rule: 128 x 192 tiles, one wave too
        elif estimate_us(widest, M, N, K, sms) < WIDE_GAIN * estimate_us(base, M, N, K, sms):
            base = widest
        if K % CLUSTER_PITCH and t256 >= sms // 2:
            base = Config("cluster")
            narrower = [Config("cluster", CLUSTER_WIDE[w]) for w in cluster_wide]
            best = min(narrower, key=lambda c: estimate_us(c, M, N, K, sms), default=None)
            if best is not None and estimate_us(best, M, N, K, sms) < WIDE_GAIN * estimate_us(base, M, N, K, sms):
                base = best
    return base


# matmul's plans: what it launches for a shape, worked out on its first call (choose weighs every
# split-K candidate, about 0.5 ms) and kept, so that a repeated shape costs its launches alone
_plans = {}        # (M, N, K, SMs, config or None[, the fp8 types of A and B]) -> _Plan
_workspaces = {}   # (where, stream, slots, BM, BN) -> a splitk workspace, made once and kept


def forget():
    """Drops matmul's plans and split-K workspaces, so that its next calls choose again (after changing
    SPLITK, PINGPONG_MAX_K or choose). Waits for the GPU first when a workspace in GPU memory is kept,
    since launches still queued may use it."""
    import sys
    torch = sys.modules.get("torch")
    if torch is not None and any(k[0] is not None for k in _workspaces):
        torch.cuda.synchronize()
    _plans.clear()
    _workspaces.clear()


def samples_dir():
    """Where the GEMM samples are read from: $TILEC_SAMPLES, the source tree's samples/ beside this
    package, or <prefix>/share/tilec/samples of an install."""
    env = os.environ.get("TILEC_SAMPLES")
    here = os.path.dirname(os.path.abspath(__file__))
    cands = ([env] if env else []) + [os.path.join(here, "..", "..", "samples"),
                                       os.path.join(here, "..", "..", "..", "..", "share", "tilec", "samples")]
    for d in cands:
        if os.path.isfile(os.path.join(d, _SAMPLE["plain"][0])):
            return os.path.normpath(d)
    raise tilec.TileError("tilec.gemm: the GEMM samples are not found (looked in %s); set TILEC_SAMPLES" %
                          ", ".join(os.path.normpath(d) for d in cands))


_programs = {}


def program(config):
    """The compiled sample of a configuration (compiled on first use, then kept; the splitk kind's
    run-time split does not recompile it)."""
    key = config.key()[:2]
    if key not in _programs:
        path = os.path.join(samples_dir(), _SAMPLE[config.kind][0])
        with open(path) as f:
            src = f.read()
        _programs[key] = tilec.compile(src, target="sm_90a", defines=config.defines, filename=path)
    return _programs[key]


def kernel(config):
    """The compiled kernel of a configuration (for splitk the GEMM; reduce_kernel the reduction)."""
    return program(config)[_SAMPLE[config.kind][1]]


def reduce_kernel(config):
    """The splitk sample's second kernel, which adds the slices of each split tile into C (for
    fp8_splitk, with the scales)."""
    return program(config)[_REDUCE[config.kind]]


def _shape(x, what):
    s = getattr(x, "shape", None)
    if s is None or len(s) != 2:
        raise ValueError("tilec.gemm.matmul: %s must be a 2-d array, not %r" % (what, type(x).__name__))
    return int(s[0]), int(s[1])


_sms = {}


def _output(a, out, M, N, fn):
    """C: out checked to be [M, N], or a new bf16 [M, N] beside a (a torch tensor on a's device, else
    a NumPy array of bf16 bits)."""
    if out is None:
        if hasattr(a, "new_empty"):
            import torch
            return torch.empty((M, N), device=a.device, dtype=torch.bfloat16)
        import numpy as np
        return np.empty((M, N), np.uint16)
    if _shape(out, "out") != (M, N):
        raise ValueError("tilec.gemm.%s: out is %r, not [%d, %d]" % (fn, tuple(out.shape), M, N))
    return out


def _sm_count(device):
    """The device's SM count (asked once per device)."""
    dev = tilec._device(device)
    if id(dev) not in _sms:
        _sms[id(dev)] = dev.info["sm_count"] or 132
    return _sms[id(dev)]


def matmul(a, b, out=None, *, config=None, device="cuda", stream=None):
    """C = A B^T: a [M, K], b [N, K], C [M, N], bf16 (torch.bfloat16 tensors, or uint16 arrays of
    bf16 bits). Returns out (allocated like a when not given). config: a Config to run instead of
    choose()'s."""
    M, K = _shape(a, "a")
    N, Kb = _shape(b, "b")
    if Kb != K:
        raise ValueError("tilec.gemm.matmul: a is [%d, %d] and b is [%d, %d]: both need K columns" % (M, K, N, Kb))
    if K % 8:
        raise ValueError("tilec.gemm.matmul: K = %d: the kernels read A and B through TMA, which needs rows "
                         "of a multiple of 16 bytes (K a multiple of 8)" % K)
    out = _output(a, out, M, N, "matmul")
    sms = _sm_count(device)
    plan = _plans.get((M, N, K, sms, config))
    if plan is None:
        plan = _Plan(config or choose(M, N, K, sms), M, N, K, sms, device)
        _plans[(M, N, K, sms, config)] = plan
    if plan.reduce is None:
        plan.kernel(a, b, out, M, N, K, grid=plan.grid, device=device, stream=stream)
        return out
    ws = _workspace_for(a, plan, device, stream)
    cfg = plan.config
    plan.kernel(a, b, out, ws, M, N, K, plan.P, cfg.splits, plan.dp, grid=plan.grid, device=device, stream=stream)
    if plan.slots:
        plan.reduce(ws, out, M, N, plan.slots, cfg.splits, plan.dp, grid=plan.rgrid, device=device, stream=stream)
    return out


class _Plan:
    """What matmul launches for one shape and configuration, worked out once: the kernel and its grid;
    for splitk also the reduction (None otherwise), its grid, the whole tiles (dp), the slots of the
    split ones and the workspace's shape [P, BM, BN] (P = max(1, slots))."""

    def __init__(self, cfg, M, N, K, sms, device="cuda"):
        if cfg.kind != "plain" and N % 8:
            raise ValueError("tilec.gemm.matmul: %r stores C through TMA, which needs N a multiple of 8 (N = %d)" %
                             (cfg, N))
        self.config, self.kernel, self.reduce, self.shape = cfg, kernel(cfg), None, (M, N, K)
        bm, bn = self.kernel.params[0].box[0], self.kernel.params[1].box[0]
        tiles = _tiles(M, N, bm, bn)
        self.grid = tiles if cfg.kind == "plain" else min(tiles, sms)
        # 2-CTA clusters, one per pair of tiles, at most one CTA per SM
        if cfg.kind == "cluster":      # box b is half a tile's columns; a pair: two tiles along M
            self.grid = 2 * min(_pairs(M, N, bm, 2 * bn), max(1, sms // 2))
        if cfg.kind == "quad":         # boxes a and b are half a tile's rows and columns; a quad: 2 x 2 tiles
            self.grid = 4 * min(_quads(M, N, 2 * bm, 2 * bn), _quad_clusters(self.kernel, device, sms))
        if cfg.kind == "fp8_narrow":   # box a is half a tile's rows; a pair: two tiles along N
            self.grid = 2 * min(-(-M // (2 * bm)) * ((-(-N // bn) + 1) // 2), max(1, sms // 2))
        if cfg.kind in _SPLIT:
            self.dp = min(cfg.dp, tiles)
            self.slots = (tiles - self.dp) * cfg.splits
            self.P, self.bm, self.bn = max(1, self.slots), bm, bn
            self.grid = min(self.dp + self.slots, sms)
            self.reduce = reduce_kernel(cfg)
            self.rgrid = (tiles - self.dp) * -(-bm // 16)   # a block per 16 rows of a split tile


def _workspace_for(like, plan, device, stream):
    """The workspace of a splitk plan, made on first use and kept per place, stream and size: a later
    launch on the same stream is ordered after the previous one's reduction, which has read it. Shapes
    with the same split tiles (any M within the same row tiles, say) share one."""
    if hasattr(like, "new_empty"):   # a torch tensor: its device, and the stream the launches are queued on
        s = stream if stream is not None else tilec._torch_current_stream(like.get_device())
        key = (str(like.device), getattr(s, "cuda_stream", s), plan.P, plan.bm, plan.bn)
    else:                            # NumPy: copied in and out by each launch, which returns when done
        key = (None, None, plan.P, plan.bm, plan.bn)
    ws = _workspaces.get(key)
    if ws is None:
        ws = _workspaces[key] = workspace(like, plan.config, *plan.shape)
    return ws


def workspace(like, config, M, N, K):
    """The f32 workspace a splitk configuration needs for C[M, N]: [P, BM, BN], P the slots of its
    split tiles (at least 1), allocated like `like` (a torch tensor on its device, else NumPy)."""
    k = kernel(config)
    bm, bn = k.params[0].box[0], k.params[1].box[0]
    tiles = _tiles(M, N, bm, bn)
    slots = max(1, (tiles - min(config.dp, tiles)) * config.splits)
    if hasattr(like, "new_empty"):
        import torch
        return torch.empty((slots, bm, bn), device=like.device, dtype=torch.float32)
    import numpy as np
    return np.zeros((slots, bm, bn), np.float32)


# scaled_mm's -D overrides of gemm_fp8_scaled_sm90.tile per tile width: the deepest ring that fits
# 227 KiB (a stage is 128 x 128 bytes of A and BN x 128 of B) and an even number of epilogue pieces
# and, as the bf16 rule has them, tiles grouped 16 rows of tiles at a time along M for 128 x 256, 192
# and 160 (H100, one run: 0.6-1.4% ahead of GROUP_M = 8 at seven of eight shapes from 512 x 14336 to
# 8192 x 28672 with 128 x 256 tiles, 5% at 512x6144x4096 with 128 x 192; docs/PERFORMANCE.md, "fp8 GEMM")
FP8_DEFINES = {(128, 256): {"GROUP_M": 16}, (128, 192): {"BN": 192, "CW": 32, "STAGES": 5, "GROUP_M": 16},
               (128, 160): {"BN": 160, "CW": 16, "STAGES": 6, "GROUP_M": 16}, (128, 128): {"BN": 128, "STAGES": 6},
               (128, 64): {"BN": 64, "STAGES": 8}, (128, 32): {"BN": 32, "STAGES": 10},
               (64, 128): {"BM": 64, "BN": 128, "STAGES": 8}, (64, 64): {"BM": 64, "BN": 64, "STAGES": 12}}
# The widths the fp8 rule weighs: not bf16's 64 x 96, 64 x 160 and 128 x 224, which were behind where
# measured in fp8 (H100: 128x6144x4096, 64 x 96 at 0.894x of cuBLASLt's fast accumulation against
# 0.918x for 64 x 128; 512x14336x4096 per-tensor, 128 x 224 62.5 us against 56.6 us for 128 x 256)
FP8_SMALL = (64, 128)
FP8_WIDE = (160, 192)
# One partial wave of 128 x 128 tiles with 128-byte rows (K % 128 == 0 in fp8): the narrowest of
# 128 x 64 and 128 x 128 that fits the SMs, as the bf16 rule (ONE_WAVE) without 128 x 96, which fp8
# measured behind 128 x 128 where both fit. H100, one run (docs/PERFORMANCE.md, "fp8 GEMM", "One wave
# of narrow tiles in fp8"): at the eight shapes measured, the best of 128 x 64, 96, 128 and 192 each
# time; row-wise scales 0.924x torch._scaled_mm at 1024x1024x1024 with 128 x 64 against 0.723x for
# 128 x 192, 0.875x at 2048x1024x2048 with 128 x 128 against 0.717x.
FP8_ONE_WAVE = (64, 128)


def choose_fp8(M, N, K, sms=132):
    """The configuration of scaled_mm: the fp8 persistent kernel with the tile `choose` gives the
    bf16 GEMM of the shape before split-K (the same count of tiles against the SMs; the ping-pong
    kernel's 128 x 128). Measured on the H100 (docs/PERFORMANCE.md, "fp8 GEMM"): the bf16 rules
    carried over were within 0.05 of the best fp8 width at every M <= 512 sweep shape; the fp8 form of
    split-K (fp8_splitk) was behind the unsplit widths there, so it is not chosen."""
    base = _choose_tiles(M, N, K, sms, small=FP8_SMALL, wide=FP8_WIDE, cluster_wide=(),
                         one_wave=FP8_ONE_WAVE if K % 128 == 0 else ())
    tile = (int(base.defines.get("BM", 128)), int(base.defines.get("BN", _DEFAULT_BN[base.kind])))
    return Config("fp8_scaled", FP8_DEFINES.get(tile, FP8_DEFINES[(128, 128)]))


def _fp8_type(x):
    name = str(getattr(x, "dtype", ""))
    return "e5m2" if "e5m2" in name else "e4m3"


def scaled_mm(a, b, scale_a, scale_b, out=None, *, config=None, device="cuda", stream=None):
    """C = diag(scale_a) (A B^T) diag(scale_b) with fp8 A [M, K] and B [N, K] (torch.float8_e4m3fn or
    float8_e5m2 tensors, or uint8 arrays of e4m3 bits), f32 scale vectors scale_a [M] and scale_b
    [N] (per-tensor scaling: vectors of one value), bf16 C [M, N]. K and N must be multiples of 16
    and 8 (TMA rows). config: a Config of kind fp8_scaled or fp8_splitk to run instead of
    choose_fp8()'s."""
    M, K = _shape(a, "a")
    N, Kb = _shape(b, "b")
    if Kb != K:
        raise ValueError("tilec.gemm.scaled_mm: a is [%d, %d] and b is [%d, %d]: both need K columns" % (M, K, N, Kb))
    if K % 16 or N % 8:
        raise ValueError("tilec.gemm.scaled_mm: K = %d and N = %d: the kernel reads fp8 rows and writes bf16 rows "
                         "through TMA, which needs K a multiple of 16 and N of 8" % (K, N))
    for v, n, what in ((scale_a, M, "scale_a"), (scale_b, N, "scale_b")):
        if len(getattr(v, "shape", ())) != 1 or int(v.shape[0]) != n:
            raise ValueError("tilec.gemm.scaled_mm: %s must be a vector of %d f32 values" % (what, n))
    out = _output(a, out, M, N, "scaled_mm")
    sms = _sm_count(device)
    cfg = config or choose_fp8(M, N, K, sms)
    if cfg.kind not in ("fp8_scaled", "fp8_narrow", "fp8_splitk"):
        raise ValueError("tilec.gemm.scaled_mm: %r is not an fp8_scaled, fp8_narrow or fp8_splitk configuration" % (cfg,))
    ta, tb = _fp8_type(a), _fp8_type(b)
    key = (M, N, K, sms, cfg, ta, tb)
    plan = _plans.get(key)
    if plan is None:
        defines = dict(cfg.defines)
        defines.setdefault("TA", ta)
        defines.setdefault("TB", tb)
        if cfg.kind == "fp8_splitk":
            defines.setdefault("BK", 128)   # a 128-byte row of fp8
            run = Config(cfg.kind, defines, splits=cfg.splits)
        else:
            run = Config(cfg.kind, defines)
        plan = _plans[key] = _Plan(run, M, N, K, sms)
    if plan.reduce is None:
        plan.kernel(a, b, out, scale_a, scale_b, M, N, K, grid=plan.grid, device=device, stream=stream)
        return out
    ws = _workspace_for(a, plan, device, stream)
    splits = plan.config.splits
    plan.kernel(a, b, out, ws, M, N, K, plan.P, splits, 0, grid=plan.grid, device=device, stream=stream)
    plan.reduce(ws, out, scale_a, scale_b, M, N, plan.P, splits, grid=plan.rgrid, device=device, stream=stream)
    return out
