"""The ``graphunits`` command line: the parser and the dispatch. Each group of
commands is a module with its ``add_parsers(sub)`` and ``cmd_*`` functions:
:mod:`.rtl` (verilog, config, units), :mod:`.run`, :mod:`.cosim` (cosim,
replay), :mod:`.demo`, :mod:`.doctor`, :mod:`.area` (area, prove),
:mod:`.report` (report, sweep); shared pieces in :mod:`.common`.

Every command has ``--help``; the lists in it (algorithms, modes, presets, cosim
units) are generated from the registries when the help is shown. Errors in the
user's input (unknown unit or preset, bad parameter, an option that does not
apply to the algorithm or mode, missing file) end with one line naming the
problem and exit status 2, never a traceback.
"""
from __future__ import annotations

import argparse
import os
import sys

from . import area, cosim, demo, doctor, report, rtl, run
from .common import UsageError, unit_modes, unit_preset_options

__all__ = ["main", "build_parser", "UsageError", "unit_modes", "unit_preset_options"]


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="graphunits",
        description="Generate, verify and measure GPU graph-processing units (SCU, IRU, GraphPEG, MFF, EMOGI).")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    for m in (rtl, demo, run, cosim, doctor):
        m.add_parsers(sub)
    area.add_area_parser(sub)          # graphunits area (issue 5), prove
    area.add_prove_parser(sub)
    report.add_report_parsers(sub)     # graphunits report, sweep (issue 10)
    return p


def _one_line(e: Exception) -> str:
    """The message of ``e``; an OSError from the system as ``path: reason``."""
    if isinstance(e, OSError) and e.filename is not None and e.strerror:
        return f"{e.filename}: {e.strerror}" + (f" -> {e.filename2}" if e.filename2 is not None else "")
    return str(e)


def main(argv: list[str] | None = None) -> int:
    from golden.config import ConfigError
    from sim.runner import SimulationError
    from sim.toolchain import ToolError, configure
    configure()
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "command", None):
        parser.print_help()
        return 2
    try:
        return args.func(args)
    except (UsageError, ConfigError, ToolError, OSError, ValueError) as e:
        if os.environ.get("GRAPHUNITS_DEBUG"):
            raise
        print(f"graphunits {args.command}: error: {_one_line(e)}", file=sys.stderr)
        return 2
    except SimulationError as e:
        if os.environ.get("GRAPHUNITS_DEBUG"):
            raise
        print(f"graphunits {args.command}: error: simulation failed: {e}", file=sys.stderr)
        return 1
    except MemoryError:
        print(f"graphunits {args.command}: error: out of memory: the graph or the run needs more memory than "
              "this machine has (try a smaller scale or graph)", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
