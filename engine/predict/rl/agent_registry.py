"""Trained scheduling agents, versioned, in the model registry beside the predictors.

For the database `X.duckdb` the predictors live in `X.models/<dataset>/v<N>/`; agents live in
`X.models/.agents/<agent>/v<N>/` (a hidden folder, so no dataset name can collide with it), each
version holding `agent.npz` (engine/policies/rl_agent.py: weights and features, no pickle) and
`meta.json`: format, name, version, created_utc, data (the log's source, jobs, cluster and the
digest of what it was trained on), settings (engine/service/rl/train.py), curve (one entry per
epoch), training (epochs, decisions, minutes, workers) and evaluation (the test sequences against
the heuristics). Versions are published atomically, numbered from 1, as the predictors' are.

While a run trains, `X.models/.agents/<agent>/training/` holds its latest checkpoint (`state.npz`,
`state.json`: the weights, both optimisers, the curve, the settings and the data digest), replaced
atomically after every epoch, so `meridian rl train --resume` continues an interrupted run; it is
removed once the run is published.
"""
from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from pathlib import Path

from engine.policies.rl_agent import Agent, AgentError, agent_bytes, agent_of
from engine.predict.registry import META_FILE, ModelRegistry, ModelVersion, NoModel

AGENT_FILE, STATE_FILE, STATE_META = "agent.npz", "state.npz", "state.json"
TRAINING = "training"
FOLDER = ".agents"


class AgentRegistry(ModelRegistry):
    """Versioned agents under one folder (`AgentRegistry.beside(db_path)`)."""

    @classmethod
    def beside(cls, db_path) -> AgentRegistry:
        return cls(ModelRegistry.beside(db_path).root / FOLDER)

    def agents(self) -> list[str]:
        """Agents with at least one published version, sorted."""
        return self.datasets()

    def version(self, name: str, number: int | None = None) -> ModelVersion:
        """Version `number` of agent `name` (default the latest); NoModel when there is no such version."""
        versions = self.versions(name)
        if not versions:
            raise NoModel(f"no agent {name!r} in the model registry; train one with `meridian rl train --name {name}`")
        for version in versions:
            if number is None and version is versions[-1] or version.number == number:
                return version
        raise NoModel(f"agent {name!r} has no v{number}; versions: " + ", ".join(f"v{v.number}" for v in versions))

    def load(self, name: str, number: int | None = None) -> Agent:
        """The agent of version `number` (default the latest); NoModel or AgentError when it cannot be."""
        version = self.version(name, number)
        path = version.path / AGENT_FILE
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise AgentError(f"{path}: cannot read ({exc.strerror or exc})") from exc
        return agent_of(data, str(path))

    def publish(self, agent: Agent, meta: dict) -> ModelVersion:
        """Store `agent` with `meta` as the next version of `agent.name`, atomically."""
        folder = self._folder(agent.name)
        folder.mkdir(parents=True, exist_ok=True)
        incoming = Path(tempfile.mkdtemp(prefix=".incoming-", dir=folder))
        try:
            (incoming / AGENT_FILE).write_bytes(agent_bytes(agent))
            identity = {"format": 1, "name": agent.name, "version": 0,
                        "created_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
            return self._publish(agent.name, incoming, {**identity, **meta})
        finally:
            shutil.rmtree(incoming, ignore_errors=True)

    # --- the checkpoint of a run in progress ---------------------------------------------------

    def save_training(self, name: str, state: bytes, meta: dict) -> Path:
        """Replace the run's checkpoint with `state` and `meta` (atomically: a rename)."""
        folder = self._folder(name)
        folder.mkdir(parents=True, exist_ok=True)
        incoming = Path(tempfile.mkdtemp(prefix=".incoming-", dir=folder))
        (incoming / STATE_FILE).write_bytes(state)
        (incoming / STATE_META).write_text(json.dumps(meta, allow_nan=False), encoding="utf-8")
        target = folder / TRAINING
        retired = folder / f".retired-{os.getpid()}-{time.monotonic_ns()}"
        if target.exists():
            target.rename(retired)
        incoming.rename(target)
        shutil.rmtree(retired, ignore_errors=True)
        return target

    def training(self, name: str) -> tuple[bytes, dict] | None:
        """(state, meta) of the run's checkpoint, or None when there is none."""
        folder = self._folder(name) / TRAINING
        try:
            return (folder / STATE_FILE).read_bytes(), json.loads((folder / STATE_META).read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:
            raise AgentError(f"{folder}: the checkpoint cannot be read ({exc})") from exc

    def clear_training(self, name: str) -> None:
        shutil.rmtree(self._folder(name) / TRAINING, ignore_errors=True)

    def meta(self, name: str, number: int | None = None) -> dict:
        return self.version(name, number).meta


__all__ = ["META_FILE", "AgentRegistry", "NoModel"]
