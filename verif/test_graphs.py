"""Graphs: CSR construction rules, every file format (good and malformed), the
generators (checked against networkx / independent counts) and spec strings."""
import re
import warnings

import networkx as nx
import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp

from golden.graphs import CSRGraph, GraphError, grid, kron, load_graph, parse_spec, read_graph_file, urand


def arcs(g):
    """The set of stored arcs (with weights when present)."""
    s = g.src().tolist()
    d = g.col.tolist()
    if g.weight is None:
        return set(zip(s, d))
    return set(zip(s, d, g.weight.tolist()))


# ---------------------------------------------------------------------- CSR rules
def test_from_edges_rules():
    # self loop 2->2 dropped; duplicate 0->1 keeps the minimum weight; vertex count kept at 6.
    g = CSRGraph.from_edges([0, 0, 2, 1, 0], [1, 1, 2, 0, 3], [5.0, 2.0, 1.0, 7.0, 4.0], num_vertices=6)
    assert g.num_vertices == 6 and g.num_edges == 3
    assert arcs(g) == {(0, 1, 2.0), (0, 3, 4.0), (1, 0, 7.0)}
    assert g.row_ptr.tolist() == [0, 2, 3, 3, 3, 3, 3]
    assert g.col.dtype == np.int32 and g.row_ptr.dtype == np.int64


def test_undirected_stores_both_directions_with_min_weight():
    g = CSRGraph.from_edges([0, 1], [1, 0], [3.0, 1.0], directed=False)
    assert arcs(g) == {(0, 1, 1.0), (1, 0, 1.0)}
    assert not g.directed


def test_from_edges_errors():
    with pytest.raises(GraphError, match="vertex count 2 is too small: the edges use vertex id 4"):
        CSRGraph.from_edges([0], [4], num_vertices=2)
    with pytest.raises(GraphError, match="non-negative"):
        CSRGraph.from_edges([-1], [4])
    with pytest.raises(GraphError, match="2 sources for 1 destinations"):
        CSRGraph.from_edges([0, 1], [4])
    with pytest.raises(GraphError, match="NaN"):
        CSRGraph.from_edges([0], [1], [np.nan])


def test_with_weights_is_seeded_symmetric_and_in_range():
    g = urand(8, 4, seed=2)
    a, b, c = g.with_weights(5), g.with_weights(5), g.with_weights(6)
    assert np.array_equal(a.weight, b.weight) and not np.array_equal(a.weight, c.weight)
    assert a.weight.min() >= 1 and a.weight.max() <= 255 and np.all(a.weight == np.round(a.weight))
    w = {(u, v): x for u, v, x in arcs(a)}
    assert all(w[(v, u)] == x for (u, v), x in w.items())


def test_transpose_and_npz_roundtrip(tmp_path):
    g = CSRGraph.from_edges([0, 0, 3], [1, 2, 0], [1.0, 2.0, 3.0], num_vertices=5)
    t = g.transpose()
    assert arcs(t) == {(1, 0, 1.0), (2, 0, 2.0), (0, 3, 3.0)}
    p = tmp_path / "g.npz"
    g.save_npz(p)
    h = read_graph_file(p)
    assert arcs(h) == arcs(g) and h.num_vertices == 5 and h.directed
    bad = tmp_path / "bad.npz"
    np.savez(bad, x=np.arange(3))
    with pytest.raises(GraphError, match="not a graphunits graph file"):
        read_graph_file(bad)


# ---------------------------------------------------------------------- file formats
def write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text)
    return p


def test_mtx_general_real_against_scipy(tmp_path):
    rng = np.random.default_rng(1)
    m = sp.random(30, 30, density=0.1, random_state=3, format="coo")
    m.data = np.round(rng.random(m.nnz) * 10 + 1, 3)
    p = tmp_path / "m.mtx"
    scipy.io.mmwrite(p, m)
    g = read_graph_file(p)
    keep = m.row != m.col
    ref = {(int(r), int(c), float(v)) for r, c, v in zip(m.row[keep], m.col[keep], m.data[keep])}
    assert g.directed and g.num_vertices == 30 and arcs(g) == ref


def test_mtx_symmetric_pattern_is_undirected(tmp_path):
    p = write(tmp_path, "s.mtx", "%%MatrixMarket matrix coordinate pattern symmetric\n% comment\n4 4 3\n2 1\n3 1\n4 4\n")
    g = read_graph_file(p)
    assert not g.directed and arcs(g) == {(1, 0), (0, 1), (2, 0), (0, 2)} and g.num_vertices == 4


def test_mtx_integer(tmp_path):
    p = write(tmp_path, "i.mtx", "%%MatrixMarket matrix coordinate integer general\n3 3 2\n1 2 7\n2 3 -2\n")
    assert arcs(read_graph_file(p)) == {(0, 1, 7.0), (1, 2, -2.0)}


@pytest.mark.parametrize("text, message", [
    ("hello\n", r"m\.mtx:1: expected a '%%MatrixMarket matrix coordinate FIELD SYMMETRY' header"),
    ("%%MatrixMarket matrix array real general\n2 2\n1\n", "only the 'coordinate' format"),
    ("%%MatrixMarket matrix coordinate complex general\n", "field must be pattern, integer or real, not 'complex'"),
    ("%%MatrixMarket matrix coordinate real hermitian\n", "symmetry must be general or symmetric"),
    ("%%MatrixMarket matrix coordinate real general\n3 3\n", r"m\.mtx:2: expected a size line"),
    ("%%MatrixMarket matrix coordinate real general\n3 3 2\n1 2 1.0\n2 x 1.0\n",
     r"m\.mtx:4: expected 'ROW COL VALUE' \(real value\), got '2 x 1.0'"),
    ("%%MatrixMarket matrix coordinate real general\n3 3 2\n1 2 1.0\n2 3\n", r"m\.mtx:4: expected 'ROW COL VALUE'"),
    ("%%MatrixMarket matrix coordinate real general\n3 3 3\n1 2 1.0\n2 3 1\n", "announces 3 entries, the file holds 2"),
    ("%%MatrixMarket matrix coordinate pattern general\n3 3 2\n1 2\n2 4\n", r"m\.mtx:4: column index must be in \[1, 3\]"),
    ("%%MatrixMarket matrix coordinate pattern general\n3 3 1\n0 2\n", r"m\.mtx:3: row index must be in \[1, 3\]"),
    ("%%MatrixMarket matrix coordinate integer general\n3 3 1\n1 2 1.5\n", r"m\.mtx:3: expected 'ROW COL VALUE' \(integer"),
    ("%%MatrixMarket matrix coordinate pattern general\n3 3 1\n1.5 2\n", r"m\.mtx:3: expected 'ROW COL'"),
])
def test_mtx_malformed(tmp_path, text, message):
    with pytest.raises(GraphError, match=message):
        read_graph_file(write(tmp_path, "m.mtx", text))


def test_snap_el_wel_gr(tmp_path):
    snap = write(tmp_path, "s.txt", "# Directed graph\n# FromNodeId\tToNodeId\n0\t1\n1\t2\n\n2\t0\n")
    assert arcs(read_graph_file(snap)) == {(0, 1), (1, 2), (2, 0)}
    el = write(tmp_path, "g.el", "0 1\n0 1\n1 1\n3 2\n")
    g = read_graph_file(el, vertices=6)
    assert g.num_vertices == 6 and arcs(g) == {(0, 1), (3, 2)}
    und = read_graph_file(el, undirected=True)
    assert arcs(und) == {(0, 1), (1, 0), (3, 2), (2, 3)} and und.num_vertices == 4
    wel = write(tmp_path, "g.wel", "0 1 5\n0 1 3\n1 0 9\n")
    assert arcs(read_graph_file(wel)) == {(0, 1, 3.0), (1, 0, 9.0)}
    gr = write(tmp_path, "g.gr", "c DIMACS\np sp 4 3\nc arcs\na 1 2 10\na 2 3 20\na 4 1 5\n")
    g = read_graph_file(gr)
    assert g.num_vertices == 4 and arcs(g) == {(0, 1, 10.0), (1, 2, 20.0), (3, 0, 5.0)}
    # a UTF-8 byte order mark (as some editors write) is not part of the first line
    bom = tmp_path / "bom.mtx"
    bom.write_bytes(b"\xef\xbb\xbf%%MatrixMarket matrix coordinate pattern general\n3 3 1\n1 2\n")
    assert arcs(read_graph_file(bom)) == {(0, 1)}


@pytest.mark.parametrize("name, text, message", [
    ("g.el", "0 1\n1 2 3\n", r"g\.el:2: expected an edge 'U V' \(gapbs \.el\), got '1 2 3'"),
    ("g.el", "0 1\n-1 2\n", r"g\.el:2: vertex ids must be in \[0, 2147483646\] \(ids are 32-bit\), got \[-1, 2\]"),
    ("g.wel", "0 1 2\n1 2\n", r"g\.wel:2: expected an edge 'U V W'"),
    ("g.wel", "0 1 nan\n", r"g\.wel:1: expected an edge 'U V W'"),
    ("g.txt", "# c\n0 1\n0 one\n", r"g\.txt:3: expected an edge 'U V' or 'U V W' \(SNAP\), got '0 one'"),
    ("g.gr", "p sp 3 1\na 1 4 1\n", r"g\.gr:2: vertex ids must be in \[1, 3\]"),
    ("g.gr", "p sp 3 2\na 1 2 1\n", "announces 2 arcs, the file holds 1"),
    ("g.gr", "p sp 3 1\ne 1 2 1\n", r"g\.gr:2: expected an arc line 'a U V W', got 'e 1 2 1'"),
    ("g.gr", "a 1 2 3\n", r"g\.gr:1: expected a problem line 'p sp NODES ARCS'"),
    ("g.xyz", "0 1\n", "unknown graph file extension '.xyz'"),
])
def test_edge_lists_malformed(tmp_path, name, text, message):
    with pytest.raises(GraphError, match=message):
        read_graph_file(write(tmp_path, name, text))


def test_vertex_count_too_small_and_missing_file(tmp_path):
    el = write(tmp_path, "g.el", "0 5\n")
    with pytest.raises(GraphError, match=r"g\.el:1: vertex count 3 is too small: the edges use vertex id 5"):
        read_graph_file(el, vertices=3)
    with pytest.raises(GraphError, match="does not exist"):
        load_graph(str(tmp_path / "none.el"))
    binary = tmp_path / "b.el"
    binary.write_bytes(b"\xff\xfe\x00\x01")
    with pytest.raises(GraphError, match="not a text file"):
        read_graph_file(binary)


def test_empty_edge_list_gives_isolated_vertices(tmp_path):
    g = read_graph_file(write(tmp_path, "e.el", "# nothing\n"), vertices=3)
    assert g.num_vertices == 3 and g.num_edges == 0


# ---------------------------------------------------------------------- generators and specs
def test_kron_shape_and_determinism():
    g = kron(12, 16, seed=3)
    h = kron(12, 16, seed=3)
    assert np.array_equal(g.col, h.col) and g.num_vertices == 4096 and not g.directed
    # Symmetric CSR without self loops or duplicates, as networkx sees it.
    G = nx.Graph()
    G.add_edges_from(zip(g.src().tolist(), g.col.tolist()))
    assert 2 * G.number_of_edges() == g.num_edges and nx.number_of_selfloops(G) == 0
    deg = g.degrees()
    # R-MAT is skewed: the largest degree far above the mean (urand's is not).
    assert deg.max() > 20 * deg.mean()
    u = urand(12, 16, seed=3)
    assert u.degrees().max() < 3 * u.degrees().mean()
    # About edgefactor * 2 arcs per vertex, less the duplicates and self loops removed.
    assert 0.8 * 32 * 4096 < u.num_edges <= 32 * 4096


def test_grid_against_networkx():
    g = grid(5, 7, seed=2)
    G = nx.grid_2d_graph(5, 7)
    ref = {(r1 * 7 + c1, r2 * 7 + c2) for (r1, c1), (r2, c2) in G.edges}
    ref |= {(b, a) for a, b in ref}
    assert {(u, v) for u, v, _ in arcs(g)} == ref
    assert g.weight.min() >= 1 and g.weight.max() <= 255


def test_specs():
    assert parse_spec("kron:scale=14,edgefactor=16,seed=1") == ("kron", {"scale": 14, "edgefactor": 16, "seed": 1})
    assert parse_spec("urand:scale=10") == ("urand", {"scale": 10, "edgefactor": 16, "seed": 1})
    assert parse_spec("grid:256x128,seed=4") == ("grid", {"rows": 256, "cols": 128, "seed": 4})
    assert parse_spec("some/file.mtx") is None
    g = load_graph("grid:4x4", cache=False)
    assert g.num_vertices == 16 and g.weight is not None
    w = load_graph("urand:scale=6,edgefactor=2", weighted=True, weight_seed=3, cache=False)
    assert w.weight is not None and np.array_equal(w.weight, urand(6, 2).with_weights(3).weight)


@pytest.mark.parametrize("spec, message", [
    ("kron:edgefactor=4", "kron needs scale=N"),
    ("kron:scale=40", r"kron scale must be an integer in \[1, 28\], not 40"),
    ("kron:scale=10,size=3", "kron has no parameter 'size'; parameters: scale, edgefactor, seed"),
    ("urand:scale=ten", r"scale must be an integer \(decimal, or hexadecimal with 0x\), not 'ten'"),
    # Python's other spellings of integers are refused, not taken at face value
    ("kron:scale=1_0", r"scale must be an integer \(decimal, or hexadecimal with 0x\), not '1_0'"),
    ("kron:scale=0b101", r"scale must be an integer \(decimal, or hexadecimal with 0x\), not '0b101'"),
    ("grid:4x0o7", r"cols must be an integer \(decimal, or hexadecimal with 0x\), not '0o7'"),
    ("grid:256", r"expected grid:ROWSxCOLS"),
    ("grid:0x5", r"grid rows must be an integer in \[1, 16384\], not 0"),
    ("rmat:scale=3", "unknown generator 'rmat'"),
    ("", "non-empty string"),
])
def test_bad_specs(spec, message):
    with pytest.raises(GraphError, match=message):
        load_graph(spec, cache=False)


def test_spec_integers_in_decimal_with_leading_zeros_or_hexadecimal():
    assert parse_spec("kron:scale=06,seed=0x10") == ("kron", {"scale": 6, "edgefactor": 16, "seed": 16})
    assert parse_spec("grid:08x8")[1]["rows"] == 8
    assert parse_spec("grid:4 x 5")[1] == {"rows": 4, "cols": 5, "seed": 1}     # spaces around the numbers
    assert parse_spec("kron:scale=+6")[1]["scale"] == 6


def test_weight_seed_range():
    # seeds past 2**63 - 1 would wrap to other seeds' weights
    for bad in (-1, 1 << 63, True, 1.0):
        with pytest.raises(GraphError, match=r"weight seed must be an integer in \[0, 2\*\*63 - 1\]"):
            load_graph("grid:4x4", weighted=True, weight_seed=bad, cache=False)
    assert load_graph("grid:4x4", weighted=True, weight_seed=(1 << 63) - 1, cache=False).weight is not None


def test_generated_graph_options():
    with pytest.raises(GraphError, match="--vertices applies to graph files"):
        load_graph("kron:scale=4", vertices=100, cache=False)


def test_cache_roundtrip(tmp_path, monkeypatch):
    monkeypatch.setenv("GRAPHUNITS_CACHE_DIR", str(tmp_path / "cache"))
    el = write(tmp_path, "g.el", "0 1\n1 2\n")
    a = load_graph(str(el))
    files = list((tmp_path / "cache").glob("*.npz"))
    assert len(files) == 1
    b = load_graph(str(el))
    assert arcs(a) == arcs(b)
    # A changed file is read again, not served from the stale cache.
    el.write_text("0 1\n1 2\n2 3\n")
    assert load_graph(str(el)).num_edges == 3


# ---------------------------------------------------------------------- every data line on its own
@pytest.mark.parametrize("name, text, message", [
    # Six numbers in three lines: a parser that only counts tokens would read 0->1, 2->3, 4->5.
    ("g.el", "0 1\n2\n3 4 5\n", r"g\.el:2: expected an edge 'U V' \(gapbs \.el\), got '2' \(1 field, not 2\)"),
    ("g.el", "# c\n0 1\n2 3 4\n5\n", r"g\.el:3: expected an edge 'U V' \(gapbs \.el\), got '2 3 4' \(3 fields, not 2\)"),
    ("g.wel", "0 1 2\n3 4\n5 6 7 8\n", r"g\.wel:2: expected an edge 'U V W' \(gapbs \.wel\), got '3 4' \(2 fields, not 3\)"),
    ("g.wel", "0 1\n2 3 4\n5\n", r"g\.wel:1: expected an edge 'U V W' \(gapbs \.wel\), got '0 1' \(2 fields\)"),
    # Fields, not numbers: the count is of whitespace-separated tokens, whatever they hold.
    ("g.el", "0 1\nx y z\n", r"g\.el:2: expected an edge 'U V' \(gapbs \.el\), got 'x y z' \(3 fields, not 2\)"),
    ("g.txt", "0 1\n1 2 7\n", r"g\.txt:2: expected an edge 'U V' or 'U V W' \(SNAP\), got '1 2 7' "
                              r"\(3 fields, not 2 like line 1\)"),
    ("g.mtx", "%%MatrixMarket matrix coordinate integer general\n5 5 3\n1 2\n3\n4 5 1\n",
     r"g\.mtx:3: expected 'ROW COL VALUE' \(integer value\), got '1 2' \(2 fields\)"),
    ("g.mtx", "%%MatrixMarket matrix coordinate integer general\n5 5 3\n1 2 3\n4\n5 1 1 1\n",
     r"g\.mtx:4: expected 'ROW COL VALUE' \(integer value\), got '4' \(1 field, not 3\)"),
    ("g.mtx", "%%MatrixMarket matrix coordinate pattern general\n5 5 2\n1 2\n3 4 5\n",
     r"g\.mtx:4: expected 'ROW COL', got '3 4 5' \(3 fields, not 2\)"),
    ("g.gr", "p sp 5 3\na 1 2 3\na 4\na 5 1 1 1\n", r"g\.gr:3: expected an arc line 'a U V W', got 'a 4' "
                                                   r"\(1 field, not 3\)"),
])
def test_ragged_lines_are_errors(tmp_path, name, text, message):
    with pytest.raises(GraphError, match=message):
        read_graph_file(write(tmp_path, name, text))


def test_regular_lines_still_parse_with_tabs_and_blank_lines(tmp_path):
    g = read_graph_file(write(tmp_path, "g.wel", "0\t1  5\n\n  2 0 7  \n# c\n1 2 0\n"))
    assert arcs(g) == {(0, 1, 5.0), (2, 0, 7.0), (1, 2, 0.0)}


# ---------------------------------------------------------------------- DIMACS header, huge ids, whole paths
@pytest.mark.parametrize("text, message", [
    ("p max 3 1\na 1 2 1\n", r"g\.gr:1: expected a problem line 'p sp NODES ARCS', got 'p max 3 1'"),
    ("c x\np sp 3\na 1 2 1\n", r"g\.gr:2: expected a problem line 'p sp NODES ARCS', got 'p sp 3'"),
    ("p sp 3 one\na 1 2 1\n", r"g\.gr:1: ARCS must be a non-negative integer, not 'one'"),
    ("p sp 1e3 1\na 1 2 1\n", r"g\.gr:1: NODES must be a non-negative integer, not '1e3'"),
    ("p sp 3 1\na 1 100000000000000000000 1\n",
     r"g\.gr:2: vertex ids must be in \[1, 3\], got \[1, 1e\+20\]"),
    ("p sp 99999999999 1\na 1 100000000000000000000 1\n",
     r"g\.gr:2: vertex ids must be in \[1, 2147483647\] \(ids are 32-bit\), got \[1, 1e\+20\]"),
    ("p sp 99999999999 1\na 1 2 1\n",
     r"g\.gr:1: 99999999999 vertices \(the problem line\) is more than the 2147483647 that 32-bit ids allow"),
])
def test_gr_header_and_huge_ids(tmp_path, text, message):
    with warnings.catch_warnings():
        warnings.simplefilter("error")          # no RuntimeWarning from a wrapped-around cast
        with pytest.raises(GraphError, match=message) as e:
            read_graph_file(write(tmp_path, "g.gr", text))
    assert str(e.value).startswith(str(tmp_path / "g.gr"))


@pytest.mark.parametrize("name, text, message", [
    ("g.el", "0 1\n5 100000000000000000000\n",
     r"g\.el:2: vertex ids must be in \[0, 2147483646\] \(ids are 32-bit\), got \[5, 1e\+20\]"),
    ("g.el", "0 2147483647\n", r"g\.el:1: vertex ids must be in \[0, 2147483646\]"),
    ("g.wel", "0 1 1\n3 9223372036854775808 1\n", r"g\.wel:2: vertex ids must be in \[0, 2147483646\]"),
    ("g.mtx", "%%MatrixMarket matrix coordinate pattern general\n1e20 1e20 1\n1 2\n",
     r"g\.mtx:2: 100000000000000000000 vertices \(the size line\) is more than the 2147483647"),
])
def test_huge_ids_name_the_line(tmp_path, name, text, message):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(GraphError, match=message):
            read_graph_file(write(tmp_path, name, text))


def test_largest_allowed_id_loads(tmp_path):
    # 2**31 - 2 is the largest 0-based id (2**31 - 1 vertices): accepted, not wrapped.
    f = write(tmp_path, "g.el", "2147483646 0\n")
    ids = _io_ids(f)
    assert ids.tolist() == [[2147483646, 0]]


def _io_ids(path):
    from golden.graphs.io import _ids, _read_lines, _table
    arr, lines = _table(path, _read_lines(path), 0, "'U V'", (2,), 2, ("#",))
    return _ids(path, arr, lines, 0, None, "vertex ids")


def test_from_edges_problems_name_the_whole_path_and_line(tmp_path):
    el = write(tmp_path, "g.el", "0 1\n# c\n1 7\n2 3\n")
    with pytest.raises(GraphError) as e:
        read_graph_file(el, vertices=5)
    assert str(e.value) == f"{el}:3: vertex count 5 is too small: the edges use vertex id 7 (0-based)"
    gr = write(tmp_path, "g.gr", "p sp 8 2\na 1 2 1\na 8 3 1\n")
    with pytest.raises(GraphError, match=rf"^{re.escape(str(gr))}:3: vertex count 4 is too small"):
        read_graph_file(gr, vertices=4)
    npz = tmp_path / "g.npz"
    read_graph_file(el).save_npz(npz)
    with pytest.raises(GraphError, match=rf"^{re.escape(str(npz))}: vertex count 3 is too small: .* id 7"):
        read_graph_file(npz, vertices=3)
    with pytest.raises(GraphError, match=rf"^{re.escape(str(el))}: 4294967296 vertices \(--vertices\) is more"):
        read_graph_file(el, vertices=1 << 32)


# ---------------------------------------------------------------------- corrupt .npz files
def test_corrupt_npz_is_a_graph_error(tmp_path):
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"PK\x03\x04garbage")
    with pytest.raises(GraphError, match=rf"^{re.escape(str(bad))}: cannot read graph \(BadZipFile"):
        read_graph_file(bad)
    with pytest.raises(GraphError, match=re.escape(str(bad))):
        load_graph(str(bad))
    # A real graph file cut short (a cache written by a killed process).
    good = tmp_path / "good.npz"
    kron(6, 4, seed=1).save_npz(good)
    cut = tmp_path / "cut.npz"
    cut.write_bytes(good.read_bytes()[: good.stat().st_size // 2])
    with pytest.raises(GraphError, match=rf"^{re.escape(str(cut))}: cannot read graph"):
        read_graph_file(cut)
    # A bare .npy array under an .npz name.
    npy = tmp_path / "array.npz"
    with open(npy, "wb") as f:
        np.save(f, np.arange(3))
    with pytest.raises(GraphError, match=rf"^{re.escape(str(npy))}: not a graphunits graph file"):
        read_graph_file(npy)
    # Random bytes: numpy's advice (allow_pickle) is not shown, it cannot apply to a graph file.
    noise = tmp_path / "noise.npz"
    noise.write_bytes(np.random.default_rng(1).integers(0, 256, 4096, dtype=np.uint8).tobytes())
    with pytest.raises(GraphError, match=rf"^{re.escape(str(noise))}: not a graphunits graph file \(\.npz"):
        read_graph_file(noise)


def _csr_file(path, row_ptr, col, directed, weight=None):
    arrays = dict(format="graphunits-csr-1", row_ptr=np.array(row_ptr, np.int64), col=np.array(col, np.int32),
                  directed=directed, name="g")
    if weight is not None:
        arrays["weight"] = np.array(weight, float)
    np.savez(path, **arrays)
    return path


@pytest.mark.parametrize("row_ptr, col, directed, weight, message", [
    ([0, 1, 2, 2], [1, 2], False, None, "marked undirected, but the arc 0 -> 1 has no reverse arc 1 -> 0"),
    ([0, 0, 1, 2], [0, 1], False, None, "marked undirected, but the arc 1 -> 0 has no reverse arc 0 -> 1"),
    ([0, 1, 2], [1, 0], False, [1.0, 2.0], "marked undirected, but the arc 0 -> 1 weighs 1 and its reverse 2"),
    ([0, 2, 2], [1, 1], True, None, "the neighbours of vertex 0 are repeated or out of order"),
    ([0, 0, 2, 2], [2, 0], True, None, "the neighbours of vertex 1 are repeated or out of order (they must "
                                       "increase strictly: 2 then 0)"),
    ([0, 1, 1], [0], True, None, "vertex 0 has a self loop"),
    ([0, 1, 2], [1, 0], False, [np.nan, np.nan], "edge weights must not be NaN"),
])
def test_a_graph_file_that_breaks_the_graph_rules_is_refused(tmp_path, row_ptr, col, directed, weight, message):
    """A user's .npz is held to the rules every graph is built by (no self loop, no
    duplicate, sorted rows, undirected = symmetric with equal weights): results on
    it would otherwise be silently those of another graph (an asymmetric
    'undirected' file gave BFS depths of a directed one)."""
    f = _csr_file(tmp_path / "g.npz", row_ptr, col, directed, weight)
    with pytest.raises(GraphError, match=rf"^{re.escape(str(f))}: " + re.escape(message)):
        read_graph_file(f)
    with pytest.raises(GraphError, match=re.escape(message)):
        load_graph(str(f))


@pytest.mark.parametrize("arrays, message", [
    ({"col": np.array([(1 << 32) + 1], np.int64)}, "column ids must lie in [0, 2147483647]"),
    ({"row_ptr": np.array([0.0, 1.7])}, "'row_ptr' is missing or not integers"),
    ({"directed": np.array("no")}, "'directed' is missing or not a boolean"),
    ({"directed": np.array([True, False])}, "'directed' must be one boolean"),
])
def test_a_graph_file_with_arrays_of_the_wrong_kind_is_refused(tmp_path, arrays, message):
    """Values are checked before they are converted (an int64 id past 32 bits was
    wrapped to another vertex, a fractional row pointer truncated, any string read
    as directed)."""
    base = dict(format="graphunits-csr-1", row_ptr=np.array([0, 1], np.int64), col=np.array([0], np.int32),
                directed=np.bool_(True), name="g")
    np.savez(tmp_path / "g.npz", **{**base, **arrays})
    with pytest.raises(GraphError, match=re.escape(message)):
        read_graph_file(tmp_path / "g.npz")


def test_graph_files_written_by_graphunits_keep_the_rules(tmp_path):
    for g in (kron(7, 4, seed=2).with_weights(3), urand(7, 4), grid(5, 6), CSRGraph.from_edges([0, 1], [1, 2])):
        f = tmp_path / "g.npz"
        g.save_npz(f)
        h = read_graph_file(f)
        assert np.array_equal(h.row_ptr, g.row_ptr) and np.array_equal(h.col, g.col) and h.directed == g.directed
    # a directed file needs no reverse arcs
    assert read_graph_file(_csr_file(tmp_path / "d.npz", [0, 1, 1], [1], True)).num_edges == 1


def test_corrupt_cache_entry_is_rebuilt(tmp_path, monkeypatch):
    monkeypatch.setenv("GRAPHUNITS_CACHE_DIR", str(tmp_path / "cache"))
    el = write(tmp_path, "g.el", "0 1\n1 2\n2 0\n")
    ref = arcs(load_graph(str(el)))
    (entry,) = (tmp_path / "cache").glob("*.npz")
    for junk in (b"PK\x03\x04garbage", b"", entry.read_bytes()[:40]):
        entry.write_bytes(junk)
        assert arcs(load_graph(str(el))) == ref == {(0, 1), (1, 2), (2, 0)}
        assert load_graph(str(el)).num_edges == 3


# ---------------------------------------------------------------------- audit: specs, ids, paths
@pytest.mark.parametrize("spec, message", [
    ("kron:scale=3,scale=4", "graph spec 'kron:scale=3,scale=4': scale is given twice"),
    ("grid:4x4,seed=1,seed=2", "seed is given twice"),
    ("kron:scale=99", "graph spec 'kron:scale=99': kron scale must be an integer in [1, 28], not 99"),
    ("urand:scale=4,edgefactor=0", "urand edgefactor must be an integer in [1, 1024], not 0"),
    ("grid:0x4", "grid rows must be an integer in [1, 16384], not 0"),
    ("kron:scale=4,seed=-1", "kron seed must be an integer in [0, "),
])
def test_parse_spec_rejects_duplicates_and_out_of_range_values(spec, message):
    # parse_spec checks the ranges itself (sweep --dry-run parses without generating)
    with pytest.raises(GraphError) as e:
        parse_spec(spec)
    assert message in str(e.value) and "\n" not in str(e.value)


@pytest.mark.parametrize("ids", [[0.5], [1.0, 2.5], [float("nan")], [True], ["a"]])
def test_from_edges_rejects_non_integer_ids(ids):
    with pytest.raises(GraphError, match="vertex ids must be integers"):
        CSRGraph.from_edges(ids, [1] * len(ids))
    with pytest.raises(GraphError, match="destination vertex ids must be integers"):
        CSRGraph.from_edges([1] * len(ids), ids)


def test_from_edges_takes_integral_floats_and_unsigned_ids():
    g = CSRGraph.from_edges(np.array([0.0, 1.0]), np.array([1, 2], np.uint8))
    assert g.num_vertices == 3 and g.col.tolist() == [1, 2]


def test_load_graph_takes_a_path_object(tmp_path):
    import pathlib
    p = tmp_path / "g.el"
    p.write_text("0 1\n1 2\n")
    g = load_graph(pathlib.Path(p), cache=False)
    assert g.num_vertices == 3 and g.num_edges == 2
    with pytest.raises(GraphError, match="does not exist"):
        load_graph(tmp_path / "missing.el", cache=False)
