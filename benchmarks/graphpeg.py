#!/usr/bin/env python3
"""GraphPEG benchmarks (issue 7):

(a) ALWT sensitivity (the paper's Tables 4-5) with the TLM and the golden GPU model
    (Kepler, 15 SMs): time with 8, 12, 16, 20 and 24 ALWT entries relative to an
    unlimited ALWT (65536 entries), for BFS, SSSP and k-core on a road-like grid and
    a kron graph. "total" = the whole run on the GPU model (kernel launches
    included), "engines" = the engines' cycles alone.
(b) EF balancing on kron: the same runs with and without EF exchanges: load
    imbalance (busiest SM / mean), exchanges, moved edges, engine cycles, gain.
(c) RTL: items per cycle of one SM's engine (preset ``default``: 24 entries, 2 KB
    buffer, 4 edges per cycle) on all vertices of a kron graph, with and without
    weights, 1- and 100-cycle memory, against the memory-bound ideal (the port takes
    one request per cycle: items / requests, and at most ``width`` per cycle) and
    that bound with the latency (Little's law: the 128-edge buffer is reserved at
    issue, and each fetch engine has 15 block reads in flight); the TLM's cycles for
    the same kernel beside.
(d) Estimated speedup over GraphPEG's reference, the baseline with Gunrock's
    load-balanced advance (mode ``lb``; ``compare_baseline=True``, Kepler model)
    for BFS, SSSP and BC on a road-like grid and kron graphs, with the paper's
    engine (2 KB buffer; its requests through the SM's L1/L2/DRAM at the served
    latency), an 8 KB edge buffer, and fixed 200-cycle engine requests; beside
    it what bounds the time: kernel launches,
    the engines' cycles and their Little's-law bound (items x latency / (SMs x
    buffer edges): the buffer's room is reserved at issue, so an SM has at most a
    buffer of edges in flight per memory latency), the load imbalance, and the
    speedup ceiling: lb's cycles over the GraphPEG run's launch costs plus the
    Little bound (perfect balance, no index latency).

Usage: python benchmarks/graphpeg.py [--part a|b|c|d|abcd] [--sim verilator] [--json FILE]
"""
import argparse
import json
import platform
import sys
import time
from pathlib import Path

from golden.report import format_table

ALWT = (8, 12, 16, 20, 24)
UNLIMITED = 65536


def log(t0, msg):
    print(f"[bench] {msg} ({time.time() - t0:.0f} s)", file=sys.stderr, flush=True)


def run(g, algo, cfg, gpu="kepler"):
    from golden.algorithms import run_algorithm
    return run_algorithm(g, algo, "graphpeg", gpu=gpu, graphpeg=cfg, compare_baseline=False)


def part_a(args, t0):
    from golden.graphpeg import GraphPEGConfig
    from golden.graphs import load_graph
    from sim.reference import compare, reference
    rows, recs = [], []
    for spec in args.graphs.split(";"):
        for algo in ("bfs", "sssp", "kcore"):
            g = load_graph(spec, weighted=algo == "sssp")
            res = {}
            for n in ALWT + (UNLIMITED,):
                log(t0, f"(a) {algo} on {spec}, ALWT {n}")
                res[n] = run(g, algo, GraphPEGConfig(alwt_entries=n))
            r0 = res[UNLIMITED]
            why = compare(algo, r0.values, reference(g, algo, source=r0.extra.get("source")))
            assert why is None, why
            tot0 = r0.extra["time"]["total_cycles"]
            eng0 = r0.extra["graphpeg"]["engine_cycles"]
            tot = [res[n].extra["time"]["total_cycles"] / tot0 for n in ALWT]
            eng = [res[n].extra["graphpeg"]["engine_cycles"] / eng0 for n in ALWT]
            deg = g.num_edges / max(g.num_vertices, 1)
            rows.append([spec, round(deg, 1), algo, "total"] + [round(x, 2) for x in tot])
            rows.append(["", "", "", "engines"] + [round(x, 2) for x in eng])
            recs.append({"graph": spec, "algo": algo, "avg_degree": deg, "total_rel": dict(zip(ALWT, tot)),
                         "engine_rel": dict(zip(ALWT, eng)), "unlimited_total_cycles": tot0,
                         "unlimited_engine_cycles": eng0})
    print(format_table(["graph", "avg deg", "algo", "time"] + [f"{n} entries" for n in ALWT], rows, markdown=True,
                       title="(a) time with N ALWT entries / time with an unlimited ALWT (Kepler model, 15 SMs)"))
    return recs


def part_b(args, t0):
    from golden.graphpeg import GraphPEGConfig
    from golden.graphs import load_graph
    rows, recs = [], []
    for spec in args.kron.split(";"):
        for algo in ("bfs", "sssp", "bc"):
            g = load_graph(spec, weighted=algo == "sssp")
            res = {}
            for ef in (False, True):
                log(t0, f"(b) {algo} on {spec}, EF {'on' if ef else 'off'}")
                res[ef] = run(g, algo, GraphPEGConfig(ef_enabled=ef))
            for ef in (False, True):
                st = res[ef].extra["graphpeg"]
                tot = res[ef].extra["time"]["total_cycles"]
                rows.append([spec, algo, "on" if ef else "off", round(st["load_imbalance"], 2), st["exchanges"],
                             st["moved_edges"], st["engine_cycles"], round(tot),
                             round(res[False].extra["time"]["total_cycles"] / tot, 2)])
                recs.append({"graph": spec, "algo": algo, "ef": ef, "load_imbalance": st["load_imbalance"],
                             "load_imbalance_no_ef": st["load_imbalance_no_ef"], "exchanges": st["exchanges"],
                             "moved": st["moved_edges"], "engine_cycles": st["engine_cycles"], "total_cycles": tot})
    print(format_table(["graph", "algo", "EF", "imbalance", "exchanges", "moved edges", "engine cycles",
                        "total cycles", "gain"], rows, markdown=True,
                       title="(b) EF balancing (Kepler model, 15 SMs; imbalance = busiest SM's items / mean)"))
    return recs


def part_c(args, t0):
    from golden.graphpeg import GraphPEGConfig, GraphPEGModel
    from sim.build import build_verilog
    from sim.graphpeg import Run, make_workload
    from sim.runner import run_cocotb
    cfg = GraphPEGConfig.preset("default")
    rows, recs = [], []
    runs = []
    for weights in (False, True):
        for lat in (1, 100):
            runs.append({"name": f"w{int(weights)}-lat{lat}", "workload": {
                "seed": 1, "graph": args.rtl_graph, "offset": 0,
                "kernels": [{"lists": "all", "ef": False, "weights": weights}]},
                "timing": {"latency": lat, "max_outstanding": 1024}, "weights": weights, "latency": lat})
    log(t0, f"(c) RTL, preset default, {args.sim}")
    res = run_cocotb(build_verilog("graphpeg", cfg), "sim.graphpeg.tb",
                     {"config": cfg.to_dict(), "runs": [{k: v for k, v in r.items() if k not in ("weights", "latency")}
                                                       for r in runs]}, sim=args.sim)
    for spec, r in zip(runs, res["runs"]):
        assert not r["mismatches"], r["mismatches"]
        req = r["tlm_requests"]
        nreq = sum(req.values())
        items = r["items"]
        cyc = r["kernel_cycles"][-1]
        ideal = min(cfg.width, items / nreq)
        # Little's law at latency L: buffer room is reserved at issue, and each fetch
        # engine has fetch_inflight - 1 block reads beyond its merge window.
        little = min(ideal, cfg.edge_buffer_edges / spec["latency"],
                     (cfg.fetch_inflight - 1) * cfg.words_per_block / spec["latency"])
        # the TLM on the same kernel
        space, steps, _ = make_workload(cfg, spec["workload"])
        m = GraphPEGModel(cfg, space)
        for st in steps:
            if isinstance(st, Run):
                tres = m.run(st.kernel, latency=spec["latency"])
            elif hasattr(st, "spill_base"):
                m.setup(st.spill_base, st.spill_stride)
            else:
                m.push(st.sm, st.vertices)
        rows.append(["yes" if spec["weights"] else "no", spec["latency"], items, cyc, round(items / cyc, 3), nreq,
                     round(ideal, 3), round(little, 3), round(items / cyc / little, 2), tres.cycles,
                     round(tres.cycles / cyc, 2)])
        recs.append({"weights": spec["weights"], "latency": spec["latency"], "items": items, "cycles": cyc,
                     "items_per_cycle": items / cyc, "requests": req, "ideal": ideal, "little_bound": little,
                     "tlm_cycles": tres.cycles,
                     "alwt_full": r["alwt_full"], "buffer_full": r["buffer_full"]})
    print(format_table(["weights", "latency", "edges", "RTL cycles", "edges/cycle", "requests", "memory-bound ideal",
                        "with latency (Little)", "RTL / bound", "TLM cycles", "TLM / RTL"], rows, markdown=True,
                       title=f"(c) RTL, one SM (preset default; {args.sim}; every vertex of {args.rtl_graph})"))
    return recs


D_VARIANTS = (("2 KB (paper)", {}, None), ("8 KB buffer", {"edge_buffer_bytes": 8192}, None),
              ("latency 200", {}, 200))


def part_d(args, t0):
    from golden.algorithms import run_algorithm
    from golden.graphpeg import GraphPEGConfig
    from golden.graphs import load_graph
    from golden.gpu import GPUConfig
    from sim.reference import compare, reference
    gpu = GPUConfig.preset("kepler")
    per_launch = gpu.launch_cycles + gpu.mem_latency
    rows, recs = [], []
    for spec in args.speedup_graphs.split(";"):
        for algo in ("bfs", "sssp", "bc"):
            g = load_graph(spec, weighted=algo == "sssp")
            # GraphPEG's reference: the baseline with Gunrock's load-balanced advance (mode lb)
            log(t0, f"(d) {algo} on {spec}, lb")
            base = run_algorithm(g, algo, "lb", gpu="kepler")
            bt = base.gpu["total"]
            for name, changes, lat in D_VARIANTS:
                log(t0, f"(d) {algo} on {spec}, {name}")
                cfg = GraphPEGConfig(**changes)
                r = run_algorithm(g, algo, "graphpeg", gpu="kepler", graphpeg=cfg, compare_baseline=True,
                                  latency=lat)
                why = compare(algo, r.values, reference(g, algo, source=r.extra.get("source")))
                assert why is None, why
                st = r.extra["graphpeg"]
                tot = r.gpu["total"]
                # the reference run inside compare_baseline is the one run here
                assert abs(st["baseline_cycles"] - bt["cycles"]) <= 1e-6 * bt["cycles"], (st, bt["cycles"])
                L = lat or gpu.mem_latency
                little = st["items"] * L / (st["sms"] * cfg.edge_buffer_edges)
                body = tot["cycles"] - tot["launches"] * per_launch
                ceiling = bt["cycles"] / (tot["launches"] * per_launch + little)
                rows.append([spec, algo, name, st["items"], round(tot["cycles"]), tot["launches"],
                             st["engine_cycles"], round(st["engine_cycles"] / body, 2) if body > 0 else "-",
                             round(little), round(st["load_imbalance"], 2), round(bt["cycles"]), bt["launches"],
                             round(st["speedup"], 2), round(ceiling, 2)])
                recs.append({"graph": spec, "algo": algo, "variant": name, "items": st["items"],
                             "total_cycles": tot["cycles"], "launches": tot["launches"],
                             "engine_cycles": st["engine_cycles"], "little_bound": little,
                             "load_imbalance": st["load_imbalance"], "baseline_cycles": bt["cycles"],
                             "baseline_launches": bt["launches"], "speedup": st["speedup"], "ceiling": ceiling,
                             "memory_request_change": st["memory_request_change"]})
    print(format_table(["graph", "algo", "variant", "items", "GraphPEG cycles", "launches", "engine cycles",
                        "engines / body", "Little bound", "imbalance", "lb cycles", "lb launches",
                        "speedup", "ceiling"], rows,
                       markdown=True,
                       title=f"(d) speedup over the load-balanced baseline lb (Kepler model, 15 SMs; body = cycles - "
                             f"launches x {per_launch}; Little bound at mem_latency)"))
    return recs


def main(argv=None) -> int:
    from golden.perf import tune_allocator
    tune_allocator()
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--part", default="abcd")
    ap.add_argument("--graphs", default="grid:128x128;kron:scale=12", help="(a): ';'-separated graph specs")
    ap.add_argument("--kron", default="kron:scale=12;kron:scale=14", help="(b): ';'-separated graph specs")
    ap.add_argument("--rtl-graph", default="kron:scale=9,edgefactor=16,seed=1", help="(c): graph spec")
    ap.add_argument("--speedup-graphs", default="grid:128x128;kron:scale=12;kron:scale=14;kron:scale=16",
                    help="(d): ';'-separated graph specs")
    ap.add_argument("--sim", default="verilator", choices=["verilator", "icarus"])
    ap.add_argument("--json", help="write the results as JSON")
    args = ap.parse_args(argv)
    t0 = time.time()
    print(f"machine: {platform.machine()}, {platform.system()} {platform.release()}, Python "
          f"{platform.python_version()}")
    out = {}
    for part, fn in (("a", part_a), ("b", part_b), ("c", part_c), ("d", part_d)):
        if part in args.part:
            out[part] = fn(args, t0)
            print()
    log(t0, "done")
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=2, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
