"""``graphunits area``: area and timing estimates of a unit (issue 5).

``sim/cli.py`` registers the command with :func:`add_area_parser`; errors are
raised as :class:`synth.flow.AreaError` (a ``ValueError``),
:class:`golden.config.ConfigError` or :class:`synth.tools.ToolError`, which the
``graphunits`` entry point prints as one line with exit status 2.
"""
from __future__ import annotations

import argparse
import json
import os

from golden.report import output_path

from .flow import FLOWS, FMAX_FLOWS, AreaError, check_flow, run_area

__all__ = ["add_area_parser", "cmd_area", "config_from_args"]


def add_area_parser(sub) -> argparse.ArgumentParser:
    """Add the ``area`` command to the ``graphunits`` subparsers ``sub``."""
    flows = "; ".join(f"{k}: {v}" for k, v in FLOWS.items())
    sp = sub.add_parser(
        "area", help="area and timing estimates of a unit with Yosys (and nextpnr)",
        description="Synthesize a unit with the open-source Yosys flow and report cells, flip-flops, "
                    "SRAM macros, transistors, standard-cell area (0.18 um, scaled to 32 and 28 nm), "
                    "FPGA resources and Fmax, per unit and per submodule. Model and JSON schema: docs/area.md.")
    sp.add_argument("--unit", required=True, help="unit name (see `graphunits units`)")
    sp.add_argument("--preset", help="configuration preset (default: default)")
    sp.add_argument("--config", metavar="FILE", help="configuration JSON (as written next to the Verilog)")
    sp.add_argument("--set", action="append", metavar="KEY=VALUE",
                    help="change one parameter of the preset (repeatable)")
    sp.add_argument("--flow", metavar="FLOW",
                    help=f"{flows} (default: liberty, or ecp5 with --fmax)")
    sp.add_argument("--fmax", action="store_true",
                    help=f"also place and route with nextpnr and report Fmax ({' or '.join(FMAX_FLOWS)} flows)")
    sp.add_argument("--json", metavar="FILE", help="write the result as JSON (schema: docs/area.md)")
    sp.add_argument("--workdir", metavar="DIR", help="keep the RTLIL, Yosys script, logs and netlists in DIR")
    sp.set_defaults(func=cmd_area)
    return sp


def config_from_args(spec, args):
    """``(configuration, preset name or None, overrides)`` from ``--preset``,
    ``--config`` and ``--set`` (as ``graphunits verilog``)."""
    cls = spec.config_class
    cfg = cls.from_cli(args.preset, args.config, args.set)
    preset = None if args.config else (args.preset or "default")
    return cfg, preset, cls.parse_overrides(args.set or [])


def cmd_area(args) -> int:
    from hw.registry import unit
    from .report import format_area
    flow = args.flow or ("ecp5" if args.fmax else "liberty")
    check_flow(flow, args.fmax)
    json_path = output_path("--json", args.json)       # checked before the synthesis, not after
    if args.workdir is not None and os.path.exists(args.workdir) and not os.path.isdir(args.workdir):
        raise AreaError(f"--workdir {args.workdir}: is a file, not a folder")
    spec = unit(args.unit)
    cfg, preset, overrides = config_from_args(spec, args)
    doc = run_area(args.unit, cfg, preset=preset, overrides=overrides, flow=flow, fmax=args.fmax,
                   workdir=args.workdir)
    print(format_area(doc))
    if json_path:
        out = json_path
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(doc, indent=2) + "\n")
        print(f"wrote {out}")
    return 0

