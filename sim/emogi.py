"""Testbench harness of the warp coalescer (hw/emogi): a warp source, a request
sink, and the comparison with the TLM (:func:`golden.emogi.coalescer_model`).
Used by the cocotb module (sim/tb/emogi.py) and the Amaranth unit tests.

Workloads (:func:`make_warps`, JSON-able specs):

* ``{"kind": "hand"}``: the hand cases of :data:`HAND_CASES`;
* ``{"kind": "random", "seed": S, "count": N}``: contiguous warps of 4/8-byte
  elements at random offsets, scattered warps, duplicate addresses, random masks,
  all-masked warps, addresses at the top of the address space;
* ``{"kind": "graph", "graph": SPEC, "variant": V, "esize": B, "max_warps": N}``:
  the edge-list warp instructions of a traversal of every vertex (naive, merged
  or aligned, golden/emogi/access.py) with garbage in the inactive lanes;
* ``{"kind": "aligned", "count": N}``: one-line warps back to back (throughput).
"""
from __future__ import annotations

import random

import numpy as np

from golden.emogi import CoalescerConfig, PCIeRequest, coalescer_model
from hw.emogi import ReadRequest, WarpAccess

from .agents import StreamSink, StreamSource
from .codec import Codec

__all__ = ["HAND_CASES", "hand_warps", "make_warps", "CoalescerHarness", "request_tuples", "golden_histogram"]

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
        from golden.emogi.access import edge_accesses, warp_instructions
        from golden.graphs import load_graph
        g = load_graph(spec.get("graph", "kron:scale=9,edgefactor=8,seed=2"), cache=False)
        es = spec.get("esize", 8)
        base = spec.get("base", 0x10000)
        acc = edge_accesses(g.row_ptr[:-1], g.degrees(), spec.get("variant", "merged"), es, base=base, warp=L,
                            sector_bytes=cfg.sector_bytes, line_bytes=cfg.line_bytes, reuse=False)
        warps = warp_instructions(acc, es, base=base, warp=L)
        r = random.Random(spec.get("seed", 0))
        out = []
        for addrs, mask in warps[: spec.get("max_warps", 300)]:
            addrs = [a if mask >> i & 1 else r.randrange(0, top) for i, a in enumerate(addrs)]
            out.append((addrs, mask))
        return out
    raise ValueError(f"unknown coalescer workload kind {kind!r}")


class CoalescerHarness:
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

    @property
    def agents(self):
        return [self.src, self.sink, _Cycles(self)]

    def _sent(self, item) -> None:
        if self.first_in is None:
            self.first_in = self.cycle

    def _request(self, item: dict) -> None:
        self.got.append(PCIeRequest(item["addr"], item["size"], bool(item["last"])))
        self.last_out = self.cycle

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


class _Cycles:
    # Keeps the harness's cycle count (runs after the other agents' clock()).
    def __init__(self, h):
        self.h = h

    def drive(self):
        return {}

    def clock(self, get):
        self.h.cycle += 1

    def idle(self):
        return True


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
