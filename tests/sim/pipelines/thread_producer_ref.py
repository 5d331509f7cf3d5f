#!/usr/bin/env python3
"""Writes the expected `out` of thread_producer.tile as an .npy file (int32, 256 elements):
out[b * 128 + r] = sum over k < n, j < 8 of (8 k + j + r), n = 16. Written without NumPy (the
.npy header is a few lines of text)."""
import struct
import sys

n = 16
vals = [sum(8 * k + j + r for k in range(n) for j in range(8)) for b in range(2) for r in range(128)]
header = "{'descr': '<i4', 'fortran_order': False, 'shape': (%d,), }" % len(vals)
header += " " * (63 - (10 + len(header)) % 64) + "\n"
with open(sys.argv[1], "wb") as f:
    f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
    f.write(struct.pack("<%di" % len(vals), *vals))
