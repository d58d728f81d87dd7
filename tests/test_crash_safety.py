"""Crash safety of long jobs (issue 28, item 6), with real kill -9s of real `meridian` processes:
workers die with their parent (engine.service.sweep.lifeline); a killed sweep or headroom run is marked
interrupted when the database is next opened (engine.telemetry.orphans), keeps what it finished and
resumes from it; model training leaves no half version. CI runs a few kills; `-m slow` runs 20 of
each kind."""
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import REPO
from test_headroom import _two_regions

from engine.predict.registry import ModelRegistry
from engine.service.sweep import lifeline
from engine.telemetry.headroom_runs import list_runs
from engine.telemetry.store import Store
from engine.telemetry.sweeps import SweepRecord, list_sweeps, load_sweep, save_sweep

GRID = """
name = "kill"
days = 2
[[axis]]
name = "backfill"
set = "policies.backfill"
values = ["none", "easy", "conservative"]
[[axis]]
name = "order"
set = "policies.order"
values = ["fcfs", "sjf"]
"""


def _meridian(*args, **popen) -> subprocess.Popen:
    """`meridian ARGS` in its own session (its process group holds its workers and their forkserver)."""
    return subprocess.Popen([sys.executable, "-m", "engine.cli", *map(str, args)], cwd=REPO, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True, **popen)


def _cli(*args, timeout: float = 600) -> subprocess.CompletedProcess:
    """`meridian ARGS` run to its end."""
    return subprocess.run([sys.executable, "-m", "engine.cli", *map(str, args)], cwd=REPO, capture_output=True,
                          text=True, timeout=timeout)


def _wait_for(proc: subprocess.Popen, prefix: str, timeout_s: float = 240) -> str:
    """The first stderr line of `proc` starting with `prefix` (fails if it ends or times out first)."""
    deadline = time.monotonic() + timeout_s
    seen = []
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        if not line:
            pytest.fail(f"exited ({proc.wait()}) before printing {prefix!r}: {''.join(seen)}")
        seen.append(line)
        if line.startswith(prefix):
            return line
    pytest.fail(f"no {prefix!r} line within {timeout_s} s: {''.join(seen)}")


def _group(pgid: int) -> list[int]:
    """Live (not zombie) processes of process group `pgid`."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2:].split()
        if int(fields[2]) == pgid and fields[0] != "Z":
            found.append(int(entry.name))
    return found


def _kill_leader(proc: subprocess.Popen) -> list[int]:
    """kill -9 the command's own process only (not its group), reap it, and return the processes of its
    group still alive 5 s later (its workers must have ended themselves)."""
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    deadline = time.monotonic() + 5 + lifeline.INTERVAL_S
    while _group(proc.pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    left = _group(proc.pid)
    for pid in left:   # do not leave them to the next test
        os.kill(pid, signal.SIGKILL)
    return left


def test_a_worker_ends_itself_once_its_parent_is_gone(tmp_path):
    parent = subprocess.Popen([sys.executable, "-c", """
import subprocess, sys, time
from engine.service.sweep import lifeline
me = lifeline.parent()
child = subprocess.Popen([sys.executable, "-c",
    "import sys, time; from engine.service.sweep import lifeline; "
    "lifeline.watch(lifeline.Parent(int(sys.argv[1]), sys.argv[2] if sys.argv[2] != 'None' else None)); "
    "time.sleep(60)", str(me.pid), str(me.started)])
print(child.pid, flush=True)
time.sleep(60)
"""], cwd=REPO, stdout=subprocess.PIPE, text=True, start_new_session=True)
    child = int(parent.stdout.readline())
    assert set(_group(parent.pid)) == {parent.pid, child}
    assert _kill_leader(parent) == []
    assert lifeline.alive(lifeline.parent()) and not lifeline.alive(lifeline.Parent(parent.pid, "0"))


@pytest.fixture(scope="module")
def grid(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("grid") / "kill.toml"
    path.write_text(GRID, encoding="utf-8")
    return path


def _killed_sweep(db: Path, grid: Path) -> int:
    """Start a 6-point sweep on 2 workers, kill -9 it after its first point, check its workers ended, and
    return its sweep id."""
    proc = _meridian("sweep", "--dataset", "sample", "--grid", grid, "--workers", 2, "--db", db)
    _wait_for(proc, "[1/6] ")
    assert _kill_leader(proc) == []
    return int(list_sweeps(Store.open(db, read_only=True))["sweep_id"].iloc[-1])


def _sweeps(db: Path):
    store = Store.open(db)   # opening it for writing marks the killed sweep interrupted
    try:
        return list_sweeps(store).set_index("sweep_id"), store
    except Exception:
        store.close()
        raise


def test_a_killed_sweep_is_interrupted_keeps_its_points_and_resumes(sample_db, grid, tmp_path):
    db = tmp_path / "m.duckdb"
    db.write_bytes(sample_db.read_bytes())
    sweep_id = _killed_sweep(db, grid)
    read_only = Store.open(db, read_only=True)
    assert list_sweeps(read_only).set_index("sweep_id").loc[sweep_id, "status"] == "running"   # nobody said yet
    read_only.close()
    listed, store = _sweeps(db)
    kept = load_sweep(store, sweep_id)[1]
    store.close()
    assert listed.loc[sweep_id, "status"] == "interrupted" and 1 <= len(kept) < 6

    done = _cli("sweep", "--dataset", "sample", "--grid", grid, "--workers", 2, "--db", db, "--resume", sweep_id,
                "--json")
    assert done.returncode == 0, done.stderr
    assert f"resuming sweep {sweep_id}: {len(kept)} of 6 points kept, {6 - len(kept)} to run" in done.stderr
    outcomes = json.loads(done.stdout)["outcomes"]
    assert [o["index"] for o in outcomes] == list(range(6)) and {o["status"] for o in outcomes} == {"ok"}
    assert [o for o in outcomes if o["index"] in {k["index"] for k in kept}] == kept   # kept as they were
    store = Store.open(db)
    assert list_sweeps(store).set_index("sweep_id").loc[sweep_id, "status"] == "ok"
    store.close()
    again = _cli("sweep", "--dataset", "sample", "--grid", grid, "--db", db, "--resume", sweep_id)
    assert again.returncode == 2 and f"sweep {sweep_id} is ok; only an interrupted or failed sweep" in again.stderr


def test_resume_refuses_another_grid_or_dataset(sample_db, grid, tmp_path):
    db = tmp_path / "m.duckdb"
    db.write_bytes(sample_db.read_bytes())
    other = tmp_path / "other.toml"
    other.write_text(GRID.replace('"sjf"', '"unicep"'), encoding="utf-8")
    store = Store.open(db)
    sweep_id = save_sweep(store, SweepRecord("kill", "sample", GRID, 6, 2, "local"))
    store.con.execute("UPDATE sweeps SET owner = 'elsewhere:1:x' WHERE sweep_id = ?", [sweep_id])
    store.close()
    refused = _cli("sweep", "--dataset", "sample", "--grid", other, "--db", db, "--resume", sweep_id)
    assert refused.returncode == 2 and "resume it with the same --grid file, unchanged" in refused.stderr
    assert "Traceback" not in refused.stderr


def test_a_killed_headroom_run_is_interrupted_and_the_same_command_resumes_it(tmp_path):
    db = tmp_path / "m.duckdb"
    store = Store.open(db)
    store.add_import("two", _two_regions(per_hour=3, days=3), "two.csv", "sha-two")
    store.close()
    sun = tmp_path / "sun.toml"
    sun.write_text('name = "sun"\n[policies]\nbackfill = "easy"\nrouting = "follow-the-sun"\n', encoding="utf-8")
    args = ["headroom", "--dataset", "two", "--db", db, "--scenario", sun, "--seeds", 2, "--workers", 1, "--json"]
    proc = _meridian(*args)
    _wait_for(proc, "[2/6] ")
    assert _kill_leader(proc) == []
    store = Store.open(db)
    runs = list_runs(store)
    store.close()
    assert runs["status"].tolist() == ["interrupted"] and runs["stored"].iloc[0] >= 2

    resumed = _cli(*args)
    assert resumed.returncode == 0, resumed.stderr
    assert f"resumed: {runs['stored'].iloc[0]} searches kept from an earlier run" in resumed.stderr
    fresh = _cli(*args, "--no-store")
    assert fresh.returncode == 0, fresh.stderr

    def figures(document):
        return [{k: v for k, v in s.items() if k not in ("searches", "elapsed_s")} for s in document["scenarios"]]
    assert figures(json.loads(resumed.stdout)) == figures(json.loads(fresh.stdout))
    store = Store.open(db)
    assert list_runs(store)["status"].tolist() == ["interrupted", "ok"]
    store.close()


def _train(db: Path) -> subprocess.Popen:
    return _meridian("predict", "train", "--dataset", "sample", "--no-eval", "--db", db)


def _versions_all_load(db: Path) -> list[int]:
    registry = ModelRegistry.beside(db)
    versions = registry.versions("sample")
    for v in versions:
        registry.load("sample", v.number)
    return [v.number for v in versions]


KILL_DURING_SAVE = """
import os, signal, sys
import joblib
from engine.cli.main import main
real = joblib.dump
def dump(value, target, *args, **kwargs):
    real(value, target, *args, **kwargs)
    os.kill(os.getpid(), signal.SIGKILL)   # dies with the first model file written, before meta.json
joblib.dump = dump
sys.exit(main(["predict", "train", "--dataset", "sample", "--no-eval", "--db", sys.argv[1]]))
"""


@pytest.mark.parametrize("kills", [3, pytest.param(20, marks=pytest.mark.slow)])
def test_training_killed_at_any_moment_leaves_no_half_version(sample_db, tmp_path, kills):
    db = tmp_path / "m.duckdb"
    db.write_bytes(sample_db.read_bytes())
    during_save = subprocess.run([sys.executable, "-c", KILL_DURING_SAVE, str(db)], cwd=REPO, capture_output=True,
                                 text=True, timeout=300)
    assert during_save.returncode == -signal.SIGKILL
    assert _versions_all_load(db) == []
    assert list((ModelRegistry.beside(db).root / "sample").glob(".incoming-*"))   # the half version, never listed
    for k in range(kills):
        proc = _train(db)
        time.sleep(1.0 + 9.0 * k / max(kills - 1, 1))   # from reading the data to fitting the models
        assert _kill_leader(proc) == []
        assert _versions_all_load(db) == []
    done = _train(db)
    assert done.wait(timeout=300) == 0, done.stderr.read()
    assert _versions_all_load(db) == [1]
