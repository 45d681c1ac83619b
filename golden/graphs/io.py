"""Graph file loaders (docs/golden.md, "Graphs").

| extension | format | ids | weights |
|---|---|---|---|
| ``.mtx`` | Matrix Market coordinate (pattern, integer, real; general or symmetric) | 1-based | integer/real |
| ``.el`` | gapbs edge list ``u v`` | 0-based | – |
| ``.wel`` | gapbs weighted edge list ``u v w`` | 0-based | yes |
| ``.gr`` | DIMACS shortest-path ``p sp n m`` / ``a u v w`` (``c`` comments) | 1-based | yes |
| ``.txt``, ``.snap``, ``.edges``, ``.tsv`` | SNAP edge list (``#`` comments) ``u v [w]`` | 0-based | optional |
| ``.npz`` | graphunits' own cache (:meth:`CSRGraph.save_npz`) | – | – |

A malformed file raises :class:`GraphError` with ``file:line: expected ...``.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from .csr import CSRGraph, GraphError, load_npz

__all__ = ["read_graph_file", "FILE_FORMATS"]

FILE_FORMATS = {
    ".mtx": "Matrix Market", ".el": "gapbs edge list", ".wel": "gapbs weighted edge list",
    ".gr": "DIMACS", ".txt": "SNAP edge list", ".snap": "SNAP edge list", ".edges": "SNAP edge list",
    ".tsv": "SNAP edge list", ".npz": "graphunits graph",
}


def _is_comment(line: str, prefixes: tuple[str, ...]) -> bool:
    s = line.strip()
    return not s or s.startswith(prefixes)


def _number(tok: str, integer: bool) -> bool:
    try:
        v = float(tok)
    except ValueError:
        return False
    if not np.isfinite(v):
        return False
    return not integer or v == int(v)


def _find_bad_line(path, lines, start: int, what: str, ncols: tuple[int, ...], int_cols: int,
                   prefixes, skip_token: str | None = None):
    """Line-by-line validation, only run once the fast parse failed: raise for the first bad line."""
    for no, line in enumerate(lines[start:], start + 1):
        if _is_comment(line, prefixes):
            continue
        toks = line.split()
        if skip_token is not None:
            if toks[0] != skip_token:
                raise GraphError(f"{path}:{no}: expected {what}, got {line.strip()!r}")
            toks = toks[1:]
        if len(toks) not in ncols or not all(_number(t, i < int_cols) for i, t in enumerate(toks)):
            raise GraphError(f"{path}:{no}: expected {what}, got {line.strip()!r}")
    raise GraphError(f"{path}: expected {what} on every data line")  # pragma: no cover - defensive


def _table(path, lines, start: int, what: str, ncols: tuple[int, ...], int_cols: int, prefixes,
           skip_token: str | None = None):
    """Parse whitespace-separated numeric data lines into an ``(n, k)`` float64 array
    and the 1-based file line of every row."""
    rows, linenos = [], []
    for no, line in enumerate(lines[start:], start + 1):
        if not _is_comment(line, prefixes):
            rows.append(line)
            linenos.append(no)
    if not rows:
        return np.zeros((0, ncols[0])), np.zeros(0, np.int64)
    first = rows[0].split()
    if skip_token is not None:
        first = first[1:]
    k = len(first)
    if k not in ncols:
        _find_bad_line(path, lines, start, what, ncols, int_cols, prefixes, skip_token)
    toks = " ".join(rows).split()
    if skip_token is not None:
        toks_arr = np.array(toks, dtype=object)
        if toks_arr.size != (k + 1) * len(rows) or np.any(toks_arr[::k + 1] != skip_token):
            _find_bad_line(path, lines, start, what, (k,), int_cols, prefixes, skip_token)
        toks = toks_arr.reshape(len(rows), k + 1)[:, 1:].ravel().tolist()
    if len(toks) != k * len(rows):
        _find_bad_line(path, lines, start, what, (k,), int_cols, prefixes, skip_token)
    try:
        arr = np.array(toks, dtype=np.float64).reshape(len(rows), k)
    except ValueError:
        _find_bad_line(path, lines, start, what, (k,), int_cols, prefixes, skip_token)
    bad = ~np.isfinite(arr).all(axis=1)
    if int_cols:
        bad |= (arr[:, :int_cols] != np.floor(arr[:, :int_cols])).any(axis=1)
    if bad.any():
        i = int(np.argmax(bad))
        raise GraphError(f"{path}:{linenos[i]}: expected {what}, got {rows[i].strip()!r}")
    return arr, np.asarray(linenos, np.int64)


def _check_ids(path, ids, linenos, lo: int, hi: int | None, what: str):
    bad = ids < lo if hi is None else (ids < lo) | (ids > hi)
    if bad.any():
        i = int(np.argmax(bad.any(axis=1) if bad.ndim > 1 else bad))
        rng = f">= {lo}" if hi is None else f"in [{lo}, {hi}]"
        raise GraphError(f"{path}:{linenos[i]}: {what} must be {rng}, got {ids[i].astype(np.int64).tolist()}")


def _read_lines(path: Path) -> list[str]:
    try:
        return path.read_text().splitlines()
    except UnicodeDecodeError as e:
        raise GraphError(f"{path}: not a text file ({e.reason} at byte {e.start})") from None


def _mtx(path: Path, undirected, vertices, name):
    lines = _read_lines(path)
    if not lines or not lines[0].lower().startswith("%%matrixmarket"):
        raise GraphError(f"{path}:1: expected a '%%MatrixMarket matrix coordinate FIELD SYMMETRY' header")
    head = lines[0].split()
    if len(head) != 5 or head[1].lower() != "matrix":
        raise GraphError(f"{path}:1: expected '%%MatrixMarket matrix coordinate FIELD SYMMETRY', got {lines[0]!r}")
    fmt, fld, sym = head[2].lower(), head[3].lower(), head[4].lower()
    if fmt != "coordinate":
        raise GraphError(f"{path}:1: only the 'coordinate' format holds a graph, not {fmt!r}")
    if fld not in ("pattern", "integer", "real"):
        raise GraphError(f"{path}:1: field must be pattern, integer or real, not {fld!r}")
    if sym not in ("general", "symmetric"):
        raise GraphError(f"{path}:1: symmetry must be general or symmetric, not {sym!r}")
    i = 1
    while i < len(lines) and _is_comment(lines[i], ("%",)):
        i += 1
    if i == len(lines):
        raise GraphError(f"{path}: expected a size line 'ROWS COLS ENTRIES' after the header")
    size = lines[i].split()
    if len(size) != 3 or not all(_number(t, True) and float(t) >= 0 for t in size):
        raise GraphError(f"{path}:{i + 1}: expected a size line 'ROWS COLS ENTRIES', got {lines[i].strip()!r}")
    rows, cols, nnz = (int(float(t)) for t in size)
    k = 2 if fld == "pattern" else 3
    what = "'ROW COL'" if k == 2 else f"'ROW COL VALUE' ({fld} value)"
    arr, linenos = _table(path, lines, i + 1, what, (k,), 2 if fld != "integer" else 3, ("%",))
    if arr.shape[0] != nnz:
        raise GraphError(f"{path}: the size line announces {nnz} entries, the file holds {arr.shape[0]}")
    ids = arr[:, :2].astype(np.int64)
    _check_ids(path, ids[:, :1], linenos, 1, rows, "row index")
    _check_ids(path, ids[:, 1:2], linenos, 1, cols, "column index")
    w = arr[:, 2] if k == 3 else None
    V = max(rows, cols) if vertices is None else vertices
    directed = not (sym == "symmetric" or undirected)
    return CSRGraph.from_edges(ids[:, 0] - 1, ids[:, 1] - 1, w, num_vertices=V, directed=directed, name=name)


def _gr(path: Path, undirected, vertices, name):
    lines = _read_lines(path)
    i = 0
    while i < len(lines) and _is_comment(lines[i], ("c",)):
        i += 1
    if i == len(lines):
        raise GraphError(f"{path}: expected a problem line 'p sp NODES ARCS'")
    p = lines[i].split()
    if len(p) != 4 or p[0] != "p" or not all(_number(t, True) for t in p[2:]):
        raise GraphError(f"{path}:{i + 1}: expected a problem line 'p sp NODES ARCS', got {lines[i].strip()!r}")
    n, m = int(p[2]), int(p[3])
    arr, linenos = _table(path, lines, i + 1, "an arc line 'a U V W'", (3,), 2, ("c",), skip_token="a")
    if arr.shape[0] != m:
        raise GraphError(f"{path}: the problem line announces {m} arcs, the file holds {arr.shape[0]}")
    ids = arr[:, :2].astype(np.int64)
    _check_ids(path, ids, linenos, 1, n, "vertex ids")
    V = n if vertices is None else vertices
    return CSRGraph.from_edges(ids[:, 0] - 1, ids[:, 1] - 1, arr[:, 2], num_vertices=V,
                               directed=not undirected, name=name)


def _edge_list(path: Path, undirected, vertices, name, ncols, prefixes, label):
    lines = _read_lines(path)
    what = {(2,): "'U V'", (3,): "'U V W'", (2, 3): "'U V' or 'U V W'"}[ncols]
    arr, linenos = _table(path, lines, 0, f"an edge {what} ({label})", ncols, 2, prefixes)
    ids = arr[:, :2].astype(np.int64)
    _check_ids(path, ids, linenos, 0, None, "vertex ids")
    w = arr[:, 2] if arr.shape[1] == 3 else None
    return CSRGraph.from_edges(ids[:, 0], ids[:, 1], w, num_vertices=vertices, directed=not undirected, name=name)


def read_graph_file(path, *, undirected: bool | None = None, vertices: int | None = None) -> CSRGraph:
    """Load a graph file; the format comes from the extension (:data:`FILE_FORMATS`).

    ``undirected=True`` symmetrizes the edges (``None``: as the file says: only
    Matrix Market ``symmetric`` files are undirected); ``vertices`` sets the
    vertex count (at least the largest id + 1)."""
    path = Path(path)
    if not path.exists():
        raise GraphError(f"graph file {path} does not exist")
    if not path.is_file():
        raise GraphError(f"graph file {path} is not a file")
    ext = path.suffix.lower()
    name = path.stem
    if ext == ".npz":
        g = load_npz(path)
        if undirected and g.directed:
            g = CSRGraph.from_edges(g.src(), g.col, g.weight, num_vertices=vertices or g.num_vertices,
                                    directed=False, name=g.name)
        elif vertices is not None and vertices != g.num_vertices:
            g = CSRGraph.from_edges(g.src(), g.col, g.weight, num_vertices=vertices, directed=g.directed,
                                    name=g.name)
        return g
    if ext == ".mtx":
        return _mtx(path, undirected, vertices, name)
    if ext == ".gr":
        return _gr(path, undirected, vertices, name)
    if ext == ".el":
        return _edge_list(path, undirected, vertices, name, (2,), ("#", "%"), "gapbs .el")
    if ext == ".wel":
        return _edge_list(path, undirected, vertices, name, (3,), ("#", "%"), "gapbs .wel")
    if ext in (".txt", ".snap", ".edges", ".tsv"):
        return _edge_list(path, undirected, vertices, name, (2, 3), ("#", "%"), "SNAP")
    allowed = " ".join(sorted(FILE_FORMATS))
    raise GraphError(f"{path}: unknown graph file extension {ext or '(none)'!r}; known: {allowed}")
