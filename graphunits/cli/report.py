"""``graphunits report`` and ``graphunits sweep`` (registered by ``graphunits/cli/__init__.py``).

Errors are :class:`ReportError` / :class:`SweepError` (``ValueError``): the
``graphunits`` entry point prints them as one line with exit status 2.
"""
from __future__ import annotations

from pathlib import Path

from graphunits.report.collect import ReportError

__all__ = ["add_report_parsers", "cmd_report", "cmd_sweep"]


def _csv(text: str, flag: str | None = None, example: str = "") -> list[str]:
    """The comma-separated items of ``text``; with ``flag``, at least one (an empty
    list would run nothing, or everything)."""
    items = [x.strip() for x in text.split(",") if x.strip()]
    if flag is not None and not items:
        raise ReportError(f"{flag} needs a comma-separated list with at least one name (e.g. {example}), "
                          f"not {text!r}")
    _once(flag or "the list", items)
    return items


def _graph_key(spec: str) -> str:
    """A graph as the report runs it: a generator spec in its canonical form
    (``kron:scale=05`` is ``kron:scale=5,edgefactor=16,seed=1``), a file by its path."""
    from golden.graphs import GraphError
    from golden.graphs.spec import _canonical, parse_spec
    try:
        parsed = parse_spec(spec)
    except GraphError:
        return spec                     # (the report names the problem when it loads the graph)
    return _canonical(*parsed) if parsed else str(Path(spec).resolve())


def _once(flag: str, items: list[str]) -> None:
    """A name given twice would run (and list) everything twice: refused."""
    twice = sorted({x for x in items if items.count(x) > 1})
    if twice:
        raise ReportError(f"{flag} names {', '.join(map(repr, twice))} twice: give each once")


def _output_dir(text: str) -> Path:
    """``-o DIR`` checked before any run: a folder, or a path that can become one
    (not an existing file, nor under one; writable)."""
    import os
    out = Path(text)
    if not text.strip():
        raise ReportError("-o/--output needs a folder name, not ''")
    if out.exists() and not out.is_dir():
        raise ReportError(f"-o {out}: exists and is not a folder (the report is a folder of files)")
    for sub in ("figures",):
        if (out / sub).exists() and not (out / sub).is_dir():
            raise ReportError(f"-o {out}: {out / sub} exists and is not a folder (the report writes its figures "
                              f"there)")
    anc = out
    while not anc.exists():
        if anc.parent == anc:
            break
        anc = anc.parent
    if anc.exists() and not anc.is_dir():
        raise ReportError(f"-o {out}: {anc} is a file, not a folder")
    if anc.exists() and not os.access(anc, os.W_OK | os.X_OK):
        raise ReportError(f"-o {out}: {anc} is not writable")
    return out


def cmd_report(args) -> int:
    from golden.report import format_table

    from graphunits.report import ReportSpec, build_report
    presets = {}
    for item in args.preset or []:
        unit, sep, name = item.partition("=")
        if not sep or not unit or not name:
            raise ReportError(f"--preset expects UNIT=PRESET (e.g. scu=tx1), not {item!r}")
        if unit.strip() in presets:
            if presets[unit.strip()] == name.strip():
                raise ReportError(f"--preset {item.strip()} is given twice: give it once")
            raise ReportError(f"--preset gives unit {unit.strip()!r} two presets ({presets[unit.strip()]} and "
                              f"{name.strip()}): one report runs one preset of each unit")
        presets[unit.strip()] = name.strip()
    _once("--graph", [_graph_key(g) for g in args.graph])
    if args.sim is not None and not args.cosim:
        raise ReportError(f"--sim {args.sim} chooses the simulator of --cosim: add --cosim or drop --sim")
    if args.area_preset is not None and not args.area:
        raise ReportError(f"--area-preset {args.area_preset} needs --area (it names the preset to synthesize)")
    algos = _csv(args.algo, "--algo", "bfs,sssp")
    units = _csv(args.units, "--units", "scu,iru") if args.units is not None else None
    out = _output_dir(args.output)
    from golden.config import ConfigError
    from golden.gpu import GPUConfig
    try:
        gpu_params = GPUConfig.parse_overrides(args.gpu_set or [], option="--gpu-set")
    except ConfigError as e:
        raise ReportError(str(e) if str(e).startswith("--gpu-set") else f"--gpu-set: {e}") from None
    spec = ReportSpec(graphs=args.graph, algos=algos, units=units,
                      gpu=args.gpu, presets=presets, cosim=args.cosim, sim=args.sim or "verilator", area=args.area,
                      area_preset=args.area_preset, check=not args.no_check, gpu_params=gpu_params)
    res = build_report(spec, out, log=None if args.quiet else print)
    rows = [[r["graph"], r["algo"], r["gpu"], r["mode"], r.get("speedup"), r.get("sectors_per_request"),
             r.get("workload_left"), r.get("check")] for r in res["runs"]]
    print(format_table(["graph", "algo", "GPU", "mode", "speedup", "sectors/req", "workload left", "check"], rows,
                       title="Baseline vs every unit mode (speedup over each unit's reference mode)"))
    missing = [u for u, i in res["units"].items() if not i["available"]]
    if missing:
        print(f"not available: {', '.join(missing)} (no golden model registers their modes yet)")
    for c in res["cosim"]:
        print(f"RTL in the loop: {c['algo']} {c['mode']} on {c['graph']} ({c['sim']}): {c['check']}")
    if args.area and res["area_skipped"]:
        print(f"area skipped: {res['area_skipped']}")
    print(f"wrote {out / 'report.html'}, {out / 'report.md'}, {out / 'results.json'} and "
          f"{len(res['figures'])} figures in {out / 'figures'}")
    bad = [r for r in res["runs"] if r.get("ok") is False] + [c for c in res["cosim"] if not c["ok"]]
    return 1 if bad else 0


def cmd_sweep(args) -> int:
    try:
        return _cmd_sweep(args)
    except BrokenPipeError:            # `graphunits sweep X --dry-run | head`: the reader left; stop quietly
        import os
        import sys
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())        # no second error when Python flushes stdout at exit
        return 0


def _cmd_sweep(args) -> int:
    from graphunits.report.sweep import ResultTable, SweepError, load_sweep, model_digest, plot_sweep, point_key, run_sweep
    for flag, v, lo in (("--workers", args.workers, 1), ("--limit", args.limit, 0)):
        if v is not None and v < lo:
            raise SweepError(f"{flag} must be an integer >= {lo}, not {v}")
    if args.dry_run and args.plot_only:
        raise SweepError("--dry-run lists the points to run and --plot-only plots the results already run: "
                         "give one of them")
    sweep = load_sweep(args.file, output=args.output)
    log = None if args.quiet else print
    model = model_digest()
    if args.dry_run:
        points = sweep.points()
        table = ResultTable(sweep.output)
        done, stale = table.finished_keys(model), table.stale_keys(model)
        n_stale = len([p for p in points if point_key(p) in stale])
        print(f"{args.file}: {len(points)} points ({len([p for p in points if point_key(p) in done])} done"
              + (f", {n_stale} finished by other model sources (run again)" if n_stale else "")
              + f"), swept: {', '.join(sweep.swept) or 'nothing'}; table {sweep.output}; model {model}")
        for p in points:
            k = point_key(p)
            mark = "done" if k in done else "stale" if k in stale else "todo"
            print(f"  {k} {mark} {p['graph']} {p['algo']} {p['mode']} {p['gpu']} "
                  + (f"preset={p['preset']} " if p["preset"] else "")
                  + " ".join(f"{k}={v}" for k, v in {**p["params"], **p["options"],
                                                      **{f"gpu.{g}": x for g, x in p.get("gpu_params", {}).items()}
                                                      }.items()), flush=True)
        return 0
    if args.plot_only:
        if not sweep.output.exists():
            raise SweepError(f"--plot-only: results table {sweep.output} does not exist (run the sweep first, "
                             f"or give the table with -o)")
        table = ResultTable(sweep.output)          # SweepError if it is not a sweep table
        keys = {point_key(p) for p in sweep.points()}
        n_stale = len(keys & table.stale_keys(model))
        figs, summary = plot_sweep(sweep, table.rows(), model=model)
        print(f"wrote {', '.join(str(f) for f in figs) or 'no plot (nothing finished or nothing swept)'}"
              + (f" and {summary}" if summary else ""))
        if n_stale:
            print(f"left out {n_stale} points finished by other model sources (model digest not {model}): run the "
                  f"sweep to recompute them")
        return 0
    if sweep.skipped_pairs and log:
        log(f"[sweep] skipped (no such mode): {', '.join(sweep.skipped_pairs)}")
    import signal

    def _stop(signum, frame):          # a kill (SIGTERM) stops like Ctrl-C: rows kept, cluster shut down
        raise KeyboardInterrupt
    old = signal.signal(signal.SIGTERM, _stop)
    try:
        s = run_sweep(sweep, scheduler=args.scheduler, workers=args.workers, limit=args.limit, log=log)
    finally:
        signal.signal(signal.SIGTERM, old)
    if args.quiet:
        print(f"{s.ran} points run, {s.skipped} skipped, {s.left} left; table {s.output}")
    return 1 if s.errors or s.mismatches else 0


def _registries() -> tuple[str, str, str, str, str]:
    """(algorithms, units, each unit's GPU, units with RTL in the loop, each unit's
    area preset) for the help texts, from the registries (golden.algorithms, the
    registered modes, the unit profiles, sim.cosim)."""
    try:
        from golden.algorithms import ALGORITHMS
        algos = ", ".join(ALGORITHMS)
    except Exception:                   # help must print even when a package is half installed
        algos = "bfs, sssp, pr, cc, bc, kcore"
    try:
        from graphunits.report.units import unit_names
        units = ", ".join(unit_names())
    except Exception:
        units = "scu, iru, graphpeg, mff, emogi"
    try:
        from graphunits.report.units import profile
        gpus = ", ".join(f"{u} {profile(u).gpu}" for u in units.split(", "))
    except Exception:
        gpus = "SCU gtx980, EMOGI v100, ..."
    try:
        from sim.cosim import cosim_units
        cos = ", ".join(cosim_units())
    except Exception:
        cos = "the units whose descriptors name RTL in the loop"
    try:
        from graphunits.report.units import profile
        area = ", ".join(f"{u} {profile(u).area_preset or profile(u).presets.get(profile(u).gpu, 'default')}"
                         for u in units.split(", "))
    except Exception:
        area = "scu gtx980, iru default, ..."
    return algos, units, gpus, cos, area


def add_report_parsers(sub) -> None:
    """Add ``report`` and ``sweep`` to the ``graphunits`` subparsers ``sub``."""
    algos, units, gpus, cos, area = _registries()
    sp = sub.add_parser(
        "report", help="run baseline and every unit mode; write a report (Markdown, HTML, JSON, CSV, figures)",
        description="Run the baseline and every available unit mode on the golden model (results checked against "
                    "scipy/networkx), optionally the RTL in the loop and the area flow, and write DIR/report.md, "
                    "DIR/report.html, DIR/results.json, CSV tables and PNG figures, with a paper-vs-ours table per "
                    "unit. Units that do not exist yet are listed as 'not available'. See docs/usage.md.")
    sp.add_argument("--graph", action="append", required=True, metavar="SPEC",
                    help="graph spec or file (repeatable): kron:scale=10 | urand:scale=10 | grid:64x64 | FILE")
    sp.add_argument("--algo", default="bfs,sssp,pr", metavar="LIST",
                    help=f"algorithms, comma-separated: {algos} (default: %(default)s)")
    sp.add_argument("--units", metavar="LIST", help=f"units, comma-separated: {units} (default: all)")
    sp.add_argument("--gpu", help=f"GPU preset for every run (default: each unit's paper GPU: {gpus})")
    sp.add_argument("--gpu-set", action="append", dest="gpu_set", metavar="NAME=VALUE",
                    help="change one parameter of the GPU preset for every golden-model run (repeatable), e.g. "
                         "--gpu-set l1_mshrs=64: a sensitivity report (not with --cosim)")
    sp.add_argument("--preset", action="append", metavar="UNIT=PRESET",
                    help=f"configuration preset of a unit's runs, e.g. scu=tx1 (repeatable); with --cosim also of "
                         f"a unit with RTL in the loop ({cos}), e.g. coalescer=default")
    sp.add_argument("--cosim", action="store_true",
                    help=f"also run the RTL in the loop of the units that have it ({cos}), each with its "
                         f"simulation-size preset unless --preset names one; slow (seconds to minutes per run)")
    sp.add_argument("--sim", choices=["verilator", "icarus"], help="simulator for --cosim (default: verilator)")
    sp.add_argument("--area", action="store_true",
                    help="also synthesize the units (Yosys liberty flow, 32 nm; cached in build/area/)")
    sp.add_argument("--area-preset", dest="area_preset", metavar="PRESET",
                    help=f"preset to synthesize for every unit (needs --area; units without it are listed as "
                         f"skipped, an error if none has it). Default: the unit's --preset, else its area preset "
                         f"(with the default --gpu: {area})")
    sp.add_argument("--no-check", action="store_true", help="do not compare results with scipy/networkx")
    sp.add_argument("-o", "--output", default="build/report", metavar="DIR",
                    help="output folder (default: %(default)s)")
    sp.add_argument("-q", "--quiet", action="store_true", help="no progress output")
    sp.set_defaults(func=cmd_report)

    sp = sub.add_parser(
        "sweep", help="run a design-space sweep (TOML) in parallel with Dask; resumable",
        description="Run the grid of a sweep file (unit parameters x graphs x algorithms x modes, x algorithm "
                    "options and GPU parameters) on a local Dask "
                    "cluster or an existing scheduler, append each point's row to a CSV table as it finishes, skip "
                    "finished points when run again, and draw one plot per swept parameter. Examples: "
                    "examples/sweeps/*.toml; format: docs/usage.md.")
    sp.add_argument("file", metavar="SWEEP.toml", help="the sweep file")
    sp.add_argument("--scheduler", metavar="ADDRESS",
                    help="an existing Dask scheduler (tcp://host:8786); default: a local cluster")
    sp.add_argument("--workers", type=int, metavar="N", help="local cluster workers (default: one per core)")
    sp.add_argument("--limit", type=int, metavar="N",
                    help="run at most N of the remaining points, then stop (run again to continue)")
    sp.add_argument("-o", "--output", metavar="TABLE.csv", help="results table (default: the file's sweep.output)")
    sp.add_argument("--dry-run", action="store_true", help="validate the file and list the points; run nothing")
    sp.add_argument("--plot-only", action="store_true", help="redraw the plots from the table; run nothing")
    sp.add_argument("-q", "--quiet", action="store_true", help="no progress output")
    sp.set_defaults(func=cmd_sweep)

