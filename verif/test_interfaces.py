"""The generated Verilog's interfaces against the documented ones
(docs/architecture.md, "Interfaces"): every stream payload's fields, in order from
bit 0, with the widths the docs give from the configuration. The testbenches
decode payloads with the RTL's own layouts, so a field one bit wider or moved
would pass them while breaking a design that follows the docs; this test reads
the widths from the golden configurations and the formulas below, never from
``hw/``. (The seeded-bug campaign, docs/verification.md, found such survivors.)
"""
import re

import pytest

from sim.build import build_verilog


def _bits(n: int) -> int:
    """Bits of ``range(n)``: the values 0 .. n-1."""
    return max(1, (n - 1).bit_length())


def _port_fields(text: str, top: str) -> tuple[dict, dict]:
    """``({port: width}, {port: [(field, lo, hi)...]})`` of module ``top``."""
    body = text[text.index(f"module {top}("):]
    body = body[:body.index("endmodule")]
    widths = {}
    for mo in re.finditer(r"^\s*(?:input|output)\s+(?:\[(\d+):0\]\s+)?(\w+);", body, re.M):
        widths[mo.group(2)] = int(mo.group(1)) + 1 if mo.group(1) else 1
    fields = {}
    for mo in re.finditer(r"^\s*assign \\(\w+)\.(\w+)\s+= \1\[(\d+)(?::(\d+))?\];", body, re.M):
        port, name, hi, lo = mo.group(1), mo.group(2), int(mo.group(3)), mo.group(4)
        fields.setdefault(port, []).append((name, int(lo) if lo is not None else hi, hi))
    return widths, fields


def _check(text: str, top: str, expected: dict) -> None:
    widths, fields = _port_fields(text, top)
    for port, spec in expected.items():
        want, lo = [], 0
        for name, w in spec:
            want.append((name, lo, lo + w - 1))
            lo += w
        assert widths.get(port) == lo, (port, widths.get(port), lo)
        got = sorted(fields.get(port, []), key=lambda f: f[1])
        if not got and len(want) == 1:
            continue                # a one-field payload is the field itself (no slices named)
        assert got == want, port


def _mem(port) -> dict:
    """The memory port (docs/architecture.md, "Interfaces": MemRequest, MemResponse)."""
    return {"mem__req__payload": [("addr", port.addr_width), ("write", 1), ("wdata", 8 * port.block_bytes),
                                  ("wmask", port.block_bytes), ("tag", port.tag_width)],
            "mem__resp__payload": [("tag", port.tag_width), ("rdata", 8 * port.block_bytes), ("error", 1)]}


def _fetch(c) -> dict:
    return {"cmd__payload": [("base", c.addr_width), ("count", c.count_width), ("esize8", 1), ("last", 1)],
            "o__payload": [("data", c.width * 8 * c.max_elem_bytes), ("n", _bits(c.width + 1)), ("last", 1),
                           ("error", 2)],
            **_mem(c.port)}


def _coalescer(c) -> dict:
    return {"i__payload": [("addr", c.lanes * c.addr_width), ("mask", c.lanes)],
            "o__payload": [("addr", c.addr_width), ("size", _bits(c.line_bytes + 1)), ("last", 1)]}


def _mff(c) -> dict:
    return {"cmd__payload": [("op", 2), ("warp", c.warp_bits), ("lane", 5), ("cidx", 32),
                             ("size", c.size_width), ("target", c.target_width), ("cbase", c.addr_width),
                             ("vbase", c.addr_width), ("vsize8", 1), ("last", 1)],
            "spad__payload": [("warp", c.warp_bits), ("addr", c.target_width), ("data", 64), ("e8", 1)],
            "done__payload": [("warp", c.warp_bits), ("error", 1)],
            **_mem(c.port)}


def _scu(c) -> dict:
    aw, cw = c.addr_width, c.count_width
    return {"cmd__payload": [("op", 3), ("n", cw), ("out", aw), ("data", aw), ("mask", aw), ("use_mask", 1),
                             ("idx", aw), ("cnt", aw), ("esize8", 1), ("cmp", 3), ("signed", 1), ("ref", 64),
                             ("best", 1), ("clear", 1), ("target", aw)],
            "status__payload": [("elements_in", cw), ("elements_out", cw), ("cycles", 32), ("reads", 4 * 32),
                                ("writes", 32), ("mem_error", 1), ("cmd_error", 1)],
            **_mem(c.port)}


def _graphpeg(c) -> dict:
    aw, W = c.addr_width, c.width
    out = {"cmd__payload": [("op", 1), ("vertex_mode", 1), ("csc", 1), ("use_wt", 1), ("ef", 1),
                            ("ef_interval", 16), ("ef_shift", 5), ("row_ptr", aw), ("col", aw), ("weight", aw),
                            ("spill_base", aw), ("spill_stride", aw)],
           "status__payload": [("op", 1), ("cycles", 32), ("items", 32), ("exchanges", 16), ("moved", 32),
                               ("alwt_full", 32), ("buffer_full", 32), ("mem_error", 1), ("overflow", 1),
                               ("cmd_error", 1)],
           **_mem(c.port)}
    for k in range(c.sms):
        out[f"o{k}__payload"] = [("src", 32 * W), ("dst", 32 * W), ("wt", 32 * W), ("idx", 32 * W),
                                 ("n", _bits(W + 1)), ("warp_last", 1), ("done", 1)]
        out[f"push{k}__payload"] = [("vertex", 32)]
    return out


CASES = [("fetch", "default", _fetch), ("fetch", "tx1", _fetch), ("coalescer", "default", _coalescer),
         ("coalescer", "small", _coalescer),
         ("mff", "default", _mff), ("mff", "tiny", _mff), ("scu", "tx1-sim", _scu), ("scu", "tiny", _scu),
         ("graphpeg", "sim", _graphpeg)]


@pytest.mark.parametrize("unit, preset, expected", CASES, ids=[f"{u}-{p}" for u, p, _ in CASES])
def test_payload_fields_are_the_documented_ones(unit, preset, expected):
    from hw.registry import unit as get_unit
    cfg = get_unit(unit).config(preset)
    b = build_verilog(unit, cfg)
    _check(b.verilog.read_text(), unit, expected(cfg))


def test_the_memory_port_of_every_unit_is_the_documented_one():
    """Every unit with a memory port (the IRU: one per partition) has the documented
    request and response fields, from its golden configuration's MemPortConfig."""
    from hw.registry import unit as get_unit
    for unit, preset, ports in (("iru", "small", ("mem0", "mem1")),):
        cfg = get_unit(unit).config(preset)
        text = build_verilog(unit, cfg).verilog.read_text()
        for p in ports:
            exp = {k.replace("mem__", f"{p}__"): v for k, v in _mem(cfg.port).items()}
            _check(text, unit, exp)


def test_the_check_sees_a_moved_field():
    """The check itself: a field one bit wider, or the port one bit wider, fails."""
    text = ("module u(a__payload);\n  input [4:0] a__payload;\n"
            "  assign \\a__payload.x  = a__payload[1:0];\n  assign \\a__payload.y  = a__payload[4:2];\nendmodule\n")
    _check(text, "u", {"a__payload": [("x", 2), ("y", 3)]})
    with pytest.raises(AssertionError):
        _check(text, "u", {"a__payload": [("x", 1), ("y", 3)]})
    with pytest.raises(AssertionError):
        _check(text.replace("[4:0]", "[5:0]"), "u", {"a__payload": [("x", 2), ("y", 3)]})
