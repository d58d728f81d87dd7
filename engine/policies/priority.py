"""Multifactor priority (family "order", key "multifactor"), as Slurm's priority/multifactor plugin.

https://slurm.schedmd.com/priority_multifactor.html. A job's priority is a weighted sum of factors,
each in [0, 1]; the highest priority goes first:

- age = min(wait, max_age_s) / max_age_s, wait = now - submit;
- fairshare F = 2^(-U/S): U is the team's decayed usage over the decayed usage of all teams (0
  before anything ran), S the team's weight over the sum of all weights. A team that used exactly
  its share scores 0.5, an idle one 1;
- qos = the job's queue tier (`QueueView.qos`);
- size = gpus / the region's installed GPUs (capped at 1; Slurm's default favours large jobs), or
  1 minus that with `favor_small`. Without a ledger, or in a region without GPUs, the largest
  request in the queue stands for the capacity;
- deadline urgency rises linearly from 0 when the slack (deadline - now - requested runtime) is at
  least `deadline_horizon_s` to 1 when the slack is 0 or less; 0 without a deadline.

`factors()` returns the weighted factors, their sum and the boost flag per job (what `sprio` shows).
Without a ledger (`queue.shares is None`) every job belongs to one idle team: fairshare is 1 for all.

Starvation prevention (issue 5 item 6): with `boost_after_s` > 0, a job that has waited at least that
long gets an emergency boost and sorts before every unboosted job, the longest-waiting first. The
fairness orders (engine.policies.fairness) share `starving`, `boost_first` and `boost_field`.

Like Slurm, priorities are recomputed every `recalc_s` seconds (PriorityCalcPeriod, 5 minutes by
default): between two recalculations the simulator keeps each waiting job's priority and gives a
job that arrives in between its priority at arrival (engine.sim.cycle.order_cache); 0 recomputes at
every scheduling pass.

All times are seconds; `half_life_s` is the decay the simulator's usage ledger applies.

`keyer(queue)` prepares `keys` over subsets of one view of a run's every job (engine.sim.cycle.order_cache
keys the few jobs that join a queue at a time): the same keys, bit for bit, without building a view.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from engine.core.kernel_entry import entry
from engine.core.views import QueueView, ShareView
from engine.policies.registry import register

FAMILY = "order"
DAY_S = 86_400.0
FACTORS = ("age", "fairshare", "qos", "size", "deadline")
# engine.policies.priority_kernels, imported with the first fair share or keyer: numba costs a process about
# 0.2 s, which runs without them need not pay
kernels = None


def _load_kernels() -> None:
    global kernels
    if kernels is None:
        from engine.policies import priority_kernels as kernels


def boost_field():
    """The `boost_after_s` parameter every priority and fairness order has."""
    return field(default=0.0, metadata={
        "help": "emergency boost: a job waiting at least this many seconds goes before every other, "
                "longest wait first (0 = off)"})


def starving(queue: QueueView, now_s: float, boost_after_s: float) -> np.ndarray:
    """Bool per job: it has waited at least `boost_after_s` (no job when that is 0)."""
    if boost_after_s <= 0:
        return np.zeros(len(queue), bool)
    return now_s - queue.submit_s >= boost_after_s


def boost_first(levels: np.ndarray, queue: QueueView, now_s: float, boosted: np.ndarray) -> np.ndarray:
    """Sort keys (1 + k, n) from an order's keys `levels` (k, n): level 0 puts boosted jobs first,
    level 1 orders them by longest wait and the others by the order's first level; the order's
    other levels follow unchanged."""
    wait_s = now_s - queue.submit_s
    first = np.where(boosted, -wait_s, levels[0])
    return np.vstack([(~boosted).astype(np.float64), first, levels[1:]])


def check_parameters(policy, *, non_negative: tuple[str, ...] = (), positive: tuple[str, ...] = ()) -> None:
    """Raise ValueError naming the first parameter out of range (NaN is out of every range)."""
    for name in non_negative:
        value = getattr(policy, name)
        if not value >= 0:
            raise ValueError(f"{policy.registry_key}: {name} must be >= 0, got {value!r}")
    for name in positive:
        value = getattr(policy, name)
        if not value > 0:
            raise ValueError(f"{policy.registry_key}: {name} must be > 0, got {value!r}")


def fairshare_factor(queue: QueueView) -> np.ndarray:
    """F = 2^(-U/S) per job for its team (see the module docstring); 1 without a ledger."""
    if queue.shares is None:
        return np.ones(len(queue))
    return team_fairshare(queue.shares)[queue.team]


def team_fairshare(shares: ShareView, minus_share: np.ndarray | None = None) -> np.ndarray:
    """F = 2^(-U/S) per team of the ledger; `minus_share`: -S when the caller has it (else from the weights).
    U / -S is -U / S, bit for bit (IEEE division is sign-symmetric); U is 0 while nothing ran."""
    _load_kernels()
    if minus_share is None:
        minus_share = -(shares.weight / shares.weight.sum())
    # C-contiguous float64, the one type of the kernel's entry point (engine.core.kernel_entry): the same values
    usage = np.ascontiguousarray(shares.usage_gpu_s, np.float64)
    minus_share = np.ascontiguousarray(minus_share, np.float64)
    global _share_exponents
    if _share_exponents is None:
        _share_exponents = entry(kernels.share_exponents, (usage, minus_share))
    exponents = _share_exponents(usage, minus_share)
    return np.power(_twos(len(exponents)), exponents)


_share_exponents = None  # kernels.share_exponents' entry point for two C-contiguous float64 arrays


def _twos(n: int) -> np.ndarray:
    """n twos, read-only: the base of the fair share's power as an array (np.power takes it in about half the
    time of the float 2.0, with the same values: the same loop runs over both)."""
    twos = _TWOS.get(n)
    if twos is None:
        twos = _TWOS[n] = np.full(n, 2.0)
        twos.flags.writeable = False
    return twos


_TWOS: dict[int, np.ndarray] = {}


@register(FAMILY, "multifactor")
@dataclass(frozen=True)
class MultifactorPriority:
    """Slurm multifactor priority: weighted age, fair share, QoS, size and deadline urgency, highest
    first; an optional emergency boost for jobs that waited too long."""

    weight_age: float = field(default=1000.0, metadata={"help": "weight of the age factor (wait / max age)"})
    max_age_s: float = field(default=7 * DAY_S, metadata={"help": "wait at which the age factor reaches 1, s"})
    weight_fairshare: float = field(default=10000.0, metadata={
        "help": "weight of the fair-share factor 2^(-usage/share) of the job's team"})
    weight_qos: float = field(default=2000.0, metadata={"help": "weight of the queue's QoS tier (0-1)"})
    weight_size: float = field(default=500.0, metadata={"help": "weight of the job-size factor"})
    weight_deadline: float = field(default=3000.0, metadata={"help": "weight of the deadline urgency"})
    deadline_horizon_s: float = field(default=DAY_S, metadata={
        "help": "slack (deadline - now - requested) at which urgency starts rising from 0 to 1, s"})
    favor_small: bool = field(default=False, metadata={
        "help": "size factor favours small jobs (1 - gpus/capacity) instead of large ones"})
    half_life_s: float = field(default=7 * DAY_S, metadata={"help": "half-life of the decayed usage, s"})
    boost_after_s: float = boost_field()
    recalc_s: float = field(default=300.0, metadata={
        "help": "priorities are recomputed this often, s (Slurm's PriorityCalcPeriod; 0: every pass)"})

    def __post_init__(self) -> None:
        check_parameters(self, non_negative=("weight_age", "weight_fairshare", "weight_qos", "weight_size",
                                             "weight_deadline", "boost_after_s", "recalc_s"),
                         positive=("max_age_s", "deadline_horizon_s", "half_life_s"))

    def factors(self, queue: QueueView, now_s: float) -> dict[str, np.ndarray]:
        """Per job: the weighted factors (keys of FACTORS), "priority" (their sum) and "boosted"."""
        wait_s = now_s - queue.submit_s
        age = np.clip(wait_s, 0.0, self.max_age_s) / self.max_age_s
        size = self._size_factor(queue)
        with np.errstate(invalid="ignore"):
            slack_s = queue.deadline_s - now_s - queue.requested_s
        urgency = np.where(np.isfinite(queue.deadline_s),
                           np.clip(1.0 - slack_s / self.deadline_horizon_s, 0.0, 1.0), 0.0)
        weighted = {
            "age": self.weight_age * age,
            "fairshare": self.weight_fairshare * fairshare_factor(queue),
            "qos": self.weight_qos * queue.qos,
            "size": self.weight_size * size,
            "deadline": self.weight_deadline * urgency,
        }
        weighted["priority"] = sum(weighted[name] for name in FACTORS)
        weighted["boosted"] = starving(queue, now_s, self.boost_after_s)
        return weighted

    def _size_factor(self, queue: QueueView) -> np.ndarray:
        capacity = queue.shares.capacity_gpus if queue.shares is not None else 0.0
        if capacity <= 0:
            capacity = queue.size.max(initial=0.0)
        size = np.clip(queue.size / capacity, 0.0, 1.0) if capacity > 0 else np.zeros(len(queue))
        return 1.0 - size if self.favor_small else size

    def keys(self, queue: QueueView, now_s: float) -> np.ndarray:
        factors = self.factors(queue, now_s)
        return boost_first(np.stack([-factors["priority"], queue.submit_s]), queue, now_s, factors["boosted"])

    def keyer(self, queue: QueueView) -> MultifactorKeyer:
        """`keys` for subsets of `queue` (a run's every job), cheap for a few jobs at a time."""
        return MultifactorKeyer(self, queue)


class MultifactorKeyer:
    """`MultifactorPriority.keys` over subsets of `queue`, a view of a run's every job:
    `keys(positions, shares, now_s)` equals `policy.keys(queue.take(positions).with_shares(shares), now_s)`,
    bit for bit, in one compiled call (engine.policies.priority_kernels.keys) with the job-constant
    factors gathered from whole-run arrays. Of the ledger it reads the capacity, the weights and the
    teams' decayed usage only (which a ledger view keeps: the order cache keys a lone job from its view
    when needed)."""

    def __init__(self, policy: MultifactorPriority, queue: QueueView) -> None:
        _load_kernels()
        self.policy, self.queue = policy, queue
        self.first_level_constant = not policy.boost_after_s > 0  # no boost: every job's first key is 1
        self.weights: np.ndarray | None = None  # the ledger's weights that `share` was computed from
        self.minus_share = np.zeros(0)  # -S per team
        self.columns = np.array([queue.submit_s, queue.deadline_s, queue.requested_s, policy.weight_qos * queue.qos],
                                np.float64)  # kernels.SUBMIT, DEADLINE, REQUESTED, QOS
        self.team = np.ascontiguousarray(queue.team, np.int64)
        self.params = np.array([policy.weight_age, policy.max_age_s, policy.weight_fairshare, policy.weight_deadline,
                                policy.deadline_horizon_s, policy.boost_after_s], np.float64)  # kernels.WEIGHT_AGE, ...
        self.sizes: dict[float, np.ndarray] = {}  # the weighted size factor of every job, per capacity
        # kernels.keys' entry point (engine.core.kernel_entry), made at the first call: every argument's type is
        # fixed here (C-contiguous int64 positions and team, float64 arrays this keyer or numpy makes, floats)
        self.call = None

    def keys(self, positions: np.ndarray, shares: ShareView | None, now_s: float) -> np.ndarray:
        """Sort keys (3, len(positions)) of the jobs at `positions`, with the ledger `shares`, at `now_s`."""
        p = self.policy
        if shares is None or not shares.capacity_gpus > 0:
            return p.keys(self.queue.take(positions).with_shares(shares), now_s)
        args = (np.ascontiguousarray(positions, np.int64), self.columns, self.team, self._sizes(shares),
                self._fairshare(shares), float(now_s), self.params)
        if self.call is None:
            self.call = entry(kernels.keys, args)
        return self.call(*args)

    def _fairshare(self, shares: ShareView) -> np.ndarray:
        """`team_fairshare(shares)`, each team's share S kept while the ledger's weights are the same array."""
        if shares.weight is not self.weights:
            self.weights, self.minus_share = shares.weight, -(shares.weight / shares.weight.sum())
        return team_fairshare(shares, self.minus_share)

    def _sizes(self, shares: ShareView) -> np.ndarray:
        """The weighted size factor of every job of the run with the ledger's capacity (C-contiguous float64)."""
        size = self.sizes.get(shares.capacity_gpus)
        if size is None:
            size = self.sizes[shares.capacity_gpus] = np.ascontiguousarray(
                self.policy.weight_size * self.policy._size_factor(self.queue.with_shares(shares)), np.float64)
        return size
