"""The SCU's functional coverage model (sim.funcov; docs/verification.md,
"Functional coverage"): the behaviours its RTL tests must reach (SCU paper §3,
§4), sampled from a run's operations, the TLM's statuses and hash events, and
the memory model's and agents' counters."""
from __future__ import annotations

from collections import Counter

from golden.scu import SCUOp

from ..funcov import (LATENCY_BANDS, LATENCY_DOC, MEMORY_BINS, MEMORY_DOC, PRESSURE, PRESSURE_DOC, CoverModel,
                      CoverPoint, cross, latency_band, mark, memory_bins, register)

__all__ = ["MODEL", "sample"]

OPS = ("bitmask", "data", "access", "replicate", "expand", "filter", "group")
MASKED = ("bitmask", "data", "access", "replicate", "expand", "filter")
WIDE = ("bitmask", "data", "access", "replicate", "expand")
CMPS = ("eq", "ne", "lt", "le", "gt", "ge")
LENGTHS = ("0", "1", "below width", "width", "beats", "blocks")
#: The base addresses an operation may use (an unused one is 0: block-aligned).
BASES = ("data", "mask", "idx", "cnt", "out", "omask", "weights", "node_cost", "order")

MODEL = register(CoverModel("scu", (
    CoverPoint("op", OPS + ("unknown",), "every operation (§3.1, §4), and a descriptor with an unknown code"),
    CoverPoint("op x bitmask", tuple(f"{o} {m}" for o in MASKED for m in ("masked", "unmasked")),
               "every operation that takes a bitmask, with and without one"),
    CoverPoint("op x 8-byte elements", WIDE, "8-byte elements on every operation that moves elements "
               "(configurations with 64-bit lanes)"),
    CoverPoint("length", LENGTHS,
               "elements in: none, one, a partial beat, one beat, several beats, more than a block of them"),
    CoverPoint("op x length", cross(OPS, LENGTHS), "every operation at every length class"),
    CoverPoint("op x alignment", cross(OPS, ("aligned", "unaligned")),
               "every operation with all its arrays at block boundaries, and with one or more in mid-block"),
    CoverPoint("op x latency", cross(OPS, LATENCY_BANDS), "every operation in every memory latency band: "
               + LATENCY_DOC),
    CoverPoint("op x back-pressure", cross(OPS, PRESSURE), "every operation with and without back-pressure: "
               + PRESSURE_DOC),
    CoverPoint("op x memory error", OPS, "every operation reporting a memory error response (read or write)"),
    CoverPoint("kept", ("none", "some", "all"), "elements out of an operation that selects (bitmask, data, "
               "access, filter): none of its inputs, some, all"),
    CoverPoint("comparison", tuple(f"{c} {s}" for c in CMPS for s in ("signed", "unsigned")),
               "the bitmask constructor's comparisons (§3.2.1)"),
    CoverPoint("filter", ("duplicate", "new", "evict", "better cost", "worse cost", "clear", "unique", "best"),
               "the filter hash (§4.2): a duplicate dropped, a key inserted in a free way or over a victim, a "
               "lower cost kept, a higher one dropped; a clear; both filtering schemes"),
    CoverPoint("group", ("join", "new", "evict", "full", "flushed", "empty flush"),
               "the grouping hash (§4.3): an element joins its block's entry, takes a free way or evicts "
               "an entry; an entry emitted full; a flush that emits entries, one that finds none"),
    CoverPoint("errors", ("rejected", "unknown op", "range past the top", "read error", "write error"),
               "a descriptor rejected on arrival (misaligned, unsupported size), an unknown operation, a "
               "gathered range past the top of the address space found while running, memory error "
               "responses to a read and to a write"),
    CoverPoint("memory", MEMORY_BINS, MEMORY_DOC),
    CoverPoint("streams", ("command paused", "command waits", "status back-pressure"),
               "the command stream held back by the testbench, a command the unit did not take at once, "
               "the status stream not ready"),
)))


def _length(op: SCUOp, width: int, block_bytes: int) -> str:
    n = op.n
    if n <= 1:
        return str(n)
    if n < width:
        return "below width"
    if n == width:
        return "width"
    return "blocks" if n * op.esize > block_bytes else "beats"


def sample(h) -> dict:
    """The bins one run of :class:`sim.scu.SCUHarness` reached."""
    cfg = h.config
    hits: dict[str, set] = {p.name: set() for p in MODEL.points}
    ms = h.model.stats
    band = latency_band(h.model.timing)
    pressed = "some" if (ms.refused or h.status.stalls) else "none"
    for k, op in enumerate(h.ops):
        st = h.expected[k] if h.expected and k < len(h.expected) else None
        if not isinstance(op, SCUOp):
            hits["op"].add("unknown")
            hits["errors"].add("unknown op")
            continue
        hits["op"].add(op.op)
        if st is not None and st.rejected:
            hits["errors"].add("rejected")
            continue
        if op.op in MASKED:
            hits["op x bitmask"].add(f"{op.op} {'masked' if op.mask is not None else 'unmasked'}")
        if op.esize == 8 and op.op in WIDE:
            hits["op x 8-byte elements"].add(op.op)
        length = _length(op, cfg.width, cfg.block_bytes)
        hits["length"].add(length)
        hits["op x length"].add(f"{op.op} {length}")
        aligned = all((getattr(op, b) or 0) % cfg.block_bytes == 0 for b in BASES)
        hits["op x alignment"].add(f"{op.op} {'aligned' if aligned else 'unaligned'}")
        hits["op x latency"].add(f"{op.op} {band}")
        hits["op x back-pressure"].add(f"{op.op} {pressed}")
        if st is not None and st.mem_error:
            hits["op x memory error"].add(op.op)
        if op.op == "bitmask":
            hits["comparison"].add(f"{op.cmp} {'signed' if op.signed else 'unsigned'}")
        if op.op == "filter":
            hits["filter"].add("best" if op.best else "unique")
            if op.clear:
                hits["filter"].add("clear")
        if st is None:
            continue
        if st.cmd_error and st.elements_in:
            hits["errors"].add("range past the top")
        if op.op in ("bitmask", "data", "access", "filter") and op.n and not st.cmd_error:
            selected = op.n if op.mask is None else None
            if st.elements_out == 0:
                hits["kept"].add("none")
            elif selected is not None and st.elements_out == selected:
                hits["kept"].add("all")
            else:
                hits["kept"].add("some")
    if h.tlm is not None:
        fe = Counter(h.tlm.filter_hash.events)
        if h.tlm.best_hash is not h.tlm.filter_hash:
            fe.update(h.tlm.best_hash.events)
        for ev, name in (("duplicate", "duplicate"), ("new", "new"), ("evict", "evict"), ("better", "better cost"),
                         ("worse", "worse cost")):
            if fe.get(ev):
                hits["filter"].add(name)
        ge = h.tlm.group_hash.events
        for ev, name in (("join", "join"), ("new", "new"), ("evict", "evict"), ("full", "full"),
                         ("flushed", "flushed"), ("empty_flush", "empty flush")):
            if ge.get(ev):
                hits["group"].add(name)
    mark(hits, "errors", (ms.read_errors, "read error"), (ms.write_errors, "write error"))
    hits["memory"] = memory_bins(ms)
    mark(hits, "streams", (h.cmd.paused, "command paused"), (h.cmd.waits, "command waits"),
         (h.status.stalls, "status back-pressure"))
    return hits
