"""The fetch engine's TLM on hand-checked cases (docs/architecture.md, "Fetch engine")."""
import numpy as np
import pytest

from golden.config import ConfigError
from golden.fetch import FetchConfig, FetchRange, fetch_reference
from golden.memory import AddressSpace


@pytest.fixture
def space():
    sp = AddressSpace()
    sp.alloc("a", np.arange(1000, dtype=np.uint32), align=4096)   # at 0x1000
    return sp


def test_aligned_linear(space):
    cfg = FetchConfig(width=4, block_bytes=32)
    (op,) = fetch_reference(cfg, space, [FetchRange(0x1000, 16, 4)])
    assert op.elements.tolist() == list(range(16))
    assert op.requests == [0x1000, 0x1020]          # 16 x 4 B = two 32 B blocks
    assert op.beats == [4, 4, 4, 4]
    assert not op.mem_error and not op.cmd_error


def test_unaligned_base_touches_one_more_block(space):
    cfg = FetchConfig(width=4)
    (op,) = fetch_reference(cfg, space, [FetchRange(0x1000 + 12, 10, 4)])   # elements 3..12
    assert op.elements.tolist() == list(range(3, 13))
    assert op.requests == [0x1000, 0x1020]          # bytes 12..52 span two blocks
    assert op.beats == [4, 4, 2]


def test_eight_byte_elements(space):
    cfg = FetchConfig(width=2)
    (op,) = fetch_reference(cfg, space, [FetchRange(0x1000 + 8, 3, 8)])   # bytes 8..32: one block
    words = np.arange(2, 8, dtype=np.uint64)
    assert op.elements.tolist() == (words[0::2] | (words[1::2] << 32)).tolist()
    assert op.requests == [0x1000]
    assert op.beats == [2, 1]
    (op,) = fetch_reference(cfg, space, [FetchRange(0x1000 + 8, 4, 8)])   # bytes 8..40: two blocks
    assert op.requests == [0x1000, 0x1020]
    assert op.beats == [2, 2]


def test_zero_and_one_element(space):
    cfg = FetchConfig(width=4)
    empty, one = fetch_reference(cfg, space, [FetchRange(0x1000, 0, 4), FetchRange(0x1000 + 4 * 9, 1, 4)])
    assert empty.elements.size == 0 and empty.beats == [0] and empty.requests == []
    assert one.elements.tolist() == [9] and one.beats == [1] and one.requests == [0x1020]


def test_merge_window(space):
    # Two ranges in one operation reading the same block merge; the window holds
    # the last K requested blocks and is emptied at the end of an operation.
    b = 0x1000
    rng = [FetchRange(b, 1, 4, False), FetchRange(b + 64, 1, 4, False), FetchRange(b + 4, 1, 4, True)]
    (op,) = fetch_reference(FetchConfig(merge_window=2), space, rng)
    assert op.requests == [b, b + 64]
    (op,) = fetch_reference(FetchConfig(merge_window=1), space, rng)
    assert op.requests == [b, b + 64, b]            # b fell out of a one-entry window
    (op,) = fetch_reference(FetchConfig(merge_window=0), space, rng)
    assert op.requests == [b, b + 64, b]
    ops = fetch_reference(FetchConfig(merge_window=4), space, [FetchRange(b, 1, 4), FetchRange(b + 4, 1, 4)])
    assert [o.requests for o in ops] == [[b], [b]]  # separate operations never merge


def test_command_errors(space):
    cfg = FetchConfig(max_elem_bytes=4)
    mis, wide = fetch_reference(cfg, space, [FetchRange(0x1002, 4, 4), FetchRange(0x1000, 4, 8)])
    assert mis.cmd_error and mis.elements.size == 0 and mis.requests == [] and mis.beats == [0]
    assert wide.cmd_error and wide.requests == []
    (mis8,) = fetch_reference(FetchConfig(), space, [FetchRange(0x1004, 2, 8)])
    assert mis8.cmd_error


def test_memory_error_zeroes_the_block(space):
    cfg = FetchConfig(width=4)
    (op,) = fetch_reference(cfg, space, [FetchRange(0x1000, 16, 4)], is_error=lambda blk: blk == 0x1020)
    assert op.mem_error
    assert op.elements.tolist() == list(range(8)) + [0] * 8


def test_bad_ranges_raise(space):
    with pytest.raises(ConfigError, match="FetchRange.esize must be one of 4, 8, not 2"):
        fetch_reference(FetchConfig(), space, [FetchRange(0x1000, 1, 2)])
    with pytest.raises(ConfigError, match="FetchRange.count must be in the range"):
        fetch_reference(FetchConfig(count_width=4), space, [FetchRange(0x1000, 16, 4)])
    with pytest.raises(ValueError, match="the last range must have last=True"):
        fetch_reference(FetchConfig(), space, [FetchRange(0x1000, 1, 4, False)])


def test_range_past_the_top_is_a_command_error():
    # A 16-bit address space: top = 0x10000. Bytes [base, base + count * esize)
    # must end at or below the top; past it the range would wrap to address 0.
    sp = AddressSpace(addr_bits=16)
    sp.write(0xFF00, np.arange(64, dtype=np.uint32).view(np.uint8))   # words 0..63 up to the top
    cfg = FetchConfig(addr_width=16, width=4)
    at_top, past, past8, mixed = fetch_reference(cfg, sp, [
        FetchRange(0xFFF0, 4, 4),                                       # ends exactly at the top
        FetchRange(0xFFF0, 5, 4),                                       # 4 bytes past it
        FetchRange(0xFFF8, 2, 8),                                       # 8 bytes past it
        FetchRange(0xFFF0, 5, 4, False), FetchRange(0xFF00, 2, 4, True),
    ])
    assert at_top.elements.tolist() == [60, 61, 62, 63] and at_top.requests == [0xFFE0]
    assert not at_top.cmd_error and not at_top.mem_error
    for op in (past, past8):
        assert op.cmd_error and op.elements.size == 0 and op.requests == [] and op.beats == [0]
    # The bad range reads nothing; the operation's other range is still read.
    assert mixed.cmd_error and mixed.elements.tolist() == [0, 1] and mixed.requests == [0xFF00]
    # A count far past the top (fits the 32-bit count field) is an error, not a wrap.
    (huge,) = fetch_reference(FetchConfig(), AddressSpace(), [FetchRange(0x1000, 2**30, 4)])
    assert huge.cmd_error and huge.requests == [] and huge.elements.size == 0


def test_block_past_a_smaller_address_space_is_a_memory_error():
    # Port of 20 bits, memory of 16 bits (64 KiB): the block at 0x10000 does not
    # exist; the memory model answers it with an error (zeros), and so does the TLM.
    sp = AddressSpace(addr_bits=16)
    sp.write(0xFFF8, np.array([7, 8], dtype=np.uint32).view(np.uint8))
    (op,) = fetch_reference(FetchConfig(addr_width=20), sp, [FetchRange(0xFFF8, 4, 4)])
    assert op.mem_error and not op.cmd_error
    assert op.requests == [0xFFE0, 0x10000] and op.elements.tolist() == [7, 8, 0, 0]


def test_address_space_gathers_elements_in_any_order():
    """AddressSpace.gather_elems (the TLMs' element reads) against reading each
    element on its own: addresses in order, scrambled, across pages, in pages
    never written (zeros); misaligned or outside addresses are refused."""
    from golden.memory import PAGE_BYTES, MemoryError_
    rng = np.random.default_rng(9)
    sp = AddressSpace(addr_bits=24)
    for p in (0, 2, 3):                                       # page 1 never written
        sp.write(p * PAGE_BYTES, rng.integers(0, 256, PAGE_BYTES).astype(np.uint8))
    for esize in (4, 8):
        for case in range(30):
            n = int(rng.integers(1, 400))
            a = rng.integers(0, 4 * PAGE_BYTES // esize, n) * esize
            if case % 3 == 0:
                a = np.sort(a)
            got = sp.gather_elems(a, esize)
            want = [sp.read_int(int(x), esize) for x in a]
            assert got.tolist() == want, (esize, case)
        assert sp.gather_elems(np.zeros(0, np.int64), esize).size == 0
        with pytest.raises(MemoryError_, match="multiples of the element size"):
            sp.gather_elems([esize, esize + 2], esize)
        with pytest.raises(MemoryError_, match="outside"):
            sp.gather_elems([sp.size], esize)
