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

__all__ = ["bar_figure", "stacked_figure", "line_figure", "read_png_data", "PNG_KEY"]

#: PNG text chunk holding the figure's data (JSON).
PNG_KEY = "graphunits"

_COLORS = ["#4d4d4d", "#4c72b0", "#dd8452", "#55a868", "#c44e52", "#8172b3", "#937860", "#da8bc3", "#8c8c8c",
           "#ccb974", "#64b5cd"]
_HATCHES = ["", "//", "..", "xx", "\\\\", "oo", "--", "++", "**", "||", "OO"]


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
    fig.savefig(path, metadata={"Title": data["title"], "Software": "graphunits",
                                PNG_KEY: json.dumps(data, sort_keys=True)})
    _plt().close(fig)
    return data


def _xticks(ax, categories: list[str]) -> None:
    n = len(categories)
    ax.set_xticks(range(n))
    long = n > 4 or any(len(c) > 14 for c in categories)
    labels = [c.replace("\n", " ") for c in categories] if long else categories
    ax.set_xticklabels(labels, rotation=35 if long else 0, ha="right" if long else "center",
                       rotation_mode="anchor" if long else "default")


def bar_figure(path: Path, *, name: str, title: str, ylabel: str, metric: str, categories: list[str],
               keys: list[dict], series: dict[str, list], series_keys: dict[str, dict], hline: float | None = None,
               log: bool = False) -> dict:
    """Grouped bars: one group per category, one bar per series (None = no bar)."""
    plt = _plt()
    series = {k: [_clean(v) for v in vs] for k, vs in series.items()}
    data = {"name": name, "kind": "bars", "title": title, "ylabel": ylabel, "metric": metric,
            "categories": categories, "keys": keys, "series": series, "series_keys": series_keys,
            "file": f"figures/{path.name}"}
    with plt.rc_context(_style()):
        n, k = len(categories), max(len(series), 1)
        fig, ax = plt.subplots(figsize=(min(max(4.8, 0.3 * n * k + 3.0), 16), 3.4 + (0.8 if n > 4 else 0)))
        w = 0.8 / k
        for j, (label, vals) in enumerate(series.items()):
            xs = [i + (j - (k - 1) / 2) * w for i in range(n)]
            hs = [v if v is not None else 0.0 for v in vals]
            ax.bar(xs, hs, w, label=label, color=_COLORS[j % len(_COLORS)], hatch=_HATCHES[j % len(_HATCHES)],
                   edgecolor="black", linewidth=0.4, zorder=2)
        if hline is not None:
            ax.axhline(hline, color="black", linewidth=0.8, zorder=3)
        _xticks(ax, categories)
        ax.set_ylabel(ylabel)
        ax.set_title(title)
        if log:
            ax.set_yscale("log")
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8)
        fig.tight_layout()
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
            fig, ax = plt.subplots(figsize=(7.5, max(1.6, 0.55 * n + 1.4)))
        else:
            fig, ax = plt.subplots(figsize=(min(max(4.8, 0.4 * n + 3.0), 16), 3.6 + (0.9 if n > 4 else 0)))
        bottom = [0.0] * n
        for j, (label, vals) in enumerate(series.items()):
            hs = [v or 0.0 for v in vals]
            kw = dict(label=label, color=_COLORS[(j + 1) % len(_COLORS)], hatch=_HATCHES[j % len(_HATCHES)],
                      edgecolor="black", linewidth=0.4, zorder=2)
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
        ax.set_title(title)
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8)
        fig.tight_layout()
        return _save(fig, path, data)


def line_figure(path: Path, *, name: str, title: str, xlabel: str, panels: list[dict], x: list,
                logx: bool = False) -> dict:
    """Sweep plot: one panel per metric (``{"metric", "ylabel", "series": {label: [y per x]}}``)."""
    plt = _plt()
    panels = [dict(p, series={k: [_clean(v) for v in vs] for k, vs in p["series"].items()}) for p in panels]
    data = {"name": name, "kind": "lines", "title": title, "xlabel": xlabel, "x": list(x), "panels": panels,
            "file": path.name}
    numeric = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in x)
    with plt.rc_context(_style()):
        fig, axes = plt.subplots(1, len(panels), figsize=(4.2 * len(panels) + 0.6, 3.4), squeeze=False)
        for ax, p in zip(axes[0], panels):
            xs = list(x) if numeric else list(range(len(x)))
            for j, (label, ys) in enumerate(p["series"].items()):
                pts = [(a, b) for a, b in zip(xs, ys) if b is not None]
                if pts:
                    ax.plot([a for a, _ in pts], [b for _, b in pts], marker="os^Dv<>ph*x"[j % 11],
                            color=_COLORS[(j + 1) % len(_COLORS)], label=label, linewidth=1.2, markersize=4)
            if logx and numeric and all(v > 0 for v in xs):
                ax.set_xscale("log", base=2)
            ax.set_xticks(xs)
            ax.set_xticklabels([str(v) for v in x])
            ax.set_xlabel(xlabel)
            ax.set_ylabel(p["ylabel"])
            ax.grid(True, axis="both", linestyle=":")
        fig.suptitle(title)
        handles, labels = axes[0][0].get_legend_handles_labels()
        if handles:
            fig.legend(handles, labels, loc="lower center", ncols=min(len(labels), 3), fontsize=7.5)
            fig.tight_layout(rect=(0, 0.08 + 0.045 * ((len(labels) - 1) // 3), 1, 1))
        else:
            fig.tight_layout()
        return _save(fig, path, data)


def read_png_data(path: Path) -> dict:
    """The data saved in a figure written by this module."""
    from PIL import Image
    with Image.open(path) as im:
        return json.loads(im.text[PNG_KEY])
