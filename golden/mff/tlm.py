"""Transaction-level model of the Memory Fast Forward unit (MFF slides, "How MFF
Unit Works"; docs/mff.md).

A command is one warp's call: ``PC_gather`` (every thread ``t`` asks for
``V[C[cidx_t + i]]``, ``i < size_t``, written to its scratchpad at
``target_t + i * vsize``), ``PC_scatter_set`` (every thread sets bit ``cidx_t``
of the bitmap at ``vbase``; the bits of one block are set with one read and one
write of that block), or ``invalidate`` (the tag unit forgets its lines: the
runtime issues it at kernel boundaries, when the GPU may have written the
arrays). A gather or scatter completes (``PC_wait`` returns) once all of its
values are in the scratchpad and its bitmap blocks are written.

Exact (checked against the RTL): every scratchpad value, the completion of every
command, the error flag, and the final memory. The memory requests are exact as
long as a command's blocks fit in the tag unit (no eviction): one read per
distinct block; otherwise the TLM's count (an LRU tag unit, elements in issue
order) is an estimate of the RTL's, whose order depends on timing.
"""
from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from ..memory import AddressSpace
from .config import MFF_OPS, MFFConfig

__all__ = ["ThreadRequest", "MFFCommand", "MFFResult", "MFFModel", "MFFError"]


class MFFError(ValueError):
    """A command the unit cannot take (value out of range)."""


@dataclass(frozen=True)
class ThreadRequest:
    """One thread of a command: ``cidx`` (C index, or the bit for a scatter),
    ``size`` (elements to gather; for a scatter 1 sets bit ``cidx`` and 0 means the
    thread is inactive), ``target`` (scratchpad byte address of the first value)."""

    lane: int
    cidx: int
    size: int = 1
    target: int = 0


@dataclass(frozen=True)
class MFFCommand:
    op: str
    warp: int
    threads: tuple = ()
    cbase: int = 0           # byte address of C (4-byte indices)
    vbase: int = 0           # byte address of V (or of the bitmap for a scatter)
    vsize: int = 4           # bytes per V element: 4 or 8

    def check(self, config: MFFConfig) -> None:
        if self.op not in MFF_OPS:
            raise MFFError(f"unknown MFF operation {self.op!r}; operations: {', '.join(MFF_OPS)}")
        if not 0 <= self.warp < (1 << config.warp_bits):
            raise MFFError(f"warp id {self.warp} does not fit in {config.warp_bits} bits")
        if self.vsize not in (4, 8):
            raise MFFError(f"vsize must be 4 or 8, not {self.vsize}")
        top = 1 << config.addr_width
        for name in ("cbase", "vbase"):
            v = getattr(self, name)
            if not 0 <= v < top:
                raise MFFError(f"{name}={v:#x} is outside the {config.addr_width}-bit address space")
        if self.cbase % 4 or self.vbase % self.vsize:
            raise MFFError(f"cbase must be 4-byte aligned and vbase {self.vsize}-byte aligned "
                           f"(cbase={self.cbase:#x}, vbase={self.vbase:#x})")
        lanes = set()
        for t in self.threads:
            if t.lane in lanes or not 0 <= t.lane < 32:
                raise MFFError(f"lane {t.lane} is repeated or not in [0, 31]")
            lanes.add(t.lane)
            if not 0 <= t.size < (1 << config.size_width):
                raise MFFError(f"lane {t.lane}: size {t.size} must be in [0, {(1 << config.size_width) - 1}]")
            if not 0 <= t.cidx < (1 << 32):
                raise MFFError(f"lane {t.lane}: index {t.cidx} must be a 32-bit unsigned value")
            if self.op == "gather" and (t.target < 0 or t.target + t.size * self.vsize > (1 << config.target_width)):
                raise MFFError(f"lane {t.lane}: scratchpad target {t.target} + {t.size} values of {self.vsize} B "
                               f"exceeds the {config.target_width}-bit scratchpad")
            if self.op == "gather" and t.target % self.vsize:
                raise MFFError(f"lane {t.lane}: scratchpad target {t.target} is not {self.vsize}-byte aligned")

    @property
    def elements(self) -> int:
        if self.op == "gather":
            return sum(t.size for t in self.threads)
        return sum(t.size != 0 for t in self.threads) if self.op == "scatter" else 0


@dataclass
class MFFResult:
    """What a command produced."""

    values: dict = field(default_factory=dict)     # scratchpad byte address -> value
    error: bool = False
    reads: int = 0                                  # block reads issued (TLM: LRU estimate)
    writes: int = 0                                 # block writes (scatter)
    blocks: set = field(default_factory=set)        # distinct blocks read


class MFFModel:
    """The MFF as a transaction-level model on an :class:`AddressSpace`."""

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
        bb = self.config.block_bytes
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

    def run(self, cmds) -> list[MFFResult]:
        return [self.execute(c) for c in cmds]


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
