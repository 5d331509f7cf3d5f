#!/usr/bin/env python3
"""bench/gemm.py: samples/gemm_sm90.tile against cuBLAS (torch.matmul) and Triton, one run, one GPU.

Method (bench/NOTES.md, "gemm"): for each shape M x N x K, A [M, K] and B [N, K] are random bf16
tensors made once by torch (uniform in [-1, 1)); every contender computes C = A @ B^T into its own
bf16 C from those same tensors. tilec's kernel is compiled by build/tilec to a cubin (the compile
time of each variant is printed), loaded with the CUDA driver API through ctypes into torch's
context, and launched with tensor maps encoded here exactly as the tilec runtime encodes them
(row-major, bf16, box and swizzle as `tilec --emit params` reports them, zero fill). Timing:
torch.cuda events around each launch on the default stream, after warm-up, each launch preceded by an
L2 flush and a spin that hide the host's launch overhead (time_one); every contender of a shape
is timed once per round, R rounds interleaved (so that clock or temperature drift reaches all alike),
and the median of its R times is reported.
TFLOP/s = 2 M N K / time; the fraction is of the H100 SXM's 989 dense bf16 TFLOP/s.
Correctness: every result is compared with cuBLAS's (relative Frobenius error ||C - C_ref|| /
||C_ref||, which for bf16 output is about 2^-9) before timing; a variant above 1e-2 is reported as
FAIL and not timed.

Triton, two kernels written for this script, each autotuned by Triton over a few configs (compile
time = the first call's): a plain tl.dot block matmul (one program per tile, pointer loads), and a
persistent TMA matmul in the shape of Triton's tutorial 09 (one program per SM walking the tiles,
host tensor descriptors for A, B and C; skipped with a message if this Triton lacks them).
tilec variants: "[persistent | pingpong | cluster] [src=FILE] NAME=VALUE ...": samples/gemm_persistent_sm90.tile
(grid = min(tiles, SMs)), samples/gemm_pingpong_sm90.tile (each consumer warpgroup whole 128 x 128 tiles,
grid = min(tiles, SMs)), samples/gemm_cluster_sm90.tile (2-CTA clusters multicasting B: the B box is
BN / 2 rows, grid = 2 x min(tile pairs, SMs / 2, the word clusters=C)) or samples/gemm_sm90.tile (one block per tile), or FILE (a rewritten copy of one of
them, the kernel named as the sample), with -D overrides.

    python3 bench/gemm.py [--reps R] [--shapes 4096x4096x4096,...] [--variants "BN=128 STAGES=5;..."]
"""
import argparse
import ctypes
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

import torch

PEAK = 989.0
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TILEC = os.environ.get("TILEC", os.path.join(ROOT, "build", "tilec"))
SAMPLES = {"gemm_sm90": os.path.join(ROOT, "samples", "gemm_sm90.tile"),
           "gemm_persistent_sm90": os.path.join(ROOT, "samples", "gemm_persistent_sm90.tile"),
           "gemm_cluster_sm90": os.path.join(ROOT, "samples", "gemm_cluster_sm90.tile"),
           "gemm_pingpong_sm90": os.path.join(ROOT, "samples", "gemm_pingpong_sm90.tile")}

cuda = ctypes.CDLL("libcuda.so.1")


def ck(rc, what):
    if rc != 0:
        raise RuntimeError(f"{what}: CUDA error {rc}")


class Variant:
    """One -D variant of the sample: compiled, loaded, with its boxes and shared memory."""

    def __init__(self, words):
        # a variant is "[persistent] NAME=VALUE ...": the persistent sample (grid = min(tiles, SMs))
        # or the one-tile-per-block sample, with -D overrides
        self.cluster = "cluster" in words
        self.pingpong = "pingpong" in words
        self.persistent = "persistent" in words or self.cluster or self.pingpong
        self.kernel = ("gemm_cluster_sm90" if self.cluster else "gemm_pingpong_sm90" if self.pingpong
                       else "gemm_persistent_sm90" if self.persistent else "gemm_sm90")
        src = [w[4:] for w in words if w.startswith("src=")]   # src=FILE: a rewritten copy of the sample
        self.max_clusters = int(next((w[9:] for w in words if w.startswith("clusters=")), "0"))   # cap on clusters
        # racy: a diagnostic rewrite that drops part of the protocol; timed even when its result is
        # wrong, and labelled so (never a result, only a measurement of what the dropped part costs)
        self.racy = "racy" in words
        # ptxsub=OLD=>NEW: a diagnostic rewrite of the emitted PTX (every OLD replaced by NEW) before
        # ptxas, to measure what one instruction's form costs; compile times then include this script
        subs = [w[7:].split("=>") for w in words if w.startswith("ptxsub=")]
        defines = [w for w in words if w not in ("persistent", "cluster", "pingpong", "racy")
                   and not w.startswith(("src=", "clusters=", "ptxsub="))]
        self.defines = defines
        self.label = " ".join(words)
        args = [TILEC, src[0] if src else SAMPLES[self.kernel]] + [f"-D{d}" for d in defines]
        t0 = time.perf_counter()
        ptx = subprocess.run(args + ["--emit", "ptx"], capture_output=True, check=True).stdout
        self.compile_ptx_ms = (time.perf_counter() - t0) * 1e3
        t0 = time.perf_counter()
        if subs:
            text = ptx.decode()
            for old, new in subs:
                if old not in text:
                    raise RuntimeError(f"ptxsub: '{old}' is not in the PTX of [{' '.join(words)}]")
                text = text.replace(old, new)
            with tempfile.TemporaryDirectory() as tmp:
                with open(os.path.join(tmp, "k.ptx"), "w") as f:
                    f.write(text)
                subprocess.run([os.environ.get("PTXAS", "ptxas"), "-arch=sm_90a", os.path.join(tmp, "k.ptx"),
                                "-o", os.path.join(tmp, "k.cubin")], check=True)
                with open(os.path.join(tmp, "k.cubin"), "rb") as f:
                    cubin = f.read()
        else:
            cubin = subprocess.run(args + ["--emit", "cubin", "-o", "-"], capture_output=True, check=True).stdout
        self.compile_cubin_ms = (time.perf_counter() - t0) * 1e3
        # C as a TMA tensor (an epilogue through shared memory and tma.store) or as a plain pointer
        self.c_tma = re.search(r"\bc:\s*tma\b", open(args[1]).read()) is not None
        # the TMA maps' boxes and swizzles as the compiler records them (name -> (rows, cols, swizzle))
        pinfo = subprocess.run(args + ["--emit", "params"], capture_output=True, check=True, text=True).stdout
        self.maps = {m.group(1): (int(m.group(2)), int(m.group(3)), int(m.group(4)))
                     for m in re.finditer(r"^\s+\d+ (\w+) tma bf16 rank=2 box=(\d+)x(\d+) swizzle=(\d+)(?: spans=\d+)?$", pinfo, re.M)}
        # the C tile a block (a cluster: each of its CTAs) computes, from the boxes as compiled: BM rows
        # of A, BN rows of B (the cluster kernel's B box is half its tile's columns)
        self.tile = (self.maps["a"][0], self.maps["b"][0] * (2 if self.cluster else 1))
        ir = subprocess.run(args + ["--emit", "ir-lowered"], capture_output=True, check=True, text=True).stdout
        self.smem = int(re.search(r"smem\((\d+)\)", ir).group(1))
        self.mod = ctypes.c_void_p()
        ck(cuda.cuModuleLoadData(ctypes.byref(self.mod), ctypes.c_char_p(cubin)), "cuModuleLoadData")
        self.fn = ctypes.c_void_p()
        ck(cuda.cuModuleGetFunction(ctypes.byref(self.fn), self.mod, self.kernel.encode()), "cuModuleGetFunction")
        ck(cuda.cuFuncSetAttribute(self.fn, 8, self.smem), "cuFuncSetAttribute(max dynamic smem)")
        self.ptx_bytes = len(ptx)
        if self.cluster:   # how many clusters of this kernel can be resident at once (driver's answer)
            class LaunchConfig(ctypes.Structure):
                _fields_ = [("g", ctypes.c_uint * 3), ("b", ctypes.c_uint * 3), ("smem", ctypes.c_uint),
                            ("stream", ctypes.c_void_p), ("attrs", ctypes.c_void_p), ("nattrs", ctypes.c_uint)]
            cfg = LaunchConfig((ctypes.c_uint * 3)(132, 1, 1), (ctypes.c_uint * 3)(384, 1, 1), self.smem, None, None, 0)
            n = ctypes.c_int(-1)
            rc = cuda.cuOccupancyMaxActiveClusters(ctypes.byref(n), self.fn, ctypes.byref(cfg))
            print(f"tilec variant [{self.label}]: cuOccupancyMaxActiveClusters = {n.value} (rc {rc})")

    def tensor_map(self, t, name):
        """CUtensorMap of a row-major [rows, cols] bf16 tensor for the kernel's TMA parameter `name`,
        with the box and swizzle the compiler chose for it (`tilec --emit params`: a shared tile in
        column spans is moved one span-wide box at a time)."""
        rows, cols = t.shape
        box_rows, box_cols, swizzle = self.maps[name]
        tm = (ctypes.c_uint8 * 128)()
        dims = (ctypes.c_uint64 * 2)(cols, rows)
        strides = (ctypes.c_uint64 * 1)(cols * 2)
        box = (ctypes.c_uint32 * 2)(box_cols, box_rows)
        es = (ctypes.c_uint32 * 2)(1, 1)
        swz = {128: 3, 64: 2, 32: 1, 0: 0}[swizzle]
        ck(cuda.cuTensorMapEncodeTiled(tm, 9, 2, ctypes.c_void_p(t.data_ptr()), dims, strides, box, es, 0, swz, 2, 0),
           "cuTensorMapEncodeTiled")
        return tm

    def launcher(self, a, b, c):
        M, K = a.shape
        N = b.shape[0]
        ta, tb = self.tensor_map(a, "a"), self.tensor_map(b, "b")
        pc = self.tensor_map(c, "c") if self.c_tma else ctypes.c_uint64(c.data_ptr())
        iM, iN, iK = ctypes.c_int32(M), ctypes.c_int32(N), ctypes.c_int32(K)
        params = (ctypes.c_void_p * 6)(*[ctypes.cast(ctypes.pointer(x), ctypes.c_void_p) for x in (ta, tb, pc, iM, iN, iK)])
        bm, bn = self.tile
        grid = ((M + bm - 1) // bm) * ((N + bn - 1) // bn)
        if self.cluster:   # clusters of 2 along M: tile pairs, one block per SM
            grid = 2 * min(((M + bm - 1) // bm + 1) // 2 * ((N + bn - 1) // bn), self.max_clusters or SMS // 2)
        elif self.persistent:
            grid = min(grid, SMS)
        keep = (ta, tb, pc, iM, iN, iK, params)

        def launch():
            _ = keep
            ck(cuda.cuLaunchKernel(self.fn, grid, 1, 1, 384, 1, 1, self.smem, None, params, None), "cuLaunchKernel")
        return launch


FLUSH = None   # 256 MiB written before each timed launch: L2 (50 MiB) holds none of the operands


def time_one(fn):
    """One launch between events. Before the start event the GPU is kept busy (an L2 flush, then a
    ~50 us spin) so that the host's launch overhead of fn (Python, torch's dispatcher, Triton's
    launcher, ctypes) is hidden: the events see the kernel alone, for every contender alike."""
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
    """Median times of several contenders measured in rounds (each round times every contender once,
    in turn), so that clock and temperature drift during the run reaches all of them alike."""
    for fn in fns:
        for _ in range(3):
            fn()
    torch.cuda.synchronize()
    ts = [[] for _ in fns]
    for _ in range(reps):
        for i, fn in enumerate(fns):
            ts[i].append(time_one(fn))
    return [statistics.median(t) for t in ts]


def rel_fro(c, ref):
    return (torch.linalg.norm(c.float() - ref.float()) / torch.linalg.norm(ref.float())).item()


def make_triton():
    try:
        import triton
        import triton.language as tl
    except Exception as ex:  # noqa: BLE001
        print(f"triton: not available ({ex})")
        return None

    configs = [triton.Config({"BM": bm, "BN": bn, "BK": 64, "G": 8}, num_stages=s, num_warps=w)
               for bm, bn, s, w in ((128, 256, 3, 8), (128, 128, 4, 4), (128, 128, 4, 8), (256, 128, 3, 8))]

    @triton.autotune(configs=configs, key=["M", "N", "K"])
    @triton.jit
    def mm(a, b, c, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, G: tl.constexpr):
        pid = tl.program_id(0)
        npm, npn = tl.cdiv(M, BM), tl.cdiv(N, BN)
        first = (pid // (G * npn)) * G
        gs = min(npm - first, G)
        pm = first + (pid % gs)
        pn = (pid % (G * npn)) // gs
        rm = pm * BM + tl.arange(0, BM)
        rn = pn * BN + tl.arange(0, BN)
        rk = tl.arange(0, BK)
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k in range(0, tl.cdiv(K, BK)):
            kk = k * BK + rk
            x = tl.load(a + rm[:, None] * K + kk[None, :], mask=(rm[:, None] < M) & (kk[None, :] < K), other=0.0)
            y = tl.load(b + rn[:, None] * K + kk[None, :], mask=(rn[:, None] < N) & (kk[None, :] < K), other=0.0)
            acc = tl.dot(x, tl.trans(y), acc)
        tl.store(c + rm[:, None] * N + rn[None, :], acc.to(tl.bfloat16), mask=(rm[:, None] < M) & (rn[None, :] < N))

    def run(a, b, c):
        M, K = a.shape
        N = b.shape[0]
        mm[lambda meta: (triton.cdiv(M, meta["BM"]) * triton.cdiv(N, meta["BN"]),)](a, b, c, M, N, K)
    print(f"triton {triton.__version__}: plain tl.dot kernel ready")
    return ("Triton plain", run)


def make_triton_persistent():
    """Triton's persistent TMA matmul, in the shape of its tutorial (09-persistent-matmul), written
    here: one program per SM walks the tiles t = pid, pid + SMs, ... (grouped along M as the others),
    operands loaded through host-built tensor descriptors (TMA), result stored through one."""
    try:
        import triton
        import triton.language as tl
        from triton.tools.tensor_descriptor import TensorDescriptor
    except Exception as ex:  # noqa: BLE001
        print(f"triton persistent TMA: not available ({ex})")
        return None

    def hook(nargs):
        bm, bn, bk = nargs["BM"], nargs["BN"], nargs["BK"]
        nargs["a_desc"].block_shape = [bm, bk]
        nargs["b_desc"].block_shape = [bn, bk]
        nargs["c_desc"].block_shape = [bm, bn]

    configs = [triton.Config({"BM": bm, "BN": bn, "BK": 64, "G": 8}, num_stages=s, num_warps=w, pre_hook=hook)
               for bm, bn, s, w in ((128, 256, 3, 8), (128, 128, 4, 8), (128, 128, 3, 4), (256, 128, 3, 8))]

    @triton.autotune(configs=configs, key=["M", "N", "K"])
    @triton.jit
    def mm_tma(a_desc, b_desc, c_desc, M, N, K, NSM: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr,
               BK: tl.constexpr, G: tl.constexpr):
        npm, npn, nk = tl.cdiv(M, BM), tl.cdiv(N, BN), tl.cdiv(K, BK)
        for t in tl.range(tl.program_id(0), npm * npn, NSM, flatten=True):
            first = (t // (G * npn)) * G
            gs = min(npm - first, G)
            om = (first + t % gs) * BM
            on = ((t % (G * npn)) // gs) * BN
            acc = tl.zeros((BM, BN), dtype=tl.float32)
            for k in range(nk):
                x = a_desc.load([om, k * BK])
                y = b_desc.load([on, k * BK])
                acc = tl.dot(x, y.T, acc)
            c_desc.store([om, on], acc.to(tl.bfloat16))

    def run(a, b, c):
        M, K = a.shape
        N = b.shape[0]
        dummy = [64, 64]
        ad = TensorDescriptor.from_tensor(a, dummy)
        bd = TensorDescriptor.from_tensor(b, dummy)
        cd = TensorDescriptor.from_tensor(c, dummy)
        mm_tma[lambda meta: (min(SMS, triton.cdiv(M, meta["BM"]) * triton.cdiv(N, meta["BN"])),)](ad, bd, cd, M, N, K, NSM=SMS)
    print(f"triton {triton.__version__}: persistent TMA kernel ready")
    return ("Triton persistent TMA", run)


SMS = 132   # the device's SM count, set in main()


def make_inputs(M, N, K):
    """A [M, K], B [N, K] random bf16 in [-1, 1), cuBLAS's C = A B^T as the reference, and the cuBLAS
    contender (name, launch, error 0) writing its own C."""
    a = (torch.rand(M, K, device="cuda") * 2 - 1).to(torch.bfloat16)
    b = (torch.rand(N, K, device="cuda") * 2 - 1).to(torch.bfloat16)
    ref = torch.matmul(a, b.t())
    cc = torch.empty_like(ref)
    return a, b, ref, ("cuBLAS", lambda: torch.matmul(a, b.t(), out=cc), 0.0)


def variant_rows(variants, a, b, ref, shape):
    """(name, launch, error) of each tilec variant whose C (poisoned with NaN first) matches ref; a
    failing one is reported and dropped, unless it is a racy diagnostic (then timed, and said so)."""
    rows = []
    for var in variants:
        c = torch.full(ref.shape, float("nan"), device="cuda", dtype=torch.bfloat16)
        launch = var.launcher(a, b, c)
        launch()
        torch.cuda.synchronize()
        err = rel_fro(c, ref)
        name = f"tilec [{var.label}]"
        if not err < 1e-2:
            print(f"{shape} {name}: FAIL rel. Frobenius error {err:.3g}")
            if not var.racy:
                continue
            name += " (racy diagnostic: WRONG RESULT, timed anyway)"
        rows.append((name, launch, err))
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--shapes", default="4096x4096x4096,8192x8192x8192,8192x1024x8192,16384x4096x1024,128x8192x8192")
    ap.add_argument("--variants", default="BN=256 STAGES=4;persistent;persistent GROUP_M=16;persistent BN=128 STAGES=6;cluster")
    args = ap.parse_args()
    torch.cuda.init()
    torch.zeros(1, device="cuda")
    global SMS
    SMS = torch.cuda.get_device_properties(0).multi_processor_count
    print(f"device: {torch.cuda.get_device_name()}  torch {torch.__version__}  cuBLAS via torch.matmul")
    variants = []
    for v in args.variants.split(";"):
        var = Variant(v.split())
        print(f"tilec variant [{v}]: compile to PTX {var.compile_ptx_ms:.1f} ms, to cubin (with ptxas) "
              f"{var.compile_cubin_ms:.1f} ms (process start included), smem {var.smem} B, PTX {var.ptx_bytes} B")
        variants.append(var)
    tritons = [t for t in (make_triton(), make_triton_persistent()) if t]
    torch.manual_seed(0)
    for shape in args.shapes.split(","):
        M, N, K = (int(x) for x in shape.split("x"))
        a, b, ref, cublas = make_inputs(M, N, K)
        flop = 2.0 * M * N * K
        rows = [cublas]
        for tname, triton_run in tritons:
            ct = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
            t0 = time.perf_counter()
            try:
                triton_run(a, b, ct)
                torch.cuda.synchronize()
            except Exception as ex:  # noqa: BLE001
                print(f"{shape} {tname}: failed: {str(ex).splitlines()[0] if str(ex) else type(ex).__name__}")
                continue
            tcomp = (time.perf_counter() - t0) * 1e3
            err = rel_fro(ct, ref)
            rows.append((f"{tname} (1st call: autotune+compile {tcomp:.0f} ms)",
                         (lambda run, ct: lambda: run(a, b, ct))(triton_run, ct), err))
        rows += variant_rows(variants, a, b, ref, shape)
        times = time_interleaved([r[1] for r in rows], args.reps)
        t_cublas = times[0]
        print(f"== {M} x {N} x {K}  (median of {args.reps} interleaved rounds)")
        for (name, _, err), t in zip(rows, times):
            tf = flop / (t * 1e-3) / 1e12
            print(f"  {name:60s} {t * 1e3:9.1f} us {tf:7.1f} TFLOP/s {tf / PEAK:6.3f} of peak "
                  f"{t_cublas / t:6.3f}x cuBLAS  err {err:.2e}")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
