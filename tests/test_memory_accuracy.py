"""The memory-need model's accuracy on held-out later jobs of the sample (engine.service.memory_accuracy)."""
import pytest

from engine.predict.gpu_need import NeedSettings
from engine.service.memory_accuracy import memory_need_accuracy
from engine.telemetry.sample import read_bundle


@pytest.fixture(scope="module")
def report():
    tables = read_bundle().tables
    return memory_need_accuracy(tables["jobs"].iloc[::4].reset_index(drop=True), tables["regions"],
                                NeedSettings(quantile=0.9, max_iter=30))


def test_the_model_covers_about_its_quantile_and_saves_memory_where_the_users_last_job_does_not(report):
    assert report["jobs_test"] > 5000
    model, last, request = report["model"], report["user_last"], report["request"]
    assert 0.8 < model["margin_0"]["covered"] < 0.95 and model["margin_0"]["saved_share"] > 0.2
    # the margin trades memory for safety; the request risks nothing and saves nothing
    assert model["margin_25"]["covered"] > model["margin_0"]["covered"]
    assert model["margin_25"]["saved_share"] < model["margin_0"]["saved_share"]
    assert (request["margin_0"]["covered"], request["margin_0"]["saved_share"]) == (1.0, 0.0)
    assert last["margin_0"]["covered"] < model["margin_0"]["covered"]
    assert model["margin_0"]["pinball"] < min(last["margin_0"]["pinball"], request["margin_0"]["pinball"])
