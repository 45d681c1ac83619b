"""The demo's SCU step (its descriptor's ``demo``, golden/scu/descriptor.py):
random operations on the simulators against the TLM, then BFS and SSSP with the
RTL in the loop."""
from __future__ import annotations

from golden.report import format_table
from golden.scu import SCUConfig
from sim.build import build_verilog
from sim.cosim import run_cosim
from sim.runner import run_cocotb

__all__ = ["demo"]


#: The SCU's RTL-in-the-loop graph with ``--quick`` (the MFF's and GraphPEG's too).
QUICK_GRAPH = "kron:scale=6,edgefactor=4,seed=1"


def demo(sims, quick: bool, step) -> int:
    failures = 0
    cfg = SCUConfig.preset("gtx980-sim")
    step(f"SCU, preset 'gtx980-sim' (width {cfg.width}): random operations on {', '.join(sims)} against its TLM, "
         f"then BFS and SSSP with the tx1-sim RTL in the loop")
    build = build_verilog("scu", cfg)
    runs = [{"name": "all operations, latency 1-60", "seed": 3, "workload": {"seed": 3, "ops": 10 if quick else 20},
             "timing": {"latency": [1, 60], "seed": 3}},
            {"name": "memory errors", "seed": 4, "workload": {"seed": 4, "ops": 8},
             "timing": {"latency": [1, 20], "seed": 4, "error_ranges": [[0x1000, 0x5000]]}}]
    rows = []
    for sim in sims:
        res = run_cocotb(build, "sim.scu.tb", {"config": cfg.to_dict(), "runs": runs}, sim=sim)
        for r in res["runs"]:
            ok = not r["mismatches"]
            failures += not ok
            errs = sum(s["mem_error"] for s in r["statuses"]), sum(s["cmd_error"] for s in r["statuses"])
            rows.append([sim, r["name"], r["ops"], r["cycles"], f"{errs[0]} / {errs[1]}",
                         "matches TLM" if ok else "MISMATCH: " + r["mismatches"][0]])
    print(format_table(["simulator", "run", "operations", "cycles", "mem / cmd errors", "check"], rows,
                       title="SCU RTL against its TLM"))
    print()
    from ..demo import DEMO_GRAPHS
    sim = sims[-1]
    graph = QUICK_GRAPH if quick else DEMO_GRAPHS[1]
    rows = []
    for algo in ("bfs", "sssp"):
        step(f"{algo} on {graph}: {sim} runs every SCU operation of the golden algorithm", new=False)
        r = run_cosim(graph, algo, preset="tx1-sim", sim=sim, log=lambda *a: None)
        failures += not r.ok
        rows.append([algo, sum(r.rtl["ops"].values()), r.rtl["requests"], round(r.rtl["cycles"]),
                     round(r.tlm["cycles"]), "matches reference" if r.ok else "MISMATCH: " + r.problems[0]])
    print(format_table(["algorithm", "SCU operations", "memory requests", "SCU cycles (RTL)", "SCU cycles (model)",
                        "check"], rows, title="RTL in the loop (SCU tx1-sim)"))
    print()
    return failures
