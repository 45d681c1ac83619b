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

    [params]                           # fields of the unit's configuration; a list is swept
    width = [1, 2, 4, 8]

    [options]                          # run_algorithm options; a list is swept
    edge_bytes = [4, 8]

Every point is keyed by a stable hash of its parameters (:func:`point_key`); a
point whose row in the table has status ``ok`` or ``mismatch`` is skipped when
the sweep runs again, so an interrupted sweep (Ctrl-C, a killed machine,
``--limit``) resumes where it stopped. Rows are appended (and flushed) as points
finish: CSV rather than Parquet because a CSV row can be appended in place
without rewriting the file or adding pyarrow (~40 MB) to the dependencies.
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
from .units import KNOWN_UNITS, profile, unit_modes, unit_of_mode

__all__ = ["SweepError", "Sweep", "load_sweep", "point_key", "run_point", "run_sweep", "ResultTable",
           "plot_sweep", "relative_times", "SweepSummary", "SWEEP_KEYS", "PLOT_METRICS"]

#: Keys of the [sweep] table.
SWEEP_KEYS = ("name", "description", "unit", "preset", "graphs", "algos", "modes", "gpu", "output", "reference",
              "check", "plot_metrics", "relative_to")
TABLES = ("sweep", "params", "options")
#: Metrics a plot can show (plus any ``<unit>_...`` column of the unit).
PLOT_METRICS = ("speedup", "time_norm", "time_rel", "time_us", "workload_left", "gpu_workload", "sectors_per_request",
                "contract_sectors_per_request", "sectors", "mem_instructions", "iterations")
#: Statuses of a finished point (skipped on resume); ``error`` points run again.
FINISHED = ("ok", "mismatch")
#: Bump when the meaning of a point changes (every key changes with it).
POINT_VERSION = 1


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

    @property
    def reference_mode(self) -> str:
        return profile(self.unit).reference

    @property
    def swept(self) -> list[str]:
        """Columns that take more than one value (one plot each)."""
        out = [f"param.{k}" for k, v in self.params.items() if len(v) > 1]
        out += [f"option.{k}" for k, v in self.options.items() if len(v) > 1]
        if len(self.gpus) > 1:
            out.append("gpu")
        return out

    def points(self) -> list[dict]:
        """Every point of the grid, reference points first for each graph/algo."""
        from golden.algorithms import MODES
        pnames, onames = list(self.params), list(self.options)
        pcombos = [dict(zip(pnames, c)) for c in itertools.product(*(self.params[k] for k in pnames))]
        ocombos = [dict(zip(onames, c)) for c in itertools.product(*(self.options[k] for k in onames))]
        ref = self.reference_mode
        out = []
        for gpu in self.gpus:
            for graph in self.graphs:
                for algo in self.algos:
                    modes = [m for m in self.modes if (algo, m) in MODES and m != ref]
                    if self.reference and (algo, ref) in MODES:
                        modes = [ref] + modes
                    for mode in modes:
                        base = mode == "baseline"
                        for pc in ([{}] if base else pcombos):
                            for oc in ocombos:
                                out.append({"v": POINT_VERSION, "unit": "baseline" if base else self.unit,
                                            "preset": None if base else self.presets.get(gpu, self.preset),
                                            "params": pc, "options": oc,
                                            "graph": graph, "algo": algo, "mode": mode, "gpu": gpu})
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
        doc = tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as e:
        raise SweepError(f"{path}: not valid TOML ({e})") from None
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
    names = list(KNOWN_UNITS) + sorted(u for u in found if u not in KNOWN_UNITS)
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
                raise GraphError(f"graph file {g} does not exist (nor is it kron:scale=N, urand:scale=N, grid:RxC)")
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
    pvals = {}
    for k, v in params.items():
        if k not in fields:
            raise _err(path, f"params.{k}", f"{cls.__name__} has no parameter {k!r}; allowed: {', '.join(fields)}")
        vals = _list(path, f"params.{k}", v, None)
        for x in vals:
            if isinstance(x, (dict, list)):
                raise _err(path, f"params.{k}", f"values must be numbers, strings or booleans, not {x!r}")
            for p in dict.fromkeys(presets.values()):
                try:
                    cls.preset(p, **{k: x})
                except ConfigError as e:
                    raise _err(path, f"params.{k}", str(e)) from None
        pvals[k] = vals
    for combo in itertools.product(*pvals.values()) if pvals else ():
        for p in dict.fromkeys(presets.values()):
            try:
                cls.preset(p, **dict(zip(pvals, combo)))
            except ConfigError as e:
                raise _err(path, "params", f"the combination {dict(zip(pvals, combo))}: {e}") from None

    # relative_to: the [params] point that time_rel divides by
    rel = sw.get("relative_to", {})
    if not isinstance(rel, dict):
        raise _err(path, "sweep.relative_to", f"must be a table of [params] values, e.g. "
                                              f"{{ {next(iter(pvals), 'width')} = 8 }}, not {rel!r}")
    for k, v in rel.items():
        if k not in pvals:
            raise _err(path, f"sweep.relative_to.{k}", f"not a field of [params]; [params] fields: "
                                                       f"{', '.join(pvals) or 'none'}")
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
        vals = _list(path, f"options.{k}", v, None)
        for x in vals:
            if isinstance(x, (dict, list)):
                raise _err(path, f"options.{k}", f"values must be numbers, strings or booleans, not {x!r}")
        ovals[k] = vals

    # the rest
    name = sw.get("name", path.stem)
    if not isinstance(name, str) or not name or "/" in name:
        raise _err(path, "sweep.name", f"must be a non-empty name without '/', not {name!r}")
    out = output or sw.get("output", f"build/sweeps/{name}.csv")
    if not isinstance(out, str) or not out.endswith(".csv"):
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
    return Sweep(path, name, unit, preset, graphs, algos, modes, gpus, pvals, ovals, Path(out),
                 sw.get("reference", True), sw.get("check", True), pm, desc, skipped, presets, dict(rel))


# ---------------------------------------------------------------------- one point (on a worker)
@functools.lru_cache(maxsize=8)
def _graph(spec: str, weighted: bool):
    from golden.graphs import load_graph
    return load_graph(spec, weighted=weighted)


@functools.lru_cache(maxsize=8)
def _reference(spec: str, algo: str, source):
    from ..reference import reference
    return reference(_graph(spec, algo == "sssp"), algo, source=source)


def _json_scalar(v):
    return v if isinstance(v, (int, float, str, bool)) or v is None else str(v)


def run_point(point: dict, check: bool = True) -> dict:
    """Run one point and return its table row (never raises: failures are rows with
    status ``error``). Runs on a Dask worker; everything it needs is in ``point``."""
    from golden.algorithms import run_algorithm
    from golden.gpu import GPUConfig
    t0 = time.time()
    row = {"key": point_key(point), "status": "error", "graph": point["graph"], "algo": point["algo"],
           "mode": point["mode"], "unit": point["unit"], "gpu": point["gpu"], "preset": point["preset"] or ""}
    row.update({f"param.{k}": v for k, v in point["params"].items()})
    row.update({f"option.{k}": v for k, v in point["options"].items()})
    trace = os.environ.get("GRAPHUNITS_SWEEP_TRACE")
    if trace:                                   # tests count executions per key
        with open(trace, "a") as f:
            f.write(row["key"] + "\n")
    try:
        g = _graph(point["graph"], point["algo"] == "sssp")
        gcfg = GPUConfig.preset(point["gpu"])
        opts = dict(point["options"])
        config = None
        if point["unit"] != "baseline":
            prof = profile(point["unit"])
            cls = prof.config_class()
            if cls is not None and prof.option:
                config = cls.preset(point["preset"], **point["params"])
                opts[prof.option] = config
        r = run_algorithm(g, point["algo"], point["mode"], gpu=gcfg, **opts)
        status, chk = "ok", None
        if check:
            from ..reference import compare
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
        if self.path.exists():
            text = self.path.read_text()
            if text and not text.endswith("\n"):
                text = text[:text.rfind("\n") + 1]       # a row cut short by a kill
                self.path.write_text(text)
            rd = csv.DictReader(io.StringIO(text))
            self.columns = list(rd.fieldnames or [])
            self._rows = [dict(r) for r in rd if r.get("key")]

    def rows(self) -> list[dict]:
        return list(self._rows)

    def latest(self) -> dict[str, dict]:
        """The last row of each key."""
        out = {}
        for r in self._rows:
            out[r["key"]] = r
        return out

    def finished_keys(self) -> set[str]:
        return {k for k, r in self.latest().items() if r.get("status") in FINISHED}

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
        except (OSError, TimeoutError) as e:
            raise SweepError(f"cannot reach the Dask scheduler {scheduler}: {e}") from None
    nw = max(1, min(workers or os.cpu_count() or 1, n))
    cluster = LocalCluster(n_workers=nw, threads_per_worker=1, processes=True, dashboard_address=None,
                           silence_logs=logging.ERROR)
    return Client(cluster), cluster


def run_sweep(sweep: Sweep, *, scheduler: str | None = None, workers: int | None = None, limit: int | None = None,
              log=print, bar: bool | None = None, plots: bool = True) -> SweepSummary:
    """Run the points of ``sweep`` that are not finished in its table (at most ``limit``)."""
    t0 = time.time()
    table = ResultTable(sweep.output)
    done = table.finished_keys()
    points = sweep.points()
    todo = [p for p in points if point_key(p) not in done]
    skipped = len(points) - len(todo)
    if limit is not None:
        if limit < 0:
            raise SweepError(f"--limit must be 0 or more, not {limit}")
        todo = todo[:limit]
    if log:
        where = scheduler or f"a local Dask cluster ({max(1, min(workers or os.cpu_count() or 1, len(todo)))} workers)"
        log(f"[sweep] {sweep.name}: {len(points)} points, {skipped} already done, {len(todo)} to run"
            + (f" on {where}" if todo else "") + f"; results: {sweep.output}")
    ran = errors = mismatches = 0
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
                    ran += 1
                    errors += row["status"] == "error"
                    mismatches += row["status"] == "mismatch"
                    what = f"{row['algo']} {row['mode']} on {row['graph']} ({row['gpu']})" + "".join(
                        f" {k[6:]}={v}" for k, v in row.items() if k.startswith("param."))
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
    left = len([p for p in points if point_key(p) not in ResultTable(sweep.output).finished_keys()])
    figs, summary_csv = [], None
    if plots and sweep.output.exists():
        figs, summary_csv = plot_sweep(sweep, ResultTable(sweep.output).rows())
    if log:
        log(f"[sweep] ran {ran} points ({errors} errors, {mismatches} mismatches), {left} left; "
            f"table {sweep.output}" + (f"; plots: {', '.join(str(f) for f in figs)}" if figs else ""))
    return SweepSummary(len(points), skipped, ran, errors, mismatches, left, sweep.output, figs, summary_csv,
                        round(time.time() - t0, 2))


# ---------------------------------------------------------------------- plots
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
    fixed = ["graph", "algo", "mode", "gpu"] + [f"option.{k}" for k in sweep.options]
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


def plot_sweep(sweep: Sweep, rows: list[dict]) -> tuple[list[Path], Path | None]:
    """One PNG per swept column (``<output stem>-<column>.png``) with one panel per
    plotted metric, one line per graph/algorithm/mode (mean over the other swept
    columns); and ``<output stem>-summary.csv`` with the normalised metrics."""
    from .figures import line_figure
    from .render import csv_columns
    latest = {}
    for r in rows:
        latest[r["key"]] = r
    keys = {point_key(p) for p in sweep.points()}
    recs = [{k: _value(v) for k, v in r.items()} for r in latest.values() if r["key"] in keys
            and r.get("status") in FINISHED]
    for r in recs:
        for k in ("graph", "algo", "mode", "gpu", "unit"):
            r[k] = str(r.get(k))
    if not recs:
        return [], None
    kf = ["graph", "algo", "gpu"] + [f"option.{k}" for k in sweep.options]
    if sweep.reference_mode != "baseline":
        kf += [f"param.{k}" for k in sweep.params]
    normalise(recs, lambda u: profile(u).reference, key_fields=tuple(kf),
              workload_of=lambda u: "workload" in profile(u).figures)
    if sweep.relative_to:
        relative_times(sweep, recs)
    out_dir = sweep.output.parent
    summary = out_dir / f"{sweep.output.stem}-summary.csv"
    cols = csv_columns(recs, ("key", "status", "graph", "algo", "mode", "gpu", "unit", "preset")
                       + tuple(f"param.{k}" for k in sweep.params) + tuple(f"option.{k}" for k in sweep.options)
                       + (("time_rel",) if sweep.relative_to else ()) + ("speedup", "time_norm", "workload_left",
                                                                          "time_us"))
    with open(summary, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=cols, restval="")
        w.writeheader()
        w.writerows([{k: "" if r.get(k) is None else r.get(k) for k in cols} for r in recs])
    figs = []
    unit_recs = [r for r in recs if r["unit"] != "baseline" and r["mode"] != sweep.reference_mode]
    multi_gpu = len(sweep.gpus) > 1
    for col in sweep.swept:
        xs = sweep.gpus if col == "gpu" else (sweep.params[col[6:]] if col.startswith("param.")
                                               else sweep.options[col[7:]])
        panels = []
        for metric in sweep.plot_metrics:
            series = {}
            for r in unit_recs:
                label = f"{r['graph']} {r['algo']} {r['mode']}" + (f" {r['gpu']}" if multi_gpu and col != "gpu" else "")
                series.setdefault(label, {})
            for label in series:
                ys = []
                for x in xs:
                    vals = [r[metric] for r in unit_recs
                            if f"{r['graph']} {r['algo']} {r['mode']}" + (f" {r['gpu']}" if multi_gpu and col != "gpu"
                                                                         else "") == label
                            and r.get(col) == x and isinstance(r.get(metric), (int, float))]
                    ys.append(sum(vals) / len(vals) if vals else None)
                series[label] = ys
            rel = ", ".join(f"{k}={v}" for k, v in sweep.relative_to.items())
            ylabel = {"speedup": f"speedup over {sweep.reference_mode}", "time_norm": f"time / {sweep.reference_mode}",
                      "time_rel": f"time / time at {rel}",
                      "workload_left": "GPU workload left", "sectors_per_request": "sectors per warp request",
                      "contract_sectors_per_request": "contraction sectors per request",
                      "time_us": "estimated time (us)"}.get(metric, metric)
            panels.append({"metric": metric, "ylabel": ylabel, "series": series,
                           "hline": 1.0 if metric in ("speedup", "time_norm", "time_rel") else None})
        others = [c for c in sweep.swept if c not in (col, "gpu")]          # the GPU is in the line labels
        title = f"{sweep.name}: {sweep.unit} {col.split('.', 1)[-1]}" + (
            f" (mean over {', '.join(c.split('.', 1)[-1] for c in others)})" if others else "")
        logx = all(isinstance(x, int) and not isinstance(x, bool) and x > 0 and x & (x - 1) == 0 for x in xs) \
            and len(xs) > 2
        path = out_dir / f"{sweep.output.stem}-{col.split('.', 1)[-1]}.png"
        line_figure(path, name=f"{sweep.name}-{col}", title=title, xlabel=col.split(".", 1)[-1], panels=panels,
                    x=list(xs), logx=logx)
        figs.append(path)
    return figs, summary
