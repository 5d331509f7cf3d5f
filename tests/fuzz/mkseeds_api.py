#!/usr/bin/env python3
"""Seed inputs for api_fuzz (fuzz_api.c): short call programs that reach each kind of launch
(a success, a runaway, a hang, a race, a cluster kernel, a tensor kernel, a source with an error,
a kernel used after its device closed), so the fuzzer starts from inputs that get past compile,
load and argument checks. The byte layout follows fuzz_api.c's readers.

Usage: mkseeds_api.py DIR
"""
import os
import struct
import sys


def u32(v):
    return struct.pack("<I", v)


def compile_(slot, which):   # op 1: slot, source, no damage, opt (3 % 5) - 1 = 2, sm_90a
    return bytes([1, slot, which, 0, 3, 0])


def load(m, dev, prog):      # op 3 (modules, 0): module slot, device, program
    return bytes([3, m, dev, prog])


def kernel(m, name, slot):   # op 19 (modules, 2): module slot, name index, kernel slot
    return bytes([19, m, name, slot])


def malloc_(j, n):           # op 4 (memory, 0): device 0, pointer slot j, n bytes
    return bytes([4, 0, j, 0, 0]) + u32(0) + bytes([0]) + u32(n)


def ptr(j):                  # a pointer argument from slot j, positional
    return bytes([0, j, 0, 255])


def scalar(v):
    return bytes([0]) + u32(v) + bytes([255])


def launch(k, args, gridx=1):   # op 6: kernel slot, arguments, grid.x, defaults, the true count
    return bytes([6, k]) + b"".join(args) + bytes([gridx - 1]) + bytes([255] * 5) + bytes([0])


NAMES = {"add": 0, "spin": 1, "touch": 2, "racy": 3, "saxpy": 4, "bulk": 5, "lost": 6, "bad": 7}

SEEDS = {
    "touch": compile_(0, 1) + load(0, 0, 0) + kernel(0, NAMES["touch"], 0) + malloc_(0, 4096) + launch(0, [ptr(0)]),
    "spin": compile_(0, 1) + load(0, 0, 0) + kernel(0, NAMES["spin"], 1) + malloc_(0, 4096)
    + launch(1, [ptr(0), scalar(1)]),
    "add": compile_(0, 0) + load(0, 0, 0) + kernel(0, NAMES["add"], 0) + malloc_(0, 4096) + malloc_(1, 4096)
    + malloc_(2, 4096) + launch(0, [ptr(0), ptr(1), ptr(2), scalar(1000)], 8),
    "racy": compile_(1, 2) + load(1, 0, 1) + kernel(1, NAMES["racy"], 2) + malloc_(3, 4096)
    + launch(2, [ptr(3), scalar(0)]) + launch(2, [ptr(3), scalar(1)]),
    "saxpy": compile_(2, 3) + load(2, 0, 2) + kernel(2, NAMES["saxpy"], 3) + malloc_(0, 8192) + malloc_(1, 8192)
    + launch(3, [scalar(2), ptr(0), ptr(1), scalar(2048)], 2),
    "bulk": compile_(0, 4) + load(0, 0, 0) + kernel(0, NAMES["bulk"], 4) + malloc_(0, 8192) + malloc_(1, 8192)
    + launch(4, [ptr(0), ptr(1), scalar(512)], 2),
    "lost": compile_(0, 5) + load(0, 0, 0) + kernel(0, NAMES["lost"], 5) + malloc_(0, 4096)
    + launch(5, [ptr(0), scalar(3)]),
    "bad": compile_(0, 6) + load(0, 0, 0),
    # device 0 closed (op 8), then its kernel launched and its memory freed
    "close_then_use": compile_(0, 1) + load(0, 0, 0) + kernel(0, NAMES["touch"], 0) + malloc_(0, 4096)
    + bytes([8, 0]) + launch(0, [ptr(0)]) + bytes([4 + 8 * 1, 0, 0, 0]),
}


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for name, data in SEEDS.items():
        with open(os.path.join(out, "seed-" + name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
