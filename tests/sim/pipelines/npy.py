#!/usr/bin/env python3
"""npy.py OUT DESCR COUNT EXPR: writes a 1-D .npy file of COUNT elements of type DESCR ('<i4' or
'<f4'), element i = EXPR evaluated with i bound: the expected outputs of the pipeline tests,
written without NumPy (the .npy header is a line of text)."""
import struct
import sys

out, descr, count, expr = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
code = {"<i4": "i", "<f4": "f"}[descr]
vals = [eval(expr, {"i": i}) for i in range(count)]
header = "{'descr': '%s', 'fortran_order': False, 'shape': (%d,), }" % (descr, count)
header += " " * (63 - (10 + len(header)) % 64) + "\n"
with open(out, "wb") as f:
    f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
    f.write(struct.pack("<%d%s" % (count, code), *vals))
