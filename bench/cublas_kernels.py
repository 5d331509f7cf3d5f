#!/usr/bin/env python3
"""bench/cublas_kernels.py: which kernel cuBLAS (torch.matmul, bf16, C = A @ B^T) runs at each of
bench/gemm.py's shapes, with its grid and block, from torch.profiler: the tile shape, cluster shape
and scheduling (persistent, stream-K) its name and launch reveal, to compare with tilec's choices.

    python3 bench/cublas_kernels.py [--shapes 4096x4096x4096,...]
"""
import argparse

import torch
from torch.profiler import ProfilerActivity, profile

ap = argparse.ArgumentParser()
ap.add_argument("--shapes", default="4096x4096x4096,8192x8192x8192,8192x1024x8192,16384x4096x1024,128x8192x8192")
args = ap.parse_args()
print(f"device: {torch.cuda.get_device_name()}  torch {torch.__version__}")
for shape in args.shapes.split(","):
    M, N, K = (int(x) for x in shape.split("x"))
    a = torch.rand(M, K, device="cuda", dtype=torch.bfloat16) * 2 - 1
    b = torch.rand(N, K, device="cuda", dtype=torch.bfloat16) * 2 - 1
    for _ in range(3):
        torch.matmul(a, b.t())
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        torch.matmul(a, b.t())
        torch.cuda.synchronize()
    for ev in prof.events():
        if ev.device_type == torch.autograd.DeviceType.CUDA:
            extra = {k: v for k, v in (getattr(ev, "kwinputs", None) or {}).items()}
            print(f"{shape}: {ev.name}  {ev.device_time:.1f} us  {extra}")
