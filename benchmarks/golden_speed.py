#!/usr/bin/env python3
"""Speed of the golden GPU model: BFS, SSSP and PageRank on a Kronecker graph in
functional mode, with statistics (coalescer) and with the cache model, next to
scipy's BFS and SSSP on the same CSR.

Goals (issue "Golden model"): functional BFS within 3x of scipy's
``shortest_path(unweighted=True)``; statistics mode (coalescer, no caches)
>= 15 M traversed edges/s. "Traversed edges" = the edges the algorithm inspects
(``counters["edges"]``: duplicates and re-relaxations included, as the model's
kernels process them). Wall times are the best of ``--repeat`` runs.

Usage: python benchmarks/golden_speed.py [--scale 18] [--cache-scale 16] [--repeat 3] [--json FILE]
"""
import argparse
import json
import platform
import sys
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from scipy.sparse import csgraph

from golden.algorithms import run_algorithm
from golden.algorithms.common import default_source
from golden.graphs import load_graph
from golden.perf import tune_allocator
from golden.report import format_table


def best(fn, repeat):
    times, out = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return min(times), out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scale", type=int, default=18)
    ap.add_argument("--cache-scale", type=int, default=16, help="graph scale for the (slower) cache model")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", default="build/benchmarks/golden_speed.json")
    args = ap.parse_args(argv)
    tune_allocator()
    t0 = time.time()
    rows, records = [], []

    def log(msg):
        print(f"[bench] {msg} ({time.time() - t0:.0f} s)", file=sys.stderr, flush=True)

    for scale, modes in ((args.scale, ("functional", "stats")), (args.cache_scale, ("stats+caches",))):
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
                stats, caches = mode != "functional", mode == "stats+caches"
                rep = 1 if caches else args.repeat
                wall, r = best(lambda: run_algorithm(graph, algo, stats=stats, caches=caches), rep)
                edges = r.counters.get("edges", 0)
                teps = edges / wall
                sref = ref.get(algo)
                rows.append([spec.split(",")[0], algo, mode, r.iterations, edges, round(wall, 3),
                             round(teps / 1e6, 2), "-" if sref is None else round(sref, 3),
                             "-" if sref is None else round(wall / sref, 2)])
                records.append({"graph": spec, "vertices": g.num_vertices, "arcs": g.num_edges, "algo": algo,
                                "mode": mode, "iterations": r.iterations, "edges": edges, "wall_s": wall,
                                "teps": teps, "scipy_s": sref})
    print(format_table(["graph", "algo", "mode", "iters", "edges traversed", "wall (s)", "M edges/s",
                        "scipy (s)", "x scipy"], rows, markdown=True,
                       title="Golden model speed (scipy: shortest_path(unweighted=True) for BFS, dijkstra for SSSP)"))
    out = Path(args.json)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"machine": platform.machine(), "python": platform.python_version(),
                               "date": time.strftime("%Y-%m-%d"), "results": records}, indent=2))
    print(f"\n(JSON: {out}; {time.time() - t0:.0f} s)")


if __name__ == "__main__":
    main()
