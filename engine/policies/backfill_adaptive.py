"""Adaptive backfilling: change the backfilling strategy as the workload changes.

Every `period_s` (a day by default) the scheduler replays the recent past under each strategy of
`strategies` and keeps, until the next period, the one with the best `kpi`; each switch is recorded in
the decision log ("backfill-switched", against the head job of the pass that made it). The replay is
made by the simulator (engine.sim.cycle.adaptive) on a copy of the region's state at the start of the
period: the jobs alive in the region then or submitted since, on its nodes emptied, with the runtimes
a scheduler knows at the decision (a finished job's actual runtime, a running or waiting job's
request). KPIs, over the jobs submitted in the period, lower is better: "mean-wait", "p95-wait",
"mean-bounded-slowdown" (tau 10 s). The idea of switching strategies with the workload is that of
Talby and Feitelson's adaptive scheduling ("Improving and stabilizing parallel computer performance
using adaptive backfilling", IPDPS 2005), where a simulation of the recent past under each candidate
policy picks the next one. Until the first period ends, the first strategy is used.

Cost per decision: one simulation of the period's jobs per strategy (the decision cost of
benchmarks/bench_schedule_pass.py); between decisions a pass costs what the chosen strategy costs.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import ClassVar

from engine.core.bounds import TEN_YEARS_S
from engine.policies.backfill import FAMILY
from engine.policies.registry import make, register

KPIS = ("mean-wait", "p95-wait", "mean-bounded-slowdown")


@register(FAMILY, "adaptive")
@dataclass(frozen=True)
class AdaptiveBackfill:
    """Adaptive backfilling (after Talby and Feitelson, IPDPS 2005): every `period_s` replay the recent
    past under each of `strategies` (backfill policy keys, comma-separated) and switch to the best by
    `kpi` (mean-wait, p95-wait, mean-bounded-slowdown); switches go to the decision log. See the
    module docstring for the replay's definition and cost."""

    switches_strategy: ClassVar[bool] = True
    period_s: float = field(default=86_400.0, metadata={"unit": "s", "min": 600.0, "max": TEN_YEARS_S,
                                                        "help": "time between strategy decisions (at least 10 min)"})
    kpi: str = field(default="mean-wait", metadata={"help": "what the replay minimises: " + ", ".join(KPIS)})
    strategies: str = field(default="easy,easy-sjbf,selective,conservative",
                            metadata={"help": "backfill policies to choose from, comma-separated"})

    def __post_init__(self) -> None:
        if self.kpi not in KPIS:
            raise ValueError(f"kpi must be one of {', '.join(KPIS)}, got {self.kpi!r}")
        keys = self.keys()
        if not keys or "adaptive" in keys or "easy++" in keys:
            raise ValueError(f"strategies must name other backfill policies than adaptive and easy++ (its "
                             f"predictions are made by the run), got {self.strategies!r}")
        self.policies()  # unknown keys fail here, when the scenario is read

    def keys(self) -> list[str]:
        return [k.strip() for k in self.strategies.split(",") if k.strip()]

    def policies(self) -> list:
        return [make(FAMILY, key) for key in self.keys()]

    def window(self, head_units, free_units, running_end_s, running_units, now_s, *,
               head_requested_s: float = math.inf, head_pool: int = 0):
        """The first strategy's window (the simulator asks the strategy in force instead)."""
        return self.policies()[0].window(head_units, free_units, running_end_s, running_units, now_s,
                                         head_requested_s=head_requested_s, head_pool=head_pool)
