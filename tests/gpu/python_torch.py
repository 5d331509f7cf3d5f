#!/usr/bin/env python3
"""tests/gpu/python_torch.py: the Python package on a GPU with PyTorch tensors (docs/PYTHON.md).

    TILEC_LIB=build-gpu/libtile.so python3 tests/gpu/python_torch.py

Checks, on fresh random inputs with outputs poisoned first:
  - vector_add and a bf16 ReLU on CUDA torch tensors passed by address (no copies), on torch's
    default stream, against torch;
  - the same launch on a non-default torch stream (torch.cuda.stream(s)): the inputs are written
    on s, the kernel queues behind them on s (the current stream, taken by default), the result is
    read after s;
  - samples/attention_fwd_sm90.tile at ragged, causal, grouped-query shapes against a float64
    softmax(q k^T scale) v and log-sum-exp computed by torch;
  - samples/tma_copy.tile bit for bit and samples/gemm_persistent_sm90.tile against torch.matmul
    (the runtime builds the tensor maps from the tensors' addresses and the kernels' boxes), at
    ragged shapes;
  - tilec.autotune of samples/gemm_sm90.tile over two tile widths on torch tensors (each
    configuration timed to completion, the result checked);
  - one CUDA context: the context current after torch's work and after tilec's launches is the
    device's primary context (cuCtxGetCurrent, cuDevicePrimaryCtxRetain), and torch keeps working;
  - strided views (windows of wider tensors) through TMA parameters, in place;
  - the errors: a tensor of the wrong dtype, a non-contiguous tensor for a pointer parameter, a
    transposed view or a too-short tensor for a TMA one, a stream of the wrong kind.
Exit status: 0 all passed, 1 a check failed, 77 skipped (no torch or no CUDA device; not a pass).
"""
import math
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "python"))

try:
    import torch
except ImportError:
    print("python_torch: SKIP: PyTorch is not installed (not a pass)")
    sys.exit(77)
if not torch.cuda.is_available():
    print("python_torch: SKIP: torch sees no CUDA device (not a pass)")
    sys.exit(77)
import tilec  # noqa: E402

failed = 0


def check(ok, what):
    global failed
    print(("  ok   " if ok else "  FAIL ") + what)
    failed += not ok


def sample(name):
    return os.path.join(ROOT, "samples", name)


add = tilec.compile(sample("vector_add.tile"), target="sm_90a")["vector_add"]
n = 100003
a, b = torch.rand(n, device="cuda"), torch.rand(n, device="cuda")
c = torch.full((n,), float("nan"), device="cuda")
add(a, b, c, n, grid=(n + 255) // 256, device="cuda")
check(torch.equal(c, a + b), "vector_add on torch tensors, default stream (%d elements)" % n)

s = torch.cuda.Stream()
with torch.cuda.stream(s):
    a2 = torch.rand(n, device="cuda")
    b2 = torch.rand(n, device="cuda")
    c2 = torch.full((n,), float("nan"), device="cuda")
    add(a2, b2, c2, n, grid=(n + 255) // 256, device="cuda")   # torch's current stream: s
    want = a2 + b2
s.synchronize()
check(torch.equal(c2, want), "vector_add queued on a non-default torch stream behind the writes of its inputs")

relu = tilec.compile(sample("relu_bf16.tile"), target="sm_90a")["relu_bf16"]
x = torch.randn(4099, device="cuda", dtype=torch.bfloat16)
y = torch.full_like(x, float("nan"))
relu(x, y, x.numel(), grid=(x.numel() + 2047) // 2048, device="cuda")
check(torch.equal(y, torch.relu(x)), "relu_bf16 on a torch.bfloat16 tensor")

att = tilec.compile(sample("attention_fwd_sm90.tile"), target="sm_90a")["attention_fwd"]
for (bt, h, kvh, sq, sk, causal) in ((1, 2, 1, 300, 77, 1), (2, 4, 2, 129, 1000, 0), (1, 2, 2, 77, 300, 1)):
    d = 128
    q = torch.randn(bt, h, sq, d, device="cuda", dtype=torch.bfloat16)
    k = torch.randn(bt, kvh, sk, d, device="cuda", dtype=torch.bfloat16)
    v = torch.randn(bt, kvh, sk, d, device="cuda", dtype=torch.bfloat16)
    o = torch.full_like(q, float("nan"))
    lse = torch.full((bt, h, sq), float("nan"), device="cuda")
    scale = 1.0 / math.sqrt(d)
    rows = 64 * (att.block[0] // 128 - 1)
    att(q, k, v, o, lse, batch=bt, heads=h, kv_heads=kvh, seqlen_q=sq, seqlen_k=sk, scale=scale, causal=causal,
        grid=((sq + rows - 1) // rows, h, bt), device="cuda")
    kk = k.double().repeat_interleave(h // kvh, dim=1)
    vv = v.double().repeat_interleave(h // kvh, dim=1)
    sc = q.double() @ kk.transpose(-1, -2) * scale
    if causal:   # bottom-right: query i sees keys j <= i + sk - sq
        i = torch.arange(sq, device="cuda")[:, None] + (sk - sq)
        sc = sc.masked_fill(torch.arange(sk, device="cuda")[None, :] > i, float("-inf"))
    ref_lse = torch.logsumexp(sc, dim=-1)
    p = torch.nan_to_num(torch.exp(sc - ref_lse[..., None]), nan=0.0)
    ref_o = p @ vv
    err = (torch.linalg.norm(o.double() - ref_o) / torch.linalg.norm(ref_o)).item()
    seen = torch.isfinite(ref_lse)
    lerr = (lse.double()[seen] - ref_lse[seen]).abs().max().item() if seen.any() else 0.0
    empty_ok = bool(torch.all(lse[~seen] == float("-inf"))) and bool(torch.all(o[~seen] == 0))
    check(err < 1e-2 and lerr < 1e-3 and empty_ok,
          "attention_fwd batch %d heads %d/%d seqlen %d/%d causal %d: o rel. err %.2e, lse max err %.2e, rows without keys "
          "%s" % (bt, h, kvh, sq, sk, causal, err, lerr, "0 / -inf" if empty_ok else "WRONG"))

copy = tilec.compile(sample("tma_copy.tile"), target="sm_90a")["tma_copy"]
M, N = 1000, 520
src = torch.randn(M, N, device="cuda", dtype=torch.bfloat16)
dst = torch.full_like(src, float("nan"))
bm, bn = copy.params[0].box
copy(src, dst, M, N, grid=((M + bm - 1) // bm, (N + bn - 1) // bn), device="cuda")
check(torch.equal(src, dst), "tma_copy %d x %d bf16 bit for bit" % (M, N))
# strided views: windows of wider tensors (row pitches of N + 40 and N + 24 elements) are read and
# written in place through maps with those pitches; the padding around the output window stays NaN
wide = torch.randn(M, N + 40, device="cuda", dtype=torch.bfloat16)
pad = torch.full((M, N + 24), float("nan"), device="cuda", dtype=torch.bfloat16)
copy(wide[:, 16:16 + N], pad[:, 8:8 + N], M, N, grid=((M + bm - 1) // bm, (N + bn - 1) // bn), device="cuda")
torch.cuda.synchronize()
check(torch.equal(pad[:, 8:8 + N], wide[:, 16:16 + N]) and bool(torch.isnan(pad[:, :8]).all()) and
      bool(torch.isnan(pad[:, 8 + N:]).all()), "tma_copy between strided views in place (padding untouched)")
try:
    copy(src.t(), dst.t(), N, M, grid=1, device="cuda")
    check(False, "expected LaunchError for a transposed view into a TMA parameter")
except tilec.LaunchError as e:
    check("the innermost dim of the tensor has stride %d" % N in str(e), "LaunchError: a transposed view into TMA")
try:
    copy(src[:M - 1], dst, M, N, grid=1, device="cuda")
    check(False, "expected LaunchError for dims past the tensor")
except tilec.LaunchError as e:
    check("but the tensor's extent there is %d" % (M - 1) in str(e), "LaunchError: the kernel's M past the tensor")

gemm = tilec.compile(sample("gemm_persistent_sm90.tile"), target="sm_90a")["gemm_persistent_sm90"]
M, N, K = 1000, 1496, 520
A = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
B = torch.randn(N, K, device="cuda", dtype=torch.bfloat16)
C = torch.full((M, N), float("nan"), device="cuda", dtype=torch.bfloat16)
sms = torch.cuda.get_device_properties(0).multi_processor_count
tiles = ((M + 127) // 128) * ((N + 255) // 256)
gemm(A, B, C, M, N, K, grid=min(tiles, sms), device="cuda")
ref = A.float() @ B.float().T
err = (torch.linalg.norm(C.float() - ref) / torch.linalg.norm(ref)).item()
check(err < 2 ** -8, "gemm_persistent_sm90 %d x %d x %d on torch tensors: relative Frobenius error %.2e" % (M, N, K, err))

tuned = tilec.autotune(sample("gemm_sm90.tile"), [{"BN": 128}, {"BN": 256}], target="sm_90a", cache=False,
                       grid=lambda cfg, k, a, b, c, M, N, K: ((M + 127) // 128) * ((N + cfg["BN"] - 1) // cfg["BN"]))
M, N, K = 2048, 2048, 1024
A = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
B = torch.randn(N, K, device="cuda", dtype=torch.bfloat16)
C = torch.full((M, N), float("nan"), device="cuda", dtype=torch.bfloat16)
tuned(A, B, C, M, N, K, device="cuda")
torch.cuda.synchronize()
ref = A.float() @ B.float().T
err = (torch.linalg.norm(C.float() - ref) / torch.linalg.norm(ref)).item()
times = tuned.report[-1][1]
check(err < 2 ** -8 and all(not isinstance(t, Exception) and t > 0 for _, t in times),
      "autotune of gemm_sm90 over BN 128 / 256 on torch tensors: chose %s (%s), rel. err %.2e" %
      (tuned.chosen(A, B, C, M, N, K), ", ".join("%s %.3f ms" % (c, t * 1e3) for c, t in times), err))


class Dl:   # a DLPack producer that is not a torch tensor
    def __init__(self, t):
        self.t = t

    def __dlpack__(self, stream=None):
        return self.t.__dlpack__()

    def __dlpack_device__(self):
        return self.t.__dlpack_device__()


c3 = torch.full((n,), float("nan"), device="cuda")
add(Dl(a), Dl(b), Dl(c3), n, grid=(n + 255) // 256, device="cuda")
torch.cuda.synchronize()
check(torch.equal(c3, a + b), "vector_add on DLPack producers (read through torch.from_dlpack, no copy)")

import ctypes  # noqa: E402
cu = ctypes.CDLL("libcuda.so.1")
cur, prim, dev = ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_int()
cu.cuCtxGetCurrent(ctypes.byref(cur))
cu.cuDeviceGet(ctypes.byref(dev), torch.cuda.current_device())
cu.cuDevicePrimaryCtxRetain(ctypes.byref(prim), dev)
cu.cuDevicePrimaryCtxRelease(dev)
x = torch.ones(1000, device="cuda").sum().item()
check(cur.value == prim.value and x == 1000.0,
      "one context: the current context after tilec's launches is the primary one, and torch still computes")

for args, msg in (((a.double(), b, c, n), "'a' holds f32 elements, but the tensor is float64"),
                  ((a[::2], b[::2], c[::2], n // 2), "argument 1 ('a'): the tensor is not contiguous")):
    try:
        add(*args, grid=1, device="cuda")
        check(False, "expected LaunchError: " + msg)
    except tilec.LaunchError as e:
        check(msg in str(e), "LaunchError: " + msg)
try:
    add(a, b, c, n, grid=1, device="cuda", stream="s")
    check(False, "expected LaunchError for a stream of the wrong kind")
except tilec.LaunchError as e:
    check("stream must be a torch.cuda.Stream" in str(e), "LaunchError: a stream of the wrong kind")

# tilec.gemm on torch tensors: the chosen configuration at a ragged shape of each rule, against
# float64; and scaled_mm with e4m3 inputs and row/column scales
import tilec.gemm  # noqa: E402
for M, N, K in ((130, 4096, 520), (600, 2056, 1000), (1000, 1496, 1000)):
    ga = torch.rand(M, K, device="cuda").mul(2).sub(1).to(torch.bfloat16)
    gb = torch.rand(N, K, device="cuda").mul(2).sub(1).to(torch.bfloat16)
    want = ga.double() @ gb.double().t()
    got = tilec.gemm.matmul(ga, gb)
    torch.cuda.synchronize()
    err = ((got.double() - want).norm() / want.norm()).item()
    check(err < 2 ** -8, "tilec.gemm.matmul %dx%dx%d (%s): rel. error %.2e" % (M, N, K, tilec.gemm.choose(M, N, K), err))
for M, N, K in ((100, 264, 160), (700, 1032, 4096)):
    fa = torch.rand(M, K, device="cuda").mul(2).sub(1).to(torch.float8_e4m3fn)
    fb = torch.rand(N, K, device="cuda").mul(2).sub(1).to(torch.float8_e4m3fn)
    sa, sb = torch.rand(M, device="cuda") + 0.5, torch.rand(N, device="cuda") + 0.5
    want = (fa.double() @ fb.double().t()) * sa.double()[:, None] * sb.double()[None, :]
    got = tilec.gemm.scaled_mm(fa, fb, sa, sb)
    torch.cuda.synchronize()
    err = ((got.double() - want).norm() / want.norm()).item()
    check(err < 2 ** -8, "tilec.gemm.scaled_mm %dx%dx%d e4m3, row/column scales: rel. error %.2e" % (M, N, K, err))

print("python_torch: %s" % ("all passed" if not failed else "%d failed" % failed))
sys.exit(1 if failed else 0)
