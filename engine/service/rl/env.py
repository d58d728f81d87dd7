"""A Gymnasium environment whose transitions are RLScheduler's replay (engine/service/experiments).

RLScheduler's protocol (Zhang et al., SC'20): an episode is a window of consecutive jobs of a log
(256 for training, drawn from `starts`; the ten 1,024-job test sequences for testing, by
`reset(options={"start": s, "length": 1024})`), replayed on an empty cluster with the published
code's event handling and, with `backfill="compat"`, its backfilling. Each step is one decision:
the agent picks the next job among the waiting ones, and `rlscheduler_replay.commit` does what
the heuristics' replay does with a heuristic's pick (wait until it fits, backfilling meanwhile;
start it; move on until a job waits). A policy that picks what SJF would pick therefore replays
SJF's published sequences exactly.

- Observation: `SLOTS` (128) rows of job features (engine/policies/rl_features.py: RLScheduler's 8,
  or 11 with the runtime predictors' P10/P50/P90), the waiting jobs in submit order, padded with
  the padding row. With more than 128 waiting, the rows are drawn in turn from the queue ordered
  by SJF, F1, fewest processors and FCFS, so each heuristic's first choice is always visible.
- Action: the row to start next; `info["action_mask"]` marks the real rows (1) and the padding (0).
  An action on a padding row picks row 0 (the longest-waiting visible job), so every action is legal.
- Reward: 0 until the window's last job starts, then `Reward.of(...)` (engine/service/rl/reward.py).
"""
from __future__ import annotations

from typing import ClassVar

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from engine.policies.kernel_net import SLOTS
from engine.policies.registry import make
from engine.policies.rl_features import FEATURE_SETS, Scales, job_features, padding
from engine.service.experiments.rlscheduler import START_INDICES, allowed_starts, sequence_of
from engine.service.experiments.rlscheduler_backfill import MODES
from engine.service.experiments.rlscheduler_replay import JobQueue, Replay, commit
from engine.service.experiments.swf_jobs import SwfJobs
from engine.service.rl.reward import Reward, window_scores

TRAIN_LENGTH = 256
_F1_SUBMIT_WEIGHT = 870.0


def scales_of(jobs: SwfJobs) -> Scales:
    """RLScheduler's normalisers for a log: its longest run time, the cluster's processors and the
    largest memory, user, group and executable numbers."""
    def largest(values) -> float:
        return float(values.max()) if values is not None and len(values) else 0.0

    return Scales(float(jobs.run_s.max()), float(jobs.max_procs), largest(jobs.memory), largest(jobs.user),
                  largest(jobs.group), largest(jobs.executable))


class SchedulingEnv(gym.Env):
    """Pick the next job of an RLScheduler window (see the module docstring).

    `jobs`: the log (engine.service.experiments.swf_jobs); `backfill`: "none" or "compat";
    `features`: "rlscheduler" or "predicted" (then `predicted_s`, (len(jobs), 3) seconds, is required);
    `starts`: training window starts (default: every 256-job window sharing no job with the ten test
    sequences); `scales`: the normalisers (default the log's own, as RLScheduler does).
    """

    metadata: ClassVar[dict] = {"render_modes": []}

    def __init__(self, jobs: SwfJobs, *, backfill: str = "none", reward: Reward = Reward(),
                 features: str = "rlscheduler", predicted_s: np.ndarray | None = None, starts=None,
                 length: int = TRAIN_LENGTH, scales: Scales | None = None):
        if backfill not in ("none", "compat"):
            raise ValueError(f"backfill must be none or compat (RLScheduler's two modes), got {backfill!r}")
        if features not in FEATURE_SETS:
            raise ValueError(f"features must be one of {', '.join(FEATURE_SETS)}, got {features!r}")
        if features == "predicted" and (predicted_s is None or predicted_s.shape != (len(jobs), 3)):
            raise ValueError("features='predicted' needs predicted_s: P10, P50 and P90 seconds for every job")
        self.jobs, self.backfill, self.reward, self.length = jobs, backfill, reward, length
        self.features, self.predicted_s = features, predicted_s if features == "predicted" else None
        self.scales = scales or scales_of(jobs)
        self.starts = np.asarray(allowed_starts(len(jobs), length, START_INDICES) if starts is None else starts)
        self.width = len(FEATURE_SETS[features])
        self._padding = padding(self.width)
        self.observation_space = spaces.Box(0.0, 1.0, (SLOTS, self.width), np.float64)
        self.action_space = spaces.Discrete(SLOTS)
        self._fcfs = make("order", "fcfs")
        self._state: Replay | None = None
        self._visible = np.zeros(0, np.int64)
        self.start = -1

    # --- Gymnasium API -------------------------------------------------------------------------

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        """A new window: `options["start"]` (and `options["length"]`) or a start drawn from `starts`."""
        super().reset(seed=seed)
        options = options or {}
        start = int(options["start"]) if "start" in options else int(self.np_random.choice(self.starts))
        length = int(options.get("length", self.length))
        self.start, self.sequence = start, sequence_of(self.jobs, start, length)
        queue = JobQueue(self.sequence, self._fcfs, authors_ties=self.backfill == "compat")
        self._state = Replay(self.sequence, queue)
        self._offset = start
        self.decisions = 0
        return self._observe(), self._info()

    def step(self, action):
        if self._state is None:
            raise RuntimeError("call reset() before step()")
        row = int(action)
        picked = self._visible[row] if 0 <= row < len(self._visible) else self._visible[0]
        self.decisions += 1
        done = commit(self._state, int(picked), MODES[self.backfill])
        if not done:
            return self._observe(), 0.0, False, False, self._info()
        scores = window_scores(self.sequence, self._state, self._groups())
        self._visible = np.zeros(0, np.int64)
        obs = np.tile(self._padding, (SLOTS, 1))
        return obs, float(self.reward.of(scores)), True, False, {**self._info(), **scores}

    def action_masks(self) -> np.ndarray:
        """1 for the rows holding a waiting job, 0 for padding (sb3-contrib's MaskablePPO convention)."""
        mask = np.zeros(SLOTS, np.int8)
        mask[:len(self._visible)] = 1
        return mask

    # --- the observation -----------------------------------------------------------------------

    @property
    def visible(self) -> np.ndarray:
        """Log indices of the jobs in the observation's rows (a copy)."""
        return self._visible + self._offset

    @property
    def replay(self) -> Replay:
        return self._state

    def _info(self) -> dict:
        return {"action_mask": self.action_masks(), "start": self.start, "decisions": self.decisions}

    def _observe(self) -> np.ndarray:
        state = self._state
        members = state.queue.members.copy()
        self._visible = self._choose(members, state.now_s)
        rows = self.rows(self._visible, state.now_s, state.free_nodes)
        obs = np.tile(self._padding, (SLOTS, 1))
        obs[:len(rows)] = rows
        return obs

    def rows(self, positions: np.ndarray, now_s: float, free_nodes: int) -> np.ndarray:
        """Feature rows of the window's jobs at `positions` at time `now_s` with `free_nodes` free."""
        seq, jobs, log = self.sequence, self.jobs, positions + self._offset
        return job_features(
            self.scales, now_s - seq.submit_s[positions], seq.requested_s[positions], seq.procs[positions],
            seq.nodes[positions] <= free_nodes, _take(jobs.memory, log), _take(jobs.user, log),
            _take(jobs.group, log), _take(jobs.executable, log),
            None if self.predicted_s is None else self.predicted_s[log])

    def _choose(self, members: np.ndarray, now_s: float) -> np.ndarray:
        """The waiting jobs shown (window positions), in submit order (ties by index)."""
        seq = self.sequence
        if len(members) > SLOTS:
            members = self._interleaved(members)
        return members[np.lexsort((members, seq.submit_s[members]))]

    def _interleaved(self, members: np.ndarray) -> np.ndarray:
        """`SLOTS` jobs taken in turn from the queue in SJF, F1, fewest-processors and FCFS order."""
        seq = self.sequence
        submit, requested, procs = seq.submit_s[members], seq.requested_s[members], seq.procs[members]
        f1 = (np.log10(np.where(requested > 0, requested, 0.1)) * procs
              + _F1_SUBMIT_WEIGHT * np.log10(np.where(submit > 0, submit, 0.1)))
        orders = [np.lexsort((members, submit, requested)), np.lexsort((members, f1)),
                  np.lexsort((members, submit, procs)), np.lexsort((members, submit))]
        interleaved = np.stack(orders, axis=1).ravel()[:SLOTS * len(orders)]
        _, first = np.unique(interleaved, return_index=True)
        return members[interleaved[np.sort(first)][:SLOTS]]

    def _groups(self) -> np.ndarray | None:
        """Each window job's team (the log's group number; None when the log records none)."""
        groups = self.jobs.group
        if groups is None:
            return None
        window = groups[self._offset:self._offset + len(self.sequence)]
        return None if (window < 0).all() else window


def _take(values, index):
    return None if values is None else values[index]
