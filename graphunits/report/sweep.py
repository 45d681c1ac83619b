"""``graphunits sweep SWEEP.toml``: a grid over a unit's parameters x graphs x
algorithms x modes (x GPUs x algorithm options), run in parallel with Dask,
results appended to a CSV table, resumable, one plot per swept parameter.

The sweep file (docs/usage.md, "Sweeps")::

    [sweep]
    unit = "scu"                       # required: a unit whose golden model registers modes
    preset = "gtx980"                  # preset the [params] change (default: each GPU's preset of the unit)
    graphs = ["kron:scale=10"]         # required
    algos = ["bfs", "sssp"]            # required
    modes = ["scu", "scu-enhanced"]    # default: every mode of the unit
    gpu = "gtx980"                     # or a list (swept); default: the unit's paper GPU
    output = "build/sweeps/x.csv"      # default: build/sweeps/<file name>.csv
    reference = true                   # also run the reference mode (speedups), default true
    check = true                       # compare each result with scipy/networkx, default true
    plot_metrics = ["speedup"]         # what the per-parameter plots show
    relative_to = { width = 8 }        # time_rel = time / time of the point with these [params]
    panels_by = ["inflight"]           # swept columns drawn as one panel per value, not averaged

    [params]                           # fields of the unit's configuration; a list is swept
    width = [1, 2, 4, 8]
    inflight = { max_inflight = [32, 1024], param_inflight = [8, 512] }   # swept together

    [options]                          # run_algorithm options; a list is swept
    edge_bytes = [4, 8]

    [gpu_params]                       # fields of the GPU preset (docs/golden.md); a list is swept
    l1_mshrs = [16, 32, 64]            # every mode, the reference too, runs on each GPU

Every point is keyed by a stable hash of its parameters (:func:`point_key`), and
every row records ``model``, the digest of the sources that computed it
(:func:`model_digest`: golden/ and the report code that turns a run into a row).
A point whose latest row has status ``ok`` or ``mismatch`` *and* the current
digest is skipped when the sweep runs again, so an interrupted sweep (Ctrl-C, a
killed machine, ``--limit``) resumes where it stopped, while rows computed by
older model code are run again instead of being mixed with new ones. Rows are
appended (and flushed) as points finish: CSV rather than Parquet because a CSV
row can be appended in place without rewriting the file or adding pyarrow
(~40 MB) to the dependencies.
"""
from __future__ import annotations

import csv
import dataclasses
import datetime
import functools
import hashlib
import io
import itertools
import json
import logging
import os
import socket
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from .metrics import normalise, record
from .progress import Progress
from .units import profile, unit_modes, unit_names, unit_of_mode

__all__ = ["SweepError", "Sweep", "load_sweep", "point_key", "run_point", "run_sweep", "ResultTable",
           "plot_sweep", "relative_times", "SweepSummary", "SWEEP_KEYS", "PLOT_METRICS", "model_digest",
           "MODEL_SOURCES"]

#: Keys of the [sweep] table.
SWEEP_KEYS = ("name", "description", "unit", "preset", "graphs", "algos", "modes", "gpu", "output", "reference",
              "check", "plot_metrics", "relative_to", "panels_by")
TABLES = ("sweep", "params", "options", "gpu_params")
#: Metrics a plot can show (plus any ``<unit>_...`` column of the unit).
PLOT_METRICS = ("speedup", "time_norm", "time_rel", "time_us", "workload_left", "gpu_workload", "sectors_per_request",
                "contract_sectors_per_request", "sectors", "mem_instructions", "iterations")
#: Statuses of a finished point (skipped on resume); ``error`` points run again.
FINISHED = ("ok", "mismatch")
#: Bump when the meaning of a point changes (every key changes with it).
POINT_VERSION = 1
#: What computes a row (relative to the project root): a change in any of these makes
#: every row of an existing table stale (run again). golden/ is the model; the rest
#: turn a run into a row (checks, metrics, which unit a mode belongs to).
MODEL_SOURCES = ("golden", "sim/reference.py", "graphunits/report/metrics.py", "graphunits/report/units.py",
                 "graphunits/report/sweep.py")


def model_digest(root: Path | None = None) -> str:
    """A 16-hex-digit digest of :data:`MODEL_SOURCES` under ``root`` (default: this
    checkout, computed once per process; every ``.py`` file, with its path) and the
    numpy version: the ``model`` column of each row. Computed by the process that
    runs the point, so a Dask worker with other sources is noticed."""
    return _own_digest() if root is None else _digest(Path(root))


@functools.lru_cache(maxsize=1)
def _own_digest() -> str:
    return _digest(Path(__file__).resolve().parents[2])


def _digest(root: Path) -> str:
    import numpy
    h = hashlib.sha256(f"numpy {numpy.__version__}\n".encode())
    for src in MODEL_SOURCES:
        p = root / src
        for f in sorted(p.rglob("*.py")) if p.is_dir() else [p]:
            h.update(str(f.relative_to(root)).encode() + b"\0")
            h.update(f.read_bytes() + b"\0")
    return h.hexdigest()[:16]


class SweepError(ValueError):
    """A bad sweep file or request: one line, naming the file and the key."""


@dataclass
class Sweep:
    path: Path
    name: str
    unit: str
    preset: str | None
    graphs: list
    algos: list
    modes: list
    gpus: list
    params: dict            # name -> list of values (one value: fixed)
    options: dict
    output: Path
    reference: bool = True
    check: bool = True
    plot_metrics: list = field(default_factory=lambda: ["speedup", "sectors_per_request"])
    description: str = ""
    skipped_pairs: list = field(default_factory=list)
    #: GPU -> the configuration preset its points use (``preset``, or each GPU's preset of the unit).
    presets: dict = field(default_factory=dict)
    #: [params] values of the point that ``time_rel`` divides by (empty: no time_rel).
    relative_to: dict = field(default_factory=dict)
    #: Linked [params]: group name -> the fields swept together (their lists stepped
    #: in step, not crossed), e.g. ``inflight`` -> ``[max_inflight, param_inflight]``.
    links: dict = field(default_factory=dict)
    #: Swept columns (as in :attr:`swept`: ``param.inflight``) drawn as one panel per
    #: value in the other columns' plots instead of averaged over (``sweep.panels_by``).
    panels_by: list = field(default_factory=list)
    #: [gpu_params]: GPUConfig field -> values (a list of more than one: swept); every
    #: point, the reference's too, runs on the GPU preset with these fields changed.
    gpu_params: dict = field(default_factory=dict)

    @property
    def reference_modes(self) -> tuple:
        """Every reference mode of the unit's modes (the MFF's ``push`` for ``mff-push``)."""
        return profile(self.unit).reference_modes()

    @property
    def reference_text(self) -> str:
        """What the speedups are over: ``pull``, or ``pull / push`` where modes differ."""
        return " / ".join(self.reference_modes)

    @property
    def axes(self) -> list[tuple[str, tuple]]:
        """The [params] axes of the grid in file order: (name, fields); a field on
        its own is (field, (field,)), a linked group is (group, its fields)."""
        out, seen = [], set()
        member = {f: g for g, fs in self.links.items() for f in fs}
        for k in self.params:
            name = member.get(k, k)
            if name not in seen:
                seen.add(name)
                out.append((name, tuple(self.links.get(name, (k,)))))
        return out

    @property
    def swept(self) -> list[str]:
        """Columns that take more than one value (one plot each): ``param.<field>``,
        ``param.<group>`` for a linked group, ``option.<name>``, ``gpu.<field>``, ``gpu``."""
        out = [f"param.{name}" for name, fs in self.axes if len(self.params[fs[0]]) > 1]
        out += [f"option.{k}" for k, v in self.options.items() if len(v) > 1]
        out += [f"gpu.{k}" for k, v in self.gpu_params.items() if len(v) > 1]
        if len(self.gpus) > 1:
            out.append("gpu")
        return out

    def column(self, col: str) -> tuple[tuple, list, list[str]]:
        """A swept column's row columns, its x values (tuples for a linked group) and
        their labels (``32/8`` for a group)."""
        if col == "gpu":
            return ("gpu",), list(self.gpus), list(self.gpus)
        if col.startswith("option."):
            vals = self.options[col[7:]]
            return (col,), list(vals), [str(v) for v in vals]
        if col.startswith("gpu."):
            vals = self.gpu_params[col[4:]]
            return (col,), list(vals), [str(v) for v in vals]
        name = col[6:]
        fields = tuple(self.links.get(name, (name,)))
        if len(fields) == 1:
            vals = self.params[name]
            return (col,), list(vals), [str(v) for v in vals]
        xs = list(zip(*(self.params[f] for f in fields)))
        return tuple(f"param.{f}" for f in fields), xs, ["/".join(map(str, x)) for x in xs]

    def param_combos(self) -> list[dict]:
        """Every combination of [params] values (linked fields stepped together)."""
        axes = [[dict(zip(fs, vals)) for vals in zip(*(self.params[f] for f in fs))] for _, fs in self.axes]
        return [{k: v for d in combo for k, v in d.items()} for combo in itertools.product(*axes)]

    def gpu_combos(self) -> list[dict]:
        """Every combination of [gpu_params] values (``[{}]`` without the table)."""
        names = list(self.gpu_params)
        return [dict(zip(names, c)) for c in itertools.product(*(self.gpu_params[k] for k in names))]

    def points(self) -> list[dict]:
        """Every point of the grid, reference points first for each graph/algo."""
        from golden.algorithms import MODES
        onames = list(self.options)
        pcombos = self.param_combos()
        ocombos = [dict(zip(onames, c)) for c in itertools.product(*(self.options[k] for k in onames))]
        from golden.units import units
        prof = profile(self.unit)
        refs = prof.reference_modes()
        desc = units().get(self.unit)
        out = []
        for gpu, gp in itertools.product(self.gpus, self.gpu_combos()):
            # a sweep without [gpu_params] keeps the points (and keys) it had before the table existed
            extra = {"gpu_params": gp} if self.gpu_params else {}
            for graph in self.graphs:
                for algo in self.algos:
                    modes = [m for m in self.modes if (algo, m) in MODES and m not in refs]
                    # a mode's own reference named in `modes` (the MFF's push) runs as asked
                    listed = [m for m in self.modes if m in refs and m != prof.reference]
                    # with `reference`: the unit's reference, and each mode's own (mff-push: push)
                    need = dict.fromkeys(([prof.reference] + [prof.reference_for(m) for m in modes]
                                          if self.reference else []) + listed)
                    modes = [r for r in need if (algo, r) in MODES] + modes
                    for mode in modes:
                        base = mode == "baseline"
                        # a reference mode that takes no unit configuration (GraphPEG's lb), or runs
                        # without the unit (the MFF's pull and push), runs once, like the baseline,
                        # whatever the unit's parameters
                        cls = MODES[(algo, mode)]
                        without = not base and mode in refs and desc is not None and not desc.owns_mode_class(cls)
                        fixed = base or without or (mode in refs and prof.option not in cls.accepted_options())
                        oc_mode = ocombos
                        if without:             # ... and of the unit's own options (those the baseline lacks)
                            algo_opts = MODES[(algo, "baseline")].accepted_options() if (algo, "baseline") in MODES \
                                else set()
                            oc_mode = [dict(t) for t in dict.fromkeys(
                                tuple((k, v) for k, v in oc.items() if k in algo_opts) for oc in ocombos)]
                        for pc in ([{}] if fixed else pcombos):
                            for oc in oc_mode:
                                out.append({"v": POINT_VERSION, "unit": "baseline" if base else self.unit,
                                            "preset": None if fixed else self.presets.get(gpu, self.preset),
                                            "params": pc, "options": oc,
                                            "graph": graph, "algo": algo, "mode": mode, "gpu": gpu,
                                            **extra})
        return out


def point_key(point: dict) -> str:
    """A stable hash of a point's parameters (the row key of the results table)."""
    text = json.dumps(point, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


# ---------------------------------------------------------------------- loading
def _err(path, key: str, msg: str) -> SweepError:
    return SweepError(f"{path}: {key}: {msg}")


def _list(path, key, value, kind, *, allow_scalar=True, nonempty=True) -> list:
    if allow_scalar and not isinstance(value, list):
        value = [value]
    if not isinstance(value, list):
        raise _err(path, key, f"must be a list, not {value!r}")
    if nonempty and not value:
        raise _err(path, key, "must not be empty")
    for v in value:
        if kind is not None and (not isinstance(v, kind) or isinstance(v, bool) and kind is not bool):
            raise _err(path, key, f"values must be {getattr(kind, '__name__', kind)}s, not {v!r}")
    if len(set(map(repr, value))) != len(value):
        raise _err(path, key, f"has a value twice: {value!r}")
    return value


def _scalar_list(path, key, value) -> list:
    """A swept value list (or one value) of numbers, strings or booleans."""
    vals = _list(path, key, value, None)
    for x in vals:
        if isinstance(x, (dict, list)):
            raise _err(path, key, f"values must be numbers, strings or booleans, not {x!r}")
    return vals


def _check_options(path, ovals: dict, algos: list, modes: list, references: tuple, reserved=frozenset()) -> None:
    """[options]: every name taken by every unit mode the sweep runs, every value one
    that the algorithm accepts (the checks that need no graph:
    :func:`golden.algorithms.check_options`). The reference modes (``baseline``, the
    unit's ``references``) run with the options they take and without the unit's
    (:func:`point_options`)."""
    from golden.algorithms import MODES, AlgorithmError, check_options
    pairs = [(a, m) for a in algos for m in modes if (a, m) in MODES and m not in references]
    pairs += [(a, r) for a in algos for r in references if (a, r) in MODES]
    for k, vals in ovals.items():
        if not any(k in MODES[p].accepted_options() for p in pairs):
            names = sorted({n for p in pairs for n in MODES[p].accepted_options()} - set(reserved))
            raise _err(path, f"options.{k}", f"no mode of this sweep takes option {k!r}; options: "
                                             f"{', '.join(names)}")
        for a, m in pairs:
            taken = k in MODES[(a, m)].accepted_options()
            if not taken and m in ("baseline", *references):
                continue
            for x in vals:
                try:
                    check_options(a, m, {k: x})
                except AlgorithmError as e:
                    raise _err(path, f"options.{k}", f"{a} in mode {m}: {e}" if taken else str(e)) from None


def point_options(point: dict) -> dict:
    """The run_algorithm options of a point: its [options], less those that its mode
    does not take when it is the baseline or the unit's reference mode (the
    reference of a unit's modes runs without the unit's options, e.g. GraphPEG's
    ``latency`` in mode ``lb``)."""
    from golden.algorithms import mode_class
    from .units import profile
    opts = dict(point["options"])
    if point["mode"] in ("baseline", *profile(point.get("unit", "")).reference_modes()):
        taken = mode_class(point["algo"], point["mode"]).accepted_options()
        opts = {k: v for k, v in opts.items() if k in taken}
    return opts


def load_sweep(path, *, output: str | None = None) -> Sweep:
    """Read and validate a sweep file; :class:`SweepError` names the file and the key."""
    from golden.algorithms import ALGORITHMS
    from golden.config import ConfigError
    from golden.graphs import GraphError
    from golden.graphs.spec import parse_spec
    from golden.gpu import GPUConfig

    path = Path(path)
    if not path.exists():
        raise SweepError(f"sweep file {path} does not exist")
    try:
        doc = tomllib.loads(path.read_text(encoding="utf-8-sig"))     # (a byte order mark is not TOML)
    except tomllib.TOMLDecodeError as e:
        raise SweepError(f"{path}: not valid TOML ({e})") from None
    except UnicodeDecodeError as e:
        raise SweepError(f"{path}: not valid TOML (TOML files are UTF-8; byte {e.start} is not: {e.reason})") from None
    except OSError as e:
        raise SweepError(f"{path}: cannot read ({e.strerror or e})") from None
    for t in doc:
        if t not in TABLES:
            raise _err(path, t, f"unknown table or key; allowed tables: {', '.join(f'[{x}]' for x in TABLES)}")
        if not isinstance(doc[t], dict):
            raise _err(path, t, f"must be a table [{t}]")
    sw = doc.get("sweep")
    if sw is None:
        raise _err(path, "sweep", "missing table [sweep]")
    for k in sw:
        if k not in SWEEP_KEYS:
            raise _err(path, f"sweep.{k}", f"unknown key; allowed keys: {', '.join(SWEEP_KEYS)}")
    for k in ("unit", "graphs", "algos"):
        if k not in sw:
            raise _err(path, f"sweep.{k}", "missing (required keys: unit, graphs, algos)")

    # unit
    unit = sw["unit"]
    found = unit_modes()
    names = unit_names(found)
    if not isinstance(unit, str) or unit not in names:
        raise _err(path, "sweep.unit", f"unknown unit {unit!r}; units: {', '.join(names)}")
    if unit not in found:
        avail = [u for u in names if u in found]
        raise _err(path, "sweep.unit", f"unit {unit!r} is not available yet: no golden model registers its modes "
                                       f"(golden/{unit}/algorithms.py); available units: {', '.join(avail)}")
    prof = profile(unit)
    umodes = found[unit]

    # graphs
    graphs = _list(path, "sweep.graphs", sw["graphs"], str)
    for g in graphs:
        try:
            if parse_spec(g) is None and not Path(g).exists():
                raise GraphError(f"graph file {g} does not exist (nor a generator: kron:scale=N, urand:scale=N, grid:RxC, delaunay:scale=N, road:RxC, powerlaw:scale=N, mesh:RxCxL)")
        except GraphError as e:
            raise _err(path, "sweep.graphs", str(e)) from None

    # algorithms and modes
    algos = _list(path, "sweep.algos", sw["algos"], str)
    for a in algos:
        if a not in ALGORITHMS:
            raise _err(path, "sweep.algos", f"unknown algorithm {a!r}; allowed: {', '.join(ALGORITHMS)}")
        if a not in umodes:
            raise _err(path, "sweep.algos", f"unit {unit!r} has no mode for {a!r}; allowed: {', '.join(umodes)}")
    all_modes = list(dict.fromkeys(m for a in algos for m in umodes[a]))
    modes = _list(path, "sweep.modes", sw.get("modes", all_modes), str)
    skipped = []
    for m in modes:
        if m not in all_modes:
            raise _err(path, "sweep.modes", f"{m!r} is not a mode of unit {unit!r} for {', '.join(algos)}; "
                                            f"allowed: {', '.join(all_modes)}")
        skipped += [f"{a} {m}" for a in algos if m not in umodes[a]]

    # GPUs
    gpus = _list(path, "sweep.gpu", sw.get("gpu", prof.gpu), str)
    for gpu in gpus:
        if gpu not in GPUConfig.PRESETS:
            raise _err(path, "sweep.gpu", f"unknown GPU {gpu!r}; allowed: {', '.join(sorted(GPUConfig.PRESETS))}")

    # configuration: preset and [params]
    cls = prof.config_class()
    params = doc.get("params", {})
    preset = sw.get("preset")
    presets = {}
    if cls is None or prof.option is None:
        if params:
            raise _err(path, "params", f"unit {unit!r} has no configuration the algorithms take; use [options]")
        if preset is not None:
            raise _err(path, "sweep.preset", f"unit {unit!r} has no configuration presets")
    else:
        if preset is not None:
            if not isinstance(preset, str) or preset not in cls.PRESETS:
                raise _err(path, "sweep.preset", f"{cls.__name__} has no preset {preset!r}; allowed: "
                                                 f"{', '.join(sorted(cls.PRESETS))}")
            presets = {g: preset for g in gpus}
        else:                           # each GPU's preset of the unit (units.py), e.g. SCU tx1 / gtx980
            presets = {g: prof.preset_for(g) for g in gpus}
            for g, p in presets.items():
                if p not in cls.PRESETS:
                    raise _err(path, "sweep.preset", f"the {unit} preset for GPU {g!r} is {p!r}, which "
                                                     f"{cls.__name__} does not have; set sweep.preset")
            if len(set(presets.values())) == 1:
                preset = presets[gpus[0]]
    fields = [f.name for f in dataclasses.fields(cls)] if cls is not None else []
    pvals, links = {}, {}

    def one_field(key, k, v):
        if k not in fields:
            raise _err(path, key, f"{cls.__name__} has no parameter {k!r}; allowed: {', '.join(fields)}")
        if k in pvals:
            raise _err(path, key, f"{k!r} is given twice (on its own and in a linked group, or in two groups)")
        vals = _scalar_list(path, key, v)
        for x in vals:
            for p in dict.fromkeys(presets.values()):
                try:
                    cls.preset(p, **{k: x})
                except ConfigError as e:
                    raise _err(path, key, str(e)) from None
        pvals[k] = vals

    for k, v in params.items():
        if not isinstance(v, dict):
            one_field(f"params.{k}", k, v)
            continue
        # a linked group: { field = [...], field = [...] }, lists of one length, stepped together
        if k in fields:
            raise _err(path, f"params.{k}", f"a linked group needs a name that is not a {cls.__name__} field "
                                            f"(e.g. inflight = {{ max_inflight = [32, 1024], "
                                            f"param_inflight = [8, 512] }})")
        if len(v) < 2:
            raise _err(path, f"params.{k}", "a linked group needs two or more fields (one field: give it on its own)")
        lens = set()
        for f, fv in v.items():
            one_field(f"params.{k}.{f}", f, fv)
            lens.add(len(pvals[f]))
        if len(lens) > 1:
            raise _err(path, f"params.{k}", "the lists of a linked group must have one length (they are stepped "
                                            f"together), not {', '.join(f'{f}: {len(pvals[f])}' for f in v)}")
        links[k] = list(v)
    probe = Sweep(path, "", unit, preset, [], [], [], gpus, pvals, {}, Path("x.csv"), links=links)
    for combo in probe.param_combos() if pvals else ():
        for p in dict.fromkeys(presets.values()):
            try:
                cls.preset(p, **combo)
            except ConfigError as e:
                raise _err(path, "params", f"the combination {combo}: {e}") from None

    # relative_to: the [params] point that time_rel divides by
    rel = sw.get("relative_to", {})
    if not isinstance(rel, dict):
        raise _err(path, "sweep.relative_to", f"must be a table of [params] values, e.g. "
                                              f"{{ {next(iter(pvals), 'width')} = 8 }}, not {rel!r}")
    for k, v in rel.items():
        if k not in pvals:
            raise _err(path, f"sweep.relative_to.{k}", f"not a field of [params]; [params] fields: "
                                                       f"{', '.join(pvals) or 'none'}")
        grp = next((g for g, fs in links.items() if k in fs), None)
        if grp is not None:
            raise _err(path, f"sweep.relative_to.{k}", f"{k!r} is in the linked group {grp!r}: time_rel compares "
                                                       f"points with the same {grp}; name a field swept on its own")
        if not any(x == v and isinstance(x, bool) == isinstance(v, bool) for x in pvals[k]):
            raise _err(path, f"sweep.relative_to.{k}", f"{v!r} is not one of the swept values "
                                                       f"{', '.join(map(repr, pvals[k]))}")

    # [options]
    ovals = {}
    reserved = {"backend", "gpu", "stats", "caches", "progress"} | ({prof.option} if prof.option else set())
    for k, v in doc.get("options", {}).items():
        if k in reserved:
            raise _err(path, f"options.{k}", f"cannot be set in [options] (reserved: {', '.join(sorted(reserved))}"
                                             f"; unit parameters go in [params])")
        ovals[k] = _scalar_list(path, f"options.{k}", v)
    _check_options(path, ovals, algos, modes, prof.reference_modes(), reserved)

    # [gpu_params]: fields of every swept GPU preset, each value and combination valid
    gvals = {}
    gfields = [f.name for f in dataclasses.fields(GPUConfig) if f.name != "name"]
    for k, v in doc.get("gpu_params", {}).items():
        if k not in gfields:
            raise _err(path, f"gpu_params.{k}", f"GPUConfig has no parameter {k!r} that a sweep can change; "
                                                f"allowed: {', '.join(gfields)} (the preset is sweep.gpu)")
        gvals[k] = _scalar_list(path, f"gpu_params.{k}", v)
    if gvals:
        gprobe = Sweep(path, "", unit, preset, [], [], [], gpus, {}, {}, Path("x.csv"), gpu_params=gvals)
        for gpu in gpus:
            for combo in gprobe.gpu_combos():
                try:
                    GPUConfig.preset(gpu, **combo)
                except ConfigError as e:
                    raise _err(path, "gpu_params", f"GPU {gpu} with {combo}: {e}") from None

    # the rest
    name = sw.get("name", path.stem)
    if not isinstance(name, str) or not name or "/" in name:
        raise _err(path, "sweep.name", f"must be a non-empty name without '/', not {name!r}")
    out = output or sw.get("output", f"build/sweeps/{name}.csv")
    if not isinstance(out, str) or not out.endswith(".csv"):
        if output:
            raise SweepError(f"-o/--output must be a path ending in .csv, not {out!r}")
        raise _err(path, "sweep.output", f"must be a path ending in .csv, not {out!r}")
    for k in ("reference", "check"):
        if not isinstance(sw.get(k, True), bool):
            raise _err(path, f"sweep.{k}", f"must be true or false, not {sw[k]!r}")
    pm = _list(path, "sweep.plot_metrics", sw.get("plot_metrics", ["speedup", "sectors_per_request"]), str)
    for m in pm:
        if m not in PLOT_METRICS and not m.startswith(f"{unit}_"):
            raise _err(path, "sweep.plot_metrics", f"unknown metric {m!r}; allowed: {', '.join(PLOT_METRICS)} "
                                                   f"or a {unit}_* column")
        if m == "time_rel" and not rel:
            raise _err(path, "sweep.plot_metrics", "time_rel needs sweep.relative_to (the [params] point it "
                                                   "divides by)")
    desc = sw.get("description", "")
    if not isinstance(desc, str):
        raise _err(path, "sweep.description", "must be a string")
    sweep = Sweep(path, name, unit, preset, graphs, algos, modes, gpus, pvals, ovals, Path(out),
                  sw.get("reference", True), sw.get("check", True), pm, desc, skipped, presets, dict(rel), links,
                  gpu_params=gvals)
    panels_by = _list(path, "sweep.panels_by", sw.get("panels_by", []), str, nonempty=False)
    # [params] fields and groups and [options] by their names; [gpu_params] fields as gpu.<field>,
    # and by their names where no [params] field has it (GraphPEG's sms)
    names = {c.split(".", 1)[-1]: c for c in sweep.swept if c != "gpu" and not c.startswith("gpu.")}
    for c in sweep.swept:
        if c.startswith("gpu."):
            names[c] = c
            names.setdefault(c[4:], c)
    for c in panels_by:
        if c not in names:
            raise _err(path, "sweep.panels_by", f"{c!r} is not a swept [params] field, linked group, [options] or "
                                                f"[gpu_params] "
                                                f"name; swept: {', '.join(names) or 'none'}")
    sweep.panels_by = [names[c] for c in panels_by]
    return sweep


# ---------------------------------------------------------------------- one point (on a worker)
@functools.lru_cache(maxsize=8)
def _graph(spec: str, weighted: bool):
    from golden.graphs import load_graph
    return load_graph(spec, weighted=weighted)


@functools.lru_cache(maxsize=8)
def _reference(spec: str, algo: str, source):
    from sim.reference import reference
    return reference(_graph(spec, algo == "sssp"), algo, source=source)


def _json_scalar(v):
    return v if isinstance(v, (int, float, str, bool)) or v is None else str(v)


def run_point(point: dict, check: bool = True) -> dict:
    """Run one point and return its table row (never raises: failures are rows with
    status ``error``). Runs on a Dask worker; everything it needs is in ``point``."""
    from golden.algorithms import run_algorithm
    from golden.gpu import GPUConfig
    t0 = time.time()
    row = {"key": point_key(point), "status": "error", "model": model_digest(), "graph": point["graph"],
           "algo": point["algo"], "mode": point["mode"], "unit": point["unit"], "gpu": point["gpu"],
           "preset": point["preset"] or ""}
    row.update({f"param.{k}": v for k, v in point["params"].items()})
    row.update({f"option.{k}": v for k, v in point["options"].items()})
    row.update({f"gpu.{k}": v for k, v in point.get("gpu_params", {}).items()})
    trace = os.environ.get("GRAPHUNITS_SWEEP_TRACE")
    if trace:                                   # tests count executions per key
        with open(trace, "a") as f:
            f.write(row["key"] + "\n")
    try:
        g = _graph(point["graph"], point["algo"] == "sssp")
        gcfg = GPUConfig.preset(point["gpu"], **point.get("gpu_params", {}))
        opts = point_options(point)
        config = None
        if point["unit"] != "baseline":
            from golden.algorithms import mode_class
            prof = profile(point["unit"])
            cls = prof.config_class()
            takes = prof.option in mode_class(point["algo"], point["mode"]).accepted_options()
            if cls is not None and prof.option and takes and point["preset"] is not None:   # None: runs once
                config = cls.preset(point["preset"], **point["params"])
                opts[prof.option] = config
        r = run_algorithm(g, point["algo"], point["mode"], gpu=gcfg, **opts)
        status, chk = "ok", None
        if check:
            from sim.reference import compare
            why = compare(point["algo"], r.values, _reference(point["graph"], point["algo"], r.extra.get("source")))
            status, chk = ("ok", "ok") if why is None else ("mismatch", f"mismatch: {why}")
        rec = record(r, graph=point["graph"], graph_summary=g.summary(),
                     unit=unit_of_mode(point["algo"], point["mode"]), gpu_config=gcfg, preset=point["preset"],
                     check=chk)
        for k in ("reference_mode", "time_norm", "speedup", "workload_left", "unit", "preset", "graph", "algo",
                  "mode", "gpu", "ok"):
            rec.pop(k, None)
        row["status"] = status
        row.update({k: _json_scalar(v) for k, v in rec.items()})
        row["config"] = json.dumps(config.to_dict(), sort_keys=True) if config is not None else ""
        row["error"] = ""
    except Exception as e:                      # a failed point is a row, not a crashed sweep
        row["error"] = f"{type(e).__name__}: {e}".replace("\n", " ")[:500]
    row["worker"] = f"{socket.gethostname()}:{os.getpid()}"
    row["finished"] = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    row["point_wall_s"] = round(time.time() - t0, 3)
    return row


# ---------------------------------------------------------------------- the table
class ResultTable:
    """The sweep's CSV table: rows appended (and flushed to disk) one by one; new
    columns rewrite the file once; a last line cut short by a kill is dropped."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self.columns: list[str] = []
        self._rows: list[dict] = []
        if self.path.is_dir():
            raise SweepError(f"results table {self.path} is a folder, not a CSV file")
        if self.path.exists():
            try:
                text = self.path.read_text()
            except (OSError, UnicodeDecodeError) as e:
                raise SweepError(f"results table {self.path} cannot be read: {e}") from None
            rd = csv.DictReader(io.StringIO(text))
            try:
                columns = list(rd.fieldnames or [])
            except csv.Error as e:
                raise SweepError(f"results table {self.path} is not a CSV table: {e}") from None
            if text.strip() and "key" not in columns:
                # Appending to another file would rewrite its header and corrupt it.
                raise SweepError(f"{self.path} is not a sweep results table (its header has no 'key' column); "
                                 f"give another table (-o) or move the file away")
            if text and not text.endswith("\n"):
                text = text[:text.rfind("\n") + 1]       # a row cut short by a kill
                self.path.write_text(text)
            rd = csv.DictReader(io.StringIO(text))
            try:
                self.columns = list(rd.fieldnames or [])
                self._rows = [dict(r) for r in rd if r.get("key")]
            except csv.Error as e:
                raise SweepError(f"results table {self.path} is not a CSV table: {e}") from None

    def rows(self) -> list[dict]:
        return list(self._rows)

    def latest(self) -> dict[str, dict]:
        """The last row of each key."""
        out = {}
        for r in self._rows:
            out[r["key"]] = r
        return out

    def finished_keys(self, model: str | None = None) -> set[str]:
        """Keys whose last row is finished (``ok``/``mismatch``) and, with ``model``,
        was computed by model sources of that digest (the ``model`` column; a row of
        a table written before the column existed has none, so it is stale)."""
        return {k for k, r in self.latest().items() if r.get("status") in FINISHED
                and (model is None or r.get("model") == model)}

    def stale_keys(self, model: str) -> set[str]:
        """Keys whose last row is finished but computed by other model sources."""
        return {k for k, r in self.latest().items() if r.get("status") in FINISHED and r.get("model") != model}

    def append(self, row: dict) -> None:
        row = {k: "" if v is None else v for k, v in row.items()}
        new = [k for k in row if k not in self.columns]
        self._rows.append({k: str(v) for k, v in row.items()})
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if new or not self.path.exists():
            self.columns += new
            tmp = self.path.with_suffix(".csv.tmp")
            with open(tmp, "w", newline="") as f:
                w = csv.DictWriter(f, fieldnames=self.columns, restval="")
                w.writeheader()
                w.writerows(self._rows)
            tmp.replace(self.path)
            return
        with open(self.path, "a", newline="") as f:
            csv.DictWriter(f, fieldnames=self.columns, restval="").writerow(row)
            f.flush()
            os.fsync(f.fileno())


# ---------------------------------------------------------------------- running
@dataclass
class SweepSummary:
    total: int
    skipped: int
    ran: int
    errors: int
    mismatches: int
    left: int
    output: Path
    plots: list
    summary_csv: Path | None
    wall_s: float


def _client(scheduler: str | None, workers: int | None, n: int):
    from dask.distributed import Client, LocalCluster
    if scheduler:
        try:
            return Client(scheduler, timeout="20s"), None
        except (OSError, TimeoutError, ValueError) as e:    # ValueError: a malformed address ("host:87x")
            raise SweepError(f"cannot reach the Dask scheduler {scheduler}: {e}") from None
    nw = max(1, min(workers or os.cpu_count() or 1, n))     # workers >= 1: checked by run_sweep
    # dashboard_address=None still takes Dask's port 8787 (and warns where another
    # cluster holds it, e.g. a second sweep on the machine); ":0" is a free port
    cluster = LocalCluster(n_workers=nw, threads_per_worker=1, processes=True, dashboard_address=":0",
                           silence_logs=logging.ERROR)
    return Client(cluster), cluster


def run_sweep(sweep: Sweep, *, scheduler: str | None = None, workers: int | None = None, limit: int | None = None,
              log=print, bar: bool | None = None, plots: bool = True) -> SweepSummary:
    """Run the points of ``sweep`` that are not finished in its table (at most ``limit``)."""
    t0 = time.time()
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
        raise SweepError(f"--workers must be an integer >= 1, not {workers!r}")
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 0):
        raise SweepError(f"--limit must be 0 or more, not {limit!r}")
    table = ResultTable(sweep.output)
    model = model_digest()
    done = table.finished_keys(model)
    points = sweep.points()
    keys = {point_key(p) for p in points}
    stale = len(keys & table.stale_keys(model))
    todo = [p for p in points if point_key(p) not in done]
    skipped = len(points) - len(todo)
    if limit is not None:
        todo = todo[:limit]
    if log:
        nw = max(1, min(workers or os.cpu_count() or 1, len(todo)))
        where = scheduler or f"a local Dask cluster ({nw} worker{'s' if nw != 1 else ''})"
        log(f"[sweep] {sweep.name}: {len(points)} points, {skipped} already done, {len(todo)} to run"
            + (f" ({stale} of them finished by other model sources: run again)" if stale else "")
            + (f" on {where}" if todo else "") + f"; results: {sweep.output} (model {model})")
    ran = errors = mismatches = 0
    foreign = set()
    if todo:
        client, cluster = _client(scheduler, workers, len(todo))
        futures = []
        try:
            from dask.distributed import as_completed
            futures = [client.submit(run_point, p, sweep.check, pure=False) for p in todo]
            with Progress("sweep", len(todo), log=log, bar=bar, interval=1.0) as prog:
                for fut in as_completed(futures):
                    row = fut.result()
                    table.append(row)
                    if row.get("model") != model and row.get("worker") not in foreign:
                        foreign.add(row.get("worker"))      # its rows stay stale: they would run every time
                        if log:
                            log(f"[sweep] warning: worker {row.get('worker')} runs other model sources (digest "
                                f"{row.get('model')}, here {model}): install the same checkout on every worker")
                    ran += 1
                    errors += row["status"] == "error"
                    mismatches += row["status"] == "mismatch"
                    what = f"{row['algo']} {row['mode']} on {row['graph']} ({row['gpu']})" + "".join(
                        f" {k.split('.', 1)[1] if k.startswith('param.') else k}={v}" for k, v in row.items()
                        if k.startswith(("param.", "option.", "gpu.")))
                    prog.step(f"{what}: {row['status']}" + (f" ({row['error']})" if row["error"] else ""),
                              important=row["status"] != "ok")
        except KeyboardInterrupt:
            for f in futures:
                f.cancel()
            if log:
                log(f"[sweep] interrupted: {ran} points recorded in {sweep.output}; run again to resume")
            raise
        finally:
            client.close()
            if cluster is not None:
                cluster.close()
    left = len([p for p in points if point_key(p) not in ResultTable(sweep.output).finished_keys(model)])
    figs, summary_csv = [], None
    if plots and sweep.output.exists():
        figs, summary_csv = plot_sweep(sweep, ResultTable(sweep.output).rows(), model=model)
    if log:
        log(f"[sweep] ran {ran} points ({errors} errors, {mismatches} mismatches), {left} left; "
            f"table {sweep.output}" + (f"; plots: {', '.join(str(f) for f in figs)}" if figs else ""))
    return SweepSummary(len(points), skipped, ran, errors, mismatches, left, sweep.output, figs, summary_csv,
                        round(time.time() - t0, 2))


# ---------------------------------------------------------------------- plots
#: Columns kept as text when a table is read back (a hex key or digest can look like a number).
_TEXT_COLUMNS = frozenset({"key", "model", "status", "graph", "algo", "mode", "gpu", "unit", "preset", "config",
                           "error", "worker", "finished", "check"})


def _value(s: str):
    if s is None or s == "":
        return None
    for conv in (int, float):
        try:
            return conv(s)
        except ValueError:
            pass
    if s in ("True", "False"):
        return s == "True"
    return s


def relative_times(sweep: Sweep, recs: list[dict]) -> None:
    """Set ``time_rel`` of every unit record: its time / the time of the record with
    the same graph, algorithm, mode, GPU and options whose [params] are those of
    ``sweep.relative_to`` (the other parameters equal), e.g. the GraphPEG paper's
    Tables 4-5 metric, time with N ALWT entries / time with an unlimited ALWT."""
    pk = [f"param.{k}" for k in sweep.params]
    fixed = ["graph", "algo", "mode", "gpu"] + [f"option.{k}" for k in sweep.options] + \
        [f"gpu.{k}" for k in sweep.gpu_params]
    index = {tuple(r.get(k) for k in fixed + pk): r for r in recs if r["unit"] != "baseline"}
    for r in recs:
        r["time_rel"] = None
        if r["unit"] == "baseline":
            continue
        want = {**{k: r.get(k) for k in pk}, **{f"param.{k}": v for k, v in sweep.relative_to.items()}}
        ref = index.get(tuple(r.get(k) for k in fixed) + tuple(want[k] for k in pk))
        t, t0 = r.get("time_us"), ref.get("time_us") if ref else None
        if isinstance(t, (int, float)) and isinstance(t0, (int, float)) and t0 > 0:
            r["time_rel"] = t / t0


def plot_sweep(sweep: Sweep, rows: list[dict], model: str | None = None) -> tuple[list[Path], Path | None]:
    """One PNG per swept column (``<output stem>-<column>.png``) with one panel per
    plotted metric (and value of the ``panels_by`` columns), one line per
    graph/algorithm/mode (and GPU; mean over the other swept columns); and ``<output stem>-summary.csv``
    with the normalised metrics. With ``model``, only rows computed by model
    sources of that digest are used (never old results mixed with new ones)."""
    from .figures import line_figure
    from .render import csv_columns
    latest = {}
    for r in rows:
        latest[r["key"]] = r
    keys = {point_key(p) for p in sweep.points()}
    recs = [{k: v if k in _TEXT_COLUMNS else _value(v) for k, v in r.items()} for r in latest.values()
            if r["key"] in keys and r.get("status") in FINISHED and (model is None or r.get("model") == model)]
    for r in recs:
        for k in ("graph", "algo", "mode", "gpu", "unit"):
            r[k] = str(r.get(k))
    if not recs:
        return [], None
    kf = ["graph", "algo", "gpu"] + [f"option.{k}" for k in sweep.options] + [f"gpu.{k}" for k in sweep.gpu_params]
    pk = [f"param.{k}" for k in sweep.params]
    if any(r != "baseline" for r in sweep.reference_modes):
        kf += pk                        # a reference that takes the unit's configuration runs beside each
    # ... and one that does not (GraphPEG's lb; the MFF's pull, which also drops the unit's own
    # options) runs once: every configuration's rows compare with it
    normalise(recs, lambda u, m: profile(u).reference_for(m), key_fields=tuple(kf),
              loose_fields=tuple(pk) + tuple(f"option.{k}" for k in sweep.options),
              workload_of=lambda u: "workload" in profile(u).figures)
    if sweep.relative_to:
        relative_times(sweep, recs)
    out_dir = sweep.output.parent
    summary = out_dir / f"{sweep.output.stem}-summary.csv"
    cols = csv_columns(recs, ("key", "status", "graph", "algo", "mode", "gpu", "unit", "preset")
                       + tuple(f"param.{k}" for k in sweep.params) + tuple(f"option.{k}" for k in sweep.options)
                       + tuple(f"gpu.{k}" for k in sweep.gpu_params) + (("time_rel",) if sweep.relative_to else ())
                       + ("speedup", "time_norm", "workload_left", "time_us"))
    with open(summary, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=cols, restval="")
        w.writeheader()
        w.writerows([{k: "" if r.get(k) is None else r.get(k) for k in cols} for r in recs])
    figs = []
    unit_recs = [r for r in recs if r["unit"] != "baseline" and r["mode"] not in sweep.reference_modes]
    multi_gpu = len(sweep.gpus) > 1
    rel = ", ".join(f"{k}={v}" for k, v in sweep.relative_to.items())
    ylabels = {"speedup": f"speedup over {sweep.reference_text}", "time_norm": f"time / {sweep.reference_text}",
               "time_rel": f"time / time at {rel}", "workload_left": "GPU workload left",
               "sectors_per_request": "sectors per warp request",
               "contract_sectors_per_request": "contraction sectors per request", "time_us": "estimated time (us)"}

    def at(r, col, x) -> bool:
        fs = sweep.column(col)[0]
        return tuple(r.get(f) for f in fs) == (x if len(fs) > 1 else (x,))

    for col in sweep.swept:
        _, xs, xlabels = sweep.column(col)
        split = [c for c in sweep.panels_by if c != col]           # one panel per value of these
        combos = [[]]
        for c in split:
            _, cx, cl = sweep.column(c)
            combos = [prev + [(c, x, lab)] for prev in combos for x, lab in zip(cx, cl)]

        def label_of(r, col=col):
            return f"{r['graph']} {r['algo']} {r['mode']}" + (f" {r['gpu']}" if multi_gpu and col != "gpu" else "")
        labels = list(dict.fromkeys(label_of(r) for r in unit_recs))   # the same order (styles) in every panel
        panels = []
        for metric in sweep.plot_metrics:
            for combo in combos:
                sel = [r for r in unit_recs if all(at(r, c, x) for c, x, _ in combo)]
                series = {}
                for label in labels:
                    ys = []
                    for x in xs:
                        vals = [r[metric] for r in sel if label_of(r) == label and at(r, col, x)
                                and isinstance(r.get(metric), (int, float))]
                        ys.append(sum(vals) / len(vals) if vals else None)
                    series[label] = ys
                panels.append({"metric": metric, "ylabel": ylabels.get(metric, metric), "series": series,
                               "hline": 1.0 if metric in ("speedup", "time_norm", "time_rel") else None,
                               "title": ", ".join(f"{c.split('.', 1)[-1]} = {lab}" for c, _, lab in combo)})
        others = [c for c in sweep.swept if c not in (col, "gpu") and c not in split]   # GPU: in the labels
        name = col.split(".", 1)[-1]
        fields = sweep.column(col)[0]
        xlabel = name if len(fields) == 1 else f"{name} ({' / '.join(f.split('.', 1)[-1] for f in fields)})"
        title = f"{sweep.name}: {sweep.unit} {name}" + (
            f" (mean over {', '.join(c.split('.', 1)[-1] for c in others)})" if others else "")
        logx = all(isinstance(x, int) and not isinstance(x, bool) and x > 0 and x & (x - 1) == 0 for x in xs) \
            and len(xs) > 2
        path = out_dir / f"{sweep.output.stem}-{name}.png"
        line_figure(path, name=f"{sweep.name}-{col}", title=title, xlabel=xlabel, panels=panels,
                    x=list(xs) if len(fields) == 1 else xlabels, logx=logx)
        figs.append(path)
    return figs, summary
