"""Energy of a unit's logic (docs/energy.md, "Unit logic"): dynamic energy per work
item and leakage per copy at the paper's node, measured on the unit's RTL by
``benchmarks/logic_energy.py`` (Verilator toggle counts x the OSU 0.18 um liberty
energies of the unit's netlist, scaled to the node; synth/logic_energy.json, to
which a test ties the constants of every ``golden/<unit>/energy.py``)."""
from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Logic", "add_logic"]


@dataclass(frozen=True)
class Logic:
    """``pj_per_item`` joules x 1e-12 per count of the unit's statistic ``item`` (or
    the sum of several, ``"a+b"``)
    (clock included: the unit's clock runs while it works, as in the measured
    run), and ``leak_mw`` of leakage for each of the GPU's ``copies``."""

    node_nm: int
    item: str
    pj_per_item: float
    leak_mw: float
    copies: int


def add_logic(energy: dict, logic: Logic, stats: dict, seconds: float) -> dict:
    """Add the logic's energy to a :func:`golden.sram.sram_energy` result (in place;
    returned): ``energy["logic"] = {items, dynamic_j, static_j}`` and the totals."""
    items = float(sum(stats.get(k, 0) or 0 for k in logic.item.split("+")))
    d = items * logic.pj_per_item * 1e-12
    s = logic.leak_mw * 1e-3 * logic.copies * float(seconds)
    energy["logic"] = {"item": logic.item, "items": items, "dynamic_j": d, "static_j": s}
    energy["dynamic_j"] += d
    energy["static_j"] += s
    energy["total_j"] = energy["dynamic_j"] + energy["static_j"]
    return energy
