"""Format detection on every real trace and on the test fixtures."""
import gzip
from pathlib import Path

import pytest
from conftest import TRACES, shared

from engine.telemetry.importers.detect import detect_format

DATA = Path(__file__).parent / "data"

REAL = {
    "swf/CTC-SP2-1996-3.1-cln.swf.gz": "swf",
    "swf/HPC2N-2002-2.2-cln.swf.gz": "swf",
    "swf/SDSC-BLUE-2000-4.2-cln.swf.gz": "swf",
    "swf/lublin_256.swf": "swf",
    "swf/lublin_256_new2": "swf",                      # no extension: the ';' header tells
    "alibaba-openb/openb_node_list_gpu_node.csv": "openb-nodes",
    "alibaba-openb/openb_node_list_all_node.csv": "openb-nodes",
    "philly/philly_node_sequence.csv": "utilization",
    "alibaba-dlrm-2025/disaggregated_DLRM_trace.csv": "csv",
    "alibaba-spot-2026/node_info_df.csv": "csv",
}


@pytest.mark.parametrize(("relative", "expected"), [pytest.param(r, e, marks=shared(f"traces/{r}"))
                                                    for r, e in sorted(REAL.items())])
def test_real_traces(relative, expected):
    path = TRACES / relative
    assert detect_format(path.name, path.read_bytes()) == expected


@shared("traces/alibaba-openb/openb_pod_list_default.csv")
def test_every_openb_pod_list():
    pods = sorted((TRACES / "alibaba-openb").glob("openb_pod_list_*.csv"))
    assert len(pods) == 24
    assert {detect_format(p.name, p.read_bytes()) for p in pods} == {"openb-pods"}


@pytest.mark.parametrize(("relative", "expected"), [
    ("sacct/cluster_ny.txt", "sacct"),
    ("sacct/malformed.txt", "sacct"),
    ("swf/small.swf", "swf"),
    ("openb/malformed_pods.csv", "openb-pods"),
    ("openb/malformed_nodes.csv", "openb-nodes"),
    ("utilization/gpu_busy.csv", "utilization"),
    ("utilization/util_fraction.csv", "utilization"),
])
def test_fixtures(relative, expected):
    path = DATA / relative
    assert detect_format(path.name, path.read_bytes()) == expected


def test_content_wins_over_a_wrong_name():
    swf = (DATA / "swf" / "small.swf").read_bytes()
    assert detect_format("upload.bin", gzip.compress(swf)) == "swf"          # gzip recognised by magic bytes
    jobs_only = b"".join(line for line in swf.splitlines(keepends=True) if not line.startswith(b";"))
    assert detect_format("jobs.txt", jobs_only) == "swf"                     # 18 numeric fields


def test_byte_order_mark_is_ignored():
    nodes = b"\xef\xbb\xbfsn,cpu_milli,memory_mib,gpu,model\nn1,1000,1024,1,T4\n"
    assert detect_format("nodes.csv", nodes) == "openb-nodes"
    sacct = b"\xef\xbb\xbfJobID|User|Submit|Start|End|State|AllocTRES\n"
    assert detect_format("export.txt", sacct) == "sacct"
