"""GraphPEG's rows of ``graphunits run``'s table (its descriptor's ``run_rows``):
kernels, balance, requests, cycles and the comparison with ``lb`` (golden/graphpeg/algorithms.py)."""
from __future__ import annotations

from graphunits.cli.common import StatRows

__all__ = ["rows"]


def rows(r) -> list:
    out = StatRows()
    peg, tm = r.extra.get("graphpeg"), r.extra.get("time") or {}
    if isinstance(peg, dict):
        out.add("GraphPEG kernels / items (edges)", "kernels", "items", src=peg)
        out.add("edges per cycle per SM", "edges_per_cycle_per_sm", src=peg)
        out.add("warp utilisation", "warp_utilisation", src=peg)
        out.add("load imbalance (with / without EF)", "load_imbalance", "load_imbalance_no_ef", src=peg)
        out.add("EF exchanges / moved edges", "exchanges", "moved_edges", src=peg)
        out.add("engine memory requests", "engine_requests", src=peg)
        out.add("engine / GPU cycles (est.)", "engine_cycles", "gpu_cycles", src={**peg, **tm})
        out.add("baseline cycles / speedup (est.)", "baseline_cycles", "speedup", src=peg)
        out.add("memory requests / baseline's", "memory_requests", "baseline_memory_requests", src=peg)
    return out
