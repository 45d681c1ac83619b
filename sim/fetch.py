"""Testbench harness of the fetch engine: agents for its three ports, collection of
operations, comparison with the TLM (:func:`golden.fetch.fetch_reference`).
Used by the cocotb tests, the Amaranth unit tests, the demo and the benchmark."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from golden.fetch import FetchConfig, FetchOpResult, FetchRange, fetch_reference
from golden.memory import AddressSpace
from hw.fetch.engine import FetchBeat, FetchCommand
from hw.mem.port import MemRequest, MemResponse

from .agents import CycleCounter, MemoryAgent, StreamSink, StreamSource
from .codec import Codec
from .funcov import (LATENCY_BANDS, LATENCY_DOC, PRESSURE, PRESSURE_DOC, CoverModel, CoverPoint, cross,
                     latency_band, register)

RANGES = ("empty", "one element", "within a block", "across blocks")
from .memory import MemoryModel, MemoryTiming

__all__ = ["FetchOp", "FetchHarness"]


@dataclass
class FetchOp:
    """One operation as the RTL produced it."""

    elements: list = field(default_factory=list)
    beats: list = field(default_factory=list)
    mem_error: bool = False
    cmd_error: bool = False
    first_cycle: int | None = None
    last_cycle: int | None = None


#: The fetch engine's functional coverage (sim.funcov; docs/verification.md).
COVERAGE = register(CoverModel("fetch", (
    CoverPoint("range", ("empty", "one element", "within a block", "across blocks", "8-byte elements"),
               "a range (SCU paper §3.1, Address Generator): no element, one, several in one block, several "
               "blocks, 8-byte elements"),
    CoverPoint("range x alignment", cross(("within a block", "across blocks"), ("aligned", "unaligned")),
               "ranges of several elements starting at a block boundary and in mid-block"),
    CoverPoint("range x latency", cross(RANGES, LATENCY_BANDS), "every kind of range in every memory latency "
               "band: " + LATENCY_DOC),
    CoverPoint("range x back-pressure", cross(RANGES, PRESSURE), "every kind of range with and without "
               "back-pressure (output, memory): " + PRESSURE_DOC),
    CoverPoint("operation", ("one range", "several ranges"), "ranges per operation"),
    CoverPoint("merge window", ("shared read", "every segment read"),
               "a segment served by a read of the last merge_window blocks (Coalescing Unit), or none"),
    CoverPoint("beats", ("full", "partial last", "empty last"),
               "output beats: width elements, a partial last beat, a last beat with no element"),
    CoverPoint("errors", ("command error", "memory error"), "an operation with a command error (misaligned, "
               "an unsupported size, past the top), one with an error response"),
    CoverPoint("memory", ("out of order", "refused", "several in flight", "all slots in flight"),
               "responses out of order, a request refused, more than one read in flight, every block buffer "
               "slot in flight (max_inflight)"),
    CoverPoint("streams", ("command paused", "command waits", "output back-pressure"),
               "the command stream held back, a range the engine did not take at once, the output not ready"),
)))


class FetchHarness:
    """Agents and bookkeeping for one run of the fetch engine."""

    COVERAGE = COVERAGE

    def __init__(self, config: FetchConfig, space: AddressSpace, ranges: list[FetchRange], *,
                 timing: MemoryTiming = MemoryTiming(), cmd_pause=None, out_ready=None, seed: int = 0):
        self.config = config
        self.space = space
        self.ranges = list(ranges)
        self.model = MemoryModel(space, config.block_bytes, timing)
        self.expected: list[FetchOpResult] = fetch_reference(config, space, self.ranges, self.model.is_error)
        lane_mask = (1 << (8 * config.max_elem_bytes)) - 1
        items = [{"base": r.base, "count": r.count, "esize8": int(r.esize == 8), "last": int(r.last)}
                 for r in self.ranges]
        self.cmd = StreamSource(("cmd",), Codec(FetchCommand(config)), items, pause=cmd_pause, seed=seed,
                                on_send=self._sent)
        self._op_starts: list[int] = []          # the cycle each operation's first range was accepted
        self._range_last = [r.last for r in self.ranges]
        self._sent_ranges = 0
        self._out_wait = MemoryTiming(req_ready=out_ready).request_cycles()   # the output's refusals, as a memory's
        self.out = StreamSink(("o",), Codec(FetchBeat(config)), ready=out_ready, seed=seed + 7,
                              on_item=self._beat, keep=False)
        self.mem = MemoryAgent(("mem",), Codec(MemRequest(config.port)), Codec(MemResponse(config.port)),
                               self.model)
        self.ops: list[FetchOp] = []
        self._cur = FetchOp()
        self._lane_mask = lane_mask
        self.cycle = 0

    @property
    def agents(self):
        return [self.cmd, self.mem, self.out, CycleCounter(self)]

    def done(self) -> bool:
        return len(self.ops) >= len(self.expected)

    def _sent(self, item: dict) -> None:
        k = self._sent_ranges
        if k == 0 or self._range_last[k - 1]:
            self._op_starts.append(self.cycle)      # the first range of an operation
        self._sent_ranges += 1

    #: Watchdog: an operation may take at most WATCH_FIXED + WATCH_PER_ELEMENT x (its
    #: elements + 16) x (the memory's request bound + the output's longest refusal).
    #: Calibrated on the fetch engine's tests: all pass with 50 + 1 x ....
    WATCH_FIXED = 2000
    WATCH_PER_ELEMENT = 8

    def watchdog(self):
        """The oldest operation in flight, when its clock started and the most cycles
        it may take (:class:`sim.loop.Progress`)."""
        k = len(self.ops)
        if k >= len(self._op_starts) or k >= len(self.expected):
            return None
        n = int(self.expected[k].elements.size)
        per = self.model.timing.request_cycles() + self._out_wait
        # operations are answered in order: the clock starts when the operation's first
        # range was accepted or the one before it finished, whichever is later
        start = max(self._op_starts[k], self.ops[-1].last_cycle if self.ops else 0)
        return (f"fetch operation {k} ({n} elements)", start,
                self.WATCH_FIXED + self.WATCH_PER_ELEMENT * (n + 16) * per)

    def _beat(self, item: dict) -> None:
        op = self._cur
        if op.first_cycle is None:
            op.first_cycle = self.cycle
        n = item["n"]
        op.beats.append(n)
        op.elements.extend(item["data"][:n])
        if item["last"]:
            op.mem_error = bool(item["error.mem"])
            op.cmd_error = bool(item["error.cmd"])
            op.last_cycle = self.cycle
            self.ops.append(op)
            self._cur = FetchOp()

    def coverage(self) -> dict:
        """The cover bins this run reached (sim.funcov)."""
        cfg = self.config
        bb = cfg.block_bytes
        hits: dict[str, set] = {p.name: set() for p in COVERAGE.points}
        op_ranges: list[list] = [[]]
        band = latency_band(self.model.timing)
        pressed = "some" if (self.model.stats.refused or self.out.stalls) else "none"
        for r in self.ranges:
            op_ranges[-1].append(r)
            if r.count == 0:
                kind = "empty"
            elif r.count == 1:
                kind = "one element"
            else:
                first, last = r.base // bb, (r.base + r.count * r.esize - 1) // bb
                kind = "within a block" if first == last else "across blocks"
                hits["range x alignment"].add(f"{kind} {'unaligned' if r.base % bb else 'aligned'}")
            hits["range"].add(kind)
            hits["range x latency"].add(f"{kind} {band}")
            hits["range x back-pressure"].add(f"{kind} {pressed}")
            if r.esize == 8 and r.count:
                hits["range"].add("8-byte elements")
            if r.last:
                hits["operation"].add("one range" if len(op_ranges[-1]) == 1 else "several ranges")
                op_ranges.append([])
        # the merge window: an operation (without command errors) whose segments (the
        # parts of its ranges in one block) outnumber its reads shared one
        for rs, e in zip(op_ranges, self.expected):
            segs = sum((r.base + r.count * r.esize - 1) // bb - r.base // bb + 1 for r in rs if r.count)
            if not e.cmd_error and segs:
                hits["merge window"].add("shared read" if segs > len(e.requests) else "every segment read")
        for e in self.expected:
            if any(b == cfg.width for b in e.beats):
                hits["beats"].add("full")
            if e.beats:
                tail = e.beats[-1]
                hits["beats"].add("empty last" if tail == 0 else "partial last" if tail < cfg.width else "full")
            if e.cmd_error:
                hits["errors"].add("command error")
            if e.mem_error:
                hits["errors"].add("memory error")
        ms = self.model.stats
        for flag, name in ((ms.reordered, "out of order"), (ms.refused, "refused"),
                           (ms.max_outstanding > 1, "several in flight"),
                           (ms.max_outstanding >= cfg.max_inflight, "all slots in flight"),
                           (self.cmd.paused, "command paused"), (self.cmd.waits, "command waits"),
                           (self.out.stalls, "output back-pressure")):
            if flag:
                hits["memory" if name in ("out of order", "refused", "several in flight", "all slots in flight")
                     else "streams"].add(name)
        return hits

    def mismatches(self) -> list[str]:
        """Differences between the RTL run and the TLM (empty when they agree)."""
        out = []
        if len(self.ops) != len(self.expected):
            out.append(f"{len(self.ops)} operations completed, expected {len(self.expected)}")
        for i, (got, exp) in enumerate(zip(self.ops, self.expected)):
            ge = np.array(got.elements, dtype=np.uint64)
            if ge.size != exp.elements.size or not np.array_equal(ge, exp.elements):
                bad = next((j for j in range(min(ge.size, exp.elements.size)) if ge[j] != exp.elements[j]), None)
                out.append(f"op {i}: {ge.size} elements, expected {exp.elements.size}; first difference at {bad}")
            if got.beats != exp.beats:
                out.append(f"op {i}: beats {got.beats[:16]}..., expected {exp.beats[:16]}...")
            if got.mem_error != exp.mem_error or got.cmd_error != exp.cmd_error:
                out.append(f"op {i}: error mem={got.mem_error} cmd={got.cmd_error}, "
                           f"expected mem={exp.mem_error} cmd={exp.cmd_error}")
        exp_reqs = [a for e in self.expected for a in e.requests]
        if self.model.stats.read_blocks != exp_reqs:
            out.append(f"memory reads {len(self.model.stats.read_blocks)} blocks, expected {len(exp_reqs)} "
                       f"(first: {[hex(a) for a in self.model.stats.read_blocks[:6]]} vs {[hex(a) for a in exp_reqs[:6]]})")
        return out


def make_workload(config: FetchConfig, spec: dict) -> tuple[AddressSpace, list[FetchRange]]:
    """A deterministic fetch workload from a JSON-able spec.

    ``{"kind": "linear", "count": N, "esize": 4, "offset": bytes}``: one range;
    ``{"kind": "gather", "seed": S, "count": N, "span_words": W}``: one operation of
    N one-element reads among the first W words (exercises the merge window);
    ``{"kind": "random", "seed": S, "ops": K, "max_count": N}``: random ranges
    (unaligned bases, empty ranges, 4/8-byte elements, a few misaligned ones),
    grouped into operations;
    ``{"kind": "ranges", "ranges": [[offset, count, esize, last], ...]}``: explicit
    ranges relative to a 4 KiB-aligned array;
    ``{"kind": "top", "ranges": [[below, count, esize, last], ...]}``: explicit
    ranges starting ``below`` bytes under the top of the address space (the last
    ``words`` words hold random data), for ranges that end at or run past the top.
    """
    import random
    kind = spec.get("kind", "linear")
    space = AddressSpace(addr_bits=config.addr_width)
    rng = np.random.default_rng(spec.get("seed", 0))
    if kind == "linear":
        esize = spec.get("esize", 4)
        count = spec["count"]
        data = rng.integers(0, 2**63, count + 64, dtype=np.uint64)
        base = space.alloc("array", data, align=4096)
        return space, [FetchRange(base + spec.get("offset", 0), count, esize, True)]
    if kind == "ranges":
        # Explicit ranges [offset, count, esize, last] relative to a 4 KiB-aligned array.
        words = spec.get("words", 4096)
        base = space.alloc("array", rng.integers(0, 2**32, words, dtype=np.uint32), align=4096)
        return space, [FetchRange(base + off, count, es, bool(last)) for off, count, es, last in spec["ranges"]]
    if kind == "top":
        words = spec.get("words", 256)
        top = 1 << config.addr_width
        space.write(top - 4 * words, rng.integers(0, 2**32, words, dtype=np.uint32).view(np.uint8))
        return space, [FetchRange(top - below, count, es, bool(last)) for below, count, es, last in spec["ranges"]]
    if kind == "gather":
        # Many one-element ranges over a few blocks: most reads merge in the window.
        r = random.Random(spec.get("seed", 0))
        words = spec.get("words", 4096)
        base = space.alloc("array", rng.integers(0, 2**32, words, dtype=np.uint32), align=4096)
        span = spec.get("span_words", 64)
        n = spec.get("count", 200)
        ranges = [FetchRange(base + 4 * r.randrange(span), 1, 4, False) for _ in range(n)]
        ranges[-1] = FetchRange(ranges[-1].base, 1, 4, True)
        return space, ranges
    if kind == "random":
        r = random.Random(spec.get("seed", 0))
        words = spec.get("words", 4096)
        base = space.alloc("array", rng.integers(0, 2**32, words, dtype=np.uint32), align=4096)
        esizes = (4, 8) if config.max_elem_bytes == 8 else (4,)
        ranges = []
        for _ in range(spec.get("ops", 8)):
            for j in range(r.choice([1, 1, 2, 3, 5])):
                es = r.choice(esizes)
                count = r.choice([0, 1, 2, config.width, config.width + 1,
                                  r.randint(0, spec.get("max_count", 64))])
                off = r.randrange(0, (words * 4 - count * es - 8) // es) * es
                if r.random() < spec.get("misaligned", 0.03):
                    off += r.choice([1, 2, 3, 4 if es == 8 else 2])
                ranges.append(FetchRange(base + off, count, es, False))
            ranges[-1] = FetchRange(ranges[-1].base, ranges[-1].count, ranges[-1].esize, True)
        return space, ranges
    raise ValueError(f"unknown fetch workload kind {kind!r}")

