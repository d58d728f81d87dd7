"""Fleet state held in numpy arrays, with allocate/release that check every decision.

Units: CPU in milli-cores, memory in MiB, GPU capacity in milli-GPU (1000 = one whole GPU).
Nodes are indexed 0..n-1 in the order given, the GPUs of a node 0..gpu_count-1; the per-GPU
free array is nodes x max_gpus with -1 in the slots of absent GPUs. The GPU model is a node
attribute (an id into `model_names`, -1 for a node without GPUs).

Policies never see the state itself, only `FleetView`: the same arrays as non-writeable numpy
views (built once, so handing out a view costs nothing; it always shows the live state).
Every change of a node is a write of its row of the state's block (`FleetState.free`). In a
fleet of LARGE_FLEET nodes or more, the block notes the rows written (`WriteLog`); so an answer
over all nodes that depends only on their rows (the fit mask of a request, a placement score) is
cached on the view and kept current by recomputing just the nodes written since
(`FleetView.kept`), instead of scanning the fleet again. A smaller fleet is scanned every time:
there a scan costs less than the bookkeeping.
Optionally the state keeps FGD's per-node fragmentation for a target workload current on every
allocate/release (see `engine.sim.fragmentation`).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from engine.sim.fragmentation import FragmentationIndex, TargetWorkload

MILLI = 1000
TIER_RANK = {"reserved": 0, "spot": 1, "on-demand": 2}  # cheapest marginal GPU-hour first; other tiers rank 0
REPLAY = 16  # nodes written since a kept answer was computed beyond which it is recomputed whole
KEPT = 512  # answers a view keeps at most (then it forgets them all and starts again)
LARGE_FLEET = 512  # nodes from which a fleet is kept column-major, logs its writes and keeps answers


class PlacementError(ValueError):
    """A placement that does not fit the fleet (over-allocation, wrong GPU model, bad index)."""


@dataclass(frozen=True)
class PodRequest:
    """What one pod (one task of a job) asks for on a single node.

    num_gpu GPUs, each with gpu_milli free: gpu_milli < 1000 shares a GPU, 1000 takes whole GPUs,
    num_gpu = gpu_milli = 0 asks for CPU only. gpu_models lists the allowed GPU models (empty: any).
    spot_ok: False keeps the pod off spot nodes (a job that fell back to on-demand capacity).
    """

    cpu_milli: int
    memory_mib: int = 0
    num_gpu: int = 0
    gpu_milli: int = 0
    gpu_models: tuple[str, ...] = ()
    spot_ok: bool = True

    def __post_init__(self) -> None:
        if self.cpu_milli < 0 or self.memory_mib < 0 or self.num_gpu < 0:
            raise ValueError(f"negative request: {self}")
        if (self.num_gpu == 0) != (self.gpu_milli == 0) or not 0 <= self.gpu_milli <= MILLI:
            raise ValueError(f"gpu_milli must be in 1..1000 with num_gpu >= 1, or both 0: {self}")

    @property
    def total_gpu_milli(self) -> int:
        return self.num_gpu * self.gpu_milli

    @property
    def shares_gpu(self) -> bool:
        """True for a fraction of one GPU (the GPU-sharing case)."""
        return self.num_gpu == 1 and self.gpu_milli < MILLI

    @property
    def shape_slot(self) -> int:
        """Column of `FleetView.gpu_pods` counting pods of this shape: 0 GPU-sharing, k for k whole GPUs."""
        return 0 if self.shares_gpu else self.num_gpu


@dataclass(frozen=True)
class Placement:
    """Where a request goes: a node index and the GPU indices on it (gpu_milli taken from each)."""

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
    how its use is paid (engine.sim.fleet_state.TIER_RANK: 0 reserved or unknown, already paid for;
    1 spot; 2 on-demand), or None when every node ranks 0.
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

    def __len__(self) -> int:
        return len(self.cpu_free)

    def kept(self, key, answer) -> np.ndarray:
        """`answer(slice(None))`, an array over all nodes, read-only, cached under `key` and kept
        current: the nodes whose rows were written since are recomputed one by one, `answer(node)`
        (so `answer` must depend only on the nodes' rows and static attributes, and give the same
        value for one node as over all). Without a write log (a small fleet, or a view built by hand)
        it is computed afresh."""
        log = self._log
        if log is None:
            return answer(slice(None))
        entry, written = self._kept.get(key), log.nodes
        if entry is None or entry[0] != log.epoch or len(written) - entry[1] > REPLAY:
            if len(self._kept) >= KEPT:
                self._kept.clear()
            values = answer(slice(None))
            entry = self._kept[key] = [log.epoch, len(written), values, _frozen(values)]
        elif entry[1] < len(written):
            values = entry[2]
            for node in written[entry[1]:]:
                values[node] = answer(node)
            entry[1] = len(written)
        return entry[3]

    def everywhere(self, models: tuple[str, ...]) -> bool:
        """Whether every node's GPU model is one of `models` (cached with the mask)."""
        every = self._model_masks.get(("every", models))
        if every is None:
            every = self._model_masks[("every", models)] = bool(self.model_ok(models).all())
        return every

    def model_ok(self, models: tuple[str, ...]) -> np.ndarray:
        """Nodes whose GPU model is one of `models` (every node when `models` is empty)."""
        mask = self._model_masks.get(models)
        if mask is None:
            ids = [self.model_names.index(m) for m in models if m in self.model_names]
            mask = np.ones(len(self), bool) if not models else np.isin(self.gpu_model, ids)
            mask.flags.writeable = False
            self._model_masks[models] = mask
        return mask


def fits_on(view: FleetView, request: PodRequest, nodes=None) -> np.ndarray:
    """Whether `request` fits now on each of `nodes` (index array, slice or one index; default all,
    then a read-only mask kept by the view): CPU, memory, GPU model, and enough GPUs with its milli
    free. The fleet's one fit rule; policies choose among these."""
    if nodes is None and view._log is not None:
        return view.kept(("fits", request), lambda at: _fits(view, request, at))
    return _fits(view, request, slice(None) if nodes is None else nodes)


def _fits(view: FleetView, request: PodRequest, nodes) -> np.ndarray:
    """`fits_on` computed. Tests that cannot fail are skipped (free CPU and memory never drop below
    0, so a zero request needs no comparison; nor does a GPU model every node has): fewer numpy calls."""
    ok = view.cpu_free[nodes] >= request.cpu_milli if request.cpu_milli else None
    if request.memory_mib:
        ok = _both(ok, view.memory_free[nodes] >= request.memory_mib)
    if not request.spot_ok and view.spot is not None:
        ok = _both(ok, ~view.spot[nodes])
    if request.num_gpu:
        if request.gpu_models and not view.everywhere(request.gpu_models):
            ok = _both(ok, view.model_ok(request.gpu_models)[nodes] & True)  # & True: a copy, not the cached mask
        if request.gpu_milli == MILLI:
            ok = _both(ok, view.gpu_idle[nodes] >= request.num_gpu)
        else:
            ok = _both(ok, (view.gpu_free[nodes] >= request.gpu_milli).sum(axis=-1) >= request.num_gpu)
    return ok if ok is not None else np.ones(np.shape(view.cpu_free[nodes]), bool)


def _both(ok: np.ndarray | None, test: np.ndarray) -> np.ndarray:
    if ok is None:
        return test
    ok &= test
    return ok


def _frozen(array: np.ndarray) -> np.ndarray:
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
                 target: TargetWorkload | None = None, spot=None, tier_rank=None):
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
        # The named arrays and the row reads and writes of `_apply` (which notes its writes itself): plain
        # numpy, without the subclass's cost; the named arrays read-only, so every write goes through `free`.
        self._plain = plain = self.free.view(np.ndarray)
        self.cpu_free, self.memory_free, self.gpu_free_total, self.gpu_idle = (_frozen(plain[:, i]) for i in range(4))
        self.gpu_free = _frozen(plain[:, 4:4 + width])
        self.gpu_pods = _frozen(plain[:, 4 + width:])
        self._pods_at = 4 + width  # the block's column of pod shape 0
        # Python copies of static per-node figures for the scalar checks (cheaper than numpy scalars)
        self._cpu_total, self._memory_total = self.cpu_total.tolist(), self.memory_total.tolist()
        self._gpu_count, self._gpu_model = self.gpu_count.tolist(), self.gpu_model.tolist()
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
                _frozen(self.cpu_total), _frozen(self.cpu_free), _frozen(self.memory_total),
                _frozen(self.memory_free), _frozen(self.gpu_count), _frozen(self.gpu_model),
                _frozen(self.gpu_free), _frozen(self.gpu_free_total), _frozen(self.gpu_idle),
                _frozen(self.gpu_pods), _frozen(self.rack), self.model_names,
                int(self.cpu_total.max(initial=0)), int(self.gpu_count.max(initial=0)) * MILLI,
                self.fragmentation, {}, None if self.spot is None else _frozen(self.spot),
                None if self.tier_rank is None else _frozen(self.tier_rank), self.log)
        return self._view

    @property
    def gpu_milli_capacity(self) -> int:
        return int(self.gpu_count.sum()) * MILLI

    @property
    def gpu_milli_free(self) -> int:
        return int(self.gpu_free_total.sum())

    def check(self, placement: Placement, request: PodRequest) -> None:
        """Raise PlacementError unless `request` fits on `placement` right now (scalar checks only)."""
        self._checked_row(placement, request)

    def _checked_row(self, placement: Placement, request: PodRequest) -> list[int]:
        """`check`, returning the node's row of the block as Python ints (read once, for `_apply`)."""
        node, gpus = placement.node, placement.gpus
        if not 0 <= node < len(self._cpu_total):
            raise PlacementError(f"node {node} does not exist (fleet has {len(self._cpu_total)} nodes)")
        row = self._plain[node].tolist()
        if row[0] < request.cpu_milli or row[1] < request.memory_mib:
            raise PlacementError(f"node {node} lacks CPU or memory for {request}")
        if len(gpus) != request.num_gpu or placement.gpu_milli != request.gpu_milli:
            raise PlacementError(f"{placement} does not match the request's GPUs ({request})")
        if not gpus:
            return row
        self._check_gpu_indices(placement)
        for g in gpus:
            if row[4 + g] < request.gpu_milli:
                raise PlacementError(f"{placement}: a chosen GPU has less than {request.gpu_milli} milli free")
        model = self._gpu_model[node]
        if request.gpu_models and (model < 0 or self.model_names[model] not in request.gpu_models):
            raise PlacementError(f"node {node}'s GPU model is not one of {request.gpu_models}")
        return row

    def _check_gpu_indices(self, placement: Placement) -> None:
        gpus, count = placement.gpus, self._gpu_count[placement.node]
        if len(gpus) == 1:  # the common case, without a generator
            if not 0 <= gpus[0] < count:
                raise PlacementError(f"{placement}: GPU indices must be distinct GPUs of node {placement.node}")
            return
        if len(set(gpus)) != len(gpus) or min(gpus) < 0 or max(gpus) >= count:
            raise PlacementError(f"{placement}: GPU indices must be distinct GPUs of node {placement.node}")

    def allocate(self, placement: Placement, request: PodRequest) -> None:
        """Take `request`'s resources on `placement`, after checking that they are free."""
        self._apply(placement, request, -1, self._checked_row(placement, request))

    def release(self, placement: Placement, request: PodRequest) -> None:
        """Give back what `allocate(placement, request)` took; refuses to exceed any capacity."""
        node, gpus = placement.node, placement.gpus
        if not 0 <= node < len(self._cpu_total) or len(gpus) != request.num_gpu:
            raise PlacementError(f"cannot release {request} from {placement}")
        if gpus:
            self._check_gpu_indices(placement)
        row = self._plain[node].tolist()
        if (row[0] + request.cpu_milli > self._cpu_total[node]
                or row[1] + request.memory_mib > self._memory_total[node]
                or any(row[4 + g] + placement.gpu_milli > MILLI for g in gpus)
                or (gpus and row[self._pods_at + request.shape_slot] < 1)):
            raise PlacementError(f"releasing {request} from {placement} would exceed node capacity")
        self._apply(placement, request, +1, row)

    def _apply(self, placement: Placement, request: PodRequest, sign: int, row: list[int]) -> None:
        """Move the request's resources on one node (sign -1 take, +1 give back), given the node's
        `row` of the block as read before: GPU by GPU, keeping the node's free total and idle count
        current instead of recounting, then the row written back at once."""
        node, gpus = placement.node, placement.gpus
        row[0] += sign * request.cpu_milli
        row[1] += sign * request.memory_mib
        if gpus:
            delta = sign * placement.gpu_milli
            idle = 0
            for g in gpus:
                before = row[4 + g]
                row[4 + g] = before + delta
                idle += (before + delta == MILLI) - (before == MILLI)
            row[2] += delta * len(gpus)
            row[3] += idle
            row[self._pods_at + request.shape_slot] -= sign
        self._plain[node] = row
        if self.log is not None:
            self.log.note(node)
        if self.fragmentation is not None:
            self.fragmentation.refresh(np.array([node]), self.cpu_free, self.gpu_free)
