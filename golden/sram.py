"""Energy of a unit's own SRAM arrays (docs/energy.md, "Units"): per-access read
and write energies and leakage per instance from CACTI 7 runs of each array at
its paper's node (synth/cacti: the structures, the runner and its results; a test
checks that the units' tables here equal ``synth/cacti/results.json``), times the
accesses the unit's model counts, plus leakage over the run's time."""
from __future__ import annotations

from dataclasses import dataclass

__all__ = ["SRAM", "sram_energy"]


@dataclass(frozen=True)
class SRAM:
    """One array of a unit: ``copies`` instances in the GPU, each ``read_nj`` /
    ``write_nj`` per access (``search_nj`` per CAM search) and ``leak_mw`` of leakage."""

    name: str
    node_nm: int
    copies: int
    read_nj: float
    write_nj: float
    leak_mw: float
    search_nj: float = 0.0


def sram_energy(arrays: tuple, counts: dict, seconds: float) -> dict:
    """``counts[name] = (reads, writes[, searches])``, totals over every instance.
    Returns joules: ``dynamic_j``, ``static_j`` (leakage of every instance over
    ``seconds``), and per array ``{name: {reads, writes, dynamic_j, static_j}}``."""
    out, dyn, sta = {}, 0.0, 0.0
    for a in arrays:
        c = counts.get(a.name, (0, 0))
        reads, writes = float(c[0]), float(c[1])
        searches = float(c[2]) if len(c) > 2 else 0.0
        d = (reads * a.read_nj + writes * a.write_nj + searches * a.search_nj) * 1e-9
        s = a.leak_mw * 1e-3 * a.copies * float(seconds)
        out[a.name] = {"reads": reads, "writes": writes, "searches": searches, "dynamic_j": d, "static_j": s}
        dyn += d
        sta += s
    return {"dynamic_j": dyn, "static_j": sta, "total_j": dyn + sta, "arrays": out}
