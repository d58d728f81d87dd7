"""A learned queue order (family "order", key "rl"): RLScheduler's kernel policy as a priority.

The kernel network scores every waiting job from its own features alone (engine/policies/
kernel_net.py), so its greedy choice, the highest score, is an order: keys = -score, highest
first, ties by job id. In RLScheduler's replay (`meridian rl evaluate`) the agent sees exactly the
observation it was trained on; in the simulator the features are built from the queue view:
- wait: now - submit; requested: the request (or the scenario's predicted runtime), divided by the
  longest run time of the log the agent was trained on;
- processors: GPUs asked for / the region's installed GPUs;
- can_start: the job's GPUs fit in the region's GPUs not held by running jobs (from the ledger;
  node boundaries and GPU models are not seen: a pool-level approximation);
- user and group: the job's user and team codes / the largest code; memory and executable are not
  recorded (1), as in an SWF log without them.
Agents trained on the runtime predictors' quantiles ("predicted" features) are refused here: the
queue view carries one runtime per job, not three.

`model` names the agent: a packaged one (`engine/policies/agents/`), or one trained into the model
registry beside the database, which the service binds into `agent` before a run
(engine/service/rl/agents.py).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from engine.core.views import QueueView
from engine.policies.kernel_net import scores
from engine.policies.registry import PolicyError, register
from engine.policies.rl_agent import Agent, packaged, packaged_names
from engine.policies.rl_features import Scales, job_features

DEFAULT_AGENT = "lublin-1"


@register("order", "rl")
@dataclass(frozen=True)
class LearnedOrder:
    """A trained agent's order (`meridian rl train`): the job its kernel network scores highest first."""

    model: str = field(default=DEFAULT_AGENT, metadata={
        "help": "the agent: a packaged one (lublin-1, lublin-1-backfill, hpc2n, hpc2n-backfill) or one "
                "trained with `meridian rl train` into this database's model registry"})
    agent: Agent | None = field(default=None, compare=False, metadata={"injected": True})

    def __post_init__(self) -> None:
        if not isinstance(self.model, str) or not self.model.strip():
            raise PolicyError("order policy 'rl': model must name an agent")
        if self.agent is None and self.model in packaged_names():
            object.__setattr__(self, "agent", packaged(self.model))
        if self.agent is not None and self.agent.features != "rlscheduler":
            raise PolicyError(f"order policy 'rl': agent {self.model!r} reads the runtime predictors' quantiles "
                              "(features 'predicted'), which a scenario's queue does not carry; use an agent "
                              "trained with --features rlscheduler, or `meridian rl evaluate`")

    def keys(self, queue: QueueView, now_s: float) -> np.ndarray:
        agent = self.agent
        if agent is None:
            raise PolicyError(f"order policy 'rl': agent {self.model!r} is not packaged and was not loaded from a "
                              f"model registry; packaged agents: {', '.join(packaged_names())}")
        return np.stack([-scores(agent.net, self.features(queue, now_s))])

    def features(self, queue: QueueView, now_s: float) -> np.ndarray:
        """The rows the agent scores (see the module docstring)."""
        trained = self.agent.scales
        ledger = queue.shares
        if ledger is not None and ledger.capacity_gpus > 0:
            capacity = ledger.capacity_gpus
            free = capacity - float(np.sum(ledger.running_gpus))
            users, teams = len(ledger.user_usage_gpu_s) - 1, len(ledger.teams) - 1
        else:
            capacity, free, users, teams = trained.max_procs, np.inf, 0, 0
        scales = Scales(trained.max_runtime_s, capacity, 0.0, float(users), float(teams), 0.0)
        return job_features(scales, now_s - queue.submit_s, queue.requested_s, queue.size, queue.size <= free,
                            user=queue.user if users > 0 else None, group=queue.team if teams > 0 else None)
