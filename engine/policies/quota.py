"""Quota policies (family "quota"): how many GPUs each team or queue may hold in a region.

Every policy has one method, `book(holders, weights, capacity_gpus, entries) -> QuotaBook`, called
once per region at the start of a run: `holders` are the quota holders (teams, or queue classes),
`weights` their share weights, `capacity_gpus` the region's GPUs and `entries` the scenario's
[[quota]] entries for that region by holder (`QuotaEntry`). The simulator then gates every start
through the book (engine.sim.cycle.quota_gate): a job that would take its holder past its limits is held
back ("blocked-by-quota" or "blocked-by-team-limit") without blocking the jobs behind it.

- "none": no limits.
- "team-limit": a cap on the GPUs each holder may hold at once in a region (Slurm's GrpTRES).
- "kueue": Kueue's ClusterQueue quotas (https://kueue.sigs.k8s.io/docs/concepts/cluster_queue/).
  Each holder has a nominal quota; the part above `nominal - lending_limit` is lent to its cohort;
  a holder may borrow from the cohort's unused lendable quota up to its borrowing limit. A holder
  without a [[quota]] entry gets nominal = capacity x its weight / the weights of all holders in
  the region (a development baseline is a holder with a small nominal quota and a borrowing limit:
  it keeps its baseline and bursts into idle capacity). When a holder within its nominal quota
  cannot start because others borrowed its lent quota, a preemption policy with `reclaim` evicts
  borrowers (engine.policies.preemption).
  Reclaim by the clock: an entry with `reclaim_at_work_start` lends only while its holder is off
  work. From `reclaim_lead_min` minutes before each of the holder's working days starts until the
  day ends (its calendar: a team's from the teams table, the region's for a queue or a team the
  table lacks; engine.world.calendar) the holder lends nothing, and at that instant borrowers are
  evicted until the holder has its whole nominal quota back (engine.sim.cycle.sharing). At night, on
  weekends and on holidays it lends as above.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from engine.policies.registry import register

FAMILY = "quota"
INF = math.inf


@dataclass(frozen=True)
class QuotaEntry:
    """One scenario [[quota]] entry: a holder's nominal quota, limits and cohort (GPUs)."""

    holder: str
    nominal_gpus: float | None = None
    borrowing_limit_gpus: float = INF
    lending_limit_gpus: float | None = None
    cohort: str = "all"
    region: str | None = None  # None: every region
    reclaim_at_work_start: bool = False  # lend only while the holder is off work (kueue)
    reclaim_lead_min: float = 0.0  # minutes before the working day starts that lending stops

    def __post_init__(self) -> None:
        if not 0 <= self.reclaim_lead_min <= 24 * 60:
            raise ValueError(f"quota {self.holder}: reclaim_lead_min must be 0-1440 (a day), got {self.reclaim_lead_min}")


@dataclass(frozen=True)
class QuotaBook:
    """Per holder in one region: nominal quota, borrowing limit, lending limit and cohort code;
    cap: the most GPUs a holder may hold at once (inf: none). All float64 GPUs except cohort."""

    nominal: np.ndarray
    borrow: np.ndarray
    lend: np.ndarray
    cohort: np.ndarray
    cap: np.ndarray
    quotas: bool  # False: only caps apply (no borrowing arithmetic)

    @classmethod
    def unlimited(cls, holders: int) -> "QuotaBook":
        inf = np.full(holders, INF)
        return cls(inf, inf, np.zeros(holders), np.zeros(holders, np.int64), inf, False)


def _by(value: str) -> None:
    if value not in ("team", "queue"):
        raise ValueError(f"by must be 'team' or 'queue', got {value!r}")


@register(FAMILY, "none", inert=True)
@dataclass(frozen=True)
class NoQuota:
    """No quota: any job may use any free capacity."""

    by = "team"

    def book(self, holders, weights, capacity_gpus, entries) -> QuotaBook:
        return QuotaBook.unlimited(len(holders))


@register(FAMILY, "team-limit")
@dataclass(frozen=True)
class TeamLimit:
    """Each team (or queue) may hold at most `max_gpus` GPUs at once per region."""

    max_gpus: float = field(default=64.0, metadata={"help": "most GPUs one holder may hold at once per region"})
    by: str = field(default="team", metadata={"help": "quota holder: team or queue"})

    def __post_init__(self) -> None:
        _by(self.by)
        if not self.max_gpus > 0:
            raise ValueError(f"max_gpus must be > 0, got {self.max_gpus}")

    def book(self, holders, weights, capacity_gpus, entries) -> QuotaBook:
        base = QuotaBook.unlimited(len(holders))
        return QuotaBook(base.nominal, base.borrow, base.lend, base.cohort, np.full(len(holders), self.max_gpus), False)


@register(FAMILY, "kueue")
@dataclass(frozen=True)
class Kueue:
    """Nominal quotas with borrowing and lending inside cohorts (Kueue's ClusterQueues)."""

    by: str = field(default="team", metadata={"help": "quota holder: team or queue"})
    lending_fraction: float = field(default=1.0, metadata={
        "help": "share of a holder's nominal quota lent to its cohort when idle, unless its entry sets lending_limit_gpus"})
    borrowing_limit_gpus: float = field(default=-1.0, metadata={
        "help": "most GPUs a holder may borrow above its nominal quota, unless its entry sets one (-1: no limit)",
        "unit": "GPUs", "min": -1.0, "max": 1e7})
    team_max_gpus: float = field(default=0.0, metadata={"help": "cap on the GPUs one holder holds at once (0: none)"})

    def __post_init__(self) -> None:
        _by(self.by)
        if not 0.0 <= self.lending_fraction <= 1.0:
            raise ValueError(f"lending_fraction must be in 0-1, got {self.lending_fraction}")
        if not (self.borrowing_limit_gpus >= 0 or self.borrowing_limit_gpus == -1) or self.team_max_gpus < 0:
            raise ValueError("borrowing_limit_gpus must be >= 0 (or -1: no limit) and team_max_gpus >= 0")

    def book(self, holders, weights, capacity_gpus, entries) -> QuotaBook:
        weights = np.asarray(weights, np.float64)
        explicit = {h: e for h, e in entries.items() if e.nominal_gpus is not None}
        left = max(capacity_gpus - sum(e.nominal_gpus for e in explicit.values()), 0.0)
        rest = np.array([h not in explicit for h in holders])
        share = np.where(rest, weights, 0.0)
        nominal = left * share / share.sum() if share.sum() > 0 else np.zeros(len(holders))
        borrow = np.full(len(holders), INF if self.borrowing_limit_gpus < 0 else self.borrowing_limit_gpus)
        lend = nominal * self.lending_fraction
        cohorts = {}
        cohort = np.zeros(len(holders), np.int64)
        for i, h in enumerate(holders):
            entry = entries.get(h)
            if entry is not None:
                if entry.nominal_gpus is not None:
                    nominal[i] = entry.nominal_gpus
                    lend[i] = nominal[i] * self.lending_fraction
                borrow[i] = entry.borrowing_limit_gpus if entry.borrowing_limit_gpus < INF else borrow[i]
                if entry.lending_limit_gpus is not None:
                    lend[i] = min(entry.lending_limit_gpus, nominal[i])
            cohort[i] = cohorts.setdefault(entry.cohort if entry is not None else "all", len(cohorts))
        cap = np.full(len(holders), self.team_max_gpus if self.team_max_gpus > 0 else INF)
        return QuotaBook(nominal, borrow, lend, cohort, cap, True)
