"""Transaction-level model of the warp coalescer (hw/emogi/coalescer.py;
docs/emogi.md, "RTL warp coalescer").

One warp memory instruction — ``lanes`` byte addresses and an active mask — in;
the PCIe read requests it needs out. The rule is the golden coalescer's
(:func:`golden.gpu.coalesce_warp`, EMOGI's FPGA traces): the distinct sectors
touched by active lanes, merged while contiguous inside one line, a gap or a
line boundary starting a new request. The order is the RTL's: **ascending
address** (lines in ascending order, the runs of a line from its lowest
sector). The last request of a warp carries ``last``; a warp with no active
lane produces no request.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from .config import CoalescerConfig

__all__ = ["PCIeRequest", "warp_requests", "coalescer_model", "request_histogram"]


@dataclass(frozen=True)
class PCIeRequest:
    """A read request: byte ``addr`` (sector aligned), ``size`` in bytes
    (1 to ``line_bytes / sector_bytes`` sectors), ``last`` request of its warp."""

    addr: int
    size: int
    last: bool

    def as_tuple(self) -> tuple:
        return (self.addr, self.size, int(self.last))


def _check_warp(config: CoalescerConfig, addrs: Sequence[int], mask) -> tuple[list[int], int]:
    L = config.lanes
    addrs = list(addrs)
    if len(addrs) != L:
        raise ValueError(f"a warp has {L} lane addresses, not {len(addrs)}")
    if mask is None:
        mask = (1 << L) - 1
    elif not isinstance(mask, (int,)) or isinstance(mask, bool):
        bits = list(mask)
        if len(bits) != L:
            raise ValueError(f"the active mask has {L} lanes, not {len(bits)}")
        mask = sum(1 << i for i, b in enumerate(bits) if b)
    if not 0 <= mask < 1 << L:
        raise ValueError(f"the active mask must be a {L}-bit lane mask, not {mask:#x}")
    top = 1 << config.addr_width
    out = []
    for lane, a in enumerate(addrs):
        if isinstance(a, bool) or not isinstance(a, int):
            try:
                a = int(a)
            except (TypeError, ValueError):
                raise ValueError(f"lane {lane}: address {a!r} is not an integer") from None
        if not 0 <= a < top:
            raise ValueError(f"lane {lane}: address {a:#x} does not fit in {config.addr_width} bits")
        out.append(a)
    return out, mask


def warp_requests(config: CoalescerConfig, addrs: Sequence[int], mask=None) -> list[PCIeRequest]:
    """The requests of one warp instruction, in ascending address order.

    Parameters
    ----------
    addrs : sequence of ``config.lanes`` ints
        Byte address of every lane (inactive lanes' addresses are ignored, but
        must fit in ``addr_width`` bits like every value on the port).
    mask : int, sequence of bools, or None
        Active lanes (bit ``i`` = lane ``i``); ``None``: all lanes.

    Raises
    ------
    ValueError
        Wrong number of lanes, a mask or an address that does not fit.
    """
    addrs, mask = _check_warp(config, addrs, mask)
    sb, spl = config.sector_bits, config.sectors_per_line
    sectors = sorted({a >> sb for lane, a in enumerate(addrs) if mask >> lane & 1})
    runs: list[list[int]] = []
    for s in sectors:
        if runs and s == runs[-1][0] + runs[-1][1] and s // spl == runs[-1][0] // spl:
            runs[-1][1] += 1
        else:
            runs.append([s, 1])
    return [PCIeRequest(first << sb, n << sb, i == len(runs) - 1) for i, (first, n) in enumerate(runs)]


def coalescer_model(config: CoalescerConfig, warps: Iterable) -> list[PCIeRequest]:
    """The request stream of a sequence of warps ``(addrs, mask)``, in order."""
    out: list[PCIeRequest] = []
    for addrs, mask in warps:
        out.extend(warp_requests(config, addrs, mask))
    return out


def request_histogram(config: CoalescerConfig, requests: Iterable[PCIeRequest]) -> dict:
    """Requests by size in bytes (every size from one sector to a line)."""
    hist = {config.sector_bytes * k: 0 for k in range(1, config.sectors_per_line + 1)}
    for r in requests:
        hist[r.size] += 1
    return hist
