"""Pack and unpack flat payload integers by an Amaranth layout.

Exported Verilog has one vector per stream payload; drivers and monitors use a
:class:`Codec` to turn it into a dict of fields (nested structs are flattened with
dotted names, arrays become lists) and back.
"""
from __future__ import annotations

from amaranth.hdl import Shape
from amaranth.lib import data

__all__ = ["Codec"]


class Codec:
    """Field offsets of a :class:`amaranth.lib.data.Layout` (or a plain shape)."""

    def __init__(self, layout):
        self.fields: list[tuple[str, int, int]] = []   # (dotted name, offset, width)
        self.arrays: dict[str, tuple[int, int, int]] = {}  # name -> (offset, elem width, length)
        self.width = 0
        if isinstance(layout, data.Layout):
            self._walk(layout, "", 0)
            self.width = layout.size
        else:
            self.width = Shape.cast(layout).width
            self.fields.append(("", 0, self.width))
        self._index = {name: (off, w) for name, off, w in self.fields}
        # (decode's loop: masks computed once)
        self._dec = [(name, off, (1 << w) - 1) for name, off, w in self.fields]
        self._dec_arrays = [(name, off, ew, (1 << ew) - 1, n) for name, (off, ew, n) in self.arrays.items()]

    def _walk(self, layout, prefix, base):
        if isinstance(layout, data.ArrayLayout):
            elem = layout.elem_shape
            ew = elem.size if isinstance(elem, data.Layout) else Shape.cast(elem).width
            self.arrays[prefix.rstrip(".")] = (base, ew, layout.length)
            return
        for name, field in layout:
            shape = field.shape
            off = base + field.offset
            full = prefix + str(name)
            if isinstance(shape, data.Layout):
                self._walk(shape, full + ".", off)
            else:
                self.fields.append((full, off, Shape.cast(shape).width))

    def decode(self, value: int) -> dict:
        value = int(value)
        out = {name: (value >> off) & mask for name, off, mask in self._dec}
        for name, off, ew, mask, n in self._dec_arrays:
            out[name] = [(value >> (off + i * ew)) & mask for i in range(n)]
        return out

    def encode(self, fields: dict | None = None, **kw) -> int:
        fields = dict(fields or {}, **kw)
        value = 0
        for name, v in fields.items():
            if name in self._index:
                off, w = self._index[name]
                v = int(v)
                if v < 0:
                    v &= (1 << w) - 1
                if v >> w:
                    raise ValueError(f"field {name!r} value {v} does not fit in {w} bits")
                value |= v << off
            elif name in self.arrays:
                off, ew, n = self.arrays[name]
                if len(v) > n:
                    raise ValueError(f"array {name!r} has {n} elements, got {len(v)}")
                for i, e in enumerate(v):
                    e = int(e) & ((1 << ew) - 1)
                    value |= e << (off + i * ew)
            else:
                raise KeyError(f"no field {name!r}; fields: {sorted(self._index) + sorted(self.arrays)}")
        return value

    def field_slice(self, name: str) -> tuple[int, int]:
        return self._index[name]
