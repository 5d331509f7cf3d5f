"""tilec.attention: the chooser's rule at the shapes of the measured table, the argument checks,
forward on the simulator against a float64 reference (NumPy bf16 bits), and on the GPU with torch
where there is one (skipped, with the reason, where there is none)."""
import os
import sys
import unittest

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import attention_reference, bf16_bits, bf16_value  # noqa: E402
import tilec.attention as attn  # noqa: E402

C = attn.Config


class Choose(unittest.TestCase):
    def test_head_dim_128(self):
        """Key blocks of 176 with per-thread row sums from 8k keys without a mask; below that, and causal
        up to 8k, 128-key blocks with per-thread row sums, persistent (docs/PERFORMANCE.md's table);
        causal from 8k on one tile a block."""
        wide, narrow, pers = C({"BN": 176, "ROWSUM": 1}), C({"ROWSUM": 1}), C({"ROWSUM": 1, "PERSIST": 1})
        for s, want in ((1, pers), (512, pers), (1024, pers), (2048, pers), (4096, pers), (8191, pers),
                        (8192, wide), (16384, wide), (65536, wide)):
            self.assertEqual(attn.choose(128, s, s, False), want, s)
        for s, want in ((1, pers), (100, pers), (512, pers), (2048, pers), (4096, pers), (8192, pers),
                        (8193, narrow), (16384, narrow)):
            self.assertEqual(attn.choose(128, s, s, True), want, s)
        # the length the rule goes by is the keys a row reads
        self.assertEqual(attn.choose(128, 100, 8192, 0), wide)
        self.assertEqual(attn.choose(128, 8192, 100, 0), pers)
        self.assertEqual(attn.choose(128, 100, 16384, 1), narrow)

    def test_head_dim_64(self):
        """Three warpgroups with per-thread row sums, persistent; for causal masks up to 1k keys one
        warpgroup and two blocks an SM, persistent too."""
        three = C({"ROWSUM": 1, "PERSIST": 1})
        two = C({"NWG": 1, "BPS": 2, "ROWSUM": 1, "PERSIST": 1})
        for s, want in ((1, three), (512, three), (1024, three), (2048, three), (16384, three), (65536, three)):
            self.assertEqual(attn.choose(64, s, s, 0), want, s)
        for s, want in ((1, two), (512, two), (1024, two), (1025, three), (2048, three), (16384, three)):
            self.assertEqual(attn.choose(64, s, s, 1), want, s)
        # the length the rule goes by is the keys a row reads
        self.assertEqual(attn.choose(64, 8192, 100, 1), two)
        self.assertEqual(attn.choose(64, 100, 8192, 1), three)

    def test_persist_rule(self):
        """The persistent build where RULE says so (by default everywhere but head dim 128 causal past 8k
        keys), never with 176-key blocks (its O tiles leave no room for them) nor with two blocks of
        64-key blocks at head dim 128; a persist_max or bn176_min of 0 is never."""
        self.assertEqual(attn.RULE["persist_max"],
                         {(128, 0): attn.EVERY, (128, 1): 8192, (64, 0): attn.EVERY, (64, 1): attn.EVERY})
        self.assertEqual(attn.RULE["persist_min"], {(128, 0): 1, (128, 1): 1, (64, 0): 1, (64, 1): 1})
        self.assertEqual(attn.RULE["bn176_min"], {0: 8192, 1: 0})
        self.assertEqual(attn.RULE["two_blocks_max"], {(128, 0): 0, (128, 1): 0, (64, 0): 0, (64, 1): 1024})
        old = {k: dict(v) for k, v in attn.RULE.items()}
        try:
            attn.RULE["persist_max"][(128, 1)] = 0
            self.assertEqual(attn.choose(128, 1024, 1024, 1), C({"ROWSUM": 1}))
            attn.RULE["persist_min"][(128, 1)] = 2048
            attn.RULE["persist_max"][(128, 1)] = 4096
            self.assertEqual(attn.choose(128, 1024, 1024, 1), C({"ROWSUM": 1}))
            self.assertEqual(attn.choose(128, 2048, 2048, 1), C({"ROWSUM": 1, "PERSIST": 1}))
            self.assertEqual(attn.choose(128, 4097, 4097, 1), C({"ROWSUM": 1}))
            attn.RULE["bn176_min"][1] = 8192
            self.assertEqual(attn.choose(128, 8192, 8192, 1), C({"BN": 176, "ROWSUM": 1}))
            attn.RULE["bn176_min"][0] = 0
            self.assertEqual(attn.choose(128, 8192, 8192, 0), C({"ROWSUM": 1, "PERSIST": 1}))
            attn.RULE["two_blocks_max"][(128, 0)] = 512
            self.assertEqual(attn.choose(128, 512, 512, 0), C({"NWG": 1, "BPS": 2, "BN": 64, "ROWSUM": 1}))
            attn.RULE["persist_max"][(64, 1)] = 0
            self.assertEqual(attn.choose(64, 512, 512, 1), C({"NWG": 1, "BPS": 2, "ROWSUM": 1}))
        finally:
            for k, v in old.items():
                attn.RULE[k].clear()
                attn.RULE[k].update(v)

    def test_bad_arguments(self):
        for args in ((96, 512, 512, 0), (128, 0, 512, 0), (128, 512, -1, 0), (128, 512, 512, 2), (128, 512.0, 512, 0)):
            with self.assertRaises(ValueError):
                attn.choose(*args)

    def test_config_is_a_value(self):
        a, b = C({"BN": 176, "ROWSUM": 1}), C({"ROWSUM": 1, "BN": 176})
        self.assertEqual(a, b)
        self.assertEqual(hash(a), hash(b))
        self.assertEqual(repr(a), "Config(BN=176 ROWSUM=1)")
        with self.assertRaises(AttributeError):
            a.defines = {}
        with self.assertRaises(TypeError):
            a.defines["BN"] = 128
        with self.assertRaises(ValueError):
            C({"HEAD_DIM": 64})      # from q
        with self.assertRaises(ValueError):
            C({"BN": "176"})


class Checks(unittest.TestCase):
    def arrays(self, bq=1, h=2, sq=70, d=64, bk=None, kvh=1, sk=80, dk=None, dtype=np.uint16):
        q = np.zeros((bq, h, sq, d), dtype)
        k = np.zeros((bk or bq, kvh, sk, dk or d), dtype)
        return q, k, k.copy()

    def test_shapes(self):
        bad = [dict(d=96), dict(kvh=3, h=2), dict(bk=2), dict(dk=128), dict(dtype=np.float32)]
        for kw in bad:
            with self.assertRaises(ValueError, msg=str(kw)):
                attn.check(*self.arrays(**kw))
        q, k, v = self.arrays()
        with self.assertRaises(ValueError):
            attn.check(q, k, v[:, :, :40])                 # k and v differ
        with self.assertRaises(ValueError):
            attn.check(q[0], k, v)                         # 3-d
        with self.assertRaises(ValueError):
            attn.check(q.transpose(0, 2, 1, 3), k, v)      # not contiguous
        with self.assertRaises(ValueError):
            attn.check(q, k.astype(np.float16), v.astype(np.float16))   # bf16 q, f16 k and v

    def test_scalars(self):
        q, k, v = self.arrays()
        self.assertEqual(attn.check(q, k, v), (1, 2, 1, 70, 80, 64, "bf16", 0, 0.125))
        self.assertEqual(attn.check(q, k, v, True, 0.5)[7:], (1, 0.5))
        for causal, scale in ((2, None), (0, 0.0), (0, -1.0), (0, "x"), (0, float("nan"))):
            with self.assertRaises(ValueError):
                attn.check(q, k, v, causal, scale)

    def test_outputs(self):
        q, k, v = self.arrays()
        with self.assertRaises(ValueError):
            attn.forward(q, k, v, out=np.zeros((1, 2, 71, 64), np.uint16), device="sim")
        with self.assertRaises(ValueError):
            attn.forward(q, k, v, lse=np.zeros((1, 2, 70, 1), np.float32), device="sim")
        with self.assertRaises(ValueError):
            attn.forward(q, k, v, config={"BN": 176}, device="sim")

    def test_no_keys(self):
        """seqlen_k = 0: every row sees no key, o = 0 and lse = -inf, without a launch."""
        q, k, v = self.arrays(sk=0)
        o, lse = attn.forward(q, k, v, return_lse=True, device="sim")
        self.assertTrue(np.all(o == 0) and np.all(lse == -np.inf))


class Simulator(unittest.TestCase):
    def test_forward(self):
        """forward on NumPy bf16 bits: the chosen build (head dim 64, causal, two warpgroups) and the
        persistent one given as config, grouped-query heads, rows that see no key."""
        rng = np.random.default_rng(7)
        bt, h, kvh, sq, sk, d = 1, 2, 1, 90, 70, 64
        q = bf16_bits(rng.uniform(-2, 2, (bt, h, sq, d)))
        k = bf16_bits(rng.uniform(-2, 2, (bt, kvh, sk, d)))
        v = bf16_bits(rng.uniform(-2, 2, (bt, kvh, sk, d)))
        want_o, want_lse = attention_reference(*(bf16_value(x).astype(np.float64) for x in (q, k, v)), 0.125, True)
        for cfg in (None, C({"NWG": 2, "ROWSUM": 1, "PERSIST": 1})):
            o, lse = attn.forward(q, k, v, causal=True, return_lse=True, device="sim", config=cfg)
            got = bf16_value(o).astype(np.float64)
            self.assertLess(np.linalg.norm(got - want_o) / np.linalg.norm(want_o), 1e-2, cfg)
            seen = np.isfinite(want_lse)
            self.assertTrue((~seen).any() and np.all(lse[~seen] == -np.inf))
            self.assertLess(np.abs(lse[seen] - want_lse[seen]).max(), 1e-3)


class GPU(unittest.TestCase):
    def test_forward_torch(self):
        """forward on CUDA torch tensors against torch's SDPA, each chosen build of the table's rule."""
        try:
            import torch
        except ImportError:
            self.skipTest("SKIPPED (not a pass): torch is not installed")
        if not torch.cuda.is_available() or torch.cuda.get_device_capability() != (9, 0):
            self.skipTest("SKIPPED (not a pass): no sm_90 GPU")
        import torch.nn.functional as F
        torch.manual_seed(0)
        for d, s, causal in ((128, 512, True), (128, 2048, False), (64, 1024, True), (64, 1024, False)):
            q, k, v = (torch.randn(2, 4, s, d, dtype=torch.bfloat16, device="cuda") for _ in range(3))
            o = attn.forward(q, k, v, causal=causal)
            ref = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
            err = ((o.float() - ref.float()).norm() / ref.float().norm()).item()
            self.assertLess(err, 1e-2, (d, s, causal, attn.choose(d, s, s, causal)))



class Phases(unittest.TestCase):
    """bench/attention_phases.py (the sample with clock() timestamps per tile and warpgroup) on the
    simulator: the instrumented copy still computes o, every (tile, warpgroup) is recorded and the
    phases are printed, per key-block count under the causal mask, with the gap between tiles in
    the persistent form; a malformed define is refused."""
    SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench", "attention_phases.py")

    def run_script(self, *args):
        import subprocess
        return subprocess.run([sys.executable, self.SCRIPT] + list(args), capture_output=True, text=True, timeout=600)

    def test_one_tile_a_block(self):
        p = self.run_script("130", "64", "1", "NWG=2", "--batch", "1", "--heads", "2", "--device", "sim")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("seqlen 130, head dim 64, causal, batch 1, heads 2: 4 tiles of 128 rows, NWG=2 on sim: "
                      "o[0, 0] relative Frobenius error", p.stdout)
        self.assertIn("key-block loop, per block", p.stdout)
        self.assertIn("    2 blocks", p.stdout)

    def test_persistent(self):
        p = self.run_script("300", "128", "1", "ROWSUM=1", "PERSIST=1", "--batch", "1", "--heads", "3", "--device", "sim")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("9 tiles of 128 rows, ROWSUM=1 PERSIST=1 on sim", p.stdout)
        self.assertIn("O store issued to the next tile's start", p.stdout)

    def test_refuses(self):
        for args, msg in ((("130", "64", "1", "NWG"), "is not NAME=VALUE"),
                          (("130", "64", "1", "HEAD_DIM=128"), "the head dim is the second argument"),
                          (("0", "64", "1"), "each at least 1")):
            p = self.run_script(*(args + ("--device", "sim")))
            self.assertEqual(p.returncode, 1, args)
            self.assertIn(msg, p.stdout + p.stderr, args)


class SdpaProfile(unittest.TestCase):
    """bench/sdpa_profile.py (torch SDPA's back end launched for ncu) refuses a shape off the bench's
    grid before it needs PyTorch or a GPU, with its message and status 1."""
    SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench", "sdpa_profile.py")

    def test_refuses(self):
        import subprocess
        for args in (("500", "128", "0"), ("512", "96", "0"), ("0", "128", "1")):
            p = subprocess.run([sys.executable, self.SCRIPT] + list(args), capture_output=True, text=True, timeout=60)
            self.assertEqual(p.returncode, 1, args)
            self.assertIn("sdpa_profile: seqlen must divide 16384 and head_dim 2048", p.stderr, args)
        p = subprocess.run([sys.executable, self.SCRIPT, "512", "128", "2"], capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 2, p.stderr)     # argparse: causal is 0 or 1


if __name__ == "__main__":
    unittest.main()
