#!/usr/bin/env python3
"""mma_ref.py DIR M N K SEED [pair]: random bf16 inputs a [M, K] and b [N, K] (as .npy of <u2 bits) and
the f32 references written without NumPy: c = a * b^T (c.npy, f32 sums of exact products in k order, as
a tcgen05 mma computes them), p = c rounded to bf16 and o = p * v for v = b^T's first 64 columns
(v.npy [K, 64] bf16: o.npy [M, 64]). The tensor-memory tests check the simulator's tc_mma with them."""
import random
import struct
import sys

out, M, N, K, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
rng = random.Random(seed)


def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def bf16_bits(x):   # round to nearest even
    u = struct.unpack("<I", struct.pack("<f", x))[0]
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16) & 0xFFFF


def bf16_value(h):
    return struct.unpack("<f", struct.pack("<I", h << 16))[0]


def save(name, descr, shape, vals):
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (descr, ", ".join(map(str, shape)) + ("," if len(shape) == 1 else ""))
    header += " " * (63 - (10 + len(header)) % 64) + "\n"
    code = {"<u2": "H", "<f4": "f"}[descr]
    with open("%s/%s.npy" % (out, name), "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
        f.write(struct.pack("<%d%s" % (len(vals), code), *vals))


a = [bf16_bits(rng.uniform(-1, 1)) for _ in range(M * K)]
b = [bf16_bits(rng.uniform(-1, 1)) for _ in range(N * K)]
av = [bf16_value(h) for h in a]
bv = [bf16_value(h) for h in b]
c = []
for i in range(M):
    for j in range(N):
        s = 0.0
        for k in range(K):
            s = f32(s + av[i * K + k] * bv[j * K + k])
        c.append(s)
save("a", "<u2", (M, K), a)
save("b", "<u2", (N, K), b)
save("c", "<f4", (M, N), c)
# the second mma: o = bf16(c) [M, N] * v [N, 64], v[k][j] = b[j][k] (N-major b, trans_b = false)
v = [b[j * K + k] for k in range(N) for j in range(64)] if K >= N else None
if v is not None:
    pv = [bf16_value(bf16_bits(x)) for x in c]
    vv = [bf16_value(h) for h in v]
    o = []
    for i in range(M):
        for j in range(64):
            s = 0.0
            for k in range(N):
                s = f32(s + pv[i * N + k] * vv[k * 64 + j])
            o.append(s)
    save("v", "<u2", (N, 64), v)
    save("o", "<f4", (M, 64), o)
