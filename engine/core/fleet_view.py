"""What a placement policy is shown of the fleet and asked to place: the read-only `FleetView`, a
`PodRequest`, the `Placement` it answers, and the one fit rule (`fits_on`).

Units: CPU in milli-cores, memory in MiB, GPU capacity in milli-GPU (1000 = one whole GPU). Nodes
are indexed 0..n-1, the GPUs of a node 0..gpu_count-1; the per-GPU free array is nodes x max_gpus
with -1 in the slots of absent GPUs. The view's arrays are non-writeable numpy views of the live
state (engine.sim.state.fleet_state.FleetState owns and changes it). In a large fleet the state notes
the rows it writes (`WriteLog`), so an answer over all nodes that depends only on their rows is
cached on the view and kept current by recomputing just the nodes written since (`FleetView.kept`).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import NamedTuple

import numpy as np

from engine.core.fragmentation import FragmentationIndex

MILLI = 1000
TIER_RANK = {"reserved": 0, "spot": 1, "on-demand": 2}  # cheapest marginal GPU-hour first; other tiers rank 0
REPLAY = 16  # nodes written since a kept answer was computed beyond which it is recomputed whole
KEPT = 512  # answers a view keeps at most (then it forgets them all and starts again)


class PlacementError(ValueError):
    """A placement that does not fit the fleet (over-allocation, wrong GPU model, bad index)."""


@dataclass(frozen=True)
class PodRequest:
    """What one pod (one task of a job) asks for on a single node.

    num_gpu GPUs, each with gpu_milli free: gpu_milli < 1000 shares a GPU, 1000 takes whole GPUs,
    num_gpu = gpu_milli = 0 asks for CPU only. gpu_models lists the allowed GPU models (empty: any).
    spot_ok: False keeps the pod off spot nodes (a job that fell back to on-demand capacity).
    cluster: the only cluster (`FleetView.cluster`) the pod may go to, as the cluster step chose it
    (engine.sim.cycle.cluster_step); -1: any node.
    """

    cpu_milli: int
    memory_mib: int = 0
    num_gpu: int = 0
    gpu_milli: int = 0
    gpu_models: tuple[str, ...] = ()
    spot_ok: bool = True
    cluster: int = -1

    def __post_init__(self) -> None:
        if self.cpu_milli < 0 or self.memory_mib < 0 or self.num_gpu < 0:
            raise ValueError(f"negative request: {self}")
        if (self.num_gpu == 0) != (self.gpu_milli == 0) or not 0 <= self.gpu_milli <= MILLI:
            raise ValueError(f"gpu_milli must be in 1..1000 with num_gpu >= 1, or both 0: {self}")

    # cached: read at every allocation and release of the request (the fields never change)
    @cached_property
    def total_gpu_milli(self) -> int:
        return self.num_gpu * self.gpu_milli

    @cached_property
    def shares_gpu(self) -> bool:
        """True for a fraction of one GPU (the GPU-sharing case)."""
        return self.num_gpu == 1 and self.gpu_milli < MILLI

    @cached_property
    def shape_slot(self) -> int:
        """Column of `FleetView.gpu_pods` counting pods of this shape: 0 GPU-sharing, k for k whole GPUs."""
        return 0 if self.shares_gpu else self.num_gpu

    @cached_property
    def figures(self) -> np.ndarray:
        """(cpu_milli, memory_mib, num_gpu, gpu_milli, cluster, shape_slot), read-only int64: one argument
        of the compiled allocation and release (engine.sim.state.pod_kernels)."""
        return read_only(np.array([self.cpu_milli, self.memory_mib, self.num_gpu, self.gpu_milli, self.cluster,
                                   self.shape_slot], np.int64))


class Placement(NamedTuple):
    """Where a request goes: a node index and the GPU indices on it (gpu_milli taken from each). A named
    tuple: one is made for every start, and it builds in half the time of a frozen dataclass."""

    node: int
    gpus: tuple[int, ...] = ()
    gpu_milli: int = 0


@dataclass(frozen=True)
class FleetView:
    """Read-only live arrays of a `FleetState` (see its docstring for units).

    gpu_pods counts the GPU pods placed on each node by shape: column 0 GPU-sharing pods, column
    k pods holding k whole GPUs. max_cpu_milli / max_gpu_milli are the largest node's capacity,
    the scale score-based policies normalise by. fragmentation is None unless the state tracks
    a target workload. spot: bool per node, a spot-tier node (None: no node is). tier_rank: per node,
    how its use is paid (engine.core.fleet_view.TIER_RANK: 0 reserved or unknown, already paid for;
    1 spot; 2 on-demand), or None when every node ranks 0. cluster: per node, its cluster's index in
    its region (engine.core.cluster_view), or None when the fleet was built without clusters.
    """

    cpu_total: np.ndarray
    cpu_free: np.ndarray
    memory_total: np.ndarray
    memory_free: np.ndarray
    gpu_count: np.ndarray
    gpu_model: np.ndarray
    gpu_free: np.ndarray
    gpu_free_total: np.ndarray
    gpu_idle: np.ndarray
    gpu_pods: np.ndarray
    rack: np.ndarray
    model_names: tuple[str, ...]
    max_cpu_milli: int
    max_gpu_milli: int
    fragmentation: FragmentationIndex | None
    _model_masks: dict
    spot: np.ndarray | None = None
    tier_rank: np.ndarray | None = None
    _log: WriteLog | None = None
    _kept: dict = field(default_factory=dict)
    cluster: np.ndarray | None = None
    _block: np.ndarray | None = None  # the state's block (its rows: what `fits_on` reads), read-only
    _allowed: dict = field(default_factory=dict)  # `allowed` masks by (spot_ok, cluster, GPU models)
    _nodes: np.ndarray | None = None  # 0..n-1, read-only: every node, for `fits_on`

    def __len__(self) -> int:
        return len(self.cpu_free)

    def kept(self, key, answer) -> np.ndarray:
        """`answer(None)`, an array over all nodes, read-only, cached under `key` and kept current:
        the nodes whose rows were written since are recomputed, `answer(nodes)` over their index array
        (so `answer` must depend only on the nodes' rows and static attributes, and give the same
        values over some nodes as over all). Without a write log (a small fleet, or a view built by
        hand) it is computed afresh."""
        log = self._log
        if log is None:
            return answer(None)
        entry, written = self._kept.get(key), log.nodes
        if entry is None or entry[0] != log.epoch or len(written) - entry[1] > REPLAY:
            if len(self._kept) >= KEPT:
                self._kept.clear()
            values = answer(None)
            entry = self._kept[key] = [log.epoch, len(written), values, read_only(values)]
        elif entry[1] < len(written):
            nodes = np.array(written[entry[1]:])
            entry[2][nodes] = answer(nodes)
            entry[1] = len(written)
        return entry[3]

    def model_ok(self, models: tuple[str, ...]) -> np.ndarray:
        """Nodes whose GPU model is one of `models` (every node when `models` is empty)."""
        mask = self._model_masks.get(models)
        if mask is None:
            ids = [self.model_names.index(m) for m in models if m in self.model_names]
            mask = np.ones(len(self), bool) if not models else np.isin(self.gpu_model, ids)
            mask.flags.writeable = False
            self._model_masks[models] = mask
        return mask

    def allowed(self, request: PodRequest) -> np.ndarray:
        """The nodes `request` may use whatever runs on them: off spot nodes unless `spot_ok`, in its
        cluster when it names one, of its GPU models when it asks for GPUs (cached per request shape)."""
        key = (request.spot_ok, request.cluster, request.gpu_models if request.num_gpu else ())
        mask = self._allowed.get(key)
        if mask is None:
            mask = np.ones(len(self), bool)
            if not request.spot_ok and self.spot is not None:
                mask &= ~self.spot
            if request.cluster >= 0 and self.cluster is not None:
                mask &= self.cluster == request.cluster
            if request.num_gpu and request.gpu_models:
                mask &= self.model_ok(request.gpu_models)
            mask.flags.writeable = False
            self._allowed[key] = mask
        return mask


def fits_on(view: FleetView, request: PodRequest, nodes=None) -> np.ndarray:
    """Whether `request` fits now on each of `nodes` (index array, slice or one index; default all,
    then a read-only mask kept by the view): CPU, memory, GPU model, and enough GPUs with its milli
    free, and the cluster when the request names one. The fleet's one fit rule (compiled:
    engine.core.fit_kernels); policies choose among these."""
    if nodes is None and view._log is not None:
        return view.kept(("fits", request), lambda at: _fits(view, request, at))
    if nodes is None or isinstance(nodes, np.ndarray):
        return _fits(view, request, nodes)
    if isinstance(nodes, slice):
        return _fits(view, request, view._nodes[nodes])
    return _fits(view, request, np.array([nodes], np.int64))[0]


def fit_args(view: FleetView, request: PodRequest) -> tuple | None:
    """The state's block, the request's `allowed` mask and its `figures`: what a kernel that applies the
    fit rule (engine.core.fit_kernels.fits) over every node in its own pass takes
    (engine.policies.leftover_kernels); None when the view keeps its fit masks current instead (a
    large fleet: `fits_on` answers from them)."""
    if view._log is not None:
        return None
    return view._block, view.allowed(request), request.figures


def _fits(view: FleetView, request: PodRequest, nodes: np.ndarray | None) -> np.ndarray:
    """`fits_on` over the index array `nodes` (None: every node)."""
    if _kernels is None:
        _load_kernels()
    return _kernels.fits(view._block, view.allowed(request), view._nodes if nodes is None else nodes,
                         request.cpu_milli, request.memory_mib, request.num_gpu, request.gpu_milli)


# engine.core.fit_kernels, imported with the first fit: numba costs a process about 0.2 s, which code that
# only reads the view (the dashboard's tables) need not pay
_kernels = None


def _load_kernels() -> None:
    global _kernels
    from engine.core import fit_kernels
    _kernels = fit_kernels


def read_only(array: np.ndarray) -> np.ndarray:
    """A non-writeable view of `array` (it shows the array's live values)."""
    view = array.view()
    view.flags.writeable = False
    return view


class WriteLog:
    """The nodes whose block rows were written, in order (`nodes`; repeats allowed). Emptied, with
    `epoch` advanced, once longer than `limit`, so it stays small over a long run."""

    def __init__(self, n: int) -> None:
        self.nodes: list[int] = []
        self.epoch = 0
        self.limit = max(4 * n, 4096)
        self._every = np.arange(n)

    def note(self, key) -> None:
        """Note the rows of an item assignment `block[key] = ...` (one row, a slice, indices, a mask)."""
        if type(key) is int or isinstance(key, np.integer):
            self.nodes.append(int(key))
        else:
            self.nodes.extend(self._every[key[0] if isinstance(key, tuple) else key].ravel().tolist())
        if len(self.nodes) > self.limit:
            self.nodes.clear()
            self.epoch += 1
