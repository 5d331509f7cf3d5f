#!/usr/bin/env python3
"""int_divide_table.py DIR: the inputs and expected outputs of tests/sim/lang/int_divide_table.tile
as .npy files in DIR (x.npy, u.npy: 128 dividends of each type; dv.npy, du.npy: the divisors;
q.npy, qu.npy: every quotient and remainder; dv_wrong.npy: dv with one divisor off by one),
written without NumPy. The divisors are 1 to 40, every power of two from 2^6 and its neighbours,
the largest, and pseudo-random ones of every size (signed ones of both signs and INT_MIN); the
dividends as int_divide.py's."""
import os
import sys

sys.dont_write_bytecode = True   # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import int_divide as base   # noqa: E402  (words, s32, cdiv, npy)

N = 128


def divisors():
    seed = 0x9E3779B97F4A7C15
    ds = list(range(1, 41))
    for b in range(6, 32):
        ds += [(1 << b) - 1, 1 << b, (1 << b) + 1]
    ds += [0xFFFFFFFF, 0xFFFFFFFE]
    i = 0
    while len(ds) < 192:
        seed = (seed * 6364136223846793005 + 1442695040888963407) & 0xFFFFFFFFFFFFFFFF
        w = (seed >> 32) >> (i % 32)
        ds.append(w or 3)
        i += 1
    return [d & 0xFFFFFFFF for d in ds]


def main():
    out = sys.argv[1]
    w = base.words()[:N]
    x = [base.s32(v) for v in w]
    du = divisors()
    dv = [base.s32(d) if d != 0xFFFFFFFF else -1 for d in du]   # i32: both signs, INT_MIN, no -1 by INT_MIN
    dv = [d if d != -1 else 5 for d in dv]
    q, qu = [], []
    for i in range(N):
        for j in range(len(du)):
            q += list(base.cdiv(x[i], dv[j]))
            qu += [w[i] // du[j], w[i] % du[j]]
    base.npy(out + "/x.npy", "i", "<i4", x)
    base.npy(out + "/u.npy", "I", "<u4", w)
    base.npy(out + "/dv.npy", "i", "<i4", dv)
    base.npy(out + "/dv_wrong.npy", "i", "<i4", dv[:7] + [dv[7] + 1] + dv[8:])   # one divisor off by one
    base.npy(out + "/du.npy", "I", "<u4", du)
    base.npy(out + "/q.npy", "i", "<i4", q)
    base.npy(out + "/qu.npy", "I", "<u4", qu)


if __name__ == "__main__":
    main()
