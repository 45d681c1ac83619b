"""The SCU's command check (SCU paper §3.2; docs/scu.md, "Errors"): the rules by
which a command descriptor is rejected as it arrives, with ``cmd_error`` and no
memory access (the same rules as :meth:`golden.scu.SCUModel.cmd_error`)."""
from amaranth import *
from amaranth.lib.wiring import In, Out

from golden.scu import CMP_CODES, OP_CODES, STREAMS, SCUConfig
from .layouts import ConfiguredComponent, SCUCommand

__all__ = ["CommandCheck"]

OP = OP_CODES
CMP = CMP_CODES


class CommandCheck(ConfiguredComponent):
    """``bad``: the command ``cmd`` cannot be performed (combinational): an unknown
    operation or comparison, 8-byte elements on a 4-byte unit or for filtering and
    grouping, a bitmask for grouping, a misaligned data, output, index, count or
    mask address, or a linear input range (data, or idx for gathers; cnt where
    counts or costs are read; the mask) that ends past the top of the address space
    (the fetch engines' rule, hw/fetch/engine.py: checked here, so that a stream
    never ends early while the others go on and the joiner waits).

    Parameters
    ----------
    config : SCUConfig
        ``addr_width``, ``count_width``, ``max_elem_bytes``.
    """

    def __init__(self, config: SCUConfig):
        super().__init__(config, {"cmd": In(SCUCommand(config)), "bad": Out(1)})

    def elaborate(self, platform):
        m = Module()
        cfg = self._config
        AW, CW = cfg.addr_width, cfg.count_width
        support8 = cfg.max_elem_bytes == 8
        c = self.cmd
        cop = {name: (c.op == code) for name, code in OP.items()}
        c_bitout4 = cop["bitmask"] | cop["filter"] | cop["group"]
        c_uses_idx = cop["access"] | cop["expand"]
        c_uses_cnt = cop["replicate"] | cop["expand"] | (cop["filter"] & c.best)
        top = 1 << AW
        c_end = {name: Signal(AW + CW + 4, name=f"cmd_end_{name}") for name in STREAMS}
        m.d.comb += [
            c_end["data"].eq(c.data + Mux(c.esize8, c.n << 3, c.n << 2)),
            c_end["idx"].eq(c.idx + (c.n << 2)),
            c_end["cnt"].eq(c.cnt + (c.n << 2)),
            c_end["mask"].eq(c.mask + (((c.n + 31) >> 5) << 2)),
        ]
        c_past = ((~c_uses_idx & (c_end["data"] > top)) | (c_uses_idx & (c_end["idx"] > top)) |
                  (c_uses_cnt & (c_end["cnt"] > top)) | (c.use_mask & (c_end["mask"] > top)))
        m.d.comb += self.bad.eq(
            (c.op > max(OP.values())) | (cop["bitmask"] & (c.cmp > max(CMP.values()))) |
            (c.esize8 & (not support8)) | ((cop["filter"] | cop["group"]) & c.esize8) |
            (cop["group"] & c.use_mask) |
            Mux(c.esize8, c.data[:3] != 0, c.data[:2] != 0) |
            Mux(c_bitout4 | ~c.esize8, c.out[:2] != 0, c.out[:3] != 0) |
            (c_uses_idx & (c.idx[:2] != 0)) | (c_uses_cnt & (c.cnt[:2] != 0)) | (c.use_mask & (c.mask[:2] != 0)) |
            c_past)
        return m
