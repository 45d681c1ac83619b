"""Text tables of an area JSON document (``graphunits area``; issue 5)."""
from __future__ import annotations

from golden.report import fmt, format_table

from .flow import ASIC_FLOWS, FPGA_FLOWS

__all__ = ["module_table", "summary_lines", "format_area"]


def _mm2(um2: float) -> str:
    return f"{um2 / 1e6:.4g}"


def _cols(flow: str):
    """(header, getter on a metrics dict) for the flow's columns."""
    cols = [("cells", lambda t: t["cells"])]
    if flow in ASIC_FLOWS:
        cols.append(("FFs", lambda t: t["flip_flops"]))
    cols.append(("SRAM bits", lambda t: t["memory_bits"]))
    if flow == "cmos":
        cols.append(("transistors", lambda t: t["transistors"]))
    elif flow == "liberty":
        cols += [("std cells um2 @180", lambda t: round(t["std_cell_area_um2"])),
                 ("SRAM um2 @180", lambda t: round(t["memory_area_um2"]["180"])),
                 ("mm2 @32", lambda t: _mm2(t["area_um2"]["32"])),
                 ("mm2 @28", lambda t: _mm2(t["area_um2"]["28"]))]
    elif flow in FPGA_FLOWS:
        cols += [("LUTs", lambda t: t["luts"]), ("FFs", lambda t: t["flip_flops"]),
                 ("carry", lambda t: t["carry_cells"]), ("BRAM", lambda t: t["block_rams"]),
                 ("LUT RAM", lambda t: t["lut_rams"])]
    return cols


def module_table(doc: dict, markdown: bool = False) -> str:
    """One row per module (with its submodules) and per memory macro (``[sram]``)."""
    flow = doc["flow"]
    cols = _cols(flow)
    rows = []
    for name, m in doc["modules"].items():
        short = name.rsplit(".", 1)[-1] if m["parent"] else name
        rows.append(["  " * m["depth"] + short] + [g(m["total"]) for _, g in cols])
        for path in m["memories"]:
            mem = next(x for x in doc["memories"] if x["path"] == path)
            label = "  " * (m["depth"] + 1) + f"[sram] {mem['name']} {mem['width']}b x {mem['depth']} " \
                                              f"{mem['read_ports']}R{mem['write_ports']}W"
            cells = []
            for h, _ in cols:
                if h == "SRAM bits":
                    cells.append(mem["bits"])
                elif h == "transistors":
                    cells.append(mem["transistors"])
                elif h == "SRAM um2 @180":
                    cells.append(round(mem["area_um2"]["180"]))
                elif h in ("mm2 @32", "mm2 @28"):
                    cells.append(_mm2(mem["area_um2"][h[-2:]]))
                elif h == "BRAM" and mem.get("fpga_mapping"):
                    cells.append(mem["fpga_mapping"]["kind"].replace("_", " "))
                else:
                    cells.append("")
            rows.append([label] + cells)
    title = f"{doc['unit']} ({_config_label(doc)}), flow {flow}; each row includes its submodules"
    return format_table(["module"] + [h for h, _ in cols], rows, markdown=markdown, title=title)


def _config_label(doc: dict) -> str:
    label = f"preset {doc['preset']}" if doc.get("preset") else "configuration"
    if doc.get("overrides"):
        label += ", " + ", ".join(f"{k}={v}" for k, v in doc["overrides"].items())
    return label


def summary_lines(doc: dict) -> list[str]:
    t = doc["total"]
    out = []
    flow = doc["flow"]
    if flow in ASIC_FLOWS:
        mems = f"{t['memories']} ({t['memory_bits']} bits, kept as macros)" if t["memories"] else "none"
        out.append(f"flip-flops: {t['flip_flops']}; SRAM macros: {mems}")
    if flow == "cmos":
        out.append(f"transistors: {t['transistors']} (logic {t['logic_transistors']}, "
                   f"SRAM bit cells {t['memory_transistors']})")
    if doc.get("estimate"):
        n = doc["estimate"]["nodes"]
        parts = [f"{n[k]['total_mm2']:.4g} mm2 at {k} nm (logic {n[k]['logic_mm2']:.4g} + SRAM "
                 f"{n[k]['memory_mm2']:.4g})" for k in n]
        out.append("area: " + "; ".join(parts))
        out.append(f"gate equivalents: {t['gate_equivalents']:.0f} x {doc['estimate']['nand2_cell']} "
                   f"({doc['estimate']['nand2_um2']:g} um2); model: docs/area.md")
        from .compare import figures_for, ours
        for fig in figures_for(doc["unit"], doc.get("preset")):
            if fig.value is not None and not doc.get("overrides"):
                v = ours(fig, doc)
                if v is not None:
                    out.append(f"paper: {fig.value:g} {fig.units} ({fig.source}); ours / paper = {v / fig.value:.3g}")
    if doc.get("fpga"):
        f = doc["fpga"]
        line = (f"{flow}: {t['luts']} LUTs, {t['flip_flops']} FFs, {t['block_rams']} block RAMs, "
                f"{t['lut_rams']} LUT RAMs, {t['carry_cells']} carry cells")
        fm = f.get("fmax")
        if fm and fm.get("mhz") is not None:
            w = f["wrapper"]
            cp = fm.get("critical_path") or {}
            line += (f"; Fmax {fmt(fm['mhz'])} MHz on {fm['device']} (target {fmt(fm['target_mhz'])} MHz; "
                     f"critical path {cp.get('from')} -> {cp.get('to')}, {cp.get('logic_levels')} logic levels; "
                     f"wrapper {w['luts']} LUTs, {w['flip_flops']} FFs not counted above)")
        out.append(line)
    for w in doc["warnings"]:
        out.append(f"warning: {w}")
    return out


def format_area(doc: dict) -> str:
    return module_table(doc) + "\n\n" + "\n".join(summary_lines(doc))
