"""Toggle counts of an RTL run, for the units' logic energy (issue 18; docs/energy.md,
"Unit logic").

Verilator built with ``--coverage-toggle`` counts, for every bit of every signal,
its 0->1 and 1->0 transitions, and writes them to ``coverage.dat`` at the end of
the run. :func:`read_toggles` reads that file and sorts each module's bits, from
the Verilog Yosys wrote for Amaranth, into

* ``ff``: bits of registers (assigned with ``<=`` in an ``always @(posedge ...)``
  block): each is one flip-flop of the netlist;
* ``comb``: every other bit the module drives (its wires and combinational
  ``reg``s, its outputs). A module's inputs are counted where they are driven
  (in the parent), not again here; memories' contents are left out (their
  energy is the SRAM model's: :mod:`golden.sram`).

Each group gives ``bits``, ``rises`` and ``falls`` (summed over its bits), and
the top module's clock gives the run's ``cycles`` (its rises).
"""
from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path

__all__ = ["TogglePoint", "read_coverage", "signal_kinds", "read_toggles"]

_FIELD = re.compile("\x01([^\x02]+)\x02([^\x01]*)")
_NAME = re.compile(r"^(?P<sig>.+?)(?:\[(?P<bit>\d+)\])?:(?P<dir>0->1|1->0)$")


class TogglePoint(tuple):
    """(module, signal, bit, rising, count)."""
    __slots__ = ()

    def __new__(cls, module, signal, bit, rising, count):
        return tuple.__new__(cls, (module, signal, bit, rising, count))


def read_coverage(path: str | Path) -> list[TogglePoint]:
    """The toggle points of a Verilator ``coverage.dat``.

    Raises ``FileNotFoundError`` when the run wrote none (not built with
    ``--coverage-toggle``), ``ValueError`` for a line that is not a coverage point."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path}: no coverage file (was the design built with --coverage-toggle?)")
    out = []
    for n, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
        if not line.startswith("C '"):
            continue
        try:
            key, count = line[3:].rsplit("' ", 1)
            fields = dict(_FIELD.findall(key))
            if fields.get("t") != "toggle":
                continue
            m = _NAME.match(fields["o"])
            module = fields["page"].split("/", 1)[1]
        except (ValueError, KeyError, IndexError):
            raise ValueError(f"{path}:{n}: not a Verilator coverage point: {line[:80]!r}") from None
        if m is None:
            raise ValueError(f"{path}:{n}: toggle point {fields['o']!r} is not NAME[BIT]:0->1 or 1->0")
        bit = int(m["bit"]) if m["bit"] is not None else 0
        out.append(TogglePoint(module.lstrip("\\"), m["sig"].lstrip("\\"), bit, m["dir"] == "0->1", int(count)))
    return out


_MODULE = re.compile(r"^module\s+\\?(\S+)\s*\(", re.M)
_DECL = re.compile(r"^\s*(input|output|inout|wire|reg)\b(?:\s+signed)?\s*(?:\[[^\]]*\])?\s*(\\\S+|\w+)\s*(\[[^\]]*\])?",
                   re.M)
_LHS = re.compile(r"(\\\S+|[A-Za-z_]\w*)\s*(?:\[[^\]]*\])*\s*<=")


def signal_kinds(verilog: str) -> dict[str, dict[str, str]]:
    """``{module: {signal: kind}}`` for Yosys-written Verilog, kind one of
    ``"ff"``, ``"input"``, ``"memory"``, ``"comb"``."""
    out: dict[str, dict[str, str]] = {}
    starts = list(_MODULE.finditer(verilog))
    for i, m in enumerate(starts):
        body = verilog[m.end():starts[i + 1].start() if i + 1 < len(starts) else len(verilog)]
        kinds: dict[str, str] = {}
        for d in _DECL.finditer(body):
            name = d.group(2).lstrip("\\")
            if d.group(1) == "input":
                kinds[name] = "input"
            elif d.group(3):                       # reg [w:0] name [0:depth]
                kinds[name] = "memory"
            else:
                kinds.setdefault(name, "comb")
        for block in re.split(r"(?m)^\s*(?=always\b|assign\b|initial\b)", body):
            if not re.match(r"always\s*@\s*\(\s*(posedge|negedge)\b", block):
                continue
            for lhs in _LHS.finditer(block):
                name = lhs.group(1).lstrip("\\")
                if kinds.get(name) in ("comb", None):
                    kinds[name] = "ff"
        out[m.group(1)] = kinds
    return out


def read_toggles(coverage: str | Path, verilog: str | Path, clock: str = "clk") -> dict:
    """Toggle counts per module (see the module docstring)::

        {"cycles": N, "top": name,
         "modules": {name: {"ff": {"bits", "rises", "falls"}, "comb": {...}}}}
    """
    points = read_coverage(coverage)
    kinds = signal_kinds(Path(verilog).read_text(errors="replace"))
    top = next(iter(kinds), None)
    mods: dict = defaultdict(lambda: {k: {"bits": 0, "rises": 0, "falls": 0} for k in ("ff", "comb")})
    seen: set = set()
    cycles = None
    for module, sig, bit, rising, count in points:
        kind = kinds.get(module, {}).get(sig, "comb")
        if module == top and sig == clock and rising:
            cycles = count
        if kind in ("input", "memory"):
            continue
        g = mods[module][kind]
        if (module, sig, bit) not in seen:
            seen.add((module, sig, bit))
            g["bits"] += 1
        g["rises" if rising else "falls"] += count
    if cycles is None:
        raise ValueError(f"{coverage}: no toggle point for the clock {clock!r} of the top module {top!r}")
    return {"cycles": cycles, "top": top, "modules": dict(mods)}
