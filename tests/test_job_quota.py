"""The result's quotas table (engine.sim.run_tables) and the quota behind a job's wait
(engine.analysis.job_quota), on one 8-GPU node shared by teams a and b; figures worked out by hand
in the comments."""
import math

import pytest

from engine.analysis.job_quota import job_quota, quota_text
from sim_helpers import fleet
from test_sharing import by_id, row, sim

JOBS = [row(0, 0, 100, 4, team="a"), row(1, 1, 100, 6, team="a"), row(2, 2, 100, 2, team="b")]

CASES = [
    # team-limit 4: a holds at most 4; a1 (6 GPUs) can never start
    pytest.param({"key": "team-limit", "max_gpus": 4}, {}, "exceeds-quota", (math.inf, math.inf, 0.0, 4.0, 4.0),
                 "Team a may hold at most 4 GPUs at once in r (cap 4).", id="team-limit"),
    # kueue, equal weights: nominal 4 each, all lent; a may borrow 2: at most 6, so a1 waits for a0 (100 s)
    pytest.param({"key": "kueue"}, {"quota": [{"holder": "a", "borrowing_limit_gpus": 2}]}, "blocked-by-quota",
                 (4.0, 2.0, 4.0, math.inf, 6.0),
                 "Team a may hold at most 6 GPUs at once in r (nominal quota 4, borrowing limit 2).", id="borrowing"),
    # b lends only 1: a holds at most its 4 + 1
    pytest.param({"key": "kueue"}, {"quota": [{"holder": "b", "lending_limit_gpus": 1}]}, "exceeds-quota",
                 (4.0, math.inf, 4.0, math.inf, 5.0),
                 "Team a may hold at most 5 GPUs at once in r (nominal quota 4, up to 1 more borrowed from its "
                 "cohort).", id="cohort-lends-1"),
]


@pytest.mark.parametrize("quota, tables, reason, figures, text", CASES)
def test_the_quotas_table_and_the_sentence_behind_a_quota_wait(quota, tables, reason, figures, text):
    result = sim(JOBS, fleet(8), {"quota": quota}, **tables)
    assert by_id(result, "reason")["j1"] == reason
    table = result.quotas.set_index("holder")
    assert list(result.quotas.columns) == ["region", "holder", "by", "nominal_gpus", "borrowing_limit_gpus",
                                           "lending_limit_gpus", "cap_gpus", "most_gpus"]
    assert table.loc["a", ["nominal_gpus", "borrowing_limit_gpus", "lending_limit_gpus", "cap_gpus",
                           "most_gpus"]].tolist() == list(figures)
    quota = job_quota(result, 1)
    assert (quota["region"], quota["holder"], quota["by"]) == ("r", "a", "team")
    assert quota_text(quota) == text


def test_a_queue_holder_and_a_run_without_quotas():
    # by queue: the five default queue classes split 8 GPUs, 1.6 each; a1 (training) is in "standard"
    result = sim(JOBS, fleet(8), {"quota": {"key": "kueue", "by": "queue", "team_max_gpus": 7}})
    assert quota_text(job_quota(result, 1)) == (
        "Queue standard may hold at most 7 GPUs at once in r (nominal quota 1.6, no borrowing limit, cap 7).")
    plain = sim(JOBS, fleet(8))
    assert plain.quotas is None and job_quota(plain, 1) is None


def test_the_quotas_table_is_exported(tmp_path):
    result = sim(JOBS, fleet(8), {"quota": {"key": "team-limit", "max_gpus": 4}})
    names = sorted(p.name for p in result.to_csv(tmp_path))
    assert "quotas.csv" in names
    assert (tmp_path / "quotas.csv").read_text().splitlines()[0] == (
        "region,holder,by,nominal_gpus,borrowing_limit_gpus,lending_limit_gpus,cap_gpus,most_gpus")
