#!/usr/bin/env python3
"""RTL in the loop: RTL cycles simulated per second, for each unit and simulator
(issue "Speed": at least 150,000 cycles/s with Verilator; ``graphunits cosim --unit
scu --graph kron:scale=14 --algo bfs`` under 60 s on 2 cores).

Each row is one ``run_cosim`` (sim/cosim.py) with the testbench memory inside the
design (``design``, sim/simmem.py: cocotb acts once per operation) or the Python
memory model (``python``: cocotb steps every cycle). Columns: the RTL's clock
cycles, the seconds of the whole cosim (TLM run, reference, build check, RTL run,
comparisons), of the RTL run (the simulator process: start, the algorithm's own
Python, loads and read-backs, simulation), and with the memory inside the design
the seconds spent simulating alone (between a command and its status) and loading
/ reading back (memory blocks; for the MFF also the command entries and the
recorded outputs); cycles per second of the RTL run and while simulating. The first
run of a design builds it (Verilator: about a minute), so each row is run twice
and the second run's times are reported.

Usage: python benchmarks/cosim_speed.py [--runs NAME,...] [--sims verilator,icarus] [--json FILE]
"""
import argparse
import json
import platform
import sys
import time
from pathlib import Path

from golden.report import format_table

#: name -> (unit, graph, algo, memory)
RUNS = {
    "scu-kron14-design": ("scu", "kron:scale=14", "bfs", "design"),
    "scu-kron12-design": ("scu", "kron:scale=12", "bfs", "design"),
    "scu-kron12-python": ("scu", "kron:scale=12", "bfs", "python"),
    "iru-kron12-design": ("iru", "kron:scale=12", "bfs", "design"),
    "iru-kron10-design": ("iru", "kron:scale=10", "bfs", "design"),
    "iru-kron10-python": ("iru", "kron:scale=10", "bfs", "python"),
    "iru-pr-kron10-design": ("iru", "kron:scale=10", "pr", "design"),
    "graphpeg-kron12-design": ("graphpeg", "kron:scale=12", "bfs", "design"),
    "graphpeg-kron10-design": ("graphpeg", "kron:scale=10", "bfs", "design"),
    "graphpeg-kron10-python": ("graphpeg", "kron:scale=10", "bfs", "python"),
    "graphpeg-sssp-kron12-design": ("graphpeg", "kron:scale=12", "sssp", "design"),
    "mff-kron10-design": ("mff", "kron:scale=10", "pr", "design"),
    "mff-kron10-python": ("mff", "kron:scale=10", "pr", "python"),
}
DEFAULT_RUNS = ("scu-kron14-design", "scu-kron12-design", "scu-kron12-python", "iru-kron12-design",
                "iru-kron10-design", "iru-kron10-python", "iru-pr-kron10-design", "graphpeg-kron12-design",
                "graphpeg-kron10-design", "graphpeg-kron10-python", "graphpeg-sssp-kron12-design",
                "mff-kron10-design", "mff-kron10-python")


def one(name: str, sim: str) -> dict:
    from sim.cosim import run_cosim
    unit, graph, algo, memory = RUNS[name]
    for _ in range(2):                          # the first run builds the design
        t = time.time()
        r = run_cosim(graph, algo, unit=unit, sim=sim, memory=memory, log=lambda *a: None)
        wall = time.time() - t
    rtl = r.rtl
    cycles = rtl.get("sim_cycles") or rtl.get("cycles")
    mem = rtl.get("memory")
    if isinstance(mem, list):                   # the IRU: one per partition (the times are the run's)
        mem = mem[0] if mem else {}
    mem = mem if isinstance(mem, dict) else {}
    rec = {"run": name, "unit": unit, "graph": graph, "algo": algo, "memory": rtl.get("memory_model", memory),
           "sim": sim, "ok": r.ok, "cycles": int(cycles), "cosim_s": round(wall, 2),
           "rtl_run_s": rtl.get("rtl_wall_s"), "simulate_s": mem.get("simulate_s"),
           "load_read_back_s": mem.get("load_read_back_s")}
    rec["cycles_per_s_rtl_run"] = round(cycles / rtl["rtl_wall_s"]) if rtl.get("rtl_wall_s") else None
    rec["cycles_per_s_simulating"] = round(cycles / mem["simulate_s"]) if mem.get("simulate_s") else None
    return rec


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", default=",".join(DEFAULT_RUNS), help=f"runs: {', '.join(RUNS)}")
    ap.add_argument("--sims", default="verilator")
    ap.add_argument("--json", default="build/benchmarks/cosim_speed.json")
    args = ap.parse_args(argv)
    runs = [x for x in args.runs.split(",") if x]
    bad = [x for x in runs if x not in RUNS]
    if bad:
        ap.error(f"unknown run(s) {', '.join(bad)}; runs: {', '.join(RUNS)}")
    recs = []
    for sim in [s for s in args.sims.split(",") if s]:
        for name in runs:
            print(f"[cosim_speed] {name} on {sim}", file=sys.stderr, flush=True)
            recs.append(one(name, sim))
    cols = ["run", "sim", "memory", "ok", "cycles", "cosim_s", "rtl_run_s", "simulate_s", "load_read_back_s",
            "cycles_per_s_rtl_run", "cycles_per_s_simulating"]
    print(format_table(cols, [[("-" if r[c] is None else r[c]) for c in cols] for r in recs], markdown=True,
                       title="RTL in the loop: cycles per second"))
    out = Path(args.json)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"date": time.strftime("%Y-%m-%d"), "machine": f"{platform.machine()}, Python "
                               f"{platform.python_version()}", "runs": recs}, indent=2))
    print(f"(JSON: {out})")
    return 0 if all(r["ok"] for r in recs) else 1


if __name__ == "__main__":
    sys.exit(main())
