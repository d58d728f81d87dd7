"""The What-if page's constraint relaxation section through Streamlit's AppTest, on a two-region queue
whose one relaxation is worked out by hand."""
from __future__ import annotations

import pandas as pd
import pytest
from test_whatif_page import whatif_app

from engine.telemetry.batch import ImportBatch

T = pd.Timestamp

# eu and us have one 4-GPU node each; a (team nlp, eu) fills eu for 2 h. b (team nlp, eu, 2 GPUs, 30 min) arrives
# at 00:01: eu is full, us can take it and keep 2 of 4 GPUs free (>= 10 %), so soft-constraints sends it to us,
# relaxing team affinity (2 GPUs x 0.5 h = 1 GPU-hour away from the team). c (team vision, us) starts at home.
QUEUE = ImportBatch("csv", {
    "jobs": pd.DataFrame({
        "job_id": ["a", "b", "c"], "workload_class": ["training", "batch", "training"], "team": ["nlp", "nlp", "vision"],
        "submit_utc": [T("2024-03-04 00:00"), T("2024-03-04 00:01"), T("2024-03-04 00:02")],
        "start_utc": [T("2024-03-04 00:00"), T("2024-03-04 02:00"), T("2024-03-04 00:02")],
        "end_utc": [T("2024-03-04 02:00"), T("2024-03-04 02:30"), T("2024-03-04 00:32")],
        "requested_runtime_s": [7200.0, 1800.0, 1800.0],
        "gpus": [4.0, 2.0, 1.0], "gpu_type": ["H100"] * 3, "region": ["eu", "eu", "us"],
        "status": ["completed"] * 3}),
    "fleet": pd.DataFrame({"region": ["eu", "us"], "node": ["n1", "n2"], "gpu_type": ["H100"] * 2, "gpus": [4, 4],
                           "tier": ["reserved"] * 2}),
    "regions": pd.DataFrame({"region": ["eu", "us"], "timezone": ["Europe/Berlin", "America/New_York"]}),
})


@pytest.fixture
def app(tmp_path, monkeypatch):
    return whatif_app(tmp_path, monkeypatch, QUEUE)


def _table(app, column: str) -> pd.DataFrame:
    return next(d.value for d in app.dataframe if column in d.value.columns)


def test_whatif_reports_relaxations_per_constraint_and_per_team(app):
    app.multiselect(key="wi_candidates").set_value(["soft-constraints"])
    app.button(key="wi_run").click().run()
    assert not app.exception, app.exception
    assert not app.error
    assert "Constraint relaxations" in [h.value for h in app.subheader]
    by_constraint = _table(app, "mean_cost").set_index("constraint")
    assert list(by_constraint.index) == ["data-locality", "latency", "carbon", "cost", "team-affinity"]
    assert by_constraint["jobs"].tolist() == [0, 0, 0, 0, 1]
    assert by_constraint.loc["team-affinity", "cost"] == pytest.approx(1.0)
    assert by_constraint.loc["team-affinity", "share"] == pytest.approx(100 / 3)
    assert by_constraint.loc["team-affinity", "cost_unit"] == "GPU-hours away from the team"
    by_team = _table(app, "share_relaxed")
    assert by_team[["team", "jobs", "jobs_relaxed", "team-affinity", "jobs_moved_region"]].values.tolist() == [
        ["nlp", 2, 1, 1, 1], ["vision", 1, 0, 0, 0]]
    each = _table(app, "sent to")
    assert each[["job_id", "team", "routed (UTC)", "home", "sent to", "constraint"]].values.tolist() == [
        ["b", "nlp", "2024-03-04 00:01", "eu", "us", "team-affinity"]]


def test_the_section_is_absent_when_no_scenario_relaxes_constraints(app):
    app.multiselect(key="wi_candidates").set_value(["easy-backfill"])
    app.button(key="wi_run").click().run()
    assert not app.exception, app.exception
    assert "Constraint relaxations" not in [h.value for h in app.subheader]
    assert not any("mean_cost" in d.value.columns for d in app.dataframe)
