"""Cycle-level testbench agents, independent of the simulator.

An agent drives some inputs of the design for the current cycle (:meth:`drive`)
and observes what happened at the clock edge that ends it (:meth:`clock`, given a
``get(path)`` that reads a signal's value just before the edge). A *cycle loop*
(:mod:`sim.cocotb_loop` for cocotb, :mod:`sim.amaranth_loop` for Amaranth's
simulator) calls them; the agents are written once and used by every unit.

Paths name ports as tuples, e.g. ``("mem", "req", "valid")``: the Verilog port
``mem__req__valid`` or the Amaranth attribute ``dut.mem.req.valid``.
"""
from __future__ import annotations

from collections import deque
from typing import Callable, Iterable

from .codec import Codec
from .memory import MemoryModel, Pattern, ProtocolError

__all__ = ["Agent", "StreamSource", "StreamSink", "MemoryAgent", "CycleCounter", "ProtocolError"]

Path = tuple


class Agent:
    """Base class: ``drive()`` returns ``{path: value}``; ``clock(get)`` observes the edge."""

    def drive(self) -> dict:
        return {}

    def clock(self, get: Callable[[Path], int]) -> None:
        pass

    def idle(self) -> bool:
        """Nothing left to do (used to end runs)."""
        return True


class CycleCounter(Agent):
    """Counts the clock edges into ``owner.cycle`` (the harness's clock). Put it last
    among a harness's agents, so that the others see the edge under the cycle's
    own number. ``before(get)``: called at the edge first (e.g. a monitor that
    samples outputs); ``after()``: called once the count has moved (e.g. a
    sequencer that starts a waiting command)."""

    def __init__(self, owner, *, before: Callable | None = None, after: Callable[[], None] | None = None):
        self.owner = owner
        self.before = before
        self.after = after

    def clock(self, get: Callable[[Path], int]) -> None:
        if self.before is not None:
            self.before(get)
        self.owner.cycle += 1
        if self.after is not None:
            self.after()


class StreamSource(Agent):
    """Drives a stream: ``valid``/``payload`` from a queue of field dicts.

    ``pause`` (a :class:`Pattern` spec) decides, cycle by cycle, whether a new item
    may be presented; once presented it stays until transferred.
    """

    def __init__(self, path: Path, codec: Codec, items: Iterable[dict] = (), *, pause=None,
                 seed: int = 0, on_send: Callable[[dict], None] | None = None):
        self.path = tuple(path)
        self.codec = codec
        self.queue: deque = deque(items)
        self.pause = Pattern(pause, seed=seed)
        self.on_send = on_send
        self.current: dict | None = None
        self.sent = 0
        self.waits = 0          # cycles an item was offered and not taken (the design's back-pressure)
        self.paused = 0         # cycles an item was held back by the pause pattern
        self._valid = self.path + ("valid",)
        self._ready = self.path + ("ready",)
        self._payload = self.path + ("payload",)

    def put(self, item: dict) -> None:
        self.queue.append(item)

    def drive(self) -> dict:
        if self.current is None and self.queue:
            if next(self.pause):
                self.current = self.queue.popleft()
            else:
                self.paused += 1
        if self.current is None:
            return {self._valid: 0}
        return {self._valid: 1, self._payload: self.codec.encode(self.current)}

    def clock(self, get) -> None:
        if self.current is not None:
            if not get(self._ready):
                self.waits += 1
                return
            if self.on_send:
                self.on_send(self.current)
            self.current = None
            self.sent += 1

    def idle(self) -> bool:
        return self.current is None and not self.queue


class StreamSink(Agent):
    """Accepts a stream with ``ready`` from a back-pressure pattern; decodes payloads.

    Checks the stream rule that an offered payload holds (valid stays high and the
    payload does not change) until it is accepted. ``on_offer(item)`` is called in
    the cycle a payload is first offered, ``on_item(item)`` in the cycle it is taken
    (the same cycle when ``ready`` is high).
    """

    def __init__(self, path: Path, codec: Codec, *, ready=None, seed: int = 0,
                 on_item: Callable[[dict], None] | None = None, keep: bool = True,
                 on_offer: Callable[[dict], None] | None = None):
        self.path = tuple(path)
        self.codec = codec
        self.ready = Pattern(ready, seed=seed)
        self.on_item = on_item
        self.on_offer = on_offer
        self.keep = keep
        self.items: list[dict] = []
        self.count = 0
        self.stalls = 0         # cycles an offered item waited for ready (back-pressure applied)
        self._ready_now = 1
        self._held = None
        self._valid = self.path + ("valid",)
        self._readyp = self.path + ("ready",)
        self._payload = self.path + ("payload",)

    def drive(self) -> dict:
        self._ready_now = next(self.ready)
        return {self._readyp: self._ready_now}

    def clock(self, get) -> None:
        valid = get(self._valid)
        if self._held is not None:
            if not valid or get(self._payload) != self._held:
                raise ProtocolError(f"stream {'.'.join(self.path)}: payload withdrawn or changed before it was accepted")
        if not valid:
            self._held = None
            return
        if self.on_offer is not None and self._held is None:
            self.on_offer(self.codec.decode(get(self._payload)))
        if self._ready_now:
            item = self.codec.decode(get(self._payload))
            self._held = None
            self.count += 1
            if self.keep:
                self.items.append(item)
            if self.on_item:
                self.on_item(item)
        else:
            self._held = get(self._payload)
            self.stalls += 1


class MemoryAgent(Agent):
    """Serves a memory port (``<path>.req`` / ``<path>.resp``) from a :class:`MemoryModel`.

    Checks the stream rule on the design's requests: a request offered
    (``req.valid`` high) while the memory is not ready must stay offered, with the
    same payload, until the memory accepts it; otherwise :class:`ProtocolError`
    names the port, the cycle (counted from the model's start) and the fields
    that changed.
    """

    def __init__(self, path: Path, req_codec: Codec, resp_codec: Codec, model: MemoryModel):
        self.path = tuple(path)
        self.model = model
        self.req_codec = req_codec
        self.resp_codec = resp_codec
        p = self.path
        self._req_valid, self._req_ready, self._req_payload = p + ("req", "valid"), p + ("req", "ready"), p + ("req", "payload")
        self._resp_valid, self._resp_ready, self._resp_payload = p + ("resp", "valid"), p + ("resp", "ready"), p + ("resp", "payload")
        self._ready_now = 0
        self._resp_now = None
        self._resp_enc = None
        self._req_held = None             # payload offered but not accepted at the last edge

    def drive(self) -> dict:
        m = self.model
        self._ready_now = int(m.req_ready())
        resp = m.response()
        out = {self._req_ready: self._ready_now}
        if resp is None:
            self._resp_now = None
            out[self._resp_valid] = 0
        else:
            if resp is not self._resp_now:
                tag, rdata, error = resp
                self._resp_enc = self.resp_codec.encode(tag=tag, rdata=rdata, error=error)
            self._resp_now = resp
            out[self._resp_valid] = 1
            out[self._resp_payload] = self._resp_enc
        return out

    def clock(self, get) -> None:
        m = self.model
        if self._resp_now is not None and get(self._resp_ready):
            m.response_taken()
        valid = get(self._req_valid)
        payload = get(self._req_payload) if valid or self._req_held is not None else None
        if self._req_held is not None and (not valid or payload != self._req_held):
            self._protocol_error(valid, payload)
        if valid and not self._ready_now:
            m.stats.refused += 1
        if valid and self._ready_now:
            r = self.req_codec.decode(payload)
            m.accept(r["addr"], r["write"], r["wdata"], r["wmask"], r["tag"])
            self._req_held = None
        else:
            self._req_held = payload if valid else None
        m.tick()

    def _protocol_error(self, valid: int, payload: int) -> None:
        port = ".".join(self.path + ("req",))
        old = self.req_codec.decode(self._req_held)
        was = ", ".join(f"{k}={_fmt(v)}" for k, v in old.items() if k != "wdata" or old["write"])
        if not valid:
            raise ProtocolError(f"memory port {port}: request withdrawn in cycle {self.model.cycle} before it was "
                                f"accepted (valid fell; the request was {was})")
        new = self.req_codec.decode(payload)
        changed = ", ".join(f"{k} {_fmt(old[k])} -> {_fmt(new[k])}" for k in old if old[k] != new[k])
        raise ProtocolError(f"memory port {port}: request changed in cycle {self.model.cycle} while waiting "
                            f"for ready ({changed}; the request was {was})")

    def idle(self) -> bool:
        return self.model.outstanding == 0


def _fmt(v) -> str:
    return hex(v) if isinstance(v, int) and v > 9 else str(v)
