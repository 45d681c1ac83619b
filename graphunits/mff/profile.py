"""The report's profile of MFF (slides, GPGPU-Sim GTX 480): its figures, table columns, presets per
GPU and the paper's claims, with how the model computes each (its descriptor's
``profile``, golden/mff/descriptor.py; docs/usage.md, "Reports")."""
from __future__ import annotations

from ..report.claims import ENERGY_SETUP, speedup, ratio
from ..report.units import PaperClaim, UnitProfile

__all__ = ["PROFILE"]


def mff_example(rs):
    """The slides' worked example (vertices 0-3): cache blocks the MFF reads over
    the GPU's requests, 128 B lines (the GTX 480's)."""
    from sim.mff import worked_example_counts
    n = worked_example_counts(128)
    return n["mff_blocks"] / n["gpu_requests"], (f"{n['gpu_requests']} GPU requests -> {n['mff_blocks']} MFF block "
                                                 f"reads (sim/mff/, worked_example_counts, 128 B lines)")


PROFILE = UnitProfile(
    "mff", "MFF: memory fast forward", "slides (GPGPU-Sim, GTX 480)", gpu="gtx480", reference="pull",
    presets={"gtx480": "gtx480"},
    figures=("time", "coalescing"),
    columns=(("MFF requests", "mff_requests"), ("MFF commands", "mff_commands")),
    claims=(
        PaperClaim("requests of the slides' example, MFF blocks / GPU requests", "11 requests -> 4 cache blocks",
                   4 / 11, mff_example, "share"),
        PaperClaim("speedup of mff over the pull-style GPU code", "1.75-5.22x (PR, BFS, SSSP, WCC)", 1.75,
                   speedup("mff"), "x", "the slides' figures come from GPGPU-Sim on five real graphs",
                   value_hi=5.22, select={"mode": "mff"}),
        PaperClaim("energy", "-41 % to -71 % (average -54.6 %)", -0.546,
                   ratio("energy_uj", "mff", "pull", minus_one=True), "change", ENERGY_SETUP,
                   select={"mode": "mff"}, metric="energy_uj"),
    ))
