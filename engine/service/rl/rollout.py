"""Episodes of the scheduling environment played by the kernel policy, in parallel on local processes.

An episode is one window played to its end: every decision's job rows, the row picked and its
log-probability, the reward and the window's scores, beside the scores SJF and F1 get on the same
window (the references the trainer measures the agent against). Sampling is seeded per episode
(`np.random.default_rng([seed, epoch, k])`), so a batch is the same whichever worker plays which
episode and however many workers there are. `greedy` picks the highest-scoring row (ties: the first).
"""
from __future__ import annotations

from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass

import numpy as np

from engine.core.views import QueueView
from engine.policies.kernel_net import KernelNet, scores
from engine.policies.ordering import queue_order
from engine.policies.registry import make
from engine.predict.threads import blas_threads
from engine.service.experiments.rlscheduler import replay_window
from engine.service.rl.env import SchedulingEnv
from engine.service.rl.reward import window_scores

REFERENCES = ("SJF", "F1")


@dataclass
class Episode:
    """One played window: rows (R, features) of every decision in turn, counts (rows per decision),
    actions (the row picked, 0-based within its decision), logp (its log-probability), reward,
    scores (engine/service/rl/reward.window_scores) and references (heuristic -> scores)."""

    start: int
    rows: np.ndarray
    counts: np.ndarray
    actions: np.ndarray
    logp: np.ndarray
    reward: float
    scores: dict
    references: dict


def play(env: SchedulingEnv, net: KernelNet, start: int, rng: np.random.Generator | None,
         length: int | None = None, keep_rows: bool = True) -> Episode:
    """Play the window from `start`; `rng` samples the policy, None plays greedily."""
    options = {"start": start} if length is None else {"start": start, "length": length}
    obs, info = env.reset(options=options)
    rows, counts, actions, logps = [], [], [], []
    done = False
    while not done:
        n = int(info["action_mask"].sum())
        valid = obs[:n]
        logits = scores(net, valid)
        shifted = logits - logits.max()
        logp = shifted - np.log(np.exp(shifted).sum())
        if rng is None:
            action = int(np.argmax(logits))
        else:
            action = min(int(np.searchsorted(np.cumsum(np.exp(logp)), rng.random() * np.exp(logp).sum())), n - 1)
        if keep_rows:
            rows.append(valid)
        counts.append(n)
        actions.append(action)
        logps.append(logp[action])
        obs, reward, done, _, info = env.step(action)
    width = env.width
    return Episode(start, np.vstack(rows) if rows else np.zeros((0, width)), np.array(counts), np.array(actions),
                   np.array(logps), float(reward), _scores(info), {})


def _scores(info: dict) -> dict:
    return {k: info[k] for k in ("avg_bounded_slowdown", "utilization", "wait_p95_s", "jain_index")}


def teacher_episode(env: SchedulingEnv, start: int, teacher: str) -> Episode:
    """The window from `start` played by a heuristic order (registry key, e.g. "f1"): every decision's
    rows and the row the heuristic picks (its first in its order, ties by index)."""
    order = make("order", teacher)
    obs, info = env.reset(options={"start": start})
    rows, counts, actions = [], [], []
    done = False
    while not done:
        n = int(info["action_mask"].sum())
        seq, visible = env.sequence, env.visible - env.start
        view = QueueView.of(seq.submit_s[visible], seq.requested_s[visible], seq.procs[visible])
        action = int(queue_order(order, view, env.replay.now_s)[0])
        rows.append(obs[:n])
        counts.append(n)
        actions.append(action)
        obs, reward, done, _, info = env.step(action)
    return Episode(start, np.vstack(rows), np.array(counts), np.array(actions), np.zeros(len(counts)), float(reward),
                   _scores(info), {})


def references(env: SchedulingEnv, start: int, length: int | None = None) -> dict:
    """The scores of SJF and F1 on the window from `start` (with the environment's backfilling)."""
    out = {}
    for name in REFERENCES:
        sequence, state = replay_window(env.jobs, start, make("order", name.lower()), env.backfill,
                                        length=length or env.length)
        groups = None if env.jobs.group is None else env.jobs.group[start:start + len(sequence)]
        out[name] = window_scores(sequence, state, None if groups is None or (groups < 0).all() else groups)
    return out


# --- parallel collection ---------------------------------------------------------------------------

_WORKER: dict = {}   # this worker process's environment and reference cache (set by _init_worker)


def _init_worker(env_kwargs: dict) -> None:
    _WORKER["threads"] = blas_threads(1)
    _WORKER["threads"].__enter__()   # for this worker's life: one BLAS thread per process
    _WORKER["env"] = SchedulingEnv(**env_kwargs)
    _WORKER["references"] = {}


def _play_many(net_arrays: list[np.ndarray], template: KernelNet, tasks: list[tuple[int, tuple | None]]
               ) -> list[Episode]:
    """Each (start, key) played: sampled with the key's generator, with the references; a key of None
    plays greedily, keeping neither rows nor references (a validation episode)."""
    env, cache = _WORKER["env"], _WORKER["references"]
    net = template.with_arrays(net_arrays)
    out = []
    for start, key in tasks:
        if key is None:
            out.append(play(env, net, start, None, keep_rows=False))
            continue
        episode = play(env, net, start, np.random.default_rng(list(key)))
        if start not in cache:
            cache[start] = references(env, start)
        episode.references = cache[start]
        out.append(episode)
    return out


def _teach_many(starts: list[int], teacher: str) -> list[Episode]:
    return [teacher_episode(_WORKER["env"], start, teacher) for start in starts]


class Collector:
    """Plays batches of episodes on `workers` local processes (1: in this process)."""

    def __init__(self, env_kwargs: dict, workers: int = 1):
        self.workers = max(1, int(workers))
        self._pool = None
        if self.workers > 1:
            self._pool = ProcessPoolExecutor(self.workers, initializer=_init_worker, initargs=(env_kwargs,))
        else:
            _WORKER["env"], _WORKER["references"] = SchedulingEnv(**env_kwargs), {}

    def collect(self, net: KernelNet, starts: list[int], keys: list[tuple | None]) -> list[Episode]:
        """One episode per start, sampled with the generator seeded by its key (None: greedy), in the
        order given."""
        tasks = list(zip(starts, keys))
        if self._pool is None:
            return _play_many(net.arrays(), net, tasks)
        chunks = [tasks[k::self.workers] for k in range(self.workers)]
        futures = [self._pool.submit(_play_many, net.arrays(), net, chunk) for chunk in chunks if chunk]
        played = [f.result() for f in futures]
        out = [None] * len(tasks)
        for k, episodes in enumerate(played):
            out[k::self.workers] = episodes
        return out

    def teach(self, starts: list[int], teacher: str) -> list[Episode]:
        """The windows from `starts` played by the heuristic `teacher`, in the order given."""
        if self._pool is None:
            return _teach_many(starts, teacher)
        chunks = [starts[k::self.workers] for k in range(self.workers)]
        played = [f.result() for f in [self._pool.submit(_teach_many, c, teacher) for c in chunks if c]]
        out = [None] * len(starts)
        for k, episodes in enumerate(played):
            out[k::self.workers] = episodes
        return out

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(cancel_futures=True)
            self._pool = None
