#!/usr/bin/env python3
"""Wall time of every mode next to the baseline's (issue "Speed"): for each graph
and algorithm, the baseline and every other mode (the units' and the reference
variants) in statistics mode with the full GPU model, each in its own process
with a time limit and the allocator settings of ``graphunits run``
(golden.perf.tune_allocator), and the ratio to the baseline's time.

Goal (docs/benchmarks.md, "Mode speed"): every unit mode within 3x of the
baseline's time on the same graph and algorithm, on kron:scale=16,
grid:256x256 and grid:2x16384. "edges vs baseline" is the modelled work (the
edges the mode's kernels inspect over the baseline's): a mode that inspects
more edges (pull sweeps every vertex) is slower for that reason alone.

A unit mode that runs its paper's baseline for its speedup statistics
(``compare_baseline``: GraphPEG runs Gunrock's ``lb``, the MFF ``pull`` or
``push``) is timed a second time, in a fresh process, with
``compare_baseline=False``: "own s" is the mode's own time, what each further
point of a sweep on the same graph costs (the reference is kept in the process,
``golden.algorithms.common.reference_run``); ``--no-own`` skips it.

Usage: python benchmarks/mode_speed.py [--graphs G1;G2] [--algos bfs,sssp,pr] [--modes M1,M2]
       [--timeout 600] [--no-own] [--json FILE]
"""
import argparse
import json
import multiprocessing as mp
import platform
import sys
import time
from pathlib import Path

from golden.report import format_table

GRAPHS = ("kron:scale=16", "grid:256x256", "grid:2x16384")
ALGOS = ("bfs", "sssp", "pr")


def _run(q, graph: str, algo: str, mode: str, extra: dict) -> None:
    try:
        from golden.algorithms import run_algorithm
        from golden.algorithms.common import default_source
        from golden.graphs import load_graph
        from golden.perf import tune_allocator
        tune_allocator()                        # as graphunits run does
        g = load_graph(graph, weighted=algo == "sssp")
        opts = {"source": default_source(g)} if algo in ("bfs", "sssp", "bc") else {}
        t0 = time.perf_counter()
        r = run_algorithm(g, algo, mode, **opts, **extra)
        wall = time.perf_counter() - t0
        # did the run time its paper's baseline for its speedup (compare_baseline)?
        ref = any(isinstance(v, dict) and "baseline_cycles" in v for v in r.extra.values())
        q.put({"wall_s": wall, "iterations": r.iterations, "edges": int(r.counters.get("edges", 0)),
               "reference": ref})
    except Exception as e:                      # reported in the table, not raised
        q.put({"error": f"{type(e).__name__}: {e}"})


def timed(graph: str, algo: str, mode: str, timeout: float, **extra) -> dict:
    """One run in a child process (``extra``: options of the run):
    ``{"wall_s", "iterations", "edges", "reference"}``, ``{"timeout": s}`` or ``{"error"}``."""
    ctx = mp.get_context("fork")
    q = ctx.Queue()
    p = ctx.Process(target=_run, args=(q, graph, algo, mode, extra))
    p.start()
    p.join(timeout)
    if p.is_alive():
        p.kill()
        p.join()
        return {"timeout": timeout}
    try:
        return q.get(timeout=5)
    except Exception:
        return {"error": f"the run exited with status {p.exitcode} and no result"}


def main(argv=None) -> int:
    from golden.algorithms import ALGORITHMS, modes_for
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--graphs", default=";".join(GRAPHS), help="';'-separated graph specs")
    ap.add_argument("--algos", default=",".join(ALGOS))
    ap.add_argument("--modes", help="only these modes (the baseline always runs)")
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds per run (default 600)")
    ap.add_argument("--no-own", action="store_true",
                    help="do not time the modes with a reference run again without it (compare_baseline=False)")
    ap.add_argument("--json", help="write the rows as JSON")
    args = ap.parse_args(argv)
    graphs = [g.strip() for g in args.graphs.split(";") if g.strip()]
    algos = [a.strip() for a in args.algos.split(",") if a.strip()]
    only = {m.strip() for m in args.modes.split(",")} if args.modes else None
    bad = [a for a in algos if a not in ALGORITHMS]
    if bad:
        print(f"error: unknown algorithm {bad[0]!r}; algorithms: {', '.join(ALGORITHMS)}", file=sys.stderr)
        return 2
    from golden.graphs import GraphError, parse_spec
    for g in graphs:
        try:
            if parse_spec(g) is None and not Path(g).is_file():
                raise GraphError(f"graph {g!r}: no such file, and not a generator spec")
        except GraphError as e:
            print(f"error: {e}", file=sys.stderr)
            return 2
    if args.timeout <= 0:
        print("error: --timeout must be positive", file=sys.stderr)
        return 2
    rows, out = [], []
    for g in graphs:
        for a in algos:
            modes = ["baseline"] + [m for m in modes_for(a) if m != "baseline" and (only is None or m in only)]
            base = base_edges = None
            for m in modes:
                print(f"[mode_speed] {g} {a} {m}", file=sys.stderr, flush=True)
                r = timed(g, a, m, args.timeout)
                if m == "baseline":
                    base, base_edges = r.get("wall_s"), r.get("edges")
                rel = r["wall_s"] / base if "wall_s" in r and base else None
                # the modelled work: edges the mode's kernels inspect, over the baseline's
                work = r["edges"] / base_edges if r.get("edges") and base_edges else None
                own = None
                if r.get("reference") and not args.no_own:      # its own time, without the reference run
                    print(f"[mode_speed] {g} {a} {m} compare_baseline=False", file=sys.stderr, flush=True)
                    own = timed(g, a, m, args.timeout, compare_baseline=False)
                own_rel = own["wall_s"] / base if own and "wall_s" in own and base else None
                out.append({"graph": g, "algo": a, "mode": m, **r, "vs_baseline": rel, "edges_vs_baseline": work,
                            "own": own, "own_vs_baseline": own_rel})
                t = _cell(r)
                if args.json:                   # after every run: a long benchmark keeps what it measured
                    _write(args.json, out)
                rows.append([g, a, m, t, "-" if rel is None else f"{rel:.2f}", "-" if work is None else f"{work:.2f}",
                             "" if rel is None or m == "baseline" else ("ok" if rel <= 3 else "> 3x"),
                             "-" if own is None else _cell(own), "-" if own_rel is None else f"{own_rel:.2f}",
                             (r.get("error", "") or (own or {}).get("error", ""))[:80]])
    print(format_table(["graph", "algo", "mode", "wall s", "vs baseline", "edges vs baseline", "goal (<= 3x)",
                        "own s", "own vs baseline", "error"], rows))
    if args.json:
        _write(args.json, out)
    return 0


def _cell(r: dict) -> str:
    return f"{r['wall_s']:.2f}" if "wall_s" in r else f"> {r['timeout']:.0f}" if "timeout" in r else "error"


def _write(path: str, rows: list) -> None:
    Path(path).write_text(json.dumps({"machine": platform.platform(), "cpus": mp.cpu_count(),
                                      "date": time.strftime("%Y-%m-%d"), "rows": rows}, indent=1) + "\n")


if __name__ == "__main__":
    sys.exit(main())
