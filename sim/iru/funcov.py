"""The IRU's functional coverage model (sim.funcov; docs/verification.md,
"Functional coverage"): the behaviours its RTL tests must reach (IRU paper §4:
the partitions' hashes, the filter/merge operations, the replier's reasons for a
reply, the request ring), sampled from a run's operations, the TLM's results and
the memory models' and agents' counters."""
from __future__ import annotations

from golden.iru import FILTER_OPS, REPLY_KINDS

from ..funcov import (LATENCY_BANDS, LATENCY_DOC, MEMORY_BINS, MEMORY_DOC, PRESSURE, PRESSURE_DOC, CoverModel,
                      CoverPoint, cross, latency_band, mark, memory_bins, register)

__all__ = ["MODEL", "sample"]

SIZES = ("4-byte", "8-byte")
LENGTHS = ("one warp or less", "several warps", "partial last warp")

MODEL = register(CoverModel("iru", (
    CoverPoint("operation", FILTER_OPS, "reorder only (none), and the filter/merge operations min and fadd (§4.3)"),
    CoverPoint("element size", SIZES, "the reordered array's element size"),
    CoverPoint("length", LENGTHS, "elements per operation against the warp size (entry_size)"),
    CoverPoint("operation x element size", cross(FILTER_OPS, SIZES), "every operation on both element sizes"),
    CoverPoint("operation x length", cross(FILTER_OPS, LENGTHS), "every operation at every length class"),
    CoverPoint("operation x alignment", cross(FILTER_OPS, ("aligned", "unaligned")),
               "every operation with its arrays at block boundaries, and with one in mid-block"),
    CoverPoint("operation x latency", cross(FILTER_OPS, LATENCY_BANDS),
               "every operation in every memory latency band (the partitions' longest): " + LATENCY_DOC),
    CoverPoint("operation x back-pressure", cross(FILTER_OPS, PRESSURE),
               "every operation with and without back-pressure (replies, status, a partition's memory): "
               + PRESSURE_DOC),
    CoverPoint("operation x memory error", FILTER_OPS, "every operation reporting a memory error response"),
    CoverPoint("reply", REPLY_KINDS, "why a reply was sent (docs/iru.md, Data replier): a full entry, the "
               "disabled threads, the timeout, the flush when no more input comes, the final reply"),
    CoverPoint("merging", ("merged or filtered", "nothing merged"),
               "a filtering operation that disabled threads (duplicates merged), one that disabled none"),
    CoverPoint("ring", ("request forwarded", "elements on the ring"),
               "a warp request forwarded to another partition, elements shipped over the ring (§4.2)"),
    CoverPoint("errors", ("memory error", "command error"),
               "an error response to a prefetch, an array past the top of the address space"),
    CoverPoint("memory", MEMORY_BINS, MEMORY_DOC + " (a partition's)"),
    CoverPoint("streams", ("command paused", "requests paused", "reply back-pressure", "status back-pressure"),
               "the testbench holding back commands and warp requests, replies and the status not ready"),
)))


def sample(h) -> dict:
    """The bins one run of :class:`sim.iru.IRUHarness` reached."""
    cfg = h.config
    hits: dict[str, set] = {p.name: set() for p in MODEL.points}
    W = cfg.entry_size
    band = max((latency_band(m.timing) for m in h.models), key=LATENCY_BANDS.index)
    pressed = "some" if (any(m.stats.refused for m in h.models) or any(r.stalls for r in h.replies)
                         or h.status.stalls) else "none"
    for k, (op, _policy) in enumerate(h.ops):
        o = op.op
        hits["operation"].add(o)
        hits["element size"].add(f"{op.esize}-byte")
        hits["operation x element size"].add(f"{o} {op.esize}-byte")
        lengths = ["one warp or less" if op.n <= W else "several warps"] + (["partial last warp"] if op.n % W else [])
        for x in lengths:
            hits["length"].add(x)
            hits["operation x length"].add(f"{o} {x}")
        aligned = all(b % cfg.block_bytes == 0 for b in (op.idx, op.sec) if b is not None)
        hits["operation x alignment"].add(f"{o} {'aligned' if aligned else 'unaligned'}")
        hits["operation x latency"].add(f"{o} {band}")
        hits["operation x back-pressure"].add(f"{o} {pressed}")
        if k >= len(h.expected):
            continue
        st = h.expected[k].status
        if st.mem_error:
            hits["operation x memory error"].add(o)
        for kind, n in st.kinds.items():
            if n:
                hits["reply"].add(kind)
        if op.op != "none" and not st.cmd_error:
            hits["merging"].add("merged or filtered" if st.disabled else "nothing merged")
        if st.forwarded:
            hits["ring"].add("request forwarded")
        if st.ring:
            hits["ring"].add("elements on the ring")
        mark(hits, "errors", (st.mem_error, "memory error"), (st.cmd_error, "command error"))
    hits["memory"] = memory_bins(*(m.stats for m in h.models))
    mark(hits, "streams", (h.cmd.paused, "command paused"), (any(r.paused for r in h.reqs), "requests paused"),
         (any(r.stalls for r in h.replies), "reply back-pressure"), (h.status.stalls, "status back-pressure"))
    return hits
