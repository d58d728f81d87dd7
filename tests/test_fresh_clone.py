"""The README's two commands on a fresh clone (issue 29, item 8), without the public traces beside it and with them.

A clone of this repository's committed HEAD in a temporary folder: command 1 installs into ./.venv and serves the
dashboard on a fresh database (its home folder is the temporary one), which answers and renders the Overview;
command 2 (tests/run_all.sh) runs, first, the test files that read the traces: with no `shared/` beside the clone
every test that needs a trace is skipped with a reason naming the file and where it comes from, under CI=true each
of them fails instead, and with `shared/` beside the clone (the README's layout) they run and pass. Then the whole
suite, both ways. Installing takes a minute or two and the whole suite several, so every test here is slow:
`pytest -m slow tests/test_fresh_clone.py` (the README's Development section says how it was run and the counts).
"""
import os
import re
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from conftest import REPO, SHARED, free_port

pytestmark = pytest.mark.slow
TRACE_FILES = ["tests/test_import_swf.py", "tests/test_predict_real_logs.py", "tests/test_fidelity.py"]
SUMMARY = re.compile(r"(\d+) (passed|failed|skipped|errors?|deselected|xfailed|xpassed)")


def _run(command: list[str], cwd: Path, env: dict, timeout: int) -> subprocess.CompletedProcess:
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def _env(home: Path, **extra: str) -> dict:
    """A clean environment: no CI, no MERIDIAN_SHARED, a home folder of its own (the default database)."""
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "MERIDIAN_SHARED", "VIRTUAL_ENV", "PYTHONPATH")}
    return {**env, "HOME": str(home), **extra}


def _counts(output: str) -> dict[str, int]:
    """pytest's last summary line as {outcome: count}."""
    last = [line for line in output.splitlines() if SUMMARY.search(line) and " in " in line][-1]
    return {word.rstrip("s") if word.startswith("error") else word: int(n) for n, word in SUMMARY.findall(last)}


@pytest.fixture(scope="module")
def clone(tmp_path_factory) -> Path:
    """This repository's HEAD cloned into <tmp>/meridian, with command 1's install done (./.venv)."""
    root = tmp_path_factory.mktemp("fresh")
    target = root / "meridian"
    subprocess.run(["git", "clone", "-q", str(REPO), str(target)], check=True, timeout=300)
    assert not (root / "shared").exists()
    install = _run(["bash", "-c", "python3 -m venv .venv && .venv/bin/pip install -q -e ."], target,
                   _env(root), 1200)
    assert install.returncode == 0, install.stderr[-3000:]
    return target


def test_command_1_serves_the_dashboard_on_a_fresh_database(clone):
    port = free_port()
    server = subprocess.Popen([str(clone / ".venv" / "bin" / "meridian"), "dashboard", "--port", str(port)],
                              cwd=clone, env=_env(clone.parent), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2) as answer:
                    if answer.read().strip() == b"ok":
                        break
            except OSError:
                time.sleep(0.5)
        else:
            pytest.fail("the dashboard did not answer within two minutes")
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=10) as page:
            assert page.status == 200 and b"<html" in page.read().lower()
        assert (clone.parent / ".meridian" / "meridian.duckdb").exists()   # the default database, fresh
    finally:
        server.send_signal(signal.SIGTERM)
        assert server.wait(timeout=30) == 0


def _command_2(clone: Path, env: dict, *args: str, timeout: int = 900) -> subprocess.CompletedProcess:
    return _run(["bash", "tests/run_all.sh", "-p", "no:cacheprovider", *args], clone, env, timeout)


def test_command_2_skips_the_trace_tests_with_their_reason_without_the_traces(clone):
    done = _command_2(clone, _env(clone.parent), "-rs", *TRACE_FILES)
    assert done.returncode == 0, done.stdout[-3000:]
    counts = _counts(done.stdout)
    assert counts["skipped"] > 0 and "failed" not in counts
    reasons = [line for line in done.stdout.splitlines() if line.startswith("SKIPPED")]
    assert reasons and all("needs public data" in line for line in reasons)
    assert any("Parallel Workloads Archive" in line for line in reasons)   # where the file comes from


def test_command_2_fails_the_trace_tests_under_ci_without_the_traces(clone):
    done = _command_2(clone, _env(clone.parent, CI="true"), TRACE_FILES[0])
    assert done.returncode != 0 and "CI must have the shared folder" in done.stdout


def test_command_2_runs_the_trace_tests_with_the_traces_beside_the_clone(clone):
    link = clone.parent / "shared"
    link.symlink_to(SHARED.resolve(), target_is_directory=True)
    try:
        done = _command_2(clone, _env(clone.parent, CI="true"), *TRACE_FILES)
    finally:
        link.unlink()
    assert done.returncode == 0, done.stdout[-3000:]
    assert "skipped" not in _counts(done.stdout)


@pytest.mark.parametrize("traces", [False, True], ids=["without-traces", "with-traces"])
def test_command_2_the_whole_suite(clone, traces):
    link = clone.parent / "shared"
    if traces:
        link.symlink_to(SHARED.resolve(), target_is_directory=True)
    try:
        done = _command_2(clone, _env(clone.parent, **({"CI": "true"} if traces else {})), "-q", "-rs", timeout=5400)
    finally:
        if traces:
            link.unlink()
    counts = _counts(done.stdout)
    print(f"fresh clone, {'with' if traces else 'without'} the traces: {counts}", file=sys.stderr)
    assert done.returncode == 0 and "failed" not in counts, done.stdout[-5000:]
    assert ("needs public data" in done.stdout) != traces   # skipped for want of a trace only without them
