"""Graphs of the golden model: CSR, file loaders, seeded generators and spec strings
(docs/golden.md, "Graphs")."""
from .csr import CSRGraph, GraphError, edge_weights, load_npz
from .generators import delaunay, grid, kron, mesh, powerlaw, road, urand
from .io import FILE_FORMATS, read_graph_file
from .spec import cache_dir, load_graph, parse_spec

__all__ = ["CSRGraph", "GraphError", "edge_weights", "load_npz", "kron", "urand", "grid", "delaunay", "road",
           "powerlaw", "mesh", "read_graph_file",
           "FILE_FORMATS", "load_graph", "parse_spec", "cache_dir"]
