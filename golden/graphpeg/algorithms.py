"""BFS (push and pull), SSSP (near-far with the vertex-list mode), BC and k-core with
GraphPEG: modes ``graphpeg`` (and ``graphpeg-pull`` for BFS) (paper §3.2, Fig. 4;
docs/graphpeg.md, "Algorithms").

The kernels are the paper's: persistent warps loop on ``__pop_edge_*`` (edge
gathering mode) or ``__pop_vert`` (vertex-list mode) until -1 and call
``__push_vert`` for the vertices of the next round. Every kernel runs on a
*backend* (:class:`GraphPEGTLMBackend`, or the RTL under cocotb,
``sim/graphpeg/``); the algorithm continues with the items the backend
delivered, in their pop order, so a wrong engine changes the result. A warp's
atomic operations take effect in pop order (the order of the engines' pops in
time, SMs in order within a cycle): the first lane to improve a vertex pushes
it, on its own SM's output list.

Time: each kernel is described to the GPU model (the warps' loads, stores and
atomics, one thread per popped item, one warp per pop) with the engines' memory
requests and cycles as the unit's work (``Kernel.unit``), so its time is the
largest of the warps' issue time, DRAM time and the engines' cycles (which
include the warps' LD/ST demand per item, measured on the previous launch of
the same kernel). ``extra["graphpeg"]`` holds the statistics and, with
``compare_baseline`` (default on), the time and memory requests of the
paper's baseline: mode ``lb``, the baseline algorithm with Gunrock's
load-balanced advance (registered here as GraphPEG's reference).
"""
from __future__ import annotations

import numpy as np

from ..algorithms import MODES, register_mode
from ..algorithms.bc import BC
from ..algorithms.bfs import BFS
from ..algorithms.common import AlgorithmError, cta_atomics, reference_run
from ..algorithms.sssp import SSSP
from .config import GraphPEGConfig
from ..algorithms.kcore import KCore, kcore_peel
from .fast import GRAPHPEG_MODELS
from .session import GraphPEGSession, GraphPEGTLMBackend, first_occurrence

__all__ = ["BFSGraphPEG", "BFSPullGraphPEG", "SSSPGraphPEG", "BCGraphPEG", "KCoreGraphPEG", "GRAPHPEG_MODES",
           "LB_CLASSES"]

GRAPHPEG_MODES = ("graphpeg", "graphpeg-pull")


class _GraphPEGMode:
    """Mixin: the session, option checks, the statistics and the baseline comparison."""

    mode = "graphpeg"
    csc = False
    functional_shortcut = False
    #: The items of every kernel do not depend on the order of the pops (BFS, BC,
    #: k-core: which vertices are pushed is fixed, only by which SM); SSSP's
    #: improvements, hence its pushes, do.
    order_independent = True

    def check_graphpeg_options(self) -> None:
        cfg = self.options.get("graphpeg")
        if cfg is not None and not isinstance(cfg, (str, GraphPEGConfig)):
            raise AlgorithmError(f"graphpeg must be a GraphPEGConfig or a preset name, not {cfg!r}")
        lat = self.options.get("latency")
        if lat is not None and not (isinstance(lat, int) and lat >= 1):
            raise AlgorithmError(f"latency must be an integer >= 1, not {lat!r}")
        model = self.options.get("graphpeg_model", "fast")
        if model not in GRAPHPEG_MODELS:
            raise AlgorithmError(f"graphpeg_model must be one of {', '.join(GRAPHPEG_MODELS)}, not {model!r}")

    def setup_graphpeg(self, weights: bool = False) -> None:
        self.check_graphpeg_options()
        o = self.options
        backend = o.get("backend")
        if backend is None:
            cfg = o.get("graphpeg") or "default"
            if isinstance(cfg, str):
                cfg = GraphPEGConfig.preset(cfg)
            backend = GraphPEGTLMBackend(cfg, sms=self.gpu.config.sms, model=o.get("graphpeg_model", "fast"))
        self.peg = GraphPEGSession(backend, self.gpu, self.graph, weights=weights, csc=self.csc,
                                   latency=o.get("latency"))

    def baseline_options(self) -> dict:
        out = {k: self.options[k] for k in ("delta",) if k in self.options}
        if "source" in self.extra:
            out["source"] = self.extra["source"]
        return out

    def finish_graphpeg(self) -> None:
        st = self.peg.summary()
        st["order_independent"] = self.order_independent
        gpu = self.gpu
        if gpu.stats_on:
            tot = gpu.totals()
            st["gpu_sectors"] = int(tot["sectors"])
            st["memory_requests"] = int(tot["sectors"]) + st["engine_requests"]
            self.extra["time"] = {"gpu_cycles": tot["cycles"], "engine_cycles": st["engine_cycles"],
                                  "total_cycles": tot["cycles"]}
            if self.options.get("compare_baseline", True):
                # the paper's baseline: Gunrock's load-balanced advance (mode lb)
                base_cls = MODES.get((self.name, "lb")) or MODES.get((self.name, "baseline"))
                if base_cls is not None:
                    bt, _ = reference_run(self.graph, base_cls, gpu, self.baseline_options())
                    st["baseline_cycles"] = bt["cycles"]
                    st["baseline_memory_requests"] = int(bt["sectors"])
                    st["speedup"] = bt["cycles"] / tot["cycles"] if tot["cycles"] else None
                    st["memory_request_change"] = (st["memory_requests"] / bt["sectors"] - 1) if bt["sectors"] else None
        self.extra["graphpeg"] = st


# ---------------------------------------------------------------------- BFS
class BFSGraphPEG(_GraphPEGMode, BFS):
    """BFS with push updates (Fig. 4(a)): warps pop ``(src, dst)``, do
    ``atomicMin(level[dst], it)`` and push ``dst`` when it improved."""

    def setup(self) -> None:
        super().setup()
        self.setup_graphpeg()

    def run(self) -> np.ndarray:
        g, S = self.graph, self.peg
        src = self.source()
        depth = np.full(g.num_vertices, -1, np.int64)
        depth[src] = 0
        pending = S.push(np.zeros(1, np.int64), np.array([src]))    # the host seeds SM 0
        level = 0
        while pending:
            self.progress(level, pending)
            self.gpu.count("frontier_vertices", pending)
            res, a = S.run("graphpeg_bfs")
            dst = a["dst"]
            level += 1
            win = first_occurrence(dst, depth[dst] < 0)
            depth[dst[win]] = level
            self.gpu.count("edges", dst.size)
            with S.describe("graphpeg_bfs", res, a) as k:
                k.atomic(self.a_depth, dst, tid=a["tid"])
            pending = S.push(a["sm"][win], dst[win])
        self.iterations = level
        self.finish_graphpeg()
        return depth


class BFSPullGraphPEG(_GraphPEGMode, BFS):
    """BFS with pull updates (Fig. 4(b)) on the CSC graph, switching between push
    and pull as the paper's runs do (§5: "GraphPEG adopts the same hybrid execution
    strategy as SEP-Graph"; docs/graphpeg.md, "Kernels").

    * A pull level: a scan kernel pushes the unvisited vertices; the edge kernel
      pops ``(src, dst)`` (``dst`` the base vertex, ``src`` an in-neighbour) and
      sets ``level[dst]`` when ``src`` is on the current level.
    * A push level: the ``graphpeg`` mode's kernel (Fig. 4(a)).
    * ``direction="hybrid"`` (default): the paper gives no switching rule, so
      Beamer et al.'s direction-optimizing rule (SC 2012) with its published
      parameters: go to pull when the frontier's out-edges exceed the unvisited
      vertices' out-edges / ``ALPHA``, back to push when the frontier holds fewer
      than ``V / BETA`` vertices. A pull level's winners are pushed to the
      vertex lists only when the next level is push (the pull kernel of Fig. 4(b)
      pushes a vertex whose pull succeeded; before a pull level the scan builds
      the list instead). On road-like graphs every level is push, as the paper
      says of SEP-Graph on sparse graphs.
    * ``direction="pull"``: every level is pull (its cost grows with the
      unvisited vertices at every level: slow on high-diameter graphs)."""

    mode = "graphpeg-pull"
    csc = True
    option_names = ("direction",)
    #: Beamer, Asanovic, Patterson, "Direction-optimizing breadth-first search", SC 2012: alpha 14, beta 24.
    ALPHA, BETA = 14, 24
    DIRECTIONS = ("hybrid", "pull")

    @classmethod
    def check_option_values(cls, options: dict) -> None:
        super().check_option_values(options)
        d = options.get("direction", "hybrid")
        if d not in cls.DIRECTIONS:
            raise AlgorithmError(f"direction must be one of {', '.join(cls.DIRECTIONS)}, not {d!r}")

    def setup(self) -> None:
        super().setup()
        self.setup_graphpeg()

    def run(self) -> np.ndarray:
        g, S = self.graph, self.peg
        V = g.num_vertices
        src = self.source()
        hybrid = self.options.get("direction", "hybrid") == "hybrid"
        depth = np.full(V, -1, np.int64)
        depth[src] = 0
        out_deg = np.diff(g.row_ptr).astype(np.int64)
        unvisited_edges = int(out_deg.sum() - out_deg[src])
        pull = not hybrid
        pending = 1
        if not pull:
            S.push(np.zeros(1, np.int64), np.array([src]))    # the host seeds SM 0
        levels = {"push": 0, "pull": 0}
        level = 0
        while True:
            if pull:
                todo = np.flatnonzero(depth < 0)
                self.progress(level, int(todo.size))
                with self.gpu.kernel("graphpeg_bfs_scan", V) as k:
                    k.load(self.a_depth, range(V))
                if todo.size == 0:
                    break
                S.push_threads(todo, tids=todo)
                res, a = S.run("graphpeg_bfs_pull", csc=True)
                u, v = a["src"], a["dst"]
                self.gpu.count("edges", v.size)
                hit = depth[u] == level
                win = first_occurrence(v, hit & (depth[v] < 0))
                with S.describe("graphpeg_bfs_pull", res, a) as k:
                    k.load(self.a_depth, u, tid=a["tid"])
                    k.store(self.a_depth, v[win], tid=a["tid"][win])
                new, sms = v[win], a["sm"][win]
            else:
                self.progress(level, pending)
                res, a = S.run("graphpeg_bfs")
                dst = a["dst"]
                self.gpu.count("edges", dst.size)
                win = first_occurrence(dst, depth[dst] < 0)
                with S.describe("graphpeg_bfs", res, a) as k:
                    k.atomic(self.a_depth, dst, tid=a["tid"])
                new, sms = dst[win], a["sm"][win]
            levels["pull" if pull else "push"] += 1
            level += 1
            if new.size == 0:
                break
            depth[new] = level
            frontier_edges = int(out_deg[new].sum())
            unvisited_edges -= frontier_edges
            if hybrid:
                if not pull and frontier_edges > unvisited_edges / self.ALPHA:
                    pull = True
                elif pull and new.size < V / self.BETA:
                    pull = False
            if not pull:
                pending = S.push(sms, new)
        self.iterations = level
        self.finish_graphpeg()
        self.extra["graphpeg"]["push_levels"] = levels["push"]
        self.extra["graphpeg"]["pull_levels"] = levels["pull"]
        return depth


# ---------------------------------------------------------------------- SSSP
def improving(dst: np.ndarray, alt: np.ndarray, dist: np.ndarray) -> np.ndarray:
    """Which updates ``atomicMin(dist[dst[i]], alt[i])``, applied in order, lower the
    value: ``alt[i]`` below ``dist[dst[i]]`` and below every earlier ``alt`` of the same
    vertex. Costs must be non-negative integers (exact in float64)."""
    n = dst.size
    if n == 0:
        return np.zeros(0, bool)
    order = np.lexsort((np.arange(n), dst))
    d, a = dst[order], alt[order]
    grp = np.concatenate([[0], np.cumsum(d[1:] != d[:-1])])
    big = float(a.max()) + 1.0
    key = a - grp * big                     # later groups lie below: the running minimum restarts
    run = np.minimum.accumulate(key) + grp * big
    prev = np.full(n, np.inf)
    same = np.concatenate([[False], d[1:] == d[:-1]])
    prev[same] = run[:-1][same[1:]]
    out = np.zeros(n, bool)
    out[order] = a < np.minimum(dist[d], prev)
    return out


class SSSPGraphPEG(_GraphPEGMode, SSSP):
    """Near-far SSSP (§4.1, Davidson et al.) with GraphPEG:

    * relax kernel (edge mode, weights on): ``alt = dist[src] + wt`` (the distance
      at the kernel's start), ``atomicMin(dist[dst], alt)``, push ``dst`` when it
      improved;
    * split kernel (vertex-list mode, ``__pop_vert``): the first pop of a vertex
      (a stamp array) pushes it to the next near frontier when ``dist[v] <=
      threshold``, else appends ``(v, dist[v])`` to the far pile (software);
    * when the near frontier is empty, the baseline's far split (a GPU kernel)
      raises the threshold and pushes the new near vertices.
    Weights must be integers below 2**32 (the engine's 32-bit weight field)."""

    order_independent = False

    def check_options(self) -> None:
        super().check_options()
        w = self.graph.weight
        if w is not None and w.size and (np.any(w != np.round(w)) or w.max() >= 2**32):
            raise AlgorithmError("sssp with GraphPEG needs integer weights below 2**32 (the engine's 32-bit "
                                 "weight field)")

    def setup(self) -> None:
        super().setup()
        self.a_stamp = self.gpu.array("stamp", self.graph.num_vertices)
        self.setup_graphpeg(weights=True)

    def run(self) -> np.ndarray:
        g, S = self.graph, self.peg
        src = self.source()
        dist = np.full(g.num_vertices, np.inf)
        dist[src] = 0.0
        delta = float(self.options.get("delta") or self.default_delta())
        self.extra["delta"] = delta
        threshold = delta
        far_v = np.zeros(0, np.int64)
        far_c = np.zeros(0, np.float64)
        pending = S.push(np.zeros(1, np.int64), np.array([src]))
        it = 0
        while True:
            while pending:
                self.progress(it, pending)
                self.gpu.count("frontier_vertices", pending)
                res, a = S.run("graphpeg_sssp_relax", weights=True)
                u, v, w = a["src"], a["dst"], a["wt"].astype(np.float64)
                self.gpu.count("edges", v.size)
                alt = dist[u] + w
                imp = improving(v, alt, dist)
                with S.describe("graphpeg_sssp_relax", res, a) as k:
                    k.load(self.a_dist, u, tid=a["tid"])
                    k.atomic(self.a_dist, v, tid=a["tid"])
                np.minimum.at(dist, v[imp], alt[imp])
                pending = S.push(a["sm"][imp], v[imp])
                res, b = S.run("graphpeg_sssp_split", "vertex")
                x = b["dst"]
                first = np.zeros(x.size, bool)
                first[first_occurrence(x)] = True
                near = first & (dist[x] <= threshold)
                far = first & ~near
                with S.describe("graphpeg_sssp_split", res, b) as k:
                    k.load(self.a_dist, x, tid=b["tid"])
                    k.atomic(self.a_stamp, x, tid=b["tid"])
                    nf = int(far.sum())
                    if nf:
                        k.store(self.a_far_v, range(far_v.size, far_v.size + nf), tid=b["tid"][far])
                        k.store(self.a_far_c, range(far_v.size, far_v.size + nf), tid=b["tid"][far])
                far_v = np.concatenate([far_v, x[far]])
                far_c = np.concatenate([far_c, dist[x[far]]])
                pending = S.push(b["sm"][near], x[near])
                it += 1
            if far_v.size == 0:
                break
            near_cand, win, stay, threshold = self.far_masks(far_v, far_c, dist, threshold, delta)
            n = far_v.size
            self.gpu.count("far_pile_passes", 1)
            with self.gpu.kernel("graphpeg_sssp_far", n) as k:
                self.describe_far(k, far_v, near_cand)
                k.store(self.a_far_v, range(int(stay.sum())), tid=np.flatnonzero(stay))
                k.store(self.a_far_c, range(int(stay.sum())), tid=np.flatnonzero(stay))
                cta_atomics(k, self.counter, n)
            pending = S.push_threads(far_v[win], tids=np.flatnonzero(win))
            far_v, far_c = far_v[stay], far_c[stay]
            if not pending and far_v.size == 0:
                break
        self.iterations = it
        self.finish_graphpeg()
        return dist


# ---------------------------------------------------------------------- BC
class BCGraphPEG(_GraphPEGMode, BC):
    """Brandes BC from one source with GraphPEG: forward, one edge kernel per level
    (``atomicCAS(depth[v], -1, d + 1)`` pushes ``v`` and appends it to the level
    stack; ``atomicAdd(sigma[v], sigma[u])`` on the shortest-path edges); backward,
    deepest level first, a kernel pushes the level's vertices from the stack and an
    edge kernel adds ``sigma[u] / sigma[v] * (1 + delta[v])`` to ``delta[u]``."""

    def setup(self) -> None:
        super().setup()
        self.setup_graphpeg()

    def run(self) -> np.ndarray:
        S = self.peg
        s, V, depth, sigma, levels = self.start_forward()
        pending = S.push(np.zeros(1, np.int64), levels[0])
        d = 0
        while pending:
            self.progress(d, pending)
            res, a = S.run("graphpeg_bc_forward")
            u, v = a["src"], a["dst"]
            self.gpu.count("edges", v.size)
            win = first_occurrence(v, depth[v] < 0)
            depth[v[win]] = d + 1
            onpath = depth[v] == d + 1
            np.add.at(sigma, v[onpath], sigma[u[onpath]])
            with S.describe("graphpeg_bc_forward", res, a) as k:
                k.load(self.a_sigma, u, tid=a["tid"])
                k.atomic(self.a_depth, v, tid=a["tid"])
                k.atomic(self.a_sigma, v, tid=a["tid"], active=onpath)
                k.store(self.a_front, range(win.size), tid=a["tid"][win])
            levels.append(v[win])
            pending = S.push(a["sm"][win], v[win])
            d += 1
        delta = np.zeros(V)
        for d in range(len(levels) - 2, -1, -1):
            front = levels[d]
            with self.gpu.kernel("graphpeg_bc_push", front.size) as k:
                k.load(self.a_front, range(front.size))
            S.push_threads(front)
            res, a = S.run("graphpeg_bc_backward")
            u, v = a["src"], a["dst"]
            child = depth[v] == d + 1
            np.add.at(delta, u[child], sigma[u[child]] / sigma[v[child]] * (1.0 + delta[v[child]]))
            with S.describe("graphpeg_bc_backward", res, a) as k:
                k.load(self.a_depth, v, tid=a["tid"])
                k.load(self.a_sigma, v, tid=a["tid"], active=child)
                k.load(self.a_delta, v, tid=a["tid"], active=child)
                k.atomic(self.a_delta, u, tid=a["tid"], active=child)
        delta[s] = 0.0
        self.iterations = len(levels) - 1
        self.finish_graphpeg()
        return delta


# ---------------------------------------------------------------------- k-core
class KCoreGraphPEG(_GraphPEGMode, KCore):
    """K-core decomposition with GraphPEG: at every level ``k`` a scan kernel pushes
    the live vertices of degree <= k (and marks them removed with core ``k``); edge
    kernels over the removed vertices' edges do ``atomicSub(deg[v], 1)`` on live
    neighbours, and the lane that brings ``deg[v]`` down to ``k`` removes ``v`` and
    pushes it, until no vertex is pushed; then ``k`` grows to the smallest live
    degree."""

    def setup(self) -> None:
        super().setup()
        self.setup_graphpeg()

    def peel(self, front, state) -> None:
        S = self.peg
        pending = S.push_threads(front, tids=front)      # scan thread v pushes v
        while pending:
            self.progress(state.k, pending)
            res, a = S.run("graphpeg_kcore")
            v = a["dst"]
            self.gpu.count("edges", v.size)
            live, win = kcore_peel(v, state)
            with S.describe("graphpeg_kcore", res, a) as k:
                k.load(self.a_removed, v, tid=a["tid"])
                k.atomic(self.a_deg, v, tid=a["tid"], active=live)
                k.store(self.a_core, v[win], tid=a["tid"][win])
            pending = S.push(a["sm"][win], v[win])
            self.rounds += 1

    def run(self) -> np.ndarray:
        core = super().run()
        self.finish_graphpeg()
        return core


# ---------------------------------------------------------------------- the paper's baseline
def _lb_class(base: type) -> type:
    """``base`` with Gunrock's load-balanced advance (mode ``lb``): the paper
    compares GraphPEG with Gunrock (§5.3), whose advance balances its edges by
    load-balanced partitioning (§2: "the sorted search is used to map the indices
    with the scanned edge offset array"); the golden model's baseline spreads
    them for free. Results and kernels are the baseline's, plus the balancing's
    scan kernel and searches (``Algorithm.lb_scan``, ``lb_search``; docs/golden.md,
    "Load-balanced advance")."""
    return type(base.__name__ + "LB", (base,), {"mode": "lb", "load_balanced": True, "__module__": __name__,
                                                "__doc__": _lb_class.__doc__.replace("``base``", base.__name__)})


LB_CLASSES = {algo: _lb_class(base) for algo, base in (("bfs", BFS), ("sssp", SSSP), ("bc", BC), ("kcore", KCore))}


def _register() -> None:
    for algo, cls in (("bfs", BFSGraphPEG), ("bfs", BFSPullGraphPEG), ("sssp", SSSPGraphPEG), ("bc", BCGraphPEG)):
        register_mode(algo, cls.mode, cls)
    register_mode("kcore", "graphpeg", KCoreGraphPEG)
    for algo, cls in LB_CLASSES.items():
        register_mode(algo, "lb", cls)


_register()
