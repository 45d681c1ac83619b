"""Commands of the Memory Fast Forward unit (the slides' API, "MFF Overview: API";
docs/mff.md, "Commands") and what one command produced.

A command is one warp's call: ``PC_gather`` (every thread ``t`` asks for
``V[C[cidx_t + i]]``, ``i < size_t``, written to its scratchpad at
``target_t + i * vsize``), ``PC_scatter_set`` (every thread with ``size = 1``
sets bit ``cidx_t`` of the bitmap at ``vbase``), or ``invalidate`` (the tag
unit forgets its lines; the runtime issues it at kernel boundaries). A
:class:`Poke` is the host (GPU) writing memory between commands.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .config import MFF_OPS, MFFConfig

__all__ = ["ThreadRequest", "MFFCommand", "MFFResult", "MFFError", "Poke"]


class MFFError(ValueError):
    """A command the unit cannot take (value out of range), or a model that stopped."""


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
class Poke:
    """The host (GPU) writes ``data`` at ``addr`` between commands: a barrier in a
    command sequence (every command before it completes first)."""

    addr: int
    data: bytes


@dataclass(frozen=True)
class MFFCommand:
    op: str
    warp: int
    threads: tuple = ()
    cbase: int = 0           # byte address of C (4-byte indices)
    vbase: int = 0           # byte address of V (or of the bitmap for a scatter)
    vsize: int = 4           # bytes per V element: 4 or 8

    def check(self, config: MFFConfig) -> None:
        """Raise :class:`MFFError` naming the field if the command cannot be encoded."""
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
            if self.op == "scatter" and t.size not in (0, 1):
                raise MFFError(f"lane {t.lane}: a scatter thread's size is 1 (set bit cidx) or 0 (inactive), "
                               f"not {t.size}")
            if self.op == "gather" and (t.target < 0 or t.target + t.size * self.vsize > (1 << config.target_width)):
                raise MFFError(f"lane {t.lane}: scratchpad target {t.target} + {t.size} values of {self.vsize} B "
                               f"exceeds the {config.target_width}-bit scratchpad")
            if self.op == "gather" and t.target % self.vsize:
                raise MFFError(f"lane {t.lane}: scratchpad target {t.target} is not {self.vsize}-byte aligned")

    @property
    def elements(self) -> int:
        """Work registers the command takes in all (one per gathered value or set bit)."""
        if self.op == "gather":
            return sum(t.size for t in self.threads)
        return sum(t.size != 0 for t in self.threads) if self.op == "scatter" else 0


@dataclass
class MFFResult:
    """What a command produced.

    ``values`` maps scratchpad byte addresses to values; ``reads`` are the block
    reads the command's registers caused (the structural TLM attributes a read to
    the command whose register allocated the tag entry; the functional model
    counts its LRU misses); ``writes`` the bitmap write-backs it caused;
    ``blocks`` the distinct blocks its elements touch (C and V blocks of a gather,
    bitmap blocks of a scatter). The structural TLM also gives the cycle the
    command's first entry was accepted (``start``), the cycle of its last value
    (``last_value``, -1 if none) and of its completion (``done``)."""

    values: dict = field(default_factory=dict)     # scratchpad byte address -> value
    error: bool = False
    reads: int = 0
    writes: int = 0
    blocks: set = field(default_factory=set)
    start: int = -1
    last_value: int = -1
    done: int = -1
