"""The project's folders and the error for a missing external tool, shared by
``sim/`` (simulators) and ``synth/`` (Yosys, nextpnr), which both build on
golden/ and never on each other (docs/architecture.md, "Layers").

``GRAPHUNITS_CACHE``: the project cache folder (default ``.cache/`` in the
repository).
"""
from __future__ import annotations

import os
from pathlib import Path

__all__ = ["ToolError", "project_root", "cache_dir"]


class ToolError(RuntimeError):
    """A required external tool is missing or broken (the message says how to get it)."""


def project_root() -> Path:
    return Path(__file__).resolve().parent.parent


def cache_dir() -> Path:
    d = Path(os.environ.get("GRAPHUNITS_CACHE", project_root() / ".cache"))
    d.mkdir(parents=True, exist_ok=True)
    return d
