#!/usr/bin/env python3
"""Writes ir.dict, libFuzzer's dictionary for textual tile IR, from the IR's own tables: the op names
of ir/ops.def, the attribute names of ir/attrs.def (each also as `name = `), the type spellings the
IR parser reads (ir/ir.c's kind names and the compound forms) and the text format's keywords and
punctuation. Usage: mkdict_ir.py ROOT OUT"""
import re
import sys

root, out = sys.argv[1], sys.argv[2]
words = []
ops = re.findall(r'^OP\(\w+,\s*"([a-z_0-9]+)"', open(root + "/ir/ops.def").read(), re.M)
words += ops + ["%%r = %s " % o for o in ops]
attrs = sorted(set(re.findall(r'^ATTR\(\w+,\s*(\w+),', open(root + "/ir/attrs.def").read(), re.M)))
words += attrs + ["%s = " % a for a in attrs]
kinds = re.findall(r'\[TY_\w+\] = "([a-z0-9]+)"', open(root + "/ir/ir.c").read())
words += kinds
words += ["ptr<f32>", "ptr<f32, shared>", "ptr<f32, cluster>", "ptr<u64, symmetric>", "view<2xf32>", "tile<64x64xbf16>",
          "tile<128xf32>", "vec<8xf32>", "vec<32xf32>", "parity", "mbar", "mbar<4>", "mbar<cluster>", "smem<64x64xbf16>",
          "smem<8x8xf32, stages=2>", "smem<64x64xbf16, stages=4, swizzle=128>", "smem<?xf32>", "tma<64x64xbf16>",
          "smem<2xu64>", ", stages=", ", swizzle=", "shared", "cluster", "symmetric", "?x"]
words += ['module "m.tile"\n', 'module "m.tile" target "sm_100a"\n', ' target "gfx942"', "kernel @k(", ") block(128, 1, 1) ",
          "cluster(1, 1, 1) ", "cluster(2, 1, 1) ", "smem(1024) ", "loc(1:1)", " loc(", "} else {", "^(", "):\n", " {\n",
          "}\n", "\n", "%", "@", "%0", "%a", ": i32", ": ", ", ", " = ", "{", "}", "[", "]", "(", ")", "<", ">", "\"", "//",
          "0", "1", "-1", "128", "1024", "2147483647", "-2147483648", "4294967296", "9223372036854775807",
          "-9223372036854775808", "1.5", "0.0", "1e308", "1e400", "inf", "-inf", "nan", '"cta"', '"cluster"', '"eq"',
          '"lt"', '"thread"', '"s0"', '"\\x01"', "[64, 64]", "[64, 64, 16]", "[]"]
with open(out, "w") as f:
    for w in words:
        f.write('"%s"\n' % "".join(c if c.isprintable() and c not in '"\\' else "\\x%02x" % ord(c) for c in w))
print("%s: %d entries" % (out, len(words)))
