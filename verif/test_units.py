"""Unit descriptors (golden/units.py): the registries of every layer derive from
them, so a unit defined only here, by its descriptor, reaches the CLI, the RTL
generator, the algorithm registry, the reports and RTL in the loop."""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import ClassVar

import pytest

from golden.algorithms.bfs import BFS
from golden.config import Config, check_int
from golden.units import (AreaClaim, RTLBlock, UnitDescriptor, register_unit, resolve, unit_descriptor,
                          unregister_unit, units)

HERE = __name__


@dataclass(frozen=True)
class ToyConfig(Config):
    """A toy unit's configuration: a counter of ``width`` bits."""

    width: int = 8

    PRESETS: ClassVar[dict] = {"default": {}, "wide": {"width": 16}}

    def validate(self) -> None:
        check_int("ToyConfig", "width", self.width, 1, 64)


def toy_component(config: ToyConfig):
    from amaranth.hdl import Signal
    from amaranth.lib import wiring
    from amaranth.lib.wiring import In, Out

    class ToyCounter(wiring.Component):
        def __init__(self, cfg):
            self.cfg = cfg
            super().__init__({"en": In(1), "count": Out(cfg.width)})

        def elaborate(self, platform):
            from amaranth.hdl import Module
            m = Module()
            c = Signal(self.cfg.width)
            with m.If(self.en):
                m.d.sync += c.eq(c + 1)
            m.d.comb += self.count.eq(c)
            return m
    return ToyCounter(config)


class ToyBFS(BFS):
    """BFS in the toy unit's mode: the baseline's kernels, the toy's option read."""

    mode = "toy"

    def setup(self) -> None:
        super().setup()
        cfg = self.options.get("toy")
        self.toy_width = ToyConfig.preset(cfg).width if isinstance(cfg, str) else getattr(cfg, "width", 8)
        self.extra["toy_width"] = self.toy_width


TOY_COSIM = None        # set by the fixture (sim.cosim.CosimUnit is a sim/ class)


def toy_rows(r) -> list:
    """The toy's rows of ``graphunits run``'s table."""
    return [["toy counter width", str(r.extra.get("toy_width", "-"))]] if r.mode == "toy" else []


@pytest.fixture
def toy(monkeypatch):
    import hw.registry as registry
    from golden.algorithms import MODES
    from sim.cosim import CosimUnit
    global TOY_COSIM
    TOY_COSIM = CosimUnit("toy", ("bfs",), ("toy",), "default", lambda cfg: None, "no.testbench", "toy",
                          lambda rtl, tlm: [], lambda rtl, tlm: [])
    d = UnitDescriptor("toy", "Toy", "this test", config=f"{HERE}:ToyConfig", algorithms=HERE,
                       options={"ToyBFS": ("toy", "backend")}, preset_option="toy",
                       rtl=(RTLBlock("toy", f"{HERE}:ToyConfig", f"{HERE}:toy_component", "a toy counter"),),
                       cosim=f"{HERE}:TOY_COSIM", run_rows=f"{HERE}:toy_rows",
                       area_claims=(AreaClaim("Toy counter", "wide", "area_mm2", 0.001, "mm2", "this test",
                                              "ours: a 16-bit counter", node=32),),
                       fidelity={"gpus": ["gtx980"], "graphs": ["kron:scale=8"], "quick": ["kron:scale=5"],
                                 "algos": ["bfs"]})
    monkeypatch.setattr(registry, "UNITS", dict(registry.UNITS))     # what _sync adds goes with the test
    monkeypatch.setitem(MODES, ("bfs", "toy"), ToyBFS)
    register_unit(d)
    yield d
    unregister_unit("toy")


def test_builtin_descriptors_name_what_exists():
    """Every built-in descriptor's paths resolve: configuration, TLM, component,
    cosim; its name is its package's; the derived registries list it."""
    from golden.algorithms import modes_for
    from hw.registry import UNITS
    from sim.cosim import cosim_units
    got = units()
    assert list(got) == ["scu", "iru", "graphpeg", "mff", "emogi"]
    for name, d in got.items():
        assert d.config_class().preset_names(), name
        assert resolve(d.tlm) is not None
        for b in d.rtl:
            assert UNITS[b.name].component_path == b.component and callable(resolve(b.component))
        assert resolve(d.cosim).name in cosim_units()
    modes_for("bfs")
    from golden.algorithms import MODES
    for (algo, mode), cls in MODES.items():      # every unit mode's options are its descriptor's
        owners = [d.name for d in got.values() if d.implements(cls)]
        assert len(owners) <= 1 and (owners or mode in ("baseline",)), (algo, mode, owners)


def test_a_descriptor_checks_its_fields():
    with pytest.raises(ValueError, match="lower-case Python identifier"):
        UnitDescriptor("Bad-Name", "B", "p")
    with pytest.raises(ValueError, match="config must be 'module:Name'"):
        UnitDescriptor("bad", "B", "p", config="golden.scu.SCUConfig")
    with pytest.raises(ValueError, match="rtl entries must be RTLBlock"):
        UnitDescriptor("bad", "B", "p", rtl=("scu",))
    with pytest.raises(ValueError, match="area_claims entries must be AreaClaim"):
        UnitDescriptor("bad", "B", "p", area_claims=(("SCU", "tx1", "area_mm2", 1.0),))
    with pytest.raises(ValueError, match="fidelity needs graphs, quick"):
        UnitDescriptor("bad", "B", "p", fidelity={"gpus": ["gtx980"], "algos": ["bfs"]})
    with pytest.raises(ValueError, match="run_rows must be 'module:Name'"):
        UnitDescriptor("bad", "B", "p", run_rows="graphunits.scu.summary.rows")
    with pytest.raises(TypeError, match="takes a UnitDescriptor"):
        register_unit({"name": "x"})
    with pytest.raises(KeyError, match="no unit named 'nope'; units: scu, iru, graphpeg, mff, emogi"):
        unit_descriptor("nope")


def test_a_toy_unit_reaches_every_layer_through_its_descriptor(toy, capsys, tmp_path):
    """The toy unit is defined only in this file: the algorithm registry accepts
    its option, `graphunits units`, `run --toy-preset`, `verilog --unit toy` and
    `config` know it, the report lists it, and cosim lists its RTL in the loop."""
    from golden.algorithms import check_options
    from golden.graphs import load_graph
    from golden.algorithms import run_algorithm
    from graphunits.cli import main, unit_modes
    from sim.cosim import cosim_units
    from graphunits.report.collect import ReportSpec, collect
    from graphunits.report.units import available_units, profile, unit_names

    # golden: the option the descriptor declares is accepted, another is not
    check_options("bfs", "toy", {"toy": "wide"})
    with pytest.raises(ValueError, match="takes no option 'scu'"):
        check_options("bfs", "toy", {"scu": "gtx980"})
    g = load_graph("kron:scale=5,edgefactor=4,seed=1", cache=False)
    r = run_algorithm(g, "bfs", "toy", toy="wide", stats=False)
    assert r.mode == "toy" and (r.values == run_algorithm(g, "bfs", stats=False).values).all()

    # CLI: units, run with the derived preset option, config, verilog
    assert unit_modes("toy") == ["toy"]
    assert main(["units"]) == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.startswith("toy "))
    assert "Toy" in row and "this test" in row and "yes" in row          # RTL in the loop: yes
    assert any(line.startswith("toy ") and "default, wide" in line for line in out.split("\n\n")[1].splitlines())
    assert main(["run", "--graph", "kron:scale=5,edgefactor=4,seed=1", "--algo", "bfs", "--mode", "toy",
                 "--toy-preset", "wide"]) == 0
    assert any(line.split()[:4] == ["toy", "counter", "width", "16"] for line in capsys.readouterr().out.splitlines())
    assert main(["run", "--graph", "kron:scale=5", "--algo", "bfs", "--mode", "toy", "--toy-preset", "huge"]) == 2
    assert "huge" in capsys.readouterr().err
    assert main(["config", "--unit", "toy", "--preset", "wide"]) == 0
    assert json.loads(capsys.readouterr().out)["params"]["width"] == 16
    assert main(["verilog", "--unit", "toy", "--preset", "wide", "-o", str(tmp_path)]) == 0
    capsys.readouterr()
    v = (tmp_path / "toy.v").read_text()
    assert "module toy" in v and "count" in v
    assert json.loads((tmp_path / "toy.json").read_text())["params"]["width"] == 16

    # reports and cosim
    assert "toy" in unit_names() and "toy" in available_units()
    p = profile("toy")
    assert (p.title, p.config, p.option, p.hw) == ("Toy", f"{HERE}:ToyConfig", "toy", ("toy",))
    res = collect(ReportSpec(graphs=["kron:scale=5,edgefactor=4,seed=1"], algos=["bfs"], units=["toy"]), log=None)
    assert res["units"]["toy"]["available"] and res["units"]["toy"]["modes"] == {"bfs": ["toy"]}
    assert next(r for r in res["runs"] if r["unit"] == "toy")["check"] == "ok"
    assert cosim_units()["toy"] is TOY_COSIM

    # the paper's area claims and fidelity setup
    from graphunits.report.fidelity import paper_setups
    from synth.compare import paper_figures
    (fig,) = [f for f in paper_figures() if f.unit == "toy"]
    assert (fig.label, fig.preset, fig.value) == ("Toy counter", "wide", 0.001)
    assert paper_setups()["toy"]["graphs"] == ["kron:scale=8"]


def test_a_removed_unit_leaves_the_registries(toy):
    from graphunits.cli import unit_preset_options
    assert "toy_preset" in unit_preset_options()
    unregister_unit("toy")
    assert "toy" not in units() and "toy_preset" not in unit_preset_options()


def test_golden_imports_without_amaranth_and_cocotb():
    """The layers' rule (docs/architecture.md): golden/ never imports hw/, sim/,
    Amaranth or cocotb. In a fresh interpreter where those cannot be imported,
    every golden module imports, the descriptors list the units, and a unit
    mode runs."""
    import subprocess
    import sys
    code = r'''
import importlib, pkgutil, sys
class Block:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("amaranth", "cocotb", "hw", "sim", "synth"):
            raise ImportError(f"golden imported {name}")
sys.meta_path.insert(0, Block())
import golden
mods = [m.name for m in pkgutil.walk_packages(golden.__path__, "golden.")]
for m in mods:
    importlib.import_module(m)
from golden.units import units, resolve
for d in units().values():
    resolve(d.config), resolve(d.tlm)
from golden.algorithms import run_algorithm
from golden.graphs import load_graph
r = run_algorithm(load_graph("kron:scale=5,edgefactor=4,seed=1", cache=False), "bfs", "scu-enhanced", stats=False)
print(len(mods), ",".join(units()), r.mode)
'''
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    n, names, mode = p.stdout.split()
    assert int(n) > 40 and names == "scu,iru,graphpeg,mff,emogi" and mode == "scu-enhanced"


def toy_demo(sims, quick, step) -> int:
    step(f"toy on {', '.join(sims)}")
    return 0


def test_a_units_demo_step_comes_from_its_descriptor(toy):
    """The demo runs each unit's own step named by its descriptor (``demo``); a
    unit with RTL in the loop and no step of its own is run by the demo's
    'other units' step instead."""
    from dataclasses import replace

    from graphunits.demo import demo_steps, other_cosim_units, unit_demos
    assert "toy" in other_cosim_units() and "toy" not in dict(unit_demos())
    before = demo_steps()
    register_unit(replace(toy, demo=f"{HERE}:toy_demo"))
    assert dict(unit_demos())["toy"] == f"{HERE}:toy_demo" and "toy" not in other_cosim_units()
    assert demo_steps() == before + 1
    seen = []
    assert resolve(dict(unit_demos())["toy"])(["icarus"], True, lambda msg, new=True: seen.append(msg)) == 0
    assert seen == ["toy on icarus"]
