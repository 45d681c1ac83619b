"""The demo's IRU step (its descriptor's ``demo``, golden/iru/descriptor.py)."""
from __future__ import annotations

from golden.iru import IRUConfig
from golden.report import format_table
from sim.build import build_verilog
from sim.cosim import run_cosim
from sim.runner import run_cocotb

__all__ = ["demo"]


def demo(sims, quick: bool, step, graph: str = "kron:scale=7,edgefactor=8,seed=1") -> int:
    """``graphunits demo``'s IRU step: random operations and a graph's edge frontier on
    the ``small`` RTL (2 partitions) on every simulator, checked with the IRU's
    rules and against the TLM; then BFS with the RTL in the loop. Returns the
    number of failures (prints two tables)."""
    cfg = IRUConfig.preset("small")
    step(f"IRU, preset 'small' ({cfg.partitions} partitions of {cfg.sets} sets, warps of {cfg.entry_size}): "
         f"random operations on {', '.join(sims)} against its rules and its TLM")
    build = build_verilog("iru", cfg)
    runs = [{"name": "none / min / fadd, latency 1-40, back-pressure", "seed": 3, "monitor": True,
             "workload": {"seed": 3, "ops": 4 if quick else 8, "max_n": 400}, "policy": {"resident": 16, "think": 10},
             "jitter": {"gap": 30, "seed": 3}, "timing": {"latency": [1, 40], "seed": 3, "req_ready": 0.8},
             "reply_ready": 0.7},
            {"name": "edge frontier, every warp asks at once", "seed": 4, "monitor": True,
             "workload": {"kind": "graph", "graph": "kron:scale=10,edgefactor=8,seed=1", "n": 1000 if quick else 3000},
             "policy": {"resident": 1024, "think": 50}, "timing": {"latency": 30}}]
    rows, failures = [], 0
    for sim in sims:
        res = run_cocotb(build, "sim.iru.tb", {"config": cfg.to_dict(), "runs": runs}, sim=sim)
        for r in res["runs"]:
            ok = not r["mismatches"]
            failures += not ok
            q = [x for x in r["quality"] if x[0] is not None]
            qtxt = f"{q[-1][0]:.2f} / {q[-1][1]:.2f}" if q else "-"
            rows.append([sim, r["name"], r["ops"], sum(r["sizes"]), r["cycles"], qtxt,
                         "rules hold, matches TLM" if ok else "MISMATCH: " + r["mismatches"][0]])
    print(format_table(["simulator", "run", "operations", "elements", "cycles", "blocks/reply RTL / TLM", "check"],
                       rows, title="IRU RTL (blocks/reply: distinct 128 B blocks per full warp reply)"))
    print()
    sim = sims[-1]
    step(f"BFS on {graph} with the IRU RTL in the loop ({sim})", new=False)
    r = run_cosim(graph, "bfs", unit="iru", sim=sim, log=lambda *a: None,
                  memory="python")                       # (the build above: one Verilator build fewer)
    failures += not r.ok
    print(format_table(["algorithm", "IRU operations", "elements", "blocks/reply", "IRU cycles (RTL)", "check"],
                       [["bfs", r.rtl["ops"], r.rtl["elements"], r.rtl["blocks_per_reply"], r.rtl["cycles"],
                         "matches reference" if r.ok else "MISMATCH: " + r.problems[0]]],
                       title="RTL in the loop (IRU small)"))
    print()
    return failures
