"""``graphunits doctor``: the external tools found and their versions."""
from __future__ import annotations


def cmd_doctor(args) -> int:
    from sim.toolchain import versions
    from synth.tools import liberty_path
    optional = {"ccache", "chromium"}          # speed-up / one report test: setup warns, never fails
    for k, v in versions().items():
        missing = "missing (optional)" if any(k.startswith(o) for o in optional) else "MISSING"
        print(f"{k:14s} {v if v else missing}")
    lib = liberty_path()
    print(f"{'liberty':14s} {lib if lib.exists() else 'MISSING (make setup)'}")
    return 0


def add_parsers(sub) -> None:
    sp = sub.add_parser("doctor", help="show the tools found and their versions",
                        description="Show the external tools graphunits uses and their versions.")
    sp.set_defaults(func=cmd_doctor)
