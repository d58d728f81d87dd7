"""Jobs larger than their quota can ever give them (turned away, "exceeds-quota"), the result's
quotas table (engine.sim.output.run_tables) and the quota behind a job's wait (engine.analysis.runs.job_quota),
on one 8-GPU node shared by teams a and b (helpers from test_sharing); figures worked out by hand
in the comments."""
import csv
import math

import pytest
from sim_helpers import fleet
from test_sharing import B_LATE, by_id, peak_gpus, row, sim, team

from engine.analysis.runs.job_quota import job_quota, quota_text

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
    header = (tmp_path / "quotas.csv").read_text(encoding="utf-8-sig").splitlines()[0]
    assert next(csv.reader([header])) == ["region", "holder", "by", "nominal_gpus", "borrowing_limit_gpus",
                                          "lending_limit_gpus", "cap_gpus", "most_gpus"]


def test_a_job_larger_than_its_team_limit_is_turned_away_and_does_not_hold_back_its_team():
    # team a may hold 4 of 8 GPUs. a1 asks for 6: it can never pass, so it is turned away at 1 s
    # ("exceeds-quota") instead of being parked. a2 (2 GPUs at 2 s) would make 6: parked until a0
    # ends at 100, then starts (parked behind a1, it would have waited for good on an idle fleet).
    jobs = [row(0, 0, 100, 4, team="a"), row(1, 1, 100, 6, team="a"), row(2, 2, 100, 2, team="a")]
    result = sim(jobs, fleet(8), {"quota": {"key": "team-limit", "max_gpus": 4}})
    assert by_id(result, "start_s") == {"j0": 0.0, "j1": None, "j2": 100.0}
    assert by_id(result, "reason") == {"j0": "started", "j1": "exceeds-quota", "j2": "blocked-by-team-limit"}
    assert result.decisions.loc[result.decisions["job_id"] == "j1", ["time_s", "decision"]].values.tolist() == [
        [1.0, "exceeds-quota"]]
    assert result.timeline["queue_length"].max() == 0  # a parked job is out of the queue, a turned-away one too


@pytest.mark.parametrize("max_gpus, start, reason", [(8, None, "exceeds-quota"), (16, 0.0, "started")])
def test_a_gang_job_counts_the_gpus_of_the_whole_nodes_it_must_take(max_gpus, start, reason):
    # a 2-node gang asking 1 GPU per node takes two whole 8-GPU nodes: 16 GPUs. Under a cap of 8 it
    # can never start: turned away at once (parked, it would wait for good); under 16 it runs.
    jobs = [row(0, 0, 100, 2, team="a", nodes=2), row(1, 1, 100, 2, team="a")]
    result = sim(jobs, fleet(8, 8, 8), {"quota": {"key": "team-limit", "max_gpus": max_gpus}})
    assert (by_id(result, "start_s")["j0"], by_id(result, "reason")["j0"]) == (start, reason)


LIMIT = "blocked-by-team-limit"
TEAM_LIMIT_CASES = [
    # a0 (0 s) and a1 (1 s) take a's 4; a2 at 2 s would make 6: parked, out of the FCFS queue, so b3 at
    # 3 s starts at once (6 of 8 busy). a0 ends at 100: a has 2 GPUs of headroom again and a2 starts.
    pytest.param([row(0, 0, 100, 2, team="a"), row(1, 1, 100, 2, team="a"), row(2, 2, 100, 2, team="a"),
                  row(3, 3, 100, 2, team="b")], [0.0, 1.0, 100.0, 3.0], ["started", "started", LIMIT, "started"],
                 id="parked-jobs-do-not-block-other-teams"),
    # a0 (2 GPUs, ends at 50) and a1 (2, ends at 100) start at 0; a2 (4 GPUs at 1 s) and a3 (2 at 2 s) are
    # parked. At 50 a0 frees 2: a3 fits and returns (a newer 2-GPU arrival would pass too), a2 stays
    # parked; a2 starts at 150, when a3 ends and 4 are free.
    pytest.param([row(0, 0, 50, 2, team="a"), row(1, 0, 100, 2, team="a"), row(2, 1, 100, 4, team="a"),
                  row(3, 2, 100, 2, team="a")], [0.0, 0.0, 150.0, 50.0], ["started", "started", LIMIT, LIMIT],
                 id="a-small-parked-job-returns-before-a-larger-one-parked-earlier"),
]


@pytest.mark.parametrize("jobs, starts, reasons", TEAM_LIMIT_CASES)
def test_team_limit_of_4_on_8_gpus(jobs, starts, reasons):
    result = sim(jobs, fleet(8), {"quota": {"key": "team-limit", "max_gpus": 4}})
    assert list(by_id(result, "start_s").values()) == starts
    assert list(by_id(result, "reason").values()) == reasons
    assert peak_gpus(result, team("a")) == 4.0


@pytest.mark.parametrize("max_gpus, nodes, start, reason", [
    (8, "n1;n2", 0.0, "started"),    # the lowest-index pair (8 + 4 GPUs) is past the cap: the two 4-GPU nodes
    (12, "n0;n1", 0.0, "started"),   # within the cap, the gang policy's own choice stands
    (7, "", None, "exceeds-quota"),  # even the two smallest (8 GPUs) are too many: turned away
])
def test_a_gang_job_on_mixed_nodes_takes_the_small_ones_its_quota_allows(max_gpus, nodes, start, reason):
    # nodes of 8, 4 and 4 GPUs; a 2-node gang of 4 GPUs a pod must hold two whole nodes
    result = sim([row(0, 0, 100, 8, team="a", nodes=2)], fleet(8, 4, 4), {"quota": {"key": "team-limit",
                                                                                  "max_gpus": max_gpus}})
    assert (by_id(result, "start_s")["j0"], by_id(result, "reason")["j0"]) == (start, reason)
    assert result.jobs.at[0, "nodes"] == nodes


@pytest.mark.parametrize("tables, gpus, reason", [
    # equal weights on 8 GPUs: nominal 4 each, all lent. a may borrow at most 2: it can hold 6.
    ({"quota": [{"holder": "a", "borrowing_limit_gpus": 2}]}, 6, "started"),
    ({"quota": [{"holder": "a", "borrowing_limit_gpus": 2}]}, 8, "exceeds-quota"),
    # no borrowing limit: a can hold its guaranteed 0 plus the cohort's lent 4 + 4 = 8, all of it
    ({}, 8, "started"),
    # b lends only 1: a's most is its 4 + b's 1 = 5
    ({"quota": [{"holder": "b", "lending_limit_gpus": 1}]}, 6, "exceeds-quota"),
    # a in a cohort of its own: its nominal 4 is all it can ever hold
    ({"quota": [{"holder": "a", "cohort": "x"}]}, 6, "exceeds-quota"),
])
def test_kueue_turns_away_a_job_larger_than_its_holder_can_ever_hold(tables, gpus, reason):
    # a asks for `gpus` at 0 s on one 8-GPU node; b exists (a holder) but asks for nothing until 500 s
    jobs = [row(0, 0, 100, gpus, team="a"), *B_LATE]
    result = sim(jobs, fleet(8), {"quota": {"key": "kueue"}}, **tables)
    assert by_id(result, "reason")["j0"] == reason
    assert by_id(result, "start_s")["j0"] == (0.0 if reason == "started" else None)
