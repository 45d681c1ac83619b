"""The ``graphunits`` command line.

Every command has ``--help``. Errors in the user's input (unknown unit or preset,
bad parameter, missing file) end with one line naming the problem and exit
status 2, never a traceback.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

__all__ = ["main", "build_parser"]


class UsageError(Exception):
    """A problem with the command line or its inputs."""


def _config_from_args(spec, args):
    """Configuration of ``spec`` from ``--preset``, ``--config`` and ``--set``."""
    cls = spec.config_class
    overrides = cls.parse_overrides(args.set or [])
    if getattr(args, "config", None):
        path = Path(args.config)
        if not path.exists():
            raise UsageError(f"configuration file {path} does not exist")
        try:
            cfg = cls.from_json(path.read_text())
        except json.JSONDecodeError as e:
            raise UsageError(f"{path}: not valid JSON (line {e.lineno}: {e.msg})") from None
        return cfg.replace(**overrides) if overrides else cfg
    return cls.preset(args.preset, **overrides)


# ---------------------------------------------------------------------- commands
def cmd_verilog(args) -> int:
    from hw.registry import unit
    from .build import write_verilog
    spec = unit(args.unit)
    cfg = _config_from_args(spec, args)
    out = Path(args.output)
    name = args.name or args.unit
    b = write_verilog(args.unit, cfg, out, name)
    print(f"wrote {b.verilog} and {b.json}")
    if args.lint:
        from .lint import lint
        ok, msgs = lint(b.verilog, wall=args.lint == "wall")
        print(f"verilator --lint-only: {'clean' if ok else 'FAILED'}")
        if msgs:
            print(msgs)
        return 0 if ok else 1
    return 0


def cmd_units(args) -> int:
    from golden.report import format_table
    from hw.registry import UNITS
    rows = [[name, ", ".join(s.config_class.preset_names()), s.doc] for name, s in sorted(UNITS.items())]
    print(format_table(["unit", "presets", "what"], rows))
    return 0


def cmd_config(args) -> int:
    from hw.registry import unit
    spec = unit(args.unit)
    cfg = _config_from_args(spec, args)
    print(cfg.to_json(), end="")
    return 0


def cmd_demo(args) -> int:
    from .demo import run_demo
    return run_demo(sims=args.sim, quick=args.quick)


def cmd_doctor(args) -> int:
    from .toolchain import liberty_path, versions
    for k, v in versions().items():
        print(f"{k:14s} {v if v else 'MISSING'}")
    lib = liberty_path()
    print(f"{'liberty':14s} {lib if lib.exists() else 'MISSING (make setup)'}")
    return 0


# ---------------------------------------------------------------------- parser
def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="graphunits",
        description="Generate, verify and measure GPU graph-processing units (SCU, IRU, GraphPEG, MFF, EMOGI).")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")

    def config_args(sp):
        sp.add_argument("--unit", required=True, help="unit name (see `graphunits units`)")
        sp.add_argument("--preset", default="default", help="configuration preset (default: %(default)s)")
        sp.add_argument("--config", metavar="FILE", help="configuration JSON (as written next to the Verilog)")
        sp.add_argument("--set", action="append", metavar="KEY=VALUE",
                        help="change one parameter of the preset (repeatable)")

    sp = sub.add_parser("verilog", help="write a unit's Verilog and its configuration JSON",
                        description="Write NAME.v and NAME.json for a unit and configuration.")
    config_args(sp)
    sp.add_argument("-o", "--output", default="build/rtl", help="output folder (default: %(default)s)")
    sp.add_argument("--name", help="Verilog module name (default: the unit name)")
    sp.add_argument("--lint", nargs="?", const="default", choices=["default", "wall"],
                    help="run verilator --lint-only on the result (wall: with -Wall)")
    sp.set_defaults(func=cmd_verilog)

    sp = sub.add_parser("config", help="print a unit configuration as JSON",
                        description="Print the configuration a preset (with --set changes) gives.")
    config_args(sp)
    sp.set_defaults(func=cmd_config)

    sp = sub.add_parser("units", help="list the units and their presets",
                        description="List the units that can be generated, with their presets.")
    sp.set_defaults(func=cmd_units)

    sp = sub.add_parser("demo", help="the built-in example: every available unit, RTL against the golden model",
                        description="Run the built-in example and print its tables.")
    sp.add_argument("--sim", action="append", choices=["icarus", "verilator"],
                    help="simulator(s) to use (default: both)")
    sp.add_argument("--quick", action="store_true", help="smaller runs")
    sp.set_defaults(func=cmd_demo)

    sp = sub.add_parser("doctor", help="show the tools found and their versions",
                        description="Show the external tools graphunits uses and their versions.")
    sp.set_defaults(func=cmd_doctor)
    return p


def main(argv: list[str] | None = None) -> int:
    from golden.config import ConfigError
    from .toolchain import ToolError, configure
    configure()
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "command", None):
        parser.print_help()
        return 2
    try:
        return args.func(args)
    except (UsageError, ConfigError, ToolError, FileNotFoundError) as e:
        print(f"graphunits {args.command}: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
