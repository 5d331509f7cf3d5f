"""sm_100a kernels of the lit tests run on the simulator against NumPy (their PTX is pinned there):
several tensor-memory accumulators in one kernel (tests/lit/ptx/mma_tcgen05_accumulators.tile: s =
2 A B1^T, o = 2 A B2^T and t = 2 A B1^T stored doubled, each accumulated over two mmas in a loop),
and a register A (tests/lit/ptx/mma_tcgen05_register_a.tile: o = bf16(S / 2) V^T with S = Q K^T,
attention's P V step)."""
import os
import sys
import unittest

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import ROOT, bf16_bits, bf16_value  # noqa: E402
import tilec  # noqa: E402


def lit_kernel(name, kernel, rows, seed):
    """The sm_100a kernel of tests/lit/ptx/NAME, and random bf16 inputs x [rows, 64] (bits, values)."""
    path = os.path.join(ROOT, "tests", "lit", "ptx", name)
    with open(path) as f:
        k = tilec.compile(f.read(), target="sm_100a", filename=path)[kernel]
    x = bf16_bits(np.random.default_rng(seed).uniform(-1, 1, (rows, 64)))
    return k, x, bf16_value(x).astype(np.float64)


class Accumulators(unittest.TestCase):
    def test_three_accumulators(self):
        R, C = 320, 64
        k, x, xv = lit_kernel("mma_tcgen05_accumulators.tile", "two_acc", R, 5)
        c1 = np.full((128, 64), np.nan, np.float32)
        c2 = np.full((128, 128), np.nan, np.float32)
        c3 = np.full((128, 64), np.nan, np.float32)
        k(x, c1, c2, c3, R, C, 64, 128, grid=1, device="sim")
        a, b1, b2 = xv[:128], xv[128:192], xv[192:320]
        for got, want, what in ((c1, 2 * a @ b1.T, "s"), (c2, 2 * a @ b2.T, "o"), (c3, 4 * a @ b1.T, "t")):
            self.assertTrue(np.isfinite(got).all(), what)
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-4, err_msg=what)

    def test_register_a(self):
        R, C = 256, 64
        k, x, xv = lit_kernel("mma_tcgen05_register_a.tile", "pv100", R, 6)
        c = np.full((R, C), np.nan, np.float32)
        k(x, c, R, C, grid=1, device="sim")
        q, kk, v = xv[:128], xv[128:192], xv[192:256]
        s = np.zeros((128, 64), np.float32)   # S as the mma sums it: exact products added in f32, in k order
        for i in range(64):
            s += np.outer(q[:, i], kk[:, i]).astype(np.float32)
        p = bf16_value(bf16_bits(s * np.float32(0.5))).astype(np.float64)
        got = c[:128].astype(np.float64)
        self.assertTrue(np.isfinite(got).all())
        np.testing.assert_allclose(got, p @ v.T, rtol=1e-5, atol=1e-4)
        self.assertTrue(np.isnan(c[128:]).all())   # rows past the tile untouched


if __name__ == "__main__":
    unittest.main()
