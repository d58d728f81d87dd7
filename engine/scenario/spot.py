"""The spot interruption model a scenario declares ([spot], engine.scenario.sharing parses it): a rate
of interruptions per spot node-hour, per region if given, times a factor per local hour; the
simulator draws the interruptions from it (engine.sim.processes.spot)."""
from __future__ import annotations

from dataclasses import dataclass, field

HOURS = 24
FLAT = (1.0,) * HOURS  # the default hourly factors: a constant rate


@dataclass(frozen=True)
class SpotModel:
    """interruptions_per_node_hour: the rate of every spot node (0: no interruptions);
    region_rate: region -> rate, overriding it; fallback_after: interruptions after which a job
    keeps off spot nodes (0: never); hourly_factor: 24 multipliers of the rate, one per local hour
    0-23; region_hourly_factor: region -> 24 multipliers, overriding them; interruptible_only: only
    jobs whose queue class allows spot run on spot nodes (true), any job may (false: as a recorded
    history that placed work there did; the `recorded` baseline sets it, engine.scenario.recorded), or
    unset (None): true when the run draws interruptions, false otherwise (see `keeps_work_off_spot`)."""

    interruptions_per_node_hour: float = 0.0
    region_rate: dict = field(default_factory=dict)
    fallback_after: int = 0
    hourly_factor: tuple = FLAT
    region_hourly_factor: dict = field(default_factory=dict)
    interruptible_only: bool | None = None

    def rate(self, region: str) -> float:
        """Interruptions per node-hour of `region`'s spot nodes before the hourly factor."""
        return float(self.region_rate.get(region, self.interruptions_per_node_hour))

    def factors(self, region: str) -> tuple:
        """The 24 hourly factors of `region` (local hours 0-23)."""
        return tuple(self.region_hourly_factor.get(region, self.hourly_factor))

    @property
    def keeps_work_off_spot(self) -> bool:
        """Whether the simulator keeps work whose queue class does not allow spot off spot nodes: as
        `interruptible_only` says, or, unset, when interruptions are drawn. A spot node the run never
        takes back is capacity like any other, so keeping work off it would guard against nothing the
        run models, and would make a candidate pay for a rule its recorded baseline did not follow."""
        return self.enabled if self.interruptible_only is None else self.interruptible_only

    @property
    def enabled(self) -> bool:
        profiles = [(self.interruptions_per_node_hour, self.hourly_factor)]
        profiles += [(self.rate(r), self.factors(r)) for r in {*self.region_rate, *self.region_hourly_factor}]
        return any(rate > 0 and max(factors) > 0 for rate, factors in profiles)
