"""Reports, figures and design-space sweeps (issue 10).

* :func:`build_report` (``graphunits report``): baseline and every available unit
  mode on the golden model, optionally RTL in the loop (``cosim``) and area, written
  as ``report.md``, ``report.html``, ``results.json``, CSV tables and PNG figures;
* :mod:`.sweep` (``graphunits sweep``): a grid over a unit's parameters run with Dask,
  appended to a CSV table, resumable, one plot per swept parameter;
* :mod:`.units`: which units exist (discovered from the registered modes) and what
  the papers say about them.

Layering: ``graphunits.report`` imports ``golden``, ``sim`` and (for area) ``synth``;
matplotlib and Dask are imported only when a figure is drawn or a sweep runs.
"""
from __future__ import annotations

from pathlib import Path

from .collect import ReportError, ReportSpec, collect
from .units import available_units, known_units, unit_names, profile, unit_modes

__all__ = ["build_report", "ReportSpec", "ReportError", "collect", "known_units", "unit_names", "available_units", "profile",
           "unit_modes"]


def build_report(spec: ReportSpec, out, *, log=print, bar: bool | None = None) -> dict:
    """Run ``spec`` and write the report into the folder ``out``; returns the data
    written to ``out/results.json``."""
    from .render import write_report
    res = collect(spec, log=log, bar=bar)
    return write_report(res, Path(out))
