# bench/nccl_collectives.py: the NCCL baseline of tilec's NVSHMEM collectives (docs/PERFORMANCE.md):
# torch.distributed with the NCCL backend, one process per GPU, at the sizes tests/gpu/shmem_check.c
# uses (4 KiB .. 256 MiB per PE, x4 steps): all_gather_into_tensor (bytes = one PE's block),
# reduce_scatter_tensor and all_reduce (sum; bytes = one PE's input). Time per call (CUDA events, mean
# of reps after warm-up) and bus bandwidth as nccl-tests defines it: all-gather bytes (n - 1) / t,
# reduce-scatter bytes (n - 1) / n / t, all-reduce 2 bytes (n - 1) / n / t. Each result is checked
# (the all-gather's own block bit for bit, the reductions against a float64 sum of the same inputs).
#   python3 bench/nccl_collectives.py [NPES] [--ops allgather,reducescatter,allreduce] [--dtype f32,bf16]
#                                     [--max-bytes B]
# NVLink multicast stays off (NCCL_NVLS_ENABLE=0), as the machines require.
import argparse
import os

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

DTYPES = {"f32": torch.float32, "bf16": torch.bfloat16}


def check_reduction(got, inputs_fn, n, dt):
    """got against the float64 sum of every rank's input (regenerated from the same seeds). NCCL adds
    in the data type: a bf16 sum rounds each of its n - 1 additions to bf16, so its bound is n
    roundings of the partial sums (at most the inputs' magnitudes); f32, n f32 roundings."""
    ref = sum(inputs_fn(q).double() for q in range(n))
    mag = sum(inputs_fn(q).double().abs() for q in range(n))
    err = (got.double() - ref).abs()
    bound = n * (2.0 ** -8 if dt == torch.bfloat16 else 2.0 ** -24) * mag
    return bool((err <= bound).all())


def run(rank, n, ops, dtypes, max_bytes):
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29533")
    os.environ.setdefault("NCCL_NVLS_ENABLE", "0")
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", rank=rank, world_size=n)
    for op in ops:
        for dname in dtypes:
            dt = DTYPES[dname]
            es = torch.tensor([], dtype=dt).element_size()
            b = 4096
            while b <= max_bytes:
                count = b // es
                def gen(q, count=count, b=b, dt=dt):   # rank q's input, the same on every rank
                    g = torch.Generator(device="cuda").manual_seed(1000 * q + b)
                    return torch.randn(count, generator=g, device="cuda", dtype=torch.float32).to(dt)
                x = gen(rank)
                if op == "allgather":
                    y = torch.empty(n * count, device="cuda", dtype=dt)
                    call = lambda: dist.all_gather_into_tensor(y, x)
                elif op == "reducescatter":
                    c = (count + n - 1) // n
                    xin = torch.zeros(n * c, device="cuda", dtype=dt)
                    xin[:count] = x
                    y = torch.empty(c, device="cuda", dtype=dt)
                    call = lambda: dist.reduce_scatter_tensor(y, xin)
                else:
                    y = x.clone()
                    call = lambda: (y.copy_(x), dist.all_reduce(y))   # the copy is timed apart below
                reps = 5 if b >= 64 << 20 else 50
                call()
                torch.cuda.synchronize()
                if op == "allgather":
                    ok = torch.equal(y[rank * count:(rank + 1) * count], x)
                elif op == "reducescatter":
                    c = (count + n - 1) // n
                    lo, hi = min(rank * c, count), min((rank + 1) * c, count)
                    ok = check_reduction(y[:hi - lo], lambda q: gen(q)[lo:hi], n, dt)
                else:
                    ok = check_reduction(y, gen, n, dt)
                for _ in range(4):
                    call()
                torch.cuda.synchronize()
                dist.barrier()
                e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                if op == "allreduce":   # all_reduce works in place: time it alone, on data it keeps summing
                    call = lambda: dist.all_reduce(y)
                e0.record()
                for _ in range(reps):
                    call()
                e1.record()
                torch.cuda.synchronize()
                t = e0.elapsed_time(e1) / 1e3 / reps
                bus = {"allgather": b * (n - 1), "reducescatter": b * (n - 1) / n, "allreduce": 2 * b * (n - 1) / n}[op]
                if rank == 0:
                    print(f"nccl {op} {dname}: {b:9d} B/PE x {n} PEs: {'ok' if ok else 'FAIL'} {t * 1e6:9.2f} us/call  "
                          f"busbw {bus / t / 1e9:7.2f} GB/s", flush=True)
                b *= 4
    dist.destroy_process_group()


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("npes", nargs="?", type=int, default=0)
    ap.add_argument("--ops", default="allgather,reducescatter,allreduce")
    ap.add_argument("--dtype", default="f32,bf16")
    ap.add_argument("--max-bytes", type=int, default=256 << 20)
    a = ap.parse_args()
    n = a.npes or torch.cuda.device_count()
    mp.spawn(run, args=(n, a.ops.split(","), a.dtype.split(","), a.max_bytes), nprocs=n)
