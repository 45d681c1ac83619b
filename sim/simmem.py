"""The testbench memory inside the simulated design: RTL in the loop at simulator
speed (issue "Speed"; docs/architecture.md, "RTL in the loop at simulator speed").

The Python memory model (:mod:`sim.memory`) serves a unit's memory port from
cocotb, one clock cycle at a time, about 10,000 cycles a second. Here the memory
is part of the simulated design instead (``sim/rtl/graphunits_simmem.v``): a
block array with the same timing features (random latency, requests in flight,
out-of-order or in-order responses, request back-pressure and response gaps as
probabilities, error ranges) and protocol checks, so that cocotb acts only at
operation granularity: load what the algorithm wrote, hand the unit a command,
wait for its status, read back what the unit wrote.

- :class:`SimMemoryConfig`: the array's size and the number of response slots;
- :func:`with_sim_memory`: an Amaranth wrapper, the unit with its ``mem`` port
  connected to the memory (every other port of the unit passes through, the
  memory's configuration and counters become ports ``sm_*``);
- :class:`SimMemory`: the testbench side, under cocotb: configuration from a
  :class:`sim.memory.MemoryTiming`, loading and reading back an
  :class:`golden.memory.AddressSpace` through files the memory reads
  (``$readmemh``) and writes (``$fwrite``) at a clock edge;
- :func:`read_logs`: the output logs of the stream recorders the same way.

The memory's random draws differ from the Python model's, so the same timing
gives different (equally valid) cycle counts; the randomized RTL tests keep the
Python model, whose patterns can also be cyclic lists.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from golden.config import Config, ConfigError, check_int

__all__ = ["SimMemoryConfig", "DesignEnv", "with_sim_memory", "memory_suffix", "SimMemory", "read_logs", "settle",
           "start_backend",
           "transfer_file", "parse_dump", "log_records", "FastArray", "fast_array", "SIMMEM_VERILOG",
           "STREAMLOG_VERILOG", "ERROR_RANGES"]

#: The memory's Verilog (appended to a wrapped build's Verilog file).
SIMMEM_VERILOG = Path(__file__).resolve().parent / "rtl" / "graphunits_simmem.v"
#: A stream recorder (a unit's output stream logged inside the design, :class:`DesignEnv`).
STREAMLOG_VERILOG = Path(__file__).resolve().parent / "rtl" / "graphunits_streamlog.v"
#: Error ranges the memory compares every request with.
ERROR_RANGES = 4


@dataclass(frozen=True)
class SimMemoryConfig(Config):
    """Size of the in-design memory.

    Parameters
    ----------
    depth_log2 : int
        log2 of the blocks in the array (the array covers addresses
        ``[0, 2**depth_log2 * block_bytes)``; requests beyond are answered with an error).
    slots_log2 : int
        log2 of the response slots: the most requests in flight it can hold
        (``MemoryTiming.max_outstanding`` must not exceed it).
    wlog_log2 : int
        log2 of the write log's entries (the blocks written in one operation that the
        testbench reads back one by one; beyond, it reads back every block in use).
    """

    depth_log2: int = 16
    slots_log2: int = 6
    wlog_log2: int = 18

    PRESETS = {"default": {}}

    def validate(self) -> None:
        n = type(self).__name__
        check_int(n, "depth_log2", self.depth_log2, 4, 26)
        check_int(n, "slots_log2", self.slots_log2, 1, 8)
        check_int(n, "wlog_log2", self.wlog_log2, 4, 22)

    @classmethod
    def for_port(cls, nbytes: int, port, **kw) -> "SimMemoryConfig":
        """The smallest array (at least 65536 blocks: fewer builds) that holds ``nbytes`` from address 0
        for a port (:class:`golden.fetch.MemPortConfig`), with a response slot per tag
        (at most 256)."""
        blocks = max(-(-int(nbytes) // port.block_bytes), 1 << 16)
        kw.setdefault("slots_log2", min(8, max(1, port.tag_width)))
        return cls(depth_log2=(blocks - 1).bit_length(), **kw)


def _mem_ports(unit) -> dict:
    """The unit's graphunits memory ports: ``{name: MemPortConfig}`` (``mem``, or
    ``mem0``, ``mem1``... for a unit with one per partition)."""
    from hw.mem.port import MemPortSignature
    out = {}
    for name, member in unit.signature.members.items():
        if not member.is_port and isinstance(member.signature, MemPortSignature) and \
                (name == "mem" or (name.startswith("mem") and name[3:].isdigit())):
            out[name] = member.signature.config
    if not out:
        raise ValueError(f"{type(unit).__name__} has no graphunits memory port named 'mem' (or mem0, mem1...)")
    return out


def memory_suffix(port_name: str) -> str:
    """The suffix of a memory port's instance and ports: ``mem`` -> ``""`` (instance
    ``memory``, ports ``sm_*``); ``mem1`` -> ``"1"`` (``memory1``, ``sm1_*``)."""
    return port_name[3:]


class DesignEnv:
    """What else of a unit's testbench runs inside the design (e.g. the MFF's command
    sequencer and output recorders, :class:`sim.mff.MFFDesignEnv`).

    ``taken``: the unit's ports it drives or takes (they are not ports of the wrapper);
    ``ports()``: the wrapper's extra ports (name -> ``In``/``Out``); ``verilog``: the
    files of its Verilog modules; ``key``: what a cached build depends on;
    ``elaborate(m, top, unit)``: adds its instances to the wrapper's module."""

    taken: tuple = ()
    verilog: tuple = ()

    def ports(self) -> dict:
        return {}

    @property
    def key(self) -> str:
        import hashlib
        h = hashlib.sha256(repr(self.params()).encode())
        for f in self.verilog:
            h.update(Path(f).read_bytes())
        return h.hexdigest()

    def params(self) -> tuple:
        return ()

    def elaborate(self, m, top, unit) -> None:
        raise NotImplementedError


def with_sim_memory(unit, config: SimMemoryConfig, env: DesignEnv | None = None):
    """``unit`` (an Amaranth component with a ``mem`` port) with its memory port served
    by ``graphunits_simmem`` (instance ``memory``): a component whose ports are the
    unit's others and the memory's ``sm_*`` configuration and counters. A unit with
    ports ``mem0``, ``mem1``... gets a memory for each (``memory0``, ports ``sm0_*``...),
    each with its own array, which the testbench loads alike. With ``env``
    (a :class:`DesignEnv`), the ports it takes are served inside the design too.
    Amaranth is imported here only, so that the cocotb side of this module needs none."""
    from amaranth import ClockSignal, Instance, Module, ResetSignal
    from amaranth.lib import wiring
    from amaranth.lib.wiring import In, Out

    ports = _mem_ports(unit)
    s = config.slots_log2
    own, outs = {}, {}
    for pname, port in ports.items():
        aw = port.addr_width
        x = f"sm{memory_suffix(pname)}_"
        own.update({f"{x}cfg_base": In(aw), f"{x}cfg_lat_lo": In(16), f"{x}cfg_lat_span": In(16),
                    f"{x}cfg_max_out": In(s + 1), f"{x}cfg_in_order": In(1), f"{x}cfg_ready_p": In(17),
                    f"{x}cfg_gap_p": In(17), f"{x}cfg_err_lo": In(ERROR_RANGES * aw),
                    f"{x}cfg_err_hi": In(ERROR_RANGES * aw), f"{x}cfg_seed": In(32), f"{x}reads": Out(32),
                    f"{x}writes": Out(32), f"{x}errors": Out(32), f"{x}max_out": Out(s + 1),
                    f"{x}outstanding": Out(s + 1), f"{x}cycle": Out(32), f"{x}proto_err": Out(1),
                    f"{x}proto_cycle": Out(32), f"{x}wlog_n": Out(32)})
        outs[pname] = {"cnt_reads": "reads", "cnt_writes": "writes", "cnt_errors": "errors",
                       "cnt_max_out": "max_out", "outstanding": "outstanding", "cycle": "cycle",
                       "proto_err": "proto_err", "proto_cycle": "proto_cycle", "wlog_n": "wlog_n"}
    taken = set(env.taken) if env is not None else set()
    members = {n: m for n, m in unit.signature.members.items() if n not in ports and n not in taken}
    if env is not None:
        own.update(env.ports())
    clash = set(members) & set(own)
    if clash:
        raise ValueError(f"{type(unit).__name__} has ports named like the memory's: {sorted(clash)}")

    class UnitWithSimMemory(wiring.Component):
        def elaborate(self, platform):
            m = Module()
            m.submodules.unit = unit
            for name, member in members.items():
                ours, theirs = getattr(self, name), getattr(unit, name)
                if member.is_port:
                    m.d.comb += theirs.eq(ours) if member.flow == In else ours.eq(theirs)
                else:
                    wiring.connect(m, wiring.flipped(ours), theirs)
            for pname, port in ports.items():
                mem = getattr(unit, pname)
                x = f"sm{memory_suffix(pname)}_"
                kw = {f"i_cfg_{k[len(x) + 4:]}": getattr(self, k) for k in own if k.startswith(x + "cfg_")}
                kw.update({f"o_{k}": getattr(self, x + v) for k, v in outs[pname].items()})
                m.submodules[f"memory{memory_suffix(pname)}"] = Instance(
                    "graphunits_simmem",
                    p_ADDR_W=port.addr_width, p_BLOCK_BYTES=port.block_bytes,
                    p_BLOCK_LOG2=port.block_bytes.bit_length() - 1, p_TAG_W=port.tag_width,
                    p_DEPTH_LOG2=config.depth_log2, p_SLOTS_LOG2=s, p_WLOG_LOG2=config.wlog_log2,
                    p_LOAD_FILE=transfer_file(f"memory{memory_suffix(pname)}", "load"),
                    p_DUMP_FILE=transfer_file(f"memory{memory_suffix(pname)}", "dump"),
                    i_clk=ClockSignal(), i_rst=ResetSignal(),
                    i_req_valid=mem.req.valid, o_req_ready=mem.req.ready, i_req_payload=mem.req.payload.as_value(),
                    o_resp_valid=mem.resp.valid, i_resp_ready=mem.resp.ready,
                    o_resp_payload=mem.resp.payload.as_value(), **kw)
            if env is not None:
                env.elaborate(m, self, unit)
            return m

    return UnitWithSimMemory({**members, **own})


class SimMemory:
    """The testbench side of the in-design memory (inside a cocotb test).

    ``dut`` is a :func:`with_sim_memory` build; ``space`` the address space the
    algorithm shares with the unit; ``port`` its :class:`golden.fetch.MemPortConfig`;
    ``config`` the :class:`SimMemoryConfig` it was built with; ``timing`` a
    :class:`sim.memory.MemoryTiming`; ``suffix`` which memory (:func:`memory_suffix`
    of its port's name: ``""`` for ``mem``, ``"1"`` for ``mem1``)."""

    def __init__(self, dut, space, port, config: SimMemoryConfig, timing, suffix: str = ""):
        self.dut, self.space, self.port, self.config, self.timing = dut, space, port, config, timing
        self.bb = port.block_bytes
        self.words = 1 << config.depth_log2
        self._x = f"sm{suffix}_"
        self._inst = getattr(dut, f"memory{suffix}")
        self._load_file = transfer_file(f"memory{suffix}", "load")
        self._dump_file = transfer_file(f"memory{suffix}", "dump")
        self._staged: dict[int, str] = {}              # word -> hex: the blocks of a load not yet read
        self._staged_at = None
        self.transfer_edges = 0                         # clock edges spent on dumps (sim_cycles counts them)
        self._shadow: dict[int, np.ndarray] = {}        # page -> the bytes the memory holds
        self.loaded = 0                                 # blocks written into the memory
        self.read_back = 0                              # blocks read from it

    def _pin(self, d, name: str):
        return getattr(d, self._x + name)

    # ------------------------------------------------------------------ configuration
    def configure(self) -> None:
        """Drive the configuration ports from ``timing`` (before reset ends)."""
        t, d = self.timing, self.dut
        lo, hi = t.latency_range
        if hi - lo + 1 > 0xFFFF or lo > 0xFFFF:
            raise ConfigError(f"the in-design memory draws latencies below 65536 cycles, not {t.latency!r}")
        slots = 1 << self.config.slots_log2
        if t.max_outstanding > slots and slots < 1 << self.port.tag_width:
            # (with a slot per tag the unit itself never has more in flight)
            raise ConfigError(f"max_outstanding {t.max_outstanding} exceeds the in-design memory's {slots} response "
                              f"slots (SimMemoryConfig.slots_log2)")
        if len(t.error_ranges) > ERROR_RANGES:
            raise ConfigError(f"the in-design memory compares {ERROR_RANGES} error ranges, not "
                              f"{len(t.error_ranges)}")
        aw = self.port.addr_width
        lo_bits = hi_bits = 0
        for k, (a, b) in enumerate(t.error_ranges):
            lo_bits |= (int(a) & ((1 << aw) - 1)) << (k * aw)
            hi_bits |= (min(int(b), (1 << aw) - 1) & ((1 << aw) - 1)) << (k * aw)
        self._pin(d, "cfg_base").value = 0
        self._pin(d, "cfg_lat_lo").value = lo
        self._pin(d, "cfg_lat_span").value = hi - lo + 1
        self._pin(d, "cfg_max_out").value = min(t.max_outstanding, slots)
        self._pin(d, "cfg_in_order").value = int(bool(t.in_order))
        self._pin(d, "cfg_ready_p").value = _probability(t.req_ready, "req_ready")
        self._pin(d, "cfg_gap_p").value = _probability(t.resp_gap, "resp_gap")
        self._pin(d, "cfg_err_lo").value = lo_bits
        self._pin(d, "cfg_err_hi").value = hi_bits
        self._pin(d, "cfg_seed").value = t.seed & 0xFFFFFFFF

    # ------------------------------------------------------------------ contents
    def load(self) -> int:
        """Hand the memory every block of ``space`` that differs from what it holds
        (what the algorithm wrote since the last call). The blocks go into a file that
        the memory reads at the next clock edge, before any request of that edge (the
        unit's command is taken at that edge at the earliest); a second call before
        that edge adds its blocks to the same file. Returns the blocks handed over."""
        from golden.memory import PAGE_BITS
        bb, top = self.bb, self.words * self.bb
        words, rows = [], []
        for page, data in sorted(self.space._pages.items()):
            base = page << PAGE_BITS
            old = self._shadow.get(page)
            if old is None:
                changed = np.flatnonzero(data.reshape(-1, bb).any(axis=1))
            elif np.array_equal(old, data):
                continue
            else:
                changed = np.flatnonzero((old != data).reshape(-1, bb).any(axis=1))
            if changed.size and base + (int(changed[-1]) + 1) * bb > top:
                raise ValueError(f"the address space reaches {base + (int(changed[-1]) + 1) * bb:#x}, beyond the "
                                 f"in-design memory's {top:#x} bytes (SimMemoryConfig.depth_log2 "
                                 f"{self.config.depth_log2}); use a larger one or the Python memory model")
            if changed.size:
                words.append(base // bb + changed)
                rows.append(data.reshape(-1, bb)[changed])
            self._shadow[page] = data.copy()
        if not words:
            return 0
        w = np.concatenate(words)
        hexes = np.concatenate(rows)[:, ::-1].tobytes().hex()       # each block most significant byte first
        k = 2 * bb
        if not self._load_pending():
            self._staged = {}
        self._staged.update(zip(w.tolist(), (hexes[i * k:(i + 1) * k] for i in range(w.size))))
        Path(self._load_file).write_text("".join(f"@{a:x}\n{h}\n" for a, h in sorted(self._staged.items())))
        self._inst.load_go.value = 1
        self._staged_at = _sim_time()
        self.loaded += int(w.size)
        return int(w.size)

    def _load_pending(self) -> bool:
        """Whether the memory has not read the last load's file yet (no clock edge
        since; a flag set in this time step reads back as before until it ends)."""
        if not self._staged:
            return False
        return self._staged_at == _sim_time() or bool(int(self._inst.load_go.value))

    async def unload(self) -> int:
        """Read back into ``space`` every block the design wrote since the last call
        (the write log; all the blocks in use when it overflowed): the memory writes
        them into a file at the next clock edge and clears its log. Returns the
        blocks read. (:func:`read_logs` does the same with ``memories=``, in the
        same clock edge as the recorders' dumps.)"""
        self.request_unload()
        await settle(self.dut.clk, [self])
        return self.finish_unload()

    def request_unload(self) -> None:
        """The first half of :meth:`unload`: ask for the dump at the next clock edge."""
        n = int(self._pin(self.dut, "wlog_n").value)
        if n > (1 << self.config.wlog_log2):
            top = max((r.base + r.nbytes for r in self.space.regions.values()), default=0)
            self._inst.dump_top.value = min(-(-top // self.bb), self.words)
        self._inst.dump_go.value = 1

    def finish_unload(self) -> int:
        """The second half of :meth:`unload`, after the edge: read the dump back."""
        from golden.memory import PAGE_BITS, PAGE_BYTES
        words, raw = parse_dump(Path(self._dump_file).read_text(), self.bb, self._dump_file)
        bb, per_page = self.bb, PAGE_BYTES // self.bb
        for w, r in zip(words.tolist(), raw):
            addr = w * bb
            self.space.write(addr, r)
            page = addr >> PAGE_BITS
            sh = self._shadow.get(page)
            if sh is None:
                sh = self._shadow[page] = np.zeros(PAGE_BYTES, np.uint8)
            off = (w % per_page) * bb
            sh[off:off + bb] = r
        self.read_back += int(words.size)
        return int(words.size)

    # ------------------------------------------------------------------ checks and counters
    def check(self, what: str = "") -> None:
        """Raise :class:`sim.memory.ProtocolError` if the design broke the port's rules."""
        from .memory import ProtocolError
        if int(self._pin(self.dut, "proto_err").value):
            raise ProtocolError(f"memory port: a request withdrawn or changed before it was accepted, or an address "
                                f"not aligned to the {self.bb}-byte block, at cycle "
                                f"{int(self._pin(self.dut, 'proto_cycle').value)}{': ' + what if what else ''}")

    @property
    def cycle(self) -> int:
        return int(self._pin(self.dut, "cycle").value)

    def stats(self) -> dict:
        d = self.dut
        reads, writes = int(self._pin(d, "reads").value), int(self._pin(d, "writes").value)
        return {"requests": reads + writes, "reads": reads, "writes": writes,
                "errors": int(self._pin(d, "errors").value), "max_outstanding": int(self._pin(d, "max_out").value),
                "loaded_blocks": self.loaded, "read_back_blocks": self.read_back, "transfer_edges": self.transfer_edges}


class FastArray:
    """Element reads and writes of a public Verilog array (the in-design memory's
    blocks, a recorder's log, a player's entries) through the simulator's own
    handles.

    cocotb builds a Python object for each index of an array the first time it is
    used and checks every value it sets; for the hundreds of thousands of elements
    an algorithm's loads and read-backs touch, that was most of the testbench's
    time (docs/benchmarks.md, "RTL in the loop"). Here each element's simulator
    handle is kept and its value set or read as a bit string, at once (a deposit:
    the array is only used between operations, while the unit waits for a
    command)."""

    def __init__(self, arr):
        self._arr = arr
        self._h = arr._handle
        self._elems: dict[int, object] = {}
        self.width = len(arr[0])

    def _elem(self, i: int):
        h = self._elems.get(i)
        if h is None:
            h = self._h.get_handle_by_index(i)
            if not h:
                raise IndexError(f"{self._arr._path} has no element {i}")
            self._elems[i] = h
        return h

    def write(self, i: int, value: int) -> None:
        """Set element ``i`` to the unsigned integer ``value``."""
        if not 0 <= value < 1 << self.width:
            raise ValueError(f"{value:#x} does not fit the {self.width} bits of {self._arr._path}[{i}]")
        self._elem(i).set_signal_val_binstr(0, format(value, f"0{self.width}b"))

    def read(self, i: int) -> int:
        """Element ``i`` as an unsigned integer."""
        s = self._elem(i).get_signal_val_binstr()
        try:
            return int(s, 2)
        except ValueError:
            raise RuntimeError(f"{self._arr._path}[{i}] holds unknown bits ({s})") from None


def fast_array(arr) -> FastArray:
    """The :class:`FastArray` of a cocotb array handle (one per handle)."""
    fa = getattr(arr, "_graphunits_fast", None)
    if fa is None:
        fa = FastArray(arr)
        arr._graphunits_fast = fa
    return fa


def transfer_file(instance: str, kind: str) -> str:
    """The file an in-design memory or recorder ``instance`` exchanges with the
    testbench (``kind``: load, dump or log), in the simulator's working folder (each
    run has its own)."""
    return f"graphunits_{instance}.{kind}"


def _sim_time() -> int:
    from cocotb.utils import get_sim_time
    return get_sim_time("step")


async def start_backend(loop, memories, *, command_stream: bool = True) -> None:
    """Start an RTL backend's cycle loop (a :class:`sim.cocotb_loop.CocotbLoop`): its
    in-design memories (``memories``, empty with the Python memory model)
    configured and, with them, the DUT's command stream idle and its status
    stream ready (``command_stream``: the DUT has ``cmd``/``status`` streams that
    cocotb drives between operations)."""
    for mem in memories:
        mem.configure()
    if memories and command_stream:
        loop.dut.cmd__valid.value = 0
        loop.dut.status__ready.value = 1
    await loop.start()


async def settle(clk, memories=()) -> None:
    """Let the flags the testbench just set act: the next rising edge, and the
    falling edge after it (by then both simulators have run that edge's blocks;
    under Icarus a rising-edge trigger wakes the testbench before them). The edge
    is counted in each of ``memories``' ``transfer_edges``."""
    from cocotb.triggers import FallingEdge, RisingEdge
    await RisingEdge(clk)
    await FallingEdge(clk)
    for mem in memories:
        mem.transfer_edges += 1


def parse_dump(text: str, bb: int, name: str) -> tuple[np.ndarray, np.ndarray]:
    """A memory dump's ``word data`` hex lines: the distinct words (sorted) and
    their blocks as bytes (``(k, bb)`` uint8, least significant byte first)."""
    f = text.split()
    if len(f) % 2 or any(len(h) != 2 * bb for h in f[1::2]):
        raise RuntimeError(f"{name}: not a dump of {bb}-byte blocks")
    try:
        words = np.array([int(x, 16) for x in f[0::2]], np.int64)
        raw = np.frombuffer(bytes.fromhex("".join(f[1::2])), np.uint8).reshape(-1, bb)[:, ::-1]
    except ValueError:
        raise RuntimeError(f"{name}: unknown bits in the memory dump") from None
    words, first = np.unique(words, return_index=True)
    return words, raw[first]


def log_records(text: str, name: str) -> list[tuple[int, int]]:
    """A recorder's dump (hex lines of ``{payload, cycle}``) as ``(cycle, payload)``."""
    try:
        vals = [int(x, 16) for x in text.split()]
    except ValueError:
        raise RuntimeError(f"{name}: unknown bits in a stream recorder's log") from None
    return [(v & 0xFFFFFFFF, v >> 32) for v in vals]


async def read_logs(clk, logs: list, memories=()) -> list[list[tuple[int, int]]]:
    """The beats each ``graphunits_streamlog`` instance of ``logs`` recorded since it
    was last read, as ``(cycle, payload)`` lists; each recorder writes its log into
    its file at the next clock edge and starts again (the testbench side). The
    :class:`SimMemory` instances ``memories`` are unloaded at the same edge."""
    for log in logs:
        if int(log.full.value):
            raise RuntimeError("a stream recorder inside the design overflowed: beats were lost (use a deeper log)")
        log.dump.value = 1
    for mem in memories:
        mem.request_unload()
    await settle(clk, memories)
    for mem in memories:
        mem.finish_unload()
    out = []
    for log in logs:
        f = transfer_file(log._name, "log")
        out.append(log_records(Path(f).read_text(), f))
    return out


def _probability(spec, name: str) -> int:
    """A pattern as the memory's threshold out of 65536 (65536: always)."""
    if spec is None:
        return 1 << 16
    if isinstance(spec, float) and 0.0 < spec <= 1.0:
        return max(1, min(1 << 16, round(spec * (1 << 16))))
    raise ConfigError(f"the in-design memory takes {name} as None or a probability in (0, 1], not {spec!r} "
                      "(cyclic patterns: use the Python memory model)")


# ---------------------------------------------------------------------- the memory alone (tests)
def probe_build(port, config: SimMemoryConfig, root: Path | None = None):
    """A cached build of the memory alone behind a pass-through initiator whose
    requests and responses are the top's ``req`` / ``resp`` streams, so that a
    testbench (``sim.tb.simmem``) drives the port directly: the memory's own tests."""
    import hashlib
    import json

    from .build import Build, cached_build_dir, simmem_digest
    name = "simmem_probe"
    key = hashlib.sha256(json.dumps([port.addr_width, port.block_bytes, port.tag_width, config.to_dict(),
                                     simmem_digest()]).encode()).hexdigest()[:16]

    def write(folder: Path) -> None:
        from amaranth.back import verilog
        text = verilog.convert(with_sim_memory(_PortProbe(port), config), name=name, emit_src=False)
        (folder / f"{name}.v").write_text(text + "\n" + SIMMEM_VERILOG.read_text())
        (folder / f"{name}.json").write_text(json.dumps({"port": port.to_dict(), "memory": config.to_dict()}))
    return Build(name, "simmem", config, cached_build_dir(root, name, key, write), True)


def _PortProbe(port):
    from amaranth import Module
    from amaranth.lib import stream, wiring
    from amaranth.lib.wiring import In, Out

    from hw.mem.port import MemPortSignature, MemRequest, MemResponse

    class PortProbe(wiring.Component):
        """The port's initiator side driven from the top (``req`` in, ``resp`` out)."""

        def __init__(self):
            super().__init__({"mem": Out(MemPortSignature(port)), "req": In(stream.Signature(MemRequest(port))),
                              "resp": Out(stream.Signature(MemResponse(port)))})

        def elaborate(self, platform):
            m = Module()
            m.d.comb += [self.mem.req.valid.eq(self.req.valid), self.mem.req.payload.eq(self.req.payload),
                         self.req.ready.eq(self.mem.req.ready),
                         self.resp.valid.eq(self.mem.resp.valid), self.resp.payload.eq(self.mem.resp.payload),
                         self.mem.resp.ready.eq(self.resp.ready)]
            return m

    return PortProbe()
