"""npy.py: writes and reads .npy files with the standard library only, for tilec run's tests
(which must not need numpy).

  npy.py write OUT DESCR SHAPE EXPR [--version 2]   elements EXPR (a Python expression of i, the
                                                    flat index, and f32()), e.g. "f32(i / 7) * 2.5"; SHAPE like 4x250
  npy.py raw OUT FMT COUNT EXPR                     the same elements as raw little-endian bytes
  npy.py header OUT HEADER-TEXT [--hlen N] [--data BYTES] [--magic M]   a hand-made (hostile) file
  npy.py dump FILE                                  prints the header dict and the elements
"""
import ast
import struct
import sys

FMT = {"<f4": "f", "<f8": "d", "<f2": "e", "<u2": "H", "<i4": "i", "<i8": "q", "|i1": "b", "|u1": "B",
       "<i2": "h", "<u4": "I", "<u8": "Q", "|b1": "?"}


def f32(v):
    """v rounded to f32, as a kernel holds it"""
    return struct.unpack("<f", struct.pack("<f", v))[0]


def header(descr, shape):
    dims = ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "")
    return "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (descr, dims)


def write(path, descr, shape, values, version=1):
    text = header(descr, shape).encode()
    pre = 8 + (2 if version == 1 else 4)
    pad = (64 - (pre + len(text) + 1) % 64) % 64
    text += b" " * pad + b"\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY" + bytes([version, 0]))
        f.write(struct.pack("<H" if version == 1 else "<I", len(text)))
        f.write(text)
        f.write(struct.pack("<%d%s" % (len(values), FMT[descr]), *values))


def main(argv):
    if argv[0] == "write":
        out, descr, shape, expr = argv[1:5]
        version = int(argv[argv.index("--version") + 1]) if "--version" in argv else 1
        dims = [int(d) for d in shape.split("x")] if shape else []
        n = 1
        for d in dims:
            n *= d
        write(out, descr, dims, [eval(expr, {"i": i, "f32": f32}) for i in range(n)], version)
    elif argv[0] == "raw":
        out, fmt, count, expr = argv[1:5]
        with open(out, "wb") as f:
            f.write(struct.pack("<%d%s" % (int(count), fmt), *[eval(expr, {"i": i, "f32": f32}) for i in range(int(count))]))
    elif argv[0] == "header":
        out, text = argv[1:3]
        opts = dict(zip(argv[3::2], argv[4::2]))
        body = text.encode()
        hlen = int(opts.get("--hlen", len(body)))
        version = int(opts.get("--version", 1))
        with open(out, "wb") as f:
            f.write(opts.get("--magic", "\x93NUMPY").encode("latin-1") + bytes([version, 0]))
            f.write(struct.pack("<H" if version == 1 else "<I", hlen))
            f.write(body)
            f.write(b"\0" * int(opts.get("--data", 0)))
    elif argv[0] == "dump":
        with open(argv[1], "rb") as f:
            data = f.read()
        assert data[:6] == b"\x93NUMPY", "magic"
        major = data[6]
        hlen = struct.unpack("<H", data[8:10])[0] if major == 1 else struct.unpack("<I", data[8:12])[0]
        start = 10 if major == 1 else 12
        print("version %d.%d, data offset %d" % (major, data[7], start + hlen))
        h = ast.literal_eval(data[start:start + hlen].decode("latin-1"))
        print("descr %s fortran_order %s shape %s" % (h["descr"], h["fortran_order"], h["shape"]))
        n = 1
        for d in h["shape"]:
            n *= d
        vals = struct.unpack("<%d%s" % (n, FMT[h["descr"]]), data[start + hlen:])
        print("values", " ".join("%.9g" % v for v in vals[:8]), "..." if n > 8 else "")
    else:
        sys.exit("usage: npy.py write|raw|header|dump ...")


if __name__ == "__main__":
    main(sys.argv[1:])
