# bench/torch_dist.py: what bench/ag_gemm.py and bench/gemm_rs.py share: one process per GPU with
# torch.distributed on NCCL (NVLink multicast off, NCCL_NVLS_ENABLE=0, as the machines require), the
# command line (NPES, --shapes MxNxK,..., --reps R) and the timing (CUDA events around reps calls after
# warm-up, the ranks lined up by a barrier first).
import argparse
import os

import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def timed(call, reps):
    """Seconds per call of call(), on every rank at once."""
    for _ in range(3):
        call()
    torch.cuda.synchronize()
    dist.barrier()
    torch.cuda.synchronize()
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    e0.record()
    for _ in range(reps):
        call()
    e1.record()
    torch.cuda.synchronize()
    return e0.elapsed_time(e1) / 1e3 / reps


def init(rank, n, port):
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", str(port))
    os.environ.setdefault("NCCL_NVLS_ENABLE", "0")
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", rank=rank, world_size=n)


def main(name, run, shapes):
    """Parses the command line and runs run(rank, n, shapes, reps) on n ranks; M must divide by n."""
    ap = argparse.ArgumentParser(prog=name)
    ap.add_argument("npes", nargs="?", type=int, default=0)
    ap.add_argument("--shapes", default=shapes)
    ap.add_argument("--reps", type=int, default=20)
    args = ap.parse_args()
    n = args.npes or torch.cuda.device_count()
    shapes = [tuple(int(v) for v in s.split("x")) for s in args.shapes.split(",")]
    for s in shapes:
        if s[0] % n:
            raise SystemExit(f"{name}: M = {s[0]} is not a multiple of {n} ranks")
    mp.spawn(run, args=(n, shapes, args.reps), nprocs=n)
