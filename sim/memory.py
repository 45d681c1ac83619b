"""The testbench memory model behind every unit's memory port.

A :class:`MemoryModel` serves block requests from a sparse numpy-backed
:class:`golden.memory.AddressSpace` with configurable timing: fixed or random
latency, a limit on outstanding requests, in-order or out-of-order completion,
request back-pressure and response gap patterns, error responses on chosen
address ranges, and counters. It is simulator-agnostic: :class:`MemoryAgent`
(sim/agents.py) connects it to a port cycle by cycle under cocotb or Amaranth's
simulator.

Access semantics: a request performs its read or write when it is accepted, so
requests act in acceptance order; only the response is delayed.
"""
from __future__ import annotations

import heapq
import itertools
import random
from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from golden.memory import AddressSpace

__all__ = ["MemoryTiming", "MemoryStats", "MemoryModel", "ProtocolError", "Pattern", "timing_from_dict"]


class ProtocolError(AssertionError):
    """The design broke the memory port protocol (e.g. an unaligned address)."""


class Pattern:
    """An endless 0/1 sequence: a cyclic list, or random with probability ``p``."""

    def __init__(self, spec=None, *, seed: int = 0):
        self.spec = spec
        if spec is None:
            self._it = itertools.repeat(1)
        elif isinstance(spec, float):
            if not 0.0 < spec <= 1.0:
                raise ValueError(f"pattern probability must be in (0, 1], not {spec}")
            rng = random.Random(seed)
            self._it = (1 if rng.random() < spec else 0 for _ in itertools.count())
        else:
            seq = [1 if x else 0 for x in spec]
            if not seq or not any(seq):
                raise ValueError(f"pattern {spec!r} must contain at least one 1")
            self._it = itertools.cycle(seq)

    def __next__(self) -> int:
        return next(self._it)

    def __iter__(self):
        return self


@dataclass(frozen=True)
class MemoryTiming:
    """Timing and fault behaviour of the memory model.

    Parameters
    ----------
    latency : int or (int, int)
        Edges from request acceptance to the earliest response transfer; a pair
        draws uniformly from the closed range for every request.
    max_outstanding : int
        Requests accepted but not yet answered; above it ``req.ready`` drops.
    in_order : bool
        Answer in request order even with random latency.
    req_ready : None, float or sequence of 0/1
        Back-pressure on the request stream (None: always ready).
    resp_gap : None, float or sequence of 0/1
        When the memory may present a response (None: every cycle).
    error_ranges : tuple of (lo, hi)
        Byte-address ranges ``[lo, hi)`` answered with an error response.
    seed : int
        Seed of every random draw.
    """

    latency: int | tuple[int, int] = 1
    max_outstanding: int = 256
    in_order: bool = False
    req_ready: object = None
    resp_gap: object = None
    error_ranges: tuple = ()
    seed: int = 0

    def __post_init__(self):
        lat = self.latency
        lo, hi = (lat, lat) if isinstance(lat, int) else tuple(lat)
        if not (isinstance(lo, int) and isinstance(hi, int) and 1 <= lo <= hi):
            raise ValueError(f"latency must be an int >= 1 or a range (lo, hi) with 1 <= lo <= hi, not {lat!r}")
        if self.max_outstanding < 1:
            raise ValueError(f"max_outstanding must be >= 1, not {self.max_outstanding}")

    @property
    def latency_range(self) -> tuple[int, int]:
        lat = self.latency
        return (lat, lat) if isinstance(lat, int) else tuple(lat)

    def request_cycles(self) -> int:
        """A generous bound of the cycles one request may wait on this memory: the
        longest latency, plus the longest refusal of ``req_ready`` and the longest
        gap of ``resp_gap`` (a cyclic pattern: its longest run of zeros, cyclically;
        a probability p: 32 / p, far beyond the usual runs). For watchdogs
        (:class:`sim.loop.Progress`)."""
        def wait(spec) -> int:
            if spec is None:
                return 0
            if isinstance(spec, float):
                return int(32 / spec)
            seq = [1 if x else 0 for x in spec] * 2
            run = best = 0
            for x in seq:
                run = 0 if x else run + 1
                best = max(best, run)
            return best
        return self.latency_range[1] + wait(self.req_ready) + wait(self.resp_gap) + 1


def timing_from_dict(d: dict) -> MemoryTiming:
    """A :class:`MemoryTiming` from its JSON form (a testbench case: lists for the
    latency range and the error ranges)."""
    d = dict(d)
    if isinstance(d.get("latency"), list):
        d["latency"] = tuple(d["latency"])
    if "error_ranges" in d:
        d["error_ranges"] = tuple(tuple(x) for x in d["error_ranges"])
    return MemoryTiming(**d)


@dataclass
class MemoryStats:
    """Counters of a :class:`MemoryModel`."""

    requests: int = 0
    reads: int = 0
    writes: int = 0
    read_bytes: int = 0
    write_bytes: int = 0
    errors: int = 0
    read_errors: int = 0
    write_errors: int = 0
    reordered: int = 0          # responses taken before one to an older request
    refused: int = 0            # cycles a request was offered and not accepted
    max_outstanding: int = 0
    size_hist: Counter = field(default_factory=Counter)   # bytes per request -> count
    read_blocks: list = field(default_factory=list)       # block address of every read, in order
    write_blocks: list = field(default_factory=list)

    def as_dict(self) -> dict:
        return {
            "requests": self.requests, "reads": self.reads, "writes": self.writes,
            "read_bytes": self.read_bytes, "write_bytes": self.write_bytes,
            "errors": self.errors, "max_outstanding": self.max_outstanding,
            "size_hist": {str(k): v for k, v in sorted(self.size_hist.items())},
        }


class MemoryModel:
    """Block-granular memory with timing, serving one memory port.

    Parameters
    ----------
    space : AddressSpace
        Backing store (shared with the golden model).
    block_bytes : int
        Bytes per request (the port's ``block_bytes``).
    timing : MemoryTiming
    """

    def __init__(self, space: AddressSpace, block_bytes: int, timing: MemoryTiming = MemoryTiming()):
        self.space = space
        self.block_bytes = block_bytes
        self.timing = timing
        self.stats = MemoryStats()
        self._rng = random.Random(timing.seed)
        self._lat = timing.latency_range
        self._req_pat = Pattern(timing.req_ready, seed=timing.seed + 1)
        self._gap_pat = Pattern(timing.resp_gap, seed=timing.seed + 2)
        self._pending: list = []          # heap of (ready_time, seq, (tag, rdata, error))
        self._tags: Counter = Counter()   # tags of the requests in flight
        self._failing_writes: set = set()  # sequence numbers of writes in flight answered with an error
        self.write_error_cycles: list = []  # the cycles an error response to a write was taken
        self._seq = 0
        self._issued: list = []           # heap of the sequence numbers in flight (lazy removal)
        self._answered: set = set()
        self._last_ready = 0
        self._outstanding = 0
        self.cycle = 0
        self._req_ready_now = next(self._req_pat)
        self._gap_now = next(self._gap_pat)

    # ---------------------------------------------------------------- faults
    def is_error(self, addr: int) -> bool:
        """Whether a request for the block at ``addr`` gets an error response."""
        end = addr + self.block_bytes
        return any(lo < end and addr < hi for lo, hi in self.timing.error_ranges)

    # ---------------------------------------------------------------- cycle interface
    def req_ready(self) -> bool:
        """Whether a request offered in the current cycle is accepted."""
        return bool(self._req_ready_now) and self._outstanding < self.timing.max_outstanding

    def response(self):
        """The response presented in the current cycle, ``(tag, rdata, error)`` or None."""
        if not self._pending or not self._gap_now:
            return None
        ready, _, resp = self._pending[0]
        return resp if ready <= self.cycle else None

    def accept(self, addr: int, write: int, wdata: int, wmask: int, tag: int) -> None:
        """A request transferred at the end of the current cycle."""
        bb = self.block_bytes
        if addr % bb:
            raise ProtocolError(f"memory request address {addr:#x} is not aligned to the {bb}-byte block")
        if self._tags[tag]:
            raise ProtocolError(f"memory request tag {tag} (address {addr:#x}, cycle {self.cycle}) reused while a "
                                f"request with that tag is in flight: tags must be unique among requests in flight")
        self._tags[tag] += 1
        st = self.stats
        st.requests += 1
        error = self.is_error(addr) or addr + bb > self.space.size
        rdata = 0
        if write:
            st.writes += 1
            nbytes = bin(wmask).count("1")
            st.write_bytes += nbytes
            st.size_hist[nbytes] += 1
            st.write_blocks.append(addr)
            if not error:
                raw = np.frombuffer(int(wdata).to_bytes(bb, "little"), dtype=np.uint8)
                mask = np.array([(wmask >> i) & 1 for i in range(bb)], dtype=bool)
                self.space.write(addr, raw, mask)
        else:
            st.reads += 1
            st.read_bytes += bb
            st.size_hist[bb] += 1
            st.read_blocks.append(addr)
            if not error:
                rdata = int.from_bytes(self.space.read(addr, bb).tobytes(), "little")
        if error:
            st.errors += 1
            if write:
                st.write_errors += 1
            else:
                st.read_errors += 1
        lo, hi = self._lat
        ready = self.cycle + (lo if lo == hi else self._rng.randint(lo, hi))
        if self.timing.in_order:
            ready = max(ready, self._last_ready)
            self._last_ready = ready
        heapq.heappush(self._pending, (ready, self._seq, (tag, rdata, int(error))))
        if write and error:
            self._failing_writes.add(self._seq)
        heapq.heappush(self._issued, self._seq)
        self._seq += 1
        self._outstanding += 1
        st.max_outstanding = max(st.max_outstanding, self._outstanding)

    def response_taken(self) -> None:
        """The presented response transferred at the end of the current cycle."""
        _, seq, (tag, _, _) = heapq.heappop(self._pending)
        issued = self._issued
        if issued[0] != seq:
            self.stats.reordered += 1
            self._answered.add(seq)
        else:
            heapq.heappop(issued)
            while issued and issued[0] in self._answered:
                self._answered.discard(heapq.heappop(issued))
        if seq in self._failing_writes:
            self._failing_writes.discard(seq)
            self.write_error_cycles.append(self.cycle)
        self._tags[tag] -= 1
        self._outstanding -= 1

    def tick(self) -> None:
        """Advance to the next cycle."""
        self.cycle += 1
        self._req_ready_now = next(self._req_pat)
        self._gap_now = next(self._gap_pat)

    @property
    def outstanding(self) -> int:
        return self._outstanding
