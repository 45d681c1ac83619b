"""golden.gpu.addrmap: GPGPU-Sim's address decoder (addrdec.cc) against a per-address reference,
hand-worked cases, channel/slice balance and the constructor's checks."""
import re

import numpy as np
import pytest

from golden.gpu.addrmap import GPGPUSIM_MAPPINGS, AddressMapping

M64 = (1 << 64) - 1
FERMI = GPGPUSIM_MAPPINGS["gtx480"]["mapping"]
KEPLER = GPGPUSIM_MAPPINGS["kepler"]["mapping"]
VOLTA = GPGPUSIM_MAPPINGS["v100"]["mapping"]


def ref_ipoly(h, index, n):
    """hashing.cc ipoly_hash_function, transcribed term by term."""
    a = [(h >> i) & 1 for i in range(64)]
    b = [(index >> i) & 1 for i in range(6)]
    if n == 16:
        nb = [a[11] ^ a[10] ^ a[9] ^ a[8] ^ a[6] ^ a[4] ^ a[3] ^ a[0] ^ b[0],
              a[12] ^ a[8] ^ a[7] ^ a[6] ^ a[5] ^ a[3] ^ a[1] ^ a[0] ^ b[1],
              a[9] ^ a[8] ^ a[7] ^ a[6] ^ a[4] ^ a[2] ^ a[1] ^ b[2],
              a[10] ^ a[9] ^ a[8] ^ a[7] ^ a[5] ^ a[3] ^ a[2] ^ b[3]]
    elif n == 32:
        nb = [a[13] ^ a[12] ^ a[11] ^ a[10] ^ a[9] ^ a[6] ^ a[5] ^ a[3] ^ a[0] ^ b[0],
              a[14] ^ a[13] ^ a[12] ^ a[11] ^ a[10] ^ a[7] ^ a[6] ^ a[4] ^ a[1] ^ b[1],
              a[14] ^ a[10] ^ a[9] ^ a[8] ^ a[7] ^ a[6] ^ a[3] ^ a[2] ^ a[0] ^ b[2],
              a[11] ^ a[10] ^ a[9] ^ a[8] ^ a[7] ^ a[4] ^ a[3] ^ a[1] ^ b[3],
              a[12] ^ a[11] ^ a[10] ^ a[9] ^ a[8] ^ a[5] ^ a[4] ^ a[2] ^ b[4]]
    else:
        assert n == 64
        nb = [a[18] ^ a[17] ^ a[16] ^ a[15] ^ a[12] ^ a[10] ^ a[6] ^ a[5] ^ a[0] ^ b[0],
              a[15] ^ a[13] ^ a[12] ^ a[11] ^ a[10] ^ a[7] ^ a[5] ^ a[1] ^ a[0] ^ b[1],
              a[16] ^ a[14] ^ a[13] ^ a[12] ^ a[11] ^ a[8] ^ a[6] ^ a[2] ^ a[1] ^ b[2],
              a[17] ^ a[15] ^ a[14] ^ a[13] ^ a[12] ^ a[9] ^ a[7] ^ a[3] ^ a[2] ^ b[3],
              a[18] ^ a[16] ^ a[15] ^ a[14] ^ a[13] ^ a[10] ^ a[8] ^ a[4] ^ a[3] ^ b[4],
              a[17] ^ a[16] ^ a[15] ^ a[14] ^ a[11] ^ a[9] ^ a[5] ^ a[4] ^ b[5]]
    return sum(v << i for i, v in enumerate(nb))


def ref_tlx(addr, mapping, channels, sub_partitions=1, indexing="consecutive"):
    """addrdec_parseoption + init + addrdec_tlx for one address: (chip, sub_partition, bk, row, col)."""
    start = int(mapping[len("dramid@"):mapping.index(";")])       # ADDR_CHIP_S
    mask = {"B": 0, "R": 0, "C": 0}
    ofs = 63
    for c in mapping[mapping.index(";") + 1:]:                     # addrdec_parseoption
        if c in "BRC":
            mask[c] |= 1 << ofs
        elif c == "S":                                             # burst bits are column bits too
            mask["C"] |= 1 << ofs
        if c in "BRCS0":
            ofs -= 1
    nchipbits = channels.bit_length() - 1                          # LOGB2_32
    log2sub = sub_partitions.bit_length() - 1
    gap = channels - 2 ** nchipbits
    chipmask = 0
    if not gap:                                                    # init: insert the chip bits
        low = (1 << start) - 1
        mask = {k: (((m & ~low) << nchipbits) | (m & low)) & M64 for k, m in mask.items()}
        for i in range(start, start + nchipbits):
            chipmask |= 1 << i

    def packbits(m, val):                                          # addrdec_packbits
        pos = result = 0
        for i in range(64):
            if m & (1 << i):
                result |= ((val >> i) & 1) << pos
                pos += 1
        return result

    if not gap:
        chip = packbits(chipmask, addr)
        rest = addr
        high = addr >> (start + nchipbits + log2sub)
    else:
        chip = (addr >> start) % channels
        high = (addr >> start) // channels
        rest = ((high << start) & M64) | (addr & ((1 << start) - 1))
    bk, row, col = (packbits(mask[k], rest) for k in "BRC")
    if indexing == "xor":                                          # bitwise_hash_function
        assert not gap
        chip = chip ^ (high & (channels - 1))
    sub = chip * sub_partitions + (bk & (sub_partitions - 1))
    if indexing == "ipoly":
        nextpow2 = 1 << (channels - 1).bit_length()                # next_powerOf2 (channels > 1)
        sub = ref_ipoly(high, sub, nextpow2 * sub_partitions)
        if gap:
            sub %= channels * sub_partitions
        chip = sub // sub_partitions
    return chip, sub, bk, row, col


# The five presets, then other channel/sub-partition/indexing combinations the decoder supports.
CASES = dict(GPGPUSIM_MAPPINGS, **{
    "fermi_8x2_xor": dict(mapping=FERMI, channels=8, sub_partitions=2, indexing="xor"),
    "kepler_16x1_xor": dict(mapping=KEPLER, channels=16, sub_partitions=1, indexing="xor"),
    "fermi_6x2_ipoly16": dict(mapping=FERMI, channels=6, sub_partitions=2, indexing="ipoly"),
    "kepler_12x2_ipoly32": dict(mapping=KEPLER, channels=12, sub_partitions=2, indexing="ipoly"),
    "volta_16x1_ipoly16": dict(mapping=VOLTA, channels=16, sub_partitions=1, indexing="ipoly"),
    "volta_8x4_ipoly32": dict(mapping=VOLTA, channels=8, sub_partitions=4, indexing="ipoly"),
    "volta_24x2_ipoly64": dict(mapping=VOLTA, channels=24, sub_partitions=2, indexing="ipoly"),
    "fermi_1x1": dict(mapping=FERMI, channels=1),
    "kepler_5x4": dict(mapping=KEPLER, channels=5, sub_partitions=4),
    "low_chip_bits_3x2": dict(mapping="dramid@3;" + "0" * 36 + "RRRRRRRRRRRRCCBBBCCCCCBSSSSS", channels=3,
                              sub_partitions=2),
})


@pytest.mark.parametrize("name", CASES)
def test_matches_reference(name, scale):
    kw = CASES[name]
    am = AddressMapping(**kw)
    rng = np.random.default_rng(sum(map(ord, name)))
    addr = np.concatenate([rng.integers(0, 1 << 40, 2000 * scale), rng.integers(0, 1 << 20, 1000 * scale),
                           [0, 1, 255, 256, (1 << 40) - 1, (1 << 62) + 12345]])
    got = am.decode(addr)
    want = np.array([ref_tlx(int(x), **kw) for x in addr]).T
    for field, w in zip(("channel", "slice", "bank", "row", "col"), want):
        assert np.array_equal(getattr(got, field), w), field
    assert np.array_equal(am.slices(addr), want[1])
    assert got.channel.dtype == np.int64 and got.slice.max() < am.n_slices


def test_hand_worked():
    gtx980 = AddressMapping(**GPGPUSIM_MAPPINGS["gtx980"])
    # 4 channels: chip bits inserted at 8-9, so 256 B chunks rotate over the channels.
    assert list(gtx980.slices(np.arange(8) * 256)) == [0, 1, 2, 3, 0, 1, 2, 3]
    # B bits 8,13,14,15 move to 10,15,16,17; C bits 9-12 to 11-14; R bits 16-27 to 18-29.
    d = gtx980.decode([1 << 10, 1 << 15, 1 << 18, 0xFF, 1 << 11, 0x3FF])
    assert list(d.bank) == [1, 2, 0, 0, 0, 0] and list(d.row) == [0, 0, 1, 0, 0, 0]
    assert list(d.col) == [0, 0, 0, 255, 256, 255] and list(d.channel) == [0, 0, 0, 0, 0, 3]
    tx1 = AddressMapping(**GPGPUSIM_MAPPINGS["tx1"])
    assert list(tx1.slices([0, 256, 512, 768, 0x1FF])) == [0, 1, 0, 1, 1]  # chip = bit 8
    # GTX 480, 6 channels (gap): k = addr >> 8, chip = k % 6, q = k // 6, rest = q << 8 | addr & 255;
    # the low bank bit is rest bit 8 = q & 1, slice = 2 * chip + (q & 1).
    d = AddressMapping(**GPGPUSIM_MAPPINGS["gtx480"]).decode(np.arange(14) * 256 + 17)
    assert list(d.channel) == [0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 5, 0, 1]
    assert list(d.slice) == [0, 2, 4, 6, 8, 10, 1, 3, 5, 7, 9, 11, 0, 2]
    assert list(d.bank) == [0] * 6 + [1] * 6 + [0, 0]  # q = 2: rest bit 9 is a C bit
    assert list(d.col) == [17] * 12 + [256 + 17] * 2  # col bits: S 0-5, C 6-7 | rest C bits 9-12 -> 8-11
    # rest = 1 << 16 (first R bit) needs q = 256: addr = 256 * 6 * 256, channel 0, row 1.
    d = AddressMapping(**GPGPUSIM_MAPPINGS["gtx480"]).decode(256 * 6 * 256)
    assert (d.channel, d.row, d.bank, d.col) == (0, 1, 0, 0) and d.row.shape == ()
    # Kepler 12 x 2: bit 7 is the low bank bit (below dramid@8), so slices alternate every 128 B;
    # addr 0xC00: k = 12, chip 0, q = 1, rest = 0x100 = C bit 8 -> col bit 7 (S 0-4, C 5-6 below it).
    d = AddressMapping(**GPGPUSIM_MAPPINGS["kepler"]).decode([0x80, 0x100, 0x180, 0xC00])
    assert list(d.slice) == [1, 2, 3, 0] and list(d.channel) == [0, 1, 1, 0] and list(d.col) == [0, 0, 0, 128]
    # V100 IPOLY(64): index = 2 * (addr bits 8-12) + bit 13, XOR hash of high = addr >> 14.
    # 1 << 14: a[0] is in new_index[0] and [1] -> 3; 1 << 15: a[1] is in [1] and [2] -> 6;
    # 1 << 19: a[5] is in [0], [1], [5] -> 35; 1 << 22 (a[8]) with 0x2100 (index 2*1+1 = 3): [2], [4] -> 3 ^ 20.
    d = AddressMapping(**GPGPUSIM_MAPPINGS["v100"]).decode([0, 256, 1 << 13, 1 << 14, 1 << 15, 1 << 19,
                                                            (1 << 22) | 0x2100])
    assert list(d.slice) == [0, 2, 1, 3, 6, 35, 23] and list(d.channel) == [0, 1, 0, 1, 3, 17, 11]


@pytest.mark.parametrize("name,banks,row_bytes,n_slices", [
    # B/C counts from the map strings: BBBCCCCB.CCSSSSSS = 4 B, 6+6 C/S; RBBBCCCC.BCCSSSSS = 4 B, 6+5;
    # RBBBCCCB.CCCSSSSS = 4 B, 6+5.
    ("gtx480", 16, 4096, 12), ("gtx980", 16, 4096, 4), ("tx1", 16, 4096, 2),
    ("kepler", 16, 2048, 24), ("v100", 16, 2048, 64)])
def test_geometry(name, banks, row_bytes, n_slices):
    am = AddressMapping(**GPGPUSIM_MAPPINGS[name])
    assert (am.banks, am.row_bytes, am.n_slices) == (banks, row_bytes, n_slices)


@pytest.mark.parametrize("name", GPGPUSIM_MAPPINGS)
@pytest.mark.parametrize("base", [0, (7 << 30) + 12345 * 32])
def test_balance(name, base):
    am = AddressMapping(**GPGPUSIM_MAPPINGS[name])
    d = am.decode(base + np.arange(0, 1 << 20, 32))  # one 32 B sector at a time
    for values, n in ((d.channel, am.channels), (d.slice, am.n_slices)):
        counts = np.bincount(values, minlength=n)
        assert len(counts) == n and np.all(np.abs(counts / counts.mean() - 1) < 0.03), counts


def test_scalar_and_shape():
    am = AddressMapping(**GPGPUSIM_MAPPINGS["v100"])
    addr = np.arange(4096, dtype=np.uint64).reshape(2, -1) * 96
    d = am.decode(addr)
    assert d.slice.shape == addr.shape and am.slices(int(addr[1, 5])) == d.slice[1, 5]
    assert am.decode([]).bank.shape == (0,)


GOOD = FERMI
BAD_MAP = re.escape("AddressMapping.mapping must be 'dramid@N;' (N < 64) followed by 64 characters from B/R/C/S/0")


@pytest.mark.parametrize("kw,exc,msg", [
    (dict(mapping=GOOD[9:]), ValueError, BAD_MAP),                              # no dramid@N;
    (dict(mapping=GOOD[:-1]), ValueError, BAD_MAP),                             # 63 bits
    (dict(mapping=GOOD + "0"), ValueError, BAD_MAP),                            # 65 bits
    (dict(mapping=GOOD.replace("R", "X", 1)), ValueError, BAD_MAP),             # unknown character
    (dict(mapping=GOOD.replace("0", "D", 1)), ValueError, BAD_MAP),             # D with dramid@
    (dict(mapping="dramid@64;" + GOOD[9:]), ValueError, BAD_MAP),               # N out of range
    (dict(mapping=None), ValueError, BAD_MAP),
    (dict(channels=0), ValueError, r"AddressMapping.channels must be an integer >= 1, not 0"),
    (dict(channels=2.0), ValueError, r"AddressMapping.channels must be an integer >= 1, not 2.0"),
    (dict(sub_partitions=3), ValueError, r"AddressMapping.sub_partitions must be a power of two \(1, 2, 4, \.\.\.\), not 3"),
    (dict(sub_partitions=0), ValueError, r"AddressMapping.sub_partitions must be a power of two .*, not 0"),
    (dict(indexing="pae"), ValueError, r"AddressMapping.indexing must be one of 'consecutive', 'xor', 'ipoly', not 'pae'"),
    (dict(channels=6, indexing="xor"), ValueError, r"AddressMapping.indexing='xor' needs a power-of-two channels .*not 6"),
    (dict(channels=4, indexing="ipoly"), ValueError,
     r"AddressMapping.indexing='ipoly' needs next_powerOf2\(channels\) \* sub_partitions in \(16, 32, 64\) .*not 4"),
    (dict(channels=64, sub_partitions=2, indexing="ipoly"), ValueError, r"ipoly.* in \(16, 32, 64\) .*not 128"),
    (dict(channels=1, sub_partitions=16, indexing="ipoly"), ValueError, r"ipoly.*not 0"),  # next_powerOf2(1) = 0
])
def test_validation(kw, exc, msg):
    with pytest.raises(exc, match=msg):
        AddressMapping(**{**dict(mapping=GOOD, channels=4), **kw})


def test_address_dtype():
    with pytest.raises(TypeError, match="AddressMapping: addresses must be integers, not float64"):
        AddressMapping(GOOD, 4).slices([1.5])
