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

from ..perf import unique
from .config import REPLY_KINDS, IRUConfig
from .ops import key_blocks
from .tlm import IRUResult, ReplyTable

__all__ = ["check_result", "fadd_tolerance", "index_aggregates", "compare_aggregates", "reply_quality",
           "full_reply_blocks",
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
    if isinstance(rs, ReplyTable):
        return rs.idx.astype(np.int64), rs.sec.astype(np.uint32), rs.pos.astype(np.int64)
    if not rs:
        return np.zeros(0, np.int64), np.zeros(0, np.uint32), np.zeros(0, np.int64)
    return (np.concatenate([r.idx for r in rs]).astype(np.int64), np.concatenate([r.sec for r in rs]).astype(np.uint32),
            np.concatenate([r.pos for r in rs]).astype(np.int64))


def _columns(result: IRUResult) -> dict:
    """Per reply: warp, live lanes, disabled lanes, kind (index into REPLY_KINDS),
    request and start cycles, as arrays (from a list of IRUReply or a ReplyTable)."""
    rs = result.replies
    if isinstance(rs, ReplyTable):
        return {"warp": rs.warp, "live": np.diff(rs.off), "disabled": rs.disabled, "kind": rs.kind,
                "request": rs.request, "start": rs.start}
    code = {k: i for i, k in enumerate(REPLY_KINDS)}
    rows = [(r.warp, r.idx.size, r.disabled, code.get(r.kind, -1), r.request, r.start) for r in rs]
    cols = np.array(rows, np.int64).reshape(-1, 6)
    return dict(zip(("warp", "live", "disabled", "kind", "request", "start"), cols.T))


def check_result(config: IRUConfig, idx_in: np.ndarray, sec_in: np.ndarray, result: IRUResult,
                 limit: int = 8) -> list[str]:
    """Problems of ``result`` for the input ``(idx_in, sec_in)`` (empty: all good)."""
    op = result.op
    out: list[str] = []
    n = op.n
    E = config.entry_size
    W = -(-n // E)
    col = _columns(result)
    warp, live_l, dis_l, kind = col["warp"], col["live"], col["disabled"], col["kind"]
    K = {k: i for i, k in enumerate(REPLY_KINDS)}
    threads = np.minimum(E, n - E * warp)               # each warp's threads (valid warps)
    ok = (warp >= 0) & (warp < W)
    for k in np.flatnonzero(~ok)[:limit].tolist():
        out.append(f"reply for warp {warp[k]}, the kernel has {W} warps")
    w_ok = warp[ok]
    cnt = np.bincount(w_ok, minlength=W) if W else np.zeros(0, np.int64)
    for w in np.flatnonzero(cnt > 1)[:limit].tolist():
        out.append(f"warp {w} answered twice")
    lanes = live_l + dis_l
    for k in np.flatnonzero(ok & (lanes != threads))[:limit].tolist():
        out.append(f"warp {warp[k]}: {lanes[k]} lanes for {threads[k]} threads")
    missing = W - int(np.count_nonzero(cnt))
    if missing:
        out.append(f"{missing} of {W} warps got no reply")
    past = op.past_top(config)
    if bool(result.status.cmd_error) != bool(past):
        out.append(f"cmd_error {bool(result.status.cmd_error)}, but "
                   + (f"array {' and '.join(past)} runs past the top of the {config.addr_width}-bit address space"
                      if past else "no array runs past the top of the address space"))
    if past:
        # Nothing was read: every lane disabled, in disabled replies.
        for k in np.flatnonzero((live_l > 0) | (kind != K["disabled"])).tolist():
            out.append(f"warp {warp[k]}: a {REPLY_KINDS[kind[k]] if kind[k] >= 0 else '?'} reply with {live_l[k]} "
                       f"live lanes in an operation that is a command error (every lane must be disabled)")
        return out[:limit]
    idx, sec, pos = _live(result)
    live = idx.size
    disabled = int(dis_l.sum())
    if live + disabled != n:
        out.append(f"{live} live + {disabled} disabled lanes for {n} elements")
    if pos.size and (pos.min() < 0 or pos.max() >= n):
        out.append("a position outside [0, n)")
        return out[:limit]
    distinct = int(np.count_nonzero(np.bincount(pos, minlength=n))) if pos.size else 0
    if distinct != pos.size:
        out.append(f"{pos.size - distinct} positions delivered twice")
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
        out += _filter_problems(op.op, idx_in, sec_in, idx, sec)
    names = np.array(REPLY_KINDS + ("?",))
    whole = np.isin(kind, [K["entry"], K["timeout"], K["flush"]])
    for k in np.flatnonzero(whole & (dis_l > 0))[:limit].tolist():
        out.append(f"warp {warp[k]}: a {names[kind[k]]} reply with {dis_l[k]} disabled lanes")
    for k in np.flatnonzero((kind == K["disabled"]) & (live_l > 0))[:limit].tolist():
        out.append(f"warp {warp[k]}: a disabled reply with {live_l[k]} live lanes")
    early = (kind == K["timeout"]) & (col["start"] - col["request"] < config.timeout)
    for k in np.flatnonzero(early)[:limit].tolist():
        out.append(f"warp {warp[k]}: timeout reply {col['start'][k] - col['request'][k]} cycles after the request "
                   f"(timeout {config.timeout})")
    mixed = np.flatnonzero((live_l > 0) & (live_l < lanes))
    if mixed.size > 1 or (mixed.size and kind[mixed[0]] != K["final"]):
        out.append(f"{mixed.size} replies mix live and disabled lanes (kinds "
                   f"{sorted({str(names[kind[k]]) for k in mixed.tolist()})}); at most one final reply may")
    return out[:limit]


def _filter_problems(op: str, idx_in, sec_in, idx, sec) -> list[str]:
    """``min``/``fadd``: every index delivered; minima exact, sums within the tolerance.
    Per-index tables are dense arrays when the indices are few enough, else over the
    distinct indices."""
    out = []
    top = int(max(idx_in.max(initial=-1), idx.max(initial=-1))) + 1
    if top <= max(4 * (idx_in.size + idx.size), 1 << 16):
        uin = np.flatnonzero(np.bincount(idx_in, minlength=top))          # the input's indices
        inv_in, inv_out, m = idx_in, idx, top
        there = np.bincount(idx, minlength=top)[uin] > 0
        slot = uin                                       # an index's row in the tables
    else:
        uin, inv_in = np.unique(idx_in, return_inverse=True)
        uout, inv_out = np.unique(idx, return_inverse=True)
        m = max(uout.size, 1)
        at = np.minimum(np.searchsorted(uout, uin), uout.size - 1) if uout.size else np.zeros(uin.size, np.int64)
        there = (uout[at] == uin) if uout.size else np.zeros(uin.size, bool)
        slot = at
        inv_in = np.searchsorted(uin, idx_in)            # rows of the input's own table
    if not there.all():
        out.append(f"{int(np.count_nonzero(~there))} indices of the input never delivered")
    big = np.iinfo(np.int64).max
    if op == "min":
        want = np.full(uin.size if inv_in is not idx_in else m, big)
        np.minimum.at(want, inv_in, sec_in.astype(np.int64))
        got = np.full(m, big)
        np.minimum.at(got, inv_out, sec.astype(np.int64))
        w = want[uin] if inv_in is idx_in else want
        g = np.where(there, got[slot], -1)
        wrong = np.flatnonzero(g != w)
        if wrong.size:
            v = int(wrong[0])
            out.append(f"{wrong.size} indices lost their minimum (index {uin[v]}: "
                       f"{int(g[v]) if there[v] else None} vs {int(w[v])})")
        return out
    x = sec_in.view(np.float32).astype(np.float64)
    size = uin.size if inv_in is not idx_in else m
    counts = np.bincount(inv_in, minlength=size)
    sums = np.bincount(inv_in, weights=x, minlength=size)
    mags = np.bincount(inv_in, weights=np.abs(x), minlength=size)
    if inv_in is idx_in:
        counts, sums, mags = counts[uin], sums[uin], mags[uin]
    tol = (counts - 1) * 2.0 ** -24 * mags + counts * 2.0 ** -125
    gsum = np.bincount(inv_out, weights=sec.view(np.float32).astype(np.float64), minlength=m)
    g = np.where(there, gsum[slot], 0.0)
    with np.errstate(invalid="ignore"):
        wrong = np.flatnonzero(~(np.abs(g - sums) <= tol))
    if wrong.size:
        v = int(wrong[0])
        out.append(f"{wrong.size} indices whose delivered sum is off (index {uin[v]}: "
                   f"{float(g[v]) if there[v] else None} vs {sums[v]} +- {tol[v]:.3g})")
    return out


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


def full_reply_blocks(config: IRUConfig, result: IRUResult, target: int | None = None,
                      esize: int | None = None) -> tuple[int, int]:
    """``(replies, blocks)``: the full live replies (``entry_size`` live lanes) and
    the distinct key blocks they touch, summed over them (of ``target``/``esize``,
    default the operation's)."""
    op = result.op
    target = op.target if target is None else target
    esize = op.esize if esize is None else esize
    E = config.entry_size
    rs = result.replies
    if isinstance(rs, ReplyTable):
        lens = np.diff(rs.off)
        full = np.flatnonzero(lens == E)
        if not full.size:
            return 0, 0
        lanes = rs.off[full][:, None] + np.arange(E)
        kb = np.sort(key_blocks(rs.idx[lanes], target, esize, config), axis=1)      # a row per reply
        return int(full.size), int(full.size + np.count_nonzero(kb[:, 1:] != kb[:, :-1]))
    counts = [unique(key_blocks(r.idx, target, esize, config)).size for r in rs if r.idx.size == E]
    return len(counts), int(sum(counts))


def reply_quality(config: IRUConfig, result: IRUResult) -> float | None:
    """Mean distinct key blocks per full live reply (``entry_size`` live lanes)."""
    k, blocks = full_reply_blocks(config, result)
    return blocks / k if k else None


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
