"""tilec.gemm: C = A B^T in bf16 on sm_90a with the configuration chosen from the shape.

    import tilec.gemm
    c = tilec.gemm.matmul(a, b)            # a [M, K], b [N, K] (a weight matrix as stored), c [M, N]
    c = tilec.gemm.scaled_mm(a8, b8, sa, sb)   # fp8 inputs, f32 scales per row of A and column of B
    cfg = tilec.gemm.choose(M, N, K)       # what matmul would run: Config(kind, defines)
    tilec.gemm.matmul(a, b, out=c, config=tilec.gemm.Config("persistent", {"BN": 128, "STAGES": 6}))

The kernels are the GEMM samples (samples/gemm_sm90.tile, gemm_persistent_sm90.tile,
gemm_pingpong_sm90.tile, gemm_fp8_scaled_sm90.tile), compiled once per configuration and kept. `choose` is a rule measured
on an H100 (docs/PERFORMANCE.md, "GEMM: the chooser"): it counts the output tiles each tile shape
gives against the device's SMs, in waves.

- At most 256 rows (M <= 256): 128 x 64 tiles with 8 stages, one block per tile, while those tiles
  fit in one wave (tiles <= SMs); past that, the ping-pong kernel for wide N (N >= 14336) and the
  persistent kernel with 128 x 128 tiles otherwise.
- More rows: the persistent kernel, with 128 x 256 tiles (GROUP_M = 16 raster) unless 128 x 128
  tiles take less time counted in waves: waves(128 x 128) x 0.6 < waves(128 x 256), a wave of
  128 x 128 tiles costing 0.6 of one of 128 x 256 tiles (M = 512 against N = 4096: one wave of 64
  tiles or one of 128 smaller ones; N = 10240: 2 waves or 3 smaller ones).

Arguments are CUDA torch tensors (device="cuda", the default; queued on torch's current stream)
or NumPy uint16 arrays of bf16 bits (any device; copied in and out, e.g. on the simulator). K must
be a multiple of 8 (16-byte rows for the tensor maps), N too for the persistent kernels (C is
stored through TMA); otherwise `choose` falls back to the plain kernel with pointer stores.
"""
import os

import tilec

_SAMPLE = {"plain": ("gemm_sm90.tile", "gemm_sm90"), "persistent": ("gemm_persistent_sm90.tile", "gemm_persistent_sm90"),
           "pingpong": ("gemm_pingpong_sm90.tile", "gemm_pingpong_sm90"),
           "fp8_scaled": ("gemm_fp8_scaled_sm90.tile", "gemm_fp8_scaled_sm90")}


class Config:
    """A GEMM configuration: the kernel kind (plain, persistent, pingpong; fp8_scaled for
    scaled_mm) and -D overrides."""

    def __init__(self, kind="persistent", defines=None):
        if kind not in _SAMPLE:
            raise ValueError("tilec.gemm: kind %r is not one of %s" % (kind, ", ".join(_SAMPLE)))
        self.kind, self.defines = kind, dict(defines or {})

    def key(self):
        return (self.kind, tuple(sorted((k, str(v)) for k, v in self.defines.items())))

    def __eq__(self, other):
        return isinstance(other, Config) and self.key() == other.key()

    def __hash__(self):
        return hash(self.key())

    def __repr__(self):
        d = " ".join("%s=%s" % kv for kv in sorted(self.defines.items()))
        return "Config(%s%s)" % (self.kind, " " + d if d else "")


def _tiles(M, N, bm, bn):
    return -(-M // bm) * -(-N // bn)


# A 128 x 128 tile takes about this fraction of a 128 x 256 tile's time in the persistent kernel
# (half the work at about 0.8 of the throughput: the 128 x 128 variant's measured speed at shapes
# with many waves, docs/PERFORMANCE.md).
_BN128_COST = 0.6


def _waves(tiles, sms):
    return -(-tiles // sms)


def choose(M, N, K, sms=132):
    """The configuration for C[M, N] = A[M, K] B[N, K]^T on a device of `sms` SMs."""
    for v, what in ((M, "M"), (N, "N"), (K, "K"), (sms, "sms")):
        if not isinstance(v, int) or v < 1:
            raise ValueError("tilec.gemm.choose: %s must be a positive int, not %r" % (what, v))
    if N % 8:   # the persistent kernels store C through TMA: 16-byte rows
        return Config("plain", {"BN": 64, "STAGES": 8} if M <= 256 else {})
    if M <= 256:
        if _tiles(M, N, 128, 64) <= sms:
            return Config("plain", {"BN": 64, "STAGES": 8})
        if N >= 14336:
            return Config("pingpong")
        return Config("persistent", {"BN": 128, "STAGES": 6})
    t256, t128 = _tiles(M, N, 128, 256), _tiles(M, N, 128, 128)
    if _waves(t128, sms) * _BN128_COST < _waves(t256, sms):
        return Config("persistent", {"BN": 128, "STAGES": 6})
    return Config("persistent", {"GROUP_M": 16})


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


_kernels = {}


def kernel(config):
    """The compiled kernel of a configuration (compiled on first use, then kept)."""
    if config not in _kernels:
        path = os.path.join(samples_dir(), _SAMPLE[config.kind][0])
        with open(path) as f:
            src = f.read()
        prog = tilec.compile(src, target="sm_90a", defines=config.defines, filename=path)
        _kernels[config] = prog[_SAMPLE[config.kind][1]]
    return _kernels[config]


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
    cfg = config or choose(M, N, K, sms)
    if cfg.kind != "plain" and N % 8:
        raise ValueError("tilec.gemm.matmul: %r stores C through TMA, which needs N a multiple of 8 (N = %d)" % (cfg, N))
    k = kernel(cfg)
    bm, bn = k.params[0].box[0], k.params[1].box[0]
    grid = _tiles(M, N, bm, bn)
    if cfg.kind != "plain":
        grid = min(grid, sms)
    k(a, b, out, M, N, K, grid=grid, device=device, stream=stream)
    return out


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
