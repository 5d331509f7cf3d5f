# bench/allgather_nccl.py: the NCCL baseline of the tilec all-gather (docs/PERFORMANCE.md): torch.distributed
# all_gather_into_tensor with the NCCL backend, one process per GPU, at the sizes shmem_check uses
# (4 KiB .. 256 MiB per PE, x4 steps), f32; time per call (CUDA events, mean of reps after warm-up) and bus
# bandwidth as nccl-tests defines it for all-gather: bytes_per_pe * (n - 1) / t.
#   python3 bench/allgather_nccl.py [NPES]
import os, sys
import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def run(rank, n):
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29533")
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", rank=rank, world_size=n)
    b = 4096
    while b <= 256 << 20:
        x = torch.randn(b // 4, device="cuda")
        y = torch.empty(n * (b // 4), device="cuda")
        reps = 5 if b >= 64 << 20 else 50
        for _ in range(5):
            dist.all_gather_into_tensor(y, x)
        torch.cuda.synchronize()
        dist.barrier()
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record()
        for _ in range(reps):
            dist.all_gather_into_tensor(y, x)
        e1.record()
        torch.cuda.synchronize()
        t = e0.elapsed_time(e1) / 1e3 / reps
        ok = torch.equal(y[rank * (b // 4):(rank + 1) * (b // 4)], x)
        if rank == 0:
            print(f"nccl allgather: {b:9d} B/PE x {n} PEs: {'ok' if ok else 'FAIL'} {t * 1e6:9.2f} us/call  "
                  f"busbw {b * (n - 1) / t / 1e9:7.2f} GB/s", flush=True)
        b *= 4
    dist.destroy_process_group()


if __name__ == "__main__":
    n = int(sys.argv[1]) if len(sys.argv) > 1 else torch.cuda.device_count()
    mp.spawn(run, args=(n,), nprocs=n)
