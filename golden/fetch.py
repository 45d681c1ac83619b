"""The shared memory port and fetch engine: configurations and the exact
transaction-level model (TLM) of the fetch engine.

The fetch engine is the reusable block behind the SCU's Address Generator, Data
Fetch and Coalescing Unit (SCU paper §3, Fig. 7), the IRU prefetcher and
GraphPEG's edge fetch. It reads *ranges* of 4- or 8-byte elements through a
block-sized memory port, merges element reads that fall in one of the last
``merge_window`` blocks it requested, and streams the elements out in order,
``width`` per beat. Rules (shared by this TLM and the RTL, see docs/architecture.md):

* A range ``(base, count, esize, last)`` covers ``count`` elements from ``base``;
  the ranges up to one with ``last`` set form one *operation*.
* A range is split into block segments: the elements of the range that lie in
  one ``block_bytes`` block. A segment whose block equals one of the blocks of the
  last ``merge_window`` memory requests of the same operation reuses that
  request; otherwise a new request is issued. The window empties at the end of
  every operation.
* A base that is not a multiple of ``esize``, 8-byte elements on an engine
  built with ``max_elem_bytes = 4``, or a range that runs past the top of the
  address space (``base + count * esize > 2**addr_width``: it would wrap around
  to address 0) makes the range a command error: no memory request, no element,
  and the operation's final beat has ``error.cmd``. The other ranges of the
  operation are read as usual.
* A memory response with its error flag set marks the operation ``error.mem``;
  the block's data is forwarded as the memory returned it. The model takes a
  block as answered with an error when ``is_error(block)`` says so or when it
  lies past the end of ``space`` (as :class:`sim.memory.MemoryModel` does for an
  address space smaller than the port's).
* Output beats carry ``width`` elements except the operation's last beat, which
  carries the rest (0 for an empty operation) and ``last = 1``.
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Callable, Iterable

import numpy as np

from .config import Config, check, check_choice, check_int, check_pow2
from .memory import AddressSpace

__all__ = ["MemPortConfig", "FetchFields", "FetchConfig", "FetchRange", "FetchOpResult", "fetch_reference",
           "check_fetch_fields"]


@dataclass(frozen=True)
class MemPortConfig(Config):
    """Geometry of the memory port shared by every unit (docs/architecture.md).

    Parameters
    ----------
    addr_width : int
        Width of a byte address.
    block_bytes : int
        Bytes moved by one request (32 = one GPU sector).
    tag_width : int
        Width of the request tag that the response echoes.
    """

    addr_width: int = 32
    block_bytes: int = 32
    tag_width: int = 5

    PRESETS = {"default": {}, "sector": {"block_bytes": 32}, "line": {"block_bytes": 128}}

    def validate(self) -> None:
        n = type(self).__name__
        check_int(n, "addr_width", self.addr_width, 16, 48)
        check_pow2(n, "block_bytes", self.block_bytes, 4, 256)
        check_int(n, "tag_width", self.tag_width, 1, 16)
        check(self.block_bytes < (1 << self.addr_width), f"{n}.block_bytes must be below the address space")

    @property
    def block_bits(self) -> int:
        return self.block_bytes.bit_length() - 1


def check_fetch_fields(c, *, count_min: int = 1) -> None:
    """The checks of the fetch engine's fields (``addr_width``, ``block_bytes``,
    ``width``, ``max_elem_bytes``, ``max_inflight``, ``merge_window``,
    ``count_width`` >= ``count_min``) on a configuration that declares them
    (:class:`FetchConfig`; :class:`golden.scu.SCUConfig`, whose streams are fetch
    engines): one-line :class:`golden.config.ConfigError` naming the class."""
    n = type(c).__name__
    check_int(n, "addr_width", c.addr_width, 16, 48)
    check_pow2(n, "block_bytes", c.block_bytes, 8, 256)
    check_choice(n, "width", c.width, (1, 2, 4, 8))
    check_choice(n, "max_elem_bytes", c.max_elem_bytes, (4, 8))
    check_pow2(n, "max_inflight", c.max_inflight, 2, 1024)
    check_int(n, "merge_window", c.merge_window, 0, 16)
    check(c.merge_window < c.max_inflight,
          f"{n}.merge_window must be smaller than max_inflight ({c.max_inflight}), not {c.merge_window}")
    check_int(n, "count_width", c.count_width, count_min, 32)


@dataclass(frozen=True)
class FetchFields(Config):
    """The fetch engine's geometry fields (``addr_width`` to ``merge_window``, in
    that order), declared once: the base of :class:`FetchConfig` and of
    :class:`golden.scu.SCUConfig`, whose streams are fetch engines; the
    subclasses document them, add their own fields and check them
    (:func:`check_fetch_fields`)."""

    addr_width: int = 32
    block_bytes: int = 32
    width: int = 4
    max_elem_bytes: int = 8
    max_inflight: int = 32
    merge_window: int = 4


@dataclass(frozen=True)
class FetchConfig(FetchFields):
    """Parameters of the fetch engine (set before synthesis).

    Parameters
    ----------
    addr_width : int
        Byte-address width of the memory port.
    block_bytes : int
        Memory port block size in bytes (32 = GPU sector).
    width : int
        Elements per output beat: 1, 2, 4 or 8.
    max_elem_bytes : int
        Largest element size supported at run time: 4 (4 B only) or 8 (4 B and 8 B).
    max_inflight : int
        Memory requests outstanding at once (power of two). Also the number of
        block buffers; ``max_inflight - merge_window`` is what Little's law may use.
    merge_window : int
        Number of most recent block requests a new element read may merge into.
    count_width : int
        Width of a range's element count.
    """

    count_width: int = 32

    PRESETS = {
        # SCU paper Table 1: coalescing unit with 32 in-flight requests, merge window 4.
        "default": {},
        "tx1": {"width": 1},
        "gtx980": {"width": 4},
        # For memories with ~100-cycle latency at one request per cycle (Little's law).
        "deep": {"width": 4, "max_inflight": 128},
    }

    def validate(self) -> None:
        check_fetch_fields(self)

    @property
    def port(self) -> MemPortConfig:
        return MemPortConfig(addr_width=self.addr_width, block_bytes=self.block_bytes,
                             tag_width=self.tag_width)

    @property
    def tag_width(self) -> int:
        return max(1, (self.max_inflight - 1).bit_length())

    @property
    def order_depth(self) -> int:
        """Depth of the in-order segment queue."""
        return 2 * self.max_inflight

    @property
    def lane_bits(self) -> int:
        return 8 * self.max_elem_bytes

    @property
    def words_per_block(self) -> int:
        """4-byte words per block (elements per block at 4 B)."""
        return self.block_bytes // 4

    def derived(self) -> dict:
        return {"tag_width": self.tag_width, "order_depth": self.order_depth,
                "lane_bits": self.lane_bits, "words_per_block": self.words_per_block}


@dataclass(frozen=True)
class FetchRange:
    """One command of the fetch engine."""

    base: int
    count: int
    esize: int = 4
    last: bool = True


@dataclass
class FetchOpResult:
    """What the fetch engine must produce for one operation."""

    elements: np.ndarray                      # uint64, in order
    beats: list[int] = field(default_factory=list)   # element count of every output beat
    requests: list[int] = field(default_factory=list)  # block addresses, in issue order
    mem_error: bool = False
    cmd_error: bool = False


def fetch_reference(config: FetchConfig, space: AddressSpace, ranges: Iterable[FetchRange],
                    is_error: Callable[[int], bool] | None = None) -> list[FetchOpResult]:
    """Exact model of the fetch engine: one :class:`FetchOpResult` per operation.

    ``is_error(block_addr)`` says whether the memory answers that block with an
    error (its data is then what the memory returns: zeros, as the memory model does).
    Errors of the engine's inputs (misaligned base, unsupported element size, a
    range past the top of the address space) are reported in the result
    (``cmd_error``), as the RTL reports them; only values the RTL's command port
    cannot carry (an element size other than 4 or 8, a count or base wider than
    its field) raise :class:`golden.config.ConfigError`.
    """
    bb = config.block_bytes
    top = 1 << config.addr_width
    window: deque[int] = deque(maxlen=max(config.merge_window, 1))
    ops: list[FetchOpResult] = []
    elems: list[np.ndarray] = []
    cur = FetchOpResult(elements=np.zeros(0, np.uint64))
    pending = False
    for r in ranges:
        pending = True
        check_choice("FetchRange", "esize", r.esize, (4, 8))
        check_int("FetchRange", "count", r.count, 0, (1 << config.count_width) - 1)
        check_int("FetchRange", "base", r.base, 0, (1 << config.addr_width) - 1)
        if r.base % r.esize or r.esize > config.max_elem_bytes or r.base + r.count * r.esize > top:
            cur.cmd_error = True
        else:
            addr, rem = r.base, r.count
            while rem:
                block = addr & ~(bb - 1)
                n = min(rem, (block + bb - addr) // r.esize)
                if not (config.merge_window and block in window):
                    cur.requests.append(block)
                    if config.merge_window:
                        window.append(block)
                err = bool(is_error and is_error(block)) or block + bb > space.size
                cur.mem_error |= err
                if err:
                    elems.append(np.zeros(n, np.uint64))
                else:
                    elems.append(space.read_elems(addr, n, r.esize).astype(np.uint64))
                addr += n * r.esize
                rem -= n
        if r.last:
            cur.elements = np.concatenate(elems) if elems else np.zeros(0, np.uint64)
            total = cur.elements.size
            w = config.width
            cur.beats = [w] * (total // w) + ([total % w] if total % w or total == 0 else [])
            ops.append(cur)
            elems = []
            window.clear()
            cur = FetchOpResult(elements=np.zeros(0, np.uint64))
            pending = False
    if pending:
        raise ValueError("the last range must have last=True")
    return ops
