"""Unit descriptors: what each unit is, declared once (docs/adding-a-unit.md).

A unit's descriptor lives in its own package, ``golden/<unit>/descriptor.py``, as
``UNIT = UnitDescriptor(...)``; the registries of the other layers are derived
from the descriptors: the RTL that ``graphunits verilog`` generates
(:mod:`hw.registry`), the algorithm modes and the option names they read
(:mod:`golden.algorithms`), the RTL-in-the-loop runs (:func:`sim.cosim.cosim_units`),
the ``run`` command's ``--<unit>-preset`` options and ``graphunits units``, and
the report's list of units. Objects of higher layers are named as
``"module:Name"`` strings and imported only when used, so golden/ never imports
hw/ or sim/. :func:`register_unit` adds a descriptor defined elsewhere (a test's
toy unit, a plug-in).
"""
from __future__ import annotations

import importlib
import importlib.util
import sys
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["RTLBlock", "AreaClaim", "UnitDescriptor", "register_unit", "unregister_unit", "units", "unit_descriptor",
           "resolve", "UnitError"]


class UnitError(KeyError):
    """No unit of that name."""

    def __str__(self) -> str:
        return str(self.args[0])


def resolve(path: str):
    """``"package.module:Name"`` -> the object (imported now)."""
    mod, _, name = path.partition(":")
    obj = importlib.import_module(mod)
    for part in name.split(".") if name else ():
        obj = getattr(obj, part)
    return obj


@dataclass(frozen=True)
class RTLBlock:
    """A generated RTL block: ``graphunits verilog --unit NAME``. ``config`` is the
    ``"module:Class"`` of its configuration (golden/), ``component`` that of the
    Amaranth component built from a configuration (hw/)."""

    name: str
    config: str
    component: str
    doc: str


@dataclass(frozen=True)
class AreaClaim:
    """An area (or storage) figure of the unit's paper and the preset that models
    it: a row of ``graphunits area``'s comparison (:mod:`synth.compare`, whose
    ``PaperFigure`` documents the fields; ``why`` is formatted there with our
    figures)."""

    label: str
    preset: str
    metric: str
    value: float | None
    units: str
    source: str
    why: str
    node: int | None = None
    scope: str | None = None
    paper_kb: float | None = None
    aside: str | None = None


@dataclass(frozen=True)
class UnitDescriptor:
    """One unit, declared once.

    name : the package name, ``golden/<name>``, ``hw/<name>``...; title : its
    short name (``SCU``); paper : the paper (and section) it implements;
    order : where it is listed (the built-in units 10, 20...; others after).
    config : ``"module:Class"`` of the configuration that its algorithm modes
    take (the ``run`` option ``preset_option`` receives a preset name of it);
    tlm : ``"module:Class"`` of its transaction-level model.
    algorithms : the module that registers its algorithm modes when imported;
    options : class name in that module -> the algorithm options it reads
    (merged along each mode class's MRO: :meth:`golden.algorithms.Algorithm.accepted_options`).
    preset_option : the algorithm option that takes the configuration (a preset
    name or a configuration); None: no such option. preset_flag : whether the
    ``run`` command gets ``--<preset_option>-preset`` for it (EMOGI's link has
    its own ``--pcie``).
    default_preset : the preset a run uses when none is named, in words (help).
    unit_attr : a mode class whose attribute of that name is False runs without
    the unit (MFF's pull modes: ``use_mff``); such modes are not the unit's.
    rtl : the RTL blocks it generates. cosim : ``"module:NAME"`` of its
    :class:`sim.cosim.CosimUnit` (RTL in the loop), or None. demo :
    ``"module:function"`` of its step of ``graphunits demo``
    (``graphunits/<unit>/demo.py``: ``demo(sims, quick, step) -> failures``), or
    None (the demo then runs its RTL in the loop on a tiny graph). profile :
    ``"module:NAME"`` of its report profile (``graphunits/<unit>/profile.py``: the
    paper's claims, figures, presets per GPU), or None (a generic one).
    area_claims : the paper's area and storage figures (:class:`AreaClaim`).
    fidelity : the paper's setup that ``benchmarks/fidelity.py`` runs: ``gpus``
    (presets), ``graphs`` resembling its datasets, smaller ``quick`` ones, the
    datasets at the paper's size where a run fits in an hour (``paper``,
    optional), ``algos``; None: not in the fidelity table.
    run_rows : ``"module:function"`` of the rows its modes add to ``graphunits
    run``'s table (``graphunits/<unit>/summary.py``: ``rows(result) -> [[label,
    value], ...]``, from ``result.extra``), or None.
    """

    name: str
    title: str
    paper: str
    order: int = 1000
    config: str | None = None
    tlm: str | None = None
    algorithms: str | None = None
    options: dict = field(default_factory=dict)
    preset_option: str | None = None
    preset_flag: bool = True
    default_preset: str = "default"
    unit_attr: str | None = None
    rtl: tuple = ()
    cosim: str | None = None
    demo: str | None = None
    profile: str | None = None
    area_claims: tuple = ()
    fidelity: dict | None = None
    run_rows: str | None = None

    def __post_init__(self):
        if not self.name.isidentifier() or self.name != self.name.lower():
            raise ValueError(f"unit name {self.name!r} must be a lower-case Python identifier (its package's name)")
        for p in ("config", "tlm", "cosim", "demo", "profile", "run_rows"):
            v = getattr(self, p)
            if v is not None and ":" not in v:
                raise ValueError(f"unit {self.name}: {p} must be 'module:Name', not {v!r}")
        for b in self.rtl:
            if not isinstance(b, RTLBlock):
                raise ValueError(f"unit {self.name}: rtl entries must be RTLBlock, not {b!r}")
        for c in self.area_claims:
            if not isinstance(c, AreaClaim):
                raise ValueError(f"unit {self.name}: area_claims entries must be AreaClaim, not {c!r}")
        if self.fidelity is not None:
            missing = {"gpus", "graphs", "quick", "algos"} - set(self.fidelity)
            if missing:
                raise ValueError(f"unit {self.name}: fidelity needs {', '.join(sorted(missing))}")

    def config_class(self):
        return resolve(self.config) if self.config else None

    def option_table(self) -> dict:
        """``{(module, class name): option names}`` of its algorithm classes."""
        return {(self.algorithms, cls): tuple(opts) for cls, opts in self.options.items()}

    def implements(self, cls) -> bool:
        """Whether ``cls`` (a registered algorithm class) is defined by this unit's
        golden model: in its ``algorithms`` module or, when that is
        ``golden.<unit>.algorithms``, anywhere in ``golden.<unit>``."""
        mod, own = cls.__module__, self.algorithms
        if own is None:
            return False
        pkg = own[:-len(".algorithms")] if own.endswith(".algorithms") else None
        return mod == own or (pkg is not None and mod.startswith(pkg + "."))

    def owns_mode_class(self, cls) -> bool:
        """Whether ``cls`` is one of this unit's modes: implemented by it and, with
        ``unit_attr``, not a mode that runs without the unit."""
        return self.implements(cls) and (self.unit_attr is None or bool(getattr(cls, self.unit_attr, True)))


_UNITS: dict[str, UnitDescriptor] = {}
_discovered = False


def _discover() -> None:
    """Import ``golden/<unit>/descriptor.py`` of every package of golden/ that has one."""
    global _discovered
    if _discovered:
        return
    # Each descriptor.py is run by itself, without its package's __init__ (which
    # imports the unit's models): listing the units stays cheap for the CLI.
    root = Path(__file__).resolve().parent
    for d in sorted(root.iterdir()):
        path = d / "descriptor.py"
        if path.is_file() and (d / "__init__.py").is_file():
            name = f"golden.{d.name}.descriptor"
            mod = sys.modules.get(name)
            if mod is None:
                spec = importlib.util.spec_from_file_location(name, path)
                mod = importlib.util.module_from_spec(spec)
                sys.modules[name] = mod
                spec.loader.exec_module(mod)
            u = mod.UNIT
            if u.name != d.name:
                raise ValueError(f"golden/{d.name}/descriptor.py declares unit {u.name!r}: its name must be "
                                 f"its package's, {d.name!r}")
            _UNITS.setdefault(u.name, u)
    _discovered = True


def register_unit(u: UnitDescriptor) -> None:
    """Add (or replace) a unit's descriptor."""
    if not isinstance(u, UnitDescriptor):
        raise TypeError(f"register_unit takes a UnitDescriptor, not {type(u).__name__}")
    _discover()
    _UNITS[u.name] = u


def unregister_unit(name: str) -> None:
    _discover()
    _UNITS.pop(name, None)


def units() -> dict[str, UnitDescriptor]:
    """Every unit's descriptor, in ``order`` (then by name)."""
    _discover()
    return dict(sorted(_UNITS.items(), key=lambda kv: (kv[1].order, kv[0])))


def unit_descriptor(name: str) -> UnitDescriptor:
    u = units().get(name)
    if u is None:
        raise UnitError(f"no unit named {name!r}; units: {', '.join(units())}")
    return u
