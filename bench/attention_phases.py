#!/usr/bin/env python3
"""bench/attention_phases.py: where the time of samples/attention_fwd_sm90.tile goes, per query tile
and consumer warpgroup, read from inside the kernel with clock() and global_time() (docs/LANGUAGE.md
section 28).

A copy of the sample gets a `times` parameter and six timestamps per tile in each consumer
warpgroup: the tile's start (its first query row known), its Q tile landed (qfull), the first S
and its softmax done (the loop's start), the key-block loop done, the last P V complete, and the
O store issued; the warpgroup's first thread stores them with the tile's key-block count, the
block's index and the GPU time at the tile's start. The copy is compiled with the given -D
overrides (PERSIST=1 for the persistent form), launched once to warm up and once measured on
random bf16 inputs (o of the first head checked against float64 math first), and each phase is
printed in SM cycles: min / median / max over the (tile, warpgroup) pairs, then per key-block
count, and in the persistent form the gap from one tile's O store to the same warpgroup's next
tile.

    python3 bench/attention_phases.py 512 128 0 ROWSUM=1               (seqlen, head_dim, causal)
    python3 bench/attention_phases.py 512 128 1 ROWSUM=1 PERSIST=1
    python3 bench/attention_phases.py 130 64 1 NWG=2 --batch 1 --heads 2 --device sim

The inputs go in as NumPy arrays (copied to the device before each launch); bench/attention.py's
timing flushes L2, this does not. Without --batch and --heads the shape is bench/attention.py's:
batch x seqlen = 16384 tokens, heads x head_dim = 2048.
"""
import argparse
import math
import os
import statistics
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))
import tilec  # noqa: E402
from gemm_phases import stats  # noqa: E402  (min / median / max, as gemm_phases prints them)

SAMPLE = os.path.join(ROOT, "samples", "attention_fwd_sm90.tile")
FIELDS = 10   # per (tile, warpgroup): block, key blocks, t0 .. t5, start (ns), 1

RECORD = """{indent}if thread_id.x == 128 * w {{
{indent}    let r = times + ((mb + nmb * (h + heads * b)) * NWG + w - 1) * 10;
{indent}    r[0] = (block_id.x + nmb * (block_id.y + heads * block_id.z)) as u64;
{indent}    r[1] = nkb as u64;
{indent}    r[2] = t0;
{indent}    r[3] = t1;
{indent}    r[4] = t2;
{indent}    r[5] = t3;
{indent}    r[6] = t4;
{indent}    r[7] = clock();
{indent}    r[8] = g0;
{indent}    r[9] = 1 as u64;
{indent}}}
"""


def sub(text, old, new):
    if text.count(old) != 1:
        raise SystemExit("attention_phases: the sample no longer has %r once: update the rewrite" % old.strip())
    return text.replace(old, new, 1)


def instrument(text):
    """The sample with the timestamps and the `times` parameter (last): each edit puts its text
    between two pieces of the sample that must meet exactly once."""
    i12, i16, i20 = " " * 12, " " * 16, " " * 20
    record = RECORD.format(indent=i16)
    edits = [   # (before, after, inserted between them)
        ("causal: i32", ") block(128 * (NWG + 1)) blocks_per_sm(BPS) {", ", times: u64*"),
        (i12 + "let rw = (mb * NWG + w - 1) * BM;         // this warpgroup's first query row\n", "",
         i12 + "let t0 = clock();\n" + i12 + "let g0 = global_time();\n"),
        (i12 + "wait(qfull, qf);\n" + i12 + "qf = qf.next();\n", "", i12 + "let t1 = clock();\n" + i12 + "var t2 = t1;\n"),
        (i16 + "p = pf as T;\n", i12 + "}\n" + i12 + "// SPLIT = 1", i16 + "t2 = clock();\n"),
        ("", i12 + "if PERSIST != 0 {\n" + i16 + "arrive(qempty);", i12 + "let t3 = clock();\n" + i12 + "var t4 = t3;\n"),
        (i16 + "mma_wait(0);\n", i16 + "release(vs);\n" + i16 + "vs = vs.next();                       // the next tile's first V stage\n",
         i16 + "t4 = clock();\n"),
        (i20 + "tma.wait_read(0);             // the block may exit once the store has read the tile\n" + i16 + "}\n", "", record),
        (i20 + "tma.store(o[b, h, rw, 0], so[j * NWG + w - 1]);\n" + i20 + "tma.commit();\n" + i16 + "}\n", "", record),
    ]
    for before, after, inserted in edits:
        text = sub(text, before + after, before + inserted + after)
    return text


def bf16_bits(x):
    import numpy as np
    return (np.ascontiguousarray(x, np.float32).view(np.uint32) >> 16).astype(np.uint16)


def bf16_value(bits):
    import numpy as np
    return (bits.astype(np.uint32) << 16).view(np.float32).astype(np.float64)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("seqlen", type=int)
    ap.add_argument("head_dim", type=int, choices=(64, 128))
    ap.add_argument("causal", type=int, choices=(0, 1))
    ap.add_argument("defines", nargs="*", help="NAME=VALUE -D overrides of the sample")
    ap.add_argument("--batch", type=int, help="default: 16384 / seqlen")
    ap.add_argument("--heads", type=int, help="default: 2048 / head_dim")
    ap.add_argument("--device", choices=("cuda", "sim"), default="cuda")
    args = ap.parse_args()
    s, d = args.seqlen, args.head_dim
    batch = args.batch if args.batch is not None else 16384 // max(s, 1)
    heads = args.heads if args.heads is not None else 2048 // d
    if s < 1 or batch < 1 or heads < 1 or batch * heads * s > (1 << 26):
        raise SystemExit("attention_phases: seqlen %d, batch %d, heads %d: each at least 1, at most 2^26 rows in all"
                         % (s, batch, heads))
    defines = {"HEAD_DIM": str(d)}
    for x in args.defines:
        name, eq, value = x.partition("=")
        if not eq or not name or not value:
            raise SystemExit("attention_phases: %r is not NAME=VALUE" % x)
        if name == "HEAD_DIM":
            raise SystemExit("attention_phases: the head dim is the second argument, not a define")
        defines[name] = value
    try:
        nwg = int(defines.get("NWG", 3 if d == 64 else 2))
    except ValueError:
        raise SystemExit("attention_phases: NWG must be an integer, not %r" % defines["NWG"])
    import numpy as np
    with open(SAMPLE) as f:
        text = instrument(f.read())
    prog = tilec.compile(text, target="sm_90a", defines=defines, filename="attention_phases.tile")
    kern = prog["attention_fwd"]
    rows = nwg * 64
    nmb = -(-s // rows)
    ntiles = nmb * heads * batch
    rng = np.random.default_rng(1)
    q, k, v = (bf16_bits(rng.standard_normal((batch, heads, s, d))) for _ in range(3))
    o = np.full((batch, heads, s, d), 0x7FC0, np.uint16)
    lse = np.zeros((batch, heads, s), np.float32)
    times = np.zeros((ntiles * nwg, FIELDS), np.uint64)
    scale = 1.0 / math.sqrt(d)
    dev = tilec.Device(args.device)
    for _ in range(1 if args.device == "sim" else 2):   # a warm-up launch, then the measured one
        times[:] = 0
        kern(q, k, v, o, lse, batch, heads, heads, s, s, scale, args.causal, times,
             grid=(nmb, heads, batch), device=dev)
    qv, kv, vv = bf16_value(q[0, 0]), bf16_value(k[0, 0]), bf16_value(v[0, 0])
    sc = qv @ kv.T * scale
    if args.causal:
        sc = np.where(np.arange(s)[None, :] <= np.arange(s)[:, None], sc, -np.inf)
    p = np.exp(sc - sc.max(axis=1, keepdims=True))
    want = (p @ vv) / p.sum(axis=1, keepdims=True)
    err = float(np.linalg.norm(bf16_value(o[0, 0]) - want) / np.linalg.norm(want))
    unit = "cycles" if args.device == "cuda" else "simulator steps"
    print("seqlen %d, head dim %d, %s, batch %d, heads %d: %d tiles of %d rows, %s on %s: o[0, 0] relative "
          "Frobenius error %.3g" % (s, d, "causal" if args.causal else "non-causal", batch, heads, ntiles, rows,
                                    " ".join(args.defines) or "as written", args.device, err))
    if not err <= 2e-2 or not (times[:, 9] == 1).all():
        print("attention_phases: the result is wrong or a tile was not recorded")
        return 1
    recs = [tuple(int(x) for x in r) for r in times]
    # (block, nkb, t0 tile start, t1 Q landed, t2 first S and softmax done, t3 loop done, t4 last P V done, t5 O store issued, g0, 1)
    phases = [("Q landed (tile start to qfull)", lambda r: r[3] - r[2]),
              ("first S and its softmax (to the loop)", lambda r: r[4] - r[3]),
              ("key-block loop, per block", lambda r: (r[5] - r[4]) // (r[1] - 1) if r[1] > 1 else None),
              ("last P V (loop end to its wait)", lambda r: r[6] - r[5]),
              ("epilogue (to the O store issued)", lambda r: r[7] - r[6]),
              ("tile start to O store issued", lambda r: r[7] - r[2])]
    print("per (tile, warpgroup), %s:              min   median      max" % unit)
    for name, f in phases:
        print("  %-36s %s" % (name, stats([x for x in map(f, recs) if x is not None])))
    counts = sorted({r[1] for r in recs})
    if len(counts) > 1:
        print("by key blocks (tile start to O store issued, median; pairs):")
        for n in counts[:12]:
            sel = [r[7] - r[2] for r in recs if r[1] == n]
            print("  %3d blocks  %8d  (%d)" % (n, statistics.median(sel), len(sel)))
    if defines.get("PERSIST", "0") != "0":
        gaps, per = [], {}
        for r, w in zip(recs, [i % nwg for i in range(len(recs))]):
            per.setdefault((r[0], w), []).append(r)
        tiles_per_block = []
        for rs in per.values():
            rs.sort(key=lambda r: r[2])
            tiles_per_block.append(len(rs))
            gaps += [b[2] - a[7] for a, b in zip(rs, rs[1:])]
        print("  %-36s %s" % ("O store issued to the next tile's start", stats(gaps)))
        print("tiles per block and warpgroup: %s" % stats(tiles_per_block))
    g = [r[8] for r in recs]
    print("tile starts (%s): spread %d" % ("ns" if args.device == "cuda" else "steps", max(g) - min(g)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
