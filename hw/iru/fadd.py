"""Combinational binary32 adder of the IRU's ``fadd`` merge (docs/iru.md).

Round to nearest even; subnormal inputs and results are flushed to zero (with
their sign); every NaN result is ``0x7FC00000``. The exact model is
:func:`golden.iru.ops.fadd32`.
"""
from amaranth import *
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

__all__ = ["fadd32", "FAdd32"]

_QNAN = 0x7FC00000
_INF = 0x7F800000


def fadd32(m: Module, a: Value, b: Value, name: str = "fadd") -> Signal:
    """Add the comb logic of ``a + b`` (32-bit patterns) to ``m``; returns the sum."""
    def sig(width, suffix, **kw):
        return Signal(width, name=f"{name}_{suffix}", **kw)

    sa, ea, fa = a[31], a[23:31], a[:23]
    sb, eb, fb = b[31], b[23:31], b[:23]
    ma, mb = Cat(fa, C(1, 1)), Cat(fb, C(1, 1))
    swap = sig(1, "swap")
    m.d.comb += swap.eq(Cat(mb, eb) > Cat(ma, ea))
    big_s, big_e, big_m = sig(1, "bs"), sig(8, "be"), sig(24, "bm")
    sml_s, sml_e, sml_m = sig(1, "ss"), sig(8, "se"), sig(24, "sm")
    m.d.comb += [big_s.eq(Mux(swap, sb, sa)), big_e.eq(Mux(swap, eb, ea)), big_m.eq(Mux(swap, mb, ma)),
                 sml_s.eq(Mux(swap, sa, sb)), sml_e.eq(Mux(swap, ea, eb)), sml_m.eq(Mux(swap, ma, mb))]
    d = sig(8, "d")
    m.d.comb += d.eq(big_e - sml_e)
    dsat = sig(5, "dsat")
    m.d.comb += dsat.eq(Mux(d >= 28, 28, d[:5]))
    big = Cat(C(0, 3), big_m)                      # 27 bits: hidden, fraction, guard, round, sticky
    sml_full = Cat(C(0, 3), sml_m)
    shifted = sig(27, "sh")
    m.d.comb += shifted.eq(sml_full >> dsat)
    lost = sig(1, "lost")
    m.d.comb += lost.eq((shifted << dsat) != sml_full)
    small = sig(27, "small")
    m.d.comb += small.eq(shifted | lost)
    sub = sig(1, "sub")
    m.d.comb += sub.eq(big_s ^ sml_s)
    total = sig(28, "sum")
    diff = sig(27, "diff")
    m.d.comb += [total.eq(big + small), diff.eq(big - small)]
    # Addition: one bit of overflow at most.
    s_add = sig(27, "sadd")
    m.d.comb += s_add.eq(Mux(total[27], Cat(total[0] | total[1], total[2:28]), total[:27]))
    # Subtraction: normalise by the leading zeros (the highest set bit wins).
    lz = sig(5, "lz")
    for i in range(27):
        with m.If(diff[i]):
            m.d.comb += lz.eq(26 - i)
    s_sub = sig(27, "ssub")
    m.d.comb += s_sub.eq((diff << lz)[:27])
    s_n = sig(27, "sn")
    be = Signal(signed(10), name=f"{name}_be10")
    e_n = Signal(signed(11), name=f"{name}_en")
    m.d.comb += [be.eq(big_e), s_n.eq(Mux(sub, s_sub, s_add)), e_n.eq(Mux(sub, be - lz, be + total[27]))]
    mant = s_n[3:27]
    g, r, st = s_n[2], s_n[1], s_n[0]
    up = sig(1, "up")
    m.d.comb += up.eq(g & (r | st | mant[0]))
    mant_r = sig(25, "mr")
    m.d.comb += mant_r.eq(mant + up)
    e_r = Signal(signed(12), name=f"{name}_er")
    m.d.comb += e_r.eq(e_n + mant_r[24])
    frac = sig(23, "frac")
    m.d.comb += frac.eq(Mux(mant_r[24], mant_r[1:24], mant_r[:23]))

    a_nan = (ea == 255) & (fa != 0)
    b_nan = (eb == 255) & (fb != 0)
    a_inf = (ea == 255) & (fa == 0)
    b_inf = (eb == 255) & (fb == 0)
    a_zero, b_zero = ea == 0, eb == 0
    out = Signal(32, name=name)
    with m.If(a_nan | b_nan | (a_inf & b_inf & (sa != sb))):
        m.d.comb += out.eq(_QNAN)
    with m.Elif(a_inf):
        m.d.comb += out.eq(Cat(C(0, 23), C(255, 8), sa))
    with m.Elif(b_inf):
        m.d.comb += out.eq(Cat(C(0, 23), C(255, 8), sb))
    with m.Elif(a_zero & b_zero):
        m.d.comb += out.eq(Cat(C(0, 31), sa & sb))
    with m.Elif(a_zero):
        m.d.comb += out.eq(b)
    with m.Elif(b_zero):
        m.d.comb += out.eq(a)
    with m.Elif(sub & (diff == 0)):
        m.d.comb += out.eq(0)
    with m.Elif(e_n <= 0):
        m.d.comb += out.eq(Cat(C(0, 31), big_s))
    with m.Elif(e_r >= 255):
        m.d.comb += out.eq(Cat(C(0, 23), C(255, 8), big_s))
    with m.Else():
        m.d.comb += out.eq(Cat(frac, e_r[:8], big_s))
    return out


class FAdd32(wiring.Component):
    """The adder as a component (for its own tests): ``o = a + b``."""

    a: In(32)
    b: In(32)
    o: Out(32)

    def elaborate(self, platform):
        m = Module()
        m.d.comb += self.o.eq(fadd32(m, self.a, self.b))
        return m
