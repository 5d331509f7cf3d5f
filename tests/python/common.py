"""What the Python tests share: the repository's root, a sample's path, bf16 as uint16 bits, fp8
as uint8 codes, and the float64 attention reference."""
import os

import numpy as np

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def sample(name):
    return os.path.join(ROOT, "samples", name)


def bf16_bits(x):
    """float32 -> bf16 bits (round to nearest even), as uint16."""
    u = np.ascontiguousarray(x, np.float32).view(np.uint32).astype(np.uint64)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def bf16_value(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32)


# ---- fp8 (e4m3: bias 7, 3 fraction bits, no infinity, S.1111.111 NaN; e5m2: bias 15, 2 fraction
# bits, IEEE-like), from the formats' definitions ----

def fp8_value(codes, e5m2):
    """The float64 values of fp8 codes (uint8 array)."""
    c = np.asarray(codes, np.int64)
    fb, bias = (2, 15) if e5m2 else (3, 7)
    emax = (1 << (7 - fb)) - 1
    ex, fr = (c >> fb) & emax, c & ((1 << fb) - 1)
    mag = np.where(ex == 0, np.ldexp(fr / float(1 << fb), 1 - bias),
                   np.ldexp(1.0 + fr / float(1 << fb), ex - bias))
    if e5m2:
        mag = np.where(ex == emax, np.where(fr == 0, np.inf, np.nan), mag)
    else:
        mag = np.where((ex == emax) & (fr == (1 << fb) - 1), np.nan, mag)
    return np.where(c & 0x80, -mag, mag)


def fp8_bits(x, e5m2):
    """The fp8 codes nearest to x (ties to the even code), saturating at the largest finite value
    (infinities too), the sign kept (a negative value that rounds to 0 gives -0)."""
    x = np.asarray(x, np.float64)
    mags = fp8_value(np.arange(128), e5m2)
    top = int(np.flatnonzero(np.isfinite(mags))[-1])   # the largest finite code: magnitudes ascend up to it
    mags = mags[:top + 1]
    a = np.abs(x)
    hi = np.clip(np.searchsorted(mags, a), 0, top)     # the first magnitude >= a
    lo = np.clip(hi - 1, 0, top)
    dlo, dhi = np.abs(a - mags[lo]), np.abs(mags[hi] - a)
    code = np.where((dlo < dhi) | ((dlo == dhi) & (lo % 2 == 0)), lo, hi)
    code = np.where(a >= mags[top], top, code)
    return (code | np.where(np.signbit(x), 0x80, 0)).astype(np.uint8)


def attention_reference(q, k, v, scale, causal):
    """o and lse in float64 (grouped-query heads repeated; bottom-right causal mask)."""
    h, kvh = q.shape[1], k.shape[1]
    k, v = np.repeat(k, h // kvh, axis=1), np.repeat(v, h // kvh, axis=1)
    sq, sk = q.shape[2], k.shape[2]
    s = q @ k.transpose(0, 1, 3, 2) * scale
    seen = np.arange(sk)[None, :] <= np.arange(sq)[:, None] + (sk - sq) if causal else np.ones((sq, sk), bool)
    s = np.where(seen, s, -np.inf)
    with np.errstate(invalid="ignore", divide="ignore"):
        m = s.max(axis=-1, keepdims=True)
        p = np.where(seen, np.exp(s - np.where(np.isfinite(m), m, 0)), 0.0)
        l = p.sum(axis=-1, keepdims=True)
        o = np.where(l > 0, (p @ v) / np.where(l > 0, l, 1), 0.0)
        lse = np.where(l[..., 0] > 0, (m + np.log(l))[..., 0], -np.inf)
    return o, lse
