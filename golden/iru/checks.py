"""What every IRU result must satisfy, whoever produced it (the TLM or the RTL), and
what the RTL must share with the TLM (docs/iru.md, "What must hold").

The order of the replies and which elements share a reply depend on timing, so
they are not compared; these are:

* **replies**: every warp of the kernel gets exactly one reply with as many
  lanes as it has threads;
* **conservation**: live lanes carry distinct positions; every live lane's
  index is the input index at its position; without a filter every position
  comes out exactly once with its secondary value; live + disabled lanes = n;
* **filter/merge**: ``min``: each live lane's secondary value is its own input
  value, and per index the smallest delivered value is the smallest input value;
  ``fadd``: per index the delivered values add up to the input values' sum
  within ``(k - 1) * 2**-24 * sum|x| + k * 2**-125`` (``k`` elements of that
  index: one binary32 rounding per merge, subnormals flushed);
  every index of the input is delivered at least once;
* **full replies**: a reply is all live or all disabled, except at most one
  mixed ``final`` reply; ``entry``/``timeout``/``flush`` replies are all live,
  ``disabled`` replies all disabled;
* **timeout**: a ``timeout`` reply never starts before its request is
  ``timeout`` cycles old; and, given a per-cycle trace of the unit, no request
  waits longer than the timeout bound (:func:`timeout_violations`);
* **command error**: the status has ``cmd_error`` exactly when an array of the
  operation runs past the top of the address space (:meth:`IRUOp.past_top`);
  such an operation reads nothing: every warp still gets its reply, all of it
  ``disabled`` lanes (instead of the conservation and filter rules).
"""
from __future__ import annotations

import numpy as np

from .config import IRUConfig
from .ops import key_blocks
from .tlm import IRUResult, warp_threads

__all__ = ["check_result", "fadd_tolerance", "index_aggregates", "compare_aggregates", "reply_quality",
           "timeout_slack", "timeout_violations"]


def fadd_tolerance(values: np.ndarray, index: np.ndarray) -> dict:
    """Per index: (exact sum, tolerance) of binary32 values ``values`` (uint32 bits)."""
    x = np.asarray(values, np.uint32).view(np.float32).astype(np.float64)
    idx = np.asarray(index, np.int64)
    uniq, inv, counts = np.unique(idx, return_inverse=True, return_counts=True)
    sums = np.bincount(inv, weights=x, minlength=uniq.size)
    mags = np.bincount(inv, weights=np.abs(x), minlength=uniq.size)
    tol = (counts - 1) * 2.0 ** -24 * mags + counts * 2.0 ** -125
    return {int(v): (float(s), float(t)) for v, s, t in zip(uniq, sums, tol)}


def index_aggregates(op: str, idx: np.ndarray, sec: np.ndarray) -> dict:
    """Per index: the minimum (``min``) or the float sum (``fadd``) of ``sec``."""
    idx = np.asarray(idx, np.int64)
    sec = np.asarray(sec, np.uint32)
    if idx.size == 0:
        return {}
    uniq, inv = np.unique(idx, return_inverse=True)
    if op == "min":
        m = np.full(uniq.size, np.iinfo(np.int64).max)
        np.minimum.at(m, inv, sec.astype(np.int64))
        return dict(zip(uniq.tolist(), m.tolist()))
    x = sec.view(np.float32).astype(np.float64)
    return dict(zip(uniq.tolist(), np.bincount(inv, weights=x, minlength=uniq.size).tolist()))


def _live(result: IRUResult):
    rs = result.replies
    if not rs:
        return np.zeros(0, np.int64), np.zeros(0, np.uint32), np.zeros(0, np.int64)
    return (np.concatenate([r.idx for r in rs]).astype(np.int64), np.concatenate([r.sec for r in rs]).astype(np.uint32),
            np.concatenate([r.pos for r in rs]).astype(np.int64))


def check_result(config: IRUConfig, idx_in: np.ndarray, sec_in: np.ndarray, result: IRUResult,
                 limit: int = 8) -> list[str]:
    """Problems of ``result`` for the input ``(idx_in, sec_in)`` (empty: all good)."""
    op = result.op
    out: list[str] = []
    n = op.n
    E = config.entry_size
    threads = warp_threads(n, E)
    seen = {}
    for r in result.replies:
        if not 0 <= r.warp < len(threads):
            out.append(f"reply for warp {r.warp}, the kernel has {len(threads)} warps")
            continue
        if r.warp in seen:
            out.append(f"warp {r.warp} answered twice")
        seen[r.warp] = r
        if r.threads != threads[r.warp]:
            out.append(f"warp {r.warp}: {r.threads} lanes for {threads[r.warp]} threads")
    missing = len(threads) - len(seen)
    if missing:
        out.append(f"{missing} of {len(threads)} warps got no reply")
    past = op.past_top(config)
    if bool(result.status.cmd_error) != bool(past):
        out.append(f"cmd_error {bool(result.status.cmd_error)}, but "
                   + (f"array {' and '.join(past)} runs past the top of the {config.addr_width}-bit address space"
                      if past else "no array runs past the top of the address space"))
    if past:
        # Nothing was read: every lane disabled, in disabled replies.
        for r in result.replies:
            if r.idx.size or r.kind != "disabled":
                out.append(f"warp {r.warp}: a {r.kind} reply with {r.idx.size} live lanes in an operation "
                           f"that is a command error (every lane must be disabled)")
        return out[:limit]
    idx, sec, pos = _live(result)
    live = idx.size
    disabled = sum(r.disabled for r in result.replies)
    if live + disabled != n:
        out.append(f"{live} live + {disabled} disabled lanes for {n} elements")
    if pos.size and (pos.min() < 0 or pos.max() >= n):
        out.append("a position outside [0, n)")
        return out[:limit]
    if np.unique(pos).size != pos.size:
        out.append(f"{pos.size - np.unique(pos).size} positions delivered twice")
    idx_in = np.asarray(idx_in, np.int64)
    sec_in = np.asarray(sec_in, np.uint32)
    bad = np.flatnonzero(idx_in[pos] != idx)
    if bad.size:
        k = int(bad[0])
        out.append(f"{bad.size} lanes carry an index other than the input's at their position "
                   f"(position {pos[k]}: {idx[k]} vs {idx_in[pos[k]]})")
    if op.op in ("none", "min"):
        bad = np.flatnonzero(sec_in[pos] != sec)
        if bad.size:
            k = int(bad[0])
            out.append(f"{bad.size} lanes carry a secondary value other than the input's (position {pos[k]}: "
                       f"{sec[k]:#x} vs {sec_in[pos[k]]:#x})")
    if op.op == "none":
        if disabled:
            out.append(f"{disabled} disabled lanes without a filter")
        if pos.size != n:
            out.append(f"{n - pos.size} positions never delivered")
    else:
        if np.setdiff1d(np.unique(idx_in), idx).size:
            out.append(f"{np.setdiff1d(np.unique(idx_in), idx).size} indices of the input never delivered")
        if op.op == "min":
            want = index_aggregates("min", idx_in, sec_in)
            got = index_aggregates("min", idx, sec)
            wrong = [v for v in want if got.get(v) != want[v]]
            if wrong:
                out.append(f"{len(wrong)} indices lost their minimum (index {wrong[0]}: {got.get(wrong[0])} vs "
                           f"{want[wrong[0]]})")
        else:
            tol = fadd_tolerance(sec_in, idx_in)
            got = index_aggregates("fadd", idx, sec)
            wrong = [v for v, (s, t) in tol.items() if not abs(got.get(v, 0.0) - s) <= t]
            if wrong:
                v = wrong[0]
                out.append(f"{len(wrong)} indices whose delivered sum is off (index {v}: {got.get(v)} vs "
                           f"{tol[v][0]} +- {tol[v][1]:.3g})")
    mixed = []
    for r in result.replies:
        k = r.idx.size
        if 0 < k < r.threads:
            mixed.append(r)
        if r.kind in ("entry", "timeout", "flush") and r.disabled:
            out.append(f"warp {r.warp}: a {r.kind} reply with {r.disabled} disabled lanes")
        if r.kind == "disabled" and k:
            out.append(f"warp {r.warp}: a disabled reply with {k} live lanes")
        if r.kind == "timeout" and r.start - r.request < config.timeout:
            out.append(f"warp {r.warp}: timeout reply {r.start - r.request} cycles after the request "
                       f"(timeout {config.timeout})")
    if len(mixed) > 1 or (mixed and mixed[0].kind != "final"):
        out.append(f"{len(mixed)} replies mix live and disabled lanes (kinds {sorted({r.kind for r in mixed})}); "
                   f"at most one final reply may")
    return out[:limit]


def compare_aggregates(op: str, a: IRUResult, b: IRUResult, idx_in, sec_in) -> list[str]:
    """Filter/merge results of two runs of one operation (RTL and TLM): the same
    minimum per index (exact), float sums per index within twice the tolerance."""
    if op == "none":
        return []
    ia, sa, _ = _live(a)
    ib, sb, _ = _live(b)
    ga, gb = index_aggregates(op, ia, sa), index_aggregates(op, ib, sb)
    if set(ga) != set(gb):
        return [f"{len(set(ga) ^ set(gb))} indices delivered by one run only"]
    if op == "min":
        wrong = [v for v in ga if ga[v] != gb[v]]
        return [f"{len(wrong)} minima differ (index {wrong[0]}: {ga[wrong[0]]} vs {gb[wrong[0]]})"] if wrong else []
    tol = fadd_tolerance(sec_in, idx_in)
    wrong = [v for v in ga if not abs(ga[v] - gb[v]) <= 2 * tol[v][1]]
    return [f"{len(wrong)} float sums differ beyond the tolerance (index {wrong[0]}: {ga[wrong[0]]} vs "
            f"{gb[wrong[0]]})"] if wrong else []


def reply_quality(config: IRUConfig, result: IRUResult) -> float | None:
    """Mean distinct key blocks per full live reply (``entry_size`` live lanes)."""
    op = result.op
    counts = [np.unique(key_blocks(r.idx, op.target, op.esize, config)).size for r in result.replies
              if r.idx.size == config.entry_size]
    return float(np.mean(counts)) if counts else None


def timeout_slack(config: IRUConfig) -> tuple[int, int]:
    """``(slack, trip)``: cycles the unit may take to start a reply once a waiting
    request has timed out with the repliers idle and a warp's worth of elements
    in some partition (or enough tokens): the head's age register and the
    decision (4), the request ring once round (2 per hop, 2P), the first lane's
    register (4); and, when all input is in the hashes by then, ``trip`` more for
    the remainders' trip home (2 per element and hop, ``2 (P - 1) (E + 2)``).
    docs/iru.md, "Timeout"."""
    P, E = config.partitions, config.entry_size
    return 2 * P + 8, 2 * (P - 1) * (E + 2)


def timeout_violations(config: IRUConfig, replies: list, trace, offers: list | None = None,
                       limit: int = 8) -> list[str]:
    """Where the unit broke the timeout bound in one operation (docs/iru.md,
    "Timeout"); empty: the bound holds.

    The bound: while requests wait (sent, first lane not yet offered), the unit
    never leaves all its repliers idle for long with data to answer them. Take
    an interval from the start of a wait, or from a reply's first lane, to the
    next reply's first lane (anywhere in the unit); let ``t`` be the most threads
    of a request waiting in it. From the first cycle ``c`` of the interval at
    which no partition is replying and some partition holds ``t`` tokens, or all
    input is in the hashes, or (at least ``timeout`` cycles into the interval)
    some partition holds ``t`` elements, the next reply starts within ``slack``
    cycles, ``slack + trip`` if all input is in the hashes within ``slack`` cycles
    of ``c`` (:func:`timeout_slack`). Hence a request waits at most ``(k + 1)
    (timeout + slack + trip)`` idle cycles with enough data in the unit, ``k``
    the replies started while it waits; alone, ``timeout + slack + trip``.

    Parameters
    ----------
    replies : list of IRUReply
        Every reply of the operation, with ``partition``, ``request`` (cycle the
        request was sent), ``start`` (first lane) and ``end`` (last lane) on the
        trace's clock.
    trace : sequence of (held, tokens, flush)
        Per cycle: the most elements and the most tokens any partition held, and
        whether all input was in the hashes.
    offers : list of int, optional
        Cycle each reply's first lane was first offered (``valid``) when the
        receiver applied back-pressure; default ``start``.
    """
    T = config.timeout
    slack, trip = timeout_slack(config)
    offers = [r.start for r in replies] if offers is None else list(offers)
    if len(offers) != len(replies):
        raise ValueError(f"{len(offers)} offer cycles for {len(replies)} replies")
    for r, off in zip(replies, offers):
        if not r.request <= off <= r.start <= r.end:
            return [f"warp {r.warp}: request at cycle {r.request}, first lane offered at {off}, sent at {r.start}, "
                    f"last at {r.end}: out of order"]
    # Cycles at which some partition is replying: from its decision (the cycle
    # before the first lane is offered) to the last lane.
    L = len(trace)
    busy = np.zeros(L + 2, np.int64)
    for r, off in zip(replies, offers):
        lo, hi = max(0, min(off - 1, L)), min(r.end + 1, L)
        busy[lo] += 1
        busy[hi] -= 1
    busy = np.cumsum(busy)
    arrivals: dict = {}
    for r, off in zip(replies, offers):
        arrivals.setdefault(r.request, []).append((off, r.threads, r.warp))
    starts = set(offers)
    out: list[str] = []
    b = None                                 # start of the open interval
    need = 0
    waiting: list = []                       # (offer, threads, warp)
    for x in sorted(starts | set(arrivals)):
        if b is not None and x in starts:
            # The interval [b, x): the first cycle from which a reply must start within the slack.
            for c in range(b, min(x, L)):
                if busy[c]:
                    continue
                held, tok, fl = trace[c]
                if fl or tok >= need or (c >= b + T and held >= need):
                    ends = any(trace[k][2] for k in range(c, min(c + slack + 1, L)))
                    if x > c + slack + (trip if ends else 0):
                        ws = sorted(w for _, _, w in waiting)
                        out.append(f"requests waited from cycle {b} (warps {ws[:4]}{'...' if len(ws) > 4 else ''})"
                                   f": from cycle {c} no partition was replying and one held {held} elements, "
                                   f"{tok} tokens{', all input in' if fl else ''} (a warp of {need} threads), but "
                                   f"the next reply started at cycle {x} (timeout {T}, slack {slack}"
                                   f"{f' + {trip}' if ends else ''})")
                    break
            b = None
        waiting = [a for a in waiting if a[0] > x]
        new = [a for a in arrivals.get(x, ()) if a[0] > x]
        waiting += new
        if waiting and b is None:
            b, need = x, max(t for _, t, _ in waiting)
        elif new:
            need = max([need] + [t for _, t, _ in new])
        if len(out) >= limit:
            break
    return out
