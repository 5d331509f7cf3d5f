"""What the Python tests share: the repository's root, a sample's path, and bf16 as uint16 bits."""
import os

import numpy as np

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def sample(name):
    return os.path.join(ROOT, "samples", name)


def bf16_bits(x):
    """float32 -> bf16 bits (round to nearest even), as uint16."""
    u = np.ascontiguousarray(x, np.float32).view(np.uint32).astype(np.uint64)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def bf16_value(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32)
