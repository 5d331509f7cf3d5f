#!/usr/bin/env python3
"""int_divide.py DIR: the inputs and expected outputs of tests/sim/lang/int_divide.tile as .npy files
in DIR (x.npy, u.npy: the dividends; qs.npy, qu.npy: every quotient and remainder the kernel
stores), written without NumPy. The dividends are the extremes and their neighbours, small numbers
of both signs, multiples of the divisors and their neighbours, and pseudo-random words; the
divisions are C's (truncating, the remainder taking the dividend's sign)."""
import struct
import sys

N = 512
# the kernel's divisors, in its order (the runtime ones are its --arg values)
S_CONST = [1, 2, 3, 7, 128, 641, 1000003, 1 << 30, 2147483647]
S_ARGS = {"d1": -7, "d2": 3, "d3": 1, "d4": -2147483648, "d5": 1 << 20, "d6": 3 + (1 << 20)}
U_CONST = [3, 7, 10, 641, 2147483649, 4294967295]
U_ARGS = {"e1": 3000000019, "e2": 65536}


def words():
    seed = 0x2545F4914F6CDD1D
    fixed = [0, 1, 2, 3, 6, 7, 8, 127, 128, 129, 640, 641, 642, 999, 1000, 1000003, 2000006, 2000007,
             (1 << 30) - 1, 1 << 30, (1 << 30) + 1, 2147483646, 2147483647, 2147483648, 2147483649,
             3000000018, 3000000019, 3000000020, 4294967294, 4294967295, 65535, 65536, 65537]
    vals = []
    for f in fixed:
        vals += [f & 0xFFFFFFFF, -f & 0xFFFFFFFF]
    while len(vals) < N:
        seed = (seed * 6364136223846793005 + 1442695040888963407) & 0xFFFFFFFFFFFFFFFF
        w = seed >> 32
        vals.append(w if len(vals) % 3 else w >> (len(vals) % 29))   # some short words too
    return vals[:N]


def s32(w):
    return w - (1 << 32) if w >= 1 << 31 else w


def cdiv(a, b):   # C's a / b, a % b on i32 (the one overflow, INT_MIN / -1, is not among the cases)
    q = abs(a) // abs(b)
    q = -q if (a < 0) != (b < 0) else q
    return q, a - q * b


def npy(path, code, descr, vals):
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%d,), }" % (descr, len(vals))
    header += " " * (63 - (10 + len(header)) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
        f.write(struct.pack("<%d%s" % (len(vals), code), *vals))


def main():
    out = sys.argv[1]
    w = words()
    x = [s32(v) for v in w]
    qs, qu = [], []
    for i in range(N):
        a, b = x[i], w[i]
        for c in S_CONST + list(S_ARGS.values()):
            qs += list(cdiv(a, c))
        nn = a & 0x7FFFFFFF   # the kernel's non-negative dividend
        for c in (7, 641, 2):
            qs += list(cdiv(nn, c))
        qs += list(cdiv(a, S_ARGS["d5"] - S_ARGS["d2"] * 7))   # the divisor licm moves out of the loop
        for c in U_CONST + list(U_ARGS.values()):
            qu += [b // c, b % c]
    npy(out + "/x.npy", "i", "<i4", x)
    npy(out + "/u.npy", "I", "<u4", w)
    npy(out + "/qs.npy", "i", "<i4", qs)
    npy(out + "/qu.npy", "I", "<u4", qu)


if __name__ == "__main__":
    main()
