"""The SCU's rows of ``graphunits run``'s table (its descriptor's ``run_rows``):
its operations, memory requests and the time split (golden/scu/algorithms.py)."""
from __future__ import annotations

from graphunits.cli.common import StatRows

__all__ = ["rows"]


def rows(r) -> list:
    out = StatRows()
    sc, tm = r.extra.get("scu"), r.extra.get("time") or {}
    if isinstance(sc, dict):
        if isinstance(sc.get("ops"), dict):
            out.append(["SCU operations", ", ".join(f"{k} {v}" for k, v in sorted(sc["ops"].items()))])
        out.add("SCU memory requests", "requests", src=sc)
        out.add("GPU / SCU / total cycles (est.)", "gpu_cycles", "scu_cycles", "total_cycles", src=tm)
    return out
