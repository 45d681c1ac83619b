"""Our area estimates against the papers' figures (issue 5, item 4).

The table is data-driven: :data:`PAPER_FIGURES` lists every figure the papers
give (SPEC.md), with the unit and preset that should reproduce it. A row fills
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
from dataclasses import dataclass
from pathlib import Path

__all__ = ["PaperFigure", "PAPER_FIGURES", "ours", "comparison_rows", "comparison_table", "figures_for"]


@dataclass(frozen=True)
class PaperFigure:
    """One figure from a paper and how to compute ours.

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

    label: str
    unit: str
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


_SCU_WHY = ("paper: the whole enhanced SCU with {paper_kb:g} KB of buffers (Table 1: 5 KB vector buffering, 38 KB "
            "request FIFO, 18 KB hash request buffer) from CACTI plus Synopsys DC 32 nm low-power cells at 0.78 V "
            "({paper_kb:g} KB would be {paper_sram_mm2:.3f} mm2 in our SRAM model); ours: {ours_kb:.1f} KB of SRAM "
            "macros ({ours_sram_mm2:.4f} mm2) + {ours_logic_mm2:.4f} mm2 of ideally scaled OSU 0.18 um logic")

PAPER_FIGURES: list[PaperFigure] = [
    PaperFigure("SCU, Tegra X1 (width 1)", "scu", "tx1-sim", "area_mm2", 3.65, "mm2",
                "SCU paper §6.4", _SCU_WHY, node=32, paper_kb=61),
    PaperFigure("SCU, GTX 980 (width 4)", "scu", "gtx980-sim", "area_mm2", 13.27, "mm2",
                "SCU paper §6.4", _SCU_WHY, node=32, paper_kb=61),
    PaperFigure("IRU, one memory partition", "iru", "default", "area_mm2", 5.98, "mm2",
                "IRU paper §6.4",
                "paper: CACTI 32 nm only (23.9 mm2 for 4 partitions, 5.6 % of the GPU), a partition's hash of 256 "
                "sets x 32 elements x 80 bits (index 24 + secondary 32 + position 24 = 80 KB; the text's '80 KB of "
                "total storage' read per partition, as only this fits its geometry) plus 7.7 KB of FIFOs and ring "
                "buffers ({paper_kb:g} KB would be {paper_sram_mm2:.3f} mm2 in our SRAM model); ours: {ours_kb:.1f} KB "
                "of SRAM macros ({ours_sram_mm2:.4f} mm2) + {ours_logic_mm2:.4f} mm2 of logic: about the same "
                "storage, so the gap is not in what both count; the paper does not break its 5.98 mm2 down, so "
                "which part of it CACTI's periphery, ports or wiring make up cannot be told", node=32, paper_kb=87.7),
    PaperFigure("GraphPEG ALWT storage, per SM", "graphpeg", "default", "storage_bytes", 294, "B",
                "GraphPEG paper §4.6 (24 entries x 98 bits)",
                "ours: the memory bits and flip-flops of the submodules named '{scope}'", scope="alwt"),
    PaperFigure("GraphPEG, per SM", "graphpeg", "default", "area_mm2", 0.051, "mm2",
                "GraphPEG paper §4.6",
                "paper: McPAT 28 nm for about {paper_kb:g} KB of storage and its control ({paper_kb:g} KB would be "
                "{paper_sram_mm2:.4f} mm2 in our SRAM model); ours: {ours_kb:.2f} KB of SRAM macros "
                "({ours_sram_mm2:.4f} mm2) + {ours_logic_mm2:.4f} mm2 of logic, of which {aside_kb:.1f} KB "
                "({aside_mm2:.4f} mm2) is the vertex list that the paper keeps in the SM's shared memory (not in "
                "its figure): {without_mm2:.4f} mm2 without it", node=28, paper_kb=1, aside="vlist"),
    PaperFigure("fetch engine, Tegra X1 preset", "fetch", "tx1", "area_mm2", None, "mm2",
                "part of the SCU (§3.1: data fetch + coalescing unit); no separate figure",
                "for scale: {ours_kb:.2f} KB of SRAM macros ({ours_sram_mm2:.4f} mm2) + {ours_logic_mm2:.4f} mm2 "
                "of logic", node=32),
    PaperFigure("fetch engine, GTX 980 preset", "fetch", "gtx980", "area_mm2", None, "mm2",
                "part of the SCU (§3.1: data fetch + coalescing unit); no separate figure",
                "for scale: {ours_kb:.2f} KB of SRAM macros ({ours_sram_mm2:.4f} mm2) + {ours_logic_mm2:.4f} mm2 "
                "of logic", node=32),
]


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
