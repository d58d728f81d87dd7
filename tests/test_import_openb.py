"""openb importers: the real Alibaba node and pod lists end to end, and malformed lists."""
from pathlib import Path

import pandas as pd
import pytest
from conftest import OPENB_INPUTS, TRACES, shared

from engine.telemetry.errors import ImportRejected
from engine.telemetry.importers.common import ImportOptions
from engine.telemetry.importers.detect import detect_format
from engine.telemetry.importers.openb import parse_openb_nodes, parse_openb_pods
from engine.telemetry.ingest import ingest_bytes, ingest_path
from engine.telemetry.store import Store

OPENB = TRACES / "alibaba-openb"
DATA = Path(__file__).parent / "data" / "openb"
EPOCH = pd.Timestamp("2023-01-01 00:00:00")


@pytest.fixture
def store(tmp_path):
    store = Store.open(tmp_path / "meridian.duckdb")
    yield store
    store.close()


@shared("traces/alibaba-openb/openb_node_list_gpu_node.csv")
def test_gpu_node_list(store):
    path = OPENB / "openb_node_list_gpu_node.csv"
    assert detect_format(path.name, path.read_bytes()) == "openb-nodes"
    result = ingest_path(store, path)
    assert (result.format, result.rows) == ("openb-nodes", 1213)
    fleet = store.fleet(result.dataset)
    assert len(fleet) == 1213 and fleet["gpus"].sum() == 6212
    assert fleet.groupby("gpu_type")["gpus"].sum().to_dict() == {
        "A10": 2, "G2": 4392, "G3": 312, "P100": 265, "T4": 842, "V100M16": 195, "V100M32": 204}
    first = fleet.iloc[0]
    assert (first["node"], first["cpus"], first["memory_gib"], first["gpus"], first["gpu_type"]) == (
        "openb-node-0000", 64, 256, 2, "P100")
    assert set(fleet["tier"]) == {"reserved"} and set(fleet["cluster"]) == {"openb"}
    assert set(fleet["region"]) == {"default"}
    assert len(store.prices(result.dataset)) == 7 * 3   # every model priced in every tier (assumed)


@shared("traces/alibaba-openb/openb_node_list_all_node.csv")
def test_all_node_list_keeps_cpu_only_nodes(store):
    path = OPENB / "openb_node_list_all_node.csv"
    assert detect_format(path.name, path.read_bytes()) == "openb-nodes"
    fleet = store.fleet(ingest_path(store, path).dataset)
    assert len(fleet) == 1523
    cpu_only = fleet[fleet["gpu_type"].isna()]
    assert len(cpu_only) == 310 and (cpu_only["gpus"] == 0).all()
    assert fleet["gpus"].sum() == 6212


@shared(*OPENB_INPUTS)
def test_default_pod_list(store):
    path = OPENB / "openb_pod_list_default.csv"
    assert detect_format(path.name, path.read_bytes()) == "openb-pods"
    result = ingest_path(store, path, options=ImportOptions(region="cn-hangzhou"))
    assert (result.format, result.rows) == ("openb-pods", 8152)
    assert ("openb times are seconds from the trace start, which has no date: anchored at 2023-01-01 00:00 UTC"
            in result.notes)
    jobs = store.jobs(result.dataset)
    assert len(jobs) == 8152
    shared = jobs[(jobs["gpu_milli"] > 0) & (jobs["gpu_milli"] < 1000)]
    assert len(shared) == 3078 and (shared["gpus"] < 1).all()
    assert (jobs["gpus"] * 1000).round().sum() == 6_086_800          # sum of num_gpu * gpu_milli
    assert jobs["status"].value_counts().to_dict() == {
        "running": 5193, "failed": 1870, "pending": 897, "completed": 192}
    assert jobs["workload_class"].value_counts().to_dict() == {"inference": 4647, "batch": 3398, "unknown": 107}
    assert jobs["start_utc"].isna().sum() == 897                      # pending pods were never scheduled
    assert jobs["submit_utc"].min() == EPOCH
    assert jobs["end_utc"].max() == EPOCH + pd.Timedelta(seconds=12_902_960)
    pod = jobs.set_index("job_id").loc["openb-pod-0001"]
    assert (pod["gpus"], pod["gpu_milli"], pod["cpus"], pod["memory_gib"], pod["qos"]) == (0.46, 460, 6, 12, "LS")
    assert pod["submit_utc"] == EPOCH + pd.Timedelta(seconds=427_061) == pod["start_utc"]
    assert set(jobs["region"]) == {"cn-hangzhou"} and set(jobs["cluster"]) == {"openb"}
    assert store.regions(result.dataset)["region"].tolist() == ["cn-hangzhou"]


@shared("traces/alibaba-openb/openb_pod_list_multigpu20.csv")
def test_multigpu_variant_without_times(store):
    path = OPENB / "openb_pod_list_multigpu20.csv"
    assert detect_format(path.name, path.read_bytes()) == "openb-pods"
    result = ingest_path(store, path)
    assert result.rows == 8324
    assert "no times in the file: every pod is submitted at 2023-01-01 00:00 UTC (the trace epoch)" in result.notes
    jobs = store.jobs(result.dataset)
    assert (jobs["submit_utc"] == EPOCH).all() and jobs["start_utc"].isna().all() and jobs["end_utc"].isna().all()
    assert set(jobs["status"]) == {"pending"} and set(jobs["workload_class"]) == {"unknown"}
    assert jobs["gpus"].max() == 8


@shared("traces/alibaba-openb/openb_pod_list_gpuspec33.csv")
def test_gpu_spec_lists_are_kept():
    path = OPENB / "openb_pod_list_gpuspec33.csv"
    jobs = parse_openb_pods(path.read_bytes(), path.name, ImportOptions()).tables["jobs"]
    counts = jobs["gpu_type"].value_counts(dropna=False)
    assert counts["V100M16|V100M32"] == 141 and counts["A10|T4"] == 6 and counts["T4"] == 1291
    assert jobs["gpu_type"].isna().sum() == 5764


@shared("traces/alibaba-openb/openb_node_list_gpu_node.csv")
def test_malformed_pod_list(store):
    ingest_path(store, OPENB / "openb_node_list_gpu_node.csv")
    before = store.content_digest()
    with pytest.raises(ImportRejected) as caught:
        ingest_path(store, DATA / "malformed_pods.csv")
    name = str(DATA / "malformed_pods.csv")
    assert caught.value.lines() == [f"{name}:{line}: {reason}" for line, reason in [
        (3, "cpu_milli is not a number: 'lots'"),
        (4, "negative value '-1' in column 'num_gpu'"),
        (5, "value '1500' in column 'gpu_milli' is above 1000"),
        (6, "unknown pod_phase 'Evicted' (expected Pending, Running, Succeeded or Failed)"),
        (7, "deletion_time 45 is before creation_time 50"),
        (8, "expected 11 fields separated by ',', found 10"),
        (9, "'0.5' in column 'num_gpu' is not a whole number"),
        (10, "creation_time is empty"),
    ]]
    assert store.content_digest() == before


def test_malformed_node_list(store):
    before = store.content_digest()
    with pytest.raises(ImportRejected) as caught:
        ingest_path(store, DATA / "malformed_nodes.csv")
    name = str(DATA / "malformed_nodes.csv")
    assert caught.value.lines() == [f"{name}:{line}: {reason}" for line, reason in [
        (3, "gpu is not a number: 'eight'"),
        (4, "negative value '-5' in column 'memory_mib'"),
        (5, "sn is empty"),
        (6, "expected 5 fields separated by ',', found 6"),
    ]]
    assert store.content_digest() == before


def test_node_list_missing_a_column():
    with pytest.raises(ImportRejected) as caught:
        parse_openb_nodes(b"sn,cpu_milli,gpu,model\nn1,1000,1,T4\n", "nodes.csv", ImportOptions())
    assert caught.value.lines() == [
        "nodes.csv:1: missing column(s) memory_mib; the header has sn, cpu_milli, gpu, model"]


def test_quoted_csv_keeps_line_numbers():
    pods = (b'name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec\n'
            b'"pod-a",1000,1024,1,500,"A10|T4"\n'
            b'"pod-b\nsecond line",1000,1024,1,500,\n'
            b'pod-c,1000,1024,x,500,\n')
    with pytest.raises(ImportRejected) as caught:
        parse_openb_pods(pods, "quoted.csv", ImportOptions())
    assert caught.value.lines() == ["quoted.csv:5: num_gpu is not a number: 'x'"]
    good = parse_openb_pods(pods.replace(b",x,", b",1,"), "quoted.csv", ImportOptions()).tables["jobs"]
    assert good["source_line"].tolist() == [2, 3, 5]
    assert good["gpu_type"].tolist()[0] == "A10|T4" and good["job_id"].tolist()[1] == "pod-b\nsecond line"


@shared("traces/alibaba-openb/openb_pod_list_default.csv")
def test_header_only_pod_list_is_rejected(store):
    header = (OPENB / "openb_pod_list_default.csv").read_bytes().splitlines(keepends=True)[0]
    with pytest.raises(ImportRejected) as caught:
        ingest_bytes(store, header, "pods.csv")
    assert caught.value.lines() == ["pods.csv: no data rows (header only?)"]
