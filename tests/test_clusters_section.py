"""The What-if page's by-cluster section and its chart (dashboard.sections.clusters,
dashboard.charts.clusters) on hand-built runs."""
from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from dashboard.charts.clusters import cluster_bars
from dashboard.sections.clusters import MEASURES
from engine.analysis.runs.catalogue import keys
from engine.analysis.runs.clusters import by_cluster


def _runs():
    from sim_helpers import job
    from test_cluster_step import simulate

    jobs = [job(0, 0, 100, 8), job(1, 1, 1000, 32, nodes=4)]
    return {"any": simulate(jobs, "any"), "most-free": simulate(jobs, "most-free")}


def test_the_chart_has_a_bar_per_cluster_for_each_scenario_in_the_measures_unit():
    tables = {name: by_cluster(result) for name, result in _runs().items()}
    fig = cluster_bars(tables, "cluster_utilization")
    assert [t.name for t in fig.data] == ["any", "most-free"]
    assert list(fig.data[1].x) == ["r / a", "r / b", "r / c"]
    assert list(fig.data[1].y) == pytest.approx(list(100 * tables["most-free"]["cluster_utilization"]))
    assert "%" in fig.layout.yaxis.title.text
    waits = cluster_bars(tables, "cluster_wait_mean_s")
    assert list(waits.data[1].y) == pytest.approx(list(tables["most-free"]["cluster_wait_mean_s"] / 3600))


def test_the_section_offers_every_cluster_measure():
    assert set(MEASURES) == keys("cluster")


def _page():
    from test_clusters_section import _runs

    from dashboard.sections.clusters import clusters_section

    runs = _runs()
    clusters_section(list(runs), list(runs.values()))


def test_the_section_draws_a_chart_and_a_table_of_both_runs():
    app = AppTest.from_function(_page, default_timeout=60)
    app.run()
    assert not app.exception, app.exception
    assert [h.value for h in app.subheader] == ["By cluster"]
    table = app.dataframe[0].value
    assert len(table) == 6 and set(table["scenario"]) == {"any", "most-free"}
    app.selectbox(key="wi_cluster_measure").select("cluster_gpu_hours").run()
    assert not app.exception, app.exception
