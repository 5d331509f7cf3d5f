# bench/ag_gemm.py: the unfused baseline of samples/multi/ag_gemm.tile (docs/PERFORMANCE.md): with
# torch.distributed on NCCL, one process per GPU, each rank's row shard A_local [M / n, K] (bf16) is
# gathered with all_gather_into_tensor into A [M, K], then C = A B^T by torch.matmul (cuBLAS), B
# [N, K] bf16 the same on every rank, at the shapes tests/gpu/shmem_check.c aggemm uses. For each
# shape: the time per call of the all-gather alone, the GEMM alone and the two in sequence (what
# the fused kernel replaces), CUDA events around reps calls after warm-up, the ranks lined up by a
# barrier first. The gathered A is checked bit for bit against every rank's regenerated shard, and
# C's rows against a float64 product of a few rows.
#   python3 bench/ag_gemm.py [NPES] [--shapes MxNxK,...] [--reps R]
# NVLink multicast stays off (NCCL_NVLS_ENABLE=0), as the machines require.
import torch
import torch.distributed as dist

from torch_dist import init, main, timed


def run(rank, n, shapes, reps):
    init(rank, n, 29537)
    for (m, nn, k) in shapes:
        ml = m // n

        def shard(q):   # rank q's shard, the same on every rank
            g = torch.Generator(device="cuda").manual_seed(1000 * q + m + 7 * nn + k)
            return torch.randn(ml, k, generator=g, device="cuda", dtype=torch.float32).to(torch.bfloat16)

        g = torch.Generator(device="cuda").manual_seed(99991 + nn * k)
        b = torch.randn(nn, k, generator=g, device="cuda", dtype=torch.float32).to(torch.bfloat16)
        x = shard(rank)
        a = torch.empty(m, k, device="cuda", dtype=torch.bfloat16)
        c = torch.empty(m, nn, device="cuda", dtype=torch.bfloat16)
        ag = lambda: dist.all_gather_into_tensor(a, x)
        gemm = lambda: torch.matmul(a, b.t(), out=c)
        both = lambda: (ag(), gemm())
        both()
        torch.cuda.synchronize()
        ok = all(torch.equal(a[q * ml:(q + 1) * ml], shard(q)) for q in range(n))
        rows = torch.tensor([0, ml - 1, ml, m // 2 + 3, m - 1], device="cuda")
        ref = a[rows].double() @ b.double().t()
        err = (c[rows].double() - ref).abs()
        ok = ok and bool((err <= 2.0 ** -8 * ref.abs() + 2.0 ** -15 * (a[rows].double().abs() @ b.double().abs().t())).all())
        t_ag, t_gemm, t_both = timed(ag, reps), timed(gemm, reps), timed(both, reps)
        if rank == 0:
            fl = 2.0 * m * nn * k
            print(f"nccl+cublas M {m} ({n} x {ml}) N {nn} K {k}: {'ok' if ok else 'FAIL'} all-gather {t_ag * 1e6:9.2f} us  "
                  f"matmul {t_gemm * 1e6:9.2f} us ({fl / t_gemm / 1e12:6.1f} TFLOP/s)  all-gather + matmul "
                  f"{t_both * 1e6:9.2f} us ({fl / t_both / 1e12:6.1f} TFLOP/s)", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main("ag_gemm.py", run, "4096x7168x8192,8192x7168x8192,1000x1000x520,200x136x72")
