#!/usr/bin/env python3
"""Units behind AXI4 (issue "For the hardware engineer": the wrapper reaches at least
0.9 of the bare unit's throughput with a 1-cycle memory).

For each workload: the bare unit's cycles with the testbench's Python memory at a
1-cycle latency (sim/<unit>/tb.py), and the wrapped unit's (hw/axi/wrapper.py)
with the same memory model behind an AXI4 slave agent answering one-beat bursts
(sim.axi.AXIMemoryAgent: a 1-cycle AXI memory) and with cocotbext-axi's AXI RAM,
nothing paused (sim/axi/tb_unit.py); the sum of the operations' own cycles
(command to status) of each, and their ratio (bare / wrapped: 1 = as fast). The
AXI RAM answers a burst a few cycles after its address (it is a cocotb model, not
a 1-cycle memory); the unit's requests in flight hide that latency only as far as
its configuration allows.

Usage: python benchmarks/axi.py [--sim icarus|verilator] [--seeds 4,5,6] [--json FILE]
"""
import argparse
import json
import platform
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from golden.report import format_table  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sim", default="icarus", choices=["icarus", "verilator"])
    ap.add_argument("--seeds", default="4,5,6")
    ap.add_argument("--preset", default="tiny", help="SCU preset (default: %(default)s)")
    ap.add_argument("--json", default="build/benchmarks/axi.json")
    args = ap.parse_args(argv)
    try:
        seeds = [int(x) for x in args.seeds.split(",")]
    except ValueError:
        ap.error(f"--seeds must be integers separated by commas, not {args.seeds!r}")
    from golden.scu import SCUConfig
    from sim.build import build_verilog
    from sim.runner import run_cocotb
    from golden.config import ConfigError
    try:
        cfg = SCUConfig.preset(args.preset)
        build_verilog("scu", cfg)                 # a preset the RTL does not build says so here
    except ConfigError as e:
        ap.error(f"--preset {args.preset}: {e}")
    rows, out = [], []
    t0 = time.time()
    for seed in seeds:
        wl = {"seed": seed, "ops": 14, "max_n": 60}
        bare = run_cocotb(build_verilog("scu", cfg), "sim.scu.tb", {"config": cfg.to_dict(), "runs": [
            {"name": "bare", "seed": seed, "workload": wl, "timing": {"latency": 1}}]}, sim=args.sim)["runs"][0]
        axi = run_cocotb(build_verilog("scu", cfg, axi=0), "sim.axi.tb_unit", {
            "unit": "scu", "config": cfg.to_dict(), "runs": [
            {"name": "axi", "seed": seed, "workload": wl, "pause": 0}]}, sim=args.sim)["runs"][0]
        one = run_cocotb(build_verilog("scu", cfg, axi=0), "sim.axi.tb_unit", {
            "unit": "scu", "config": cfg.to_dict(), "runs": [
            {"name": "axi-1", "seed": seed, "workload": wl, "memory": "one-cycle", "timing": {"latency": 1}}]},
            sim=args.sim)["runs"][0]
        for r in (bare, axi, one):
            if r["mismatches"]:
                print(f"seed {seed}: {r['name']}: {r['mismatches'][:2]}", file=sys.stderr)
                return 1
        cb, ca, c1 = (sum(s["cycles"] for s in r["statuses"]) for r in (bare, axi, one))
        rec = {"unit": "scu", "preset": args.preset, "seed": seed, "ops": len(bare["statuses"]),
               "elements_out": sum(s["elements_out"] for s in bare["statuses"]), "bare_cycles": cb,
               "axi_one_cycle_cycles": c1, "ratio_one_cycle": round(cb / c1, 3),
               "axi_ram_cycles": ca, "ratio_axi_ram": round(cb / ca, 3)}
        out.append(rec)
        rows.append([f"scu {args.preset}", seed, rec["ops"], rec["elements_out"], cb, c1,
                     f"{rec['ratio_one_cycle']:.3f}", ca, f"{rec['ratio_axi_ram']:.3f}"])
        print(f"[axi {time.time() - t0:5.0f} s] seed {seed} done", flush=True)
    print(format_table(["unit", "seed", "ops", "elements out", "bare (1-cycle memory)",
                        "AXI4, 1-cycle AXI memory", "bare / AXI4", "AXI4, AXI RAM", "bare / AXI4 (RAM)"], rows))
    path = Path(args.json)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"sim": args.sim, "machine": platform.node(), "runs": out}, indent=1))
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
