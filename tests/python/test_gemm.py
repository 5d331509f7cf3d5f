"""tilec.gemm: the chooser's rule at the shapes it was measured on, and matmul on the simulator
against a float64 reference at ragged shapes for each kind of kernel it can choose."""
import os
import sys
import unittest

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import bf16_bits, bf16_value, fp8_bits, fp8_value  # noqa: E402
import tilec  # noqa: E402
import tilec.gemm as gemm  # noqa: E402


class Choose(unittest.TestCase):
    def test_small_m(self):
        """M <= 256: the narrowest of 64 x 64, 96, 128 and 160 tiles (one consumer warpgroup) that fits
        one wave of 132 SMs, then ping-pong for wide N, else the persistent kernel with 128 x 128
        tiles."""
        t64 = gemm.Config("plain", {"BM": 64, "BN": 64, "STAGES": 12})
        t128 = gemm.Config("plain", {"BM": 64, "BN": 128, "STAGES": 8})
        t96 = gemm.Config("plain", {"BM": 64, "BN": 96, "STAGES": 10})
        self.assertEqual(gemm.choose(128, 4096, 4096), t64)     # 128 tiles of 64 x 64, 64 of 64 x 128
        self.assertEqual(gemm.choose(128, 4096, 14336), t64)
        self.assertEqual(gemm.choose(128, 4224, 4096), t64)     # 132: still one wave
        self.assertEqual(gemm.choose(128, 4232, 4096), t96)     # 133 of 64 x 64, 90 of 64 x 96
        self.assertEqual(gemm.choose(128, 6144, 4096), t96)     # 128 tiles of 64 x 96 (192 of 64 x 64)
        self.assertEqual(gemm.choose(256, 3000, 2000), t96)
        self.assertEqual(gemm.choose(128, 8192, 8192), t128)
        self.assertEqual(gemm.choose(200, 4096, 4096), t128)    # 4 rows of 64 x 64 tiles: 256
        self.assertEqual(gemm.choose(128, 10240, 8192), gemm.Config("plain", gemm.SMALL_M[160]))   # 128 tiles
        self.assertEqual(gemm.choose(128, 12288, 8192), gemm.Config("persistent", {"BN": 128, "STAGES": 6}))
        self.assertEqual(gemm.choose(128, 14336, 4096), gemm.Config("pingpong"))
        self.assertEqual(gemm.choose(128, 8192, 8192, sms=64), gemm.Config("persistent", {"BN": 128, "STAGES": 6}))
        self.assertEqual(gemm.choose_fp8(128, 4096, 4096), gemm.Config("fp8_scaled", {"BM": 64, "BN": 64, "STAGES": 12}))

    def test_large_m(self):
        """The persistent kernel; 128 x 128 tiles only where their waves, at 0.56 the cost of a wave
        of 128 x 256 tiles, take less time."""
        g16 = gemm.Config("persistent", {"GROUP_M": 16})
        bn128 = gemm.Config("persistent", {"BN": 128, "STAGES": 6})
        self.assertEqual(gemm.choose(512, 4096, 4096), bn128)     # 1 wave of 64 tiles, or of 128 smaller ones
        # 1 wave of 96, or 2 of 192: 1.2; but one wave of 128 tiles of 128 x 192 (an accumulator's N a
        # multiple of 8) fills the SMs
        self.assertEqual(gemm.choose(512, 6144, 4096), gemm.Config("persistent", gemm.WIDE[192]))
        # 2 waves of 160 tiles of 128 x 256, 3 of 320 of 128 x 128, or 2 full waves of 256 of 128 x 160
        self.assertEqual(gemm.choose(512, 10240, 8192), gemm.Config("persistent", gemm.WIDE[160]))
        # one partial wave, misaligned rows: 24 or 30 quads of 128 x 128 tiles (2 x 2 clusters); with
        # 32 quads 128 x 192 tiles rather than 128 x 128, any K
        self.assertEqual(gemm.choose(1000, 1496, 1000), gemm.Config("quad"))
        self.assertEqual(gemm.choose(1100, 1496, 1000), gemm.Config("quad"))
        self.assertEqual(gemm.choose(1100, 1496, 3000), gemm.Config("quad"))   # long K
        self.assertEqual(gemm.choose(1000, 2000, 3000), gemm.Config("persistent", gemm.WIDE[192]))
        self.assertNotIn(96, gemm.WIDE)
        # 2 waves of 224 tiles, or 4 of 448 smaller ones (2.4); 256 tiles of 128 x 224 fill 2 waves
        self.assertEqual(gemm.choose(512, 14336, 4096), gemm.Config("persistent", gemm.WIDE[224]))
        # 4 waves, or 7 smaller ones (3.92); 512 tiles of 128 x 224 fill 4 waves
        self.assertEqual(gemm.choose(512, 28672, 8192), gemm.Config("persistent", gemm.WIDE[224]))
        self.assertEqual(gemm.choose_fp8(512, 28672, 8192), gemm.Config("fp8_scaled", {"BN": 128, "STAGES": 6}))
        self.assertEqual(gemm.choose_fp8(128, 6144, 4096), gemm.Config("fp8_scaled", {"BM": 64, "BN": 128, "STAGES": 8}))
        self.assertEqual(gemm.choose(512, 8192, 28672), g16)      # 1 wave, or 2 smaller ones: 1.12
        self.assertEqual(gemm.choose(2048, 4096, 4096), g16)      # 2 waves, or 4 smaller ones: 2.24
        self.assertEqual(gemm.choose(4096, 4096, 4096), g16)
        # 55 waves of 128 x 256 tiles, or 109 of smaller ones (the last wave split in slices, below)
        self.assertEqual(int(gemm.choose(8192, 28672, 8192).defines.get("BN", 256)), 256)

    def test_last_wave(self):
        """Many waves of 128 x 256 tiles with the last at most half full (K >= 4096): the whole waves
        whole, the last wave's tiles in slices that fill the SMs (at most 4); not where the last wave
        is fuller, there are few waves, or K is short."""
        t = gemm.TAIL["defines"]
        self.assertEqual(gemm.choose(8192, 14336, 4096), gemm.Config("splitk", t, splits=4, dp=27 * 132))   # 20 left
        self.assertEqual(gemm.choose(8192, 10240, 8192), gemm.Config("splitk", t, splits=2, dp=19 * 132))   # 52 left
        g16 = gemm.Config("persistent", {"GROUP_M": 16})
        self.assertEqual(gemm.choose(8192, 8192, 8192), g16)     # 15.5 waves: 68 left
        self.assertEqual(gemm.choose(8192, 4096, 4096), g16)     # 7.8 waves
        self.assertEqual(gemm.choose(8192, 14336, 2048), g16)    # short K
        self.assertEqual(gemm.choose(2048, 28672, 8192), g16)    # 13.6 waves, the last 58% full

    def test_one_wave(self):
        """One partial wave of 128 x 128 tiles: with aligned rows the narrowest ONE_WAVE width whose
        tiles fit the SMs, whatever K; with misaligned rows 128 x 128 tiles where they number at most
        MISALIGNED_FILL of the SMs, else the quad kernel where its quads number at most QUAD_FILL of
        the clusters of 4, else 128 x 192, whatever K."""
        ow = {w: gemm.Config("persistent", gemm.ONE_WAVE[w]) for w in gemm.ONE_WAVE}
        w192 = gemm.Config("persistent", gemm.WIDE[192])
        self.assertEqual(gemm.choose(1024, 1024, 1024), ow[64])     # 128 tiles of 128 x 64
        self.assertEqual(gemm.choose(1024, 1536, 1024), ow[96])     # 192 of 128 x 64; 128 of 128 x 96
        self.assertEqual(gemm.choose(1536, 1024, 1536), ow[96])     # 132 tiles: exactly one wave
        self.assertEqual(gemm.choose(640, 2560, 2048), ow[128])     # 128 x 96 would be 135 tiles
        self.assertEqual(gemm.choose(2048, 1024, 2048), ow[128])
        self.assertEqual(gemm.choose(1024, 1024, 1024, sms=64), ow[128])   # fewer SMs: 64 tiles fit
        self.assertEqual(gemm.choose(1024, 1536, 4096), ow[96])     # long K too
        self.assertEqual(gemm.choose(512, 2048, 8192), ow[64])      # not split: 128 tiles fill the SMs
        self.assertEqual(gemm.choose(1000, 1000, 1000), ow[128])    # misaligned: 64 tiles
        self.assertEqual(gemm.choose(800, 1600, 1000), gemm.Config("quad"))   # 91 tiles: 0.69 of the SMs; 28 quads
        self.assertEqual(gemm.choose(900, 1800, 1000), w192)        # 120 tiles, 32 quads
        self.assertEqual(gemm.choose(1200, 1000, 1200), ow[128])    # 80 tiles
        self.assertEqual(gemm.choose(1000, 1000, 4000), ow[128])    # long K too
        quad = gemm.Config("quad")
        self.assertEqual(gemm.choose(1000, 1496, 3000), quad)
        self.assertEqual(gemm.choose(1000, 1496, 1000), quad)       # 96 tiles of 128 x 128: 24 quads
        self.assertEqual(gemm.choose(1000, 1496, 1000, sms=100), w192)   # 24 quads: more than 0.92 of 25
        self.assertEqual(gemm.choose(1000, 2000, 1000), w192)       # 32 quads
        # scaled_mm: 128 x 64 or 128 x 128 (FP8_ONE_WAVE) with 128-byte fp8 rows, else 128 x 192
        f8 = lambda bm, bn: gemm.Config("fp8_scaled", gemm.FP8_DEFINES[(bm, bn)])   # noqa: E731
        self.assertEqual(gemm.choose_fp8(1024, 1024, 1024), f8(128, 64))
        self.assertEqual(gemm.choose_fp8(1024, 1536, 1024), f8(128, 128))   # 128 x 96 is not weighed
        self.assertEqual(gemm.choose_fp8(1024, 1024, 1024 + 64), f8(128, 192))   # 64-byte offsets

    def test_misaligned_rows(self):
        """M > 256 with rows of A and B that are not a multiple of 128 bytes (K % 64 != 0) and at least
        half a wave of 128 x 256 tiles: the cluster kernel, whatever the tile rules chose; aligned
        rows, few tiles or few rows keep their choice."""
        cl = gemm.Config("cluster")
        self.assertEqual(gemm.choose(3000, 5000, 1064), cl)        # 480 tiles of 128 x 256
        self.assertEqual(gemm.choose(3000, 5000, 1088), gemm.Config("persistent", {"GROUP_M": 16}))   # 2176-byte rows
        self.assertEqual(gemm.choose(1024, 4096, 1000), cl)        # 128 tiles
        self.assertEqual(gemm.choose(1024, 4096, 1024), gemm.Config("persistent", {"GROUP_M": 16}))
        self.assertEqual(gemm.choose(8192, 8192, 2008), cl)        # 31 waves: no narrower tile fills them better
        self.assertEqual(gemm.choose(1000, 1496, 1000), gemm.Config("quad"))   # 48 tiles of 128 x 256
        self.assertEqual(gemm.choose(256, 3000, 2000).kind, "plain")
        # narrower cluster tiles where the model has them fill the waves better (WIDE_GAIN)
        cw = {w: gemm.Config("cluster", gemm.CLUSTER_WIDE[w]) for w in gemm.CLUSTER_WIDE}
        self.assertEqual(gemm.choose(2048, 5000, 3000), cw[224])   # 368 tiles (2.8 waves), not 320 (2.4)
        self.assertEqual(gemm.choose(2000, 1496, 1000), cw[192])   # 128 tiles (one wave), not 96
        self.assertEqual(gemm.choose(1536, 4000, 2000), cw[192])   # 252 tiles (1.9 waves), not 192 (1.5)
        self.assertEqual(gemm.choose(1500, 3000, 1000), cw[160])   # 228 tiles (1.7 waves), not 144 (1.1)
        # 5 M tiles make 3 pairs: 66 pairs of 128 x 192 (one wave), where 130 single tiles of 128 x 160
        # would be 78 pairs (two rounds)
        self.assertEqual(gemm.choose(520, 4096, 1000), cw[192])
        # fp8 keeps 128 x 256 tiles there (the cluster widths were not measured in fp8)
        self.assertEqual(gemm.choose_fp8(2000, 1496, 1024 + 64 + 16), gemm.Config("fp8_scaled", gemm.FP8_DEFINES[(128, 256)]))
        self.assertEqual(gemm.choose_fp8(3000, 5008, 1072), gemm.Config("fp8_scaled", gemm.FP8_DEFINES[(128, 256)]))

    def test_splitk(self):
        """Split-K where the cost model puts it below 0.9 of the choice without it: few tiles with long
        K and misaligned rows (512 x 2048 x 8208: 64 tiles of 128 x 128, each in 2 slices; with aligned
        rows 128 tiles of 128 x 64 fill the SMs instead, ONE_WAVE), a last partial wave of long-K tiles
        (512 x 11264 x 16384: one whole wave of 128 x 256 tiles, the other 44 in 3 slices). Not where 128 x 160 tiles
        fill two waves (512 x 10240 x 8192, measured on the H100: 0.966x cuBLAS against the split's
        0.922x), nor where a launch's fixed cost and the reduction outweigh the idle SMs (M = 128, K =
        4096), nor where reading A and B bounds the time (M = 128, K = 14336 or 28672), nor where
        the tiles already fill their waves."""
        plain64 = gemm.Config("plain", {"BM": 64, "BN": 128, "STAGES": 8})
        self.assertEqual(gemm.choose(512, 2048, 8192 + 16), gemm.Config("splitk", {"BN": 128, "STAGES": 5}, splits=2))
        self.assertEqual(gemm.choose(512, 11264, 16384),
                         gemm.Config("splitk", {"BN": 256, "CW": 32, "PW": 16, "STAGES": 4}, splits=3, dp=132))
        self.assertEqual(gemm.choose(512, 10240, 8192).kind, "persistent")
        self.assertEqual(gemm.choose(128, 4096, 4096).kind, "plain")
        self.assertEqual(gemm.choose(128, 4096, 14336).kind, "plain")
        self.assertEqual(gemm.choose(128, 8192, 28672), plain64)
        self.assertEqual(gemm.choose(512, 6144, 4096).kind, "persistent")   # not split
        self.assertEqual(gemm.choose(3000, 5000, 1088), gemm.Config("persistent", {"GROUP_M": 16}))
        self.assertEqual(gemm.choose(8192, 8192, 8192).kind, "persistent")
        c = gemm.Config("splitk", splits=3)
        self.assertEqual((c.splits, c.dp), (3, 0))
        self.assertLess(gemm.estimate_us(gemm.choose(512, 2048, 8192), 512, 2048, 8192),
                        0.9 * gemm.estimate_us(gemm.Config("persistent", {"BN": 128, "STAGES": 6}), 512, 2048, 8192))
        with self.assertRaises(ValueError):
            gemm.Config("persistent", splits=2)
        with self.assertRaises(ValueError):
            gemm.Config("splitk", splits=0)

    def test_ragged_n_and_errors(self):
        self.assertEqual(gemm.choose(1000, 1001, 512).kind, "plain")   # C rows not 16-byte multiples: no TMA store
        with self.assertRaises(ValueError):
            gemm.choose(0, 128, 128)
        with self.assertRaises(ValueError):
            gemm.Config("nope")


class Matmul(unittest.TestCase):
    def setUp(self):
        self.rng = np.random.default_rng(7)

    def run_one(self, M, N, K, config=None):
        a = bf16_bits(self.rng.uniform(-1, 1, (M, K)))
        b = bf16_bits(self.rng.uniform(-1, 1, (N, K)))
        c = np.full((M, N), 0x7FC0, np.uint16)   # poisoned with a NaN
        out = gemm.matmul(a, b, out=c, config=config, device="sim")
        self.assertIs(out, c)
        want = bf16_value(a).astype(np.float64) @ bf16_value(b).astype(np.float64).T
        got = bf16_value(c).astype(np.float64)
        self.assertTrue(np.isfinite(got).all(), "elements of C were not written")
        self.assertLess(np.linalg.norm(got - want) / np.linalg.norm(want), 2.0 ** -8)

    def test_chosen_small_m(self):
        self.assertEqual(gemm.choose(130, 200, 72).kind, "plain")
        self.run_one(130, 200, 72)

    def test_persistent_bn128(self):
        self.run_one(300, 136, 80, gemm.Config("persistent", {"BN": 128, "STAGES": 6}))

    def test_pingpong_and_group_m(self):
        self.run_one(200, 264, 64, gemm.Config("pingpong"))
        self.run_one(260, 512, 48, gemm.Config("persistent", {"GROUP_M": 16}))

    def test_cluster(self):
        """The cluster kind (2-CTA clusters sharing B): an odd number of M tiles (the last pair's
        second tile past M), K not a multiple of 64, and its grid of clusters."""
        self.run_one(300, 264, 200, gemm.Config("cluster"))

    def test_quad(self):
        """The quad kind (2 x 2 clusters sharing A along N and B along M): quads with tiles past M and
        N, K not a multiple of 64, and its grid of clusters of 4."""
        self.run_one(300, 264, 200, gemm.Config("quad"))
        self.run_one(130, 520, 72, gemm.Config("quad"))

    def test_splitk(self):
        """Both launches of the splitk sample (the GEMM, then the reduction of the slices), through
        NumPy arrays on the simulator: every tile split, more slices than column boxes, whole tiles
        and split ones together, no split tile (no reduction), 128 x 256 tiles; and the result does
        not depend on the grid the GEMM runs on."""
        self.run_one(200, 136, 264, gemm.Config("splitk", splits=3))
        self.run_one(130, 264, 72, gemm.Config("splitk", splits=4, dp=1))
        self.run_one(130, 264, 200, gemm.Config("splitk", splits=1, dp=6))
        self.run_one(130, 264, 200, gemm.Config("splitk", {"BN": 256, "STAGES": 3}, splits=2))

    def test_repeated_shape_is_planned_once(self):
        """matmul chooses a shape's configuration and makes its split-K workspace on the first call
        only: a repeated shape launches and nothing else, a shape with the same split tiles shares
        the workspace, and forget() starts over."""
        made = {"choose": 0, "workspace": 0}
        choose, workspace = gemm.choose, gemm.workspace

        def counting_choose(*args, **kw):
            made["choose"] += 1
            return gemm.Config("splitk", splits=2)

        def counting_workspace(*args, **kw):
            made["workspace"] += 1
            return workspace(*args, **kw)
        gemm.forget()
        gemm.choose, gemm.workspace = counting_choose, counting_workspace
        self.addCleanup(setattr, gemm, "choose", choose)
        self.addCleanup(setattr, gemm, "workspace", workspace)
        self.addCleanup(gemm.forget)
        for _ in range(3):
            self.run_one(200, 136, 264)
        self.assertEqual(made, {"choose": 1, "workspace": 1})
        self.run_one(150, 136, 264)   # the same 2 x 2 tiles of 128 x 128: the same workspace
        self.assertEqual(made, {"choose": 2, "workspace": 1})
        gemm.forget()
        self.run_one(200, 136, 264)
        self.assertEqual(made, {"choose": 3, "workspace": 2})

    def test_scaled_mm_fp8(self):
        """fp8 inputs with row and column scales: c = sa[i] sb[j] (A B^T)[i, j], the persistent kernel
        on the simulator's SM count."""
        M, N, K = 150, 136, 96
        a = fp8_bits(self.rng.uniform(-1, 1, (M, K)), False)
        b = fp8_bits(self.rng.uniform(-1, 1, (N, K)), False)
        sa = self.rng.uniform(0.5, 2, M).astype(np.float32)
        sb = self.rng.uniform(0.5, 2, N).astype(np.float32)
        c = gemm.scaled_mm(a, b, sa, sb, device="sim")
        want = (fp8_value(a, False) @ fp8_value(b, False).T) * sa[:, None].astype(np.float64) * sb[None, :]
        got = bf16_value(c).astype(np.float64)
        self.assertLess(np.linalg.norm(got - want) / np.linalg.norm(want), 2.0 ** -8)
        self.assertEqual(gemm.choose_fp8(128, 8192, 8192), gemm.Config("fp8_scaled", {"BM": 64, "BN": 128, "STAGES": 8}))
        self.assertEqual(gemm.choose_fp8(128, 14336, 4096), gemm.Config("fp8_scaled", {"BN": 128, "STAGES": 6}))
        self.assertEqual(gemm.choose_fp8(4096, 4096, 4096), gemm.Config("fp8_scaled", {"GROUP_M": 16}))
        self.assertEqual(gemm.choose_fp8(512, 6144, 4096), gemm.Config("fp8_scaled", gemm.FP8_DEFINES[(128, 192)]))
        with self.assertRaises(ValueError):
            gemm.scaled_mm(a, b, sa[:10], sb, device="sim")

    def test_scaled_mm_fp8_splitk(self):
        """fp8 split-K: every tile in 3 slices of K (ragged: 5 column boxes of 128), the slices added
        in order and scaled by the third kernel; e5m2 B. Against float64, and dp is refused."""
        M, N, K = 150, 136, 560
        a = fp8_bits(self.rng.uniform(-1, 1, (M, K)), False)
        b = fp8_bits(self.rng.uniform(-1, 1, (N, K)), True)
        sa = self.rng.uniform(0.5, 2, M).astype(np.float32)
        sb = self.rng.uniform(0.5, 2, N).astype(np.float32)
        # NumPy arrays of fp8 bits are e4m3 unless the configuration says otherwise
        cfg = gemm.Config("fp8_splitk", {"BN": 64, "STAGES": 8, "CW": 32, "PW": 16, "TB": "e5m2"}, splits=3)
        self.addCleanup(gemm.forget)
        c = gemm.scaled_mm(a, b, sa, sb, config=cfg, device="sim")
        want = (fp8_value(a, False) @ fp8_value(b, True).T) * sa[:, None].astype(np.float64) * sb[None, :]
        got = bf16_value(c).astype(np.float64)
        self.assertLess(np.linalg.norm(got - want) / np.linalg.norm(want), 2.0 ** -8)
        self.assertIn("splits=3 dp=0", repr(cfg))
        with self.assertRaises(ValueError):
            gemm.Config("fp8_splitk", splits=2, dp=1)
        with self.assertRaises(ValueError):
            gemm.scaled_mm(a, b, sa, sb, config=gemm.Config("splitk"), device="sim")

    def test_scaled_mm_fp8_narrow(self):
        """fp8 with few rows on 2-CTA clusters sharing A: an odd number of 32-column tiles (the last
        pair's second tile past N) and two rows of tiles, against float64."""
        M, N, K = 150, 200, 272
        a = fp8_bits(self.rng.uniform(-1, 1, (M, K)), False)
        b = fp8_bits(self.rng.uniform(-1, 1, (N, K)), False)
        sa = self.rng.uniform(0.5, 2, M).astype(np.float32)
        sb = self.rng.uniform(0.5, 2, N).astype(np.float32)
        self.addCleanup(gemm.forget)
        c = gemm.scaled_mm(a, b, sa, sb, config=gemm.Config("fp8_narrow"), device="sim")
        want = (fp8_value(a, False) @ fp8_value(b, False).T) * sa[:, None].astype(np.float64) * sb[None, :]
        got = bf16_value(c).astype(np.float64)
        self.assertLess(np.linalg.norm(got - want) / np.linalg.norm(want), 2.0 ** -8)

    def test_errors(self):
        a = np.zeros((64, 60), np.uint16)
        with self.assertRaises(ValueError):
            gemm.matmul(a, np.zeros((64, 64), np.uint16), device="sim")   # K differs
        with self.assertRaises(ValueError):
            gemm.matmul(a, np.zeros((64, 60), np.uint16), device="sim")   # K = 60: not a multiple of 8
        with self.assertRaises(ValueError):
            gemm.matmul(np.zeros((64, 64), np.uint16), np.zeros((60, 64), np.uint16), device="sim",
                        config=gemm.Config("persistent"))               # N = 60 with a TMA store of C


class Profile(unittest.TestCase):
    """bench/gemm_profile.py (the launches a profiler measures) on the simulator: a configuration
    runs and its result is checked; a malformed one is refused with a message."""
    SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench", "gemm_profile.py")

    def run_script(self, *args):
        import subprocess
        return subprocess.run([sys.executable, self.SCRIPT] + list(args), capture_output=True, text=True, timeout=300)

    def test_runs_and_checks(self):
        p = self.run_script("300x264x200", "cluster", "--device", "sim", "--launches", "1")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("Config(cluster) on sim, 1 launches: relative Frobenius error", p.stdout)

    def test_refuses(self):
        for args, msg in ((("300x264", "cluster"), "the shape is MxNxK"),
                          (("300x264x200", "persistent", "BN"), "is not NAME=VALUE"),
                          (("300x264x200", "fp8_scaled"), "not cublas, chosen or a bf16 kind"),
                          (("300x264x200", "cublas", "--device", "sim"), "cublas runs on CUDA only")):
            p = self.run_script(*args)
            self.assertEqual(p.returncode, 1, args)
            self.assertIn(msg, p.stdout + p.stderr, args)


class Phases(unittest.TestCase):
    """bench/gemm_phases.py (the persistent or the cluster sample with clock() timestamps per tile) on the
    simulator: the instrumented copy still computes C, every tile is recorded and the phases are
    printed; a grid smaller than the tiles gives the later tiles' row too."""
    SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench", "gemm_phases.py")

    def run_script(self, *args):
        import subprocess
        return subprocess.run([sys.executable, self.SCRIPT] + list(args), capture_output=True, text=True, timeout=600)

    def test_phases(self):
        p = self.run_script("130x264x72", "BN=128", "STAGES=6", "--grid", "2", "--device", "sim")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("130x264x72, 128 x 128 tiles (6), grid 2, BN=128 STAGES=6 on sim: relative Frobenius error", p.stdout)
        for row in ("start to first stage (first tiles)", "previous tile's end to first stage",
                    "main loop (first stage to last mma)", "epilogue (last mma to last store)"):
            self.assertIn(row, p.stdout)

    def test_cluster(self):
        """The cluster sample: one row per CTA of each tile pair (an odd count of M tiles: the last
        pair's second tile past M is recorded too), one cluster walking six pairs."""
        p = self.run_script("300x264x72", "--kernel", "cluster", "BN=128", "STAGES=6", "--grid", "2", "--device", "sim")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("300x264x72, 128 x 128 tiles (12), grid 2, BN=128 STAGES=6 on sim: relative Frobenius error", p.stdout)
        self.assertIn("previous tile's end to first stage", p.stdout)

    def test_refuses(self):
        for args, msg in ((("300x264",), "the shape is MxNxK"), (("300x264x200", "BN"), "is not NAME=VALUE"),
                          (("300x264x200", "--flush", "--device", "sim"), "--flush needs --device cuda")):
            p = self.run_script(*args)
            self.assertNotEqual(p.returncode, 0, args)
            self.assertIn(msg, p.stdout + p.stderr, args)


if __name__ == "__main__":
    unittest.main()
