"""The warp coalescer (hw/emogi): its TLM against hand-written expectations and the
golden GPU coalescer, the RTL against the TLM with cocotb on Icarus and Verilator
(hand cases, random and graph-derived warps, back-pressure, throughput), more
configurations under Amaranth's simulator, and the error messages."""
import random

import pytest

from golden.config import ConfigError
from golden.emogi import CoalescerConfig, PCIeRequest, coalescer_model, request_histogram, warp_requests
from golden.fetch import FetchConfig
from hw.emogi import WarpCoalescer
from hw.registry import unit
from sim.amaranth_loop import run_amaranth
from sim.build import build_verilog
from sim.emogi import HAND_CASES, CoalescerHarness, golden_histogram, graph_instructions, hand_warps, make_warps
from sim.runner import run_cocotb

from conftest import SCALE

BASE = 0x10000


def hand_expected(cfg: CoalescerConfig) -> dict:
    """The requests of every hand case, written out by hand for 32 lanes of 4 B,
    32 B sectors and 128 B lines (and the same shapes for other configurations)."""
    line, sec, top = cfg.line_bytes, cfg.sector_bytes, 1 << cfg.addr_width
    L, spl = cfg.lanes, cfg.sectors_per_line
    R = PCIeRequest
    return {
        "aligned": [R(BASE, line, True)],
        "off by one sector": [R(BASE + sec, line - sec, False), R(BASE + line, sec, True)],
        "off by three sectors": [R(BASE + line - sec, sec, False), R(BASE + line, line - sec, True)],
        "scattered": [R(BASE + 4096 * k + sec * ((L - 1 - k) % spl), sec, k == L - 1) for k in range(L)],
        "inactive lanes": [R(BASE, sec, False), R(BASE + 2 * sec, line - 2 * sec, True)],
        "all masked": [],
        "duplicates": [R(BASE, sec, True)],
        "two runs in a line": [R(BASE, sec, False), R(BASE + 2 * sec, sec, True)],
        "two full lines": [R(BASE, line, False), R(BASE + line, line, True)],
        "top of address space": [R(top - line, line, True)],
        "last lane only": [R(BASE + line - sec, sec, True)],
    }


# ---------------------------------------------------------------------- TLM
@pytest.mark.parametrize("preset", ["default", "small"])
def test_tlm_hand_cases(preset):
    cfg = CoalescerConfig.preset(preset)
    exp = hand_expected(cfg)
    assert set(exp) == set(HAND_CASES)
    for name, addrs, mask in hand_warps(cfg, BASE):
        assert warp_requests(cfg, addrs, mask) == exp[name], name
    # The paper's Fig. 3: aligned = one 128 B request; off by 32 B = 96 B + 32 B.
    assert request_histogram(cfg, exp["aligned"]) == {32: 0, 64: 0, 96: 0, 128: 1}
    assert request_histogram(cfg, exp["off by one sector"]) == {32: 1, 64: 0, 96: 1, 128: 0}
    assert request_histogram(cfg, exp["scattered"]) == {32: cfg.lanes, 64: 0, 96: 0, 128: 0}


@pytest.mark.parametrize("spec", [{"kind": "random", "seed": 5, "count": 400},
                                  {"kind": "graph", "variant": "naive", "max_warps": 400},
                                  {"kind": "graph", "variant": "merged", "max_warps": 400},
                                  {"kind": "graph", "variant": "aligned", "esize": 4, "max_warps": 400}])
def test_tlm_agrees_with_the_golden_coalescer(spec):
    cfg = CoalescerConfig()
    warps = make_warps(cfg, spec)
    reqs = coalescer_model(cfg, warps)
    # The request sizes are the golden GPU coalescer's (an independent implementation).
    hist = golden_histogram(cfg, warps)
    assert request_histogram(cfg, reqs) == {32 * k: int(hist[k]) for k in range(1, 5)}
    # Ascending, sector aligned, never across a line, one last per warp with a request.
    per_warp, cur = [], []
    for r in reqs:
        assert r.addr % 32 == 0 and r.addr // 128 == (r.addr + r.size - 1) // 128
        cur.append(r)
        if r.last:
            per_warp.append(cur)
            cur = []
    assert cur == []
    assert len(per_warp) == sum(1 for _, m in warps if m)
    for w in per_warp:
        assert all(a.addr + a.size <= b.addr for a, b in zip(w, w[1:]))


@pytest.mark.parametrize("variant", ["naive", "merged", "aligned"])
def test_graph_warps_are_sampled_across_loop_iterations(variant):
    cfg = CoalescerConfig()
    spec = {"kind": "graph", "variant": variant, "esize": 8, "max_warps": 120, "seed": 4}
    every = graph_instructions(cfg, dict(spec, max_warps=10**9))
    sample = graph_instructions(cfg, spec)

    def active(insts):
        return [(s, m, tuple(a for i, a in enumerate(addrs) if m >> i & 1)) for s, addrs, m in insts]
    assert len(sample) == 120 < len(every)
    assert set(active(sample)) <= set(active(every))
    slots = [s for s, _, _ in sample]
    assert slots == sorted(slots)                              # in execution order
    later = sum(s > 0 for s in slots)
    share = sum(s > 0 for s, _, _ in every) / len(every)
    # A random subset has about the population's share of later iterations
    # (binomial, 120 draws); with a warp per vertex the first 120 would all be iteration 0.
    if variant != "naive":
        assert all(s == 0 for s, _, _ in every[:120])
    assert abs(later / 120 - share) < 0.15 and later >= 5
    assert graph_instructions(cfg, spec) == sample               # seeded


def test_tlm_rejects_bad_warps():
    cfg = CoalescerConfig()
    ok = [0] * 32
    with pytest.raises(ValueError, match="^a warp has 32 lane addresses, not 31$"):
        warp_requests(cfg, [0] * 31)
    with pytest.raises(ValueError, match="^the active mask must be a 32-bit lane mask, not 0x100000000$"):
        warp_requests(cfg, ok, 1 << 32)
    with pytest.raises(ValueError, match="^the active mask has 32 lanes, not 2$"):
        warp_requests(cfg, ok, [True, False])
    with pytest.raises(ValueError, match="^lane 3: address 0x1000000000000 does not fit in 48 bits$"):
        warp_requests(cfg, [0, 0, 0, 1 << 48] + [0] * 28)
    with pytest.raises(ValueError, match="^lane 0: address -0x20 does not fit in 48 bits$"):
        warp_requests(cfg, [-32] + [0] * 31)
    with pytest.raises(ValueError, match="^lane 1: address 'x' is not an integer$"):
        warp_requests(cfg, [0, "x"] + [0] * 30)


@pytest.mark.parametrize("changes, message", [
    ({"lanes": 12}, "CoalescerConfig.lanes must be one of 4, 8, 16, 32, 64, not 12"),
    ({"sector_bytes": 24}, "CoalescerConfig.sector_bytes must be a power of two, not 24"),
    ({"line_bytes": 512}, "CoalescerConfig.line_bytes must be in the range [32, 256], not 512"),
    ({"line_bytes": 16}, "CoalescerConfig.line_bytes must be in the range [32, 256], not 16"),
    ({"addr_width": 7}, "CoalescerConfig.addr_width must be in the range [16, 64], not 7"),
    ({"addr_width": 16, "line_bytes": 128, "sector_bytes": 32}, None),
])
def test_config_errors(changes, message):
    if message is None:
        assert CoalescerConfig(**changes).sectors_per_line == 4
        return
    with pytest.raises(ConfigError) as e:
        CoalescerConfig(**changes)
    assert str(e.value) == message


def test_component_needs_its_config():
    import gc
    import warnings

    from amaranth.hdl import UnusedElaboratable
    with warnings.catch_warnings():
        # The half-built component is never elaborated: collect it here, quietly.
        warnings.simplefilter("ignore", UnusedElaboratable)
        with pytest.raises(TypeError, match="WarpCoalescer needs a CoalescerConfig, not FetchConfig") as e:
            WarpCoalescer(FetchConfig())
        del e
        gc.collect()


def test_registered_and_every_preset_elaborates():
    spec = unit("coalescer")
    for preset in spec.config_class.preset_names():
        b = build_verilog("coalescer", spec.config(preset))
        text = b.verilog.read_text()
        assert "module coalescer" in text and "i__payload" in text and "o__payload" in text
        assert CoalescerConfig.from_json(b.json.read_text()) == spec.config(preset)


# ---------------------------------------------------------------------- RTL
BACKPRESSURE = {
    "free": {},
    "pattern": {"in_pause": [1, 0, 1, 1], "out_ready": [1, 1, 1, 0]},
    "random": {"in_pause": 0.6, "out_ready": 0.5},
}
THROUGHPUT_WARPS = 300


def coalescer_runs() -> list[dict]:
    runs = [{"name": "hand", "workload": {"kind": "hand"}, "keep": True},
            {"name": "hand/back-pressure", "workload": {"kind": "hand"}, "keep": True,
             "in_pause": [1, 0], "out_ready": [0, 1, 1]}]
    for k, (bname, bp) in enumerate(BACKPRESSURE.items()):
        runs.append({"name": f"random/{bname}", "seed": k + 1,
                     "workload": {"kind": "random", "seed": k + 1, "count": 150 * SCALE}, **bp})
    for k, variant in enumerate(("naive", "merged", "aligned")):
        runs.append({"name": f"graph/{variant}", "seed": 20 + k, "in_pause": 0.8, "out_ready": 0.7,
                     "workload": {"kind": "graph", "variant": variant, "esize": 8 if k % 2 else 4,
                                  "max_warps": 120 * SCALE, "seed": k}})
    runs.append({"name": "throughput", "workload": {"kind": "aligned", "count": THROUGHPUT_WARPS}})
    return runs


def check_runs(cfg, res, runs):
    assert len(res["runs"]) == len(runs)
    by_name = {}
    for run, r in zip(runs, res["runs"]):
        assert r["mismatches"] == [], f"{run['name']}: {r['mismatches']}"
        assert r["requests"] == r["expected"] > 0
        by_name[r["name"]] = r
    exp = hand_expected(cfg)
    flat = [list(x.as_tuple()) for name in HAND_CASES for x in exp[name]]
    assert by_name["hand"]["got"] == flat
    assert by_name["hand/back-pressure"]["got"] == flat
    # One one-line warp per cycle once the pipeline is full.
    t = by_name["throughput"]
    assert t["requests"] == THROUGHPUT_WARPS
    assert t["last_out"] - t["first_in"] <= THROUGHPUT_WARPS + 3


@pytest.mark.parametrize("sim", ["icarus", "verilator"])
def test_coalescer_cocotb(sim):
    cfg = CoalescerConfig()
    runs = coalescer_runs()
    res = run_cocotb(build_verilog("coalescer", cfg), "sim.emogi.tb", {"config": cfg.to_dict(), "runs": runs},
                     sim=sim)
    check_runs(cfg, res, runs)


AMARANTH_CONFIGS = {
    "small": CoalescerConfig.preset("small"),
    "16 lanes, 64 B lines of 16 B sectors": CoalescerConfig(lanes=16, sector_bytes=16, line_bytes=64, addr_width=24),
    "256 B lines (8 sectors)": CoalescerConfig(lanes=32, line_bytes=256, addr_width=40),
    "one sector per line": CoalescerConfig(lanes=8, sector_bytes=32, line_bytes=32, addr_width=20),
}


@pytest.mark.parametrize("name", sorted(AMARANTH_CONFIGS))
def test_coalescer_amaranth(name):
    cfg = AMARANTH_CONFIGS[name]
    r = random.Random(name)
    for spec, bp in [({"kind": "hand"}, {"out_ready": [1, 0, 1]}),
                     ({"kind": "random", "seed": r.randrange(99), "count": 80}, BACKPRESSURE["random"]),
                     ({"kind": "graph", "variant": "aligned", "max_warps": 60}, BACKPRESSURE["pattern"]),
                     ({"kind": "aligned", "count": 40}, {})]:
        h = CoalescerHarness(cfg, make_warps(cfg, spec), seed=3, **bp)
        run_amaranth(WarpCoalescer(cfg), h.agents, h.done, max_cycles=50_000, stall_cycles=300,
                     what=f"{name} {spec['kind']}", watch=h.watchdog)
        assert h.mismatches() == [] and len(h.got) == len(h.expected) > 0, (name, spec["kind"], h.mismatches())


# ---------------------------------------------------------------------- watchdog
def test_watchdog_bounds_the_oldest_warp_by_its_requests():
    cfg = CoalescerConfig()
    L = cfg.lanes

    def bound(lines, **kw):       # one warp over `lines` lines, a sector each: `lines` requests
        addrs = [BASE + cfg.line_bytes * (i % lines) for i in range(L)]
        h = CoalescerHarness(cfg, [(addrs, (1 << L) - 1)], **kw)
        assert h.watchdog() is None          # nothing accepted yet
        h.src.drive()
        h.cycle = 5
        h.src.clock(lambda path: 1)          # the warp accepted at cycle 5
        what, start, b = h.watchdog()
        assert start == 5 and what == f"EMOGI warp 0 (read, {L} active lanes, {lines} requests)"
        return b

    sizes = [bound(n) for n in (1, 4, 32)]
    assert sizes[0] < sizes[1] < sizes[2]
    assert bound(4, out_ready=[1, 0, 0, 0]) > sizes[1]      # a slower output
    # a warp with no active lane sends nothing: nothing in flight
    h = CoalescerHarness(cfg, [([BASE] * L, 0)])
    h.src.drive()
    h.src.clock(lambda path: 1)
    assert h.watchdog() is None


def test_coalescer_watchdog_stops_a_warp_past_its_bound(monkeypatch):
    """Amaranth's simulator with the bound cut to 10 cycles: a warp of 32 one-sector
    requests passes it and the run stops with a HangError naming the warp."""
    from sim.loop import HangError
    cfg = CoalescerConfig()
    monkeypatch.setattr(CoalescerHarness, "WATCH_FIXED", 10)
    monkeypatch.setattr(CoalescerHarness, "WATCH_PER_REQUEST", 0)
    warps = [(a, m) for name, a, m in hand_warps(cfg) if name == "scattered"]
    h = CoalescerHarness(cfg, warps)
    assert len(h.expected) == cfg.lanes
    with pytest.raises(HangError, match=rf"EMOGI warp 0 \(read, {cfg.lanes} active lanes, {cfg.lanes} requests\) "
                                        r"not complete 11 cycles after it was accepted at cycle \d+ \(bound 10"):
        run_amaranth(WarpCoalescer(cfg), h.agents, h.done, max_cycles=1000, watch=h.watchdog)
