"""IP packaging: `graphunits verilog --fusesoc` writes a FuseSoC core (CAPI2) that
FuseSoC itself accepts and whose lint target runs Verilator on the unit
(sim/fusesoc.py)."""
import os
import shutil
import subprocess
import sys

import pytest

from sim.fusesoc import core_name
from sim.toolchain import configure

FUSESOC = shutil.which("fusesoc", path=os.path.dirname(sys.executable))
pytestmark = pytest.mark.skipif(FUSESOC is None, reason="fusesoc is not installed (make setup installs it)")


def _fusesoc(root, *args):
    env = configure(dict(os.environ))
    return subprocess.run([FUSESOC, "--monochrome", "--cores-root", str(root), *args], capture_output=True,
                          text=True, env=env, cwd=root)


@pytest.mark.parametrize("unit, preset", [("fetch", "default"), ("coalescer", "default")])
def test_fusesoc_accepts_the_core_and_lints_the_unit(unit, preset, tmp_path):
    r = subprocess.run([sys.executable, "-m", "graphunits", "verilog", "--unit", unit, "--preset", preset, "-o",
                        str(tmp_path), "--fusesoc"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / f"{unit}.core").exists() and f"FuseSoC core {core_name(unit)}" in r.stdout
    show = _fusesoc(tmp_path, "core", "show", core_name(unit))
    assert show.returncode == 0, show.stdout + show.stderr
    assert f"Name:        {core_name(unit)}" in show.stdout and "lint" in show.stdout
    # the default target takes the Verilog and the configuration into a project
    setup = _fusesoc(tmp_path, "run", "--setup", "--target", "default", "--tool", "verilator", "--build-root",
                     str(tmp_path / "d"), core_name(unit))
    assert setup.returncode == 0, setup.stdout[-2000:] + setup.stderr[-2000:]
    src = [p.name for p in (tmp_path / "d").rglob("src/*/*")]
    assert sorted(src) == sorted([f"{unit}.v", f"{unit}.json"])
    lint = _fusesoc(tmp_path, "run", "--target", "lint", "--build-root", str(tmp_path / "b"), core_name(unit))
    assert lint.returncode == 0, lint.stdout[-2000:] + lint.stderr[-2000:]
    # the lint target does check: a broken Verilog file fails it
    with open(tmp_path / f"{unit}.v", "a") as f:
        f.write("\nmodule broken(input a; endmodule\n")
    bad = _fusesoc(tmp_path, "run", "--target", "lint", "--build-root", str(tmp_path / "b2"), core_name(unit))
    assert bad.returncode != 0
