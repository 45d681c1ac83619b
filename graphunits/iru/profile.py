"""The report's profile of the IRU (Segura et al., J. Supercomputing): its figures, table columns, presets per
GPU and the paper's claims, with how the model computes each (its descriptor's
``profile``, golden/iru/descriptor.py; docs/usage.md, "Reports")."""
from __future__ import annotations

from ..report.claims import ENERGY_SETUP, speedup, factor, ratio, mean_over
from ..report.units import MetricFigure, PaperClaim, UnitProfile

__all__ = ["PROFILE"]


TIME = ("the IRU's time is its fast model, checked against the cycle-level TLM (docs/iru.md, \"Fast "
             "model\": 0.83-1.04 of its cycles on whole algorithms); prefetches at the L2's latency from the "
             "partition, Table 1's 8 requests in flight; its replier sends two lanes a cycle, its unidirectional "
             "ring (the paper's Fig. 5d: a partition receives from the neighbour partition; docs/iru.md, \"Ring\") "
             "carries at most 2.67 elements a cycle for 4 partitions (a bidirectional ring, measured on the fast "
             "model: 0.57 / 0.56 / 1.70x on kron:scale=15 BFS / PR / SSSP); its prefetches go through the L2 slices (docs/iru.md); "
             "the paper's graphs are replaced (docs/datasets.md)")
FILTER = ("higher on large graphs too (docs/benchmarks.md, IRU (b): kron:scale=16 SSSP 90.4 %, PR 91.1 %; "
               "grid:256x256 SSSP 43.4 %, PR 37.5 %): the edge frontiers of a Kronecker graph repeat its hub "
               "vertices many times, and every repeat that meets its first copy in the hash is merged")


DRAM = ("kron:scale=15 PageRank drives the mean (the other runs are within 9 % of the baseline's DRAM sectors): "
        "PageRank's IRU kernel reads each edge's "
        "contribution from memory (docs/iru.md: an extra kernel writes them every iteration, the model's reading "
        "of Fig. 11), 4 B x 0.88 M edges = 3.5 MB an iteration on kron:scale=15, more than the GTX 980's 2 MB L2: "
        "they go to DRAM as write-backs and come back as the IRU's prefetches (`graphunits run --graph "
        "kron:scale=15 --algo pr --mode iru --gpu gtx980`: 1.95 M DRAM write-back and 3.7 M DRAM read sectors "
        "against the baseline's 0.12 M and 2.0 M)")

#: The paper's unit (Table 1); the other presets are for RTL simulation.
PAPER_PRESETS = ("gtx980",)


def time_floor(r: dict):
    """The IRU's cycles in a run can be no fewer than its hash banks allow: every
    element ends in one insertion into a bank of its home partition, one
    insertion a cycle per bank (§4: the classifier's queues and the data
    processing move one element a cycle each; Table 1: 4 partitions, each 2-way
    banked), so at best ``partitions * banks`` elements a cycle, however evenly
    they spread. Our model's reading of how fast the classifier takes elements in
    (one a cycle per partition, its prefetcher's width; the paper gives the
    queues' rate only) and of the ring (2.67 a cycle for 4 partitions) is slower
    (docs/iru.md; docs/benchmarks.md, IRU (c)). None for runs without the
    paper's preset."""
    from golden.iru import IRUConfig
    if r.get("unit") != "iru" or not r.get("iru_elements") or r.get("preset") not in PAPER_PRESETS:
        return None
    cfg = IRUConfig.preset(r["preset"])
    n, p, b = r["iru_elements"], cfg.partitions, cfg.banks
    return n / (p * b), f"{n / 1e6:.1f} M elements into {p} x {b} banks at one insertion a cycle each"


PROFILE = UnitProfile(
    "iru", "IRU: irregular accesses reorder unit", "Segura et al., J. Supercomputing", gpu="gtx980",
    presets={"gtx980": "gtx980"}, area_preset="default", time_floor=time_floor,
    figures=("time", "coalescing",
             MetricFigure("filtered", "iru_filtered_share", "IRU: elements filtered out or merged",
                          "share of the IRU's elements")),
    columns=(("IRU filtered share", "iru_filtered_share"), ("IRU ops", "iru_ops"), ("IRU elements", "iru_elements"),
             ("IRU cycles", "iru_cycles"), ("blocks/reply", "iru_blocks_per_reply")),
    claims=(
        PaperClaim("coalescing: accesses per warp request, baseline / IRU", "4 -> 3 (1.32x, §6)", 1.32,
                   factor("sectors_per_request", "baseline", "iru"), "x",
                   select={"mode": "iru"}, metric="sectors_per_request"),
        PaperClaim("L1 accesses, IRU / baseline", "67 % (§6, Fig. 12)", 0.67,
                   ratio("l1_accesses", "iru", "baseline"), "share", select={"mode": "iru"},
                   metric="l1_accesses"),
        PaperClaim("L2 accesses, IRU / baseline", "56 % (§6, Fig. 12)", 0.56,
                   ratio("l2_accesses", "iru", "baseline"), "share", select={"mode": "iru"},
                   metric="l2_accesses"),
        PaperClaim("interconnect traffic SMs <-> memory partitions, IRU / baseline", "54 % (§6, Fig. 13)", 0.54,
                   ratio("icnt_flits", "iru", "baseline"), "share", select={"mode": "iru"},
                   metric="icnt_flits"),
        PaperClaim("DRAM accesses, IRU vs baseline", "-4 % (§6)", -0.04,
                   ratio("dram_sectors", "iru", "baseline", minus_one=True), "change", DRAM, select={"mode": "iru"},
                   metric="dram_sectors"),
        PaperClaim("speedup, all algorithms", "1.33x (§6)", 1.33, speedup("iru"), "x", TIME,
                   select={"mode": "iru"}),
        PaperClaim("speedup, BFS", "1.16x (§6)", 1.16, speedup("iru", algo="bfs"), "x", TIME,
                   select={"mode": "iru", "algo": "bfs"}),
        PaperClaim("speedup, SSSP", "1.14x (§6)", 1.14, speedup("iru", algo="sssp"), "x", TIME,
                   select={"mode": "iru", "algo": "sssp"}),
        PaperClaim("speedup, PR", "1.40x (§6)", 1.40, speedup("iru", algo="pr"), "x", TIME,
                   select={"mode": "iru", "algo": "pr"}),
        PaperClaim("elements filtered out or merged, SSSP", "23 % (Fig. 15)", 0.23,
                   mean_over("iru_filtered_share", "iru", ("sssp",)), "share", FILTER,
                   select={"mode": "iru", "algo": "sssp"}, metric="iru_filtered_share"),
        PaperClaim("elements filtered out or merged, PR", "79 % (Fig. 15)", 0.79,
                   mean_over("iru_filtered_share", "iru", ("pr",)), "share", FILTER,
                   select={"mode": "iru", "algo": "pr"}, metric="iru_filtered_share"),
        PaperClaim("elements filtered out or merged, average of SSSP and PR", "48.5 % (Fig. 15)", 0.485,
                   mean_over("iru_filtered_share", "iru", ("sssp", "pr")), "share", FILTER),
        PaperClaim("energy", "-13 % (§6)", -0.13, ratio("energy_uj", "iru", "baseline", minus_one=True), "change",
                   ENERGY_SETUP, select={"mode": "iru"}, metric="energy_uj"),
    ))
