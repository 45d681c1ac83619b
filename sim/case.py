"""Inside a cocotb test module: read the case given by :func:`sim.runner.run_cocotb`
and hand results back."""
from __future__ import annotations

import json
import os

__all__ = ["load_case", "save_result", "pattern"]


def load_case() -> dict:
    path = os.environ.get("GRAPHUNITS_CASE")
    if not path:
        raise RuntimeError("GRAPHUNITS_CASE is not set: run this module through sim.runner.run_cocotb")
    with open(path) as f:
        return json.load(f)


def save_result(result: dict) -> None:
    path = os.environ["GRAPHUNITS_RESULT"]
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(result, f)
    os.replace(tmp, path)


def pattern(x):
    """A ready/pause pattern of a case: a JSON list becomes the tuple the agents
    take; anything else (None, a number) is passed on."""
    return tuple(x) if isinstance(x, list) else x
