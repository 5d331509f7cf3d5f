#!/usr/bin/env python3
"""bench/norms.py: row softmax, LayerNorm and RMSNorm in bf16: tilec's samples against PyTorch
(torch.softmax, torch.nn.functional.layer_norm / rms_norm), a Triton kernel written here for each,
and a device-to-device copy of the same bytes, on one GPU. docs/PERFORMANCE.md keeps the results.

    python3 bench/norms.py [--shapes MxN,...] [--ops softmax,layernorm,rmsnorm] [--reps R]

For each shape M x N, x is a random bf16 [M, N] tensor made once by torch (gamma and beta random
[N]); every contender writes its own bf16 y from those same tensors. tilec's kernel
(samples/softmax.tile softmax_bf16, samples/layernorm.tile, samples/rmsnorm.tile, one row per
block) is compiled through the Python package (python/tilec; libtile from $TILEC_LIB or the build
tree) with -DBN = the row length rounded up to a power of two (at least 256, at most 8192: rows up
to 8192 are read once and kept in registers) and -DTHREADS = BN / E for each E of --ept (elements
per thread; 32 to 1024 threads), and launched on the torch tensors with one block per row. Every result is compared with torch's in float32 before timing (the maximum
absolute error must stay below 2^-5 of the output's scale for bf16; a failure is reported and not
timed). Timing: each launch sits between CUDA events after an L2 flush and a spin that hides the
host's launch overhead; the contenders of a shape are timed in R interleaved rounds and the median
is reported, as GB/s of the bytes each op must move (x read + y written, gamma/beta once) and as a
fraction of the copy's GB/s (y.copy_(x): the same bytes read and written); "x torch" is torch's
time over the contender's. torch allocates its output (its caching allocator makes that free).
"""
import argparse
import os
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))
import tilec  # noqa: E402
SHAPES = "4096x1024,4096x4096,4096x8192,16384x8192"
EPS = 1e-5
SAMPLE = {"softmax": ("samples/softmax.tile", "softmax_bf16"), "layernorm": ("samples/layernorm.tile", "layernorm"),
          "rmsnorm": ("samples/rmsnorm.tile", "rmsnorm")}

torch = None
FLUSH = None


def need_torch():
    global torch
    try:
        import torch as t
    except ImportError:
        sys.exit("bench/norms.py: needs PyTorch with CUDA")
    if not t.cuda.is_available():
        sys.exit("bench/norms.py: torch sees no CUDA device")
    torch = t
    torch.zeros(1, device="cuda")


class Tilec:
    """One tilec kernel, compiled through the Python package (python/tilec) and launched on the
    torch tensors by address."""

    def __init__(self, op, bn, threads):
        src, self.kernel = SAMPLE[op]
        self.op, self.bn, self.threads = op, bn, threads
        t0 = time.perf_counter()
        self.kern = tilec.compile(os.path.join(ROOT, src), target="sm_90a",
                                  defines={"BN": bn, "THREADS": threads})[self.kernel]
        self.compile_ms = (time.perf_counter() - t0) * 1e3

    def launcher(self, x, y, g, b):
        M, N = x.shape
        args = [x]
        if self.op == "layernorm":
            args += [g, b]
        elif self.op == "rmsnorm":
            args += [g]
        args += [y, M, N]
        if self.op != "softmax":
            args += [EPS]
        kern = self.kern

        def launch():
            kern(*args, grid=M, device="cuda")
        return launch


def make_triton():
    """Triton kernels written for this bench: one program per row, the whole row in one block
    (BLOCK = the row length rounded up to a power of two), f32 statistics."""
    try:
        import triton
        import triton.language as tl
    except ImportError:
        return None

    @triton.jit
    def softmax_k(x, y, N, BLOCK: tl.constexpr):
        r = tl.program_id(0)
        c = tl.arange(0, BLOCK)
        v = tl.load(x + r * N + c, mask=c < N, other=-float("inf")).to(tl.float32)
        p = tl.exp(v - tl.max(v, 0))
        tl.store(y + r * N + c, (p / tl.sum(p, 0)).to(tl.bfloat16), mask=c < N)

    @triton.jit
    def layernorm_k(x, g, b, y, N, eps, BLOCK: tl.constexpr):
        r = tl.program_id(0)
        c = tl.arange(0, BLOCK)
        v = tl.load(x + r * N + c, mask=c < N, other=0.0).to(tl.float32)
        mean = tl.sum(v, 0) / N
        d = tl.where(c < N, v - mean, 0.0)
        rstd = 1.0 / tl.sqrt(tl.sum(d * d, 0) / N + eps)
        gv = tl.load(g + c, mask=c < N, other=0.0).to(tl.float32)
        bv = tl.load(b + c, mask=c < N, other=0.0).to(tl.float32)
        tl.store(y + r * N + c, (d * rstd * gv + bv).to(tl.bfloat16), mask=c < N)

    @triton.jit
    def rmsnorm_k(x, g, y, N, eps, BLOCK: tl.constexpr):
        r = tl.program_id(0)
        c = tl.arange(0, BLOCK)
        v = tl.load(x + r * N + c, mask=c < N, other=0.0).to(tl.float32)
        rms = 1.0 / tl.sqrt(tl.sum(v * v, 0) / N + eps)
        gv = tl.load(g + c, mask=c < N, other=0.0).to(tl.float32)
        tl.store(y + r * N + c, (v * rms * gv).to(tl.bfloat16), mask=c < N)

    def run(op, x, y, g, b):
        M, N = x.shape
        blk = triton.next_power_of_2(N)
        nw = 4 if blk <= 2048 else 8 if blk <= 8192 else 16
        if op == "softmax":
            return lambda: softmax_k[(M,)](x, y, N, BLOCK=blk, num_warps=nw)
        if op == "layernorm":
            return lambda: layernorm_k[(M,)](x, g, b, y, N, EPS, BLOCK=blk, num_warps=nw)
        return lambda: rmsnorm_k[(M,)](x, g, y, N, EPS, BLOCK=blk, num_warps=nw)
    return run


def reference(op, x, g, b):
    F = torch.nn.functional
    xf = x.float()
    if op == "softmax":
        return torch.softmax(xf, -1)
    if op == "layernorm":
        return F.layer_norm(xf, (x.shape[1],), g.float(), b.float(), EPS)
    return xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + EPS) * g.float()


def torch_op(op, x, y, g, b):
    """torch's own kernel, allocating its output as it does in a model (the output goes to y.data
    only for the check, outside the timed call)."""
    F = torch.nn.functional
    if op == "softmax":
        return lambda: torch.softmax(x, -1)
    if op == "layernorm":
        return lambda: F.layer_norm(x, (x.shape[1],), g, b, EPS)
    if hasattr(F, "rms_norm"):
        return lambda: F.rms_norm(x, (x.shape[1],), g, EPS)
    return None


def time_one(fn):
    global FLUSH
    if FLUSH is None:
        FLUSH = torch.empty(64 << 20, dtype=torch.int32, device="cuda")
    FLUSH.zero_()
    torch.cuda._sleep(100_000)
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record()
    fn()
    e.record()
    e.synchronize()
    return s.elapsed_time(e)


def time_interleaved(fns, reps):
    for fn in fns:
        for _ in range(3):
            fn()
    torch.cuda.synchronize()
    ts = [[] for _ in fns]
    for _ in range(reps):
        for i, fn in enumerate(fns):
            ts[i].append(time_one(fn))
    return [statistics.median(t) for t in ts]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shapes", default=SHAPES)
    ap.add_argument("--ops", default="softmax,layernorm,rmsnorm")
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--ept", default="8,16",
                    help="tilec contenders: elements per thread, each giving THREADS = BN / ept (32 .. 1024)")
    a = ap.parse_args()
    need_torch()
    triton_run = make_triton()
    print(f"device: {torch.cuda.get_device_name(0)}; torch {torch.__version__}; "
          f"triton {'absent' if triton_run is None else __import__('triton').__version__}")
    print(f"{'op':<10}{'M x N':>12}  {'contender':<18}{'time us':>10}{'GB/s':>9}{'of copy':>9}{'x torch':>9}  check")
    failed = 0
    for op in a.ops.split(","):
        for shape in a.shapes.split(","):
            M, N = (int(v) for v in shape.lower().split("x"))
            torch.manual_seed(M * 7 + N)
            x = (torch.randn(M, N, device="cuda") * 2 + 0.5).to(torch.bfloat16)
            g = (torch.rand(N, device="cuda") + 0.5).to(torch.bfloat16)
            b = (torch.rand(N, device="cuda") - 0.5).to(torch.bfloat16)
            ref = reference(op, x, g, b)
            bn = max(256, min(8192, 1 << (N - 1).bit_length()))
            tks = []
            for ept in sorted({max(32, min(1024, bn // int(k))) for k in a.ept.split(",")}):
                tks.append(Tilec(op, bn, ept))
            contenders = [("copy", None), ("torch", torch_op), ("triton", triton_run)] + \
                         [(f"tilec T={tk.threads}", tk) for tk in tks]
            rows, fns = [], []
            for name, make in contenders:
                y = torch.empty_like(x)
                if name == "copy":
                    fn = lambda y=y: y.copy_(x)
                elif make is None:
                    continue
                elif isinstance(make, Tilec):
                    fn = make.launcher(x, y, g, b)
                else:
                    fn = make(op, x, y, g, b)
                    if fn is None:
                        continue
                y.fill_(float("nan"))
                out = fn()
                if name == "torch":
                    y.copy_(out)
                torch.cuda.synchronize()
                err = "-"
                if name != "copy":
                    e = (y.float() - ref).abs().max().item()
                    scale = ref.abs().max().item()
                    ok = e <= scale * 2 ** -5 and not torch.isnan(y).any().item()
                    err = f"{'ok' if ok else 'FAIL'} max|err| {e:.2e}"
                    if not ok:
                        failed += 1
                        print(f"{op:<10}{shape:>12}  {name:<18}  FAIL: max|err| {e:.3g} (scale {scale:.3g}); not timed")
                        continue
                rows.append((name, err))
                fns.append(fn)
            times = time_interleaved(fns, a.reps)
            nbytes = 2 * 2 * M * N + (2 * N * (2 if op == "layernorm" else 1 if op == "rmsnorm" else 0))
            copy_bw = 2 * 2 * M * N / (times[0] * 1e-3) / 1e9
            t_torch = next((t for (n, _), t in zip(rows, times) if n == "torch"), None)
            for (name, err), t in zip(rows, times):
                bw = (2 * 2 * M * N if name == "copy" else nbytes) / (t * 1e-3) / 1e9
                vs = f"{t_torch / t:8.2f}x" if t_torch and name != "copy" else f"{'':>9}"
                print(f"{op:<10}{shape:>12}  {name:<18}{t * 1e3:>10.1f}{bw:>9.0f}{bw / copy_bw:>9.2f}{vs}  {err}")
            print(f"{'':<10}{'':>12}  (tilec BN={bn}; compile " +
                  ", ".join(f"T={tk.threads} {tk.compile_ms:.0f} ms" for tk in tks) + ")")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
