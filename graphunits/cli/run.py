"""``graphunits run``: an algorithm on the golden GPU model, baseline or with a unit."""
from __future__ import annotations

import argparse
import json
from pathlib import Path

import sys

from golden.units import resolve, units

from .common import (Lazy, UsageError, algo_help, gpu_help, graph_args, import_or_none, json_default,
                     load_graph_arg, mode_help, output_path, pcie_presets, preset_help, presets, source_algos,
                     unit_modes, unit_preset_options, write_output)


def _check_run_options(args) -> dict:
    """Algorithm options from the command line, each checked against the
    algorithm and mode it applies to (one-line errors, before the graph is built)."""
    import math
    from golden.algorithms import ALGORITHMS
    cls = ALGORITHMS.get(args.algo)
    if cls is None:
        raise UsageError(f"unknown algorithm {args.algo!r}; algorithms: {', '.join(ALGORITHMS)}")
    opts = {}
    if getattr(args, "energy", False) and args.functional:
        raise UsageError("--energy needs the GPU statistics; drop --functional")
    if args.source is not None:
        if not getattr(cls, "takes_source", True):
            raise UsageError(f"--source applies to {', '.join(source_algos())}; {args.algo} has no source vertex")
        opts["source"] = args.source
    for name in ("damping", "tol", "max_iter", "variant"):
        v = getattr(args, name, None)
        if v is not None:
            if args.algo != "pr":
                raise UsageError(f"--{name.replace('_', '-')} applies to pr, not {args.algo}")
            opts[name] = v
    if args.delta is not None:
        if args.algo != "sssp":
            raise UsageError(f"--delta applies to sssp, not {args.algo}")
        opts["delta"] = args.delta
    if getattr(args, "direction", None) is not None:
        if args.mode != "graphpeg-pull":
            raise UsageError(f"--direction applies to --mode graphpeg-pull, not {args.mode}")
        opts["direction"] = args.direction
    for dest, (unit, _, option) in unit_preset_options().items():
        name = getattr(args, dest, None)
        if name is None:
            continue
        flag = "--" + dest.replace("_", "-")
        modes = unit_modes(unit)
        if args.mode not in modes:
            raise UsageError(f"{flag} applies to --mode {' or '.join(modes) or '(none available)'}, "
                             f"not {args.mode}")
        allowed = presets(dest)
        if name not in allowed:
            raise UsageError(f"{flag} must be one of {', '.join(allowed)}, not {name!r}")
        opts[option] = name
    emogi = unit_modes("emogi")
    if args.pcie is not None or args.edge_bytes is not None:
        flag = "--pcie" if args.pcie is not None else "--edge-bytes"
        if args.mode not in emogi:
            raise UsageError(f"{flag} applies to --mode {' or '.join(emogi) or '(none available)'}, "
                             f"not {args.mode}")
    if args.pcie is not None:
        allowed = pcie_presets()
        if args.pcie not in allowed:
            raise UsageError(f"--pcie must be one of {', '.join(allowed)}, not {args.pcie!r}")
        opts["pcie"] = args.pcie
    if args.edge_bytes is not None:
        opts["edge_bytes"] = args.edge_bytes
    if getattr(args, "iru_model", None) is not None:
        if args.mode not in unit_modes("iru"):
            raise UsageError(f"--iru-model applies to --mode {' or '.join(unit_modes('iru')) or '(none available)'}, "
                             f"not {args.mode}")
        opts["iru_model"] = args.iru_model
    if getattr(args, "graphpeg_model", None) is not None:
        if args.mode not in unit_modes("graphpeg"):
            raise UsageError(f"--graphpeg-model applies to --mode "
                             f"{' or '.join(unit_modes('graphpeg')) or '(none available)'}, not {args.mode}")
        opts["graphpeg_model"] = args.graphpeg_model
    if args.uvm_capacity is not None:
        if args.mode != "uvm":
            raise UsageError(f"--uvm-capacity applies to --mode uvm, not {args.mode}")
        parse = import_or_none("golden.emogi.config", "parse_capacity")
        if parse is not None:              # a ratio of the edge list, or a size with a unit
            parse(args.uvm_capacity)       # ConfigError: one line naming the allowed forms
            opts["uvm_capacity"] = args.uvm_capacity
        else:                              # pragma: no cover - an older golden.emogi
            try:
                r = float(args.uvm_capacity)
            except ValueError:
                r = float("nan")
            if not (math.isfinite(r) and r > 0):
                raise UsageError(f"--uvm-capacity must be a positive ratio of the edge list (e.g. 0.5), "
                                 f"not {args.uvm_capacity!r}")
            from golden.emogi.config import UVMConfig
            opts["uvm"] = UVMConfig.preset("default", capacity_ratio=r)
    return opts


def _shown_options(args, opts: dict) -> dict:
    """The options of the run as the command line gave them (for the table and JSON)."""
    out = {k: v for k, v in opts.items() if isinstance(v, (str, int, float)) and not isinstance(v, bool)}
    return out


def _save_path(save: str) -> tuple[Path, bool]:
    """Where ``--save`` writes, and whether ``.npz`` was added: a name that does not
    end in ``.npz`` (in any case) gets it. The file is written through an open
    handle, so numpy adds nothing itself and the name printed is the file written."""
    from golden.report import probe_output
    path = output_path("--save", save, probe=False)
    added = not path.name.lower().endswith(".npz")
    if added:
        path = path.with_name(path.name + ".npz")
        if path.is_dir():
            raise UsageError(f"--save {save}: {path} is a directory; give a file name")
    probe_output("--save", save, path)          # the file written, .npz included
    return path, added


def _unit_rows(r) -> list:
    """Rows for the statistics unit modes leave in ``r.extra``: every unit's
    ``run_rows`` (its descriptor, golden/units.py), in the units' order."""
    rows = []
    for u in units().values():
        if u.run_rows:
            rows += resolve(u.run_rows)(r)
    return rows


def _warnings(args, r) -> list[str]:
    out = []
    if r.algo == "pr" and "final_change" in r.extra:
        tol = args.tol if args.tol is not None else 1e-6
        change = r.extra["final_change"]
        floor = r.extra.get("noise_floor") or 0.0
        if change is not None and not change < tol:
            if floor and change < floor:
                bound = r.extra.get("error_bound")
                out.append(f"PageRank stopped after {r.iterations} iterations at the unit's noise floor: the L1 "
                           f"change {change:.3g} (>= --tol {tol:g}) no longer falls with its binary32 merges "
                           f"(floor {floor:.3g}); the ranks are within {bound:.3g} (L1) of the exact fixed point")
            else:
                out.append(f"PageRank stopped at --max-iter {r.iterations} without converging: L1 change "
                           f"{change:.3g} >= --tol {tol:g} (raise --max-iter or --tol)")
    return out


def _check_model_options(args) -> None:
    """Options of the GPU model that --functional (no model) or --no-caches (no caches)
    would leave without effect are refused rather than ignored."""
    if args.functional:
        for given, flag in ((args.kernels, "--kernels"), (args.gpu_set, "--gpu-set"), (not args.caches, "--no-caches"),
                            (args.cache_model != "fast", f"--cache-model {args.cache_model}")):
            if given:
                raise UsageError(f"{flag} applies to the GPU model, which --functional does not run; drop one of them")
    if not args.caches and args.cache_model != "fast":
        raise UsageError(f"--cache-model {args.cache_model} models the caches that --no-caches leaves out; "
                         f"drop one of them")


def _gpu_changes(args) -> dict:
    """``--gpu-set NAME=VALUE`` as typed GPUConfig fields (``name`` stays the preset's:
    the energy presets and reports go by it)."""
    from golden.config import ConfigError
    from golden.gpu import GPUConfig
    try:
        changes = GPUConfig.parse_overrides(args.gpu_set or [], option="--gpu-set")
    except ConfigError as e:
        raise UsageError(str(e) if str(e).startswith("--gpu-set") else f"--gpu-set: {e}") from None
    if "name" in changes:
        raise UsageError("--gpu-set cannot change the GPU's name: choose the preset with --gpu")
    return changes


def _gpu(args):
    """The GPU of ``--gpu`` with the ``--gpu-set`` changes, validated (a one-line
    error naming the parameter and its range)."""
    from golden.config import ConfigError
    from golden.gpu import GPUConfig
    changes = _gpu_changes(args)
    try:
        return GPUConfig.preset(args.gpu, **changes)
    except ConfigError as e:
        given = " ".join(f"--gpu-set {k}={v}" for k, v in changes.items())
        raise UsageError(f"--gpu {args.gpu}" + (f" {given}" if given else "") + f": {e}") from None


def cmd_gpu(args) -> int:
    """``graphunits gpu``: the presets' parameters, or one GPU as JSON."""
    import dataclasses

    from golden.gpu import GPUConfig
    from golden.report import format_table
    if args.gpu is None:
        if args.gpu_set:
            raise UsageError("--gpu-set changes the preset named by --gpu: give --gpu")
        names = GPUConfig.preset_names()
        cfgs = [GPUConfig.preset(n) for n in names]
        def cell(v):                    # long strings (the DRAM address mapping) in full with --gpu
            return v if not isinstance(v, str) or len(v) <= 24 else v[:21] + "..."
        rows = [[f.name] + [cell(getattr(c, f.name)) for c in cfgs] for f in dataclasses.fields(GPUConfig)
                if f.name != "name"]
        print(format_table(["parameter"] + names, rows, title="GPU presets (sources: docs/golden.md; "
                                                              "one in full: graphunits gpu --gpu NAME)"))
        return 0
    print(_gpu(args).to_json(), end="")
    return 0


def cmd_run(args) -> int:
    import numpy as np
    from golden.algorithms import ALGORITHMS, AlgorithmError, run_algorithm
    from golden.gpu import bounds_table, kernel_table
    from golden.report import format_table
    from golden.perf import tune_allocator
    from sim.progress import IterationProgress
    tune_allocator()
    opts = _check_run_options(args)
    _check_model_options(args)
    save = _save_path(args.save) if args.save is not None else None
    json_path = output_path("--json", args.json)
    if save is not None and json_path is not None and save[0].resolve() == json_path.resolve():
        raise UsageError(f"--save and --json both name {json_path}: give each its own file")
    cls = ALGORITHMS[args.algo]
    gpu = _gpu(args)
    graph = load_graph_arg(args, cls.needs_weights)
    prog = IterationProgress(f"{args.algo} on {graph.name}", **({"force": True, "delay": 0.0} if args.progress
                                                                 else {}))
    try:
        r = run_algorithm(graph, args.algo, args.mode, gpu=gpu, stats=not args.functional, caches=args.caches,
                          cache_model=args.cache_model,
                          progress=prog, **opts)
    except AlgorithmError as e:
        raise UsageError(str(e)) from None
    finally:
        prog.close()
    edges = r.counters.get("edges", 0)
    rows = [["graph", graph.name], ["vertices", graph.num_vertices], ["edges (stored arcs)", graph.num_edges],
            ["algorithm / mode", f"{args.algo} / {args.mode}"]]
    if "source" in r.extra:
        rows.append(["source", r.extra["source"]])
    shown = _shown_options(args, opts)
    for k in ("scu", "iru", "iru_model", "graphpeg", "graphpeg_model", "mff", "pcie", "edge_bytes", "uvm_capacity"):
        if k in shown:
            rows.append([k.replace("_", " ") + (" preset" if k in ("scu", "iru", "graphpeg", "mff", "pcie") else ""),
                         shown[k]])
    rows += [["iterations", r.iterations],
             ["edges traversed (inspections)", edges], ["wall time (s)", round(r.wall_s, 3)],
             ["traversed edges/s (model speed)", f"{edges / r.wall_s:.3g}" if r.wall_s > 0 else "-"]]
    if r.gpu is not None:
        t = r.gpu["total"]
        changed = ", ".join(f"{k}={v}" for k, v in _gpu_changes(args).items())
        rows += [["GPU", gpu.name + (f" ({changed})" if changed else "")], ["warp instructions", t["warp_instructions"]],
                 ["memory instructions", t["mem_instructions"]], ["sectors", t["sectors"]],
                 ["accesses per warp request", round(t["accesses_per_request"], 3)],
                 ["estimated GPU time (us)", round(t["time_us"], 1)],
                 ["bound of most cycles (--kernels: per kernel)", t["bound"]]]
        if r.gpu["caches"]:
            rows += [["L1 hit rate", round(t["l1"]["hit_rate"], 3)], ["L2 hit rate", round(t["l2"]["hit_rate"], 3)]]
        rows += [["DRAM sectors (reads + write-backs)", t["dram_sectors"]]]
    rows += _unit_rows(r)
    print(format_table(["", "value"], rows))
    warnings = _warnings(args, r)
    for w in warnings:
        print(f"warning: {w}", file=sys.stderr)
    if r.gpu is not None and args.kernels:
        print()
        print(kernel_table(r.gpu))
        print()
        print(bounds_table(r.gpu))
    energy = _run_energy(args, r, graph, gpu, opts) if args.energy else None
    if save is not None:
        path, added = save
        write_output("--save", path, lambda f: np.savez_compressed(f, **{r.key: r.values}))
        print(f"saved {r.key} to {path}" + (" (.npz added to the name given)" if added else ""))
    if json_path is not None:
        doc = {**r.summary(), "graph": graph.summary(), "warnings": warnings, "options": shown}
        if energy is not None:
            doc["energy"] = energy
        text = json.dumps(doc, indent=2, default=json_default)
        write_output("--json", json_path, lambda f: f.write(text.encode()))
        print(f"wrote {json_path}")
    return 0


def _run_energy(args, r, graph, gpu, opts) -> dict:
    """``--energy``: print the energy of this run (and of the baseline's run of the
    same algorithm, for a unit's mode) by component; returns them by mode."""
    from golden.algorithms import run_algorithm
    from golden.gpu.energy import EnergyConfig, energy_table
    from golden.config import ConfigError
    from graphunits.report.metrics import run_energy
    try:
        ecfg = EnergyConfig.for_gpu(gpu.name)
    except ConfigError:
        raise UsageError(f"--energy: no energy preset for GPU {gpu.name!r} (presets: "
                         f"{', '.join(n for n in EnergyConfig.preset_names() if n != 'default')})") from None
    runs = {args.mode: run_energy(r, gpu, ecfg)}
    if args.mode != "baseline":
        base_opts = {k: v for k, v in opts.items() if k in ("source", "damping", "tol", "max_iter", "variant", "delta")}
        b = run_algorithm(graph, args.algo, "baseline", gpu=gpu, caches=args.caches, cache_model=args.cache_model,
                          **base_opts)
        runs["baseline"] = run_energy(b, gpu, ecfg)
    print()
    print(f"energy preset {ecfg.name} (docs/energy.md); unit = the unit's own SRAM arrays (CACTI) and logic "
          f"(RTL toggles x liberty), accesses and leakage; its memory traffic is in L2/DRAM")
    print(energy_table(runs))
    if "baseline" in runs and len(runs) > 1:
        ratio = runs[args.mode]["total_j"] / runs["baseline"]["total_j"] if runs["baseline"]["total_j"] else 0.0
        print(f"{args.mode} / baseline energy: {ratio:.3f}")
    return runs


def add_parsers(sub) -> None:
    sp = sub.add_parser("run", help="run a graph algorithm on the golden GPU model",
                        description="Run an algorithm on the golden model of a GPU (baseline or with a unit) "
                                    "and print its statistics. The lists below come from the registries of "
                                    "algorithms, modes and presets.")
    graph_args(sp)
    sp.add_argument("--algo", required=True, help=Lazy(algo_help))
    sp.add_argument("--mode", default="baseline", help=Lazy(mode_help))
    for dest in unit_preset_options():
        sp.add_argument("--" + dest.replace("_", "-"), dest=dest, metavar="PRESET",
                        help=Lazy(lambda dest=dest: preset_help(dest)))
    sp.add_argument("--pcie", metavar="PRESET",
                    help=Lazy(lambda: f"PCIe link of the EMOGI modes: {', '.join(pcie_presets())} "
                                       f"(modes {', '.join(unit_modes('emogi'))}; default: pcie3-x16)"))
    sp.add_argument("--edge-bytes", dest="edge_bytes", type=int, choices=[4, 8],
                    help="bytes per edge-list element in host memory, EMOGI modes (default: 8, as the paper)")
    sp.add_argument("--iru-model", dest="iru_model", choices=["fast", "cycle"],
                    help="--mode iru: the IRU's fast model (default) or its cycle-level model, the RTL's "
                         "reference (slow; docs/iru.md, \"Fast model\")")
    sp.add_argument("--graphpeg-model", dest="graphpeg_model", choices=["fast", "cycle"],
                    help="--mode graphpeg or graphpeg-pull: the engines' fast model (default) or their cycle-level "
                         "model, the RTL's reference (slow; docs/graphpeg.md, \"Fast model\")")
    sp.add_argument("--uvm-capacity", dest="uvm_capacity", metavar="RATIO|SIZE",
                    help="GPU memory for migrated pages, --mode uvm: a ratio of the host data (default 0.5; "
                         "1 or more: everything fits) or a size with a unit (e.g. 512MiB)")
    sp.add_argument("--gpu", default="gtx980", help=Lazy(gpu_help))
    sp.add_argument("--gpu-set", action="append", dest="gpu_set", metavar="NAME=VALUE",
                    help="change one parameter of the GPU preset (repeatable), e.g. --gpu-set l1_mshrs=64: a "
                         "sensitivity run; the baseline a unit mode compares with runs on the same GPU "
                         "(parameters and their sources: docs/golden.md)")
    sp.add_argument("--source", type=int,
                    help=Lazy(lambda: f"source vertex ({', '.join(source_algos())} only; default: the vertex of "
                                       f"largest out-degree)"))
    sp.add_argument("--damping", type=float, help="PageRank damping (default 0.85)")
    sp.add_argument("--tol", type=float, help="PageRank L1 tolerance (default 1e-6)")
    sp.add_argument("--max-iter", type=int, dest="max_iter",
                    help="PageRank iteration limit (default 100; a warning says when it stops the run)")
    sp.add_argument("--variant", choices=["standard", "nodangle"], help="PageRank definition")
    sp.add_argument("--delta", type=float, help="SSSP near-far threshold step")
    sp.add_argument("--direction", choices=["hybrid", "pull"],
                    help="--mode graphpeg-pull: hybrid (default: push or pull per level, Beamer's rule, as the "
                         "paper's runs switch) or pull at every level")
    sp.add_argument("--functional", action="store_true", help="results only, no GPU statistics (fastest)")
    sp.add_argument("--caches", action=argparse.BooleanOptionalAction, default=True,
                    help="model the L1s and the L2 (default; --no-caches: every sector goes to DRAM)")
    sp.add_argument("--cache-model", dest="cache_model", choices=["fast", "exact"], default="fast",
                    help="fast (default): the vectorised fully associative LRU model; exact: the set-associative "
                         "LRU replay it is measured against (slow; docs/golden.md, \"Caches\")")
    sp.add_argument("--kernels", action="store_true",
                    help="print the per-kernel tables: work (edges, vertices, instructions, sectors, hit rate, DRAM "
                         "sectors, cycles) and every bound of the time model, naming the one that binds")
    sp.add_argument("--energy", action="store_true",
                    help="energy by component (SM, L1, interconnect, L2, DRAM, PCIe, unit; dynamic and static) "
                         "from the GPU's energy preset (docs/energy.md); with a unit's mode also the baseline's")
    sp.add_argument("--progress", action="store_true",
                    help="always show the progress line on stderr (default: on a terminal, after 1 s)")
    sp.add_argument("--save", metavar="OUT.npz",
                    help="save the per-vertex result (key depth/dist/rank/label/bc/core; .npz is added to a "
                         "name that does not end in .npz, in any case)")
    sp.add_argument("--json", metavar="FILE", help="write every statistic as JSON")
    sp.set_defaults(func=cmd_run)

    sp = sub.add_parser("gpu", help="print the GPU presets' parameters (what --gpu-set changes)",
                        description="Print every GPU preset's parameters side by side, or, with --gpu, one preset "
                                    "(with its --gpu-set changes) as JSON with its derived values. Where each "
                                    "value comes from: docs/golden.md, \"GPU presets and their sources\".")
    sp.add_argument("--gpu", help=Lazy(lambda: gpu_help().replace("(default: %(default)s)",
                                                                  "(default: every preset side by side)")))
    sp.add_argument("--gpu-set", action="append", dest="gpu_set", metavar="NAME=VALUE",
                    help="change one parameter of the --gpu preset (repeatable)")
    sp.set_defaults(func=cmd_gpu)
