"""The SCU's RTL against its TLM with cocotb, on Icarus and Verilator: random
operation lists (every operation, both filters, grouping with evictions, lengths
0/1/odd, unaligned bases, 4- and 8-byte elements, an unknown opcode, misaligned
commands) crossed with memory latency and back-pressure; memory errors on every
stream and on writes; and directed runs whose results are hand-derived: the
hashes' state across operations (round-robin pointers, clears) and which
operations report a memory error. Every status and the final memory must equal
the TLM's (sim/scu/)."""
import numpy as np
import pytest

from golden.scu import SCUConfig
from sim.build import build_verilog
from sim.runner import run_cocotb

from conftest import SCALE

TIMINGS = {
    "lat1": ({"latency": 1}, {}),
    "lat1-100/pattern": ({"latency": [1, 100], "req_ready": [1, 1, 0]}, {"cmd_pause": [1, 0, 1], "status_ready": [1, 0]}),
    "lat1-40/random": ({"latency": [1, 40], "req_ready": 0.6, "resp_gap": 0.7},
                       {"cmd_pause": 0.5, "status_ready": 0.5}),
}

#: Random memory errors: parts of the data arrays, of the ids, indexes, counts,
#: costs and bitmasks, and bytes [64, 128) of every output (writes).
RANDOM_ERROR_REGIONS = [["data4", 0, 8192], ["data8", 16384, None], ["ids", 4096, 8192], ["idx", 0, 4096],
                        ["cnt", 8192, 12288], ["costs", 0, 4096], ["masks", 96, 192], ["out*", 64, 128]]


def scu_runs(ops: int = 12, e8: bool = True) -> list[dict]:
    runs = []
    for k, (name, (timing, agents)) in enumerate(TIMINGS.items()):
        for rep in range(SCALE):
            seed = 10 * k + rep + 1
            runs.append({"name": f"{name}/{rep}", "seed": seed, "workload": {"seed": seed, "ops": ops, "max_n": 70},
                         "timing": dict(timing, seed=seed), **agents})
    # every comparison of the bitmask constructor, signed and unsigned (§3.2.1), twice
    runs.append({"name": "every comparison", "seed": 78,
                 "workload": {"seed": 78, "ops": 24, "max_n": 40, "kinds": ["bitmask"], "cmp_all": True,
                              "misaligned": 0, "raw": False},
                 "timing": {"latency": [1, 8], "seed": 78}})
    # every operation at every length class with a 1-cycle memory (functional coverage's
    # "op x length" and "op x latency" crosses)
    runs.append({"name": "every operation and length, 1-cycle memory", "seed": 79,
                 "workload": {"seed": 79, "sweep": True, "max_n": 70, "misaligned": 0, "raw": False,
                              "kinds": ["bitmask", "data", "access", "replicate", "expand", "filter", "group"]},
                 "timing": {"latency": 1, "seed": 79}})
    runs.append({"name": "memory errors", "seed": 77, "workload": {"seed": 77, "ops": ops, "max_n": 60},
                 "timing": {"latency": [1, 30], "seed": 7},
                 "error_regions": [r for r in RANDOM_ERROR_REGIONS if e8 or r[0] != "data8"]})
    return runs


# ---------------------------------------------------------------------- directed: memory errors
# Every block of "bad" and "out_bad" answers with an error, and bytes [64, 128) of
# "half" and [32, 64) of "out_half". Each op: (descriptor, whether it must report
# mem_error: it reads or writes one of those blocks). Addresses name regions.
T, F = True, False
ERROR_OPS = [
    ({"op": "data", "n": 20, "data": "good"}, F),
    ({"op": "data", "n": 20, "data": "bad"}, T),                               # data stream
    ({"op": "data", "n": 40, "data": "half"}, T),                              # data: blocks 2, 3 of 5
    ({"op": "data", "n": 20, "data": "good", "mask": "bad"}, T),               # mask stream
    ({"op": "bitmask", "n": 40, "data": "good", "mask": "bad", "cmp": "lt", "ref": 1 << 30}, T),
    ({"op": "data", "n": 20, "data": "good", "out": "out_bad"}, T),            # writes
    ({"op": "data", "n": 24, "data": "good", "out": "out_half"}, T),           # write: block 1 of 3
    ({"op": "access", "n": 12, "data": "good", "idx": "bad"}, T),              # idx stream
    ({"op": "access", "n": 12, "data": "bad", "idx": "idx"}, T),               # gathered data
    ({"op": "replicate", "n": 10, "data": "good", "cnt": "bad"}, T),           # cnt stream
    ({"op": "expand", "n": 10, "data": "good", "idx": "idx", "cnt": "bad"}, T),
    ({"op": "expand", "n": 10, "data": "good", "idx": "bad", "cnt": "cnt"}, T),
    ({"op": "expand", "n": 10, "data": "good", "idx": "idx", "cnt": "cnt", "out": "out_bad"}, T),
    ({"op": "data", "n": 33, "data": "good", "mask": "mask"}, F),              # the unit goes on
    ({"op": "filter", "n": 24, "data": "bad", "clear": True}, T),              # the filter's ids
    ({"op": "filter", "n": 24, "data": "ids", "cnt": "bad", "best": True}, T),  # its costs
    ({"op": "filter", "n": 40, "data": "ids", "mask": "bad"}, T),              # its bitmask
    ({"op": "filter", "n": 40, "data": "ids", "out": "out_bad"}, T),           # its bits' write
    ({"op": "group", "n": 24, "data": "bad", "target": 0}, T),                 # grouping's ids
    ({"op": "group", "n": 24, "data": "ids", "target": 0, "out": "out_half"}, T),  # its positions' write
    ({"op": "bitmask", "n": 40, "data": "good", "out": "out_bad"}, T),
    ({"op": "expand", "n": 10, "data": "good", "idx": "idx", "cnt": "cnt"}, F),
    ({"op": "group", "n": 24, "data": "ids", "target": 0}, F),
]


def error_run() -> dict:
    rng = np.random.default_rng(9)
    regions = {"good": {"random": 2048, "seed": 1}, "ids": {"random": 256, "hi": 200, "seed": 2},
               "idx": {"random": 256, "hi": 1900, "seed": 3}, "cnt": {"random": 256, "hi": 5, "seed": 4},
               "mask": {"bits": (rng.random(256) < 0.5).tolist()}, "bad": {"random": 1024, "hi": 200, "seed": 5},
               "half": {"random": 1024, "hi": 200, "seed": 6}, "out_bad": {"empty": 4096},
               "out_half": {"empty": 4096}}
    ops = []
    for k, (op, _) in enumerate(ERROR_OPS):
        regions[f"o{k}"] = {"empty": 1024}
        ops.append({"out": f"o{k}", **op})
    return {"name": "memory errors/streams", "seed": 5, "workload": {"kind": "directed", "regions": regions, "ops": ops},
            "timing": {"latency": [1, 20], "seed": 5}, "status_ready": 0.7,
            "error_regions": [["bad", 0, None], ["half", 64, 128], ["out_bad", 0, None], ["out_half", 32, 64]]}


# ---------------------------------------------------------------------- directed: hash state
def hash_state_run(cfg: SCUConfig) -> tuple[dict, dict]:
    """Two grouping operations in a row, then filter operations, on keys that all
    fall in set 0: ``j * (sets + 1) = j + (j << log2(sets))`` folds to ``j ^ j = 0``
    for ``j < sets``, and to ``1 ^ 1`` for ``j = sets``.

    Grouping (ways ``W``, one element per block b_1 .. b_{W+1}): b_1..b_W fill
    ways 0..W-1; b_{W+1} evicts way 0 (the pointer), which writes [0] and
    advances the pointer to 1; the flush writes way 0 [W], then [1] .. [W-1].
    The flush resets the pointer, so the second operation writes the same
    [0, W, 1, .., W-1] (with the pointer left at 1 it would evict way 1 and
    write [1, 0, W, 2, ..]).

    Filter (keys k_j, persistent hash): A = k_1..k_{W+1} after a clear: all
    new, bits all 1; k_{W+1} evicted k_1 from way 0, pointer 1. B = k_{W+2},
    k_{W+1}, k_2 (no clear): k_{W+2} evicts way 1 (k_2) -> 1; k_{W+1} is in way
    0 -> 0; k_2 was evicted -> 1: 0b101 (with the pointer reset between
    operations k_{W+2} would evict k_{W+1}: 0b111). C = k_1..k_{W+1}, k_1 after
    a clear: k_{W+1} evicts way 0 (pointer 0 after the clear) = k_1, so the
    last k_1 is new: all 1 (a clear that kept the pointer would evict another
    way and drop k_1). D: a ``data`` operation with ``clear``; E = k_{W+1}: new
    again -> 1 (without the clear, k_{W+1} from C would drop it).
    """
    W, S = cfg.group_ways, cfg.group_sets
    assert 2 <= W and W + 1 <= S and cfg.group_size >= 2
    epb = cfg.group_block_bytes // 4
    gids = [epb * j * (S + 1) for j in range(1, W + 2)]          # target 0: block of id = id // epb
    FW, FS = cfg.filter_ways, cfg.filter_sets
    assert 2 <= FW and FW + 2 <= FS
    k = [None] + [j * (FS + 1) for j in range(1, FW + 3)]        # k[1] .. k[FW + 2]
    regions = {"gids": {"values": gids}, "fA": {"values": k[1:FW + 2]},
               "fB": {"values": [k[FW + 2], k[FW + 1], k[2]]}, "fC": {"values": k[1:FW + 2] + [k[1]]},
               "fE": {"values": [k[FW + 1]]}}
    for name in ("g1", "g2", "f1", "f2", "f3", "d", "f4"):
        regions[name] = {"empty": 256}
    ops = [{"op": "group", "n": W + 1, "data": "gids", "target": 0, "out": "g1"},
           {"op": "group", "n": W + 1, "data": "gids", "target": 0, "out": "g2"},
           {"op": "filter", "n": FW + 1, "data": "fA", "clear": True, "out": "f1"},
           {"op": "filter", "n": 3, "data": "fB", "out": "f2"},
           {"op": "filter", "n": FW + 2, "data": "fC", "clear": True, "out": "f3"},
           {"op": "data", "n": 0, "data": "fA", "clear": True, "out": "d"},
           {"op": "filter", "n": 1, "data": "fE", "out": "f4"}]
    order = [0, W] + list(range(1, W))
    expect = {"g1": order, "g2": order, "f1": [(1 << (FW + 1)) - 1], "f2": [0b101], "f3": [(1 << (FW + 2)) - 1],
              "f4": [1]}
    run = {"name": "hash state", "seed": 3, "workload": {"kind": "directed", "regions": regions, "ops": ops},
           "timing": {"latency": [1, 10], "seed": 3}, "dump": [[n, len(v)] for n, v in expect.items()]}
    return run, expect


# ---------------------------------------------------------------------- directed: the top of the address space
def top_run() -> tuple[dict, list, dict]:
    """Operations whose ranges run past the top of the 32-bit address space
    (docs/scu.md, "Errors"), between clean ones. Region ``top`` is the last 4 KiB
    (1024 known words ``tw``); ``top+4064`` is ``tw[1016]``, 8 words below the top.

    Rejected as they arrive (cmd_error, elements_in 0, no request): a linear
    ``data`` range of 9 words from ``top+4064`` (8 end exactly at the top: fine),
    a bitmask's data, a bitmask of 33 bits (2 words) from ``top+4092`` (32 bits,
    1 word: fine), ``idx``, ``cnt`` as counts and as the best-cost filter's
    costs, 8-byte data. Found while running (cmd_error, elements_in = n, the rest
    performed): gathers from ``data = top`` at indexes 1024 and 2e9 (base at or
    past the top: not issued), 8-byte index 512 likewise, an ``expand`` range
    of 8 from index 1020 (starts 16 B below the top: the data engine's command
    error) — while a count-0 range at index 3000 is no error; and outputs that
    run past the top: their first elements are written, the rest dropped.
    Each entry: (op, cmd_error, elements_in, elements_out) derived by hand."""
    tw = np.random.default_rng(12).integers(0, 1 << 31, 1024, dtype=np.uint32)
    good = np.random.default_rng(13).integers(0, 1 << 31, 2048, dtype=np.uint32)
    fids = np.arange(40) * 7 + 3                         # 40 distinct ids: every one is new, so kept
    regions = {"top": {"values": tw.tolist(), "at": -4096}, "good": {"values": good.tolist()},
               "ids": {"random": 256, "hi": 200, "seed": 14}, "fids": {"values": fids.tolist()},
               "gidx": {"values": [1, 1023, 1024, 5, 2_000_000_000, 7]}, "g8idx": {"values": [0, 511, 512, 3]},
               "eidx": {"values": [1, 1020, 3, 3000]}, "ecnt": {"values": [2, 8, 2, 0]},
               "e0idx": {"values": [3000, 2]}, "e0cnt": {"values": [0, 3]}, "cnt4": {"values": [3, 0, 2, 5]},
               "sidx": {"values": [4, 9, 100, 2]}, "scnt": {"values": [1, 2, 3, 0]},
               "mask": {"bits": [1, 0, 1, 1] * 16}}
    pop = bin(int(tw[1023])).count("1")                   # bits set in the last word below the top
    lt = int((good[:33] < (1 << 30)).sum())
    ops = [
        ({"op": "data", "n": 8, "data": "top+4064"}, F, 8, 8),
        ({"op": "data", "n": 9, "data": "top+4064"}, T, 0, 0),
        ({"op": "bitmask", "n": 40, "data": "top+4000", "cmp": "lt", "ref": 1 << 30}, T, 0, 0),
        ({"op": "data", "n": 33, "data": "good", "mask": "top+4092"}, T, 0, 0),
        ({"op": "data", "n": 32, "data": "good", "mask": "top+4092"}, F, 32, pop),
        ({"op": "access", "n": 3, "data": "good", "idx": "top+4088"}, T, 0, 0),
        ({"op": "replicate", "n": 2, "data": "good", "cnt": "top+4092"}, T, 0, 0),
        ({"op": "filter", "n": 2, "data": "ids", "cnt": "top+4092", "best": True}, T, 0, 0),
        ({"op": "expand", "n": 3, "data": "good", "idx": "sidx", "cnt": "top+4088"}, T, 0, 0),
        ({"op": "data", "n": 2, "data": "top+4088", "esize": 8}, T, 0, 0),
        ({"op": "data", "n": 1, "data": "top+4088", "esize": 8}, F, 1, 1),
        ({"op": "access", "n": 6, "data": "top", "idx": "gidx"}, T, 6, 4),
        ({"op": "access", "n": 4, "data": "top", "idx": "g8idx", "esize": 8}, T, 4, 3),
        ({"op": "expand", "n": 4, "data": "top", "idx": "eidx", "cnt": "ecnt"}, T, 4, 4),
        ({"op": "expand", "n": 2, "data": "top", "idx": "e0idx", "cnt": "e0cnt"}, F, 2, 3),
        ({"op": "data", "n": 33, "data": "good", "mask": "mask"}, F, 33, 25),     # a clean one in between
        ({"op": "data", "n": 8, "data": "good", "out": "top+4064"}, F, 8, 8),    # ends at the top: fine
        ({"op": "data", "n": 16, "data": "good+64", "out": "top+4064"}, T, 16, 16),
        ({"op": "bitmask", "n": 100, "data": "good", "cmp": "ge", "ref": 0, "out": "top+4088"}, T, 100, 100),
        ({"op": "group", "n": 10, "data": "ids", "target": 0, "out": "top+4080"}, T, 10, 10),
        ({"op": "replicate", "n": 4, "data": "good", "cnt": "cnt4", "out": "top+4072"}, T, 4, 10),
        ({"op": "filter", "n": 40, "data": "fids", "clear": True, "out": "top+4092"}, T, 40, 40),
        ({"op": "data", "n": 20, "data": "good"}, F, 20, 20),                  # later operations still work
        ({"op": "bitmask", "n": 33, "data": "good", "cmp": "lt", "ref": 1 << 30}, F, 33, lt),
        ({"op": "expand", "n": 4, "data": "good", "idx": "sidx", "cnt": "scnt"}, F, 4, 6),
        ({"op": "group", "n": 10, "data": "ids", "target": 0}, F, 10, 10),
    ]
    wl_ops = []
    for k, (op, *_) in enumerate(ops):
        if "out" not in op:
            regions[f"o{k}"] = {"empty": 1024}
            op = {"out": f"o{k}", **op}
        wl_ops.append(op)
    # What the gathers and the cut outputs must have written (dumped after the run).
    expect = {"o11": [int(tw[i]) for i in (1, 1023, 5, 7)],
              "o13": [int(tw[i]) for i in (1, 2, 3, 4)],
              "o14": [int(tw[i]) for i in (2, 3, 4)],
              # The last 8 words after the cut outputs, each written over the earlier ones: op 17's
              # good[16..23] (8 of 16) at 4064; op 20's good[0] x3, good[2] x2, good[3] (6 of 10) from
              # 4072; op 21's first bit word (all kept: ones) at 4092. (Ops 18 and 19 are checked
              # against the TLM.)
              "top+4064": [int(good[16]), int(good[17])] + [int(good[0])] * 3 + [int(good[2])] * 2 + [0xFFFFFFFF]}
    run = {"name": "address-space top", "seed": 12, "workload": {"kind": "directed", "regions": regions,
                                                                  "ops": wl_ops},
           "timing": {"latency": [1, 15], "req_ready": 0.8, "seed": 12}, "status_ready": 0.8,
           "dump": [["o11", 4], ["o13", 4], ["o14", 3], ["top", 8, 4064]]}
    return run, ops, expect


def check_top(res, runs, ops, expect):
    r = next(r for run, r in zip(runs, res["runs"]) if run["name"] == "address-space top")
    assert r["mismatches"] == [] and r["ops"] == len(ops)           # equal to the TLM, and no hang
    got = [(bool(s["cmd_error"]), s["elements_in"], s["elements_out"]) for s in r["statuses"]]
    assert got == [(e, n_in, n_out) for _, e, n_in, n_out in ops]
    for s, (_, e, n_in, _) in zip(r["statuses"], ops):
        assert not s["mem_error"]
        if e and n_in == 0:                                            # rejected: no memory access
            assert s["writes"] == 0 and not any(s["reads"].values())
    assert r["dump"]["o11"] == expect["o11"] and r["dump"]["o13"] == expect["o13"]
    assert r["dump"]["o14"] == expect["o14"]
    assert r["dump"]["top+4064"] == expect["top+4064"]


def check(res, runs):
    assert len(res["runs"]) == len(runs)
    for run, r in zip(runs, res["runs"]):
        assert r["mismatches"] == [], f"{run['name']}: {r['mismatches'][:5]}"
        assert r["ops"] == r["expected_ops"] > 0
        if run["workload"].get("kind") != "directed" and run["workload"].get("raw", True):
            # The unknown opcode inserted by every random workload ends with a command error.
            assert any(s["cmd_error"] for s in r["statuses"])
    err = next(r for run, r in zip(runs, res["runs"]) if run["name"] == "memory errors")
    assert err["memory"]["errors"] > 0 and any(s["mem_error"] for s in err["statuses"])
    assert any(not s["mem_error"] for s in err["statuses"])


def check_directed(res, runs, expect):
    by_name = {run["name"]: r for run, r in zip(runs, res["runs"])}
    r = by_name["memory errors/streams"]
    assert [s["mem_error"] for s in r["statuses"]] == [e for _, e in ERROR_OPS]
    assert [s["elements_in"] for s in r["statuses"]] == [op["n"] for op, _ in ERROR_OPS]
    assert not any(s["cmd_error"] for s in r["statuses"])
    assert by_name["hash state"]["dump"] == expect


@pytest.mark.parametrize("sim, preset", [("icarus", "tx1-sim"), ("icarus", "tiny"),
                                         ("verilator", "gtx980-sim"), ("verilator", "tiny")])
def test_scu_cocotb(sim, preset):
    """Icarus runs tx1-sim and tiny (and the other configurations below, width 8
    among them; the mutation campaigns use Icarus), Verilator the two its
    RTL-in-the-loop tests build (docs/verification.md, "Simulators"); gtx980-sim
    (width 4) runs on Icarus in the demo's SCU step (verif/test_demo.py)."""
    cfg = SCUConfig.preset(preset)
    hs, expect = hash_state_run(cfg)
    top, top_ops, top_expect = top_run()
    runs = scu_runs() + [error_run(), hs, top]
    res = run_cocotb(build_verilog("scu", cfg), "sim.scu.tb", {"config": cfg.to_dict(), "runs": runs}, sim=sim)
    check(res, runs)
    check_directed(res, runs, expect)
    check_top(res, runs, top_ops, top_expect)
    kinds = {k for r in res["runs"] for k in r["kinds"]}
    assert kinds >= {"bitmask", "data", "access", "replicate", "expand", "filter", "group"}


OTHER_CONFIGS = {
    "w8-4B": SCUConfig(width=8, max_elem_bytes=4, filter_sets=8, filter_ways=1, group_sets=2, group_ways=1,
                       group_size=1),
    "w8-8B": SCUConfig(width=8, max_elem_bytes=8, max_inflight=16, param_inflight=4, filter_sets=8, filter_ways=2,
                       group_sets=4, group_ways=2, group_size=4),
    "no-merge-64B": SCUConfig(width=2, block_bytes=64, merge_window=0, max_inflight=4, param_inflight=2,
                              group_size=3, group_block_bytes=64),
}


def eight_byte_run() -> dict:
    """Every operation that takes 8-byte elements, at lengths around multiples of 8
    (0, 1, 7, 9, 17, 40), from bases off a block boundary, with and without a bitmask."""
    rng = np.random.default_rng(8)
    regions = {"d8": {"random": 1024, "hi": 1 << 63, "esize": 8, "seed": 8},
               "idx": {"random": 256, "hi": 1000, "seed": 9}, "cnt": {"random": 256, "hi": 6, "seed": 10},
               "mask": {"bits": (rng.random(256) < 0.6).tolist()}}
    ops = []
    for k, n in enumerate((0, 1, 7, 9, 17, 40)):
        mask = "mask+4" if k % 2 else None
        for op in ({"op": "data", "data": f"d8+{8 * (k + 1)}"},
                   {"op": "bitmask", "data": f"d8+{8 * k}", "cmp": ("lt", "ge", "ne")[k % 3], "signed": k % 2 == 1,
                    "ref": int(rng.integers(0, 1 << 63)) * (-1 if k % 2 else 1)},
                   {"op": "access", "data": "d8", "idx": f"idx+{4 * k}"},
                   {"op": "replicate", "data": f"d8+{8 * k}", "cnt": f"cnt+{4 * k}"},
                   {"op": "expand", "data": "d8", "idx": f"idx+{4 * k}", "cnt": f"cnt+{4 * k}"}):
            name = f"o{len(ops)}"
            regions[name] = {"empty": 8 * 6 * 40 + 64}
            ops.append({**op, "n": n, "esize": 8, "mask": mask, "out": f"{name}+{8 * (k % 3)}"})
    return {"name": "8-byte elements", "seed": 8, "workload": {"kind": "directed", "regions": regions, "ops": ops},
            "timing": {"latency": [1, 30], "req_ready": 0.7, "seed": 8}, "status_ready": 0.6}


def other_runs(name: str) -> list[dict]:
    if name == "w8-8B":          # a small run: 8-byte elements at width 8, with back-pressure
        return [eight_byte_run()] + scu_runs(ops=8)[1:2] + [scu_runs(ops=8)[-1]]
    return scu_runs(ops=10, e8=OTHER_CONFIGS[name].max_elem_bytes == 8)[1:]


@pytest.mark.parametrize("name", sorted(OTHER_CONFIGS))
def test_scu_other_configs_icarus(name):
    cfg = OTHER_CONFIGS[name]
    runs = other_runs(name)
    res = run_cocotb(build_verilog("scu", cfg), "sim.scu.tb", {"config": cfg.to_dict(), "runs": runs}, sim="icarus")
    check(res, runs)
    if name == "w8-8B":
        check_8byte(res)


def check_8byte(res):
    """8-byte operations ran and moved elements."""
    done = [s for r in res["runs"] for s, e in zip(r["statuses"], r["esizes"]) if e == 8 and not s["cmd_error"]]
    assert len(done) >= 30 and sum(s["elements_out"] for s in done) > 100

