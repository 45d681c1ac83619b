"""The EMOGI warp coalescer's functional coverage model (sim.funcov;
docs/verification.md, "Functional coverage"): the behaviours its RTL tests must
reach (EMOGI §3.3: a warp's zero-copy accesses as 32-128 B PCIe reads, ascending),
sampled from a run's warps, the TLM's requests and the agents' counters."""
from __future__ import annotations

from golden.emogi import warp_requests

from ..funcov import PRESSURE, CoverModel, CoverPoint, cross, mark, register

SIZES = ("32 B", "64 B", "96 B", "128 B")

__all__ = ["MODEL", "sample"]

MODEL = register(CoverModel("emogi", (
    CoverPoint("request size", SIZES, "read requests of each size (§3.3)"),
    CoverPoint("request size x back-pressure", cross(SIZES, PRESSURE),
               "requests of each size in a run whose output stream was never / sometimes not ready"),
    CoverPoint("warp", ("no active lane", "one request", "several requests", "all lanes one sector",
                        "lanes out of order", "every lane active"),
               "a warp with no active lane (no request), one that needs one read, several reads; every "
               "lane on one sector; lanes whose addresses descend; all lanes active"),
    CoverPoint("streams", ("input paused", "input waits", "output back-pressure", "back to back"),
               "warps held back by the testbench, a warp the coalescer did not take at once, the output not "
               "ready, two warps' requests on consecutive cycles"),
)))


def _active(mask, lanes: int) -> list:
    if mask is None:
        return list(range(lanes))
    if isinstance(mask, int):
        return [i for i in range(lanes) if (mask >> i) & 1]
    return [i for i in range(lanes) if mask[i]]


def sample(h) -> dict:
    """The bins one run of :class:`sim.emogi.CoalescerHarness` reached."""
    cfg = h.config
    hits: dict[str, set] = {p.name: set() for p in MODEL.points}
    pressed = "some" if h.sink.stalls else "none"
    for r in h.expected:
        hits["request size"].add(f"{r.size} B")
        hits["request size x back-pressure"].add(f"{r.size} B {pressed}")
    for addrs, mask in h.warps:
        lanes = _active(mask, cfg.lanes)
        n = len(warp_requests(cfg, addrs, mask))
        if not lanes:
            hits["warp"].add("no active lane")
            continue
        hits["warp"].add("one request" if n == 1 else "several requests")
        if len(lanes) == cfg.lanes:
            hits["warp"].add("every lane active")
        sectors = {addrs[i] // cfg.sector_bytes for i in lanes}
        if len(sectors) == 1 and len(lanes) > 1:
            hits["warp"].add("all lanes one sector")
        a = [addrs[i] for i in lanes]
        if any(x > y for x, y in zip(a, a[1:])):
            hits["warp"].add("lanes out of order")
    mark(hits, "streams", (h.src.paused, "input paused"), (h.src.waits, "input waits"),
         (h.sink.stalls, "output back-pressure"), (h.back_to_back, "back to back"))
    return hits
