"""Process-level tuning for large numpy runs of the golden model.

glibc serves every allocation above its mmap threshold (at most 32 MiB) with a
fresh ``mmap`` and gives it back on ``free``, so each large temporary array of a
vectorised kernel pays page faults again. :func:`tune_allocator` makes glibc keep
freed memory in its heap for reuse instead (``M_MMAP_MAX = 0``, a large
``M_TRIM_THRESHOLD``). The CLI and the benchmarks call it; results do not change,
only speed (docs/golden.md, "Speed").
"""
from __future__ import annotations

import ctypes
import ctypes.util
import sys

__all__ = ["tune_allocator"]

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
