"""MFF's rows of ``graphunits run``'s table (its descriptor's ``run_rows``): the
commands, requests and the comparison with the pull or push GPU code (golden/mff/algorithms.py;
keys read defensively: a row whose keys are all absent is left out, an absent one shows ``-``)."""
from __future__ import annotations

from graphunits.cli.common import StatRows, fmt, unit_modes

__all__ = ["rows"]


def rows(r) -> list:
    mff = r.extra.get("mff")
    out = StatRows()
    if not isinstance(mff, dict):
        return out
    add = out.add
    unit = bool(mff.get("commands") or mff.get("scatter_commands")) or r.mode in unit_modes("mff")
    scatter = "scatter_commands" in mff                # the push BFS (push, mff-push)
    if unit and scatter:                               # mff-push: PC_scatter_set instead of atomicOr
        add("MFF scatter commands / bits set", "scatter_commands", "bits", src=mff)
    elif unit:                                         # mff: PC_gather
        add("MFF commands / values", "commands", "values", src=mff)
    elif scatter:                                      # push: the GPU's atomics
        add("GPU atomics / their memory requests", "atomics", "atomic_requests", src=mff)
    if unit:
        if any(k in mff for k in ("reads", "writes", "requests")):
            out.append(["MFF requests: reads / writes (total)",
                        f"{fmt(mff.get('reads'))} / {fmt(mff.get('writes'))} ({fmt(mff.get('requests'))})"])
        add("MFF requests per edge", "requests_per_edge", src=mff)
        add("MFF blocks (distinct per command)", "blocks", src=mff)
        if scatter:
            add("atomics replaced (one per bit set)", "bits", src=mff)
        add("GPU / total memory requests (GPU + MFF)", "gpu_requests", "total_requests", src=mff)
        if "speedup" in mff:
            base = mff.get("baseline_mode") or "baseline"
            add(f"{base} (GPU alone) / total requests", "baseline_requests", "total_requests", src=mff)
            add(f"requests per edge: {base} / with MFF", "baseline_requests_per_edge",
                "total_requests_per_edge", src=mff)
            add(f"{base} cycles / speedup (est.)", "baseline_cycles", "speedup", src=mff)
    return out
