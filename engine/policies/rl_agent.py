"""A trained scheduling agent: the kernel network, the features it reads and their normalisers.

Agents travel as bytes (a numpy .npz archive holding the weights and a JSON description) so that
the model registry (engine/predict/rl/agent_registry.py) can store them and the packaged ones
(`engine/policies/agents/*.npz`, trained with `meridian rl train` and shipped with the product,
each with its training record beside it, `*.json`)
load anywhere, in CI and in every scenario. No pickles: loading an agent runs no code.
"""
from __future__ import annotations

import io
import json
from dataclasses import dataclass
from functools import cache
from importlib import resources

import numpy as np

from engine.policies.kernel_net import KernelNet
from engine.policies.rl_features import FEATURE_SETS, Scales

FORMAT = 1
PACKAGE = "engine.policies.agents"


class AgentError(ValueError):
    """An agent cannot be found or read; the message says which and why."""


@dataclass(frozen=True)
class Agent:
    """name; net: the weights; features: "rlscheduler" or "predicted"; scales: the normalisers of the
    log it was trained on; backfill: "none" or "compat", the mode it was trained with."""

    name: str
    net: KernelNet
    features: str
    scales: Scales
    backfill: str

    def __repr__(self) -> str:   # scenario descriptions print it: the name, not 2,000 weights
        return f"Agent({self.name!r}, {self.features}, backfill {self.backfill})"


def agent_bytes(agent: Agent) -> bytes:
    """The agent as an .npz archive."""
    spec = {"format": FORMAT, "name": agent.name, "features": agent.features, "scales": agent.scales.as_dict(),
            "backfill": agent.backfill, "policy_arrays": len(agent.net.policy)}
    arrays = {f"w{k}": a for k, a in enumerate(agent.net.arrays())}
    buffer = io.BytesIO()
    np.savez(buffer, spec=np.frombuffer(json.dumps(spec).encode(), dtype=np.uint8), **arrays)
    return buffer.getvalue()


def agent_of(data: bytes, source: str) -> Agent:
    """The agent in `data` (an `agent_bytes` archive); AgentError naming `source` when it is not one."""
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as archive:
            spec = json.loads(archive["spec"].tobytes().decode())
            arrays = [archive[f"w{k}"].astype(np.float64) for k in range(len(archive.files) - 1)]
        if spec.get("format") != FORMAT:
            raise AgentError(f"{source}: agent format {spec.get('format')!r}, this installation reads {FORMAT}")
        if spec["features"] not in FEATURE_SETS:
            raise AgentError(f"{source}: unknown feature set {spec['features']!r}")
        k = int(spec["policy_arrays"])
        return Agent(str(spec["name"]), KernelNet(tuple(arrays[:k]), tuple(arrays[k:])), spec["features"],
                     Scales(**spec["scales"]), str(spec["backfill"]))
    except AgentError:
        raise
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise AgentError(f"{source}: not a Meridian agent ({type(exc).__name__}: {exc})") from exc


def packaged_names() -> list[str]:
    """The agents shipped with the product, sorted."""
    return sorted(p.name.removesuffix(".npz") for p in resources.files(PACKAGE).iterdir()
                  if p.name.endswith(".npz"))


@cache
def packaged_meta(name: str) -> dict:
    """The shipped agent's training record (`<name>.json`: the registry's meta.json of the version
    shipped: settings, learning curve, cost, evaluation); {} when there is none."""
    path = resources.files(PACKAGE).joinpath(f"{name}.json")
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}


@cache
def packaged(name: str) -> Agent:
    """A shipped agent by name (read once per process); AgentError when there is none of that name."""
    if name not in packaged_names():
        raise AgentError(f"no packaged agent {name!r}; packaged: {', '.join(packaged_names()) or 'none'}")
    return agent_of(resources.files(PACKAGE).joinpath(f"{name}.npz").read_bytes(), f"packaged agent {name}")
