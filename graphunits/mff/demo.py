"""The demo's MFF step (its descriptor's ``demo``, golden/mff/descriptor.py): pull
PageRank whose every PC_gather runs on the RTL."""
from __future__ import annotations

from golden.report import format_table
from sim.cosim import run_cosim

__all__ = ["demo"]


def demo(sims, quick: bool, step) -> int:
    sim = sims[-1]
    graph = "kron:scale=6,edgefactor=4,seed=1" if quick else "kron:scale=7,edgefactor=8,seed=1"
    step(f"MFF, preset default: {sim} runs every PC_gather of pull PageRank on {graph}")
    r = run_cosim(graph, "pr", unit="mff", preset="default", sim=sim, log=lambda *a: None, options={"tol": 1e-10})
    print(format_table(["algorithm", "PC_gather commands", "values", "block reads", "RTL cycles", "check"],
                       [["pr", r.rtl["commands"], r.rtl["values"], r.rtl["memory"]["reads"], r.rtl["cycles"],
                         "matches reference" if r.ok else "MISMATCH: " + r.problems[0]]],
                       title="RTL in the loop (MFF)"))
    print()
    return int(not r.ok)
