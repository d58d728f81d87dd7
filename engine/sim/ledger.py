"""The run's usage ledger: who holds what now, and who used how much, decayed with a half-life.

Per region and team: GPUs, CPU cores and GiB of memory held now (fairness orders and quotas read
them), and GPUs held per region and queue class (quotas by queue). Fleet-wide per team, user and
project: usage in GPU-seconds decayed with half-life h, as Slurm's fair-share does: work done dt
seconds ago counts 2^(-dt/h). Between two changes the holding rate R is constant, so advancing the
clock by dt is exact: U <- U 2^(-dt/h) + R h / ln 2 (1 - 2^(-dt/h)). `served_gpu_s` is the same
without decay. `view(region)` is the `ShareView` policies read.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from engine.sim.views import ShareView

DEFAULT_HALF_LIFE_S = 7 * 86_400.0


def codes(values) -> tuple[np.ndarray, tuple[str, ...]]:
    """Integer codes of `values` and the sorted distinct names."""
    codes_, names = pd.factorize(pd.Series(values, dtype=object).fillna(""), sort=True)
    return codes_.astype(np.int64), tuple(str(n) for n in names)


class Ledger:
    """Holdings and decayed usage of one run (see the module docstring)."""

    def __init__(self, team: np.ndarray, user: np.ndarray, project: np.ndarray, queue_class: np.ndarray,
                 n_queues: int, regions: list, weights: dict[str, float], orgs: dict[str, str],
                 half_life_s: float, seed: int) -> None:
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
        self.rate = np.zeros(n_teams)
        self.user_rate, self.project_rate = np.zeros(len(users)), np.zeros(len(projects))
        self.usage, self.served = np.zeros(n_teams), np.zeros(n_teams)
        self.user_usage, self.project_usage = np.zeros(len(users)), np.zeros(len(projects))
        self.half_life_s, self.seed, self.clock = float(half_life_s), int(seed), 0.0
        self.capacity = [(f.capacity_gpus, float(f.state.cpu_total.sum()) / 1000.0,
                          float(f.state.memory_total.sum()) / 1024.0) for f in regions]

    def advance(self, now: float) -> None:
        dt = now - self.clock
        if dt <= 0:
            return
        decay = 2.0 ** (-dt / self.half_life_s)
        grow = self.half_life_s / math.log(2.0) * (1.0 - decay)
        self.usage = self.usage * decay + self.rate * grow
        self.user_usage = self.user_usage * decay + self.user_rate * grow
        self.project_usage = self.project_usage * decay + self.project_rate * grow
        self.served += self.rate * dt
        self.clock = now

    def hold(self, j: int, region: int, gpus: float, cpus: float, memory_gib: float, now: float, sign: int) -> None:
        """Job j starts (sign +1) or stops (-1) holding these resources in `region` at `now`."""
        self.advance(now)
        t = self.team_list[j]
        self.gpus[region, t] += sign * gpus
        self.cpus[region, t] += sign * cpus
        self.memory[region, t] += sign * memory_gib
        self.queue_gpus[region, self.queue_list[j]] += sign * gpus
        self.rate[t] += sign * gpus
        self.user_rate[self.user_list[j]] += sign * gpus
        self.project_rate[self.project_list[j]] += sign * gpus

    def view(self, region: int, now: float) -> ShareView:
        self.advance(now)
        gpus, cpus, memory = self.capacity[region]
        return ShareView(self.teams, self.orgs, self.org, self.weight, self.usage.copy(), self.served.copy(),
                         self.gpus[region].copy(), self.cpus[region].copy(), self.memory[region].copy(),
                         self.user_usage.copy(), self.project_usage.copy(), gpus, cpus, memory,
                         self.half_life_s, self.seed)
