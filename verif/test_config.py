"""Configuration records: validation at construction, presets, JSON, --set parsing."""
import json

import pytest

from golden.config import ConfigError
from golden.fetch import FetchConfig, MemPortConfig
from golden.gpu import GPUConfig


@pytest.mark.parametrize("changes, message", [
    ({"width": 3}, "FetchConfig.width must be one of 1, 2, 4, 8, not 3"),
    ({"width": True}, "FetchConfig.width must be one of 1, 2, 4, 8, not True"),
    ({"max_inflight": 24}, "FetchConfig.max_inflight must be a power of two, not 24"),
    ({"max_inflight": 2048}, "FetchConfig.max_inflight must be in the range [2, 1024], not 2048"),
    ({"merge_window": 8, "max_inflight": 8}, "FetchConfig.merge_window must be smaller than max_inflight (8), not 8"),
    ({"merge_window": -1}, "FetchConfig.merge_window must be in the range [0, 16], not -1"),
    ({"max_elem_bytes": 2}, "FetchConfig.max_elem_bytes must be one of 4, 8, not 2"),
    ({"block_bytes": 48}, "FetchConfig.block_bytes must be a power of two, not 48"),
    ({"addr_width": "32"}, "FetchConfig.addr_width must be an integer, not '32'"),
    ({"count_width": 0}, "FetchConfig.count_width must be in the range [1, 32], not 0"),
])
def test_fetch_config_rejects(changes, message):
    with pytest.raises(ConfigError) as e:
        FetchConfig(**changes)
    assert str(e.value) == message


def test_memport_config_rejects():
    with pytest.raises(ConfigError, match=r"MemPortConfig.block_bytes must be a power of two, not 24"):
        MemPortConfig(block_bytes=24)
    with pytest.raises(ConfigError, match=r"MemPortConfig.tag_width must be in the range \[1, 16\], not 0"):
        MemPortConfig(tag_width=0)


def test_presets_and_variants():
    assert FetchConfig.preset("tx1").width == 1
    assert FetchConfig.preset("gtx980").width == 4
    assert FetchConfig.preset("deep").max_inflight == 128
    assert FetchConfig.preset("default", width=8).width == 8
    with pytest.raises(ConfigError, match="FetchConfig has no preset 'gtx1080'; presets: deep, default, gtx980, tx1"):
        FetchConfig.preset("gtx1080")
    with pytest.raises(ConfigError, match="FetchConfig has no parameter 'widht'"):
        FetchConfig().replace(widht=2)
    # A variant is validated again.
    with pytest.raises(ConfigError, match="width"):
        FetchConfig().replace(width=5)


def test_json_round_trip():
    cfg = FetchConfig(width=8, max_inflight=64, merge_window=2)
    doc = json.loads(cfg.to_json())
    assert doc["type"] == "FetchConfig"
    assert doc["params"]["width"] == 8
    assert doc["derived"]["tag_width"] == 6
    assert FetchConfig.from_json(cfg.to_json()) == cfg
    with pytest.raises(ConfigError, match="JSON holds a 'MemPortConfig', not a FetchConfig"):
        FetchConfig.from_json(MemPortConfig().to_json())
    # a file that does not say which design it is
    params = cfg.to_dict()
    with pytest.raises(ConfigError, match=r'^a FetchConfig JSON needs a "type" key \("FetchConfig"\) beside "params"$'):
        FetchConfig.from_json(json.dumps({"params": params}))
    with pytest.raises(ConfigError, match=r"^a FetchConfig JSON gives 'width' twice$"):
        FetchConfig.from_json('{"type": "FetchConfig", "params": {"width": 4, "width": 2}}')
    # a file written by an editor that adds a byte order mark reads the same
    import tempfile
    from pathlib import Path
    with tempfile.TemporaryDirectory() as d:
        f = Path(d) / "c.json"
        f.write_bytes(b"\xef\xbb\xbf" + cfg.to_json().encode())
        assert FetchConfig.from_file(f) == cfg
    partial = {k: v for k, v in params.items() if k not in ("width", "merge_window")}
    with pytest.raises(ConfigError, match=r"^a FetchConfig JSON holds every parameter \(as graphunits writes it\); "
                                          r"missing: width, merge_window$"):
        FetchConfig.from_json(json.dumps({"type": "FetchConfig", "params": partial}))


def test_parse_overrides():
    assert FetchConfig.parse_overrides(["width=8", "max_inflight=0x40"]) == {"width": 8, "max_inflight": 64}
    with pytest.raises(ConfigError, match="--set expects KEY=VALUE, not 'width'"):
        FetchConfig.parse_overrides(["width"])
    # the same parameter twice: refused, not the last one kept
    with pytest.raises(ConfigError, match=r"^--set width is given twice \('width=2' and 'width=8'\)"):
        FetchConfig.parse_overrides(["width=2", "width=8"])
    # integers as graph specs write them: decimal (leading zeros) or 0x; no 1_0, 0o7, 0b1
    assert FetchConfig.parse_overrides(["width=08", "max_inflight=0x20"]) == {"width": 8, "max_inflight": 32}
    for bad in ("1_6", "0o10", "0b1000", "8.0"):
        with pytest.raises(ConfigError, match=rf"FetchConfig.max_inflight: cannot read '{bad}' as int"):
            FetchConfig.parse_overrides([f"max_inflight={bad}"])
    with pytest.raises(ConfigError, match=r"^--gpu-set l1_mshrs is given twice"):
        GPUConfig.parse_overrides(["l1_mshrs=64", "l1_mshrs=32"], option="--gpu-set")
    with pytest.raises(ConfigError, match=r"FetchConfig.width: cannot read 'four' as int"):
        FetchConfig.parse_overrides(["width=four"])


def test_derived_values():
    cfg = FetchConfig(max_inflight=32, block_bytes=64, max_elem_bytes=4)
    assert cfg.tag_width == 5
    assert cfg.words_per_block == 16
    assert cfg.lane_bits == 32
    assert cfg.port == MemPortConfig(addr_width=32, block_bytes=64, tag_width=5)
