#!/usr/bin/env python3
"""MFF benchmarks (issue "MFF"):

(a) RTL: gathered values per cycle of the MFF unit on PageRank-style gathers
    (warps of 32 vertices, ``pc_size`` 16) of kron:scale=12, with a 1-cycle and a
    100-cycle memory, for the presets ``default`` (32 B blocks) and ``gtx480``
    (128 B lines); block reads against the TLM's and the distinct blocks.
(b) Golden model: memory requests and estimated time of the pull algorithms on
    the GPU alone (mode ``pull``) and with the MFF (mode ``mff``) for PageRank and
    BFS on kron:scale=16 and grid:256x256 on the GTX 480 model, beside the slides'
    1.75-5.22x.

Usage: python benchmarks/mff.py [--part a|b|ab] [--sim verilator] [--json FILE]
"""
import argparse
import json
import platform
import sys
import time
from pathlib import Path

from golden.report import format_table

SLIDES = "1.75-5.22x faster (GPGPU-Sim GTX 480; PageRank, BFS, SSSP, WCC on five real graphs)"


def log(t0, msg):
    print(f"[bench] {msg} ({time.time() - t0:.0f} s)", file=sys.stderr, flush=True)


def part_a(args, t0):
    from golden.mff import MFFConfig, MFFModel
    from sim.build import build_verilog
    from sim.mff import make_workload
    from sim.runner import run_cocotb
    rows, recs = [], []
    for preset in ("default", "gtx480"):
        cfg = MFFConfig.preset(preset)
        runs = [{"name": f"lat{lat}", "workload": {"kind": "bench", "graph": args.graph, "warps": args.warps},
                 "timing": {"latency": lat, "max_outstanding": 1024}} for lat in (1, 100)]
        log(t0, f"RTL {preset}")
        res = run_cocotb(build_verilog("mff", cfg), "sim.tb.mff", {"config": cfg.to_dict(), "runs": runs},
                         sim=args.sim)
        space, items = make_workload(cfg, runs[0]["workload"])
        tlm = MFFModel(cfg, space)
        tres = [tlm.execute(c) for c in items]
        tlm_reads = sum(r.reads for r in tres)
        distinct = len(set().union(*[r.blocks for r in tres]))
        for run, r in zip(runs, res["runs"]):
            assert not r["mismatches"], r["mismatches"]
            vpc = r["values"] / r["cycles"]
            rows.append([preset, cfg.block_bytes, cfg.work_registers, cfg.tag_entries, run["timing"]["latency"],
                         r["values"], r["cycles"], round(vpc, 3), r["memory"]["reads"], tlm_reads, distinct])
            recs.append({"preset": preset, "latency": run["timing"]["latency"], "values": r["values"],
                         "cycles": r["cycles"], "values_per_cycle": vpc, "reads": r["memory"]["reads"],
                         "tlm_reads": tlm_reads, "distinct_blocks": distinct})
    print(format_table(["preset", "block B", "registers", "tags", "latency", "values", "cycles", "values/cycle",
                        "block reads", "TLM reads", "distinct blocks"], rows, markdown=True,
                       title=f"(a) MFF RTL gathers ({args.sim}; {args.graph}, {args.warps} warps, pc_size 16)"))
    return recs


def part_b(args, t0):
    from golden.algorithms import run_algorithm
    from golden.algorithms.common import default_source
    from golden.graphs import load_graph
    rows, recs = [], []
    for spec in args.graphs.split(";"):
        g = load_graph(spec)
        for algo in ("pr", "bfs"):
            opts = {"source": default_source(g)} if algo == "bfs" else {}
            res = {}
            for mode in ("pull", "mff"):
                log(t0, f"{algo} {mode} on {spec}")
                res[mode] = run_algorithm(g, algo, mode, gpu="gtx480", **opts)
            assert (res["pull"].values == res["mff"].values).all() or algo == "pr"
            base = res["pull"].gpu["total"]
            for mode, r in res.items():
                t = r.gpu["total"]
                edges = r.counters["edges"]
                gpu_req = t["lines"]                  # GTX 480: one request per 128 B line
                mff_req = r.extra["mff"]["requests"]
                rows.append([spec.split(",")[0], algo, mode, r.iterations, edges, gpu_req, mff_req,
                             round((gpu_req + mff_req) / edges, 3), round(t["cycles"]),
                             round(base["cycles"] / t["cycles"], 2)])
                recs.append({"graph": spec, "algo": algo, "mode": mode, "iterations": r.iterations, "edges": edges,
                             "gpu_requests": gpu_req, "mff_requests": mff_req, "cycles": t["cycles"],
                             "speedup": base["cycles"] / t["cycles"]})
    print(format_table(["graph", "algo", "mode", "iters", "edges", "GPU requests", "MFF requests",
                        "requests/edge", "est. cycles", "speedup"], rows, markdown=True,
                       title="(b) Golden model on the GTX 480: pull vs MFF"))
    print(f"\nSlides: {SLIDES}.")
    return recs


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--part", default="ab", choices=["a", "b", "ab"])
    ap.add_argument("--sim", default="verilator", choices=["verilator", "icarus"])
    ap.add_argument("--graph", default="kron:scale=12,edgefactor=16,seed=1", help="graph of part (a)")
    ap.add_argument("--warps", type=int, default=32, help="warps of part (a)")
    ap.add_argument("--graphs", default="kron:scale=16,edgefactor=16,seed=1;grid:256x256,seed=1")
    ap.add_argument("--json", default="build/benchmarks/mff.json")
    args = ap.parse_args(argv)
    from golden.perf import tune_allocator
    tune_allocator()
    t0 = time.time()
    doc = {"machine": platform.machine(), "python": platform.python_version(), "date": time.strftime("%Y-%m-%d")}
    if "a" in args.part:
        doc["rtl"] = part_a(args, t0)
        print()
    if "b" in args.part:
        doc["golden"] = part_b(args, t0)
    out = Path(args.json)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(doc, indent=2))
    print(f"\n(JSON: {out}; {time.time() - t0:.0f} s)")


if __name__ == "__main__":
    main()
