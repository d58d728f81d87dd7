"""Fleet state held in numpy arrays, with allocate/release that check every decision.

Units: CPU in milli-cores, memory in MiB, GPU capacity in milli-GPU (1000 = one whole GPU).
Nodes are indexed 0..n-1 in the order given, the GPUs of a node 0..gpu_count-1; the per-GPU
free array is nodes x max_gpus with -1 in the slots of absent GPUs. The GPU model is a node
attribute (an id into `model_names`, -1 for a node without GPUs).

Policies never see the state itself, only `FleetView` (engine.core.fleet_view): the same arrays as
non-writeable numpy views (built once, so handing out a view costs nothing; it always shows the live
state).
Every change of a node is a write of its row of the state's block (`FleetState.free`). In a
fleet of LARGE_FLEET nodes or more, the block notes the rows written (`WriteLog`); so an answer
over all nodes that depends only on their rows (the fit mask of a request) is
cached on the view and kept current by recomputing just the nodes written since
(`FleetView.kept`), instead of scanning the fleet again. A smaller fleet is scanned every time:
there a scan costs less than the bookkeeping.
Optionally the state keeps FGD's per-node fragmentation for a target workload current on every
allocate/release (see `engine.core.fragmentation`).
"""
from __future__ import annotations

import numpy as np

from engine.core.fleet_view import MILLI, FleetView, Placement, PlacementError, PodRequest, WriteLog, read_only
from engine.core.fragmentation import FragmentationIndex, TargetWorkload
from engine.core.kernel_entry import Entries

_NO_GPUS = np.empty(0, np.int64)
LARGE_FLEET = 512  # nodes from which a fleet is kept column-major, logs its writes and keeps answers


class _Block(np.ndarray):
    """A FleetState's block: an int64 array whose item assignments are noted in `log` (a write
    through a view of it has no log and fails before writing, rather than change the state unnoticed)."""

    log: WriteLog

    def __setitem__(self, key, value) -> None:
        self.log.note(key)
        super().__setitem__(key, value)


class FleetState:
    """Mutable fleet state. Build it from per-node capacities; `view()` is what policies get."""

    def __init__(self, cpu_milli, memory_mib, gpu_count, gpu_model, *, rack=None,
                 target: TargetWorkload | None = None, spot=None, tier_rank=None, cluster=None):
        self.cpu_total = np.asarray(cpu_milli, dtype=np.int64).copy()
        self.memory_total = np.asarray(memory_mib, dtype=np.int64).copy()
        self.gpu_count = np.asarray(gpu_count, dtype=np.int64).copy()
        n = len(self.cpu_total)
        if not len(self.memory_total) == len(self.gpu_count) == len(gpu_model) == n:
            raise ValueError("cpu_milli, memory_mib, gpu_count and gpu_model differ in length")
        if (self.cpu_total < 0).any() or (self.memory_total < 0).any() or (self.gpu_count < 0).any():
            raise ValueError("node capacities must not be negative")
        names = [m if isinstance(m, str) and m and c > 0 else None for m, c in zip(gpu_model, self.gpu_count)]
        self.model_names = tuple(sorted({m for m in names if m is not None}))
        self.gpu_model = np.array([-1 if m is None else self.model_names.index(m) for m in names], np.int64)
        self.rack = np.zeros(n, np.int64) if rack is None else np.asarray(rack, dtype=np.int64).copy()
        self.spot = None if spot is None else np.asarray(spot, dtype=bool).copy()
        self.tier_rank = None if tier_rank is None else np.asarray(tier_rank, dtype=np.int64).copy()
        self.cluster = None if cluster is None else np.asarray(cluster, dtype=np.int64).copy()  # index per node
        width = int(self.gpu_count.max()) if n else 0
        slots = np.arange(width)
        # One n x (5 + 2 width) block holds every changing figure of a node (CPU, memory, free GPU
        # milli, idle GPUs, the per-GPU free milli, then the GPU pods per shape), so taking or giving
        # back whole nodes is one row assignment and one pod one row read and write; the named
        # arrays are column views of it. `capacity` is the block when idle. A large fleet's block is
        # column-major, so each named array is contiguous: the per-node comparisons of every placement
        # scan it at twice the speed of a strided column; a small fleet's is row-major, where taking
        # whole nodes scattered over the fleet (a fancy row copy) costs less.
        large = n >= LARGE_FLEET
        order = "F" if large else "C"
        self.capacity = np.zeros((n, 5 + 2 * width), np.int64, order=order)
        self.capacity[:, 0], self.capacity[:, 1] = self.cpu_total, self.memory_total
        self.capacity[:, 2], self.capacity[:, 3] = self.gpu_count * MILLI, self.gpu_count
        self.capacity[:, 4:4 + width] = np.where(slots[None, :] < self.gpu_count[:, None], MILLI, -1)
        block = self.capacity.copy(order=order)
        self.log = WriteLog(n) if large else None
        if large:
            block = block.view(_Block)
            block.log = self.log
        self.free = block
        # The named arrays and the block the compiled moves write (`_move` notes their writes itself): plain
        # numpy, without the subclass's cost; the named arrays read-only, so every write goes through `free`.
        self._plain = plain = self.free.view(np.ndarray)
        self.cpu_free, self.memory_free, self.gpu_free_total, self.gpu_idle = (read_only(plain[:, i]) for i in range(4))
        self.gpu_free = read_only(plain[:, 4:4 + width])
        self.gpu_pods = read_only(plain[:, 4 + width:])
        self._pods_at = 4 + width  # the block's column of pod shape 0
        # per node, entirely free (nothing allocated) and taken whole (GangFleetState): the columns of one
        # array, kept current by every move (one argument of the compiled moves); column-major, so each
        # column is contiguous (the gang path's `entirely_free.nonzero()` scans it at about 2.5 times the speed)
        self._flags = np.zeros((n, 2), bool, order="F")
        self._flags[:, 0] = True
        self.entirely_free, self.held_whole = self._flags[:, 0], self._flags[:, 1]
        self._cluster_of = self.cluster if self.cluster is not None else np.full(n, -1, np.int64)  # -1: none
        self._every_model = np.ones(n, bool)  # the model test of a request that names no model
        self._model_masks: dict[tuple[str, ...], np.ndarray] = {}  # model_ok's masks, shared with every view made
        self._moves = Entries()  # move_pod's entry point per count of GPUs moved (engine.core.kernel_entry)
        self.fragmentation: FragmentationIndex | None = None
        self._view: FleetView | None = None
        self.set_target(target)

    @classmethod
    def from_frame(cls, nodes, target: TargetWorkload | None = None) -> "FleetState":
        """From a table with columns cpu_milli, memory_mib, gpu, model (openb node list), optional rack."""
        rack = nodes["rack"].to_numpy() if "rack" in nodes else None
        return cls(nodes["cpu_milli"].to_numpy(), nodes["memory_mib"].to_numpy(), nodes["gpu"].to_numpy(),
                   list(nodes["model"]), rack=rack, target=target)

    def set_target(self, target: TargetWorkload | None) -> None:
        """Track FGD fragmentation for `target` from now on (None stops tracking)."""
        self.fragmentation = None if target is None else FragmentationIndex(
            target, self.gpu_model, self.model_names, self.cpu_free, self.gpu_free)
        self._view = None

    def view(self) -> FleetView:
        """The read-only live view policies receive (the same object until the target changes)."""
        if self._view is None:
            self._view = FleetView(
                read_only(self.cpu_total), read_only(self.cpu_free), read_only(self.memory_total),
                read_only(self.memory_free), read_only(self.gpu_count), read_only(self.gpu_model),
                read_only(self.gpu_free), read_only(self.gpu_free_total), read_only(self.gpu_idle),
                read_only(self.gpu_pods), read_only(self.rack), self.model_names,
                int(self.cpu_total.max(initial=0)), int(self.gpu_count.max(initial=0)) * MILLI,
                self.fragmentation, self._model_masks, None if self.spot is None else read_only(self.spot),
                None if self.tier_rank is None else read_only(self.tier_rank), self.log,
                cluster=None if self.cluster is None else read_only(self.cluster), _block=read_only(self._plain),
                _nodes=read_only(np.arange(len(self.cpu_total))))
        return self._view

    @property
    def gpu_milli_capacity(self) -> int:
        return int(self.gpu_count.sum()) * MILLI

    @property
    def gpu_milli_free(self) -> int:
        return int(self.gpu_free_total.sum())

    def allocate(self, placement: Placement, request: PodRequest) -> None:
        """Take `request`'s resources on `placement`, after checking that they are free."""
        self.move(placement, request, True)

    def release(self, placement: Placement, request: PodRequest) -> None:
        """Give back what `allocate(placement, request)` took; refuses to exceed any capacity."""
        self.move(placement, request, False)

    def move(self, placement: Placement, request: PodRequest, take: bool) -> None:
        """Check `placement` for `request` and take (`take`) or give back its resources in one compiled
        call (engine.sim.state.pod_kernels: nothing is written unless every check
        passes); then note the node's write and refresh its fragmentation. The call goes to the kernel's
        entry point for this state's arrays (engine.core.kernel_entry): every argument's type is fixed
        here (the state's own arrays, a 1-d bool model mask, a request's `figures`, a node, a tuple of
        GPU indices of one length per entry or an empty int64 array, the milli and a bool)."""
        node, gpus = placement.node, placement.gpus
        if not gpus:  # numba types no empty tuple: an empty array instead
            gpus = _NO_GPUS
        elif type(gpus) is not tuple:
            gpus = tuple(gpus)
        models = request.gpu_models
        model_ok = self._every_model if not models else self._model_masks.get(models)
        if model_ok is None:  # the view's model_ok fills the shared cache
            model_ok = self.view().model_ok(models)
        args = (self._plain, self.capacity, self._flags, self._cluster_of, model_ok, request.figures, node, gpus,
                placement.gpu_milli, take)
        code = (self._moves.get(len(gpus)) or self._moves.made(len(gpus), _pod_kernels().move_pod, args))(*args)
        if code:
            raise PlacementError(_refusal(code, placement, request, len(self.cpu_total)))
        if self.log is not None:
            self.log.note(node)
        if self.fragmentation is not None:
            self.fragmentation.refresh(np.array([node]), self.cpu_free, self.gpu_free)


def _refusal(code: int, placement: Placement, request: PodRequest, n: int) -> str:
    """The PlacementError message of `move_pod`'s answer `code`."""
    k = _kernels
    node = placement.node
    return {k.NO_NODE: f"node {node} does not exist (fleet has {n} nodes)",
            k.NOT_CLUSTER: f"node {node} is not in cluster {request.cluster} the request names",
            k.LACKS: f"node {node} lacks CPU or memory for {request}",
            k.MISMATCH: f"{placement} does not match the request's GPUs ({request})",
            k.BAD_GPUS: f"{placement}: GPU indices must be distinct GPUs of node {node}",
            k.TOO_LITTLE: f"{placement}: a chosen GPU has less than {request.gpu_milli} milli free",
            k.NOT_MODEL: f"node {node}'s GPU model is not one of {request.gpu_models}",
            k.CANNOT_RELEASE: f"cannot release {request} from {placement}",
            k.EXCEEDS: f"releasing {request} from {placement} would exceed node capacity"}[code]


# engine.sim.state.pod_kernels, imported with the first allocation: code that only builds or reads a
# fleet state (the dashboard's tables) need not load numba
_kernels = None


def _pod_kernels():
    """engine.sim.state.pod_kernels, loaded on first use."""
    global _kernels
    if _kernels is None:
        from engine.sim.state import pod_kernels
        _kernels = pod_kernels
    return _kernels
