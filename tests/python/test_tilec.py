"""The tilec Python package (python/tilec) on the simulator: compiling, errors as exceptions,
signatures, launches on NumPy arrays checked against NumPy, TMA parameters from arrays, and the
launch checks. Run by `make check` (make python-test) with PYTHONPATH=python and TILEC_LIB set to
the build's libtile.so."""
import os
import unittest

import numpy as np

import tilec

from common import attention_reference, bf16_bits, bf16_value, sample


class Compile(unittest.TestCase):
    def test_error_is_located_and_structured(self):
        with self.assertRaises(tilec.CompileError) as cm:
            tilec.compile("kernel k(p: f32*) block(32) {\n    p[0] = y;\n}\n")
        e = cm.exception
        self.assertIn("<python>:2:12: error: unknown name 'y'", str(e))
        self.assertEqual(e.diagnostics[0], {"severity": "error", "file": "<python>", "line": 2, "col": 12,
                                            "message": "unknown name 'y'"})

    def test_signature_and_block(self):
        k = tilec.compile(sample("vector_add.tile"))["vector_add"]
        self.assertEqual(k.signature, [("a", "pointer", "f32", 0), ("b", "pointer", "f32", 0),
                                       ("c", "pointer", "f32", 0), ("n", "scalar", "i32", 0)])
        self.assertEqual(k.block, (256, 1, 1))
        g = tilec.compile(sample("gemm_sm90.tile"))["gemm_sm90"]
        a = g.params[0]
        self.assertEqual((a.kind, a.dtype, a.rank, a.box), ("tma", "bf16", 2, (128, 64)))

    def test_defines_and_stages(self):
        prog = tilec.compile(sample("vector_add.tile"), defines={"BLOCK": 128})
        self.assertEqual(prog["vector_add"].block, (128, 1, 1))
        self.assertIn(".entry vector_add", prog.emit("ptx"))
        self.assertIn("kernel @vector_add", prog.emit("ir"))
        with self.assertRaises(KeyError):
            prog["nope"]

    def test_bad_options(self):
        with self.assertRaises(tilec.TileError):
            tilec.compile(sample("vector_add.tile"), target="sm_42")
        with self.assertRaises(ValueError):
            tilec.compile(sample("vector_add.tile"), opt=7)


class Launch(unittest.TestCase):
    def setUp(self):
        self.rng = np.random.default_rng(1234)

    def test_vector_add(self):
        k = tilec.compile(sample("vector_add.tile"))["vector_add"]
        for n in (1, 1000, 4097):
            a = self.rng.random(n, np.float32)
            b = self.rng.random(n, np.float32)
            c = np.full(n, np.nan, np.float32)
            k(a, b, c, n, grid=(n + 255) // 256, device="sim")
            np.testing.assert_array_equal(c, a + b)

    def test_saxpy_by_keyword(self):
        k = tilec.compile(sample("saxpy.tile"))["saxpy"]
        n = 3000
        x = self.rng.random(n, np.float32)
        y = self.rng.random(n, np.float32)
        want = np.float32(2.5) * x + y
        k(2.5, x=x, y=y, n=n, grid=(n + k.block[0] - 1) // k.block[0])
        np.testing.assert_allclose(y, want, rtol=1e-6)

    def test_softmax_rows(self):
        k = tilec.compile(sample("softmax.tile"))["softmax"]
        rows, cols = 5, 1024
        x = self.rng.standard_normal((rows, cols), np.float32)
        y = np.full_like(x, np.nan)
        k(x, y, rows, cols, grid=rows)
        e = np.exp(x - x.max(axis=1, keepdims=True))
        np.testing.assert_allclose(y, e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-7)

    def test_gemm_tma_from_arrays(self):
        """TMA parameters from plain arrays: the runtime encodes the tensor maps from the pointer,
        the dims parameters (M, N, K), the box and the swizzle."""
        k = tilec.compile(sample("gemm_sm90.tile"))["gemm_sm90"]
        M, N, K = 130, 264, 72
        a = bf16_bits(self.rng.uniform(-1, 1, (M, K)))
        b = bf16_bits(self.rng.uniform(-1, 1, (N, K)))
        c = np.full((M, N), 0x7FC0, np.uint16)   # poisoned with a NaN
        bm, bn = k.params[0].box[0], k.params[1].box[0]
        k(a, b, c, M, N, K, grid=((M + bm - 1) // bm) * ((N + bn - 1) // bn))
        want = bf16_value(a).astype(np.float64) @ bf16_value(b).astype(np.float64).T
        got = bf16_value(c).astype(np.float64)
        self.assertTrue(np.isfinite(got).all())
        self.assertLess(np.linalg.norm(got - want) / np.linalg.norm(want), 2.0 ** -8)

    def test_attention_heads_causal_lse(self):
        """samples/attention_fwd_sm90.tile: 4-d q, k, v with grouped-query heads, bottom-right causal
        masking with seqlen_q > seqlen_k (rows without keys: o = 0, lse = -inf), against float64."""
        k = tilec.compile(sample("attention_fwd_sm90.tile"), defines={"HEAD_DIM": 64})["attention_fwd"]
        bt, h, kvh, sq, sk, d = 1, 2, 1, 80, 70, 64
        q = bf16_bits(self.rng.uniform(-2, 2, (bt, h, sq, d)))
        kk = bf16_bits(self.rng.uniform(-2, 2, (bt, kvh, sk, d)))
        v = bf16_bits(self.rng.uniform(-2, 2, (bt, kvh, sk, d)))
        o = np.full((bt, h, sq, d), 0x7FC0, np.uint16)
        lse = np.full((bt, h, sq), np.nan, np.float32)
        scale = 0.125
        rows = 64 * (k.block[0] // 128 - 1)
        k(q, kk, v, o, lse, batch=bt, heads=h, kv_heads=kvh, seqlen_q=sq, seqlen_k=sk, scale=scale, causal=1,
          grid=((sq + rows - 1) // rows, h, bt))
        want_o, want_lse = attention_reference(*(bf16_value(x).astype(np.float64) for x in (q, kk, v)), scale, True)
        seen = np.arange(sk)[None, :] <= np.arange(sq)[:, None] + (sk - sq)
        got = bf16_value(o).astype(np.float64)
        self.assertLess(np.linalg.norm(got - want_o) / np.linalg.norm(want_o), 1e-2)
        empty = ~seen.any(axis=-1)
        self.assertTrue(empty.any())   # this shape has rows that see no key
        self.assertTrue(np.all(lse[..., empty] == -np.inf) and np.all(got[:, :, empty] == 0))
        self.assertLess(np.abs(lse[..., ~empty] - want_lse[..., ~empty]).max(), 1e-3)

    def test_tma_copy_bits(self):
        """samples/tma_copy.tile copies a ragged bf16 matrix bit for bit (partial boxes at both edges)."""
        k = tilec.compile(sample("tma_copy.tile"))["tma_copy"]
        M, N = 150, 200
        src = self.rng.integers(0, 1 << 16, (M, N), dtype=np.uint16)
        dst = np.zeros((M, N), np.uint16)
        bm, bn = k.params[0].box
        k(src, dst, M, N, grid=((M + bm - 1) // bm, (N + bn - 1) // bn))
        self.assertTrue(np.array_equal(src, dst))

    def test_pipelined_rowsum(self):
        """A TMA pipeline (LANGUAGE.md §25): the ring wraps 8 times per block, the last box partial."""
        k = tilec.compile(sample("pipelined_rowsum.tile"))["pipelined_rowsum"]
        M, K = 300, 1000
        x = self.rng.standard_normal((M, K), np.float32)
        out = np.full(M, np.nan, np.float32)
        k(x, out, M, K, grid=(M + 127) // 128)
        np.testing.assert_allclose(out, x.sum(axis=1, dtype=np.float64), rtol=1e-4, atol=1e-3)

    def test_layernorm_bf16(self):
        k = tilec.compile(sample("layernorm.tile"))["layernorm"]
        rows, cols = 3, 1024
        x = bf16_bits(self.rng.standard_normal((rows, cols)))
        g = bf16_bits(self.rng.uniform(0.5, 1.5, cols))
        b = bf16_bits(self.rng.uniform(-0.5, 0.5, cols))
        y = np.full((rows, cols), 0x7FC0, np.uint16)
        k(x, g, b, y, rows, cols, 1e-5, grid=rows)
        xf = bf16_value(x).astype(np.float64)
        want = (xf - xf.mean(axis=1, keepdims=True)) / np.sqrt(xf.var(axis=1, keepdims=True) + 1e-5)
        want = want * bf16_value(g) + bf16_value(b)
        np.testing.assert_allclose(bf16_value(y), want, rtol=2 ** -7, atol=2 ** -7)

    def test_relu_bf16_bits(self):
        k = tilec.compile(sample("relu_bf16.tile"))["relu_bf16"]
        n = 777
        x = bf16_bits(self.rng.standard_normal(n))
        y = np.zeros(n, np.uint16)
        k(x, y, n, grid=1)   # a block covers TILE = 2048 elements, masked past n
        np.testing.assert_array_equal(bf16_value(y), np.maximum(bf16_value(x), 0))

    def test_launch_errors(self):
        k = tilec.compile(sample("vector_add.tile"))["vector_add"]
        a = np.zeros(16, np.float32)
        cases = [((a, a, a, 1.5), {}, "'n' is i32, not a float"),
                 ((a, a, a), {}, "no argument for n"),
                 ((a, a, a, 16), {"m": 1}, "has no parameter 'm'"),
                 ((a, a, np.zeros(16, np.float64), 16), {}, "'c' holds f32 elements, but the array is float64"),
                 ((a, a, 3, 16), {}, "pass an array (NumPy) or a CUDA tensor, not int"),
                 ((a, a, a, a), {}, "'n' is a scalar i32, not an array"),
                 ((a, a, a, 16, 1), {}, "takes 4 arguments, not 5")]
        for args, kw, msg in cases:
            with self.assertRaises(tilec.LaunchError) as cm:
                k(*args, grid=1, **kw)
            self.assertIn(msg, str(cm.exception))
        with self.assertRaises(tilec.LaunchError) as cm:
            k(a, a, a, 16, grid=1, block=2048)
        self.assertIn("launch vector_add", str(cm.exception))

    def test_max_resident(self):
        """Kernel.max_resident asks the device how many blocks it holds at once: the shape a launch
        would refuse is a LaunchError, and the simulator, which runs any grid, cannot tell."""
        k = tilec.compile(sample("vector_add.tile"))["vector_add"]
        with self.assertRaises(tilec.LaunchError) as cm:
            k.max_resident(block=64, device="sim")
        self.assertIn("tile_kernel_max_resident: block (64, 1, 1) does not match kernel 'vector_add'", str(cm.exception))
        with self.assertRaises(tilec.TileError) as cm:
            k.max_resident(device="sim")
        self.assertIn("the sim back end cannot tell how many blocks fit at once", str(cm.exception))
        self.assertNotIsInstance(cm.exception, tilec.LaunchError)

    def test_gpu_arrays(self):
        """Arrays in GPU memory (__cuda_array_interface__) pass by address to a CUDA launch only; their
        element type and layout are checked before anything is launched."""
        class Gpu:
            def __init__(self, typestr, shape, strides=None):
                self.__cuda_array_interface__ = {"data": (0x7f0000000000, False), "typestr": typestr, "shape": shape,
                                                 "strides": strides, "version": 3}
        k = tilec.compile(sample("vector_add.tile"))["vector_add"]
        a = np.zeros(16, np.float32)
        with self.assertRaises(tilec.LaunchError) as cm:
            k(a, a, Gpu("<f4", (16,)), 16, grid=1)
        self.assertIn("'c' is in GPU memory, but the launch is on Device('sim', 0)", str(cm.exception))
        self.assertEqual(tilec._device_array(Gpu("<f4", (4, 4), (32, 4))),
                         (0x7f0000000000, "float32", (4, 4), (8, 1), None))
        self.assertEqual(tilec._device_array(Gpu("<u2", (4, 4), (8, 2))), (0x7f0000000000, "uint16", (4, 4), (4, 1), None))
        self.assertEqual(tilec._device_array(Gpu("<f4", (3, 5))), (0x7f0000000000, "float32", (3, 5), (5, 1), None))
        with self.assertRaises(tilec.LaunchError):
            tilec._device_array(Gpu("<f4", (4, 4), (32, 6)))   # a stride that is not whole elements
        self.assertIsNone(tilec._device_array(a))

    def test_strided_arrays(self):
        """Non-contiguous NumPy arrays (a column slice, every other element) are copied in and back
        through contiguous device buffers: inputs read as the view holds them, an output view is
        written in place and nothing around it."""
        k = tilec.compile(sample("vector_add.tile"))["vector_add"]
        rng = np.random.default_rng(7)
        a = rng.standard_normal(600).astype(np.float32)
        b = rng.standard_normal((300, 3)).astype(np.float32)
        out = np.full(900, np.nan, np.float32)
        k(a[::2], b[:, 1], out[1::3], 300, grid=2)
        self.assertTrue(np.array_equal(out[1::3], a[::2] + b[:, 1]))
        self.assertTrue(np.isnan(out[0::3]).all() and np.isnan(out[2::3]).all())
        # a TMA kernel on a window of a wider array: the window is what the kernel sees
        t = tilec.compile(sample("tma_copy.tile"))["tma_copy"]
        src = rng.integers(0, 1 << 16, (150, 200), dtype=np.uint16)
        dst = np.zeros((150, 200), np.uint16)
        M, N = 150, 72
        t(src[:, 8:8 + N], dst[:, 16:16 + N], M, N, grid=((M + 127) // 128, (N + 63) // 64))
        self.assertTrue(np.array_equal(dst[:, 16:16 + N], src[:, 8:8 + N]))
        self.assertFalse(dst[:, :16].any() or dst[:, 16 + N:].any())

    def test_streams_and_events(self):
        """Streams and events of a device, as tile.h has them: a launch on a stream of the device
        (NumPy arrays: the call still returns when the kernel is done), events recorded around it."""
        dev = tilec.Device("sim")
        try:
            k = tilec.compile(sample("vector_add.tile"))["vector_add"]
            s = dev.stream(priority=-1000)
            self.assertLessEqual(s.priority, 0)
            e0, e1 = dev.event(), dev.event()
            a = np.arange(300, dtype=np.float32)
            c = np.full(300, np.nan, np.float32)
            e0.record(s)
            k(a, a, c, 300, grid=2, device=dev, stream=s)
            e1.record(s)
            e1.synchronize()
            self.assertTrue(e1.query() and s.query())
            self.assertTrue(np.array_equal(c, a + a))
            self.assertGreaterEqual(e0.elapsed_ms(e1), 0.0)
            other = tilec.Device("sim")
            with self.assertRaises(tilec.LaunchError) as cm:
                k(a, a, c, 300, grid=2, device=other, stream=s)
            self.assertIn("the stream belongs to Device('sim', 0)", str(cm.exception))
            other.close()
            with self.assertRaises(tilec.TileError):
                e0.record("s")
        finally:
            dev.close()

    def test_kernel_fault_is_an_error(self):
        """A kernel that writes out of bounds stops the simulated launch with a report."""
        k = tilec.compile(sample("vector_add.tile"))["vector_add"]
        a = np.zeros(16, np.float32)
        with self.assertRaises(tilec.TileError) as cm:
            k(a, a, a, 1000, grid=4)
        self.assertIn("out-of-bounds global load in kernel 'vector_add'", str(cm.exception))


WORK = """
const REPEAT = 1;
kernel work(x: f32*, y: f32*, n: i32) block(64) {
    let i = block_id.x * 64 + thread_id.x;
    if i < n {
        var acc = x[i];
        for r in 0 .. REPEAT {
            acc = acc * 0.5 + 1.0;
        }
        y[i] = acc;
    }
}
"""


class Autotune(unittest.TestCase):
    def test_chooses_the_fastest_and_remembers(self):
        """Three configurations of one kernel doing 1, 200 and 400 steps of work per element: the
        tuner picks REPEAT = 1 on the simulator (and its result is that configuration's), keeps it
        per key, stores it in the cache directory, and a new tuner starts from the stored choice
        without timing."""
        import tempfile
        with tempfile.TemporaryDirectory() as d:
            os.environ["TILEC_CACHE_DIR"] = d
            try:
                configs = [{"REPEAT": 400}, {"REPEAT": 1}, {"REPEAT": 200}]
                grid = lambda cfg, k, x, y, n: (n + 63) // 64
                t = tilec.autotune(WORK, configs, grid=grid)
                n = 256
                x = np.arange(n, dtype=np.float32)
                y = np.zeros(n, np.float32)
                t(x, y, n)
                np.testing.assert_array_equal(y, x * np.float32(0.5) + np.float32(1.0))
                self.assertEqual(t.chosen(x, y, n), {"REPEAT": 1})
                self.assertEqual(len(t.report), 1)
                t(x, y, n)   # the same key: no second tuning
                self.assertEqual(len(t.report), 1)
                self.assertTrue(os.path.exists(os.path.join(d, "autotune.json")))
                t2 = tilec.autotune(WORK, configs, grid=grid)
                t2(x, y, n)
                self.assertEqual(t2.report, [])
                self.assertEqual(t2.chosen(x, y, n), {"REPEAT": 1})
            finally:
                del os.environ["TILEC_CACHE_DIR"]

    def test_a_failing_configuration_is_not_chosen(self):
        bad = [{"REPEAT": "x"}, {"REPEAT": 2}]
        t = tilec.autotune(WORK, bad, grid=1, cache=False)
        x = np.ones(8, np.float32)
        y = np.zeros(8, np.float32)
        t(x, y, 8)
        self.assertEqual(t.chosen(x, y, 8), {"REPEAT": 2})
        with self.assertRaises(tilec.TileError):
            tilec.autotune(WORK, [{"REPEAT": "x"}], grid=1, cache=False)(x, y, 8)


if __name__ == "__main__":
    unittest.main()
