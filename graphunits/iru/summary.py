"""The IRU's rows of ``graphunits run``'s table (its descriptor's ``run_rows``):
operations, filtered or merged elements, replies and cycles (golden/iru/algorithms.py)."""
from __future__ import annotations

from graphunits.cli.common import StatRows, fmt

__all__ = ["rows"]


def rows(r) -> list:
    out = StatRows()
    iru, tm = r.extra.get("iru"), r.extra.get("time") or {}
    if isinstance(iru, dict):
        out.add("IRU operations / elements", "ops", "elements", src=iru)
        if "disabled" in iru or "filtered_share" in iru:
            share = iru.get("filtered_share")
            out.append(["IRU elements filtered or merged",
                        f"{fmt(iru.get('disabled'))} ({'-' if share is None else f'{100 * share:.1f} %'})"])
        if isinstance(iru.get("kinds"), dict):
            out.append(["IRU replies by kind", ", ".join(f"{k} {v}" for k, v in iru["kinds"].items())])
        out.add("IRU blocks per full reply", "blocks_per_reply", src=iru)
        out.add("IRU / GPU cycles (est.)", "iru_cycles", "gpu_cycles", src=tm)
    return out
