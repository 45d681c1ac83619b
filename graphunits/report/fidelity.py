"""The fidelity table: every headline of every paper beside the model's value,
their ratio, a verdict and, for every gap, the measured reason (which bound,
which parameter, which difference of setup); docs/fidelity.md.

The headlines are the units' :class:`~graphunits.report.units.PaperClaim` s
(``graphunits/report/units.py``); ``graphunits report`` shows them for the runs it
makes, ``benchmarks/fidelity.py`` runs the papers' setups (their GPUs, graphs
resembling their datasets, their algorithms) and writes docs/fidelity.md, and
the demo prints a short version.

Verdicts (the issue's rule: the direction, and the magnitude within 2x):

* ``reproduced``: ours goes the paper's way (a speedup above 1, a reduction
  below 1 or a negative change...) and ours / paper lies in [0.5, 2];
* ``direction right``: the same way, more than 2x off;
* ``contradicted``: the other way;
* ``within 2x`` / ``more than 2x off``: a figure without a direction (a
  bandwidth, a count);
* ``not measured``: the model does not measure it (yet), or no run matched.
"""
from __future__ import annotations

import math

from golden.units import units

from .units import RunSet

__all__ = ["verdict", "fidelity_rows", "run_reasons", "fidelity_markdown", "VERDICT_ORDER", "PAPER_SETUPS",
           "paper_setups"]

VERDICT_ORDER = ("reproduced", "within 2x", "direction right", "more than 2x off", "contradicted", "not measured")

def paper_setups() -> dict:
    """The papers' setups that benchmarks/fidelity.py runs: unit -> its descriptor's
    ``fidelity`` (golden/units.py: GPU presets, graph specs resembling the datasets
    (full runs), smaller ones for ``--quick``, the datasets at the paper's size where
    a run of them fits in an hour (``paper``), algorithms). docs/datasets.md says
    how each graph resembles the paper's."""
    return {u.name: dict(u.fidelity) for u in units().values() if u.fidelity}


#: The built-in units' setups (:func:`paper_setups` when this module was imported).
PAPER_SETUPS = paper_setups()


def _direction(kind: str, v: float) -> int:
    """+1 / -1: which way a figure goes (above or below 1 for a factor or a share,
    the sign of a change); 0 for a figure without a direction."""
    if kind in ("x", "share"):
        return (v > 1) - (v < 1)
    if kind == "change":
        return (v > 0) - (v < 0)
    return 0


def verdict(kind: str, paper: float | None, ours: float | None, *, paper_hi: float | None = None,
            direction: int = 0) -> tuple[float | None, str]:
    """``(ours / paper, verdict)``: see the module docstring. ``paper_hi``: the top
    of a range (ours inside it: ratio 1); ``direction``: the way a statement
    without a number goes (+1 / -1)."""
    if ours is None or (isinstance(ours, float) and math.isnan(ours)):
        return None, "not measured"
    if paper is None:
        if not direction:
            return None, "not measured"
        return None, "direction right" if _direction(kind, ours) == direction else "contradicted"
    if paper == 0:
        return None, "within 2x"
    if paper_hi is not None and paper <= ours <= paper_hi:
        ratio = 1.0
    else:
        ratio = ours / (paper_hi if paper_hi is not None and ours > paper_hi else paper)
    dp, do = _direction(kind, paper), _direction(kind, ours)
    within = 0.5 <= ratio <= 2.0
    if dp == 0:
        return ratio, "within 2x" if within else "more than 2x off"
    if do != dp:
        return ratio, "contradicted"
    return ratio, "reproduced" if within else "direction right"


#: Runs listed in a figure's measured reason (every run of today's setups: a reason
#: that showed only the first few hid the graphs where a unit loses).
REASON_RUNS = 12


def _more(parts: list[str], total: int) -> str:
    """The listed runs, and how many more the figure has when the list was cut."""
    if not parts:
        return "no matching run"
    text = "; ".join(parts)
    return text + (f"; (+{total - len(parts)} more runs)" if total > len(parts) else "")


def run_reasons(rs: RunSet, select: dict, limit: int = REASON_RUNS, floor=None) -> str:
    """The measured reason of a time figure: for the runs ``select`` picks (the
    first ``limit``, then how many more), their time and where it goes (every
    bound's share of the cycles, the unit's own time as ``unit``) beside the
    reference mode's (and its DRAM sectors per L2 sector access); with ``floor``
    (a profile's ``time_floor``), the floor that the paper's parameters (or, where
    the paper gives none, the model's, named by the floor) put on the unit's time."""
    parts = []
    runs = rs.select(**select)
    for r in runs[:limit]:
        ref = _reference(rs, r)
        t = r.get("time_us")
        s = f"{r['graph'].split(',')[0]} {r['algo']} ({r['gpu']}): {r['mode']} {t:.0f} us" if t else \
            f"{r['graph']} {r['algo']}: {r['mode']}"
        if r.get("bound_mix"):
            s += f" [{r['bound_mix']}]"
        if r.get("unit_mix"):
            s += f" [unit: {r['unit_mix']}]"
        if ref and ref.get("time_us"):
            s += f" vs {ref['mode']} {ref['time_us']:.0f} us"
            if ref.get("bound_mix"):
                s += f" [{ref['bound_mix']}]"
            if ref.get("l2_accesses") and ref.get("dram_sectors") is not None:
                # where the reference's L2 traffic goes: DRAM sectors (reads and
                # write-backs) per L2 sector access
                s += f" [DRAM / L2 sectors {ref['dram_sectors'] / ref['l2_accesses']:.2f}]"
        f = floor(r) if floor is not None else None
        if f is not None:
            # (cycles, how[, whose parameters[, text after the floor's time]])
            cycles, how, *rest = f
            whose = rest[0] if rest else "the paper's parameters"
            after = rest[1] if len(rest) > 1 else ""
            s += f" (floor from {whose}: {how} = {cycles / _clock_mhz(r['gpu']):.0f} us{after})"
        parts.append(s)
    return _more(parts, len(runs))


def _clock_mhz(gpu: str) -> float:
    from golden.gpu import GPUConfig
    return float(GPUConfig.preset(gpu).clock_mhz)


def energy_reasons(rs: RunSet, select: dict, limit: int = REASON_RUNS) -> str:
    """The measured reason of an energy figure, run by run: the mode's energy
    against its reference's, beside their time ratio, the static share and the
    DRAM share of each (static power x time dominates when the two track)."""
    parts = []
    total = 0
    for r in rs.select(**select):
        ref = _reference(rs, r)
        e, e0 = r.get("energy_uj"), (ref or {}).get("energy_uj")
        if not isinstance(e, (int, float)) or not isinstance(e0, (int, float)) or not e0:
            continue
        total += 1
        if len(parts) >= limit:
            continue
        t, t0 = r.get("time_us"), ref.get("time_us")
        tr = f"time x{t / t0:.2f}; " if isinstance(t, (int, float)) and t0 else ""

        def sh(x, key):
            v = x.get(key)
            return f"{100 * v / x['energy_uj']:.0f}%" if isinstance(v, (int, float)) and x.get("energy_uj") else "-"
        parts.append(f"{r['graph'].split(',')[0]} {r['algo']} ({r['gpu']}): {r['mode']} {e:.0f} uJ vs "
                     f"{ref['mode']} {e0:.0f} uJ (x{e / e0:.2f}; {tr}static {sh(r, 'energy_static_uj')} / "
                     f"{sh(ref, 'energy_static_uj')}, DRAM {sh(r, 'energy_dram_uj')} / {sh(ref, 'energy_dram_uj')})")
    return _more(parts, total)


def metric_reasons(rs: RunSet, select: dict, metric: str, limit: int = REASON_RUNS) -> str:
    """The figure run by run: ``metric`` of every run ``select`` picks (the first
    ``limit``, then how many more)."""
    if metric == "energy_uj":
        return energy_reasons(rs, select, limit)
    from golden.report import fmt
    parts = []
    for r in rs.select(**select):
        v = r.get(metric)
        if not isinstance(v, (int, float)):
            continue
        s = f"{r['graph'].split(',')[0]} {r['algo']} ({r['gpu']}): "
        ref = _reference(rs, r)
        v0 = ref.get(metric) if ref is not None and ref is not r else None
        if isinstance(v0, (int, float)) and v0:
            # a figure against the reference mode: both values and their ratio
            s += f"{r['mode']} {fmt(float(v))} vs {ref['mode']} {fmt(float(v0))} (x{v / v0:.2f})"
        else:
            s += fmt(float(v))
        parts.append(s)
    return _more(parts[:limit], len(parts))


def _reference(rs: RunSet, r: dict) -> dict | None:
    """The run of ``r``'s reference mode on the same graph, algorithm and GPU."""
    ref = rs.select(graph=r["graph"], algo=r["algo"], gpu=r["gpu"], mode=r.get("reference_mode") or "baseline")
    return ref[0] if ref else None


def fidelity_rows(paper_rows: list[dict]) -> list[dict]:
    """Add ``ratio`` and ``verdict`` to the report's paper rows (in place) and return them."""
    for p in paper_rows:
        ratio, v = verdict(p.get("kind", "number"), p.get("paper_value"), p.get("ours"),
                           paper_hi=p.get("paper_hi"), direction=p.get("direction", 0))
        p["ratio"] = ratio
        p["verdict"] = v
    return paper_rows


def _cell(x) -> str:
    return str(x).replace("|", "/").replace("\n", " ")


def fidelity_markdown(rows: list[dict], meta: dict) -> str:
    """docs/fidelity.md: the summary, the table, the reasons."""
    from collections import Counter
    lines = ["# Fidelity: the papers' headlines against the model", "",
             f"Generated by `python benchmarks/fidelity.py{meta.get('args', '')}` on {meta.get('date', '?')} "
             f"({meta.get('machine', '?')}, {meta.get('wall_s', 0):.0f} s). Do not edit by hand: re-run the script.",
             "", meta.get("intro", ""), ""]
    count = Counter(r["verdict"] for r in rows)
    lines.append("Verdicts: " + ", ".join(f"{count[v]} {v}" for v in VERDICT_ORDER if count[v]) + ".")
    lines += ["", "| # | unit | headline | paper | ours | ours / paper | verdict |", "|---|---|---|---|---|---|---|"]
    for i, r in enumerate(rows, 1):
        ratio = "-" if r.get("ratio") is None else f"{r['ratio']:.2f}"
        lines.append(f"| {i} | {r['unit']} | {_cell(r['figure'])} | {_cell(r['paper'])} | {_cell(r['ours_text'])} | "
                     f"{ratio} | {r['verdict']} |")
    lines += ["", "## How each figure is measured, and why it differs", ""]
    for i, r in enumerate(rows, 1):
        lines.append(f"{i}. **{r['unit']}: {r['figure']}** ({r['verdict']}). Ours: {r['how']}.")
        if r.get("reason"):
            lines.append(f"   Measured: {r['reason']}.")
        if r.get("note"):
            lines.append(f"   Setup: {r['note']}.")
    lines.append("")
    return "\n".join(lines)
