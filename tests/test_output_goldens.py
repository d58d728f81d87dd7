"""The engine's outputs pinned as goldens (benchmarks/output_hashes.json, from benchmarks/hash_outputs.py):
the per-job table, segments, timeline, decision log and KPIs of each case hash as before every
refactor and speed-up. CI checks the cases that exercise each world process and compiled path; the
slow test checks all 29 (`pytest -m slow`)."""
from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
from conftest import shared

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
spec = importlib.util.spec_from_file_location("hash_outputs", BENCHMARKS / "hash_outputs.py")
hash_outputs = importlib.util.module_from_spec(spec)
spec.loader.exec_module(hash_outputs)
GOLDEN = json.loads((BENCHMARKS / "output_hashes.json").read_text(encoding="utf-8"))

# fifo: the plain loop; conservative-topology: the compiled profile; region-outage and burst-to-cloud: the
# outage and burst processes; follow-the-sun: the router; soft-constraints: the router's relaxations;
# topology-interconnect: the interconnect's pace of multi-node jobs; mig-inference: the partitions' MIG instances;
# live-handoff: the hand-offs; cluster-topology: the cluster step in placement, reservations and preemption;
# archive-datasets: datasets archived and restored
CI_CASES = [("sample", name) for name in ("fifo", "conservative-topology", "region-outage", "burst-to-cloud",
                                          "follow-the-sun", "soft-constraints", "topology-interconnect",
                                          "mig-inference", "live-handoff", "cluster-topology", "archive-datasets")]


@pytest.mark.parametrize("case", CI_CASES, ids="/".join)
def test_sample_outputs_hash_as_pinned(case):
    label, hashes = hash_outputs.fingerprint(case)
    assert hashes == GOLDEN[label]


@shared("traces/swf/HPC2N-2002-2.2-cln.swf.gz")
def test_hpc2n_under_easy_backfilling_hashes_as_pinned():
    label, hashes = hash_outputs.fingerprint((hash_outputs.HPC2N, "easy-backfill"))
    assert hashes == GOLDEN[label]


@pytest.mark.slow
@shared("traces/swf/HPC2N-2002-2.2-cln.swf.gz")
def test_every_case_hashes_as_pinned():
    assert sorted(hash_outputs.cases(True)) == sorted(tuple(k.split("/", 1)) for k in GOLDEN)
    for case in hash_outputs.cases(True):
        label, hashes = hash_outputs.fingerprint(case)
        assert hashes == GOLDEN[label], label
