"""The ``graphunits`` command line.

Every command has ``--help``. Errors in the user's input (unknown unit or preset,
bad parameter, missing file) end with one line naming the problem and exit
status 2, never a traceback.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

__all__ = ["main", "build_parser"]


class UsageError(Exception):
    """A problem with the command line or its inputs."""


def _config_from_args(spec, args):
    """Configuration of ``spec`` from ``--preset``, ``--config`` and ``--set``."""
    cls = spec.config_class
    overrides = cls.parse_overrides(args.set or [])
    if getattr(args, "config", None):
        path = Path(args.config)
        if not path.exists():
            raise UsageError(f"configuration file {path} does not exist")
        try:
            cfg = cls.from_json(path.read_text())
        except json.JSONDecodeError as e:
            raise UsageError(f"{path}: not valid JSON (line {e.lineno}: {e.msg})") from None
        return cfg.replace(**overrides) if overrides else cfg
    return cls.preset(args.preset, **overrides)


# ---------------------------------------------------------------------- commands
def cmd_verilog(args) -> int:
    from hw.registry import unit
    from .build import write_verilog
    spec = unit(args.unit)
    cfg = _config_from_args(spec, args)
    out = Path(args.output)
    name = args.name or args.unit
    b = write_verilog(args.unit, cfg, out, name)
    print(f"wrote {b.verilog} and {b.json}")
    if args.lint:
        from .lint import lint
        ok, msgs = lint(b.verilog, wall=args.lint == "wall")
        print(f"verilator --lint-only: {'clean' if ok else 'FAILED'}")
        if msgs:
            print(msgs)
        return 0 if ok else 1
    return 0


def cmd_units(args) -> int:
    from golden.report import format_table
    from hw.registry import UNITS
    rows = [[name, ", ".join(s.config_class.preset_names()), s.doc] for name, s in sorted(UNITS.items())]
    print(format_table(["unit", "presets", "what"], rows))
    return 0


def cmd_config(args) -> int:
    from hw.registry import unit
    spec = unit(args.unit)
    cfg = _config_from_args(spec, args)
    print(cfg.to_json(), end="")
    return 0


def _load_graph_arg(args, weighted: bool):
    from golden.graphs import load_graph
    return load_graph(args.graph, undirected=args.undirected or None, vertices=args.vertices,
                      weighted=weighted or args.weighted, weight_seed=args.weight_seed)


def _algo_options(args) -> dict:
    opts = {} if args.source is None else {"source": args.source}
    if getattr(args, "scu_preset", None):
        opts["scu"] = args.scu_preset
    for name in ("damping", "tol", "max_iter", "delta", "variant"):
        v = getattr(args, name, None)
        if v is not None:
            opts[name] = v
    return opts


def cmd_run(args) -> int:
    import numpy as np
    from golden.algorithms import ALGORITHMS, AlgorithmError, run_algorithm
    from golden.gpu import GPUConfig
    from golden.report import format_table
    from golden.perf import tune_allocator
    from .progress import IterationProgress
    tune_allocator()
    cls = ALGORITHMS.get(args.algo)
    if cls is None:
        raise UsageError(f"unknown algorithm {args.algo!r}; algorithms: {', '.join(ALGORITHMS)}")
    graph = _load_graph_arg(args, cls.needs_weights)
    gpu = GPUConfig.preset(args.gpu)
    prog = IterationProgress(f"{args.algo} on {graph.name}")
    try:
        r = run_algorithm(graph, args.algo, args.mode, gpu=gpu, stats=not args.functional, caches=args.caches,
                          progress=prog, **_algo_options(args))
    except AlgorithmError as e:
        raise UsageError(str(e)) from None
    finally:
        prog.close()
    edges = r.counters.get("edges", 0)
    rows = [["graph", graph.name], ["vertices", graph.num_vertices], ["edges (stored arcs)", graph.num_edges],
            ["algorithm / mode", f"{args.algo} / {args.mode}"]]
    if "source" in r.extra:
        rows.append(["source", r.extra["source"]])
    rows += [["iterations", r.iterations],
            ["edges traversed", edges], ["wall time (s)", round(r.wall_s, 3)],
            ["traversed edges/s (model speed)", f"{edges / r.wall_s:.3g}" if r.wall_s > 0 else "-"]]
    if r.gpu is not None:
        t = r.gpu["total"]
        rows += [["GPU", gpu.name], ["warp instructions", t["warp_instructions"]],
                 ["memory instructions", t["mem_instructions"]], ["sectors", t["sectors"]],
                 ["accesses per warp request", round(t["accesses_per_request"], 3)],
                 ["estimated GPU time (us)", round(t["time_us"], 1)]]
        if "scu" in r.extra:
            sc, tm = r.extra["scu"], r.extra["time"]
            rows += [["SCU operations", ", ".join(f"{k} {v}" for k, v in sorted(sc["ops"].items()))],
                     ["SCU memory requests", sc["requests"]],
                     ["GPU / SCU / total cycles (est.)", f"{tm['gpu_cycles']:.0f} / {tm['scu_cycles']:.0f} / "
                                                          f"{tm['total_cycles']:.0f}"]]
        em = r.extra.get("emogi")
        if em and em.get("stats"):
            if "requests" in em:
                rows += [["PCIe requests by size", ", ".join(f"{k} B: {v}" for k, v in em["requests"].items())]]
            else:
                rows += [["UVM page faults / evictions", f"{em['page_faults']} / {em['evictions']}"]]
            rows += [["host bytes moved (I/O amplification)", f"{em['bytes_moved']} ({em['io_amplification']:.2f})"],
                     ["PCIe GB/s (link busy) / average", f"{em['bandwidth_gbps']:.2f} / {em['average_gbps']:.2f}"],
                     ["estimated total time (ms)", round(1e3 * em["time"]["total_s"], 3)]]
        if r.extra.get("mff", {}).get("commands"):
            mf = r.extra["mff"]
            rows += [["MFF commands / values / block reads", f"{mf['commands']} / {mf['values']} / {mf['requests']}"]]
        if r.gpu["caches"]:
            rows += [["L1 hit rate", round(t["l1"]["hit_rate"], 3)], ["L2 hit rate", round(t["l2"]["hit_rate"], 3)],
                     ["DRAM sectors", t["dram_sectors"]]]
    print(format_table(["", "value"], rows))
    if r.gpu is not None and args.kernels:
        print()
        print(_kernel_table(r.gpu))
    if args.save:
        np.savez_compressed(args.save, **{r.key: r.values})
        print(f"saved {r.key} to {args.save}")
    if args.json:
        import json
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        doc = {**r.summary(), "graph": graph.summary()}
        Path(args.json).write_text(json.dumps(doc, indent=2, default=_json_default))
        print(f"wrote {args.json}")
    return 0


def _json_default(o):
    import numpy as np
    if isinstance(o, np.generic):
        return o.item()
    if isinstance(o, np.ndarray):
        return o.tolist()
    raise TypeError(f"cannot write {type(o).__name__} as JSON")


def _kernel_table(report: dict) -> str:
    from golden.report import format_table
    rows = []
    for d in report["kernels"] + [dict(report["total"], name="total")]:
        rows.append([d["name"], d["launches"], d["warp_instructions"], d["mem_instructions"], d["sectors"],
                     round(d["accesses_per_request"], 2), d["atomics"]["lanes"], round(d["cycles"])])
    return format_table(["kernel", "launches", "warp insts", "mem insts", "sectors", "sectors/inst",
                         "atomic lanes", "est. cycles"], rows)


def cmd_cosim(args) -> int:
    from golden.report import format_table
    from .cosim import cosim_units, result_json, run_cosim
    units = cosim_units()
    if args.unit not in units:
        raise UsageError(f"RTL in the loop is available for the units {', '.join(units)}, not {args.unit!r}")
    cu = units[args.unit]
    if args.algo not in cu.algos:
        raise UsageError(f"cosim with the {args.unit} runs {', '.join(cu.algos)}, not {args.algo!r}")
    if args.mode is not None and args.mode not in cu.modes:
        raise UsageError(f"the {args.unit}'s modes are {', '.join(cu.modes)}, not {args.mode!r}")
    args.preset = args.preset or cu.default_preset
    r = run_cosim(args.graph, args.algo, unit=args.unit, mode=args.mode, preset=args.preset, sim=args.sim,
                  source=args.source, undirected=args.undirected or None, vertices=args.vertices,
                  weight_seed=args.weight_seed, gpu=args.gpu)
    rows = [["graph", r.graph["name"]], ["vertices / arcs", f"{r.graph['vertices']} / {r.graph['edges']}"],
            ["algorithm / mode", f"{r.algo} / {r.mode}"]]
    if r.source is not None:
        rows.append(["source", r.source])
    rows.append([f"{args.unit} preset / simulator", f"{args.preset} / {args.sim}"])
    rows += cu.rows(r.rtl, r.tlm)
    rows.append(["wall time (s)", round(r.wall_s, 1)])
    print(format_table(["", "value"], rows))
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(result_json(r))
    if r.ok:
        print(f"{r.algo} with the {args.unit.upper()} RTL in the loop matches reference (and the TLM run)")
        return 0
    for p in r.problems:
        print(f"MISMATCH: {p}")
    return 1


def cmd_demo(args) -> int:
    from .demo import run_demo
    return run_demo(sims=args.sim, quick=args.quick)


def cmd_doctor(args) -> int:
    from .toolchain import liberty_path, versions
    for k, v in versions().items():
        print(f"{k:14s} {v if v else 'MISSING'}")
    lib = liberty_path()
    print(f"{'liberty':14s} {lib if lib.exists() else 'MISSING (make setup)'}")
    return 0


# ---------------------------------------------------------------------- parser
def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="graphunits",
        description="Generate, verify and measure GPU graph-processing units (SCU, IRU, GraphPEG, MFF, EMOGI).")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")

    def graph_args(sp):
        sp.add_argument("--graph", required=True, metavar="SPEC",
                        help="kron:scale=14,edgefactor=16,seed=1 | urand:scale=14 | grid:256x256 | a file "
                             "(.mtx .el .wel .gr .txt .npz)")
        sp.add_argument("--undirected", action="store_true", help="symmetrize a file's edges")
        sp.add_argument("--vertices", type=int, help="vertex count of an edge-list file")
        sp.add_argument("--weighted", action="store_true", help="give an unweighted graph seeded random weights")
        sp.add_argument("--weight-seed", type=int, default=1, dest="weight_seed",
                        help="seed of those weights (default: %(default)s)")

    def config_args(sp):
        sp.add_argument("--unit", required=True, help="unit name (see `graphunits units`)")
        sp.add_argument("--preset", default="default", help="configuration preset (default: %(default)s)")
        sp.add_argument("--config", metavar="FILE", help="configuration JSON (as written next to the Verilog)")
        sp.add_argument("--set", action="append", metavar="KEY=VALUE",
                        help="change one parameter of the preset (repeatable)")

    sp = sub.add_parser("verilog", help="write a unit's Verilog and its configuration JSON",
                        description="Write NAME.v and NAME.json for a unit and configuration.")
    config_args(sp)
    sp.add_argument("-o", "--output", default="build/rtl", help="output folder (default: %(default)s)")
    sp.add_argument("--name", help="Verilog module name (default: the unit name)")
    sp.add_argument("--lint", nargs="?", const="default", choices=["default", "wall"],
                    help="run verilator --lint-only on the result (wall: with -Wall)")
    sp.set_defaults(func=cmd_verilog)

    sp = sub.add_parser("config", help="print a unit configuration as JSON",
                        description="Print the configuration a preset (with --set changes) gives.")
    config_args(sp)
    sp.set_defaults(func=cmd_config)

    sp = sub.add_parser("units", help="list the units and their presets",
                        description="List the units that can be generated, with their presets.")
    sp.set_defaults(func=cmd_units)

    sp = sub.add_parser("demo", help="the built-in example: every available unit, RTL against the golden model",
                        description="Run the built-in example and print its tables.")
    sp.add_argument("--sim", action="append", choices=["icarus", "verilator"],
                    help="simulator(s) to use (default: both)")
    sp.add_argument("--quick", action="store_true", help="smaller runs")
    sp.set_defaults(func=cmd_demo)

    sp = sub.add_parser("run", help="run a graph algorithm on the golden GPU model",
                        description="Run an algorithm on the golden model of a GPU (baseline or with a unit) "
                                    "and print its statistics.")
    graph_args(sp)
    sp.add_argument("--algo", required=True, help="bfs, sssp, pr, cc or bc")
    sp.add_argument("--mode", default="baseline",
                    help="baseline; scu, scu-enhanced (bfs, sssp, pr); pull, mff (pr, bfs, sssp, cc); "
                         "emogi-naive, emogi-merged, emogi-aligned, uvm (bfs, sssp, cc, pr) (default: %(default)s)")
    sp.add_argument("--scu-preset", dest="scu_preset",
                    help="SCU configuration preset for the scu modes (default: tx1 on --gpu tx1, else gtx980)")
    sp.add_argument("--gpu", default="gtx980", help="GPU preset: gtx980, tx1, gtx480, kepler, v100 (default: %(default)s)")
    sp.add_argument("--source", type=int, help="source vertex (bfs, sssp, bc; default: the vertex of largest degree)")
    sp.add_argument("--damping", type=float, help="PageRank damping (default 0.85)")
    sp.add_argument("--tol", type=float, help="PageRank L1 tolerance (default 1e-6)")
    sp.add_argument("--max-iter", type=int, dest="max_iter", help="PageRank iteration limit (default 100)")
    sp.add_argument("--variant", choices=["standard", "nodangle"], help="PageRank definition")
    sp.add_argument("--delta", type=float, help="SSSP near-far threshold step")
    sp.add_argument("--functional", action="store_true", help="results only, no GPU statistics (fastest)")
    sp.add_argument("--caches", action="store_true", help="also run the L1/L2 cache model (slower)")
    sp.add_argument("--kernels", action="store_true", help="print the per-kernel table")
    sp.add_argument("--save", metavar="OUT.npz", help="save the per-vertex result (key depth/dist/rank/label/bc)")
    sp.add_argument("--json", metavar="FILE", help="write every statistic as JSON")
    sp.set_defaults(func=cmd_run)

    sp = sub.add_parser("cosim", help="run an algorithm with a unit's RTL in the loop",
                        description="Run a golden algorithm in which every operation of the unit is executed by "
                                    "its RTL under cocotb; compare with the TLM run and an independent reference "
                                    "(scipy/networkx). Exit status 1 on any difference.")
    graph_args(sp)
    sp.add_argument("--unit", default="scu", help="unit: scu or mff (default: %(default)s)")
    sp.add_argument("--algo", required=True,
                    help="algorithm (scu: bfs, sssp, pr; mff: pr, bfs, sssp, cc)")
    sp.add_argument("--mode", help="unit mode (scu: scu or scu-enhanced; mff: mff; default: the first)")
    sp.add_argument("--preset", help="unit configuration preset (default: tx1 for the scu, default for the mff)")
    sp.add_argument("--sim", default="verilator", choices=["verilator", "icarus"], help="simulator (default: %(default)s)")
    sp.add_argument("--source", type=int, help="source vertex (default: the vertex of largest degree)")
    sp.add_argument("--gpu", default="gtx980", help="GPU preset for the time estimates (default: %(default)s)")
    sp.add_argument("--json", metavar="FILE", help="write the comparison as JSON")
    sp.set_defaults(func=cmd_cosim)

    sp = sub.add_parser("doctor", help="show the tools found and their versions",
                        description="Show the external tools graphunits uses and their versions.")
    sp.set_defaults(func=cmd_doctor)

    from synth.cli import add_area_parser      # graphunits area (issue 5)
    add_area_parser(sub)
    from .report.cli import add_report_parsers  # graphunits report, sweep (issue 10)
    add_report_parsers(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    from golden.config import ConfigError
    from .toolchain import ToolError, configure
    configure()
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "command", None):
        parser.print_help()
        return 2
    try:
        return args.func(args)
    except (UsageError, ConfigError, ToolError, FileNotFoundError, ValueError) as e:
        if os.environ.get("GRAPHUNITS_DEBUG"):
            raise
        print(f"graphunits {args.command}: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
