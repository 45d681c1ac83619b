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


#: The slides' GPU's unit; the other presets are for RTL simulation.
PAPER_PRESETS = ("gtx480",)
#: The slides' lowest speedup over the pull-style code (PR, BFS, SSSP, WCC).
SLIDES_LOW = 1.75

TIME = ("the slides give neither the unit's rate nor how many units a GPU has: the model's unit gathers "
        "0.23 values a cycle, our RTL's measured rate (docs/benchmarks.md, MFF (a): one event a cycle, and every "
        "value costs its issue, its C step and its V step besides the list walks), 6 units (one per GTX 480 memory "
        "partition; docs/mff.md); where the unit's time is the bound (the runs' \"unit\" share) the runs' floor "
        "is most of it, and each run names the rate per unit at which the floor would equal pull's time and the "
        "rate the slides' lowest speedup would need from the unit's time alone; measured with the whole model "
        "(docs/benchmarks.md, MFF (d): examples/sweeps/mff-rate.toml), a faster unit leaves kron at 1.20-1.32x "
        "(from 0.5 values a cycle the L2 binds every kron run) and brings the grid to 0.91-1.41x at 1.0; "
        "on the grid the pull loop is already coalesced (its neighbours lie next to each other: "
        "0.28 requests per edge, docs/benchmarks.md, MFF (b)), so the unit loses there; the slides' figures come "
        "from GPGPU-Sim on five real graphs, not named (the slides motivate the unit with power-law degrees)")


def time_floor(r: dict):
    """The MFF's cycles in a run can be no fewer than its throughput allows: every
    gathered value (``mff``; every bit set, ``mff-push``) passes one unit at
    ``mff_rate`` a cycle, ``mff_units`` units (golden/mff/algorithms.py,
    ``MFF_TIME``: the RTL's measured rate, the slides give none), so the floor is
    the model's, not the slides'. The text after it gives the rate per unit at
    which the floor would equal the mode's baseline's time (``mff_baseline_cycles``:
    pull's, push's for ``mff-push``) and, against pull, the rate the slides' lowest
    speedup would need (the unit's time alone; the GPU's own part of the kernels
    may bind first). None for runs without the slides' preset."""
    from golden.mff.algorithms import MFF_TIME
    if r.get("unit") != "mff" or r.get("preset") not in PAPER_PRESETS:
        return None
    what, n = ("bits set", r.get("mff_bits")) if r.get("mode") == "mff-push" else ("values", r.get("mff_values"))
    if not n:
        return None
    rate, units = MFF_TIME["mff_rate"], MFF_TIME["mff_units"]
    how = f"{n / 1e6:.1f} M {what} at {rate} a cycle x {units} units"
    base = r.get("mff_baseline_cycles")
    after = ""
    if base:
        # the mode's own baseline (docs/mff.md, "Statistics": pull for mff, push for mff-push)
        ref = "push" if r.get("mode") == "mff-push" else "pull"
        after = f"; {ref}'s time at {n / base / units:.2f} a cycle per unit"
        if ref == "pull":
            after += f", the slides' lowest speedup ({SLIDES_LOW}x) at {SLIDES_LOW * n / base / units:.2f}"
    return n / (rate * units), how, "the model's parameters", after


PROFILE = UnitProfile(
    "mff", "MFF: memory fast forward", "slides (GPGPU-Sim, GTX 480)", gpu="gtx480", reference="pull",
    presets={"gtx480": "gtx480"}, time_floor=time_floor, mode_references={"mff-push": "push"},
    figures=("time", "coalescing"),
    columns=(("MFF requests", "mff_requests"), ("MFF commands", "mff_commands")),
    claims=(
        PaperClaim("requests of the slides' example, MFF blocks / GPU requests", "11 requests -> 4 cache blocks",
                   4 / 11, mff_example, "share"),
        PaperClaim("speedup of mff over the pull-style GPU code", "1.75-5.22x (PR, BFS, SSSP, WCC)", SLIDES_LOW,
                   speedup("mff"), "x", TIME, value_hi=5.22, select={"mode": "mff"}),
        PaperClaim("energy", "-41 % to -71 % (average -54.6 %)", -0.546,
                   ratio("energy_uj", "mff", "pull", minus_one=True), "change", ENERGY_SETUP,
                   select={"mode": "mff"}, metric="energy_uj"),
    ))
