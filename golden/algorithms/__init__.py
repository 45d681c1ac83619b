"""GPU-style graph algorithms of the golden model, with and without each unit.

``run_algorithm(graph, "bfs", mode="baseline")`` runs one; ``MODES`` maps
``(algorithm, mode)`` to the class that implements it (units register theirs).
"""
from __future__ import annotations

from typing import Callable

from ..gpu import GPU, GPUConfig
from .bc import BC
from .bfs import BFS
from .cc import CC
from .common import Algorithm, AlgorithmError, RunResult, segments
from .kcore import KCore
from .pagerank import PageRank
from .sssp import SSSP

__all__ = ["ALGORITHMS", "MODES", "RESULT_KEYS", "register_mode", "run_algorithm", "modes_for", "mode_class",
           "check_options",
           "Algorithm", "AlgorithmError", "RunResult", "BFS", "SSSP", "PageRank", "CC", "BC", "KCore", "segments"]

ALGORITHMS: dict[str, type] = {"bfs": BFS, "sssp": SSSP, "pr": PageRank, "cc": CC, "bc": BC, "kcore": KCore}
RESULT_KEYS = {name: cls.key for name, cls in ALGORITHMS.items()}
MODES: dict[tuple[str, str], type] = {(name, "baseline"): cls for name, cls in ALGORITHMS.items()}


def register_mode(algo: str, mode: str, cls: type) -> None:
    """Make ``cls`` (an Algorithm subclass) the implementation of ``algo`` in ``mode``."""
    MODES[(algo, mode)] = cls


def modes_for(algo: str) -> list[str]:
    _load_unit_modes()
    return sorted(m for a, m in MODES if a == algo)


_loaded: set[str] = set()


def _load_unit_modes() -> None:
    # Units register their modes when imported: the module each unit's descriptor
    # names (golden/<unit>/descriptor.py, ``algorithms``). A unit module that fails to
    # import raises every time (it is not marked loaded), so a broken unit never
    # silently hides the modes of the units after it.
    import importlib

    from ..units import units
    for u in units().values():
        mod = u.algorithms
        if mod is None or mod in _loaded:
            continue
        try:
            importlib.import_module(mod)
        except ModuleNotFoundError as e:
            if e.name is None or not mod.startswith(e.name):
                raise
        _loaded.add(mod)


def mode_class(algo: str, mode: str = "baseline") -> type:
    """The class that implements ``algo`` in ``mode`` (:class:`AlgorithmError` naming
    the algorithms or the modes when there is none)."""
    _load_unit_modes()
    if not isinstance(algo, str) or algo not in ALGORITHMS:
        raise AlgorithmError(f"unknown algorithm {algo!r}; algorithms: {', '.join(ALGORITHMS)}")
    cls = MODES.get((algo, mode)) if isinstance(mode, str) else None
    if cls is None:
        raise AlgorithmError(f"{algo} has no mode {mode!r}; modes: {', '.join(modes_for(algo))}")
    return cls


def check_options(algo: str, mode: str, options: dict) -> None:
    """Check ``options`` for ``algo`` in ``mode`` without a graph: every name one the
    mode takes, and the values that can be checked without the graph (``source``
    >= 0, PageRank's ``damping``/``tol``/``max_iter``, SSSP's ``delta``...).
    :class:`AlgorithmError` (one line) otherwise. ``run_algorithm`` does the same
    checks, and those that need the graph."""
    cls = mode_class(algo, mode)
    cls.check_option_names(options)
    cls.check_option_values(options)


def run_algorithm(graph, algo: str, mode: str = "baseline", *, gpu: GPUConfig | str | None = None,
                  stats: bool = True, caches: bool = True, cache_model: str = "fast",
                  progress: Callable | None = None,
                  **options) -> RunResult:
    """Run ``algo`` on ``graph`` in ``mode``; ``options`` go to the algorithm
    (``source``, ``damping``, ``tol``, ``delta``, ...)."""
    from ..graphs import CSRGraph
    if not isinstance(graph, CSRGraph):
        raise TypeError(f"run_algorithm needs a CSRGraph (golden.graphs.load_graph), not {type(graph).__name__}")
    if not (gpu is None or isinstance(gpu, (str, GPUConfig))):
        raise TypeError(f"gpu must be a GPUConfig or a preset name, not {gpu!r}")
    cls = mode_class(algo, mode)
    if isinstance(gpu, str) or gpu is None:
        gpu = GPUConfig.preset(gpu or "gtx980")
    machine = GPU(gpu, stats=stats, caches=caches, cache_model=cache_model)
    return cls(graph, machine, progress=progress, **options).execute()
