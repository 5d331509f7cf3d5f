"""tilec.attention: the FlashAttention forward on sm_90a with the build chosen from the shape.

    import tilec.attention
    o = tilec.attention.forward(q, k, v, causal=True)             # softmax(q k^T scale [+ mask]) v
    o, lse = tilec.attention.forward(q, k, v, scale=0.1, return_lse=True)
    cfg = tilec.attention.choose(head_dim, seqlen_q, seqlen_k, causal)   # what forward would run
    tilec.attention.forward(q, k, v, config=tilec.attention.Config({"BN": 176, "ROWSUM": 1}))

The kernel is samples/attention_fwd_sm90.tile (its comment has the semantics: q [batch, heads,
seqlen_q, D], k and v [batch, kv_heads, seqlen_k, D] with kv_heads dividing heads, o like q, lse f32
[batch, heads, seqlen_q] in natural log; causal masks aligned bottom-right; a row that sees no key
gives o = 0 and lse = -inf), compiled once per configuration, head dim and element type, and kept.
Its -D overrides that change speed and not results are the configuration: BN (keys per block),
ROWSUM (per-thread row sums), NWG (consumer warpgroups), PERSIST (the persistent schedule), STAGES
and BPS (blocks resident per SM).

`choose` is a rule read off the H100 table of docs/PERFORMANCE.md ("Attention (sm_90a)", "Key
blocks of 176 and per-thread row sums"), measured at seqlen_q = seqlen_k with batch x seqlen = 16k
tokens; the length it goes by is seqlen_k (the keys each query row reads, which sets a block's
work against its fixed costs). RULE holds the thresholds:

- head dim 128: key blocks of 176 with per-thread row sums (BN=176 ROWSUM=1) from 8k keys without a
  mask (708-716 against 682-698 TFLOP/s for 128-key blocks at 8k, 726 against 712 at 16k, with the
  consumer compiled once for both warpgroups: docs/PERFORMANCE.md, "One consumer body for every
  warpgroup"); 128-key blocks with per-thread row sums (ROWSUM=1) below that and at every causal
  length (causal at 8k / 16k 645-649 / 702-707 against 639 / 693 for 176-key blocks). Since the
  masked key blocks run in a loop of their own the wide block no longer wins at 4k (648 / 546
  against 652 / 562 TFLOP/s non-causal / causal; docs/PERFORMANCE.md, "What cuDNN runs, what the
  SASS runs, and a loop of its own for the masked blocks").
- head dim 64: per-thread row sums with the sample's three warpgroups, persistent (below: 0.93 /
  0.96 / 1.05 / 1.09 / 1.12 / 1.13x cuDNN non-causal at 512 .. 16k, causal 0.92 / 0.99 / 1.09 /
  1.12x from 2k); blocks of 176 or 192 keys lost.
- short rows (up to RULE["two_blocks_max"][(head dim, causal)] keys: causal 1k at head dim 64):
  one consumer warpgroup and two blocks on each SM (NWG=1 BPS=2), so that one block's start (Q and
  the first K landing) and end run under the other's mmas, and persistent as well: 205 / 284
  TFLOP/s at 512 / 1k against 194 / 278 for two blocks one tile a block and 182 / 250 for three
  warpgroups persistent; three warpgroups persistent win from 2k (361 against 357). At head dim 128
  the two-block form (64-key blocks, BN=64, for two blocks' shared memory) lost to the persistent
  one everywhere (274 against 279 causal at 512; docs/PERFORMANCE.md, "Two blocks on an SM for
  short rows", "Persistent tiles with uniform registers").
- the persistent schedule (PERSIST=1) from RULE["persist_min"] to RULE["persist_max"] keys (per
  head dim and causal) where the block stays at 128 keys: since the CLC emulation's block index and
  responses are warp-uniform to ptxas (docs/PERFORMANCE.md, "Persistent tiles with uniform
  registers") it leads one tile a block nearly everywhere: head dim 128 non-causal 453 / 574 / 649 /
  691 TFLOP/s at 512 / 1k / 2k / 4k against 414 / 545 / 633 / 683 (level with 176-key blocks at 8k,
  which keep 8k and 16k), causal 279 / 404 / 528 / 622 / 662 up to 8k against 260 / 382 / 501 / 597
  / 651, and behind at 16k (686 against 713); head dim 64 with three warpgroups non-causal 354 / 414
  / 495 / 520 / 545 / 546 from 512 to 16k against 311 / 383 / 475 / 510 / 540 / 541, causal 361 /
  435 / 495 / 538 from 2k against 350 / 423 / 475 / 521.

forward works out what a shape runs once (the configuration, the kernel and its grid) and keeps it;
`forget` drops what it kept. Arguments are CUDA torch tensors (bf16 or f16, contiguous; queued on
torch's current stream) or NumPy arrays of bf16 bits (uint16) or float16 (any device, e.g. the
simulator; copied in and out).
"""
import math
import os
import types

import tilec

_FILE, _KERNEL = "attention_fwd_sm90.tile", "attention_fwd"

# The rule's thresholds (keys per query row, seqlen_k), from the table named above: the wide key
# block from these lengths on, per causal (0, 1; 0: never); one warpgroup and two blocks an SM up to
# two_blocks_max[(head dim, causal)] keys (0: never); the persistent schedule from persist_min to
# persist_max[(head dim, causal)] keys (persist_max 0: never; EVERY: no upper bound).
EVERY = 1 << 31
RULE = {
    "bn176_min": {0: 8192, 1: 0},
    "two_blocks_max": {(128, 0): 0, (128, 1): 0, (64, 0): 0, (64, 1): 1024},
    "persist_min": {(128, 0): 1, (128, 1): 1, (64, 0): 1, (64, 1): 1},
    "persist_max": {(128, 0): EVERY, (128, 1): 8192, (64, 0): EVERY, (64, 1): EVERY},
}

_KNOBS = ("BN", "ROWSUM", "NWG", "PERSIST", "STAGES", "BPS")


class Config(tilec._ValueConfig):
    """A configuration: the sample's -D overrides (BN, ROWSUM, NWG, PERSIST, STAGES, BPS) other than the
    head dim and the element type, which come from q. A value: it does not change once made."""

    _WHAT = ("tilec.attention.Config", "forward")

    def __init__(self, defines=None):
        defines = dict(defines or {})
        for k, v in defines.items():
            if k not in _KNOBS:
                raise ValueError("tilec.attention: %r is not one of the sample's settings (%s); the head dim and "
                                 "element type come from q" % (k, ", ".join(_KNOBS)))
            if not isinstance(v, int) or isinstance(v, bool) or v < 0:
                raise ValueError("tilec.attention: %s must be a non-negative int, not %r" % (k, v))
        key = tuple(sorted(defines.items()))
        object.__setattr__(self, "defines", types.MappingProxyType(defines))
        object.__setattr__(self, "_key", key)

    def __repr__(self):
        return "Config(%s)" % " ".join("%s=%s" % kv for kv in self._key)


def choose(head_dim, seqlen_q, seqlen_k, causal):
    """The configuration for head dim 64 or 128, seqlen_q query rows against seqlen_k keys, causal or
    not (RULE; the module's comment gives the measurements behind it)."""
    if head_dim not in (64, 128):
        raise ValueError("tilec.attention.choose: head_dim must be 64 or 128, not %r" % (head_dim,))
    for v, what in ((seqlen_q, "seqlen_q"), (seqlen_k, "seqlen_k")):
        if not isinstance(v, int) or isinstance(v, bool) or v < 1:
            raise ValueError("tilec.attention.choose: %s must be a positive int, not %r" % (what, v))
    if causal not in (0, 1):   # False and True too
        raise ValueError("tilec.attention.choose: causal must be 0 or 1, not %r" % (causal,))
    c = int(causal)
    d = {"ROWSUM": 1}
    if head_dim == 128 and RULE["bn176_min"][c] and seqlen_k >= RULE["bn176_min"][c]:
        d["BN"] = 176
    if seqlen_k <= RULE["two_blocks_max"][(head_dim, c)]:
        d.update(NWG=1, BPS=2)
        if head_dim == 128:
            d["BN"] = 64   # two blocks' Q, K and V stages in one SM's shared memory
    if (RULE["persist_min"][(head_dim, c)] <= seqlen_k <= RULE["persist_max"][(head_dim, c)]
            and "BN" not in d):   # its own O tiles leave no room for BN=176 (nor two blocks' for BN=64)
        d["PERSIST"] = 1
    return Config(d)


_programs = {}   # (config key, head dim, element type) -> the compiled sample
_plans = {}      # (shape, dtype, causal, config or None) -> (kernel, grid)


def forget():
    """Drops forward's plans and compiled builds, so that its next calls choose again (after changing
    RULE or choose)."""
    _plans.clear()
    _programs.clear()


def samples_dir():
    """Where the sample is read from: as tilec.gemm.samples_dir ($TILEC_SAMPLES, the source tree, an
    install)."""
    import tilec.gemm
    return tilec.gemm.samples_dir()


def kernel(config, head_dim=128, dtype="bf16"):
    """The compiled kernel of a configuration at a head dim and element type (bf16 or f16)."""
    key = (config.key(), head_dim, dtype)
    if key not in _programs:
        path = os.path.join(samples_dir(), _FILE)
        with open(path) as f:
            src = f.read()
        defines = dict(config.defines, HEAD_DIM=head_dim, T=dtype)
        _programs[key] = tilec.compile(src, target="sm_90a", defines=defines, filename=path)
    return _programs[key][_KERNEL]


def _dtype(x, what):
    """bf16 or f16: a torch tensor's dtype, or a NumPy array's (uint16: bf16 bits; float16)."""
    name = str(getattr(x, "dtype", ""))
    if name in ("torch.bfloat16", "uint16"):
        return "bf16"
    if name in ("torch.float16", "float16"):
        return "f16"
    raise ValueError("tilec.attention.forward: %s holds %s; the kernel takes bf16 or f16 (torch.bfloat16 or "
                     "torch.float16 tensors, NumPy uint16 bf16 bits or float16)" % (what, name or type(x).__name__))


def _shape4(x, what):
    s = getattr(x, "shape", None)
    if s is None or len(s) != 4:
        raise ValueError("tilec.attention.forward: %s must be a 4-d array [batch, heads, seqlen, head_dim], not %r" %
                         (what, tuple(s) if s is not None else type(x).__name__))
    if hasattr(x, "is_contiguous") and not x.is_contiguous():
        raise ValueError("tilec.attention.forward: %s must be contiguous (the kernel's tensor maps read "
                         "[batch, heads, seqlen, head_dim] rows)" % what)
    if hasattr(x, "flags") and not x.flags["C_CONTIGUOUS"]:
        raise ValueError("tilec.attention.forward: %s must be C-contiguous" % what)
    return tuple(int(n) for n in s)


def check(q, k, v, causal=False, scale=None):
    """The argument checks of forward: returns (batch, heads, kv_heads, seqlen_q, seqlen_k, head_dim,
    dtype, causal as 0 or 1, scale) or raises ValueError."""
    bq, h, sq, d = _shape4(q, "q")
    bk, kvh, sk, dk = _shape4(k, "k")
    if _shape4(v, "v") != (bk, kvh, sk, dk):
        raise ValueError("tilec.attention.forward: k is %r and v %r: they must have one shape" %
                         ((bk, kvh, sk, dk), tuple(v.shape)))
    if bk != bq or dk != d:
        raise ValueError("tilec.attention.forward: q is %r and k %r: batch and head_dim must agree" %
                         ((bq, h, sq, d), (bk, kvh, sk, dk)))
    if d not in (64, 128):
        raise ValueError("tilec.attention.forward: head_dim %d: the kernel is built for 64 and 128" % d)
    if kvh < 1 or h % kvh:
        raise ValueError("tilec.attention.forward: %d heads and %d kv heads: kv_heads must divide heads" % (h, kvh))
    if bq > 65535 or h > 65535:
        raise ValueError("tilec.attention.forward: batch %d, heads %d: each must be at most 65535 (grid dims)" % (bq, h))
    if sq > (1 << 20) or sk > (1 << 20):
        raise ValueError("tilec.attention.forward: seqlen_q %d, seqlen_k %d: at most 2^20 each" % (sq, sk))
    dt = _dtype(q, "q")
    for x, what in ((k, "k"), (v, "v")):
        if _dtype(x, what) != dt:
            raise ValueError("tilec.attention.forward: q is %s and %s is %s: one element type" % (dt, what, _dtype(x, what)))
    if causal not in (0, 1):
        raise ValueError("tilec.attention.forward: causal must be a bool (or 0 / 1), not %r" % (causal,))
    if scale is None:
        scale = 1.0 / math.sqrt(d)
    if isinstance(scale, bool) or not isinstance(scale, (int, float)) or not 0 < scale < 1e3:
        raise ValueError("tilec.attention.forward: scale must be a positive number below 1000, not %r" % (scale,))
    return bq, h, kvh, sq, sk, d, dt, int(causal), float(scale)


def _empty(like, shape, f32):
    if hasattr(like, "new_empty"):
        import torch
        return torch.empty(shape, device=like.device, dtype=torch.float32 if f32 else like.dtype)
    import numpy as np
    return np.empty(shape, np.float32 if f32 else like.dtype)


def forward(q, k, v, causal=False, scale=None, *, out=None, lse=None, return_lse=False, config=None,
            device="cuda", stream=None):
    """o = softmax(q k^T scale [+ causal mask]) v (the sample's semantics; scale defaults to
    1 / sqrt(head_dim)). out and lse, when given, receive o [batch, heads, seqlen_q, head_dim] and
    lse f32 [batch, heads, seqlen_q]; otherwise they are allocated like q. Returns o, or (o, lse)
    with return_lse. config: a Config to run instead of choose()'s."""
    b, h, kvh, sq, sk, d, dt, c, scale = check(q, k, v, causal, scale)
    if config is not None and not isinstance(config, Config):
        raise ValueError("tilec.attention.forward: config must be a tilec.attention.Config, not %r" % (config,))
    if out is None:
        out = _empty(q, (b, h, sq, d), False)
    elif tuple(out.shape) != (b, h, sq, d):
        raise ValueError("tilec.attention.forward: out is %r, not %r" % (tuple(out.shape), (b, h, sq, d)))
    if lse is None:
        lse = _empty(q, (b, h, sq), True)
    elif tuple(lse.shape) != (b, h, sq):
        raise ValueError("tilec.attention.forward: lse is %r, not %r" % (tuple(lse.shape), (b, h, sq)))
    if sq and sk:
        key = ((b, h, kvh, sq, sk, d), dt, c, config)
        plan = _plans.get(key)
        if plan is None:
            kern = kernel(config or choose(d, sq, sk, c), d, dt)
            rows = 64 * (kern.block[0] // 128 - 1)   # 64 query rows per consumer warpgroup
            plan = _plans[key] = (kern, (-(-sq // rows), h, b))
        kern, grid = plan
        kern(q, k, v, out, lse, batch=b, heads=h, kv_heads=kvh, seqlen_q=sq, seqlen_k=sk, scale=scale, causal=c,
             grid=grid, device=device, stream=stream)
    elif sq:   # no keys: every row sees none (a TMA descriptor cannot describe an empty tensor)
        out[...] = 0
        lse[...] = float("-inf")
    return (out, lse) if return_lse else out
