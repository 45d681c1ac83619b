#!/usr/bin/env python3
"""Fetch engine throughput: elements/cycle for widths 1, 2, 4, 8 with a 1-cycle and a
100-cycle memory, against the ideal (the width), on Verilator.

Every width runs with the default 32 requests in flight and with 128 (the "deep"
preset), each against both memories.

Goal (issue "Foundation"): >= 0.95 x width with 1-cycle memory (the default
configuration, 32 in flight, included); >= 0.9 x width at 100-cycle latency when
max_inflight covers the latency (Little's law: one 32 B request per cycle for
100 cycles needs > 100 requests in flight).

Usage: python benchmarks/fetch_throughput.py [--elements N] [--sim verilator|icarus] [--json FILE]
"""
import argparse
import json
import platform
import sys
import time
from pathlib import Path

from golden.fetch import FetchConfig
from golden.report import format_table
from sim.build import build_verilog
from sim.runner import run_cocotb


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--elements", type=int, default=16384)
    ap.add_argument("--sim", default="verilator", choices=["verilator", "icarus"])
    ap.add_argument("--widths", default="1,2,4,8")
    ap.add_argument("--json", default="build/benchmarks/fetch_throughput.json")
    args = ap.parse_args(argv)
    rows, records = [], []
    t0 = time.time()
    for width in [int(w) for w in args.widths.split(",")]:
        for inflight in (32, 128):
            cfg = FetchConfig(width=width, max_inflight=inflight, merge_window=4)
            runs = [{"name": f"lat{lat}", "workload": {"kind": "linear", "count": args.elements},
                     "timing": {"latency": lat, "max_outstanding": 1024}} for lat in (1, 100)]
            print(f"[bench] width {width}, {inflight} in flight ({time.time() - t0:.0f} s)", file=sys.stderr, flush=True)
            res = run_cocotb(build_verilog("fetch", cfg), "sim.tb.fetch",
                             {"config": cfg.to_dict(), "runs": runs}, sim=args.sim)
            for run, r in zip(runs, res["runs"]):
                assert not r["mismatches"], r["mismatches"]
                lat = run["timing"]["latency"]
                total = r["elements"] / r["cycles"]
                stream = r["elements"] / (r["last_out_cycle"] - r["first_out_cycle"] + 1)
                rows.append([width, inflight, lat, r["elements"], r["cycles"], round(total, 3), round(stream, 3),
                             round(total / width, 3), round(stream / width, 3)])
                records.append({"width": width, "max_inflight": inflight, "latency": lat, "elements": r["elements"],
                                "cycles": r["cycles"], "elements_per_cycle": total,
                                "streaming_elements_per_cycle": stream, "ideal": width,
                                "memory_reads": r["memory"]["reads"]})
    headers = ["width", "in flight", "latency", "elements", "cycles", "elem/cycle", "streaming",
               "x ideal", "streaming x ideal"]
    print(format_table(headers, rows, markdown=True,
                       title=f"Fetch engine throughput, 4-byte elements, 32-byte blocks ({args.sim})"))
    out = Path(args.json)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"machine": platform.machine(), "python": platform.python_version(),
                               "date": time.strftime("%Y-%m-%d"), "simulator": args.sim, "results": records}, indent=2))
    print(f"\n(JSON: {out}; {time.time() - t0:.0f} s)")


if __name__ == "__main__":
    main()
