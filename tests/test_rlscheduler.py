"""RLScheduler reproduction: the published Lublin-1 figures, the SWF semantics, tiny hand-checked
replays of every backfill mode, and the CLI."""
import csv
import gzip
import json

import numpy as np
import pytest
from conftest import TRACES, shared

from engine.cli.main import main
from engine.policies.registry import make
from engine.service.experiments import rlscheduler as rls
from engine.service.experiments.rlscheduler_backfill import MODES
from engine.service.experiments.rlscheduler_replay import JobQueue, Sequence, replay
from engine.service.experiments.swf_jobs import load_swf_jobs, parse_swf_jobs
from engine.telemetry.errors import ImportRejected

LUBLIN_1 = TRACES / "swf" / "lublin_256.swf"
PUBLISHED = TRACES.parent / "expected" / "rlscheduler_lublin1_published.csv"
PUBLISHED_NAMES = {"UNI": "UNICEP"}
BACKFILL_COLUMN = {"0": "none", "1": "compat"}


@pytest.fixture(scope="module")
def lublin_1():
    return load_swf_jobs(LUBLIN_1)


def published() -> dict:
    """(policy, mode, start) -> (avg bounded slowdown, utilization) per sequence of the CSV."""
    values = {}
    with open(PUBLISHED, newline="") as f:
        for row in csv.DictReader(f):
            if row["iteration"] != "MEAN":
                key = (PUBLISHED_NAMES.get(row["policy"], row["policy"]), BACKFILL_COLUMN[row["backfilling"]],
                       int(row["start_index"]))
                values.setdefault(key, {})[row["metric"]] = float(row["value"])
    return values


@shared("traces/swf/lublin_256.swf", "expected/rlscheduler_lublin1_published.csv")
@pytest.mark.parametrize("mode", ["none", "compat"])
@pytest.mark.parametrize("policy", list(rls.POLICIES))
def test_lublin_1_matches_the_published_results_per_sequence(lublin_1, policy, mode):
    expected = published()
    result = rls.run_experiment(lublin_1, policy, mode)
    assert [s["start"] for s in result["sequences"]] == list(rls.START_INDICES)
    for sequence in result["sequences"]:
        want = expected[(policy, mode, sequence["start"])]
        assert sequence["avg_bounded_slowdown"] == pytest.approx(want["avg_bounded_slowdown"], abs=0.01)
        assert sequence["utilization"] == pytest.approx(want["utilization"], abs=0.01)
        # In fact the replay is exact: the CSV's 6 decimals agree to rounding.
        assert sequence["avg_bounded_slowdown"] == pytest.approx(want["avg_bounded_slowdown"], abs=1e-6)
        assert sequence["utilization"] == pytest.approx(want["utilization"], abs=1e-6)


@shared("traces/swf/lublin_256.swf")
def test_lublin_1_loads_with_the_published_semantics(lublin_1):
    assert len(lublin_1) == 10_000 and (lublin_1.max_nodes, lublin_1.max_procs) == (256, 256)
    assert lublin_1.job_id[:3].tolist() == [1, 2, 3]
    # No user estimates in this log: the requested time is the run time.
    assert np.array_equal(lublin_1.requested_s, lublin_1.run_s)


SWF = """; MaxNodes: 4
; MaxProcs: 16
3 30 -1 -5 2 -1 -1 -1 -1 -1 1 -1 -1 -1 -1 -1 -1 -1
1 10 -1 100 4 -1 -1 6 -1 -1 1 -1 -1 -1 -1 -1 -1 -1
2 20 -1 0 1 -1 -1 1 50 -1 1 -1 -1 -1 -1 -1 -1 -1
4 40 -1 7 -1 -1 -1 9 200 -1 1 -1 -1 -1 -1 -1 -1 -1
"""


def test_swf_semantics_on_a_tiny_log_plain_and_gzipped():
    for data in (SWF.encode(), gzip.compress(SWF.encode())):
        jobs = parse_swf_jobs(data, "tiny.swf")
        assert jobs.job_id.tolist() == [1, 3, 4]                 # sorted by id; run 0 dropped
        assert jobs.run_s.tolist() == [100, 10, 7]                # run < 0 becomes 10 s
        assert jobs.requested_s.tolist() == [100, -5, 200]        # field 9, else the logged run time
        assert jobs.procs.tolist() == [6, 2, 9]                   # max(field 5, field 8)
        assert jobs.procs_per_node == 4 and jobs.nodes.tolist() == [2, 1, 3]


def test_swf_header_fallbacks_and_bad_lines():
    jobs = parse_swf_jobs(b"; MaxNodes: 338 (batch partition; 512 total)\n" + SWF.split("\n", 2)[2].encode(), "a")
    assert (jobs.max_nodes, jobs.max_procs) == (338, 338)
    with pytest.raises(ImportRejected) as no_size:
        parse_swf_jobs(SWF.split("\n", 2)[2].encode(), "b")
    assert "MaxNodes" in no_size.value.lines()[0]
    with pytest.raises(ImportRejected) as bad:
        parse_swf_jobs(SWF.replace("2 20 -1 0 1", "2 20 -1 x 1").encode(), "c")
    assert bad.value.lines() == ["c:5: field 4 is not a number: 'x'"]


def tiny(submit, run, nodes, cluster_nodes, requested=None) -> Sequence:
    as_float = lambda values: np.asarray(values, dtype=float)  # noqa: E731
    return Sequence(as_float(submit), as_float(run), as_float(requested or run), as_float(nodes),
                    np.asarray(nodes, dtype=np.int64), cluster_nodes, 1.0)


def starts(sequence, mode, policy="fcfs") -> list[float]:
    queue = JobQueue(sequence, make("order", policy), authors_ties=mode == "compat", fixed_now_s=-1.0)
    return replay(sequence, queue, MODES[mode]).start_s.tolist()


# Two nodes: job 0 (1 node, 100 s) runs; job 1 (2 nodes) is picked and blocks; job 2 (1 node) arrives.
BLOCKED = dict(submit=[0, 1, 2], run=[100, 50, 10], nodes=[1, 2, 1], cluster_nodes=2)


@pytest.mark.parametrize("mode, expected", [
    ("none", [0, 100, 150]),         # the picked job blocks the queue
    ("compat", [0, 100, 2]),         # 2 + 10 < shadow 100: backfilled
    ("easy", [0, 100, 2]),
    ("conservative", [0, 100, 2]),
])
def test_a_short_job_behind_a_blocked_pick(mode, expected):
    assert starts(tiny(**BLOCKED), mode) == expected


def test_the_pick_is_final_even_when_a_better_job_arrives():
    # SJF picks job 1 alone; job 2 is shorter but arrives while job 1 waits: job 1 still goes first.
    assert starts(tiny(**BLOCKED), "none", "sjf") == [0, 100, 150]


def test_compat_needs_to_end_strictly_before_the_shadow_and_easy_by_it():
    sequence = tiny(submit=[0, 1, 2], run=[100, 50, 98], nodes=[1, 2, 1], cluster_nodes=2)
    assert starts(sequence, "compat") == [0, 100, 150]   # 2 + 98 == shadow: not backfilled
    assert starts(sequence, "easy") == [0, 100, 2]


def test_easy_uses_extra_nodes_and_conservative_protects_every_reservation():
    # Four nodes. Job 1 (2 nodes) waits for job 0 (3 nodes, until 100): shadow 100, 2 extra nodes.
    # Job 2 needs all 4 nodes; job 3 (1 node, 500 s) fits now but would run past the shadow time.
    sequence = tiny(submit=[0, 1, 2, 3], run=[100, 50, 10, 500], nodes=[3, 2, 4, 1], cluster_nodes=4)
    assert starts(sequence, "compat") == [0, 100, 150, 160]        # no extra-nodes rule
    assert starts(sequence, "easy") == [0, 100, 503, 3]            # job 3 on an extra node delays job 2
    assert starts(sequence, "conservative") == [0, 100, 150, 160]  # job 3 would delay job 2's reservation


def test_bounded_slowdown_and_utilization_of_one_sequence():
    jobs = parse_swf_jobs(b"; MaxNodes: 2\n" + b"\n".join(
        f"{i + 1} {s} -1 {r} {p} -1 -1 -1 -1 -1 1 -1 -1 -1 -1 -1 -1 -1".encode()
        for i, (s, r, p) in enumerate(zip(BLOCKED["submit"], BLOCKED["run"], BLOCKED["nodes"]))), "t.swf")
    result = rls.run_sequence(jobs, 0, "FCFS", "none", length=3)
    # waits 0, 99, 148: slowdowns 1, (99 + 50) / 50, (148 + 10) / 10
    assert result.avg_bounded_slowdown == pytest.approx((1 + 149 / 50 + 158 / 10) / 3)
    # 100 x 1 + 50 x 2 + 10 x 1 processor-seconds over (150 - 0) s x 2 processors
    assert result.utilization == pytest.approx(210 / 300)


@shared("traces/swf/lublin_256.swf")
def test_true_wait_changes_only_the_aging_orders(lublin_1):
    for policy in ("FCFS", "SJF", "F1"):
        assert rls.run_sequence(lublin_1, 1981, policy, "none", true_wait=True) == \
            rls.run_sequence(lublin_1, 1981, policy, "none")
    assert rls.run_sequence(lublin_1, 1981, "WFP3", "none", true_wait=True).avg_bounded_slowdown < 1000


@shared("traces/swf/lublin_256.swf")
def test_every_job_starts_once_and_never_before_its_submit(lublin_1):
    for mode in MODES:
        sequence = rls.sequence_of(lublin_1, 4299)
        queue = JobQueue(sequence, make("order", "sjf"), authors_ties=mode == "compat")
        started = replay(sequence, queue, MODES[mode]).start_s
        assert not np.isnan(started).any() and (started >= sequence.submit_s).all()


@shared("traces/swf/lublin_256.swf")
def test_cli_json_and_table(capsys):
    assert main(["experiment", "rlscheduler", "--trace", str(LUBLIN_1), "--policy", "SJF",
                 "--starts", "1981,2756", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert set(result) == {"mean", "sequences"} and set(result["mean"]) == {"avg_bounded_slowdown", "utilization"}
    assert [s["start"] for s in result["sequences"]] == [1981, 2756]
    assert result["sequences"][0]["avg_bounded_slowdown"] == pytest.approx(204.258453, abs=1e-6)
    assert result["mean"]["utilization"] == pytest.approx((0.781318 + 0.744399) / 2, abs=1e-6)
    assert main(["experiment", "rlscheduler", "--trace", str(LUBLIN_1), "--policy", "F1",
                 "--backfill", "compat", "--starts", "1981"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[2].split() == ["1981", "66.75", "0.823"] and lines[3].split() == ["mean", "66.75", "0.823"]


@shared("traces/swf/lublin_256.swf")
def test_cli_bad_input_exits_2_with_a_message(capsys, tmp_path):
    assert main(["experiment", "rlscheduler", "--trace", str(LUBLIN_1), "--policy", "F1", "--starts", "9990"]) == 2
    assert "does not fit in the log's 10000 jobs" in capsys.readouterr().err
    assert main(["experiment", "rlscheduler", "--trace", str(tmp_path / "missing.swf"), "--policy", "F1"]) == 2
    assert "cannot read file" in capsys.readouterr().err
    too_big = tmp_path / "big.swf"
    too_big.write_text("; MaxNodes: 2\n1 0 -1 10 4 -1 -1 -1 -1 -1 1 -1 -1 -1 -1 -1 -1 -1\n")
    assert main(["experiment", "rlscheduler", "--trace", str(too_big), "--policy", "F1", "--starts", "0",
                 "--length", "1"]) == 2
    assert "asks for 4 processors, more than the cluster's 2" in capsys.readouterr().err
