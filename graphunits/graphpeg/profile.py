"""The report's profile of GraphPEG (TACO 2021): its figures, table columns, presets per
GPU and the paper's claims, with how the model computes each (its descriptor's
``profile``, golden/graphpeg/descriptor.py; docs/usage.md, "Reports")."""
from __future__ import annotations

from ..report.claims import ENERGY_SETUP, best_per_run, ratio, mean_over
from ..report.units import MetricFigure, PaperClaim, UnitProfile

__all__ = ["PROFILE"]


PROFILE = UnitProfile(
    "graphpeg", "GraphPEG: edge gathering per SM", "TACO 2021", gpu="kepler", reference="lb",
    presets={"kepler": "default"},
    figures=("time", "coalescing",
             MetricFigure("memreq", "graphpeg_memory_request_change",
                          "GraphPEG: memory requests (GPU sectors + engine requests) vs the baseline's",
                          "relative change of memory requests", 0.0)),
    columns=(("engine requests", "graphpeg_engine_requests"), ("engine cycles", "graphpeg_engine_cycles"),
             ("mem. req. change", "graphpeg_memory_request_change"),
             ("load imbalance", "graphpeg_load_imbalance"), ("ALWT entries", "graphpeg_alwt_entries"),
             ("EF exchanges", "graphpeg_exchanges")),
    claims=(
        PaperClaim("speedup over the load-balanced baseline", "2.8x over Gunrock, up to 7.3x (§5.3)", 2.8,
                   best_per_run("graphpeg", "lb"), "x",
                   "ours is over the golden model's baseline with Gunrock's load-balanced advance (mode lb: "
                   "its scan kernel and searches, docs/golden.md); the engines' requests go through their SM's "
                   "memory path at the previous launch's latency (docs/graphpeg.md); graphs replaced "
                   "(docs/datasets.md)",
                   select={"mode": "graphpeg"}),
        PaperClaim("speedup over SEP-Graph", "2.5x, up to 7.0x (§5.3)", 2.5, None, "x"),
        PaperClaim("executed instructions vs the baseline", "about 1/8 of Gunrock's (§5.3)", 0.125,
                   ratio("warp_instructions", "graphpeg", "lb"), "share",
                   "ours is against mode lb (the baseline with Gunrock's load-balanced advance); Gunrock's "
                   "other kernels (filter, the frontier's bookkeeping) are the baseline's",
                   select={"mode": "graphpeg"}, metric="warp_instructions"),
        PaperClaim("memory requests (GPU sectors + engine requests) vs the baseline's, push mode",
                   "-27.39 % on average, over Gunrock (§5.3)", -0.2739,
                   mean_over("graphpeg_memory_request_change", "graphpeg", ("bfs", "sssp", "bc", "kcore")),
                   "change", "against mode lb (the baseline with Gunrock's load-balanced advance)",
                   select={"mode": "graphpeg"}, metric="graphpeg_memory_request_change"),
        PaperClaim("energy vs the load-balanced baseline", "52.6 % of Gunrock's (§5.3)", 0.526,
                   ratio("energy_uj", "graphpeg", "lb"), "share", ENERGY_SETUP + "; against mode lb",
                   select={"mode": "graphpeg"}, metric="energy_uj"),
    ))
