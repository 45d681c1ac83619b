"""Graph file loaders (docs/golden.md, "Graphs").

| extension | format | ids | weights |
|---|---|---|---|
| ``.mtx`` | Matrix Market coordinate (pattern, integer, real; general or symmetric) | 1-based | integer/real |
| ``.el`` | gapbs edge list ``u v`` | 0-based | – |
| ``.wel`` | gapbs weighted edge list ``u v w`` | 0-based | yes |
| ``.gr`` | DIMACS shortest-path ``p sp n m`` / ``a u v w`` (``c`` comments) | 1-based | yes |
| ``.txt``, ``.snap``, ``.edges``, ``.tsv`` | SNAP edge list (``#`` comments) ``u v [w]`` | 0-based | optional |
| ``.npz`` | graphunits' own cache (:meth:`CSRGraph.save_npz`) | – | – |

A malformed file raises :class:`GraphError` with ``file:line: expected ..., got
'...'``: every data line is checked on its own (its column count too, so a short
line followed by a long one is an error, not two shifted edges); ids are checked
against the header and against 32 bits before any integer conversion; problems
found while building the CSR name the file (and the line of the offending id).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from .csr import MAX_VERTICES, CSRGraph, GraphError, load_npz

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


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def _table(path, lines, start: int, what: str, ncols: tuple[int, ...], int_cols: int, prefixes,
           skip_token: str | None = None):
    """Parse whitespace-separated numeric data lines into an ``(n, k)`` float64 array
    and the 1-based file line of every row.

    Every data line is checked on its own: it must start with ``skip_token`` (when
    given) and hold ``k`` whitespace-separated fields, ``k`` the field count of the
    first data line (one of ``ncols``); every field must be a number, the first
    ``int_cols`` integers; no value may be NaN or infinite. The first line that breaks a rule raises :class:`GraphError`
    ``file:line: expected ..., got '...'``. Lines that are blank or start with one of
    ``prefixes`` are comments. (numpy's C reader does the work; when it fails, the
    lines are parsed again one by one to name the culprit.)"""
    body = lines[start:]
    keep = [i for i, ln in enumerate(body) if (t := ln.lstrip()) and not t.startswith(prefixes)]
    if not keep:
        return np.zeros((0, ncols[0])), np.zeros(0, np.int64)
    rows = body if len(keep) == len(body) else [body[i] for i in keep]
    linenos = np.asarray(keep, np.int64) + (start + 1)

    def fail(i: int, why: str = ""):
        no = int(linenos[i])
        raise GraphError(f"{path}:{no}: expected {what}, got {lines[no - 1].strip()!r}{why}")

    arr = None
    fast = rows
    if skip_token is not None:
        n = len(skip_token)
        fast = [t[n:] for t in map(str.lstrip, rows) if t.startswith(skip_token) and t[n:n + 1].isspace()]
        if len(fast) != len(rows):
            fast = None
    if fast is not None:
        try:
            arr = np.loadtxt(fast, dtype=np.float64, comments=None, ndmin=2)
        except ValueError:
            arr = None
    if arr is None or arr.shape[1] not in ncols:
        arr = _table_by_line(rows, ncols, skip_token, fail, int(linenos[0]))
    bad = ~np.isfinite(arr).all(axis=1)
    if int_cols:
        bad |= (arr[:, :int_cols] != np.floor(arr[:, :int_cols])).any(axis=1)
    if bad.any():
        fail(int(np.argmax(bad)))
    return arr, linenos


def _table_by_line(rows, ncols, skip_token, fail, first_line: int) -> np.ndarray:
    """The slow, precise parse of :func:`_table`: one line at a time."""
    off = 0 if skip_token is None else 1
    k = None
    out = []
    for i, row in enumerate(rows):
        toks = row.split()
        if off and toks[0] != skip_token:
            fail(i)
        toks = toks[off:]
        if k is None:
            k = len(toks)
            if k not in ncols:
                fail(i, f" ({_plural(k, 'field')})")
        elif len(toks) != k:
            first = "" if len(ncols) == 1 else f" like line {first_line}"
            fail(i, f" ({_plural(len(toks), 'field')}, not {k}{first})")
        try:
            out.append([float(t) for t in toks])
        except ValueError:
            fail(i)
    return np.array(out, dtype=np.float64).reshape(len(rows), k)


def _ids(path, arr, linenos, lo: int, hi: int | None, what: str) -> np.ndarray:
    """The id columns of ``arr`` as int64, checked against ``[lo, hi]`` (``hi`` None:
    the largest id that 32-bit ids allow) before the conversion, so that an id too
    large for any integer type is reported, not wrapped around."""
    top = MAX_VERTICES - 1 + lo
    if hi is None or hi > top:
        hi, rng = top, f"in [{lo}, {top}] (ids are 32-bit)"
    else:
        rng = f"in [{lo}, {hi}]"
    bad = ((arr < lo) | (arr > hi)).any(axis=1)
    if bad.any():
        i = int(np.argmax(bad))
        shown = [int(x) if abs(x) < 2**63 else float(x) for x in arr[i].tolist()]
        raise GraphError(f"{path}:{linenos[i]}: {what} must be {rng}, got {shown}")
    return arr.astype(np.int64)


def _build(path, src, dst, w, linenos, vertices, directed: bool, name: str, count_line: int | None = None,
           count_what: str = "--vertices"):
    """``CSRGraph.from_edges`` for a file's edges; the problems it could find are
    reported here with the file (and the line) to blame."""
    if vertices is not None:
        if isinstance(vertices, bool) or not isinstance(vertices, (int, np.integer)) or vertices < 0:
            raise GraphError(f"{path}: the vertex count must be a non-negative integer, not {vertices!r}")
        where = f"{path}:{count_line}" if count_line else str(path)
        if vertices > MAX_VERTICES:
            raise GraphError(f"{where}: {vertices} vertices ({count_what}) is more than the {MAX_VERTICES} "
                             f"that 32-bit ids allow")
        if src.size:
            ids = np.maximum(src, dst)
            i = int(np.argmax(ids))
            if ids[i] >= vertices:
                at = str(path) if linenos is None else f"{path}:{linenos[i]}"
                raise GraphError(f"{at}: vertex count {vertices} is too small: the edges use vertex id "
                                 f"{int(ids[i])} (0-based)")
    try:
        return CSRGraph.from_edges(src, dst, w, num_vertices=vertices, directed=directed, name=name)
    except GraphError as e:
        msg = str(e)
        raise GraphError(f"{path}: {msg[len(name) + 2:] if msg.startswith(name + ': ') else msg}") from None


def _header_int(path, lineno: int, tok: str, what: str, line: str) -> int:
    if not tok.isdigit():
        raise GraphError(f"{path}:{lineno}: {what} must be a non-negative integer, not {tok!r} in {line.strip()!r}")
    return int(tok)


def _read_lines(path: Path) -> list[str]:
    try:
        return path.read_text(encoding="utf-8-sig").splitlines()      # (a byte order mark is not data)
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
    r = _ids(path, arr[:, :1], linenos, 1, rows, "row index")[:, 0]
    c = _ids(path, arr[:, 1:2], linenos, 1, cols, "column index")[:, 0]
    w = arr[:, 2] if k == 3 else None
    directed = not (sym == "symmetric" or undirected)
    if vertices is None:
        return _build(path, r - 1, c - 1, w, linenos, max(rows, cols), directed, name, i + 1, "the size line")
    return _build(path, r - 1, c - 1, w, linenos, vertices, directed, name)


def _gr(path: Path, undirected, vertices, name):
    lines = _read_lines(path)
    i = 0
    while i < len(lines) and _is_comment(lines[i], ("c",)):
        i += 1
    if i == len(lines):
        raise GraphError(f"{path}: expected a problem line 'p sp NODES ARCS'")
    p = lines[i].split()
    if len(p) != 4 or p[0] != "p" or p[1] != "sp":
        raise GraphError(f"{path}:{i + 1}: expected a problem line 'p sp NODES ARCS', got {lines[i].strip()!r}")
    n = _header_int(path, i + 1, p[2], "NODES", lines[i])
    m = _header_int(path, i + 1, p[3], "ARCS", lines[i])
    arr, linenos = _table(path, lines, i + 1, "an arc line 'a U V W'", (3,), 2, ("c",), skip_token="a")
    if arr.shape[0] != m:
        raise GraphError(f"{path}: the problem line announces {m} arcs, the file holds {arr.shape[0]}")
    ids = _ids(path, arr[:, :2], linenos, 1, n, "vertex ids")
    if vertices is None:
        return _build(path, ids[:, 0] - 1, ids[:, 1] - 1, arr[:, 2], linenos, n, not undirected, name, i + 1,
                      "the problem line")
    return _build(path, ids[:, 0] - 1, ids[:, 1] - 1, arr[:, 2], linenos, vertices, not undirected, name)


def _edge_list(path: Path, undirected, vertices, name, ncols, prefixes, label):
    lines = _read_lines(path)
    what = {(2,): "'U V'", (3,): "'U V W'", (2, 3): "'U V' or 'U V W'"}[ncols]
    arr, linenos = _table(path, lines, 0, f"an edge {what} ({label})", ncols, 2, prefixes)
    ids = _ids(path, arr[:, :2], linenos, 0, None, "vertex ids")
    w = arr[:, 2] if arr.shape[1] == 3 else None
    return _build(path, ids[:, 0], ids[:, 1], w, linenos, vertices, not undirected, name)


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
        g = load_npz(path, check=True)
        if (undirected and g.directed) or (vertices is not None and vertices != g.num_vertices):
            src = g.src()
            g = _build(path, src, g.col.astype(np.int64), g.weight, None,
                       g.num_vertices if vertices is None else vertices,
                       g.directed and not undirected, g.name)
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
