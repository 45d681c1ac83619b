"""EMOGI's rows of ``graphunits run``'s table (its descriptor's ``run_rows``): PCIe
requests or UVM faults, bytes moved, bandwidth and time (golden/emogi/algorithms.py)."""
from __future__ import annotations

from graphunits.cli.common import StatRows, fmt

__all__ = ["rows"]


def rows(r) -> list:
    out = StatRows()
    em = r.extra.get("emogi")
    if isinstance(em, dict) and em.get("stats"):
        if isinstance(em.get("requests"), dict):
            out.append(["PCIe requests by size", ", ".join(f"{k} B: {v}" for k, v in em["requests"].items())])
        else:
            out.add("UVM page faults / evictions", "page_faults", "evictions", src=em)
        if "bytes_moved" in em:
            out.append(["host bytes moved (I/O amplification)",
                        f"{fmt(em['bytes_moved'])} ({fmt(em.get('io_amplification'))})"])
        out.add("PCIe GB/s (link busy) / average", "bandwidth_gbps", "average_gbps", src=em)
        if isinstance(em.get("time"), dict) and "total_s" in em["time"]:
            out.append(["estimated total time (ms)", fmt(1e3 * em["time"]["total_s"])])
    return out
