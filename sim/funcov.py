"""Functional coverage of the RTL tests (issue "Verification you can grade";
docs/verification.md, "Functional coverage").

Each unit's testbench harness declares a :class:`CoverModel` (cover points, each
with its bins: the behaviours its tests must reach, e.g. every SCU operation
with and without a bitmask, a filter hit, a memory error on a write) and a
``coverage()`` method that names the bins one run reached, from what the run
did: its operations, the TLM's statuses and hash events, the memory model's and
the agents' counters (responses out of order, refused requests, back-pressure).

With ``GRAPHUNITS_FUNCOV=DIR`` set, every run of a harness under cocotb
(:func:`sim.cocotb_loop.run_harness`) writes the bins it hit as one JSON file in
``DIR/<unit>/``; :func:`load` merges them and :func:`report` compares them with
the models (``scripts/funcov.py``, ``make funcov``). A bin a model excludes (with
its reason) counts as neither hit nor missed.
"""
from __future__ import annotations

import json
import os
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["ENV", "CoverPoint", "CoverModel", "record", "load", "report", "register", "MODELS", "MEMORY_BINS",
           "memory_bins", "Covered", "LATENCY_BANDS", "PRESSURE", "latency_band", "cross"]

#: The environment variable naming the folder the runs' coverage goes to.
ENV = "GRAPHUNITS_FUNCOV"


@dataclass(frozen=True)
class CoverPoint:
    """A cover point: ``bins`` (names), what it covers (``doc``), and ``excluded``:
    bins that no configuration can reach, each with its reason."""

    name: str
    bins: tuple
    doc: str = ""
    excluded: dict = field(default_factory=dict)

    def __post_init__(self):
        if len(set(self.bins)) != len(self.bins):
            raise ValueError(f"cover point {self.name!r} names a bin twice: {list(self.bins)}")
        bad = set(self.excluded) - set(self.bins)
        if bad:
            raise ValueError(f"cover point {self.name!r} excludes bins it does not have: {sorted(bad)}")


@dataclass(frozen=True)
class CoverModel:
    """The cover points of one unit (or shared block)."""

    unit: str
    points: tuple

    def point(self, name: str) -> CoverPoint:
        for p in self.points:
            if p.name == name:
                return p
        raise KeyError(f"{self.unit}: no cover point {name!r}; points: {', '.join(p.name for p in self.points)}")

    def check(self, hits: dict) -> dict:
        """``hits`` (point -> bins) as sorted lists, after checking that every point
        and bin is one of the model's (a misspelt bin would never count)."""
        out = {}
        for name, bins in hits.items():
            p = self.point(name)
            unknown = set(bins) - set(p.bins)
            if unknown:
                raise ValueError(f"{self.unit}: cover point {name!r} has no bins {sorted(unknown)}; "
                                 f"bins: {', '.join(p.bins)}")
            out[name] = sorted(bins)
        return out

    def bins_total(self) -> int:
        return sum(len(p.bins) - len(p.excluded) for p in self.points)


#: Every unit's model, by unit name (filled by :func:`register` as the harness
#: modules are imported; :func:`models` imports them all).
MODELS: dict[str, CoverModel] = {}

#: The modules that declare a model.
MODULES = ("sim.fetch", "sim.scu", "sim.iru", "sim.graphpeg", "sim.mff", "sim.emogi")


def register(model: CoverModel) -> CoverModel:
    MODELS[model.unit] = model
    return model


def models() -> dict[str, CoverModel]:
    import importlib
    for mod in MODULES:
        importlib.import_module(mod)
    return MODELS


#: The memory port's bins, shared by every unit's ``memory`` cover point.
MEMORY_BINS = ("out of order", "refused", "several in flight")
MEMORY_DOC = "the memory port: responses out of order, a request refused (not ready), more than one in flight"


def memory_bins(*stats) -> set:
    """The :data:`MEMORY_BINS` that memory models' counters (:class:`sim.memory.MemoryStats`) show."""
    out = set()
    for s in stats:
        if s.reordered:
            out.add("out of order")
        if s.refused:
            out.add("refused")
        if s.max_outstanding > 1:
            out.add("several in flight")
    return out


#: Memory latency bands of a run (the memory model's longest latency): crossed
#: with the operations in the units' ``op x latency`` points.
LATENCY_BANDS = ("1 cycle", "short", "long")
LATENCY_DOC = ("the memory's latency in the run: 1 cycle, short (the longest at most 16 cycles), long (the "
               "longest above 16 cycles)")
#: Back-pressure on the unit in a run: none, or some (an output stream not ready, a memory request refused).
PRESSURE = ("none", "some")
PRESSURE_DOC = ("back-pressure on the unit in the run: none, or some (the status or an output stream not "
                "ready, or a memory request refused)")


def latency_band(timing) -> str:
    """The :data:`LATENCY_BANDS` bin of a memory model's timing (:class:`sim.memory.MemoryTiming`)."""
    hi = timing.latency_range[1]
    return "1 cycle" if hi <= 1 else "short" if hi <= 16 else "long"


def cross(*parts) -> tuple:
    """The bins of a cross point: every combination of the parts' bins, as "a b" names."""
    out = [""]
    for bins in parts:
        out = [f"{a} {b}".strip() for a in out for b in bins]
    return tuple(out)


def mark(hits: dict, point: str, *pairs) -> None:
    """Add to ``hits[point]`` the name of every ``(condition, name)`` pair whose
    condition holds (a sample's flags, e.g. the streams' pauses and back-pressure)."""
    for cond, name in pairs:
        if cond:
            hits[point].add(name)


class Covered:
    """Base of a harness with functional coverage: ``class H(Covered,
    funcov=module)``, where ``module`` is the unit's coverage module, sets
    ``H.COVERAGE`` to its ``MODEL`` (what :func:`record` reads) and makes
    ``H.coverage()`` its ``sample(harness)``: the bins one run reached."""

    COVERAGE: CoverModel | None = None
    _sample = None

    def __init_subclass__(cls, funcov=None, **kw) -> None:
        super().__init_subclass__(**kw)
        if funcov is not None:
            cls.COVERAGE = funcov.MODEL
            cls._sample = staticmethod(funcov.sample)

    def coverage(self) -> dict:
        """The bins of :attr:`COVERAGE` this run reached."""
        return self._sample(self)


_serial = 0


def record(harness, name: str = "") -> Path | None:
    """Write the bins ``harness`` reached in its run (its ``coverage()``) under
    ``$GRAPHUNITS_FUNCOV/<unit>/``, when that variable is set and the harness has
    a model; returns the file written, or None."""
    global _serial
    folder = os.environ.get(ENV)
    model = getattr(harness, "COVERAGE", None)
    if not folder or model is None:
        return None
    hits = model.check(harness.coverage())
    dest = Path(folder) / model.unit
    dest.mkdir(parents=True, exist_ok=True)
    _serial += 1
    path = dest / f"{os.getpid()}-{int(time.time() * 1000)}-{_serial}.json"
    path.write_text(json.dumps({"unit": model.unit, "run": name, "hits": hits}))
    return path


def load(folder) -> dict[str, dict[str, Counter]]:
    """The runs' hits under ``folder``, merged: unit -> point -> bin -> runs."""
    out: dict[str, dict[str, Counter]] = {}
    for path in sorted(Path(folder).glob("*/*.json")):
        try:
            doc = json.loads(path.read_text())
            unit, hits = doc["unit"], doc["hits"]
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise ValueError(f"{path}: not a functional-coverage record ({e})") from None
        u = out.setdefault(unit, {})
        for point, bins in hits.items():
            u.setdefault(point, Counter()).update(bins)
    return out


def report(folder, units=None) -> dict:
    """Per unit: the runs' hits against its model. ``{unit: {"points": [{name,
    hit, total, missed, excluded}], "hit", "total", "percent", "runs"}}``; a unit
    no run recorded has every bin missed."""
    merged = load(folder)
    runs = Counter(p.parent.name for p in Path(folder).glob("*/*.json"))
    out = {}
    for unit, model in models().items():
        if units and unit not in units:
            continue
        got = merged.get(unit, {})
        points, hit, total = [], 0, 0
        for p in model.points:
            seen = got.get(p.name, Counter())
            live = [b for b in p.bins if b not in p.excluded]
            missed = [b for b in live if not seen[b]]
            h = len(live) - len(missed)
            points.append({"name": p.name, "doc": p.doc, "hit": h, "total": len(live), "missed": missed,
                           "excluded": dict(p.excluded), "counts": {b: seen[b] for b in p.bins}})
            hit, total = hit + h, total + len(live)
        out[unit] = {"points": points, "hit": hit, "total": total, "runs": runs.get(unit, 0),
                     "percent": 100.0 * hit / total if total else 100.0}
    return out
