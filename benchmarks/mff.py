#!/usr/bin/env python3
"""MFF benchmarks (issue "MFF"):

(e) The slides' worked example (vertices 0-3): the GPU's requests and distinct
    blocks and the MFF's block reads (structural TLM), with 32 B sectors and
    with 128 B lines, beside the slides' "11 requests for 4 cache blocks".
(a) RTL: gathered values per cycle of the MFF unit on PageRank-style gathers
    (warps of 32 vertices, ``pc_size`` 16) of kron:scale=12, with a 1-cycle and a
    100-cycle memory, for the presets ``default`` (32 B blocks) and ``gtx480``
    (128 B lines); cycles and block reads against the structural TLM (which must
    be equal) and the functional model, and the distinct blocks.
(b) Golden model: memory requests and estimated time of the pull algorithms on
    the GPU alone (mode ``pull``) and with the MFF (mode ``mff``) for PageRank and
    BFS on kron:scale=16 and grid:256x256 on the GTX 480 model, beside the slides'
    1.75-5.22x; the MFF's requests counted per command (analytic) and by the
    functional model's 32-line LRU tag unit.
(c) Golden model: push BFS marking the next frontier with atomicOr (``push``) or
    with PC_scatter_set (``mff-push``) on the same graphs: atomics against the
    unit's block reads and writes (per-command count and the functional tag unit).

Usage: python benchmarks/mff.py [--part eabc] [--sim verilator] [--json FILE]
"""
import argparse
import sys
import time

from golden.report import format_table, run_info, write_json

SLIDES = "1.75-5.22x faster (GPGPU-Sim GTX 480; PageRank, BFS, SSSP, WCC on five real graphs)"


def log(t0, msg):
    print(f"[bench] {msg} ({time.time() - t0:.0f} s)", file=sys.stderr, flush=True)


def part_e(args, t0):
    from golden.mff import MFFConfig, MFFModel, PortMemory
    from sim.mff import worked_example, worked_example_counts
    rows, recs = [], []
    for preset, reading in (("default", "32 B sectors"), ("gtx480", "128 B lines")):
        cfg = MFFConfig.preset(preset)
        n = worked_example_counts(cfg.block_bytes)
        space, cmd, _ = worked_example()
        reads = {}
        for lat in (1, 100):
            s = space.copy()
            m = MFFModel(cfg, s, PortMemory(s, cfg.block_bytes, lat))
            m.execute(cmd)
            reads[lat] = m.reads
        rows.append([reading, n["gpu_requests"], n["gpu_blocks"], n["mff_blocks"], reads[1], reads[100]])
        recs.append(dict(n, reading=reading, tlm_reads=reads))
    rows.append(["slides", 11, 4, 4, "-", "-"])
    print(format_table(["reading", "GPU requests", "GPU distinct blocks", "MFF C+V blocks", "TLM reads (lat 1)",
                        "TLM reads (lat 100)"], rows, markdown=True,
                       title="(e) The slides' worked example (vertices 0-3, the edges drawn)"))
    return recs


def part_a(args, t0):
    from golden.mff import MFFConfig, MFFFunctional, MFFModel, PortMemory
    from sim.build import build_verilog
    from sim.mff import make_workload
    from sim.runner import run_cocotb
    rows, recs = [], []
    for preset in ("default", "gtx480"):
        cfg = MFFConfig.preset(preset)
        runs = [{"name": f"lat{lat}", "workload": {"kind": "bench", "graph": args.graph, "warps": args.warps},
                 "timing": {"latency": lat, "max_outstanding": 1024}} for lat in (1, 100)]
        log(t0, f"RTL {preset}")
        res = run_cocotb(build_verilog("mff", cfg), "sim.mff.tb", {"config": cfg.to_dict(), "runs": runs},
                         sim=args.sim)
        space, items = make_workload(cfg, runs[0]["workload"])
        fres = MFFFunctional(cfg, space.copy()).run(items)
        fun_reads = sum(r.reads for r in fres)
        distinct = len(set().union(*[r.blocks for r in fres]))
        for run, r in zip(runs, res["runs"]):
            assert not r["mismatches"], r["mismatches"]
            lat = run["timing"]["latency"]
            log(t0, f"TLM {preset} latency {lat}")
            s = space.copy()
            tlm = MFFModel(cfg, s, PortMemory(s, cfg.block_bytes, lat, max_outstanding=1024))
            tlm.run(items)
            assert (tlm.cycle, tlm.reads) == (r["cycles"], r["memory"]["reads"]), "RTL and TLM differ"
            vpc = r["values"] / r["cycles"]
            rows.append([preset, cfg.block_bytes, cfg.work_registers, cfg.tag_entries, lat, r["values"], r["cycles"],
                         tlm.cycle, round(vpc, 3), r["memory"]["reads"], tlm.reads, fun_reads, distinct])
            recs.append({"preset": preset, "latency": lat, "values": r["values"], "cycles": r["cycles"],
                         "tlm_cycles": tlm.cycle, "values_per_cycle": vpc, "reads": r["memory"]["reads"],
                         "tlm_reads": tlm.reads, "functional_reads": fun_reads, "distinct_blocks": distinct,
                         "tlm_stats": tlm.stats})
    print(format_table(["preset", "block B", "registers", "tags", "latency", "values", "RTL cycles", "TLM cycles",
                        "values/cycle", "RTL reads", "TLM reads", "functional reads", "distinct blocks"], rows,
                       markdown=True,
                       title=f"(a) MFF RTL gathers ({args.sim}; {args.graph}, {args.warps} warps, pc_size 16)"))
    return recs


def part_b(args, t0):
    from golden.algorithms import run_algorithm
    from golden.algorithms.common import default_source
    from golden.graphs import load_graph
    from golden.mff import MFFConfig
    from golden.mff.algorithms import MFFTLMBackend
    rows, recs = [], []
    for spec in args.graphs.split(";"):
        g = load_graph(spec)
        for algo in ("pr", "bfs"):
            opts = {"source": default_source(g)} if algo == "bfs" else {}
            res = {}
            # The pull run here is the baseline: no compare_baseline run inside the mff runs.
            for mode in ("pull", "mff"):
                log(t0, f"{algo} {mode} on {spec}")
                res[mode] = run_algorithm(g, algo, mode, gpu="gtx480", compare_baseline=False, **opts)
            if args.functional:
                log(t0, f"{algo} mff (functional tag unit) on {spec}")
                res["mff, functional tag unit"] = run_algorithm(
                    g, algo, "mff", gpu="gtx480", backend=MFFTLMBackend(MFFConfig.preset("gtx480"), functional=True),
                    compare_baseline=False, **opts)
            assert (res["pull"].values == res["mff"].values).all() or algo == "pr"
            base = res["pull"].gpu["total"]
            for mode, r in res.items():
                t = r.gpu["total"]
                st = r.extra["mff"]
                edges = r.counters["edges"]
                gpu_req = st["gpu_requests"]           # GTX 480: one request per 128 B line
                mff_req = st["requests"]
                assert gpu_req == t["lines"] and st["total_requests"] == gpu_req + mff_req
                rows.append([spec.split(",")[0], algo, mode, r.iterations, edges, gpu_req, mff_req,
                             round(st["total_requests_per_edge"], 3), round(t["cycles"]),
                             round(base["cycles"] / t["cycles"], 2)])
                recs.append({"graph": spec, "algo": algo, "mode": mode, "iterations": r.iterations, "edges": edges,
                             "gpu_requests": gpu_req, "mff_requests": mff_req, "cycles": t["cycles"],
                             "speedup": base["cycles"] / t["cycles"]})
    print(format_table(["graph", "algo", "mode", "iters", "edges", "GPU requests", "MFF requests",
                        "requests/edge", "est. cycles", "speedup"], rows, markdown=True,
                       title="(b) Golden model on the GTX 480: pull vs MFF"))
    print(f"\nSlides: {SLIDES}.")
    return recs


def part_c(args, t0):
    from golden.algorithms import run_algorithm
    from golden.algorithms.common import default_source
    from golden.graphs import load_graph
    from golden.mff import MFFConfig
    from golden.mff.algorithms import MFFTLMBackend
    rows, recs = [], []
    cfg = MFFConfig.preset("gtx480")
    for spec in args.graphs.split(";"):
        g = load_graph(spec)
        s = default_source(g)
        log(t0, f"push bfs on {spec}")
        push = run_algorithm(g, "bfs", "push", gpu="gtx480", source=s)
        mff = run_algorithm(g, "bfs", "mff-push", gpu="gtx480", source=s, compare_baseline=False)
        fun = run_algorithm(g, "bfs", "mff-push", gpu="gtx480", source=s, compare_baseline=False,
                            backend=MFFTLMBackend(cfg, functional=True))
        assert (push.values == mff.values).all() and (push.values == fun.values).all()
        p, m, f = push.extra["mff"], mff.extra["mff"], fun.extra["mff"]
        ks = next(k for k in push.gpu["kernels"] if k["name"] == "bfs_push")["atomics"]
        base = push.gpu["total"]["cycles"]
        for mode, r, st, reads, writes in (("push", push, p, 0, 0), ("mff-push", mff, m, m["reads"], m["writes"]),
                                           ("mff-push, functional tag unit", fun, f, f["reads"], f["writes"])):
            t = r.gpu["total"]
            rows.append([spec.split(",")[0], mode, r.iterations, st["bits"], ks["instructions"] if mode == "push" else
                         st["scatter_commands"], p["atomic_requests"] if mode == "push" else "-", reads, writes,
                         round(t["cycles"]), round(base / t["cycles"], 2)])
            recs.append({"graph": spec, "mode": mode, "bits": st["bits"], "atomic_instructions": ks["instructions"],
                         "atomic_requests": p["atomic_requests"], "scatter_commands": st["scatter_commands"],
                         "reads": reads, "writes": writes, "cycles": t["cycles"]})
    print(format_table(["graph", "mode", "levels", "bits set", "atomic insts / commands", "atomic requests",
                        "MFF reads", "MFF writes", "est. cycles", "speedup"], rows, markdown=True,
                       title="(c) Push BFS on the GTX 480: atomicOr vs PC_scatter_set"))
    return recs


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--part", default="eabc", help="parts to run, any of e, a, b, c (default: %(default)s)")
    ap.add_argument("--sim", default="verilator", choices=["verilator", "icarus"])
    ap.add_argument("--graph", default="kron:scale=12,edgefactor=16,seed=1", help="graph of part (a)")
    ap.add_argument("--warps", type=int, default=32, help="warps of part (a)")
    ap.add_argument("--graphs", default="kron:scale=16,edgefactor=16,seed=1;grid:256x256,seed=1")
    ap.add_argument("--no-functional", dest="functional", action="store_false",
                    help="part (b): skip the runs whose requests come from the functional tag unit (slow)")
    ap.add_argument("--json", default="build/benchmarks/mff.json")
    args = ap.parse_args(argv)
    bad = set(args.part) - set("eabc")
    if bad or not args.part:
        ap.error(f"--part takes letters among e, a, b, c, not {args.part!r}")
    from golden.perf import tune_allocator
    tune_allocator()
    t0 = time.time()
    doc = run_info()
    for part, key, fn in (("e", "example", part_e), ("a", "rtl", part_a), ("b", "golden", part_b),
                          ("c", "scatter", part_c)):
        if part in args.part:
            doc[key] = fn(args, t0)
            print()
    write_json(doc, args.json, t0, default=str)


if __name__ == "__main__":
    main()
