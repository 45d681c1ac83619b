"""The demo's GraphPEG step (its descriptor's ``demo``, golden/graphpeg/descriptor.py)."""
from __future__ import annotations

from golden.graphpeg import GraphPEGConfig
from golden.report import format_table
from sim.build import build_verilog
from sim.cosim import run_cosim
from sim.graphpeg import demo_runs
from sim.runner import run_cocotb

__all__ = ["demo"]


def demo(sims, quick: bool = False, step=print) -> int:
    """GraphPEG on the simulators against its TLM and the graph, then BFS with the RTL
    in the loop; prints two tables and returns the number of failures (for
    ``graphunits demo``)."""
    cfg = GraphPEGConfig.preset("sim")
    step(f"GraphPEG, preset 'sim' ({cfg.sms} SMs, {cfg.alwt_entries} ALWT entries, {cfg.edge_buffer_edges}-edge "
         f"buffer): random kernels on {', '.join(sims)} against its TLM")
    build = build_verilog("graphpeg", cfg)
    rows, failures = [], 0
    for sim in sims:
        res = run_cocotb(build, "sim.graphpeg.tb", {"config": cfg.to_dict(), "runs": demo_runs()}, sim=sim)
        for r in res["runs"]:
            ok = not r["mismatches"]
            failures += not ok
            rows.append([sim, r["name"], r["items"], r["cycles"], r["exchanges"], r["spill_writes"],
                         "matches TLM" if ok else "MISMATCH: " + r["mismatches"][0]])
    print(format_table(["simulator", "run", "items", "cycles", "EF exchanges", "spill writes", "check"], rows,
                       title="GraphPEG RTL against its TLM and the graph"))
    print()
    graph = "kron:scale=6,edgefactor=4,seed=1" if quick else "kron:scale=7,edgefactor=8,seed=1"
    r = run_cosim(graph, "bfs", unit="graphpeg", preset="sim", sim=sims[-1], log=lambda *a: None,
                  memory="python")                       # (the build above: one Verilator build fewer)
    failures += not r.ok
    print(format_table(["", "value"], [["graph", graph], ["kernels / items", f"{r.rtl['kernels']} / {r.rtl['items']}"],
                                       ["EF exchanges", r.rtl["exchanges"]],
                                       ["check", "matches reference" if r.ok else "MISMATCH: " + r.problems[0]]],
                       title=f"BFS with the GraphPEG RTL in the loop ({sims[-1]})"))
    print()
    return failures
