"""Functional model of the Memory Fast Forward unit (docs/mff.md, "Models").

Commands run one at a time and their elements in issue order (thread by thread,
C then V for each element) through an LRU tag unit of ``tag_entries`` lines that
keeps its lines (error lines included) until an ``invalidate``. What it gives is
exactly what the unit must produce: every scratchpad value, the error flag of
every command, the final memory (bitmaps set by scatters). Its block reads are
those of an unlimited-time unit that never has two blocks in flight: the
structural model (:class:`golden.mff.MFFModel`) is the one whose reads and cycles
equal the RTL's. :func:`gather_values` is what a gather must produce, read
straight from memory (no unit at all).
"""
from __future__ import annotations

from collections import OrderedDict
from typing import Callable

import numpy as np

from ..memory import AddressSpace
from .commands import MFFCommand, MFFResult, Poke
from .config import MFFConfig

__all__ = ["MFFFunctional", "gather_values"]


class MFFFunctional:
    """The MFF as a functional model on an :class:`AddressSpace`: commands one at a
    time, elements in issue order, an LRU tag unit of ``tag_entries`` lines."""

    def __init__(self, config: MFFConfig, space: AddressSpace, is_error: Callable[[int], bool] | None = None):
        self.config = config
        self.space = space
        self.is_error = is_error or (lambda b: False)
        # The tag unit (LRU): block -> (error, the line's bytes when it was read).
        self._lines: "OrderedDict[int, tuple[bool, bytearray]]" = OrderedDict()
        self.reads = 0
        self.writes = 0

    # ------------------------------------------------------------------ the tag unit
    def _touch(self, block: int, res: MFFResult) -> bool:
        """Access ``block`` through the tag unit; returns whether it is an error block."""
        res.blocks.add(block)
        bb = self.config.block_bytes
        if block in self._lines:
            self._lines.move_to_end(block)
        else:
            if len(self._lines) >= self.config.tag_entries:
                self._lines.popitem(last=False)
            err = self.is_error(block) or block + bb > self.space.size
            line = bytearray(bb) if err else bytearray(self.space.read(block, bb).tobytes())
            self._lines[block] = (err, line)
            res.reads += 1
            self.reads += 1
        err = self._lines[block][0]
        res.error |= err
        return err

    def _read(self, addr: int, nbytes: int, res: MFFResult) -> int:
        """A value as the tag unit's line holds it (a line may be older than memory
        if the GPU wrote it without an invalidation)."""
        bb = self.config.block_bytes
        block = addr - addr % bb
        self._touch(block, res)
        line = self._lines[block][1]
        return int.from_bytes(line[addr - block:addr - block + nbytes], "little")

    # ------------------------------------------------------------------ commands
    def execute(self, cmd: MFFCommand) -> MFFResult:
        cmd.check(self.config)
        res = MFFResult()
        bb = self.config.block_bytes
        aw = 1 << self.config.addr_width
        if cmd.op == "invalidate":
            self._lines.clear()
            return res
        if cmd.op == "gather":
            for t in cmd.threads:
                for i in range(t.size):
                    c = self._read((cmd.cbase + 4 * ((t.cidx + i) % (1 << 32))) % aw, 4, res)
                    v = self._read((cmd.vbase + cmd.vsize * c) % aw, cmd.vsize, res)
                    res.values[t.target + i * cmd.vsize] = v
            return res
        # scatter: per block one read (through the tag unit) and one write
        dirty: dict[int, int] = {}
        for t in cmd.threads:
            if t.size == 0:            # an inactive thread sets nothing
                continue
            byte = (cmd.vbase + t.cidx // 8) % aw
            self._touch(byte - byte % bb, res)
            dirty.setdefault(byte - byte % bb, 0)
            dirty[byte - byte % bb] |= 1 << ((byte % bb) * 8 + t.cidx % 8)
        for block, bits in dirty.items():
            res.writes += 1
            self.writes += 1
            if self.is_error(block) or block + bb > self.space.size:
                res.error = True
                continue
            if block in self._lines:       # the line is updated in place (write-through)
                line = self._lines[block][1]
                line[:] = (int.from_bytes(line, "little") | bits).to_bytes(bb, "little")
                new = bytes(line)
            else:                          # (the RTL keeps a dirty line; the TLM's LRU may not)
                new = (self.space.read_int(block, bb) | bits).to_bytes(bb, "little")
            mask = np.array([(bits >> (8 * i)) & 0xFF != 0 for i in range(bb)])
            self.space.write(block, np.frombuffer(new, np.uint8), mask)
        return res

    def run(self, items) -> list:
        """Execute commands in order; a :class:`Poke` writes memory (result None)."""
        out = []
        for it in items:
            if isinstance(it, Poke):
                self.space.write(it.addr, np.frombuffer(it.data, np.uint8))
                out.append(None)
            else:
                out.append(self.execute(it))
        return out


def gather_values(space: AddressSpace, cmd: MFFCommand) -> dict:
    """What a gather must produce, straight from memory (no unit model): the
    reference the tests compare both the TLM and the RTL with."""
    out = {}
    for t in cmd.threads:
        idx = np.arange(t.cidx, t.cidx + t.size, dtype=np.int64)
        if idx.size:
            c = space.gather_elems(cmd.cbase + 4 * idx, 4).astype(np.int64)
            v = space.gather_elems(cmd.vbase + cmd.vsize * c, cmd.vsize)
            for i, val in enumerate(v.tolist()):
                out[t.target + i * cmd.vsize] = int(val)
    return out
