"""``graphunits cosim`` and ``replay``: an algorithm with a unit's RTL in the loop; a reproducer re-run alone."""
from __future__ import annotations

from .common import Lazy, UsageError, cosim_help, gpu_help, graph_args, output_path, write_output


def cmd_cosim(args) -> int:
    from golden.report import format_table
    from sim.cosim import cosim_units, result_json, run_cosim
    units = cosim_units()
    if args.unit not in units:
        raise UsageError(f"RTL in the loop is available for the units {', '.join(units)}, not {args.unit!r}")
    cu = units[args.unit]
    if args.algo not in cu.algos:
        raise UsageError(f"cosim with the {args.unit} runs {', '.join(cu.algos)}, not {args.algo!r}")
    if args.mode is not None and args.mode not in cu.modes:
        raise UsageError(f"the {args.unit}'s modes are {', '.join(cu.modes)}, not {args.mode!r}")
    args.preset = args.preset or cu.default_preset
    json_path = output_path("--json", args.json)
    r = run_cosim(args.graph, args.algo, unit=args.unit, mode=args.mode, preset=args.preset, sim=args.sim,
                  source=args.source, undirected=args.undirected or None, vertices=args.vertices,
                  weight_seed=args.weight_seed, gpu=args.gpu, waves=getattr(args, "waves", False),
                  memory=getattr(args, "memory", None))
    rows = [["graph", r.graph["name"]], ["vertices / arcs", f"{r.graph['vertices']} / {r.graph['edges']}"],
            ["algorithm / mode", f"{r.algo} / {r.mode}"]]
    if r.source is not None:
        rows.append(["source", r.source])
    rows.append([f"{args.unit} preset / simulator", f"{args.preset} / {args.sim}"])
    rows += cu.rows(r.rtl, r.tlm)
    rows += _speed_rows(r.rtl)
    rows.append(["wall time (s)", round(r.wall_s, 1)])
    print(format_table(["", "value"], rows))
    if getattr(args, "waves", False):
        print(f"waves: {r.rtl.get('waves') or '(the simulator wrote none)'}")
    if json_path is not None:
        text = result_json(r)
        write_output("--json", json_path, lambda f: f.write(text.encode()))
        print(f"wrote {json_path}")
    if r.ok:
        print(f"{r.algo} with the {args.unit.upper()} RTL in the loop matches reference (and the TLM run)")
        return 0
    for p in r.problems:
        print(f"MISMATCH: {p}")
    return 1


def cmd_replay(args) -> int:
    from sim.replay import replay
    try:
        reproduced, report = replay(args.file, sim=args.sim, waves=args.waves)
    except ValueError as e:
        raise UsageError(str(e)) from None
    print(report)
    return 1 if reproduced else 0


def _speed_rows(rtl: dict) -> list:
    """The memory model of an RTL-in-the-loop run and the simulator's speed."""
    mem = rtl.get("memory") if isinstance(rtl.get("memory"), dict) else {}     # (the IRU: one per partition)
    cycles = rtl.get("sim_cycles")
    rows = [["testbench memory", "inside the design" if rtl.get("memory_model") == "design" else "Python model"]]
    if cycles and mem.get("simulate_s"):
        rows.append(["RTL cycles / s while simulating", round(cycles / mem["simulate_s"])])
    if cycles and rtl.get("rtl_wall_s"):
        rows.append(["RTL cycles / s, whole RTL run", round(cycles / rtl["rtl_wall_s"])])
    return rows


def add_parsers(sub) -> None:
    sp = sub.add_parser("cosim", help="run an algorithm with a unit's RTL in the loop",
                        description="Run a golden algorithm in which every operation of the unit is executed by "
                                    "its RTL under cocotb; compare with the TLM run and an independent reference "
                                    "(scipy/networkx). Exit status 1 on any difference.")
    graph_args(sp)
    sp.add_argument("--unit", default="scu", help=Lazy(lambda: cosim_help("unit")))
    sp.add_argument("--algo", required=True, help=Lazy(lambda: cosim_help("algo")))
    sp.add_argument("--mode", help=Lazy(lambda: cosim_help("mode")))
    sp.add_argument("--preset", help=Lazy(lambda: cosim_help("preset")))
    sp.add_argument("--sim", default="verilator", choices=["verilator", "icarus"], help="simulator (default: %(default)s)")
    sp.add_argument("--source", type=int, help="source vertex (default: the vertex of largest degree)")
    sp.add_argument("--gpu", default="gtx980", help=Lazy(gpu_help))
    sp.add_argument("--json", metavar="FILE", help="write the comparison as JSON")
    sp.add_argument("--waves", action="store_true",
                    help="write the RTL run's waveform (Verilator: VCD, Icarus: FST) to build/cosim/waves/ and "
                         "print its path (open with GTKWave or Surfer)")
    sp.add_argument("--memory", choices=["design", "python"], help=Lazy(lambda: cosim_help("memory")))
    sp.set_defaults(func=cmd_cosim)

    sp = sub.add_parser("replay", help="re-run alone the operation an RTL-in-the-loop run found to differ",
                        description="Re-run the reproducer that `graphunits cosim` writes when an operation's RTL "
                                    "result differs from the TLM's (the SCU: build/cosim/replay/scu-opK.json, one "
                                    "operation; the MFF with the Python memory: mff-batchK.json, one batch of "
                                    "commands; GraphPEG: graphpeg-kernelK.json, one kernel, its items against its "
                                    "lists in memory; the IRU: iru-opK.json, one operation, its replies against the "
                                    "rules; the EMOGI coalescer: coalescer-callK.json, one batch of warps): alone, "
                                    "from the memory as it was before it, on the RTL and the TLM. "
                                    "Prints the difference; exit status 1 when it reproduces.")
    sp.add_argument("file", help="the reproducer (JSON; its memory image .npz beside it)")
    sp.add_argument("--sim", default="verilator", choices=["verilator", "icarus"],
                    help="simulator (default: %(default)s)")
    sp.add_argument("--waves", action="store_true", help="write the run's waveform and print its path")
    sp.set_defaults(func=cmd_replay)
