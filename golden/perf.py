"""Process-level tuning for large numpy runs of the golden model.

glibc serves every allocation above its mmap threshold (at most 32 MiB) with a
fresh ``mmap`` and gives it back on ``free``, so each large temporary array of a
vectorised kernel pays page faults again. :func:`tune_allocator` makes glibc keep
freed memory in its heap for reuse instead (``M_MMAP_MAX = 0``, a large
``M_TRIM_THRESHOLD``). The CLI and the benchmarks call it; results do not change,
only speed (docs/golden.md, "Speed").

:func:`unique` is ``np.unique`` by sorting: numpy 2.3+ answers a plain
``np.unique(a)`` of integers with a hash table, which on millions of mostly
distinct keys (the distinct blocks per command of a unit's requests) is 10-15x
slower than a sort (measured with numpy 2.4.6: 4 M int64 keys, 6.4 s against
0.42 s); the golden model calls this one instead.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import sys

import numpy as np

__all__ = ["tune_allocator", "unique", "count_unique"]

_M_TRIM_THRESHOLD = -1
_M_MMAP_MAX = -4
_done = False


def tune_allocator() -> bool:
    """Apply the glibc settings once; returns whether they were applied (Linux/glibc only)."""
    global _done
    if _done:
        return True
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    ok = mallopt(_M_MMAP_MAX, 0) == 1 and mallopt(_M_TRIM_THRESHOLD, 1 << 30) == 1
    _done = ok
    return ok


def unique(values) -> np.ndarray:
    """The sorted distinct values of ``values`` (flattened), as ``np.unique`` gives
    them, computed with a sort (see the module's docstring). Floating-point input
    goes to ``np.unique`` (its NaN rules)."""
    a = np.asarray(values).reshape(-1)
    if a.dtype.kind not in "biu":
        return np.unique(a)
    if a.size < 2:
        return a.copy()
    s = np.sort(a)
    keep = np.empty(s.size, bool)
    keep[0] = True
    np.not_equal(s[1:], s[:-1], out=keep[1:])
    return s[keep]


def count_unique(values) -> int:
    """How many distinct values ``values`` holds (``unique(values).size``)."""
    a = np.asarray(values).reshape(-1)
    if a.dtype.kind not in "biu":
        return int(np.unique(a).size)
    if a.size < 2:
        return int(a.size)
    s = np.sort(a)
    return 1 + int(np.count_nonzero(s[1:] != s[:-1]))
