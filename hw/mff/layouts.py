"""The payloads of the MFF's RTL (hw/mff/): a command's thread entry, a gathered
value for the scratchpad, a completion, a work register and a block read waiting
for the memory port (MFF slides, "Internal Structure of MFF Unit"; docs/mff.md)."""
from amaranth.lib import data, enum
from amaranth.utils import ceil_log2, exact_log2

from golden.mff import MFFConfig
from ..component import ConfiguredComponent

__all__ = ["ConfiguredComponent", "MFFCommandLayout", "MFFSpadWrite", "MFFDone", "RegState", "WorkRegister",
           "BlockRead", "widths"]


class MFFCommandLayout(data.StructLayout):
    """One thread entry of a command; ``last`` ends the command."""

    def __init__(self, c: MFFConfig):
        super().__init__({"op": 2, "warp": c.warp_bits, "lane": 5, "cidx": 32, "size": c.size_width,
                          "target": c.target_width, "cbase": c.addr_width, "vbase": c.addr_width, "vsize8": 1,
                          "last": 1})


class MFFSpadWrite(data.StructLayout):
    def __init__(self, c: MFFConfig):
        super().__init__({"warp": c.warp_bits, "addr": c.target_width, "data": 64, "e8": 1})


class MFFDone(data.StructLayout):
    def __init__(self, c: MFFConfig):
        super().__init__({"warp": c.warp_bits, "error": 1})


class RegState(enum.Enum, shape=2):
    """What a work register waits for: the block of ``C[i]`` (``C``), the block of
    ``V[C[i]]`` (``V``), or a scatter's bitmap block (``S``)."""
    C = 0
    V = 1
    S = 2


class widths:
    """The index widths of a configuration: ``rb`` a work register, ``tb`` a tag
    entry, ``jb`` a job entry, ``bbb`` a byte in a block, ``BW`` a block number;
    ``NIL`` (= ``work_registers``) is "no register"."""

    def __init__(self, c: MFFConfig):
        self.rb = ceil_log2(c.work_registers)
        self.tb = max(1, ceil_log2(c.tag_entries))
        self.jb = max(1, ceil_log2(c.job_entries))
        self.bbb = exact_log2(c.block_bytes)
        self.BW = c.addr_width - self.bbb
        self.NIL = c.work_registers


class WorkRegister(data.StructLayout):
    """One work register: its state, job entry, scratchpad target (a scatter's bit
    in the byte), the address it waits on and the next register of its entry's list
    (``NIL``: none)."""

    def __init__(self, c: MFFConfig):
        w = widths(c)
        super().__init__({"st": RegState, "job": w.jb, "target": c.target_width, "addr": c.addr_width,
                          "next": w.rb + 1})


class BlockRead(data.StructLayout):
    """A block read waiting for the memory port: the block number and the tag entry
    its data goes to."""

    def __init__(self, c: MFFConfig):
        w = widths(c)
        super().__init__({"block": w.BW, "entry": w.tb})


