"""The report's profile of EMOGI (Min et al., PVLDB 2021): its figures, table columns, presets per
GPU and the paper's claims, with how the model computes each (its descriptor's
``profile``, golden/emogi/descriptor.py; docs/usage.md, "Reports")."""
from __future__ import annotations

from ..report.claims import speedup, ratio, share, metric_of
from ..report.units import PaperClaim, UnitProfile

__all__ = ["PROFILE"]


PROFILE = UnitProfile(
    "emogi", "EMOGI: zero-copy edge lists over PCIe", "Min et al., PVLDB 2021", gpu="v100", reference="uvm",
    figures=("time", "coalescing", "requests"),
    columns=(("PCIe requests", "emogi_request_count"), ("32 B share", "emogi_req_32B"),
             ("128 B share", "emogi_req_128B"), ("PCIe GB/s", "emogi_bandwidth_gbps"),
             ("I/O ampl.", "emogi_io_amplification")),
    claims=(
        PaperClaim("naive: share of 32 B PCIe requests", "nearly all (FS 98.7 %, §5.3)", 0.987,
                   share("emogi-naive", 32), "share"),
        PaperClaim("merged: share of 128 B PCIe requests", "about 40 % (ML 46.7 %, §5.3)", 0.40,
                   share("emogi-merged", 128), "share"),
        PaperClaim("aligned / merged share of 128 B requests", "GK 1.86x, GU 1.25x (§5.3)", 1.25,
                   ratio("emogi_req_128B", "emogi-aligned", "emogi-merged"), "x",
                   "small graphs have short adjacency lists: little to align", value_hi=1.86,
                   select={"mode": "emogi-aligned"}, metric="emogi_req_128B"),
        PaperClaim("PCIe requests, merged vs naive", "up to -83.3 % (§5.3)", -0.833,
                   ratio("emogi_request_count", "emogi-merged", "emogi-naive", minus_one=True), "change"),
        PaperClaim("PCIe requests, aligned vs merged", "up to -28.8 % (§5.3)", -0.288,
                   ratio("emogi_request_count", "emogi-aligned", "emogi-merged", minus_one=True), "change"),
        PaperClaim("PCIe bandwidth, naive (GB/s)", "4.7 GB/s (§5.3.2)", 4.7,
                   metric_of("emogi_bandwidth_gbps", "emogi-naive"), "number"),
        PaperClaim("PCIe bandwidth, merged (GB/s)", "up to 11 GB/s (§5.3.2)", 11.0,
                   metric_of("emogi_bandwidth_gbps", "emogi-merged", max), "number"),
        PaperClaim("speedup over UVM, aligned", "3.56x BFS (§5.4); 2.60x average over BFS, SSSP, CC, PR", 2.60,
                   speedup("emogi-aligned"), "x",
                   "tiny graphs fit in a few pages: UVM migrates little and PCIe latency dominates",
                   select={"mode": "emogi-aligned"}),
    ))
