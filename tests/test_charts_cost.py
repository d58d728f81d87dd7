"""Cost & carbon charts: the stacked spend bars and their legend."""
from __future__ import annotations

import pandas as pd

from dashboard.charts import cost as charts_cost


def spend(tiers: dict[str, float]) -> pd.DataFrame:
    """A CostReport.spend table of one region: USD per tier, reserved half idle."""
    return pd.DataFrame({"region": "us", "tier": list(tiers), "usd": list(tiers.values()),
                         "idle_usd": [v / 2 if t == "reserved" else 0.0 for t, v in tiers.items()]})


def bar_names(fig) -> list[str]:
    return [trace.name for trace in fig.data if trace.type == "bar"]


def test_parts_split_reserved_into_used_and_idle_and_sum_to_the_spend():
    parts = charts_cost.spend_parts(spend({"reserved": 100.0, "on-demand": 30.0, "burst": 12.0}), "tier").sum()
    assert parts.to_dict() == {"reserved, used": 50.0, "reserved, idle": 50.0, "on-demand": 30.0, "spot": 0.0,
                               "cloud burst": 12.0}


def test_cloud_burst_is_in_the_legend_only_when_some_scenario_rented():
    plain = {"fifo": spend({"reserved": 100.0, "on-demand": 30.0})}
    assert bar_names(charts_cost.spend_by_scenario(plain)) == ["reserved, used", "reserved, idle", "on-demand", "spot"]
    bursting = {**plain, "burst": spend({"reserved": 100.0, "burst": 12.0})}
    fig = charts_cost.spend_by_scenario(bursting)
    assert bar_names(fig)[-1] == "cloud burst"
    assert list(fig.data[4].y) == [0.0, 12.0]  # scenarios in the given order: fifo rented nothing
    assert bar_names(charts_cost.spend_by_region(bursting["burst"], "burst"))[-1] == "cloud burst"
