# bench/gemm_rs.py: the unfused baseline of samples/multi/gemm_rs.tile (docs/PERFORMANCE.md): with
# torch.distributed on NCCL, one process per GPU, each rank's K-shard A_q [M, K] and B_q [N, K] (bf16)
# make the partial product P_q = A_q B_q^T by torch.matmul (cuBLAS, bf16 out), then
# reduce_scatter_tensor (NCCL, sum) leaves rank r the rows r M / n .. (r + 1) M / n of the sum, at
# the shapes tests/gpu/shmem_check.c gemmrs uses (M x N x K, K each rank's shard). For each shape:
# the time per call of the GEMM alone, the reduce-scatter alone and the two in sequence (what the
# fused kernel replaces), CUDA events around reps calls after warm-up, the ranks lined up by a
# barrier first. A few rows of the result are checked against a float64 sum of the ranks' products
# (every rank's shards are regenerated from their seeds).
#   python3 bench/gemm_rs.py [NPES] [--shapes MxNxK,...] [--reps R]
# NVLink multicast stays off (NCCL_NVLS_ENABLE=0), as the machines require.
import torch
import torch.distributed as dist

from torch_dist import init, main, timed


def operands(q, m, nn, k):
    """Rank q's A_q and B_q, the same on every rank."""
    g = torch.Generator(device="cuda").manual_seed(1000 * q + m + 7 * nn + k)
    a = torch.randn(m, k, generator=g, device="cuda", dtype=torch.float32).to(torch.bfloat16)
    b = torch.randn(nn, k, generator=g, device="cuda", dtype=torch.float32).to(torch.bfloat16)
    return a, b


def run(rank, n, shapes, reps):
    init(rank, n, 29541)
    for (m, nn, k) in shapes:
        ml = m // n
        a, b = operands(rank, m, nn, k)
        p = torch.empty(m, nn, device="cuda", dtype=torch.bfloat16)
        out = torch.empty(ml, nn, device="cuda", dtype=torch.bfloat16)
        gemm = lambda: torch.matmul(a, b.t(), out=p)
        rs = lambda: dist.reduce_scatter_tensor(out, p)
        both = lambda: (gemm(), rs())
        both()
        torch.cuda.synchronize()
        rows = sorted({0, ml // 2 + 1, ml - 1})
        ref = torch.zeros(len(rows), nn, device="cuda", dtype=torch.float64)
        parts = torch.zeros_like(ref)
        mag = torch.zeros_like(ref)
        for q in range(n):
            aq, bq = operands(q, m, nn, k)
            x = aq[[rank * ml + i for i in rows]].double()
            pq = x @ bq.double().t()
            ref += pq
            parts += pq.abs()
            mag += x.abs() @ bq.double().abs().t()
        err = (out[rows].double() - ref).abs()
        # one bf16 rounding of each rank's product and of each of NCCL's n - 1 bf16 additions
        ok = bool((err <= 2.0 ** -8 * n * (ref.abs() + parts) + 2.0 ** -15 * mag).all())
        t_gemm, t_rs, t_both = timed(gemm, reps), timed(rs, reps), timed(both, reps)
        if rank == 0:
            fl = 2.0 * m * nn * k
            print(f"cublas+nccl M {m} ({n} x {ml}) N {nn} K {k} a rank: {'ok' if ok else 'FAIL'} matmul {t_gemm * 1e6:9.2f} us "
                  f"({fl / t_gemm / 1e12:6.1f} TFLOP/s)  reduce-scatter {t_rs * 1e6:9.2f} us  matmul + reduce-scatter "
                  f"{t_both * 1e6:9.2f} us ({fl / t_both / 1e12:6.1f} TFLOP/s)", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main("gemm_rs.py", run, "4096x8192x7168,8192x8192x7168,1000x1000x520,200x136x72")
