"""Every unit behind AXI4 (docs/architecture.md, "AXI4"): the unit's memory ports
as AXI4 masters (:class:`hw.axi.bridge.MemToAXI4`), its streams as AXI4-Stream
(AMBA 4 AXI4-Stream, ARM IHI 0051A: TVALID/TREADY/TDATA), its other ports as they
are, so that it drops into a Vivado block design or a LiteX SoC.

Names: the memory port ``mem`` -> ``m_axi_<signal>`` (``mem0``, ``mem1``... ->
``m_axi_mem0_<signal>``...); a stream into the unit ``cmd`` -> ``s_axis_cmd_tvalid``,
``s_axis_cmd_tready``, ``s_axis_cmd_tdata``; a stream out of it ``status`` ->
``m_axis_status_t*``. TDATA is the stream's payload (its layout's bits, the
lowest first) padded with zeros to whole bytes. ``axi_names`` gives the mapping,
so that a testbench written for the bare unit can drive the wrapped one.
"""
from __future__ import annotations

from amaranth import *
from amaranth.hdl import Shape
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from golden.axi import AXIBridgeConfig
from golden.config import ConfigError
from ..mem.port import MemPortSignature
from .bridge import MemToAXI4, axi4_master_members

__all__ = ["AXI4Wrapper", "axi_names"]


def _plan(inner, data_bytes):
    """(kind, name, details) for every member of the unit's signature."""
    out = []
    for name, mem in inner.signature.members.items():
        if not mem.is_signature:
            out.append(("port", name, mem))
            continue
        sig = mem.signature
        base = sig.flip() if isinstance(sig, wiring.FlippedSignature) else sig
        if isinstance(base, MemPortSignature):
            if mem.flow == In:
                raise ConfigError(f"{type(inner).__name__} serves memory requests on {name!r} (it is a memory "
                                  f"target, such as the AXI4 bridge itself): the AXI4 wrapper makes AXI4 masters "
                                  f"of a unit's memory ports only")
            out.append(("mem", name, AXIBridgeConfig.for_port(base.config, data_bytes)))
        elif isinstance(base, stream.Signature):
            width = Shape.cast(base.members["payload"].shape).width
            out.append(("stream", name, (mem.flow == In, width, max(8, -(-width // 8) * 8))))
        else:
            raise TypeError(f"the AXI4 wrapper has no mapping for {name!r} ({base!r})")
    return out


def _mem_prefix(name: str) -> str:
    return "m_axi_" if name == "mem" else f"m_axi_{name}_"


def axi_names(inner, data_bytes: int | None = None) -> dict[str, str]:
    """Port names of the bare unit (``cmd__valid``, ``mem__req__payload``...) ->
    those of its wrapper; ports of the memory interfaces have no counterpart."""
    out = {}
    for kind, name, d in _plan(inner, data_bytes):
        if kind == "stream":
            side = "s_axis" if d[0] else "m_axis"
            out |= {f"{name}__valid": f"{side}_{name}_tvalid", f"{name}__ready": f"{side}_{name}_tready",
                    f"{name}__payload": f"{side}_{name}_tdata"}
    return out


class AXI4Wrapper(wiring.Component):
    """The component ``inner`` (a unit built from its configuration) behind AXI4.
    ``data_bytes``: the AXI4 data bus of every memory port (default: the port's
    block, a block a beat)."""

    def __init__(self, inner: wiring.Component, data_bytes: int | None = None):
        self.inner = inner
        self._plan = _plan(inner, data_bytes)
        members = {}
        for kind, name, d in self._plan:
            if kind == "port":
                members[name] = (In if d.flow == In else Out)(d.shape)
            elif kind == "mem":
                members |= axi4_master_members(d, _mem_prefix(name))
            else:
                into, _, tw = d
                side, flow_in, flow_out = ("s_axis", In, Out) if into else ("m_axis", Out, In)
                members |= {f"{side}_{name}_tvalid": flow_in(1), f"{side}_{name}_tready": flow_out(1),
                            f"{side}_{name}_tdata": flow_in(tw)}
        super().__init__(members)

    @property
    def config(self):
        return self.inner.config

    def elaborate(self, platform):
        m = Module()
        m.submodules.unit = u = self.inner
        for kind, name, d in self._plan:
            port = getattr(u, name)
            if kind == "port":
                m.d.comb += (getattr(self, name).eq(port) if d.flow == Out else port.eq(getattr(self, name)))
            elif kind == "mem":
                bridge = MemToAXI4(d)
                m.submodules[f"axi_{name}"] = bridge
                wiring.connect(m, port, bridge.mem)
                prefix = _mem_prefix(name)
                for sig, mem in axi4_master_members(d, "").items():
                    outer, b = getattr(self, prefix + sig), getattr(bridge, "m_axi_" + sig)
                    m.d.comb += (outer.eq(b) if mem.flow == Out else b.eq(outer))
            else:
                into, width, _ = d
                side = "s_axis" if into else "m_axis"
                tvalid, tready, tdata = (getattr(self, f"{side}_{name}_{s}") for s in ("tvalid", "tready", "tdata"))
                if into:
                    m.d.comb += [port.valid.eq(tvalid), port.payload.eq(tdata[:width]), tready.eq(port.ready)]
                else:
                    m.d.comb += [tvalid.eq(port.valid), tdata.eq(port.payload.as_value()), port.ready.eq(tready)]
        return m
