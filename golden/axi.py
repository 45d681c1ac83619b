"""Configuration of the AXI4 bridge of the memory port (docs/architecture.md,
"AXI4"): a unit's memory port (:class:`golden.fetch.MemPortConfig`) as an AXI4
master, so that a unit can sit in an FPGA or SoC design (Vivado, LiteX).

AMBA AXI4 (ARM IHI 0022E): one request is one INCR burst of
``block_bytes / data_bytes`` beats of ``data_bytes`` (the bus width), its ID the
request's tag; responses may come back in any order and read data of different
IDs interleaved; SLVERR and DECERR answer with the port's error flag.
"""
from __future__ import annotations

from dataclasses import dataclass

from .config import Config, check, check_int, check_pow2
from .fetch import MemPortConfig

__all__ = ["AXIBridgeConfig"]


@dataclass(frozen=True)
class AXIBridgeConfig(Config):
    """The memory port's geometry (``addr_width``, ``block_bytes``, ``tag_width``: a
    unit's :class:`golden.fetch.MemPortConfig`) and the AXI4 data bus width
    ``data_bytes`` (4 to ``block_bytes``; AXI4 allows 4 to 128 bytes). The ID width
    is ``tag_width``; a burst never crosses a 4 KB boundary (a block-aligned block of
    at most 256 bytes)."""

    addr_width: int = 32
    block_bytes: int = 32
    tag_width: int = 5
    data_bytes: int = 32

    #: Bus widths: a 256-bit bus moves a 32-byte sector in one beat (the units'
    #: default port); 128- and 64-bit buses take 2 and 4 beats; ``line``: 128-byte
    #: blocks (the MFF's gtx480 preset) on a 256-bit bus.
    PRESETS = {"default": {}, "axi128": {"data_bytes": 16}, "axi64": {"data_bytes": 8},
               "line": {"block_bytes": 128}, "small": {"addr_width": 16, "tag_width": 2, "data_bytes": 8}}

    def validate(self) -> None:
        n = type(self).__name__
        check_int(n, "addr_width", self.addr_width, 16, 48)                  # the port's ranges
        check_pow2(n, "block_bytes", self.block_bytes, 4, 256)
        check_int(n, "tag_width", self.tag_width, 1, 16)
        check_pow2(n, "data_bytes", self.data_bytes, 4, 128)
        check(self.data_bytes <= self.block_bytes,
              f"{n}.data_bytes must be at most block_bytes ({self.block_bytes}), not {self.data_bytes}")
        check_int(n, "beats", self.beats, 1, 256)

    @property
    def port(self) -> MemPortConfig:
        return MemPortConfig(self.addr_width, self.block_bytes, self.tag_width)

    @property
    def beats(self) -> int:
        """Beats of one request's burst (AxLEN + 1)."""
        return self.block_bytes // self.data_bytes

    @classmethod
    def for_port(cls, port: MemPortConfig, data_bytes: int | None = None) -> "AXIBridgeConfig":
        """The bridge of a unit's port, by default with a bus as wide as its blocks."""
        return cls(port.addr_width, port.block_bytes, port.tag_width, data_bytes or port.block_bytes)
