#!/usr/bin/env python3
"""bench/gemm.py: the GEMM harness. tilec's sm_90a GEMM samples against cuBLAS (torch.matmul) and
Triton on one GPU, with named presets for each measurement; docs/PERFORMANCE.md keeps the results.

    python3 bench/gemm.py --list-presets
    python3 bench/gemm.py [--preset NAME] [--shapes MxNxK,...] [--variants "V;V;..."] [--reps R]
                          [--check] [--check-only] [--device cuda|sim] [--compile-only]

A preset names the shapes, the tilec variants, the number of timed rounds and the form of the
report; --shapes, --variants and --reps replace the preset's. Without --preset: `final`.

Timing (needs PyTorch with CUDA; Triton is optional). For each shape M x N x K, A [M, K] and B [N, K]
are random bf16 tensors made once by torch (uniform in [-1, 1)); every contender computes
C = A @ B^T into its own bf16 C from those same tensors. tilec's kernel is compiled and launched
through the Python package (python/tilec; libtile from $TILEC_LIB or the build tree) on the torch
tensors themselves: the runtime encodes the tensor maps from the arguments and the kernel's boxes
(the compile time of each variant, in process, and ptxas's on its PTX are printed). Each timed launch sits between CUDA events on the default stream, after warm-up, preceded by
an L2 flush and a GPU spin that hide the host's time in the call (time_one): the warm-up measures
each contender's host time per call, and the spin is twice the longest plus 20 us (at least 50 us),
so that a contender of two launches (split-K) is timed as its kernels too; Python's garbage
collector is off while timing. Every contender of a shape is timed once per round, R rounds
interleaved (so that clock or temperature drift reaches all alike), and the median of its R times
is reported. TFLOP/s = 2 M N K / time; the fraction is of
the H100 SXM's 989 dense bf16 TFLOP/s. Every result is compared with cuBLAS's (relative Frobenius
error ||C - C_ref|| / ||C_ref||, about 2^-9 for bf16 output) before timing; a variant above 1e-2 is
reported as FAIL and not timed.

Baselines: cuBLAS through torch.matmul, and two Triton kernels written here, each autotuned by
Triton over four configs (compile time = the first call's): a plain tl.dot block matmul (one
program per tile, pointer loads) and a persistent TMA matmul in the shape of Triton's tutorial 09
(one program per SM walking the tiles, host tensor descriptors for A, B and C; skipped with a
message if this Triton lacks them). The `tune` preset times only cuBLAS and the persistent one.

A variant is a list of words:
    [plain | persistent | pingpong | cluster | quad | splitk] [src=FILE | rewrite=NAME] [NAME=VALUE ...]
    [clusters=C] [splits=S] [dp=D | dp=waves] [racy]
  plain       samples/gemm_sm90.tile, one block per tile (the default)
  persistent  samples/gemm_persistent_sm90.tile, grid min(tiles, SMs)
  pingpong    samples/gemm_pingpong_sm90.tile (each consumer warpgroup whole tiles), grid min(tiles, SMs)
  cluster     samples/gemm_cluster_sm90.tile (2-CTA clusters multicasting half of B each),
              grid 2 x min(tile pairs, SMs / 2, C of clusters=C)
  quad        samples/gemm_quad_sm90.tile (2 x 2 clusters multicasting half of A along N and half of
              B along M), grid 4 x min(quads, the clusters of 4 the device holds at once, C)
  splitk      samples/gemm_splitk_sm90.tile: the first dp tiles whole, the others in S slices of K
              (splits=S, default 2; dp=D, default 0, or dp=waves: the tiles of the whole waves of
              SMs), grid min(units, SMs), then its reduction kernel; the f32 workspace is allocated
              once per shape, outside the timed launches
  src=FILE    a rewritten copy of that sample (its kernel named as the sample's), relative to the
              repository root or absolute
  rewrite=R   a copy of the sample made here by one of REWRITES (each fails if the sample no longer
              has the text it rewrites)
  NAME=VALUE  -D overrides of the source's consts (BM, BN, BK, STAGES, GROUP_M, ...)
  racy        a diagnostic that drops part of the protocol on purpose: timed even when its result
              is wrong (and labelled so), skipped by --check
The C tile a block computes is read from the compiled boxes (A's rows x B's rows; B's x 2 for
cluster, both x 2 for quad).

--check runs the correctness loop before timing (--check-only: instead of timing; no torch needed):
each distinct variant through `tilec run` (float64 reference, bf16 bounds) at square and ragged
shapes, on forced grids (the persistent kernels), then compute-sanitizer memcheck, racecheck and
synccheck on a small launch when it is installed. With --device sim the loop runs in the
simulator instead (smaller shapes, its race detector on; no GPU needed). --compile-only compiles
every variant (PTX, parameters, cubin when ptxas is found) and prints the compile times.
"""
import argparse
import atexit
import gc
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

PEAK = 989.0
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TILEC = os.environ.get("TILEC", os.path.join(ROOT, "build", "tilec"))   # the correctness loop's `tilec run`
sys.path.insert(0, os.path.join(ROOT, "python"))
import tilec  # noqa: E402
import tilec.gemm as tgemm  # noqa: E402
SAMPLES = {"plain": "gemm_sm90", "persistent": "gemm_persistent_sm90",
           "pingpong": "gemm_pingpong_sm90", "cluster": "gemm_cluster_sm90", "splitk": "gemm_splitk_sm90",
           "quad": "gemm_quad_sm90"}
WHOLE_C = "src=bench/gemm_variants/persistent_whole_c.tile"
# split-K with the whole waves of tiles kept whole (every tile split where they are fewer than the SMs)
SPLITK_SWEEP = ("splitk splits=2 dp=waves;splitk BN=64 STAGES=6 splits=2 dp=waves;"
                "splitk BN=256 STAGES=4 CW=32 PW=16 splits=4 dp=waves")
FIVE = "4096x4096x4096,8192x8192x8192,8192x1024x8192,16384x4096x1024,128x8192x8192"

torch = None   # imported by need_torch() when timing
SMS = 132      # the device's SM count, set from torch when timing


# ---- rewrites of the samples (rewrite=NAME) --------------------------------------------------

class RewriteError(Exception):
    pass


def sub(text, old, new, what):
    if old not in text:
        raise RewriteError(f"{what}: the sample no longer contains {old.strip()!r}")
    return text.replace(old, new)


def rw_allthreads(s):
    """Every consumer thread arrives on `empty` (256 arrivals, as gemm_sm90 does), with no
    warpgroup meeting and no elected thread."""
    s = sub(s, "mbarrier empty[STAGES](2);", "mbarrier empty[STAGES](256);", "allthreads")
    s = sub(s, "                    warpgroup(1) { sync(); elect { arrive(empty[prev]); } }\n"
               "                    warpgroup(2) { sync(); elect { arrive(empty[prev]); } }\n",
            "                    arrive(empty[prev]);\n", "allthreads")
    return sub(s, "            warpgroup(1) { sync(); elect { if held { arrive(empty[prev]); } } }\n"
                  "            warpgroup(2) { sync(); elect { if held { arrive(empty[prev]); } } }\n",
               "            if held { arrive(empty[prev]); }\n", "allthreads")


def rw_nosync(s):
    """One elected thread per warpgroup arrives without the warpgroup's named barrier first
    (CUTLASS's form: it relies on the warpgroup's wgmma completing as one; in the PTX memory model
    as written nothing orders the other threads' reads of the stage before the TMA write that
    refills it, which is why the sample meets first)."""
    return sub(s, "{ sync(); elect", "{ elect", "nosync")


def rw_onesync(s):
    """The epilogue's pieces with one consumer meeting each instead of two: the storing thread
    waits until the previous piece's store has read its stage (tma.wait_read(0)), then one meeting."""
    old = ("                elect { tma.wait_read(1); }\n"
           "                sync();\n"
           "                store(sc[q % 2], columns(acc, q * CW, CW) as bf16);\n"
           "                sync();               // every consumer's part of the piece written (and fenced)\n")
    new = ("                store(sc[q % 2], columns(acc, q * CW, CW) as bf16);\n"
           "                elect { tma.wait_read(0); }\n"
           "                sync();\n")
    if "for const q in 0 .. 4 {" not in s:
        raise RewriteError("onesync: the sample's epilogue is no longer a `for const q` loop over four pieces")
    return sub(s, old, new, "onesync")


MULTICAST_B = "tma.load(sb[2 * s + rank], b[n + rank * BH, k * BK], full[s], multicast = 3);"
BOTH_HALVES = "tma.load(sb[2 * s], b[n, k * BK], full[s]); tma.load(sb[2 * s + 1], b[n + BH, k * BK], full[s]);"


def rw_nomc(s):
    """The cluster kernel without multicast: each CTA loads both B halves itself, `empty` counts
    its own two warpgroups, no remote arrives (still launched as 2-CTA clusters)."""
    s = sub(s, "mbarrier empty[STAGES](4);", "mbarrier empty[STAGES](2);", "nomc")
    s = sub(s, " arrive(empty[prev], cta = peer, release = cta);", "", "nomc")
    return sub(s, MULTICAST_B, BOTH_HALVES, "nomc")


def rw_split(s):
    """nomc without the cluster: the cluster kernel's split mma (two m64n128 halves) alone."""
    s = rw_nomc(s)
    s = sub(s, " cluster(2) {", " {", "split")
    s = sub(s, "let rank = cluster_rank;", "let rank = block_id.x % 2;", "split")
    return sub(s, "    cluster_sync();\n", "", "split")


def rw_regepi(s):
    """The ping-pong kernel with a register epilogue: C a plain tensor, every thread storing its
    accumulator, no C tiles in shared memory."""
    out, skip = [], False
    lines = s.split("\n")
    for line in lines:
        st = line.strip()
        if st.startswith("shared sc") or st == "elect { tma.wait_all(); }":
            continue
        if "tma.wait_read(0)" in line:     # the epilogue through sc: from its guard on
            out.pop()
            skip = True
        if skip:
            if "tma.store(" in line:
                out.append("            store(c[m, n], acc as bf16);")
                skip = False
            continue
        out.append(line.replace("c: tma bf16[M, N] box[BM, BN]", "c: tensor bf16[M, N]"))
    if out == lines or sum("store(c[m, n], acc as bf16)" in x for x in out) != 2:
        raise RewriteError("regepi: the sample's epilogue is no longer one TMA store per warpgroup")
    return "\n".join(out)


# The lower-layer forms of the pipelined samples (their rings' stage index, parity and releases
# written by hand), which the release and multicast rewrites change: the samples are written with
# pipelines.
PERSISTENT_LOWER = "tests/sim/lower/gemm_persistent_sm90.tile"
PINGPONG_LOWER = "tests/sim/lower/gemm_pingpong_sm90.tile"
CLUSTER_LOWER = "tests/sim/lower/gemm_cluster_sm90.tile"

# name -> (sample kind, rewrite function[, the file it rewrites instead of the sample])
REWRITES = {"allthreads": ("persistent", rw_allthreads, PERSISTENT_LOWER),
            "nosync": ("persistent", rw_nosync, PERSISTENT_LOWER),
            "onesync": ("persistent", rw_onesync), "nomc": ("cluster", rw_nomc, CLUSTER_LOWER),
            "split": ("cluster", rw_split, CLUSTER_LOWER), "regepi": ("pingpong", rw_regepi)}


# ---- presets ---------------------------------------------------------------------------------

class Preset:
    def __init__(self, about, variants, shapes=FIVE, reps=20, mode="compare"):
        self.about = about          # one line: what the preset measures
        self.variants = variants    # the tilec variants, bench/gemm.py's variant syntax
        self.shapes = shapes
        self.reps = reps
        self.mode = mode            # compare: a table per shape; tune: ranked, best per shape; sweep: best per shape


def tune_space():
    """Tile width, ring depth and grouping of the samples: BN in {256, 128} with the deepest rings
    that fit 227 KiB (BN=256: STAGES 3, 4, the persistent kernel's two C piece tiles included;
    BN=128: STAGES 4, 5, 6), GROUP_M in {8, 16}; BM = 128, BK = 64 (BK = 32 was 5-9% slower
    everywhere, docs/PERFORMANCE.md); the cluster and ping-pong kernels; the persistent kernel
    with one whole C tile and 3 stages (ahead where K is small)."""
    out = []
    for kind in ("plain", "persistent"):
        for bn, stages in ((256, (3, 4)), (128, (4, 5, 6))):
            for st in stages:
                for g in (8, 16):
                    out.append(f"{kind} BN={bn} STAGES={st} GROUP_M={g}")
    out += ["cluster GROUP_M=8", "cluster GROUP_M=16", "pingpong GROUP_M=8", "pingpong GROUP_M=16"]
    out += [f"persistent {WHOLE_C} GROUP_M=8", f"persistent {WHOLE_C} GROUP_M=16"]
    return ";".join(out)


def sweep_shapes():
    """M in {128, 512, 2048, 8192} against the (N, K) of every projection of a Llama-3-8B layer (q/k/v
    fused 6144 x 4096, o 4096 x 4096, gate or up 14336 x 4096, down 4096 x 14336) and of a
    Llama-3-70B layer (10240 x 8192, 8192 x 8192, 28672 x 8192, 8192 x 28672), then two squares and
    three ragged shapes (none a multiple of the tiles, K near 1000)."""
    nk = [(6144, 4096), (4096, 4096), (14336, 4096), (4096, 14336),
          (10240, 8192), (8192, 8192), (28672, 8192), (8192, 28672)]
    out = [f"{m}x{n}x{k}" for m in (128, 512, 2048, 8192) for n, k in nk]
    out += ["4096x4096x4096", "8192x8192x8192", "1000x1496x1000", "3000x5000x1064", "256x3000x2000"]
    return ",".join(out)


PRESETS = {
    "final": Preset("the standing result: the best variant of each sample at the five shapes, "
                    "30 rounds (docs/PERFORMANCE.md, first table)",
                    f"persistent;persistent GROUP_M=16;persistent BN=128 STAGES=6;pingpong;persistent {WHOLE_C}",
                    reps=30),
    "samples": Preset("each GEMM sample as written at the five shapes (tests/gpu/gemm.sh)",
                      "plain;persistent;pingpong;cluster"),
    "tune": Preset("the autotuner: every variant of the tuning space checked and timed, ranked, "
                   "and the best per shape", tune_space(), reps=10, mode="tune"),
    "release": Preset("the persistent kernel's stage release: one arrival per warpgroup after a "
                      "meeting (the sample; its lower-layer form), 256 arrivals, one arrival without the meeting",
                      f"plain;persistent;persistent src={PERSISTENT_LOWER};persistent rewrite=allthreads;"
                      "persistent rewrite=nosync",
                      shapes="4096x4096x4096,8192x8192x8192,16384x4096x1024"),
    "epilogue": Preset("the persistent kernel's epilogue: four pieces and 4 stages (the sample), "
                       "3 stages, one whole C tile with 3 stages, one meeting per piece, cuBLAS's "
                       "256 x 128 tile",
                       f"persistent;persistent STAGES=3;persistent {WHOLE_C};persistent rewrite=onesync;"
                       "persistent BM=256 BN=128"),
    "pingpong": Preset("the ping-pong kernel's shapes and epilogues beside the cooperative one",
                       "persistent;persistent GROUP_M=16;pingpong;pingpong STAGES=4;pingpong GROUP_M=16;"
                       "pingpong BM=64 BN=256 STAGES=4;pingpong rewrite=regepi"),
    "pipeline": Preset("the GEMMs written with pipelines beside their lower-layer forms (stage index, "
                       "parity, releases and turns by hand), same tiles: persistent and ping-pong (the "
                       "samples are the pipeline forms), cluster",
                       f"persistent;persistent src={PERSISTENT_LOWER};persistent BN=128 STAGES=6;"
                       f"persistent BN=128 STAGES=6 src={PERSISTENT_LOWER};pingpong;pingpong src={PINGPONG_LOWER};"
                       f"cluster;cluster src={CLUSTER_LOWER}"),
    "sweep": Preset("GEMM on every shape: the LLM projections of Llama-3-8B and -70B at four token counts, "
                    "squares and ragged shapes; the samples' main variants checked and timed beside cuBLAS "
                    "and Triton's persistent kernel, the best per shape, its geometric mean and worst shape, "
                    "and tilec.gemm's choice per shape (timed as its own row)",
                    f"plain;plain BN=128 STAGES=6;plain BN=64 STAGES=8;plain BM=64 BN=64 STAGES=12;"
                    f"plain BM=64 BN=128 STAGES=8;persistent;persistent GROUP_M=16;"
                    f"persistent BN=128 STAGES=6;persistent BN=64 STAGES=8;persistent {WHOLE_C};pingpong;"
                    f"pingpong BN=128 STAGES=4;cluster;{SPLITK_SWEEP}",
                    shapes=sweep_shapes(), reps=10, mode="sweep"),
    "splitk": Preset("split-K (samples/gemm_splitk_sm90.tile: whole tiles, K slices, the reduction kernel) at "
                     "the shapes below 0.90x cuBLAS and the ones tilec.gemm now splits: split counts, tile "
                     "widths, the whole waves kept whole (dp=waves), 64-byte epilogue pieces for one more stage "
                     "(CW=32 PW=16), beside the configurations chosen before; "
                     "ranked per shape with the cost model's estimate of each (tilec.gemm.estimate_us)",
                     "plain BN=64 STAGES=8;persistent BN=128 STAGES=6;persistent GROUP_M=16;pingpong;"
                     "splitk splits=2;splitk splits=3;splitk splits=4;splitk BN=64 STAGES=6 splits=2;"
                     "splitk BN=64 STAGES=6 splits=3;splitk BN=64 STAGES=6 splits=4;splitk BN=256 STAGES=3 splits=2;"
                     "splitk BN=256 STAGES=3 splits=3;splitk BN=256 STAGES=3 splits=4;"
                     "splitk splits=2 dp=waves;splitk splits=3 dp=waves;splitk splits=4 dp=waves;"
                     "splitk BN=256 STAGES=3 splits=2 dp=waves;splitk BN=256 STAGES=3 splits=4 dp=waves;"
                     "splitk BN=256 STAGES=4 CW=32 PW=16 splits=4 dp=waves;splitk BN=256 STAGES=4 CW=32 PW=16 splits=4;"
                     "splitk STAGES=6 CW=32 PW=16 splits=2",
                     shapes="128x4096x4096,512x6144x4096,512x10240x8192,1000x1496x1000,3000x5000x1064,128x4096x14336",
                     reps=10, mode="tune"),
    "misaligned": Preset("rows of A and B that are not a multiple of 128 bytes (K % 64 != 0): the persistent "
                         "kernel, the cluster kernel at each tile width tilec.gemm weighs for it, the quad kernel, ranked per "
                         "shape beside cuBLAS, Triton's persistent kernel and tilec.gemm's choice",
                         "persistent GROUP_M=16;persistent BN=192 CW=32 GROUP_M=16 STAGES=5;cluster;"
                         "cluster BN=224 CW=16 SC=7 STAGES=4;cluster BN=192 CW=32 SC=3 STAGES=5;"
                         "cluster BN=160 CW=16 SC=5 STAGES=5;quad",
                         shapes="1000x1496x1000,2000x1496x1000,520x4096x1000,1024x4096x1000,1500x3000x1000,"
                                "2000x3000x1000,1100x5000x1000,1200x7000x1000,4096x4096x1000,1536x4000x2000,"
                                "2048x5000x3000,3000x3000x3000,3000x5000x1064,8192x8192x2008",
                         reps=10, mode="tune"),
    "onewave": Preset("one partial wave of 128 x 128 tiles (M > 256): the persistent kernel at each width of "
                      "tilec.gemm.ONE_WAVE and at 128 x 192 and 128 x 256, split-K and the quad kernel (2 x 2 "
                      "clusters, 128 x 128 tiles), with rows of A and B that are "
                      "a multiple of 128 bytes and rows that are not (K % 64 != 0), ranked per shape beside cuBLAS, "
                      "Triton's persistent kernel and tilec.gemm's choice",
                      "persistent BN=64 STAGES=8;persistent BN=96 CW=16 STAGES=7;persistent BN=128 STAGES=6;"
                      "persistent BN=192 CW=32 GROUP_M=16 STAGES=5;persistent GROUP_M=16;splitk BN=128 STAGES=5 splits=2;"
                      "quad",
                      shapes="1024x1024x1024,1024x1536x1024,1000x1496x1024,1536x1024x1536,1024x2048x1024,"
                             "2048x1024x2048,640x2560x2048,512x2048x2048,768x768x1024,1024x1024x4096,1024x1536x4096,"
                             "1024x1024x8192,512x2048x8192,1000x1000x1000,1096x1096x1096,1000x1200x1000,800x1600x1000,"
                             "1600x800x1000,1200x1000x1200,600x2000x1000,504x2504x1000,1000x1496x1000,900x1800x1000,"
                             "1000x2000x1000,700x2400x1000",
                      reps=10, mode="tune"),
    "cluster": Preset("2-CTA clusters: B multicast with the cross-CTA release (the sample; its "
                      "pipeline form), without multicast (nomc), without clusters (split: the split mma alone)",
                      f"persistent GROUP_M=16;cluster;cluster src={CLUSTER_LOWER};cluster GROUP_M=16;cluster rewrite=nomc;"
                      "cluster rewrite=split",
                      shapes="4096x4096x4096,8192x8192x8192"),
}


# ---- variants: parse, compile, load ----------------------------------------------------------

_tmpdir = None


def tmpdir():
    global _tmpdir
    if _tmpdir is None:
        _tmpdir = tempfile.mkdtemp(prefix="tilec-gemm-")
        atexit.register(shutil.rmtree, _tmpdir, True)
    return _tmpdir


def run(args, **kw):
    p = subprocess.run(args, capture_output=True, **kw)
    if p.returncode != 0:
        err = p.stderr.decode() if isinstance(p.stderr, bytes) else p.stderr
        raise RuntimeError(f"{' '.join(args)}: exit {p.returncode}\n{err.strip()}")
    return p.stdout


class Variant:
    """One variant: its words parsed, its source (a sample, a copy or a rewrite) and -D overrides;
    compile() builds it with tilec, load() puts it on the GPU."""

    KINDS = ("plain", "persistent", "pingpong", "cluster", "splitk", "quad")

    def __init__(self, text):
        words = text.split()
        self.label = " ".join(words) or "plain"
        kinds = [w for w in words if w in self.KINDS]
        if len(kinds) > 1:
            raise ValueError(f"variant [{text}]: more than one kernel ({', '.join(kinds)})")
        self.kind = kinds[0] if kinds else "plain"
        self.kernel = SAMPLES[self.kind]
        self.cluster = self.kind == "cluster"
        self.quad = self.kind == "quad"
        self.persistent = self.kind != "plain"
        self.racy = "racy" in words
        self.max_clusters = int(next((w[9:] for w in words if w.startswith("clusters=")), "0"))
        self.splits = int(next((w[7:] for w in words if w.startswith("splits=")), "2"))
        self.dp = next((w[3:] for w in words if w.startswith("dp=")), "0")
        if (self.kind != "splitk" and any(w.startswith(("splits=", "dp=")) for w in words)) or \
                not (self.dp == "waves" or self.dp.isdigit()) or self.splits < 1:
            raise ValueError(f"variant [{text}]: splits=S (S >= 1) and dp=D or dp=waves are words of the splitk kernel")
        src = [w[4:] for w in words if w.startswith("src=")]
        rewrite = [w[8:] for w in words if w.startswith("rewrite=")]
        self.defines = [w for w in words if "=" in w and not w.startswith(("src=", "rewrite=", "clusters=", "splits=", "dp="))]
        unknown = [w for w in words if w not in self.KINDS and w != "racy" and "=" not in w]
        if unknown:
            raise ValueError(f"variant [{text}]: unknown word(s) {' '.join(unknown)}")
        if src and rewrite:
            raise ValueError(f"variant [{text}]: src= and rewrite= together")
        sample = os.path.join(ROOT, "samples", self.kernel + ".tile")
        if src:
            self.source = src[0] if os.path.isabs(src[0]) else os.path.join(ROOT, src[0])
        elif rewrite:
            if rewrite[0] not in REWRITES:
                raise ValueError(f"variant [{text}]: no rewrite {rewrite[0]} (known: {', '.join(REWRITES)})")
            kind, fn = REWRITES[rewrite[0]][:2]
            if len(REWRITES[rewrite[0]]) > 2:
                sample = os.path.join(ROOT, REWRITES[rewrite[0]][2])
            if kind != self.kind:
                raise ValueError(f"variant [{text}]: rewrite={rewrite[0]} applies to the {kind} kernel")
            self.source = os.path.join(tmpdir(), f"{self.kernel}.{rewrite[0]}.tile")
            with open(sample) as f:
                text_in = f.read()
            with open(self.source, "w") as f:
                f.write(fn(text_in))
        else:
            self.source = sample
        self.args = [TILEC, self.source] + [f"-D{d}" for d in self.defines]
        if self.kind == "splitk":   # the check's shapes have fewer tiles than a wave: dp there is 0
            self.args += ["--arg", f"splits={self.splits}"]

    def config(self):
        """The tilec.gemm.Config of this variant (for the cost model's estimate), or None when it is
        not one of the package's kinds or is a rewritten source."""
        if self.kind not in ("plain", "persistent", "pingpong", "cluster", "splitk", "quad") or self.source != os.path.join(
                ROOT, "samples", self.kernel + ".tile"):
            return None
        defines = {k: int(v) if v.lstrip("-").isdigit() else v for k, v in (d.split("=", 1) for d in self.defines)}
        if self.kind != "splitk":
            return tgemm.Config(self.kind, defines)
        return tgemm.Config("splitk", defines, splits=self.splits, dp=0 if self.dp == "waves" else int(self.dp))

    def compile(self, cubin=True):
        """Compiles the variant through the Python package (in process: source to PTX, timed), reads
        its TMA boxes, C's kind and shared memory from the program; with cubin, also assembles it with
        ptxas (timed) for the report (launches load the program through the package, which JITs or
        takes the cached cubin)."""
        with open(self.source) as f:
            text = f.read()
        defines = dict(d.split("=", 1) for d in self.defines)
        t0 = time.perf_counter()
        self.program = tilec.compile(text, target="sm_90a", defines=defines, filename=self.source)
        self.compile_ptx_ms = (time.perf_counter() - t0) * 1e3
        self.kern = self.program[self.kernel]
        ptx = self.program.emit("ptx")
        self.ptx_bytes = len(ptx)
        # the TMA maps' boxes (name -> (rows, cols)): the tile a block (a cluster: each CTA) computes
        self.maps = {p.name: tuple(p.box) for p in self.kern.params if p.kind == "tma"}
        self.c_tma = "c" in self.maps   # C as a TMA tensor (an epilogue through shared memory) or a pointer
        self.tile = (self.maps["a"][0] * (2 if self.quad else 1), self.maps["b"][0] * (2 if self.cluster or self.quad else 1))
        self.smem = self.kern.shared_bytes
        self.compile_cubin_ms = 0.0
        if cubin:
            d = tempfile.mkdtemp(dir=tmpdir())
            with open(os.path.join(d, "k.ptx"), "w") as f:
                f.write(ptx)
            t0 = time.perf_counter()
            run([os.environ.get("PTXAS", "ptxas"), "-arch=sm_90a", os.path.join(d, "k.ptx"), "-o",
                 os.path.join(d, "k.cubin")])
            self.compile_cubin_ms = (time.perf_counter() - t0) * 1e3
        return self

    def load(self):
        return self

    def launcher(self, a, b, c):
        """The variant's launch on torch tensors a [M, K], b [N, K], c [M, N], through the package (the
        runtime builds the tensor maps from the arguments and the kernel's boxes)."""
        M, K = a.shape
        N = b.shape[0]
        bm, bn = self.tile
        grid = ((M + bm - 1) // bm) * ((N + bn - 1) // bn)
        if self.kind == "splitk":
            return self.splitk_launcher(a, b, c, M, N, K, grid)
        if self.cluster:   # clusters of 2 along M: tile pairs, one block per SM
            grid = 2 * min(((M + bm - 1) // bm + 1) // 2 * ((N + bn - 1) // bn), self.max_clusters or SMS // 2)
        elif self.quad:    # 2 x 2 clusters: quads of tiles, at most the clusters of 4 the device holds at once
            grid = 4 * min(tgemm._quads(M, N, bm, bn), self.max_clusters or tgemm._quad_clusters(self.kern, "cuda", SMS))
        elif self.persistent:
            grid = min(grid, SMS)
        kern = self.kern

        def launch():
            kern(a, b, c, M, N, K, grid=grid, device="cuda")
        return launch


    def splitk_dp(self, tiles):
        return min(tiles, tiles // SMS * SMS if self.dp == "waves" else int(self.dp))

    def splitk_launcher(self, a, b, c, M, N, K, tiles):
        """The two launches of the splitk sample on the default stream, the workspace made here."""
        bm, bn = self.tile
        dp = self.splitk_dp(tiles)
        slots = (tiles - dp) * self.splits
        ws = torch.empty((max(1, slots), bm, bn), device="cuda", dtype=torch.float32)
        kern, red, S = self.kern, self.program["gemm_splitk_reduce_sm90"], self.splits
        grid, rgrid = min(dp + slots, SMS), (tiles - dp) * -(-bm // 16)

        def launch():
            kern(a=a, b=b, c=c, ws=ws, M=M, N=N, K=K, P=max(1, slots), splits=S, dp=dp, grid=grid, device="cuda")
            if slots:
                red(ws=ws, c=c, M=M, N=N, P=slots, splits=S, dp=dp, grid=rgrid, device="cuda")
        return launch

    def config_at(self, M, N, K):
        """config() at M x N x K: dp=waves as the number of tiles it is there."""
        cfg = self.config()
        if cfg is not None and cfg.kind == "splitk" and self.dp == "waves":
            cfg = tgemm.Config("splitk", cfg.defines, splits=cfg.splits,
                               dp=self.splitk_dp(((M + self.tile[0] - 1) // self.tile[0]) * ((N + self.tile[1] - 1) // self.tile[1])))
        return cfg

    def estimate(self, M, N, K):
        """tilec.gemm's cost model for this variant at M x N x K (us), or None."""
        cfg = self.config_at(M, N, K)
        return None if cfg is None else tgemm.estimate_us(cfg, M, N, K, SMS)


# ---- the correctness loop (--check) ----------------------------------------------------------

CHECK_SHAPES = {"cuda": ["M=512 N=512 K=512", "M=1000 N=1496 K=520", "M=300 N=696 K=8", "M=256 N=296 K=8192",
                         "M=129 N=264 K=64"],
                "sim": ["M=129 N=264 K=64", "M=300 N=296 K=8", "M=136 N=264 K=200"]}
GRID_SHAPE = {"cuda": "M=1000 N=1496 K=520", "sim": "M=300 N=520 K=200"}


def check_variants(variants, device):
    """`tilec run` of each distinct variant against the float64 reference; forced grids for the
    persistent kernels; compute-sanitizer on CUDA. Returns the number of failures."""
    fails = 0
    seen = set()
    san = shutil.which("compute-sanitizer") if device == "cuda" else None
    if device == "cuda" and not san:
        print("check: compute-sanitizer not found: the sanitizer runs are skipped")

    def one(label, extra, timeout):
        nonlocal fails
        try:
            p = subprocess.run(extra, capture_output=True, text=True, timeout=timeout)
            out, rc = p.stdout + p.stderr, p.returncode
        except subprocess.TimeoutExpired:
            out, rc = f"timed out after {timeout} s", 124
        ok = rc == 0 and "check: PASS" in out
        lines = out.splitlines()
        line = next((x for x in lines if "SUMMARY" in x), None) or next((x for x in lines if x.startswith("check:")),
                                                                         out.strip()[-200:])
        print(f"  {'ok  ' if ok else 'FAIL'} {label}: {line.strip()}")
        if not ok:
            fails += 1
            if rc != 0:
                print("\n".join("       " + x for x in out.strip().splitlines()[-6:]))
        sys.stdout.flush()

    for v in variants:
        if v.racy:
            print(f"check [{v.label}]: not checked (racy diagnostic)")
            continue
        key = (v.source, tuple(v.defines))
        if key in seen:
            continue
        seen.add(key)
        print(f"check [{v.label}] on {device}")
        base = v.args[:1] + ["run"] + v.args[1:] + ["--device", device]
        limit = 120 if device == "cuda" else 300

        def argv(shape):
            return [x for a in shape.split() for x in ("--arg", a)]
        for shape in CHECK_SHAPES[device]:
            one(shape, base + argv(shape) + ["--repeat", "3" if device == "cuda" else "1"], limit)
        grids = {"plain": (), "cluster": (2, 4, 6), "quad": (4, 8, 12)}.get(v.kind, (1, 2, 5))
        for g in grids:
            one(f"grid {g}, {GRID_SHAPE[device]}", base + argv(GRID_SHAPE[device]) + ["--grid", str(g), "--repeat", "1"], limit)
        if san:
            g = "8" if v.quad else "4" if v.cluster else "3"
            for tool in ("memcheck", "racecheck", "synccheck"):
                one(f"compute-sanitizer {tool}", [san, "--tool", tool, "--error-exitcode", "9"] + base +
                    argv("M=300 N=520 K=200") + ["--grid", g, "--repeat", "1"], 120)
    print(f"check: {fails} failed")
    return fails


# ---- timing ----------------------------------------------------------------------------------

def need_torch():
    """Import torch for timing, or say what is missing and exit."""
    global torch, SMS
    try:
        import torch as t
    except ImportError:
        sys.exit("bench/gemm.py: timing needs PyTorch with CUDA (python3 -m pip install torch); "
                 "--list-presets, --compile-only and --check-only run without it")
    if not t.cuda.is_available():
        sys.exit("bench/gemm.py: torch sees no CUDA device: timing needs one "
                 "(--compile-only and --check-only --device sim run without it)")
    torch = t
    torch.cuda.init()
    torch.zeros(1, device="cuda")
    SMS = torch.cuda.get_device_properties(0).multi_processor_count


FLUSH = None   # 256 MiB written before each timed launch: L2 (50 MiB) holds none of the operands


SPIN_CYCLES_PER_US = 2000   # torch.cuda._sleep counts SM clocks: the H100's 1980 MHz, rounded up (a
                            # slower clock makes the spin longer, never shorter than meant)


def time_one(fn, spin_us=50.0):
    """One launch between events. Before the start event the GPU is kept busy (an L2 flush, then a
    spin of spin_us) so that the host's time in fn (Python, torch's dispatcher, Triton's launcher,
    ctypes; both launches of a split-K) is hidden: the events see the kernels alone, for every
    contender alike, as long as the spin outlasts the host's time in fn (time_interleaved sees to it)."""
    global FLUSH
    if FLUSH is None:
        FLUSH = torch.empty(64 << 20, dtype=torch.int32, device="cuda")
    FLUSH.zero_()
    torch.cuda._sleep(int(spin_us * SPIN_CYCLES_PER_US))
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record()
    fn()
    e.record()
    e.synchronize()
    return s.elapsed_time(e)


class Timing:
    """time_interleaved's result: each contender's median time (ms), the host's time in one call of
    each (us, the longest of the warm-up's last two calls) and the spin every timed launch waited
    behind (us)."""

    def __init__(self, medians, host_us, spin_us):
        self.medians, self.host_us, self.spin_us = medians, host_us, spin_us


def time_interleaved(fns, reps):
    """Median times of several contenders measured in rounds (each round times every contender once,
    in turn), so that clock and temperature drift during the run reaches all of them alike. The
    warm-up measures the host's time in each contender's call; the spin before each timed launch is
    twice the longest of them plus 20 us (at least 50 us), so that the host's time is hidden for all:
    a contender of two launches (split-K) is timed as its kernels, not as the host's time between
    them. Python's garbage collector is off while timing (a collection inside a timed call would be
    host time the spin did not plan for)."""
    host = [0.0] * len(fns)
    for i, fn in enumerate(fns):
        for j in range(3):
            t0 = time.perf_counter()
            fn()
            if j:
                host[i] = max(host[i], (time.perf_counter() - t0) * 1e6)
    torch.cuda.synchronize()
    spin_us = min(max(50.0, 2 * max(host) + 20), 5000.0)
    ts = [[] for _ in fns]
    gc.collect()
    gc.disable()
    try:
        for _ in range(reps):
            for i, fn in enumerate(fns):
                ts[i].append(time_one(fn, spin_us))
    finally:
        gc.enable()
    return Timing([statistics.median(t) for t in ts], host, spin_us)


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

    def go(a, b, c):
        M, K = a.shape
        N = b.shape[0]
        mm[lambda meta: (triton.cdiv(M, meta["BM"]) * triton.cdiv(N, meta["BN"]),)](a, b, c, M, N, K)
    print(f"triton {triton.__version__}: plain tl.dot kernel ready")
    return ("Triton plain", go)


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

    def go(a, b, c):
        M, K = a.shape
        N = b.shape[0]
        dummy = [64, 64]
        ad = TensorDescriptor.from_tensor(a, dummy)
        bd = TensorDescriptor.from_tensor(b, dummy)
        cd = TensorDescriptor.from_tensor(c, dummy)
        mm_tma[lambda meta: (min(SMS, triton.cdiv(M, meta["BM"]) * triton.cdiv(N, meta["BN"])),)](ad, bd, cd, M, N, K, NSM=SMS)
    print(f"triton {triton.__version__}: persistent TMA kernel ready")
    return ("Triton persistent TMA", go)


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


def compare(variants, shapes, reps):
    """Every contender at every shape, one table per shape (the presets but `tune`)."""
    tritons = [t for t in (make_triton(), make_triton_persistent()) if t]
    torch.manual_seed(0)
    for shape in shapes:
        M, N, K = shape
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
                print(f"{M}x{N}x{K} {tname}: failed: {str(ex).splitlines()[0] if str(ex) else type(ex).__name__}")
                continue
            tcomp = (time.perf_counter() - t0) * 1e3
            err = rel_fro(ct, ref)
            rows.append((f"{tname} (1st call: autotune+compile {tcomp:.0f} ms)",
                         (lambda go, ct: lambda: go(a, b, ct))(triton_run, ct), err))
        rows += variant_rows(variants, a, b, ref, f"{M}x{N}x{K}")
        timing = time_interleaved([r[1] for r in rows], reps)
        times = timing.medians
        t_cublas = times[0]
        print(f"== {M} x {N} x {K}  (median of {reps} interleaved rounds; each launch behind a "
              f"{timing.spin_us:.0f} us spin, the host's longest call {max(timing.host_us):.0f} us)")
        for (name, _, err), t in zip(rows, times):
            tf = flop / (t * 1e-3) / 1e12
            print(f"  {name:60s} {t * 1e3:9.1f} us {tf:7.1f} TFLOP/s {tf / PEAK:6.3f} of peak "
                  f"{t_cublas / t:6.3f}x cuBLAS  err {err:.2e}")
        sys.stdout.flush()


def ratio(r):
    """A ratio column: "-" where the contender did not run (Triton's TMA descriptors need 16-byte rows)."""
    return f"{r:6.3f}x" if r > 0 else "     - "


def tune(variants, shapes, reps, ranked=True):
    """The autotuner: every variant checked and timed beside cuBLAS and Triton's persistent kernel,
    a ranked table per shape (ranked), then the best tilec variant per shape, with the geometric
    mean and the worst of the best ratios."""
    tp = make_triton_persistent()
    torch.manual_seed(1)
    best_rows = []
    host_max = []   # per shape: (the host's longest call in us, shape, contender, the spin in us)
    chosen_host = []   # the host's time in the chooser's call, per shape (us)
    same = []       # (shape, the chooser's time over that of the variant of the same configuration)
    for shape in shapes:
        M, N, K = shape
        a, b, ref, cublas = make_inputs(M, N, K)
        rows = [cublas]
        if tp and K % 8 == 0 and N % 8 == 0:   # TMA descriptors need 16-byte row strides
            ct = torch.empty_like(ref)
            tp[1](a, b, ct)
            torch.cuda.synchronize()
            if rel_fro(ct, ref) < 1e-2:
                rows.append(("Triton persistent TMA", lambda: tp[1](a, b, ct), 0.0))
        t_check = time.perf_counter()
        rows += variant_rows(variants, a, b, ref, f"{M}x{N}x{K}")
        cfg = tgemm.choose(M, N, K, SMS)   # what tilec.gemm.matmul runs at this shape, timed as its own row
        cc = torch.full(ref.shape, float("nan"), device="cuda", dtype=torch.bfloat16)
        tgemm.matmul(a, b, out=cc, config=cfg)
        torch.cuda.synchronize()
        est = {f"tilec [{v.label}]": v.estimate(M, N, K) for v in variants}
        est[f"chosen {cfg}"] = tgemm.estimate_us(cfg, M, N, K, SMS)
        if rel_fro(cc, ref) < 1e-2:
            rows.append((f"chosen {cfg}", (lambda cc, cfg: lambda: tgemm.matmul(a, b, out=cc, config=cfg))(cc, cfg), 0.0))
        else:
            print(f"{M}x{N}x{K} tilec.gemm {cfg}: FAIL rel. Frobenius error {rel_fro(cc, ref):.3g}")
        timing = time_interleaved([r[1] for r in rows], reps)
        times = timing.medians
        tune_s = time.perf_counter() - t_check
        slowest = max(range(len(rows)), key=lambda i: timing.host_us[i])
        host_max.append((timing.host_us[slowest], f"{M}x{N}x{K}", rows[slowest][0], timing.spin_us))
        flop = 2.0 * M * N * K
        order = sorted(range(len(rows)), key=lambda i: times[i])
        if ranked:
            print(f"== {M} x {N} x {K}: {len(rows) - 1} contenders checked and timed in {tune_s:.1f} s "
                  f"(median of {reps} interleaved rounds; each launch behind a {timing.spin_us:.0f} us spin; "
                  f"host: the host's time in one call)")
        for i in order if ranked else ():
            tf = flop / (times[i] * 1e-3) / 1e12
            model = f"   model {est[rows[i][0]]:7.1f} us" if est.get(rows[i][0]) else ""
            print(f"  {rows[i][0]:55s} {times[i] * 1e3:9.1f} us {tf:7.1f} TFLOP/s {tf / PEAK:6.3f} of peak "
                  f"{times[0] / times[i]:6.3f}x cuBLAS  host {timing.host_us[i]:5.0f} us{model}")
        tl = [i for i in order if rows[i][0].startswith("tilec")]
        tr = [i for i in order if rows[i][0].startswith("Triton")]
        ch = [i for i in order if rows[i][0].startswith("chosen")]
        twin = next((f"tilec [{v.label}]" for v in variants if v.config_at(M, N, K) == cfg), None)
        twin = next((i for i in range(len(rows)) if rows[i][0] == twin), None)
        if ch:
            chosen_host.append(timing.host_us[ch[0]])
            if twin is not None:
                same.append((f"{M}x{N}x{K}", times[ch[0]] / times[twin], rows[twin][0]))
        best_rows.append((f"{M}x{N}x{K}", rows[tl[0]][0] if tl else "-", times[0] / times[tl[0]] if tl else 0.0,
                          times[0] / times[tr[0]] if tr else 0.0, flop / (times[tl[0]] * 1e-3) / 1e12 if tl else 0.0,
                          rows[ch[0]][0][7:] if ch else "-", times[0] / times[ch[0]] if ch else 0.0))
        sys.stdout.flush()
        if not ranked:
            b = best_rows[-1]
            print(f"  {b[0]:20s} {b[1]:45s} {b[4]:7.1f} TFLOP/s {b[2]:6.3f}x cuBLAS   Triton persistent {ratio(b[3])}"
                  f"   chosen {b[6]:6.3f}x {b[5]}")
    print("== best tilec variant per shape (ratios to cuBLAS of the same interleaved run), and tilec.gemm's choice")
    for shape, name, r, rt, tf, cname, rc in best_rows:
        print(f"  {shape:20s} {name:45s} {tf:7.1f} TFLOP/s {r:6.3f}x cuBLAS   Triton persistent {ratio(rt)}"
              f"   chosen {rc:6.3f}x {cname}")

    def gmean(xs):
        return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else 0.0
    ok = [r for r in best_rows if r[2] > 0]
    if ok:
        worst = min(ok, key=lambda r: r[2])
        print(f"== {len(ok)} shapes: tilec (best variant per shape) geometric mean {gmean([r[2] for r in ok]):.3f}x cuBLAS, "
              f"worst {worst[2]:.3f}x at {worst[0]} ({worst[1]}); Triton persistent geometric mean "
              f"{gmean([r[3] for r in ok if r[3] > 0]):.3f}x over the {sum(r[3] > 0 for r in ok)} shapes it ran")
    if host_max:
        h = max(host_max)
        print(f"== the host's longest call: {h[0]:.0f} us ({h[2]} at {h[1]}), hidden behind a {h[3]:.0f} us spin; "
              f"the chooser's rows: up to {max(t for t in chosen_host) if chosen_host else 0:.0f} us")
    if same:
        worst = max(same, key=lambda r: r[1])
        print(f"== the chooser's row against the variant of the same configuration, where the preset has one: "
              f"{len(same)} shapes, time ratio {min(r[1] for r in same):.3f} .. {worst[1]:.3f} "
              f"(the most at {worst[0]}, {worst[2]})")
    okc = [r for r in best_rows if r[6] > 0]
    if okc:
        worst = min(okc, key=lambda r: r[6])
        print(f"== tilec.gemm (the chooser, one configuration per shape): geometric mean {gmean([r[6] for r in okc]):.3f}x "
              f"cuBLAS over {len(okc)} shapes, worst {worst[6]:.3f}x at {worst[0]} ({worst[5]})")


# ---- main ------------------------------------------------------------------------------------

def list_presets():
    for name, p in PRESETS.items():
        n = len(p.variants.split(";"))
        print(f"{name:10s} {p.about}")
        print(f"{'':10s} shapes {p.shapes}; {n} tilec variant{'s' if n > 1 else ''}, {p.reps} rounds"
              + ("; ranked" if p.mode == "tune" else "; best per shape" if p.mode == "sweep" else ""))
        if p.mode == "compare":
            print(f"{'':10s} variants: {p.variants}")


def parse_shapes(text):
    try:
        shapes = [tuple(int(x) for x in s.split("x")) for s in text.split(",")]
    except ValueError:
        shapes = []
    if not shapes or any(len(s) != 3 or min(s) < 1 for s in shapes):
        sys.exit(f"bench/gemm.py: --shapes {text}: expected MxNxK[,MxNxK...]")
    return shapes


def main():
    ap = argparse.ArgumentParser(description="tilec's sm_90a GEMM samples against cuBLAS and Triton, by preset "
                                             "(python3 bench/gemm.py --list-presets; docs/PERFORMANCE.md).")
    ap.add_argument("--preset", default="final", help="the measurement (default final; --list-presets)")
    ap.add_argument("--list-presets", action="store_true", help="print the presets and exit")
    ap.add_argument("--shapes", help="MxNxK,... instead of the preset's")
    ap.add_argument("--variants", help='"V;V;..." instead of the preset\'s (see the variant syntax in this file)')
    ap.add_argument("--reps", type=int, help="timed rounds instead of the preset's")
    ap.add_argument("--check", action="store_true", help="run the correctness loop on every variant before timing")
    ap.add_argument("--check-only", action="store_true", help="run the correctness loop instead of timing")
    ap.add_argument("--device", choices=("cuda", "sim"), default="cuda",
                    help="where --check runs (sim: the simulator, no GPU; timing is always on CUDA)")
    ap.add_argument("--compile-only", action="store_true", help="compile every variant, print the compile times")
    args = ap.parse_args()
    if args.list_presets:
        list_presets()
        return 0
    if args.preset not in PRESETS:
        sys.exit(f"bench/gemm.py: no preset {args.preset} (known: {', '.join(PRESETS)})")
    preset = PRESETS[args.preset]
    shapes = parse_shapes(args.shapes or preset.shapes)
    reps = args.reps or preset.reps
    if not os.access(TILEC, os.X_OK):
        sys.exit(f"bench/gemm.py: {TILEC} is not built (make; or TILEC=path/to/tilec)")
    try:
        variants = [Variant(v) for v in (args.variants or preset.variants).split(";")]
    except (ValueError, RewriteError, OSError) as ex:
        sys.exit(f"bench/gemm.py: {ex}")
    print(f"preset {args.preset}: {preset.about}")
    if args.device == "sim" and not (args.check or args.check_only):
        sys.exit("bench/gemm.py: --device sim is for --check/--check-only (timing runs on CUDA)")
    if args.check or args.check_only:
        if check_variants(variants, args.device):
            return 1
        if args.check_only or args.device == "sim":
            return 0
    if args.compile_only:
        have_ptxas = shutil.which(os.environ.get("PTXAS", "ptxas")) is not None
        failed = 0
        for var in variants:
            try:
                var.compile(cubin=have_ptxas)
            except (tilec.TileError, RuntimeError) as ex:
                print(f"tilec variant [{var.label}]: does not compile: {str(ex).strip().splitlines()[0]}")
                failed += 1
                continue
            cub = f", to cubin {var.compile_cubin_ms:.1f} ms" if have_ptxas else " (no ptxas: no cubin)"
            print(f"tilec variant [{var.label}]: tile {var.tile[0]} x {var.tile[1]}, to PTX {var.compile_ptx_ms:.1f} ms"
                  f"{cub} (in process; ptxas a process of its own), smem {var.smem} B, PTX {var.ptx_bytes} B")
        return 1 if failed else 0
    need_torch()
    print(f"device: {torch.cuda.get_device_name()}  torch {torch.__version__}  cuBLAS via torch.matmul")
    t0 = time.perf_counter()
    kept = []
    for var in variants:   # a configuration that does not compile (shared memory, a layout) is skipped, said so
        try:
            var.compile().load()
        except (tilec.TileError, RuntimeError) as ex:
            print(f"tilec variant [{var.label}]: skipped: {str(ex).strip().splitlines()[0]}")
            continue
        kept.append(var)
        print(f"tilec variant [{var.label}]: compile to PTX {var.compile_ptx_ms:.1f} ms in process, ptxas on it "
              f"{var.compile_cubin_ms:.1f} ms, smem {var.smem} B, PTX {var.ptx_bytes} B")
    if not kept:
        sys.exit("bench/gemm.py: no variant compiled")
    variants = kept
    if preset.mode != "compare":
        ptx_ms = sum(v.compile_ptx_ms for v in variants)
        cubin_ms = sum(v.compile_cubin_ms for v in variants)
        print(f"{len(variants)} tilec variants compiled: to PTX {ptx_ms:.0f} ms in all ({ptx_ms / len(variants):.1f} ms "
              f"each), to cubin with ptxas {cubin_ms:.0f} ms in all; {(time.perf_counter() - t0) * 1e3:.0f} ms wall "
              f"for compiling every variant (ptxas processes included)")
    if preset.mode == "compare":
        compare(variants, shapes, reps)
    else:
        tune(variants, shapes, reps, ranked=preset.mode == "tune")
    return 0


if __name__ == "__main__":
    sys.exit(main())
