"""The run's usage ledger: who holds what now, and who used how much, decayed with a half-life.

Per region and team: GPUs, CPU cores and GiB of memory held now (fairness orders and quotas read
them), and GPUs held per region and queue class (quotas by queue). Fleet-wide per team, user and
project: usage in GPU-seconds decayed with half-life h, as Slurm's fair-share does: work done dt
seconds ago counts 2^(-dt/h). Between two changes of an entity's holding rate R the rate is
constant, so bringing its usage from its last change at t0 to now is exact:
U(now) = U(t0) 2^(-dt/h) + R h / ln 2 (1 - 2^(-dt/h)), dt = now - t0. Each entity keeps its own t0,
so a start or stop updates only its team, user and project; `view(region)` brings every entity to
now at once. `served_gpu_s` is the same without decay. Per-user and per-project usage is kept only
for orders that read it (`members`); otherwise those arrays of the view stay 0.

Every start and stop changes the ledger, and most changes are never read before the next one, so
the figures live in Python lists (a float of a list costs less to update than a numpy scalar; the
quota gate reads `gpus` and `queue_gpus` as they are) and become arrays only when read, except the
three figures of the decayed usage, kept in an array as well (read at most passes): a `view`
computes each of its fields at its first read (the multifactor order reads the teams' decayed usage
alone), and a region's holdings arrays are kept (read only) until the region's next change. The teams'
decayed usage of a view can be read even after later changes: the view keeps the teams' figures of its
moment (copied once per change, when a view is made), so an order can key a job from it only if the
key is ever needed (engine.sim.cycle.order_cache).
"""
from __future__ import annotations

import math
from functools import partial

import numpy as np
import pandas as pd

from engine.core.kernel_entry import entry
from engine.core.views import ShareView

LN2 = math.log(2.0)
# engine.core.decay_kernels' entry points for a ledger's figures (engine.core.kernel_entry), made at the first
# usage read: numba costs a process about 0.2 s, which runs without a ledger need not pay
decay_calls: tuple | None = None
HELD = ("running_gpus", "running_cpus", "running_memory_gib")  # the rows of a region's holdings


def codes(values) -> tuple[np.ndarray, tuple[str, ...]]:
    """Integer codes of `values` and the sorted distinct names; a missing value (None, NaN) is the name ""."""
    series = pd.Series(values, dtype=object)
    codes_, names = pd.factorize(series, sort=True)  # a missing value's code is -1
    if (codes_ < 0).any():  # only then pay for the scan that finds them
        codes_, names = pd.factorize(series.fillna(""), sort=True)
    return codes_.astype(np.int64), tuple(str(n) for n in names)


class Ledger:
    """Holdings and decayed usage of one run (see the module docstring). `cpus`, `memory_gib`: per
    job, the CPU cores and GiB of memory it holds while it runs."""

    def __init__(self, team: np.ndarray, user: np.ndarray, project: np.ndarray, queue_class: np.ndarray,
                 n_queues: int, regions: list, weights: dict[str, float], orgs: dict[str, str],
                 half_life_s: float, seed: int, cpus: list[float], memory_gib: list[float],
                 members: bool = True) -> None:
        self.team, self.teams = codes(team)
        self.user, users = codes(user)
        self.project, projects = codes(project)
        self.user_names, self.project_names = users, projects
        self.queue_class = queue_class
        self.team_list, self.queue_list = self.team.tolist(), queue_class.tolist()
        self.user_list, self.project_list = self.user.tolist(), self.project.tolist()
        self.cpus_list, self.memory_list = cpus, memory_gib
        self.weight = np.array([float(weights.get(t, 1.0)) for t in self.teams])
        org_codes, self.orgs = codes([orgs.get(t, "all") for t in self.teams])
        self.org = org_codes if len(self.teams) else np.zeros(0, np.int64)
        self.regions = regions  # RegionFleet per region index
        n_teams, n_regions = len(self.teams), len(regions)
        # per region: GPUs, CPU cores and GiB per team, GPUs per queue class
        self.gpus = [[0.0] * n_teams for _ in range(n_regions)]
        self.cpus = [[0.0] * n_teams for _ in range(n_regions)]
        self.memory = [[0.0] * n_teams for _ in range(n_regions)]
        self.queue_gpus = [[0.0] * n_queues for _ in range(n_regions)]
        self.arrays: list[tuple | None] = [None] * n_regions  # per region: (gpus, cpus, memory) arrays since the last change
        self.half_life_s, self.seed = float(half_life_s), int(seed)
        self.kinds = [_Decayed(n_teams), _Decayed(len(users)), _Decayed(len(projects))]
        self.members = members
        self.changes = 0  # starts and stops so far: a view's figures are those of its moment
        self.teams_now: np.ndarray | None = None  # the teams' figures at the last change, once a view asked
        # per region: the fields of its views that do not change during a run
        self.given = [dict(teams=self.teams, orgs=self.orgs, org=self.org, weight=self.weight,
                           capacity_gpus=f.capacity_gpus, capacity_cpus=float(f.state.cpu_total.sum()) / 1000.0,
                           capacity_memory_gib=float(f.state.memory_total.sum()) / 1024.0,
                           half_life_s=self.half_life_s, seed=self.seed) for f in regions]

    def hold(self, j: int, region: int, gpus: float, now: float, sign: int) -> None:
        """Job j starts (sign +1) or stops (-1) holding `gpus` (and its CPUs and memory) in `region` at `now`."""
        now = float(now)  # event times may be numpy floats: the same value, cheaper arithmetic
        t = self.team_list[j]
        delta = sign * gpus
        self.gpus[region][t] += delta
        self.cpus[region][t] += sign * self.cpus_list[j]
        self.memory[region][t] += sign * self.memory_list[j]
        self.queue_gpus[region][self.queue_list[j]] += delta
        self.arrays[region] = None
        self.changes += 1
        self.teams_now = None
        h = self.half_life_s
        teams, users, projects = self.kinds
        teams.change(t, delta, now, h)
        if self.members:
            users.change(self.user_list[j], delta, now, h)
            projects.change(self.project_list[j], delta, now, h)

    def view(self, region: int, now: float) -> ShareView:
        """The ledger at `now` for a pass over `region`. Its usage and holdings are computed at their
        first read (most orders read a few of them), which must come before the ledger's next change;
        the teams' decayed usage (`usage_gpu_s`) may be read at any time."""
        teams = self.teams_now
        if teams is None:
            teams = self.teams_now = self.kinds[0].figures.copy()
        return ShareView.deferred(self.given[region], partial(self._field, region, now, self.changes, teams))

    def _field(self, region: int, now: float, changes: int, teams: tuple, name: str) -> np.ndarray:
        """The field `name` of `view(region, now)`, taken while the ledger had seen `changes` changes;
        `teams`: the teams' figures then (`_Decayed.figures`)."""
        h = self.half_life_s
        if name == "usage_gpu_s":
            return usage_at(teams, now, h)
        if changes != self.changes:
            raise RuntimeError(f"ShareView.{name} read after the ledger changed: read the view before the next "
                               "start or stop")
        teams, users, projects = self.kinds
        if name == "served_gpu_s":
            return teams.served_at(now)
        if name in ("user_usage_gpu_s", "project_usage_gpu_s"):
            kind = users if name == "user_usage_gpu_s" else projects
            return kind.usage_at(now, h) if self.members else kind.zeros
        held = self.arrays[region]
        if held is None:  # one read-only array, its rows the three figures
            held = np.array([self.gpus[region], self.cpus[region], self.memory[region]], np.float64).reshape(3, -1)
            held.flags.writeable = False
            held = self.arrays[region] = (held[0], held[1], held[2])
        return held[HELD.index(name)]


class _Decayed:
    """Decayed and plain usage of n entities, each brought up to date at its own last change."""

    def __init__(self, n: int) -> None:
        self.usage, self.served, self.rate, self.since = [0.0] * n, [0.0] * n, [0.0] * n, [0.0] * n
        # the usage, the level (rate h / ln 2: the usage a constant rate tends to) and the since of every
        # entity, kept with the lists for `usage_at` (numpy's operations on arrays cost less than on lists)
        self.figures = np.zeros((3, n))
        self.rows = tuple(self.figures)
        self.zeros = np.zeros(n)

    def change(self, e: int, delta: float, now: float, half_life_s: float) -> None:
        usage, level, since = self.rows
        dt = now - self.since[e]
        rate = self.rate[e]
        if dt > 0:
            decay = 2.0 ** (-dt / half_life_s)
            self.usage[e] = usage[e] = self.usage[e] * decay + rate * half_life_s / LN2 * (1.0 - decay)
            self.served[e] += rate * dt
            self.since[e] = since[e] = now
        self.rate[e] = rate + delta
        level[e] = (rate + delta) * half_life_s / LN2

    def usage_at(self, now: float, half_life_s: float) -> np.ndarray:
        """Decayed usage of every entity at `now`, GPU-seconds."""
        return usage_at(self.figures, now, half_life_s)

    def served_at(self, now: float) -> np.ndarray:
        """Plain (not decayed) usage of every entity at `now`, GPU-seconds: served + R (now - since)."""
        now = float(now)
        return np.array([s - r * (t - now) for s, r, t in zip(self.served, self.rate, self.since)], np.float64)


def usage_at(figures: np.ndarray, now: float, half_life_s: float) -> np.ndarray:
    """Decayed usage at `now` of entities with these `figures` (`_Decayed.figures`, or a copy: a C-contiguous
    (3, n) float64 array, the one type the kernels' entry points read), GPU-seconds."""
    global decay_calls
    now, half_life_s = float(now), float(half_life_s)
    if decay_calls is None:
        from engine.core import decay_kernels as kernels
        exponents = entry(kernels.decay_exponents, (figures, now, half_life_s))
        decay_calls = exponents, entry(kernels.decayed, (figures, np.exp2(exponents(figures, now, half_life_s))))
    exponents, decayed = decay_calls
    # since - now is exactly -(now - since): the same figures as U0 2^(-dt/h) + R h / ln 2 (1 - 2^(-dt/h)),
    # bit for bit, in fewer operations
    return decayed(figures, np.exp2(exponents(figures, now, half_life_s)))
