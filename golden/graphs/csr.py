"""Compressed sparse row graphs (docs/golden.md, "Graphs").

A :class:`CSRGraph` holds ``row_ptr`` (int64, ``V + 1``), ``col`` (int32, sorted
within each row), an optional ``weight`` (float64) and whether it is directed.
Every graph is built by :meth:`CSRGraph.from_edges`, which applies the rules the
whole project relies on:

* self loops are dropped;
* duplicate edges are merged, keeping the minimum weight;
* an undirected graph stores each edge in both directions (``num_edges`` counts
  those arcs), both with the same weight;
* the vertex count is the largest id + 1 unless given (larger is allowed, so
  isolated trailing vertices are kept; smaller is an error).
"""
from __future__ import annotations

import zipfile
import zlib
from dataclasses import dataclass, field

import numpy as np

__all__ = ["CSRGraph", "GraphError", "edge_weights"]

#: Vertex ids are stored in 32 bits (the units' elements are 4 bytes).
MAX_VERTICES = (1 << 31) - 1


class GraphError(ValueError):
    """A malformed graph file, a bad graph spec or an impossible graph."""


def _vertex_ids(ids, name: str, what: str) -> np.ndarray:
    """``ids`` as a flat int64 array; integers only (a float id such as 0.5 is an
    error, not truncated; an integral float such as 2.0 is taken; bools are not ids)."""
    a = np.asarray(ids)
    if a.dtype.kind in "iu":
        if a.dtype.kind == "u" and a.size and a.max() > np.iinfo(np.int64).max:
            raise GraphError(f"{name}: {what} vertex id {int(a.max())} is too large")
        return a.astype(np.int64).reshape(-1)
    if a.dtype.kind == "f":
        flat = a.reshape(-1)
        bad = ~np.isfinite(flat) | (flat != np.floor(flat)) | (np.abs(flat) >= 2.0**63)
        if bad.any():
            raise GraphError(f"{name}: {what} vertex ids must be integers, not {float(flat[np.argmax(bad)])!r}")
        return flat.astype(np.int64)
    if a.size == 0 and a.dtype.kind in "fO":
        return np.zeros(0, np.int64)
    kind = "booleans" if a.dtype.kind == "b" else f"{a.dtype} values"
    raise GraphError(f"{name}: {what} vertex ids must be integers, not {kind}")


@dataclass(eq=False)
class CSRGraph:
    """A graph in compressed sparse row form. Build it with :meth:`from_edges`."""

    row_ptr: np.ndarray
    col: np.ndarray
    weight: np.ndarray | None = None
    directed: bool = True
    name: str = "graph"
    meta: dict = field(default_factory=dict)

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_edges(cls, src, dst, weight=None, *, num_vertices: int | None = None, directed: bool = True,
                   name: str = "graph", meta: dict | None = None) -> "CSRGraph":
        """Build a graph from edge lists (see the module docstring for the rules)."""
        src = _vertex_ids(src, name, "source")
        dst = _vertex_ids(dst, name, "destination")
        if src.shape != dst.shape:
            raise GraphError(f"{name}: {src.size} sources for {dst.size} destinations")
        w = None
        if weight is not None:
            w = np.asarray(weight, dtype=np.float64).reshape(-1)
            if w.shape != src.shape:
                raise GraphError(f"{name}: {w.size} weights for {src.size} edges")
            if np.isnan(w).any():
                raise GraphError(f"{name}: edge weights must not be NaN")
        if src.size and (src.min() < 0 or dst.min() < 0):
            raise GraphError(f"{name}: vertex ids must be non-negative")
        need = int(max(src.max(), dst.max())) + 1 if src.size else 0
        if num_vertices is None:
            V = need
        else:
            if isinstance(num_vertices, bool) or not isinstance(num_vertices, (int, np.integer)):
                raise GraphError(f"{name}: the vertex count must be an integer, not {num_vertices!r}")
            V = int(num_vertices)
            if V < need:
                raise GraphError(f"{name}: vertex count {V} is too small: the edges use vertex id {need - 1}")
        if V > MAX_VERTICES:
            raise GraphError(f"{name}: {V} vertices is more than the {MAX_VERTICES} that 32-bit ids allow")
        keep = src != dst
        src, dst = src[keep], dst[keep]
        if w is not None:
            w = w[keep]
        if not directed:
            src, dst = np.concatenate([src, dst]), np.concatenate([dst, src])
            if w is not None:
                w = np.concatenate([w, w])
        # Sort by (src, dst, weight) so the first of each duplicate run has the minimum weight.
        key = src * max(V, 1) + dst
        order = np.lexsort((w, key)) if w is not None else np.argsort(key, kind="stable")
        key = key[order]
        first = np.ones(key.size, bool)
        first[1:] = key[1:] != key[:-1]
        sel = order[first]
        s, d = src[sel], dst[sel]
        counts = np.bincount(s, minlength=V) if V else np.zeros(0, np.int64)
        row_ptr = np.zeros(V + 1, np.int64)
        np.cumsum(counts, out=row_ptr[1:])
        g = cls(row_ptr, d.astype(np.int32), None if w is None else w[sel], bool(directed), name, dict(meta or {}))
        return g

    # ------------------------------------------------------------------ properties
    @property
    def num_vertices(self) -> int:
        return int(self.row_ptr.size - 1)

    @property
    def num_edges(self) -> int:
        """Stored arcs (an undirected edge counts twice)."""
        return int(self.col.size)

    @property
    def weighted(self) -> bool:
        return self.weight is not None

    def degrees(self) -> np.ndarray:
        """Out-degree of every vertex (int64)."""
        return np.diff(self.row_ptr)

    def src(self) -> np.ndarray:
        """Source vertex of every stored arc (int64), aligned with ``col``."""
        return np.repeat(np.arange(self.num_vertices, dtype=np.int64), self.degrees())

    def neighbors(self, v: int) -> np.ndarray:
        return self.col[self.row_ptr[v]:self.row_ptr[v + 1]]

    # ------------------------------------------------------------------ variants
    def transpose(self) -> "CSRGraph":
        """The graph with every arc reversed (CSC of this one)."""
        if not self.directed:
            return self
        return CSRGraph.from_edges(self.col, self.src(), self.weight, num_vertices=self.num_vertices,
                                   directed=True, name=self.name + "^T", meta=self.meta)

    def with_weights(self, seed: int = 1, lo: int = 1, hi: int = 255) -> "CSRGraph":
        """A copy with integer weights in ``[lo, hi]`` (replacing any weights): a
        splitmix64 hash of the edge's end points and ``seed`` (:func:`edge_weights`),
        so both directions of an undirected edge get the same one."""
        return CSRGraph(self.row_ptr, self.col, edge_weights(self.src(), self.col, seed, lo, hi,
                                                             self.directed, self.num_vertices),
                        self.directed, self.name, dict(self.meta, weight_seed=seed))

    def unweighted(self) -> "CSRGraph":
        return CSRGraph(self.row_ptr, self.col, None, self.directed, self.name, dict(self.meta))

    # ------------------------------------------------------------------ reports and files
    def summary(self) -> dict:
        deg = self.degrees()
        return {"name": self.name, "vertices": self.num_vertices, "edges": self.num_edges,
                "directed": self.directed, "weighted": self.weighted,
                "max_degree": int(deg.max()) if deg.size else 0,
                "avg_degree": float(deg.mean()) if deg.size else 0.0}

    def save_npz(self, path) -> None:
        """Write the graph as ``.npz`` (the cache format; :func:`load_npz` reads it)."""
        arrays = {"format": np.array("graphunits-csr-1"), "row_ptr": self.row_ptr, "col": self.col,
                  "directed": np.array(self.directed), "name": np.array(self.name)}
        if self.weight is not None:
            arrays["weight"] = self.weight
        np.savez(path, **arrays)

    def __repr__(self) -> str:
        kind = "directed" if self.directed else "undirected"
        w = ", weighted" if self.weighted else ""
        return f"CSRGraph({self.name!r}, {self.num_vertices} vertices, {self.num_edges} arcs, {kind}{w})"


def edge_weights(src, dst, seed: int, lo: int, hi: int, directed: bool, num_vertices: int) -> np.ndarray:
    """Seeded integer weights in ``[lo, hi]`` per edge, a function of the edge's end
    points only (so both arcs of an undirected edge agree and the weights do not
    depend on the order of the edges).

    With ``u, v`` the end points (``min, max`` of them for an undirected graph),
    ``V`` the vertex count and all arithmetic modulo 2**64::

        phi = 0x9E3779B97F4A7C15
        x = u * V + v + (seed + 1) * phi
        x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9
        x = (x ^ (x >> 27)) * 0x94D049BB133111EB
        x = x ^ (x >> 31)                 # the splitmix64 finaliser
        w = lo + x % (hi - lo + 1)

    A hash, not a draw from a random generator: the weights are close to uniform
    (modulo bias below 2**-55 for the default range) and repeatable from ``seed``."""
    if not (isinstance(lo, int) and isinstance(hi, int) and 0 <= lo <= hi):
        raise GraphError(f"weight range must be integers 0 <= lo <= hi, not [{lo}, {hi}]")
    s = np.asarray(src, dtype=np.uint64)
    d = np.asarray(dst, dtype=np.uint64)
    if not directed:
        s, d = np.minimum(s, d), np.maximum(s, d)
    # splitmix64 of (edge, seed); wrap-around arithmetic is intended
    with np.errstate(over="ignore"):
        mix = (int(seed) * 0x9E3779B97F4A7C15 + 0x9E3779B97F4A7C15) & (2**64 - 1)
        x = s * np.uint64(max(num_vertices, 1)) + d + np.uint64(mix)
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        x = x ^ (x >> np.uint64(31))
    return (lo + (x % np.uint64(hi - lo + 1))).astype(np.float64)


def load_npz(path, *, check: bool = False) -> CSRGraph:
    """Read a graph written by :meth:`CSRGraph.save_npz`. ``check`` (a file a user
    gives, not the cache's own): also the rules :meth:`CSRGraph.from_edges` applies
    (columns strictly increasing within a row: no duplicate; no self loop; an
    undirected graph symmetric, each arc's reverse with the same weight; no NaN
    weight), so that a file breaking them is an error, not a silently different graph."""
    try:
        # The file is opened here so that it is closed even when numpy cannot read it.
        with open(path, "rb") as f:
            z = np.load(f, allow_pickle=False)
            if not isinstance(z, np.lib.npyio.NpzFile):      # a bare .npy array
                raise GraphError(f"{path}: not a graphunits graph file (.npz written by graphunits)")
            if "format" not in z or str(z["format"]) != "graphunits-csr-1":
                raise GraphError(f"{path}: not a graphunits graph file (.npz written by graphunits)")
            raw = {k: z[k] for k in ("row_ptr", "col", "directed") if k in z}
            for k, kinds in (("row_ptr", "iu"), ("col", "iu"), ("directed", "biu")):
                if k not in raw or raw[k].dtype.kind not in kinds:
                    raise GraphError(f"{path}: not a graphunits graph file ({k!r} is missing or not "
                                     f"{'a boolean' if k == 'directed' else 'integers'})")
            c = raw["col"]
            if c.size and (int(c.min()) < 0 or int(c.max()) > MAX_VERTICES):
                raise GraphError(f"{path}: column ids must lie in [0, {MAX_VERTICES}]: {int(c.min())}..{int(c.max())}")
            if raw["directed"].size != 1 or int(raw["directed"].reshape(-1)[0]) not in (0, 1):
                raise GraphError(f"{path}: 'directed' must be one boolean")
            row_ptr = raw["row_ptr"].astype(np.int64)
            col = c.astype(np.int32)
            weight = z["weight"].astype(np.float64) if "weight" in z else None
            directed = bool(raw["directed"].reshape(-1)[0])
            name = str(z["name"])
    except GraphError:
        raise
    except ValueError as e:
        if "allow_pickle" in str(e):    # numpy's guess for bytes it cannot read, not advice for a graph file
            raise GraphError(f"{path}: not a graphunits graph file (.npz written by graphunits)") from None
        raise GraphError(f"{path}: cannot read graph ({type(e).__name__}: {e})") from None
    except (OSError, KeyError, EOFError, zipfile.BadZipFile, zlib.error) as e:
        # A truncated or corrupt file (a cache written by a killed process, a file
        # that only looks like a zip archive) is reported, never a traceback.
        raise GraphError(f"{path}: cannot read graph ({type(e).__name__}: {e})") from None
    if row_ptr.ndim != 1 or row_ptr.size < 1 or row_ptr[0] != 0 or row_ptr[-1] != col.size \
            or np.any(np.diff(row_ptr) < 0) or (col.size and (col.min() < 0 or col.max() >= row_ptr.size - 1)) \
            or (weight is not None and weight.size != col.size):
        raise GraphError(f"{path}: inconsistent CSR arrays")
    g = CSRGraph(row_ptr, col, weight, directed, name)
    if check:
        _check_rules(g, path)
    return g


def _check_rules(g: CSRGraph, path) -> None:
    """The graph rules of the module docstring, on a CSR read from a file."""
    if g.num_vertices > MAX_VERTICES:
        raise GraphError(f"{path}: {g.num_vertices} vertices is more than the {MAX_VERTICES} that 32-bit ids allow")
    src, col, w = g.src(), g.col.astype(np.int64), g.weight
    if w is not None and np.isnan(w).any():
        raise GraphError(f"{path}: edge weights must not be NaN")
    loops = (src == col).nonzero()[0]
    if loops.size:
        raise GraphError(f"{path}: vertex {src[loops[0]]} has a self loop (graphunits graphs have none)")
    same_row = src[1:] == src[:-1]
    bad = (same_row & (col[1:] <= col[:-1])).nonzero()[0]
    if bad.size:
        v = src[bad[0]]
        raise GraphError(f"{path}: the neighbours of vertex {v} are repeated or out of order (they must increase "
                         f"strictly: {col[bad[0]]} then {col[bad[0] + 1]})")
    if not g.directed:
        V = max(g.num_vertices, 1)
        fwd = src * V + col                   # the arcs' keys, sorted (rows in order, columns increasing)
        rev = col * V + src                   # each arc's reverse
        # (sorting the reverse keys: a search of each in fwd is 8x slower on 8 M arcs, cache misses)
        order = np.argsort(rev, kind="stable")
        srt = rev[order]
        miss = (srt != fwd).nonzero()[0]
        if miss.size:
            k = miss[0]               # the smaller key there is an arc whose reverse is missing
            i = order[k] if srt[k] < fwd[k] else k
            raise GraphError(f"{path}: marked undirected, but the arc {src[i]} -> {col[i]} has no reverse arc "
                             f"{col[i]} -> {src[i]} (an undirected graph stores both)")
        if w is not None:
            wr = w[order]                     # wr[k]: the weight of arc k's reverse
            diff = (wr != w).nonzero()[0]
            if diff.size:
                i = diff[0]
                raise GraphError(f"{path}: marked undirected, but the arc {src[i]} -> {col[i]} weighs {w[i]:g} "
                                 f"and its reverse {wr[i]:g}")
