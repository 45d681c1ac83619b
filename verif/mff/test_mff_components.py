"""The components of the MFF's RTL (hw/mff/: MFF slides, "Internal Structure of MFF
Unit", "How MFF Unit Works"; docs/mff.md, "Structure") alone under Amaranth's
simulator, each against an independent expectation written here in plain Python
(a deque, a dict, the slides' rules), never against the RTL itself: the memory
port (block reads in order, write-backs first unless a read is held, the stream
rule under back-pressure), the job entries (commands taking free entries, elements
outstanding, finished, errors, completions), the work registers (the pool: never-used
registers first, then freed ones in order; the memory; the retry queue), the tag unit
(lookups, victims in round robin, lists linked and handed to the walker, lines
filled, scatter bits, dirty lines flushed, invalidation), the completions (the lowest
ready first, scatters after their flush, held under back-pressure, invalidations,
failed write-backs), the issue engine (commands into job entries and elements with
the slides' addresses, states and targets; invalidations only when quiet), the walker
(each list walked in order, retries between walks) and the event rule (what a
walked or retried C, V or S register does, its value, stalls, errors).

Each test runs in a second or two; the whole unit is checked against the TLM by
test_mff_rtl.py."""
from __future__ import annotations

import random
from collections import deque
from dataclasses import replace

import pytest

from golden.mff import MFFCommand, MFFConfig, ThreadRequest, command_entries
from hw.mff.completion import Completion
from hw.mff.issue import IssueEngine
from hw.mff.jobs import JobTable
from hw.mff.layouts import widths
from hw.mff.port import MemoryPort
from hw.mff.registers import WorkRegisters
from hw.mff.tags import TagUnit
from hw.mff.walker import EventRule, Walker

from conftest import simulate

TINY = MFFConfig.preset("tiny")
DEFAULT = MFFConfig.preset("default")


# ---------------------------------------------------------------------- MemoryPort
@pytest.mark.parametrize("name,cfg,ready", [("tiny", TINY, 0.5), ("default", DEFAULT, 0.3),
                                            ("tiny always ready", TINY, 1.0),
                                            ("64B", replace(TINY, block_bytes=64, tag_entries=4), 0.2)])
def test_memory_port_orders_reads_and_write_backs(name, cfg, ready):
    """Random block reads (only when ``read_room``) and dirty lines offered at
    random, the port ready at random: every read goes out once, in the order
    queued, with tag ``{entry, 0}`` and the block's address; every latched
    write-back once, with its data, mask and tag ``{entry, 1}``; a line is latched
    only into an empty buffer; an offered request holds until taken; a write-back
    goes first unless a read was offered and not taken the cycle before."""
    dut = MemoryPort(cfg)
    rng = random.Random(name)
    bbb = cfg.block_bytes.bit_length() - 1
    tb = max(1, (cfg.tag_entries - 1).bit_length())
    BW = cfg.addr_width - bbb
    seen = {"reads": 0, "wbs": 0, "held": 0, "wb_behind_read": 0, "full": 0}

    async def bench(ctx):
        queued = deque()                  # reads not yet taken by the port, in order
        wb = None                         # the latched write-back
        prev = None                       # (kind, payload) offered and not taken last cycle
        for cycle in range(1500):
            room = ctx.get(dut.read_room)
            assert not (room and len(queued) > cfg.tag_entries - 1 + 1), cycle
            seen["full"] += not room
            read_en = room and rng.random() < 0.4
            rd = {"block": rng.randrange(2 ** BW), "entry": rng.randrange(2 ** tb)}
            fl_valid = rng.random() < 0.2
            fl = {"entry": rng.randrange(2 ** tb), "block": rng.randrange(2 ** BW),
                  "mask": rng.getrandbits(cfg.block_bytes)}
            line = rng.getrandbits(8 * cfg.block_bytes)       # latched by the tag unit if the line is taken
            rdy = rng.random() < ready
            ctx.set(dut.read_en, read_en)
            ctx.set(dut.read, rd)
            ctx.set(dut.flush_valid, fl_valid)
            ctx.set(dut.flush, fl)
            ctx.set(dut.wb_data, wb["data"] if wb is not None else rng.getrandbits(8 * cfg.block_bytes))
            ctx.set(dut.req.ready, rdy)
            assert ctx.get(dut.wb_pending) == (wb is not None), cycle
            fire = ctx.get(dut.flush_fire)
            assert fire == (fl_valid and wb is None), cycle
            valid = ctx.get(dut.req.valid)
            p = ctx.get(dut.req.payload)
            offered = None
            if valid:
                tag = p.tag
                if p.write:
                    assert wb is not None, cycle
                    assert (tag & ((1 << tb) - 1), tag >> tb) == (wb["entry"], 1)
                    assert p.addr == wb["block"] << bbb and p.wdata == wb["data"] and p.wmask == wb["mask"]
                    assert prev is None or prev[0] == "wb", cycle      # a held read goes first
                    offered = ("wb", wb["entry"])
                else:
                    assert queued, cycle
                    assert (p.addr >> bbb, tag & ((1 << tb) - 1), tag >> tb) == (queued[0]["block"],
                                                                                  queued[0]["entry"], 0), cycle
                    assert wb is None or (prev is not None and prev[0] == "rd"), cycle  # write-backs go first
                    seen["wb_behind_read"] += wb is not None
                    offered = ("rd", queued[0]["entry"])
                if prev is not None:
                    assert offered == prev, cycle                         # the stream rule
            else:
                assert prev is None and wb is None, cycle
            await ctx.tick()
            prev = None
            if valid and rdy:
                if offered[0] == "wb":
                    wb = None
                    seen["wbs"] += 1
                else:
                    queued.popleft()
                    seen["reads"] += 1
            elif valid:
                prev = offered
                seen["held"] += 1
            if fire:
                wb = dict(fl, data=line)
            if read_en:
                queued.append(rd)
        # drain: nothing lost
        ctx.set(dut.read_en, 0)
        ctx.set(dut.flush_valid, 0)
        ctx.set(dut.req.ready, 1)
        if wb is not None:
            ctx.set(dut.wb_data, wb["data"])
        for _ in range(cfg.tag_entries + 4):
            if ctx.get(dut.req.valid):
                if ctx.get(dut.req.payload).write:
                    wb = None
                else:
                    queued.popleft()
            await ctx.tick()
        assert not queued and wb is None

    simulate(dut, bench)
    assert seen["reads"] > 100 and seen["wbs"] > 20
    if ready < 1:
        assert seen["held"] and seen["full"] and seen["wb_behind_read"]


# ---------------------------------------------------------------------- JobTable
@pytest.mark.parametrize("jobs", [1, 2, 4, 8])
def test_job_table_tracks_commands(jobs):
    """Random commands taking the lowest free entry, elements issued and finished
    (several entries in one cycle), last entries issued, errors, completions taken,
    against a dict per entry: an entry is finished when it is valid, its last entry
    is issued, no element is outstanding and its elements are not being issued; a
    new command clears the entry's error flag (in the cycle another error is set)."""
    cfg = replace(TINY, job_entries=jobs)
    dut = JobTable(cfg)
    rng = random.Random(jobs)
    seen = {"finished": 0, "full": 0, "errors": 0, "clear_vs_set": 0}

    async def bench(ctx):
        ent = {}                          # entry -> {"p", "issued", "out", "err"}
        errs = [0] * jobs                 # error flags (kept past the release)
        for cycle in range(600):
            free = [k for k in range(jobs) if k not in ent]
            assert ctx.get(dut.have_job) == bool(free), cycle
            if free:
                assert ctx.get(dut.free_job) == free[0], cycle
            seen["full"] += not free
            issuing = rng.choice([None] + list(ent)) if ent else None
            fin = {k for k, e in ent.items() if e["issued"] and e["out"] == 0 and k != issuing}
            ctx.set(dut.issuing, 0 if issuing is None else 1 << issuing)
            assert ctx.get(dut.valid) == sum(1 << k for k in ent), cycle
            assert ctx.get(dut.finished) == sum(1 << k for k in fin), cycle
            assert ctx.get(dut.err) == sum(v << k for k, v in enumerate(errs)), cycle
            assert ctx.get(dut.issued) & ctx.get(dut.valid) == sum(1 << k for k, e in ent.items() if e["issued"])
            for k, e in ent.items():
                assert (ctx.get(dut.warp[k]), ctx.get(dut.cbase[k]), ctx.get(dut.vbase[k]), ctx.get(dut.v8) >> k & 1,
                        ctx.get(dut.scatter) >> k & 1) == e["p"], cycle
            seen["finished"] += bool(fin)
            take = bool(free) and rng.random() < 0.3
            p = (rng.randrange(2 ** cfg.warp_bits), rng.getrandbits(cfg.addr_width), rng.getrandbits(cfg.addr_width),
                 rng.randrange(2), rng.randrange(2))
            ctx.set(dut.take, take)
            ctx.set(dut.take_job, free[0] if free else 0)
            ctx.set(dut.take_p, dict(zip(("warp", "cbase", "vbase", "v8", "scatter"), p)))
            inc = dec = 0
            for k, e in ent.items():
                if not e["issued"] and rng.random() < 0.5:
                    inc |= 1 << k
                if e["out"] and rng.random() < 0.4:
                    dec |= 1 << k
            ctx.set(dut.inc, inc)
            ctx.set(dut.dec, dec)
            last = [k for k, e in ent.items() if not e["issued"]]
            il = rng.choice(last) if last and rng.random() < 0.2 else None
            ctx.set(dut.issue_last, il is not None)
            ctx.set(dut.issue_job, il if il is not None else rng.randrange(jobs))
            es = rng.getrandbits(jobs) if rng.random() < 0.1 else 0
            ctx.set(dut.err_set, es)
            rel = rng.choice(sorted(fin)) if fin and rng.random() < 0.5 else None
            ctx.set(dut.release, rel is not None)
            ctx.set(dut.release_job, rel if rel is not None else rng.randrange(jobs))
            await ctx.tick()
            for k in range(jobs):
                if es >> k & 1:
                    errs[k] = 1
                    seen["errors"] += 1
            for k, e in ent.items():
                e["out"] += (inc >> k & 1) - (dec >> k & 1)
            if il is not None:
                ent[il]["issued"] = True
            if rel is not None:
                del ent[rel]
            if take:
                ent[free[0]] = {"p": p, "issued": False, "out": 0}
                seen["clear_vs_set"] += es >> free[0] & 1
                errs[free[0]] = 0

    simulate(dut, bench)
    assert seen["finished"] and seen["full"] and seen["errors"]


# ---------------------------------------------------------------------- WorkRegisters
@pytest.mark.parametrize("regs", [4, 8, 32])
def test_work_registers_pool_memory_and_retry_queue(regs):
    """Random allocations, frees, writes, reads and retries against a dict (the
    memory) and two deques: registers come out of the pool never-used first (0, 1,
    ...), then in the order they were freed, each at most two cycles after its free
    (the queue's latency); ``in_use`` counts them; the retry queue gives back what
    was pushed, in order, within two cycles."""
    cfg = replace(TINY, work_registers=regs, tag_entries=2)
    dut = WorkRegisters(cfg)
    rng = random.Random(regs)
    TW, AW = cfg.target_width, cfg.addr_width
    seen = {"dry": 0, "reuse": 0, "retries": 0}

    async def bench(ctx):
        mem = {}
        fresh = deque(range(regs))
        freed = deque()                   # (register, cycle freed)
        used = set()
        retry = deque()                   # (register, cycle pushed)
        for cycle in range(800):
            avail = list(fresh) + [r for r, _ in freed]
            have = ctx.get(dut.have_reg)
            late = freed and not fresh and cycle - freed[0][1] >= 2
            assert have == bool(fresh) or (have and freed) or (not have and not late), cycle
            if have:
                assert ctx.get(dut.new_reg) == avail[0], cycle
            seen["dry"] += not avail
            assert ctx.get(dut.in_use) == len(used), cycle
            rv = ctx.get(dut.retry_valid)
            assert not rv or ctx.get(dut.retry_head) == retry[0][0], cycle
            assert rv or not retry or cycle - retry[0][1] < 2, cycle
            raddr = rng.randrange(regs)
            ctx.set(dut.r_addr, raddr)
            if raddr in mem:
                r = ctx.get(dut.r_data)
                assert (r.st.value, r.job, r.target, r.addr, r.next) == mem[raddr], cycle
            phase = (cycle // (3 * regs)) % 2     # taking, then giving back
            alloc = have and rng.random() < (0.7 if phase == 0 else 0.3)
            free = rng.choice(sorted(used)) if used and rng.random() < (0.2 if phase == 0 else 0.7) else None
            ctx.set(dut.alloc, alloc)
            ctx.set(dut.free, free is not None)
            ctx.set(dut.free_reg, free if free is not None else 0)
            w = rng.random() < 0.5
            wa = rng.randrange(regs)
            wd = (rng.randrange(3), rng.randrange(2 ** widths(cfg).jb), rng.randrange(2 ** TW),
                  rng.randrange(2 ** AW), rng.randrange(regs + 1))
            ctx.set(dut.w_en, w)
            ctx.set(dut.w_addr, wa)
            ctx.set(dut.w_data, dict(zip(("st", "job", "target", "addr", "next"), wd)))
            push = len(retry) < regs - 1 and rng.random() < 0.3
            pr = rng.randrange(regs)
            ctx.set(dut.retry_push, push)
            ctx.set(dut.retry_reg, pr)
            pop = rv and rng.random() < 0.5
            ctx.set(dut.retry_pop, pop)
            await ctx.tick()
            if w:
                mem[wa] = wd
            if alloc:
                seen["reuse"] += not fresh
                used.add(fresh.popleft() if fresh else freed.popleft()[0])
            if free is not None:
                used.discard(free)
                freed.append((free, cycle + 1))
            if pop:
                retry.popleft()
                seen["retries"] += 1
            if push:
                retry.append((pr, cycle + 1))

    simulate(dut, bench)
    assert seen["dry"] and seen["reuse"] and seen["retries"] > 50


# ---------------------------------------------------------------------- TagUnit
def _tag_expect(T, ents, vptr):
    """The slides' rules on a list of entry dicts: lookups take the lowest match;
    a victim is invalid, or ready with no list, not walked, not written back and
    clean, the first from ``vptr`` on; the walker takes the lowest entry waiting;
    the lowest dirty entry not being written back is flushed first."""
    NIL = None
    ev = [not e["valid"] or (e["ready"] and e["head"] is NIL and not e["walk"] and not e["walking"]
                             and not e["writing"] and not e["dirty"]) for e in ents]
    order = [(vptr + d) % T for d in range(T)]
    victim = next((k for k in order if ev[k]), None)
    walk = [k for k, e in enumerate(ents) if e["walk"]]
    dirty = [k for k, e in enumerate(ents) if e["dirty"] and not e["writing"]]
    return victim, (walk[0] if walk else None), (dirty[0] if dirty else None)


@pytest.mark.parametrize("name,cfg", [("tiny", TINY), ("4 entries 64B", replace(TINY, tag_entries=4, block_bytes=64,
                                                                                 work_registers=8)),
                                      ("default", replace(DEFAULT, tag_entries=8))])
def test_tag_unit_entries_lists_and_lines(name, cfg):
    """A random environment that keeps the unit's contract (blocks allocated into
    the victim, registers linked to valid entries, reads answered once after a
    random delay, some with errors, walks started on the entry offered and ended,
    scatter bits set in the walked line, dirty lines latched (with their
    data) and their write-backs answered, invalidations) against a list of entry dicts
    updated by the slides' rules; every output is compared every cycle."""
    dut = TagUnit(cfg)
    w = widths(cfg)
    T, NIL, BB = cfg.tag_entries, cfg.work_registers, cfg.block_bytes
    rng = random.Random(name)
    seen = {"alloc": 0, "link": 0, "walks": 0, "errors": 0, "bits": 0, "flushes": 0, "no_victim": 0, "inval": 0}

    async def bench(ctx):
        ents = [dict(valid=False, block=0, ready=False, err=False, head=None, dirty=0, walk=False, walking=False,
                     writing=False, line=0) for _ in range(T)]
        vptr = 0
        reads = []                        # [due cycle, entry] outstanding reads
        writes = []                       # [due cycle, entry] outstanding write-backs
        cur = None                        # entry being walked
        wb_line = None                    # the line of the last flush
        nreg = 0
        for cycle in range(500):
            victim, wsel, fsel = _tag_expect(T, ents, vptr)
            present = [e["block"] for e in ents if e["valid"]]
            nb = rng.choice(present) if present and rng.random() < 0.6 else rng.randrange(64)
            ib = rng.choice(present) if present and rng.random() < 0.6 else rng.randrange(64)
            ctx.set(dut.need_block, nb)
            ctx.set(dut.iss_block, ib)
            ctx.set(dut.walk_cur, cur if cur is not None else 0)
            for blk, pre in ((nb, "need"), (ib, "iss")):
                hits = [k for k, e in enumerate(ents) if e["valid"] and e["block"] == blk]
                assert ctx.get(getattr(dut, f"{pre}_hit")) == bool(hits), cycle
                if hits:
                    k = hits[0]
                    assert ctx.get(getattr(dut, f"{pre}_idx")) == k, cycle
                    head = ents[k]["head"]
                    assert ctx.get(getattr(dut, f"{pre}_head")) == (NIL if head is None else head), cycle
                    if pre == "need":
                        assert (ctx.get(dut.need_ready), ctx.get(dut.need_err)) == (ents[k]["ready"], ents[k]["err"])
                        if ents[k]["ready"]:
                            assert ctx.get(dut.need_line) == ents[k]["line"], cycle
            assert ctx.get(dut.have_victim) == (victim is not None), cycle
            if victim is not None:
                assert ctx.get(dut.victim) == victim, cycle
            seen["no_victim"] += victim is None
            assert ctx.get(dut.walk_pending) == (wsel is not None), cycle
            if wsel is not None:
                assert ctx.get(dut.walk_sel) == wsel and ctx.get(dut.walk_head) == ents[wsel]["head"], cycle
            if cur is not None:
                assert (ctx.get(dut.walk_line), ctx.get(dut.walk_err)) == (ents[cur]["line"], ents[cur]["err"])
            assert ctx.get(dut.flush_pending) == (fsel is not None), cycle
            if fsel is not None:
                f = ctx.get(dut.flush)
                assert (f.entry, f.block, f.mask) == (fsel, ents[fsel]["block"], ents[fsel]["dirty"]), cycle
            if wb_line is not None:
                assert ctx.get(dut.wb_data) == wb_line, cycle
            assert ctx.get(dut.writing) == any(e["writing"] for e in ents), cycle
            # drive one cycle of the environment
            alloc = victim is not None and rng.random() < 0.3
            ablock = rng.choice([b for b in range(64) if b not in present])
            link = rng.choice([k for k, e in enumerate(ents) if e["valid"]] or [None]) if rng.random() < 0.25 else None
            if alloc and link == victim:
                link = None
            start = wsel is not None and cur is None and rng.random() < 0.5
            done = cur is not None and not start and rng.random() < 0.3
            setb = cur is not None and ents[cur]["ready"] and rng.random() < 0.4
            bit = rng.randrange(8 * BB)
            fire = fsel is not None and rng.random() < 0.4
            inval = not alloc and rng.random() < 0.01
            resp = None
            due = [r for r in reads + writes if r[0] <= cycle]
            if due and rng.random() < 0.7:
                resp = due[0]
            ctx.set(dut.alloc_en, alloc)
            ctx.set(dut.alloc_entry, victim if alloc else 0)
            ctx.set(dut.alloc_block, ablock)
            ctx.set(dut.alloc_reg, nreg % NIL)
            ctx.set(dut.link_en, link is not None)
            ctx.set(dut.link_entry, link if link is not None else 0)
            ctx.set(dut.link_reg, (nreg + 1) % NIL)
            ctx.set(dut.walk_start, start)
            ctx.set(dut.walk_done, done)
            ctx.set(dut.set_en, setb)
            ctx.set(dut.set_bit, bit)
            ctx.set(dut.flush_fire, fire)
            ctx.set(dut.invalidate, inval)
            err = rng.random() < 0.15
            data = rng.getrandbits(8 * BB)
            ctx.set(dut.resp.valid, resp is not None)
            if resp is not None:
                wr = resp in writes
                ctx.set(dut.resp.payload, {"tag": resp[1] | (wr << w.tb), "rdata": data, "error": err})
            assert ctx.get(dut.resp_write_error) == (resp is not None and resp in writes and err), cycle
            await ctx.tick()
            # the rules
            ents_before_line = ents[fsel]["line"] if fire else None
            new = [dict(e) for e in ents]
            for k, e in enumerate(new):
                old = ents[k]
                if start and k == wsel:
                    e["head"] = None
                if link == k:
                    e["head"] = (nreg + 1) % NIL
                if alloc and k == victim:
                    e["head"] = nreg % NIL
                rr = resp is not None and resp in reads and resp[1] == k
                if rr:
                    e["ready"], e["err"], e["line"] = True, err, 0 if err else data
                if alloc and k == victim:
                    e.update(valid=True, block=ablock, ready=False, err=False)
                e["walk"] = e["ready"] and e["head"] is not None
                if start and k == wsel:
                    e["walking"] = True
                if done and k == cur:
                    e["walking"] = False
                if fire and k == fsel:
                    e["writing"], e["dirty"] = True, 0
                if resp is not None and resp in writes and resp[1] == k:
                    e["writing"] = False
                if setb and k == cur:
                    e["dirty"] = (0 if fire and k == fsel else old["dirty"]) | (1 << (bit >> 3))
                    e["line"] = old["line"] | (1 << bit)
                if inval:
                    e["valid"] = False
            ents = new
            if alloc:
                vptr = (victim + 1) % T
                reads.append([cycle + rng.randint(1, 8), victim])
                seen["alloc"] += 1
            seen["link"] += link is not None
            seen["errors"] += err and resp is not None
            seen["bits"] += setb
            seen["flushes"] += fire
            seen["inval"] += inval
            if resp is not None:
                (reads if resp in reads else writes).remove(resp)
            if fire:
                writes.append([cycle + rng.randint(1, 8), fsel])
                wb_line = ents_before_line
            if start:
                cur = wsel
                seen["walks"] += 1
            elif done:
                cur = None
            nreg += 2

    simulate(dut, bench)
    assert all(seen.values()), seen


# ---------------------------------------------------------------------- Completion
@pytest.mark.parametrize("jobs,ready", [(1, 0.5), (2, 0.3), (4, 0.6), (8, 1.0)])
def test_completion_offers_finished_commands_in_order(jobs, ready):
    """Job entries finish at random (gathers and scatters, with and without an
    error), dirty lines come and go, the done port takes completions at random,
    invalidations come when no command is in flight: each finished entry completes
    once, the lowest ready first, a scatter only when every line is clean and
    written back; an offered completion holds until taken; an invalidation
    completes with its warp and no error; flushes are asked for while a scatter has
    finished or no tag entry is free; a failed write-back flags every scatter but
    the one offered."""
    cfg = replace(TINY, job_entries=jobs)
    dut = Completion(cfg)
    rng = random.Random(jobs)
    seen = {"done": 0, "held": 0, "inval": 0, "scatter_waits": 0, "spared": 0}

    async def bench(ctx):
        fin = {}                          # entry -> (scatter, err, warp)
        live = set()                      # entries in flight, not finished
        held = None                       # the completion offered and not taken: ("job", k) / ("inval", warp)
        inval = None                      # the invalidation's warp while it waits
        for cycle in range(700):
            for k in range(jobs):
                if k not in fin and k not in live and cycle % 100 < 60 and rng.random() < 0.2:
                    live.add(k)
            for k in sorted(live):
                if rng.random() < 0.15:
                    live.discard(k)
                    fin[k] = (rng.random() < 0.5, rng.random() < 0.2, rng.randrange(2 ** cfg.warp_bits))
            scat = sum(1 << k for k, f in fin.items() if f[0]) | sum(1 << k for k in live if k % 2)
            fp, wr, wb = (rng.random() < 0.3 for _ in range(3))
            hv = rng.random() < 0.8
            ctx.set(dut.finished, sum(1 << k for k in fin))
            ctx.set(dut.scatter, scat)
            ctx.set(dut.err, sum(int(f[1]) << k for k, f in fin.items()))
            ctx.set(dut.warp, [fin[k][2] if k in fin else 0 for k in range(jobs)])
            for port, v in (("flush_pending", fp), ("writing", wr), ("wb_pending", wb), ("have_victim", hv)):
                ctx.set(getattr(dut, port), v)
            ev = rng.getrandbits(jobs) if rng.random() < 0.2 else 0
            rwe = rng.random() < 0.2
            ctx.set(dut.event_err, ev)
            ctx.set(dut.resp_write_error, rwe)
            rdy = rng.random() < ready
            ctx.set(dut.done.ready, rdy)
            flushed = not (fp or wr or wb)
            readyj = [k for k in sorted(fin) if not fin[k][0] or flushed]
            seen["scatter_waits"] += any(fin[k][0] for k in fin) and not flushed
            if inval is not None:
                want = ("inval", inval)
            elif held is not None:
                want = held
            else:
                want = ("job", readyj[0]) if readyj else None
            assert ctx.get(dut.done.valid) == (want is not None), cycle
            if want is not None:
                p = ctx.get(dut.done.payload)
                if want[0] == "inval":
                    assert (p.warp, p.error) == (want[1], 0), cycle
                else:
                    assert (p.warp, p.error) == (fin[want[1]][2], fin[want[1]][1]), cycle
            offered = want[1] if want is not None and want[0] == "job" else None
            spare = 0 if offered is None else 1 << offered
            assert ctx.get(dut.err_set) == ev | ((scat & ~spare) if rwe else 0), cycle
            seen["spared"] += rwe and bool(scat & spare)
            assert ctx.get(dut.flush_req) == (any(fin[k][0] for k in fin) or not hv), cycle
            taken = want is not None and want[0] == "job" and rdy
            assert ctx.get(dut.release) == taken, cycle
            if taken:
                assert ctx.get(dut.release_job) == want[1]
            go_inval = not fin and not live and inval is None and held is None and rng.random() < 0.2
            ctx.set(dut.inval, go_inval)
            iw = rng.randrange(2 ** cfg.warp_bits)
            ctx.set(dut.inval_warp, iw)
            assert ctx.get(dut.inval_pending) == (inval is not None), cycle
            await ctx.tick()
            if want is not None and rdy:
                if want[0] == "inval":
                    inval = None
                    seen["inval"] += 1
                else:
                    del fin[want[1]]
                    seen["done"] += 1
                held = None
            elif want is not None and want[0] == "job":
                held = want
                seen["held"] += 1
            if go_inval:
                inval = iw

    simulate(dut, bench)
    assert seen["done"] > 30 and seen["inval"] and seen["scatter_waits"] and seen["spared"]
    if ready < 1:
        assert seen["held"]


# ---------------------------------------------------------------------- IssueEngine
def _issue_commands(cfg: MFFConfig, rng: random.Random, n: int) -> list[MFFCommand]:
    cmds = []
    for _ in range(n):
        kind = rng.choice(["gather", "gather", "scatter", "invalidate"])
        warp = rng.randrange(2 ** cfg.warp_bits)
        if kind == "invalidate":
            cmds.append(MFFCommand("invalidate", warp))
            continue
        lanes = rng.sample(range(32), rng.choice([0, 1, 2, 5]))
        if kind == "scatter":
            th = tuple(ThreadRequest(lane=l, cidx=rng.randrange(2 ** 20), size=rng.choice([0, 1, 1, 3]))
                       for l in lanes)
            cmds.append(MFFCommand("scatter", warp, th, cbase=rng.randrange(2 ** 20), vbase=rng.randrange(2 ** 20)))
        else:
            th = tuple(ThreadRequest(lane=l, cidx=rng.randrange(2 ** 20), size=rng.choice([0, 1, 3, 7]),
                                     target=rng.randrange(2 ** 12)) for l in lanes)
            cmds.append(MFFCommand("gather", warp, th, cbase=rng.randrange(2 ** 20), vbase=rng.randrange(2 ** 20),
                                   vsize=rng.choice([4, 8])))
    return cmds


def _elements(cmd: MFFCommand) -> list[tuple]:
    """The slides' elements of a command: (address, state, target) in issue order."""
    out = []
    for t in cmd.threads:
        if cmd.op == "scatter":
            if t.size:
                out.append((cmd.vbase + (t.cidx >> 3), "S", t.cidx & 7))
        else:
            out += [(cmd.cbase + 4 * (t.cidx + i), "C", (t.target + cmd.vsize * i) % 2 ** 16) for i in range(t.size)]
    return out


@pytest.mark.parametrize("jobs", [1, 2, 4])
def test_issue_engine_issues_each_commands_elements(jobs):
    """Commands (gathers, scatters with inactive threads and sizes past one, empty
    commands, invalidations)
    encoded by golden's command_entries, sent with random pauses; the environment
    plays the job table (free entries at random, released after the last element),
    the register pool, the event processor and the tag unit at random: each
    command takes a free job entry with its warp, bases and kind; its elements
    are issued in order with the slides' addresses, states and targets, only
    when a register is free, the processor idle and the block hit or allocatable;
    its last element ends it once; invalidations are taken only when quiet."""
    cfg = replace(TINY, job_entries=jobs)
    dut = IssueEngine(cfg)
    rng = random.Random(jobs)
    cmds = _issue_commands(cfg, rng, 60)
    entries = [(k, e) for k, cmd in enumerate(cmds) for e in command_entries(cmd)]
    last_pos = {k: i for i, (k, _) in enumerate(entries)}
    seen = {"inval": 0, "alloc": 0, "blocked": 0, "cmds": 0}

    async def bench(ctx):
        table = {}                        # job entry -> command index (taken, not yet released)
        expect = {}                       # command index -> elements left
        last_done = set()
        pos = 0
        cur_cmd = None                    # the command whose entries are being taken
        for cycle in range(6000):
            if pos == len(entries) and not table:
                break
            free = [k for k in range(jobs) if k not in table]
            have_job = bool(free) and rng.random() < 0.8
            quiet = not table and rng.random() < 0.7
            ctx.set(dut.have_job, have_job)
            ctx.set(dut.free_job, free[0] if free else 0)
            ctx.set(dut.quiet, quiet)
            ctx.set(dut.inval_pending, rng.random() < 0.2)
            cj = ctx.get(dut.cur_job)
            if cj in table:
                c = cmds[table[cj]]
                ctx.set(dut.job_cbase, c.cbase)
                ctx.set(dut.job_vbase, c.vbase)
                ctx.set(dut.job_v8, c.vsize == 8)
            hr, bl, hit, ca = (rng.random() < p for p in (0.8, 0.3, 0.5, 0.6))
            for port, v in (("have_reg", hr), ("blocked", bl), ("iss_hit", hit), ("can_alloc", ca)):
                ctx.set(getattr(dut, port), v)
            seen["blocked"] += bl
            valid = pos < len(entries) and rng.random() < 0.7
            if pos < len(entries):
                ctx.set(dut.cmd.payload, entries[pos][1])
            ctx.set(dut.cmd.valid, valid)
            fire = valid and ctx.get(dut.cmd.ready)
            inval_ok = ctx.get(dut.idle) and not ctx.get(dut.inval_pending)
            k, e = entries[pos] if pos < len(entries) else (None, None)
            if fire and cmds[k].op == "invalidate":
                assert inval_ok and quiet, cycle
                assert ctx.get(dut.inval) and ctx.get(dut.inval_warp) == cmds[k].warp, cycle
                seen["inval"] += 1
            else:
                assert not ctx.get(dut.inval), cycle
            take = ctx.get(dut.take)
            if fire and cmds[k].op != "invalidate" and k != cur_cmd:
                assert take and have_job, cycle
                p = ctx.get(dut.take_p)
                c = cmds[k]
                assert (p.warp, p.cbase, p.vbase, p.v8, p.scatter) == (c.warp, c.cbase, c.vbase, c.vsize == 8,
                                                                        c.op == "scatter"), cycle
            else:
                assert not take, cycle
            issue = ctx.get(dut.issue)
            if issue:
                assert hr and not bl and (hit or ca), cycle
                assert ctx.get(dut.iss_alloc) == (not hit), cycle
                seen["alloc"] += not hit
                kk = table[cj]
                want = expect[kk].pop(0)
                got = (ctx.get(dut.el_addr), ctx.get(dut.el_st).name, ctx.get(dut.el_target))
                assert got == (want[0] % 2 ** cfg.addr_width, want[1], want[2]), cycle
                # the last element of a command whose entries are all in: it ends now
                if not expect[kk] and pos > last_pos[kk]:
                    assert ctx.get(dut.issue_last), cycle
            if ctx.get(dut.issue_last):
                kk = table[cj]
                assert not expect[kk] and kk not in last_done, cycle
                last_done.add(kk)
            # release finished commands at random (not the one whose elements are being issued)
            issuing = ctx.get(dut.issuing)
            assert issuing in (0, 1 << cj), cycle
            for j, kk in list(table.items()):
                if kk in last_done and not expect[kk] and not issuing >> j & 1 and rng.random() < 0.5:
                    del table[j]
                    seen["cmds"] += 1
            await ctx.tick()
            if fire:
                if cmds[k].op != "invalidate" and k != cur_cmd:
                    table[free[0]] = k
                    expect[k] = _elements(cmds[k])
                    cur_cmd = k
                pos += 1
        assert pos == len(entries) and not table, (pos, table)

    simulate(dut, bench)
    assert seen["inval"] and seen["alloc"] and seen["cmds"] > 30


# ---------------------------------------------------------------------- Walker
@pytest.mark.parametrize("name,cfg", [("tiny", TINY), ("default", DEFAULT)])
def test_walker_walks_each_list_in_order(name, cfg):
    """Lists of registers (linked by ``next``) offered by a random tag unit, a
    retry queue and an event that finishes at random: every list is walked to its
    end, one register per finished event, in list order; between walks the retry
    queue's head is processed when an entry can be taken; a walk starts only
    when none runs, and not while a retry can be processed."""
    dut = Walker(cfg)
    w = widths(cfg)
    R, NIL = cfg.work_registers, w.NIL
    rng = random.Random(name)
    seen = {"walks": 0, "retries": 0, "regs": 0, "waits": 0}

    async def bench(ctx):
        walk = None                       # [entry, list, position] of the walk running
        for cycle in range(800):
            pending = rng.random() < 0.5
            sel = rng.randrange(cfg.tag_entries)
            lst = rng.sample(range(R), rng.randint(1, min(R, 6)))
            rv, hv = rng.random() < 0.4, rng.random() < 0.7
            rh = rng.randrange(R)
            adv = rng.random() < 0.6
            for port, v in (("walk_pending", pending), ("walk_sel", sel), ("walk_head", lst[0]), ("retry_valid", rv),
                            ("retry_head", rh), ("have_victim", hv), ("advance", adv)):
                ctx.set(getattr(dut, port), v)
            proc_walk = walk is not None
            proc_retry = not proc_walk and rv and hv
            assert (ctx.get(dut.proc_walk), ctx.get(dut.proc_retry)) == (proc_walk, proc_retry), cycle
            assert ctx.get(dut.walking) == proc_walk, cycle
            if proc_walk:
                assert ctx.get(dut.reg) == walk[1][walk[2]] and ctx.get(dut.cur_walk) == walk[0], cycle
                last = walk[2] == len(walk[1]) - 1
                ctx.set(dut.next, NIL if last else walk[1][walk[2] + 1])
            else:
                assert ctx.get(dut.reg) == rh, cycle
                ctx.set(dut.next, rng.randrange(NIL + 1))
            start = not proc_walk and pending and not (rv and hv)
            seen["waits"] += not proc_walk and pending and rv and hv
            assert ctx.get(dut.walk_start) == start, cycle
            assert ctx.get(dut.walk_done) == (proc_walk and adv and last), cycle
            assert ctx.get(dut.retry_pop) == (adv and not proc_walk), cycle   # (the top advances only an event)
            await ctx.tick()
            if proc_walk and adv:
                walk[2] += 1
                seen["regs"] += 1
                if walk[2] == len(walk[1]):
                    walk = None
            elif proc_retry and adv:
                seen["retries"] += 1
            if start:
                walk = [sel, lst, 0]
                seen["walks"] += 1

    simulate(dut, bench)
    assert seen["walks"] > 20 and seen["retries"] > 20 and seen["waits"]


# ---------------------------------------------------------------------- EventRule
def _event_expect(cfg, e: dict) -> dict:
    """The slides' rule for one event (see EventRule), on plain integers."""
    BB, AW, NIL, M64 = cfg.block_bytes, cfg.addr_width, cfg.work_registers, 2 ** 64 - 1
    walk, retry_, st = e["proc_walk"], e["proc_retry"], e["st"]
    word = (e["walk_line"] >> 8 * (e["addr"] % BB)) & M64
    vaddr = (e["vbase"] + ((word & 0xFFFFFFFF) << (3 if e["v8"] else 2))) % 2 ** AW
    need = vaddr if walk and st == "C" else e["addr"]
    vword = (e["need_line"] >> 8 * (need % BB)) & M64
    out = dict(deliver=None, set_bit=False, link=False, alloc=False, retry=False)
    if walk:
        if st == "V":
            out["deliver"] = word
        elif st == "S":
            out["set_bit"] = True
        elif e["hit"] and e["ready"]:
            out["deliver"] = vword
        elif e["hit"]:
            out["link"] = True
        elif e["have_victim"]:
            out["alloc"] = True
        else:
            out["retry"] = True
    elif retry_:
        out["link" if e["hit"] else "alloc"] = True
    stall = (out["deliver"] is not None and not e["spad_ready"]) or (out["alloc"] and not e["port_free"])
    out["advance"] = (walk or retry_) and not stall
    out["need_addr"] = need
    out["data_err"] = (walk and e["walk_err"]) or (out["deliver"] is not None and st == "C" and e["need_err"])
    new_st = "V" if walk and st == "C" else st
    if out["retry"]:
        out["w"] = ("V", vaddr, NIL)
    elif out["link"]:
        out["w"] = (new_st, need, e["need_head"])
    elif out["alloc"]:
        out["w"] = (new_st, need, NIL)
    else:
        out["w"] = None
    if out["deliver"] is not None and not e["v8"]:
        out["deliver"] &= 0xFFFFFFFF
    return out


@pytest.mark.parametrize("name,cfg", [("tiny", TINY), ("gtx480", MFFConfig.preset("gtx480"))])
def test_event_rule_follows_the_slides(name, cfg):
    """Random events (walked and retried C, V and S registers; blocks ready,
    outstanding or absent; entries free or not; the scratchpad and the read queue
    refusing; errors; 4- and 8-byte values, words at every offset of the line)
    against the slides' rule written in Python: what the event does, the value and
    its scratchpad write, whether it waits, the address looked up, the error and
    the register's new contents."""
    dut = EventRule(cfg)
    rng = random.Random(name)
    BB, AW = cfg.block_bytes, cfg.addr_width
    seen = {k: 0 for k in ("deliver", "set_bit", "link", "alloc", "retry", "stall")}

    async def bench(ctx):
        for n in range(1000):
            e = dict(proc_walk=rng.random() < 0.6, st=rng.choice("CVS"), addr=rng.getrandbits(AW),
                     vbase=rng.getrandbits(AW), v8=rng.random() < 0.4, warp=rng.randrange(2 ** cfg.warp_bits),
                     target=rng.randrange(2 ** cfg.target_width), job=rng.randrange(2 ** widths(cfg).jb),
                     walk_line=rng.getrandbits(8 * BB), need_line=rng.getrandbits(8 * BB),
                     hit=rng.random() < 0.6, ready=rng.random() < 0.5, have_victim=rng.random() < 0.6,
                     port_free=rng.random() < 0.8, spad_ready=rng.random() < 0.8, walk_err=rng.random() < 0.1,
                     need_err=rng.random() < 0.1, need_head=rng.randrange(cfg.work_registers + 1))
            e["proc_retry"] = not e["proc_walk"] and rng.random() < 0.8
            ctx.set(dut.proc_walk, e["proc_walk"])
            ctx.set(dut.proc_retry, e["proc_retry"])
            ctx.set(dut.reg, {"st": {"C": 0, "V": 1, "S": 2}[e["st"]], "job": e["job"], "target": e["target"],
                              "addr": e["addr"], "next": 0})
            for port, key in (("job_vbase", "vbase"), ("job_v8", "v8"), ("job_warp", "warp"),
                              ("walk_line", "walk_line"), ("walk_err", "walk_err"), ("need_hit", "hit"),
                              ("need_ready", "ready"), ("need_err", "need_err"), ("need_line", "need_line"),
                              ("need_head", "need_head"), ("have_victim", "have_victim"), ("port_free", "port_free")):
                ctx.set(getattr(dut, port), e[key])
            ctx.set(dut.spad.ready, e["spad_ready"])
            await ctx.delay(1e-9)
            x = _event_expect(cfg, e)
            assert ctx.get(dut.need_addr) == x["need_addr"], (n, e)
            got = {k: bool(ctx.get(getattr(dut, k))) for k in ("set_bit", "link", "alloc", "retry", "advance",
                                                                "data_err")}
            assert got == {k: bool(x[k]) for k in got}, (n, e)
            assert ctx.get(dut.spad.valid) == (x["deliver"] is not None), (n, e)
            if x["deliver"] is not None:
                p = ctx.get(dut.spad.payload)
                assert (p.warp, p.addr, p.data, p.e8) == (e["warp"], e["target"], x["deliver"], e["v8"]), (n, e)
            assert ctx.get(dut.rewrite) == (x["w"] is not None), (n, e)
            if x["w"] is not None:
                wd = ctx.get(dut.w_data)
                assert (wd.st.name, wd.addr, wd.next, wd.job, wd.target) == x["w"] + (e["job"], e["target"]), (n, e)
            for k in ("set_bit", "link", "alloc", "retry"):
                seen[k] += x[k]
            seen["deliver"] += x["deliver"] is not None
            seen["stall"] += (e["proc_walk"] or e["proc_retry"]) and not x["advance"]

    simulate(dut, bench)
    assert all(v > 10 for v in seen.values()), seen
