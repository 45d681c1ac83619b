"""``graphunits demo``: the README's main job on built-in examples.

For now (foundation): the fetch engine is generated, simulated on Icarus and
Verilator against the testbench memory model, and every operation is compared
with the golden TLM. Later units add their own sections.
"""
from __future__ import annotations

import time

from golden.fetch import FetchConfig
from golden.report import format_table

from .build import build_verilog
from .runner import SIMULATORS, run_cocotb

__all__ = ["run_demo", "fetch_demo_runs"]


def fetch_demo_runs(quick: bool = False) -> list[dict]:
    n = 1024 if quick else 4096
    return [
        {"name": "linear, 1-cycle memory", "workload": {"kind": "linear", "count": n}, "timing": {"latency": 1}},
        {"name": "linear, 100-cycle memory", "workload": {"kind": "linear", "count": n},
         "timing": {"latency": 100}},
        {"name": "random ranges, latency 1-200, back-pressure", "seed": 1,
         "workload": {"kind": "random", "seed": 1, "ops": 8},
         "timing": {"latency": [1, 200], "seed": 1, "req_ready": [1, 1, 1, 0]}, "out_ready": [1, 1, 0]},
    ]


def _step(msg: str) -> None:
    print(f"[demo] {msg}", flush=True)


def run_demo(sims=None, quick: bool = False) -> int:
    sims = list(sims or SIMULATORS)
    failures = 0
    cfg = FetchConfig.preset("deep")
    t0 = time.time()
    _step(f"fetch engine, preset 'deep' (width {cfg.width}, {cfg.max_inflight} requests in flight, "
          f"merge window {cfg.merge_window}): generating Verilog")
    build = build_verilog("fetch", cfg)
    rows = []
    for sim in sims:
        _step(f"fetch engine on {sim}: building and simulating")
        res = run_cocotb(build, "sim.tb.fetch", {"config": cfg.to_dict(), "runs": fetch_demo_runs(quick)}, sim=sim)
        for r in res["runs"]:
            ok = not r["mismatches"]
            failures += not ok
            rows.append([sim, r["name"], r["elements"], r["cycles"], round(r["elements"] / max(r["cycles"], 1), 2),
                         r["memory"]["reads"], "matches TLM" if ok else "MISMATCH: " + r["mismatches"][0]])
    print()
    print(format_table(["simulator", "run", "elements", "cycles", "elem/cycle", "mem reads", "check"], rows,
                       title=f"Fetch engine (ideal: {cfg.width} elements/cycle)"))
    print()
    _step(f"done in {time.time() - t0:.0f} s" + ("" if not failures else f", {failures} FAILED"))
    return 1 if failures else 0
