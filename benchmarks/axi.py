#!/usr/bin/env python3
"""Units behind AXI4 (issue "For the hardware engineer": the wrapper reaches at least
0.9 of the bare unit's throughput with a 1-cycle memory).

For each unit (the SCU, the MFF, GraphPEG, the IRU, the fetch engine, the EMOGI
coalescer) and workload: the bare unit's cycles with the
testbench's Python memory at a 1-cycle latency (sim/<unit>/tb.py), and the wrapped
unit's (hw/axi/wrapper.py)
with the same memory model behind an AXI4 slave agent answering one-beat bursts
(sim.axi.AXIMemoryAgent: a 1-cycle AXI memory) and with cocotbext-axi's AXI RAM,
nothing paused (sim/axi/tb_unit.py); the SCU's sum of the operations' own cycles
(command to status), the others' cycles of their whole list of commands, steps,
operations, ranges or warps, and their ratio (bare / wrapped: 1 = as fast). The
AXI RAM answers a burst a few cycles after its address (it is a cocotb model, not
a 1-cycle memory); the unit's requests in flight hide that latency only as far as
its configuration allows.

Usage: python benchmarks/axi.py [--sim icarus|verilator] [--units scu,mff,graphpeg,iru,fetch,coalescer] [--preset P] [--seeds 4,5,6]
       [--json FILE]
"""
import argparse
import json
import platform
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from golden.report import format_table  # noqa: E402


#: GraphPEG's benchmark steps: four kernels over a random graph (edge lists, EF, CSC, vertex lists).
GRAPHPEG_KERNELS = [{"lists": [60, 48], "ef": False}, {"lists": [36, 36], "ef": True, "skew": True},
                    {"lists": [30, 30], "csc": True, "ef": False}, {"lists": [24, 24], "mode": "vertex"}]

#: unit -> (preset, its bare testbench module, workload of a seed, the cycles of a run's result,
#: what the table counts: operations and elements)
BENCH = {
    "scu": ("tiny", "sim.scu.tb", lambda seed: {"seed": seed, "ops": 14, "max_n": 60},
            lambda r: sum(s["cycles"] for s in r["statuses"]),       # the operations' own cycles
            lambda r: (len(r["statuses"]), sum(s["elements_out"] for s in r["statuses"]))),
    "mff": ("tiny", "sim.mff.tb", lambda seed: {"seed": seed, "commands": 16},
            lambda r: r["cycles"],                                    # the whole command list
            lambda r: (r["items"], r["values"])),
    "graphpeg": ("sim", "sim.graphpeg.tb", lambda seed: {"seed": seed, "kernels": GRAPHPEG_KERNELS,
                                                         "graph": {"vertices": 96, "big": [100], "zero": 0.1}},
                 lambda r: r["cycles"],                               # the whole step list
                 lambda r: (len(r["statuses"]), r["items"])),
    "fetch": ("default", "sim.tb.fetch", lambda seed: {"kind": "random", "seed": seed, "ops": 40},
              lambda r: r["cycles"],                                  # the whole range list
              lambda r: (r["ops"], r["elements"])),
    "coalescer": ("small", "sim.emogi.tb", lambda seed: {"kind": "random", "seed": seed, "count": 40},
                  lambda r: r["cycles"],                              # the whole warp list (no memory port)
                  lambda r: (r["warps"], r["requests"])),
    "iru": ("tiny", "sim.iru.tb", lambda seed: {"seed": seed, "ops": 12, "max_n": 400},
            lambda r: r["cycles"],                                    # the whole operation list
            lambda r: (r["ops"], sum(st["n"] for st in r["statuses"]))),
}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sim", default="icarus", choices=["icarus", "verilator"])
    ap.add_argument("--seeds", default="4,5,6")
    ap.add_argument("--units", default="scu,mff,graphpeg,iru,fetch,coalescer", help="units, comma-separated (default: %(default)s)")
    ap.add_argument("--preset", help="every unit's preset (default: tiny; GraphPEG's sim, the fetch engine's default, the coalescer's small)")
    ap.add_argument("--json", default="build/benchmarks/axi.json")
    args = ap.parse_args(argv)
    try:
        seeds = [int(x) for x in args.seeds.split(",")]
    except ValueError:
        ap.error(f"--seeds must be integers separated by commas, not {args.seeds!r}")
    units = [u.strip() for u in args.units.split(",") if u.strip()]
    bad = [u for u in units if u not in BENCH]
    if bad or not units:
        ap.error(f"--units: {', '.join(bad) or 'none given'}; choose among {', '.join(BENCH)}")
    from golden.config import ConfigError
    from hw.registry import UNITS
    from sim.build import build_verilog
    from sim.runner import run_cocotb
    cfgs = {}
    for u in units:
        preset = args.preset or BENCH[u][0]
        try:
            cfgs[u] = (preset, UNITS[u].config(preset))
            build_verilog(u, cfgs[u][1])          # a preset the RTL does not build says so here
        except ConfigError as e:
            ap.error(f"--preset {preset} ({u}): {e}")
    rows, out = [], []
    t0 = time.time()
    for u in units:
        _, tb, workload, cycles_of, counts = BENCH[u]
        preset, cfg = cfgs[u]
        for seed in seeds:
            wl = workload(seed)
            case = {"unit": u, "config": cfg.to_dict()}
            bare = run_cocotb(build_verilog(u, cfg), tb, {"config": cfg.to_dict(), "runs": [
                {"name": "bare", "seed": seed, "workload": wl, "timing": {"latency": 1}}]}, sim=args.sim)["runs"][0]
            axi = run_cocotb(build_verilog(u, cfg, axi=0), "sim.axi.tb_unit", {**case, "runs": [
                {"name": "axi", "seed": seed, "workload": wl, "pause": 0}]}, sim=args.sim)["runs"][0]
            one = run_cocotb(build_verilog(u, cfg, axi=0), "sim.axi.tb_unit", {**case, "runs": [
                {"name": "axi-1", "seed": seed, "workload": wl, "memory": "one-cycle", "timing": {"latency": 1}}]},
                sim=args.sim)["runs"][0]
            for r in (bare, axi, one):
                if r["mismatches"]:
                    print(f"{u} seed {seed}: {r['name']}: {r['mismatches'][:2]}", file=sys.stderr)
                    return 1
            cb, ca, c1 = (cycles_of(r) for r in (bare, axi, one))
            ops, elems = counts(bare)
            rec = {"unit": u, "preset": preset, "seed": seed, "ops": ops, "elements": elems, "bare_cycles": cb,
                   "axi_one_cycle_cycles": c1, "ratio_one_cycle": round(cb / c1, 3),
                   "axi_ram_cycles": ca, "ratio_axi_ram": round(cb / ca, 3)}
            out.append(rec)
            rows.append([f"{u} {preset}", seed, ops, elems, cb, c1, f"{rec['ratio_one_cycle']:.3f}", ca,
                         f"{rec['ratio_axi_ram']:.3f}"])
            print(f"[axi {time.time() - t0:5.0f} s] {u} seed {seed} done", flush=True)
    print(format_table(["unit", "seed", "ops", "elements (SCU out, MFF values, GraphPEG items, IRU in, ...)", "bare (1-cycle memory)",
                        "AXI4, 1-cycle AXI memory", "bare / AXI4", "AXI4, AXI RAM", "bare / AXI4 (RAM)"], rows))
    path = Path(args.json)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"sim": args.sim, "machine": platform.node(), "runs": out}, indent=1))
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
