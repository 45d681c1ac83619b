"""Configuration and command encoding of the Memory Fast Forward unit (MFF
slides, Park et al., DATE 2015: "Internal Structure of MFF Unit"; docs/mff.md).

The slides give the structure (Issue Engine job entries, a pool of Work
Registers, a Tag Unit that is "a memory request buffer plus a cache") but no
sizes; the presets below are this project's choices (docs/mff.md).
"""
from __future__ import annotations

from dataclasses import dataclass

from ..config import Config, check, check_choice, check_int, check_pow2
from ..fetch import MemPortConfig

__all__ = ["MFFConfig", "MFF_OPS"]

#: Command operations: gather (PC_gather), scatter (PC_scatter_set), invalidate (the
#: tag unit's lines, at a kernel boundary).
MFF_OPS = {"gather": 0, "scatter": 1, "invalidate": 2}


@dataclass(frozen=True)
class MFFConfig(Config):
    """Parameters of the MFF unit.

    Parameters
    ----------
    addr_width, block_bytes : int
        Memory port geometry (a request reads or writes one block).
    work_registers : int
        Work Registers: elements in flight (one register = one read of C and one
        read of V); a power of two in [4, 1024].
    tag_entries : int
        Tag Unit entries: blocks outstanding or held (their line data).
    job_entries : int
        Issue Engine job entries: warps with a command in flight.
    warp_bits : int
        Width of a warp id (warps of the GPU that may call the unit).
    target_width : int
        Width of a scratchpad byte address.
    size_width : int
        Width of one thread's gather size.
    """

    addr_width: int = 32
    block_bytes: int = 32
    work_registers: int = 32
    tag_entries: int = 16
    job_entries: int = 4
    warp_bits: int = 8
    target_width: int = 16
    size_width: int = 16

    PRESETS = {
        "default": {},
        # GTX 480 (the slides' GPU): 128 B lines; a register pool and tag unit sized
        # for its 48 KB scratchpads (our choice: the slides give no sizes).
        "gtx480": {"block_bytes": 128, "work_registers": 64, "tag_entries": 32, "job_entries": 8},
        # Sector-sized blocks, as the other units use.
        "sector": {"block_bytes": 32, "work_registers": 32, "tag_entries": 16, "job_entries": 4},
        # Few registers and tags: exercises exhaustion and eviction (tests).
        "tiny": {"block_bytes": 32, "work_registers": 4, "tag_entries": 2, "job_entries": 2},
    }

    def validate(self) -> None:
        n = type(self).__name__
        check_int(n, "addr_width", self.addr_width, 16, 48)
        check_pow2(n, "block_bytes", self.block_bytes, 16, 256)
        # At least 4: the free-register and retry queues are Amaranth SyncFIFOBuffered
        # of depth work_registers, whose write side looks at depth - 1 inner entries;
        # with 2 registers two frees in consecutive cycles would lose one.
        check_pow2(n, "work_registers", self.work_registers, 4, 1024)
        check_pow2(n, "tag_entries", self.tag_entries, 2, 256)
        check_pow2(n, "job_entries", self.job_entries, 1, 64)
        check_int(n, "warp_bits", self.warp_bits, 1, 16)
        check_int(n, "target_width", self.target_width, 8, 24)
        check_int(n, "size_width", self.size_width, 1, 24)
        check(self.tag_entries <= self.work_registers * 2,
              f"{n}.tag_entries ({self.tag_entries}) cannot exceed twice the work registers "
              f"({self.work_registers}): an entry is only allocated for a register")

    @property
    def port(self) -> MemPortConfig:
        # Read tags are entry numbers; write-back tags have the top bit set.
        return MemPortConfig(addr_width=self.addr_width, block_bytes=self.block_bytes,
                             tag_width=(self.tag_entries - 1).bit_length() + 1)

    def derived(self) -> dict:
        return {"line_bits": self.tag_entries * self.block_bytes * 8, "ops": MFF_OPS,
                "tag_width": self.port.tag_width}


def check_vsize(vsize: int) -> None:
    check_choice("MFF command", "vsize", vsize, (4, 8))
