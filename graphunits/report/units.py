"""What the report and the sweeps know about each unit, and how they find the
units that exist.

Discovery is dynamic: a unit is *available* for an algorithm when its golden
model registers a mode for it (:func:`golden.algorithms.modes_for`); the mode's
class lives in ``golden/<unit>/algorithms.py``, which names the unit. So a new
unit appears in reports and sweeps as soon as its modes are registered, with a
generic profile (:func:`profile`); the unit's own profile
(``graphunits/<unit>/profile.py``, named by its descriptor's ``profile``) adds
what only a person can say: the paper's GPU and figures (claims built with
:mod:`graphunits.report.claims`); the configuration that the algorithms take and
the RTL that implements it come from the descriptor.

Conventions a unit's modes follow so that the generic report reads them
(docs/usage.md, "Adding a unit to the reports"):

* time: ``RunResult.extra["time"]["total_s"]`` or ``["total_cycles"]`` (GPU
  clock), or ``extra[unit]["time"]["total_s"]``; otherwise the GPU model's time;
* statistics: ``extra[unit]``, a dict; its numeric entries become columns
  ``<unit>_<name>``; a dict ``extra[unit]["requests"]`` of request size (bytes)
  to count is the unit's request-size histogram;
* configuration: ``run_algorithm(..., <option>=Config)`` (:attr:`UnitProfile.option`).
"""
from __future__ import annotations

import importlib
import math
from dataclasses import dataclass, field, replace
from typing import Callable

__all__ = ["known_units", "unit_names", "UnitProfile", "PaperClaim", "MetricFigure", "profile", "available_units",
           "unit_of_mode", "unit_modes", "RunSet", "gmean", "FIGURE_KINDS"]

#: The figure kinds a profile names as strings (a :class:`MetricFigure` adds a unit's own).
FIGURE_KINDS = ("time", "coalescing", "workload", "requests")

#: The units of the project (README), in report order; others are added when discovered.
def known_units() -> list[str]:
    """The units' names in their descriptors' order (golden/units.py)."""
    from golden.units import units
    return list(units())


def unit_names(found: dict | None = None) -> list[str]:
    """Every unit a report may name: the descriptors' and, after them, any other
    unit with a registered mode (``found``: :func:`unit_modes`)."""
    known = known_units()
    found = unit_modes() if found is None else found
    return known + sorted(u for u in found if u not in known)


def gmean(values) -> float | None:
    vals = [v for v in values if v is not None and v > 0 and not math.isnan(v)]
    if not vals:
        return None
    return math.exp(sum(math.log(v) for v in vals) / len(vals))


def mean(values) -> float | None:
    vals = [v for v in values if v is not None and not (isinstance(v, float) and math.isnan(v))]
    return sum(vals) / len(vals) if vals else None


class RunSet:
    """The run records of a report, with the selections the paper figures need."""

    def __init__(self, records: list[dict]):
        self.records = list(records)

    def select(self, **match) -> list[dict]:
        return [r for r in self.records if all(r.get(k) == v for k, v in match.items())]

    def values(self, metric: str, **match) -> list[float]:
        return [r[metric] for r in self.select(**match) if isinstance(r.get(metric), (int, float))]

    def describe(self, **match) -> str:
        rs = self.select(**match)
        if not rs:
            return "no runs"
        graphs = sorted({r["graph"] for r in rs})
        return f"{len(rs)} run{'s' if len(rs) != 1 else ''} on {', '.join(graphs)}"


@dataclass(frozen=True)
class PaperClaim:
    """One figure a paper states, and how ours is computed from the runs.

    Parameters
    ----------
    label : str
        What is measured.
    paper : str
        The paper's statement (as written, with its section).
    value : float or None
        The paper's number in the unit of ``kind`` (the low end of a range);
        None: a statement without a number (``direction`` says which way).
    ours : callable or None
        ``RunSet -> (value or None, how)``; None: the model does not measure it (yet).
    kind : str
        ``"share"`` (0..1, printed as %), ``"x"`` (a factor), ``"change"`` (a relative
        change, printed as %), ``"number"``.
    note : str
        Known differences of setup (graphs, scaled parameters) that make ours differ.
    value_hi : float or None
        The high end of a range (``value`` .. ``value_hi``): ours inside it counts as
        ratio 1.
    direction : int
        For a statement without a number: +1 (above 1 / positive), -1.
    select : dict or None
        The runs behind the figure (``RunSet.select`` keywords): their times and
        bounds are the row's measured reason (graphunits/report/fidelity.py).
    metric : str or None
        With ``select``: list this record column per run instead of the times.
    """

    label: str
    paper: str
    value: float | None
    ours: Callable | None = None
    kind: str = "number"
    note: str = ""
    value_hi: float | None = None
    direction: int = 0
    select: dict | None = None
    metric: str | None = None


@dataclass(frozen=True)
class MetricFigure:
    """A bar figure of one of the unit's own columns (``<unit>_<name>``), one bar
    per unit mode and graph/algorithm (the baseline has no unit columns).

    Parameters
    ----------
    name : str
        File name stem (``<name>_<unit>.png``).
    metric : str
        The record column plotted.
    title, ylabel : str
    hline : float or None
        A reference line (1.0 for a ratio, 0.0 for a change).
    """

    name: str
    metric: str
    title: str
    ylabel: str
    hline: float | None = None

    def to_dict(self) -> dict:
        return {"kind": "metric", "name": self.name, "metric": self.metric, "title": self.title,
                "ylabel": self.ylabel, "hline": self.hline}


@dataclass(frozen=True)
class UnitProfile:
    """What the report knows about a unit.

    Parameters
    ----------
    name, title, source : str
        Unit name (``golden/<name>``), a title, the paper.
    gpu : str
        The GPU preset of the paper's evaluation (used unless ``--gpu`` is given).
    reference : str
        The mode that the unit's times are normalised to (``baseline``, or e.g. ``uvm``).
    config : str or None
        ``"module:Class"`` of the configuration the algorithms take through ``option``.
    option : str or None
        The ``run_algorithm`` keyword that takes that configuration.
    presets : dict
        GPU preset -> configuration preset of the unit (default: ``default``).
    hw : tuple
        ``hw.registry`` units that implement it (area).
    area_preset : str or None
        The preset ``--area`` synthesizes when none is named (None: the GPU's
        preset), e.g. the IRU's ``default``, one memory partition, which the
        paper's area figure is for, while its runs use all four (``gtx980``).
    area_presets : dict
        Run preset -> the preset whose RTL ``--area`` synthesizes for it, for
        presets the RTL does not build (the SCU's hashes in memory: ``gtx980``
        is sized by ``gtx980-sim``, the same pipeline with on-chip hashes).
    figures : tuple
        Figures of the unit's section: ``time``, ``coalescing``, ``workload`` (GPU
        workload left: only for units whose modes count the GPU's node and edge
        frontier as the baseline does and shrink it, the SCU), ``requests``, or a
        :class:`MetricFigure` of one of the unit's columns.
    columns : tuple
        Extra table columns: (header, record key).
    claims : tuple of PaperClaim
    time_floor : callable or None
        ``(run record) -> (cycles, how) or None``: a floor on the unit's own cycles
        in that run from the paper's parameters alone (e.g. the SCU's pipeline
        width), shown beside the measured reason of its time figures; a floor from
        the model's own parameters where the paper gives none (the MFF's rate) is
        ``(cycles, how, "the model's parameters", text after its time)``.

    Whether a unit has RTL in the loop is not said here: ``sim.cosim.cosim_units()``
    is the registry (``graphunits report --cosim`` runs every unit it lists).
    """

    name: str
    title: str
    source: str = ""
    gpu: str = "gtx980"
    reference: str = "baseline"
    config: str | None = None
    option: str | None = None
    presets: dict = field(default_factory=dict)
    hw: tuple = ()
    area_preset: str | None = None
    area_presets: dict = field(default_factory=dict)
    figures: tuple = ("time", "coalescing", "workload", "requests")
    columns: tuple = ()
    claims: tuple = ()
    time_floor: Callable | None = None
    #: Modes that compare with another mode than ``reference`` (the MFF's push BFS,
    #: ``mff-push``, with ``push``): mode -> its reference mode.
    mode_references: dict = field(default_factory=dict)

    def reference_for(self, mode: str) -> str:
        """The mode that ``mode``'s speedup and normalised figures are over."""
        return self.mode_references.get(mode, self.reference)

    def reference_modes(self) -> tuple:
        """Every reference mode of the unit's modes, ``reference`` first."""
        return tuple(dict.fromkeys((self.reference, *self.mode_references.values())))

    def config_class(self):
        """The configuration class, or None (unit without one, or not importable yet)."""
        if not self.config:
            return None
        mod, _, cls = self.config.partition(":")
        try:
            return getattr(importlib.import_module(mod), cls)
        except (ImportError, AttributeError):
            return None

    def preset_for(self, gpu: str) -> str:
        return self.presets.get(gpu, "default")

    def figure_specs(self) -> list:
        """``figures`` as JSON-able values (kind names, and dicts for :class:`MetricFigure`)."""
        return [f.to_dict() if isinstance(f, MetricFigure) else f for f in self.figures]



def profile(unit: str) -> UnitProfile:
    """The profile of ``unit``: the one its descriptor names (``profile``,
    ``graphunits/<unit>/profile.py``: figures, claims, presets per GPU) with what
    the descriptor declares (golden/units.py: configuration, option, RTL blocks),
    or a generic one (its best mode's speedup and coalescing)."""
    from golden.units import resolve, units

    from .claims import best_speedup, generic_coalescing
    d = units().get(unit)
    p = resolve(d.profile) if d is not None and d.profile else None
    if p is None:
        title, source = (f"{d.title}", d.paper) if d is not None else (unit.upper(), "")
        p = UnitProfile(unit, title, source,
                        claims=(PaperClaim("speedup (best mode)", "see the paper", None, best_speedup(unit), "x"),
                                PaperClaim("coalescing improvement (best mode)", "see the paper", None,
                                           generic_coalescing(unit), "change")))
    if d is not None:
        return replace(p, config=p.config or d.config, option=p.option or d.preset_option,
                       hw=p.hw or tuple(b.name for b in d.rtl))
    return p


# ---------------------------------------------------------------------- discovery
def unit_of_mode(algo: str, mode: str) -> str:
    """The unit whose golden model implements ``mode`` (``"baseline"`` for the
    baseline algorithms): the package ``golden/<unit>/`` of the mode's class."""
    from golden.algorithms import MODES
    from golden.units import units
    cls = MODES[(algo, mode)]
    for d in units().values():          # the unit whose descriptor's golden model defines it
        if d.implements(cls):
            return d.name
    parts = cls.__module__.split(".")
    if len(parts) >= 2 and parts[0] == "golden" and parts[1] != "algorithms":
        return parts[1]
    return "baseline" if mode == "baseline" else mode.split("-")[0]


def unit_modes() -> dict[str, dict[str, list[str]]]:
    """``{unit: {algo: [modes]}}`` for every registered mode (baseline excluded)."""
    from golden.algorithms import ALGORITHMS, MODES, modes_for
    for algo in ALGORITHMS:
        modes_for(algo)                 # imports the units' golden models (they register their modes)
    out: dict[str, dict[str, list[str]]] = {}
    for (algo, mode) in list(MODES):    # registration order: a unit's modes as its author listed them
        u = unit_of_mode(algo, mode)
        if u != "baseline":
            out.setdefault(u, {}).setdefault(algo, []).append(mode)
    return out


def available_units() -> list[str]:
    """Units with at least one registered mode: the known ones in order, then others."""
    found = unit_modes()
    return [u for u in unit_names(found) if u in found]
