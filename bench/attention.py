#!/usr/bin/env python3
"""bench/attention.py: tilec's FlashAttention forward (samples/attention_fwd_sm90.tile) against torch
SDPA's cuDNN and FlashAttention-2 back ends and a Triton attention kernel written here, on one GPU;
docs/PERFORMANCE.md keeps the results.

    python3 bench/attention.py [--head-dims 64,128] [--seqlens 512,1024,...] [--causal 0,1]
                               [--reps R] [--no-triton] [--variant NAME=VALUE ...]
                               [--config [dD:]NAME=VALUE[,NAME=VALUE...] ...] [--chooser] [--base FILE]

Shapes: batch x seqlen = 16k tokens, heads x head_dim = 2048, bf16, q, k and v [batch, heads,
seqlen, head_dim] made once per shape by torch (normal, std 1; bf16, or f16 with --dtype f16),
scale 1 / sqrt(head_dim), causal
masks aligned bottom-right (the same as top-left here: seqlen_q = seqlen_k). TFLOP/s counts
4 * batch * heads * seqlen^2 * head_dim, halved when causal.

tilec's kernel is compiled through the Python package (python/tilec; libtile from $TILEC_LIB or
the build tree) and launched on the torch tensors themselves (by address, on the default stream).
Before timing, every contender's o is compared with cuDNN's (relative Frobenius error; bf16 output
is about 2^-9) and tilec's lse with a float32 torch computation on the first 256 rows of one head;
a contender above 1e-2 is reported as FAIL and not timed. Timing is bench/gemm.py's: each launch
between CUDA events after an L2 flush and a spin that hide the host's launch overhead, the
contenders interleaved in R rounds, the median reported.

tilec's configurations: the sample as written (two consumer warpgroups for head dim 128, three for
64) and, for head dim 64, two (-DNWG=2); the table shows the faster, named when it is not the first.
Each --config adds a configuration (its -D overrides; `d128:` limits it to one head dim), timed
with the others in the same rounds, so variants compare side by side on one device. --chooser adds
tilec.attention.forward (the build chosen per shape by tilec.attention.choose, on its own output
buffers) as one more contender, "tilec chooser", named with its choice; the summary's best-of
column counts it like any build. --base FILE times each configuration of another copy of the
sample too ("tilec base ..."): an edit against the source before it, in the same rounds.

The Triton kernel: one program per 128 (or 64) query rows of one head, K and V blocks loaded with
pointer loads, the online softmax in base 2, the causal mask only on the diagonal blocks;
autotuned by Triton over four configurations per (head_dim, causal) (compile time = first call).
"""
import argparse
import math
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "python"))
import gemm as timing   # noqa: E402  (need_torch, time_interleaved, rel_fro)
import tilec            # noqa: E402

SAMPLE = os.path.join(ROOT, "samples", "attention_fwd_sm90.tile")


def make_triton():
    try:
        import triton
        import triton.language as tl
    except ImportError as ex:
        print(f"triton: not available ({ex})")
        return None
    configs = [triton.Config({"BM": bm, "BN": bn}, num_warps=w, num_stages=st)
               for bm, bn, w, st in ((128, 64, 8, 3), (128, 128, 8, 2), (128, 64, 4, 3), (64, 64, 4, 3))]

    @triton.autotune(configs=configs, key=["S", "D", "CAUSAL"])
    @triton.jit
    def attn(Q, K, V, O, S, scale_log2, D: tl.constexpr, CAUSAL: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr):
        pm = tl.program_id(0)
        base = tl.program_id(1).to(tl.int64) * S * D
        rows = pm * BM + tl.arange(0, BM)
        dd = tl.arange(0, D)
        q = tl.load(Q + base + rows[:, None] * D + dd[None, :], mask=rows[:, None] < S, other=0.0)
        m = tl.full([BM], -float("inf"), tl.float32)
        l = tl.zeros([BM], tl.float32)
        acc = tl.zeros([BM, D], tl.float32)
        lo = pm * BM if CAUSAL else 0          # keys below the diagonal blocks: no mask
        hi = tl.minimum((pm + 1) * BM, S) if CAUSAL else S
        for j in range(0, lo, BN):
            cols = j + tl.arange(0, BN)
            kt = tl.load(K + base + cols[None, :] * D + dd[:, None])
            s = tl.dot(q, kt) * scale_log2
            mn = tl.maximum(m, tl.max(s, 1))
            p = tl.math.exp2(s - mn[:, None])
            alpha = tl.math.exp2(m - mn)
            l = l * alpha + tl.sum(p, 1)
            vv = tl.load(V + base + cols[:, None] * D + dd[None, :])
            acc = acc * alpha[:, None] + tl.dot(p.to(vv.dtype), vv)
            m = mn
        for j in range(lo, hi, BN):
            cols = j + tl.arange(0, BN)
            kt = tl.load(K + base + cols[None, :] * D + dd[:, None], mask=cols[None, :] < S, other=0.0)
            s = tl.dot(q, kt) * scale_log2
            ok = cols[None, :] < S
            if CAUSAL:
                ok = ok & (cols[None, :] <= rows[:, None])
            s = tl.where(ok, s, -float("inf"))
            mn = tl.maximum(m, tl.max(s, 1))
            p = tl.math.exp2(s - mn[:, None])
            alpha = tl.math.exp2(m - mn)
            l = l * alpha + tl.sum(p, 1)
            vv = tl.load(V + base + cols[:, None] * D + dd[None, :], mask=cols[:, None] < S, other=0.0)
            acc = acc * alpha[:, None] + tl.dot(p.to(vv.dtype), vv)
            m = mn
        acc = acc / l[:, None]
        tl.store(O + base + rows[:, None] * D + dd[None, :], acc.to(O.dtype.element_ty), mask=rows[:, None] < S)

    def go(q, k, v, o, causal, scale):
        b, h, s, d = q.shape
        attn[lambda meta: (triton.cdiv(s, meta["BM"]), b * h)](q, k, v, o, s, scale * 1.4426950408889634, D=d,
                                                               CAUSAL=int(causal))
    print(f"triton {triton.__version__}: attention kernel ready")
    return go


def lse_reference(q, k, scale, causal, rows=256):
    """log-sum-exp of the first `rows` query rows of batch 0, head 0, in float32."""
    torch = timing.torch
    s = (q[0, 0, :rows].float() @ k[0, 0].float().T) * scale
    if causal:
        n = k.shape[2]
        i = torch.arange(s.shape[0], device=s.device)[:, None] + (n - q.shape[2])
        s = s.masked_fill(torch.arange(n, device=s.device)[None, :] > i, float("-inf"))
    return torch.logsumexp(s, dim=1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--head-dims", default="64,128")
    ap.add_argument("--seqlens", default="512,1024,2048,4096,8192,16384")
    ap.add_argument("--causal", default="0,1")
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--dtype", default="bf16", choices=("bf16", "f16"), help="q, k, v and o (the sample's -DT=)")
    ap.add_argument("--no-triton", action="store_true")
    ap.add_argument("--variant", action="append", default=[], help="a -D override of the sample (NAME=VALUE)")
    ap.add_argument("--chooser", action="store_true", help="time tilec.attention.forward (the chosen build) too")
    ap.add_argument("--config", action="append", default=[],
                    help="one more configuration timed beside the others: [dD:]NAME=VALUE[,NAME=VALUE...]")
    ap.add_argument("--base", help="another copy of the sample (the source before an edit): each configuration "
                    "of it is timed beside the sample's, named 'base ...'")
    args = ap.parse_args()
    timing.need_torch()
    torch = timing.torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel
    print(f"device: {torch.cuda.get_device_name()}  torch {torch.__version__}  cuDNN {torch.backends.cudnn.version()}  "
          f"{args.dtype}")
    tri = None if args.no_triton else make_triton()
    extra = dict(v.split("=", 1) for v in args.variant)
    rows = []
    for d in [int(x) for x in args.head_dims.split(",")]:
        # the sample's configurations for this head dim: as written, and for head dim 64 also two
        # consumer warpgroups (128 query rows a block: less waste on short causal rows)
        configs = [{}] if d != 64 or extra else [{}, {"NWG": 2}]
        for c in args.config:
            only, _, defs = c.rpartition(":")
            if only and only != f"d{d}":
                continue
            configs.append(dict(x.split("=", 1) for x in defs.split(",")))
        kerns = []
        for src, cfg in [(SAMPLE, c) for c in configs] + [(args.base, c) for c in configs if args.base]:
            t0 = time.perf_counter()
            prog = tilec.compile(src, target="sm_90a", defines={"HEAD_DIM": d, "T": args.dtype, **extra, **cfg})
            name = " ".join(f"{k}={v}" for k, v in cfg.items())
            kerns.append((("base " + name).strip() if src != SAMPLE else name, prog["attention_fwd"]))
            ms = (time.perf_counter() - t0) * 1e3
            print(f"tilec attention_fwd HEAD_DIM={d} {extra or ''}{cfg or ''}: compiled in {ms:.1f} ms (to PTX and "
                  f"cubin), {kerns[-1][1].block[0] // 128 - 1} consumer warpgroups")
        for causal in [int(x) for x in args.causal.split(",")]:
            for s in [int(x) for x in args.seqlens.split(",")]:
                b, h = max(1, 16384 // s), 2048 // d
                scale = 1.0 / math.sqrt(d)
                torch.manual_seed(s + d + causal)
                tdt = torch.bfloat16 if args.dtype == "bf16" else torch.float16
                q, k, v = (torch.randn(b, h, s, d, dtype=tdt, device="cuda") for _ in range(3))
                o = torch.empty_like(q)
                lse = torch.empty(b, h, s, dtype=torch.float32, device="cuda")

                def sdpa(backend, q=q, k=k, v=v, causal=causal, scale=scale):
                    with sdpa_kernel(backend):
                        return F.scaled_dot_product_attention(q, k, v, is_causal=bool(causal), scale=scale)

                ref = sdpa(SDPBackend.CUDNN_ATTENTION)
                contenders = [("cudnn", lambda: sdpa(SDPBackend.CUDNN_ATTENTION), 0.0),
                              ("fa2", lambda: sdpa(SDPBackend.FLASH_ATTENTION),
                               timing.rel_fro(sdpa(SDPBackend.FLASH_ATTENTION), ref))]
                for label, kern in kerns:
                    qrows = 64 * (kern.block[0] // 128 - 1)   # 64 query rows per consumer warpgroup
                    grid = ((s + qrows - 1) // qrows, h, b)

                    def run_tilec(kern=kern, o=o, lse=lse, q=q, k=k, v=v, b=b, h=h, s=s, causal=causal, scale=scale,
                                  grid=grid):
                        kern(q, k, v, o, lse, batch=b, heads=h, kv_heads=h, seqlen_q=s, seqlen_k=s, scale=scale,
                             causal=causal, grid=grid, device="cuda")
                    o.fill_(float("nan"))
                    lse.fill_(float("nan"))
                    run_tilec()
                    torch.cuda.synchronize()
                    err = timing.rel_fro(o, ref)
                    lerr = (lse[0, 0, :256] - lse_reference(q, k, scale, causal)).abs().max().item()
                    ok = err < 1e-2 and lerr < 1e-3
                    name = "tilec " + label if label else "tilec"
                    print(f"  d={d} causal={causal} seqlen={s} batch={b} heads={h}: {name} o rel. err {err:.2e}, "
                          f"lse max |err| {lerr:.2e}{'' if ok else '  FAIL'}")
                    if ok:
                        contenders.append((name, run_tilec, err))
                if args.chooser:
                    import tilec.attention as tattn
                    oc = torch.empty_like(q)
                    lc = torch.empty(b, h, s, dtype=torch.float32, device="cuda")
                    choice = tattn.choose(d, s, s, causal)

                    def run_chooser(q=q, k=k, v=v, oc=oc, lc=lc, causal=causal, scale=scale):
                        tattn.forward(q, k, v, bool(causal), scale, out=oc, lse=lc)
                    oc.fill_(float("nan"))
                    run_chooser()
                    torch.cuda.synchronize()
                    err = timing.rel_fro(oc, ref)
                    ok = err < 1e-2
                    print(f"  d={d} causal={causal} seqlen={s}: tilec chooser {choice} o rel. err {err:.2e}"
                          f"{'' if ok else '  FAIL'}")
                    if ok:
                        contenders.append(("tilec chooser", run_chooser, err))
                if tri:
                    ot = torch.empty_like(q)
                    t1 = time.perf_counter()
                    tri(q, k, v, ot, causal, scale)
                    torch.cuda.synchronize()
                    terr = timing.rel_fro(ot, ref)
                    print(f"    triton first call (autotune and compile) {time.perf_counter() - t1:.1f} s, rel. err {terr:.2e}")
                    if terr < 1e-2:
                        contenders.append(("triton", (lambda ot=ot, q=q, k=k, v=v, causal=causal, scale=scale:
                                                      tri(q, k, v, ot, causal, scale)), terr))
                times = timing.time_interleaved([c[1] for c in contenders], args.reps).medians
                flops = 4.0 * b * h * s * s * d / (2 if causal else 1)
                res = {c[0]: flops / (t * 1e-3) / 1e12 for c, t in zip(contenders, times)}
                rows.append((d, causal, s, res))
                print("    " + "  ".join(f"{n} {tf:.0f}" for n, tf in res.items()) + " TFLOP/s")
    print("\nhead_dim causal seqlen | TFLOP/s: tilec cudnn fa2 triton | tilec / cudnn, / fa2, / triton "
          "(tilec: its best configuration)" + (" | chooser / cudnn, / best" if args.chooser else ""))
    for d, causal, s, res in rows:
        tl = {n: v for n, v in res.items() if n.startswith("tilec")}
        best = max(tl, key=tl.get) if tl else None
        if best:
            res = dict(res, tilec=tl[best])
        t = res.get("tilec")
        cols = " ".join(f"{res[n]:6.0f}" if n in res else "     -" for n in ("tilec", "cudnn", "fa2", "triton"))
        rat = " ".join(f"{t / res[n]:5.2f}" if t and n in res else "    -" for n in ("cudnn", "fa2", "triton"))
        ch = res.get("tilec chooser")
        chs = (f" | {ch / res['cudnn']:5.2f} {ch / t:5.2f}" if ch and t and "cudnn" in res else " |     -     -") \
            if args.chooser else ""
        print(f"{d:8d} {causal:6d} {s:6d} | {cols} | {rat}{chs}" + (f"  ({best})" if best and best != "tilec" else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
