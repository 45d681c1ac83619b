"""The enhanced SCU's hashes (SCU paper §4.1–4.3; docs/scu.md, "Filtering" and
"Grouping"): exact, element-by-element models that the RTL matches.

Both hashes are set associative. The set of a key is :func:`fold` of the key
(XOR of its ``log2(sets)``-bit chunks); a hash in memory may have any number
of sets: the fold to ``ceil(log2(sets))`` bits, modulo the sets. A new key takes the lowest-numbered
invalid way of its set; when every way is valid it evicts the way at the set's
round-robin pointer, which then advances.

State across operations (as the RTL's, one memory row per set holding the
ways and the pointer): the filter hash keeps its entries *and* pointers from
one operation to the next until a clear (entries invalid, pointers 0); the
grouping hash is flushed at the end of every ``group`` operation, which also
leaves entries invalid and pointers 0.
"""
from __future__ import annotations

from collections import Counter

import numpy as np

__all__ = ["fold", "FilterHash", "GroupHash"]


def fold(key: int, bits: int, key_width: int = 32) -> int:
    """XOR of the ``bits``-wide chunks of the low ``key_width`` bits of ``key`` (0 if ``bits`` is 0)."""
    if bits == 0:
        return 0
    mask = (1 << bits) - 1
    h = 0
    for shift in range(0, key_width, bits):
        h ^= (key >> shift) & mask
    return h


def fold_array(keys: np.ndarray, bits: int, key_width: int = 32) -> np.ndarray:
    """:func:`fold` of every key (vectorised)."""
    keys = np.asarray(keys, dtype=np.uint64)
    if bits == 0:
        return np.zeros(keys.shape, np.int64)
    mask = np.uint64((1 << bits) - 1)
    h = np.zeros(keys.shape, np.uint64)
    for shift in range(0, key_width, bits):
        h ^= (keys >> np.uint64(shift)) & mask
    return h.astype(np.int64)


class _SetAssoc:
    def __init__(self, sets: int, ways: int):
        if sets < 1 or ways < 1 or ways & (ways - 1):
            raise ValueError(f"hash sets must be >= 1 and ways a power of two, not {sets} x {ways}")
        self.sets, self.ways = sets, ways
        self.set_bits = (sets - 1).bit_length()
        self.pow2 = not sets & (sets - 1)
        self.valid = [False] * (sets * ways)
        self.ptr = [0] * sets

    def set_of(self, key: int, key_width: int = 32) -> int:
        s = fold(key, self.set_bits, key_width)
        return s if self.pow2 else s % self.sets

    def sets_of(self, keys, key_width: int = 32) -> np.ndarray:
        """:meth:`set_of` of every key (vectorised)."""
        s = fold_array(keys, self.set_bits, key_width)
        return s if self.pow2 else s % self.sets

    def _victim(self, s: int) -> int:
        base = s * self.ways
        valid = self.valid
        for w in range(self.ways):
            if not valid[base + w]:
                return w
        w = self.ptr[s]
        self.ptr[s] = (w + 1) % self.ways
        return w

    def clear(self) -> None:
        self.valid = [False] * (self.sets * self.ways)
        self.ptr = [0] * self.sets


class FilterHash(_SetAssoc):
    """Filtering by unique element and by unique best cost (§4.2).

    * unique: a key already in its set is a duplicate (dropped); otherwise it is
      inserted (evicting another key if the set is full) and kept;
    * best cost: a key already present with a cost at or below the new one is
      dropped; a lower cost replaces the stored one and the element is kept; a
      new key is inserted with its cost and kept.

    False negatives (a duplicate kept because its first copy was evicted) are
    allowed, as in the paper; false positives never happen.
    """

    def __init__(self, sets: int, ways: int):
        super().__init__(sets, ways)
        self.key = [0] * (sets * ways)
        self.cost = [0] * (sets * ways)
        # Per set: key -> way, and how many ways are filled. Ways are only ever
        # invalidated all together (clear), so the valid ways of a set are its
        # first ``fill`` ways and the lowest invalid way is ``fill``.
        self.where: list[dict] = [{} for _ in range(sets)]
        self.fill = [0] * sets
        #: What the probes met, counted over the hash's life (functional coverage):
        #: ``duplicate`` (dropped), ``worse`` (best cost: a cost at or above the
        #: stored one, dropped), ``better`` (best cost: a lower cost kept),
        #: ``new`` (inserted in a free way), ``evict`` (inserted over a valid way).
        self.events: Counter = Counter()

    def clear(self) -> None:
        super().clear()
        self.where = [{} for _ in range(self.sets)]
        self.fill = [0] * self.sets

    def probe(self, key: int, cost: int = 0, best: bool = False) -> bool:
        """Process one element; returns whether it is kept."""
        return bool(self.probe_all([key], [cost], best)[0])

    def probe_all(self, keys, costs=None, best: bool = False) -> np.ndarray:
        """:meth:`probe` of every element, in order (the sets computed at once)."""
        keys = np.asarray(keys, dtype=np.int64).reshape(-1)
        n = keys.size
        out = np.zeros(n, dtype=bool)
        if n == 0:
            return out
        sets = self.sets_of(keys).tolist()
        keys = keys.tolist()
        costs = [0] * n if costs is None else np.asarray(costs, dtype=np.int64).reshape(-1).tolist()
        W = self.ways
        where, fill, ptr, key, cost, valid = self.where, self.fill, self.ptr, self.key, self.cost, self.valid
        kept = []
        better = evict = 0
        for i in range(n):
            k, s = keys[i], sets[i]
            d = where[s]
            w = d.get(k)
            if w is not None:               # present: a duplicate, unless a better cost
                if best and costs[i] < cost[s * W + w]:
                    cost[s * W + w] = costs[i]
                    kept.append(i)
                    better += 1
                continue
            f = fill[s]
            if f < W:                       # the lowest invalid way
                w = f
                fill[s] = f + 1
            else:                           # evict the way at the round-robin pointer
                w = ptr[s]
                ptr[s] = (w + 1) % W
                del d[key[s * W + w]]
                evict += 1
            j = s * W + w
            valid[j] = True
            key[j] = k
            cost[j] = costs[i] if best else 0
            d[k] = w
            kept.append(i)
        out[kept] = True
        ev = self.events
        ev["worse" if best else "duplicate"] += n - len(kept)
        ev["better"] += better
        ev["evict"] += evict
        ev["new"] += len(kept) - better - evict
        return out


class GroupHash(_SetAssoc):
    """Grouping by memory block (§4.3): an entry collects the positions of up to
    ``size`` elements whose key (memory block) is its tag.

    For each element: if its block is in the set, its position joins that entry;
    otherwise a way is taken (evicting, i.e. emitting, the positions of a valid
    victim) for a new entry holding it. An entry that reaches ``size`` positions
    is emitted and invalidated at once. :meth:`flush` emits what is left, set by
    set, way by way, and resets the hash (entries and pointers). Emitted
    positions keep their entry's insertion order.
    """

    def __init__(self, sets: int, ways: int, size: int, key_width: int = 32):
        super().__init__(sets, ways)
        if size < 1:
            raise ValueError(f"group size must be >= 1, not {size}")
        self.size = size
        self.key_width = key_width
        self.tag = [0] * (sets * ways)
        self.members: list[list[int]] = [[] for _ in range(sets * ways)]
        #: Cycles of the last :meth:`order` called with a ``width``, and the flush's
        #: part: (cycles after the last element was taken, positions it emits).
        self.cycles: int | None = None
        self.flush_stats: tuple[int, int] | None = None
        #: When a tuple of lists: the entry each element joins, each entry emitted
        #: (evicted, full, flushed), in order, and (a third list) those flushed:
        #: the in-memory hash's traffic.
        self.trace: tuple[list, list] | None = None
        # Book-keeping for speed (the behaviour is the element-by-element one):
        # per set, the valid entries' tags -> way; the valid entries.
        self.where: list[dict] = [{} for _ in range(sets)]
        self.live: set[int] = set()
        #: What the elements met, counted over the hash's life (functional
        #: coverage): ``join`` (an entry of their block), ``new`` (a free way),
        #: ``evict`` (a valid victim emitted), ``full`` (an entry emitted at
        #: ``size``), ``flushed`` (entries a flush emitted), ``empty_flush``.
        self.events: Counter = Counter()

    def clear(self) -> None:
        super().clear()
        self.where = [{} for _ in range(self.sets)]
        self.live = set()
        self.members = [[] for _ in range(self.sets * self.ways)]

    def add(self, block: int, pos: int, out: list) -> None:
        s = fold(block, self.set_bits, self.key_width)
        if not self.pow2:
            s %= self.sets
        W = self.ways
        tr = self.trace
        d = self.where[s]
        w = d.get(block)
        ev = self.events
        if w is not None:
            i = s * W + w
            ev["join"] += 1
        else:
            w = self._victim(s)
            i = s * W + w
            ev["evict" if self.valid[i] else "new"] += 1
            if self.valid[i]:
                out.extend(self.members[i])
                del d[self.tag[i]]
                if tr is not None:
                    tr[1].append(i)
            self.valid[i] = True
            self.live.add(i)
            self.tag[i] = block
            d[block] = w
            self.members[i] = []
        m = self.members[i]
        m.append(pos)
        if tr is not None:
            tr[0].append(i)
        if len(m) == self.size:
            ev["full"] += 1
            out.extend(m)
            self.members[i] = []
            self.valid[i] = False
            self.live.discard(i)
            del d[block]
            if tr is not None:
                tr[1].append(i)

    def flush(self, out: list) -> None:
        """Emit every valid entry (set 0 first, way 0 first) and leave the hash as
        :meth:`clear` does: every entry invalid, every round-robin pointer 0 (the
        RTL writes an all-zero row per set after emitting it), so a ``group``
        operation never depends on an earlier one."""
        tr = self.trace
        W = self.ways
        self.events["flushed"] += len(self.live)
        if not self.live:
            self.events["empty_flush"] += 1
        for i in sorted(self.live):
            out.extend(self.members[i])
            self.members[i] = []
            self.valid[i] = False
            self.where[i // W].clear()
            if tr is not None:
                tr[1].append(i)
                if len(tr) > 2:
                    tr[2].append(i)
        self.live = set()
        self.ptr = [0] * self.sets

    def order(self, blocks, width: int | None = None) -> np.ndarray:
        """The grouped order of elements with memory blocks ``blocks`` (positions 0..n-1).

        With ``width`` (the unit's positions per output beat) also the cycles the
        RTL's grouping unit takes, in :attr:`cycles` (docs/scu.md, "Time model"):
        one per element, except that an element waits while the previous
        emission still has more than its last beat to send (an emission of ``k``
        positions takes ``ceil(k / width)`` beats); the flush then takes, per
        set, one cycle to read it, one per way (a valid way waits for the
        emitter in the same way) and one to write it back. :attr:`flush`: the
        flush's part, :attr:`flush_stats` = (cycles, positions emitted)."""
        out: list[int] = []
        add = self.add
        keys = np.asarray(blocks, dtype=np.int64).tolist()
        if width is None:
            for pos, b in enumerate(keys):
                add(b, pos, out)
            self.flush(out)
            return np.asarray(out, dtype=np.int64)
        t = free = 0                     # current cycle; first cycle the emitter can load
        for pos, b in enumerate(keys):
            k = len(out)
            add(b, pos, out)
            if t < free:
                t = free
            if len(out) > k:
                free = t + -(-(len(out) - k) // width)
            t += 1
        t0, flushed = max(t, free), 0
        # Per set: one cycle to read it, one per way (a valid way waits for the
        # emitter), one to write the zero row; sets without a valid entry take
        # ways + 2 cycles, counted at once.
        W = self.ways
        prev = -1                        # the last set visited
        last_w = W - 1
        for i in sorted(self.live):
            s_, w = divmod(i, W)
            if s_ != prev:
                if prev >= 0:
                    t += (W - 1 - last_w) + 1          # the rest of the previous set's ways, its write
                t += (s_ - prev - 1) * (W + 2)          # empty sets in between
                t += 1                                 # read the set
                prev, last_w = s_, -1
            t += w - last_w - 1                        # invalid ways before this one
            if t < free:
                t = free
            free = t + -(-len(self.members[i]) // width)
            flushed += len(self.members[i])
            t += 1
            last_w = w
        if prev >= 0:
            t += (W - 1 - last_w) + 1
        t += (self.sets - 1 - prev) * (W + 2)
        self.cycles = max(t, free)
        self.flush_stats = (self.cycles - t0, flushed)
        self.flush(out)
        return np.asarray(out, dtype=np.int64)
