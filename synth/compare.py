"""Our area estimates against the papers' figures (issue 5, item 4).

The table is data-driven: :func:`paper_figures` lists every figure the papers
give (SPEC.md), with the unit and preset that should reproduce it: each unit's
``area_claims`` in its descriptor (golden/units.py), then the shared blocks'. A row fills
in as soon as its unit is registered in :data:`hw.registry.UNITS` and a
``liberty``-flow JSON for that unit and preset is given; until then it says
"not built yet".

``python -m synth.compare A.json B.json ...`` prints the table for area JSON
files (``graphunits area --json``); ``--run`` runs the liberty flow for every
registered unit/preset that has no JSON.
"""
from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

from golden.units import AreaClaim, units

__all__ = ["PaperFigure", "PAPER_FIGURES", "SHARED_FIGURES", "paper_figures", "ours", "comparison_rows",
           "comparison_table", "figures_for"]


@dataclass(frozen=True)
class PaperFigure(AreaClaim):
    """One figure from a paper and how to compute ours: a unit's
    :class:`golden.units.AreaClaim` with the ``unit`` (or shared block) it is of.

    Parameters
    ----------
    label : str
        Row name.
    unit, preset : str
        The unit and preset that model the paper's configuration.
    metric : str
        ``"area_mm2"`` (our liberty estimate at ``node`` nm) or ``"storage_bytes"``
        (memory bits plus flip-flops, divided by 8, of the submodules and memories
        whose path contains ``scope``).
    value : float or None
        The paper's figure (None: the paper gives none; the row is for scale).
    source : str
        Where the figure is and how the paper obtained it.
    why : str
        Why ours differs; formatted with ``ours_kb``, ``ours_sram_mm2``, ``ours_logic_mm2``
        (our SRAM macros in KB, their area and the logic's at ``node``), ``paper_kb``,
        ``paper_sram_mm2`` (the paper's storage in our SRAM model, two ports per macro)
        and ``scope``.
    node : int, optional
        Technology node of an ``area_mm2`` figure.
    scope : str, optional
        Submodule or memory name part of a ``storage_bytes`` figure.
    paper_kb : float, optional
        The storage the paper's figure covers, in KB.
    aside : str, optional
        Name part of memories of ours that the paper's figure does not cover (they
        live elsewhere in the paper's design); ``why`` can name their size
        (``aside_kb``, ``aside_mm2``) and our total without them (``without_mm2``).
    """

    unit: str = ""


#: Figures of blocks shared by units (no descriptor of their own): for scale.
SHARED_FIGURES: list[PaperFigure] = [
    PaperFigure("fetch engine, Tegra X1 preset", "tx1", "area_mm2", None, "mm2",
                "part of the SCU (§3.1: data fetch + coalescing unit); no separate figure",
                "for scale: {ours_kb:.2f} KB of SRAM macros ({ours_sram_mm2:.4f} mm2) + {ours_logic_mm2:.4f} mm2 "
                "of logic", node=32, unit="fetch"),
    PaperFigure("fetch engine, GTX 980 preset", "gtx980", "area_mm2", None, "mm2",
                "part of the SCU (§3.1: data fetch + coalescing unit); no separate figure",
                "for scale: {ours_kb:.2f} KB of SRAM macros ({ours_sram_mm2:.4f} mm2) + {ours_logic_mm2:.4f} mm2 "
                "of logic", node=32, unit="fetch"),
]


def paper_figures() -> list[PaperFigure]:
    """Every unit's area claims (its descriptor's ``area_claims``, golden/units.py),
    in the units' order, then the shared blocks'."""
    out = [PaperFigure(**asdict(c), unit=u.name) for u in units().values() for c in u.area_claims]
    return out + SHARED_FIGURES


#: The figures of the built-in units (:func:`paper_figures` when this module was imported).
PAPER_FIGURES: list[PaperFigure] = paper_figures()


def figures_for(unit: str, preset: str | None) -> list[PaperFigure]:
    """The paper figures a unit and preset model."""
    return [f for f in PAPER_FIGURES if f.unit == unit and f.preset == preset]


def ours(fig: PaperFigure, doc: dict) -> float | None:
    """Our value of ``fig``'s metric from an area JSON document (None if not found)."""
    if fig.metric == "area_mm2":
        est = doc.get("estimate") or {}
        node = (est.get("nodes") or {}).get(str(fig.node))
        return node["total_mm2"] if node else None
    if fig.metric == "storage_bytes":
        key = (fig.scope or "").lower()
        bits, hit = 0, False
        for name, m in doc["modules"].items():
            parent = m["parent"]
            inside_scope = key in name.lower() and not (parent and key in parent.lower())
            if inside_scope:
                bits += m["total"].get("flip_flops", 0) + m["total"].get("memory_bits", 0)
                hit = True
        for mem in doc["memories"]:
            if key in mem["name"].lower() and key not in mem["module"].lower():
                bits += mem["bits"]
                hit = True
        return bits / 8 if hit else None
    raise ValueError(f"unknown metric {fig.metric!r}")


def _match(fig: PaperFigure, docs: list[dict]) -> dict | None:
    for d in docs:
        if d.get("unit") == fig.unit and d.get("preset") == fig.preset and not d.get("overrides") \
                and d.get("flow") == "liberty":
            return d
    return None


def _why_fields(fig: PaperFigure, doc: dict) -> dict:
    from .tech import AreaModel
    node = ((doc.get("estimate") or {}).get("nodes") or {}).get(str(fig.node), {})
    model = AreaModel(**(doc.get("estimate") or {}).get("model", {}))
    paper_sram = model.memory_um2(int(fig.paper_kb * 8192), 2, fig.node) / 1e6 if fig.paper_kb and fig.node else 0.0
    aside = [m for m in doc.get("memories", []) if fig.aside and fig.aside in m["path"].split(".")[-1]]
    aside_mm2 = sum(m["area_um2"][str(fig.node)] for m in aside) / 1e6 if fig.node else 0.0
    return {"aside_kb": sum(m["bits"] for m in aside) / 8 / 1024, "aside_mm2": aside_mm2,
            "without_mm2": node.get("total_mm2", 0.0) - aside_mm2,
            "ours_kb": doc["total"].get("memory_bits", 0) / 8 / 1024,
            "ours_sram_mm2": node.get("memory_mm2", 0.0), "ours_logic_mm2": node.get("logic_mm2", 0.0),
            "paper_kb": fig.paper_kb, "paper_sram_mm2": paper_sram, "node": fig.node, "scope": fig.scope}


def comparison_rows(docs: list[dict]) -> list[list]:
    """Rows ``[figure, paper, ours, ours/paper, why]`` for :data:`PAPER_FIGURES`."""
    from hw.registry import UNITS
    rows = []
    for fig in PAPER_FIGURES:
        where = f" at {fig.node} nm" if fig.node else ""
        paper = f"{fig.value:g} {fig.units}{where}" if fig.value is not None else "-"
        label = f"{fig.label} (`{fig.unit}`, `{fig.preset}`)"
        if fig.unit not in UNITS:
            rows.append([label, paper, "not built yet", "-", f"{fig.source}; unit `{fig.unit}` is not registered"])
            continue
        doc = _match(fig, docs)
        if doc is None:
            if fig.preset not in UNITS[fig.unit].config_class.preset_names():
                rows.append([label, paper, "no preset", "-", f"{fig.source}; `{fig.unit}` has no preset "
                             f"`{fig.preset}` (edit synth/compare.py or add the preset)"])
            else:
                rows.append([label, paper, "not run", "-", f"{fig.source}; run `graphunits area --unit {fig.unit} "
                             f"--preset {fig.preset} --flow liberty --json FILE`"])
            continue
        value = ours(fig, doc)
        if value is None:
            rows.append([label, paper, "not found", "-", f"{fig.source}; no '{fig.scope}' in the design"])
            continue
        shown = f"{value:.4g} {fig.units}{where}"
        ratio = f"{value / fig.value:.3g}" if fig.value else "-"
        why = fig.why.format(**_why_fields(fig, doc))
        rows.append([label, paper, shown, ratio, f"{fig.source}; {why}"])
    return rows


def comparison_table(docs: list[dict], markdown: bool = True) -> str:
    from golden.report import format_table
    return format_table(["figure", "paper", "ours", "ours / paper", "source; why they differ"],
                        comparison_rows(docs), markdown=markdown)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m synth.compare", description=__doc__.split("\n\n")[0])
    ap.add_argument("json", nargs="*", help="area JSON files (graphunits area --flow liberty --json FILE)")
    ap.add_argument("--run", action="store_true", help="run the liberty flow for registered units without a JSON")
    args = ap.parse_args(argv)
    docs = [json.loads(Path(p).read_text()) for p in args.json]
    if args.run:
        from hw.registry import UNITS
        from .flow import run_area
        for fig in PAPER_FIGURES:
            if fig.unit in UNITS and _match(fig, docs) is None and \
                    fig.preset in UNITS[fig.unit].config_class.preset_names():
                print(f"[compare] {fig.unit} {fig.preset}", file=sys.stderr, flush=True)
                docs.append(run_area(fig.unit, preset=fig.preset, flow="liberty"))
    print(comparison_table(docs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
