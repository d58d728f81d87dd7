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
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from engine.sim.views import ShareView

DEFAULT_HALF_LIFE_S = 7 * 86_400.0
LN2 = math.log(2.0)


def codes(values) -> tuple[np.ndarray, tuple[str, ...]]:
    """Integer codes of `values` and the sorted distinct names."""
    codes_, names = pd.factorize(pd.Series(values, dtype=object).fillna(""), sort=True)
    return codes_.astype(np.int64), tuple(str(n) for n in names)


class Ledger:
    """Holdings and decayed usage of one run (see the module docstring)."""

    def __init__(self, team: np.ndarray, user: np.ndarray, project: np.ndarray, queue_class: np.ndarray,
                 n_queues: int, regions: list, weights: dict[str, float], orgs: dict[str, str],
                 half_life_s: float, seed: int, members: bool = True) -> None:
        self.team, self.teams = codes(team)
        self.user, users = codes(user)
        self.project, projects = codes(project)
        self.user_names, self.project_names = users, projects
        self.queue_class = queue_class
        self.team_list, self.queue_list = self.team.tolist(), queue_class.tolist()
        self.user_list, self.project_list = self.user.tolist(), self.project.tolist()
        self.weight = np.array([float(weights.get(t, 1.0)) for t in self.teams])
        org_codes, self.orgs = codes([orgs.get(t, "all") for t in self.teams])
        self.org = org_codes if len(self.teams) else np.zeros(0, np.int64)
        self.regions = regions  # RegionFleet per region index
        n_teams, n_regions = len(self.teams), len(regions)
        self.gpus = np.zeros((n_regions, n_teams))
        self.cpus = np.zeros((n_regions, n_teams))
        self.memory = np.zeros((n_regions, n_teams))
        self.queue_gpus = np.zeros((n_regions, n_queues))
        self.half_life_s, self.seed = float(half_life_s), int(seed)
        self.kinds = [_Decayed(n_teams), _Decayed(len(users)), _Decayed(len(projects))]
        self.members = members
        self.capacity = [(f.capacity_gpus, float(f.state.cpu_total.sum()) / 1000.0,
                          float(f.state.memory_total.sum()) / 1024.0) for f in regions]

    def hold(self, j: int, region: int, gpus: float, cpus: float, memory_gib: float, now: float, sign: int) -> None:
        """Job j starts (sign +1) or stops (-1) holding these resources in `region` at `now`."""
        t = self.team_list[j]
        self.gpus[region, t] += sign * gpus
        self.cpus[region, t] += sign * cpus
        self.memory[region, t] += sign * memory_gib
        self.queue_gpus[region, self.queue_list[j]] += sign * gpus
        h = self.half_life_s
        teams, users, projects = self.kinds
        teams.change(t, sign * gpus, now, h)
        if self.members:
            users.change(self.user_list[j], sign * gpus, now, h)
            projects.change(self.project_list[j], sign * gpus, now, h)

    def view(self, region: int, now: float) -> ShareView:
        """The ledger at `now` for a pass over `region`."""
        gpus, cpus, memory = self.capacity[region]
        h = self.half_life_s
        teams, users, projects = self.kinds
        usage, served = teams.at(now, h)
        user_usage, project_usage = (users.at(now, h)[0], projects.at(now, h)[0]) if self.members \
            else (users.usage, projects.usage)
        return ShareView(self.teams, self.orgs, self.org, self.weight, usage, served,
                         self.gpus[region].copy(), self.cpus[region].copy(), self.memory[region].copy(),
                         user_usage, project_usage, gpus, cpus, memory, h, self.seed)


class _Decayed:
    """Decayed and plain usage of n entities, each brought up to date at its own last change."""

    def __init__(self, n: int) -> None:
        self.usage, self.served, self.rate, self.since = np.zeros(n), np.zeros(n), np.zeros(n), np.zeros(n)
        self.level = np.zeros(n)  # rate h / ln 2: the usage a constant rate tends to

    def change(self, e: int, delta: float, now: float, half_life_s: float) -> None:
        dt = now - float(self.since[e])
        rate = float(self.rate[e])
        if dt > 0:
            decay = 2.0 ** (-dt / half_life_s)
            self.usage[e] = float(self.usage[e]) * decay + rate * half_life_s / LN2 * (1.0 - decay)
            self.served[e] += rate * dt
            self.since[e] = now
        self.rate[e] = rate + delta
        self.level[e] = (rate + delta) * half_life_s / LN2

    def at(self, now: float, half_life_s: float) -> tuple[np.ndarray, np.ndarray]:
        """(decayed usage, plain usage) of every entity at `now`, GPU-seconds."""
        # since - now is exactly -(now - since): the same figures as U0 2^(-dt/h) + R h / ln 2 (1 - 2^(-dt/h))
        # and served + R dt, bit for bit, in fewer numpy operations
        back = self.since - now
        decay = np.exp2(back / half_life_s)
        return self.usage * decay + self.level * (1.0 - decay), self.served - self.rate * back
