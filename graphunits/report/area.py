"""Area numbers for the report: the ``synth`` package's liberty flow, cached.

A result is cached in ``build/area/`` under a hash of the unit, its
configuration, the flow and the sources of ``golden/``, ``hw/`` and ``synth/``,
so an unchanged design is synthesized once (the SCU takes about a minute).
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

__all__ = ["area_unavailable", "cached_area", "area_summary", "start_area_prefetch", "NODE"]

#: The technology node the report shows (the SCU and IRU papers' 32 nm).
NODE = "32"


def area_unavailable() -> str | None:
    """Why the area flow cannot run here (None when it can)."""
    try:
        from synth.tools import liberty_path, yosys_exe
    except ImportError as e:
        return f"the synth package cannot be imported ({e})"
    try:
        yosys_exe()
    except Exception as e:          # ToolError and whatever a half-installed tool raises
        return str(e)
    path = liberty_path()
    if not path.exists():
        return f"the liberty file {path} is missing (make setup)"
    return None


def _digest() -> str:
    from sim.toolchain import project_root
    h = hashlib.sha256()
    root = project_root()
    for pkg in ("golden", "hw", "synth"):
        for f in sorted((root / pkg).rglob("*.py")):
            h.update(str(f.relative_to(root)).encode())
            h.update(f.read_bytes())
    return h.hexdigest()[:16]


def cached_area(unit: str, preset: str, *, flow: str = "liberty", cache: Path | None = None) -> dict:
    """The area JSON document (docs/area.md) of ``unit`` at ``preset``."""
    from hw.registry import unit as get_unit
    from synth.flow import run_area

    from sim.toolchain import project_root
    spec = get_unit(unit)
    cfg = spec.config(preset)
    cache = project_root() / "build" / "area" if cache is None else Path(cache)
    key = hashlib.sha256(json.dumps([unit, cfg.to_json(), flow, _digest()]).encode()).hexdigest()[:16]
    path = cache / f"{unit}-{preset}-{flow}-{key}.json"
    if path.exists():
        return json.loads(path.read_text())
    doc = run_area(unit, cfg, preset=preset, flow=flow)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(doc, indent=2) + "\n")
    tmp.replace(path)
    return doc


#: The slowest syntheses first (a cold run of the default presets, 2026-11-28: the SCU about
#: 110 s, the IRU and GraphPEG about 60-70 s, the rest under 15 s each).
PREFETCH_ORDER = ("scu", "iru", "graphpeg", "mff", "fetch", "coalescer")


def start_area_prefetch(units: list[str], preset: str, log_path: Path, claims: Path, *, cache: Path | None = None,
                        reverse: bool = False):
    """Synthesize ``units`` at ``preset`` into the cache in a background process, the
    slowest first (``reverse``: the fastest first). The demo starts one with the
    demo, so that its simulations and the Yosys runs share the two cores, and a
    second one (``reverse``) when the simulations are done; a worker claims a unit
    by creating a file in the folder ``claims`` and skips those another claimed.
    Returns the process (:class:`subprocess.Popen`); wait for every worker before
    anything else synthesizes the same units (both would write the same cache file)."""
    import subprocess
    import sys
    order = sorted(units, key=lambda u: PREFETCH_ORDER.index(u) if u in PREFETCH_ORDER else len(PREFETCH_ORDER))
    if reverse:
        order.reverse()
    log_path = Path(log_path)
    log_path.parent.mkdir(parents=True, exist_ok=True)
    Path(claims).mkdir(parents=True, exist_ok=True)
    with open(log_path, "w") as f:
        return subprocess.Popen([sys.executable, "-m", "graphunits.report.area", str(cache or ""), str(claims), preset,
                                 *order], stdout=f, stderr=subprocess.STDOUT)


def _prefetch_main(argv: list[str]) -> int:
    """``python -m graphunits.report.area CACHE CLAIMS PRESET UNIT...``: each unit's
    area into the cache (``CACHE`` empty: build/area), one after the other, but those
    another worker claimed first in the folder ``CLAIMS`` (a unit that fails is
    reported and skipped: the report retries it and says why)."""
    import os
    import time
    cache, claims, preset, units = Path(argv[0]) if argv[0] else None, Path(argv[1]), argv[2], argv[3:]
    failed = 0
    for u in units:
        try:
            os.close(os.open(claims / f"{u}-{preset}", os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        except FileExistsError:
            continue                    # another worker has it
        t0 = time.time()
        try:
            cached_area(u, preset, cache=cache)
            print(f"area of {u} ({preset}): {time.time() - t0:.0f} s", flush=True)
        except Exception as e:          # the report's own attempt gives the reason to the user
            failed += 1
            print(f"area of {u} ({preset}) failed: {e}", flush=True)
    return 1 if failed else 0


def _um2(metrics: dict, key: str) -> float:
    return float((metrics.get(key) or {}).get(NODE, 0.0))


def area_summary(doc: dict) -> dict:
    """The numbers the report shows for one area document: totals at :data:`NODE` nm
    (mm2) and the breakdown by the top module's submodules."""
    top = doc["top"]
    mods = doc["modules"]
    t = doc["total"]
    parts = []
    own = mods[top]["self"]
    parts.append({"part": "(top level)", "logic_mm2": _um2(own, "logic_area_um2") / 1e6,
                  "memory_mm2": _um2(own, "memory_area_um2") / 1e6})
    for child in mods[top]["children"]:
        m = mods[child]
        k = m["instances"] if m.get("parent") == top else 1
        parts.append({"part": child, "logic_mm2": k * _um2(m["total"], "logic_area_um2") / 1e6,
                      "memory_mm2": k * _um2(m["total"], "memory_area_um2") / 1e6})
    for p in parts:
        p["area_mm2"] = p["logic_mm2"] + p["memory_mm2"]
    return {"unit": doc["unit"], "preset": doc.get("preset"), "flow": doc["flow"], "node_nm": int(NODE),
            "logic_mm2": _um2(t, "logic_area_um2") / 1e6, "memory_mm2": _um2(t, "memory_area_um2") / 1e6,
            "area_mm2": _um2(t, "area_um2") / 1e6, "memory_kb": t.get("memory_bits", 0) / 8 / 1024,
            "flip_flops": t.get("flip_flops", 0), "cells": t.get("cells", 0),
            "gate_equivalents": t.get("gate_equivalents", 0.0), "parts": parts}


if __name__ == "__main__":
    import sys
    sys.exit(_prefetch_main(sys.argv[1:]))
