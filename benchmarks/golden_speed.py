#!/usr/bin/env python3
"""Speed of the golden GPU model: BFS, SSSP and PageRank on a Kronecker graph in
functional mode, with statistics and the full model (coalescer, memory system,
fast cache model: the default), with statistics but no caches, and with the
exact cache model (the set-associative replay, on a smaller graph), next to
scipy's BFS and SSSP on the same CSR.

Goals (issues "Golden model", "GPU timing model"): functional BFS within 3x of
scipy's ``shortest_path(unweighted=True)``; statistics mode with the full model
>= 10 M traversed edges/s for BFS on kron:scale=18. "Traversed edges" = the
edges the algorithm inspects (``counters["edges"]``: duplicates and
re-relaxations included, as the model's kernels process them). Wall times are
the best of ``--repeat`` runs.

Part ``deep``: BFS on ``grid:2x16384`` (16 385 levels) with the full model, the
cost per level (goal: at most 2 ms).

Part ``inspections`` (no wall times: the counts are deterministic) prints how
many edges the model's kernels inspect relative to the graph's arcs on a
road-like graph (``grid:300x300``) and a Kronecker graph (``kron:scale=14``):
BFS with the visibility window of each GPU's resident warps (docs/golden.md,
"BFS"), and CC's min-label propagation, the figures quoted in docs/golden.md
and the docstrings of golden/algorithms/bfs.py and cc.py.

Usage: python benchmarks/golden_speed.py [--part speed|inspections|deep|all] [--scale 18] [--cache-scale 12]
       [--repeat 3] [--json FILE]
"""
import argparse
import sys
import time

import numpy as np
import scipy.sparse as sp
from scipy.sparse import csgraph

from golden.algorithms import run_algorithm
from golden.algorithms.common import default_source
from golden.gpu import GPUConfig
from golden.graphs import load_graph
from golden.perf import tune_allocator
from golden.report import format_table, run_info, write_json


def best(fn, repeat):
    times, out = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return min(times), out


#: The runs of part ``inspections``: (graph, algorithm, GPU preset, changes to the
#: preset, source vertex or None for the default: the vertex of largest degree).
INSPECTION_RUNS = [
    ("grid:300x300", "bfs", "gtx980", {}, None),
    ("grid:300x300", "bfs", "gtx980", {}, 0),
    ("grid:300x300", "bfs", "tx1", {}, 0),
    ("grid:300x300", "bfs", "tx1", {"threads_per_sm": 256}, 0),
    ("grid:300x300", "bfs", None, {}, 0),            # functional: duplicate-free frontiers
    ("grid:300x300", "cc", "gtx980", {}, None),
    ("kron:scale=14", "bfs", "gtx980", {}, None),
]


def inspections(log):
    """Edges inspected / arcs for :data:`INSPECTION_RUNS`: (table rows, JSON records)."""
    rows, records = [], []
    graphs = {}
    for spec, algo, preset, changes, source in INSPECTION_RUNS:
        if spec not in graphs:
            graphs[spec] = load_graph(spec)
        g = graphs[spec]
        gpu = GPUConfig.preset(preset, **changes) if preset else None
        log(f"inspections: {algo} on {spec}, {preset or 'functional'} {changes or ''}")
        opts = {} if source is None else {"source": source}
        r = run_algorithm(g, algo, gpu=gpu, stats=gpu is not None, **opts)
        edges = r.counters["edges"]
        src = r.extra.get("source", "-")
        gpu_label = "functional" if gpu is None else \
            gpu.name + "".join(f", {k}={v}" for k, v in changes.items())
        window = "-" if gpu is None else gpu.resident_warps
        rows.append([spec, algo, gpu_label, window, src, r.iterations, g.num_edges, edges,
                     f"{edges / g.num_edges:.4g}"])
        records.append({"graph": spec, "algo": algo, "gpu": None if gpu is None else gpu.to_dict(),
                        "resident_warps": None if gpu is None else gpu.resident_warps, "source": src,
                        "iterations": r.iterations, "arcs": g.num_edges, "edges": edges,
                        "edges_per_arc": edges / g.num_edges})
    return rows, records


def speed(args, log):
    """Wall times of BFS/SSSP/PR against scipy: (table rows, JSON records)."""
    rows, records = [], []
    for scale, modes in ((args.scale, ("functional", "stats", "stats, no caches")),
                         (args.cache_scale, ("stats", "stats, exact caches"))):
        spec = f"kron:scale={scale},edgefactor=16,seed=1"
        log(f"graph {spec}")
        g = load_graph(spec)
        gw = g.with_weights(1)
        src = default_source(g)
        A = sp.csr_matrix((np.ones(g.num_edges), g.col, g.row_ptr), shape=(g.num_vertices,) * 2)
        Aw = sp.csr_matrix((gw.weight, g.col, g.row_ptr), shape=(g.num_vertices,) * 2)
        ref = {
            "bfs": best(lambda: csgraph.shortest_path(A, unweighted=True, indices=src), args.repeat)[0],
            "sssp": best(lambda: csgraph.dijkstra(Aw, indices=src), args.repeat)[0],
        }
        for mode in modes:
            for algo in ("bfs", "sssp", "pr"):
                log(f"{algo} {mode}")
                graph = gw if algo == "sssp" else g
                stats, caches = mode != "functional", mode != "stats, no caches"
                model = "exact" if mode == "stats, exact caches" else "fast"
                rep = 1 if model == "exact" else args.repeat
                wall, r = best(lambda: run_algorithm(graph, algo, stats=stats, caches=caches, cache_model=model), rep)
                edges = r.counters.get("edges", 0)
                teps = edges / wall
                sref = ref.get(algo)
                rows.append([spec.split(",")[0], algo, mode, r.iterations, edges, round(wall, 3),
                             round(teps / 1e6, 2), "-" if sref is None else round(sref, 3),
                             "-" if sref is None else round(wall / sref, 2)])
                records.append({"graph": spec, "vertices": g.num_vertices, "arcs": g.num_edges, "algo": algo,
                                "mode": mode, "iterations": r.iterations, "edges": edges, "wall_s": wall,
                                "teps": teps, "scipy_s": sref})
    return rows, records


def deep(log):
    """BFS on grid:2x16384 (16 385 levels) with the full model: ms per level."""
    spec = "grid:2x16384"
    g = load_graph(spec)
    log(f"deep: bfs on {spec}")
    wall, r = best(lambda: run_algorithm(g, "bfs", source=0), 1)
    per = wall / max(r.iterations, 1) * 1e3
    return ([[spec, "bfs", r.iterations, round(wall, 1), round(per, 2), "<= 2"]],
            [{"graph": spec, "algo": "bfs", "levels": r.iterations, "wall_s": wall, "ms_per_level": per}])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--part", choices=["speed", "inspections", "deep", "all"], default="all",
                    help="speed: wall times against scipy; inspections: edges inspected per arc "
                         "(deterministic counts); deep: BFS per level on grid:2x16384; all: all three (default)")
    ap.add_argument("--scale", type=int, default=18)
    ap.add_argument("--cache-scale", type=int, default=12, help="graph scale for the (slow) exact cache model")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", default="build/benchmarks/golden_speed.json")
    args = ap.parse_args(argv)
    tune_allocator()
    t0 = time.time()
    doc = run_info()

    def log(msg):
        print(f"[bench] {msg} ({time.time() - t0:.0f} s)", file=sys.stderr, flush=True)

    if args.part in ("speed", "all"):
        rows, doc["results"] = speed(args, log)
        print(format_table(["graph", "algo", "mode", "iters", "edges traversed", "wall (s)", "M edges/s",
                            "scipy (s)", "x scipy"], rows, markdown=True,
                           title="Golden model speed (scipy: shortest_path(unweighted=True) for BFS, "
                                 "dijkstra for SSSP)"))
    if args.part in ("inspections", "all"):
        rows, doc["inspections"] = inspections(log)
        if args.part == "all":
            print()
        print(format_table(["graph", "algo", "GPU", "resident warps", "source", "iters", "arcs",
                            "edges inspected", "x arcs"], rows, markdown=True,
                           title="Edges inspected per arc (BFS visibility window, CC label propagation)"))
    if args.part in ("deep", "all"):
        rows, doc["deep"] = deep(log)
        print()
        print(format_table(["graph", "algo", "levels", "wall (s)", "ms per level", "goal"], rows, markdown=True,
                           title="Deep graph: BFS with the full model (statistics, caches)"))
    write_json(doc, args.json, t0)


if __name__ == "__main__":
    main()
