"""The SCU's command control (SCU paper §3.2, Fig. 7: the control that takes a
command descriptor, starts the streams and the Data Store, and reports a status;
docs/scu.md, "Pipeline" and "Errors")."""
from amaranth import *
from amaranth.lib import enum, stream
from amaranth.lib.wiring import In, Out

from golden.scu import OP_CODES, SCUConfig
from .command import CommandCheck
from .layouts import ConfiguredComponent, SCUCommand, SCUStatusLayout

__all__ = ["CommandControl", "OpDecode"]


class _State(enum.Enum, shape=3):
    IDLE = 0
    CLEAR = 1
    START = 2
    RUN = 3
    FINISH = 4
    STATUS = 5


class CommandControl(ConfiguredComponent):
    """One command at a time, IDLE → (CLEAR) → START → RUN → FINISH → STATUS.

    A command on ``cmd`` is taken in IDLE (``accept``) and held on ``op``; ``op`` leaves
    out what no stage reads (``clear``, acted on as the command is taken, and the two
    low bits of ``target``: grouping keys on blocks of 4-byte words), so that synthesis
    keeps no register for them. One that
    :class:`CommandCheck` rejects goes straight to STATUS with ``rejected``. Else the
    hashes are cleared first after reset (both, one ``filter_clear`` /
    ``group_clear`` pulse) and for a command with ``clear`` (the filter hash, pulsed
    as it is taken); CLEAR waits until neither hash is busy. ``start`` (one cycle)
    starts the operation; ``run`` lasts until ``done`` (the operation's work is
    finished), when ``finish`` asks the Data Store to write what it holds; when it
    has (``written``), ``status`` offers ``report`` until taken. ``counting``:
    the cycles counted in the status (all but IDLE and STATUS); ``busy``: not IDLE.
    """

    def __init__(self, config: SCUConfig):
        super().__init__(config, {"cmd": In(stream.Signature(SCUCommand(config))), "op": Out(SCUCommand(config)),
                          "accept": Out(1), "rejected": Out(1), "start": Out(1), "run": Out(1), "counting": Out(1),
                          "busy": Out(1), "filter_clear": Out(1), "group_clear": Out(1), "filter_busy": In(1),
                          "group_busy": In(1), "done": In(1), "finish": Out(1), "written": In(1),
                          "report": In(SCUStatusLayout(config)),
                          "status": Out(stream.Signature(SCUStatusLayout(config)))})

    def elaborate(self, platform):
        m = Module()
        m.submodules.check = check = CommandCheck(self._config)
        c = self.cmd.p
        r = Signal(SCUCommand(self._config))       # the command held
        m.d.comb += [check.cmd.eq(c), self.op.eq(r), self.op.clear.eq(0), self.op.target[:2].eq(0)]
        state = Signal(_State)
        need_clear = Signal(init=1)          # memories hold garbage after reset
        m.d.comb += [self.cmd.ready.eq(state == _State.IDLE), self.accept.eq((state == _State.IDLE) & self.cmd.valid),
                     self.start.eq(state == _State.START), self.run.eq(state == _State.RUN),
                     self.counting.eq((state != _State.IDLE) & (state != _State.STATUS)),
                     self.busy.eq(state != _State.IDLE),
                     self.status.valid.eq(state == _State.STATUS), self.status.p.eq(self.report)]
        with m.Switch(state):
            with m.Case(_State.IDLE):
                with m.If(self.cmd.valid):
                    m.d.sync += [r.eq(c), self.rejected.eq(check.bad)]
                    with m.If(check.bad):
                        m.d.sync += state.eq(_State.STATUS)
                    with m.Elif(c.clear | need_clear):
                        m.d.sync += state.eq(_State.CLEAR)
                    with m.Else():
                        m.d.sync += state.eq(_State.START)
            with m.Case(_State.CLEAR):
                # One pulse starts both clears; wait until they are done.
                with m.If(~self.filter_busy & ~self.group_busy & ~need_clear):
                    m.d.sync += state.eq(_State.START)
                with m.If(need_clear):
                    m.d.comb += [self.filter_clear.eq(1), self.group_clear.eq(need_clear)]
                    m.d.sync += need_clear.eq(0)
            with m.Case(_State.START):
                m.d.sync += state.eq(_State.RUN)
            with m.Case(_State.RUN):
                with m.If(self.done):
                    m.d.comb += self.finish.eq(1)
                    m.d.sync += state.eq(_State.FINISH)
            with m.Case(_State.FINISH):
                with m.If(self.written):
                    m.d.sync += state.eq(_State.STATUS)
            with m.Default():          # STATUS
                with m.If(self.status.ready):
                    m.d.sync += state.eq(_State.IDLE)
        # A clear requested by the command clears the filter hash.
        with m.If((state == _State.IDLE) & self.cmd.valid & ~check.bad & c.clear):
            m.d.comb += self.filter_clear.eq(1)
        return m


class OpDecode(ConfiguredComponent):
    """What the operation ``op`` (with ``best``, the best-cost filter) asks of the
    pipeline (SCU §3.1, §4): ``is_<name>`` for each operation of :data:`golden.scu.OP_CODES`,
    and ``bitout`` (its output is a bitmask: bitmask, filter), ``gather`` (access,
    expand), ``serial`` (lane by lane: gathers, replicate, filter, group), ``need_c``
    (reads the count stream: replicate, expand, the best-cost filter's costs).
    """

    def __init__(self, config: SCUConfig):
        ports = {"op": In(3), "best": In(1), "bitout": Out(1), "gather": Out(1), "serial": Out(1), "need_c": Out(1)}
        ports.update({f"is_{name}": Out(1) for name in OP_CODES})
        super().__init__(config, ports)

    def elaborate(self, platform):
        m = Module()
        for name, code in OP_CODES.items():
            m.d.comb += getattr(self, f"is_{name}").eq(self.op == code)
        m.d.comb += [self.bitout.eq(self.is_bitmask | self.is_filter),
                     self.gather.eq(self.is_access | self.is_expand),
                     self.serial.eq(self.gather | self.is_replicate | self.is_filter | self.is_group),
                     self.need_c.eq(self.is_replicate | self.is_expand | (self.is_filter & self.best))]
        return m
