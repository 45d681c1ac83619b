"""``graphunits verilog``, ``config`` and ``units``: the RTL a unit generates and its configuration."""
from __future__ import annotations

import re
from pathlib import Path

from .common import UsageError, config_args, config_from_args, unit_modes


_VERILOG_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


#: Verilog-2005 keywords a module name must not be (the ones a user might try).
_VERILOG_KEYWORDS = frozenset(
    "always and assign begin buf case default defparam else end endcase endfunction endmodule function "
    "generate genvar if initial inout input integer localparam module nand nor not or output parameter reg "
    "signed task time tri wire xor".split())


def cmd_verilog(args) -> int:
    import shutil

    from hw.registry import unit
    from sim.build import Build, build_verilog
    spec = unit(args.unit)
    cfg = config_from_args(spec, args)
    if not args.output:
        raise UsageError("-o/--output must name a folder, not ''")
    out = Path(args.output)
    if out.exists() and not out.is_dir():
        raise UsageError(f"-o/--output {out}: is a file, not a folder")
    name = args.name or args.unit + ("" if args.axi is None else "_axi")
    if not _VERILOG_NAME.fullmatch(name) or name in _VERILOG_KEYWORDS:
        raise UsageError(f"--name must be a plain Verilog module name (a letter or _, then letters, digits "
                         f"or _; not a keyword): {name!r}")
    if args.axi is not None and args.axi not in (0, 4, 8, 16, 32, 64, 128):
        raise UsageError(f"--axi must be the AXI4 data bus in bytes (4, 8, 16, 32, 64 or 128; 0 or nothing: as wide "
                         f"as the unit's memory blocks), not {args.axi}")
    try:
        # generated once per unit, configuration, name and sources (build/rtl), then copied
        cached = build_verilog(args.unit, cfg, name=name, axi=args.axi)
    except Exception as e:
        from golden.config import ConfigError
        if not isinstance(e, ConfigError):
            raise
        raise UsageError(f"--axi {args.axi}: {e}") from None
    out.mkdir(parents=True, exist_ok=True)
    b = Build(name, args.unit, cfg, out)
    for src, dst in ((cached.verilog, b.verilog), (cached.json, b.json)):
        if src.resolve() != dst.resolve():         # (-o may be the cache's own folder)
            shutil.copyfile(src, dst)
    print(f"wrote {b.verilog} and {b.json}")
    if getattr(args, "fusesoc", False):
        from sim.fusesoc import core_name, write_core
        core = write_core(b)
        print(f"wrote {core} (FuseSoC core {core_name(name)}; lint: fusesoc --cores-root {out} run --target lint "
              f"{core_name(name)})")
    if args.lint:
        from sim.lint import lint
        ok, msgs = lint(b.verilog, wall=args.lint == "wall")
        print(f"verilator --lint-only: {'clean' if ok else 'FAILED'}")
        if msgs:
            print(msgs)
        return 0 if ok else 1
    return 0


def cmd_units(args) -> int:
    """The units (their descriptors, golden/units.py) and the RTL blocks that
    ``graphunits verilog`` generates, with their presets."""
    from golden.report import format_table
    from golden.units import units
    from hw.registry import unit, unit_names
    from sim.cosim import cosim_units
    cos = {u.stats for u in cosim_units().values()} | set(cosim_units())
    rows = [[d.name, d.title, d.paper, ", ".join(unit_modes(d.name)) or "-",
             ", ".join(b.name for b in d.rtl) or "-", "yes" if d.name in cos else "-"] for d in units().values()]
    print(format_table(["unit", "title", "paper", "modes", "RTL", "RTL in the loop"], rows))
    print()
    rows = [[name, ", ".join(unit(name).config_class.preset_names()), unit(name).doc] for name in unit_names()]
    print(format_table(["RTL block", "presets", "what"], rows))
    return 0


def cmd_config(args) -> int:
    from hw.registry import unit
    spec = unit(args.unit)
    cfg = config_from_args(spec, args)
    print(cfg.to_json(), end="")
    return 0


def add_parsers(sub) -> None:
    sp = sub.add_parser("verilog", help="write a unit's Verilog and its configuration JSON",
                        description="Write NAME.v and NAME.json for a unit and configuration.")
    config_args(sp)
    sp.add_argument("-o", "--output", default="build/rtl", help="output folder (default: %(default)s)")
    sp.add_argument("--name", help="Verilog module name (default: the unit name)")
    sp.add_argument("--fusesoc", action="store_true",
                    help="also write NAME.core, a FuseSoC core (CAPI2) of the Verilog and its configuration, "
                         "with a default and a Verilator lint target")
    sp.add_argument("--axi", nargs="?", type=int, const=0, metavar="BYTES",
                    help="the unit behind AXI4 (NAME default: UNIT_axi): memory ports as AXI4 masters with a data "
                         "bus of BYTES (default: as wide as a memory block), streams as AXI4-Stream")
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
