"""The payloads of the IRU's RTL (hw/iru/): its command, warp requests, reply beats,
the element and request rings' flits and the classifier's queue entries (IRU paper
§3.2, Fig. 5; docs/iru.md), and the base of its components."""
from amaranth.lib import data, enum

from golden.iru import IRUConfig
from ..component import ConfiguredComponent

__all__ = ["ConfiguredComponent", "FlitKind", "IRUCommand", "IRURequest", "IRUReplyBeat", "IRUElement", "RingFlit",
           "RingRequest", "Fetched", "BankEntry", "RingEntry"]


class FlitKind(enum.Enum, shape=2):
    NONE = 0
    ELEM = 1        # an element for partition ``dest``
    SHIP = 2        # a remainder element for the home partition (flush)
    MARK = 3        # end of a partition's remainder: ``pos`` = elements shipped, ``sec`` = tokens


class IRUCommand(data.StructLayout):
    """``configure_iru``: ``n`` elements; index array at word ``idx`` (byte address / 4);
    secondary array at word ``sec`` if ``use_sec``; filter ``op`` (golden.iru.FILTER_CODES);
    target array base ``target`` (bytes) of ``4 << esize8``-byte elements."""

    def __init__(self, c: IRUConfig):
        super().__init__({"n": c.count_width, "idx": c.addr_width - 2, "sec": c.addr_width - 2, "use_sec": 1,
                          "op": 2, "target": c.addr_width, "esize8": 1})


class IRURequest(data.StructLayout):
    """A warp's ``load_iru``: warp number and its thread count (1..entry_size)."""

    def __init__(self, c: IRUConfig):
        super().__init__({"warp": c.warp_bits, "threads": c.slot_bits})


class IRUReplyBeat(data.StructLayout):
    """One or two lanes of a reply (one beat per cycle): lane 0 (``idx``, ``sec``,
    ``pos``, ``disabled``) and, with ``two``, lane 1 (``idx1``, ``sec1``, ``pos1``,
    ``disabled1``); live lanes first, then disabled ones; ``last`` on the beat with
    the warp's last lane; ``kind`` (golden.iru.KIND_CODES) why it was sent."""

    def __init__(self, c: IRUConfig):
        super().__init__({"warp": c.warp_bits, "idx": c.index_bits, "sec": 32, "pos": c.count_width,
                          "disabled": 1, "last": 1, "kind": 3, "two": 1, "idx1": c.index_bits, "sec1": 32,
                          "pos1": c.count_width, "disabled1": 1})


class IRUElement(data.StructLayout):
    """An element: its index (``index_bits`` low bits), secondary value and position
    in the input."""

    def __init__(self, c: IRUConfig):
        super().__init__({"idx": c.index_bits, "sec": 32, "pos": c.count_width})


class RingFlit(data.StructLayout):
    """A flit of the element ring: ``kind`` (:class:`FlitKind`), destination partition,
    local set and element."""

    def __init__(self, c: IRUConfig):
        super().__init__({"kind": FlitKind, "dest": max(1, c.part_bits), "set": max(1, c.set_bits),
                          "e": IRUElement(c)})


class RingRequest(data.StructLayout):
    """A request on the request ring; ``age``: cycles since it became its partition's
    oldest request (saturating at the timeout)."""

    def __init__(self, c: IRUConfig):
        super().__init__({"valid": 1, "warp": c.warp_bits, "threads": c.slot_bits, "age": range(c.timeout + 1)})


class Fetched(data.StructLayout):
    """The prefetcher's output: one element ``e`` (with ``has``; a beat without one
    only ends the input) and ``last`` (the operation's last)."""

    def __init__(self, c: IRUConfig):
        super().__init__({"e": IRUElement(c), "has": 1, "last": 1})


class BankEntry(data.StructLayout):
    """An element queued for a bank of this partition and its local ``set``."""

    def __init__(self, c: IRUConfig):
        super().__init__({"e": IRUElement(c), "set": max(1, c.set_bits)})


class RingEntry(data.StructLayout):
    """An element queued for the ring: its local ``set`` in partition ``dest``."""

    def __init__(self, c: IRUConfig):
        super().__init__({"e": IRUElement(c), "set": max(1, c.set_bits), "dest": max(1, c.part_bits)})


