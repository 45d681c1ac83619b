"""Testbench harness of the MFF unit: a command sequencer (one command in flight per
warp, as ``PC_wait`` makes it; barriers for host writes and invalidations), the
scratchpad and completion monitors, random workloads, and the comparison with
the TLM (:class:`golden.mff.MFFModel`) and with values read straight from memory.

What must hold (docs/mff.md): every gathered value lands at its target, a
command completes only after all of its values, its error flag is the TLM's,
and the final memory (bitmaps set by scatters) equals the TLM's.
"""
from __future__ import annotations

import random
from dataclasses import dataclass

import numpy as np

from golden.memory import AddressSpace
from golden.mff import MFF_OPS, MFFCommand, MFFConfig, MFFModel, ThreadRequest, gather_values
from hw.mem.port import MemRequest, MemResponse
from hw.mff.unit import MFFCommandLayout, MFFDone, MFFSpadWrite

from .agents import MemoryAgent, StreamSink, StreamSource
from .codec import Codec
from .memory import MemoryModel, MemoryTiming

__all__ = ["Poke", "MFFHarness", "make_workload", "encode_command", "worked_example"]


@dataclass(frozen=True)
class Poke:
    """The host (GPU) writes memory between commands: a barrier in the sequence."""

    addr: int
    data: bytes


def encode_command(cmd: MFFCommand) -> list[dict]:
    """The thread entries of a command (at least one; the last has ``last = 1``)."""
    base = {"op": MFF_OPS[cmd.op], "warp": cmd.warp, "cbase": cmd.cbase, "vbase": cmd.vbase,
            "vsize8": int(cmd.vsize == 8)}
    threads = list(cmd.threads) if cmd.op != "invalidate" else []
    if not threads:
        return [dict(base, lane=0, cidx=0, size=0, target=0, last=1)]
    return [dict(base, lane=t.lane, cidx=t.cidx, size=t.size, target=t.target, last=int(k == len(threads) - 1))
            for k, t in enumerate(threads)]


class MFFHarness:
    """Agents and bookkeeping for one run of the MFF RTL on a list of commands (and pokes)."""

    def __init__(self, config: MFFConfig, space: AddressSpace, items: list, *,
                 timing: MemoryTiming = MemoryTiming(), cmd_pause=None, spad_ready=None, done_ready=None,
                 seed: int = 0, expect: bool = True):
        self.config = config
        self.space = space
        self.items = list(items)
        self.model = MemoryModel(space, config.block_bytes, timing)
        self.expected = None
        if expect:
            self.ref_space = space.copy()
            tlm = MFFModel(config, self.ref_space, is_error=self.model.is_error)
            self.expected = []
            for it in self.items:
                if isinstance(it, Poke):
                    self.ref_space.write(it.addr, np.frombuffer(it.data, np.uint8))
                    self.expected.append(None)
                else:
                    self.expected.append(tlm.execute(it))
        self.cmd = StreamSource(("cmd",), Codec(MFFCommandLayout(config)), [], pause=cmd_pause, seed=seed)
        self.spad = StreamSink(("spad",), Codec(MFFSpadWrite(config)), ready=spad_ready, seed=seed + 1,
                               on_item=self._spad, keep=False)
        self.done = StreamSink(("done",), Codec(MFFDone(config)), ready=done_ready, seed=seed + 2,
                               on_item=self._done, keep=False)
        self.mem = MemoryAgent(("mem",), Codec(MemRequest(config.port)), Codec(MemResponse(config.port)),
                               self.model)
        self.next = 0                       # next item to start
        self.inflight: dict[int, int] = {}  # warp -> item index
        self.results: dict[int, dict] = {}  # item index -> {"values", "error", "order"}
        self.problems: list[str] = []
        self.events = 0
        self._feed()

    @property
    def agents(self):
        return [self.cmd, self.mem, self.spad, self.done, _Feeder(self)]

    # ------------------------------------------------------------------ sequencing
    def _feed(self) -> None:
        while self.next < len(self.items):
            it = self.items[self.next]
            barrier = isinstance(it, Poke) or it.op == "invalidate"
            if barrier and self.inflight:
                return
            if isinstance(it, Poke):
                self.space.write(it.addr, np.frombuffer(it.data, np.uint8))
                self.results[self.next] = {"values": {}, "error": False}
                self.next += 1
                continue
            if it.warp in self.inflight:
                return
            self.inflight[it.warp] = self.next
            self.results[self.next] = {"values": {}, "error": None, "expect": gather_values(self.space, it)
                                       if it.op == "gather" else {}}
            for entry in encode_command(it):
                self.cmd.put(entry)
            self.next += 1
            if barrier:
                return

    def submit(self, item) -> int:
        """Append one more command (RTL in the loop); returns its index."""
        self.items.append(item)
        self._feed()
        return len(self.items) - 1

    def _spad(self, it: dict) -> None:
        k = self.inflight.get(it["warp"])
        if k is None:
            self.problems.append(f"scratchpad write for warp {it['warp']}, which has no command in flight")
            return
        size = 8 if it["e8"] else 4
        val = it["data"] & ((1 << (8 * size)) - 1)
        vals = self.results[k]["values"]
        if it["addr"] in vals:
            self.problems.append(f"item {k}: scratchpad address {it['addr']} written twice")
        vals[it["addr"]] = val

    def _done(self, it: dict) -> None:
        k = self.inflight.pop(it["warp"], None)
        if k is None:
            self.problems.append(f"completion for warp {it['warp']}, which has no command in flight")
            return
        r = self.results[k]
        r["error"] = bool(it["error"])
        r["order"] = self.events
        self.events += 1
        # Completion only after every value of the command.
        missing = set(r["expect"]) - set(r["values"])
        if missing and not r["error"]:
            self.problems.append(f"item {k}: completed before {len(missing)} of its values arrived")
        self._feed()

    def done_all(self) -> bool:
        return self.next >= len(self.items) and not self.inflight

    # ------------------------------------------------------------------ checks
    def mismatches(self) -> list[str]:
        out = list(self.problems)
        if not self.done_all():
            out.append(f"{self.next} of {len(self.items)} items started, {len(self.inflight)} in flight")
        for k, it in enumerate(self.items):
            if isinstance(it, Poke) or k not in self.results:
                continue
            r = self.results[k]
            exp = self.expected[k] if self.expected else None
            if it.op == "gather":
                ref = exp.values if exp is not None else r["expect"]
                if r["values"] != ref:
                    bad = sorted(a for a in set(ref) | set(r["values"]) if ref.get(a) != r["values"].get(a))
                    out.append(f"item {k} (warp {it.warp}): {len(bad)} scratchpad values differ, first at "
                               f"{bad[0]}: {r['values'].get(bad[0])} vs {ref.get(bad[0])}")
                if exp is not None and not exp.error and exp.values != r["expect"]:
                    out.append(f"item {k}: the TLM's values differ from memory's")
            if exp is not None and r["error"] is not None and r["error"] != exp.error:
                out.append(f"item {k} ({it.op}): error flag {r['error']}, expected {exp.error}")
        if self.expected is not None:
            for reg in self.space.regions.values():
                a = self.space.read(reg.base, reg.nbytes)
                b = self.ref_space.read(reg.base, reg.nbytes)
                if not np.array_equal(a, b):
                    bad = int(np.flatnonzero(a != b)[0])
                    out.append(f"memory region {reg.name!r} differs from the TLM's at byte {bad}")
        return out


class _Feeder:
    # Lets the sequencer start waiting commands each cycle (after completions).
    def __init__(self, h):
        self.h = h

    def drive(self):
        return {}

    def clock(self, get):
        pass


# ---------------------------------------------------------------------- workloads
def worked_example(space: AddressSpace | None = None):
    """The slides' example (docs/mff.md): vertices 0-3, R = [0, 8, 9, 15, 17] and the
    C entries their figure shows (C[0]=0, C[1]=3, C[8]=3, C[9]=1, C[10]=3, C[15]=0,
    C[16]=1); each thread gathers the neighbours drawn for it (2, 1, 2 and 2).
    Returns ``(space, command, arrays)``."""
    space = space or AddressSpace()
    R = np.array([0, 8, 9, 15, 17], np.uint32)
    C = np.zeros(24, np.uint32)
    for i, v in {0: 0, 1: 3, 8: 3, 9: 1, 10: 3, 15: 0, 16: 1}.items():
        C[i] = v
    V = np.array([0xA, 0xB, 0xC, 0xD], np.uint32)            # a, b, c, d
    bases = {"R": space.alloc("R", R), "C": space.alloc("C", C), "V": space.alloc("V", V)}
    sizes = [2, 1, 2, 2]
    threads = tuple(ThreadRequest(lane=j, cidx=int(R[j]), size=sizes[j], target=16 * j) for j in range(4))
    cmd = MFFCommand("gather", warp=0, threads=threads, cbase=bases["C"], vbase=bases["V"], vsize=4)
    return space, cmd, {"R": R, "C": C, "V": V, "bases": bases, "sizes": sizes}


def make_workload(config: MFFConfig, spec: dict) -> tuple[AddressSpace, list]:
    """Random commands over a random CSR-like C and a V array: ``{"seed", "commands",
    "max_size", "warps", "vsize8": probability, "scatter": probability, "pokes": bool}``."""
    if spec.get("kind") == "example":
        space, cmd, _ = worked_example()
        return space, [cmd]
    if spec.get("kind") == "bench":
        return bench_workload(config, spec)
    if spec.get("kind") == "stale":
        return stale_workload(config, spec)
    rng = np.random.default_rng(spec.get("seed", 0))
    r = random.Random(spec.get("seed", 0))
    space = AddressSpace(addr_bits=config.addr_width)
    nv = spec.get("vertices", 512)
    ne = spec.get("edges", 4096)
    hot = spec.get("hot", nv)                   # neighbours drawn among the first `hot` vertices
    cb = space.alloc("C", rng.integers(0, hot, ne, dtype=np.uint32), align=256)
    v4 = space.alloc("V4", rng.integers(0, 2**32, nv, dtype=np.uint32), align=256)
    v8 = space.alloc("V8", rng.integers(0, 2**63, nv, dtype=np.uint64), align=256)
    bm = space.alloc("bitmap", np.zeros(nv // 32 + 1, np.uint32), align=256)
    items: list = []
    max_size = spec.get("max_size", 24)
    spad = 1 << config.target_width
    for _ in range(spec.get("commands", 12)):
        warp = r.randrange(spec.get("warps", 6))
        kind = "scatter" if r.random() < spec.get("scatter", 0.2) else "gather"
        lanes = r.sample(range(32), r.choice([0, 1, 3, 8, 32]))
        if kind == "scatter":
            th = tuple(ThreadRequest(lane=l, cidx=r.randrange(nv), size=r.choice([1, 1, 1, 0])) for l in lanes)
            items.append(MFFCommand("scatter", warp, th, cbase=cb, vbase=bm))
            continue
        vs = 8 if r.random() < spec.get("vsize8", 0.3) else 4
        slot = spad // 32 // vs * vs
        th = []
        for l in lanes:
            size = r.choice([0, 1, 2, r.randint(0, max_size), r.randint(0, max_size)])
            if r.random() < spec.get("large", 0.03):
                size = min(spec.get("large_size", 300), slot // vs, ne - 1)
            size = min(size, slot // vs)
            th.append(ThreadRequest(lane=l, cidx=r.randrange(ne - size), size=size, target=l * slot))
        items.append(MFFCommand("gather", warp, tuple(th), cbase=cb, vbase=v8 if vs == 8 else v4, vsize=vs))
        if spec.get("pokes", True) and r.random() < 0.08:
            # The host writes V, invalidates the tag unit, and gathers again.
            addr = v4 + 4 * r.randrange(hot)
            items += [Poke(addr, int(r.randrange(2**32)).to_bytes(4, "little")),
                      MFFCommand("invalidate", warp)]
    return space, items


def stale_workload(config: MFFConfig, spec: dict) -> tuple[AddressSpace, list]:
    """A warp gathers bitmap words (so the tag unit holds their block), sets bits with
    PC_scatter_set, and gathers the words again: the second gather must see the new
    bits, not the line the tag unit held before."""
    space = AddressSpace(addr_bits=config.addr_width)
    words = 16
    bm = space.alloc("bitmap", np.zeros(words, np.uint32), align=256)
    cidx = space.alloc("C", np.arange(words, dtype=np.uint32), align=256)
    gather = MFFCommand("gather", 1, (ThreadRequest(lane=0, cidx=0, size=words, target=0),), cbase=cidx, vbase=bm)
    r = random.Random(spec.get("seed", 0))
    bits = tuple(ThreadRequest(lane=l, cidx=r.randrange(32 * words)) for l in range(32))
    scatter = MFFCommand("scatter", 1, bits, vbase=bm)
    return space, [gather, scatter, gather, scatter, gather]


def bench_workload(config: MFFConfig, spec: dict) -> tuple[AddressSpace, list]:
    """Gathers of a graph's neighbour values, one command per warp of 32 vertices
    (PageRank pull): ``{"kind": "bench", "graph", "pc_size", "warps"}``."""
    from golden.graphs import load_graph
    g = load_graph(spec.get("graph", "kron:scale=10"))
    space = AddressSpace(addr_bits=config.addr_width)
    cb = space.alloc("C", g.col.astype(np.uint32), align=256)
    vb = space.alloc("V", np.arange(g.num_vertices, dtype=np.uint32) * 3 + 1, align=256)
    pc = spec.get("pc_size", 16)
    deg = g.degrees()
    items = []
    nwarps = min(spec.get("warps", 16), -(-g.num_vertices // 32))
    for w in range(nwarps):
        th = []
        for lane in range(32):
            v = 32 * w + lane
            if v < g.num_vertices:
                th.append(ThreadRequest(lane=lane, cidx=int(g.row_ptr[v]), size=int(min(deg[v], pc)),
                                        target=lane * pc * 4))
        items.append(MFFCommand("gather", w % (1 << config.warp_bits), tuple(th), cbase=cb, vbase=vb))
    return space, items
