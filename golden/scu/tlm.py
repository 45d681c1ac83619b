"""Transaction-level model of the Stream Compaction Unit (SCU paper §3.1, §4;
docs/scu.md). Exact: the RTL must produce the same memory contents, the same
status and the same number of memory requests per stream.

An operation is an :class:`SCUOp`; :meth:`SCUModel.execute` performs it on an
:class:`golden.memory.AddressSpace` (reads its inputs, writes its output) and
returns an :class:`SCUStatus`.

| op | reads | writes (consecutively from ``out``) |
|---|---|---|
| ``bitmask`` | ``data[0..n)``, bitmask | bit ``i`` = ``cmp(data[i], ref)`` and bitmask bit ``i`` |
| ``data`` | ``data``, bitmask | ``data[i]`` for every set bit ``i`` |
| ``access`` | ``idx``, bitmask, ``data`` | ``data[idx[i]]`` for every set bit ``i`` |
| ``replicate`` | ``data``, ``cnt``, bitmask | ``data[i]`` repeated ``cnt[i]`` times |
| ``expand`` | ``idx``, ``cnt``, bitmask, ``data`` | ``data[idx[i] .. idx[i] + cnt[i])`` |
| ``filter`` | ``data`` (ids) [, ``cnt`` (costs)], bitmask | bit ``i`` = element kept (hash, §4.2) |
| ``group`` | ``data`` (ids) | the positions ``0..n-1`` in grouped order (§4.3) |

The bitmask is optional (``mask=None``: every element). Bit vectors are packed
little-endian: bit ``i`` is bit ``i % 32`` of 32-bit word ``i // 32``; unused
bits of the last word are 0.

Errors (docs/scu.md, "Errors"). :meth:`SCUOp.check` raises :class:`SCUError`
only for a value the command descriptor cannot hold (a Python caller's
nonsense: unknown operation, negative count, address wider than the port).
Everything the RTL can be given is answered with a status, as the RTL answers
it: a descriptor the unit rejects (misaligned address, unsupported element
size, a linear input range past the top of the address space) gives
``cmd_error`` with ``elements_in = 0`` and no memory access; a gathered range
or an output that runs past the top, found while the operation runs, gives
``cmd_error`` with ``elements_in = n``: that range reads nothing, those output
bytes are not written, and the rest of the operation is performed.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Callable

import numpy as np

from ..fetch import FetchConfig
from ..perf import unique
from ..memory import AddressSpace
from .config import CMP_CODES, OP_CODES, OPS, SCUConfig, STREAMS
from .hashes import FilterHash, GroupHash

__all__ = ["SCUOp", "SCUStatus", "SCUModel", "SCUError", "op_streams", "pack_bits", "unpack_bits"]


class SCUError(ValueError):
    """An operation that cannot even be encoded (unknown op, value out of range).
    Operations the unit can be given never raise: they complete with a status."""


@dataclass(frozen=True)
class SCUOp:
    """One SCU operation (a command descriptor). Addresses are byte addresses.

    Fields of the paper's in-memory unit only (TLM; docs/scu.md, "Fused passes"):
    ``probe`` makes an ``expand`` or ``data`` the first pass (every element it
    generates is probed in the filter hash; the output is the bitmask of the kept
    ones); with ``best`` the probe is the unique-best-cost filter of Algorithm 5,
    the cost of element ``j`` of range ``i`` being ``weights[idx[i] + j] +
    node_cost[i]`` (4-byte, modulo 2**32). ``omask`` makes an ``expand``, ``data``
    or ``replicate`` the second pass (only the output positions whose bit is set
    are produced); ``accumulate`` makes a replication add to the values at ``out``.
    ``group_probe`` makes an ``expand`` or ``data`` the grouping pass of Algorithm 5
    (§4.1, §4.3): every element it produces (with ``omask``: only the kept
    positions, so that the grouped array has no holes) is probed in the grouping
    hash by the block of ``target + 4 * id``, and the output is the grouping
    vector: for each produced element, the position it takes in the grouped array
    (4 B each). ``order`` (that vector's address) makes an ``expand``, ``data`` or
    ``replicate`` write its ``i``-th output element at position ``order[i]`` (a
    scatter; the vector is read on the ``mask`` stream with the filtering bitmask)."""

    op: str
    n: int
    out: int
    data: int = 0
    mask: int | None = None
    idx: int = 0
    cnt: int = 0
    esize: int = 4
    cmp: str = "eq"
    signed: bool = False
    ref: int = 0
    best: bool = False
    clear: bool = False
    target: int = 0
    probe: bool = False
    omask: int | None = None
    accumulate: bool = False
    weights: int | None = None
    node_cost: int | None = None
    group_probe: bool = False
    order: int | None = None

    def check(self, config: SCUConfig) -> None:
        """Raise :class:`SCUError` for a value the descriptor cannot hold."""
        if self.op not in OPS:
            raise SCUError(f"unknown SCU operation {self.op!r}; operations: {', '.join(OPS)}")
        if self.cmp not in CMP_CODES:
            raise SCUError(f"unknown comparison {self.cmp!r}; comparisons: {', '.join(CMP_CODES)}")
        if self.esize not in (4, 8):
            raise SCUError(f"element size must be 4 or 8 bytes, not {self.esize!r}")
        top = 1 << config.addr_width
        for name in ("out", "data", "idx", "cnt", "target") + tuple(
                f for f in ("mask", "omask", "weights", "node_cost", "order") if getattr(self, f) is not None):
            v = getattr(self, name)
            if not isinstance(v, (int, np.integer)) or not 0 <= v < top:
                raise SCUError(f"{self.op}: address {name}={v!r} is outside the {config.addr_width}-bit space")
        if not isinstance(self.n, (int, np.integer)) or not 0 <= self.n < (1 << config.count_width):
            raise SCUError(f"{self.op}: element count n={self.n!r} must be in [0, {(1 << config.count_width) - 1}]")
        lim = 1 << (8 * self.esize)
        if not -(lim >> 1) <= self.ref < lim:
            raise SCUError(f"{self.op}: reference value {self.ref} does not fit in {self.esize} bytes")

    def fields(self, config: SCUConfig) -> dict:
        """The descriptor's fields as the RTL's command payload holds them (the
        fused passes, ``probe`` and ``omask``, are not in the RTL)."""
        self.check(config)
        if self.probe or self.omask is not None or self.accumulate or self.weights is not None or \
                self.node_cost is not None or self.group_probe or self.order is not None:
            raise SCUError(f"{self.op}: the fused filtering and grouping passes (probe / omask / group_probe / "
                           "order) and the accumulating replication "
                           "are the paper's SCU (hash_in_memory), modelled by the TLM only; the RTL runs separate "
                           "operations")
        return {"op": OP_CODES[self.op], "n": int(self.n), "out": int(self.out), "data": int(self.data),
                "mask": int(self.mask or 0), "use_mask": int(self.mask is not None), "idx": int(self.idx),
                "cnt": int(self.cnt), "esize8": int(self.esize == 8), "cmp": CMP_CODES[self.cmp],
                "signed": int(self.signed), "ref": int(self.ref) & ((1 << 64) - 1), "best": int(self.best),
                "clear": int(self.clear), "target": int(self.target)}


@dataclass
class SCUStatus:
    """Completion of one operation."""

    elements_in: int = 0
    elements_out: int = 0
    mem_error: bool = False
    cmd_error: bool = False
    cycles: int | None = None                           # RTL only
    reads: dict = field(default_factory=lambda: {s: 0 for s in STREAMS})   # block reads per stream
    writes: int = 0                                     # block writes
    read_blocks: dict = field(default_factory=dict)     # stream -> block addresses in order (TLM)
    write_blocks: list = field(default_factory=list)
    unit_cycles: int | None = None                      # TLM, group: the grouping unit's cycles
    unit_flush: tuple | None = None                     # TLM, group: (flush cycles, positions it emits)
    hash_trace: dict | None = None                      # TLM, hash in memory: the probes (sets, entries)

    @property
    def requests(self) -> int:
        return sum(self.reads.values()) + self.writes

    @property
    def rejected(self) -> bool:
        """The command was rejected as it arrived (``cmd_error`` with nothing done).
        A ``cmd_error`` found while the operation ran (a gathered range or the
        output past the top of the address space) has ``elements_in = n`` > 0."""
        return self.cmd_error and self.elements_in == 0

    def key(self) -> tuple:
        """What the RTL and the TLM must agree on exactly."""
        return (self.elements_in, self.elements_out, self.mem_error, self.cmd_error,
                tuple(self.reads[s] for s in STREAMS), self.writes)

    def as_dict(self) -> dict:
        return {"elements_in": self.elements_in, "elements_out": self.elements_out, "mem_error": self.mem_error,
                "cmd_error": self.cmd_error, "cycles": self.cycles, "reads": dict(self.reads),
                "writes": self.writes}


def op_streams(op: SCUOp) -> set[str]:
    """The read streams an operation uses."""
    s = {"data"}
    if op.op in ("access", "expand"):
        s.add("idx")
    if op.op in ("replicate", "expand") or (op.op == "filter" and op.best):
        s.add("cnt")
    if op.mask is not None:
        s.add("mask")
    return s


def pack_bits(bits: np.ndarray) -> np.ndarray:
    """Bits -> little-endian 32-bit words (bit i = bit i%32 of word i//32)."""
    bits = np.asarray(bits, dtype=bool)
    nw = -(-bits.size // 32)
    b = np.zeros(nw * 32, bool)
    b[:bits.size] = bits
    return np.packbits(b, bitorder="little").view("<u4").astype(np.uint32)


def unpack_bits(words: np.ndarray, n: int) -> np.ndarray:
    words = np.asarray(words, dtype="<u4")
    return np.unpackbits(words.view(np.uint8), bitorder="little")[:n].astype(bool)


def _compare(vals: np.ndarray, op: SCUOp) -> np.ndarray:
    bits = 8 * op.esize
    mask = (1 << bits) - 1
    ref = op.ref & mask
    if op.signed:
        v = vals.astype(np.uint64).view(np.int64) if bits == 64 else vals.astype(np.int64)
        if bits == 32:
            v = np.where(v >= 1 << 31, v - (1 << 32), v)
        r = ref - (1 << bits) if ref >> (bits - 1) else ref
    else:
        v = vals.astype(np.uint64)
        r = np.uint64(ref)
    return {"eq": v == r, "ne": v != r, "lt": v < r, "le": v <= r, "gt": v > r, "ge": v >= r}[op.cmp]


class SCUModel:
    """The SCU as a transaction-level model.

    Parameters
    ----------
    config : SCUConfig
    space : AddressSpace
        The memory the unit reads and writes.
    is_error : callable(block address) -> bool, optional
        Blocks whose accesses fail (as the testbench memory's error ranges):
        reads return zeros, writes are not performed, the status has ``mem_error``.
    """

    def __init__(self, config: SCUConfig, space: AddressSpace, is_error: Callable[[int], bool] | None = None):
        self.config = config
        self.space = space
        self.is_error = is_error
        self.filter_hash = FilterHash(config.filter_sets, config.filter_ways)
        # In memory the best-cost filter may be configured with its own geometry
        # (Table 2: 8 B entries); otherwise both filters are one hash.
        self.best_hash = self.filter_hash if config.best_sets == config.filter_sets else \
            FilterHash(config.best_sets, config.filter_ways)
        self.group_hash = GroupHash(config.group_sets, config.group_ways, config.group_size,
                                    key_width=config.group_tag_bits)

    # ------------------------------------------------------------------ streams
    def _err_blocks(self, blocks: np.ndarray) -> np.ndarray:
        bb = self.config.block_bytes
        oob = blocks + bb > self.space.size
        if self.is_error is None:
            return oob
        return oob | np.fromiter((self.is_error(int(b)) for b in blocks), bool, blocks.size)

    def _read_ranges(self, stream: str, bases: np.ndarray, counts: np.ndarray, esize: int, st: SCUStatus):
        """Read ranges (one operation of a fetch engine): elements in order.

        Same requests as :func:`golden.fetch.fetch_reference`: a segment (the part of
        a range inside one block) whose block is one of the last ``merge_window``
        blocks requested in the operation reuses that request. A non-empty range
        that runs past the top of the address space (``base + count * esize >
        2**addr_width``, ``base`` not wrapped) reads nothing and sets
        ``cmd_error``, as the fetch engine's ``error.cmd`` (or, for a gather whose
        base itself lies past the top, the unit) reports it; the other ranges are
        read as usual. Blocks past the end of ``space`` are answered with a
        memory error."""
        cfg: FetchConfig = self.config.stream_fetch(stream)
        bb = cfg.block_bytes
        bases = np.asarray(bases, dtype=np.int64)
        counts = np.asarray(counts, dtype=np.int64)
        keep = counts > 0
        bases, counts = bases[keep], counts[keep]
        past = bases + counts * esize > (1 << self.config.addr_width)
        if past.any():
            st.cmd_error = True
            bases, counts = bases[~past], counts[~past]
        if bases.size == 1 and self.is_error is None:       # one range (a linear read): in Python
            base, count = int(bases[0]), int(counts[0])
            first, last = base // bb, (base + count * esize - 1) // bb
            if base % esize == 0 and (last + 1) * bb <= self.space.size:     # aligned, no error block
                reqs = list(range(first * bb, (last + 1) * bb, bb))
                st.reads[stream] += len(reqs)
                st.read_blocks[stream] = st.read_blocks.get(stream, []) + reqs
                return self.space.read_elems(base, count, esize)
        # Segments: the blocks of each range, in order.
        first = bases // bb
        last = (bases + counts * esize - 1) // bb
        nseg = last - first + 1
        owner = np.repeat(np.arange(bases.size), nseg)
        seg_block = (first[owner] + (np.arange(owner.size) - np.repeat(np.cumsum(nseg) - nseg, nseg))) * bb
        # Requests with the merge window (sequential by nature).
        K = cfg.merge_window
        reqs: list[int] = []
        if bases.size == 1 or K == 0:
            reqs = seg_block.tolist()
        else:
            # A segment in the block of the one before it always reuses that block's
            # request (just made, or in the window already): only the changes are walked.
            change = np.ones(seg_block.size, bool)
            change[1:] = seg_block[1:] != seg_block[:-1]
            walk = seg_block[change]
            if walk.size < 2 or bool(np.all(walk[1:] > walk[:-1])):
                reqs = walk.tolist()                  # ascending: every block is new, all requested
            else:
                window: list[int] = []
                for b in walk.tolist():
                    if b in window:
                        continue
                    reqs.append(b)
                    window.append(b)
                    if len(window) > K:
                        del window[0]
        st.reads[stream] += len(reqs)
        st.read_blocks[stream] = st.read_blocks.get(stream, []) + reqs
        # Elements.
        pos = np.arange(int(counts.sum()), dtype=np.int64)
        eowner = np.repeat(np.arange(bases.size), counts)
        addrs = bases[eowner] + (pos - np.repeat(np.cumsum(counts) - counts, counts)) * esize
        vals = np.zeros(addrs.size, {4: np.uint32, 8: np.uint64}[esize])
        inside = addrs + esize <= self.space.size       # the rest lies in error blocks (zeros)
        if inside.any():
            vals[inside] = self.space.gather_elems(addrs[inside], esize)
        if seg_block.size:
            uniq = unique(seg_block)
            bad = uniq[self._err_blocks(uniq)]
            if bad.size:
                st.mem_error = True
                vals[np.isin(addrs - addrs % bb, bad)] = 0
        return vals

    def _linear(self, stream: str, base: int, n: int, esize: int, st: SCUStatus) -> np.ndarray:
        return self._read_ranges(stream, np.array([base]), np.array([n]), esize, st)

    def _mask_bits(self, op: SCUOp, st: SCUStatus) -> np.ndarray:
        if op.mask is None:
            return np.ones(op.n, bool)
        words = self._linear("mask", op.mask, -(-op.n // 32), 4, st)
        return unpack_bits(words.astype("<u4"), op.n)

    def _store(self, out: int, values: np.ndarray, esize: int, st: SCUStatus) -> None:
        """Consecutive output from ``out``: one write per block touched, in order.

        Output elements that would lie past the top of the address space are not
        written (the Data Store never wraps around to address 0) and set
        ``cmd_error``; ``elements_out`` still counts them (the operation produced
        them). Blocks past the end of ``space`` are memory errors."""
        bb = self.config.block_bytes
        dt = {4: "<u4", 8: "<u8"}[esize]
        raw = np.asarray(values).astype(dt).view(np.uint8)
        room = (1 << self.config.addr_width) - out       # out is element aligned: a multiple of esize
        if raw.size > room:
            st.cmd_error = True
            raw = raw[:room]
        if raw.size == 0:
            return
        end = out + raw.size
        blocks = np.arange(out // bb, (end - 1) // bb + 1, dtype=np.int64) * bb
        st.writes += blocks.size
        st.write_blocks.extend(blocks.tolist())
        bad = blocks[self._err_blocks(blocks)]
        if bad.size == 0:
            self.space.write(out, raw)
            return
        st.mem_error = True
        addr = out + np.arange(raw.size)
        keep = ~np.isin(addr - addr % bb, bad)
        n = min(raw.size, max(self.space.size - out, 0))     # bytes past the space are in error blocks
        if n:
            self.space.write(out, raw[:n], keep[:n])

    # ------------------------------------------------------------------ operations
    def cmd_error(self, op: SCUOp) -> str | None:
        """Why the unit would reject ``op`` as it arrives (misalignment, unsupported
        size, a linear input range past the top of the address space), or None."""
        c = self.config
        if op.esize == 8 and c.max_elem_bytes == 4:
            return "8-byte elements on a unit built for 4-byte elements"
        if op.op in ("filter", "group") and op.esize != 4:
            return f"{op.op} works on 4-byte ids"
        if op.op == "group" and op.mask is not None:
            return "group takes no bitmask"
        if op.accumulate:
            if not c.hash_in_memory:
                return "the accumulating replication is the paper's SCU (hash_in_memory), modelled by the TLM only"
            if op.op != "replicate":
                return f"{op.op} does not accumulate (replicate does: Algorithm 2's costs)"
        costs = op.weights is not None or op.node_cost is not None
        if op.probe or op.omask is not None or costs:
            if not c.hash_in_memory:
                return "the fused filtering pass (probe / omask) needs the paper's in-memory hash (hash_in_memory)"
            if op.probe and op.op not in ("expand", "data") or op.omask is not None and \
                    op.op not in ("expand", "data", "replicate"):
                return (f"{op.op} has no fused filtering pass (expand and data do; replicate has the second "
                        "pass)")
            if op.probe and op.omask is not None:
                return "a fused pass either probes (the first pass) or applies the output bitmask (the second)"
            if op.probe and op.best and (op.op != "expand" or op.weights is None or op.node_cost is None):
                return ("the best-cost fused pass (Algorithm 5) is an expansion given the weights and node_cost "
                        "arrays; data compaction filters unique elements")
            if costs and not (op.probe and op.best):
                return "weights and node_cost are the costs of a best-cost fused pass (probe and best)"
            if op.probe and op.esize != 4:
                return "the fused filtering pass works on 4-byte ids"
            for name in ("omask", "weights", "node_cost"):
                addr = getattr(op, name)
                if addr is not None and addr % 4:
                    return f"{name} address {addr:#x} is not a multiple of 4"
        if op.group_probe or op.order is not None:
            if not c.hash_in_memory:
                return "the fused grouping pass (group_probe / order) needs the paper's in-memory hash (hash_in_memory)"
            if op.group_probe and op.op not in ("expand", "data") or op.order is not None and \
                    op.op not in ("expand", "data", "replicate"):
                return (f"{op.op} has no fused grouping pass (expand and data do; replicate writes in a grouping "
                        "vector's order)")
            if op.group_probe and (op.probe or op.order is not None):
                return "a grouping pass writes the grouping vector: it neither probes the filter nor takes one"
            if op.probe:
                return "a filtering pass writes a bitmask, not elements in a grouping vector's order"
            if op.group_probe and op.esize != 4:
                return "the grouping pass works on 4-byte ids"
            if op.order is not None and op.order % 4:
                return f"order address {op.order:#x} is not a multiple of 4"
        if op.data % op.esize:
            return f"data address {op.data:#x} is not a multiple of the element size"
        outsize = 4 if op.op in ("bitmask", "filter", "group") or op.probe or op.group_probe else op.esize
        if op.out % outsize:
            return f"output address {op.out:#x} is not a multiple of {outsize}"
        streams = op_streams(op)
        for s, addr in (("idx", op.idx), ("cnt", op.cnt), ("mask", op.mask)):
            if s in streams and addr % 4:
                return f"{s} address {addr:#x} is not a multiple of 4"
        # The linear input streams' ranges, known from the descriptor: one that runs
        # past the top would be a fetch engine command error, so the unit rejects the
        # command (gathered ranges and the output are checked while it runs).
        top = 1 << c.addr_width
        lin = [] if op.op in ("access", "expand") else [("data", op.data, op.n * op.esize)]
        lin += [(s, getattr(op, s), 4 * (-(-op.n // 32) if s == "mask" else op.n))
                for s in ("idx", "cnt", "mask") if s in streams]
        if op.node_cost is not None:
            lin.append(("node_cost", op.node_cost, 4 * op.n))
        for s, base, nbytes in lin:
            if base + nbytes > top:
                return (f"{s} range [{base:#x}, {base + nbytes:#x}) runs past the top of the "
                        f"{c.addr_width}-bit address space")
        return None

    def _omask_bits(self, op: SCUOp, m: int, st: SCUStatus) -> np.ndarray:
        """The output-position bitmask of a fused second pass (``m`` positions)."""
        words = self._linear("mask", op.omask, -(-m // 32), 4, st)
        return unpack_bits(words.astype("<u4"), m)

    def _probe_pass(self, op: SCUOp, vals: np.ndarray, fh: FilterHash, st: SCUStatus, costs=None) -> None:
        """A fused first pass (Algorithms 4 and 5, §4.1): every output element is
        probed in the filter hash (with ``costs``: the unique-best-cost hash)
        instead of written; the output is the bitmask of the kept ones (as the
        ``filter`` operation's)."""
        keys = vals.astype(np.int64)
        keep = fh.probe_all(keys, costs, costs is not None)
        st.elements_out = int(keep.sum())
        st.hash_trace = {"sets": fh.sets_of(keys), "writes": keep, "clear": bool(op.clear), "probed": keys.size}
        self._store(op.out, pack_bits(keep), 4, st)

    def _group_order(self, ids: np.ndarray, target: int, st: SCUStatus) -> np.ndarray:
        """The grouping hash (§4.3) over ``ids`` (the block of ``target + 4 * id``
        each): their positions 0..n-1 in grouped order; the hash's trace and cycles
        in ``st``."""
        aw = 1 << self.config.addr_width
        gb = self.config.group_block_bytes.bit_length() - 1
        blocks = ((target + ids.astype(np.int64) * 4) % aw) >> gb
        gh = self.group_hash
        if self.config.hash_in_memory:
            gh.trace = ([], [], [])
        order = gh.order(blocks, width=self.config.width)
        if gh.trace is not None:
            st.hash_trace = {"sets": gh.sets_of(blocks, gh.key_width), "joined": np.asarray(gh.trace[0], np.int64),
                             "emitted": np.asarray(gh.trace[1], np.int64),
                             "flushed_sets": unique(np.asarray(gh.trace[2], np.int64) // gh.ways)}
            gh.trace = None
        st.unit_cycles, st.unit_flush = gh.cycles, gh.flush_stats
        return order

    def _group_pass(self, op: SCUOp, ids: np.ndarray, st: SCUStatus) -> None:
        """A fused grouping pass (Algorithm 5, §4.1): the produced elements are
        grouped instead of written; the output is the grouping vector, each
        element's position in the grouped array (§4.3: "for each input element
        which order (i.e. position) it will occupy")."""
        order = self._group_order(ids, op.target, st)
        pos = np.empty(order.size, np.int64)
        pos[order] = np.arange(order.size, dtype=np.int64)
        st.elements_out = pos.size
        self._store(op.out, pos, 4, st)

    def _scatter(self, op: SCUOp, values: np.ndarray, esize: int, st: SCUStatus, pos=None) -> None:
        """Output element ``i`` at ``out + esize * order[i]`` (a fused second pass
        under a grouping vector, read on the ``mask`` stream): the Data Store
        merges neighbours in one block into one write; an element past the top of
        the address space is not written (``cmd_error``), one in an error block
        neither (``mem_error``)."""
        n = values.size
        st.elements_out = n
        if n == 0:
            return
        if pos is None:
            pos = self._linear("mask", op.order, n, 4, st).astype(np.int64)
        addrs = op.out + pos * esize
        ok = addrs + esize <= (1 << self.config.addr_width)
        if not ok.all():
            st.cmd_error = True
            addrs, values = addrs[ok], values[ok]
        if addrs.size == 0:
            return
        bb = self.config.block_bytes
        blocks = addrs - addrs % bb
        run = np.ones(blocks.size, bool)
        run[1:] = blocks[1:] != blocks[:-1]
        wb = blocks[run]
        st.writes += wb.size
        st.write_blocks.extend(wb.tolist())
        ub = unique(wb)
        bad = ub[self._err_blocks(ub)]
        if bad.size:
            st.mem_error = True
            good = ~np.isin(blocks, bad)
            addrs, values = addrs[good], values[good]
        dt = {4: "<u4", 8: "<u8"}[esize]
        values = np.asarray(values).astype(dt)
        if addrs.size == 0:
            return
        lo, hi = int(addrs.min()), int(addrs.max()) + esize
        if hi - lo <= max(64 * addrs.size * esize, 1 << 16):
            # one read-modify-write of the span (a grouping vector is a permutation)
            raw = self.space.read(lo, hi - lo).copy()
            touched = np.zeros(hi - lo, bool)
            offs = (addrs - lo)[:, None] + np.arange(esize)[None, :]
            raw[offs] = values.view(np.uint8).reshape(-1, esize)
            touched[offs] = True
            self.space.write(lo, raw, touched)
        else:
            for a, v in zip(addrs.tolist(), values.view(np.uint8).reshape(-1, esize)):
                self.space.write(a, v)

    def execute(self, op: SCUOp) -> SCUStatus:
        """Perform ``op``: read its inputs, write its output, return the status.
        Raises :class:`SCUError` only when ``op`` cannot be encoded
        (:meth:`SCUOp.check`); every error of an encodable operation is in the
        status (module docstring)."""
        op.check(self.config)
        st = SCUStatus()
        if self.cmd_error(op) is not None:
            st.cmd_error = True
            return st
        fh = self.best_hash if op.best and (op.op == "filter" or op.probe) else self.filter_hash
        if op.clear:
            fh.clear()
        n, es = op.n, op.esize
        st.elements_in = n
        aw = 1 << self.config.addr_width
        bits = self._mask_bits(op, st)
        kind = op.op
        if kind == "bitmask":
            vals = self._linear("data", op.data, n, es, st)
            b = _compare(vals, op) & bits
            st.elements_out = int(b.sum())
            self._store(op.out, pack_bits(b), 4, st)
        elif kind == "data":
            vals = self._linear("data", op.data, n, es, st)[bits]
            if op.probe:
                self._probe_pass(op, vals, fh, st)
            else:
                if op.omask is not None:
                    vals = vals[self._omask_bits(op, vals.size, st)]
                self._emit(op, vals, es, st)
        elif kind in ("access", "expand"):
            idx = self._linear("idx", op.idx, n, 4, st).astype(np.int64)[bits]
            cnt = (self._linear("cnt", op.cnt, n, 4, st).astype(np.int64)[bits] if kind == "expand"
                   else np.ones(idx.size, np.int64))
            bases = op.data + idx * es          # not wrapped: past the top is an error
            if op.omask is not None:
                # The second pass: the Address Generator produces only the output
                # positions whose bit is set (§4.1), gathered one element each.
                total = int(cnt.sum())
                sel = self._omask_bits(op, total, st)
                pos = np.arange(total, dtype=np.int64)
                owner = np.repeat(np.arange(bases.size), cnt)
                addrs = bases[owner] + (pos - np.repeat(np.cumsum(cnt) - cnt, cnt)) * es
                vals = self._read_ranges("data", addrs[sel], np.ones(int(sel.sum()), np.int64), es, st)
            else:
                costs = None
                if op.weights is not None:
                    # Algorithm 5's first pass: each edge's cost is its weight (gathered
                    # with the same ranges) plus its node's cost (a parameter vector).
                    wb = op.weights + idx * 4
                    ok = (bases + cnt * es <= aw) & (wb + cnt * 4 <= aw)
                    if not ok.all():            # found while running, as any gathered range
                        st.cmd_error = True
                        cnt = np.where(ok, cnt, 0)
                    ncost = self._linear("cnt", op.node_cost, n, 4, st).astype(np.int64)[bits]
                    costs = (self._read_ranges("data", wb, cnt, 4, st).astype(np.int64) +
                             np.repeat(ncost, cnt)) & 0xFFFFFFFF
                vals = self._read_ranges("data", bases, cnt, es, st)
            if op.probe:
                self._probe_pass(op, vals, fh, st, costs)
            else:
                self._emit(op, vals, es, st)
        elif kind == "replicate":
            vals = self._linear("data", op.data, n, es, st)
            cnt = self._linear("cnt", op.cnt, n, 4, st).astype(np.int64)
            out = np.repeat(vals[bits], cnt[bits])
            if op.omask is not None:            # a second pass: the output positions kept
                out = out[self._omask_bits(op, out.size, st)]
            if op.accumulate:
                # Algorithm 2 (§3.4.1): the replication adds each node's accumulated
                # cost to the weights already at ``out`` (read linearly, modulo 2^(8 esize);
                # under a grouping vector, at the positions it gives).
                if op.order is None:
                    prev = self._linear("data", op.out, out.size, es, st)
                else:
                    pos = self._linear("mask", op.order, out.size, 4, st).astype(np.int64)
                    prev = self._read_ranges("data", op.out + pos * es, np.ones(out.size, np.int64), es, st)
                out = (prev.astype(np.uint64) + out.astype(np.uint64)) & np.uint64((1 << (8 * es)) - 1)
                if op.order is not None:
                    self._scatter(op, out, es, st, pos)
                    return st
            self._emit(op, out, es, st)
        elif kind == "filter":
            ids = self._linear("data", op.data, n, 4, st).astype(np.int64)
            costs = self._linear("cnt", op.cnt, n, 4, st).astype(np.int64) if op.best else None
            keep = np.zeros(n, bool)
            sel = np.flatnonzero(bits)
            keep[sel] = fh.probe_all(ids[sel], None if costs is None else costs[sel], op.best)
            st.elements_out = int(keep.sum())
            if self.config.hash_in_memory:        # the probes' sets and the entries written (kept)
                st.hash_trace = {"sets": fh.sets_of(ids[sel]), "writes": keep[sel], "clear": bool(op.clear)}
            self._store(op.out, pack_bits(keep), 4, st)
        elif kind == "group":
            ids = self._linear("data", op.data, n, 4, st).astype(np.int64)
            order = self._group_order(ids, op.target, st)
            st.elements_out = order.size
            self._store(op.out, order, 4, st)
        return st

    def _emit(self, op: SCUOp, vals: np.ndarray, es: int, st: SCUStatus) -> None:
        """The produced elements: the grouping vector of a grouping pass, written in
        a grouping vector's order, or consecutively from ``out``."""
        if op.group_probe:
            self._group_pass(op, vals, st)
        elif op.order is not None:
            self._scatter(op, vals, es, st)
        else:
            st.elements_out = vals.size
            self._store(op.out, vals, es, st)


def ops_with(op: SCUOp, **changes) -> SCUOp:
    return replace(op, **changes)
