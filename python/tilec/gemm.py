"""tilec.gemm: C = A B^T in bf16 on sm_90a with the configuration chosen from the shape.

    import tilec.gemm
    c = tilec.gemm.matmul(a, b)            # a [M, K], b [N, K] (a weight matrix as stored), c [M, N]
    c = tilec.gemm.scaled_mm(a8, b8, sa, sb)   # fp8 inputs, f32 scales per row of A and column of B
    cfg = tilec.gemm.choose(M, N, K)       # what matmul would run: Config(kind, defines)
    tilec.gemm.matmul(a, b, out=c, config=tilec.gemm.Config("persistent", {"BN": 128, "STAGES": 6}))

The kernels are the GEMM samples (samples/gemm_sm90.tile, gemm_persistent_sm90.tile,
gemm_pingpong_sm90.tile, gemm_splitk_sm90.tile, gemm_fp8_scaled_sm90.tile), compiled once per
configuration and kept. `choose` is a rule measured on an H100 (docs/PERFORMANCE.md, "GEMM: the
chooser"): it counts the output tiles each tile shape gives against the device's SMs, in waves.

- At most 256 rows (M <= 256): 128 x 64 tiles with 8 stages, one block per tile, while those tiles
  fit in one wave (tiles <= SMs); past that, the ping-pong kernel for wide N (N >= 14336) and the
  persistent kernel with 128 x 128 tiles otherwise.
- More rows: the persistent kernel, with 128 x 256 tiles (GROUP_M = 16 raster) unless 128 x 128
  tiles take less time counted in waves: waves(128 x 128) x 0.6 < waves(128 x 256), a wave of
  128 x 128 tiles costing 0.6 of one of 128 x 256 tiles (M = 512 against N = 4096: one wave of 64
  tiles or one of 128 smaller ones; N = 10240: 2 waves or 3 smaller ones). Where that is one partial
  wave of 128 x 128 tiles and K is short (K <= PINGPONG_MAX_K), the ping-pong kernel.
- Then split-K (kind "splitk", samples/gemm_splitk_sm90.tile: the first `dp` tiles whole, the others
  in `splits` slices of K, a second kernel adding the slices in order), where the cost model of
  SPLITK estimates it below SPLITK["gain"] of the choice above: few tiles for the SMs, or a last
  partial wave of long-K tiles (`dp` = the whole waves, the rest split). `estimate_us` is that model;
  its constants are meant to be fitted to measurements (bench/gemm.py --preset splitk).

Arguments are CUDA torch tensors (device="cuda", the default; queued on torch's current stream)
or NumPy uint16 arrays of bf16 bits (any device; copied in and out, e.g. on the simulator). K must
be a multiple of 8 (16-byte rows for the tensor maps), N too for the persistent kernels (C is
stored through TMA); otherwise `choose` falls back to the plain kernel with pointer stores.
"""
import os

import tilec

_SAMPLE = {"plain": ("gemm_sm90.tile", "gemm_sm90"), "persistent": ("gemm_persistent_sm90.tile", "gemm_persistent_sm90"),
           "pingpong": ("gemm_pingpong_sm90.tile", "gemm_pingpong_sm90"),
           "splitk": ("gemm_splitk_sm90.tile", "gemm_splitk_sm90"),
           "fp8_scaled": ("gemm_fp8_scaled_sm90.tile", "gemm_fp8_scaled_sm90")}
_REDUCE = "gemm_splitk_reduce_sm90"   # the splitk sample's second kernel


class Config:
    """A GEMM configuration: the kernel kind (plain, persistent, pingpong, splitk; fp8_scaled for
    scaled_mm) and -D overrides; for splitk also the run-time split: `splits` (slices of K per split
    tile, default 2) and `dp` (tiles computed whole before the split ones, default 0)."""

    def __init__(self, kind="persistent", defines=None, splits=None, dp=None):
        if kind not in _SAMPLE:
            raise ValueError("tilec.gemm: kind %r is not one of %s" % (kind, ", ".join(_SAMPLE)))
        if kind != "splitk" and (splits is not None or dp is not None):
            raise ValueError("tilec.gemm: splits and dp are settings of the splitk kind, not of %s" % kind)
        if kind == "splitk":
            splits = 2 if splits is None else splits
            dp = 0 if dp is None else dp
            if not isinstance(splits, int) or not 1 <= splits <= 1024 or not isinstance(dp, int) or dp < 0:
                raise ValueError("tilec.gemm: splits must be an int in 1..1024 and dp an int >= 0, not %r and %r" %
                                 (splits, dp))
        self.kind, self.defines, self.splits, self.dp = kind, dict(defines or {}), splits, dp

    def key(self):
        return (self.kind, tuple(sorted((k, str(v)) for k, v in self.defines.items())), self.splits, self.dp)

    def __eq__(self, other):
        return isinstance(other, Config) and self.key() == other.key()

    def __hash__(self):
        return hash(self.key())

    def __repr__(self):
        d = " ".join("%s=%s" % kv for kv in sorted(self.defines.items()))
        if self.kind == "splitk":
            d = (d + " " if d else "") + "splits=%d dp=%d" % (self.splits, self.dp)
        return "Config(%s%s)" % (self.kind, " " + d if d else "")


def _tiles(M, N, bm, bn):
    return -(-M // bm) * -(-N // bn)


# A 128 x 128 tile takes about this fraction of a 128 x 256 tile's time in the persistent kernel
# (half the work at about 0.8 of the throughput: the 128 x 128 variant's measured speed at shapes
# with many waves, docs/PERFORMANCE.md).
_BN128_COST = 0.6


def _waves(tiles, sms):
    return -(-tiles // sms)


# The ping-pong kernel with 128 x 128 tiles is ahead of the persistent one where those tiles are one
# partial wave and K is short (each tile's prologue and epilogue weigh most; 1000 x 1496 x 1000).
PINGPONG_MAX_K = 2048

# The split-K cost model (estimate_us), in microseconds on one device. Fitted to the H100 by hand
# from the sweep's times; refit from bench/gemm.py --preset splitk (each variant's time beside the
# model's estimate).
SPLITK = {
    # TFLOP/s one SM sustains in the main loop, by tile width (BN): 128 x 256 tiles at about 740
    # TFLOP/s over 132 SMs; 128 x 128 at 0.8 of that; 128 x 64 at 0.65
    "sm_tflops": {256: 5.6, 128: 4.5, 64: 3.6},
    "unit_us": 1.0,       # a unit's fixed cost: filling the ring, the epilogue's stores
    "reduce_gbs": 3000.0, # GB/s the reduction's traffic moves at (its slots mostly still in L2)
    "launch_us": 2.0,     # the reduction's launch and ramp behind the GEMM
    "dram_gbs": 3000.0,   # GB/s of reading A and B once: no configuration is faster (M = 128, long K)
    "gain": 0.9,          # split only where the estimate is below this fraction of the choice without it
    "max_splits": 8,
    "stages": {256: 3, 128: 5, 64: 6},   # the splitk sample's deepest ring per tile width (227 KiB)
}


_DEFAULT_BN = {"plain": 256, "persistent": 256, "pingpong": 128, "splitk": 128}   # the samples' BN


def _unit_us(bn, k, sms_flops):
    return 2.0 * 128 * bn * k / (sms_flops[bn] * 1e6) + SPLITK["unit_us"]


def estimate_us(cfg, M, N, K, sms=132):
    """The cost model's time of configuration cfg for C[M, N] = A[M, K] B[N, K]^T, in microseconds:
    the rounds of units each SM runs (a unit: a whole tile, or a slice of one, at the tile width's
    rate plus a fixed cost), at least the time to read A and B once, and for splitk the reduction
    (its slots written and read, C written, plus a launch). Only as good as SPLITK's constants; used
    to compare configurations."""
    bn = int(cfg.defines.get("BN", _DEFAULT_BN.get(cfg.kind, 256)))
    bn = min((256, 128, 64), key=lambda x: abs(x - bn))   # the rates the model has
    rate = SPLITK["sm_tflops"]
    nk = -(-K // 64)
    tiles = _tiles(M, N, 128, bn)
    operands_us = 2.0 * K * (M + N) / (SPLITK["dram_gbs"] * 1e3)
    if cfg.kind != "splitk":
        return max(_waves(tiles, sms) * _unit_us(bn, nk * 64, rate), operands_us)
    dp, S = min(cfg.dp, tiles), cfg.splits
    whole = _waves(dp, sms) * _unit_us(bn, nk * 64, rate) if dp else 0.0
    split = (tiles - dp) * S
    t = whole + _waves(split, sms) * _unit_us(bn, -(-nk // S) * 64, rate) if split else whole
    t = max(t, operands_us)
    if split:
        t += SPLITK["launch_us"] + (2 * S + 0.5) * (tiles - dp) * 128 * bn * 4 / (SPLITK["reduce_gbs"] * 1e3)
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
                yield Config("splitk", {"BN": bn, "STAGES": SPLITK["stages"][bn]}, splits=S, dp=dp)


def choose(M, N, K, sms=132):
    """The configuration for C[M, N] = A[M, K] B[N, K]^T on a device of `sms` SMs."""
    for v, what in ((M, "M"), (N, "N"), (K, "K"), (sms, "sms")):
        if not isinstance(v, int) or v < 1:
            raise ValueError("tilec.gemm.choose: %s must be a positive int, not %r" % (what, v))
    if N % 8:   # the persistent kernels store C through TMA: 16-byte rows
        return Config("plain", {"BN": 64, "STAGES": 8} if M <= 256 else {})
    if M <= 256:
        if _tiles(M, N, 128, 64) <= sms:
            base = Config("plain", {"BN": 64, "STAGES": 8})
        elif N >= 14336:
            base = Config("pingpong")
        else:
            base = Config("persistent", {"BN": 128, "STAGES": 6})
    else:
        t256, t128 = _tiles(M, N, 128, 256), _tiles(M, N, 128, 128)
        if _waves(t128, sms) * _BN128_COST < _waves(t256, sms):
            base = Config("persistent", {"BN": 128, "STAGES": 6})
            if t128 <= sms and K <= PINGPONG_MAX_K:
                base = Config("pingpong")
        else:
            base = Config("persistent", {"GROUP_M": 16})
    if K % 8:
        return base
    best = min(_split_candidates(M, N, K, sms), key=lambda c: estimate_us(c, M, N, K, sms), default=None)
    if best is not None and estimate_us(best, M, N, K, sms) < SPLITK["gain"] * estimate_us(base, M, N, K, sms):
        return best
    return base


_chosen = {}   # matmul's choice per (M, N, K, SMs): choose weighs every split-K candidate (about 0.5 ms)


def forget():
    """Drops matmul's remembered choices, so that its next calls choose again (after changing SPLITK or
    PINGPONG_MAX_K)."""
    _chosen.clear()


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
    """The splitk sample's second kernel, which adds the slices of each split tile into C."""
    return program(config)[_REDUCE]


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
    cfg = config or _chosen.get((M, N, K, sms))
    if cfg is None:
        cfg = _chosen[(M, N, K, sms)] = choose(M, N, K, sms)
    if cfg.kind != "plain" and N % 8:
        raise ValueError("tilec.gemm.matmul: %r stores C through TMA, which needs N a multiple of 8 (N = %d)" % (cfg, N))
    k = kernel(cfg)
    bm, bn = k.params[0].box[0], k.params[1].box[0]
    grid = _tiles(M, N, bm, bn)
    if cfg.kind == "splitk":
        _splitk(cfg, a, b, out, M, N, K, grid, sms, device, stream)
        return out
    if cfg.kind != "plain":
        grid = min(grid, sms)
    k(a, b, out, M, N, K, grid=grid, device=device, stream=stream)
    return out


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


def _splitk(cfg, a, b, out, M, N, K, tiles, sms, device, stream, ws=None):
    """The two launches of the splitk sample, on one stream: the GEMM over dp whole tiles and the
    slices of the others (grid min(units, SMs)), then the reduction of the split tiles' slices into C
    (a block per 16 rows of a split tile), which the stream orders after it."""
    dp = min(cfg.dp, tiles)
    slots = (tiles - dp) * cfg.splits
    if ws is None:
        ws = workspace(a, cfg, M, N, K)
    k = kernel(cfg)
    bm = k.params[0].box[0]
    k(a=a, b=b, c=out, ws=ws, M=M, N=N, K=K, P=max(1, slots), splits=cfg.splits, dp=dp, grid=min(dp + slots, sms),
      device=device, stream=stream)
    if slots:
        reduce_kernel(cfg)(ws=ws, c=out, M=M, N=N, P=slots, splits=cfg.splits, dp=dp, grid=(tiles - dp) * -(-bm // 16),
                           device=device, stream=stream)


def choose_fp8(M, N, K, sms=132):
    """The configuration of scaled_mm (measured: docs/PERFORMANCE.md, "fp8 GEMM"): the persistent fp8
    kernel with 128 x 256 tiles; for M <= 256, 128 x 64 tiles with 8 stages while they fit one wave
    (tiles <= SMs), else 128 x 128 tiles with 6 stages (the bf16 rule's tile sizes)."""
    choose(M, N, K, sms)   # the same argument checks
    if M <= 256:
        if _tiles(M, N, 128, 64) <= sms:
            return Config("fp8_scaled", {"BN": 64, "STAGES": 8})
        return Config("fp8_scaled", {"BN": 128, "STAGES": 6})
    return Config("fp8_scaled")


def _fp8_type(x):
    name = str(getattr(x, "dtype", ""))
    return "e5m2" if "e5m2" in name else "e4m3"


def scaled_mm(a, b, scale_a, scale_b, out=None, *, config=None, device="cuda", stream=None):
    """C = diag(scale_a) (A B^T) diag(scale_b) with fp8 A [M, K] and B [N, K] (torch.float8_e4m3fn or
    float8_e5m2 tensors, or uint8 arrays of e4m3 bits), f32 scale vectors scale_a [M] and scale_b
    [N] (per-tensor scaling: vectors of one value), bf16 C [M, N]. K and N must be multiples of 16
    and 8 (TMA rows)."""
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
    if cfg.kind != "fp8_scaled":
        raise ValueError("tilec.gemm.scaled_mm: %r is not an fp8_scaled configuration" % (cfg,))
    defines = dict(cfg.defines)
    defines.setdefault("TA", _fp8_type(a))
    defines.setdefault("TB", _fp8_type(b))
    k = kernel(Config("fp8_scaled", defines))
    grid = min(_tiles(M, N, k.params[0].box[0], k.params[1].box[0]), sms)
    k(a, b, out, scale_a, scale_b, M, N, K, grid=grid, device=device, stream=stream)
    return out
