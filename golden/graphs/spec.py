"""Graph spec strings and the cached loader used by the CLI (docs/golden.md, "Graphs").

Specs: ``kron:scale=14,edgefactor=16,seed=1``, ``urand:scale=14[,edgefactor=16][,seed=1]``,
``grid:256x256[,seed=1]``, ``delaunay:scale=19[,seed=1][,order=random|sorted]``,
``road:843x843[,seed=1]``, ``powerlaw:scale=18[,edgefactor=16][,exponent=21][,seed=1]``
(exponent in tenths), ``mesh:59x59x59[,dofs=1]``, or a file path (see
:mod:`golden.graphs.io`). docs/datasets.md says which resembles which of the papers'
datasets.
"""
from __future__ import annotations

import hashlib
import os
from pathlib import Path

from ..config import parse_int
from .csr import CSRGraph, GraphError, load_npz
from .generators import check_params, delaunay, grid, kron, mesh, powerlaw, road, urand
from .io import read_graph_file

__all__ = ["parse_spec", "load_graph", "cache_dir", "GENERATORS"]

#: Generator name -> (function, allowed keys with defaults). A default that is a
#: string makes the key take a word (checked against generators.CHOICES), not an integer.
GENERATORS = {
    "kron": (kron, {"scale": None, "edgefactor": 16, "seed": 1}),
    "urand": (urand, {"scale": None, "edgefactor": 16, "seed": 1}),
    "grid": (grid, {"rows": None, "cols": None, "seed": 1}),
    "delaunay": (delaunay, {"scale": None, "seed": 1, "order": "random"}),
    "road": (road, {"rows": None, "cols": None, "seed": 1}),
    "powerlaw": (powerlaw, {"scale": None, "edgefactor": 16, "exponent": 21, "seed": 1}),
    "mesh": (mesh, {"rows": None, "cols": None, "layers": None, "dofs": 1}),
}

#: Generators whose spec starts with the sides: kind -> (the side keys, usage, example).
SIDES = {
    "grid": (("rows", "cols"), "grid:ROWSxCOLS[,seed=N]", "grid:256x256"),
    "road": (("rows", "cols"), "road:ROWSxCOLS[,seed=N]", "road:843x843"),
    "mesh": (("rows", "cols", "layers"), "mesh:ROWSxCOLSxLAYERS[,dofs=K]", "mesh:64x64x64"),
}

#: Generated graphs with at least this many edges are cached as .npz.
CACHE_MIN_EDGES = 1 << 20


def cache_dir() -> Path:
    """``$GRAPHUNITS_CACHE_DIR`` or ``.cache/graphs`` in the project folder."""
    env = os.environ.get("GRAPHUNITS_CACHE_DIR")
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[2] / ".cache" / "graphs"


def _int(spec: str, key: str, text: str) -> int:
    """An integer (:func:`golden.config.parse_int`: decimal, or hexadecimal with 0x)."""
    value = parse_int(text)
    if value is None:
        what = "in tenths (exponent=21 is 2.1)" if key == "exponent" else "(decimal, or hexadecimal with 0x)"
        raise GraphError(f"graph spec {spec!r}: {key} must be an integer {what}, not {text.strip()!r}")
    return value


def parse_spec(spec: str) -> tuple[str, dict] | None:
    """``(generator, params)`` for a generator spec, ``None`` for a file path."""
    if not isinstance(spec, str) or not spec.strip():
        raise GraphError(f"a graph spec must be a non-empty string, not {spec!r}")
    spec = spec.strip()
    kind, sep, rest = spec.partition(":")
    if not sep or kind not in GENERATORS:
        if sep and "/" not in kind and "." not in kind and not Path(spec).exists() and len(kind) > 1:
            raise GraphError(f"graph spec {spec!r}: unknown generator {kind!r}; generators: "
                             f"{', '.join(GENERATORS)}; or give a file path")
        return None
    _, defaults = GENERATORS[kind]
    params = {}
    items = [x.strip() for x in rest.split(",") if x.strip()]
    sides = SIDES[kind][0] if kind in SIDES else ()
    if sides:
        parts = items[0].split("x") if items and "=" not in items[0] else []
        if len(parts) != len(sides):
            raise GraphError(f"graph spec {spec!r}: expected {SIDES[kind][1]}, e.g. {SIDES[kind][2]}")
        for key, text in zip(sides, parts):
            params[key] = _int(spec, key, text)
        items = items[1:]
    for item in items:
        key, eq, val = item.partition("=")
        key = key.strip()
        if not eq:
            raise GraphError(f"graph spec {spec!r}: expected KEY=VALUE, not {item!r}")
        if key not in defaults or key in sides:
            allowed = ", ".join(k for k in defaults if k not in sides)
            raise GraphError(f"graph spec {spec!r}: {kind} has no parameter {key!r}; parameters: {allowed}")
        if key in params:
            raise GraphError(f"graph spec {spec!r}: {key} is given twice")
        params[key] = val.strip() if isinstance(defaults[key], str) else _int(spec, key, val.strip())
    for key, default in defaults.items():
        if key not in params:
            if default is None:
                raise GraphError(f"graph spec {spec!r}: {kind} needs {key}=N")
            params[key] = default
    try:
        check_params(kind, params)          # the ranges, before anything is generated
    except GraphError as e:
        raise GraphError(f"graph spec {spec!r}: {e}") from None
    return kind, params


def _canonical(kind: str, params: dict) -> str:
    """The spec with every parameter, in GENERATORS order (the graph's name and its
    cache key): ``grid:4x4,seed=1``, ``kron:scale=14,edgefactor=16,seed=1``."""
    sides = SIDES[kind][0] if kind in SIDES else ()
    head = "x".join(str(params[k]) for k in sides)
    rest = [f"{k}={params[k]}" for k in GENERATORS[kind][1] if k not in sides]
    return f"{kind}:" + ",".join(([head] if head else []) + rest)


def _cached(key: str, make, use_cache: bool, big: bool):
    if not use_cache:
        return make()
    d = cache_dir()
    path = d / (hashlib.sha256(key.encode()).hexdigest()[:20] + ".npz")
    if path.exists():
        try:
            return load_npz(path)
        except GraphError:
            path.unlink(missing_ok=True)
    g = make()
    if big(g):
        try:
            d.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(f".{os.getpid()}.tmp.npz")
            g.save_npz(tmp)
            os.replace(tmp, path)
        except OSError:
            pass
    return g


def load_graph(spec: str, *, undirected: bool | None = None, vertices: int | None = None,
               weighted: bool = False, weight_seed: int = 1, cache: bool = True) -> CSRGraph:
    """Build or load the graph named by ``spec``.

    Parameters
    ----------
    spec : str or os.PathLike
        A generator spec or a file path (a ``pathlib.Path`` is always a file).
    undirected : bool or None
        ``True`` symmetrizes a file's edges (generated graphs are undirected).
    vertices : int or None
        Vertex count of a file's graph (default: largest id + 1, or the file's header).
    weighted : bool
        Give an unweighted graph integer weights in [1, 255], a hash of each edge's end
        points and ``weight_seed`` (:func:`golden.graphs.csr.edge_weights`).
    cache : bool
        Reuse/write ``.npz`` copies of parsed files and large generated graphs.
    """
    if isinstance(weight_seed, bool) or not isinstance(weight_seed, int) or not 0 <= weight_seed < 1 << 63:
        # (a seed is hashed as 64 bits: larger ones would repeat smaller ones' weights)
        raise GraphError(f"weight seed must be an integer in [0, 2**63 - 1], not {weight_seed!r}")
    if isinstance(spec, os.PathLike):     # a pathlib.Path: always a file
        spec = os.fspath(spec)
        if not isinstance(spec, str):
            raise GraphError(f"a graph file path must be text, not {spec!r}")
        parsed = None
        if not spec.strip():
            raise GraphError("a graph spec must be a non-empty string, not ''")
    else:
        parsed = parse_spec(spec)
    if parsed is None:
        path = Path(spec)
        if not path.exists():
            raise GraphError(f"graph file {path} does not exist (and {spec!r} is not a generator spec: "
                             f"kron:scale=N, urand:scale=N, grid:RxC, delaunay:scale=N, road:RxC, powerlaw:scale=N, "
                             f"mesh:RxCxL)")
        st = path.stat() if path.is_file() else None
        key = f"file|{path.resolve()}|{st.st_size if st else 0}|{st.st_mtime_ns if st else 0}|{undirected}|{vertices}"
        g = _cached(key, lambda: read_graph_file(path, undirected=undirected, vertices=vertices),
                    cache and path.suffix.lower() != ".npz", lambda g: True)
    else:
        kind, params = parsed
        if undirected is False:
            raise GraphError(f"generated graphs ({kind}) are undirected")
        if vertices is not None:
            raise GraphError(f"--vertices applies to graph files, not to the generated graph {spec!r}")
        fn, _ = GENERATORS[kind]
        canon = _canonical(kind, params)
        g = _cached(f"gen|{canon}", lambda: fn(**params, name=canon), cache,
                    lambda g: g.num_edges >= CACHE_MIN_EDGES)
    if weighted and g.weight is None:
        g = g.with_weights(weight_seed)
    return g
