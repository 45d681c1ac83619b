"""The cocotb cycle loop's port reads (sim/cocotb_loop.py): the fast path through
the simulator object's bit string gives what ``int(handle.value)`` gives, and a
handle without it falls back to ``.value``. (Every cocotb test of the units runs
through both paths' results: their cycles and values are compared with the TLMs.)"""
import pytest

from sim.cocotb_loop import CocotbLoop, _reader


class _Raw:
    def __init__(self, bits):
        self.bits = bits

    def get_signal_val_binstr(self):
        return self.bits


class _Handle:
    """A cocotb-like handle: ``_handle`` the simulator object, ``value`` its int."""
    def __init__(self, bits, raw=True):
        if raw:
            self._handle = _Raw(bits)
        self.bits = bits

    @property
    def value(self):
        if set(self.bits) - {"0", "1"}:
            raise ValueError(f"Cannot convert {self.bits} to int")
        return int(self.bits, 2)


@pytest.mark.parametrize("bits", ["0", "1", "0101", "1" * 70, "1" + "0" * 1567])
@pytest.mark.parametrize("raw", [True, False])
def test_reader_equals_int_of_value(bits, raw):
    h = _Handle(bits, raw)
    assert _reader(h)() == h.value == int(bits, 2)
    h.bits = bits[::-1]                                # read each time, not once
    if raw:
        h._handle.bits = bits[::-1]
    assert _reader(h)() == int(bits[::-1], 2)


@pytest.mark.parametrize("raw", [True, False])
def test_reader_rejects_x_and_z(raw):
    for bits in ("x", "01z1", "X0"):
        with pytest.raises(ValueError):
            _reader(_Handle(bits, raw))()


def test_loop_reads_ports_by_path():
    class Dut:
        cmd__valid = _Handle("1")
        cmd__payload = _Handle("1010")
        clk = _Handle("0")
    loop = CocotbLoop(Dut(), [])
    assert loop.get(("cmd", "valid")) == 1 and loop.get(("cmd", "payload")) == 10
    Dut.cmd__payload._handle.bits = "0011"
    assert loop.get(("cmd", "payload")) == 3
    with pytest.raises(AttributeError, match="the design has no port 'cmd__ready'"):
        loop.get(("cmd", "ready"))
