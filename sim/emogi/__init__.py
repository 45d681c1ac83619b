"""Testbench harness of the warp coalescer (hw/emogi): a warp source, a request
sink, and the comparison with the TLM (:func:`golden.emogi.coalescer_model`).
Used by the cocotb module (sim/emogi/tb.py) and the Amaranth unit tests.

RTL in the loop (``graphunits cosim --unit coalescer``, docs/emogi.md):
:class:`CoalescerRTLBackend` is a coalescer backend (golden/emogi/datapath.py)
whose requests come from the RTL under cocotb; the cocotb module
sim/emogi/tb_cosim.py runs a whole algorithm with it, so every host-memory warp
instruction of the traversal goes through the RTL and the lanes take their
edges (and weights) from the payloads of the RTL's requests.

Workloads (:func:`make_warps`, JSON-able specs):

* ``{"kind": "hand"}``: the hand cases of :data:`HAND_CASES`;
* ``{"kind": "random", "seed": S, "count": N}``: contiguous warps of 4/8-byte
  elements at random offsets, scattered warps, duplicate addresses, random masks,
  all-masked warps, addresses at the top of the address space;
* ``{"kind": "graph", "graph": SPEC, "variant": V, "esize": B, "max_warps": N, "seed": S}``:
  a random subset, across all loop iterations, of the edge-list warp
  instructions of a traversal of every vertex (naive, merged or aligned,
  golden/emogi/access.py) with garbage in the inactive lanes
  (:func:`graph_instructions`);
* ``{"kind": "aligned", "count": N}``: one-line warps back to back (throughput).
"""
from __future__ import annotations

import random
from pathlib import Path

import numpy as np

from golden.emogi import CoalescerConfig, PCIeRequest, coalescer_model, warp_requests
from hw.emogi import ReadRequest, WarpAccess

from . import funcov
from ..funcov import Covered
from ..agents import CycleCounter, StreamSink, StreamSource
from ..codec import Codec
from ..cosim import CosimUnit
from ..memory import MemoryTiming

__all__ = ["HAND_CASES", "hand_warps", "make_warps", "graph_instructions", "CoalescerHarness", "request_tuples",
           "golden_histogram", "CoalescerRTLBackend", "COSIM_MODES", "cosim_check"]

#: Names of the hand cases, in the order :func:`hand_warps` builds them.
HAND_CASES = ("aligned", "off by one sector", "off by three sectors", "scattered", "inactive lanes",
              "all masked", "duplicates", "two runs in a line", "two full lines", "top of address space",
              "last lane only")


def hand_warps(cfg: CoalescerConfig, base: int = 0x10000) -> list[tuple[str, list[int], int]]:
    """(name, lane addresses, mask) of every hand case, for any configuration: the
    lanes read ``line_bytes / lanes``-byte elements (4 B with 32 lanes and 128 B lines)."""
    L, line, sec = cfg.lanes, cfg.line_bytes, cfg.sector_bytes
    es = max(1, line // L)
    per_sector = max(1, sec // es)
    full = (1 << L) - 1
    contiguous = [base + es * i for i in range(L)]
    out = [
        ("aligned", contiguous, full),
        ("off by one sector", [a + sec for a in contiguous], full),
        ("off by three sectors", [a + line - sec for a in contiguous], full),
        ("scattered", [base + 4096 * (L - 1 - i) + sec * (i % cfg.sectors_per_line) for i in range(L)], full),
        # The lanes of the second sector are off: sector 0 and sectors 2.. remain.
        ("inactive lanes", contiguous, full & ~(((1 << per_sector) - 1) << per_sector)),
        ("all masked", contiguous, 0),
        ("duplicates", [base + 8] * L, full),
        ("two runs in a line", [base + (0 if i % 2 else 2 * sec) for i in range(L)], full),
        ("two full lines", [base + 2 * es * i for i in range(L)], full),
        ("top of address space", [(1 << cfg.addr_width) - line + es * i for i in range(L)], full),
        ("last lane only", contiguous, 1 << (L - 1)),
    ]
    assert [n for n, _, _ in out] == list(HAND_CASES)
    return out


def graph_instructions(cfg: CoalescerConfig, spec: dict) -> list[tuple[int, list[int], int]]:
    """``(loop iteration, addrs, mask)`` of a ``{"kind": "graph"}`` workload: the
    warp instructions that reach memory (the reuse rule applied, unless
    ``"reuse": false``) of a traversal of every vertex's list, a seeded random
    subset of ``max_warps`` of them taken across all loop iterations, in execution
    order; inactive lanes hold random addresses."""
    from golden.emogi.access import edge_accesses, warp_instructions
    from golden.graphs import load_graph
    L, top = cfg.lanes, 1 << cfg.addr_width
    g = load_graph(spec.get("graph", "kron:scale=9,edgefactor=8,seed=2"), cache=False)
    es = spec.get("esize", 8)
    base = spec.get("base", 0x10000)
    acc = edge_accesses(g.row_ptr[:-1], g.degrees(), spec.get("variant", "merged"), es, base=base, warp=L,
                        sector_bytes=cfg.sector_bytes, line_bytes=cfg.line_bytes, reuse=spec.get("reuse", True))
    insts = warp_instructions(acc, es, base=base, warp=L, slots=True)
    r = random.Random(spec.get("seed", 0))
    n = spec.get("max_warps", 300)
    if len(insts) > n:
        insts = [insts[i] for i in sorted(r.sample(range(len(insts)), n))]
    return [(s, [a if mask >> i & 1 else r.randrange(0, top) for i, a in enumerate(addrs)], mask)
            for s, addrs, mask in insts]


def make_warps(cfg: CoalescerConfig, spec: dict) -> list[tuple[list[int], int]]:
    """The warps ``(addrs, mask)`` of a workload spec (see the module docstring)."""
    kind = spec.get("kind", "random")
    L, top = cfg.lanes, 1 << cfg.addr_width
    full = (1 << L) - 1
    if kind == "hand":
        return [(a, m) for _, a, m in hand_warps(cfg)]
    if kind == "aligned":
        return [([0x4000 + cfg.line_bytes * w + (cfg.line_bytes // L) * i for i in range(L)], full)
                for w in range(spec.get("count", 256))]
    if kind == "random":
        r = random.Random(spec.get("seed", 0))
        warps = []
        region = min(top, 1 << 16)
        for _ in range(spec.get("count", 200)):
            shape = r.choice(["contiguous", "contiguous", "contiguous", "scattered", "near", "dup", "wide", "top"])
            if shape == "contiguous":
                es = r.choice([4, 8])
                start = r.randrange(0, region - es * L) // es * es
                addrs = [start + es * i for i in range(L)]
            elif shape == "scattered":
                addrs = [r.randrange(0, top) for _ in range(L)]
            elif shape == "near":               # a few lines, lanes in any order
                start = r.randrange(0, region - 4 * cfg.line_bytes)
                addrs = [start + r.randrange(0, 4 * cfg.line_bytes) for _ in range(L)]
            elif shape == "dup":
                a = r.randrange(0, top)
                addrs = [a if r.random() < 0.7 else r.randrange(0, top) for _ in range(L)]
            elif shape == "wide":               # per-lane stride of a line or more
                stride = cfg.line_bytes * r.choice([1, 2, 33])
                start = r.randrange(0, top - stride * L)
                addrs = [start + stride * i for i in range(L)]
            else:
                addrs = [top - 1 - r.randrange(0, 8 * cfg.line_bytes) for _ in range(L)]
            u = r.random()
            mask = full if u < 0.5 else (0 if u < 0.56 else r.getrandbits(L))
            warps.append((addrs, mask))
        return warps
    if kind == "graph":
        return [(a, m) for _, a, m in graph_instructions(cfg, spec)]
    raise ValueError(f"unknown coalescer workload kind {kind!r}")


class CoalescerHarness(Covered, funcov=funcov):
    """Agents and bookkeeping for one run of the warp coalescer."""

    def __init__(self, config: CoalescerConfig, warps, *, in_pause=None, out_ready=None, seed: int = 0):
        self.config = config
        self.warps = list(warps)
        self.expected: list[PCIeRequest] = coalescer_model(config, self.warps)
        items = [{"addr": list(a), "mask": m} for a, m in self.warps]
        self.src = StreamSource(("i",), Codec(WarpAccess(config)), items, pause=in_pause, seed=seed,
                                on_send=self._sent)
        self.sink = StreamSink(("o",), Codec(ReadRequest(config)), ready=out_ready, seed=seed + 7,
                               on_item=self._request, keep=False)
        self.got: list[PCIeRequest] = []
        self.cycle = 0
        self.first_in = None
        self.last_out = None
        self.back_to_back = False       # a warp's first request in the cycle after the last one's (coverage)
        # watchdog: the warps that send requests (a warp with no active lane sends
        # none), the cycles they were accepted and the one the last warp completed
        self._requests = [len(warp_requests(config, a, m)) for a, m in self.warps]
        self._lanes = [config.lanes if m is None else bin(m).count("1") if isinstance(m, int) else sum(map(bool, m))
                       for _, m in self.warps]
        self._sent_warps = 0
        self._accepted: list[tuple[int, int]] = []     # (warp, cycle) of every warp that sends requests
        self._completed = 0
        self._last_done = 0
        self._out_wait = MemoryTiming(req_ready=out_ready).request_cycles()   # the output's longest refusal

    @property
    def agents(self):
        return [self.src, self.sink, CycleCounter(self)]

    def _sent(self, item) -> None:
        if self.first_in is None:
            self.first_in = self.cycle
        k = self._sent_warps
        self._sent_warps += 1
        if k < len(self._requests) and self._requests[k]:
            self._accepted.append((k, self.cycle))

    def _request(self, item: dict) -> None:
        if self.got and self.got[-1].last and self.last_out == self.cycle - 1:
            self.back_to_back = True
        self.got.append(PCIeRequest(item["addr"], item["size"], bool(item["last"])))
        self.last_out = self.cycle
        if item["last"]:
            self._completed += 1
            self._last_done = self.cycle

    #: Watchdog: a warp may take at most WATCH_FIXED + WATCH_PER_REQUEST x (its requests
    #: + 2) x the output's longest refusal (as a memory's request bound). Calibrated on
    #: the coalescer's tests (cocotb on Icarus and Verilator, Amaranth's simulator): a
    #: warp takes at most 0.49 x (requests + 2) x that (32 one-sector requests), so each
    #: passes within 0.053 of this bound (1/19).
    WATCH_FIXED = 100
    WATCH_PER_REQUEST = 8

    def watchdog(self):
        """The oldest warp accepted whose last request has not come out, when its
        clock started and the most cycles it may take (:class:`sim.loop.Progress`)."""
        if self._completed >= len(self._accepted):
            return None
        k, accepted = self._accepted[self._completed]
        n = self._requests[k]
        # warps are answered in order: the clock starts when the warp was accepted or the
        # one before it finished, whichever is later
        return (f"EMOGI warp {k} (read, {self._lanes[k]} active lanes, {n} requests)",
                max(accepted, self._last_done), self.WATCH_FIXED + self.WATCH_PER_REQUEST * (n + 2) * self._out_wait)

    def done(self) -> bool:
        return self.src.idle() and len(self.got) >= len(self.expected)

    def mismatches(self) -> list[str]:
        """Differences between the RTL's requests and the TLM's (empty when equal)."""
        out = []
        got, exp = self.got, self.expected
        if len(got) != len(exp):
            out.append(f"{len(got)} requests, expected {len(exp)}")
        for i, (g, e) in enumerate(zip(got, exp)):
            if g != e:
                out.append(f"request {i}: got addr={g.addr:#x} size={g.size} last={int(g.last)}, "
                           f"expected addr={e.addr:#x} size={e.size} last={int(e.last)}")
                break
        return out


def request_tuples(reqs) -> list[list[int]]:
    """Requests as JSON-able ``[addr, size, last]`` lists."""
    return [list(r.as_tuple()) for r in reqs]


def golden_histogram(cfg: CoalescerConfig, warps) -> np.ndarray:
    """Requests by sector count of ``warps`` from the golden GPU coalescer
    (:func:`golden.gpu.coalesce_warp`, an independent implementation of the rule);
    addresses must fit in 63 bits."""
    from golden.gpu import coalesce_warp
    total = np.zeros(cfg.sectors_per_line + 1, np.int64)
    for addrs, mask in warps:
        bits = np.array([(mask >> i) & 1 for i in range(cfg.lanes)], bool)
        total += coalesce_warp(np.array(addrs, dtype=np.int64), bits, sector_bytes=cfg.sector_bytes,
                               line_bytes=cfg.line_bytes).requests
    return total


# ---------------------------------------------------------------------- RTL in the loop
class _Encoded:
    # Codec of payloads that are already integers (encoded once per warp, not per cycle).
    @staticmethod
    def encode(value):
        return value


class CoalescerRTLBackend:
    """A coalescer backend (golden/emogi/datapath.py) run by the RTL under cocotb:
    :meth:`coalesce` (called from the algorithm's thread, ``cocotb.task.bridge``)
    feeds a whole batch of warps to the RTL and returns the requests it sent.

    Parameters
    ----------
    dut : the cocotb handle of the coalescer
    config : CoalescerConfig
    in_pause, out_ready : pattern specs (:class:`sim.memory.Pattern`)
        Idle cycles on the warp input and back-pressure on the request output.
    """

    def __init__(self, dut, config: CoalescerConfig, *, in_pause=None, out_ready=None, seed: int = 0,
                 sim: str = "rtl"):
        from cocotb.task import resume

        from ..cocotb_loop import CocotbLoop
        self.config = config
        self.name = f"rtl-{sim}"
        self._codec = Codec(WarpAccess(config))
        self.src = StreamSource(("i",), _Encoded(), pause=in_pause, seed=seed)
        self.sink = StreamSink(("o",), Codec(ReadRequest(config)), ready=out_ready, seed=seed + 7,
                               on_item=self._request, keep=False)
        self.loop = CocotbLoop(dut, [self.src, self.sink])
        self._out_wait = MemoryTiming(req_ready=out_ready).request_cycles()   # the output's longest refusal
        self._watch = None       # the batch in flight: (what, started, bound)
        self.got: list[PCIeRequest] = []
        self.closed = 0          # requests with ``last``
        self.calls = 0
        self.warps = 0
        self.cycles = 0
        self.coalesce = resume(self._coalesce)
        self.first_mismatch: str | None = None   # the first batch whose requests differ (mismatch triage)
        self.perturb_check_op: int | None = None  # tests: corrupt the golden model's requests of this batch
        self.replay_dir = None                   # where the first differing batch's reproducer goes
        self._patterns = (in_pause, out_ready, seed)

    async def start(self) -> None:
        await self.loop.start()

    def _request(self, item: dict) -> None:
        self.got.append(PCIeRequest(item["addr"], item["size"], bool(item["last"])))
        self.closed += item["last"]

    async def _coalesce(self, warps) -> list[PCIeRequest]:
        first = len(self.got)
        target = self.closed
        requests = 0
        for addrs, mask in warps:
            target += mask != 0
            requests += len(warp_requests(self.config, addrs, mask))
            self.src.put(self._codec.encode(addr=addrs, mask=mask))
        # the batch's watchdog: its warps' bounds of the harness (CoalescerHarness.watchdog) added up
        h = CoalescerHarness
        start = self.loop.cycle
        self._watch = (f"EMOGI coalescer call {self.calls} ({len(warps)} warps, {requests} requests)", start,
                       h.WATCH_FIXED + h.WATCH_PER_REQUEST * (requests + 2 * len(warps)) * self._out_wait)
        self.cycles += await self.loop.run(lambda: self.src.idle() and self.closed >= target,
                                           stall_cycles=1000, what=f"coalescer call {self.calls}: {len(warps)} warps",
                                           watch=lambda: self._watch)
        self._watch = None
        self._check(warps, self.got[first:], start)
        self.calls += 1
        self.warps += len(warps)
        return self.got[first:]

    def _check(self, warps, got: list, cycle: int) -> None:
        """Record the first batch whose requests differ from the golden model's
        (:func:`coalescer_difference`); with a ``replay_dir``, write its reproducer."""
        if self.first_mismatch is not None:
            return
        k = self.calls
        want = [warp_requests(self.config, a, m) for a, m in warps]
        if self.perturb_check_op == k:
            perturb_requests(want)
        what = coalescer_difference(got, want)
        if what:
            self.first_mismatch = (f"first difference at coalescer call {k} ({len(warps)} warps; started at RTL cycle "
                                   f"{cycle}): {what}")
            if self.replay_dir:
                path = write_reproducer(self.replay_dir, self.config, warps, self._patterns, k, self.first_mismatch,
                                        perturb=self.perturb_check_op == k)
                self.first_mismatch += f"; reproducer {path} (graphunits replay {path})"

    async def drain(self, cycles: int = 16) -> int:
        """Run ``cycles`` idle cycles; the number of requests that came out meanwhile
        (the RTL must send none after a batch's last warp)."""
        k = len(self.got)
        await self.loop.idle(cycles)
        return len(self.got) - k


def coalescer_difference(got: list, want: list) -> str | None:
    """How a batch's requests (``got``, in order) differ from the golden model's
    (``want``: each warp's list): the first differing request, its warp and both
    values; None if they agree."""
    i = 0
    for w, reqs in enumerate(want):
        for j, e in enumerate(reqs):
            g = got[i] if i < len(got) else None
            if g != e:
                seen = "nothing" if g is None else f"addr={g.addr:#x} size={g.size} last={int(g.last)}"
                return (f"warp {w}'s request {j} (request {i} of the batch) is {seen}, the golden model's "
                        f"addr={e.addr:#x} size={e.size} last={int(e.last)}")
            i += 1
    if len(got) > i:
        g = got[i]
        return f"{len(got) - i} requests more than the golden model's, the first addr={g.addr:#x} size={g.size}"
    return None


def perturb_requests(want: list) -> None:
    """A seeded divergence (tests): the first request of the first warp that has one
    a sector larger (or smaller, at a whole line)."""
    for reqs in want:
        if reqs:
            r = reqs[0]
            reqs[0] = PCIeRequest(r.addr, r.size + 32 if r.size < 128 else r.size - 32, r.last)
            return


def write_reproducer(folder, config: CoalescerConfig, warps, patterns: tuple, index: int, report: str, *,
                     perturb: bool = False) -> Path:
    """A self-contained reproducer of one batch of warps (``graphunits replay``): the
    configuration, every warp's lane addresses and mask, the input's and output's
    patterns, its index in the run and the report (no memory: the coalescer has
    no memory port)."""
    from golden.memory import AddressSpace

    from ..replay import save_reproducer
    in_pause, out_ready, seed = patterns
    return save_reproducer(folder, f"coalescer-call{index}", AddressSpace(addr_bits=config.addr_width),
                           {"unit": "coalescer", "config": config.to_dict(),
                            "warps": [[[int(x) for x in a], None if m is None else
                                       (int(m) if isinstance(m, int) else [bool(x) for x in m])] for a, m in warps],
                            "in_pause": None if in_pause is None else list(in_pause),
                            "out_ready": None if out_ready is None else list(out_ready), "seed": seed,
                            "op_index": index, "report": report, "perturb_requests": perturb})


#: The modes ``graphunits cosim --unit coalescer`` runs (the zero-copy ones; default first).
COSIM_MODES = ("emogi-aligned", "emogi-merged", "emogi-naive")
#: Back-pressure of the cosim: the input idles one cycle in 8, the output one in 4.
COSIM_IN_PAUSE = (1, 1, 1, 1, 1, 1, 1, 0)
COSIM_OUT_READY = (1, 1, 1, 0)


def _hist(d: dict) -> dict:
    return {int(k): int(v) for k, v in d.items()}


def cosim_check(rtl: dict, tlm: dict) -> list[str]:
    """What must hold beyond the result (``rtl``: sim/emogi/tb_cosim.py's result;
    ``tlm``: ``extra["emogi"]`` of the run with the TLM coalescer)."""
    first = [rtl["first_mismatch"]] if rtl.get("first_mismatch") else []
    if rtl.get("error"):
        return first + [f"the run with the RTL coalescer stopped: {rtl['error']}"]
    out = first
    got = _hist(rtl["coalescer"]["requests"])
    if got != _hist(tlm["requests"]):
        out.append(f"RTL requests by size {got}, the golden model's {_hist(tlm['requests'])}")
    if got != _hist(rtl["requests"]):
        out.append(f"RTL requests by size {got}, the golden model's in the same run {_hist(rtl['requests'])}")
    if rtl["coalescer"]["instructions"] != tlm["coalescer"]["instructions"]:
        out.append(f"the RTL run sent {rtl['coalescer']['instructions']} warp instructions, the TLM run "
                   f"{tlm['coalescer']['instructions']}")
    if rtl.get("extra_requests"):
        out.append(f"the RTL sent {rtl['extra_requests']} requests after the last warp")
    return out


def _cosim_rows(rtl: dict, tlm: dict) -> list:
    if rtl.get("error"):
        return [["RTL run", "stopped (see below)"]]
    c = rtl["coalescer"]
    hist = _hist(c["requests"])
    ref = _hist(tlm["requests"])
    return [["warp instructions through the RTL", f"{c['instructions']} in {c['calls']} batches"],
            ["lanes: from requests / from cache", f"{c['lanes'] - c['cache_hits']} / {c['cache_hits']}"],
            ["requests 32/64/96/128 B, RTL", " / ".join(str(hist[s]) for s in sorted(hist))],
            ["requests 32/64/96/128 B, golden model", " / ".join(str(ref[s]) for s in sorted(ref))],
            ["RTL cycles", rtl["cycles"]],
            ["requests per cycle (RTL)", round(c["request_count"] / max(rtl["cycles"], 1), 3)]]


def _cosim_backend(cfg):
    from golden.emogi.datapath import CoalescerTLM
    return CoalescerTLM(cfg)


#: RTL in the loop (its descriptor's ``cosim``, golden/emogi/descriptor.py).
COSIM = CosimUnit("coalescer", ("bfs", "sssp", "cc", "pr"), COSIM_MODES, "default", _cosim_backend,
                  "sim.emogi.tb_cosim", "emogi", cosim_check, _cosim_rows)
