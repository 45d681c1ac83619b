"""Shared pieces of the commands: the usage error, registries for help and checks (derived
from the units' descriptors), lazily computed help texts, output helpers, common arguments."""
from __future__ import annotations

from pathlib import Path

from golden.report import output_path

__all__ = ["StatRows", "UsageError", "config_from_args", "load_graph_arg", "unit_preset_options", "import_or_none", "modes",
           "unit_modes", "presets", "pcie_presets", "source_algos", "Lazy", "graph_help", "algo_help", "mode_help",
           "preset_help", "gpu_help", "cosim_help", "write_output", "fmt", "json_default", "graph_args",
           "config_args", "output_path"]


class UsageError(Exception):
    """A problem with the command line or its inputs."""


def config_from_args(spec, args):
    """Configuration of ``spec`` from ``--preset``, ``--config`` and ``--set``."""
    return spec.config_class.from_cli(args.preset, getattr(args, "config", None), args.set)


def load_graph_arg(args, weighted: bool):
    from golden.graphs import load_graph
    return load_graph(args.graph, undirected=args.undirected or None, vertices=args.vertices,
                      weighted=weighted or args.weighted, weight_seed=args.weight_seed)


def unit_preset_options() -> dict:
    """Unit preset options of ``run``, from the units' descriptors
    (golden/units.py, ``preset_option``): option dest -> (unit, ``"module:Class"``
    of its configuration, the algorithm option that receives the preset name)."""
    from golden.units import units
    return {f"{u.preset_option}_preset": (u.name, u.config, u.preset_option)
            for u in units().values() if u.preset_option and u.preset_flag and u.config}


def import_or_none(module: str, name: str | None = None):
    import importlib
    try:
        mod = importlib.import_module(module)
    except ModuleNotFoundError as e:
        if e.name is None or not module.startswith(e.name):
            raise
        return None
    return mod if name is None else getattr(mod, name, None)


def modes() -> dict:
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
    modes()
    return sorted({mode for (_, mode), cls in MODES.items() if d.owns_mode_class(cls)})


def presets(dest: str) -> list[str]:
    from golden.units import resolve
    unit, config, _ = unit_preset_options()[dest]
    try:
        c = resolve(config)
    except (ImportError, AttributeError):
        return []
    return c.preset_names()


def pcie_presets() -> list[str]:
    c = import_or_none("golden.emogi.config", "PCIeConfig")
    return c.preset_names() if c is not None else []


def source_algos() -> list[str]:
    from golden.algorithms import ALGORITHMS
    return [a for a, c in ALGORITHMS.items() if getattr(c, "takes_source", True)]


class Lazy:
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


def graph_help() -> str:
    from golden.graphs import FILE_FORMATS
    return ("kron:scale=14,edgefactor=16,seed=1 | urand:scale=14 | grid:256x256 | delaunay:scale=16 | road:256x256 "
            "| powerlaw:scale=16,exponent=21 | mesh:40x40x40,dofs=2 | a file (" +
            " ".join(FILE_FORMATS) + ")")


def algo_help() -> str:
    from golden.algorithms import ALGORITHMS
    return f"algorithm: {', '.join(ALGORITHMS)} (a source vertex: {', '.join(source_algos())})"


def mode_help() -> str:
    groups: dict = {}
    for mode, algos in modes().items():
        groups.setdefault(tuple(algos), []).append(mode)
    parts = [f"{', '.join(ms)} ({', '.join(al)})" for al, ms in groups.items()]
    return "baseline or a unit's mode (algorithms): " + "; ".join(parts) + " (default: %(default)s)"


def preset_help(dest: str) -> str:
    from golden.units import unit_descriptor
    d = unit_descriptor(unit_preset_options()[dest][0])
    modes = ", ".join(unit_modes(d.name)) or "none available"
    return f"{d.title} configuration preset: {', '.join(presets(dest))} (modes {modes}; default: {d.default_preset})"


def gpu_help() -> str:
    from golden.gpu import GPUConfig
    return f"GPU preset: {', '.join(GPUConfig.preset_names())} (default: %(default)s)"


def cosim_help(what: str) -> str:
    from sim.cosim import cosim_units
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
    if what == "memory":
        inside = ", ".join(n for n, u in units.items() if u.in_design_memory) or "none"
        return ("the testbench memory: inside the simulated design (cocotb once per operation: the fast path; "
                f"the default on Verilator for the units that have it: {inside}) or the Python model (cocotb "
                "every cycle; the default otherwise)")
    return "unit configuration preset (default: " + \
        "; ".join(f"{n}: {u.default_preset}" for n, u in units.items()) + ")"


def write_output(flag: str, path: Path, write) -> None:
    """``write(file)`` into ``path`` (folders created); an OSError (permissions, a
    full disk, ...) becomes a one-line error naming the option and the path."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "wb") as f:
            write(f)
    except OSError as e:
        raise UsageError(f"{flag} {path}: cannot write ({e.strerror or e})") from None


class StatRows(list):
    """Rows ``[label, value]`` of the ``run`` command's table from a unit's
    statistics: :meth:`add` adds a row only when one of its keys is present (the
    units' statistics grow over time), an absent one showing ``-``."""

    def add(self, label: str, *keys, src: dict, sep: str = " / ") -> None:
        if any(k in src for k in keys):
            self.append([label, sep.join(fmt(src.get(k)) for k in keys)])


def fmt(v, digits: int = 3) -> str:
    """A value of the ``run`` command's rows: integers and large or whole floats
    in full, others to ``digits`` significant digits (``golden.report.fmt``, for
    table cells, keeps ``digits`` decimals instead)."""
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


def json_default(o):
    import numpy as np
    if isinstance(o, np.generic):
        return o.item()
    if isinstance(o, np.ndarray):
        return o.tolist()
    if hasattr(o, "to_dict"):
        return o.to_dict()
    raise TypeError(f"cannot write {type(o).__name__} as JSON")


def graph_args(sp):
    sp.add_argument("--graph", required=True, metavar="SPEC", help=Lazy(graph_help))
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
