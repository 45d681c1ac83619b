"""Testbench harness of the SCU: agents for its command, status and memory ports,
random workloads, and the comparison with the TLM (:class:`golden.scu.SCUModel`).
Used by the cocotb tests, the Amaranth tests, the demo, the benchmark and the
RTL-in-the-loop backend.

What must agree exactly (docs/scu.md): every operation's status (elements in
and out, error flags, block reads per stream, block writes) and, at the end, the
contents of every region of memory.
"""
from __future__ import annotations

import fnmatch
import random
from dataclasses import dataclass, field

import numpy as np

from golden.memory import AddressSpace, Region
from golden.scu import SCUConfig, SCUModel, SCUOp, SCUStatus, STREAMS, pack_bits
from hw.mem.port import MemRequest, MemResponse
from hw.scu.unit import SCUCommand, SCUStatusLayout

from . import funcov
from ..funcov import Covered
from ..agents import CycleCounter, MemoryAgent, StreamSink, StreamSource
from ..codec import Codec
from ..memory import MemoryModel, MemoryTiming

__all__ = ["RawCommand", "SCUHarness", "make_workload", "directed_workload", "resolve_error_regions",
           "status_from_item"]


@dataclass(frozen=True)
class RawCommand:
    """A descriptor given field by field (e.g. an unknown operation code): the unit
    must answer it with ``cmd_error`` and touch nothing."""

    fields: dict = field(default_factory=dict)


def status_from_item(item: dict) -> SCUStatus:
    st = SCUStatus(elements_in=item["elements_in"], elements_out=item["elements_out"],
                   mem_error=bool(item["mem_error"]), cmd_error=bool(item["cmd_error"]), cycles=item["cycles"],
                   writes=item["writes"])
    st.reads = {s: item["reads"][k] for k, s in enumerate(STREAMS)}
    return st


class SCUHarness(Covered, funcov=funcov):
    """Agents and bookkeeping for one run of the SCU RTL on a list of operations."""

    def __init__(self, config: SCUConfig, space: AddressSpace, ops: list, *, timing: MemoryTiming = MemoryTiming(),
                 cmd_pause=None, status_ready=None, seed: int = 0, expect: bool = True):
        self.config = config
        self.space = space
        self.ops = list(ops)
        self.model = MemoryModel(space, config.block_bytes, timing)
        self.expected: list[SCUStatus] | None = None
        self.ref_space = None
        self.tlm: SCUModel | None = None        # the reference, kept for its hashes' events (coverage)
        if expect:
            self.ref_space = space.copy()
            tlm = self.tlm = SCUModel(config, self.ref_space, is_error=self.model.is_error)
            self.expected = [tlm.execute(op) if isinstance(op, SCUOp) else SCUStatus(cmd_error=True)
                             for op in self.ops]
        self._cmd_codec = Codec(SCUCommand(config))
        items = [self.encode(op) for op in self.ops]
        self.cycle = 0
        self.cmd_cycles: list[int] = []         # the cycle each command was accepted
        self.status_cycles: list[int] = []      # and its status
        self.status_always_ready = status_ready is None
        self.cmd = StreamSource(("cmd",), self._cmd_codec, items, pause=cmd_pause, seed=seed,
                                on_send=lambda it: self.cmd_cycles.append(self.cycle))
        self.statuses: list[SCUStatus] = []
        self.status = StreamSink(("status",), Codec(SCUStatusLayout(config)), ready=status_ready, seed=seed + 3,
                                 on_item=self._status, keep=False)
        self.mem = MemoryAgent(("mem",), Codec(MemRequest(config.port)), Codec(MemResponse(config.port)),
                               self.model)

    def encode(self, op) -> dict:
        if isinstance(op, SCUOp):
            return op.fields(self.config)
        base = SCUOp("data", 0, 0).fields(self.config)
        base.update(op.fields)
        return base

    def submit(self, op) -> None:
        """Queue one more operation (RTL-in-the-loop use; no expectation)."""
        self.ops.append(op)
        self.cmd.put(self.encode(op))

    #: Watchdog: a command may take at most WATCH_FIXED + the hashes' sets + WATCH_PER_ELEMENT x
    #: (its input and output elements + 16) x the memory's request bound
    #: (MemoryTiming.request_cycles). Calibrated on the SCU's tests: every command passes
    #: with 100 + sets + 1 x ... except one grouping of 5 elements at 1,539 cycles.
    WATCH_FIXED = 5000
    WATCH_PER_ELEMENT = 8

    def watchdog(self):
        """The oldest command in flight, when it was accepted and the most cycles it
        may take (:class:`sim.loop.Progress`): a livelocked unit that keeps
        transferring fails here, long before the run's cycle limit. Only with
        the TLM's statuses (they give the output's size)."""
        k = len(self.status_cycles)
        if self.expected is None or k >= len(self.cmd_cycles) or k >= len(self.expected):
            return None
        op = self.ops[k]
        n = op.n if isinstance(op, SCUOp) else 0
        work = n + self.expected[k].elements_out + 16
        # a clear of both hashes first, a flush of the grouping hash at the end (a set a cycle)
        sets = self.config.filter_sets + 2 * self.config.group_sets
        bound = self.WATCH_FIXED + sets + self.WATCH_PER_ELEMENT * work * self.model.timing.request_cycles()
        return f"SCU command {k} ({getattr(op, 'op', 'raw')}, {n} elements)", self.cmd_cycles[k], bound

    def _status(self, item: dict) -> None:
        self.statuses.append(status_from_item(item))
        self.status_cycles.append(self.cycle)

    @property
    def agents(self):
        return [self.cmd, self.mem, self.status, CycleCounter(self)]

    def done(self) -> bool:
        return len(self.statuses) >= len(self.ops)

    def mismatches(self) -> list[str]:
        out = []
        exp = self.expected or []
        if len(self.statuses) != len(exp):
            out.append(f"{len(self.statuses)} statuses, expected {len(exp)}")
        for k, (got, want) in enumerate(zip(self.statuses, exp)):
            if got.key() != want.key():
                op = self.ops[k]
                name = op.op if isinstance(op, SCUOp) else "raw"
                out.append(f"op {k} ({name}): status {got.as_dict()} expected {want.as_dict()}")
        # The status's cycle count: from the command's acceptance to the status offered
        # (to its acceptance when the status stream is always ready).
        for k, (got, c0, c1) in enumerate(zip(self.statuses, self.cmd_cycles, self.status_cycles)):
            if got.cycles != c1 - c0 if self.status_always_ready else not 0 < got.cycles <= c1 - c0:
                out.append(f"op {k}: status reports {got.cycles} cycles, the testbench saw "
                           f"{'' if self.status_always_ready else 'at most '}{c1 - c0} (command accepted at "
                           f"{c0}, status at {c1})")
        if self.ref_space is not None:
            for reg in self.space.regions.values():
                a = self.space.read(reg.base, reg.nbytes)
                b = self.ref_space.read(reg.base, reg.nbytes)
                if not np.array_equal(a, b):
                    bad = int(np.flatnonzero(a != b)[0])
                    out.append(f"memory region {reg.name!r} differs from the TLM's at byte {bad} "
                               f"(address {reg.base + bad:#x}): {a[bad]} vs {b[bad]}")
        return out


# ---------------------------------------------------------------------- workloads
def make_workload(config: SCUConfig, spec: dict) -> tuple[AddressSpace, list]:
    """A deterministic random list of SCU operations over freshly filled memory.

    ``spec``: ``{"seed", "ops", "max_n", "kinds": [...], "misaligned", "raw", "cmp_all", "sweep"}``
    (``cmp_all``: the k-th operation, when a bitmask, compares with the k-th of the
    twelve comparisons, signed and unsigned, in turn; ``sweep``: instead of ``ops``
    random operations, each kind of ``kinds`` at each length class in turn: 0, 1,
    width - 1, width, width + 1 and a block and one more, 4-byte elements).
    Lengths include 0, 1 and values around multiples of the width; bases are
    unaligned to blocks; bitmasks have random density; some operations are
    misaligned (command errors). Memory errors come from the run's timing
    (``error_ranges``, or region names resolved by :func:`resolve_error_regions`).

    The ids that ``filter`` and ``group`` read (region ``ids``) mix three kinds,
    so that both hashes see duplicates, misses and evictions on every preset:
    ids in ``[0, 48)`` (duplicates), ids in ``[0, 65536)`` (mostly new keys) and
    *colliding* ids: ``j * (filter_sets + 1)`` for the filter and
    ``(group_block_bytes / 4) * j * (group_sets + 1)`` for grouping (``j <
    sets``), whose keys all fold to set 0, so a slice of ~70 ids evicts entries
    and leaves round-robin pointers that are not 0 at the end of an operation
    (docs/scu.md, "Filtering", "Grouping"). ``{"kind": "bench"}`` and
    ``{"kind": "directed"}`` give :func:`bench_workload` and
    :func:`directed_workload`.
    """
    if spec.get("kind") == "bench":
        return bench_workload(config, spec)
    if spec.get("kind") == "directed":
        return directed_workload(config, spec)
    rng = np.random.default_rng(spec.get("seed", 0))
    r = random.Random(spec.get("seed", 0))
    W = config.width
    max_n = spec.get("max_n", 80)
    space = AddressSpace(addr_bits=config.addr_width)
    words = 4096
    e8 = config.max_elem_bytes == 8
    data4 = space.alloc("data4", rng.integers(0, 2**32, words, dtype=np.uint32), align=4096)
    data8 = space.alloc("data8", rng.integers(0, 2**63, words, dtype=np.uint64), align=4096) if e8 else None
    ids = space.alloc("ids", _mixed_ids(config, rng, words, spec.get("id_range", 48)), align=4096)
    costs = space.alloc("costs", rng.integers(0, 1000, words, dtype=np.uint32), align=4096)
    idx = space.alloc("idx", rng.integers(0, words - 64, words, dtype=np.uint32), align=4096)
    cnt = space.alloc("cnt", rng.choice([0, 1, 2, 3, 5, 8, 13, 31], words).astype(np.uint32), align=4096)
    masks = space.alloc("masks", pack_bits(rng.random(32 * 256) < rng.random()), align=4096)
    # Filtering and grouping twice as often: their hashes carry state across operations.
    kinds = spec.get("kinds", ["bitmask", "data", "access", "replicate", "expand", "filter", "group", "filter",
                               "group"])
    ops: list = []
    sweep = None
    if spec.get("sweep"):                 # every kind at every length class, in turn, 4-byte elements
        lens = sorted({0, 1, max(W - 1, 0), W, W + 1, config.block_bytes // 4 + 1})
        sweep = [(kind, n) for kind in dict.fromkeys(kinds) for n in lens]
    for k in range(len(sweep) if sweep else spec.get("ops", 12)):
        if sweep:
            kind, n = sweep[k]
        else:
            kind = r.choice(kinds)
            lengths = [0, 1, W - 1 if W > 1 else 2, W, W + 1, 2 * W + 1, 33, r.randint(0, max_n),
                       r.randint(0, max_n)]
            if kind in ("filter", "group"):     # long enough to fill sets and evict
                lengths += [r.randint(max_n // 2, max_n)] * 3
            n = r.choice(lengths)
        es = 8 if (not sweep and e8 and kind not in ("filter", "group") and r.random() < 0.3) else 4
        out = space.alloc_empty(f"out{k}", 8 * max_n * 32 + 64, np.uint8, align=64) + r.choice([0, 4, 8, 28]) // es * es
        mask = masks + 4 * r.randrange(0, 64) if r.random() < 0.6 else None
        base = data8 if es == 8 else data4
        kw = {}
        if kind == "bitmask":
            vals = space.array("data8" if es == 8 else "data4")
            ref = int(vals[r.randrange(words)]) if r.random() < 0.5 else r.randrange(1 << (8 * es - 1))
            cmps = ["eq", "ne", "lt", "le", "gt", "ge"]
            cmp, signed = r.choice(cmps), r.random() < 0.5
            if spec.get("cmp_all"):           # every comparison, signed and unsigned, in turn
                cmp, signed = cmps[k % 6], (k // 6) % 2 == 1
            if signed and ref >= 1 << (8 * es - 1):
                ref -= 1 << (8 * es)
            kw = {"cmp": cmp, "signed": signed, "ref": ref}
            data = base + es * r.randrange(0, words // (es // 4) - max_n - 1)
        elif kind in ("data", "replicate"):
            data = base + es * r.randrange(0, words // (es // 4) - max_n - 1)
            kw = {"cnt": cnt + 4 * r.randrange(0, words - max_n)} if kind == "replicate" else {}
        elif kind in ("access", "expand"):
            data = base
            kw = {"idx": idx + 4 * r.randrange(0, words - max_n)}
            if kind == "expand":
                kw["cnt"] = cnt + 4 * r.randrange(0, words - max_n)
            if es == 8:
                n = min(n, max_n)
        elif kind == "filter":
            data = ids + 4 * r.randrange(0, words - max_n)
            best = r.random() < 0.5
            kw = {"best": best, "clear": r.random() < 0.3}
            if best:
                kw["cnt"] = costs + 4 * r.randrange(0, words - max_n)
        else:  # group
            data = ids + 4 * r.randrange(0, words - max_n)
            mask = None
            # The target's block is a high power of two plus an offset within the block,
            # so that colliding ids keep their set (_mixed_ids).
            kw = {"target": (1 << (config.addr_width - 1)) + 4 * r.randrange(0, config.group_block_bytes // 4)}
        op = SCUOp(kind, n, out, data=data, mask=mask, esize=es, **kw)
        if r.random() < spec.get("misaligned", 0.06):
            op = SCUOp(kind, n, out + 2, data=data, mask=mask, esize=es, **kw)
        ops.append(op)
    if spec.get("raw", True):
        ops.insert(len(ops) // 2, RawCommand({"op": 7, "n": 5}))
    return space, ops


def _mixed_ids(config: SCUConfig, rng, words: int, small: int) -> np.ndarray:
    """Ids for filtering and grouping: duplicates, new keys and colliding keys (make_workload)."""
    fs, gs = config.filter_sets, config.group_sets
    epb = config.group_block_bytes // 4
    # Colliding keys: j * (sets + 1) = j + j * sets folds to j ^ j = 0 for j < sets.
    # Grouping keys on the block of target + 4 * id; the target's block has only bits
    # above these keys (make_workload), so the sum is an OR and all fold to one set.
    f_coll = np.arange(1, min(fs, 4 * config.filter_ways + 2)) * (fs + 1)
    g_coll = epb * np.arange(1, min(gs, 4 * config.group_ways + 2)) * (gs + 1)
    coll = np.concatenate([f_coll, g_coll]) if f_coll.size + g_coll.size else np.zeros(1, np.int64)
    kind = rng.integers(0, 3, words)
    ids = np.where(kind == 0, rng.integers(0, small, words),
                   np.where(kind == 1, rng.integers(0, 1 << 16, words), rng.choice(coll, words)))
    return ids.astype(np.uint32)


def directed_workload(config: SCUConfig, spec: dict) -> tuple[AddressSpace, list]:
    """Operations written out by a test: ``{"kind": "directed", "regions": {name:
    region}, "ops": [op, ...]}``.

    A region is ``{"values": [...], "esize": 4}`` (those elements),
    ``{"random": count, "hi": bound, "esize": 4, "seed": s}`` (random elements in
    ``[0, hi)``), ``{"bits": [0/1, ...]}`` (a packed bit vector) or ``{"empty":
    nbytes}``; every region starts on a 4 KiB boundary, in the order given, or
    at the address ``"at"`` names (a negative one counts from the top of the
    address space: ``"at": -4096`` is the last 4 KiB), which must not overlap
    another region. An op is a dict of :class:`golden.scu.SCUOp` fields in which
    an address may be a region name or ``"name+offset"`` (bytes); other keys
    (e.g. a test's expectations) are ignored."""
    space = AddressSpace(addr_bits=config.addr_width)
    for name, reg in spec["regions"].items():
        dt = {4: np.uint32, 8: np.uint64}[reg.get("esize", 4)]
        if "values" in reg:
            arr = np.asarray(reg["values"], dtype=dt)
        elif "random" in reg:
            arr = np.random.default_rng(reg.get("seed", 0)).integers(0, reg.get("hi", 1 << 31), reg["random"],
                                                                     dtype=dt)
        elif "bits" in reg:
            arr = pack_bits(np.asarray(reg["bits"], dtype=bool))
        else:
            arr = np.zeros(reg["empty"], np.uint8)
        if "at" in reg:
            _place_at(space, name, arr, reg["at"])
        else:
            space.alloc(name, arr, align=4096)

    def addr(v):
        if not isinstance(v, str):
            return v
        name, _, off = v.partition("+")
        return space.region(name).base + int(off or 0)

    fields = {f for f in SCUOp.__dataclass_fields__}
    ops = []
    for d in spec["ops"]:
        kw = {k: addr(v) if k in ("out", "data", "mask", "idx", "cnt", "target") else v
              for k, v in d.items() if k in fields}
        ops.append(SCUOp(**kw))
    return space, ops


def _place_at(space: AddressSpace, name: str, arr: np.ndarray, at: int) -> None:
    """Region ``name`` holding ``arr`` at byte address ``at`` (negative: from the top)."""
    raw = np.ascontiguousarray(arr).view(np.uint8).reshape(-1)
    base = at + space.size if at < 0 else at
    if name in space.regions or base < 0 or base % 4096 or base + raw.size > space.size:
        raise ValueError(f"region {name!r}: 'at' {at} must be a new region on a 4 KiB boundary inside the "
                         f"{space.addr_bits}-bit space")
    for reg in space.regions.values():
        if base < reg.end and reg.base < base + raw.size:
            raise ValueError(f"region {name!r} at {base:#x} overlaps region {reg.name!r}")
    space.regions[name] = Region(name, base, raw.size, arr.dtype.str)
    space.write(base, raw)


def resolve_error_regions(space: AddressSpace, regions) -> list[tuple[int, int]]:
    """Byte ranges of ``[[pattern, lo, hi], ...]``: bytes ``[lo, hi)`` (``hi``
    None: to the end) of every region whose name matches the glob ``pattern``."""
    out = []
    for pattern, lo, hi in regions:
        found = [reg for name, reg in space.regions.items() if fnmatch.fnmatchcase(name, pattern)]
        if not found:
            raise ValueError(f"error region {pattern!r} matches no region; regions: {', '.join(space.regions)}")
        for reg in found:
            end = reg.nbytes if hi is None else min(hi, reg.nbytes)
            if lo < end:
                out.append((reg.base + lo, reg.base + end))
    return out


def bench_workload(config: SCUConfig, spec: dict) -> tuple[AddressSpace, list]:
    """One large operation for throughput measurements: ``{"kind": "bench", "op",
    "n", "density" (bitmask, default none), "esize", "count" (replicate/expand
    counts), "seed"}``. Indexes of gathers point at random elements of the array.
    The measured operation is the last one."""
    rng = np.random.default_rng(spec.get("seed", 0))
    op, n, es = spec["op"], spec["n"], spec.get("esize", 4)
    space = AddressSpace(addr_bits=config.addr_width)
    words = max(4 * n, 1024)
    dt = np.uint32 if es == 4 else np.uint64
    hi = spec.get("id_range", 1 << 31)
    data = space.alloc("data", rng.integers(0, hi, words, dtype=dt), align=4096)
    idx = space.alloc("idx", rng.integers(0, words - 64, n, dtype=np.uint32), align=4096)
    c = spec.get("count", 8)
    cnt = space.alloc("cnt", np.full(n, c, np.uint32), align=4096)
    dens = spec.get("density")
    mask = space.alloc("mask", pack_bits(rng.random(n) < dens), align=4096) if dens is not None else None
    out = space.alloc_empty("out", es * n * max(c, 1) + 64, np.uint8, align=4096)
    kw = {"data": data, "mask": mask, "esize": es}
    if op in ("access", "expand"):
        kw["idx"] = idx
    if op in ("replicate", "expand"):
        kw["cnt"] = cnt
    if op == "bitmask":
        kw.update(cmp="lt", ref=1 << 30)
    if op == "group":
        kw.update(target=0x100000, mask=None)
    if op == "filter" and spec.get("best"):
        kw.update(cnt=cnt, best=True)
    # A first, empty operation takes the hash clearing that follows reset.
    return space, [SCUOp("data", 0, out, data=data), SCUOp(op, n, out, **kw)]
