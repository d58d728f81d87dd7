"""`meridian dashboard`: it serves Streamlit as a child process, passes `--shared DIR` on to the app,
refuses a `--shared` that is not a folder, and never leaves the child serving after SIGTERM, SIGINT (Ctrl+C)
or even SIGKILL to the command."""
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from conftest import REPO, free_port


def _children(pid: int) -> list[int]:
    path = Path(f"/proc/{pid}/task/{pid}/children")
    return [int(p) for p in path.read_text().split()] if path.exists() else []


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(url + "/_stcore/health", timeout=2) as response:
            return response.read().strip() == b"ok"
    except OSError:
        return False


def _wait(predicate, timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.25)
    return False


def test_a_shared_folder_that_does_not_exist_exits_2(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "engine.cli", "dashboard", "--db", str(tmp_path / "m.duckdb"),
                           "--shared", str(tmp_path / "nowhere")], cwd=REPO, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "--shared" in proc.stderr and "not a folder" in proc.stderr


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGKILL], ids=["SIGTERM", "SIGINT", "SIGKILL"])
def test_shared_reaches_the_app_and_a_signal_to_the_command_stops_the_streamlit_child(tmp_path, sig):
    shared = tmp_path / "shared"
    (shared / "traces").mkdir(parents=True)
    port = free_port()
    parent = subprocess.Popen([sys.executable, "-m", "engine.cli", "dashboard", "--port", str(port),
                               "--db", str(tmp_path / "m.duckdb"), "--shared", str(shared)], cwd=REPO,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    child = None
    try:
        assert _wait(lambda: _healthy(f"http://127.0.0.1:{port}"), 90), "the dashboard did not start"
        children = _children(parent.pid)
        assert len(children) == 1
        child = children[0]
        command = Path(f"/proc/{child}/cmdline").read_bytes().split(b"\0")
        assert b"streamlit" in command[2] and command[-3:-1] == [b"--shared", str(shared.resolve()).encode()]
        parent.send_signal(sig)   # to the command alone, not its process group: the child must be stopped by it
        code = parent.wait(timeout=30)
        assert code == (0 if sig != signal.SIGKILL else -signal.SIGKILL)
        assert _wait(lambda: not Path(f"/proc/{child}").exists()
                     or Path(f"/proc/{child}/stat").read_text().split()[2] == "Z", 15), "the child still runs"
        assert not _healthy(f"http://127.0.0.1:{port}")
    finally:
        try:
            os.killpg(parent.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
