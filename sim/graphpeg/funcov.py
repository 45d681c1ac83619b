"""GraphPEG's functional coverage model (sim.funcov; docs/verification.md,
"Functional coverage"): the behaviours its RTL tests must reach (GraphPEG paper
§3.3: the ALWT and edge gathering, the vertex lists with spill and refill, the
EF exchange between SMs), sampled from a run's steps, the TLM's kernel results
and the memory model's and agents' counters."""
from __future__ import annotations

from ..funcov import (LATENCY_BANDS, LATENCY_DOC, MEMORY_BINS, MEMORY_DOC, PRESSURE, PRESSURE_DOC, CoverModel,
                      CoverPoint, cross, latency_band, mark, memory_bins, register)

__all__ = ["MODEL", "sample"]

KINDS = ("edge push", "edge pull (CSC)", "vertex")
CONFIGS = ("one SM", "several SMs")

MODEL = register(CoverModel("graphpeg", (
    CoverPoint("kernel", ("edge push", "edge pull (CSC)", "vertex", "with weights", "without weights"),
               "kernels of each kind (§3.2: __pop_edge on CSR and CSC vertex arrays, __pop_vert), with and "
               "without the weight array"),
    CoverPoint("configuration", CONFIGS, "engines per configuration"),
    CoverPoint("kernel x configuration", cross(KINDS, CONFIGS), "every kind of kernel on one SM and on several"),
    CoverPoint("kernel x alignment", cross(("edge push", "edge pull (CSC)"), ("aligned", "unaligned")),
               "every kind of edge kernel with its graph arrays at block boundaries, and with one in mid-block"),
    CoverPoint("kernel x latency", cross(KINDS, LATENCY_BANDS),
               "every kind of kernel in every memory latency band: " + LATENCY_DOC),
    CoverPoint("kernel x back-pressure", cross(KINDS, PRESSURE),
               "every kind of kernel with and without back-pressure (pops, status, memory): " + PRESSURE_DOC),
    CoverPoint("kernel x memory error", KINDS, "every kind of kernel meeting a memory error response"),
    CoverPoint("ALWT", ("full", "entries left"), "the adjacency-list working table: every entry in use at "
               "once, or never (§3.3.1)"),
    CoverPoint("edge buffer", ("full", "never full"), "every edge-buffer record reserved at once, or never"),
    CoverPoint("vertex lists", ("spilled", "refilled", "overflow", "pushed during a kernel"),
               "a list spilled to its region in memory and refilled from it, a spill region overflowing "
               "(vertices dropped), vertices pushed while a kernel runs (the next kernel's)"),
    CoverPoint("EF balancing", ("off", "checked, no move", "edges moved"),
               "the early-finish exchange (§3.3.2): off, on without a move, edges moved to an idle SM"),
    CoverPoint("errors", ("command error", "memory error"),
               "a command refused (bad arrays, run before setup), an error response"),
    CoverPoint("memory", MEMORY_BINS, MEMORY_DOC),
    CoverPoint("streams", ("command paused", "pushes paused", "pop back-pressure", "status back-pressure"),
               "the testbench holding back commands and pushes, warps not ready to pop, the status not ready"),
)))


def sample(h) -> dict:
    """The bins one run of :class:`sim.graphpeg.GraphPEGHarness` reached."""
    from . import Run
    cfg = h.config
    hits: dict[str, set] = {p.name: set() for p in MODEL.points}
    conf = "one SM" if cfg.sms == 1 else "several SMs"
    hits["configuration"].add(conf)
    band = latency_band(h.model.timing)
    pressed = "some" if (h.model.stats.refused or any(p.stalls for p in h.pops) or h.status.stalls) else "none"
    for k, step in enumerate(h.steps):
        exp = h.expected[k] if h.expected and k < len(h.expected) else None
        if exp is not None and exp.get("cmd_error"):
            hits["errors"].add("command error")
        if not isinstance(step, Run):
            continue
        kr = step.kernel
        kind = "vertex" if kr.mode == "vertex" else "edge pull (CSC)" if kr.csc else "edge push"
        hits["kernel"].add(kind)
        if kr.mode != "vertex":
            hits["kernel"].add("with weights" if kr.weight is not None else "without weights")
        hits["kernel x configuration"].add(f"{kind} {conf}")
        if kr.mode != "vertex":
            aligned = all(b % cfg.block_bytes == 0 for b in (kr.row_ptr, kr.col, kr.weight) if b is not None)
            hits["kernel x alignment"].add(f"{kind} {'aligned' if aligned else 'unaligned'}")
        hits["kernel x latency"].add(f"{kind} {band}")
        hits["kernel x back-pressure"].add(f"{kind} {pressed}")
        if any(step.during.values()):
            hits["vertex lists"].add("pushed during a kernel")
        if exp is None or "result" not in exp:
            continue
        r = exp["result"]
        hits["ALWT"].add("full" if r.peak_alwt >= cfg.alwt_entries else "entries left")
        hits["edge buffer"].add("full" if r.peak_reserved >= cfg.edge_buffer_edges else "never full")
        if r.requests.get("spill"):
            hits["vertex lists"].add("spilled")
        if r.requests.get("refill"):
            hits["vertex lists"].add("refilled")
        if r.spill_overflow:
            hits["vertex lists"].add("overflow")
        ef = cfg.ef_enabled if kr.ef is None else kr.ef
        if not ef:
            hits["EF balancing"].add("off")
        elif r.moved:
            hits["EF balancing"].add("edges moved")
        elif r.ef_checks:
            hits["EF balancing"].add("checked, no move")
        if r.mem_error:
            hits["errors"].add("memory error")
            hits["kernel x memory error"].add(kind)
    hits["memory"] = memory_bins(h.model.stats)
    mark(hits, "streams", (h.cmd.paused, "command paused"), (any(p.paused for p in h.pushes), "pushes paused"),
         (any(p.stalls for p in h.pops), "pop back-pressure"), (h.status.stalls, "status back-pressure"))
    return hits
