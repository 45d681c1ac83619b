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
0.42 s); the golden model calls this one instead. It sorts with
``kind="stable"`` (the values come out the same): numpy's default introsort does
not use runs, and the keys of a unit's requests are mostly ascending runs
(threads walk their edges in order, warps come in order), where the stable sort
(timsort) is 6-90x faster (261 K keys of a grid's pull sweep: 13 ms against
0.15 ms); on random keys the two are within 20 %.

:class:`ContentMemo` keeps the results of a few pure, costly computations keyed
by the *contents* of their input arrays: a pull-style kernel sweeps every vertex
every iteration, so its warps' addresses (and their coalescing) repeat exactly
from one iteration to the next, and only the values read change.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import sys
from collections import OrderedDict

import numpy as np

__all__ = ["tune_allocator", "unique", "count_unique", "ContentMemo"]

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
    s = np.sort(a, kind="stable")
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
    s = np.sort(a, kind="stable")
    return 1 + int(np.count_nonzero(s[1:] != s[:-1]))


class ContentMemo:
    """Results of a pure function, keyed by scalars and the contents of arrays.

    ``get(scalars, arrays)`` returns the stored value whose scalars are equal and
    whose arrays have equal contents (compared in full, after a cheap sample), or
    ``None``; ``put(scalars, arrays, value, size)`` stores copies of the arrays
    (so the caller may change its own afterwards) and the value, whose own size
    in bytes the caller gives. The least recently used entries go once the
    stored bytes pass ``max_bytes``; an entry over half of it is not stored."""

    #: At most this many entries with the same scalars and sample (the most recently
    #: stored) are compared in full on a lookup: arrays that differ only off the
    #: sample (a frontier in a mostly empty per-vertex array) would otherwise make
    #: every lookup compare them all; an older equal entry is then missed (computed
    #: again), never wrongly hit.
    COMPARED = 8

    def __init__(self, max_bytes: int = 1 << 30):
        self.max_bytes = int(max_bytes)
        # entry number -> (scalars, arrays, sample, value, bytes), least recently used first;
        # (scalars, sample) -> the numbers of the entries with them (a lookup is one dict
        # access, not a scan of every entry: a pull sweep keeps thousands)
        self._entries: OrderedDict = OrderedDict()
        self._index: dict = {}
        self._count = 0
        self._bytes = 0
        self.hits = 0
        self.misses = 0

    def __len__(self) -> int:
        return len(self._entries)

    @staticmethod
    def _sample(arrays) -> tuple:
        out = []
        for a in arrays:
            if isinstance(a, np.ndarray):
                step = max(1, a.size // 32)
                out.append((a.shape, a.dtype.str, a.reshape(-1)[::step].tobytes()))
            else:                               # None or a scalar
                out.append(a)
        return tuple(out)

    @staticmethod
    def _same(x, y) -> bool:
        if isinstance(x, np.ndarray) and isinstance(y, np.ndarray):
            return x.shape == y.shape and x.dtype == y.dtype and bool(np.array_equal(x, y))
        if x is None or np.isscalar(x) or y is None or np.isscalar(y):
            return (x is None and y is None) or (x is not None and y is not None and np.isscalar(x)
                                                  and np.isscalar(y) and x == y)
        return x.shape == y.shape and x.dtype == y.dtype and bool(np.array_equal(x, y))

    def get(self, scalars: tuple, arrays: tuple):
        ids = self._index.get((scalars, self._sample(arrays)))
        if ids:
            for i in reversed(ids[-self.COMPARED:]):    # the most recently stored first
                e = self._entries[i]
                if all(self._same(a, b) for a, b in zip(arrays, e[1])):
                    self._entries.move_to_end(i)
                    self.hits += 1
                    return e[3]
        self.misses += 1
        return None

    def put(self, scalars: tuple, arrays: tuple, value, size: int) -> None:
        nbytes = int(size) + sum(np.asarray(a).nbytes for a in arrays if a is not None and not np.isscalar(a))
        if nbytes > self.max_bytes // 2:
            return                          # too large to keep: not even copied
        kept = tuple(a if a is None or np.isscalar(a) else np.array(a, copy=True) for a in arrays)
        sample = self._sample(kept)
        i = self._count
        self._count += 1
        self._entries[i] = (scalars, kept, sample, value, nbytes)
        self._index.setdefault((scalars, sample), []).append(i)
        self._bytes += nbytes
        while self._bytes > self.max_bytes:
            j, e = self._entries.popitem(last=False)
            self._bytes -= e[4]
            ids = self._index[(e[0], e[2])]
            ids.remove(j)
            if not ids:
                del self._index[(e[0], e[2])]
