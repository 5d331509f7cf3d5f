"""The samples of samples/ that have a C reference (samples/ref/refs.c) and that test_tilec.py does
not launch, each compiled and launched through the tilec Python package on the simulator with NumPy
inputs and checked against a NumPy reference in float64: the scalar row softmax, softmax_bf16,
rmsnorm, the persistent TMA copy, the cluster multicast, the three kernels scheduled by cluster
launch control, the persistent, ping-pong and cluster GEMMs for the H100, the sm_100a GEMMs (one
CTA and CTA pairs), the fp8 conversions and fp8 GEMM, the other mma operand forms (B stored [K, N],
A stored [K, M], A scaled in registers) and the AMD warp-pipelined GEMM (gfx942).

Every output starts poisoned (NaN, or all bits set) so that a kernel that leaves it unwritten
fails; sizes are ragged against the tiles and small enough for the simulator. bf16 and fp8 travel
as their bits (uint16, uint8 arrays). Run by `make check` (make python-test) with PYTHONPATH=python
and TILEC_LIB set to the build's libtile.so."""
import unittest

import numpy as np

import tilec

from common import bf16_bits, bf16_value, fp8_bits, fp8_value, sample


BF16_NAN = 0x7FC0


def blocks(n, per):
    return (n + per - 1) // per


class Samples(unittest.TestCase):
    def setUp(self):
        self.rng = np.random.default_rng(20240611)

    def bf16(self, shape, lo=-1.0, hi=1.0):
        return bf16_bits(self.rng.uniform(lo, hi, shape))

    def assert_gemm(self, c, want, atol_extra=0.0):
        """A bf16 C against the float64 product: every element within 2^-6 relative plus 1e-3 (the two
        bf16 roundings, each at most 2^-8 relative, and the f32 sums) plus atol_extra, and the
        relative Frobenius error within 2^-8 (one bf16 rounding), as refs.c bounds its GEMMs."""
        got = bf16_value(c).astype(np.float64)
        self.assertTrue(np.isfinite(got).all(), "C has unwritten (NaN) elements")
        bad = np.abs(got - want) > 2.0 ** -6 * np.abs(want) + 1e-3 + atol_extra
        self.assertFalse(bad.any(), "C differs at %s" % (np.argwhere(bad)[:5].tolist(),))
        self.assertLess(np.linalg.norm(got - want) / np.linalg.norm(want), 2.0 ** -8)

    # ---- rows ----

    def test_row_softmax_scalar(self):
        """One thread per row (ragged: 200 rows over blocks of 128); f32 exp of values in [-8, 8)."""
        k = tilec.compile(sample("row_softmax_scalar.tile"))["row_softmax"]
        rows, cols = 200, 37
        x = self.rng.uniform(-8, 8, (rows, cols)).astype(np.float32)
        y = np.full_like(x, np.nan)
        k(x, y, rows, cols, grid=blocks(rows, k.block[0]))
        xd = x.astype(np.float64)
        e = np.exp(xd - xd.max(axis=1, keepdims=True))
        # f32 exp, a 37-term f32 sum and one division: a few ulp, far inside 1e-5 relative
        np.testing.assert_allclose(y, e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-9)

    def test_softmax_bf16(self):
        """softmax_bf16 on a row that fits one BN = 1024 chunk and on rows read in three chunks (the
        online softmax), the last chunk ragged."""
        k = tilec.compile(sample("softmax.tile"))["softmax_bf16"]
        for rows, cols in ((3, 700), (2, 2500)):
            with self.subTest(cols=cols):
                x = self.bf16((rows, cols), -8, 8)
                y = np.full((rows, cols), BF16_NAN, np.uint16)
                k(x, y, rows, cols, grid=rows)
                xd = bf16_value(x).astype(np.float64)
                e = np.exp(xd - xd.max(axis=1, keepdims=True))
                want = e / e.sum(axis=1, keepdims=True)
                # f32 math, then one rounding to bf16 (2^-9 relative): 2^-7 leaves room for the f32
                # exp and sums; tiny probabilities are absolute
                np.testing.assert_allclose(bf16_value(y), want, rtol=2.0 ** -7, atol=1e-12)

    def test_rmsnorm(self):
        """rmsnorm on rows of random offset and scale: one chunk (cols <= BN), and with -DBN=1024 rows
        read twice in chunks, the last ragged."""
        for defines, rows, cols in (({}, 3, 1000), ({"BN": 1024}, 2, 2500)):
            with self.subTest(defines=defines, cols=cols):
                k = tilec.compile(sample("rmsnorm.tile"), defines=defines)["rmsnorm"]
                off = self.rng.uniform(-4, 4, (rows, 1))
                sc = self.rng.uniform(0.25, 4, (rows, 1))
                x = bf16_bits(off + sc * self.rng.uniform(-1, 1, (rows, cols)))
                g = self.bf16(cols, 0.5, 1.5)
                y = np.full((rows, cols), BF16_NAN, np.uint16)
                eps = 1e-5
                k(x, g, y, rows, cols, eps, grid=rows)
                xd = bf16_value(x).astype(np.float64)
                want = xd / np.sqrt((xd * xd).mean(axis=1, keepdims=True) + eps) * bf16_value(g)
                # bf16 output (2^-9 relative) after f32 statistics; near zero, absolute
                np.testing.assert_allclose(bf16_value(y), want, rtol=2.0 ** -7, atol=2.0 ** -7)

    # ---- TMA, clusters and cluster launch control ----

    def test_tma_copy_persistent(self):
        """3 persistent blocks walk 21 boxes (7 each: the 6-stage ring wraps), partial boxes at both
        edges; the copy is bit for bit."""
        k = tilec.compile(sample("tma_copy_persistent.tile"))["tma_copy_persistent"]
        M, N = 300, 400
        bm, bn = k.params[0].box
        self.assertEqual(blocks(M, bm) * blocks(N, bn), 21)
        src = self.rng.integers(0, 1 << 16, (M, N), dtype=np.uint16)
        dst = np.full((M, N), 0xFFFF, np.uint16)
        k(src, dst, M, N, grid=3)
        self.assertTrue(np.array_equal(src, dst))

    def test_cluster_multicast(self):
        """y = x + bias[i % BM] with the bias tile multicast to clusters of 2 and (-DCLUSTER=4) of 4;
        the grid is rounded up to whole clusters. One f32 add per element: exact."""
        for cl in (2, 4):
            with self.subTest(cluster=cl):
                k = tilec.compile(sample("cluster_multicast.tile"), defines={"CLUSTER": cl})["cluster_multicast"]
                self.assertEqual(k.cluster[0], cl)
                M, N = 150, 100
                bm, bn = k.params[0].box
                x = self.rng.uniform(-100, 100, (M, N)).astype(np.float32)
                bias = self.rng.uniform(-100, 100, (bm, N)).astype(np.float32)
                y = np.full((M, N), np.nan, np.float32)
                k(x, bias, y, M, N, bm, grid=(blocks(blocks(M, bm), cl) * cl, blocks(N, bn)))
                want = x.astype(np.float64) + bias.astype(np.float64)[np.arange(M) % bm]
                np.testing.assert_array_equal(y, want.astype(np.float32))

    def test_persistent_scale(self):
        """y = a * x with one CTA per tile of 1024, clusters of 1 and (-DCLUSTER=2) of 2 cancelled by
        cluster launch control; every tile of the grid is processed exactly once. One f32 product per
        element: exact."""
        for cl in (1, 2):
            with self.subTest(cluster=cl):
                k = tilec.compile(sample("persistent_scale.tile"), defines={"CLUSTER": cl})["persistent_scale"]
                n = 3000
                tiles = blocks(blocks(n, 1024), cl) * cl
                x = self.rng.uniform(-10, 10, n).astype(np.float32)
                y = np.full(n, np.nan, np.float32)
                count = np.zeros(tiles, np.int32)
                a = float(np.float32(self.rng.uniform(-2, 2)))
                k(x, y, count, n, a, grid=tiles)
                np.testing.assert_array_equal(y, (a * x.astype(np.float64)).astype(np.float32))
                np.testing.assert_array_equal(count, np.ones(tiles, np.int32))

    def test_persistent_rowsum(self):
        """Row blocks of 128 summing nks[t] boxes of 32 columns, box k being columns (k % KB) * 32 ..:
        one box, every box, and twice round plus one (K = 100: the last box has 4 columns)."""
        k = tilec.compile(sample("persistent_rowsum.tile"))["persistent_rowsum"]
        M, K = 300, 100
        bm, bk = k.params[0].box
        kb = blocks(K, bk)
        nks = self.rng.permutation(np.array([1, kb, 2 * kb + 1], np.int32))
        self.assertEqual(len(nks), blocks(M, bm))
        x = self.rng.uniform(-1, 1, (M, K)).astype(np.float32)
        out = np.full(M, np.nan, np.float32)
        k(x, out, nks, M, K, grid=len(nks))
        # times[t, j]: how often row block t adds column j
        times = np.zeros((len(nks), K))
        for t, nk in enumerate(nks):
            for b in range(nk):
                times[t, (b % kb) * bk:(b % kb + 1) * bk] += 1
        rt = times[np.arange(M) // bm]
        xd = x.astype(np.float64)
        want = (xd * rt).sum(axis=1)
        # a left-to-right f32 sum of n terms is within n * 2^-24 * sum |terms| of the exact one
        bound = rt.sum(axis=1) * 2.0 ** -24 * (np.abs(xd) * rt).sum(axis=1)
        self.assertTrue(np.all(np.abs(out - want) <= bound))

    def test_persistent_lcg(self):
        """8 * nit[t] steps of z = z * 1664525 + 1013904223 (mod 2^32) per element of tile t, nit
        ragged (1, 2, 3 and 24 units), n = 1000 (the last tile partial); each tile once. Exact."""
        k = tilec.compile(sample("persistent_lcg.tile"))["persistent_lcg"]
        n = 1000
        tiles = blocks(n, k.block[0])
        x = self.rng.integers(-2 ** 31, 2 ** 31, n, dtype=np.int32)
        nit = self.rng.permutation(np.array([24, 1, 2, 3], np.int32))
        self.assertEqual(len(nit), tiles)
        y = np.full(n, -1, np.int32)
        count = np.zeros(tiles, np.int32)
        k(x, y, nit, count, n, grid=tiles)
        steps = 8 * nit[np.arange(n) // k.block[0]].astype(np.int64)
        z = x.view(np.uint32).astype(np.uint64)
        for s in range(int(steps.max())):
            z = np.where(s < steps, (z * 1664525 + 1013904223) & 0xFFFFFFFF, z)
        np.testing.assert_array_equal(y.view(np.uint32), z.astype(np.uint32))
        np.testing.assert_array_equal(count, np.ones(tiles, np.int32))

    # ---- GEMMs ----

    def test_gemm_persistent_sm90(self):
        """2 persistent blocks over 3 tiles of 128 x 256 (block 0 takes two: its ring and its epilogue
        pieces run on across tiles); M, N, K ragged."""
        k = tilec.compile(sample("gemm_persistent_sm90.tile"))["gemm_persistent_sm90"]
        M, N, K = 260, 136, 72
        a, b = self.bf16((M, K)), self.bf16((N, K))
        c = np.full((M, N), BF16_NAN, np.uint16)
        self.assertEqual(blocks(M, k.params[0].box[0]) * blocks(N, k.params[1].box[0]), 3)
        k(a, b, c, M, N, K, grid=2)
        self.assert_gemm(c, bf16_value(a).astype(np.float64) @ bf16_value(b).astype(np.float64).T)

    def test_gemm_pingpong_sm90(self):
        """2 persistent blocks over 6 tiles of 128 x 128: each block's two consumer warpgroups take its
        3 tiles in turns."""
        k = tilec.compile(sample("gemm_pingpong_sm90.tile"))["gemm_pingpong_sm90"]
        M, N, K = 260, 136, 72
        a, b = self.bf16((M, K)), self.bf16((N, K))
        c = np.full((M, N), BF16_NAN, np.uint16)
        self.assertEqual(blocks(M, k.params[0].box[0]) * blocks(N, k.params[1].box[0]), 6)
        k(a, b, c, M, N, K, grid=2)
        self.assert_gemm(c, bf16_value(a).astype(np.float64) @ bf16_value(b).astype(np.float64).T)

    def test_gemm_cluster_sm90(self):
        """One 2-CTA cluster walks 2 tile pairs (B halves multicast); M has 3 tiles, so the last
        pair's second tile lies past M."""
        k = tilec.compile(sample("gemm_cluster_sm90.tile"))["gemm_cluster_sm90"]
        self.assertEqual(k.cluster[0], 2)
        M, N, K = 300, 72, 72
        a, b = self.bf16((M, K)), self.bf16((N, K))
        c = np.full((M, N), BF16_NAN, np.uint16)
        k(a, b, c, M, N, K, grid=2)
        self.assert_gemm(c, bf16_value(a).astype(np.float64) @ bf16_value(b).astype(np.float64).T)

    def test_gemm_sm100(self):
        """tcgen05 on sm_100a, one CTA per 128 x 256 tile of the grid, cluster launch control."""
        k = tilec.compile(sample("gemm_sm100.tile"), target="sm_100a")["gemm_sm100"]
        M, N, K = 260, 72, 72
        a, b = self.bf16((M, K)), self.bf16((N, K))
        c = np.full((M, N), BF16_NAN, np.uint16)
        k(a, b, c, M, N, K, grid=blocks(M, k.params[0].box[0]) * blocks(N, k.params[1].box[0]))
        self.assert_gemm(c, bf16_value(a).astype(np.float64) @ bf16_value(b).astype(np.float64).T)

    def test_gemm_pair_sm100(self):
        """tcgen05 cta_group = 2 on sm_100a: CTA pairs over 256 x 256 pair tiles (M = 260: the second
        pair row's odd CTA lies past M), grid 2 * pair tiles."""
        k = tilec.compile(sample("gemm_pair_sm100.tile"), target="sm_100a")["gemm_pair_sm100"]
        self.assertEqual(k.cluster[0], 2)
        M, N, K = 260, 72, 72
        a, b = self.bf16((M, K)), self.bf16((N, K))
        c = np.full((M, N), BF16_NAN, np.uint16)
        bm, bh = k.params[0].box[0], k.params[1].box[0]
        k(a, b, c, M, N, K, grid=2 * blocks(M, 2 * bm) * blocks(N, 2 * bh))
        self.assert_gemm(c, bf16_value(a).astype(np.float64) @ bf16_value(b).astype(np.float64).T)

    def test_gemm_nn_sm90(self):
        """B stored [K, N] (read through an MN-major descriptor, four 128-byte spans per row)."""
        k = tilec.compile(sample("gemm_nn_sm90.tile"))["gemm_nn_sm90"]
        M, N, K = 130, 72, 72
        a, b = self.bf16((M, K)), self.bf16((K, N))
        c = np.full((M, N), BF16_NAN, np.uint16)
        self.assertEqual((k.params[1].box, k.params[1].copy_box, k.params[1].spans), ((64, 256), (64, 64), 4))
        k(a, b, c, M, N, K, grid=blocks(M, k.params[0].box[0]) * blocks(N, k.params[1].box[1]))
        self.assert_gemm(c, bf16_value(a).astype(np.float64) @ bf16_value(b).astype(np.float64))

    def test_gemm_at_sm90(self):
        """A stored [K, M] (trans_a); tiles of 64 x 256, M = 136 in 3 of them."""
        k = tilec.compile(sample("gemm_at_sm90.tile"))["gemm_at_sm90"]
        M, N, K = 136, 72, 72
        a, b = self.bf16((K, M)), self.bf16((N, K))
        c = np.full((M, N), BF16_NAN, np.uint16)
        k(a, b, c, M, N, K, grid=blocks(M, k.params[0].box[1]) * blocks(N, k.params[1].box[0]))
        self.assert_gemm(c, bf16_value(a).astype(np.float64).T @ bf16_value(b).astype(np.float64).T)

    def test_gemm_scaled_a_sm90(self):
        """C = (alpha A) B^T with each alpha * a computed in f32 and rounded to bf16 in registers."""
        k = tilec.compile(sample("gemm_scaled_a_sm90.tile"))["gemm_scaled_a_sm90"]
        M, N, K = 130, 72, 72
        a, b = self.bf16((M, K)), self.bf16((N, K))
        c = np.full((M, N), BF16_NAN, np.uint16)
        alpha = 0.3
        k(a, b, c, M, N, K, alpha, grid=blocks(M, k.params[0].box[0]) * blocks(N, k.params[1].box[0]))
        sa = bf16_value(bf16_bits(bf16_value(a) * np.float32(alpha))).astype(np.float64)
        self.assert_gemm(c, sa @ bf16_value(b).astype(np.float64).T)

    def test_warp_pipelined_gemm_gfx942(self):
        """The AMD sample (MFMA, two wave groups a stage apart, a 3-slot LDS ring) from plain tensor
        views: K = 100 in 4 slabs of 32 (the ring wraps, the last slab partial), N in 2 tiles of 64."""
        k = tilec.compile(sample("amd/warp_pipelined_gemm.tile"), target="gfx942")["warp_pipelined_gemm"]
        M, N, K = 100, 70, 100
        a, b = self.bf16((M, K)), self.bf16((N, K))
        c = np.full((M, N), BF16_NAN, np.uint16)
        k(a, b, c, M, N, K, grid=blocks(M, 256) * blocks(N, 64))   # BM x BN = 256 x 64
        self.assert_gemm(c, bf16_value(a).astype(np.float64) @ bf16_value(b).astype(np.float64).T)

    # ---- fp8 ----

    def test_fp8_convert(self):
        """f32 -> e4m3 / e5m2 -> f32 over magnitudes 2^-24 .. 2^16 (underflow, subnormals, ties,
        saturation), infinities and signed zeros; bytes and values read back compared exactly."""
        k = tilec.compile(sample("fp8_convert.tile"))["fp8_convert"]
        n = 1000
        x = np.ldexp(self.rng.uniform(-1, 1, n), self.rng.integers(-24, 17, n))
        special = [np.inf, -np.inf, 0.0, -0.0, 448.0, 464.0, 480.0, -1e9, 57344.0, 61440.0,
                   1.0 + 2 ** -4, 1.0 + 3 * 2 ** -4, 2.0 ** -10, -2.0 ** -10, 3 * 2.0 ** -10, 2.0 ** -17,
                   3 * 2.0 ** -17, 1.0 + 2 ** -3, -(1.0 + 3 * 2 ** -3)]
        at = self.rng.choice(n, len(special), replace=False)
        x[at] = special
        x = x.astype(np.float32)
        q4, q5 = np.full(n, 0xFF, np.uint8), np.full(n, 0xFF, np.uint8)
        y4, y5 = np.full(n, np.nan, np.float32), np.full(n, np.nan, np.float32)
        k(x, q4, q5, y4, y5, n, grid=blocks(n, k.block[0]))
        w4, w5 = fp8_bits(x, False), fp8_bits(x, True)
        np.testing.assert_array_equal(q4, w4)
        np.testing.assert_array_equal(q5, w5)
        np.testing.assert_array_equal(y4, fp8_value(w4, False).astype(np.float32))
        np.testing.assert_array_equal(y5, fp8_value(w5, True).astype(np.float32))
        self.assertTrue(np.array_equal(np.signbit(y4), np.signbit(x)))   # -0 stays -0

    def test_gemm_fp8_sm90(self):
        """e4m3 A and B (values of [-1, 1) rounded to e4m3), f32 accumulation, bf16 C; K = 144 in two
        boxes of 128 (the second partial)."""
        k = tilec.compile(sample("gemm_fp8_sm90.tile"))["gemm_fp8_sm90"]
        M, N, K = 130, 72, 144
        a = fp8_bits(self.rng.uniform(-1, 1, (M, K)), False)
        b = fp8_bits(self.rng.uniform(-1, 1, (N, K)), False)
        c = np.full((M, N), BF16_NAN, np.uint16)
        k(a, b, c, M, N, K, grid=blocks(M, k.params[0].box[0]) * blocks(N, k.params[1].box[0]))
        want = fp8_value(a, False) @ fp8_value(b, False).T
        # the H100's fp8 wgmma keeps about 14 significant bits of the accumulator: refs.c allows
        # max(2^-7, K * 2^-18) of C's root-mean-square value more per element
        rms = np.sqrt((want * want).mean())
        self.assert_gemm(c, want, atol_extra=rms * max(2.0 ** -7, K * 2.0 ** -18))

    def test_gemm_fp8_scaled_sm90(self):
        """The persistent fp8 GEMM with a scale per row of A and per column of B, on 2 blocks for 3 x 2
        tiles (each block takes several): c = sa[i] sb[j] (A B^T)[i, j] in bf16."""
        k = tilec.compile(sample("gemm_fp8_scaled_sm90.tile"))["gemm_fp8_scaled_sm90"]
        M, N, K = 260, 264, 160
        a = fp8_bits(self.rng.uniform(-1, 1, (M, K)), False)
        b = fp8_bits(self.rng.uniform(-1, 1, (N, K)), False)
        sa = self.rng.uniform(0.25, 4, M).astype(np.float32)
        sb = self.rng.uniform(0.25, 4, N).astype(np.float32)
        c = np.full((M, N), BF16_NAN, np.uint16)
        k(a, b, c, sa, sb, M, N, K, grid=2)
        want = (fp8_value(a, False) @ fp8_value(b, False).T) * sa[:, None].astype(np.float64) * sb[None, :]
        rms = np.sqrt((want * want).mean())
        self.assert_gemm(c, want, atol_extra=rms * max(2.0 ** -7, K * 2.0 ** -18))


if __name__ == "__main__":
    unittest.main()
