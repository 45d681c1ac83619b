"""Matplotlib figures in the style of the papers' plots (grouped bars normalised to
a reference, stacked shares, parameter sweeps), written as PNG.

Every figure is described by a plain dict (name, title, metric, categories and
the values of each series) that is saved both in ``results.json`` and inside the
PNG file itself (text chunk ``graphunits``), so a figure can always be traced
back to its numbers (:func:`read_png_data`).
"""
from __future__ import annotations

import json
import math
from pathlib import Path

__all__ = ["bar_figure", "stacked_figure", "line_figure", "read_png_data", "series_style", "PNG_KEY"]

#: PNG text chunk holding the figure's data (JSON).
PNG_KEY = "graphunits"

#: 20 distinct colours and 7 hatches: series j gets colour j % 20 and hatch j % 7, so
#: the first 140 series of a figure all look different (20 and 7 are coprime).
_COLORS = ["#4d4d4d", "#4c72b0", "#dd8452", "#55a868", "#c44e52", "#8172b3", "#937860", "#da8bc3", "#8c8c8c",
           "#ccb974", "#64b5cd", "#1b9e77", "#d95f02", "#7570b3", "#e7298a", "#66a61e", "#e6ab02", "#a6761d",
           "#a6cee3", "#fb9a99"]
_HATCHES = ["", "//", "..", "xx", "\\\\", "oo", "++"]


def series_style(j: int) -> tuple[str, str]:
    """(colour, hatch) of the ``j``-th series: distinct for j < 140."""
    return _COLORS[j % len(_COLORS)], _HATCHES[j % len(_HATCHES)]


def _plt():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def _style():
    return {"font.size": 8.5, "axes.titlesize": 10, "axes.spines.top": False, "axes.spines.right": False,
            "axes.grid": True, "axes.grid.axis": "y", "grid.linestyle": ":", "grid.alpha": 0.7,
            "legend.frameon": False, "savefig.dpi": 120}


def _clean(v):
    if v is None or (isinstance(v, float) and (math.isnan(v) or math.isinf(v))):
        return None
    return float(v)


def _save(fig, path: Path, data: dict) -> dict:
    path.parent.mkdir(parents=True, exist_ok=True)
    # bbox_inches="tight": nothing (rotated labels, the legend outside the axes) is cut off.
    fig.savefig(path, bbox_inches="tight", pad_inches=0.08,
                metadata={"Title": data["title"], "Software": "graphunits", PNG_KEY: json.dumps(data, sort_keys=True)})
    _plt().close(fig)
    return data


def _title(fig, title: str) -> None:
    """The title above the whole figure, left-aligned and wrapped to its width, so that
    it never runs over the y label (constrained layout makes room for it)."""
    import textwrap
    width = max(30, int(fig.get_figwidth() * 12))
    fig.suptitle(textwrap.fill(title, width), x=0.01, ha="left", fontsize=10)


def _xticks(ax, categories: list[str]) -> None:
    n = len(categories)
    ax.set_xticks(range(n))
    long = n > 4 or any(len(ln) > 14 for c in categories for ln in c.split("\n"))
    labels = [c.replace("\n", " ") for c in categories] if long else categories
    ax.set_xticklabels(labels, rotation=30 if long else 0, ha="right" if long else "center",
                       rotation_mode="anchor" if long else "default")


def bar_figure(path: Path, *, name: str, title: str, ylabel: str, metric: str, categories: list[str],
               keys: list[dict], series: dict[str, list], series_keys: dict[str, dict], hline: float | None = None,
               log: bool = False, first_style: int = 0) -> dict:
    """Grouped bars: one group per category, one bar per series (None = no bar); series
    j is drawn in style ``first_style + j`` (style 0, dark grey, is the baseline's)."""
    plt = _plt()
    series = {k: [_clean(v) for v in vs] for k, vs in series.items()}
    data = {"name": name, "kind": "bars", "title": title, "ylabel": ylabel, "metric": metric,
            "categories": categories, "keys": keys, "series": series, "series_keys": series_keys,
            "file": f"figures/{path.name}"}
    with plt.rc_context(_style()):
        n, k = len(categories), max(len(series), 1)
        fig, ax = plt.subplots(figsize=(min(max(5.6, 0.3 * n * k + 3.4), 16), 3.6 + (0.6 if n > 4 else 0)),
                               layout="constrained")
        w = 0.8 / k
        for j, (label, vals) in enumerate(series.items()):
            xs = [i + (j - (k - 1) / 2) * w for i in range(n)]
            hs = [v if v is not None else 0.0 for v in vals]
            color, hatch = series_style(first_style + j)
            ax.bar(xs, hs, w, label=label, color=color, hatch=hatch, edgecolor="black", linewidth=0.4, zorder=2)
        if hline is not None:
            ax.axhline(hline, color="black", linewidth=0.8, zorder=3)
        _xticks(ax, categories)
        ax.set_ylabel(ylabel)
        _title(fig, title)
        if log:
            ax.set_yscale("log")
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8)
        return _save(fig, path, data)


def stacked_figure(path: Path, *, name: str, title: str, ylabel: str, metric: str, categories: list[str],
                   keys: list[dict], series: dict[str, list], series_keys: dict[str, dict],
                   horizontal: bool = False, total_label: str | None = None) -> dict:
    """Stacked bars: one bar per category, one segment per series."""
    plt = _plt()
    series = {k: [_clean(v) for v in vs] for k, vs in series.items()}
    data = {"name": name, "kind": "stacked", "title": title, "ylabel": ylabel, "metric": metric,
            "categories": categories, "keys": keys, "series": series, "series_keys": series_keys,
            "file": f"figures/{path.name}"}
    with plt.rc_context(_style()):
        n = len(categories)
        if horizontal:
            fig, ax = plt.subplots(figsize=(7.5, max(2.0, 0.55 * n + 1.4, 0.2 * len(series) + 0.8)),
                                   layout="constrained")
        else:
            fig, ax = plt.subplots(figsize=(min(max(5.6, 0.4 * n + 3.4), 16), 3.8 + (0.6 if n > 4 else 0)),
                                   layout="constrained")
        bottom = [0.0] * n
        for j, (label, vals) in enumerate(series.items()):
            hs = [v or 0.0 for v in vals]
            color, hatch = series_style(j + 1)
            kw = dict(label=label, color=color, hatch=hatch, edgecolor="black", linewidth=0.4, zorder=2)
            if horizontal:
                ax.barh(range(n), hs, 0.6, left=bottom, **kw)
            else:
                ax.bar(range(n), hs, 0.6, bottom=bottom, **kw)
            bottom = [b + h for b, h in zip(bottom, hs)]
        if horizontal:
            ax.set_yticks(range(n))
            ax.set_yticklabels(categories)
            ax.invert_yaxis()
            ax.set_xlabel(ylabel)
            ax.grid(True, axis="x", linestyle=":")
            ax.grid(False, axis="y")
            if total_label:
                for i, b in enumerate(bottom):
                    ax.text(b, i, f" {b:.4g} {total_label}", va="center", fontsize=8)
                ax.set_xlim(0, max(bottom + [1e-9]) * 1.3)
        else:
            _xticks(ax, categories)
            ax.set_ylabel(ylabel)
        _title(fig, title)
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8)
        return _save(fig, path, data)


def line_figure(path: Path, *, name: str, title: str, xlabel: str, panels: list[dict], x: list,
                logx: bool = False) -> dict:
    """Sweep plot: one panel per metric (``{"metric", "ylabel", "series": {label: [y per x]}}``,
    optionally a panel ``title``); panels of the same metric share their y range.

    Numeric x values are placed to scale (log 2 with ``logx``), except when they
    span more than a factor of 100 without ``logx`` (e.g. ALWT entries 8-24 and
    65536 for "unlimited"): then they are evenly spaced categories. The figure
    grows with the legend (three labels a row) so the panels keep their height."""
    plt = _plt()
    panels = [dict(p, series={k: [_clean(v) for v in vs] for k, vs in p["series"].items()}) for p in panels]
    data = {"name": name, "kind": "lines", "title": title, "xlabel": xlabel, "x": list(x), "panels": panels,
            "file": path.name}
    numeric = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in x)
    if numeric and not logx and x and min(x) > 0 and max(x) / min(x) > 100:
        numeric = False
    n_labels = len(dict.fromkeys(k for p in panels for k in p["series"]))
    with plt.rc_context(_style()):
        fig, axes = plt.subplots(1, len(panels), figsize=(4.4 * len(panels) + 0.6, 3.2 + 0.19 * -(-n_labels // 3)),
                                 squeeze=False, layout="constrained")
        for ax, p in zip(axes[0], panels):
            xs = list(x) if numeric else list(range(len(x)))
            for j, (label, ys) in enumerate(p["series"].items()):
                pts = [(a, b) for a, b in zip(xs, ys) if b is not None]
                if pts:
                    ax.plot([a for a, _ in pts], [b for _, b in pts], marker="os^Dv<>ph*x"[j % 11],
                            color=series_style(j + 1)[0], label=label, linewidth=1.2, markersize=4)
            if logx and numeric and all(v > 0 for v in xs):
                ax.set_xscale("log", base=2)
            ax.set_xticks(xs)
            ax.set_xticklabels([str(v) for v in x])
            ax.set_xlabel(xlabel)
            ax.set_ylabel(p["ylabel"])
            if p.get("hline") is not None:
                ax.axhline(p["hline"], color="black", linewidth=0.8, linestyle="--")
            if p.get("title"):
                ax.set_title(p["title"], fontsize=9)
            ax.grid(True, axis="both", linestyle=":")
        for metric in dict.fromkeys(p["metric"] for p in panels):
            same = [ax for ax, p in zip(axes[0], panels) if p["metric"] == metric]
            if len(same) > 1:
                lo = min(ax.get_ylim()[0] for ax in same)
                hi = max(ax.get_ylim()[1] for ax in same)
                for ax in same:
                    ax.set_ylim(lo, hi)
        _title(fig, title)
        handles, labels = axes[0][0].get_legend_handles_labels()
        if handles:
            fig.legend(handles, labels, loc="outside lower center", ncols=min(len(labels), 3), fontsize=7.5)
        return _save(fig, path, data)


def read_png_data(path: Path) -> dict:
    """The data saved in a figure written by this module."""
    from PIL import Image
    with Image.open(path) as im:
        return json.loads(im.text[PNG_KEY])
