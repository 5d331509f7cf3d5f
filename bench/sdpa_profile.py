#!/usr/bin/env python3
"""bench/sdpa_profile.py: torch's scaled_dot_product_attention through one back end, launched a few
times on bench/attention.py's shapes (bf16, batch x seqlen = 16384 tokens, heads x head_dim = 2048),
for `ncu` to measure the kernel that back end runs.

    ncu --section LaunchStats -k regex:cudnn --launch-skip 2 --launch-count 1 \\
        python3 bench/sdpa_profile.py 512 128 0            (seqlen, head_dim, causal)
    python3 bench/sdpa_profile.py 512 128 0 --backend flash
"""
import argparse
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("seqlen", type=int)
    ap.add_argument("head_dim", type=int)
    ap.add_argument("causal", type=int, choices=(0, 1))
    ap.add_argument("--backend", default="cudnn", choices=("cudnn", "flash", "efficient"))
    ap.add_argument("--launches", type=int, default=3)
    args = ap.parse_args()
    if args.seqlen < 1 or args.head_dim < 1 or 16384 % args.seqlen or 2048 % args.head_dim:
        raise SystemExit("sdpa_profile: seqlen must divide 16384 and head_dim 2048")
    try:
        import torch
        import torch.nn.functional as F
        from torch.nn.attention import SDPBackend, sdpa_kernel
    except ImportError as e:
        raise SystemExit(f"sdpa_profile: needs PyTorch ({e})")
    if not torch.cuda.is_available():
        raise SystemExit("sdpa_profile: no CUDA device")
    backend = {"cudnn": SDPBackend.CUDNN_ATTENTION, "flash": SDPBackend.FLASH_ATTENTION,
               "efficient": SDPBackend.EFFICIENT_ATTENTION}[args.backend]
    b, h = 16384 // args.seqlen, 2048 // args.head_dim
    q, k, v = (torch.randn(b, h, args.seqlen, args.head_dim, device="cuda", dtype=torch.bfloat16) for _ in range(3))
    with sdpa_kernel(backend):
        for _ in range(args.launches):
            F.scaled_dot_product_attention(q, k, v, is_causal=bool(args.causal))
    torch.cuda.synchronize()
    return 0


if __name__ == "__main__":
    sys.exit(main())
