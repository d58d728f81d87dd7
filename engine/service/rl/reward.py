"""What an episode of the scheduling environment is worth, given once, when its window ends.

`window_scores` measures a finished replay:
- avg_bounded_slowdown: mean over the window's jobs of max(1, (wait + run) / max(run, 10 s));
- utilization: processor-seconds used / ((start of the last job to start - first submit) x processors),
  RLScheduler's definition (0-1);
- wait_p95_s: the 95th percentile of the jobs' waits, seconds;
- jain_index: Jain's index (sum x)^2 / (n sum x^2) over the teams (the log's group numbers) with
  x = 1 / a team's mean bounded slowdown: 1 when every team is slowed alike; 1 without teams.

`Reward` turns them into one number: "bsld" (the default, RLScheduler's): -avg_bounded_slowdown;
"utilization": utilization; "balance" (the balance of utilisation, latency and fairness the design
asks for): w_util x utilization - w_wait x wait_p95_s / 12 h + w_fair x jain_index.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from engine.policies.rl_features import MAX_WAIT_S
from engine.service.experiments.rlscheduler import bounded_slowdown, score
from engine.service.experiments.rlscheduler_replay import Replay, Sequence

KINDS = ("bsld", "utilization", "balance")


@dataclass(frozen=True)
class Reward:
    """The episode's reward: `kind` one of KINDS, with the weights of "balance"."""

    kind: str = "bsld"
    w_util: float = 1.0
    w_wait: float = 1.0
    w_fair: float = 1.0

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"reward must be one of {', '.join(KINDS)}, got {self.kind!r}")
        for name in ("w_util", "w_wait", "w_fair"):
            value = getattr(self, name)
            if not np.isfinite(value) or value < 0:
                raise ValueError(f"reward weight {name} must be a number >= 0, got {value!r}")

    def of(self, scores: dict) -> float:
        """The reward of a window's `window_scores`."""
        if self.kind == "bsld":
            return -scores["avg_bounded_slowdown"]
        if self.kind == "utilization":
            return scores["utilization"]
        return (self.w_util * scores["utilization"] - self.w_wait * scores["wait_p95_s"] / MAX_WAIT_S
                + self.w_fair * scores["jain_index"])

    def as_dict(self) -> dict:
        return asdict(self)


def window_scores(sequence: Sequence, state: Replay, groups: np.ndarray | None = None) -> dict:
    """The scores of a finished replay (see the module docstring); `groups`: each job's team."""
    result = score(0, sequence, state)
    wait_s = state.start_s - sequence.submit_s
    return {"avg_bounded_slowdown": result.avg_bounded_slowdown, "utilization": result.utilization,
            "wait_p95_s": float(np.percentile(wait_s, 95)),
            "jain_index": jain_index(bounded_slowdown(wait_s, sequence.run_s), groups)}


def jain_index(slowdown: np.ndarray, groups: np.ndarray | None) -> float:
    """Jain's index over the teams of x = 1 / the team's mean bounded slowdown (1 without teams)."""
    if groups is None:
        return 1.0
    _, team = np.unique(groups, return_inverse=True)
    x = 1.0 / (np.bincount(team, weights=slowdown) / np.bincount(team))
    return float(x.sum() ** 2 / (len(x) * np.square(x).sum()))
