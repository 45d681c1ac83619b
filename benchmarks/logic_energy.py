#!/usr/bin/env python3
"""Logic energy of each unit's RTL (issue 18; docs/energy.md, "Unit logic").

For every unit with RTL in the loop: one algorithm run with the RTL on Verilator
built with ``--coverage-toggle`` (the toggle count of every bit), the unit's
netlist from the liberty area flow (same preset), and :func:`synth.power.logic_energy`:
energy at the OSU 0.18 um node and at the unit's paper node. The run's work
items (the unit's counters that the golden model also counts: SCU stream
elements in and out, IRU elements, GraphPEG edge items, MFF values, EMOGI lanes) turn it
into the per-item energy and the leakage per unit copy that ``golden/<unit>/
energy.py`` charges (``LOGIC``); ``--json`` writes the table those constants are
copied from (synth/logic_energy.json; a test checks that they agree).

Usage: python benchmarks/logic_energy.py [--units scu,iru,graphpeg,mff,coalescer] [--json FILE]
"""
import argparse
import json
import sys
import time
from pathlib import Path

from golden.report import format_table

#: unit -> (graph, algorithm, the paper's node (nm), the items counter, RTL copies of the modelled unit)
RUNS = {
    "scu": ("kron:scale=8,edgefactor=16,seed=1", "bfs", 32, "elements_in+elements_out", "the SCU (1 per GPU)"),
    "iru": ("kron:scale=7,edgefactor=8,seed=1", "bfs", 32, "elements", "partitions"),
    "graphpeg": ("kron:scale=8,edgefactor=16,seed=1", "bfs", 28, "items", "SMs"),
    "mff": ("kron:scale=8,edgefactor=16,seed=1", "bfs", 40, "values", "one MFF"),
    "coalescer": ("kron:scale=8,edgefactor=16,seed=1", "bfs", 22, "lanes", "one SM's coalescer"),
}


def _items(unit: str, key: str, rtl: dict, tlm: dict) -> int:
    """The run's work items (``key``, or the sum ``"a+b"``), from the RTL's own
    counters where it reports them, else from the TLM run's."""
    for src in (rtl, tlm):
        v = [src.get(k) for k in key.split("+")]
        if all(isinstance(x, (int, float)) for x in v) and sum(v) > 0:
            return int(sum(v))
    raise KeyError(f"{unit}: neither the RTL nor the TLM run reports {key!r}")


def _rtl_copies(unit: str, cfg) -> int:
    """How many of the modelled GPU's unit copies the RTL preset holds (IRU:
    partitions; GraphPEG: SMs; the others one)."""
    return int({"iru": getattr(cfg, "partitions", 1), "graphpeg": getattr(cfg, "sms", 1)}.get(unit, 1))


def measure(unit: str, log=print) -> dict:
    from hw.registry import unit as get_unit
    from sim.cosim import cosim_units, run_cosim
    from synth.flow import run_area
    from synth.power import NodeScaling, logic_energy, read_liberty_power
    from synth.tools import liberty_path
    graph, algo, node, key, copies_note = RUNS[unit]
    cu = cosim_units()[unit]
    t0 = time.time()
    r = run_cosim(graph, algo, unit=unit, sim="verilator", toggles=True, log=lambda *a: None)
    if not r.ok:
        raise RuntimeError(f"{unit}: the RTL run disagrees: {r.problems}")
    toggles = r.rtl.pop("toggles")
    log(f"[logic] {unit}: RTL run {toggles['cycles']} cycles ({time.time() - t0:.0f} s); liberty area flow")
    area = run_area(unit, preset=cu.default_preset, flow="liberty")
    lib = read_liberty_power(str(liberty_path()))
    e = logic_energy(area, toggles, lib, nodes=(180, node))
    items = _items(unit, key, r.rtl, r.tlm)
    cfg = get_unit(unit).config_class.preset(cu.default_preset)
    rtl_copies = _rtl_copies(unit, cfg)
    tot = e["total_180"]
    s = NodeScaling()
    at = e["nodes"][str(node)]
    return {
        "unit": unit, "preset": cu.default_preset, "graph": graph, "algo": algo, "node_nm": node,
        "cycles": toggles["cycles"], "item": key, "items": items, "rtl_copies": rtl_copies,
        "copies_note": copies_note,
        "flip_flops": sum(m["flip_flops"] for m in e["modules"].values()),
        "comb_cells": sum(m["comb_cells"] for m in e["modules"].values()),
        "pj_180": {k: round(tot[k], 3) for k in ("clock_pj", "ff_pj", "comb_pj", "dynamic_pj")},
        "leakage_nw_180": round(tot["leakage_nw"], 3),
        "dynamic_pj_per_item": at["dynamic_j"] * 1e12 / items,
        "clock_pj_per_cycle": at["clock_j"] * 1e12 / toggles["cycles"],
        "clock_share": tot["clock_pj"] / tot["dynamic_pj"] if tot["dynamic_pj"] else 0.0,
        "leak_mw_per_copy": at["leakage_w"] * 1e3 / rtl_copies,
        "scaling": {"dynamic": s.dynamic(node), "leakage": s.leakage(node)},
        "wall_s": round(time.time() - t0, 1),
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--units", default=",".join(RUNS), help=f"comma-separated, of {', '.join(RUNS)}")
    ap.add_argument("--json", help="write the results (the table golden/<unit>/energy.py LOGIC is copied from)")
    args = ap.parse_args(argv)
    units = [u.strip() for u in args.units.split(",") if u.strip()]
    bad = [u for u in units if u not in RUNS]
    if bad:
        print(f"error: unknown unit(s) {', '.join(bad)}; units: {', '.join(RUNS)}", file=sys.stderr)
        return 2
    out = [measure(u, log=lambda m: print(m, file=sys.stderr, flush=True)) for u in units]
    rows = [[o["unit"], o["preset"], f"{o['algo']} {o['graph']}", o["cycles"], f"{o['items']} {o['item']}",
             o["flip_flops"], o["comb_cells"], o["node_nm"], f"{o['dynamic_pj_per_item']:.3f}",
             f"{100 * o['clock_share']:.0f}%", f"{o['clock_pj_per_cycle']:.3f}", f"{o['leak_mw_per_copy']:.4f}"]
            for o in out]
    print(format_table(["unit", "preset", "run", "RTL cycles", "items", "FFs", "comb cells", "node nm",
                        "dyn pJ/item", "clock share", "clock pJ/cycle", "leak mW/copy"], rows))
    if args.json:
        Path(args.json).write_text(json.dumps({"schema": "graphunits.logic_energy/1", "units": out}, indent=1) + "\n")
        print(f"wrote {args.json}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
