"""The IRU's arithmetic, written once for the TLM and mirrored by the RTL
(docs/iru.md): the hash of a target memory block, the placement of an element
(partition, bank, row), and the two merge operations (unsigned minimum and
binary32 addition).

The float addition is IEEE-754 binary32 with round to nearest even, except that
subnormal inputs and results are flushed to zero (with their sign) and every NaN
result is the canonical quiet NaN ``0x7FC00000``: exactly what ``hw/iru/fadd.py``
computes. On normal numbers whose sum is normal it equals numpy's float32 sum.
"""
from __future__ import annotations

import numpy as np

from .config import IRUConfig

__all__ = ["fold", "key_blocks", "placement", "fadd32", "fadd32_array", "merge", "QNAN", "f32_bits", "bits_f32"]

QNAN = 0x7FC00000
_INF = 0x7F800000


def fold(x, in_bits: int, out_bits: int):
    """XOR of the ``out_bits``-wide chunks of the ``in_bits``-wide ``x`` (numpy or int)."""
    if out_bits == 0:
        return x * 0
    mask = (1 << out_bits) - 1
    h = x & mask
    for k in range(out_bits, in_bits, out_bits):
        h = h ^ ((x >> k) & mask)
    return h


def key_blocks(idx, target: int, esize: int, config: IRUConfig):
    """The key block of each index: ``(target + idx * esize) >> log2(key_block_bytes)``
    (addresses modulo ``2**addr_width``)."""
    aw = config.addr_width
    kb = config.key_block_bytes.bit_length() - 1
    addr = (np.asarray(idx, dtype=np.int64) * esize + target) & ((1 << aw) - 1)
    return addr >> kb


def placement(idx, target: int, esize: int, config: IRUConfig):
    """``(partition, local set)`` of each index: the global set is the fold of the key
    block into ``log2(partitions * sets)`` bits; its low bits pick the partition."""
    h = fold(key_blocks(idx, target, esize, config), config.key_bits, config.hash_bits)
    pb = config.part_bits
    return h & ((1 << pb) - 1), h >> pb


def fadd32(a: int, b: int) -> int:
    """Bit pattern of ``a + b`` for binary32 bit patterns (see the module docstring)."""
    sa, ea, fa = a >> 31 & 1, a >> 23 & 0xFF, a & 0x7FFFFF
    sb, eb, fb = b >> 31 & 1, b >> 23 & 0xFF, b & 0x7FFFFF
    if (ea == 255 and fa) or (eb == 255 and fb):
        return QNAN
    if ea == 255 and eb == 255:
        return a if sa == sb else QNAN
    if ea == 255:
        return sa << 31 | _INF
    if eb == 255:
        return sb << 31 | _INF
    if ea == 0 and eb == 0:
        return (sa & sb) << 31
    if ea == 0:
        return b
    if eb == 0:
        return a
    ma, mb = 1 << 23 | fa, 1 << 23 | fb
    if (eb, mb) > (ea, ma):
        sa, ea, ma, sb, eb, mb = sb, eb, mb, sa, ea, ma
    d = ea - eb
    big = ma << 3                                   # 27 bits: hidden, 23 fraction, guard, round, sticky
    small = mb << 3
    if d >= 27:
        small = 1                                   # only the sticky bit survives
    elif d:
        small = (small >> d) | int(small & ((1 << d) - 1) != 0)
    e = ea
    if sa == sb:
        s = big + small
        if s >> 27:
            s = (s >> 1) | (s & 1)
            e += 1
    else:
        s = big - small
        if s == 0:
            return 0
        lz = 27 - s.bit_length()
        s <<= lz
        e -= lz
    if e <= 0:
        return sa << 31                             # underflow: flushed to zero
    mant, g, r, st = s >> 3, s >> 2 & 1, s >> 1 & 1, s & 1
    if g and (r or st or mant & 1):
        mant += 1
        if mant >> 24:
            mant >>= 1
            e += 1
    if e >= 255:
        return sa << 31 | _INF
    return sa << 31 | e << 23 | (mant & 0x7FFFFF)


def fadd32_array(a, b) -> np.ndarray:
    """Element-wise :func:`fadd32` of two uint32 arrays."""
    return np.array([fadd32(int(x), int(y)) for x, y in zip(np.asarray(a).tolist(), np.asarray(b).tolist())],
                    dtype=np.uint32)


def merge(op: str, old: int, new: int) -> tuple[int, bool]:
    """Secondary value after merging ``new`` into ``old`` and whether the new element
    replaces the stored one (its position is kept)."""
    if op == "min":
        return (new, True) if new < old else (old, False)
    return fadd32(old, new), False


def f32_bits(x) -> np.ndarray:
    """float values -> binary32 bit patterns (uint32)."""
    return np.asarray(x, dtype=np.float32).view(np.uint32)


def bits_f32(u) -> np.ndarray:
    return np.asarray(u, dtype=np.uint32).view(np.float32)
