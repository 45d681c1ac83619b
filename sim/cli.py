"""The ``graphunits`` command line.

Every command has ``--help``; the lists in it (algorithms, modes, presets, cosim
units) are generated from the registries when the help is shown. Errors in the
user's input (unknown unit or preset, bad parameter, an option that does not
apply to the algorithm or mode, missing file) end with one line naming the
problem and exit status 2, never a traceback.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import sys
from pathlib import Path

from golden.report import output_path

__all__ = ["main", "build_parser"]


class UsageError(Exception):
    """A problem with the command line or its inputs."""


def _config_from_args(spec, args):
    """Configuration of ``spec`` from ``--preset``, ``--config`` and ``--set``."""
    return spec.config_class.from_cli(args.preset, getattr(args, "config", None), args.set)


# ---------------------------------------------------------------------- commands
_output_path = output_path     # one-line errors for output options, checked before a run
_VERILOG_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
#: Verilog-2005 keywords a module name must not be (the ones a user might try).
_VERILOG_KEYWORDS = frozenset(
    "always and assign begin buf case default defparam else end endcase endfunction endmodule function "
    "generate genvar if initial inout input integer localparam module nand nor not or output parameter reg "
    "signed task time tri wire xor".split())


def cmd_verilog(args) -> int:
    from hw.registry import unit
    from .build import write_verilog
    spec = unit(args.unit)
    cfg = _config_from_args(spec, args)
    if not args.output:
        raise UsageError("-o/--output must name a folder, not ''")
    out = Path(args.output)
    if out.exists() and not out.is_dir():
        raise UsageError(f"-o/--output {out}: is a file, not a folder")
    name = args.name or args.unit
    if not _VERILOG_NAME.fullmatch(name) or name in _VERILOG_KEYWORDS:
        raise UsageError(f"--name must be a plain Verilog module name (a letter or _, then letters, digits "
                         f"or _; not a keyword): {name!r}")
    b = write_verilog(args.unit, cfg, out, name)
    print(f"wrote {b.verilog} and {b.json}")
    if getattr(args, "fusesoc", False):
        from .fusesoc import core_name, write_core
        core = write_core(b)
        print(f"wrote {core} (FuseSoC core {core_name(name)}; lint: fusesoc --cores-root {out} run --target lint "
              f"{core_name(name)})")
    if args.lint:
        from .lint import lint
        ok, msgs = lint(b.verilog, wall=args.lint == "wall")
        print(f"verilator --lint-only: {'clean' if ok else 'FAILED'}")
        if msgs:
            print(msgs)
        return 0 if ok else 1
    return 0


def cmd_units(args) -> int:
    """The units (their descriptors, golden/units.py) and the RTL blocks that
    ``graphunits verilog`` generates, with their presets."""
    from golden.report import format_table
    from golden.units import units
    from hw.registry import unit, unit_names
    from .cosim import cosim_units
    cos = {u.stats for u in cosim_units().values()} | set(cosim_units())
    rows = [[d.name, d.title, d.paper, ", ".join(unit_modes(d.name)) or "-",
             ", ".join(b.name for b in d.rtl) or "-", "yes" if d.name in cos else "-"] for d in units().values()]
    print(format_table(["unit", "title", "paper", "modes", "RTL", "RTL in the loop"], rows))
    print()
    rows = [[name, ", ".join(unit(name).config_class.preset_names()), unit(name).doc] for name in unit_names()]
    print(format_table(["RTL block", "presets", "what"], rows))
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


# ---------------------------------------------------------------------- registries (for checks and help)
def unit_preset_options() -> dict:
    """Unit preset options of ``run``, from the units' descriptors
    (golden/units.py, ``preset_option``): option dest -> (unit, ``"module:Class"``
    of its configuration, the algorithm option that receives the preset name)."""
    from golden.units import units
    return {f"{u.preset_option}_preset": (u.name, u.config, u.preset_option)
            for u in units().values() if u.preset_option and u.preset_flag and u.config}


def _import(module: str, name: str | None = None):
    import importlib
    try:
        mod = importlib.import_module(module)
    except ModuleNotFoundError as e:
        if e.name is None or not module.startswith(e.name):
            raise
        return None
    return mod if name is None else getattr(mod, name, None)


def _modes() -> dict:
    """``{mode: [algorithms]}`` of every registered mode (baseline first)."""
    from golden.algorithms import ALGORITHMS, MODES, modes_for
    for a in ALGORITHMS:
        modes_for(a)                       # imports the units, which register their modes
    out: dict = {}
    for (algo, mode) in MODES:
        out.setdefault(mode, []).append(algo)
    order = list(ALGORITHMS)
    return {m: sorted(out[m], key=order.index) for m in sorted(out, key=lambda m: (m != "baseline", m))}


def unit_modes(unit: str) -> list[str]:
    """The ``run`` modes in which ``unit`` works (from the registered classes and
    the unit's descriptor)."""
    from golden.algorithms import MODES
    from golden.units import units
    d = units().get(unit)
    if d is None:
        return []
    _modes()
    return sorted({mode for (_, mode), cls in MODES.items() if d.owns_mode_class(cls)})


def _presets(dest: str) -> list[str]:
    from golden.units import resolve
    unit, config, _ = unit_preset_options()[dest]
    try:
        c = resolve(config)
    except (ImportError, AttributeError):
        return []
    return c.preset_names()


def _pcie_presets() -> list[str]:
    c = _import("golden.emogi.config", "PCIeConfig")
    return c.preset_names() if c is not None else []


def _source_algos() -> list[str]:
    from golden.algorithms import ALGORITHMS
    return [a for a, c in ALGORITHMS.items() if getattr(c, "takes_source", True)]


class _Lazy:
    """Help text computed only when it is shown (so that building the parser does
    not import every unit): argparse calls ``strip()`` and ``%`` on it."""

    def __init__(self, fn):
        self.fn = fn

    def __str__(self) -> str:
        return self.fn()

    def strip(self) -> str:
        return str(self).strip()

    def __mod__(self, params) -> str:
        return str(self) % params

    def __bool__(self) -> bool:
        return True


def _graph_help() -> str:
    from golden.graphs import FILE_FORMATS
    return ("kron:scale=14,edgefactor=16,seed=1 | urand:scale=14 | grid:256x256 | delaunay:scale=16 | road:256x256 "
            "| powerlaw:scale=16,exponent=21 | mesh:40x40x40,dofs=2 | a file (" +
            " ".join(FILE_FORMATS) + ")")


def _algo_help() -> str:
    from golden.algorithms import ALGORITHMS
    return f"algorithm: {', '.join(ALGORITHMS)} (a source vertex: {', '.join(_source_algos())})"


def _mode_help() -> str:
    groups: dict = {}
    for mode, algos in _modes().items():
        groups.setdefault(tuple(algos), []).append(mode)
    parts = [f"{', '.join(ms)} ({', '.join(al)})" for al, ms in groups.items()]
    return "baseline or a unit's mode (algorithms): " + "; ".join(parts) + " (default: %(default)s)"


def _preset_help(dest: str) -> str:
    from golden.units import unit_descriptor
    d = unit_descriptor(unit_preset_options()[dest][0])
    modes = ", ".join(unit_modes(d.name)) or "none available"
    return f"{d.title} configuration preset: {', '.join(_presets(dest))} (modes {modes}; default: {d.default_preset})"


def _gpu_help() -> str:
    from golden.gpu import GPUConfig
    return f"GPU preset: {', '.join(GPUConfig.preset_names())} (default: %(default)s)"


def _cosim_help(what: str) -> str:
    from .cosim import cosim_units
    units = cosim_units()
    if what == "unit":
        return ("unit whose RTL runs in the loop: " +
                "; ".join(f"{n} (algorithms {', '.join(u.algos)}; modes {', '.join(u.modes)}; "
                          f"default preset {u.default_preset})" for n, u in units.items()) +
                " (default: %(default)s)")
    if what == "algo":
        return "algorithm (" + "; ".join(f"{n}: {', '.join(u.algos)}" for n, u in units.items()) + ")"
    if what == "mode":
        return "unit mode (" + "; ".join(f"{n}: {', '.join(u.modes)}" for n, u in units.items()) + \
            "; default: the unit's first)"
    return "unit configuration preset (default: " + \
        "; ".join(f"{n}: {u.default_preset}" for n, u in units.items()) + ")"


# ---------------------------------------------------------------------- run
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
            raise UsageError(f"--source applies to {', '.join(_source_algos())}; {args.algo} has no source vertex")
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
        allowed = _presets(dest)
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
        allowed = _pcie_presets()
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
    if args.uvm_capacity is not None:
        if args.mode != "uvm":
            raise UsageError(f"--uvm-capacity applies to --mode uvm, not {args.mode}")
        parse = _import("golden.emogi.config", "parse_capacity")
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
    path = _output_path("--save", save)
    if path.name.lower().endswith(".npz"):
        return path, False
    path = path.with_name(path.name + ".npz")
    if path.is_dir():
        raise UsageError(f"--save {save}: {path} is a directory; give a file name")
    return path, True


def _write_output(flag: str, path: Path, write) -> None:
    """``write(file)`` into ``path`` (folders created); an OSError (permissions, a
    full disk, ...) becomes a one-line error naming the option and the path."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "wb") as f:
            write(f)
    except OSError as e:
        raise UsageError(f"{flag} {path}: cannot write ({e.strerror or e})") from None


def _fmt(v, digits: int = 3) -> str:
    if v is None:
        return "-"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if v != v or v in (float("inf"), float("-inf")):
            return str(v)
        if abs(v) >= 1000 or (v.is_integer() and abs(v) < 1e15):
            return f"{v:.0f}"
        return f"{v:.{digits}g}"
    return str(v)


def _unit_rows(r) -> list:
    """Rows for the statistics a unit mode leaves in ``r.extra`` (only the keys
    present: the units' statistics grow over time)."""
    rows = []
    ex = r.extra
    tm = ex.get("time") or {}

    def add(label, *keys, src, sep=" / ", fmt=_fmt):
        if any(k in src for k in keys):
            rows.append([label, sep.join(fmt(src.get(k)) for k in keys)])

    sc = ex.get("scu")
    if isinstance(sc, dict):
        if isinstance(sc.get("ops"), dict):
            rows.append(["SCU operations", ", ".join(f"{k} {v}" for k, v in sorted(sc["ops"].items()))])
        add("SCU memory requests", "requests", src=sc)
        add("GPU / SCU / total cycles (est.)", "gpu_cycles", "scu_cycles", "total_cycles", src=tm)
    iru = ex.get("iru")
    if isinstance(iru, dict):
        add("IRU operations / elements", "ops", "elements", src=iru)
        if "disabled" in iru or "filtered_share" in iru:
            share = iru.get("filtered_share")
            rows.append(["IRU elements filtered or merged",
                         f"{_fmt(iru.get('disabled'))} ({'-' if share is None else f'{100 * share:.1f} %'})"])
        if isinstance(iru.get("kinds"), dict):
            rows.append(["IRU replies by kind", ", ".join(f"{k} {v}" for k, v in iru["kinds"].items())])
        add("IRU blocks per full reply", "blocks_per_reply", src=iru)
        add("IRU / GPU cycles (est.)", "iru_cycles", "gpu_cycles", src=tm)
    peg = ex.get("graphpeg")
    if isinstance(peg, dict):
        add("GraphPEG kernels / items (edges)", "kernels", "items", src=peg)
        add("edges per cycle per SM", "edges_per_cycle_per_sm", src=peg)
        add("warp utilisation", "warp_utilisation", src=peg)
        add("load imbalance (with / without EF)", "load_imbalance", "load_imbalance_no_ef", src=peg)
        add("EF exchanges / moved edges", "exchanges", "moved_edges", src=peg)
        add("engine memory requests", "engine_requests", src=peg)
        add("engine / GPU cycles (est.)", "engine_cycles", "gpu_cycles", src={**peg, **tm})
        add("baseline cycles / speedup (est.)", "baseline_cycles", "speedup", src=peg)
        add("memory requests / baseline's", "memory_requests", "baseline_memory_requests", src=peg)
    mff = ex.get("mff")
    if isinstance(mff, dict):
        rows += _mff_rows(r, mff)
    em = ex.get("emogi")
    if isinstance(em, dict) and em.get("stats"):
        if isinstance(em.get("requests"), dict):
            rows.append(["PCIe requests by size", ", ".join(f"{k} B: {v}" for k, v in em["requests"].items())])
        else:
            add("UVM page faults / evictions", "page_faults", "evictions", src=em)
        if "bytes_moved" in em:
            rows.append(["host bytes moved (I/O amplification)",
                         f"{_fmt(em['bytes_moved'])} ({_fmt(em.get('io_amplification'))})"])
        add("PCIe GB/s (link busy) / average", "bandwidth_gbps", "average_gbps", src=em)
        if isinstance(em.get("time"), dict) and "total_s" in em["time"]:
            rows.append(["estimated total time (ms)", _fmt(1e3 * em["time"]["total_s"])])
    return rows


def _mff_rows(r, mff: dict) -> list:
    """Rows of ``extra["mff"]`` (golden/mff/algorithms.py; keys read defensively:
    a row whose keys are all absent is left out, an absent one shows ``-``)."""
    rows: list = []

    def add(label, *keys, src):
        if any(k in src for k in keys):
            rows.append([label, " / ".join(_fmt(src.get(k)) for k in keys)])

    unit = bool(mff.get("commands") or mff.get("scatter_commands")) or r.mode in unit_modes("mff")
    scatter = "scatter_commands" in mff                # the push BFS (push, mff-push)
    if unit and scatter:                               # mff-push: PC_scatter_set instead of atomicOr
        add("MFF scatter commands / bits set", "scatter_commands", "bits", src=mff)
    elif unit:                                         # mff: PC_gather
        add("MFF commands / values", "commands", "values", src=mff)
    elif scatter:                                      # push: the GPU's atomics
        add("GPU atomics / their memory requests", "atomics", "atomic_requests", src=mff)
    if unit:
        if any(k in mff for k in ("reads", "writes", "requests")):
            rows.append(["MFF requests: reads / writes (total)",
                         f"{_fmt(mff.get('reads'))} / {_fmt(mff.get('writes'))} ({_fmt(mff.get('requests'))})"])
        add("MFF requests per edge", "requests_per_edge", src=mff)
        add("MFF blocks (distinct per command)", "blocks", src=mff)
        if scatter:
            add("atomics replaced (one per bit set)", "bits", src=mff)
        add("GPU / total memory requests (GPU + MFF)", "gpu_requests", "total_requests", src=mff)
        if "speedup" in mff:
            base = mff.get("baseline_mode") or "baseline"
            add(f"{base} (GPU alone) / total requests", "baseline_requests", "total_requests", src=mff)
            add(f"requests per edge: {base} / with MFF", "baseline_requests_per_edge",
                "total_requests_per_edge", src=mff)
            add(f"{base} cycles / speedup (est.)", "baseline_cycles", "speedup", src=mff)
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


def cmd_run(args) -> int:
    import numpy as np
    from golden.algorithms import ALGORITHMS, AlgorithmError, run_algorithm
    from golden.gpu import GPUConfig, bounds_table, kernel_table
    from golden.report import format_table
    from golden.perf import tune_allocator
    from .progress import IterationProgress
    tune_allocator()
    opts = _check_run_options(args)
    save = _save_path(args.save) if args.save is not None else None
    json_path = _output_path("--json", args.json)
    cls = ALGORITHMS[args.algo]
    gpu = GPUConfig.preset(args.gpu)
    graph = _load_graph_arg(args, cls.needs_weights)
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
    for k in ("scu", "iru", "iru_model", "graphpeg", "mff", "pcie", "edge_bytes", "uvm_capacity"):
        if k in shown:
            rows.append([k.replace("_", " ") + (" preset" if k in ("scu", "iru", "graphpeg", "mff", "pcie") else ""),
                         shown[k]])
    rows += [["iterations", r.iterations],
             ["edges traversed (inspections)", edges], ["wall time (s)", round(r.wall_s, 3)],
             ["traversed edges/s (model speed)", f"{edges / r.wall_s:.3g}" if r.wall_s > 0 else "-"]]
    if r.gpu is not None:
        t = r.gpu["total"]
        rows += [["GPU", gpu.name], ["warp instructions", t["warp_instructions"]],
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
        _write_output("--save", path, lambda f: np.savez_compressed(f, **{r.key: r.values}))
        print(f"saved {r.key} to {path}" + (" (.npz added to the name given)" if added else ""))
    if json_path is not None:
        doc = {**r.summary(), "graph": graph.summary(), "warnings": warnings, "options": shown}
        if energy is not None:
            doc["energy"] = energy
        text = json.dumps(doc, indent=2, default=_json_default)
        _write_output("--json", json_path, lambda f: f.write(text.encode()))
        print(f"wrote {json_path}")
    return 0


def _run_energy(args, r, graph, gpu, opts) -> dict:
    """``--energy``: print the energy of this run (and of the baseline's run of the
    same algorithm, for a unit's mode) by component; returns them by mode."""
    from golden.algorithms import run_algorithm
    from golden.gpu.energy import EnergyConfig, energy_table
    from golden.config import ConfigError
    from .report.metrics import run_energy
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


def _json_default(o):
    import numpy as np
    if isinstance(o, np.generic):
        return o.item()
    if isinstance(o, np.ndarray):
        return o.tolist()
    if hasattr(o, "to_dict"):
        return o.to_dict()
    raise TypeError(f"cannot write {type(o).__name__} as JSON")


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
    json_path = _output_path("--json", args.json)
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
        _write_output("--json", json_path, lambda f: f.write(text.encode()))
        print(f"wrote {json_path}")
    if r.ok:
        print(f"{r.algo} with the {args.unit.upper()} RTL in the loop matches reference (and the TLM run)")
        return 0
    for p in r.problems:
        print(f"MISMATCH: {p}")
    return 1


def cmd_demo(args) -> int:
    from .demo import run_demo
    return run_demo(sims=args.sim, quick=args.quick)


def cmd_replay(args) -> int:
    from .replay import replay
    try:
        reproduced, report = replay(args.file, sim=args.sim, waves=args.waves)
    except ValueError as e:
        raise UsageError(str(e)) from None
    print(report)
    return 1 if reproduced else 0


def cmd_doctor(args) -> int:
    from .toolchain import liberty_path, versions
    optional = {"ccache", "chromium"}          # speed-up / one report test: setup warns, never fails
    for k, v in versions().items():
        missing = "missing (optional)" if any(k.startswith(o) for o in optional) else "MISSING"
        print(f"{k:14s} {v if v else missing}")
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
        sp.add_argument("--graph", required=True, metavar="SPEC", help=_Lazy(_graph_help))
        sp.add_argument("--undirected", action="store_true", help="symmetrize a file's edges")
        sp.add_argument("--vertices", type=int, help="vertex count of an edge-list file")
        sp.add_argument("--weighted", action="store_true",
                        help="give an unweighted graph integer weights in [1, 255] hashed from each edge's end "
                             "points and --weight-seed")
        sp.add_argument("--weight-seed", type=int, default=1, dest="weight_seed",
                        help="seed of those weights (default: %(default)s)")

    def config_args(sp):
        sp.add_argument("--unit", required=True, help="unit name (see `graphunits units`)")
        sp.add_argument("--preset", help="configuration preset (default: default)")
        sp.add_argument("--config", metavar="FILE", help="configuration JSON (as written next to the Verilog)")
        sp.add_argument("--set", action="append", metavar="KEY=VALUE",
                        help="change one parameter of the preset (repeatable)")

    sp = sub.add_parser("verilog", help="write a unit's Verilog and its configuration JSON",
                        description="Write NAME.v and NAME.json for a unit and configuration.")
    config_args(sp)
    sp.add_argument("-o", "--output", default="build/rtl", help="output folder (default: %(default)s)")
    sp.add_argument("--name", help="Verilog module name (default: the unit name)")
    sp.add_argument("--fusesoc", action="store_true",
                    help="also write NAME.core, a FuseSoC core (CAPI2) of the Verilog and its configuration, "
                         "with a default and a Verilator lint target")
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
                                    "and print its statistics. The lists below come from the registries of "
                                    "algorithms, modes and presets.")
    graph_args(sp)
    sp.add_argument("--algo", required=True, help=_Lazy(_algo_help))
    sp.add_argument("--mode", default="baseline", help=_Lazy(_mode_help))
    for dest in unit_preset_options():
        sp.add_argument("--" + dest.replace("_", "-"), dest=dest, metavar="PRESET",
                        help=_Lazy(lambda dest=dest: _preset_help(dest)))
    sp.add_argument("--pcie", metavar="PRESET",
                    help=_Lazy(lambda: f"PCIe link of the EMOGI modes: {', '.join(_pcie_presets())} "
                                       f"(modes {', '.join(unit_modes('emogi'))}; default: pcie3-x16)"))
    sp.add_argument("--edge-bytes", dest="edge_bytes", type=int, choices=[4, 8],
                    help="bytes per edge-list element in host memory, EMOGI modes (default: 8, as the paper)")
    sp.add_argument("--iru-model", dest="iru_model", choices=["fast", "cycle"],
                    help="--mode iru: the IRU's fast model (default) or its cycle-level model, the RTL's "
                         "reference (slow; docs/iru.md, \"Fast model\")")
    sp.add_argument("--uvm-capacity", dest="uvm_capacity", metavar="RATIO|SIZE",
                    help="GPU memory for migrated pages, --mode uvm: a ratio of the host data (default 0.5; "
                         "1 or more: everything fits) or a size with a unit (e.g. 512MiB)")
    sp.add_argument("--gpu", default="gtx980", help=_Lazy(_gpu_help))
    sp.add_argument("--source", type=int,
                    help=_Lazy(lambda: f"source vertex ({', '.join(_source_algos())} only; default: the vertex of "
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

    sp = sub.add_parser("cosim", help="run an algorithm with a unit's RTL in the loop",
                        description="Run a golden algorithm in which every operation of the unit is executed by "
                                    "its RTL under cocotb; compare with the TLM run and an independent reference "
                                    "(scipy/networkx). Exit status 1 on any difference.")
    graph_args(sp)
    sp.add_argument("--unit", default="scu", help=_Lazy(lambda: _cosim_help("unit")))
    sp.add_argument("--algo", required=True, help=_Lazy(lambda: _cosim_help("algo")))
    sp.add_argument("--mode", help=_Lazy(lambda: _cosim_help("mode")))
    sp.add_argument("--preset", help=_Lazy(lambda: _cosim_help("preset")))
    sp.add_argument("--sim", default="verilator", choices=["verilator", "icarus"], help="simulator (default: %(default)s)")
    sp.add_argument("--source", type=int, help="source vertex (default: the vertex of largest degree)")
    sp.add_argument("--gpu", default="gtx980", help=_Lazy(_gpu_help))
    sp.add_argument("--json", metavar="FILE", help="write the comparison as JSON")
    sp.add_argument("--waves", action="store_true",
                    help="write the RTL run's waveform (Verilator: VCD, Icarus: FST) to build/cosim/waves/ and "
                         "print its path (open with GTKWave or Surfer)")
    sp.add_argument("--memory", choices=["design", "python"],
                    help="the testbench memory: inside the simulated design (cocotb once per operation: the fast "
                         "path; the default on Verilator for the units that have it: scu) or the Python model "
                         "(cocotb every cycle; the default otherwise)")
    sp.set_defaults(func=cmd_cosim)

    sp = sub.add_parser("replay", help="re-run alone the operation an RTL-in-the-loop run found to differ",
                        description="Re-run the reproducer that `graphunits cosim` writes when an operation's RTL "
                                    "result differs from the TLM's (build/cosim/replay/scu-opK.json): the operation "
                                    "alone, from the memory as it was before it, on the RTL and the TLM. Prints the "
                                    "difference; exit status 1 when it reproduces.")
    sp.add_argument("file", help="the reproducer (JSON; its memory image .npz beside it)")
    sp.add_argument("--sim", default="verilator", choices=["verilator", "icarus"],
                    help="simulator (default: %(default)s)")
    sp.add_argument("--waves", action="store_true", help="write the run's waveform and print its path")
    sp.set_defaults(func=cmd_replay)

    sp = sub.add_parser("doctor", help="show the tools found and their versions",
                        description="Show the external tools graphunits uses and their versions.")
    sp.set_defaults(func=cmd_doctor)

    from synth.cli import add_area_parser, add_prove_parser      # graphunits area (issue 5), prove
    add_area_parser(sub)
    add_prove_parser(sub)
    from .report.cli import add_report_parsers  # graphunits report, sweep (issue 10)
    add_report_parsers(sub)
    return p


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


def _one_line(e: Exception) -> str:
    """The message of ``e``; an OSError from the system as ``path: reason``."""
    if isinstance(e, OSError) and e.filename is not None and e.strerror:
        return f"{e.filename}: {e.strerror}" + (f" -> {e.filename2}" if e.filename2 is not None else "")
    return str(e)


def main(argv: list[str] | None = None) -> int:
    from golden.config import ConfigError
    from .runner import SimulationError
    from .toolchain import ToolError, configure
    configure()
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "command", None):
        parser.print_help()
        return 2
    try:
        return args.func(args)
    except (UsageError, ConfigError, ToolError, OSError, ValueError) as e:
        if os.environ.get("GRAPHUNITS_DEBUG"):
            raise
        print(f"graphunits {args.command}: error: {_one_line(e)}", file=sys.stderr)
        return 2
    except SimulationError as e:
        if os.environ.get("GRAPHUNITS_DEBUG"):
            raise
        print(f"graphunits {args.command}: error: simulation failed: {e}", file=sys.stderr)
        return 1
    except MemoryError:
        print(f"graphunits {args.command}: error: out of memory: the graph or the run needs more memory than "
              "this machine has (try a smaller scale or graph)", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
