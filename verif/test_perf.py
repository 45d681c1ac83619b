"""golden.perf: the sort-based unique against numpy's own (docs/golden.md, "Speed")."""
import numpy as np
import pytest

from golden.perf import count_unique, unique


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.uint32, np.uint8, np.bool_])
def test_unique_matches_numpy(dtype):
    rng = np.random.default_rng(7)
    for n in (0, 1, 2, 17, 5000):
        hi = 2 if dtype is np.bool_ else 50
        a = rng.integers(0, hi, n).astype(dtype)
        want = np.unique(a)
        got = unique(a)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
        assert count_unique(a) == want.size


def test_unique_many_distinct_and_2d():
    rng = np.random.default_rng(1)
    a = rng.integers(-(1 << 50), 1 << 50, (300, 7))
    a[5, :] = a[0, 0]                   # repeats
    np.testing.assert_array_equal(unique(a), np.unique(a))
    assert count_unique(a) == np.unique(a).size
    assert unique(a).flags.owndata or unique(a).base is not a


def test_unique_floats_keep_numpys_nan_rule():
    a = np.array([1.0, np.nan, 1.0, np.nan, 0.5])
    np.testing.assert_array_equal(unique(a), np.unique(a))
    assert count_unique(a) == np.unique(a).size == 3


def test_unique_of_one_element_is_a_copy():
    a = np.array([3], np.int64)
    u = unique(a)
    u[0] = 9
    assert a[0] == 3
